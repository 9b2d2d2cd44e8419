"""Import notes (problems-table rows) and the refusals every importer raises the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evalframe.columns import KIND, REFUSING, SOURCE
from evalframe.load import current_limits, limit_detail
from evalframe.problems import PROBLEM_KINDS


def planned_size(count: int, source: str, what: str) -> dict[str, Any] | None:
    """A refusing ``unreadable_file`` note when ``count`` planned units exceed ``Limits.planned_units``, else None.

    An export's declared sizes (epochs, documents, trials) are checked before anything is allocated (a
    10**9-epoch header took 14 GB), against the limit every plan is held to (:class:`~evalframe.load.Limits`).

    Examples
    --------
    >>> print(planned_size(10**9, "a.eval", "epochs × sample ids")["detail"])
    epochs × sample ids declares 1000000000 planned units (limit 100000000; raise it with --max-planned-units)
    >>> planned_size(100, "a.eval", "epochs") is None
    True
    """
    if count <= current_limits().planned_units:
        return None
    return note("unreadable_file", source, limit_detail("planned_units", f"{what} declares {count} planned units"))


class Refusal(Exception):
    """A step of an import that refuses (a score that cannot be chosen, a run that cannot be graded): its note."""

    def __init__(self, note_row: dict[str, Any]) -> None:
        self.note = note_row
        super().__init__(note_row["detail"])


class Unreadable(Exception):
    """A file (or a place in it) that cannot be read; carries its ``unreadable_file`` note."""

    def __init__(self, source: str, detail: str, *, line: int | None = None) -> None:
        self.note = note("unreadable_file", source, detail, line=line)
        super().__init__(f"{source}: {detail}")


def note(kind: str, source: str, detail: str, *, refusing: bool | None = None, **keys: Any) -> dict[str, Any]:
    """One note (a problems-table row) of an import.

    Parameters
    ----------
    kind
        One of :data:`~evalframe.problems.PROBLEM_KINDS`.
    source
        The file (or folder) the note is about.
    detail
        A sentence for a person.
    refusing
        Whether it refuses the batch; None: as the kind says (kinds described
        "(flag) …" do not refuse, every other kind does).
    **keys
        Key columns (``candidate``, ``case_id``, ``trial``, ``attempt``, ``line``).

    Raises
    ------
    KeyError
        When ``kind`` is not a documented problem kind.

    Examples
    --------
    >>> note("no_export", "logs/", "no .eval or .json log found")["refusing"]
    True
    >>> note("run_status", "a.eval", "status: cancelled")["refusing"]
    False
    """
    meaning = PROBLEM_KINDS[kind]
    if refusing is None:
        refusing = not meaning.startswith("(flag)")
    return {KIND: kind, SOURCE: source, "detail": detail, REFUSING: refusing, **keys}


def spelling_note(raw: str, kinds: Iterable[str], source: str, *, case_id: str) -> dict[str, Any] | None:
    """``id_normalised`` when one sample id is written as several JSON types (``1`` and ``"1"``), else None.

    The spellings are one case (the one id normalisation); the note says so.

    Examples
    --------
    >>> spelling_note("1", {"int", "str"}, "a.eval", case_id="1")["detail"]
    "sample id '1' appears as int and str; both read as one case"
    >>> spelling_note("1", {"int"}, "a.eval", case_id="1") is None
    True
    """
    names = sorted(set(kinds))
    if len(names) < 2:
        return None
    detail = f"sample id {raw!r} appears as {' and '.join(names)}; both read as one case"
    return note("id_normalised", source, detail, case_id=case_id)
