"""Grading OpenAI Evals samples: the grade key chosen, each sample's grades, and the final report checked."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from evalframe.columns import EXEC_STATUS, HAS_OUTPUT, LINE, PASSED, SCORE, SCORE_STATUS
from evalframe.importers._kit import choose_score, grade, ledger_row, mean
from evalframe.importers._reported import headline
from evalframe.importers.openai_evals.events import (
    MATCH_KEY,
    METRICS_KEY,
    OUTPUT_EVENTS,
    REPORT_KEYS,
    REPORT_SAMPLES,
    _Events,
    _Sample,
)

#: How a log's findings are noted: (kind, detail, line, case id).
Flag = Callable[..., None]


def _choose_key(found: _Events, score: str | None) -> str | None:
    """The grade key (``correct``/``score`` by event type unless declared); raises ``ScoreChoiceError``."""
    keys = [k for _, payload, _, _ in found.grade_events for k in payload]
    return choose_score(score, keys, default=(MATCH_KEY, METRICS_KEY), what="grade key", source=found.source)


def _attach_grades(found: _Events, chosen: str | None, score: str | None) -> None:
    """Give each sample the values of the chosen key in its grade events."""
    for etype, payload, sample, number in found.grade_events:
        key: str | None
        if chosen in (MATCH_KEY, METRICS_KEY) and score is None:
            key = MATCH_KEY if etype == "match" else METRICS_KEY
        else:
            key = chosen
        if key is not None and key in payload:
            sample.grades.append((number, payload[key]))


def _sample_row(
    sid: str, sample: _Sample, *, candidate: str | None, run_id: str | None, source: str, flag: Flag
) -> dict[str, Any]:
    """The ledger row of one sample: the mean of its grades, ``error`` when it only has an error event."""
    row = ledger_row(
        candidate,  # type: ignore[arg-type]  # a log without a candidate keeps no row (see _read_log)
        sid,
        score_status="not_scored",
        run_id=run_id,
        has_output=any(t in OUTPUT_EVENTS for t in sample.types),
        line=sample.first_line,
        source=source,
    )
    if not sample.grades:
        return {**row, EXEC_STATUS: "error", HAS_OUTPUT: False} if "error" in sample.types else row
    line = sample.grades[0][0]
    graded = [(at, raw, *grade(raw)) for at, raw in sample.grades]
    for at, raw, status, _ in graded:
        if status != "scored" and isinstance(raw, float):
            flag("nonfinite_score", "a non-finite grade was read as a grader failure", line=at, case=sid)
    values = [value for _, _, status, value in graded if status == "scored" and value is not None]
    if len(values) < len(graded):
        return {**row, SCORE_STATUS: "judge_error", LINE: line}
    passed = all(v == 1.0 for v in values) if all(v in (0.0, 1.0) for v in values) else None
    if len(values) > 1:
        detail = (
            f"{len(values)} grade events for one sample: the score is their mean and passed means all of them passed"
        )
        flag("not_a_score", detail, line=line, case=sid)
    return {**row, SCORE_STATUS: "scored", SCORE: sum(values) / len(values), PASSED: passed, LINE: line}


def _report_checks(
    final_report: Any, declared: str | None, grade_events: Sequence[tuple[str, dict[str, Any]]], samples: int
) -> list[str]:
    """Sentences for each ``final_report`` number the events recompute to another value."""
    if not isinstance(final_report, dict):
        return []
    out: list[str] = []
    for key, etype in _report_pairs(declared).items():
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
        recomputed = mean(values)
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


def _report_pairs(declared: str | None) -> dict[str, str | None]:
    """The ``final_report`` keys that summarise the grade read, with the event type each averages (None: any)."""
    return {declared: None} if declared is not None else dict(REPORT_KEYS)


def _reported(final_report: Any, declared: str | None) -> list[dict[str, Any]]:
    """The ``final_report`` values of the grade read, over its ``n_samples`` when it states one."""
    if not isinstance(final_report, dict):
        return []
    n = final_report.get(REPORT_SAMPLES)
    found = (headline("OpenAI Evals", key, final_report.get(key), denominator=n, of="samples")
             for key in _report_pairs(declared))  # fmt: skip
    return [h for h in found if h is not None]
