"""Import Inspect AI eval logs (``.eval`` archives and ``.json`` logs) as a plan and a ledger.

Format
------
The schema is the pydantic ``EvalLog`` model and its parts (``EvalSpec``,
``EvalDataset``, ``EvalConfig``, ``EvalResults``, ``EvalSample``,
``EvalSampleLimit``, ``EvalRetryError``) in ``src/inspect_ai/log/_log.py`` of
UKGovernmentBEIS/inspect_ai; user documentation at
https://inspect.aisi.org.uk/eval-logs.html.

* A ``.eval`` file is a zip archive: ``header.json`` (the log without its
  samples), one ``samples/<id>_epoch_<n>.json`` per sample, and a journal
  (``_journal/start.json`` …). A run that was interrupted may have no
  ``header.json``; the eval spec is then read from ``_journal/start.json`` and
  the run status is taken to be ``started``.
* A ``.json`` file is one ``EvalLog`` document with a ``samples`` array.

How the export becomes a plan
-----------------------------
The plan is what the header says was *planned*: ``eval.dataset.sample_ids`` ×
trials ``1..eval.config.epochs`` (default 1) for the candidate
``eval.model``. Logs without ``sample_ids`` fall back to the sample ids
present in the rows (with a note). Several logs combine into one plan (the
union of their units per candidate); when candidates have different units
the plan is an explicit units table. Every case carries a ``task`` plan
column (the log's ``eval.task``) that can be used as a slice.

Case ids are the sample ids as strings (``1`` and ``"1"`` are the same case,
with an ``id_normalised`` note when both spellings occur for one task).
When the logs read together cover more than one task, case ids are prefixed
with the task name (``<task>/<id>``, e.g. ``inspect_evals/arc_easy/3``) so
that sample 1 of one task is not sample 1 of another.

How samples become ledger rows
------------------------------
One row per attempt. The sample's ``error_retries`` (earlier failed attempts
of the same sample inside one log) become attempts ``1..k`` with
``exec_status = error``; the sample itself is the last attempt. Logs of the
same (task, model) are successive runs: their attempts of a unit are numbered
on, in the order of the log's ``eval.created`` time (then ``stats.started_at``,
then path), so the audit's declared retry policy decides which one counts.
``run_id`` is the log's ``eval.run_id`` (``eval.eval_id`` when absent).

Grades (the chosen scorer's ``value``): ``C`` → 1 and ``I`` → 0 (binary);
``P`` (partial credit) → 0.5 and ``N`` (no answer) → 0, the values Inspect's
own ``value_to_float`` gives them (no answer is a graded zero, not a grader
failure); booleans → 1/0; numbers → the number. A null or absent value, a
non-finite number, or a value that is not a score (a string other than
C/I/P/N, a list, a dict) is a ``judge_error``. A sample without the chosen
scorer (or with no scores at all: no scorer ran) is ``not_scored``. A
sample with an ``error`` is ``exec_status = error`` and never scored. A
sample halted by a ``limit`` is still ``completed`` (and may be scored); the
limit is kept in the ``limit`` column as ``<type>=<value>``.

Header totals (``results.total_samples``/``completed_samples``) are never
evidence: when they disagree with the rows a ``header_rows_disagree`` note
says so; a run whose ``status`` is not ``success`` gets a ``run_status`` note.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TypeGuard

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    LIMIT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
    UNIT_KEY,
)
from evalframe.errors import InputFormatError, PlanError
from evalframe.importers import LEDGER_SCHEMA as _LEDGER_SCHEMA
from evalframe.importers import Imported
from evalframe.load import PathLike
from evalframe.plan import Plan
from evalframe.problems import concat_problems, problems_frame

__all__ = ["TASK", "read"]

#: Plan column holding each case's Inspect task name (``eval.task``).
TASK: Final = "task"


#: Inspect's letter grades and the scores they are read as.
_LETTER_GRADES: Final = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_SAMPLE_MEMBER: Final = re.compile(r"^samples/.+_epoch_\d+\.json$")
_HEADER: Final = "header.json"
_JOURNAL_START: Final = "_journal/start.json"
#: Inspect's log-directory index, not a log; skipped when a directory is read.
_LOG_INDEX: Final = "logs.json"


@dataclass
class _Sample:
    """One sample read from a log, with where it came from."""

    data: dict[str, Any]
    raw_id: int | str
    epoch: int
    line: int
    source: str


@dataclass
class _Log:
    """One readable log: its header fields and samples."""

    path: str
    fmt: str
    header_member: str | None
    doc: dict[str, Any]
    status: str
    samples: list[_Sample] = field(default_factory=list)

    @property
    def spec(self) -> dict[str, Any]:
        return _obj(self.doc.get("eval")) or {}

    @property
    def task(self) -> str:
        return str(self.spec.get("task"))

    @property
    def model(self) -> str:
        return str(self.spec.get("model"))

    @property
    def run_id(self) -> str | None:
        for key in ("run_id", "eval_id"):
            value = self.spec.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    @property
    def results(self) -> dict[str, Any]:
        return _obj(self.doc.get("results")) or {}


def _obj(value: Any) -> dict[str, Any] | None:
    """``value`` when it is a JSON object, else None."""
    return value if isinstance(value, dict) else None


def _is_id(value: Any) -> TypeGuard[int | str]:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _note(kind: str, source: str, detail: str, *, refusing: bool = False, **keys: Any) -> dict[str, Any]:
    return {"kind": kind, "source": source, "detail": detail, "refusing": refusing, **keys}


def _expand(paths: Sequence[PathLike]) -> list[str]:
    """Existing log files named by ``paths`` (directories: every ``*.eval``/``*.json`` below)."""
    files: dict[Path, str] = {}  # resolved path -> the spelling first given (a file named twice is read once)
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = [q for q in path.rglob("*") if q.suffix in (".eval", ".json") and q.name != _LOG_INDEX]
            for q in sorted(found):
                if q.is_file():
                    files.setdefault(q.resolve(), str(q))
        elif path.exists():
            files.setdefault(path.resolve(), str(p))
        else:
            raise InputFormatError(str(p), "no such file or directory")
    return sorted(files.values())


def _parse_json(data: bytes, source: str) -> tuple[Any, dict[str, Any] | None]:
    """Parse JSON bytes; return (value, None) or (None, unreadable_file note)."""
    try:
        return json.loads(data), None
    except UnicodeDecodeError as exc:
        return None, _note("unreadable_file", source, f"not UTF-8 JSON: {exc}", refusing=True)
    except json.JSONDecodeError as exc:
        return None, _note(
            "unreadable_file", source, f"invalid JSON ({exc.msg}; column {exc.colno})", refusing=True, line=exc.lineno
        )


def _read_sample(value: Any, line: int, source: str, place: str) -> tuple[_Sample | None, dict[str, Any] | None]:
    """Check a sample's identity fields (``id``, ``epoch``)."""
    sample = _obj(value)
    if sample is None:
        return None, _note("unreadable_file", source, f"{place} is not a JSON object", refusing=True, line=line)
    raw_id, epoch = sample.get("id"), sample.get("epoch")
    if not _is_id(raw_id):
        return None, _note(
            "unreadable_file", source, f"{place} has no valid id (got {raw_id!r})", refusing=True, line=line
        )
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        return None, _note(
            "unreadable_file", source, f"{place} has no valid epoch (got {epoch!r})", refusing=True, line=line
        )
    return _Sample(sample, raw_id, epoch, line, source), None


