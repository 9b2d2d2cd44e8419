"""Slices and selective missingness (SPEC §5)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from scipy.optimize import brentq

import evalframe as ef
from evalframe.slices import (
    IndependenceTest,
    binned,
    case_permutation_test,
    case_slices,
    detectable_words,
    holm,
    independence_test,
    missingness_tests,
    selective_flag,
    slice_funnel,
)


def plan_and_ledger(missing_cases: set[str]) -> tuple[ef.Plan, pl.DataFrame]:
    """40 cases, 4 case types × 10; every case present except ``missing_cases``."""
    types = ["qa", "math", "code", "long_context"]
    cases = pl.DataFrame(
        {
            "case_id": [f"c{i:02d}" for i in range(40)],
            "case_type": [types[i // 10] for i in range(40)],
            "input_length": [100 * i for i in range(40)],
        }
    )
    plan = ef.Plan.from_frame(cases, candidates=["A"])
    present = cases.filter(~pl.col("case_id").is_in(sorted(missing_cases)))
    ledger = present.select(pl.lit("A").alias("candidate"), "case_id", (pl.int_range(pl.len()) % 2).alias("passed"))
    return plan, ledger


def test_missing_units_concentrated_in_one_slice_are_flagged() -> None:
    # Every missing unit sits in long_context (cases 30..37): 8 of 10 long_context cases missing.
    plan, ledger = plan_and_ledger({f"c{i}" for i in range(30, 38)})
    report = ef.audit(plan, ledger, slices=["case_type"])
    test = report.missingness.row(0, named=True)
    assert (test["cases"], test["planned"], test["missing"], test["ungraded"], test["n_slices"]) == (40, 40, 8, 8, 4)
    assert (test["test"], test["test_ungraded"], test["correction"]) == (
        "welch_permutation",
        "welch_permutation",
        "holm",
    )
    # H = 39·(Σ n_s ȳ_s² − Nȳ²)/SST = 39·(10·0.8² − 40·0.2²)/(40·0.2·0.8) = 39·4.8/6.4 = 29.25.
    assert test["statistic"] == pytest.approx(29.25, rel=1e-12)
    # Ungraded units are exactly the missing ones: one test, counted once (Holm over one test: unadjusted).
    assert test["p_value"] == test["p_value_ungraded"] == test["p_adjusted"] == test["p_adjusted_ungraded"]
    assert test["p_value"] == 0.0001  # (0 + 1)/(9999 + 1): no permutation as extreme
    assert (test["selective"], test["selective_ungraded"]) == (True, True)
    assert test["stands_out"] == test["stands_out_ungraded"] == ["long_context"]
    flag = report.summary.get_column("selective_missingness").item()
    assert flag == (
        "case_type: ungraded units, all of them absent rows, concentrate in long_context (Holm-adjusted p=0.0001)"
    )
    lc = report.slices.filter(pl.col("slice_value") == "long_context").row(0, named=True)
    assert (lc["planned"], lc["missing"], lc["missing_rate"], lc["missing_ratio"]) == (10, 8, 0.8, 4.0)


def test_evenly_spread_missingness_is_not_flagged() -> None:
    # Two missing per case type: every permutation ties or beats the observed table, so p = 1 exactly.
    plan, ledger = plan_and_ledger({"c00", "c01", "c10", "c11", "c20", "c21", "c30", "c31"})
    report = ef.audit(plan, ledger, slices=["case_type"])
    test = report.missingness.row(0, named=True)
    assert test["selective"] is False
    assert test["statistic"] == 0.0
    assert test["p_value"] == 1.0
    assert test["stands_out"] == []
    assert report.summary.get_column("selective_missingness").item() is None
    assert report.slices.get_column("missing_rate").to_list() == [0.2, 0.2, 0.2, 0.2]


def units_of(
    outcomes: dict[str, list[str]], trials: int, candidate: str = "A", column: str = "case_type"
) -> pl.DataFrame:
    """Units of ``trials`` trials per case; ``outcomes[slice]`` lists each case's trial outcomes, flattened."""
    rows = []
    for value, flat in outcomes.items():
        for k, outcome in enumerate(flat):
            rows.append((candidate, f"{value}{k // trials:03d}", k % trials + 1, value, outcome))
    return pl.DataFrame(rows, schema=["candidate", "case_id", "trial", column, "outcome"], orient="row")


