"""Funnel counts, rates, intervals and clustered errors on repeated trials (SPEC §2, §4)."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest

import evalframe as ef
from evalframe.stats import rate_interval

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


T2 = 4.302652729911275  # t quantile, 2 degrees of freedom, 97.5%
T1 = 12.706204736174698  # 1 degree of freedom


def wilson(p: float, n: float, q: float) -> tuple[float, float]:
    """Wilson (1927) score interval of p over n (possibly effective) with quantile q, written out."""
    q2n = q * q / n
    centre = (p + q2n / 2) / (1 + q2n)
    half = q / (1 + q2n) * math.sqrt(p * (1 - p) / n + q2n / (4 * n))
    return centre - half, centre + half


def test_clustered_and_naive_standard_errors_side_by_side() -> None:
    row = trials_report().summary.row(0, named=True)
    # 8 scored values, mean 0.5: binomial se = sqrt(0.25 / 8) = sqrt(2) / 8.
    assert row["pass_rate_scored_se_naive"] == pytest.approx(math.sqrt(2) / 8)
    # Case residual totals: a 3 − 1.5 = 1.5, b 1 − 1.5 = −0.5, c 0 − 1 = −1; CR1 (G = 3):
    # se = sqrt(3/2 · (1.5² + 0.5² + 1²)) / 8 = sqrt(5.25) / 8.
    assert row["pass_rate_scored_se_clustered"] == pytest.approx(math.sqrt(5.25) / 8)
    # Design effect = (5.25 / 64) / (0.25 / 8) = 2.625; 8/3 scored units per case: icc = 1.625 / (5/3).
    assert row["design_effect"] == pytest.approx(2.625)
    assert row["icc"] == pytest.approx(0.975)
    assert row["effective_n"] == pytest.approx(8 / 2.625)
    # The clustered interval itself (Wilson on n_eff with t(2)), from the statistics on the same case counts:
    low, high = wilson(0.5, 8 / 2.625, T2)
    est = rate_interval([3, 1, 0], [3, 3, 2])
    assert (est.ci_low, est.ci_high) == (pytest.approx(low), pytest.approx(high))
    # ... which the summary withholds: the residual totals (1.5, −0.5, −1) have m2 = 3.5/3, m3 = 2.25/3, skewness
    # g1 = m3 / m2^1.5 = 0.595, and 3 cases are not more than 28 + 25·g1² = 36.9 (Sugden, Smith & Jones 2000).
    assert (row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]) == (None, None)
    assert row["pass_rate_scored_ci_withheld"] == (
        "no interval: Cochran's rule as refined by Sugden, Smith and Jones (2000) needs more than 28 + 25·g1² = "
        "36.9 cases for the per-case pass rates (skewness g1 = 0.595); there are 3: with 3 cases the sample target "
        "(cases standing for a larger population of tasks) cannot support an interval for this skew; --cases fixed "
        "gives inference about these 3 cases only; with 3 cases, a kind of case that fails every time and makes up "
        "most of the population could be absent from this sample"
    )
    assert row["mean_score"] == 0.5


def test_intervals_on_every_rate_treat_cases_as_the_units() -> None:
    row = trials_report().summary.row(0, named=True)
    # scored_coverage 8/9 over cases scored 3/3, 3/3, 2/3: residual totals 1/3, 1/3, −2/3;
    # CR1 variance 3/2 · (6/9) / 81 = 1/81 against the binomial (8/9)(1/9)/9 = 8/729: n_eff = 8, t(2).
    low, high = wilson(8 / 9, 8, T2)
    assert row["scored_coverage_ci_low"] == pytest.approx(low, rel=1e-9)
    assert row["scored_coverage_ci_high"] == pytest.approx(high, rel=1e-9)
    for rate in ("completion_rate", "scored_coverage", "pass_rate_planned", "pass_rate_upper"):
        assert 0.0 <= row[f"{rate}_ci_low"] < row[rate] < row[f"{rate}_ci_high"] <= 1.0
    # pass_rate_scored's is withheld with 3 cases (the skewness rule; see the test above).
    assert (row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]) == (None, None)


def test_one_case_of_many_trials_has_a_rate_but_no_interval() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a"]}), candidates=["M"], trials=10)
    ledger = pl.DataFrame({"case_id": ["a"] * 10, "trial": list(range(1, 11)), "passed": [1, 0] * 5})
    row = ef.audit(plan, ledger).summary.row(0, named=True)
    assert (row["pass_rate_scored"], row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]) == (
        0.5,
        None,
        None,
    )
    assert (row["pass_rate_scored_se_clustered"], row["mean_score_ci_low"]) == (None, None)


def test_single_trial_rates_keep_the_wilson_interval() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["M"])
    row = ef.audit(plan, pl.DataFrame({"case_id": ["a", "b", "c"], "passed": [1, 1, 0]})).summary.row(0, named=True)
    z = 1.959963984540054
    assert (row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]) == tuple(
        pytest.approx(v) for v in wilson(2 / 3, 3, z)
    )
    assert (row["design_effect"], row["icc"], row["effective_n"]) == (1.0, None, 3.0)


def test_header_only_has_no_intervals_for_undefined_rates() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a"]}), candidates=["M"])
    row = ef.audit(plan, pl.DataFrame(schema={"case_id": pl.String, "passed": pl.Int64})).summary.row(0, named=True)
    assert (row["pass_rate_scored"], row["pass_rate_scored_ci_low"], row["pass_rate_scored_se_clustered"]) == (
        None,
        None,
        None,
    )
    # One planned case: scored_coverage is 0 but has no interval (SPEC §4: fewer than two cases).
    assert (row["scored_coverage"], row["scored_coverage_ci_low"], row["mean_score"]) == (0.0, None, None)


def test_numeric_scores_mean_with_same_denominators() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["M"])
    ledger = pl.DataFrame({"case_id": ["a", "b", "c"], "score": [0.9, 0.4, 0.2]})
    no_threshold = ef.audit(plan, ledger, grade="numeric").summary.row(0, named=True)
    assert (no_threshold["scored"], no_threshold["scored_coverage"]) == (3, 0.75)
    assert no_threshold["mean_score"] == pytest.approx(0.5)
    # No threshold: no unit passed or failed, so there is no count of either (null, not 0) and no pass rate.
    assert (
        no_threshold["passed"],
        no_threshold["failed"],
        no_threshold["pass_rate_scored"],
        no_threshold["pass_rate_upper"],
    ) == (None, None, None, None)
    with_threshold = ef.audit(plan, ledger, grade="numeric", pass_threshold=0.4).summary.row(0, named=True)
    assert (with_threshold["passed"], with_threshold["failed"]) == (2, 1)
    assert with_threshold["pass_rate_scored"] == pytest.approx(2 / 3)
    assert with_threshold["pass_rate_upper"] == pytest.approx(3 / 4)


def test_nothing_scored_has_pass_rates_only_when_the_grading_gives_pass_fail() -> None:
    """Every unit ungraded: binary grades bound the full-plan pass rate by [0, 1]; numeric scores without a
    threshold have no pass/fail at all, so no pass rate and no interval, as when something was scored."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["M"])
    ledger = pl.DataFrame(
        {"case_id": ["a", "b"], "exec_status": ["completed"] * 2, "score_status": ["judge_error"] * 2}
    )
    rates = ("scored", "pass_rate_scored", "pass_rate_planned", "pass_rate_upper", "pass_rate_upper_ci_low")
    binary = ef.audit(plan, ledger).summary.select(rates).row(0)
    assert binary[:4] == (0, None, 0.0, 1.0)
    assert binary[4] is not None
    for options in ({"grade": "numeric"}, {"grade": "numeric", "score_range": (0.0, 10.0)}):
        assert ef.audit(plan, ledger, **options).summary.select(rates).row(0) == (0, None, None, None, None)
    threshold = ef.audit(plan, ledger, grade="numeric", pass_threshold=0.5).summary.select(rates).row(0)
    assert threshold[:4] == (0, None, 0.0, 1.0)


