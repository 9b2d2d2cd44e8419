"""Power and minimum detectable difference of a paired comparison of two candidates (SPEC §6a).

Before a run: how small a difference in pass rate a plan of ``cases`` ×
``trials`` can detect, how many cases a target difference needs, and what
more trials buy against more cases (:func:`evalframe.stats.power.power`, the
``evalframe power`` command). After a run: how large a difference the batch could have detected
(``compare`` says so beside a ``no_supported_winner``).

The power is that of the test ``compare`` runs (SPEC §6), not of a textbook
stand-in, and the minimum detectable difference (MDE) is the smallest |d| at
which that power reaches the target, found by root finding
(:func:`scipy.optimize.brentq`). The baseline passes with rate p, the
candidate with p + d.

**Both directions.** The test is two-sided, and both of its models are
symmetric under swapping pass and fail (the exact test's discordant pairs
swap sides; the variance p(1 − p) is that of 1 − p): a drop of d from p (the
test declaring the baseline better) has exactly the power of a rise of d from
1 − p. :func:`achieved_power` takes d in [−p, 1 − p], a negative d computed
as that rise, and :func:`detectable_difference` searches both: the smallest
detectable rise (up to 1 − p) and drop (up to p), reporting the smaller as
the MDE. At p = ½ they are equal; near p = 1 only a drop has room to be
detected, near p = 0 only a rise.

**One trial per case** (``compare``: Newcombe's interval and the exact
McNemar test, both required). Each case is one pair; with φ the correlation
of the two sides' outcomes (``pair_correlation``), the cells are
p₁₁ = p(p + d) + φ·sqrt(p(1 − p)(p + d)(1 − p − d)), p₁₀ = p + d − p₁₁
(candidate passes alone), p₀₁ = p − p₁₁, so the discordant pairs number
N ~ Binomial(G, ψ) with ψ = p₁₀ + p₀₁ and, given N = n, the baseline-only
ones B ~ Binomial(n, p₀₁/ψ). The exact test rejects for the candidate when
B ≤ j_n, the largest j with 2·P(Binomial(n, ½) ≤ j) < α, so its power is the
exact sum

    power = Σ_n P(N = n) · P(B ≤ j_n | n),

over every n carrying probability above 1e-16 (Miettinen 1968 and Connor
1987 give the normal approximations of this sum; it is computed exactly here
with :mod:`scipy.stats`) up to :data:`EXACT_MCNEMAR_CASES` cases. The sum
has about 16·sqrt(Gψ(1 − ψ)) terms, each a binomial quantile and cdf, and
the search for a detectable difference evaluates it dozens of times: beyond
100,000 cases (where its terms number thousands) Connor's approximation
Φ((sqrt(G)(p₁₀ − p₀₁) − z_{1 − α/2}·sqrt(ψ)) / sqrt(ψ − (p₁₀ − p₀₁)²))
is used instead, which keeps the work bounded whatever G; at 100,000 cases it
lies within 0.4 points of power of the exact sum, and closer as G grows
(the gap shrinks as 1/sqrt(G)). Newcombe's interval excludes zero whenever the
exact test rejects (every rejecting 2 × 2 table of 12, 20 and 30 cases in
``tests/stats/test_power.py``), so this is the power of the whole rule. φ is
clamped to the range the two rates allow. The power is not monotone in G
(the saw-tooth of exact tests; Chernick & Liu 2002): :func:`cases_needed`
returns a G where it crosses the target, G − 1 staying below.

**Several trials per case** (``compare``: the per-pair differences clustered
by case, :func:`evalframe.stats.clustered.bounded_mean_interval`). With K trials
per case and ρ the intra-case correlation of one candidate's trials (the
summary's ``icc``, the same for both sides), a side's case mean has variance
σ²(p) = p(1 − p)·(ρ + (1 − ρ)/K) (Kish 1965: the design effect 1 + (K − 1)ρ);
with r the correlation of the two sides' case means (``pair_correlation`` as
``compare`` estimates it), one per-case difference has variance
σ_D² = σ²(p) + σ²(p + d) − 2r·σ(p)σ(p + d). For balanced cases the bounded
interval is a Wilson score interval of w = (1 + D̄)/2 on the effective
sample size n_eff = (1 − D̄²)/V, V the CR1 variance of D̄ (s²/G), with the
t(G − 1) quantile; it excludes 0 exactly when D̄·sqrt(1 − D̄²)/sqrt(V) exceeds
t_{1 − α/2, G − 1}, i.e. a one-sample t test whose critical value is
divided by sqrt(1 − D̄²). With D̄ ≈ d in that factor, the power is the
noncentral t probability (Cohen 1988, ch. 2; E. Miller 2024, "Adding Error
Bars to Evals", arXiv:2411.00640, §4, for clustered questions and resampled
answers)

    power = P(T'_{G − 1, δ} > t_{1 − α/2, G − 1} / sqrt(1 − d²)),  δ = d·sqrt(G)/σ_D.

The noncentral t is exact for normal per-case differences; bounded, slightly
skewed ones (the seeded simulation, ``benchmarks/sim_power.py``) give about
one point more power at 20 to 100 cases, which is left in rather than fitted.

**Cases fixed** (``target="fixed"``; ``compare --cases fixed``: inference about these cases only, Miller
2024). The interval's variance is the trials' within the cases, V = Σ m_c·s_c² / N² with s_c² the unbiased
within-case variance of the per-pair differences, and its quantile t with Σ (m_c − 1) = G(K − 1) degrees of
freedom (:func:`evalframe.stats.clustered.rate_interval`). Given its cases, one trial of a side with case
probability p_c varies by p_c(1 − p_c), on average p(1 − p)(1 − ρ) over cases of mean p and intra-case
correlation ρ; the two sides' trials are independent given the case, so one pair difference varies by
σ_W² = (1 − ρ)·(p(1 − p) + (p + d)(1 − p − d)), and the pair correlation plays no part (the cases' shared
difficulty is conditioned on, not averaged over). The same Wilson-as-t argument as above gives

    power = P(T'_{G(K − 1), δ} > t_{1 − α/2, G(K − 1)} / sqrt(1 − d²)),  δ = d·sqrt(G·K)/σ_W,

and no power at all with one trial per case (no interval: trial noise cannot be told from the cases).
It is the power for a difference d of the mean over these cases of the two sides' pass probabilities;
``benchmarks/sim_inference.py --fixed-power`` checks it against seeded batches drawn on fixed cases.

Sources
-------
O. S. Miettinen (1968), "The matched pairs design in the case of all-or-none
responses", Biometrics 24(2):339–352. R. J. Connor (1987), "Sample size for
testing differences in proportions for the paired-sample design", Biometrics
43(1):207–211. M. R. Chernick and C. Y. Liu (2002), "The saw-toothed behavior
of power versus sample size and software solutions: single binomial
proportion using exact methods", The American Statistician 56(2):149–155.
L. Kish (1965), *Survey Sampling*, Wiley. J. Cohen (1988), *Statistical Power
Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum. E. Miller (2024),
arXiv:2411.00640.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from evalframe.errors import OptionError
from evalframe.stats.clustered import Target, check_target, t_quantile
from evalframe.stats.intervals import real_number

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Detectable",
    "Direction",
    "Model",
    "achieved_power",
    "cases_needed",
    "detectable_difference",
    "observed_detectable",
]

Model = Literal["exact_mcnemar", "clustered_t", "fixed_t"]
#: Which way a difference can be detected: both ways, only as a rise (candidate above baseline) or only as a drop.
Direction = Literal["either", "rise", "drop"]
#: Probability mass of the discordant-pair count left out of the exact sum, on each side.
_TAIL: Final = 1e-16
#: Up to this many cases the one-trial power is the exact sum; beyond, Connor's (1987) normal approximation.
EXACT_MCNEMAR_CASES: Final = 100_000
#: Points of the grid on which the first crossing of the target power is bracketed before root finding.
_GRID: Final = 48


@dataclass(frozen=True, slots=True, repr=False)
class Detectable:
    """The minimum detectable difference of a design. Returned by :func:`detectable_difference`."""

    cases: int
    """Cases G (the independent units)."""
    trials: float
    """Trials per case K (a mean for an unbalanced batch)."""
    difference: float | None
    """Minimum detectable difference in pass rate (a fraction, ≥ 0): the smaller of ``rise`` and ``drop``;
    None with fewer than two cases or when no difference the rate allows either way reaches the power."""
    case_sd: float
    """Standard deviation of one per-case difference at d = 0, sqrt(2σ²(p)(1 − r))."""
    design_effect: float
    """1 + (K − 1)ρ: the variance of a case mean over that of one trial, times K."""
    model: Model
    """``exact_mcnemar`` (one trial per case) or ``clustered_t`` (several) under the sample target, ``fixed_t``
    under the fixed one: the test whose power is used."""
    rise: float | None = None
    """Smallest detectable rise (candidate above baseline, a fraction); None when no rise up to 1 − rate
    reaches the power."""
    drop: float | None = None
    """Smallest detectable drop (candidate below baseline, as a positive fraction); None when no drop up to
    rate reaches the power."""

    def __repr__(self) -> str:
        """Rise, drop, cases, trials and test in one line (differences as points of pass rate).

        Examples
        --------
        >>> detectable_difference(200, 1, rate=0.5)
        Detectable(rise 14.3 points, drop 14.3 points; 200 cases × 1 trial(s), exact_mcnemar)
        """
        rise, drop = ("none within reach" if v is None else f"{100 * v:.1f} points" for v in (self.rise, self.drop))
        return f"Detectable(rise {rise}, drop {drop}; {self.cases} cases × {self.trials:g} trial(s), {self.model})"

    @property
    def direction(self) -> Direction | None:
        """``either`` when a rise and a drop are both detectable, ``rise`` or ``drop`` when only one is, else None."""
        if self.rise is not None and self.drop is not None:
            return "either"
        if self.rise is not None:
            return "rise"
        return None if self.drop is None else "drop"


def check_range(name: str, value: object, low: float, high: float, *, closed: bool = False) -> None:
    """OptionError on ``name`` unless ``value`` is a real number in (low, high), or [low, high] when ``closed``."""
    number = real_number(value)
    if number is None or not (low <= number <= high if closed else low < number < high):
        brackets = "[]" if closed else "()"
        raise OptionError(name, f"{name} must be in {brackets[0]}{low}, {high}{brackets[1]}, got {value!r}")


#: The most units (cases × trials) a design may have: beyond 2**53 a float no longer counts whole units.
MAX_UNITS: Final = 2**53


def check_units(cases: int, trials: float, option: str | None = None) -> None:
    """OptionError when ``cases`` × ``trials`` exceeds :data:`MAX_UNITS`, on ``option`` (else the larger factor)."""
    if cases > MAX_UNITS / trials:  # a division: an int beyond any float compares without overflow
        name = option or ("trials" if trials > cases else "cases")
        shown = f"{trials:.6g}" if trials > MAX_UNITS or not float(trials).is_integer() else int(trials)
        count = f"a number of {len(str(cases))} digits" if cases > 10**20 else cases
        raise OptionError(name, f"cases × trials must be at most 2**53 units, got {count} × {shown}")


def check_design(
    cases: int,
    trials: float,
    rate: float,
    icc: float,
    pair_correlation: float,
    alpha: float,
    target: float,
    *,
    rate_closed: bool = False,
) -> None:
    """OptionError on the first argument of a design outside its range (``target`` is the power)."""
    import numpy as np  # imported on use: `import evalframe` does not need it

    if isinstance(cases, bool) or not isinstance(cases, (int, np.integer)) or cases < 0:
        raise OptionError("cases", f"cases must be a non-negative whole number, got {cases!r}")
    if (real_number(trials) or 0.0) < 1.0:
        raise OptionError("trials", f"trials must be at least 1, got {trials!r}")
    check_units(int(cases), float(trials))
    check_range("rate", rate, 0.0, 1.0, closed=rate_closed)
    check_range("icc", icc, 0.0, 1.0, closed=True)
    check_range("alpha", alpha, 0.0, 1.0)
    check_range("power", target, 0.0, 1.0)
    number = real_number(pair_correlation)
    if number is None or not -1.0 <= number < 1.0:
        raise OptionError("pair_correlation", f"pair_correlation must be in [-1, 1), got {pair_correlation!r}")


def _mcnemar_critical(n: np.ndarray, alpha: float) -> np.ndarray:
    """j_n: the largest j with 2·P(Binomial(n, ½) ≤ j) < α (−1 when none), as in :func:`.mcnemar_exact`."""
    import numpy as np  # imported on use: `import evalframe` does not need it
    from scipy.stats import binom

    guess = np.floor(binom.ppf(alpha / 2.0, n, 0.5)).astype(np.int64)
    best = np.full(n.shape, -1, dtype=np.int64)
    for j in (guess - 2, guess - 1, guess, guess + 1):
        ok = (j >= 0) & (2.0 * binom.cdf(j, n, 0.5) < alpha) & (2 * j < n)
        best = np.where(ok, np.maximum(best, j), best)
    return best


def _cells(rate: float, difference: float, phi: float) -> tuple[float, float]:
    """(p₁₀, p₀₁) of one pair: candidate passes alone, baseline passes alone (φ clamped to what the rates allow)."""
    pb, pc = rate, rate + difference
    p11 = pb * pc + phi * math.sqrt(pb * (1.0 - pb) * pc * (1.0 - pc))
    p11 = min(max(p11, max(0.0, pb + pc - 1.0)), min(pb, pc))
    return max(pc - p11, 0.0), max(pb - p11, 0.0)


def _power_mcnemar(cases: int, rate: float, difference: float, phi: float, alpha: float) -> float:
    import numpy as np  # imported on use: `import evalframe` does not need it
    from scipy.stats import binom

    p10, p01 = _cells(rate, difference, phi)
    psi = p10 + p01
    if psi <= 0.0 or cases == 0:
        return 0.0
    if cases > EXACT_MCNEMAR_CASES:  # bounded work: the exact sum's terms grow as sqrt(cases)
        from scipy.stats import norm

        shift = p10 - p01
        spread = math.sqrt(max(psi - shift * shift, 1e-300))
        return float(norm.cdf((math.sqrt(cases) * shift - norm.ppf(1.0 - alpha / 2.0) * math.sqrt(psi)) / spread))
    if psi >= 1.0:
        low, high = cases, cases
    else:
        low = max(int(binom.ppf(_TAIL, cases, psi)) - 1, 0)
        high = min(cases - int(binom.ppf(_TAIL, cases, 1.0 - psi)) + 1, cases)
    n = np.arange(low, high + 1, dtype=np.int64)
    critical = _mcnemar_critical(n, alpha)
    given_n = np.where(critical >= 0, binom.cdf(critical, n, p01 / psi), 0.0)
    return float(np.sum(binom.pmf(n, cases, psi) * given_n))


def _power_clustered(
    cases: int, trials: float, rate: float, difference: float, icc: float, r: float, alpha: float
) -> float:
    from scipy.stats import nct

    if cases < 2:
        return 0.0
    shrink = icc + (1.0 - icc) / trials
    pc = rate + difference
    sb, sc = math.sqrt(rate * (1.0 - rate) * shrink), math.sqrt(max(pc * (1.0 - pc), 0.0) * shrink)
    sd = math.sqrt(max(sb * sb + sc * sc - 2.0 * r * sb * sc, 1e-300))
    critical = t_quantile(1.0 - alpha / 2.0, cases - 1) / math.sqrt(max(1.0 - difference * difference, 1e-12))
    return float(nct.sf(critical, cases - 1, difference * math.sqrt(cases) / sd))


def _power_fixed(cases: int, trials: float, rate: float, difference: float, icc: float, alpha: float) -> float:
    """The power of the fixed target's within-case interval (module docstring); 0 without two trials in a case."""
    from scipy.stats import nct

    df = round(cases * (trials - 1.0))
    if cases < 2 or df < 1:
        return 0.0
    pc = rate + difference
    within = (1.0 - icc) * (rate * (1.0 - rate) + max(pc * (1.0 - pc), 0.0))
    sd = math.sqrt(max(within, 1e-300))
    critical = t_quantile(1.0 - alpha / 2.0, df) / math.sqrt(max(1.0 - difference * difference, 1e-12))
    return float(nct.sf(critical, df, difference * math.sqrt(cases * trials) / sd))


