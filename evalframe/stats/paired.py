"""Paired differences of two candidates on the same units, clustered by case (SPEC §6).

- :func:`paired_rate_difference` — the difference of two paired pass rates
  on the same units: the MOVER interval of Zou & Donner (2008) built from the
  two rates' intervals (:mod:`evalframe.stats.clustered`) and the correlation
  of the two estimates (Newcombe 1998, method 10, when every case holds one
  pair), so the interval lies inside [−1, 1] by construction, never by
  clipping.
- :func:`paired_mean_difference` — the difference of two paired numeric
  scores: the CR1 cluster-robust standard error with t(G − 1), the interval
  clipped to ± the score range's width.

Sources
-------
R. G. Newcombe (1998), "Improved confidence intervals for the difference
between binomial proportions based on paired data", Statistics in Medicine
17(22):2635–2650. G. Y. Zou and A. Donner (2008), "Construction of
confidence limits about effect measures: a general approach", Statistics in
Medicine 27(10):1693–1702. A. C. Cameron and D. L. Miller (2015), "A
Practitioner's Guide to Cluster-Robust Inference", J. Human Resources
50(2):317–372.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from evalframe.stats.clustered import (
    MIN_CASES,
    Method,
    SkewCheck,
    Target,
    bounded_mean_interval,
    rate_interval,
    skew_check,
)
from evalframe.stats.intervals import DEFAULT_CONFIDENCE

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "PairedTest",
    "paired_mean_difference",
    "paired_rate_difference",
]


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A paired difference a − b over units clustered in cases, with its interval.

    Returned by :func:`paired_rate_difference` and :func:`paired_mean_difference`.
    """

    n: int
    """Pairs."""
    n_clusters: int
    """Cases holding at least one pair."""
    mean_a: float
    """Mean of a over the pairs."""
    mean_b: float
    """Mean of b over the pairs."""
    difference: float
    """mean_a − mean_b."""
    ci_low: float | None
    """Lower end (None: no interval)."""
    ci_high: float | None
    """Upper end."""
    se_clustered: float | None
    """CR1 cluster-robust standard error of the difference (None with fewer than two cases)."""
    correlation: float | None
    """Correlation of the two estimates (binary: the MOVER's r)."""
    method: Method
    """``newcombe`` (one pair per case), ``wilson_clustered`` or ``none``."""
    confidence: float
    """Two-sided coverage of the interval."""
    skew: SkewCheck | None = None
    """With several pairs in some case (``wilson_clustered``): the skewness rule on the per-case differences."""

    def excludes_zero(self) -> int:
        """+1 when the interval lies above 0, −1 below, 0 when it holds 0 or there is none."""
        if self.ci_low is None or self.ci_high is None:
            return 0
        return 1 if self.ci_low > 0 else -1 if self.ci_high < 0 else 0


