"""Exact-value tests for evalframe.stats, with the arithmetic written out."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalframe.stats import (
    CI_HIGH,
    CI_LOW,
    PairedDifference,
    bounds,
    clustered_se,
    mcnemar_exact,
    normal_quantile,
    paired_difference,
    wilson_exprs,
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
    with pytest.raises(ValueError, match="confidence"):
        wilson_exprs("s", "n", confidence=confidence)


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


def test_wilson_exprs_match_scalar_and_null_without_denominator() -> None:
    frame = pl.LazyFrame(
        {
            "passed": [0, 2, 4, 63, 0, None, 5, -1],
            "scored": [4, 4, 4, 100, 0, 4, 4, 4],
        }
    )
    low, high = wilson_exprs(pl.col("passed"), pl.col("scored"))
    result = frame.with_columns(low, high).collect()
    expected_low: list[float | None] = []
    expected_high: list[float | None] = []
    for s, n in [(0, 4), (2, 4), (4, 4), (63, 100)]:
        lo, hi = wilson_interval(s, n)
        expected_low.append(lo)
        expected_high.append(hi)
    # n = 0, null successes, successes > n, successes < 0: no interval
    expected_low += [None] * 4
    expected_high += [None] * 4
    assert_frame_equal(
        result.select(CI_LOW, CI_HIGH),
        pl.DataFrame({CI_LOW: expected_low, CI_HIGH: expected_high}, schema={CI_LOW: pl.Float64, CI_HIGH: pl.Float64}),
        abs_tol=1e-15,
        rel_tol=0,
    )
    assert result[CI_LOW][0] == 0.0
    assert result[CI_HIGH][2] == 1.0


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


def test_clustered_se_three_cases_three_trials() -> None:
    # n = 9, G = 3, mean m = 4/9
    # residuals: a: +5/9 ×3; b: +5/9, −4/9, −4/9; c: −4/9 ×3
    # cluster sums: a = 15/9 = 5/3, b = −3/9 = −1/3, c = −12/9 = −4/3   (total 0)
    # Σ_c (cluster sum)² = 25/9 + 1/9 + 16/9 = 42/9 = 14/3
    # se_clustered = sqrt(14/3) / 9 = 2.160247 / 9 = 0.2400274332743652
    # naive: Σ r² = 4·25/81 + 5·16/81 = 180/81 = 20/9; population variance = (20/9)/9 = 20/81
    # se_naive = sqrt((20/81)/9) = sqrt(20)/27 = 0.16563466499998444
    # cr1 = se_clustered · sqrt(3/2) = 0.2939723678960656
    # interval = 4/9 ∓ 1.959963984540054 · 0.2400274332743652 = 0.444444 ∓ 0.470445
    result = clustered_se(TRIALS.lazy(), value="passed", cluster="case_id")
    se_cl = math.sqrt(14 / 3) / 9
    expected = pl.DataFrame(
        {
            "n": [9],
            "n_clusters": [3],
            "mean": [4 / 9],
            "se_naive": [math.sqrt(20) / 27],
            "se_clustered": [se_cl],
            "se_clustered_cr1": [se_cl * math.sqrt(3 / 2)],
            "ci_low": [4 / 9 - Z95 * se_cl],
            "ci_high": [4 / 9 + Z95 * se_cl],
        },
        schema_overrides={"n": pl.UInt32, "n_clusters": pl.UInt32},
    )
    assert_frame_equal(result, expected, abs_tol=1e-12, rel_tol=0)
    assert result["ci_low"][0] < 0  # not clipped by default


def test_clustered_se_accepts_eager_frames_and_booleans() -> None:
    eager = clustered_se(TRIALS, value="passed", cluster="case_id")
    as_bool = clustered_se(TRIALS.with_columns(pl.col("passed").cast(pl.Boolean)), value="passed", cluster="case_id")
    assert_frame_equal(eager, clustered_se(TRIALS.lazy(), value="passed", cluster="case_id"))
    assert_frame_equal(as_bool, eager)


def test_clustered_se_clip() -> None:
    result = clustered_se(TRIALS, value="passed", cluster="case_id", clip=(0.0, 1.0))
    assert result["ci_low"][0] == 0.0
    assert result["ci_high"][0] == pytest.approx(4 / 9 + Z95 * math.sqrt(14 / 3) / 9, abs=1e-12)
    with pytest.raises(ValueError, match="clip"):
        clustered_se(TRIALS, value="passed", cluster="case_id", clip=(1.0, 0.0))


def test_clustered_se_by_group_sorted() -> None:
    # candidate B: the TRIALS table; candidate A: every trial passes → mean 1, all residuals 0
    frame = pl.concat(
        [
            TRIALS.with_columns(candidate=pl.lit("B")),
            TRIALS.with_columns(candidate=pl.lit("A"), passed=pl.lit(1, dtype=pl.Int64)),
        ]
    )
    result = clustered_se(frame, value="passed", cluster="case_id", by=["candidate"])
    assert result["candidate"].to_list() == ["A", "B"]
    assert result.row(0, named=True) == {
        "candidate": "A",
        "n": 9,
        "n_clusters": 3,
        "mean": 1.0,
        "se_naive": 0.0,
        "se_clustered": 0.0,
        "se_clustered_cr1": 0.0,
        "ci_low": 1.0,
        "ci_high": 1.0,
    }
    assert result["se_clustered"][1] == pytest.approx(math.sqrt(14 / 3) / 9, abs=1e-12)


def test_clustered_se_singleton_clusters_equal_naive() -> None:
    # one observation per cluster: Σ_c (r_i)² = Σ_i r_i², so se_clustered = se_naive = sqrt(20)/27
    singletons = TRIALS.with_row_index("unit")
    result = clustered_se(singletons, value="passed", cluster="unit")
    assert result["n_clusters"][0] == 9
    assert result["se_clustered"][0] == result["se_naive"][0]
    assert result["se_naive"][0] == pytest.approx(math.sqrt(20) / 27, abs=1e-12)


def test_clustered_se_one_cluster_is_degenerate() -> None:
    # one cluster: its residual sum is Σ r_i = 0, so se_clustered = 0; CR1 is undefined (null)
    one = pl.DataFrame({"case_id": ["a"] * 4, "passed": [1, 0, 1, 1]})
    result = clustered_se(one, value="passed", cluster="case_id")
    assert result["se_clustered"][0] == pytest.approx(0.0, abs=1e-15)
    assert result["se_clustered_cr1"][0] is None


def test_clustered_se_empty_frame() -> None:
    empty = TRIALS.clear()
    assert clustered_se(empty, value="passed", cluster="case_id").height == 0
    grouped = empty.with_columns(candidate=pl.lit("A"))
    assert clustered_se(grouped, value="passed", cluster="case_id", by=["candidate"]).height == 0


@pytest.mark.parametrize(
    ("values", "clusters", "match"),
    [
        ([1.0, None], ["a", "b"], "1 null"),
        ([1.0, math.nan], ["a", "b"], "1 nan"),
        ([1.0, math.inf], ["a", "b"], "1 infinite"),
        ([1.0, 0.0], ["a", None], "1 cluster_null"),
    ],
)
def test_clustered_se_refuses_missing_values(
    values: list[float | None], clusters: list[str | None], match: str
) -> None:
    frame = pl.DataFrame({"v": values, "c": clusters}, schema={"v": pl.Float64, "c": pl.String})
    with pytest.raises(ValueError, match=match):
        clustered_se(frame, value="v", cluster="c")


@pytest.mark.parametrize("by", [["case_id"], ["passed"], ["mean"], ["candidate", "candidate"]])
def test_clustered_se_refuses_colliding_by(by: list[str]) -> None:
    frame = TRIALS.with_columns(candidate=pl.lit("A"), mean=pl.lit(0))
    with pytest.raises(ValueError, match="by"):
        clustered_se(frame, value="passed", cluster="case_id", by=by)


def test_clustered_se_ignores_row_order() -> None:
    shuffled = TRIALS.sample(fraction=1.0, shuffle=True, seed=7)
    assert_frame_equal(
        clustered_se(shuffled, value="passed", cluster="case_id"),
        clustered_se(TRIALS, value="passed", cluster="case_id"),
        check_exact=True,
    )


# --- paired difference ------------------------------------------------------------------


def test_paired_difference_by_hand() -> None:
    # a = 1 1 | 0 1 | 0 0   b = 0 1 | 0 0 | 0 1   clusters x x | y y | z z
    # d = a − b = 1 0 | 0 1 | 0 −1, n = 6, mean d̄ = 1/6; mean_a = 3/6, mean_b = 2/6
    # residuals: x: 5/6, −1/6 (sum 4/6); y: −1/6, 5/6 (sum 4/6); z: −1/6, −7/6 (sum −8/6)
    # Σ_c sums² = (16 + 16 + 64)/36 = 96/36 = 8/3 → se_clustered = sqrt(8/3)/6 = 0.2721655269759087
    # Σ r² = (25 + 1 + 1 + 25 + 1 + 49)/36 = 102/36 → se_naive = sqrt(102/36)/6 = 0.28050753...
    result = paired_difference([1, 1, 0, 1, 0, 0], [0, 1, 0, 0, 0, 1], ["x", "x", "y", "y", "z", "z"])
    se_cl = math.sqrt(8 / 3) / 6
    expected = PairedDifference(
        n=6,
        n_clusters=3,
        mean_a=0.5,
        mean_b=2 / 6,
        mean_difference=1 / 6,
        se_naive=math.sqrt(102 / 36) / 6,
        se_clustered=se_cl,
        ci_low=1 / 6 - Z95 * se_cl,
        ci_high=1 / 6 + Z95 * se_cl,
        confidence=0.95,
    )
    assert result.n == expected.n
    assert result.n_clusters == expected.n_clusters
    for field in ("mean_a", "mean_b", "mean_difference", "se_naive", "se_clustered", "ci_low", "ci_high"):
        assert getattr(result, field) == pytest.approx(getattr(expected, field), abs=1e-12), field


def test_paired_difference_accepts_mixed_numbers() -> None:
    # d = 0.5, −0.5 in clusters x, y: mean 0, residual sums ±0.5 → se_clustered = sqrt(0.5)/2
    result = paired_difference([1, 0.5], [0.5, 1], ["x", "y"])
    assert result.mean_difference == 0.0
    assert result.se_clustered == pytest.approx(math.sqrt(0.5) / 2, abs=1e-12)


def test_paired_difference_accepts_series_and_booleans() -> None:
    a = pl.Series([True, True, False, True, False, False])
    b = pl.Series([False, True, False, False, False, True])
    cluster = pl.Series(["x", "x", "y", "y", "z", "z"])
    assert paired_difference(a, b, cluster) == paired_difference(
        [1, 1, 0, 1, 0, 0], [0, 1, 0, 0, 0, 1], ["x", "x", "y", "y", "z", "z"]
    )


def test_paired_difference_swapped_is_negated() -> None:
    a, b, c = [1, 1, 0, 1, 0, 0], [0, 1, 0, 0, 0, 1], ["x", "x", "y", "y", "z", "z"]
    forward, backward = paired_difference(a, b, c), paired_difference(b, a, c)
    assert backward.mean_difference == -forward.mean_difference
    assert backward.se_clustered == forward.se_clustered
    assert (backward.ci_low, backward.ci_high) == (-forward.ci_high, -forward.ci_low)


@pytest.mark.parametrize(
    ("a", "b", "cluster", "match"),
    [
        ([1, 0], [1], ["x", "y"], "same length"),
        ([], [], [], "at least one pair"),
        ([1, None], [1, 0], ["x", "y"], "a has null"),
        ([1, 0], [1, math.nan], ["x", "y"], "b has null"),
        ([1, 0], [1, 0], ["x", None], "cluster_null"),
    ],
)
def test_paired_difference_refusals(a: list[float], b: list[float], cluster: list[str], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        paired_difference(a, b, cluster)


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


def test_a_groups_clustered_error_does_not_depend_on_the_groups_beside_it() -> None:
    # Integer values take an exact path, others a float one; the path is chosen per group, so a candidate's
    # numbers are the same audited alone (a partition) or beside candidates with fractional scores.
    rng = np.random.default_rng(1)
    whole = pl.DataFrame(
        {
            "g": ["ints"] * 60 + ["floats"] * 60,
            "c": np.repeat(np.arange(40), 3),
            "v": np.concatenate([rng.integers(0, 2, 60), rng.choice([0.0, 0.25, 0.5, 1.0], 60)]).astype(float),
        }
    )
    together = clustered_se(whole.lazy(), value="v", cluster="c", by=["g"], nested=True)
    apart = pl.concat(
        [
            clustered_se(whole.filter(pl.col("g") == g).lazy(), value="v", cluster="c", by=["g"], nested=True)
            for g in ("floats", "ints")
        ]
    )
    assert together.get_column("g").to_list() == ["floats", "ints"]
    assert_frame_equal(together, apart, check_exact=True)