def achieved_power(
    difference: float,
    cases: int,
    trials: float = 1,
    *,
    rate: float = 0.5,
    icc: float = 0.0,
    pair_correlation: float = 0.0,
    alpha: float = 0.05,
    target: Target = "sample",
) -> float:
    """The probability that ``compare``'s paired test detects a true ``difference`` in its direction.

    Parameters
    ----------
    difference
        True difference in pass rate, candidate − baseline, in [−rate, 1 − rate]: positive, the power of
        declaring the candidate better; negative (a drop), of declaring the baseline better, which is the
        power of the rise −``difference`` from 1 − ``rate`` (module docstring: the test is symmetric under
        swapping pass and fail).
    cases, trials, rate, icc, pair_correlation, alpha, target
        The design, as in :func:`detectable_difference`: under the sample target exactly one trial per case
        uses the exact McNemar model, more the clustered t model; under the fixed target the within-case t
        model (module docstring).

    Returns
    -------
    float
        Power in [0, 1]: the exact sum over the discordant pairs (one trial per case), or the noncentral
        t probability (several).

    Raises
    ------
    evalframe.errors.OptionError
        A ``ValueError`` whose ``option`` names the argument outside its range (those of
        :func:`detectable_difference`, or ``difference``).

    Examples
    --------
    >>> round(achieved_power(0.1, 200, 1, rate=0.5), 4)
    0.4793
    >>> round(achieved_power(0.1, 200, 3, rate=0.5, icc=0.3, pair_correlation=0.4), 4)
    0.9434
    >>> round(achieved_power(-0.45, 20, 1, rate=0.9), 4), round(achieved_power(0.45, 20, 1, rate=0.1), 4)
    (0.7987, 0.7987)
    >>> round(achieved_power(0.1, 20, 5, rate=0.5, icc=0.3, target="fixed"), 4)
    0.3887
    """
    check_design(cases, trials, rate, icc, pair_correlation, alpha, 0.5)
    difference = check_difference(difference, rate, zero=True)
    return _power(difference, int(cases), trials, rate, icc, pair_correlation, alpha, check_target(target))


