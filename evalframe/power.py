"""Power and minimum detectable effect of a paired comparison of two candidates (SPEC §6a).

Before a run: how small a difference in pass rate a plan of ``cases`` ×
``trials`` can detect, and how many cases a target difference needs. After a
run: how large a difference the batch could have detected (``compare`` says
so beside a ``no_supported_winner``).

The model is the one behind the case-level paired test of
:mod:`evalframe.inference`: the per-case difference of the two candidates'
mean outcomes is the independent unit. With pass rate p, intra-case
correlation ρ of one candidate's trials (the ICC, see the summary's ``icc``)
and K trials per case, one candidate's case mean has variance
σ² = p(1 − p)·(ρ + (1 − ρ)/K) (Kish 1965, the design effect 1 + (K − 1)ρ per
case); with r the correlation of the two candidates' case means (pairing on
the same cases, estimated by ``compare`` as ``pair_correlation``), the
per-case difference has variance 2σ²(1 − r). With G cases the minimum
detectable difference at two-sided level α and power 1 − β is

    MDE = (t_{1 − α/2, G − 1} + t_{1 − β, G − 1}) · sqrt(2σ²(1 − r) / G),

the usual normal-approximation power formula for a paired mean difference
(e.g. Cohen 1988, *Statistical Power Analysis for the Behavioral Sciences*,
ch. 2) with t quantiles for few cases, as in E. Miller (2024), "Adding Error
Bars to Evals", arXiv:2411.00640, §4 (power analysis with clustered
questions and resampled answers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Detectable", "cases_needed", "detectable_difference"]


@dataclass(frozen=True, slots=True)
class Detectable:
    """The minimum detectable difference of a design. Returned by :func:`detectable_difference`."""

    cases: int
    """Cases G (the independent units)."""
    trials: float
    """Trials per case K (a mean for an unbalanced batch)."""
    difference: float | None
    """Minimum detectable difference in pass rate (a fraction), None with fewer than two cases."""
    case_sd: float
    """Standard deviation of one per-case difference, sqrt(2σ²(1 − r))."""
    design_effect: float
    """1 + (K − 1)ρ: the variance of a case mean over that of one trial, times K."""


def _check(name: str, value: float, low: float, high: float, *, closed: bool = False) -> None:
    ok = low <= value <= high if closed else low < value < high
    if not (math.isfinite(value) and ok):
        brackets = "[]" if closed else "()"
        msg = f"{name} must be in {brackets[0]}{low}, {high}{brackets[1]}, got {value!r}"
        raise ValueError(msg)


def detectable_difference(
    cases: int,
    trials: float = 1,
    *,
    rate: float = 0.5,
    icc: float = 0.0,
    pair_correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
) -> Detectable:
    """The smallest difference in pass rate a paired design detects with the given power.

    Parameters
    ----------
    cases
        Cases G.
    trials
        Trials per case K ≥ 1.
    rate
        The baseline pass rate p in (0, 1).
    icc
        Intra-case correlation ρ in [0, 1] of one candidate's trials (0:
        trials are independent draws; 1: a case's trials always agree).
    pair_correlation
        Correlation r in [−1, 1) of the two candidates' case means (0 when
        unknown; positive when both find the same cases hard).
    alpha
        Two-sided significance level.
    power
        Target power 1 − β.

    Returns
    -------
    Detectable
        ``difference`` = (t_{1 − α/2, G − 1} + t_{1 − β, G − 1})·sqrt(2σ²(1 − r)/G)
        with σ² = p(1 − p)(ρ + (1 − ρ)/K); None with fewer than two cases.

    Raises
    ------
    ValueError
        When an argument is outside its range.

    Examples
    --------
    >>> round(detectable_difference(200, 1, rate=0.5).difference, 4)
    0.1408
    >>> round(detectable_difference(200, 3, rate=0.5, icc=0.3).difference, 4)
    0.1028
    >>> detectable_difference(1, 10).difference is None
    True
    """
    if cases < 0:
        msg = f"cases must be a non-negative count, got {cases!r}"
        raise ValueError(msg)
    if not (math.isfinite(trials) and trials >= 1):
        msg = f"trials must be at least 1, got {trials!r}"
        raise ValueError(msg)
    _check("rate", rate, 0.0, 1.0)
    _check("icc", icc, 0.0, 1.0, closed=True)
    _check("alpha", alpha, 0.0, 1.0)
    _check("power", power, 0.0, 1.0)
    if not (math.isfinite(pair_correlation) and -1.0 <= pair_correlation < 1.0):
        msg = f"pair_correlation must be in [-1, 1), got {pair_correlation!r}"
        raise ValueError(msg)
    variance = rate * (1.0 - rate) * (icc + (1.0 - icc) / trials)
    case_sd = math.sqrt(2.0 * variance * (1.0 - pair_correlation))
    deff = 1.0 + (trials - 1.0) * icc
    if cases < 2:
        return Detectable(cases, trials, None, case_sd, deff)
    from evalframe.inference import _t_quantile

    q = _t_quantile(1.0 - alpha / 2.0, cases - 1) + _t_quantile(power, cases - 1)
    return Detectable(cases, trials, min(1.0, q * case_sd / math.sqrt(cases)), case_sd, deff)


def cases_needed(
    difference: float,
    trials: float = 1,
    *,
    rate: float = 0.5,
    icc: float = 0.0,
    pair_correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    most: int = 10_000_000,
) -> int | None:
    """The fewest cases whose minimum detectable difference is at most ``difference``.

    Parameters
    ----------
    difference
        Target difference in pass rate, in (0, 1].
    trials, rate, icc, pair_correlation, alpha, power
        As in :func:`detectable_difference`.
    most
        Search bound: None is returned when even this many cases do not suffice.

    Examples
    --------
    >>> cases_needed(0.10, 1, rate=0.5)
    395
    >>> cases_needed(0.10, 5, rate=0.5, icc=0.3)  # more trials per case need fewer cases
    175
    """
    _check("difference", difference, 0.0, 1.0)

    def detects(g: int) -> bool:
        found = detectable_difference(
            g, trials, rate=rate, icc=icc, pair_correlation=pair_correlation, alpha=alpha, power=power
        ).difference
        return found is not None and found <= difference

    if not detects(most):
        return None
    low, high = 2, most  # detects(high); MDE decreases as cases grow
    while low < high:
        mid = (low + high) // 2
        if detects(mid):
            high = mid
        else:
            low = mid + 1
    return low
