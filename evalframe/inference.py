"""Inference that holds with repeated trials, few cases and missing grades (SPEC §4, §6).

Repeated trials of one case are not independent observations, and a handful
of cases carries little evidence whatever the number of trials. Every
interval here treats the **case** as the independent unit (the cluster) and
corrects for few cases:

- :func:`rate_interval` — a pass rate or coverage over units: the Wilson
  score interval (Wilson 1927) when every case holds one unit; with several
  units per case, the Wilson interval on the *effective* sample size
  n / deff with the t quantile of G − 1 degrees of freedom, G the number of
  cases (Korn & Graubard 1998; the Wilson form is the one Dean & Pagano 2015
  found to keep coverage in clustered samples). The design effect deff is
  the cluster-robust (CR1, Cameron & Miller 2015) variance over the binomial
  one. Fewer than two cases: no interval.
- :func:`paired_rate_difference` — the difference of two paired pass rates
  on the same units: the MOVER interval of Zou & Donner (2008) built from the
  two rates' intervals above and the correlation of the two estimates
  (Newcombe 1998, method 10, when every case holds one pair), so the
  interval lies inside [−1, 1] by construction, never by clipping.
- :func:`paired_mean_difference` — the difference of two paired numeric
  scores: the CR1 cluster-robust standard error with t(G − 1), the interval
  clipped to ± the score range's width.

Sources
-------
E. B. Wilson (1927), "Probable inference, the law of succession, and
statistical inference", JASA 22(158):209–212. E. L. Korn and B. I. Graubard
(1998), "Confidence intervals for proportions with small expected number of
positive counts estimated from survey data", Survey Methodology
24(2):193–201. N. Dean and M. Pagano (2015), "Evaluating confidence interval
methods for binomial proportions in clustered surveys", J. Survey Statistics
and Methodology 3(4):484–503. A. C. Cameron and D. L. Miller (2015), "A
Practitioner's Guide to Cluster-Robust Inference", J. Human Resources
50(2):317–372. R. G. Newcombe (1998), "Improved confidence intervals for the
difference between binomial proportions based on paired data", Statistics in
Medicine 17(22):2635–2650. G. Y. Zou and A. Donner (2008), "Construction of
confidence limits about effect measures: a general approach", Statistics in
Medicine 27(10):1693–1702. E. Miller (2024), "Adding Error Bars to Evals",
arXiv:2411.00640 (clustering by question).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import polars as pl

from evalframe.stats import normal_quantile, wilson_bounds

__all__ = [
    "PairedTest",
    "RateEstimate",
    "bounded_mean_interval",
    "critical_value",
    "paired_mean_difference",
    "paired_rate_difference",
    "rate_interval",
]

Method = Literal["wilson", "wilson_clustered", "newcombe", "none"]
#: Cases below which no interval is given when units are clustered (one case carries no between-case spread).
MIN_CASES: Final = 2


def critical_value(confidence: float, clusters: int | None) -> float:
    """The two-sided critical value: normal for independent units, t(G − 1) for G clusters.

    Parameters
    ----------
    confidence
        Two-sided coverage in (0, 1).
    clusters
        Number of clusters G ≥ 2, or None for independent units (normal quantile).

    Examples
    --------
    >>> round(critical_value(0.95, None), 4), round(critical_value(0.95, 3), 4), round(critical_value(0.95, 31), 4)
    (1.96, 4.3027, 2.0423)
    """
    z = normal_quantile(confidence)
    if clusters is None:
        return z
    if clusters < MIN_CASES:
        msg = f"a clustered critical value needs at least {MIN_CASES} clusters, got {clusters}"
        raise ValueError(msg)
    return _t_quantile((1.0 + confidence) / 2.0, clusters - 1)


@functools.lru_cache(maxsize=4096)
def _t_quantile(q: float, df: int) -> float:
    """The q quantile of Student's t with ``df`` degrees of freedom (``scipy.special.stdtrit``).

    scipy.special is imported on use: it takes about 0.2 s, where scipy.stats took about 1 s of every audit.
    """
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


@dataclass(frozen=True, slots=True)
class RateEstimate:
    """A rate (or a mean on [0, 1]) over units clustered in cases, with its interval.

    Returned by :func:`rate_interval` and :func:`bounded_mean_interval`.
    """

    n: int
    """Units in the denominator."""
    n_clusters: int
    """Cases holding at least one of them."""
    rate: float | None
    """Σ values / n; None when n = 0."""
    ci_low: float | None
    """Lower end, in [0, rate]; None without an interval."""
    ci_high: float | None
    """Upper end, in [rate, 1]; None without an interval."""
    se_clustered: float | None
    """CR1 cluster-robust standard error (the binomial one with one unit per case); None with fewer than two cases."""
    design_effect: float | None
    """Variance over the variance of n independent Bernoulli units of the same mean (1 with one unit per case)."""
    effective_n: float | None
    """n / design_effect: how many independent units the clustered ones are worth."""
    method: Method
    """``wilson`` (one unit per case), ``wilson_clustered``, or ``none`` (no interval)."""


def _clustered(totals: np.ndarray, m: np.ndarray, *, confidence: float, truncate: bool) -> RateEstimate:
    """The clustered score interval of Σ totals / Σ m for values in [0, 1] (see :func:`bounded_mean_interval`)."""
    keep = m > 0
    totals, m = totals[keep], m[keep]
    n, clusters = float(m.sum()), int(m.size)
    if n == 0:
        return RateEstimate(0, 0, None, None, None, None, None, None, "none")
    p = float(np.sum(totals)) / n
    bernoulli = p * (1.0 - p) / n
    if (m <= 1).all() and truncate:  # independent 0/1 units: Wilson (1927) on n
        low, high = wilson_bounds(p, n, normal_quantile(confidence))
        return RateEstimate(int(n), clusters, p, low, high, math.sqrt(bernoulli), 1.0, n, "wilson")
    if clusters < MIN_CASES:
        return RateEstimate(int(n), clusters, p, None, None, None, None, None, "none")
    residual = totals - p * m
    variance = clusters / (clusters - 1) * float(np.sum(residual * residual)) / (n * n)
    if variance > 0 and bernoulli > 0:
        n_eff = p * (1.0 - p) / variance
        if truncate:  # Korn & Graubard (1998): the design effect is taken as at least 1
            n_eff = min(n_eff, n)
    else:  # no spread seen: as if each case were one observation
        n_eff = float(clusters)
    low, high = wilson_bounds(p, n_eff, critical_value(confidence, clusters))
    deff = n / n_eff
    return RateEstimate(int(n), clusters, p, low, high, math.sqrt(variance), deff, n_eff, "wilson_clustered")


def _arrays(totals: np.ndarray | Sequence[float], units: np.ndarray | Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    t, m = np.asarray(totals, dtype=np.float64), np.asarray(units, dtype=np.float64)
    if t.shape != m.shape:
        msg = f"totals and units must have the same length, got {t.shape} and {m.shape}"
        raise ValueError(msg)
    if (m < 0).any() or (t < 0).any() or (t > m).any() or not np.isfinite(t).all():
        msg = "need 0 <= total <= units in every case"
        raise ValueError(msg)
    return t, m


def rate_interval(
    successes: np.ndarray | Sequence[float], units: np.ndarray | Sequence[float], *, confidence: float = 0.95
) -> RateEstimate:
    """The rate Σ successes / Σ units over cases, with an interval that treats cases as independent.

    Parameters
    ----------
    successes
        Per case: units that count in the numerator (e.g. passed units).
    units
        Per case: units in the denominator (e.g. scored units), same length;
        cases with 0 units are ignored.
    confidence
        Two-sided coverage.

    Returns
    -------
    RateEstimate
        With one unit per case: the Wilson (1927) interval (``method``
        ``wilson``). With several units in some case: with N units in G
        cases, rate p and residual totals R_c = s_c − p·m_c, the CR1
        variance V = G/(G − 1)·Σ R_c² / N² (Cameron & Miller 2015), the
        effective sample size n_eff = min(N, p(1 − p)/V) — the design effect
        taken as at least 1, as Korn & Graubard (1998) do; G, as if each case
        were one observation, when no spread was seen (p is 0 or 1) — and the
        Wilson interval on n_eff with the t(G − 1) quantile (Korn & Graubard
        1998; Dean & Pagano 2015): ``wilson_clustered``. Fewer than two cases
        with clustered units: no interval (``none``). Always 0 ≤ ci_low ≤
        rate ≤ ci_high ≤ 1, and never a zero-width interval.

    Raises
    ------
    ValueError
        When the lengths differ, a count is negative, or successes exceed units.

    Examples
    --------
    Ten trials of one case: a rate, but no interval.

    >>> rate_interval([5], [10]).method, rate_interval([5], [10]).ci_low
    ('none', None)

    Three cases of three trials (1/1/1, 1/0/0, 0/0/0):

    >>> r = rate_interval([3, 1, 0], [3, 3, 3])
    >>> r.method, round(r.rate, 4), round(r.design_effect, 3), round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson_clustered', 0.4444, 3.15, 0.0276, 0.9576)

    Independent units keep the Wilson interval:

    >>> r = rate_interval([1] * 8 + [0] * 2, [1] * 10)
    >>> r.method, round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson', 0.4902, 0.9433)
    """
    return _clustered(*_arrays(successes, units), confidence=confidence, truncate=True)


def bounded_mean_interval(
    totals: np.ndarray | Sequence[float],
    units: np.ndarray | Sequence[float],
    *,
    low: float = 0.0,
    high: float = 1.0,
    confidence: float = 0.95,
) -> RateEstimate:
    """The mean of a value bounded in [low, high] over units clustered in cases, with an interval inside the bounds.

    Parameters
    ----------
    totals
        Per case: the sum of its units' values, each value in [low, high].
    units
        Per case: its number of units.
    low, high
        The bounds of one value (a score range; [−1, 1] for a paired
        difference of pass/fail grades).
    confidence
        Two-sided coverage.

    Returns
    -------
    RateEstimate
        On the value's own scale (``rate`` is the mean, ``ci_low``/``ci_high``
        inside [low, high], ``se_clustered`` in value units). The values are
        mapped to w = (x − low)/(high − low) in [0, 1], whose variance is at
        most w̄(1 − w̄); the CR1 variance V of w̄ (Cameron & Miller 2015) gives
        the effective sample size n_eff = w̄(1 − w̄)/V (G when no spread was
        seen), and the Wilson score interval on n_eff with the t(G − 1)
        quantile (as :func:`rate_interval`, without truncating the design
        effect: a paired difference varies far less than a Bernoulli value)
        is mapped back. Bounded by construction; fewer than two cases: none.

    Examples
    --------
    >>> r = bounded_mean_interval([0.8, 0.1, 0.3, 1.7], [1, 1, 1, 2], low=-1.0, high=1.0)
    >>> r.method, round(r.rate, 4), round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson_clustered', 0.58, -0.1396, 0.8987)
    """
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        msg = f"need finite low < high, got {low}, {high}"
        raise ValueError(msg)
    t = np.asarray(totals, dtype=np.float64)
    m = np.asarray(units, dtype=np.float64)
    width = high - low
    w = np.clip((t - low * m) / width, 0.0, m)  # rounding only: each value lies in [low, high]
    est = _clustered(*_arrays(w, m), confidence=confidence, truncate=False)

    def back(x: float | None) -> float | None:
        return None if x is None else low + width * x

    return RateEstimate(
        est.n,
        est.n_clusters,
        back(est.rate),
        back(est.ci_low),
        back(est.ci_high),
        None if est.se_clustered is None else est.se_clustered * width,
        est.design_effect,
        est.effective_n,
        est.method,
    )


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
    return frame.group_by("c").agg(
        pl.col("a").sum().alias("sa"), pl.col("b").sum().alias("sb"), pl.len().cast(pl.Float64).alias("m")
    )


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Σxy / sqrt(Σx² Σy²) of residual totals; 0 when either side shows no spread."""
    sxx, syy = float(np.sum(x * x)), float(np.sum(y * y))
    if sxx <= 0 or syy <= 0:
        return 0.0
    return max(-1.0, min(1.0, float(np.sum(x * y)) / math.sqrt(sxx * syy)))


