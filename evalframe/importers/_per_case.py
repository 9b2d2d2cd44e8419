"""What the per-case importers (EvalScope, ragas, DeepEval, lighteval) share, on top of the kit.

These formats hold one row per case and one value per metric, no attempts; only DeepEval writes a verdict.
A malformed file is an input error (:func:`input_error`, exit 2), not a refusing note; an empty metric cell
is a grader failure like a NaN (:func:`graded`); :func:`read_metric_csv` reads a table of one row per
question and one column per metric; :func:`assemble` builds the ledger, the plan from the rows and the
notes through the kit (``passed`` kept only when every scored row has the export's own verdict).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, LINE, PASSED, SOURCE, TRIAL
from evalframe.errors import InputFormatError
from evalframe.importers import Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    Unreadable,
    choose_score,
    failure_kind,
    finish,
    grade,
    ledger_frame,
    ledger_row,
    note,
    passed_if_complete,
    plan_from_units,
)
from evalframe.load import MalformedRecord, PathLike, csv_records

__all__ = ["MetricTable", "assemble", "assemble_tables", "graded", "input_error", "read_metric_csv"]

#: Columns of a ragas / DeepEval table that hold the test's inputs and outputs, never a metric
#: (ragas ``SingleTurnSample`` / legacy dataset names, DeepEval ``LLMTestCase`` names).
TEXT_COLUMNS: Final = frozenset(
    {
        "user_input",
        "retrieved_contexts",
        "reference_contexts",
        "response",
        "multi_responses",
        "reference",
        "rubrics",
        "question",
        "contexts",
        "answer",
        "ground_truth",
        "ground_truths",
        "input",
        "actual_output",
        "expected_output",
        "context",
        "retrieval_context",
        "reasoning",
        "reason",
        "name",
    }
)
#: Columns that name the question of a row, tried in order when no id column is declared.
QUESTION_COLUMNS: Final = ("user_input", "question", "input")


def input_error(exc: Unreadable) -> InputFormatError:
    """The input error (exit 2) of a file the kit could not read.

    Examples
    --------
    >>> str(input_error(Unreadable("a.jsonl", "invalid JSON (Expecting value, column 1)", line=3)))
    'a.jsonl:3: invalid JSON (Expecting value, column 1)'
    """
    return InputFormatError(exc.note[SOURCE], exc.note["detail"], line=exc.note.get(LINE))


def graded(value: Any) -> tuple[str, float | None, str | None]:
    """Score status, score and the flag kind of one metric value.

    An empty string (a CSV cell where pandas wrote NaN) and a NaN are a
    grader failure flagged ``nonfinite_score``; text or a container is a
    grader failure flagged ``not_a_score``; numbers are scores.

    Examples
    --------
    >>> graded(0.25), graded(""), graded(float("nan")), graded("yes")
    (('scored', 0.25, None), ('judge_error', None, 'nonfinite_score'), \
('judge_error', None, 'nonfinite_score'), ('judge_error', None, 'not_a_score'))
    """
    if value == "":
        return "judge_error", None, "nonfinite_score"
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return "judge_error", None, "not_a_score"
    status, score = grade(value)
    if status == "scored":
        return status, score, None
    return status, None, failure_kind(value, null_is_nan=True)


def failures_note(source: str, metric: str, kinds: Mapping[str, list[str]], *, candidate: str) -> list[dict[str, Any]]:
    """One flag per kind of grader failure of ``metric`` in a file (case ids listed, first 5)."""
    notes = []
    for kind, cases in kinds.items():
        if not cases:
            continue
        shown = ", ".join(repr(c[:60]) for c in cases[:5]) + (f" … (+{len(cases) - 5} more)" if len(cases) > 5 else "")
        what = "no value (NaN or an empty cell)" if kind == "nonfinite_score" else "a value that is not a score"
        detail = f"{metric}: {len(cases)} case(s) have {what}, read as a grader failure (judge_error): {shown}"
        notes.append(note(kind, source, detail, candidate=candidate))
    return notes


@dataclass
class MetricTable:
    """One metric CSV as read: its ledger rows, notes and facts."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


