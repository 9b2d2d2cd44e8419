"""The importer toolkit: what every importer does the same way, in one place.

Each importer (``inspect_ai``, ``lm_eval``, ``helm``, ``promptfoo``,
``openai_evals``) knows its own format; everything that is the same fact in
every format lives here, so one fact always means one thing:

* **Finding files** (:func:`find_files`): a path that does not exist is an
  :class:`~evalframe.errors.InputFormatError`; a folder in which no export
  file is found is a refusing ``no_export`` note (never an empty, valid run).
* **Reading JSON safely** (:func:`parse_json`, :func:`read_json`,
  :func:`read_json_lines`): undecodable bytes, invalid JSON, nesting too deep
  for the parser and numbers too long to convert are one refusing
  ``unreadable_file`` note naming the file and line, never a traceback.
  ``NaN``/``Infinity`` tokens are read (lm-eval writes them).
* **Notes** (:func:`note`): every note kind is one of
  :data:`~evalframe.problems.PROBLEM_KINDS`, whose description is its one
  meaning; whether a note refuses follows from its kind unless said
  otherwise.
* **Grades** (:func:`grade`): booleans are 1/0, finite numbers are scores, a
  non-finite number or a value that is not a score (text, a list, a dict, a
  null) is a ``judge_error``: the grader ran and gave no valid judgment. A
  unit without the chosen scorer at all is ``not_scored``.
* **Choosing the score** (:func:`choose_score`): a declared scorer / metric /
  stat that the export does not have refuses (``unknown_score``) and names
  the ones it has; with none declared and several present where the format
  has no default, the import refuses (``ambiguous_score``).
* **The plan/ledger/notes contract** (:func:`build_plan`, :func:`finish`):
  the plan is what the export says was planned; the ledger is the rows
  present; an import with a refusing note raises
  :class:`ImportRefused` so that neither the CLI nor the Python API can
  audit it.
* **Ledger rows** (:func:`ledger_row`, :func:`ledger_frame`): one row per
  attempt in :data:`~evalframe.importers.LEDGER_SCHEMA`, built in one place;
  ``passed`` is kept only when every grade is the export's own pass/fail.
* **Declarations** (:func:`declare`): ``candidates``, ``trials`` and
  ``run_id`` given by the user bind an import exactly as they bind a
  ``--plan`` file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    KIND,
    LIMIT,
    LINE,
    PASSED,
    REFUSING,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
)
from evalframe.errors import AuditRefused, InputFormatError, PlanError
from evalframe.importers import Imported
from evalframe.load import JSONLimitError, PathLike, check_line_lengths, parse_json_text
from evalframe.plan import Plan
from evalframe.problems import PROBLEM_KINDS, concat_problems, problems_frame

__all__ = [
    "CaseNames",
    "ImportRefused",
    "ScoreChoiceError",
    "Unreadable",
    "build_plan",
    "choose_score",
    "declare",
    "find_files",
    "finish",
    "grade",
    "json_int",
    "json_object",
    "ledger_row",
    "mean",
    "note",
    "parse_json",
    "passed_if_complete",
    "plan_from_units",
    "planned_size",
    "read_json",
    "read_json_lines",
    "spelling_note",
]

#: The most planned units an import builds from an export's declared sizes (epochs, documents, trials):
#: a header claiming more is refused before anything is allocated (a 10**9-epoch header took 14 GB).
MAX_PLANNED_UNITS: Final = 100_000_000


def planned_size(count: int, source: str, what: str) -> dict[str, Any] | None:
    """A refusing ``unreadable_file`` note when ``count`` planned units exceed :data:`MAX_PLANNED_UNITS`, else None.

    Examples
    --------
    >>> planned_size(10**9, "a.eval", "eval.config.epochs × sample ids")["detail"]
    'eval.config.epochs × sample ids declares 1000000000 planned units, more than the 100000000 evalframe plans'
    >>> planned_size(100, "a.eval", "epochs") is None
    True
    """
    if count <= MAX_PLANNED_UNITS:
        return None
    detail = f"{what} declares {count} planned units, more than the {MAX_PLANNED_UNITS} evalframe plans"
    return note("unreadable_file", source, detail)


#: Scores Inspect-style letter grades stand for (``value_to_float`` in Inspect AI's scorer module).
LETTER_GRADES: Final = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


class ImportRefused(AuditRefused):
    """An export could not be imported as a whole: its refusing notes are in ``problems``.

    Raised by every importer's ``read`` (and so by ``evalframe audit
    --from``, exit 1) when any note refuses, so a plan and ledger that look
    complete never leave an import that is not.
    """


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


def find_files(
    paths: Sequence[PathLike], *, is_export: Callable[[Path], bool], what: str
) -> tuple[list[Path], list[dict[str, Any]]]:
    """The export files named by ``paths``: files as given, folders searched recursively.

    Parameters
    ----------
    paths
        Files and folders.
    is_export
        Whether a file found inside a folder is one of this format's export
        files (files given directly are always returned: the importer judges them).
    what
        What the format's files are called, for the ``no_export`` note (e.g.
        ``".eval or .json Inspect log"``).

    Returns
    -------
    tuple
        The files, sorted and each once (a file named twice is read once),
        and the notes: one refusing ``no_export`` per folder with no export file.

    Raises
    ------
    InputFormatError
        When a path does not exist.

    Examples
    --------
    >>> files, notes = find_files(["data/fixtures/orbit_desk"], is_export=lambda p: p.suffix == ".eval", what="log")
    >>> files, notes[0]["kind"]
    ([], 'no_export')
    """
    files: dict[Path, Path] = {}
    notes: list[dict[str, Any]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(q for q in path.rglob("*") if q.is_file() and is_export(q))
            if not found:
                notes.append(note("no_export", str(path), f"no {what} file found in this folder"))
            for q in found:
                files.setdefault(q.resolve(), q)
        elif path.exists():
            files.setdefault(path.resolve(), path)
        else:
            raise InputFormatError(str(path), "no such file or directory")
    return sorted(files.values()), notes


def parse_json(data: bytes | str, source: str, *, line: int | None = None) -> Any:
    """Parse one JSON document; anything that is not readable JSON raises :class:`Unreadable`.

    ``NaN``, ``Infinity`` and ``-Infinity`` tokens are read as floats (lm-eval
    writes them); :func:`grade` then calls them grader failures.

    Examples
    --------
    >>> parse_json(b'{"acc": Infinity}', "s.jsonl")
    {'acc': inf}
    >>> try:
    ...     parse_json(b"[" * 100_000, "deep.json")
    ... except Unreadable as exc:
    ...     print(exc.note["kind"], exc.note["detail"])
    unreadable_file JSON nested too deeply to read (limit 512; raise it with --max-json-depth)
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return parse_json_text(text)
    except UnicodeDecodeError as exc:
        raise Unreadable(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=line) from None
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise Unreadable(source, f"invalid JSON ({exc.msg}, column {exc.colno})", line=where) from None
    except JSONLimitError as exc:  # nested too deeply, an integer literal longer than Python converts
        raise Unreadable(source, exc.detail, line=line) from None