def test_whole_cases_dropping_out_are_counted_once() -> None:
    # 4 slices × 10 cases × 5 trials; one whole case absent in each of three slices, three in long_context.
    # Units: 15 of 50 missing in long_context vs 5 of 50 elsewhere (the unit-level chi-square: p = 0.008);
    # cases: 3 of 10 vs 1 of 10, well within chance.
    def cases(absent: int) -> list[str]:
        return ["missing"] * 5 * absent + ["passed"] * 5 * (10 - absent)

    units = units_of({"qa": cases(1), "math": cases(1), "code": cases(1), "long_context": cases(3)}, trials=5)
    unit_level = missingness_tests_old_style(units)
    assert unit_level.test == "chi_square" and unit_level.p_value == pytest.approx(0.008234217622652893, rel=1e-9)
    test = missingness_tests(case_slices(units, ["case_type"])).row(0, named=True)
    assert (test["cases"], test["planned"], test["missing"]) == (40, 200, 6 * 5)
    # H = 39·(Σ n_s ȳ_s² − Nȳ²)/SST with ȳ_s = 0.1, 0.1, 0.1, 0.3 and ȳ = 0.15: 39·(1.2 − 0.9)/5.1.
    assert test["statistic"] == pytest.approx(39 * 0.3 / 5.1, rel=1e-12)
    assert test["p_value"] > 0.5 and test["selective"] is False and test["stands_out"] == []


def missingness_tests_old_style(units: pl.DataFrame) -> IndependenceTest:
    table = slice_funnel(units.drop("case_id", "trial"), ["case_type"]).select("missing", "planned").to_numpy()
    return independence_test(np.column_stack([table[:, 0], table[:, 1] - table[:, 0]]))


def test_timeouts_and_judge_errors_are_ungraded_and_tested() -> None:
    # Every long_context case timed out or its judge failed; no row is absent.
    graded = ["passed", "failed"] * 10
    failed = ["exec_failed", "judge_failed"] * 10
    units = units_of({"code": graded, "long_context": failed, "math": graded, "qa": graded}, trials=2)
    test = missingness_tests(case_slices(units, ["case_type"])).row(0, named=True)
    assert (test["ungraded"], test["missing"]) == (20, 0)
    assert (test["test"], test["p_value"], test["selective"], test["stands_out"]) == ("none", None, False, [])
    assert test["test_ungraded"] == "welch_permutation"
    assert test["statistic_ungraded"] == 39.0  # all the variance is between slices: H = N − 1
    assert test["p_value_ungraded"] == test["p_adjusted_ungraded"] == 0.0001
    assert test["selective_ungraded"] is True and test["stands_out_ungraded"] == ["long_context"]
    flag = selective_flag(missingness_tests(case_slices(units, ["case_type"]))).rows()
    assert flag == [("A", "case_type: ungraded units concentrate in long_context (Holm-adjusted p=0.0001)")]


