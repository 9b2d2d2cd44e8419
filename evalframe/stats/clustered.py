"""Clustered intervals: inference that holds with repeated trials, few cases and missing grades (SPEC §4, §6).

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
arXiv:2411.00640 (clustering by question). R. A. Sugden, T. M. F. Smith and
R. P. Jones (2000), "Cochran's rule for simple random sampling", JRSS B
62(4):787–793 (:func:`skew_check`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

from evalframe.stats.intervals import DEFAULT_CONFIDENCE, normal_quantile, wilson_bounds

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "MIN_CASES",
    "Method",
    "RateEstimate",
    "SkewCheck",
    "Target",
    "bounded_mean_interval",
    "case_mean_fixed",
    "check_target",
    "fixed_way_out",
    "critical_value",
    "rare_case_limit",
    "rate_interval",
    "skew_check",
    "t_quantile",
]

Method = Literal["wilson", "wilson_clustered", "wilson_fixed", "newcombe", "none"]
#: What the inference is about: the cases as a ``sample`` of a larger population of tasks (variance between
#: cases), or as the whole population, ``fixed`` (variance of the trials within these cases only).
Target = Literal["sample", "fixed"]
#: Cases below which no interval is given when units are clustered (one case carries no between-case spread).
MIN_CASES: Final = 2


def check_target(value: str, option: str = "target") -> Target:
    """``value`` when it is a :data:`Target`, else :class:`~evalframe.errors.OptionError` on ``option``.

    The one check of a target, whatever the argument is called (``cases`` in :func:`evalframe.audit` and
    :func:`evalframe.compare.compare`, ``target`` in the power functions).

    Raises
    ------
    evalframe.errors.OptionError
        ``option`` the argument's name, the reason listing ``sample`` and ``fixed`` (a ``ValueError`` too).

    Examples
    --------
    >>> check_target("fixed")
    'fixed'
    >>> try:
    ...     check_target("all", "cases")
    ... except ValueError as exc:
    ...     print(exc.option, "|", exc.reason)
    cases | cases must be one of 'sample', 'fixed', got 'all'
    """
    from evalframe.errors import OptionError  # on use: the errors module reads polars

    allowed = get_args(Target)
    if value not in allowed:
        raise OptionError(option, f"{option} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value  # type: ignore[return-value]


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
    return t_quantile((1.0 + confidence) / 2.0, clusters - 1)


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: int) -> float:
    """The q quantile of Student's t with ``df`` degrees of freedom (``scipy.special.stdtrit``).

    scipy.special is imported on use, and scipy.stats never: an audit without clustered units imports neither.
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


#: Sugden, Smith & Jones (2000): a mean of G values is close enough to normal when G > BASE + SLOPE · g1².
SKEW_RULE_BASE: Final = 28.0
SKEW_RULE_SLOPE: Final = 25.0


@dataclass(frozen=True, slots=True)
class SkewCheck:
    """Whether G per-case values are numerous enough for their skewness (returned by :func:`skew_check`)."""

    cases: int
    """G, the cases."""
    skewness: float
    """g1, the sample (Fisher-Pearson) skewness of the per-case values; 0 when they show no spread."""
    needed: float
    """28 + 25 · g1²: the cases must be more than this."""

    @property
    def holds(self) -> bool:
        """G > 28 + 25 · g1² (Sugden, Smith & Jones 2000)."""
        return self.cases > self.needed

    def describe(self, what: str) -> str:
        """The rule, G, g1 and the needed G in words, ``what`` naming the per-case values.

        Examples
        --------
        >>> print(skew_check([9, 9, 0, 9], [10, 10, 10, 10]).describe("per-case pass rates"))
        Cochran's rule as refined by Sugden, Smith and Jones (2000) needs more than 28 + 25·g1² = 61.3 cases
        for the per-case pass rates (skewness g1 = -1.15); there are 4
        """
        needed = f"{self.needed:.1f}".removesuffix(".0")  # plain digits: a skewed sample needs 42000, not 4.2e+04
        return (
            f"Cochran's rule as refined by Sugden, Smith and Jones (2000) needs more than 28 + 25·g1² = "
            f"{needed} cases for the {what} (skewness g1 = {self.skewness:.3g}); there are {self.cases}"
        )

    def refusal(self, what: str, withheld: str) -> str:
        """Why the sample target withholds ``withheld`` (``a winner``, ``an interval``), and the declared way out.

        The one sentence of every output that withholds for the skewness rule (compare's ``skewness:`` reason,
        the summary's ``pass_rate_scored_ci_withheld``): the rule in words (:meth:`describe`), that the
        sample target cannot support ``withheld`` with these cases, and :func:`fixed_way_out`.

        Examples
        --------
        >>> print(skew_check([9, 9, 0, 9], [10, 10, 10, 10]).refusal("per-case pass rates", "an interval"))
        Cochran's rule as refined by Sugden, Smith and Jones (2000) needs more than 28 + 25·g1² = 61.3 cases
        for the per-case pass rates (skewness g1 = -1.15); there are 4: with 4 cases the sample target
        (cases standing for a larger population of tasks) cannot support an interval for this skew;
        --cases fixed gives inference about these 4 cases only
        """
        return (
            f"{self.describe(what)}: with {self.cases} cases the sample target (cases standing for a larger "
            f"population of tasks) cannot support {withheld} for this skew; {fixed_way_out(self.cases)}"
        )


