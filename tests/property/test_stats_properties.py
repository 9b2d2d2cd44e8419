"""Hypothesis invariants of evalframe.stats."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evalframe.stats import (
    CI_HIGH,
    CI_LOW,
    bounds,
    clustered_se,
    paired_difference,
    sorted_cluster_sums,
    wilson_exprs,
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


@st.composite
def clustered_values(draw: st.DrawFn) -> pl.DataFrame:
    """Observations in a few clusters, as 0/1 outcomes or arbitrary finite numbers."""
    size = draw(st.integers(min_value=1, max_value=40))
    elements = draw(st.sampled_from([st.integers(min_value=0, max_value=1).map(float), finite]))
    values = draw(st.lists(elements, min_size=size, max_size=size))
    clusters = draw(st.lists(st.integers(min_value=0, max_value=5), min_size=size, max_size=size))
    groups = draw(st.lists(st.sampled_from(["A", "B"]), min_size=size, max_size=size))
    return pl.DataFrame({"candidate": groups, "case_id": clusters, "value": values})


# --- intervals contain the point estimate and lie in [0, 1] ---------------------------------


@SETTINGS
@given(counts(), confidences)
def test_wilson_contains_estimate_within_unit_interval(count: tuple[int, int], confidence: float) -> None:
    s, n = count
    low, high = wilson_interval(s, n, confidence=confidence)
    assert low is not None and high is not None
    assert 0.0 <= low <= s / n <= high <= 1.0


@SETTINGS
@given(st.lists(counts(max_n=10_000), min_size=1, max_size=20), confidences)
def test_wilson_exprs_agree_with_scalar(rows: list[tuple[int, int]], confidence: float) -> None:
    frame = pl.DataFrame({"s": [s for s, _ in rows], "n": [n for _, n in rows]})
    result = frame.select(*wilson_exprs("s", "n", confidence=confidence))
    for (s, n), low, high in zip(rows, result[CI_LOW], result[CI_HIGH], strict=True):
        assert (low, high) == wilson_interval(s, n, confidence=confidence)


@SETTINGS
@given(clustered_values(), confidences)
def test_clustered_interval_contains_mean(frame: pl.DataFrame, confidence: float) -> None:
    result = clustered_se(frame, value="value", cluster="case_id", by=["candidate"], confidence=confidence)
    for row in result.iter_rows(named=True):
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
        assert 0.0 <= row["se_naive"]
        assert 0.0 <= row["se_clustered"]


@SETTINGS
@given(st.lists(st.integers(min_value=0, max_value=1), min_size=1, max_size=40), st.integers(0, 8), confidences)
def test_clipped_rate_interval_contains_mean_within_unit_interval(
    passed: list[int], n_clusters: int, confidence: float
) -> None:
    frame = pl.DataFrame({"passed": passed, "case_id": [i % (n_clusters + 1) for i in range(len(passed))]})
    row = clustered_se(frame, value="passed", cluster="case_id", confidence=confidence, clip=(0.0, 1.0)).row(
        0, named=True
    )
    assert 0.0 <= row["ci_low"] <= row["mean"] <= row["ci_high"] <= 1.0


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


@SETTINGS
@given(st.lists(st.one_of(st.integers(0, 1).map(float), finite), min_size=1, max_size=60))
def test_singleton_clusters_give_the_naive_se(values: list[float]) -> None:
    frame = pl.DataFrame({"value": values, "unit": list(range(len(values)))})
    row = clustered_se(frame, value="value", cluster="unit").row(0, named=True)
    assert row["n_clusters"] == row["n"] == len(values)
    assert row["se_clustered"] == row["se_naive"]


# --- row order never changes the result ---------------------------------------------------


@SETTINGS
@given(clustered_values(), st.randoms(use_true_random=False))
def test_clustered_se_is_invariant_under_row_order(frame: pl.DataFrame, random: object) -> None:
    order = list(range(frame.height))
    random.shuffle(order)  # type: ignore[attr-defined]
    shuffled = frame[order]
    assert_frame_equal(
        clustered_se(shuffled, value="value", cluster="case_id", by=["candidate"]),
        clustered_se(frame, value="value", cluster="case_id", by=["candidate"]),
        check_exact=True,
    )


# --- paired difference negates when a and b are swapped ------------------------------


@st.composite
def pairs(draw: st.DrawFn) -> tuple[list[float], list[float], list[int]]:
    size = draw(st.integers(min_value=1, max_value=40))
    elements = draw(st.sampled_from([st.integers(min_value=0, max_value=1).map(float), finite]))
    a = draw(st.lists(elements, min_size=size, max_size=size))
    b = draw(st.lists(elements, min_size=size, max_size=size))
    cluster = draw(st.lists(st.integers(min_value=0, max_value=6), min_size=size, max_size=size))
    return a, b, cluster


@SETTINGS
@given(pairs(), confidences)
def test_paired_difference_negates_when_swapped(
    data: tuple[list[float], list[float], list[int]], confidence: float
) -> None:
    a, b, cluster = data
    forward = paired_difference(a, b, cluster, confidence=confidence)
    backward = paired_difference(b, a, cluster, confidence=confidence)
    # every sum is exactly rounded, so swapping negates bit for bit
    assert backward.mean_difference == -forward.mean_difference
    assert backward.se_clustered == forward.se_clustered
    assert backward.se_naive == forward.se_naive
    assert (backward.ci_low, backward.ci_high) == (-forward.ci_high, -forward.ci_low)
    assert (backward.mean_a, backward.mean_b) == (forward.mean_b, forward.mean_a)
    assert (backward.n, backward.n_clusters) == (forward.n, forward.n_clusters)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1)), min_size=1, max_size=60))
def test_integer_path_equals_exactly_rounded_float_path(rows: list[tuple[int, int]]) -> None:
    from evalframe.stats import _float_moments, _integer_moments

    data = pl.DataFrame(
        {
            "__evalframe_group": [0] * len(rows),
            "__evalframe_cluster": [c for c, _ in rows],
            "__evalframe_value": [float(v) for _, v in rows],
        }
    )
    exact = _integer_moments(data, ["__evalframe_group"]).drop("__evalframe_group").row(0)
    _, floats = _float_moments(data, ["__evalframe_group"])
    for a, b in zip(exact, floats.row(0), strict=True):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)


@SETTINGS
@given(clustered_values(), confidences)
def test_nested_clusters_give_the_same_errors(frame: pl.DataFrame, confidence: float) -> None:
    # A cluster key that names the group (candidate, case) is nested in the groups by construction.
    keyed = frame.with_columns(pl.format("{}/{}", "candidate", "case_id").alias("cluster")).sort("cluster")
    plain = clustered_se(keyed, value="value", cluster="cluster", by=["candidate"], confidence=confidence)
    nested = clustered_se(
        keyed.with_columns(pl.col("cluster").set_sorted()),
        value="value",
        cluster="cluster",
        by=["candidate"],
        confidence=confidence,
        nested=True,
    )
    assert_frame_equal(nested, plain)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-50, 50)), min_size=1, max_size=60))
def test_sorted_cluster_sums_equal_a_group_by(rows: list[tuple[int, int]]) -> None:
    frame = pl.DataFrame(rows, schema={"cluster": pl.Int64, "value": pl.Int64}, orient="row").sort("cluster")
    frame = frame.with_columns((pl.col("cluster") % 2).alias("group"))
    sums = {"s": pl.col("value"), "n": pl.col("value").is_not_null(), "neg": pl.col("value") < 0}
    got = sorted_cluster_sums(frame.lazy(), "cluster", ["group"], sums).collect()
    expected = frame.group_by("cluster", maintain_order=True).agg(
        pl.col("group").last(),
        pl.col("value").sum().alias("s"),
        pl.len().cast(pl.Int64).alias("n"),
        (pl.col("value") < 0).sum().cast(pl.Int64).alias("neg"),
    )
    assert_frame_equal(got, expected, check_exact=True)