def check_difference(difference: float, rate: float, *, zero: bool, name: str = "difference") -> float:
    """``difference`` inside [−rate, 1 − rate] (without 0 unless ``zero``), else OptionError on ``name``.

    A bound missed by rounding (0.1 at a rate of 0.9, where 1 − 0.9 = 0.09999999999999998) is taken as the bound.
    """
    slack = 1e-12
    number = real_number(difference)
    if number is None or not (-rate - slack <= number <= 1.0 - rate + slack and (zero or number != 0.0)):
        where = f"[-rate, 1 - rate] = [{-rate:.4g}, {1.0 - rate:.4g}]"
        if not zero:
            where = f"[-rate, 0) or (0, 1 - rate] = [{-rate:.4g}, 0) or (0, {1.0 - rate:.4g}]"
        raise OptionError(name, f"{name} must be in {where}, got {difference!r}")
    return min(max(number, -rate), 1.0 - rate)


def _power(
    difference: float,
    cases: int,
    trials: float,
    rate: float,
    icc: float,
    r: float,
    alpha: float,
    target: Target = "sample",
) -> float:
    """:func:`achieved_power` unchecked, ``rate`` in [0, 1]: a drop is the rise of as much from 1 − ``rate``."""
    if difference < 0.0:
        rate, difference = 1.0 - rate, -difference
    if target == "fixed":
        return _power_fixed(cases, trials, rate, difference, icc, alpha)
    if trials == 1:
        return _power_mcnemar(cases, rate, difference, r, alpha)
    return _power_clustered(cases, trials, rate, difference, icc, r, alpha)


