"""Import OpenAI Evals record logs (``oaieval --record_path``) into a plan and status ledger.

A record log is JSON Lines: ``{"spec": {...}}`` first (``completion_fns``,
``eval_name``, ``base_eval``, ``split``, ``run_id``, ``run_config``,
``created_at``), then one event per line (``run_id``, ``event_id``,
``sample_id``, ``type``, ``data``, ``created_by``, ``created_at``), and a
``{"final_report": {...}}`` line when the run finished (it may sit before
the last events, which are flushed at exit). The schema is the ``Event``
dataclass and the recorder methods in ``evals/record.py`` of openai/evals:
``record_match`` writes ``match`` events (``data.correct`` is a bool),
``record_metrics`` writes ``metrics`` events (model-graded evals record
``{"choice": ..., "score": ...}``), ``record_sampling`` writes ``sampling``
events and ``record_error`` writes ``error`` events.

How the log maps onto evalframe:

* **candidate**: the spec's ``completion_fns`` joined with ``,`` (else its
  ``model`` / ``model_name``);
* **case_id**: the event's ``sample_id`` (e.g.
  ``semantic_role_recognition.test.231``); **trial** and **attempt** are 1;
* **run_id**: the spec's ``run_id``;
* **plan**: the sample ids seen in the events. The log declares no dataset
  size, so a sample that never produced an event cannot be seen as missing:
  every file gets a ``run_status`` note saying so;
* **grade**: events are grouped by ``sample_id`` (never counted as samples).
  A sample's grade events are its ``match`` events (``data.correct``) and its
  ``metrics`` events carrying ``data.score``; with ``score="<key>"`` both
  read ``data[<key>]`` instead. A grade that is null or non-finite makes the
  sample ``judge_error``; a sample with events but no grade is
  ``not_scored``; a sample with an ``error`` event and no grade is an
  execution ``error``. Several grades of one sample give their mean as the
  score and ``passed`` only when all of them passed.

``final_report`` numbers are reported in ``info`` and are never evidence;
a log with no ``final_report`` gets a ``run_status`` note (the run stopped
early or the log was cut).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    DETAIL,
    EXEC_STATUS,
    HAS_OUTPUT,
    KIND,
    LINE,
    PASSED,
    REFUSING,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
)
from evalframe.errors import InputFormatError, PlanError
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.load import PathLike
from evalframe.plan import Plan
from evalframe.problems import concat_problems, problems_frame

#: Key of a ``match`` event's grade (read when ``score`` is None).
MATCH_KEY: Final = "correct"
#: Key of a ``metrics`` event's grade (read when ``score`` is None).
METRICS_KEY: Final = "score"
#: Event types that carry a grade.
GRADE_EVENTS: Final = ("match", "metrics")
#: Event types that show the model produced something for the sample.
OUTPUT_EVENTS: Final = ("sampling", "match", "metrics", "cond_logp", "pick_option", "embedding")
#: Keys every event line must have.
EVENT_KEYS: Final = ("sample_id", "type", "data")


@dataclass
class _Sample:
    """The events of one sample id in one log."""

    first_line: int
    types: dict[str, int] = field(default_factory=dict)
    grades: list[tuple[int, Any]] = field(default_factory=list)  # (line, raw grade value)


@dataclass
class _LogRead:
    candidate: str | None
    ledger_rows: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    info: dict[str, Any]


def _files(paths: Sequence[PathLike]) -> tuple[list[Path], list[dict[str, Any]]]:
    """Expand the given paths into log files (a folder is searched for ``*.jsonl``)."""
    files: list[Path] = []
    notes: list[dict[str, Any]] = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputFormatError(str(given), "no such file or directory")
        if path.is_file():
            files.append(path)
            continue
        found = sorted(path.rglob("*.jsonl"))
        if not found:
            notes.append({KIND: "unreadable_file", SOURCE: str(path), DETAIL: "no .jsonl record log under this folder"})
        files.extend(found)
    return sorted(set(files), key=str), notes


def _candidate(spec: dict[str, Any]) -> str | None:
    fns = spec.get("completion_fns")
    if isinstance(fns, list) and fns and all(isinstance(f, str) for f in fns):
        return ",".join(fns)
    for key in ("model", "model_name"):
        if isinstance(spec.get(key), str):
            return str(spec[key])
    return None


def _grade_value(raw: Any) -> tuple[str, float | None]:
    """Classify one raw grade: ``ok`` (with its value), ``null``, ``nonfinite`` or ``not_a_score``."""
    if raw is None:
        return "null", None
    if isinstance(raw, bool):
        return "ok", 1.0 if raw else 0.0
    if isinstance(raw, (int, float)):
        value = float(raw)
        return ("ok", value) if math.isfinite(value) else ("nonfinite", None)
    return "not_a_score", None


def _read_log(path: Path, score: str | None) -> _LogRead:
    """Read one record log; malformed lines become refusing ``unreadable_file`` notes."""
    source = str(path)
    notes: list[dict[str, Any]] = []

    def unreadable(line: int | None, detail: str) -> None:
        notes.append({KIND: "unreadable_file", SOURCE: source, LINE: line, DETAIL: detail, REFUSING: True})

    empty = _LogRead(None, [], notes, {"format": "openai_evals", "source": source})
    try:
        data = path.read_bytes()
    except OSError as exc:
        unreadable(None, f"cannot read file: {exc.strerror or exc}")
        return empty
    spec: dict[str, Any] | None = None
    spec_line: int | None = None
    final_report: Any = None
    final_lines: list[int] = []
    samples: dict[str, _Sample] = {}
    type_counts: dict[str, int] = {}
    events = 0
    foreign_runs: set[str] = set()
    no_sample = 0
    for number, raw_line in enumerate(data.split(b"\n"), start=1):
        try:
            text_line = raw_line.decode("utf-8")
            if number == 1:
                text_line = text_line.removeprefix("\ufeff")  # a byte-order mark only at the very start
        except UnicodeDecodeError as exc:
            unreadable(number, f"bytes that are not UTF-8 at byte {exc.start} of the line")
            continue
        if not text_line.strip():
            continue
        try:
            obj = json.loads(text_line)
        except json.JSONDecodeError as exc:
            unreadable(number, f"invalid JSON ({exc.msg}; column {exc.colno})")
            continue
        if not isinstance(obj, dict):
            unreadable(number, f"expected a JSON object, found {type(obj).__name__}")
            continue
        if spec is None and spec_line is None:
            spec_line = number
            if not isinstance(obj.get("spec"), dict):
                unreadable(number, 'the first line is not the {"spec": {...}} header')
                return empty
            spec = obj["spec"]
            continue
        if "spec" in obj:
            unreadable(number, "a second spec line: one record log holds one run")
            continue
        if "final_report" in obj:
            final_report = obj["final_report"]
            final_lines.append(number)
            continue
        absent = [k for k in EVENT_KEYS if k not in obj]
        if absent or not isinstance(obj.get("type"), str):
            unreadable(number, f"an event without {', '.join(absent) or 'a string type'}")
            continue
        events += 1
        etype: str = obj["type"]
        type_counts[etype] = type_counts.get(etype, 0) + 1
        run = obj.get("run_id")
        if run is not None and spec is not None and run != spec.get("run_id"):
            foreign_runs.add(str(run))
        sid = obj["sample_id"]
        if sid is None:
            no_sample += 1
            continue
        if not isinstance(sid, str):
            notes.append(
                {
                    KIND: "id_normalised",
                    SOURCE: source,
                    LINE: number,
                    CASE_ID: str(sid),
                    DETAIL: f"sample_id {sid!r} is not a string; read as {str(sid)!r}",
                    REFUSING: False,
                }
            )
            sid = str(sid)
        sample = samples.setdefault(sid, _Sample(first_line=number))
        sample.types[etype] = sample.types.get(etype, 0) + 1
        payload = obj["data"]
        if etype in GRADE_EVENTS and isinstance(payload, dict):
            key = score if score is not None else (MATCH_KEY if etype == "match" else METRICS_KEY)
            if key in payload:
                sample.grades.append((number, payload[key]))
    if spec is None:
        unreadable(1, 'empty file: no {"spec": {...}} header line')
        return empty

    candidate = _candidate(spec)
    run_id = spec.get("run_id")
    if candidate is None:
        unreadable(spec_line, "the spec names no completion_fns (nor model): the candidate is unknown")
    if not isinstance(run_id, str):
        unreadable(spec_line, "the spec has no string run_id")
        run_id = None

    def flag(kind: str, detail: str, *, line: int | None = None, case: str | None = None) -> None:
        notes.append(
            {
                KIND: kind,
                SOURCE: source,
                LINE: line,
                CANDIDATE: candidate,
                CASE_ID: case,
                DETAIL: detail,
                REFUSING: False,
            }
        )

    rows: list[dict[str, Any]] = []
    for sid, sample in samples.items():
        statuses = [(line, *_grade_value(raw)) for line, raw in sample.grades]
        for line, status, _ in statuses:
            if status == "not_a_score":
                flag("not_a_score", "a grade that is not a number or a bool was ignored", line=line, case=sid)
            elif status == "nonfinite":
                flag("nonfinite_score", "a non-finite grade was read as a grader failure", line=line, case=sid)
        kept = [(line, status, value) for line, status, value in statuses if status != "not_a_score"]
        row: dict[str, Any] = {
            CANDIDATE: candidate,
            CASE_ID: sid,
            TRIAL: 1,
            ATTEMPT: 1,
            RUN_ID: run_id,
            EXEC_STATUS: "completed",
            SCORE_STATUS: "not_scored",
            SCORE: None,
            PASSED: None,
            HAS_OUTPUT: any(t in OUTPUT_EVENTS for t in sample.types),
            LINE: sample.first_line,
            SOURCE: source,
        }
        if kept:
            row[LINE] = kept[0][0]
            if any(status != "ok" for _, status, _ in kept):
                row[SCORE_STATUS] = "judge_error"
            else:
                values = [value for _, _, value in kept if value is not None]
                row[SCORE_STATUS], row[SCORE] = "scored", sum(values) / len(values)
                if all(v in (0.0, 1.0) for v in values):
                    row[PASSED] = all(v == 1.0 for v in values)
                if len(values) > 1:
                    flag(
                        "not_a_score",
                        f"{len(values)} grade events for one sample: the score is their mean and "
                        "passed means all of them passed",
                        line=row[LINE],
                        case=sid,
                    )
        elif "error" in sample.types:
            row[EXEC_STATUS], row[HAS_OUTPUT] = "error", False
        rows.append(row)

    if final_report is None:
        flag(
            "run_status",
            'no {"final_report": ...} line: the run did not finish (it stopped early or the log was cut)',
        )
    flag(
        "run_status",
        f"the log declares no dataset size: the plan is the {len(samples)} sample id(s) seen in its events, "
        "so a sample that never produced an event cannot be counted as missing",
        line=spec_line,
    )
    if foreign_runs:
        flag("run_status", f"events carry run_id(s) {sorted(foreign_runs)} that differ from the spec's {run_id!r}")
    run_config = spec.get("run_config") if isinstance(spec.get("run_config"), dict) else {}
    info = {
        "format": "openai_evals",
        "source": source,
        "run_id": run_id,
        "candidate": candidate,
        "completion_fns": spec.get("completion_fns"),
        "eval_name": spec.get("eval_name"),
        "base_eval": spec.get("base_eval"),
        "split": spec.get("split"),
        "created_at": spec.get("created_at"),
        "max_samples": run_config.get("max_samples") if run_config else None,
        "events": events,
        "events_by_type": dict(sorted(type_counts.items())),
        "events_without_sample_id": no_sample,
        "samples": len(samples),
        "has_final_report": final_report is not None,
        "final_report": final_report,
        "final_report_lines": final_lines,
    }
    return _LogRead(candidate, rows if candidate is not None else [], notes, info)


def _plan(rows: pl.DataFrame, source: str) -> tuple[Plan, pl.DataFrame]:
    """The plan of the sample ids seen per candidate (or an empty plan and the plan's problems)."""
    empty = Plan(cases=pl.DataFrame(schema={CASE_ID: pl.String}), candidates=(), source=source)
    if rows.height == 0:
        return empty, problems_frame()
    units = rows.select(CANDIDATE, CASE_ID, TRIAL).unique().sort([CANDIDATE, CASE_ID, TRIAL])
    candidates = units.get_column(CANDIDATE).unique(maintain_order=True).to_list()
    try:
        plan = Plan.from_frame(units.select(CASE_ID).unique().sort(CASE_ID), candidates=candidates, source=source)
    except PlanError as exc:
        return empty, exc.problems
    # Units are unique and within candidates × cases: equal sizes mean the full cross product.
    explicit = None if units.height == len(candidates) * plan.cases.height else units
    return (plan if explicit is None else plan.with_units(explicit)), problems_frame()


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read OpenAI Evals record logs into a plan, a status ledger, notes and run facts.

    Parameters
    ----------
    paths
        Record logs (JSON Lines written by ``oaieval --record_path``), or
        folders searched for ``*.jsonl`` logs. Each log is one run of one
        candidate.
    score
        Key of the grade in the data of ``match`` and ``metrics`` events
        (e.g. ``accuracy``); None reads ``correct`` from ``match`` events and
        ``score`` from ``metrics`` events.

    Returns
    -------
    Imported
        ``plan``: per candidate, the sample ids seen in its events (one
        trial). ``ledger``: one row per (log, sample id), columns
        ``candidate``, ``case_id``, ``run_id`` (String), ``trial``,
        ``attempt`` (Int64, always 1), ``exec_status`` (``completed``, or
        ``error`` for a sample with an ``error`` event and no grade),
        ``score_status`` (``scored``; ``judge_error`` when a grade is null or
        non-finite; ``not_scored`` when the sample has no grade event),
        ``score`` (Float64), ``passed`` (Boolean, only when every grade is 0
        or 1), ``has_output`` (Boolean: the sample has a sampling or grade
        event), ``line`` (Int64: the 1-based line of the sample's first grade
        event, else of its first event) and ``source`` (String: the file).
        ``notes``: problems table (``unreadable_file`` refusing, with the
        line; flags ``run_status``, ``not_a_score``, ``nonfinite_score``,
        ``id_normalised``). ``info``: one dict per file (run id, eval name,
        split, completion fns, event counts by type, samples, the
        ``final_report`` — never evidence).

    Raises
    ------
    InputFormatError
        When a path does not exist. A malformed log is never raised: it
        becomes a refusing ``unreadable_file`` note and the other logs (and
        the other lines of that log) are still read.

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
    [('run_status', None, False), ('run_status', 1, False)]
    """
    files, raw_notes = _files(paths)
    logs = [_read_log(path, score) for path in files]
    for log in logs:
        raw_notes.extend(log.notes)
    source = ";".join(str(p) for p in paths)
    ledger = pl.DataFrame([row for log in logs for row in log.ledger_rows], schema=LEDGER_SCHEMA)
    scored = ledger.filter(pl.col(SCORE_STATUS) == "scored")
    if scored.get_column(PASSED).null_count():
        ledger = ledger.drop(PASSED)
    ledger = ledger.sort([CANDIDATE, CASE_ID, TRIAL, ATTEMPT, SOURCE, LINE])
    plan, plan_problems = _plan(ledger, source)
    notes = concat_problems([problems_frame(raw_notes), plan_problems])
    return Imported(plan=plan, ledger=ledger, notes=notes, info=[log.info for log in logs])
