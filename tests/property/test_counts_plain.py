"""No count is ever written in scientific notation, in any renderer (issue 42: ``1.19e+03 / 3316 cases``).

A real audit's view has its counts replaced by large ones (up to 10^10 units; a case-level numerator that is
a sum of fractions of a case) and is laid out by every renderer: terminal, Markdown, GitHub summary, HTML,
JSON. Counts are written as integers in plain digits (``fmt_count``): the drawn count appears as its digits.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import evalframe as ef
from evalframe.report import View, build_view, render_github, render_json, render_markdown
from evalframe.report.html import render_html
from evalframe.report.terminal import print_view

_PLAN = pl.DataFrame({"case_id": ["quote", "refund"]})
_RESULTS = pl.DataFrame(
    {
        "candidate": ["A"] * 4,
        "case_id": ["quote", "quote", "quote", "refund"],
        "trial": [1, 2, 3, 1],
        "passed": [1, 0, 1, 1],
    }
)
# Two cases × three trials, four rows: the case-level rate (mean reducer) is shown beside pass_rate_scored.
_VIEW = build_view(ef.audit(ef.Plan.from_frame(_PLAN, candidates=["A"], trials=3), _RESULTS))


def _scaled(view: View, planned: int, fraction: float) -> View:
    """``view`` with its one candidate's counts and rate fractions over ``planned`` units."""
    (c,) = view.candidates
    counts = {k: planned - (i % 3) for i, k in enumerate(c.counts)}
    rates = {
        k: replace(r, numerator=planned // 2, denominator=planned) if r.value is not None else r
        for k, r in c.rates.items()
    }
    case_rate = None if c.case_rate is None else replace(c.case_rate, numerator=planned * fraction, denominator=planned)
    return replace(view, candidates=(replace(c, counts=counts, rates=rates, case_rate=case_rate),))


def _terminal(view: View) -> str:
    console = Console(width=120, file=io.StringIO())
    print_view(view, console)
    return console.file.getvalue()  # type: ignore[attr-defined]


@settings(max_examples=25, deadline=None)
@given(planned=st.integers(min_value=1_000, max_value=10**10), fraction=st.floats(min_value=0.1, max_value=0.9))
def test_no_renderer_writes_a_count_in_scientific_notation(planned: int, fraction: float) -> None:
    assert _VIEW.candidates[0].case_rate is not None  # the fractional numerator is rendered
    view = _scaled(_VIEW, planned, fraction)
    texts = {
        "terminal": _terminal(view),
        "markdown": render_markdown(view),
        "github": render_github(view),
        "html": render_html(view),
    }
    for name, text in texts.items():
        assert "e+" not in text, name
    for name in ("terminal", "markdown"):  # the drawn count, as plain digits, over its denominator
        assert f"{planned // 2} / {planned}" in texts[name].replace("/", " / ").replace("  ", " "), name
    # JSON stays numeric: the counts are numbers, not text.
    assert "e+" not in render_json(view) and isinstance(json.loads(render_json(view)), dict)
