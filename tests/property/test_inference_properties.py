"""Hypothesis invariants of evalframe.stats (clustered, paired): each interval lies in its range, holds its estimate."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from evalframe.stats import bounded_mean_interval, paired_rate_difference, rate_interval

SETTINGS = settings(deadline=None, max_examples=200)
confidences = st.floats(min_value=0.5, max_value=0.999)


@st.composite
def case_counts(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """Per case (successes, units), 1 to 30 cases of 1 to 12 units."""
    units = draw(st.lists(st.integers(1, 12), min_size=1, max_size=30))
    successes = [draw(st.integers(0, m)) for m in units]
    return successes, units


@st.composite
def paired(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    """0/1 outcomes of two sides on the same units, with each unit's case."""
    per_case = draw(st.lists(st.integers(1, 6), min_size=1, max_size=25))
    cluster = [c for c, m in enumerate(per_case) for _ in range(m)]
    a = draw(st.lists(st.integers(0, 1), min_size=len(cluster), max_size=len(cluster)))
    b = draw(st.lists(st.integers(0, 1), min_size=len(cluster), max_size=len(cluster)))
    return a, b, cluster


@SETTINGS
@given(case_counts(), confidences)
def test_rate_intervals_lie_in_0_1_and_hold_the_rate(counts: tuple[list[int], list[int]], confidence: float) -> None:
    successes, units = counts
    est = rate_interval(successes, units, confidence=confidence)
    assert est.rate == sum(successes) / sum(units)
    if est.ci_low is None or est.ci_high is None:
        assert sum(m > 0 for m in units) < 2  # only fewer than two cases (with units) have no interval (SPEC §4)
    else:
        assert 0.0 <= est.ci_low <= est.rate <= est.ci_high <= 1.0
        assert est.ci_high > est.ci_low  # never zero width


@SETTINGS
@given(case_counts(), st.floats(-100, 100), st.floats(0.01, 100), confidences)
def test_bounded_means_lie_in_their_range(
    counts: tuple[list[int], list[int]], low: float, width: float, confidence: float
) -> None:
    successes, units = counts
    high = low + width
    totals = [low * m + width * s for s, m in zip(successes, units, strict=True)]  # values low or high
    est = bounded_mean_interval(totals, units, low=low, high=high, confidence=confidence)
    if est.ci_low is not None and est.ci_high is not None and est.rate is not None:
        assert low - 1e-9 * width <= est.ci_low <= est.rate + 1e-9 * width
        assert est.rate - 1e-9 * width <= est.ci_high <= high + 1e-9 * width


@SETTINGS
@given(paired(), confidences, st.randoms(use_true_random=False))
def test_paired_differences_lie_in_minus_1_1_negate_when_swapped_and_ignore_row_order(
    data: tuple[list[int], list[int], list[int]], confidence: float, rng: random.Random
) -> None:
    a, b, cluster = data
    forward = paired_rate_difference(a, b, cluster, confidence=confidence)
    if forward.ci_low is not None and forward.ci_high is not None:
        assert -1.0 <= forward.ci_low <= forward.difference <= forward.ci_high <= 1.0
    backward = paired_rate_difference(b, a, cluster, confidence=confidence)
    assert backward.difference == -forward.difference
    if forward.ci_low is not None and backward.ci_high is not None and forward.ci_high is not None:
        assert abs(backward.ci_high + forward.ci_low) < 1e-9
    order = list(range(len(a)))
    rng.shuffle(order)
    shuffled = paired_rate_difference(
        [a[i] for i in order], [b[i] for i in order], [cluster[i] for i in order], confidence=confidence
    )
    for got, want in ((shuffled.ci_low, forward.ci_low), (shuffled.ci_high, forward.ci_high)):
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert abs(got - want) < 1e-12
