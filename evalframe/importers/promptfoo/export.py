"""A promptfoo export file loaded: its layout (v2, v3, legacy, jsonl), result rows and header parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalframe.importers._kit import Unreadable, json_object, read_json, read_json_lines
from evalframe.importers.promptfoo.rows import _named_scores, _str


@dataclass
class _Export:
    """One file as loaded: its result rows (numbered) and header parts."""

    source: str
    layout: str
    numbered: list[tuple[int, Any]]
    columns: list[dict[str, Any]]
    config: dict[str, Any]
    stats: dict[str, Any]
    info: dict[str, Any]
    #: Lines of a ``.jsonl`` file that could not be read.
    notes: list[dict[str, Any]] = field(default_factory=list)


def _is_export(path: Path) -> bool:
    return path.suffix.lower() in (".json", ".jsonl")


def _load(path: Path) -> _Export:
    """Load one export file; a file that is not a promptfoo export raises :class:`Unreadable`."""
    source = str(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        numbered, bad = read_json_lines(path)
        jsonl = {"source": source, "format": "promptfoo", "layout": "jsonl"}
        return _Export(source, "jsonl", numbered, [], {}, {}, jsonl, notes=bad)
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Unreadable(source, f"expected a JSON object, found {type(doc).__name__}")
    summary = doc.get("results")
    if isinstance(summary, list):  # a bare (legacy) summary: no wrapper
        summary, doc = doc, {}
    if not isinstance(summary, dict):
        raise Unreadable(source, "no 'results' object: not a promptfoo eval export")
    rows = summary.get("results")
    if not isinstance(rows, list):
        raise Unreadable(source, "'results.results' is missing or not a list")
    prompts = summary.get("prompts")
    layout = "v3"
    if not isinstance(prompts, list):
        prompts = json_object(json_object(summary.get("table")).get("head")).get("prompts")
        layout = "v2" if doc else "legacy"
    columns = [p for p in prompts if isinstance(p, dict)] if isinstance(prompts, list) else []
    config, stats = json_object(doc.get("config")), json_object(summary.get("stats"))
    run_id = _str(doc.get("evalId")) or None
    info: dict[str, Any] = {
        "source": source,
        "format": "promptfoo",
        "layout": layout,
        "version": summary.get("version"),
        "eval_id": run_id,
        "run_id": run_id,
        "timestamp": _str(summary.get("timestamp")),
        "promptfoo_version": _str(json_object(doc.get("metadata")).get("promptfooVersion")),
        "description": _str(config.get("description")),
        "stats": {k: stats.get(k) for k in ("successes", "failures", "errors") if k in stats},
    }
    return _Export(source, layout, list(enumerate(rows, start=1)), columns, config, stats, info)


def _export_named_scores(export: _Export) -> list[str]:
    return sorted({k for _, obj in export.numbered if isinstance(obj, dict) for k in _named_scores(obj)})
