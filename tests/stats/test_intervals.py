"""Exact-value tests for evalframe.stats, with the arithmetic written out."""

from __future__ import annotations

import math

import polars as pl
import pytest

from evalframe.stats import (
    bounds,
    mcnemar_exact,
    normal_quantile,
    wilson_interval,
)

Z95 = 1.959963984540054  # Φ⁻¹(0.975)


def wilson_by_hand(s: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Textbook form: (p + z²/2n ∓ z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)."""
    p = s / n
    center = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return center - half, center + half


# --- normal_quantile ---------------------------------------------------------------


def test_normal_quantile_95() -> None:
    # statistics.NormalDist.inv_cdf (AS 241) agrees with the tabled value to within 1e-15.
    assert normal_quantile(0.95) == pytest.approx(Z95, abs=1e-15)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5, math.nan, math.inf])
def test_confidence_outside_open_unit_interval_is_refused(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        normal_quantile(confidence)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=confidence)


# --- Wilson ---------------------------------------------------------------------------


def test_wilson_0_of_4() -> None:
    # z² = 3.8414588206941254; p = 0
    # center = (0 + z²/8) / (1 + z²/4) = 0.48018235 / 1.96036471 = 0.24494541822729865
    # half   = z / (1 + z²/4) * sqrt(0 + z²/64) = z * (z/8) / (1 + z²/4) = same as center
    # low = 0, high = 2 * center = z² / (4 + z²) = 3.84145882 / 7.84145882 = 0.4898908364545973
    low, high = wilson_interval(0, 4)
    assert (low, high) == pytest.approx(wilson_by_hand(0, 4), abs=1e-12)
    assert high == pytest.approx(Z95**2 / (4 + Z95**2), abs=1e-12)
    assert high == pytest.approx(0.4898908364545973, abs=1e-12)
    assert low == 0.0


def test_wilson_2_of_4() -> None:
    # p = 0.5, center = (0.5 + z²/8) / (1 + z²/4) = 0.5 (symmetric)
    # half = z / 1.96036471 * sqrt(0.25/4 + z²/64) = 0.99978 * sqrt(0.0625 + 0.06002279) = 0.3499610108478505
    # (low, high) = (0.15003898915214953, 0.8499610108478505)
    low, high = wilson_interval(2, 4)
    assert (low, high) == pytest.approx(wilson_by_hand(2, 4), abs=1e-12)
    assert (low, high) == pytest.approx((0.15003898915214953, 0.8499610108478505), abs=1e-12)


def test_wilson_4_of_4() -> None:
    # mirror image of 0/4: low = 1 − 0.4898908364545973 = 0.5101091635454027, high = 1
    low, high = wilson_interval(4, 4)
    assert (low, high) == pytest.approx(wilson_by_hand(4, 4), abs=1e-12)
    assert low == pytest.approx(1 - Z95**2 / (4 + Z95**2), abs=1e-12)
    assert high == 1.0


def test_wilson_63_of_100() -> None:
    # p = 0.63, z²/n = 0.038414588
    # center = (0.63 + 0.019207294) / 1.038414588 = 0.6251908452330919
    # half   = z / 1.038414588 * sqrt(0.63*0.37/100 + z²/40000)
    #        = 1.88745 * sqrt(0.002331 + 0.0000960365) = 0.09298554942366279
    # (low, high) = (0.5322052958094291, 0.7181763946567546)
    low, high = wilson_interval(63, 100)
    assert (low, high) == pytest.approx(wilson_by_hand(63, 100), abs=1e-12)
    assert (low, high) == pytest.approx((0.5322052958094291, 0.7181763946567546), abs=1e-12)


def test_wilson_other_confidence_uses_its_own_z() -> None:
    z90 = 1.6448536269514722  # Φ⁻¹(0.95)
    assert wilson_interval(63, 100, confidence=0.90) == pytest.approx(wilson_by_hand(63, 100, z90), abs=1e-12)


def test_wilson_no_trials_gives_no_interval() -> None:
    assert wilson_interval(0, 0) == (None, None)


@pytest.mark.parametrize(("successes", "n"), [(-1, 4), (5, 4), (1, -1), (1.5, 4), (1, 4.0)])
def test_wilson_bad_counts_are_refused(successes: object, n: object) -> None:
    with pytest.raises(ValueError):
        wilson_interval(successes, n)  # type: ignore[arg-type]


# --- clustered standard error -----------------------------------------------------------

# Three cases × three trials:
#   case a: 1 1 1   case b: 1 0 0   case c: 0 0 0
TRIALS = pl.DataFrame(
    {
        "case_id": ["a", "a", "a", "b", "b", "b", "c", "c", "c"],
        "trial": [1, 2, 3, 1, 2, 3, 1, 2, 3],
        "passed": [1, 1, 1, 1, 0, 0, 0, 0, 0],
    }
)


# --- paired difference ------------------------------------------------------------------


# --- McNemar ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c", "p_value"),
    [
        # n = 7: P(X ≤ 1) = (C(7,0) + C(7,1)) / 2^7 = (1 + 7)/128 = 8/128; two-sided = 16/128
        (1, 6, 16 / 128),
        # n = 10: P(X ≤ 2) = (1 + 10 + 45) / 1024 = 56/1024; two-sided = 112/1024 = 0.109375
        (2, 8, 112 / 1024),
        # n = 5: P(X = 0) = 1/32; two-sided = 2/32 = 0.0625
        (0, 5, 2 / 32),
        # n = 7: P(X ≤ 3) = (1 + 7 + 21 + 35)/128 = 64/128; doubled = 1 → capped at 1
        (3, 4, 1.0),
        # no discordant pairs: no evidence
        (0, 0, 1.0),
    ],
)
def test_mcnemar_exact_by_hand(b: int, c: int, p_value: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p_value, abs=1e-12)
    assert mcnemar_exact(c, b) == pytest.approx(p_value, abs=1e-12)


@pytest.mark.parametrize(("b", "c"), [(-1, 3), (1.0, 3), (2, "3")])
def test_mcnemar_bad_counts_are_refused(b: object, c: object) -> None:
    with pytest.raises(ValueError):
        mcnemar_exact(b, c)  # type: ignore[arg-type]


# --- bounds -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passed", "scored", "planned", "expected"),
    [
        # SPEC ledger fixture: worst = 1/4, best = (1 + 4 − 2)/4 = 3/4
        (1, 2, 4, (0.25, 0.75)),
        # SPEC Orbit Desk A: worst = 2/4, best = (2 + 4 − 2)/4 = 1
        (2, 2, 4, (0.5, 1.0)),
        # SPEC Orbit Desk B: fully scored, the bounds meet at 3/4
        (3, 4, 4, (0.75, 0.75)),
        # header-only export: nothing scored, worst 0, best 1
        (0, 0, 4, (0.0, 1.0)),
        (0, 0, 0, (None, None)),
    ],
)
def test_bounds(passed: int, scored: int, planned: int, expected: tuple[float | None, float | None]) -> None:
    assert bounds(passed, scored, planned) == expected


@pytest.mark.parametrize(("passed", "scored", "planned"), [(3, 2, 4), (1, 5, 4), (-1, 0, 4), (1, 2, 4.0)])
def test_bounds_refuses_inconsistent_counts(passed: object, scored: object, planned: object) -> None:
    with pytest.raises(ValueError):
        bounds(passed, scored, planned)  # type: ignore[arg-type]