def _check_header(doc: Any, source: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Check the fields every log must have (``eval.task``, ``eval.model``)."""
    top = _obj(doc)
    if top is None:
        return None, _note("unreadable_file", source, "the log is not a JSON object", refusing=True)
    spec = _obj(top.get("eval"))
    if spec is None:
        return None, _note("unreadable_file", source, "the log has no 'eval' object", refusing=True)
    for key in ("task", "model"):
        if not isinstance(spec.get(key), str):
            return None, _note("unreadable_file", source, f"the log has no string 'eval.{key}'", refusing=True)
    return top, None


def _read_eval(path: str) -> tuple[_Log | None, list[dict[str, Any]]]:
    """Read a ``.eval`` zip archive."""
    notes: list[dict[str, Any]] = []
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        return None, [_note("unreadable_file", path, f"not a readable .eval (zip) archive: {exc}", refusing=True)]
    with archive:
        names = archive.namelist()
        member = _HEADER if _HEADER in names else _JOURNAL_START if _JOURNAL_START in names else None
        if member is None:
            detail = f"the archive has neither {_HEADER} nor {_JOURNAL_START}"
            return None, [_note("unreadable_file", path, detail, refusing=True)]
        data, note = _read_member(archive, member, f"{path}!{member}")
        if note is not None:
            return None, [note]
        doc, note = _parse_json(data, f"{path}!{member}")
        if note is not None:
            return None, [note]
        top, note = _check_header(doc, f"{path}!{member}")
        if top is None:
            return None, [note] if note else []
        status = top.get("status") if member == _HEADER else "started"
        log = _Log(path, "eval", member, top, status if isinstance(status, str) else "started")
        sample_names = [n for n in names if _SAMPLE_MEMBER.match(n)]
        for line, name in enumerate(sample_names, start=1):
            source = f"{path}!{name}"
            data, note = _read_member(archive, name, source)
            if note is None:
                value, note = _parse_json(data, source)
            if note is None:
                sample, note = _read_sample(value, line, source, name)
                if sample is not None:
                    log.samples.append(sample)
            if note is not None:
                notes.append(note)
    return log, notes


def _read_member(archive: zipfile.ZipFile, name: str, source: str) -> tuple[bytes, dict[str, Any] | None]:
    try:
        return archive.read(name), None
    except Exception as exc:  # zlib.error, BadZipFile, EOFError, OSError: all mean "cannot read"
        return b"", _note("unreadable_file", source, f"cannot read archive member: {exc}", refusing=True)


def _read_json(path: str) -> tuple[_Log | None, list[dict[str, Any]]]:
    """Read a ``.json`` log (one EvalLog document)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return None, [_note("unreadable_file", path, f"cannot read file: {exc.strerror or exc}", refusing=True)]
    doc, note = _parse_json(data, path)
    if note is not None:
        return None, [note]
    top, note = _check_header(doc, path)
    if top is None:
        return None, [note] if note else []
    status = top.get("status")
    log = _Log(path, "json", None, top, status if isinstance(status, str) else "started")
    samples = top.get("samples")
    if samples is None:
        return log, []
    if not isinstance(samples, list):
        return log, [_note("unreadable_file", path, "'samples' is not an array", refusing=True)]
    notes: list[dict[str, Any]] = []
    for line, value in enumerate(samples, start=1):
        sample, note = _read_sample(value, line, path, f"samples[{line - 1}]")
        if sample is not None:
            log.samples.append(sample)
        if note is not None:
            notes.append(note)
    return log, notes


def _read_log(path: str) -> tuple[_Log | None, list[dict[str, Any]]]:
    if path.endswith(".eval") or (not path.endswith(".json") and zipfile.is_zipfile(path)):
        return _read_eval(path)
    return _read_json(path)


def _created(log: _Log) -> tuple[bool, datetime, str, str]:
    """Sort key of a log among runs of the same (task, model): created time, start time, path."""
    raw = log.spec.get("created")
    when: datetime | None = None
    if isinstance(raw, str):
        try:
            when = datetime.fromisoformat(raw)
        except ValueError:
            when = None
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    stats = _obj(log.doc.get("stats")) or {}
    started = stats.get("started_at")
    return (when is None, when or datetime.min.replace(tzinfo=UTC), str(started or ""), log.path)


def _epochs(log: _Log) -> tuple[int, dict[str, Any] | None]:
    config = _obj(log.spec.get("config")) or {}
    epochs = config.get("epochs")
    if epochs is None:
        return 1, None
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        detail = f"eval.config.epochs = {epochs!r} is not a positive integer; read as 1"
        return 1, _note("unreadable_file", log.path, detail, refusing=True)
    return epochs, None


def _declared_ids(log: _Log) -> tuple[list[int | str] | None, dict[str, Any] | None]:
    """``eval.dataset.sample_ids`` (None when absent or empty)."""
    dataset = _obj(log.spec.get("dataset")) or {}
    ids = dataset.get("sample_ids")
    if ids is None or ids == []:
        return None, None
    if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
        detail = "eval.dataset.sample_ids is not a list of ints/strings; the plan is read from the rows"
        return None, _note("unreadable_file", log.path, detail, refusing=True)
    return list(ids), None


def _scorer_names(log: _Log) -> list[str]:
    """Scorer names the log declares: ``results.scores[].name``, else ``eval.scorers[].name``."""
    names: list[str] = []
    declared: list[Any] = []
    for candidates in (
        log.results.get("scores"),
        [log.results.get("scorer")],  # logs written before 'scores' existed
        log.spec.get("scorers"),
    ):
        if isinstance(candidates, list) and any(_obj(c) for c in candidates):
            declared = candidates
            break
    for entry in declared:
        name = (_obj(entry) or {}).get("name")
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


def _sample_scores(sample: Mapping[str, Any], default: str | None) -> dict[str, Any]:
    scores = _obj(sample.get("scores"))
    if scores is not None:
        return scores
    old = _obj(sample.get("score"))  # single deprecated 'score' field
    return {default or "score": old} if old is not None else {}


def _choose_scorer(log: _Log, score: str | None) -> tuple[str | None, list[str]]:
    """The scorer to read and every scorer name seen (declared first, then in samples, sorted)."""
    declared = _scorer_names(log)
    in_samples = sorted(
        {k for s in log.samples for k in _sample_scores(s.data, declared[0] if declared else None)} - set(declared)
    )
    available = declared + in_samples
    if score is not None:
        return score, available
    return (available[0] if available else None), available


def _has_output(sample: Mapping[str, Any]) -> bool:
    output = _obj(sample.get("output")) or {}
    choices = output.get("choices")
    completion = output.get("completion")
    return bool(choices) or (isinstance(completion, str) and completion != "")


def _limit_text(sample: Mapping[str, Any]) -> str | None:
    limit = sample.get("limit")
    if limit is None:
        return None
    obj = _obj(limit)
    if obj is None:
        return str(limit)
    kind, value = obj.get("type"), obj.get("limit")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{kind}={value}" if value is not None else str(kind)


def _grade(value: Any) -> tuple[float | None, str | None]:
    """Map a Score value to a float; return (score, problem kind or None)."""
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, (int, float)):
        number = float(value)
        return (number, None) if math.isfinite(number) else (None, "nonfinite_score")
    if isinstance(value, str) and value in _LETTER_GRADES:
        return _LETTER_GRADES[value], None
    return None, "not_a_score"


