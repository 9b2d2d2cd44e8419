"""every_eval_ever files as read: aggregate records (checked), their instance files, instance rows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalframe.columns import EXEC_STATUS, EXEC_STATUSES, HAS_OUTPUT, SCORE_STATUS, SCORE_STATUSES
from evalframe.importers._kit import Unreadable, json_int, json_object, note, parse_json, read_json_lines
from evalframe.importers.every_eval_ever.schema import DETAIL_TRIALS, DETAIL_UNGRADED
from evalframe.report import MANIFEST


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
    #: The units without an instance row that ran or were skipped (records evalframe wrote): ``sample_id``,
    #: ``trial``, ``exec_status``, ``score_status``, ``has_output``.
    ungraded: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Rows:
    """The rows of one instance file."""

    path: Path
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    raw: bytes = b""


def _is_export(path: Path) -> bool:
    return path.suffix in (".json", ".jsonl") and path.name != MANIFEST


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
        data = json_object(result.get("source_data"))
        listed = data.get("sample_ids")
        if listed is not None:
            if not isinstance(listed, list) or any(
                isinstance(i, bool) or not isinstance(i, (str, int)) for i in listed
            ):
                raise Unreadable(source, f"evaluation_results[{number}].source_data.sample_ids is not a list of ids")
            ids.extend(listed)
        if json_int(data.get("samples_number")) is not None:
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
        if isinstance(limits, dict) and json_int(limits.get("message_limit")) is not None:
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
        ungraded=_ungraded(source, json_object(json_object(detail).get("additional_details")).get(DETAIL_UNGRADED)),
    )


def _ungraded(source: str, text: Any) -> list[dict[str, Any]]:
    """The units listed in :data:`DETAIL_UNGRADED` (JSON text); a malformed list raises :class:`Unreadable`."""
    if text is None:
        return []
    listed = parse_json(text, source) if isinstance(text, str) else None
    bad = f"detailed_evaluation_results.additional_details[{DETAIL_UNGRADED!r}] is not a list of units"
    if not isinstance(listed, list):
        raise Unreadable(source, bad)
    out = []
    for unit in listed:
        if not isinstance(unit, dict):
            raise Unreadable(source, bad)
        sid, trial = unit.get("sample_id"), json_int(unit.get("trial"))
        has_output = unit.get(HAS_OUTPUT)
        if (
            isinstance(sid, bool)
            or not isinstance(sid, (str, int))
            or trial is None
            or trial < 1
            or unit.get(EXEC_STATUS) not in EXEC_STATUSES
            or unit.get(SCORE_STATUS) not in SCORE_STATUSES
            or not (has_output is None or isinstance(has_output, bool))
        ):
            raise Unreadable(source, f"{bad}: {json.dumps(unit)[:200]}")
        out.append(
            {
                "sample_id": sid,
                "trial": trial,
                **{k: unit[k] for k in (EXEC_STATUS, SCORE_STATUS)},
                HAS_OUTPUT: has_output,
            }
        )
    return out


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
