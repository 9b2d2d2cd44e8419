"""Facts of a log's header: start time, epochs, planned sample ids, the scorer, run notes and info."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from evalframe.importers._kit import ScoreChoiceError, choose_score, json_object, note
from evalframe.importers.inspect_ai.log import _is_count, _is_id, _Log, _obj, _retries


def _when(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _started(log: _Log) -> tuple[bool, datetime, datetime, str]:
    """Sort key of a log among runs of the same (task, model): start time, created time, path."""
    stats = json_object(log.doc.get("stats"))
    created = _when(log.spec.get("created"))
    started = _when(stats.get("started_at")) or created
    never = datetime.min.replace(tzinfo=UTC)
    return (started is None, started or never, created or never, log.path)


def _epochs(log: _Log) -> tuple[int, dict[str, Any] | None]:
    epochs = log.config.get("epochs")
    if epochs is None:
        return 1, None
    if not _is_count(epochs) or epochs < 1:
        return 1, note("unreadable_file", log.path, f"eval.config.epochs = {epochs!r} is not a positive integer")
    return epochs, None


def _declared_ids(log: _Log) -> tuple[list[int | str] | None, dict[str, Any] | None]:
    """``eval.dataset.sample_ids`` (None when absent or empty)."""
    ids = log.dataset.get("sample_ids")
    if ids is None or ids == []:
        return None, None
    if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
        return None, note("unreadable_file", log.path, "eval.dataset.sample_ids is not a list of ints/strings")
    return list(ids), None


def _limited_note(log: _Log, planned: int) -> dict[str, Any] | None:
    """``limited_run`` when the dataset holds more samples than the run planned (``--limit``, ``--sample-id``)."""
    samples = log.dataset.get("samples")
    limit = log.config.get("limit")
    setting = f" (eval.config.limit = {json.dumps(limit)})" if limit is not None else ""
    if _is_count(samples) and samples > planned:
        detail = f"the run was limited to {planned} of {samples} samples{setting}: this run plans only those"
        return note("limited_run", log.path, detail)
    if limit is not None and not _is_count(samples):
        detail = f"the run was limited to {planned} samples{setting}; the dataset's size is not recorded"
        return note("limited_run", log.path, detail)
    return None


def _scorer_names(log: _Log) -> list[str]:
    """Scorer names the log's header lists: ``results.scores[].name``, else ``eval.scorers[].name``."""
    names: list[str] = []
    declared: list[Any] = []
    for entries in (
        log.results.get("scores"),
        [log.results.get("scorer")],  # logs written before 'scores' existed
        log.spec.get("scorers"),
    ):
        if isinstance(entries, list) and any(_obj(e) for e in entries):
            declared = entries
            break
    for entry in declared:
        name = json_object(entry).get("name")
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


def _sample_scores(sample: Mapping[str, Any], default: str | None) -> dict[str, Any]:
    scores = _obj(sample.get("scores"))
    if scores is not None:
        return scores
    old = _obj(sample.get("score"))  # single deprecated 'score' field
    return {default or "score": old} if old is not None else {}


def _scorers(log: _Log) -> tuple[list[str], list[str]]:
    """The scorers the header lists, and every scorer name seen (header first, then samples, sorted)."""
    declared = _scorer_names(log)
    first = declared[0] if declared else None
    in_samples = sorted({k for s in log.samples for k in _sample_scores(s.data, first)} - set(declared))
    return declared, declared + in_samples


def _choose_scorer(log: _Log, score: str | None) -> tuple[str | None, list[str], dict[str, Any] | None]:
    """The scorer to read (see the module docstring), every scorer seen, and a refusing note or None."""
    declared, available = _scorers(log)
    try:
        chosen = choose_score(
            score, available, default=declared[0] if declared else None, what="scorer", source=log.path
        )
    except ScoreChoiceError as exc:
        return None, available, exc.note
    return chosen, available, None


def _header_notes(log: _Log) -> list[dict[str, Any]]:
    """``run_status`` and ``header_rows_disagree`` notes of one log."""
    notes: list[dict[str, Any]] = []
    if log.status != "success":
        error = _obj(log.doc.get("error"))
        why = f": {str(error.get('message'))[:200]}" if error else ""
        notes.append(note("run_status", log.path, f"the run's status is {log.status!r}, not 'success'{why}"))
    rows = len(log.samples)
    completed = sum(1 for s in log.samples if not s.data.get("error"))
    for key, count, what in (
        ("total_samples", rows, "sample rows"),
        ("completed_samples", completed, "sample rows without an error"),
    ):
        declared = log.results.get(key)
        if _is_count(declared) and declared != count:
            detail = f"header results.{key} = {declared} but the log has {count} {what} (rows are the evidence)"
            notes.append(note("header_rows_disagree", log.path, detail))
    return notes


def _case_reducer(declared: Any) -> str | None:
    """Inspect's ``epochs_reducer`` as the header records it (``max``, ``pass_at_2``, …), or None when it has none.

    Kept in Inspect's words; the audit reads what each name means with
    :func:`evalframe.funnel.reducer_meaning` (``max`` is ``any``). Several reducers are joined with ``+``.
    """
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    if not names:
        return None
    return "+".join(map(str, names))


def _log_info(log: _Log, *, scorer: str | None, available: list[str], epochs: int) -> dict[str, Any]:
    ids = log.dataset.get("sample_ids")
    packages = json_object(log.spec.get("packages"))
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
        "eval_set_id": log.spec.get("eval_set_id"),
        "created": log.spec.get("created"),
        "dataset_name": log.dataset.get("name"),
        "dataset_samples": log.dataset.get("samples"),
        "sample_ids_declared": len(ids) if isinstance(ids, list) else None,
        "limit": log.config.get("limit"),
        "epochs": epochs,
        "case_reducer": _case_reducer(log.config.get("epochs_reducer")),
        "total_samples": log.results.get("total_samples"),
        "completed_samples": log.results.get("completed_samples"),
        "scorer": scorer,
        "scorers": available,
        "samples_read": len(log.samples),
        "attempts_read": sum(1 + len(_retries(s.data)) for s in log.samples),
        "samples_with_error": sum(1 for s in log.samples if s.data.get("error")),
        "error": (str(error.get("message"))[:500] if error else None),
    }