@dataclass
class _Rows:
    """Ledger rows and notes accumulated over logs."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)


def _retries(sample: Mapping[str, Any]) -> list[Any]:
    """The sample's ``error_retries`` (earlier failed attempts), or an empty list."""
    retries = sample.get("error_retries")
    return retries if isinstance(retries, list) else []


def _sample_rows(
    log: _Log, sample: _Sample, case_id: str, scorer: str | None, first_attempt: int
) -> Iterator[dict[str, Any]]:
    """Rows for one sample: its earlier failed attempts, then the sample itself."""
    base = {
        CANDIDATE: log.model,
        CASE_ID: case_id,
        TRIAL: sample.epoch,
        RUN_ID: log.run_id,
        LINE: sample.line,
        SOURCE: sample.source,
    }
    n_retries = len(_retries(sample.data))
    for k in range(n_retries):
        yield {
            **base,
            ATTEMPT: first_attempt + k,
            EXEC_STATUS: "error",
            SCORE_STATUS: "not_scored",
            SCORE: None,
            PASSED: None,
            HAS_OUTPUT: False,
            LIMIT: None,
        }
    row = {**base, ATTEMPT: first_attempt + n_retries, LIMIT: _limit_text(sample.data), SCORE: None, PASSED: None}
    row[HAS_OUTPUT] = _has_output(sample.data)
    if sample.data.get("error"):
        yield {**row, EXEC_STATUS: "error", SCORE_STATUS: "not_scored"}
        return
    row[EXEC_STATUS] = "completed"
    scores = _sample_scores(sample.data, scorer)
    if scorer is None or scorer not in scores:
        yield {**row, SCORE_STATUS: "not_scored"}
        return
    entry = scores[scorer]
    value = entry.get("value") if isinstance(entry, dict) else None
    if value is None:
        yield {**row, SCORE_STATUS: "judge_error", "_problem": None}
        return
    number, problem = _grade(value)
    if number is None:
        yield {**row, SCORE_STATUS: "judge_error", "_problem": (problem, value)}
        return
    passed = (number == 1.0) if number in (0.0, 1.0) else None
    # A graded sample has an output the scorer judged, even if its text is empty.
    yield {**row, SCORE_STATUS: "scored", SCORE: number, PASSED: passed, HAS_OUTPUT: True}


