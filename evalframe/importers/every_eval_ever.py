"""Read and write every_eval_ever records (EvalEval's shared schema for published evaluation results).

Format
------
An every_eval_ever evaluation is an **aggregate record** (one JSON document,
``eval.schema.json``, schema 0.2.x; 0.3.0 records read the same way) and,
optionally, an **instance-level file** it points to (JSON Lines,
``instance_level_eval.schema.json``, one row per sample). Both schemas are
published in evaleval/every_eval_ever (``every_eval_ever/schemas/``). The
fields read:

* aggregate: ``model_info.id`` (the model), ``evaluation_id``,
  ``evaluation_results[]`` with ``evaluation_name``,
  ``source_data.{dataset_name, samples_number, sample_ids}`` and
  ``score_details.{score, uncertainty.num_samples}``, and
  ``detailed_evaluation_results.{file_path, checksum, hash_algorithm,
  total_rows}``;
* instance row: ``model_id``, ``evaluation_id``, ``evaluation_name``,
  ``sample_id``, ``sample_hash``, ``evaluation.{score, is_correct,
  num_turns}``, ``error``, ``output``/``messages``/``interactions`` and
  ``metadata``.

How it maps onto evalframe
--------------------------
* **candidate**: the record's ``model_info.id`` (an instance file read
  without its record: the rows' ``model_id``);
* **plan**: the record's ``sample_ids`` (the union over its
  ``evaluation_results``) × trials. A record without ``sample_ids`` plans the
  sample ids of its rows, with a ``plan_from_rows`` note; a record with
  neither ids nor rows is no evidence at all and refuses (``empty_plan``),
  whatever its scores say. ``samples_number`` above the ids listed is a
  ``limited_run`` note (the run covered a subset of the dataset);
* **case_id**: the ``sample_id`` as a string (``1`` and ``"1"`` are one
  case, with an ``id_normalised`` note when both spellings occur). Every case
  carries a ``task`` plan column (``source_data.dataset_name``, else the
  rows' ``evaluation_name``); when records of several tasks are read
  together, case ids are ``<task>/<sample_id>``;
* **case_hash**: the row's ``sample_hash`` (the hash of input and
  reference), also planned per case from the first row that carries it, so
  a row of another candidate whose sample has the same id but other content
  refuses (``hash_mismatch``);
* **trial / attempt**: the schema has neither, so every row is trial 1,
  attempt 1, except in records evalframe wrote (see below), whose rows carry
  ``metadata["evalframe.trial"]`` (and ``["evalframe.has_output"]``, since
  evalframe does not keep the output text) and whose sources carry
  ``source_data.additional_details["evalframe.trials"]``;
* **status**: a row with an ``error`` (a non-empty string or any other
  non-null value) is an execution failure (``exec_status = error``), its
  grade ignored: the schema makes every row carry a score, so an errored
  row's score is not evidence of a wrong answer. Rows evalframe wrote say
  their statuses in ``metadata["evalframe.exec_status"]`` and
  ``["evalframe.score_status"]``, which are read as written;
* **grade** (``score``): ``is_correct`` (the default: ``passed`` is the
  verdict and ``score`` 1 or 0) or ``score`` (``evaluation.score``, with
  ``passed`` from ``is_correct``; audit it with ``--grade numeric``). A
  grade value that is not a score (null, text, NaN) is a grader failure
  (:func:`~evalframe.importers._kit.grade`); a row without the grade is
  ``not_scored``;
* **limit**: a row whose ``num_turns`` reached the record's
  ``eval_limits.message_limit`` has ``limit = "message=<N>"``.

The instance file is found from the record's ``file_path``, relative to the
record's folder or any folder above it (publishers write it relative to their
repository root); its rows are read once even when the file is also given.
An instance file given without a record is read on its own. Header numbers
are never evidence: a ``header_rows_disagree`` note says when ``total_rows``,
the checksum, ``uncertainty.num_samples``, the ``evaluation_id`` or the score
of the record disagree with its rows (the score is compared with the mean
grade of the rows for the record's only result, or for the result named as
the rows' ``evaluation_name``).

Writing
-------
:func:`write` publishes an audit in the same schema (0.2.1) with its honest
denominators: per candidate one record ``<candidate>.json`` whose results
are ``pass_rate_scored`` (passed / scored, ``num_samples`` = scored),
``pass_rate_planned`` and ``scored_coverage`` (``num_samples`` = planned),
each with the audit's interval clustered by case (``confidence_interval``),
the clustered standard error and the funnel counts, design effect and
effective sample size in ``score_details.details``; and an instance file
``<candidate>_samples.jsonl`` with one row per attempted unit. Missing units
have no row (they are in ``sample_ids`` and counted as ``missing``), so they
are never written as wrong answers; a unit that ran but has no valid grade
(execution or grader failure, no output) gets an ``error`` saying so, the
placeholder score 0 the schema requires, and its statuses in ``metadata``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    EXEC_STATUS,
    EXEC_STATUSES,
    HAS_OUTPUT,
    KIND,
    LIMIT,
    LINE,
    OUTCOME,
    PASSED,
    REFUSING,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    TRIAL,
)
from evalframe.errors import EvalframeError, InputFormatError
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    Unreadable,
    build_plan,
    choose_score,
    find_files,
    finish,
    grade,
    note,
    planned_size,
    read_json,
    read_json_lines,
)
from evalframe.load import PathLike
from evalframe.report import MANIFEST, ExchangeGuard, write_output

if TYPE_CHECKING:
    from evalframe.report import AuditReport

__all__ = ["ExportError", "read", "write"]

#: The grades an instance row carries, in the order tried when none is declared.
GRADES: Final = ("is_correct", "score")
#: Metadata keys of rows evalframe writes (values are strings, as the schema requires).
META_TRIAL: Final = "evalframe.trial"
META_EXEC: Final = "evalframe.exec_status"
META_SCORE: Final = "evalframe.score_status"
META_OUTPUT: Final = "evalframe.has_output"
#: ``source_data.additional_details`` key of the planned trials in records evalframe writes.
DETAIL_TRIALS: Final = "evalframe.trials"
#: The schema version :func:`write` writes.
SCHEMA_VERSION: Final = "0.2.1"
#: Ledger columns of this importer: the common ones plus ``case_hash``.
SCHEMA: Final = pl.Schema([*LEDGER_SCHEMA.items(), (CASE_HASH, pl.String)])


class ExportError(EvalframeError):
    """An audit cannot be written as every_eval_ever records without misstating it.

    Attributes
    ----------
    candidate
        The candidate whose units cannot be written (None: the whole audit).
    detail
        Why, for a person.
    """

    def __init__(self, detail: str, *, candidate: str | None = None) -> None:
        self.candidate = candidate
        self.detail = detail
        super().__init__(f"cannot export to every-eval-ever{f' ({candidate})' if candidate else ''}: {detail}")


@dataclass
class _Record:
    """One aggregate record as far as the import needs it."""

    path: Path
    candidate: str
    evaluation_id: str | None
    task: str | None
    sample_ids: list[Any]
    samples_number: int | None
    trials: int
    results: list[dict[str, Any]]
    detail: dict[str, Any]
    message_limit: int | None
    instance: Path | None = None


@dataclass
class _Rows:
    """The rows of one instance file."""

    path: Path
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    raw: bytes = b""


def _is_export(path: Path) -> bool:
    return path.suffix in (".json", ".jsonl") and path.name != MANIFEST


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _record(path: Path, obj: Any) -> _Record:
    """The aggregate record of ``obj``; a document that is not one raises :class:`Unreadable`."""
    source = str(path)
    if not isinstance(obj, dict) or not isinstance(obj.get("evaluation_results"), list):
        raise Unreadable(source, "not an every_eval_ever aggregate record (no evaluation_results list)")
    model = obj.get("model_info")
    candidate = None
    if isinstance(model, dict):
        candidate = next((model[k] for k in ("id", "name") if isinstance(model.get(k), str) and model[k]), None)
    if candidate is None:
        raise Unreadable(source, "model_info has no id (nor name): the candidate is unknown")
    results = obj["evaluation_results"]
    ids: list[Any] = []
    numbers: list[int] = []
    trials = 1
    task: str | None = None
    limit: int | None = None
    for number, result in enumerate(results):
        if not isinstance(result, dict):
            raise Unreadable(source, f"evaluation_results[{number}] is not an object")
        data = result.get("source_data")
        data = data if isinstance(data, dict) else {}
        listed = data.get("sample_ids")
        if listed is not None:
            if not isinstance(listed, list) or any(
                isinstance(i, bool) or not isinstance(i, (str, int)) for i in listed
            ):
                raise Unreadable(source, f"evaluation_results[{number}].source_data.sample_ids is not a list of ids")
            ids.extend(listed)
        if _int(data.get("samples_number")) is not None:
            numbers.append(data["samples_number"])
        if task is None and isinstance(data.get("dataset_name"), str):
            task = data["dataset_name"]
        extra = data.get("additional_details")
        declared = extra.get(DETAIL_TRIALS) if isinstance(extra, dict) else None
        if isinstance(declared, str):
            if not declared.isdigit() or int(declared) < 1:
                raise Unreadable(source, f"{DETAIL_TRIALS} = {declared!r} is not a positive number of trials")
            trials = max(trials, int(declared))
        config = result.get("generation_config")
        args = config.get("generation_args") if isinstance(config, dict) else None
        limits = args.get("eval_limits") if isinstance(args, dict) else None
        if isinstance(limits, dict) and _int(limits.get("message_limit")) is not None:
            limit = limits["message_limit"]
    detail = obj.get("detailed_evaluation_results")
    if detail is not None and not (isinstance(detail, dict) and isinstance(detail.get("file_path"), str)):
        raise Unreadable(source, "detailed_evaluation_results has no file_path")
    return _Record(
        path=path,
        candidate=candidate,
        evaluation_id=obj.get("evaluation_id") if isinstance(obj.get("evaluation_id"), str) else None,
        task=task,
        sample_ids=list(dict.fromkeys(ids)),
        samples_number=max(numbers) if numbers else None,
        trials=trials,
        results=results,
        detail=detail or {},
        message_limit=limit,
    )


def _instance_path(record: _Record) -> Path | None:
    """The instance file the record names: its ``file_path`` under the record's folder or a folder above."""
    relative = record.detail.get("file_path")
    if not isinstance(relative, str) or not relative:
        return None
    for base in (record.path.parent, *record.path.parent.parents):
        candidate = base / relative
        if candidate.is_file():
            return candidate
    return None