def fixed_way_out(cases: int) -> str:
    """The declared way out of the sample target's limits, in words: ``--cases fixed`` and what it is about.

    Examples
    --------
    >>> fixed_way_out(12)
    '--cases fixed gives inference about these 12 cases only'
    """
    return f"--cases fixed gives inference about these {cases} case{'' if cases == 1 else 's'} only"


def rare_case_limit(cases: int) -> str:
    """The rule of three in words: what share of the population a kind of case absent from G cases may have.

    A kind of case making up a share q of the population is absent from G cases drawn at random with
    probability (1 − q)^G, below 5 % once q > 3/G (the rule of three; Hanley & Lippman-Hand 1983, "If nothing
    goes wrong, is everything all right?", JAMA 249(13):1743–1745): so up to 3/G could be unseen.

    Parameters
    ----------
    cases
        G ≥ 1, the cases of the sample.

    Raises
    ------
    ValueError
        When ``cases`` < 1.

    Examples
    --------
    >>> print(rare_case_limit(12))
    with 12 cases, a kind of case that fails every time and makes up to 3/12 (25%) of the population could be
    absent from this sample
    >>> print(rare_case_limit(2))
    with 2 cases, a kind of case that fails every time and makes up most of the population could be absent from
    this sample
    """
    if cases < 1:
        msg = f"the rule of three needs at least one case, got {cases}"
        raise ValueError(msg)
    lead = f"with {cases} case{'' if cases == 1 else 's'}, a kind of case that fails every time and makes up"
    if cases <= 3:  # 3/G ≥ 1
        return f"{lead} most of the population could be absent from this sample"
    return f"{lead} to 3/{cases} ({3.0 / cases:.0%}) of the population could be absent from this sample"