def test_funnel_without_declared_pass_fail_keeps_the_exports_own() -> None:
    """pass_fail=False: a group with nothing scored has no pass rate; one whose scored units carry a pass or
    fail (an export's own verdict) keeps its rates."""
    units = pl.LazyFrame(
        {"candidate": ["A", "A", "B", "B"], "outcome": ["judge_failed", "missing", "passed", "missing"]}
    )
    got = ef.funnel(units, pass_fail=False).select(
        "candidate", "pass_rate_scored", "pass_rate_planned", "pass_rate_upper"
    )
    assert got.collect().rows() == [("A", None, None, None), ("B", 1.0, 0.5, 1.0)]
    declared = ef.funnel(units).select("pass_rate_planned", "pass_rate_upper").collect().rows()
    assert declared == [(0.0, 1.0), (0.5, 1.0)]


def test_mean_score_interval_lies_inside_the_score_range_by_construction() -> None:
    # Cases a (score 0.0) and b (0.2): mean 0.1, CR1 se = sqrt(2 · (0.1² + 0.1²)) / 2 = 0.1 (t with 1 df).
    # On w = (x − low) / width the variance bound is w̄(1 − w̄): n_eff = w̄(1 − w̄) / (se / width)².
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["M"])
    ledger = pl.DataFrame({"case_id": ["a", "b"], "score": [0.0, 0.2]})
    for low, high in ((0.0, 1.0), (-1.0, 1.0)):
        width = high - low
        w = (0.1 - low) / width
        n_eff = w * (1 - w) / (0.1 / width) ** 2
        expected = tuple(low + width * v for v in wilson(w, n_eff, T1))
        row = ef.audit(plan, ledger, grade="numeric", score_range=(low, high)).summary.row(0, named=True)
        assert row["mean_score"] == pytest.approx(0.1)
        assert row["mean_score_se_clustered"] == pytest.approx(0.1)
        assert (row["mean_score_ci_low"], row["mean_score_ci_high"]) == tuple(pytest.approx(v) for v in expected)
        assert low < row["mean_score_ci_low"] < 0.1 < row["mean_score_ci_high"] < high


