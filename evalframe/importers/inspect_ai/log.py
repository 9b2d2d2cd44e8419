"""Inspect AI logs as read: the log and sample records, their identity checks, and ``.json`` logs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeGuard

from evalframe.importers._kit import MAX_PLANNED_UNITS, Unreadable, json_object, note, read_json

#: Plan column holding each case's Inspect task name (``eval.task``).
TASK: Final = "task"
#: Files of an Inspect log directory or eval-set folder that are not logs (manifest, index, id file).
_COMPANIONS: Final = frozenset({"eval-set.json", "logs.json", ".eval-set-id"})


@dataclass
class _Sample:
    """One sample read from a log, with where it came from."""

    data: dict[str, Any]
    raw_id: int | str
    epoch: int
    line: int
    source: str

    @property
    def identity(self) -> str:
        """What makes two copies one attempt: the sample's uuid, else a hash of its whole content."""
        uuid = self.data.get("uuid")
        if isinstance(uuid, str) and uuid:
            return f"uuid {uuid}"
        text = json.dumps(self.data, sort_keys=True, ensure_ascii=False, default=str)
        return "content " + hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Log:
    """One readable log: its header fields and samples."""

    path: str
    fmt: str
    header_member: str | None
    doc: dict[str, Any]
    status: str
    samples: list[_Sample] = field(default_factory=list)
    #: The candidate the log's rows belong to: its model, with the settings that set it apart from other runs
    #: of the same task and model when theirs differ (see ``settings.split_by_settings``).
    candidate: str = ""

    def __post_init__(self) -> None:
        if not self.candidate:
            self.candidate = self.model

    @property
    def spec(self) -> dict[str, Any]:
        return json_object(self.doc.get("eval"))

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
        return json_object(self.doc.get("results"))

    @property
    def dataset(self) -> dict[str, Any]:
        return json_object(self.spec.get("dataset"))

    @property
    def config(self) -> dict[str, Any]:
        return json_object(self.spec.get("config"))


def _log_note(log: _Log, kind: str, detail: str, **keys: Any) -> dict[str, Any]:
    """A note about one log: keyed by its candidate, its detail opening with the model and task it ran.

    ``keys`` (``case_id``, ``line``, ``candidate``...) are the note's key columns, as in :func:`note`.
    """
    keys.setdefault("candidate", log.candidate)
    return note(kind, log.path, f"{log.model} ({log.task}): {detail}", **keys)


def _obj(value: Any) -> dict[str, Any] | None:
    """``value`` when it is a JSON object, else None."""
    return value if isinstance(value, dict) else None


#: The types of a sample id as JSON is read (``true`` is a ``bool``, never an id).
_ID_TYPES: Final = frozenset({int, str})


def _is_id(value: Any) -> TypeGuard[int | str]:
    return type(value) in _ID_TYPES


def _are_ids(values: list[Any]) -> TypeGuard[list[int | str]]:
    """Whether every value is a sample id (:func:`_is_id`), checked once per type: 3M ids in a few milliseconds."""
    return set(map(type, values)) <= _ID_TYPES


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_log(path: Path) -> bool:
    """Whether a file found in a folder is an Inspect log (not an eval-set manifest, index or id file)."""
    return path.suffix in (".eval", ".json") and path.name not in _COMPANIONS


def _read_sample(value: Any, line: int, source: str, place: str) -> _Sample:
    """Check a sample's identity fields (``id``, ``epoch``); raises :class:`Unreadable`."""
    sample = _obj(value)
    if sample is None:
        raise Unreadable(source, f"{place} is not a JSON object", line=line)
    raw_id, epoch = sample.get("id"), sample.get("epoch")
    if not _is_id(raw_id):
        raise Unreadable(source, f"{place} has no valid id (got {raw_id!r})", line=line)
    if not _is_count(epoch) or not 1 <= epoch <= MAX_PLANNED_UNITS:
        raise Unreadable(source, f"{place} has no valid epoch (got {epoch!r})", line=line)
    return _Sample(sample, raw_id, epoch, line, source)


def _check_header(doc: Any, source: str) -> dict[str, Any]:
    """The log object, checked for the fields every log must have (``eval.task``, ``eval.model``)."""
    top = _obj(doc)
    if top is None:
        raise Unreadable(source, "the log is not a JSON object")
    spec = _obj(top.get("eval"))
    if spec is None:
        raise Unreadable(source, "the log has no 'eval' object")
    for key in ("task", "model"):
        if not isinstance(spec.get(key), str):
            raise Unreadable(source, f"the log has no string 'eval.{key}'")
    return top


def _read_json_log(path: str) -> tuple[_Log | None, list[dict[str, Any]]]:
    """Read a ``.json`` log (one EvalLog document)."""
    try:
        top = _check_header(read_json(Path(path)), path)
    except Unreadable as exc:
        return None, [exc.note]
    status = top.get("status")
    log = _Log(path, "json", None, top, status if isinstance(status, str) else "started")
    samples = top.get("samples")
    if samples is None:
        return log, []
    if not isinstance(samples, list):
        return log, [note("unreadable_file", path, "'samples' is not an array")]
    notes: list[dict[str, Any]] = []
    for line, value in enumerate(samples, start=1):
        try:
            log.samples.append(_read_sample(value, line, path, f"samples[{line - 1}]"))
        except Unreadable as exc:
            notes.append(exc.note)
    return log, notes


def _retries(sample: Mapping[str, Any]) -> list[Any]:
    """The sample's ``error_retries`` (earlier failed attempts), or an empty list."""
    retries = sample.get("error_retries")
    return retries if isinstance(retries, list) else []
