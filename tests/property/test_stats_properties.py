"""Hypothesis invariants of evalframe.stats."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalframe.stats import (
    bounds,
    wilson_interval,
)

SETTINGS = settings(deadline=None, max_examples=200)

confidences = st.floats(min_value=0.5, max_value=0.999)
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def counts(draw: st.DrawFn, max_n: int = 1_000_000) -> tuple[int, int]:
    """(successes, n) with 1 ≤ n and 0 ≤ successes ≤ n, biased towards the edges."""
    n = draw(st.integers(min_value=1, max_value=max_n))
    s = draw(st.one_of(st.sampled_from([0, n, 1, n - 1]), st.integers(min_value=0, max_value=n)))
    return max(0, min(s, n)), n


# --- intervals contain the point estimate and lie in [0, 1] ---------------------------------


@SETTINGS
@given(counts(), confidences)
def test_wilson_contains_estimate_within_unit_interval(count: tuple[int, int], confidence: float) -> None:
    s, n = count
    low, high = wilson_interval(s, n, confidence=confidence)
    assert low is not None and high is not None
    assert 0.0 <= low <= s / n <= high <= 1.0


@SETTINGS
@given(st.integers(0, 200), st.integers(0, 200), st.integers(0, 200))
def test_bounds_contain_every_completion_of_the_ungraded_units(a: int, b: int, c: int) -> None:
    passed, scored, planned = sorted((a, b, c))
    worst, best = bounds(passed, scored, planned)
    if planned == 0:
        assert (worst, best) == (None, None)
        return
    assert worst is not None and best is not None
    assert 0.0 <= worst <= best <= 1.0
    # whatever k of the planned − scored ungraded units would have passed:
    for k in (0, (planned - scored) // 2, planned - scored):
        assert worst <= (passed + k) / planned <= best
    if scored > 0:
        assert worst <= passed / scored  # the worst case never exceeds the conditional pass rate


# --- clustered SE equals naive SE with one observation per cluster --------------------


# --- row order never changes the result ---------------------------------------------------
