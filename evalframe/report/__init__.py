"""The audit report: the data object, one view of it, the renderers that lay the view out, and the writers.

The layers and what each may import are the contracts in pyproject.toml: the model
(:class:`AuditReport`, all the audit and the comparison import) reaches the view
(:mod:`~evalframe.report.view`, the only place numbers are read) and the renderers inside the methods
that render, so the audit loads none of them until one is asked for. The terminal renderer
(``print_view``, ``print_refusal``) is imported when first named: rich is needed only on a terminal.
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
