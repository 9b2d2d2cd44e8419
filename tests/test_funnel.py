"""Funnel counts, rates, intervals and clustered errors on repeated trials (SPEC §2, §4)."""

from __future__ import annotations

import math

import polars as pl
import pytest

import evalframe as ef
from evalframe.funnel import funnel, with_uncertainty
from evalframe.stats import clustered_se

Z95 = 1.959963984540054


def trials_report() -> ef.AuditReport:
    """3 cases × 3 trials; case a passes 3/3, b 1/3, c trial 3 missing and 0/2 passed."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c"]}), candidates=["M"], trials=3)
    rows = [("a", 1, 1), ("a", 2, 1), ("a", 3, 1), ("b", 1, 1), ("b", 2, 0), ("b", 3, 0), ("c", 1, 0), ("c", 2, 0)]
    ledger = pl.DataFrame(rows, schema=["case_id", "trial", "passed"], orient="row")
    return ef.audit(plan, ledger)


def test_trials_are_units_and_missing_trials_are_missing() -> None:
    row = trials_report().summary.row(0, named=True)
    assert (row["planned"], row["scored"], row["passed"], row["missing"]) == (9, 8, 4, 1)
    assert (row["cases_planned"], row["cases_fully_scored"]) == (3, 2)
    assert row["pass_rate_scored"] == 0.5
    assert row["pass_rate_planned"] == pytest.approx(4 / 9)
    assert row["pass_rate_upper"] == pytest.approx(5 / 9)


def test_clustered_and_naive_standard_errors_side_by_side() -> None:
    row = trials_report().summary.row(0, named=True)
    # 8 scored values, mean 0.5, residuals ±0.5: naive = sqrt(8 · 0.25) / 8 = sqrt(2) / 8.
    assert row["pass_rate_scored_se_naive"] == pytest.approx(math.sqrt(2) / 8)
    # Cluster residual sums: a 3·0.5 = 1.5, b 0.5 − 0.5 − 0.5 = −0.5, c −0.5 − 0.5 = −1;
    # clustered = sqrt(1.5² + 0.5² + 1²) / 8 = sqrt(3.5) / 8.
    assert row["pass_rate_scored_se_clustered"] == pytest.approx(math.sqrt(3.5) / 8)
    assert row["pass_rate_scored_cluster_ci_low"] == pytest.approx(0.5 - Z95 * math.sqrt(3.5) / 8)
    assert row["mean_score"] == 0.5


def test_wilson_intervals_on_every_rate() -> None:
    row = trials_report().summary.row(0, named=True)
    # scored_coverage 8/9: Wilson with n = 9, s = 8.
    n, s, z2 = 9, 8, Z95**2
    centre, half = s + z2 / 2, Z95 * math.sqrt(s * (n - s) / n + z2 / 4)
    assert row["scored_coverage_ci_low"] == pytest.approx((centre - half) / (n + z2), abs=1e-12)
    assert row["scored_coverage_ci_high"] == pytest.approx((centre + half) / (n + z2), abs=1e-12)
    for rate in ("completion_rate", "scored_coverage", "pass_rate_scored", "pass_rate_planned", "pass_rate_upper"):
        assert row[f"{rate}_ci_low"] <= row[rate] <= row[f"{rate}_ci_high"]


def test_header_only_has_no_intervals_for_undefined_rates() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a"]}), candidates=["M"])
    row = ef.audit(plan, pl.DataFrame(schema={"case_id": pl.String, "passed": pl.Int64})).summary.row(0, named=True)
    assert (row["pass_rate_scored"], row["pass_rate_scored_ci_low"], row["pass_rate_scored_se_clustered"]) == (
        None,
        None,
        None,
    )
    assert (row["scored_coverage_ci_low"], row["mean_score"]) == (0.0, None)


def test_numeric_scores_mean_with_same_denominators() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["M"])
    ledger = pl.DataFrame({"case_id": ["a", "b", "c"], "score": [0.9, 0.4, 0.2]})
    no_threshold = ef.audit(plan, ledger, grade="numeric").summary.row(0, named=True)
    assert (no_threshold["scored"], no_threshold["scored_coverage"]) == (3, 0.75)
    assert no_threshold["mean_score"] == pytest.approx(0.5)
    assert (no_threshold["passed"], no_threshold["pass_rate_scored"], no_threshold["pass_rate_upper"]) == (
        0,
        None,
        None,
    )
    with_threshold = ef.audit(plan, ledger, grade="numeric", pass_threshold=0.4).summary.row(0, named=True)
    assert (with_threshold["passed"], with_threshold["failed"]) == (2, 1)
    assert with_threshold["pass_rate_scored"] == pytest.approx(2 / 3)
    assert with_threshold["pass_rate_upper"] == pytest.approx(3 / 4)


def test_mean_score_interval_is_clipped_to_the_score_range() -> None:
    # Cases a (score 0.0) and b (0.2): mean 0.1, naive = clustered = sqrt(0.1² + 0.1²) / 2 = sqrt(0.02) / 2,
    # so the CLT interval's low end 0.1 - 1.96 · 0.0707 lies below 0.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["M"])
    ledger = pl.DataFrame({"case_id": ["a", "b"], "score": [0.0, 0.2]})
    se = math.sqrt(0.02) / 2
    for score_range, low in (((0.0, 1.0), 0.0), ((-1.0, 1.0), 0.1 - Z95 * se)):
        row = ef.audit(plan, ledger, grade="numeric", score_range=score_range).summary.row(0, named=True)
        assert row["mean_score"] == pytest.approx(0.1)
        assert row["mean_score_se_clustered"] == pytest.approx(se)
        assert row["mean_score_ci_low"] == pytest.approx(low, abs=1e-15)
        assert row["mean_score_ci_high"] == pytest.approx(0.1 + Z95 * se)


def test_pass_fail_grades_share_one_error_computation_with_each_interval_clipped_to_its_range() -> None:
    units = trials_report().units.lazy().collect()  # 9 units: 4 passed, 4 failed, 1 missing
    summary = funnel(units.lazy()).collect()
    for score_range in ((0.0, 1.0), (0.0, 0.9)):
        row = with_uncertainty(summary, units, score_range=score_range).row(0, named=True)
        graded = units.filter(pl.col("score").is_not_null()).with_columns(pl.col("outcome").eq("passed").alias("p"))
        alone = clustered_se(graded, value="p", cluster="case_id", by=["candidate"], clip=(0.0, 1.0))
        scores = clustered_se(graded, value="score", cluster="case_id", by=["candidate"], clip=score_range)
        assert row["pass_rate_scored_se_clustered"] == alone["se_clustered"].item() == pytest.approx(math.sqrt(3.5) / 8)
        assert row["pass_rate_scored_cluster_ci_high"] == alone["ci_high"].item()
        assert (row["mean_score_ci_low"], row["mean_score_ci_high"]) == (
            scores["ci_low"].item(),
            scores["ci_high"].item(),
        )
        assert row["mean_score_ci_high"] == pytest.approx(min(score_range[1], 0.5 + Z95 * math.sqrt(3.5) / 8))


def test_a_pass_fail_mean_score_interval_stays_within_0_and_1_whatever_the_score_range() -> None:
    # score_range bounds numeric scores; pass/fail grades are 0 or 1 (a range of (0.2, 0.8) clipped the
    # interval of a mean of 1.0 to [0.8, 0.8]).
    report = trials_report()
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["M"], trials=2)
    ledger = pl.DataFrame({"case_id": ["a", "a", "b", "b"], "trial": [1, 2, 1, 2], "passed": [1, 1, 1, 1]})
    row = ef.audit(plan, ledger, score_range=(0.2, 0.8)).summary.row(0, named=True)
    assert (row["mean_score"], row["mean_score_ci_low"], row["mean_score_ci_high"]) == (1.0, 1.0, 1.0)
    # The trials report's interval (mean 0.5, clustered se sqrt(3.5)/8) is the same under any range.
    base = report.summary.row(0, named=True)
    assert base["mean_score_ci_high"] == pytest.approx(0.5 + Z95 * math.sqrt(3.5) / 8)
    plan3 = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c"]}), candidates=["M"], trials=3)
    rows = report.units.lazy().filter(pl.col("outcome") != "missing").select("case_id", "trial", "score").collect()
    narrow = ef.audit(plan3, rows.rename({"score": "passed"}), score_range=(0.4, 0.6)).summary.row(0, named=True)
    assert (narrow["mean_score_ci_low"], narrow["mean_score_ci_high"]) == (
        base["mean_score_ci_low"],
        base["mean_score_ci_high"],
    )