def test_an_all_pass_mean_score_has_an_interval_of_positive_width() -> None:
    # Two cases × two trials, all pass: no spread seen, so each case counts as one observation (n_eff = 2);
    # Wilson at p = 1 with t(1): low = 1 / (1 + t² / 2). score_range bounds numeric scores only.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["M"], trials=2)
    ledger = pl.DataFrame({"case_id": ["a", "a", "b", "b"], "trial": [1, 2, 1, 2], "passed": [1, 1, 1, 1]})
    row = ef.audit(plan, ledger, score_range=(0.2, 0.8)).summary.row(0, named=True)
    assert row["mean_score"] == 1.0
    assert row["mean_score_ci_low"] == pytest.approx(1 / (1 + T1**2 / 2))
    assert row["mean_score_ci_high"] == 1.0
    # pass_rate_scored's clustered interval is withheld: 2 cases with no spread (g1 = 0) are not more than 28.
    assert row["pass_rate_scored_ci_low"] is None
    assert row["pass_rate_scored_ci_withheld"].startswith("no interval: Cochran's rule as refined by Sugden")


@pytest.mark.parametrize(
    ("reducer", "rate"),
    [
        ("mean", (1 + 2 / 3 + 0) / 3),
        ("any", 2 / 3),
        ("all", 1 / 3),
        ("majority", 2 / 3),
        ("at_least:3", 1 / 3),
        # Inspect's names for the same reductions over pass/fail trials, recorded as given.
        ("max", 2 / 3),
        ("mode", 2 / 3),
        ("at_least_3", 1 / 3),
        # median of a's 1,1,1, b's 1,1,0 and c's 0,0,0: 1, 1, 0.
        ("median", 2 / 3),
        # pass@2 from n = 3 trials, 1 − C(n − c, 2) / C(3, 2): a 1 − 0/3, b (c = 2) 1 − 0/3, c 1 − 3/3.
        ("pass_at:2", 2 / 3),
        # pass@1 is the case's fraction of passes: the mean reducer's rate.
        ("pass_at_1", (1 + 2 / 3 + 0) / 3),
    ],
)
def test_case_level_rate_beside_the_trial_level_one(reducer: str, rate: float) -> None:
    # Fully scored cases: a 3/3, b 2/3, c 0/3; d has two missing trials and is left out of the case-level rate.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["M"], trials=3)
    rows = [("a", t, 1) for t in (1, 2, 3)] + [("b", 1, 1), ("b", 2, 1), ("b", 3, 0)] + [("c", t, 0) for t in (1, 2, 3)]
    rows += [("d", 1, 1)]
    ledger = pl.DataFrame(rows, schema=["case_id", "trial", "passed"], orient="row")
    row = ef.audit(plan, ledger, reducer=reducer).summary.row(0, named=True)
    recorded = {"at_least_3": "at_least:3", "pass_at_1": "pass_at:1"}.get(reducer, reducer)
    assert (row["case_reducer"], row["cases_scored"]) == (recorded, 3)
    assert row["case_pass_rate"] == pytest.approx(rate)
    assert row["pass_rate_scored"] == pytest.approx(6 / 10)  # the trial-level rate is unchanged
    assert 0.0 <= row["case_pass_rate_ci_low"] < row["case_pass_rate"] < row["case_pass_rate_ci_high"] <= 1.0
    if reducer not in ("mean", "median", "pass_at:2", "pass_at_1"):  # cases are independent: Wilson over 3 cases
        assert (row["case_pass_rate_ci_low"], row["case_pass_rate_ci_high"]) == tuple(
            pytest.approx(v) for v in wilson(rate, 3, 1.959963984540054)
        )