def test_ungraded_and_missing_tests_are_reported_separately() -> None:
    # qa: 8 of 10 cases lost every row; long_context: 8 of 10 cases timed out; code, math: all graded.
    lost = ["missing"] * 16 + ["passed"] * 4
    timed = ["exec_failed"] * 16 + ["passed"] * 4
    ok = ["passed"] * 20
    units = units_of({"code": ok, "long_context": timed, "math": ok, "qa": lost}, trials=2)
    test = missingness_tests(case_slices(units, ["case_type"])).row(0, named=True)
    assert (test["ungraded"], test["missing"]) == (32, 16)
    assert test["stands_out_ungraded"] == ["long_context", "qa"]
    assert test["stands_out"] == ["qa"]
    # Two distinct tests in the family: Holm multiplies the smaller p by 2 and the larger by 1 (monotone).
    assert test["p_adjusted"] == pytest.approx(min(1.0, 2 * min(test["p_value"], test["p_value_ungraded"])))
    flag = selective_flag(missingness_tests(case_slices(units, ["case_type"]))).item(0, 1)
    assert flag == (
        "case_type: ungraded units concentrate in long_context, qa (Holm-adjusted p=0.0002); "
        "case_type: absent rows concentrate in qa (Holm-adjusted p=0.0002)"
    )


def test_holm_adjusts_across_candidates_and_columns() -> None:
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.5, 0.001]) == [0.5, 0.002]
    assert holm([]) == []
    # The same selective table for two candidates: each p is doubled by Holm over the two tests.
    lost = ["missing"] * 6 + ["passed"] * 14
    ok = ["passed"] * 20
    one = units_of({"x": lost, "y": ok}, trials=1, candidate="A")
    both = pl.concat([one, units_of({"x": lost, "y": ok}, trials=1, candidate="B")])
    alone = missingness_tests(case_slices(one, ["case_type"])).row(0, named=True)
    together = missingness_tests(case_slices(both, ["case_type"]))
    assert together.get_column("p_value").to_list() == [alone["p_value"]] * 2
    assert together.get_column("p_adjusted").to_list() == [min(1.0, 2 * alone["p_value"])] * 2


def test_flagged_test_always_names_a_slice() -> None:
    # Rates 0.6, 0.6, 0.6, 0.0 over 10 cases each: none is twice the overall 0.45, so the highest are named.
    lost = ["missing"] * 6 + ["passed"] * 4
    ok = ["passed"] * 10
    units = units_of({"a": lost, "b": lost, "c": lost, "d": ok}, trials=1)
    test = missingness_tests(case_slices(units, ["case_type"])).row(0, named=True)
    assert test["selective"] is True
    assert test["stands_out"] == ["a", "b", "c"]
    assert (
        selective_flag(missingness_tests(case_slices(units, ["case_type"])))
        .item(0, 1)
        .endswith("concentrate in a, b, c (Holm-adjusted p=0.015)")
    )


def test_unflagged_tests_name_nothing_and_leave_no_text() -> None:
    units = units_of({"x": ["missing"] + ["passed"] * 9, "y": ["missing"] + ["passed"] * 9}, trials=1)
    tests = missingness_tests(case_slices(units, ["case_type"]))
    assert tests.select("selective", "selective_ungraded", "stands_out", "stands_out_ungraded").row(0) == (
        False,
        False,
        [],
        [],
    )
    assert selective_flag(tests).is_empty()


def test_permutation_counts_ties_and_a_tied_table_has_p_one() -> None:
    # Regression (issue 18): scipy's Monte Carlo Fisher–Freeman–Halton test dropped exactly tied tables and
    # flagged p = 0.04 for a table whose exact p is 1. Every slice here has the same rate.
    r = independence_test(np.array([[1, 4], [1, 4], [1, 4]]))
    assert (r.test, r.statistic, r.p_value) == ("permutation_chi_square", 0.0, 1.0)
    tied = case_permutation_test(np.array([[3, 3, 3], [1, 1, 1]]), np.array([0.0, 0.5]))
    assert (tied.test, tied.statistic, tied.p_value) == ("welch_permutation", 0.0, 1.0)


def test_permutation_p_value_matches_the_exact_one() -> None:
    # Two slices of 10 cases, 8 ungraded cases all in one: exact two-sided p = 2·C(10,8)/C(20,8) = 90/125970.
    r = case_permutation_test(np.array([[2, 10], [8, 0]]), np.array([0.0, 1.0]), resamples=200_000, seed=3)
    exact = 90 / 125970
    assert r.p_value == pytest.approx(exact, abs=4 * (exact / 200_000) ** 0.5 + 1 / 200_001)
    # Seeded: the same call gives the same p-value.
    assert case_permutation_test(np.array([[2, 10], [8, 0]]), np.array([0.0, 1.0])).p_value == 0.001


