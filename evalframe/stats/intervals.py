"""The Wilson interval, the exact McNemar test and worst/best-case bounds.

Pure functions used by the funnel, compare and report steps. Each works on
plain numbers or on polars expressions/frames, never on pandas objects, and
cites the source of its formula:

- :func:`wilson_interval`, :func:`wilson_bounds` — Wilson (1927), the score
  interval of a binomial proportion (the clustered intervals built on it are
  in :mod:`evalframe.stats.clustered`);
- :func:`mcnemar_exact` — McNemar (1947), the exact (binomial) test on the
  discordant pairs;
- :func:`bounds` — Manski (1990), worst/best-case bounds of the full-plan
  pass rate under any outcome of the ungraded units.

Invalid arguments (negative counts, ``passed > scored``, a confidence outside
(0, 1), null or non-finite values) raise :class:`ValueError`; nothing is
silently dropped or clipped unless a function says so.
"""

from __future__ import annotations

import math
import numbers
import operator
from statistics import NormalDist
from typing import Final, SupportsIndex

from evalframe.errors import OptionError

__all__ = [
    "DEFAULT_CONFIDENCE",
    "bounds",
    "check_confidence",
    "mcnemar_exact",
    "normal_quantile",
    "real_number",
    "wilson_bounds",
    "wilson_interval",
]


#: The two-sided coverage of every interval when neither the call nor the audit declares one.
DEFAULT_CONFIDENCE: Final = 0.95