def read_json(path: Path) -> Any:
    """Read a JSON file (see :func:`parse_json`); an unreadable file raises :class:`Unreadable`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(str(path), f"cannot read the file ({exc.strerror or exc})") from None
    return parse_json(data.removeprefix(b"\xef\xbb\xbf"), str(path))


def read_json_lines(path: Path) -> tuple[list[tuple[int, Any]], list[dict[str, Any]]]:
    """Read a JSON Lines file: ``(line number, value)`` per non-blank line, and a note per unreadable line.

    Line numbers are physical lines (1-based, as an editor shows them). A line longer than
    ``Limits.line_bytes`` is an input error, found before the file is read (see
    :func:`~evalframe.load.check_line_lengths`).
    """
    check_line_lengths(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(str(path), f"cannot read the file ({exc.strerror or exc})") from None
    rows: list[tuple[int, Any]] = []
    notes: list[dict[str, Any]] = []
    for number, raw in enumerate(data.removeprefix(b"\xef\xbb\xbf").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rows.append((number, parse_json(raw, str(path), line=number)))
        except Unreadable as exc:
            notes.append(exc.note)
    return rows, notes


def json_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (an export's optional part, read the same way everywhere).

    Examples
    --------
    >>> json_object({"a": 1}), json_object([1]), json_object(None)
    ({'a': 1}, {}, {})
    """
    return value if isinstance(value, dict) else {}


