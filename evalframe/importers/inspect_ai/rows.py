"""Ledger rows of Inspect samples: attempts from error retries, grades, limits, duplicate imports."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from evalframe.columns import ATTEMPT, SOURCE
from evalframe.importers._kit import LETTER_GRADES, grade, json_object, ledger_row
from evalframe.importers.inspect_ai.header import ScoreRef, _sample_scores, _started
from evalframe.importers.inspect_ai.log import _Log, _log_note, _obj, _retries, _Sample


def _said(message: Any) -> bool:
    """Whether a chat message is the model's and holds something: text or content parts, or tool calls."""
    message = json_object(message)
    return message.get("role") == "assistant" and bool(message.get("content") or message.get("tool_calls"))


def _has_output(sample: Mapping[str, Any]) -> bool:
    """Whether the model answered in this sample.

    Its ``output`` (a choice, or a non-empty completion), else an assistant message with content or tool calls
    among its ``messages``, else one among the choices of the model calls in its ``events``: a solver that
    generates step by step (scicode) can leave ``output.choices`` and ``messages`` without the model's answers
    while its model calls hold them, and its scorer graded them. An empty answer is no output.
    """
    output = json_object(sample.get("output"))
    completion = output.get("completion")
    if output.get("choices") or (isinstance(completion, str) and completion != ""):
        return True
    messages = sample.get("messages")
    if isinstance(messages, list) and any(_said(m) for m in messages):
        return True
    events = sample.get("events")
    return isinstance(events, list) and any(
        _said(json_object(choice).get("message"))
        for event in map(json_object, events)
        if event.get("event") == "model"
        for choice in _list(json_object(event.get("output")).get("choices"))
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


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


def _sample_rows(
    log: _Log, sample: _Sample, case_id: str, score: ScoreRef | None, first_attempt: int
) -> Iterator[dict[str, Any]]:
    """Rows for one sample: its earlier failed attempts, then the sample itself.

    A row whose value is not a score carries ``_value`` (the value) for the log's note. A score that is a
    key of a dict value is read inside it (a dict without the key, or a value that is not a dict, gives no
    grade: ``judge_error``).
    """

    def row(attempt: int, **fields: Any) -> dict[str, Any]:
        return ledger_row(
            log.candidate,
            case_id,
            trial=sample.epoch,
            attempt=attempt,
            run_id=log.run_id,
            line=sample.line,
            source=sample.source,
            **fields,
        )

    n_retries = len(_retries(sample.data))
    for k in range(n_retries):
        yield row(first_attempt + k, exec_status="error", score_status="not_scored", has_output=False)
    attempt = first_attempt + n_retries
    ran = {"limit": _limit_text(sample.data), "has_output": _has_output(sample.data)}
    if sample.data.get("error"):
        yield row(attempt, exec_status="error", score_status="not_scored", **ran)
        return
    scores = _sample_scores(sample.data, score.scorer if score is not None else None)
    if score is None or score.scorer not in scores:
        # Graded by another scorer, the sample had an output that scorer judged (as a graded one has).
        judged = any(json_object(entry).get("value") is not None for entry in scores.values())
        yield row(attempt, score_status="not_scored", limit=ran["limit"], has_output=ran["has_output"] or judged)
        return
    entry = scores[score.scorer]
    value = entry.get("value") if isinstance(entry, dict) else None
    if score.key is not None:
        inner = value.get(score.key) if isinstance(value, dict) else None
        value, shown = inner, (value if inner is None else inner)
    else:
        shown = value
    status, number = grade(value, letters=LETTER_GRADES)
    if number is None:
        yield {**row(attempt, score_status=status, **ran), "_value": shown}
        return
    passed = (number == 1.0) if number in (0.0, 1.0) else None
    # A graded sample has an output the scorer judged, even if its text is empty.
    yield row(attempt, score_status=status, score=number, passed=passed, limit=ran["limit"], has_output=True)


def _value_notes(log: _Log, score: ScoreRef | None, values: list[Any]) -> list[dict[str, Any]]:
    """One note per kind of value of a log's scorer that is not a score (not one per row); nulls say nothing."""
    notes: list[dict[str, Any]] = []
    nonfinite = [v for v in values if isinstance(v, float) and not math.isfinite(v)]
    other = [v for v in values if v is not None and not (isinstance(v, float) and not math.isfinite(v))]
    for kind, found, what in (
        ("not_a_score", other, "is not a score"),
        ("nonfinite_score", nonfinite, "is not finite"),
    ):
        if found:
            example = json.dumps(found[0], default=str)[:80]
            where = "" if score is None or score.key is None else f" (read at {score.place})"
            name = None if score is None else score.name
            detail = f"{len(found)} value(s) of score {name!r}{where} {what} (e.g. {example}); read as judge_error"
            notes.append(_log_note(log, kind, detail))
    return notes


def _attempt_rows(
    logs: Sequence[_Log],
    chosen: Mapping[str, ScoreRef | None],
    case_of: Callable[[str, int | str], str],
    notes: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Ledger rows of every log: runs of one (task, candidate) numbered on by start time, each sample read once."""
    groups: dict[tuple[str, str], list[_Log]] = defaultdict(list)
    for log in logs:
        groups[(log.task, log.candidate)].append(log)
    rows: list[dict[str, Any]] = []
    first_seen: dict[str, str] = {}  # sample identity -> where it was first read
    for group in groups.values():
        next_attempt: dict[tuple[str, int], int] = defaultdict(lambda: 1)
        for log in sorted(group, key=_started):
            scorer = chosen[log.path]
            used: dict[tuple[str, int], int] = {}
            values: list[Any] = []
            for sample in log.samples:
                identity = sample.identity
                if identity in first_seen:
                    detail = (
                        f"sample {sample.raw_id!r} epoch {sample.epoch} ({identity.split(' ')[0]} equal) was already "
                        f"read from {first_seen[identity]}: one attempt imported twice, read once"
                    )
                    case_id = case_of(log.task, sample.raw_id)
                    notes.append(
                        _log_note(log, "duplicate_import", detail, case_id=case_id, line=sample.line)
                        | {SOURCE: sample.source}
                    )
                    continue
                first_seen[identity] = sample.source
                case_id = case_of(log.task, sample.raw_id)
                key = (case_id, sample.epoch)
                for row in _sample_rows(log, sample, case_id, scorer, next_attempt[key]):
                    if "_value" in row:
                        values.append(row.pop("_value"))
                    rows.append(row)
                    used[key] = max(used.get(key, 0), row[ATTEMPT])
            for key, last in used.items():
                next_attempt[key] = last + 1
            notes.extend(_value_notes(log, scorer, values))
    return rows