def detectable_difference(
    cases: int,
    trials: float = 1,
    *,
    rate: float = 0.5,
    icc: float = 0.0,
    pair_correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    target: Target = "sample",
) -> Detectable:
    """The smallest difference in pass rate, either way, that ``compare``'s paired test detects with ``power``.

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
        trials are independent draws; 1: a case's trials always agree; unused with one trial).
    pair_correlation
        Correlation r in [−1, 1) of the two candidates' case means at K
        trials (0 when unknown; positive when both find the same cases hard; one trial: φ, the
        correlation of the two sides' outcomes).
    alpha
        Two-sided significance level (``compare``'s ``alpha``; its interval at confidence 1 − α).
    power
        Target power 1 − β.
    target
        What ``compare``'s verdict is about (its ``cases``): ``sample`` (the cases stand for a population of
        tasks; the models above) or ``fixed`` (these cases only: the within-case model, ``fixed_t``; nothing is
        detectable with one trial per case).

    Returns
    -------
    Detectable
        ``rise``: the root d of :func:`achieved_power` (d) = ``power`` (the
        first crossing on a grid over (0, 1 − rate], refined by
        :func:`scipy.optimize.brentq` to 1e-10), None when even d = 1 − rate
        falls short; ``drop``: the same for −d over (0, rate] (a rise from
        1 − rate); ``difference``: the smaller of the two, None with fewer
        than two cases or when neither direction reaches the power.

    Raises
    ------
    evalframe.errors.OptionError
        A ``ValueError`` whose ``option`` names the argument outside its range.

    Examples
    --------
    >>> round(detectable_difference(200, 1, rate=0.5).difference, 4)
    0.1434
    >>> round(detectable_difference(200, 3, rate=0.5, icc=0.3).difference, 4)
    0.1021
    >>> detectable_difference(1, 10).difference is None
    True

    Near a rate of 1 only a drop has room to be detected; it is the rise detectable from 1 − rate:

    >>> high, low = detectable_difference(20, 1, rate=0.9), detectable_difference(20, 1, rate=0.1)
    >>> high.direction, round(high.difference, 4), high.rise, low.direction, round(low.difference, 4)
    ('drop', 0.4507, None, 'rise', 0.4507)

    About these 20 cases only, the variance between cases drops out: a smaller difference is detectable.

    >>> round(detectable_difference(20, 5, rate=0.5, icc=0.3).difference, 4)
    0.2916
    >>> round(detectable_difference(20, 5, rate=0.5, icc=0.3, target="fixed").difference, 4)
    0.1647
    """
    check_design(cases, trials, rate, icc, pair_correlation, alpha, power)
    return _detectable(int(cases), trials, rate, icc, pair_correlation, alpha, power, check_target(target))


