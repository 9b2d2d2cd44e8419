"""SPEC §5: when every missing unit of a candidate lies in one slice value, the headline says so as a fact.

Six cases, three of topic history and three of math; A has no row for any history case, B has every row.
With three cases the slice test cannot call it significant (its p-value is above alpha), yet the headline of
every output names the slice, beside the test.
"""

from __future__ import annotations

import io

import polars as pl
from rich.console import Console

import evalframe as ef
from evalframe.report.markdown import render_github
from evalframe.report.terminal import print_view

PLAN = pl.DataFrame({"case_id": [f"c{i}" for i in range(1, 7)], "topic": ["history"] * 3 + ["math"] * 3})
LEDGER = pl.DataFrame(
    {
        "candidate": ["A"] * 3 + ["B"] * 6,
        "case_id": ["c4", "c5", "c6", "c1", "c2", "c3", "c4", "c5", "c6"],
        "passed": [1, 0, 1, 1, 0, 1, 1, 1, 0],
    }
)
#: Read off the two frames: A's 3 missing units are c1..c3, all history, of history's 3 planned units.
FACT = (
    "A: all 3 missing units lie in topic = history (3 of its 3 planned units) (a described fact, beside the slice test)"
)


def test_the_headline_names_the_slice_of_every_missing_unit_in_every_output() -> None:
    report = ef.audit(ef.Plan.from_frame(PLAN, candidates=["A", "B"]), LEDGER, slices=["topic"])
    assert not report.missingness.get_column("selective").any()  # the test alone says nothing here
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_view(report.view(), console)
    terminal = console.file.getvalue()  # type: ignore[attr-defined]
    assert terminal.count(FACT) == 1
    assert terminal.index(FACT) < terminal.index("candidates: funnel and rates")  # in the headline
    assert report.to_markdown().count(FACT) == 1
    assert render_github(report.view()).count(FACT) == 1
    assert report.to_html().count(FACT) == 1
    assert "B: all" not in terminal  # B has no missing unit
