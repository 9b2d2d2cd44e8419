"""lm-eval files as read: the file names, samples rows (doc ids, filters, metric values) and results files."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evalframe.importers._kit import Unreadable, note, read_json, read_json_lines

#: Plan slice column: the lm-eval task of a case.
TASK: Final = "task"
#: Plan slice column: the lm-eval filter graded (``none`` when the task has one unnamed filter).
FILTER: Final = "filter"
#: The candidate of rows whose run records no model (no results file beside the samples file).
UNKNOWN_MODEL: Final = "unknown-model"

_TIMESTAMP: Final = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
_SAMPLES_NAME: Final = re.compile(rf"samples_(?P<task>.+)_(?P<ts>{_TIMESTAMP})\.jsonl?")
#: ``results_<ts>.json`` (``--output_path <folder>``) or ``<stem>_<ts>.json`` (``--output_path <stem>.json``).
_RESULTS_NAME: Final = re.compile(rf"(?P<stem>.+)_(?P<ts>{_TIMESTAMP})\.json")

#: Keys of a samples row that are not per-row metric values.
_ROW_KEYS: Final = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)
#: Per-row metrics that say whether the answer could be parsed, never what it scored (0 = unparseable).
_PARSE_METRIC: Final = "percent_parseable"
_ABSENT: Final = object()


@dataclass
class _Header:
    """A results file as read (``data`` None when it could not be read)."""

    path: Path
    source: str
    run_id: str
    data: dict[str, Any] | None


@dataclass
class _Row:
    """One samples row: where it is, which document and filter, its metric values."""

    line: int
    doc_id: str
    filter: str
    values: dict[str, Any]
    has_output: bool | None


@dataclass
class _Samples:
    """One samples file as read."""

    path: Path
    source: str
    task: str
    run_id: str
    rows: list[_Row] = field(default_factory=list)
    metric_order: list[str] = field(default_factory=list)
    layout: str = "metrics list"
    normalised_ids: int = 0


def _is_export(path: Path) -> bool:
    return bool(_SAMPLES_NAME.fullmatch(path.name) or _RESULTS_NAME.fullmatch(path.name))


def _split_score(score: str | None) -> tuple[str | None, str | None]:
    """``"metric,filter"`` → (metric, filter); ``"metric"`` → (metric, None)."""
    if score is None:
        return None, None
    metric, sep, flt = score.rpartition(",")
    if not sep:
        return score, None
    return metric or None, flt or None


def _read_header(path: Path, notes: list[dict[str, Any]]) -> _Header:
    source = str(path)
    match = _RESULTS_NAME.fullmatch(path.name)
    run_id = match.group("ts") if match else path.stem
    try:
        data = read_json(path)
    except Unreadable as exc:
        notes.append(exc.note)
        return _Header(path, source, run_id, None)
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        notes.append(note("unreadable_file", source, "the results file is not a JSON object with a 'results' object"))
        return _Header(path, source, run_id, None)
    return _Header(path, source, run_id, data)


def _doc_id(value: object) -> tuple[str | None, bool]:
    """Return (doc id as text, whether it had to be normalised); None when unusable."""
    if isinstance(value, bool):
        return None, False
    if isinstance(value, int):
        return str(value), False
    if isinstance(value, float) and value.is_integer():
        return str(int(value)), True
    if isinstance(value, str) and value != "":
        return value, bool(re.fullmatch(r"0|[1-9][0-9]*", value))
    return None, False


def _read_samples(path: Path, notes: list[dict[str, Any]]) -> _Samples:
    source = str(path)
    match = _SAMPLES_NAME.fullmatch(path.name)
    assert match is not None  # only matching names are read as samples
    found = _Samples(path, source, match.group("task"), match.group("ts"))
    try:
        lines, bad = read_json_lines(path)
    except Unreadable as exc:
        notes.append(exc.note)
        return found
    notes.extend(bad)
    has_metrics_list = False
    for number, obj in lines:
        if not isinstance(obj, dict):
            detail = f"expected a JSON object, found {type(obj).__name__}"
            notes.append(note("unreadable_file", source, detail, line=number))
            continue
        doc_id, normalised = _doc_id(obj.get("doc_id"))
        if doc_id is None:
            detail = f"doc_id is missing or not an integer: {obj.get('doc_id')!r}"
            notes.append(note("unreadable_file", source, detail, line=number))
            continue
        found.normalised_ids += normalised
        names = obj.get("metrics")
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            has_metrics_list = True
            metric_names = [str(n) for n in names]
        else:
            metric_names = [k for k in obj if k not in _ROW_KEYS]
        found.metric_order.extend(n for n in metric_names if n not in found.metric_order)
        flt = obj.get("filter")
        resps = obj.get("resps", _ABSENT)
        found.rows.append(
            _Row(
                line=number,
                doc_id=doc_id,
                filter="none" if flt is None else str(flt),
                values={n: obj[n] for n in {*metric_names, _PARSE_METRIC} if n in obj},
                has_output=None if resps is _ABSENT else bool(resps),
            )
        )
    if found.rows and not has_metrics_list:
        found.layout = "older (no metrics list)"
    return found