def observed_detectable(
    cases: int,
    trials: float,
    *,
    rate: float,
    icc: float,
    pair_correlation: float,
    alpha: float,
    power: float = 0.8,
    target: Target = "sample",
) -> Detectable:
    """:func:`detectable_difference` at a rate observed after a run, which may be 0 or 1 (``compare``).

    A baseline that passed (or failed) every used pair still has a power: from a rate of 1 only a drop can
    be detected, the rise of as much from 0 (module docstring). Before a run a rate of 0 or 1 is not a plan,
    so :func:`detectable_difference` refuses it.

    Examples
    --------
    >>> found = observed_detectable(20, 1, rate=1.0, icc=0.0, pair_correlation=0.0, alpha=0.05)
    >>> found.direction, round(found.drop, 4)
    ('drop', 0.3665)
    >>> observed_detectable(5, 1, rate=1.0, icc=0.0, pair_correlation=0.0, alpha=0.05).difference is None
    True
    """
    check_design(cases, trials, rate, icc, pair_correlation, alpha, power, rate_closed=True)
    return _detectable(int(cases), trials, rate, icc, pair_correlation, alpha, power, check_target(target))


def _detectable(
    cases: int,
    trials: float,
    rate: float,
    icc: float,
    pair_correlation: float,
    alpha: float,
    power: float,
    target: Target = "sample",
) -> Detectable:
    """The search of :func:`detectable_difference`, unchecked, ``rate`` in [0, 1]."""
    shrink = icc + (1.0 - icc) / trials
    case_sd = math.sqrt(2.0 * rate * (1.0 - rate) * shrink * (1.0 - pair_correlation))
    deff = 1.0 + (trials - 1.0) * icc
    model: Model = "fixed_t" if target == "fixed" else "exact_mcnemar" if trials == 1 else "clustered_t"
    if cases < 2:
        return Detectable(cases, trials, None, case_sd, deff, model)
    rise = _smallest_rise(cases, trials, rate, icc, pair_correlation, alpha, power, target)
    drop = _smallest_rise(cases, trials, 1.0 - rate, icc, pair_correlation, alpha, power, target)
    found = [d for d in (rise, drop) if d is not None]
    return Detectable(cases, trials, min(found) if found else None, case_sd, deff, model, rise, drop)


