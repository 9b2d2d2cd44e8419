"""Exact-value tests for evalframe.stats.clustered and .paired, with the arithmetic written out (issue 18)."""

from __future__ import annotations

import math

import polars as pl
import pytest

import evalframe as ef
from evalframe.stats import (
    bounded_mean_interval,
    critical_value,
    paired_mean_difference,
    paired_rate_difference,
    rate_interval,
)

Z = 1.959963984540054
T = {1: 12.706204736174698, 2: 4.302652729911275, 3: 3.182446305284263, 4: 2.7764451051977934, 9: 2.2621571627409915}


def wilson(p: float, n: float, q: float) -> tuple[float, float]:
    q2n = q * q / n
    centre = (p + q2n / 2) / (1 + q2n)
    half = q / (1 + q2n) * math.sqrt(p * (1 - p) / n + q2n / (4 * n))
    return centre - half, centre + half


def test_critical_values_are_t_with_cases_minus_one_degrees_of_freedom() -> None:
    assert critical_value(0.95, None) == pytest.approx(Z)
    for g in (2, 3, 4, 10):
        assert critical_value(0.95, g) == pytest.approx(T[g - 1])
    with pytest.raises(ValueError, match="at least 2 clusters"):
        critical_value(0.95, 1)


def test_one_unit_per_case_is_the_wilson_interval() -> None:
    est = rate_interval([1, 1, 1, 0], [1, 1, 1, 1])
    assert (est.method, est.rate, est.design_effect, est.effective_n) == ("wilson", 0.75, 1.0, 4.0)
    assert (est.ci_low, est.ci_high) == tuple(pytest.approx(v) for v in wilson(0.75, 4, Z))
    assert est.se_clustered == pytest.approx(math.sqrt(0.75 * 0.25 / 4))


def test_repeated_trials_widen_the_interval_through_the_effective_sample_size() -> None:
    # 4 cases × 5 trials, passes 5, 5, 0, 0: p = 0.5, residual totals ±2.5, CR1 V = 4/3 · 25 / 400 = 1/12;
    # binomial 0.25 / 20: design effect 1/12 / (1/80) = 6.67 → n_eff = 3, t(3).
    est = rate_interval([5, 5, 0, 0], [5, 5, 5, 5])
    assert est.method == "wilson_clustered"
    assert est.se_clustered == pytest.approx(math.sqrt(1 / 12))
    assert est.design_effect == pytest.approx(20 / 3)
    assert est.effective_n == pytest.approx(3.0)
    assert (est.ci_low, est.ci_high) == tuple(pytest.approx(v) for v in wilson(0.5, 3.0, T[3]))
    # Trials that agree across cases carry the information of independent units: the design effect is 1.
    flat = rate_interval([3, 2, 3, 2], [5, 5, 5, 5])
    assert flat.design_effect == 1.0 and flat.effective_n == 20.0


@pytest.mark.parametrize(("passes", "units"), [([10], [10]), ([0], [10]), ([3], [7])])
def test_one_case_has_no_interval(passes: list[int], units: list[int]) -> None:
    est = rate_interval(passes, units)
    assert (est.method, est.ci_low, est.ci_high, est.se_clustered) == ("none", None, None, None)
    assert est.rate == passes[0] / units[0]


@pytest.mark.parametrize("passes", [[3, 3], [0, 0]])
def test_all_pass_and_all_fail_intervals_are_not_zero_width(passes: list[int]) -> None:
    est = rate_interval(passes, [3, 3])
    # No spread seen: each case one observation (n_eff = 2), t(1).
    assert est.effective_n == 2.0
    expected = (1 / (1 + T[1] ** 2 / 2), 1.0) if passes[0] == 3 else (0.0, 1 - 1 / (1 + T[1] ** 2 / 2))
    assert (est.ci_low, est.ci_high) == tuple(pytest.approx(v) for v in expected)


def test_one_case_has_no_interval_whatever_its_units() -> None:
    """SPEC §4: with fewer than two cases there is no interval, for one unit as for several."""
    for successes, units in (([1], [1]), ([0], [1]), ([3], [5])):
        est = rate_interval(successes, units)
        assert (est.rate, est.ci_low, est.ci_high, est.se_clustered, est.method) == (
            successes[0] / units[0],
            None,
            None,
            None,
            "none",
        )


def test_two_single_unit_cases_have_a_wilson_interval_not_zero_width() -> None:
    est = rate_interval([1, 1], [1, 1])
    assert (est.method, est.ci_low, est.ci_high) == ("wilson", pytest.approx(2 / (2 + Z**2)), 1.0)


def test_bounded_means_stay_inside_their_range_by_construction() -> None:
    # Scores near the top of [0, 1]: a normal interval would pass 1.
    est = bounded_mean_interval([0.99, 0.98, 1.0, 0.6], [1, 1, 1, 1])
    assert 0.0 <= est.ci_low < est.rate < est.ci_high <= 1.0
    assert est.rate == pytest.approx(0.8925)


def test_large_score_ranges_do_not_overflow() -> None:
    # Four cases scoring 0, 2e6, 0, 2e6 in [0, 2e6]: mean 1e6, residuals ±1e6,
    # CR1 se = sqrt(4/3 · 4e12) / 4 (it was 351,477 by integer overflow where 707,107 was right).
    est = bounded_mean_interval([0.0, 2e6, 0.0, 2e6], [1, 1, 1, 1], low=0.0, high=2e6)
    assert est.rate == 1e6
    assert est.se_clustered == pytest.approx(math.sqrt(4 / 3 * 4e12) / 4)
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["M"])
    ledger = pl.DataFrame({"case_id": ["a", "b", "c", "d"], "score": [0.0, 2e6, 0.0, 2e6]})
    row = ef.audit(plan, ledger, grade="numeric", score_range=(0.0, 2e6)).summary.row(0, named=True)
    assert row["mean_score_se_clustered"] == pytest.approx(math.sqrt(4 / 3 * 4e12) / 4)