def _pairs(
    a: Sequence[float] | pl.Series, b: Sequence[float] | pl.Series, cluster: Sequence[Hashable] | pl.Series
) -> pl.DataFrame:
    frame = pl.DataFrame(
        {"a": pl.Series(a, dtype=pl.Float64), "b": pl.Series(b, dtype=pl.Float64), "c": pl.Series(cluster)}
    )
    if frame.height == 0:
        msg = "a paired difference needs at least one pair"
        raise ValueError(msg)
    if frame.select(pl.any_horizontal(~pl.col("a", "b").is_finite()).fill_null(True).any()).item():
        msg = "a and b must be finite numbers; apply the pair policy before comparing"
        raise ValueError(msg)
    return frame.group_by("c", maintain_order=True).agg(  # clusters in first-seen order: sums over them repeat
        pl.col("a").sum().alias("sa"),
        pl.col("b").sum().alias("sb"),
        pl.len().cast(pl.Float64).alias("m"),
        ((pl.col("a") - pl.col("b")) ** 2).sum().alias("sd2"),
    )


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Σxy / sqrt(Σx² Σy²) of residual totals; 0 when either side shows no spread."""
    import numpy as np  # imported on use: `import evalframe` does not need it

    sxx, syy = float(np.sum(x * x)), float(np.sum(y * y))
    if sxx <= 0 or syy <= 0:
        return 0.0
    return max(-1.0, min(1.0, float(np.sum(x * y)) / math.sqrt(sxx * syy)))


def _bounded_difference(sums: pl.DataFrame, width: float, confidence: float, target: Target) -> PairedTest:
    """The per-pair differences in [−width, width] through :func:`bounded_mean_interval` (its method)."""
    import numpy as np  # imported on use: `import evalframe` does not need it

    sa, sb, m = (sums.get_column(c).to_numpy() for c in ("sa", "sb", "m"))
    total = float(m.sum())
    pa, pb = float(np.sum(sa)) / total, float(np.sum(sb)) / total
    squares = sums.get_column("sd2").to_numpy() if target == "fixed" else None
    est = bounded_mean_interval(sa - sb, m, low=-width, high=width, confidence=confidence, squares=squares)
    skew = skew_check(sa - sb, m) if est.method == "wilson_clustered" else None
    ci, se = (est.ci_low, est.ci_high), est.se_clustered
    return PairedTest(int(total), int(m.size), pa, pb, pa - pb, *ci, se, None, est.method, confidence, skew)


def paired_rate_difference(
    a: Sequence[float] | pl.Series,
    b: Sequence[float] | pl.Series,
    cluster: Sequence[Hashable] | pl.Series,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    target: Target = "sample",
) -> PairedTest:
    """Difference of two paired pass rates (0/1 outcomes on the same units), clustered by case.

    Parameters
    ----------
    a, b
        0/1 outcomes of the two sides, position i of ``a`` paired with
        position i of ``b`` (join on (case_id, trial) first).
    cluster
        The case of each pair.
    confidence
        Two-sided coverage.
    target
        ``sample`` (cases from a larger population of tasks) or ``fixed`` (these cases are the population).

    Returns
    -------
    PairedTest
        Under ``target="fixed"``, however many pairs per case: the per-pair differences through
        :func:`bounded_mean_interval` with their squares, the within-case (trial) variance only
        (``wilson_fixed``; no skewness check; no interval without a case of two pairs or more).
        Otherwise, with one pair per case: Newcombe's (1998) method 10, the MOVER
        interval (Zou & Donner 2008) from the two Wilson intervals (l, u) and
        the phi coefficient r of the pairs:
        L = d − sqrt((p_a − l_a)² − 2r(p_a − l_a)(u_b − p_b) + (u_b − p_b)²),
        U = d + sqrt((u_a − p_a)² − 2r(u_a − p_a)(p_b − l_b) + (p_b − l_b)²)
        (``newcombe``). With several pairs in a case: the per-pair differences
        in [−1, 1] through :func:`bounded_mean_interval` (CR1, t(G − 1); the
        case-level paired test, ``wilson_clustered``). Inside [−1, 1] by
        construction; fewer than two cases: no interval (``none``; SPEC §4).

    Raises
    ------
    ValueError
        When there is no pair or a value is not finite.

    Examples
    --------
    Ten trials of one case, every trial won by a: a difference, no interval.

    >>> paired_rate_difference([1] * 10, [0] * 10, ["q"] * 10).method, paired_rate_difference([1], [0], ["q"]).ci_low
    ('none', None)
    >>> t = paired_rate_difference([1, 1, 1, 1, 0, 1], [0, 1, 0, 0, 0, 1], ["x", "x", "y", "y", "z", "z"])
    >>> t.method, round(t.difference, 4), round(t.ci_low, 4), round(t.ci_high, 4)
    ('wilson_clustered', 0.5, -0.6225, 0.9496)
    >>> t = paired_rate_difference([1] * 8 + [0] * 12, [0] * 2 + [1] * 2 + [0] * 16, range(20))
    >>> t.method, round(t.difference, 4), round(t.ci_low, 4), round(t.ci_high, 4)
    ('newcombe', 0.3, 0.0914, 0.4954)
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    sums = _pairs(a, b, cluster)
    if target == "fixed" or (sums.get_column("m") > 1).any():
        return _bounded_difference(sums, 1.0, confidence, target)
    sa, sb, m = (sums.get_column(c).to_numpy() for c in ("sa", "sb", "m"))
    total, clusters = float(m.sum()), int(m.size)
    pa, pb = float(np.sum(sa)) / total, float(np.sum(sb)) / total
    d = pa - pb
    if clusters < MIN_CASES:  # SPEC §4: one case, no interval
        return PairedTest(int(total), clusters, pa, pb, d, None, None, None, None, "none", confidence)
    ea, eb = rate_interval(sa, m, confidence=confidence), rate_interval(sb, m, confidence=confidence)
    assert ea.ci_low is not None and ea.ci_high is not None and eb.ci_low is not None and eb.ci_high is not None
    r = _correlation(sa - pa, sb - pb)
    below = (pa - ea.ci_low) ** 2 - 2 * r * (pa - ea.ci_low) * (eb.ci_high - pb) + (eb.ci_high - pb) ** 2
    above = (ea.ci_high - pa) ** 2 - 2 * r * (ea.ci_high - pa) * (pb - eb.ci_low) + (pb - eb.ci_low) ** 2
    low, high = d - math.sqrt(max(below, 0.0)), d + math.sqrt(max(above, 0.0))
    diff = (sa - sb) - d
    se = math.sqrt(clusters / max(clusters - 1, 1) * float(np.sum(diff * diff))) / total
    return PairedTest(int(total), clusters, pa, pb, d, max(low, -1.0), min(high, 1.0), se, r, "newcombe", confidence)


def paired_mean_difference(
    a: Sequence[float] | pl.Series,
    b: Sequence[float] | pl.Series,
    cluster: Sequence[Hashable] | pl.Series,
    *,
    width: float,
    confidence: float = DEFAULT_CONFIDENCE,
    target: Target = "sample",
) -> PairedTest:
    """Difference of two paired mean scores, clustered by case.

    Parameters
    ----------
    a, b
        Scores of the two sides on the same units.
    cluster
        The case of each pair.
    width
        Width of the score range: each difference lies in [−width, width].
    confidence
        Two-sided coverage.
    target
        ``sample`` or ``fixed``, as in :func:`paired_rate_difference`.

    Returns
    -------
    PairedTest
        Under ``target="fixed"`` the within-case variance of the differences (``wilson_fixed``, as
        :func:`paired_rate_difference`). Otherwise the per-pair differences through :func:`bounded_mean_interval` on
        [−width, width] (CR1 with t(G − 1), inside the range by
        construction). Fewer than two cases: no interval.

    Examples
    --------
    >>> t = paired_mean_difference([0.9, 0.8, 0.7, 0.9], [0.5, 0.6, 0.7, 0.4], ["a", "b", "c", "d"], width=1.0)
    >>> t.method, round(t.difference, 4), round(t.ci_low, 4), round(t.ci_high, 4)
    ('wilson_clustered', 0.275, -0.0905, 0.5752)
    """
    return _bounded_difference(_pairs(a, b, cluster), width, confidence, target)