#: Header names of an aggregate table (one row per metric: its name, then its score over the dataset).
AGGREGATE_HEADERS: Final = (frozenset({"metric", "metric_name", "name"}), frozenset({"score", "value", "mean"}))


def _is_aggregate(header: Sequence[str], records: Sequence[tuple[int, list[str]]]) -> bool:
    """Whether a CSV is a table of aggregate scores: a metric-name column and a numeric score column, nothing else.

    Examples
    --------
    >>> _is_aggregate(["metric", "score"], [(2, ["faithfulness", "1.0"]), (3, ["answer_relevancy", "0.97"])])
    True
    >>> _is_aggregate(["question", "faithfulness"], [(2, ["q", "1.0"])])
    False
    """
    names, scores = AGGREGATE_HEADERS
    return (
        len(header) == 2
        and header[0].lower() in names
        and header[1].lower() in scores
        and all(not _numeric(r[0]) and (r[1] == "" or _numeric(r[1])) for _, r in records)
    )


def read_metric_csv(
    path: Path,
    *,
    score: str | None,
    id_column: str | None,
    candidate: str,
    fmt: str,
) -> MetricTable:
    """Read a CSV of one row per question and one column per metric.

    Parameters
    ----------
    path
        The CSV (UTF-8, a header row; quoted fields may span lines).
    score
        The metric column to grade with; None: the only one (several refuse
        as ``ambiguous_score``, naming them).
    id_column
        The column holding the case id; None: the first of
        :data:`QUESTION_COLUMNS` present (the question text is the case).
    candidate
        The candidate every row belongs to.
    fmt
        The format name, for ``info``.

    Returns
    -------
    MetricTable
        One ledger row per data row: ``scored`` with the cell's number, or
        ``judge_error`` when the cell is empty, NaN or not a number (flagged).
        Metric columns are the named columns that are neither the id column
        nor one of :data:`TEXT_COLUMNS` and whose every non-empty cell is a
        number (a column empty in every row is a metric that always failed; a
        column with an empty header, the index pandas writes, is no metric).

        An aggregate table (``metric,score``: one row per metric, no row
        per question) has no row and a refusing ``empty_plan`` note.

    Raises
    ------
    InputFormatError
        Not UTF-8, malformed CSV quoting, a row with another number of fields
        than the header, no header, no id column.
    """
    source = str(path)
    try:
        text = path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except OSError as exc:
        raise InputFormatError(source, f"cannot read the file ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise InputFormatError(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    reader = csv_records(text.splitlines(keepends=True))  # a long field (a model's answer) is data
    records: list[tuple[int, list[str]]] = []
    try:
        first = next(reader, None)
        header = None if first is None else first.fields
        records.extend((record.end, record.fields) for record in reader if record.fields)
    except MalformedRecord as exc:
        raise InputFormatError(source, f"malformed CSV ({exc})", line=exc.end) from None
    if not header or not any(header):
        raise InputFormatError(source, "no header row: expected a CSV with one column per metric")
    if len(set(header)) != len(header):
        repeated = sorted({h for h in header if header.count(h) > 1})
        raise InputFormatError(source, f"header names repeated: {', '.join(repeated)}", line=1)
    for line, record in records:
        if len(record) != len(header):
            detail = f"a record with {len(record)} fields under a header of {len(header)}"
            raise InputFormatError(source, detail, line=line)
    if id_column is None and _is_aggregate(header, records):
        names = ", ".join(r[0] for _, r in records)
        detail = (
            f"an aggregate table ({header[0]},{header[1]}: one row per metric, {names}), not one row per "
            "question: its scores have no per-sample evidence, so nothing can be audited"
        )
        table = MetricTable(info={"format": fmt, "source": source, "candidate": candidate, "rows": 0})
        table.notes.append(note("empty_plan", source, detail, candidate=candidate))
        return table
    if id_column is not None and id_column not in header:
        raise InputFormatError(source, f"no column {id_column!r} (the declared id column) in the header", line=1)
    key = id_column or next((c for c in QUESTION_COLUMNS if c in header), None)
    if key is None:
        detail = f"no question column ({', '.join(QUESTION_COLUMNS)}) to name the cases: declare one with --id-column"
        raise InputFormatError(source, detail, line=1)
    at = header.index(key)
    metrics = [
        name
        for i, name in enumerate(header)
        if name and name != key and name not in TEXT_COLUMNS and all(r[i] == "" or _numeric(r[i]) for _, r in records)
    ]
    table = MetricTable(
        info={"format": fmt, "source": source, "candidate": candidate, "id_column": key, "metrics": metrics, "rows": 0}
    )
    try:
        chosen = choose_score(score, metrics, default=None, what="metric", source=source)
    except ScoreChoiceError as exc:
        table.notes.append({**exc.note, CANDIDATE: candidate})
        return table
    table.info.update(metric=chosen, rows=len(records))
    if chosen is None:
        table.notes.append(note("unknown_score", source, "no metric column in the CSV", candidate=candidate))
        return table
    column = header.index(chosen)
    failed: dict[str, list[str]] = {"nonfinite_score": [], "not_a_score": []}
    for line, record in records:
        case = record[at]
        status, value, flag = graded(record[column])
        if flag is not None:
            failed[flag].append(case)
        table.rows.append(ledger_row(candidate, case, score_status=status, score=value, line=line, source=source))
    table.notes.extend(failures_note(source, chosen, failed, candidate=candidate))
    return table


def assemble_tables(
    tables: Sequence[MetricTable],
    notes: list[dict[str, Any]],
    *,
    paths: Sequence[PathLike],
    files: Sequence[PathLike],
    plan_note: str,
    case_columns: Mapping[str, Mapping[str, Any]] | None = None,
) -> Imported:
    """:func:`assemble` of one table per file, a file with rows noted ``plan_from_rows`` (``plan_note``).

    ``plan_note`` is the note's sentence, with ``{n}`` for the number of rows: these formats declare
    no dataset, so the plan is the rows of the file and a case never written cannot be missing.
    """
    for table in tables:
        notes.extend(table.notes)
        if table.rows:
            detail = plan_note.format(n=len(table.rows))
            notes.append(note("plan_from_rows", table.info["source"], detail, candidate=table.info["candidate"]))
    rows = [row for table in tables for row in table.rows]
    info = [table.info for table in tables]
    return assemble(rows, notes, info, paths=paths, files=files, case_columns=case_columns)


def assemble(
    rows: Sequence[dict[str, Any]],
    notes: Iterable[dict[str, Any]],
    info: list[dict[str, Any]],
    *,
    paths: Sequence[PathLike],
    files: Sequence[PathLike],
    case_columns: Mapping[str, Mapping[str, Any]] | None = None,
) -> Imported:
    """The import of ``rows``: ledger, plan from the rows (one flag per file says so) and notes.

    Parameters
    ----------
    rows
        Ledger rows (:func:`~evalframe.importers._kit.ledger_row`).
    notes
        Every note of the import.
    info
        One dict per file.
    paths
        The paths given, for the plan's source.
    files
        The export files read.
    case_columns
        Per case id, its case (slice) columns; None: none.

    Raises
    ------
    ImportRefused
        When a note refuses (the kit's :func:`~evalframe.importers._kit.finish`).
    """
    all_notes = list(notes)
    ledger = ledger_frame(rows)
    no_verdict = ledger.get_column(PASSED).null_count() == ledger.height
    ledger = ledger.drop(PASSED) if no_verdict else passed_if_complete(ledger)
    units = ledger.select(CANDIDATE, CASE_ID, TRIAL).unique(maintain_order=True)
    if case_columns:
        names = sorted({k for columns in case_columns.values() for k in columns})
        cases = pl.DataFrame(
            [{CASE_ID: case, **{n: columns.get(n) for n in names}} for case, columns in case_columns.items()],
            schema={CASE_ID: pl.String, **dict.fromkeys(names, pl.String)},
        )
        units = units.join(cases, on=CASE_ID, how="left")
    plan, plan_problems = plan_from_units(units, source=";".join(str(p) for p in paths), notes=all_notes)
    return finish(plan, ledger, [all_notes, plan_problems], info, files=files)
