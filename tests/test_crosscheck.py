"""The reconciliation and retry tables in every output (issue 43: "a sentence in every output", the retry audit).

The reconciliation case is Inspect issue 3707's numbers (100 planned, 10 errored, 80 correct; the synthetic
log of tests/test_reported.py): 80/90 = 0.889 reported over 90 scored samples, 0.80–0.90 over the plan, the
10 errored samples worth 80/90 − 80/100 = +8.9 points. The retry case is the README's four-case ledger
under ``last_allowed`` with a slice ``level`` (q, r easy; s, t hard): q errored then passed, t timed out
then passed (both retried), r failed and s passed (never retried).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console

import evalframe as ef
from evalframe.attempts import retried_by_slice
from evalframe.report.html import render_html
from evalframe.report.markdown import render_github, render_markdown
from evalframe.report.terminal import print_view
from tests.conftest import ROOT, readme_example
from tests.test_reported import audited, inspect_log

PLAN = pl.DataFrame({"case_id": ["q", "r", "s", "t"], "level": ["easy", "easy", "hard", "hard"]})
LEDGER = pl.DataFrame(
    {
        "candidate": ["A"] * 6,
        "case_id": ["q", "q", "r", "s", "t", "t"],
        "attempt": [1, 2, 1, 1, 1, 2],
        "exec_status": ["error", "completed", "completed", "completed", "timeout", "completed"],
        "score_status": ["not_scored", "scored", "scored", "scored", "not_scored", "scored"],
        "passed": [None, 1, 0, 1, None, 1],
    }
)


def retried_report() -> ef.AuditReport:
    plan = ef.Plan.from_frame(PLAN, candidates=["A"])
    return ef.audit(plan, LEDGER, retry="last_allowed", slices=["level"])


def terminal(view: ef.report.View) -> str:
    console = Console(width=220, record=True, file=io.StringIO())
    print_view(view, console)
    return console.export_text()


def test_retried_units_beside_never_retried_within_each_slice_value() -> None:
    table = retried_by_slice(retried_report().units, ["level"])
    cols = ["slice", "value", "retried_units", "retried_scored", "retried_passed", "never_units", "never_scored",
            "never_passed", "retried_rate", "never_rate"]  # fmt: skip
    assert table.select(cols).rows() == [
        (None, None, 2, 2, 2, 2, 2, 1, 1.0, 0.5),  # q, t retried and passed; r failed, s passed
        ("level", "easy", 1, 1, 1, 1, 1, 0, 1.0, 0.0),  # q retried; r never
        ("level", "hard", 1, 1, 1, 1, 1, 1, 1.0, 1.0),  # t retried; s never
    ]


#: The retry ledger with numeric scores in place of verdicts: q 0.9 and t 0.6 on their retries, r 0.1, s 0.8.
NUMERIC = LEDGER.drop("passed").with_columns(pl.Series("score", [None, 0.9, 0.1, 0.8, None, 0.6]))


def test_numeric_scores_without_a_threshold_are_scored_units_without_passes() -> None:
    # SPEC §2: scored counts every unit graded with a score; without a declared threshold none is a pass or
    # a fail, so no group has a count of passes or a rate (null, never 0). Counted attempts: q 0.9, t 0.6
    # (retried), r 0.1, s 0.8 (never retried).
    plan = ef.Plan.from_frame(PLAN, candidates=["A"])
    report = ef.audit(plan, NUMERIC, grade="numeric", retry="last_allowed", slices=["level"])
    cols = ["slice", "value", "retried_units", "retried_scored", "retried_passed", "never_units", "never_scored",
            "never_passed", "retried_rate", "never_rate"]  # fmt: skip
    assert report.retried_by_slice.select(cols).rows() == [
        (None, None, 2, 2, None, 2, 2, None, None, None),
        ("level", "easy", 1, 1, None, 1, 1, None, None, None),  # q retried; r never
        ("level", "hard", 1, 1, None, 1, 1, None, None, None),  # t retried; s never
    ]
    assert report.summary.select("scored", "passed").row(0) == (4, None)  # the funnel's count, the same units
    cells = ef.report.build_view(report).crosscheck.retried_by_slice.row(0, named=True)
    assert cells["retried (passed/scored)"] == "null (—/2 of 2 units)"
    # With a threshold of 0.5: q 0.9 and t 0.6 pass (retried 2/2), s 0.8 passes and r 0.1 fails (never 1/2).
    passing = ef.audit(plan, NUMERIC, grade="numeric", pass_threshold=0.5, retry="last_allowed", slices=["level"])
    assert passing.retried_by_slice.select(cols).rows() == [
        (None, None, 2, 2, 2, 2, 2, 1, 1.0, 0.5),
        ("level", "easy", 1, 1, 1, 1, 1, 0, 1.0, 0.0),
        ("level", "hard", 1, 1, 1, 1, 1, 1, 1.0, 1.0),
    ]


def test_no_retry_no_retried_table() -> None:
    plan = ef.Plan.from_frame(PLAN, candidates=["A"])
    once = LEDGER.filter(pl.col("attempt") == 1)
    report = ef.audit(plan, once, slices=["level"])
    assert report.retried_by_slice.height == 0
    view = ef.report.build_view(report)
    assert not view.crosscheck.retried
    assert "retries:" not in terminal(view)
    assert "## Retries" not in render_markdown(view)
    assert 'id="crosscheck"' not in render_html(view)


def test_the_retry_tables_are_in_every_output() -> None:
    view = ef.report.build_view(retried_report())
    text, md, github, html = terminal(view), render_markdown(view), render_github(view), render_html(view)
    # the headline under first: q errored (not scored), r failed, s passed, t timed out: 1/2; declared: 3/4
    for out in (text, md, github, html):
        assert "0.500 (1/2)" in out and "0.750 (3/4)" in out
    # pass rate by attempt: attempt 1 scored r, s (1 passed); attempt 2 scored q, t (2 passed)
    assert "1.000 (2/2)" in text and "1.000 (2/2)" in md
    # retried vs never retried, within level = easy: q 1/1 retried, r 0/1 never
    for out in (text, md, html):
        assert "level = easy" in out
        assert "0.000 (0/1 of 1 units)" in out
    assert "retries: retried vs never-retried units" in text
    assert "## Retries" in md and "**Retries**" in github and 'id="crosscheck"' in html


def test_json_and_the_output_folder_hold_the_retry_tables(tmp_path: Path) -> None:
    report = retried_report()
    doc = json.loads(report.to_json())
    assert [r["attempt"] for r in doc["attempt_rates"]] == [1, 2]
    assert [(r["slice"], r["value"], r["retried_passed"], r["never_passed"]) for r in doc["retried_by_slice"]] == [
        (None, None, 2, 1), ("level", "easy", 1, 0), ("level", "hard", 1, 1)]  # fmt: skip
    report.write(tmp_path / "out")
    assert pl.read_parquet(tmp_path / "out" / "retried_by_slice.parquet").height == 3


def test_the_reconciliation_is_a_table_in_every_output(tmp_path: Path) -> None:
    view = ef.report.build_view(audited(inspect_log(tmp_path, planned=100, errored=10, correct=80, reported=80 / 90)))
    (row,) = view.crosscheck.reconciliation.iter_rows(named=True)
    assert (row["reported"], row["pass_rate_scored"], row["pass_rate_planned–upper"], row["gap"]) == (
        "0.889 over 90 scored samples", "0.889", "[0.8, 0.9]", "+8.9 points")  # fmt: skip
    assert row["gap made of"] == "exec_failed +8.9 points"
    text, md, github, html = terminal(view), render_markdown(view), render_github(view), render_html(view)
    sentence = (
        "over 100 planned the rate lies in 0.800–0.900; 10 errored or timed-out units account for +8.9 points."
    )
    for out in (text, md, github, html):
        assert "0.889 over 90 scored samples" in out
        assert "exec_failed +8.9 points" in out
    for out in (md, github, html):
        assert sentence in out
    assert "reconciliation: the headline each export reported, beside the audit" in text


def test_the_readme_shows_the_reconciled_row_report_md_holds(tmp_path: Path) -> None:
    after = (ROOT / "README.md").read_text(encoding="utf-8").split("<!-- reconciled-row -->", 1)[1]
    shown = after.split("```text\n", 1)[1].split("```", 1)[0]
    view = ef.report.build_view(audited(inspect_log(tmp_path, planned=100, errored=10, correct=80, reported=80 / 90)))
    assert shown in render_markdown(view)


def test_the_readme_retried_example_prints_what_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    retries, _ = readme_example("retries-example")
    code, shown = readme_example("retried-example")
    exec(retries + code, {})  # the example goes on from the retries example's ledger
    assert capsys.readouterr().out.endswith(shown)
    # as derived by hand in test_retried_units_beside_never_retried_within_each_slice_value
    assert shown.splitlines() == ["None None 2 2 1 2", "level easy 1 1 0 1", "level hard 1 1 1 1"]
