"""JSON renderer of a :class:`~evalframe.report.view.View`: the report's tables at full precision.

Numbers are never rounded here (people read the other renderers); NaN and
infinities, which JSON cannot hold, are written as null.
"""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl

from evalframe.report.view import Note, TasksView, View


def finite(value: Any) -> Any:
    """Replace NaN and infinities by None, recursively (JSON has no such numbers).

    Examples
    --------
    >>> finite({"a": [float("nan"), 1.5], "b": float("inf")})
    {'a': [None, 1.5], 'b': None}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    return value.to_dicts() if isinstance(value, pl.DataFrame) else value


def note_dict(note: Note) -> dict[str, Any]:
    """A note as a JSON-ready dict: kind, count, refusing, meaning, texts, candidates and its first rows."""
    return {
        "kind": note.kind,
        "count": note.count,
        "refusing": note.refusing,
        "meaning": note.meaning,
        "texts": list(note.texts),
        "candidates": list(note.candidates),
        "first_rows": note.rows.to_dicts(),
    }


def view_dict(view: View | TasksView) -> dict[str, Any]:
    """The view as a JSON-ready dictionary.

    Keys: ``meta`` (provenance), ``summary`` (one dict per candidate),
    ``outcomes`` (units per candidate and outcome), ``problems_by_kind``,
    ``notes`` (each kind with its texts and first rows), ``slices`` and
    ``missingness`` (only when slices were declared), ``comparison`` (only
    with a comparison: its row, ``dropped_by_slice``, ``flips`` and
    ``case_flips``, the trial-aware classes: counts, note, the first fixed or
    regressed cases) and
    ``gate`` (only with a declared ``min_coverage``). A batch of several
    tasks (:class:`~evalframe.report.view.TasksView`) gives the key
    ``tasks``: task name -> that task's dictionary with the keys above, tasks
    in natural order; nothing in it pools tasks. Before it, ``overview``: one
    dict per (task, candidate) of each task's summary columns
    (:data:`~evalframe.report.view.OVERVIEW_COLUMNS`), and ``notes``: the
    notes of no task (the input's own), when there are any, in no task's.
    """
    if isinstance(view, TasksView):
        batch = {"notes": [note_dict(n) for n in view.notes]} if view.notes else {}  # the notes of no task, once
        return {
            "overview": view.overview.to_dicts(),
            **batch,
            "tasks": {task: view_dict(one) for task, one in view.tasks},
        }
    doc: dict[str, Any] = {k: _plain(v) for k, v in view.data.items()}
    doc["notes"] = [note_dict(n) for n in view.notes]
    c = view.comparison
    if c is not None:
        doc["comparison"] = {
            **c.table.row(0, named=True),
            "dropped_by_slice": c.dropped_by_slice.to_dicts(),
            "flips": {
                "counts": dict(c.flips.counts),
                "by_slice": c.flips.by_slice.to_dicts(),
                "first_pairs": c.flips.pairs.to_dicts(),
            },
        }
        if c.case_flips is not None:
            doc["comparison"]["case_flips"] = {
                "counts": dict(c.case_flips.counts),
                "note": c.case_flips.note,
                "fixed_or_regressed": c.case_flips.changed.to_dicts(),
            }
    if view.gate is not None:
        doc["gate"] = {
            "min_coverage": view.gate.min_coverage,
            "passed": view.gate.passed,
            "below": [{"candidate": n, "scored_coverage": v} for n, v in view.gate.below],
            "require_winner": view.gate.verdict is not None,
            "checks": view.gate.checks(),
        }
    return doc


def render_json(view: View | TasksView) -> str:
    """:func:`view_dict` as indented JSON (non-finite floats as null).

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> gate = json.loads(render_json(ef.report.build_view(report, min_coverage=0.9)))["gate"]
    >>> gate["passed"], gate["below"], gate["checks"]
    (False, [{'candidate': 'A', 'scored_coverage': 0.5}], ['scored_coverage below 0.9: A (0.5)'])
    """
    return json.dumps(finite(view_dict(view)), indent=2, sort_keys=False, default=str)