def test_case_level_rate_about_fixed_cases_has_the_trials_own_variance() -> None:
    # issue 41 item 2: under cases="fixed" the case-level rate's interval is about these cases only. Fully scored
    # cases a 3/3, b 2/3, c 0/3 (d is left out): rate (1 + 2/3 + 0)/3 = 5/9. Only b's trials vary: s² = (2 − 4/3)/2
    # = 1/3, its fraction varies by s²/3 = 1/9, so Var = (1/9)/3² = 1/81 and n_eff = (5/9)(4/9)·81 = 20, with the
    # t quantile of Σ (3 − 1) = 6 degrees of freedom.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["M"], trials=3)
    rows = [("a", t, 1) for t in (1, 2, 3)] + [("b", 1, 1), ("b", 2, 1), ("b", 3, 0)] + [("c", t, 0) for t in (1, 2, 3)]
    ledger = pl.DataFrame([*rows, ("d", 1, 1)], schema=["case_id", "trial", "passed"], orient="row")
    row = ef.audit(plan, ledger, cases="fixed").summary.row(0, named=True)
    assert row["case_pass_rate"] == pytest.approx(5 / 9)
    t6 = 2.446911851144969  # t quantile, 6 degrees of freedom, 97.5%
    low, high = wilson(5 / 9, 20, t6)
    assert (row["case_pass_rate_ci_low"], row["case_pass_rate_ci_high"]) == (pytest.approx(low), pytest.approx(high))
    # another reducer's case outcome has no estimated trial-noise variance about fixed cases: no interval
    other = ef.audit(plan, ledger, cases="fixed", reducer="any").summary.row(0, named=True)
    assert (other["case_pass_rate"], other["case_pass_rate_ci_low"], other["case_pass_rate_ci_high"]) == (
        pytest.approx(2 / 3),
        None,
        None,
    )


@pytest.mark.parametrize(
    "reducer", ["at_least:0", "at_least:\uff12", "at_least:-1", "at_least: 2", "ANY", "pass_at_k", "min", "best_of"]
)
def test_an_unknown_reducer_is_a_value_error(reducer: str) -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a"]}), candidates=["M"])
    with pytest.raises(ValueError, match="reducer must be mean, any, all, majority, median, at_least:K or pass_at:K"):
        ef.audit(plan, pl.DataFrame({"case_id": ["a"], "passed": [1]}), reducer=reducer)


def test_pass_at_k_needs_k_trials_in_every_case() -> None:
    # pass@k is estimated from k of a case's trials: a plan of 2 trials per case cannot estimate pass@3.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a"]}), candidates=["M"], trials=2)
    ledger = pl.DataFrame({"case_id": ["a", "a"], "trial": [1, 2], "passed": [1, 0]})
    with pytest.raises(ValueError, match=r"^reducer 'pass_at:3' estimates pass@3 from 3 trials of each case, but a"):
        ef.audit(plan, ledger, reducer="pass_at_3")


def test_at_least_k_is_recorded_without_leading_zeros() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["M"], trials=2)
    ledger = pl.DataFrame({"case_id": ["a", "a", "b", "b"], "trial": [1, 2, 1, 2], "passed": [1, 1, 1, 0]})
    report = ef.audit(plan, ledger, reducer="at_least:02")
    assert report.meta["case_reducer"] == "at_least:2"
    assert report.summary.select("case_reducer", "case_pass_rate").row(0) == ("at_least:2", 0.5)


