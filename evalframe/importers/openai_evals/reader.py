"""The OpenAI Evals import: each record log read into rows, notes and facts; one plan from the samples seen."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, REFUSING, REPORTED_HEADLINES, SOURCE, TASK, TRIAL
from evalframe.importers import Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    find_files,
    finish,
    json_object,
    ledger_frame,
    note,
    passed_if_complete,
    plan_from_units,
)
from evalframe.importers._settings import RunSettings, flatten, split_by_settings
from evalframe.importers.openai_evals.events import MATCH_KEY, METRICS_KEY, _candidate, _Events, _is_log, _scan
from evalframe.importers.openai_evals.grading import (
    Flag,
    _attach_grades,
    _choose_key,
    _report_checks,
    _reported,
    _sample_row,
)
from evalframe.load import PathLike


@dataclass
class _LogRead:
    """One log's ledger rows, notes and facts."""

    candidate: str | None
    ledger_rows: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    info: dict[str, Any]
    #: What the spec records about the run (flat keys; see :func:`_settings`).
    settings: dict[str, Any] | None = None
    #: The eval the log ran (its task, see :func:`_task_of`).
    task: str = ""


def _task_of(spec: dict[str, Any]) -> str:
    """The log's task: the spec's ``eval_name`` (``toy.dev.v0``), else its ``base_eval``, else ``unknown``.

    Examples
    --------
    >>> _task_of({"eval_name": "toy.dev.v0", "base_eval": "toy"}), _task_of({"base_eval": "toy"}), _task_of({})
    ('toy.dev.v0', 'toy', 'unknown')
    """
    for key in ("eval_name", "base_eval"):
        if isinstance(spec.get(key), str) and spec[key]:
            return str(spec[key])
    return "unknown"


def _settings(spec: dict[str, Any]) -> dict[str, Any]:
    """The run's recorded settings: eval name and split, and ``run_config`` but its command line and UI state.

    The command line differs with every path; its ``--completion_args`` (the completion function's
    arguments) is kept as ``completion_args``.
    """
    run_config = json_object(spec.get("run_config"))
    kept = {k: v for k, v in run_config.items() if k not in ("command", "initial_settings", "completion_fns")}
    words = str(run_config.get("command") or "").split()
    for i, word in enumerate(words):
        if word.startswith("--completion_args"):
            kept["completion_args"] = word.partition("=")[2] or (words[i + 1] if i + 1 < len(words) else "")
    return flatten({"eval_name": spec.get("eval_name"), "split": spec.get("split"), **kept})


def _read_log(path: Path, score: str | None) -> _LogRead:
    """Read one record log; malformed lines become refusing ``unreadable_file`` notes."""
    found, is_log = _scan(path)
    notes, source = found.notes, found.source
    empty = _LogRead(None, [], notes, {"format": "openai_evals", "source": source})
    if not is_log:
        return empty
    spec = found.spec
    if spec is None:
        if not any(n[REFUSING] for n in notes):
            found.unreadable(1, 'empty file: no {"spec": {...}} header line')
        return empty
    candidate = _candidate(spec)
    run_id = spec.get("run_id")
    if candidate is None:
        found.unreadable(found.spec_line, "the spec names no completion_fns (nor model): the candidate is unknown")
    if not isinstance(run_id, str):
        found.unreadable(found.spec_line, "the spec has no string run_id")
        run_id = None

    for n in notes:  # a sample id read as text (id_normalised) is about this log's candidate
        if n["kind"] == "id_normalised":
            n[CANDIDATE] = candidate

    def flag(kind: str, detail: str, *, line: int | None = None, case: str | None = None) -> None:
        notes.append(note(kind, source, detail, line=line, candidate=candidate, case_id=case))

    try:
        chosen = _choose_key(found, score)
    except ScoreChoiceError as exc:
        notes.append({**exc.note, CANDIDATE: candidate})
        return _LogRead(candidate, [], notes, {**empty.info, "run_id": run_id, "candidate": candidate})
    _attach_grades(found, chosen, score)
    rows = [
        _sample_row(sid, sample, candidate=candidate, run_id=run_id, source=source, flag=flag)
        for sid, sample in found.samples.items()
    ]
    _run_notes(found, score, run_id, flag)
    grade_key = score if score is not None or chosen in (MATCH_KEY, METRICS_KEY) else chosen
    info = _log_info(found, spec, candidate=candidate, run_id=run_id, grade_key=grade_key)
    info[REPORTED_HEADLINES] = [{**h, TASK: _task_of(spec)} for h in _reported(found.final_report, score)]
    return _LogRead(candidate, rows if candidate is not None else [], notes, info, _settings(spec), _task_of(spec))