def _read_rows(path: Path) -> tuple[_Rows, list[dict[str, Any]]]:
    """The instance rows of a JSON Lines file and the notes of its unreadable lines."""
    lines, notes = read_json_lines(path)
    out = _Rows(path=path, raw=path.read_bytes())
    for number, obj in lines:
        if not isinstance(obj, dict):
            notes.append(
                note("unreadable_file", str(path), f"expected a JSON object, found {type(obj).__name__}", line=number)
            )
            continue
        sid = obj.get("sample_id")
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            detail = "an instance row without a string or integer sample_id"
            notes.append(note("unreadable_file", str(path), detail, line=number))
            continue
        out.rows.append((number, obj))
    return out, notes


def _has_output(row: Mapping[str, Any]) -> bool:
    output = row.get("output")
    if isinstance(output, dict):
        raw = output.get("raw")
        if (isinstance(raw, str) and raw) or (isinstance(raw, list) and any(raw)):
            return True
    for key in ("messages", "interactions"):
        turns = row.get(key)
        if isinstance(turns, list) and any(isinstance(t, dict) and t.get("role") == "assistant" for t in turns):
            return True
    return False


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _grade_row(
    row: Mapping[str, Any],
    chosen: str | None,
    source: str,
    line: int,
    notes: list[dict[str, Any]],
    keys: dict[str, Any],
) -> dict[str, Any]:
    """Exec status, score status, score, passed and has_output of one instance row."""
    meta = _obj(row.get("metadata"))
    error = row.get("error")
    exec_status = "error" if error is not None and error != "" else "completed"
    if meta.get(META_EXEC) in EXEC_STATUSES:
        exec_status = meta[META_EXEC]
    out: dict[str, Any] = {EXEC_STATUS: exec_status, SCORE_STATUS: "not_scored", SCORE: None, PASSED: None}
    written = meta.get(META_OUTPUT)
    out[HAS_OUTPUT] = (
        written == "true" if written in ("true", "false") else exec_status == "completed" and _has_output(row)
    )
    if exec_status != "completed":
        return out
    if meta.get(META_SCORE) in SCORE_STATUSES and meta[META_SCORE] != "scored":
        out[SCORE_STATUS] = meta[META_SCORE]
        return out
    evaluation = row.get("evaluation")
    if chosen is None or not isinstance(evaluation, dict) or chosen not in evaluation:
        return out
    raw = evaluation[chosen]
    status, number = grade(raw) if chosen == "score" or isinstance(raw, bool) else ("judge_error", None)
    out[SCORE_STATUS], out[SCORE] = status, number
    if status != "scored":
        kind = "nonfinite_score" if isinstance(raw, float) else "not_a_score"
        notes.append(note(kind, source, f"evaluation.{chosen} = {raw!r} is not a grade", line=line, **keys))
        return out
    verdict = evaluation.get("is_correct")
    if isinstance(verdict, bool):
        out[PASSED] = verdict
    elif number in (0.0, 1.0):
        out[PASSED] = number == 1.0
    return out