def real_number(value: object) -> float | None:
    """``value`` as a finite float when it is a real number (numpy's too, not a bool), else None.

    An integer beyond any float is None too, as are NaN and ±inf.

    Examples
    --------
    >>> real_number(3), real_number(0.5), real_number(True), real_number("0.5"), real_number(10**400)
    (3.0, 0.5, None, None, None)
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def check_confidence(confidence: object) -> float:
    """``confidence`` when it is a number strictly between 0 and 1, else OptionError on ``confidence``.

    The one check of a confidence level, whatever computes its interval.

    Examples
    --------
    >>> check_confidence(0.9)
    0.9
    >>> try:
    ...     check_confidence(1.5)
    ... except OptionError as exc:
    ...     print(exc.option, "|", exc.reason)
    confidence | confidence must be strictly between 0 and 1, got 1.5
    """
    number = real_number(confidence)
    if number is None or not 0.0 < number < 1.0:
        raise OptionError("confidence", f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return number


def normal_quantile(confidence: float) -> float:
    """Two-sided standard-normal critical value z for a confidence level.

    ``z = Φ⁻¹(1 − (1 − confidence) / 2)``, from :meth:`statistics.NormalDist.inv_cdf`
    (Wichura 1988, algorithm AS 241, accurate to about 1e-16)
    (the inverse of the standard normal distribution function; Gauss 1809 /
    Laplace 1812 — the textbook normal approximation, e.g. Wasserman 2004,
    *All of Statistics*, §6.3.2).

    Parameters
    ----------
    confidence
        Coverage of the two-sided interval, strictly between 0 and 1.

    Returns
    -------
    float
        The critical value z > 0.

    Raises
    ------
    evalframe.errors.OptionError
        A ``ValueError``: ``confidence`` is not a number strictly between 0 and 1 (:func:`check_confidence`).

    Examples
    --------
    >>> round(normal_quantile(0.95), 12)
    1.95996398454
    """
    return NormalDist().inv_cdf(1.0 - (1.0 - check_confidence(confidence)) / 2.0)


def _count(name: str, value: SupportsIndex) -> int:
    """Return ``value`` as a non-negative int, or raise ValueError."""
    try:
        count = operator.index(value)
    except TypeError:
        msg = f"{name} must be an integer count, got {value!r}"
        raise ValueError(msg) from None
    if count < 0:
        msg = f"{name} must be non-negative, got {count}"
        raise ValueError(msg)
    return count


# --- Wilson score interval ---------------------------------------------------------


def wilson_interval(
    successes: SupportsIndex, n: SupportsIndex, *, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float | None, float | None]:
    """Wilson score interval of a binomial proportion ``successes / n``.

    Source: E. B. Wilson (1927), "Probable inference, the law of succession,
    and statistical inference", *Journal of the American Statistical
    Association* 22(158):209–212.

    Parameters
    ----------
    successes
        Number of successes (an integer count, 0 ≤ successes ≤ n).
    n
        Number of trials (an integer count ≥ 0).
    confidence
        Two-sided coverage; z = :func:`normal_quantile` (``confidence``).

    Returns
    -------
    tuple of (float or None, float or None)
        ``(low, high)``, fractions with 0 ≤ low ≤ successes/n ≤ high ≤ 1;
        ``(None, None)`` when ``n == 0`` (no evidence, no interval).

    Raises
    ------
    ValueError
        When a count is negative or not an integer, when ``successes > n``,
        or when ``confidence`` is outside (0, 1).

    See Also
    --------
    wilson_bounds : the same interval of a fraction over an effective sample size.

    Notes
    -----
    With p = s / n and z the critical value,

    .. math::

        \\frac{p + z^2/(2n) \\mp z \\sqrt{p(1-p)/n + z^2/(4n^2)}}{1 + z^2/n}
        = \\frac{s + z^2/2 \\mp z \\sqrt{s(n-s)/n + z^2/4}}{n + z^2},

    computed in the second (multiplied-through) form. In exact arithmetic the
    lower end is 0 when s = 0 and the upper end is 1 when s = n; those ends
    are returned exactly, and the others are clipped to [0, 1] against
    rounding.

    Examples
    --------
    >>> low, high = wilson_interval(63, 100)
    >>> round(low, 4), round(high, 4)
    (0.5322, 0.7182)
    >>> wilson_interval(0, 4)[0], wilson_interval(4, 4)[1]
    (0.0, 1.0)
    >>> wilson_interval(0, 0)
    (None, None)
    """
    s, total = _count("successes", successes), _count("n", n)
    if s > total:
        msg = f"successes ({s}) must not exceed n ({total})"
        raise ValueError(msg)
    z = normal_quantile(confidence)
    if total == 0:
        return None, None
    return wilson_bounds(s / total, total, z)


def wilson_bounds(p: float, n: float, q: float) -> tuple[float, float]:
    """The Wilson (1927) score interval of a proportion ``p`` over ``n`` units with critical value ``q``.

    ``n`` may be an effective (fractional) sample size and ``q`` a t quantile
    (:mod:`evalframe.stats.clustered`). The ends are exact at p = 0 and p = 1 and
    otherwise clipped to [0, p] and [p, 1] against rounding.

    Examples
    --------
    >>> tuple(round(v, 4) for v in wilson_bounds(0.63, 100, 1.959963984540054))
    (0.5322, 0.7182)
    """
    q2n = q * q / n
    center = (p + q2n / 2.0) / (1.0 + q2n)
    half = q / (1.0 + q2n) * math.sqrt(max(p * (1.0 - p) / n + q2n / (4.0 * n), 0.0))
    low = 0.0 if p == 0.0 else min(max(center - half, 0.0), p)
    high = 1.0 if p == 1.0 else max(min(center + half, 1.0), p)
    return low, high


def mcnemar_exact(b: SupportsIndex, c: SupportsIndex) -> float:
    """Exact (binomial) two-sided McNemar test on the discordant pairs.

    Source: Q. McNemar (1947), "Note on the sampling error of the difference
    between correlated proportions or percentages", *Psychometrika*
    12(2):153–157. The exact form conditions on the b + c discordant pairs:
    under the null of equal marginal proportions, b ~ Binomial(b + c, 1/2).
    Computed with :func:`scipy.stats.binomtest` (two-sided, which for p = 1/2
    is min(1, 2·P(X ≤ min(b, c)))).

    Parameters
    ----------
    b
        Pairs where the first system passed and the second failed.
    c
        Pairs where the first system failed and the second passed.

    Returns
    -------
    float
        Two-sided p-value in (0, 1]; 1.0 when b + c = 0 (no discordant pair,
        no evidence of a difference).

    Raises
    ------
    ValueError
        When a count is negative or not an integer.

    Examples
    --------
    >>> mcnemar_exact(1, 6)  # 2 * (C(7,0) + C(7,1)) / 2**7 = 16/128
    0.125
    >>> mcnemar_exact(0, 0)
    1.0
    """
    nb, nc = _count("b", b), _count("c", c)
    if nb + nc == 0:
        return 1.0
    from scipy.stats import binomtest  # imported on use: scipy is slow to import

    return float(binomtest(nb, nb + nc, 0.5, alternative="two-sided").pvalue)


# --- worst/best-case bounds ---------------------------------------------------------


def bounds(passed: SupportsIndex, scored: SupportsIndex, planned: SupportsIndex) -> tuple[float | None, float | None]:
    """Worst/best-case bounds of the full-plan pass rate (SPEC §2).

    Source: C. F. Manski (1990), "Nonparametric bounds on treatment effects",
    *American Economic Review* 80(2):319–323 — bounds that assume nothing
    about the outcomes that were not observed.

    Parameters
    ----------
    passed
        Scored units that passed.
    scored
        Units with a valid grade (passed ≤ scored).
    planned
        Planned units (scored ≤ planned).

    Returns
    -------
    tuple of (float or None, float or None)
        ``(worst, best)`` = (passed / planned, (passed + planned − scored) /
        planned): the pass rate over the whole plan if every ungraded unit
        (missing, failed to run, judge error, not scored) had failed, and if
        every one had passed. Whatever the ungraded units would have scored,
        the full-plan pass rate lies in [worst, best]; the width is
        1 − scored_coverage. ``(None, None)`` when planned = 0. These are the
        funnel's ``pass_rate_planned`` and ``pass_rate_upper``.

    Raises
    ------
    ValueError
        When a count is negative or not an integer, or passed > scored or
        scored > planned.

    Examples
    --------
    The SPEC ledger fixture (1 passed, 2 scored, 4 planned):

    >>> bounds(1, 2, 4)
    (0.25, 0.75)
    >>> bounds(0, 0, 0)
    (None, None)
    """
    p, s, total = _count("passed", passed), _count("scored", scored), _count("planned", planned)
    if not p <= s <= total:
        msg = f"need passed <= scored <= planned, got passed={p}, scored={s}, planned={total}"
        raise ValueError(msg)
    if total == 0:
        return None, None
    return p / total, (p + total - s) / total
