"""One grade meaning for every importer, and the choice of the scorer / metric / stat to grade with."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from evalframe.importers._notes import Refusal, note

#: Scores Inspect-style letter grades stand for (``value_to_float`` in Inspect AI's scorer module).
LETTER_GRADES: Final = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def mean(values: Sequence[float]) -> float | None:
    """The mean of ``values``; None when there is none (an export's per-case mean of several grades).

    Examples
    --------
    >>> mean([1.0, 0.0, 0.5]), mean([])
    (0.5, None)
    """
    return sum(values) / len(values) if values else None


def grade(value: Any, *, letters: Mapping[str, float] | None = None) -> tuple[str, float | None]:
    """The score status and score of one grader value.

    Parameters
    ----------
    value
        The value the grader wrote for one unit.
    letters
        Letter grades the format uses and the scores they stand for
        (e.g. :data:`LETTER_GRADES`); other text is not a score.

    Returns
    -------
    tuple
        ``("scored", score)`` for a boolean (1.0/0.0), a finite number or a
        known letter; ``("judge_error", None)`` for anything else: a null, a
        non-finite number, text, a list or a dict.

    Examples
    --------
    >>> grade(True), grade(0.65), grade("C", letters=LETTER_GRADES)
    (('scored', 1.0), ('scored', 0.65), ('scored', 1.0))
    >>> grade(float("inf")), grade(None), grade(["gold", "pred"])
    (('judge_error', None), ('judge_error', None), ('judge_error', None))
    """
    if isinstance(value, bool):
        return "scored", float(value)
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            return "judge_error", None
        return ("scored", number) if math.isfinite(number) else ("judge_error", None)
    if isinstance(value, str) and letters is not None and value in letters:
        return "scored", letters[value]
    return "judge_error", None


def failure_kind(value: Any, *, null_is_nan: bool = False) -> str:
    """The flag of a grader value that is not a score: ``nonfinite_score`` or ``not_a_score``.

    NaN and ±Infinity are ``nonfinite_score``; so is a null where the format writes NaN as null
    (``null_is_nan``: pandas-written tables and their JSON); anything else is ``not_a_score``.

    Examples
    --------
    >>> failure_kind(float("nan")), failure_kind("yes"), failure_kind(None), failure_kind(None, null_is_nan=True)
    ('nonfinite_score', 'not_a_score', 'not_a_score', 'nonfinite_score')
    """
    if value is None and null_is_nan:
        return "nonfinite_score"
    return "nonfinite_score" if isinstance(value, float) and not math.isfinite(value) else "not_a_score"


def _found(names: Sequence[str], what: str, flag: str) -> str:
    """``(has: a, b): name one with --score <what>, e.g. --score a`` (the first the export lists); ``(has: none)``."""
    if not names:
        return "(has: none)"
    return f"(has: {', '.join(sorted(names))}): name one with {flag.format(f'<{what}>')}, e.g. {flag.format(names[0])}"


class ScoreChoiceError(Refusal):
    """The score to read cannot be chosen; carries the refusing note."""


def choose_score(
    declared: str | None,
    available: Iterable[str],
    *,
    default: str | Sequence[str] | None,
    what: str,
    source: str,
    flag: str = "--score {}",
    where: str = "the export",
) -> str | None:
    """The scorer / metric / stat to grade with.

    Parameters
    ----------
    declared
        What the user named (``--score``), or None.
    available
        What the export has, in the export's order.
    default
        The format's default: one name, or names tried in order; None: the
        only one available (several refuse as ``ambiguous_score``).
    what
        What the format calls it (``scorer``, ``metric``, ``stat``).
    source
        The export, for the note.
    flag
        How a name is declared on the command line, ``{}`` standing for the name (``"--score {}"``;
        lm-eval's filter: ``"--score exact_match,{}"``): a refusal for a name that is not there says
        which names there are and how to declare one, with the first the export lists as the example.
    where
        Where in the export the names were looked for (``testCases[].metricsData[].name``), for the note.

    Returns
    -------
    str or None
        The chosen name; None when the export has none at all and nothing
        was declared (every unit is then ``not_scored``).

    Raises
    ------
    ScoreChoiceError
        ``unknown_score`` when ``declared`` (or, with none declared, every
        default) is not available: the note names those that are and the
        flag that declares one; ``ambiguous_score`` when nothing was
        declared, the format has no default and several are available.

    Examples
    --------
    >>> choose_score(None, ["match", "includes"], default=None, what="scorer", source="a.eval")
    Traceback (most recent call last):
    ...
    evalframe.importers._grades.ScoreChoiceError: 2 scorers in the export (includes, match) and none declared: \
name one with --score
    >>> choose_score("acc", ["acc", "f1"], default=None, what="metric", source="s.jsonl")
    'acc'
    >>> choose_score(None, ["harm_bench_score", "batch_size"], default="exact_match", what="stat", source="run/")
    Traceback (most recent call last):
    ...
    evalframe.importers._grades.ScoreChoiceError: no default stat (exact_match) in the export (has: batch_size, \
harm_bench_score): name one with --score <stat>, e.g. --score harm_bench_score
    """
    names = list(dict.fromkeys(available))
    if declared is not None:
        if declared in names:
            return declared
        detail = f"no {what} named {declared!r} in {where} {_found(names, what, flag)}"
        raise ScoreChoiceError(note("unknown_score", source, detail))
    defaults = [default] if isinstance(default, str) else list(default or ())
    for name in defaults:
        if name in names:
            return name
    if len(names) <= 1:
        return names[0] if names else None
    if defaults:
        detail = f"no default {what} ({', '.join(defaults)}) in {where} {_found(names, what, flag)}"
        raise ScoreChoiceError(note("unknown_score", source, detail))
    raise ScoreChoiceError(
        note(
            "ambiguous_score",
            source,
            f"{len(names)} {what}s in {where} ({', '.join(sorted(names))}) and none declared: name one with --score",
        )
    )