def skew_check(
    totals: np.ndarray | Sequence[float],
    units: np.ndarray | Sequence[float],
    *,
    cases: np.ndarray | Sequence[float] | None = None,
) -> SkewCheck:
    """Cochran's rule as refined by Sugden, Smith & Jones (2000): G > 28 + 25 · g1² for G per-case values.

    The clustered intervals (:func:`rate_interval`, :func:`bounded_mean_interval`) take the mean over cases
    to be near normal, which needs more cases the more skewed the per-case values are: a few cases that fail
    every time among many that mostly pass make a mean whose t(G − 1) interval covers too rarely, and a sample
    that drew none of them cannot show it (issue 41).

    Parameters
    ----------
    totals
        Per case: the sum of its units' values (any real values).
    units
        Per case: its number of units; cases with none are ignored.
    cases
        How many cases each entry stands for (default: one each), as in :func:`rate_interval`.

    Returns
    -------
    SkewCheck
        g1 = m3 / m2^(3/2), the Fisher-Pearson coefficient (``scipy.stats.skew`` with ``bias=True``), of the
        ratio estimator's linearized values R_c = t_c − p·m_c with p = Σ t / Σ m (with equal units per case,
        the per-case means' skewness); g1 = 0 when they show no spread. The rule holds when G > 28 + 25·g1².

    Raises
    ------
    ValueError
        When the lengths differ or a count of units or cases is negative.

    Examples
    --------
    Twelve cases passing 18 of 20 trials and none failing every time: symmetric, yet too few for the rule.

    >>> c = skew_check([18] * 12, [20] * 12)
    >>> c.skewness, c.needed, c.holds
    (0.0, 28.0, False)
    >>> c = skew_check([9, 8, 0], [10, 10, 10], cases=[27, 27, 6])
    >>> round(c.skewness, 3), round(c.needed, 1), c.holds
    (-2.501, 184.4, False)
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    t, m = np.asarray(totals, dtype=np.float64), np.asarray(units, dtype=np.float64)
    c = np.ones(t.shape, dtype=np.float64) if cases is None else np.asarray(cases, dtype=np.float64)
    if t.shape != m.shape or c.shape != t.shape:
        msg = f"totals, units and cases must have the same length, got {t.shape}, {m.shape} and {c.shape}"
        raise ValueError(msg)
    if (m < 0).any() or (c < 0).any():
        msg = "units and cases must be >= 0"
        raise ValueError(msg)
    keep = (m > 0) & (c > 0)
    t, m, c = t[keep], m[keep], c[keep]
    g = float(c.sum())
    g1 = 0.0
    if g > 0:
        residual = t - float(np.sum(c * t)) / float(np.sum(c * m)) * m
        m2 = float(np.sum(c * residual**2)) / g
        m3 = float(np.sum(c * residual**3)) / g
        scale = float(np.sum(c * np.abs(residual))) / g
        if m2 > 1e-24 * max(1.0, scale * scale):  # rounding alone is no spread
            g1 = m3 / m2**1.5
            g1 = 0.0 if abs(g1) < 1e-9 else g1  # rounding alone is no skew (symmetric values)
    return SkewCheck(int(g), g1, SKEW_RULE_BASE + SKEW_RULE_SLOPE * g1 * g1)


def _clustered(
    totals: np.ndarray,
    m: np.ndarray,
    cases: np.ndarray,
    *,
    confidence: float,
    truncate: bool,
    squares: np.ndarray | None = None,
) -> RateEstimate:
    """The clustered score interval of Σ totals / Σ m for values in [0, 1] (see :func:`bounded_mean_interval`).

    Entry i stands for ``cases[i]`` cases, each with ``totals[i]`` over ``m[i]`` units. With ``squares`` (per
    entry, the sum of its values' squares) the target is ``fixed``: the variance is the trials' within the cases.
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    keep = m > 0
    totals, m, cases = totals[keep], m[keep], cases[keep]
    n, clusters = float(np.sum(cases * m)), int(cases.sum())
    if n == 0:
        return RateEstimate(0, 0, None, None, None, None, None, None, "none")
    p = float(np.sum(cases * totals)) / n
    if clusters < MIN_CASES:  # SPEC §4: fewer than two cases, no interval (one unit or several)
        return RateEstimate(int(n), clusters, p, None, None, None, None, None, "none")
    if squares is not None:
        return _fixed(totals, m, cases, squares[keep], p=p, n=n, clusters=clusters, confidence=confidence)
    bernoulli = p * (1.0 - p) / n
    if (m <= 1).all() and truncate:  # independent 0/1 units: Wilson (1927) on n
        low, high = wilson_bounds(p, n, normal_quantile(confidence))
        return RateEstimate(int(n), clusters, p, low, high, math.sqrt(bernoulli), 1.0, n, "wilson")
    residual = totals - p * m
    variance = clusters / (clusters - 1) * float(np.sum(cases * (residual * residual))) / (n * n)
    if variance > 0 and bernoulli > 0:
        n_eff = p * (1.0 - p) / variance
        if truncate:  # Korn & Graubard (1998): the design effect is taken as at least 1
            n_eff = min(n_eff, n)
    else:  # no spread seen: as if each case were one observation
        n_eff = float(clusters)
    low, high = wilson_bounds(p, n_eff, critical_value(confidence, clusters))
    deff = n / n_eff
    return RateEstimate(int(n), clusters, p, low, high, math.sqrt(variance), deff, n_eff, "wilson_clustered")


def _fixed(
    totals: np.ndarray,
    m: np.ndarray,
    cases: np.ndarray,
    squares: np.ndarray,
    *,
    p: float,
    n: float,
    clusters: int,
    confidence: float,
) -> RateEstimate:
    """The ``fixed`` target's interval of p = Σ totals / n: trial noise within these cases only (Miller 2024).

    Var(p) = Σ_i n_i s_i² / n², s_i² the unbiased within-case variance SS_i / (n_i − 1); a case of one unit has
    no estimable variance of its own and takes the pooled one, Σ SS_i / Σ (n_i − 1) over the cases of two or
    more units; without such a case there is no interval. Wilson on n_eff = p(1 − p) / Var (n when no trial
    varied) with the t quantile of Σ (n_i − 1) degrees of freedom.
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    s2, df = _within(totals, m, cases, squares)
    if df == 0:  # one unit per case: trial noise cannot be told apart from the cases
        return RateEstimate(int(n), clusters, p, None, None, None, None, None, "none")
    return _wilson_fixed(p, float(np.sum(cases * m * s2)) / (n * n), n, clusters, df, confidence)


def _wilson_fixed(p: float, variance: float, n: float, clusters: int, df: float, confidence: float) -> RateEstimate:
    """Wilson on n_eff = p(1 − p) / ``variance`` (``n`` when nothing varied) with t(``df``): ``wilson_fixed``."""
    n_eff = p * (1.0 - p) / variance if variance > 0 and 0.0 < p < 1.0 else n
    low, high = wilson_bounds(p, n_eff, t_quantile((1.0 + confidence) / 2.0, round(df)))
    return RateEstimate(int(n), clusters, p, low, high, math.sqrt(variance), n / n_eff, n_eff, "wilson_fixed")


def _within(totals: np.ndarray, m: np.ndarray, cases: np.ndarray, squares: np.ndarray) -> tuple[np.ndarray, float]:
    """Per entry the unbiased within-case variance s_i² (the pooled one for a case of one unit), and Σ (m_i − 1).

    s_i² = SS_i / (m_i − 1) with SS_i = Σ x² − (Σ x)² / m_i; pooled: Σ SS_i / Σ (m_i − 1) over the cases of two
    units or more (entry i standing for ``cases[i]`` cases). The degrees of freedom are 0 without such a case.
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    several = m >= 2
    df = float(np.sum(cases[several] * (m[several] - 1.0)))
    within = np.maximum(squares - totals * totals / np.maximum(m, 1.0), 0.0)  # SS_i; rounding only below 0
    pooled = float(np.sum(cases[several] * within[several])) / df if df > 0 else 0.0
    return np.where(several, within / np.maximum(m - 1.0, 1.0), pooled), df


def case_mean_fixed(
    successes: np.ndarray | Sequence[float],
    units: np.ndarray | Sequence[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    cases: np.ndarray | Sequence[float] | None = None,
) -> RateEstimate:
    """The mean over cases of each case's pass fraction, with the fixed target's interval (trial noise only).

    The case-level rate with the ``mean`` reducer (the summary's ``case_pass_rate``) about these cases only
    (``--cases fixed``; Miller 2024): each case weighs 1 whatever its trials, so its fraction c_i / m_i varies
    by s_i² / m_i given the case, s_i² the unbiased within-case variance (the pooled one for a case of one
    unit), and Var = Σ s_i² / m_i / G².

    Parameters
    ----------
    successes, units, cases
        Per case: passed units, scored units (cases with none are ignored), and how many cases the entry
        stands for, as in :func:`rate_interval`.
    confidence
        Two-sided coverage.

    Returns
    -------
    RateEstimate
        ``rate`` the mean of the fractions; the Wilson interval on n_eff = p(1 − p)/Var (G when no trial
        varied) with t(Σ (m_i − 1)) (``wilson_fixed``), as :func:`rate_interval`'s ``target="fixed"``;
        fewer than two cases, or no case of two units: no interval (``none``). ``n`` counts cases.

    Raises
    ------
    ValueError
        As :func:`rate_interval`.

    Examples
    --------
    Cases of 4, 2 and 1 trials passing 2, 1 and 1: fractions ½, ½, 1; SS = 1, ½; pooled s² = 1.5 / 4.

    >>> r = case_mean_fixed([2, 1, 1], [4, 2, 1])
    >>> round(r.rate, 4), round(r.se_clustered**2 * 9, 6), r.method
    (0.6667, 0.708333, 'wilson_fixed')
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    t, m, c = _arrays(successes, units, cases)
    keep = (m > 0) & (c > 0)
    t, m, c = t[keep], m[keep], c[keep]
    g = int(c.sum())
    if g == 0:
        return RateEstimate(0, 0, None, None, None, None, None, None, "none")
    p = float(np.sum(c * t / m)) / g
    s2, df = _within(t, m, c, t)  # 0/1 values: each square is the value
    if g < MIN_CASES or df == 0:
        return RateEstimate(g, g, p, None, None, None, None, None, "none")
    return _wilson_fixed(p, float(np.sum(c * s2 / m)) / (g * g), float(g), g, df, confidence)


def _arrays(
    totals: np.ndarray | Sequence[float],
    units: np.ndarray | Sequence[float],
    cases: np.ndarray | Sequence[float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np  # imported on use: `import evalframe` does not need it

    t, m = np.asarray(totals, dtype=np.float64), np.asarray(units, dtype=np.float64)
    c = np.ones(t.shape, dtype=np.float64) if cases is None else np.asarray(cases, dtype=np.float64)
    if t.shape != m.shape or c.shape != t.shape:
        msg = f"totals, units and cases must have the same length, got {t.shape}, {m.shape} and {c.shape}"
        raise ValueError(msg)
    if (m < 0).any() or (t < 0).any() or (t > m).any() or not np.isfinite(t).all():
        msg = "need 0 <= total <= units in every case"
        raise ValueError(msg)
    if (c < 0).any() or not np.equal(c, np.round(c)).all():
        msg = "cases must be whole numbers >= 0"
        raise ValueError(msg)
    return t, m, c


def rate_interval(
    successes: np.ndarray | Sequence[float],
    units: np.ndarray | Sequence[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    cases: np.ndarray | Sequence[float] | None = None,
    target: Target = "sample",
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
    cases
        How many cases each entry stands for (default: one each). Cases with the same counts can be
        given once with their number: the estimate only depends on how many cases have each
        (successes, units), so an engine can send these counts instead of one row per case.
    target
        ``sample`` (the cases stand for a larger population of tasks) or ``fixed`` (the cases are the
        whole population: inference over trial noise only, conditional on these cases; Miller 2024).

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
        1998; Dean & Pagano 2015): ``wilson_clustered``. Fewer than two cases,
        whatever their units: no interval (``none``; SPEC §4). Always 0 ≤ ci_low ≤
        rate ≤ ci_high ≤ 1, and never a zero-width interval. Under ``target="fixed"``
        (``wilson_fixed``): V = Σ_c m_c·s_c² / N², s_c² = m_c/(m_c − 1)·p_c(1 − p_c) the
        unbiased within-case variance; a case of one unit takes the pooled within-case
        variance Σ SS_c / Σ (m_c − 1) of the cases of two or more; the Wilson interval on
        n_eff = p(1 − p)/V (N when no trial varied, no truncation) with t(Σ (m_c − 1));
        no case of two units or more: no interval (``none``).

    Raises
    ------
    ValueError
        When the lengths differ, a count is negative, or successes exceed units.

    Examples
    --------
    Ten trials of one case, or one trial of one case: a rate, but no interval.

    >>> rate_interval([5], [10]).method, rate_interval([5], [10]).ci_low, rate_interval([1], [1]).ci_low
    ('none', None, None)

    Three cases of three trials (1/1/1, 1/0/0, 0/0/0):

    >>> r = rate_interval([3, 1, 0], [3, 3, 3])
    >>> r.method, round(r.rate, 4), round(r.design_effect, 3), round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson_clustered', 0.4444, 3.15, 0.0276, 0.9576)

    Independent units keep the Wilson interval:

    >>> r = rate_interval([1] * 8 + [0] * 2, [1] * 10)
    >>> r.method, round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson', 0.4902, 0.9433)

    The same ten cases as two counted ones:

    >>> rate_interval([1, 0], [1, 1], cases=[8, 2]) == r
    True

    The three cases as the whole population: only the middle case's trials vary (s² = 1/3), V = 3·(1/3)/81.

    >>> r = rate_interval([3, 1, 0], [3, 3, 3], target="fixed")
    >>> r.method, round(r.se_clustered**2 * 81, 6), round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson_fixed', 1.0, 0.2184, 0.6961)
    """
    t, m, c = _arrays(successes, units, cases)
    squares = t if target == "fixed" else None  # 0/1 values: each square is the value
    return _clustered(t, m, c, confidence=confidence, truncate=True, squares=squares)


def bounded_mean_interval(
    totals: np.ndarray | Sequence[float],
    units: np.ndarray | Sequence[float],
    *,
    low: float = 0.0,
    high: float = 1.0,
    confidence: float = DEFAULT_CONFIDENCE,
    cases: np.ndarray | Sequence[float] | None = None,
    squares: np.ndarray | Sequence[float] | None = None,
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
    cases
        How many cases each entry stands for (default: one each), as in :func:`rate_interval`.
    squares
        Per case: the sum of its values' squares. Given, the target is ``fixed`` (the cases are the whole
        population): the within-case variance of :func:`rate_interval`'s ``target="fixed"``, on w.

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
    import numpy as np  # imported on use: `import evalframe` does not need it

    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        msg = f"need finite low < high, got {low}, {high}"
        raise ValueError(msg)
    t = np.asarray(totals, dtype=np.float64)
    m = np.asarray(units, dtype=np.float64)
    width = high - low
    w = np.clip((t - low * m) / width, 0.0, m)  # rounding only: each value lies in [low, high]
    w2 = None
    if squares is not None:  # Σ w² = Σ (x − low)² / width²
        w2 = (np.asarray(squares, dtype=np.float64) - 2.0 * low * t + low * low * m) / (width * width)
    w, m, c = _arrays(w, m, cases)
    est = _clustered(w, m, c, confidence=confidence, truncate=False, squares=w2)

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