def json_int(value: Any) -> int | None:
    """``value`` when it is a JSON integer (never a boolean), else None.

    Examples
    --------
    >>> json_int(3), json_int(True), json_int(3.0)
    (3, None, None)
    """
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mean(values: Sequence[float]) -> float | None:
    """The mean of ``values``; None when there is none (an export's per-case mean of several grades).

    Examples
    --------
    >>> mean([1.0, 0.0, 0.5]), mean([])
    (0.5, None)
    """
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class CaseNames:
    """How a sample id of a task becomes a case id: ``<task>/<id>`` when several tasks are read together.

    Sample 1 of one task is then never sample 1 of another; with one task the id is the case id.

    Examples
    --------
    >>> names = CaseNames.of(["arc", "gsm8k"])
    >>> names("arc", 3), names.prefix("arc"), CaseNames.of(["arc"])("arc", 3)
    ('arc/3', 'arc/', '3')
    """

    prefixed: bool

    @classmethod
    def of(cls, tasks: Iterable[str]) -> CaseNames:
        """The naming of an import that reads ``tasks``."""
        return cls(len(set(tasks)) > 1)

    def __call__(self, task: str, raw: int | str) -> str:
        return f"{task}/{raw}" if self.prefixed else str(raw)

    def prefix(self, task: str) -> str | None:
        """What precedes the sample ids of ``task`` in case ids (None: nothing)."""
        return f"{task}/" if self.prefixed else None


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


def ledger_row(
    candidate: str,
    case_id: str,
    *,
    score_status: str,
    line: int,
    source: str,
    score: float | None = None,
    passed: bool | None = None,
    has_output: bool | None = None,
    trial: int = 1,
    attempt: int = 1,
    run_id: str | None = None,
    exec_status: str = "completed",
    limit: str | None = None,
) -> dict[str, Any]:
    """One ledger row (one attempt, see :data:`~evalframe.importers.LEDGER_SCHEMA`).

    Trial and attempt are 1 and ``exec_status`` is ``completed`` unless the
    format says otherwise.

    Examples
    --------
    >>> row = ledger_row("m", "q1", score_status="scored", score=0.5, line=2, source="r.csv")
    >>> row["exec_status"], row["score_status"], row["trial"], row["attempt"], row["limit"]
    ('completed', 'scored', 1, 1, None)
    """
    return {
        CANDIDATE: candidate,
        CASE_ID: case_id,
        TRIAL: trial,
        ATTEMPT: attempt,
        RUN_ID: run_id,
        EXEC_STATUS: exec_status,
        SCORE_STATUS: score_status,
        SCORE: score,
        PASSED: passed,
        HAS_OUTPUT: has_output,
        LIMIT: limit,
        LINE: line,
        SOURCE: source,
    }


class ScoreChoiceError(Exception):
    """The score to read cannot be chosen; carries the refusing note."""

    def __init__(self, note_row: dict[str, Any]) -> None:
        self.note = note_row
        super().__init__(note_row["detail"])