def _log_info(log: _Log, *, scorer: str | None, available: list[str], epochs: int) -> dict[str, Any]:
    dataset = _obj(log.spec.get("dataset")) or {}
    packages = _obj(log.spec.get("packages")) or {}
    ids = dataset.get("sample_ids")
    error = _obj(log.doc.get("error"))
    return {
        "source": log.path,
        "format": log.fmt,
        "header": log.header_member,
        "readable": True,
        "inspect_version": packages.get("inspect_ai"),
        "status": log.status,
        "task": log.task,
        "task_id": log.spec.get("task_id"),
        "model": log.model,
        "run_id": log.spec.get("run_id"),
        "eval_id": log.spec.get("eval_id"),
        "created": log.spec.get("created"),
        "dataset_name": dataset.get("name"),
        "dataset_samples": dataset.get("samples"),
        "sample_ids_declared": len(ids) if isinstance(ids, list) else None,
        "epochs": epochs,
        "total_samples": log.results.get("total_samples"),
        "completed_samples": log.results.get("completed_samples"),
        "scorer": scorer,
        "scorers": available,
        "samples_read": len(log.samples),
        "attempts_read": sum(1 + len(_retries(s.data)) for s in log.samples),
        "samples_with_error": sum(1 for s in log.samples if s.data.get("error")),
        "error": (str(error.get("message"))[:500] if error else None),
    }