def test_no_case_level_test_without_variation() -> None:
    assert case_permutation_test(np.array([[5, 5]]), np.array([0.0])).test == "none"
    assert case_permutation_test(np.array([[5, 0], [2, 0]]), np.array([0.0, 1.0])).p_value is None


def test_whole_and_partitioned_audits_agree() -> None:
    plan, ledger = plan_and_ledger({f"c{i}" for i in range(30, 38)})
    whole = ef.audit(plan, ledger, slices=["case_type", "input_length"], bins={"input_length": "q4"})
    parts = ef.audit(
        plan, ledger, slices=["case_type", "input_length"], bins={"input_length": "q4"}, partition_by="candidate"
    )
    assert whole.missingness.equals(parts.missingness)
    assert whole.missingness.get_column("p_adjusted").to_list() == [0.0002, 0.0002]


def test_numeric_slice_binned_by_edges_and_quantiles() -> None:
    plan, ledger = plan_and_ledger({f"c{i}" for i in range(30, 38)})
    report = ef.audit(plan, ledger, slices=["input_length"], bins={"input_length": [0, 1000, 2999]})
    got = report.slices.select("slice_value", "planned", "missing").rows()
    # input_length = 100·i: (-inf,0] holds c00; (0,1000] c01..c10; (1000,2999] c11..c29; (2999,inf] c30..c39.
    assert got == [("(-inf, 0]", 1, 0), ("(0, 1000]", 10, 0), ("(1000, 2999]", 19, 0), ("(2999, inf]", 10, 8)]
    quart = ef.audit(plan, ledger, slices=["input_length"], bins={"input_length": "q4"}).slices
    assert quart.get_column("planned").to_list() == [10, 10, 10, 10]
    assert quart.get_column("missing").to_list() == [0, 0, 0, 8]


def test_quantile_bins_count_each_case_once_and_skip_nan() -> None:
    """q<k> cuts the plan's cases, whatever the candidates and trials (the edges once moved with them)."""
    values = [0.01, 0.05, 0.5, 1.5, 2.0, 3.0, 4.0, 9.5]
    cases = pl.DataFrame({"case_id": [f"q{i}" for i in range(1, 9)], "w": values})
    ledger = pl.DataFrame({"candidate": "A", "case_id": ["q1"], "passed": [1]})
    # the 1/3 and 2/3 quantiles of the 8 values, linear interpolation: 0.5 + (1.5 - 0.5)·1/3, 2 + (3 - 2)·2/3
    for candidates, trials in [(["A"], 1), (["A", "B"], 1), (["A"], 3)]:
        plan = ef.Plan.from_frame(cases, candidates=candidates, trials=trials)
        edges = ef.audit(plan, ledger, slices=["w"], bins={"w": "q3"}).meta["bins"]["w"]
        assert edges == pytest.approx([0.5 + 1 / 3, 2.0 + 2 / 3], rel=1e-12)
    # a NaN is no value to cut at: the median of the other 7 is 2.0, and the NaN case has no bin (null)
    nan = cases.with_columns(w=pl.Series([0.01, float("nan"), 0.5, 1.5, 2.0, 3.0, 4.0, 9.5]))
    report = ef.audit(ef.Plan.from_frame(nan, candidates=["A"]), ledger, slices=["w"], bins={"w": "q2"})
    assert report.meta["bins"] == {"w": [2.0]}
    assert report.slices.select("slice_value", "planned").rows() == [("(-inf, 2]", 4), ("(2, inf]", 3), (None, 1)]


