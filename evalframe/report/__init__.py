"""The audit report: the data object, one view of it, the renderers that lay the view out, and the writers.

Layers, each importing only those before it:

- :mod:`~evalframe.report.descriptions`, :mod:`~evalframe.report.format`:
  what columns mean; how values are written for people.
- :mod:`~evalframe.report.output`: the output folder (Parquet tables and
  text files, replaced all or nothing).
- :mod:`~evalframe.report.model`: :class:`AuditReport`, the frozen tables
  the audit returns (the audit and the comparison import only this).
- :mod:`~evalframe.report.view`: the one view model, built once from the
  report tables (and a comparison); the only place numbers are read.
- renderers: :mod:`~evalframe.report.terminal` (rich),
  :mod:`~evalframe.report.markdown` (also the CI job summary),
  :mod:`~evalframe.report.jsondoc`, :mod:`~evalframe.report.html` with
  :mod:`~evalframe.report.charts`; :mod:`~evalframe.report.refusal` for a
  refused batch.

The model reaches the view builder and the renderers by importing them
inside the methods that render (``report.to_markdown()``), so the audit,
which builds on the model, loads none of them until one is asked for.
The terminal renderer (``print_view``, ``print_refusal``) is imported when
first named, since rich is needed only where a terminal is written to.
The HTML renderer's charts are SVG written by :mod:`~evalframe.report.charts`
itself, with no plotting library.
"""

from typing import TYPE_CHECKING, Any

from evalframe.natural import natural_key
from evalframe.report.descriptions import CARRIED, DESCRIPTIONS, RATE_FORMULAS, TABLE_DESCRIPTIONS, describe
from evalframe.report.format import fmt_value, markdown_code, markdown_table, markdown_text
from evalframe.report.html import render_html, render_summary_html
from evalframe.report.jsondoc import render_json, view_dict
from evalframe.report.markdown import comparison_markdown, render_comparison_markdown, render_github, render_markdown
from evalframe.report.model import AuditReport
from evalframe.report.output import (
    MANIFEST,
    MANIFEST_FORMAT,
    ExchangeGuard,
    check_output_folder,
    read_manifest,
    write_output,
)
from evalframe.report.refusal import build_refusal, refusal_texts, write_refusal
from evalframe.report.sentences import Ranking, headline, missing_ids_text, provenance_lines, ranking_note
from evalframe.report.view import TasksView, View, build_task_views, build_view

if TYPE_CHECKING:
    from evalframe.report.terminal import print_refusal, print_view

__all__ = [
    "CARRIED",
    "DESCRIPTIONS",
    "MANIFEST",
    "MANIFEST_FORMAT",
    "ExchangeGuard",
    "RATE_FORMULAS",
    "Ranking",
    "TABLE_DESCRIPTIONS",
    "AuditReport",
    "TasksView",
    "View",
    "build_refusal",
    "build_task_views",
    "build_view",
    "check_output_folder",
    "comparison_markdown",
    "describe",
    "fmt_value",
    "headline",
    "markdown_code",
    "markdown_table",
    "markdown_text",
    "missing_ids_text",
    "natural_key",
    "print_refusal",
    "print_view",
    "provenance_lines",
    "ranking_note",
    "read_manifest",
    "refusal_texts",
    "render_comparison_markdown",
    "render_github",
    "render_html",
    "render_json",
    "render_markdown",
    "render_summary_html",
    "view_dict",
    "write_output",
    "write_refusal",
]


def __getattr__(name: str) -> Any:
    """``print_view`` and ``print_refusal``, imported from the terminal renderer when first named (PEP 562)."""
    if name in ("print_view", "print_refusal"):
        from evalframe.report import terminal

        return getattr(terminal, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