def _disagreements(record: _Record, rows: _Rows, ledger_rows: list[dict[str, Any]], chosen: str | None) -> list[str]:
    """Sentences for each header number of ``record`` that its rows contradict."""
    out: list[str] = []
    total = _int(record.detail.get("total_rows"))
    if total is not None and total != len(rows.rows):
        out.append(f"detailed_evaluation_results.total_rows = {total}; the instance file has {len(rows.rows)} row(s)")
    checksum = record.detail.get("checksum")
    if record.detail.get("hash_algorithm") == "sha256" and isinstance(checksum, str):
        actual = hashlib.sha256(rows.raw).hexdigest()
        if actual != checksum.lower():
            out.append(f"the instance file's sha256 is {actual}, not the record's checksum {checksum}")
    ids = {r.get("evaluation_id") for _, r in rows.rows} - {None}
    if record.evaluation_id is not None and ids and ids != {record.evaluation_id}:
        shown = ", ".join(sorted(map(str, ids)))
        out.append(f"the rows' evaluation_id ({shown}) is not the record's {record.evaluation_id!r}")
    names = {r.get("evaluation_name") for _, r in rows.rows}
    scored = [r for r in ledger_rows if r[SCORE_STATUS] == "scored"]
    for result in record.results:
        if len(record.results) > 1 and result.get("evaluation_name") not in names:
            continue
        details = _obj(result.get("score_details"))
        claimed = details.get("score")
        mean = _mean([r[SCORE] for r in scored])
        name = result.get("evaluation_name")
        if isinstance(claimed, (int, float)) and not isinstance(claimed, bool):
            if mean is None:
                out.append(f"{name!r} claims score {claimed:g}, but no row has a valid {chosen} grade")
            elif not math.isclose(mean, float(claimed), rel_tol=1e-9, abs_tol=1e-9):
                out.append(f"{name!r} claims score {claimed:g}; the {len(scored)} graded row(s) give {mean:g}")
        uncertainty = _obj(details.get("uncertainty"))
        claimed_n = _int(uncertainty.get("num_samples"))
        if claimed_n is not None and claimed_n != len(scored):
            out.append(f"{name!r} claims num_samples = {claimed_n}; {len(scored)} row(s) have a valid grade")
    return out


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read every_eval_ever aggregate records and instance-level files into a plan, a status ledger, notes and facts.

    Parameters
    ----------
    paths
        Aggregate records (``.json``), instance-level files (``.jsonl``) and
        folders searched for both. A record's instance file is found from
        its ``file_path`` (see the module docstring) and need not be given.
    score
        ``is_correct`` (the default) or ``score`` (``evaluation.score``;
        audit with ``--grade numeric``).

    Returns
    -------
    Imported
        ``plan``: per candidate, the record's ``sample_ids`` (else the rows'
        ids) × its trials, with a ``task`` and a ``case_hash`` case column
        (String). ``ledger``: one row per instance row: ``candidate``,
        ``case_id``, ``run_id`` (the record's ``evaluation_id``, else the
        row's), ``case_hash``, ``limit``, ``source`` (String), ``trial``,
        ``attempt`` (Int64; 1 unless evalframe wrote the record),
        ``exec_status`` (``error`` when the row has an ``error``, else
        ``completed``), ``score_status``, ``score`` (Float64), ``passed``
        (Boolean), ``has_output`` (Boolean: a non-empty ``output.raw`` or an
        assistant turn) and ``line`` (Int64, 1-based line of the row).
        ``notes``: flags (``header_rows_disagree``, ``limited_run``,
        ``plan_from_rows``, ``id_normalised``, ``not_a_score``,
        ``nonfinite_score``). ``info``: one dict per record or lone instance
        file (model, evaluation id, schema version, source, the record's
        scores: never evidence).

    Raises
    ------
    InputFormatError
        When a path does not exist, or a file is malformed: not JSON (a line
        of an instance file that is not), not an aggregate record, a record
        without ``model_info.id``, a row without a string or integer
        ``sample_id`` or ``model_id`` (naming the file, the line and the
        reason; the CLI exits 2).
    ImportRefused
        When a note refuses: a folder with neither records nor instance
        files (``no_export``), a record with no per-sample evidence
        (``empty_plan``), a ``score`` that is not a grade of the rows
        (``unknown_score``).

    Examples
    --------
    >>> base = "../shared/data/real/every_eval_ever/evaleval-every_eval_ever-PR30/"
    >>> imported = read([base + "data/ai2_arc/ollama/qwen2.5-0.5b/75e7b3c4-5d2f-4526-aef0-9ccd88690f5a.json"])
    >>> imported.ledger.select("candidate", "case_id", "exec_status", "score", "passed").rows()
    [('ollama/qwen2.5-0.5b', '1', 'completed', 1.0, True), ('ollama/qwen2.5-0.5b', '2', 'completed', 0.0, False), \
('ollama/qwen2.5-0.5b', '3', 'completed', 0.0, False)]
    >>> for kind, detail in imported.notes.select("kind", "detail").rows():
    ...     print(kind, "|", detail)
    header_rows_disagree | the rows' evaluation_id (ai2_arc_ollama_qwen2.5:0.5b_2e4e64ca-5622-42d3-9ef1-0f4e4475cdf7) \
is not the record's 'ai2_arc/ollama_qwen2.5:0.5b/1761001924.0'
    limited_run | the record lists 3 of the dataset's 2376 samples (samples_number)
    """
    files, notes = find_files(paths, is_export=_is_export, what="every_eval_ever record (.json) or instance (.jsonl)")
    records: list[_Record] = []
    lone: list[Path] = []
    for path in files:
        if path.suffix == ".jsonl":
            lone.append(path)
            continue
        try:
            records.append(_record(path, read_json(path)))
        except Unreadable as exc:
            notes.append(exc.note)
    claimed: set[Path] = set()
    for record in records:
        record.instance = _instance_path(record)
        if record.instance is not None:
            claimed.add(record.instance.resolve())
        elif record.detail:
            detail = (
                f"detailed_evaluation_results names {record.detail['file_path']!r} "
                f"(total_rows {record.detail.get('total_rows')}), which is not found: its units have no rows"
            )
            notes.append(note("header_rows_disagree", str(record.path), detail, candidate=record.candidate))
    lone = [p for p in lone if p.resolve() not in claimed]

    read_rows: dict[Path, _Rows] = {}
    for path in [r.instance for r in records if r.instance is not None] + lone:
        if path.resolve() in read_rows:
            continue
        try:
            rows, row_notes = _read_rows(path)
        except Unreadable as exc:
            notes.append(exc.note)
            rows, row_notes = _Rows(path=path), []
        notes.extend(row_notes)
        read_rows[path.resolve()] = rows

    # (record or None, rows or None): the units each source contributes.
    sources: list[tuple[_Record | None, _Rows | None]] = [
        (r, read_rows.get(r.instance.resolve()) if r.instance is not None else None) for r in records
    ] + [(None, read_rows[p.resolve()]) for p in lone]
    all_rows = [obj for _, rows in sources if rows is not None for _, obj in rows.rows]
    available = [
        k for obj in all_rows if isinstance(obj.get("evaluation"), dict) for k in GRADES if k in obj["evaluation"]
    ]
    label = ";".join(str(p) for p in paths)
    try:
        chosen = choose_score(score, available, default=GRADES, what="grade", source=label) if available else score
    except ScoreChoiceError as exc:
        notes.append(exc.note)
        chosen = None
    if score is not None and not available:
        notes.append(note("unknown_score", label, f"no instance row carries a grade (asked for {score!r})"))

    def task_of(record: _Record | None, rows: _Rows | None) -> str:
        if record is not None and record.task is not None:
            return record.task
        names = [obj.get("evaluation_name") for _, obj in rows.rows] if rows is not None else []
        return next((n for n in names if isinstance(n, str)), "unknown")

    tasks = {task_of(r, rows) for r, rows in sources}
    prefixed = len(tasks) > 1

    def case_of(task: str, raw: Any) -> str:
        return f"{task}/{raw}" if prefixed else str(raw)

    units: list[tuple[str, str, int, str]] = []
    ledger_rows: list[dict[str, Any]] = []
    info: list[dict[str, Any]] = []
    spellings: dict[tuple[str, str], set[str]] = {}
    for rec, found in sources:
        task = task_of(rec, found)
        entries = found.rows if found is not None else []
        row_source = str(found.path) if found is not None else ""
        source = str(rec.path) if rec is not None else row_source
        own: list[dict[str, Any]] = []
        for line, obj in entries:
            candidate = rec.candidate if rec is not None else obj.get("model_id")
            if not isinstance(candidate, str) or not candidate:
                notes.append(note("unreadable_file", row_source, "an instance row without a model_id", line=line))
                continue
            raw = obj["sample_id"]
            spellings.setdefault((task, str(raw)), set()).add(type(raw).__name__)
            meta = _obj(obj.get("metadata"))
            trial_text = meta.get(META_TRIAL)
            trial = int(trial_text) if isinstance(trial_text, str) and trial_text.isdigit() else 1
            case = case_of(task, raw)
            keys = {CANDIDATE: candidate, CASE_ID: case, TRIAL: trial}
            graded = _grade_row(obj, chosen, row_source, line, notes, keys)
            turns = _int(_obj(obj.get("evaluation")).get("num_turns"))
            limit = rec.message_limit if rec is not None else None
            run = rec.evaluation_id if rec is not None and rec.evaluation_id else obj.get("evaluation_id")
            own.append(
                {
                    **keys,
                    ATTEMPT: 1,
                    RUN_ID: run if isinstance(run, str) else None,
                    **graded,
                    LIMIT: f"message={limit}" if limit is not None and turns is not None and turns >= limit else None,
                    LINE: line,
                    SOURCE: row_source,
                    CASE_HASH: obj.get("sample_hash") if isinstance(obj.get("sample_hash"), str) else None,
                }
            )
        ledger_rows.extend(own)
        facts: dict[str, Any] = {"format": "every_eval_ever", "source": source, "task": task}
        if rec is not None:
            for raw in rec.sample_ids:
                spellings.setdefault((task, str(raw)), set()).add(type(raw).__name__)
            planned = [case_of(task, i) for i in rec.sample_ids]
            if not planned:
                planned = list(dict.fromkeys(r[CASE_ID] for r in own))
                if planned:
                    detail = f"the record lists no sample_ids: the plan is the {len(planned)} sample id(s) of its rows"
                    notes.append(note("plan_from_rows", source, detail, candidate=rec.candidate))
                else:
                    detail = (
                        f"no sample_ids and no instance rows: the record's {len(rec.results)} score(s) "
                        "have no per-sample evidence, so nothing can be audited"
                    )
                    notes.append(note("empty_plan", source, detail, candidate=rec.candidate))
            too_many = planned_size(len(planned) * rec.trials, source, f"{len(planned)} sample_ids × {DETAIL_TRIALS}")
            if too_many is not None:
                notes.append(too_many)
            else:
                units.extend((rec.candidate, c, t, task) for c in planned for t in range(1, rec.trials + 1))
            n_ids = len(rec.sample_ids)
            if rec.samples_number is not None and n_ids and rec.samples_number > n_ids:
                detail = f"the record lists {n_ids} of the dataset's {rec.samples_number} samples (samples_number)"
                notes.append(note("limited_run", source, detail, candidate=rec.candidate))
            if found is not None:
                for sentence in _disagreements(rec, found, own, chosen):
                    notes.append(note("header_rows_disagree", source, sentence, candidate=rec.candidate))
            facts |= {
                "candidate": rec.candidate,
                "run_id": rec.evaluation_id,
                "instance_file": str(rec.instance) if rec.instance is not None else None,
                "sample_ids": n_ids,
                "samples_number": rec.samples_number,
                "trials": rec.trials,
                "scores": {
                    str(r.get("evaluation_name")): (r.get("score_details") or {}).get("score")
                    for r in rec.results
                    if isinstance(r, dict)
                },
            }
        else:
            planned_rows = list(dict.fromkeys((r[CANDIDATE], r[CASE_ID], r[TRIAL]) for r in own))
            units.extend((c, k, t, task) for c, k, t in planned_rows)
            if planned_rows:
                detail = f"an instance file without its record: the plan is the {len(planned_rows)} unit(s) of its rows"
                notes.append(note("plan_from_rows", source, detail))
            facts |= {"candidate": sorted({r[CANDIDATE] for r in own}), "rows": len(own)}
        info.append(facts)
    for (task, raw), kinds in sorted(spellings.items()):
        if len(kinds) > 1:
            detail = f"sample id {raw!r} appears as {' and '.join(sorted(kinds))}; both read as one case"
            notes.append(note("id_normalised", label, detail, case_id=case_of(task, raw)))

    broken = [n for n in notes if n[KIND] == "unreadable_file" and n[REFUSING]]
    if broken:  # a malformed file is an input error (SPEC 6b): the first place, and how many more
        more = f" (and {len(broken) - 1} more unreadable place(s))" if len(broken) > 1 else ""
        raise InputFormatError(broken[0][SOURCE], broken[0]["detail"] + more, line=broken[0].get(LINE))
    ledger = pl.DataFrame(ledger_rows, schema=SCHEMA).sort(CANDIDATE, CASE_ID, TRIAL, ATTEMPT, SOURCE, LINE)
    if ledger.filter(pl.col(SCORE_STATUS) == "scored").get_column(PASSED).null_count():
        ledger = ledger.drop(PASSED)
    hashes = ledger.filter(pl.col(CASE_HASH).is_not_null()).unique(CASE_ID, keep="first", maintain_order=True)
    frame = pl.DataFrame(
        units, schema={CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, "task": pl.String}, orient="row"
    )
    frame = frame.unique(maintain_order=True).join(hashes.select(CASE_ID, CASE_HASH), on=CASE_ID, how="left")
    plan, plan_problems = build_plan(frame, source=label)
    if frame.height == 0 and any(n[REFUSING] for n in notes):  # nothing was read: the notes say why
        plan_problems = plan_problems.clear()
    return finish(plan, ledger, [notes, plan_problems], info)


def _slug(name: str, taken: set[str]) -> str:
    """A file-name stem for ``name``, unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "candidate"
    stem, n = base, 1
    while stem in taken:
        n += 1
        stem = f"{base}-{n}"
    taken.add(stem)
    return stem


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _result(
    name: str, dataset: str, rate: str, record: Mapping[str, Any], *, confidence: float, ids: list[str], trials: int
) -> dict[str, Any] | None:
    """One ``evaluation_results`` entry for the summary's ``rate``; None when the rate is undefined (null)."""
    value = _number(record[rate])
    if value is None:
        return None
    denominator = {"pass_rate_scored": "scored", "pass_rate_planned": "planned", "scored_coverage": "planned"}[rate]
    numerator = "passed" if rate.startswith("pass_rate") else "scored"
    uncertainty: dict[str, Any] = {"num_samples": int(record[denominator])}
    low, high = _number(record.get(f"{rate}_ci_low")), _number(record.get(f"{rate}_ci_high"))
    if low is not None and high is not None:
        uncertainty["confidence_interval"] = {
            "lower": low,
            "upper": high,
            "confidence_level": confidence,
            "method": "Wilson on the effective sample size scored / design effect, t(G-1), cases as clusters "
            "(Korn & Graubard 1998); Wilson (1927) with one unit per case",
        }
    se = _number(record.get("pass_rate_scored_se_clustered")) if rate == "pass_rate_scored" else None
    if se is not None:
        uncertainty["standard_error"] = {"value": se, "method": "CR1 cluster-robust by case (Cameron & Miller 2015)"}
    counts = ("planned", "attempted", "completed", "scored", "passed", "missing", "exec_failed", "judge_failed")
    details = {c: str(record[c]) for c in (*counts, "not_scored", "cases_planned") if record.get(c) is not None}
    for extra in ("design_effect", "effective_n"):
        if _number(record.get(extra)) is not None:
            details[extra] = repr(float(record[extra]))
    return {
        "evaluation_name": name,
        "source_data": {
            "dataset_name": dataset,
            "source_type": "other",
            "sample_ids": ids,
            "samples_number": len(ids),
            "additional_details": {DETAIL_TRIALS: str(trials)},
        },
        "metric_config": {
            "evaluation_description": f"{rate} = {numerator} / {denominator} (evalframe audit)",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
        },
        "score_details": {"score": value, "details": details, "uncertainty": uncertainty},
    }


def _instance(
    unit: Mapping[str, Any], *, evaluation_id: str, candidate: str, dataset: str, slices: Sequence[str]
) -> dict[str, Any]:
    """The instance row of one attempted unit (see the module docstring for units without a grade)."""
    outcome = str(unit[OUTCOME])
    scored = unit[SCORE_STATUS] == "scored" and unit[EXEC_STATUS] == "completed"
    meta = {META_TRIAL: str(unit[TRIAL]), META_EXEC: str(unit[EXEC_STATUS]), META_SCORE: str(unit[SCORE_STATUS])}
    if unit.get(HAS_OUTPUT) is not None:
        meta[META_OUTPUT] = "true" if unit[HAS_OUTPUT] else "false"
    meta |= {s: str(unit[s]) for s in slices if unit.get(s) is not None}
    answer = unit.get("answer")
    row: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": candidate,
        "evaluation_name": dataset,
        "sample_id": str(unit[CASE_ID]),
        "sample_hash": unit.get(CASE_HASH),
        "interaction_type": "single_turn",
        "input": {"raw": "", "reference": [str(unit["expected"])] if unit.get("expected") is not None else []},
        "output": {"raw": [str(answer)] if answer is not None else []},
        "answer_attribution": [],
        "evaluation": {
            "score": float(unit[SCORE] if unit[SCORE] is not None else unit[PASSED]),
            "is_correct": bool(unit[PASSED]),
        }
        if scored
        else {"score": 0.0, "is_correct": False},
        "error": None
        if scored
        else f"no valid grade (evalframe outcome {outcome}: exec_status {unit[EXEC_STATUS]}, "
        f"score_status {unit[SCORE_STATUS]}); the score 0 is a placeholder the schema requires",
        "metadata": meta,
    }
    return row