@pytest.mark.parametrize("edges", [[], [float("nan")], [40, float("inf")], [10**400], 40, [True, 2], ["40"]])
def test_bin_edges_are_finite_numbers(edges: object) -> None:
    units = pl.DataFrame({"candidate": ["A"], "x": [1.0], "outcome": ["passed"]})
    with pytest.raises(ValueError, match="must be finite numbers, at least one, strictly increasing"):
        binned(units, ["x"], {"x": edges})  # type: ignore[dict-item]


def test_chi_square_when_expected_counts_are_large() -> None:
    table = np.array([[10, 90], [30, 70]])
    three = np.vstack([table, [[20, 80]]])
    r = independence_test(three)
    expected = sps.chi2_contingency(three, correction=False)
    assert (r.test, r.statistic, r.p_value) == ("chi_square", expected.statistic, expected.pvalue)
    two = independence_test(table)
    assert (two.test, two.p_value) == ("fisher_exact", sps.fisher_exact(table).pvalue)


def test_no_test_without_variation() -> None:
    assert independence_test(np.array([[0, 5], [0, 5]])).test == "none"
    assert independence_test(np.array([[3, 2]])).p_value is None


def test_bad_slice_and_bins_are_value_errors() -> None:
    units = pl.DataFrame({"candidate": ["A"], "x": [1], "outcome": ["passed"]})
    with pytest.raises(ValueError, match="not a plan column"):
        binned(units, ["nope"])
    with pytest.raises(ValueError, match="strictly increasing"):
        binned(units, ["x"], {"x": [5, 1]})
    with pytest.raises(ValueError, match="q<k>"):
        binned(units, ["x"], {"x": "deciles"})


def test_missingness_tests_empty_without_slices() -> None:
    assert missingness_tests(case_slices(pl.DataFrame({"candidate": [], "case_id": [], "outcome": []}), [])).is_empty()


def test_a_slice_column_given_twice_is_refused_by_the_library_too() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"], "case_type": ["a"]}), candidates=["A"])
    ledger = pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]})
    with pytest.raises(ValueError, match=r"^slice column\(s\) 'case_type' given more than once$"):
        ef.audit(plan, ledger, slices=["case_type", "case_type"])


def trials_units(long: list[int], short: list[int]) -> pl.DataFrame:
    """Slice ``long``: one-trial cases, ``long[i]`` absent units; slice ``short``: six-trial cases."""
    rows = []
    for value, trials, absent in (("long", 1, long), ("short", 6, short)):
        for k, gone in enumerate(absent):
            rows += [
                ("A", f"{value}{k:02d}", t, value, "missing" if t <= gone else "passed") for t in range(1, trials + 1)
            ]
    return pl.DataFrame(rows, schema=["candidate", "case_id", "trial", "length", "outcome"], orient="row")