def test_paired_differences_with_one_trial_per_case_are_newcombe() -> None:
    # 10 pairs: both pass 4, only a 3, only b 1, neither 2. p_a 0.7, p_b 0.5, d 0.2.
    a = [1] * 4 + [1] * 3 + [0] * 1 + [0] * 2
    b = [1] * 4 + [0] * 3 + [1] * 1 + [0] * 2
    t = paired_rate_difference(a, b, range(10))
    assert (t.method, t.n_clusters) == ("newcombe", 10)
    assert t.difference == pytest.approx(0.2)
    la, ua = wilson(0.7, 10, Z)
    lb, ub = wilson(0.5, 10, Z)
    ra, rb = [x - 0.7 for x in a], [x - 0.5 for x in b]
    r = sum(x * y for x, y in zip(ra, rb, strict=True)) / math.sqrt(sum(x * x for x in ra) * sum(y * y for y in rb))
    low = 0.2 - math.sqrt((0.7 - la) ** 2 - 2 * r * (0.7 - la) * (ub - 0.5) + (ub - 0.5) ** 2)
    high = 0.2 + math.sqrt((ua - 0.7) ** 2 - 2 * r * (ua - 0.7) * (0.5 - lb) + (0.5 - lb) ** 2)
    assert (t.ci_low, t.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert t.correlation == pytest.approx(r)


def test_paired_differences_over_trials_are_clustered_by_case_and_bounded() -> None:
    # Every pair won by a, 3 cases × 4 trials: d = 1 everywhere; no spread (n_eff = 3), t(2), and the
    # interval stays inside [−1, 1] (a normal interval on a degenerate SE gave [+1, +1] or left the range).
    t = paired_rate_difference([1] * 12, [0] * 12, [c for c in "abc" for _ in range(4)])
    assert (t.method, t.difference) == ("wilson_clustered", 1.0)
    low = -1 + 2 * (1 / (1 + T[2] ** 2 / 3))
    assert (t.ci_low, t.ci_high) == (pytest.approx(low), 1.0)
    for a, b in (([1, 1, 0, 1], [0, 0, 0, 1]), ([1, 0, 1, 1], [0, 1, 0, 0])):
        t = paired_rate_difference(a * 3, b * 3, [c for c in "abc" for _ in range(4)])
        assert -1.0 <= t.ci_low <= t.difference <= t.ci_high <= 1.0


def test_paired_mean_difference_has_no_interval_with_one_case() -> None:
    t = paired_mean_difference([0.9, 0.8], [0.1, 0.2], ["q", "q"], width=1.0)
    assert (t.method, t.difference, t.ci_low) == ("none", pytest.approx(0.7), None)


def test_fixed_cases_take_the_within_case_variance_with_a_pooled_one_for_single_units() -> None:
    # Three cases (issue 41, --cases fixed): 2 of 4, 1 of 2, 1 of 1; p = 4/7.
    # Within-case SS: 4·(1/2)(1/2) = 1 and 2·(1/2)(1/2) = 1/2, so s² = 1/3 and 1/2 (unbiased);
    # the single unit takes the pooled s² = (1 + 1/2) / (3 + 1) = 3/8.
    # V = (4·1/3 + 2·1/2 + 1·3/8) / 7² = (65/24) / 49 = 65/1176; n_eff = p(1 − p)/V; t with 3 + 1 = 4 df.
    est = rate_interval([2, 1, 1], [4, 2, 1], target="fixed")
    p, v = 4 / 7, 65 / 1176
    assert est.method == "wilson_fixed"
    assert est.se_clustered**2 == pytest.approx(v)
    assert est.effective_n == pytest.approx(p * (1 - p) / v)
    assert est.design_effect == pytest.approx(7 * v / (p * (1 - p)))
    assert (est.ci_low, est.ci_high) == tuple(pytest.approx(x) for x in wilson(p, p * (1 - p) / v, T[4]))
    # The same values as paired differences against an all-fail baseline: the same variance, on [−1, 1].
    a = [1, 1, 0, 0, 1, 0, 1]
    test = paired_rate_difference(a, [0] * 7, ["x"] * 4 + ["y"] * 2 + ["z"], target="fixed")
    assert (test.method, test.difference, test.skew) == ("wilson_fixed", pytest.approx(p), None)
    assert test.se_clustered**2 == pytest.approx(v)  # through w = (d + 1)/2 and back: the variance of d


def test_fixed_cases_need_a_case_of_two_units_or_more() -> None:
    # One trial per case: trial noise cannot be told apart from the cases, so there is no interval.
    assert rate_interval([1, 0, 1], [1, 1, 1], target="fixed").method == "none"
    assert paired_rate_difference([1, 0, 1], [0, 0, 1], ["a", "b", "c"], target="fixed").ci_low is None


def test_a_paired_difference_is_the_same_number_every_time_it_is_computed() -> None:
    # 20,000 seeded pairs in 3,000 clusters: the cluster sums were once added in hash-table order, which moved
    # the last digits from call to call (5 distinct results in 30 calls); clusters are now in first-seen order.
    import random

    rng = random.Random(1)
    a = [float(rng.random() < 0.6) for _ in range(20_000)]
    b = [float(rng.random() < 0.5) for _ in range(20_000)]
    clusters = [rng.randrange(3_000) for _ in range(20_000)]
    first = paired_rate_difference(a, b, clusters)
    assert all(paired_rate_difference(a, b, clusters) == first for _ in range(30))