def paired_rate_difference(
    a: Sequence[float] | pl.Series,
    b: Sequence[float] | pl.Series,
    cluster: Sequence[Hashable] | pl.Series,
    *,
    confidence: float = 0.95,
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

    Returns
    -------
    PairedTest
        With one pair per case: Newcombe's (1998) method 10, the MOVER
        interval (Zou & Donner 2008) from the two Wilson intervals (l, u) and
        the phi coefficient r of the pairs:
        L = d − sqrt((p_a − l_a)² − 2r(p_a − l_a)(u_b − p_b) + (u_b − p_b)²),
        U = d + sqrt((u_a − p_a)² − 2r(u_a − p_a)(p_b − l_b) + (p_b − l_b)²)
        (``newcombe``). With several pairs in a case: the per-pair differences
        in [−1, 1] through :func:`bounded_mean_interval` (CR1, t(G − 1); the
        case-level paired test, ``wilson_clustered``). Inside [−1, 1] by
        construction; fewer than two cases with several pairs in one: no
        interval.

    Raises
    ------
    ValueError
        When there is no pair or a value is not finite.

    Examples
    --------
    Ten trials of one case, every trial won by a: a difference, no interval.

    >>> paired_rate_difference([1] * 10, [0] * 10, ["q"] * 10).method
    'none'
    >>> t = paired_rate_difference([1, 1, 1, 1, 0, 1], [0, 1, 0, 0, 0, 1], ["x", "x", "y", "y", "z", "z"])
    >>> t.method, round(t.difference, 4), round(t.ci_low, 4), round(t.ci_high, 4)
    ('wilson_clustered', 0.5, -0.6225, 0.9496)
    >>> t = paired_rate_difference([1] * 8 + [0] * 12, [0] * 2 + [1] * 2 + [0] * 16, range(20))
    >>> t.method, round(t.difference, 4), round(t.ci_low, 4), round(t.ci_high, 4)
    ('newcombe', 0.3, 0.0914, 0.4954)
    """
    sums = _pairs(a, b, cluster)
    sa, sb, m = (sums.get_column(c).to_numpy() for c in ("sa", "sb", "m"))
    total, clusters = float(m.sum()), int(m.size)
    pa, pb = float(np.sum(sa)) / total, float(np.sum(sb)) / total
    d = pa - pb
    if not (m <= 1).all():
        est = bounded_mean_interval(sa - sb, m, low=-1.0, high=1.0, confidence=confidence)
        return PairedTest(
            int(total), clusters, pa, pb, d, est.ci_low, est.ci_high, est.se_clustered, None, est.method, confidence
        )
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
    confidence: float = 0.95,
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

    Returns
    -------
    PairedTest
        The per-pair differences through :func:`bounded_mean_interval` on
        [−width, width] (CR1 with t(G − 1), inside the range by
        construction). Fewer than two cases: no interval.

    Examples
    --------
    >>> t = paired_mean_difference([0.9, 0.8, 0.7, 0.9], [0.5, 0.6, 0.7, 0.4], ["a", "b", "c", "d"], width=1.0)
    >>> t.method, round(t.difference, 4), round(t.ci_low, 4), round(t.ci_high, 4)
    ('wilson_clustered', 0.275, -0.0905, 0.5752)
    """
    sums = _pairs(a, b, cluster)
    sa, sb, m = (sums.get_column(c).to_numpy() for c in ("sa", "sb", "m"))
    total, clusters = float(m.sum()), int(m.size)
    pa, pb = float(np.sum(sa)) / total, float(np.sum(sb)) / total
    est = bounded_mean_interval(sa - sb, m, low=-width, high=width, confidence=confidence)
    return PairedTest(
        int(total), clusters, pa, pb, pa - pb, est.ci_low, est.ci_high, est.se_clustered, None, est.method, confidence
    )