def _header_notes(log: _Log) -> list[dict[str, Any]]:
    """``run_status`` and ``header_rows_disagree`` notes of one log."""
    notes: list[dict[str, Any]] = []
    if log.status != "success":
        error = _obj(log.doc.get("error"))
        why = f": {str(error.get('message'))[:200]}" if error else ""
        notes.append(_note("run_status", log.path, f"the run's status is {log.status!r}, not 'success'{why}"))
    rows = len(log.samples)
    completed = sum(1 for s in log.samples if not s.data.get("error"))
    for key, count, what in (
        ("total_samples", rows, "sample rows"),
        ("completed_samples", completed, "sample rows without an error"),
    ):
        declared = log.results.get(key)
        if isinstance(declared, int) and not isinstance(declared, bool) and declared != count:
            detail = f"header results.{key} = {declared} but the log has {count} {what} (rows are the evidence)"
            notes.append(_note("header_rows_disagree", log.path, detail))
    return notes


def _value_notes(log: _Log, scorer: str | None, problems: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """One note per problem kind of a log's score values (not per row)."""
    notes: list[dict[str, Any]] = []
    for kind in ("not_a_score", "nonfinite_score"):
        values = [v for k, v in problems if k == kind]
        if values:
            what = "is not a score" if kind == "not_a_score" else "is not finite"
            detail = (
                f"{len(values)} value(s) of scorer {scorer!r} {what} (e.g. {json.dumps(values[0])[:80]}); "
                "read as judge_error"
            )
            notes.append(_note(kind, log.path, detail))
    return notes


def _build_plan(
    units: set[tuple[str, str, int]], case_task: dict[str, str], source: str
) -> tuple[Plan, list[dict[str, Any]], pl.DataFrame]:
    """Plan from planned units: cross product when every candidate has the same units, else a units table.

    Returns the plan, importer notes and the plan's own problems (a
    :class:`~evalframe.errors.PlanError` is returned as data, never raised).
    """
    candidates = sorted({u[0] for u in units})
    cases = pl.DataFrame(
        {CASE_ID: sorted(case_task), TASK: [case_task[c] for c in sorted(case_task)]},
        schema={CASE_ID: pl.String, TASK: pl.String},
    )
    if not units:
        note = _note("empty_plan", source, "no planned units: no log declares sample ids or has samples", refusing=True)
        return Plan(cases=cases, candidates=tuple(candidates), source=source), [note], problems_frame()
    trials = max(u[2] for u in units)
    full = {(c, t) for c in case_task for t in range(1, trials + 1)}
    cross = all({(u[1], u[2]) for u in units if u[0] == c} == full for c in candidates)
    units_table = None
    if not cross:
        ordered = sorted(units)
        units_table = pl.DataFrame(
            {CANDIDATE: [u[0] for u in ordered], CASE_ID: [u[1] for u in ordered], TRIAL: [u[2] for u in ordered]},
            schema={CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64},
        )
    try:
        # The cases and candidates are validated as a cross product; a units table (a subset of that
        # product by construction) is then attached.
        plan = Plan.from_frame(cases, candidates=candidates, trials=trials, source=source)
        problems = problems_frame()
    except PlanError as exc:
        plan = Plan(cases=cases, candidates=tuple(candidates), trials=trials, source=source)
        problems = exc.problems
    return (plan.with_units(units_table) if units_table is not None else plan), [], problems


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read Inspect AI eval logs into a plan, a status ledger, notes and per-file facts.

    Parameters
    ----------
    paths
        ``.eval`` archives and/or ``.json`` logs (a directory stands for every
        ``*.eval`` and ``*.json`` below it, except Inspect's ``logs.json``
        index). Several logs combine into one plan and one ledger; the order
        of ``paths`` never changes the result.
    score
        Name of the scorer to read (a key of each sample's ``scores``).
        Default: per log, the first scorer listed in ``results.scores`` (else
        in ``eval.scorers``, else the alphabetically first name found in the
        samples). A sample without the chosen scorer is ``not_scored``.

    Returns
    -------
    Imported
        ``plan``: the planned units (``eval.dataset.sample_ids`` × epochs ×
        ``eval.model``, unioned over logs), cases with a ``task`` column.
        ``ledger``: one row per attempt with ``candidate`` (String, the
        model), ``case_id`` (String; ``<task>/<id>`` when several tasks are
        read), ``trial`` (Int64, the epoch), ``attempt`` (Int64), ``run_id``
        (String), ``exec_status`` (``completed``/``error``),
        ``score_status`` (``scored``/``judge_error``/``not_scored``),
        ``score`` (Float64), ``passed`` (Boolean; only when every grade is 0
        or 1 — otherwise the column is left out so the audit's declared
        ``grade``/``pass_threshold`` decides), ``has_output`` (Boolean),
        ``limit`` (String, ``<type>=<value>``), ``line`` (Int64: the
        sample's 1-based position in the ``samples`` array, or among the
        archive's sample members) and ``source`` (String: the file, plus
        ``!samples/<id>_epoch_<n>.json`` for archive members).
        ``notes``: ``run_status``, ``header_rows_disagree``,
        ``id_normalised``, ``not_a_score``, ``nonfinite_score`` (not
        refusing); ``unreadable_file`` and ``empty_plan`` (refusing), plus any
        problem of the plan itself (e.g. a padded sample id).
        ``info``: one dict per file (format, inspect version, status, task,
        model, run_id, eval_id, created, dataset size, declared sample ids,
        epochs, header totals, chosen scorer, samples read).

    Raises
    ------
    InputFormatError
        When a path does not exist. A file that exists but cannot be read
        (truncated archive, invalid JSON, missing header or keys) is an
        ``unreadable_file`` note naming the file and member or line; the
        other files are still read.

    Examples
    --------
    >>> imported = read(["../shared/data/real/inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/"
    ...                  "log_streaming.eval"])
    >>> imported.plan.candidates, imported.plan.trials, imported.plan.n_units
    (('azureai/Meta-Llama-3-1-405B-Instruct-jqf',), 2, 4)
    >>> imported.ledger.select("case_id", "trial", "attempt", "exec_status", "score_status", "score", "passed")
    shape: (4, 7)
    ┌─────────┬───────┬─────────┬─────────────┬──────────────┬───────┬────────┐
    │ case_id ┆ trial ┆ attempt ┆ exec_status ┆ score_status ┆ score ┆ passed │
    │ ---     ┆ ---   ┆ ---     ┆ ---         ┆ ---          ┆ ---   ┆ ---    │
    │ str     ┆ i64   ┆ i64     ┆ str         ┆ str          ┆ f64   ┆ bool   │
    ╞═════════╪═══════╪═════════╪═════════════╪══════════════╪═══════╪════════╡
    │ 1       ┆ 1     ┆ 1       ┆ completed   ┆ scored       ┆ 0.0   ┆ false  │
    │ 1       ┆ 2     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    │ 2       ┆ 1     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    │ 2       ┆ 2     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    └─────────┴───────┴─────────┴─────────────┴──────────────┴───────┴────────┘
    >>> imported.info[0]["dataset_samples"], imported.info[0]["status"]
    (100, 'success')
    """
    files = _expand(paths)
    source = "; ".join(files) if files else "inspect_ai"
    acc = _Rows()
    info: list[dict[str, Any]] = []
    logs: list[_Log] = []
    for path in files:
        log, notes = _read_log(path)
        acc.notes.extend(notes)
        if log is None:
            info.append({"source": path, "format": Path(path).suffix.lstrip("."), "readable": False})
        else:
            logs.append(log)
    prefixed = len({log.task for log in logs}) > 1

    def case_of(task: str, raw: int | str) -> str:
        return f"{task}/{raw}" if prefixed else str(raw)

    units: set[tuple[str, str, int]] = set()
    case_task: dict[str, str] = {}
    # sample-id spellings per (task, string form): to flag 1 vs "1"
    spellings: dict[tuple[str, str], set[str]] = defaultdict(set)
    ids_in_log: dict[str, set[str]] = defaultdict(set)
    groups: dict[tuple[str, str], list[_Log]] = defaultdict(list)
    for log in logs:
        groups[(log.task, log.model)].append(log)
        epochs, note = _epochs(log)
        declared, id_note = _declared_ids(log)
        acc.notes.extend(n for n in (note, id_note) if n is not None)
        acc.notes.extend(_header_notes(log))
        raw_ids: list[int | str] = [s.raw_id for s in log.samples]
        if declared is None:
            plan_ids = sorted(set(raw_ids), key=lambda r: (str(r), type(r).__name__))
            if id_note is None:
                detail = "the header lists no eval.dataset.sample_ids: the plan could not be read from the header"
                detail += (
                    f"; it was taken from the {len({str(i) for i in plan_ids})} sample id(s) present"
                    if plan_ids
                    else " and the log has no samples, so it plans no units"
                )
                acc.notes.append(_note("header_rows_disagree", log.path, detail))
        else:
            plan_ids = declared
        for raw in [*plan_ids, *raw_ids]:
            spellings[(log.task, str(raw))].add(type(raw).__name__)
            ids_in_log[log.path].add(str(raw))
        for raw in plan_ids:
            case_id = case_of(log.task, raw)
            case_task[case_id] = log.task
            units.update((log.model, case_id, t) for t in range(1, epochs + 1))
        chosen, available = _choose_scorer(log, score)
        facts = _log_info(log, scorer=chosen, available=available, epochs=epochs)
        facts["case_id_prefix"] = f"{log.task}/" if prefixed else None
        info.append(facts)
    for log in logs:
        for raw in sorted(ids_in_log[log.path]):
            kinds = spellings[(log.task, raw)]
            if len(kinds) > 1:
                detail = f"sample id {raw!r} appears as {' and '.join(sorted(kinds))}; both read as one case"
                acc.notes.append(_note("id_normalised", log.path, detail, case_id=case_of(log.task, raw)))

    for group in groups.values():
        next_attempt: dict[tuple[str, int], int] = defaultdict(lambda: 1)
        for log in sorted(group, key=_created):
            chosen, _ = _choose_scorer(log, score)
            used: dict[tuple[str, int], int] = {}
            problems: list[tuple[str, Any]] = []
            for sample in log.samples:
                case_id = case_of(log.task, sample.raw_id)
                case_task.setdefault(case_id, log.task)
                key = (case_id, sample.epoch)
                for row in _sample_rows(log, sample, case_id, chosen, next_attempt[key]):
                    problem = row.pop("_problem", None)
                    if problem is not None:
                        problems.append(problem)
                    acc.rows.append(row)
                    used[key] = max(used.get(key, 0), row[ATTEMPT])
            for key, last in used.items():
                next_attempt[key] = last + 1
            acc.notes.extend(_value_notes(log, chosen, problems))

    planned_cases = {c for _, c, _ in units}
    plan, plan_notes, plan_problems = _build_plan(
        units, {c: t for c, t in case_task.items() if c in planned_cases}, source
    )
    acc.notes.extend(plan_notes)
    ledger = pl.DataFrame(acc.rows, schema=_LEDGER_SCHEMA).sort([*UNIT_KEY, ATTEMPT, SOURCE, LINE])
    scored = ledger.filter(pl.col(SCORE_STATUS) == "scored")
    if scored.filter(~pl.col(SCORE).is_in([0.0, 1.0])).height:
        ledger = ledger.drop(PASSED)
    found = concat_problems([problems_frame(acc.notes), plan_problems])
    return Imported(plan=plan, ledger=ledger, notes=found, info=sorted(info, key=lambda d: str(d["source"])))