def test_cases_with_more_trials_do_not_make_a_slice_selective() -> None:
    # long: 10 one-trial cases, 5 absent (share 0 or 1, mean 0.5); short: 30 six-trial cases, 15 missing one
    # unit and 15 two (shares 1/6 and 1/3, mean 0.25). The shares' spreads differ because the trials do.
    units = trials_units([1] * 5 + [0] * 5, [1] * 15 + [2] * 15)
    test = missingness_tests(case_slices(units, ["length"])).row(0, named=True)
    assert (test["cases"], test["planned"], test["missing"]) == (40, 190, 50)
    # v(1): sample variance of the one-trial shares, 10·0.25/9; v(6): that of the six-trial shares,
    # (1/12)²·30/29 = 0.00718, below the binomial floor p̄(1 − p̄)/6 with p̄ = 12.5/40, so the floor.
    p_bar = 12.5 / 40
    v1, v6 = 10 * 0.25 / 9, max((1 / 12) ** 2 * 30 / 29, p_bar * (1 - p_bar) / 6)
    w = np.array([10 / v1, 30 / v6])
    means = np.array([0.5, 0.25])
    pooled = (w * means).sum() / w.sum()
    welch = float((w * (means - pooled) ** 2).sum())
    assert test["test"] == "welch_permutation"
    assert test["statistic"] == pytest.approx(welch, rel=1e-12)
    assert test["p_value"] >= sps.chi2.sf(welch, 1) > 0.05  # the larger of the permutation and chi-square p
    assert test["selective"] is False and test["stands_out"] == []
    # The unweighted statistic (one pooled variance) calls the same shares selective.
    pairs = np.array([[5, 0], [5, 0], [0, 15], [0, 15]])
    unweighted = case_permutation_test(pairs, np.array([0.0, 1.0, 1 / 6, 1 / 3]), studentized=False)
    # H = 39·(10·0.1875² + 30·0.0625²)/SST, SST = 5·0.6875² + 5·0.3125² + 15·(1/6 − 0.3125)² + 15·(1/3 − 0.3125)².
    sst = 5 * 0.6875**2 + 5 * 0.3125**2 + 15 * (1 / 6 - 0.3125) ** 2 + 15 * (1 / 3 - 0.3125) ** 2
    assert unweighted.statistic == pytest.approx(39 * (10 * 0.1875**2 + 30 * 0.0625**2) / sst, rel=1e-12)
    assert unweighted.p_value == 0.0154  # seeded; flagged at 0.05
    # Detectable shift at alpha 0.05 (one test: the ungraded units are the missing ones): the two-sided
    # z-test's noncentrality, (z + shift/se) with se² = 1/w_long + 1/w_short, solved for 80% power.
    se = float(np.sqrt(1 / w[0] + 1 / w[1]))
    z = sps.norm.isf(0.025)
    shift = brentq(lambda d: sps.norm.sf(z - d / se) + sps.norm.cdf(-z - d / se) - 0.8, 0.0, 2.0)
    assert test["detectable"] == pytest.approx(shift, rel=1e-6)
    assert test["detectable_ungraded"] == test["detectable"]
    assert detectable_words(test["detectable"]) == (
        f"would detect a {100 * shift:.1f}-point shift in one slice (80% power)"
    )


def test_detectable_shift_is_taken_at_alpha_over_the_tests() -> None:
    # The same slices for two candidates: two tests in the Holm family, each detectable at alpha / 2.
    one = trials_units([1] * 5 + [0] * 5, [1] * 15 + [2] * 15)
    both = pl.concat([one, one.with_columns(candidate=pl.lit("B"))])
    alone = missingness_tests(case_slices(one, ["length"])).row(0, named=True)
    together = missingness_tests(case_slices(both, ["length"])).get_column("detectable").to_list()
    assert together[0] == together[1] > alone["detectable"]
    assert together[0] == pytest.approx(
        alone["detectable"] * (sps.norm.isf(0.0125) + sps.norm.isf(0.2)) / (sps.norm.isf(0.025) + sps.norm.isf(0.2)),
        rel=1e-3,
    )


def test_a_level_at_or_above_the_power_detects_any_shift() -> None:
    # At level ≥ power the test rejects with probability ≥ power with no shift at all: 0. The root search
    # between no shift and a large one had no sign change there (--alpha 0.8 exited with scipy's message).
    from evalframe.slices.missingness import detectable_shift

    assert detectable_shift([300.0, 300.0], 0.8) == 0.0
    assert detectable_shift([300.0, 300.0], 0.9) == 0.0
    assert detectable_shift([300.0, 300.0], 0.79) > 0.0


def test_bin_edges_are_checked_before_any_file_is_read() -> None:
    # As q<k> always was: a bad edge list named the missing ledger first, and was reported after reading it.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"], "len": [1, 2]}), candidates=["A"])
    with pytest.raises(ValueError, match=r"^bin edges for 'len' must be finite numbers, .* got \[nan\]$"):
        ef.audit(plan, "no-such-ledger.csv", slices=["len"], bins={"len": [float("nan")]})