def _run_notes(found: _Events, score: str | None, run_id: str | None, flag: Flag) -> None:
    """Notes of the run as a whole: no final report or one the events contradict, the plan's basis, other runs."""
    if found.final_report is None:
        flag(
            "run_status",
            'no {"final_report": ...} line: the run did not finish (it stopped early or the log was cut)',
        )
    else:
        grade_events = [(t, d) for t, d, _, _ in found.grade_events]
        for detail in _report_checks(found.final_report, score, grade_events, len(found.samples)):
            flag("header_rows_disagree", detail, line=found.final_lines[-1])
    if found.samples:
        flag(
            "plan_from_rows",
            f"the log declares no dataset size: the plan is the {len(found.samples)} sample id(s) seen in its "
            "events, so a sample that never produced an event cannot be counted as missing",
            line=found.spec_line,
        )
    elif not any(n[REFUSING] for n in found.notes):
        flag(
            "empty_plan",
            f"no event names a sample ({found.events} event line(s)): the log holds no per-sample evidence"
            + (", only its final_report, which is never evidence" if found.final_report is not None else ""),
            line=found.spec_line,
        )
    if found.foreign_runs:
        detail = f"events carry run_id(s) {sorted(found.foreign_runs)} that differ from the spec's {run_id!r}"
        flag("run_status", detail)