def choose_score(
    declared: str | None,
    available: Iterable[str],
    *,
    default: str | Sequence[str] | None,
    what: str,
    source: str,
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

    Returns
    -------
    str or None
        The chosen name; None when the export has none at all and nothing
        was declared (every unit is then ``not_scored``).

    Raises
    ------
    ScoreChoiceError
        ``unknown_score`` when ``declared`` is not available (the note names
        those that are), ``ambiguous_score`` when nothing was declared, the
        format has no default and several are available.

    Examples
    --------
    >>> choose_score(None, ["match", "includes"], default=None, what="scorer", source="a.eval")
    Traceback (most recent call last):
    ...
    evalframe.importers._kit.ScoreChoiceError: 2 scorers in the export (includes, match) and none declared: \
name one with --score
    >>> choose_score("acc", ["acc", "f1"], default=None, what="metric", source="s.jsonl")
    'acc'
    """
    names = list(dict.fromkeys(available))
    if declared is not None:
        if declared in names:
            return declared
        have = ", ".join(sorted(names)) if names else "none"
        detail = f"no {what} named {declared!r} in the export (has: {have})"
        raise ScoreChoiceError(note("unknown_score", source, detail))
    defaults = [default] if isinstance(default, str) else list(default or ())
    for name in defaults:
        if name in names:
            return name
    if len(names) <= 1:
        return names[0] if names else None
    if defaults:
        have = ", ".join(sorted(names))
        raise ScoreChoiceError(
            note("unknown_score", source, f"no default {what} ({', '.join(defaults)}) in the export (has: {have})")
        )
    raise ScoreChoiceError(
        note(
            "ambiguous_score",
            source,
            f"{len(names)} {what}s in the export ({', '.join(sorted(names))}) and none declared: name one with --score",
        )
    )


def build_plan(units: pl.DataFrame, *, source: str) -> tuple[Plan, pl.DataFrame]:
    """The plan of planned units, or an unvalidated plan and the problems that refuse it.

    Parameters
    ----------
    units
        One row per planned unit: ``candidate``, ``case_id`` (String),
        ``trial`` (Int64), plus case columns (slices such as ``task`` or
        ``split``), equal for every row of a case.
    source
        Where the plan came from.

    Returns
    -------
    tuple
        The :class:`~evalframe.plan.Plan` (a cross product when the units are
        every candidate × case × trial, else a units table) and its problems
        (``empty_plan`` when there is no unit; ``duplicate_case`` when a case
        is listed with different case columns; identifier problems).

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["m", "m"], "case_id": ["1", "2"], "trial": [1, 1], "task": ["t", "t"]})
    >>> plan, problems = build_plan(units, source="x.eval")
    >>> plan.n_units, plan.units is None, problems.height
    (2, True, 0)
    >>> build_plan(units.clear(), source="x.eval")[1].get_column("kind").to_list()
    ['empty_candidates', 'empty_plan']
    """
    units = units.with_columns(pl.col(TRIAL).cast(pl.Int64))
    case_columns = [c for c in units.columns if c not in (CANDIDATE, TRIAL)]
    cases = units.select(case_columns).unique(maintain_order=True)
    keys = units.select(CANDIDATE, CASE_ID, TRIAL).unique().sort(CANDIDATE, CASE_ID, TRIAL)
    candidates = list(dict.fromkeys(units.get_column(CANDIDATE).to_list()))
    try:
        plan = Plan.from_frame(cases, candidates=candidates, source=source)
    except PlanError as exc:
        unvalidated = Plan(cases=cases.unique(CASE_ID, keep="first"), candidates=tuple(candidates), source=source)
        return unvalidated, exc.problems
    trials = int(keys.get_column(TRIAL).max())  # type: ignore[arg-type]
    plan = replace(plan, trials=trials)
    # Units are unique and inside candidates × cases × trials: equal sizes mean the full cross product.
    if keys.height == len(candidates) * plan.cases.height * trials and int(keys.get_column(TRIAL).min()) == 1:  # type: ignore[arg-type]
        return plan, problems_frame()
    return plan.with_units(keys), problems_frame()


def plan_from_units(
    units: pl.DataFrame, *, source: str, notes: Iterable[Mapping[str, Any]]
) -> tuple[Plan, pl.DataFrame]:
    """:func:`build_plan`, without its problems when there is no unit and a note already refuses.

    Nothing was read then, and the refusing notes say why: an ``empty_plan`` would only repeat them.

    Examples
    --------
    >>> empty = pl.DataFrame(schema={"candidate": pl.String, "case_id": pl.String, "trial": pl.Int64})
    >>> plan_from_units(empty, source="x", notes=[note("no_export", "logs/", "no log")])[1].height
    0
    >>> plan_from_units(empty, source="x", notes=[])[1].get_column("kind").to_list()
    ['empty_candidates', 'empty_plan']
    """
    plan, problems = build_plan(units, source=source)
    if units.height == 0 and any(n[REFUSING] for n in notes):
        problems = problems.clear()
    return plan, problems


def passed_if_complete(ledger: pl.DataFrame) -> pl.DataFrame:
    """The ledger without ``passed`` when a scored row has no verdict of the export's own.

    The audit then derives every verdict from the score (``--grade binary``: a score of 1;
    ``--grade numeric``: ``--pass-threshold``), never some from the export and some from the score.

    Examples
    --------
    >>> rows = pl.DataFrame({"score_status": ["scored", "scored"], "score": [1.0, 0.5], "passed": [True, None]})
    >>> passed_if_complete(rows).columns
    ['score_status', 'score']
    """
    if ledger.filter(pl.col(SCORE_STATUS) == "scored").get_column(PASSED).null_count():
        return ledger.drop(PASSED)
    return ledger


def finish(
    plan: Plan,
    ledger: pl.DataFrame,
    notes: Sequence[pl.DataFrame | Sequence[Mapping[str, Any]]],
    info: list[dict[str, Any]],
) -> Imported:
    """The import's result; raises :class:`ImportRefused` when any note refuses.

    Parameters
    ----------
    plan, ledger, info
        As in :class:`~evalframe.importers.Imported`.
    notes
        Problem frames and lists of note dictionaries, in any number.

    Raises
    ------
    ImportRefused
        When a note refuses; ``problems`` holds every note.
    """
    frames = [n if isinstance(n, pl.DataFrame) else problems_frame(n) for n in notes]
    table = concat_problems(frames)
    if table.filter(pl.col(REFUSING)).height:
        raise ImportRefused(table)
    return Imported(plan=plan, ledger=ledger, notes=table, info=info)


def declare(
    imported: Imported,
    *,
    candidates: Sequence[str] | None = None,
    trials: int | None = None,
    run_id: str | None = None,
) -> Imported:
    """Bind an import to what the user declared, exactly as a ``--plan`` file is bound.

    Parameters
    ----------
    imported
        What an importer read.
    candidates
        The planned candidates. Each is planned on the export's cases (a
        declared candidate the export has no row for is planned and all its
        units are missing); the export's rows of an undeclared candidate are
        then ``unknown_candidate`` and refuse the audit.
    trials
        Trials per (candidate, case): units 1..``trials`` of every planned
        (candidate, case); a row of a higher trial refuses as
        ``trial_out_of_range``, a trial with no row is missing.
    run_id
        The run every row must come from (rows of another run refuse as
        ``run_mismatch``). A run id no row and no export header carries
        refuses the import (``unknown_run``).

    Returns
    -------
    Imported
        The same import with its plan re-declared.

    Raises
    ------
    ImportRefused
        ``unknown_run`` when ``run_id`` is not in the export;
        ``empty_candidates``/``repeated_candidate`` for a bad list.

    Examples
    --------
    >>> from evalframe.importers import inspect_ai
    >>> path = ("../shared/data/real/inspect_ai/evaleval-every_eval_ever/tests/data/inspect/"
    ...         "data_arc_qwen.json")
    >>> imported = declare(inspect_ai.read([path]), candidates=["ollama/qwen2.5:0.5b", "other"], trials=2)
    >>> imported.plan.candidates, imported.plan.n_units
    (('ollama/qwen2.5:0.5b', 'other'), 12)
    """
    plan = imported.plan
    if run_id is not None:
        seen = set(imported.ledger.get_column(RUN_ID).drop_nulls().to_list())
        seen |= {str(i.get("run_id")) for i in imported.info if i.get("run_id") is not None}
        if run_id not in seen:
            have = ", ".join(sorted(seen)) or "none"
            raise ImportRefused(
                problems_frame([note("unknown_run", plan.source, f"no run {run_id!r} in the export (has: {have})")])
            )
        plan = replace(plan, run_id=run_id)
    if candidates is not None or trials is not None:
        names = list(candidates) if candidates is not None else list(plan.candidates)
        n = trials if trials is not None else plan.trial_range[1]
        if plan.units is None:
            plan = Plan.from_frame(plan.cases, candidates=names, trials=n, run_id=plan.run_id, source=plan.source)
        else:
            cases_of = plan.units.select(CANDIDATE, CASE_ID).unique()
            all_cases = plan.cases.select(CASE_ID)
            rows = []
            for name in names:
                own = cases_of.filter(pl.col(CANDIDATE) == name).select(CASE_ID)
                rows.append((own if own.height else all_cases).with_columns(pl.lit(name).alias(CANDIDATE)))
            pairs = pl.concat(rows) if rows else pl.DataFrame(schema={CASE_ID: pl.String, CANDIDATE: pl.String})
            units = pairs.join(pl.DataFrame({TRIAL: list(range(1, n + 1))}, schema={TRIAL: pl.Int64}), how="cross")
            base = Plan.from_frame(plan.cases, candidates=names, trials=n, run_id=plan.run_id, source=plan.source)
            plan = replace(base.with_units(units.select(CANDIDATE, CASE_ID, TRIAL)), candidates=tuple(names))
    return replace(imported, plan=plan)