def test_one_trial_per_case_gives_the_case_level_rate_the_trial_level_interval() -> None:
    """Orbit Desk B (3/4, one trial per case): the case-level rate is the same 0/1 outcomes, so the same Wilson
    interval [0.301, 0.954], not a second, t(3)-based one for the same numbers (it was [0.131, 0.984])."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["B"])
    row = ef.audit(plan, pl.DataFrame({"case_id": ["a", "b", "c", "d"], "passed": [1, 1, 1, 0]})).summary.row(
        0, named=True
    )
    wilson_b = tuple(pytest.approx(v) for v in wilson(0.75, 4, 1.959963984540054))
    assert (row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]) == wilson_b
    assert (row["case_pass_rate"], row["case_pass_rate_ci_low"], row["case_pass_rate_ci_high"]) == (0.75, *wilson_b)
    assert round(row["case_pass_rate_ci_low"], 3) == 0.301 and round(row["case_pass_rate_ci_high"], 3) == 0.954


# The user's repro (plan2.csv, red2.csv): q1 passes both its trials, q2 one of two.
REPRO_PLAN = pl.DataFrame({"case_id": ["q1", "q2"]})
REPRO_LEDGER = pl.DataFrame(
    {"candidate": ["A"] * 4, "case_id": ["q1", "q1", "q2", "q2"], "trial": [1, 2, 1, 2], "passed": [1, 1, 1, 0]}
)


def test_at_least_k_above_every_cases_trials_is_refused_before_the_ledger_is_read() -> None:
    # No case can pass at_least:3 with 2 planned trials: case_pass_rate would be 0 whatever the grades.
    plan = ef.Plan.from_frame(REPRO_PLAN, candidates=["A"], trials=2)
    message = (
        "reducer 'at_least:3' needs 3 passed trials in a case, but the plan has at most 2 trial(s) per case: "
        "no case could ever pass (use k <= 2, or 'all')"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ef.audit(plan, REPRO_LEDGER, reducer="at_least:3")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):  # refused before any file is opened
        ef.audit(plan, "no-such-ledger.csv", reducer="at_least:3")


def test_at_least_k_within_the_planned_trials_is_audited_without_a_note() -> None:
    plan = ef.Plan.from_frame(REPRO_PLAN, candidates=["A"], trials=2)
    report = ef.audit(plan, REPRO_LEDGER, reducer="at_least:2")
    row = report.summary.row(0, named=True)
    assert (row["case_reducer"], row["cases_scored"], row["case_pass_rate"]) == ("at_least:2", 2, 0.5)
    assert report.problems.height == 0


def units_table_plan() -> tuple[ef.Plan, pl.DataFrame]:
    """A units table: A plans q1 × 3 trials, q2 × 2, q3 × 1; B plans q1, q2, q3 × 1 trial; every unit passes."""
    units = pl.DataFrame(
        {
            "candidate": ["A"] * 6 + ["B"] * 3,
            "case_id": ["q1", "q1", "q1", "q2", "q2", "q3", "q1", "q2", "q3"],
            "trial": [1, 2, 3, 1, 2, 1, 1, 1, 1],
        }
    )
    return ef.Plan.from_frame(units), units.with_columns(pl.lit(1).alias("passed"))


def test_cases_planning_fewer_trials_than_at_least_k_are_noted_per_candidate() -> None:
    plan, ledger = units_table_plan()
    report = ef.audit(plan, ledger, reducer="at_least:2")
    notes = report.problems.select("kind", "candidate", "detail", "refusing").rows()
    assert notes == [
        (
            "reducer_unreachable",
            "A",
            "1 of 3 planned cases of A plan fewer than 2 trials (fewest 1): they can never pass 'at_least:2', "
            "so case_pass_rate counts them as failing",
            False,
        ),
        (
            "reducer_unreachable",
            "B",
            "every one of the 3 planned cases of B plan fewer than 2 trials (fewest 1): they can never pass "
            "'at_least:2', so case_pass_rate counts them as failing",
            False,
        ),
    ]
    rates = report.summary.select("candidate", "cases_scored", "case_pass_rate").rows()
    assert rates == [("A", 3, pytest.approx(2 / 3)), ("B", 3, 0.0)]


def test_at_least_k_above_a_units_tables_largest_trials_is_refused() -> None:
    plan, ledger = units_table_plan()
    with pytest.raises(ValueError, match=re.escape("but the plan has at most 3 trial(s) per case")):
        ef.audit(plan, ledger, reducer="at_least:4")
    assert ef.audit(plan, ledger, reducer="at_least:1").problems.height == 0