def _log_info(
    found: _Events, spec: dict[str, Any], *, candidate: str | None, run_id: str | None, grade_key: str | None
) -> dict[str, Any]:
    """The ``info`` dict of one log (the ``final_report`` included: never evidence)."""
    run_config = json_object(spec.get("run_config"))
    return {
        "format": "openai_evals",
        "source": found.source,
        "run_id": run_id,
        "candidate": candidate,
        "completion_fns": spec.get("completion_fns"),
        "eval_name": spec.get("eval_name"),
        "base_eval": spec.get("base_eval"),
        "split": spec.get("split"),
        "created_at": spec.get("created_at"),
        "max_samples": run_config.get("max_samples") if run_config else None,
        "grade_key": grade_key,
        "events": found.events,
        "events_by_type": dict(sorted(found.type_counts.items())),
        "events_without_sample_id": found.no_sample,
        "samples": len(found.samples),
        "has_final_report": found.final_report is not None,
        "final_report": found.final_report,
        "final_report_lines": found.final_lines,
    }


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read OpenAI Evals record logs into a plan, a status ledger, notes and run facts.

    Parameters
    ----------
    paths
        Record logs (JSON Lines written by ``oaieval --record_path``), or
        folders searched for logs (``*.jsonl``, and ``*.log`` files whose
        first line is the spec). Each log is one run of one candidate.
    score
        Key of the grade in the data of ``match`` and ``metrics`` events
        (e.g. ``accuracy``); None reads ``correct`` from ``match`` events and
        ``score`` from ``metrics`` events.

    Returns
    -------
    Imported
        ``plan``: per candidate, the sample ids seen in its events (one
        trial), with a ``task`` case column (String: the log's eval name)
        when the logs ran several evals. ``ledger``: one row per (log, sample id), columns
        ``candidate``, ``case_id``, ``run_id`` (String), ``trial``,
        ``attempt`` (Int64, always 1), ``exec_status`` (``completed``, or
        ``error`` for a sample with an ``error`` event and no grade),
        ``score_status`` (``scored``; ``judge_error`` when a grade is null,
        non-finite or not a score; ``not_scored`` when the sample has no
        grade event), ``score`` (Float64), ``passed`` (Boolean, only when
        every grade is 0 or 1), ``has_output`` (Boolean: the sample has a
        sampling or grade event), ``line`` (Int64: the 1-based line of the
        sample's first grade event, else of its first event) and ``source``
        (String: the file). ``notes``: problems table of flags
        (``plan_from_rows``, ``run_status``, ``header_rows_disagree``,
        ``nonfinite_score``, ``not_a_score``, ``id_normalised``). ``info``:
        one dict per file (run id, eval name, split, completion fns, event
        counts by type, samples, the ``final_report`` — never evidence).

    Raises
    ------
    InputFormatError
        When a path does not exist.
    ImportUnreadable
        A malformed log or line (an ``unreadable_file`` note: the file, the
        line and the reason; the CLI exits 2).
    ImportRefused
        When another note refuses: a folder with no log (``no_export``), a log with no
        per-sample event (``empty_plan``), a declared grade key no grade
        event carries (``unknown_score``). ``problems`` holds every note.

    Examples
    --------
    >>> imported = read(["../shared/data/real/openai_evals/openai-evals-PR1471/tests/unit/evals/"
    ...                  "biomed2402/SRL/log/gpt-4-cot_semantic_role_recognition.jsonl"])
    >>> imported.ledger.group_by("candidate", "exec_status", "score_status").len().sort("score_status")
    shape: (2, 4)
    ┌──────────────────┬─────────────┬──────────────┬─────┐
    │ candidate        ┆ exec_status ┆ score_status ┆ len │
    │ ---              ┆ ---         ┆ ---          ┆ --- │
    │ str              ┆ str         ┆ str          ┆ u32 │
    ╞══════════════════╪═════════════╪══════════════╪═════╡
    │ zhishu/gpt-4-cot ┆ completed   ┆ judge_error  ┆ 1   │
    │ zhishu/gpt-4-cot ┆ completed   ┆ not_scored   ┆ 8   │
    └──────────────────┴─────────────┴──────────────┴─────┘
    >>> imported.notes.select("kind", "line", "refusing").rows()
    [('plan_from_rows', 1, False), ('run_status', None, False)]
    """
    files, raw_notes = find_files(paths, is_export=_is_log, what="OpenAI Evals record log (.jsonl)")
    logs = [_read_log(path, score) for path in files]
    # Logs of one completion function whose specs record other settings are different candidates (SPEC §6c);
    # logs of different evals (tasks) are never compared (one eval: the notes name none).
    several = len({log.task for log in logs if log.ledger_rows}) > 1
    renamed, setting_notes = split_by_settings(
        [
            RunSettings(str(log.info["source"]), log.candidate, log.settings, group=log.task if several else "")
            for log in logs
            if log.candidate and log.settings is not None
        ]
    )
    raw_notes.extend(setting_notes)
    for log in logs:
        key = (str(log.info["source"]), log.candidate or "")
        if key in renamed:
            log.candidate = renamed[key]
            log.info["candidate"] = log.candidate
            log.ledger_rows = [{**row, CANDIDATE: log.candidate} for row in log.ledger_rows]
            log.notes = [{**n, CANDIDATE: log.candidate} if n.get(CANDIDATE) is not None else n for n in log.notes]
        raw_notes.extend(log.notes)
    ledger = passed_if_complete(ledger_frame(row for log in logs for row in log.ledger_rows))
    units = ledger.select(CANDIDATE, CASE_ID, TRIAL).unique(maintain_order=True)
    if several:  # each eval is a task (tasks are keys: never pooled); one eval has no task column
        by_source = pl.DataFrame(
            [(str(log.info["source"]), log.task) for log in logs],
            schema={SOURCE: pl.String, TASK: pl.String},
            orient="row",
        )
        units = (
            ledger.join(by_source, on=SOURCE, how="left")
            .select(CANDIDATE, CASE_ID, TRIAL, TASK)
            .unique(maintain_order=True)
        )
    plan, plan_problems = plan_from_units(units, source=";".join(str(p) for p in paths), notes=raw_notes)
    return finish(plan, ledger, [raw_notes, plan_problems], [log.info for log in logs], files=files)