def _smallest_rise(
    cases: int, trials: float, rate: float, icc: float, r: float, alpha: float, power: float, target: Target
) -> float | None:
    """The smallest rise d in (0, 1 − ``rate``] whose power reaches ``power`` (0 when even d = 0 does), or None."""
    top = 1.0 - rate
    if top <= 0.0:
        return None

    def gap(d: float) -> float:
        return _power(d, cases, trials, rate, icc, r, alpha, target) - power

    below = 0.0
    if gap(below) >= 0.0:  # a target power below the test's level: any difference, even none
        return 0.0
    for i in range(1, _GRID + 1):
        d = top * (i / _GRID) ** 2  # denser near 0, where large designs cross
        if gap(d) >= 0.0:
            from scipy.optimize import brentq

            return float(brentq(gap, below, d, xtol=1e-10))
        below = d
    return None


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
    target: Target = "sample",
) -> int | None:
    """The fewest cases at which ``compare``'s paired test reaches ``power`` for a true ``difference``.

    Parameters
    ----------
    difference
        Target difference in pass rate, candidate − baseline: a rise in (0, 1 − rate] or a drop in
        [−rate, 0) (sized as the rise of as much from 1 − rate).
    trials, rate, icc, pair_correlation, alpha, power, target
        As in :func:`detectable_difference`.
    most
        Search bound: None is returned when even this many cases do not suffice.

    Returns
    -------
    int or None
        G with :func:`achieved_power` ≥ ``power`` at G and below it at G − 1, found by doubling from 2 and
        then bisection, up to ``most``. With one trial per case the exact power saw-tooths in G (Chernick &
        Liu 2002), so a few larger G may fall back below the target.

    Raises
    ------
    evalframe.errors.OptionError
        A ``ValueError`` whose ``option`` names the argument at fault: ``difference`` 0 or outside
        [−rate, 1 − rate], ``most`` or another outside its range.

    Examples
    --------
    >>> cases_needed(0.10, 1, rate=0.5)
    408
    >>> cases_needed(0.10, 5, rate=0.5, icc=0.3)  # more trials per case need fewer cases
    173
    >>> cases_needed(-0.10, 1, rate=0.8), cases_needed(0.10, 1, rate=0.2)  # a drop from 0.8, a rise from 0.2
    (313, 313)
    """
    check_design(most, trials, rate, icc, pair_correlation, alpha, power)
    difference = check_difference(difference, rate, zero=False)
    target = check_target(target)
    if target == "fixed" and trials == 1:  # no interval about fixed cases without two trials in one
        return None

    def reaches(g: int) -> bool:
        return _power(difference, g, trials, rate, icc, pair_correlation, alpha, target) >= power

    low, high = 2, 2
    while not reaches(high):  # doubling first: small designs are cheap to evaluate, huge ones are not
        if high >= most:
            return None
        low, high = high + 1, min(2 * high, most)
    while low < high:  # reaches(high), not reaches(low - 1)
        mid = (low + high) // 2
        if reaches(mid):
            high = mid
        else:
            low = mid + 1
    return low