def write(
    report: AuditReport,
    out: PathLike,
    *,
    inputs: Sequence[PathLike] = (),
    command: str = "python",
    guard: ExchangeGuard = nullcontext,
) -> list[Path]:
    """Write an audit as every_eval_ever records: one aggregate record and one instance file per candidate.

    Parameters
    ----------
    report
        The audit (one counted attempt per unit: retry policy ``first`` or
        ``last_allowed``; binary grades, or numeric ones with a pass
        threshold, since every instance row must say ``is_correct``).
    out
        The folder, evalframe's own (see :func:`evalframe.report.write_output`):
        new, empty or an earlier evalframe output; written whole or not at all.
    inputs
        The audit's input paths, refused inside ``out``.
    command
        What wrote the folder, recorded in its manifest.
    guard
        Entered around the exchange of the folder with its new version
        (see :func:`evalframe.report.write_output`).

    Returns
    -------
    list of pathlib.Path
        The files written (the manifest aside): ``<candidate>.json`` and
        ``<candidate>_samples.jsonl`` per candidate, sorted by name.

    Raises
    ------
    ExportError
        When the audit counts several attempts per unit (``every``), has no
        pass verdict (numeric grades without a threshold), or a candidate's
        planned units are not its cases × trials.
    OutputFolderError
        When ``out`` is not evalframe's own or cannot be written.

    Examples
    --------
    >>> import tempfile, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     names = [p.name for p in write(report, folder)]
    ...     back = read([folder])
    >>> names
    ['A.json', 'A_samples.jsonl']
    >>> back.plan.n_units, back.ledger.select("case_id", "passed").rows()
    (2, [('quote', True)])
    """
    meta = report.meta
    if meta.get("retry") == "every":
        raise ExportError(
            "retry policy 'every' counts several attempts per unit; every_eval_ever rows are one per unit"
        )
    units = report.units.lazy().collect()
    if (
        PASSED not in units.columns
        or units.filter(
            (pl.col(SCORE_STATUS) == "scored") & (pl.col(EXEC_STATUS) == "completed") & pl.col(PASSED).is_null()
        ).height
    ):
        raise ExportError("scored units without a pass verdict: every instance row needs is_correct (--pass-threshold)")
    confidence = float(meta.get("confidence", 0.95))
    dataset = Path(str(meta.get("plan_source") or "evalframe")).stem or "evalframe"
    slices = [str(s) for s in meta.get("slices") or []]
    stamp = repr(time.time())
    try:
        library = version("evalframe")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout that was never installed
        library = "unknown"
    texts: dict[str, str] = {}
    taken: set[str] = set()
    for record in report.summary.iter_rows(named=True):
        candidate = str(record[CANDIDATE])
        own = units.filter(pl.col(CANDIDATE) == candidate).sort(CASE_ID, TRIAL)
        ids = own.get_column(CASE_ID).unique(maintain_order=True).to_list()
        trials = int(own.get_column(TRIAL).max() or 1)  # type: ignore[arg-type]
        if own.height != len(ids) * trials:
            raise ExportError(
                f"{own.height} planned units are not its {len(ids)} cases × {trials} trials", candidate=candidate
            )
        stem = _slug(candidate, taken)
        evaluation_id = f"{dataset}/{candidate}/{meta.get('plan_hash', '')[:16]}"
        attempted = own.filter(pl.col(OUTCOME).cast(pl.String) != "missing")
        lines = [
            json.dumps(
                _instance(u, evaluation_id=evaluation_id, candidate=candidate, dataset=dataset, slices=slices),
                ensure_ascii=False,
            )
            for u in attempted.iter_rows(named=True)
        ]
        body = "".join(line + "\n" for line in lines)
        results = [
            r
            for rate, name in (
                ("pass_rate_scored", dataset),
                ("pass_rate_planned", f"{dataset} pass_rate_planned"),
                ("scored_coverage", f"{dataset} scored_coverage"),
            )
            if (r := _result(name, dataset, rate, record, confidence=confidence, ids=ids, trials=trials)) is not None
        ]
        aggregate = {
            "schema_version": SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "retrieved_timestamp": stamp,
            "source_metadata": {
                "source_name": "evalframe audit",
                "source_type": "evaluation_run",
                "source_organization_name": "unknown",
                "evaluator_relationship": "other",
            },
            "eval_library": {"name": "evalframe", "version": library},
            "model_info": {"name": candidate, "id": candidate},
            "evaluation_results": results,
            "detailed_evaluation_results": {
                "format": "jsonl",
                "file_path": f"{stem}_samples.jsonl",
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(body.encode("utf-8")).hexdigest(),
                "total_rows": len(lines),
            },
        }
        texts[f"{stem}.json"] = json.dumps(aggregate, indent=2, ensure_ascii=False) + "\n"
        texts[f"{stem}_samples.jsonl"] = body
    return write_output(out, {}, texts, command=command, outcome="exported", inputs=inputs, guard=guard)
