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
  every log gets a ``plan_from_rows`` note saying so. A log with no event
  naming a sample (e.g. only its spec and ``final_report``) is no evidence
  at all and refuses the import (``empty_plan``): a summary is never audited;
* **grade**: events are grouped by ``sample_id`` (never counted as samples).
  A sample's grade events are its ``match`` events (``data.correct``) and its
  ``metrics`` events carrying ``data.score``; with ``score="<key>"`` both
  read ``data[<key>]`` instead, and a key that no grade event of the log
  carries refuses naming the keys they do carry (``unknown_score``). Each
  value is graded by :func:`~evalframe.importers._kit.grade`: a null, a
  non-finite number or a value that is not a score (text, a list) makes the
  sample ``judge_error``; a sample with events but no grade is
  ``not_scored``; a sample with an ``error`` event and no grade is an
  execution ``error``. Several grades of one sample give their mean as the
  score and ``passed`` only when all of them passed.

``final_report`` numbers are reported in ``info`` and are never evidence.
Where they can be recomputed from the events and differ, a
``header_rows_disagree`` note says so: ``accuracy`` against the mean of the
``match`` grades (over events, as oaieval computes it), ``score`` against
the mean of the ``metrics`` scores (a declared key: against the mean of that
key over the grade events) and ``n_samples`` against the samples seen. A log
with no ``final_report`` gets a ``run_status`` note (the run stopped early or
the log was cut).
"""

from __future__ import annotations

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
    EXEC_STATUS,
    HAS_OUTPUT,
    LINE,
    PASSED,
    REFUSING,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
)
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
    read_json_lines,
)
from evalframe.load import PathLike

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
#: ``final_report`` keys recomputed from the events when nothing is declared: key -> event type graded.
REPORT_KEYS: Final = {"accuracy": "match", METRICS_KEY: "metrics"}
#: ``final_report`` key some evals use for the number of samples they ran.
REPORT_SAMPLES: Final = "n_samples"


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


def _is_log(path: Path) -> bool:
    """A record log found in a folder: ``*.jsonl``, or a ``*.log`` whose first line is the spec."""
    if path.suffix == ".jsonl":
        return True
    if path.suffix != ".log":
        return False
    try:
        with path.open("rb") as handle:
            return handle.read(16).removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b'{"spec"')
    except OSError:
        return False


def _candidate(spec: dict[str, Any]) -> str | None:
    fns = spec.get("completion_fns")
    if isinstance(fns, list) and fns and all(isinstance(f, str) for f in fns):
        return ",".join(fns)
    for key in ("model", "model_name"):
        if isinstance(spec.get(key), str):
            return str(spec[key])
    return None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _report_checks(
    final_report: Any, declared: str | None, grade_events: Sequence[tuple[str, dict[str, Any]]], samples: int
) -> list[str]:
    """Sentences for each ``final_report`` number the events recompute to another value."""
    if not isinstance(final_report, dict):
        return []
    out: list[str] = []
    pairs = {declared: None} if declared is not None else REPORT_KEYS
    for key, etype in pairs.items():
        claimed = final_report.get(key)
        if isinstance(claimed, bool) or not isinstance(claimed, (int, float)):
            continue
        data_key = key if declared is not None else (MATCH_KEY if etype == "match" else METRICS_KEY)
        values = [
            number
            for type_, data in grade_events
            if etype is None or type_ == etype
            for status, number in [grade(data.get(data_key))]
            if data_key in data and status == "scored" and number is not None
        ]
        recomputed = _mean(values)
        where = f"{etype} events" if etype else "grade events"
        if recomputed is None:
            out.append(f"final_report says {key} = {claimed:g}, but no {where} of the log give a {data_key!r} grade")
        elif not math.isclose(recomputed, float(claimed), rel_tol=1e-9, abs_tol=1e-12):
            out.append(
                f"final_report says {key} = {claimed:g}; the {len(values)} {data_key!r} grade(s) of the "
                f"{where} give {recomputed:g}"
            )
    claimed_n = final_report.get(REPORT_SAMPLES)
    if isinstance(claimed_n, int) and not isinstance(claimed_n, bool) and claimed_n != samples:
        out.append(f"final_report says {REPORT_SAMPLES} = {claimed_n}; the log's events name {samples} sample(s)")
    return out


def _read_log(path: Path, score: str | None) -> _LogRead:
    """Read one record log; malformed lines become refusing ``unreadable_file`` notes."""
    source = str(path)
    notes: list[dict[str, Any]] = []

    def unreadable(line: int | None, detail: str) -> None:
        notes.append(note("unreadable_file", source, detail, line=line))

    empty = _LogRead(None, [], notes, {"format": "openai_evals", "source": source})
    try:
        lines, line_notes = read_json_lines(path)
    except Unreadable as exc:
        notes.append(exc.note)
        return empty
    notes.extend(line_notes)
    spec: dict[str, Any] | None = None
    spec_line: int | None = None
    final_report: Any = None
    final_lines: list[int] = []
    samples: dict[str, _Sample] = {}
    type_counts: dict[str, int] = {}
    grade_events: list[tuple[str, dict[str, Any], _Sample, int]] = []
    events = 0
    foreign_runs: set[str] = set()
    no_sample = 0
    for number, obj in lines:
        if not isinstance(obj, dict):
            unreadable(number, f"expected a JSON object, found {type(obj).__name__}")
            continue
        if spec_line is None:
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
            detail = f"sample_id {sid!r} is not a string; read as {str(sid)!r}"
            notes.append(note("id_normalised", source, detail, line=number, case_id=str(sid)))
            sid = str(sid)
        sample = samples.setdefault(sid, _Sample(first_line=number))
        sample.types[etype] = sample.types.get(etype, 0) + 1
        payload = obj["data"]
        if etype in GRADE_EVENTS and isinstance(payload, dict):
            grade_events.append((etype, payload, sample, number))
    if spec is None:
        if not any(n[REFUSING] for n in notes):
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
        notes.append(note(kind, source, detail, line=line, candidate=candidate, case_id=case))

    keys = [k for _, payload, _, _ in grade_events for k in payload]
    try:
        chosen = choose_score(score, keys, default=(MATCH_KEY, METRICS_KEY), what="grade key", source=source)
    except ScoreChoiceError as exc:
        notes.append({**exc.note, CANDIDATE: candidate})
        return _LogRead(candidate, [], notes, {**empty.info, "run_id": run_id, "candidate": candidate})
    for etype, payload, sample, number in grade_events:
        key: str | None
        if chosen in (MATCH_KEY, METRICS_KEY) and score is None:
            key = MATCH_KEY if etype == "match" else METRICS_KEY
        else:
            key = chosen
        if key is not None and key in payload:
            sample.grades.append((number, payload[key]))

    rows: list[dict[str, Any]] = []
    for sid, sample in samples.items():
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
        if sample.grades:
            row[LINE] = sample.grades[0][0]
            graded = [(line, raw, *grade(raw)) for line, raw in sample.grades]
            for line, raw, status, _ in graded:
                if status != "scored" and isinstance(raw, float):
                    flag("nonfinite_score", "a non-finite grade was read as a grader failure", line=line, case=sid)
            values = [value for _, _, status, value in graded if status == "scored" and value is not None]
            if len(values) < len(graded):
                row[SCORE_STATUS] = "judge_error"
            else:
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
    else:
        for detail in _report_checks(final_report, score, [(t, d) for t, d, _, _ in grade_events], len(samples)):
            flag("header_rows_disagree", detail, line=final_lines[-1])
    if samples:
        flag(
            "plan_from_rows",
            f"the log declares no dataset size: the plan is the {len(samples)} sample id(s) seen in its events, "
            "so a sample that never produced an event cannot be counted as missing",
            line=spec_line,
        )
    elif not any(n[REFUSING] for n in notes):
        flag(
            "empty_plan",
            f"no event names a sample ({events} event line(s)): the log holds no per-sample evidence"
            + (", only its final_report, which is never evidence" if final_report is not None else ""),
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
        "grade_key": score if score is not None or chosen in (MATCH_KEY, METRICS_KEY) else chosen,
        "events": events,
        "events_by_type": dict(sorted(type_counts.items())),
        "events_without_sample_id": no_sample,
        "samples": len(samples),
        "has_final_report": final_report is not None,
        "final_report": final_report,
        "final_report_lines": final_lines,
    }
    return _LogRead(candidate, rows if candidate is not None else [], notes, info)


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
        trial). ``ledger``: one row per (log, sample id), columns
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
    ImportRefused
        When any note refuses: a malformed log or line (``unreadable_file``,
        with the line), a folder with no log (``no_export``), a log with no
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
    for log in logs:
        raw_notes.extend(log.notes)
    source = ";".join(str(p) for p in paths)
    ledger = pl.DataFrame([row for log in logs for row in log.ledger_rows], schema=LEDGER_SCHEMA)
    scored = ledger.filter(pl.col(SCORE_STATUS) == "scored")
    if scored.get_column(PASSED).null_count():
        ledger = ledger.drop(PASSED)
    ledger = ledger.sort([CANDIDATE, CASE_ID, TRIAL, ATTEMPT, SOURCE, LINE])
    units = ledger.select(CANDIDATE, CASE_ID, TRIAL).unique(maintain_order=True)
    plan, plan_problems = build_plan(units, source=source)
    if units.height == 0 and any(n[REFUSING] for n in raw_notes):  # nothing was read: the notes say why
        plan_problems = plan_problems.clear()
    return finish(plan, ledger, [raw_notes, plan_problems], [log.info for log in logs])
