"""A design's power analysis (SPEC §6a): what ``cases`` × ``trials`` can detect, and trials traded for cases.

:func:`power` answers before a run, for the ``evalframe power`` command: the
minimum detectable difference of the design and the cases a target needs
(:mod:`evalframe.stats.detectable`, whose docstring gives the model and its
sources), at each number of trials of a trade table, with the pair
correlation carried from the trials it was measured at
(:func:`pair_correlation_at`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from evalframe.errors import OptionError
from evalframe.stats.clustered import Target, check_target
from evalframe.stats.detectable import (
    Detectable,
    cases_needed,
    check_design,
    check_difference,
    check_range,
    check_units,
    detectable_difference,
)
from evalframe.stats.intervals import real_number

__all__ = [
    "TRADE_TRIALS",
    "PowerPlan",
    "pair_correlation_at",
    "pair_correlation_limit",
    "power",
]

#: Trials per case compared in :func:`power`'s trade table.
TRADE_TRIALS: Final = (1, 2, 3, 5, 10)


def _shrink(icc: float, trials: float) -> float:
    return icc + (1.0 - icc) / trials


def pair_correlation_at(r: float, *, icc: float, measured_at: float, trials: float) -> float:
    """The correlation of two candidates' case means at ``trials``, from ``r`` measured at ``measured_at`` trials.

    The two sides' case probabilities keep their covariance whatever the trials; each side's case mean has
    variance p(1 − p)(ρ + (1 − ρ)/K), so r_K = r·(ρ + (1 − ρ)/K₀)/(ρ + (1 − ρ)/K). That needs |r| ≤
    ρ/(ρ + (1 − ρ)/K₀): the sides can share only the variance between cases.

    Parameters
    ----------
    r
        The correlation measured at ``measured_at`` trials per case (``compare``'s ``pair_correlation``).
    icc
        Intra-case correlation ρ of one side's trials.
    measured_at, trials
        Trials per case K₀ of the measurement and K wanted (each ≥ 1).

    Raises
    ------
    evalframe.errors.OptionError
        On ``pair_correlation`` (a ``ValueError``) when ``|r|`` exceeds what ``icc`` allows at ``measured_at``
        trials; the reason says which icc would do.

    Examples
    --------
    >>> round(pair_correlation_at(0.2, icc=0.3, measured_at=1, trials=3), 4)
    0.375
    """
    if r == 0.0 or trials == measured_at:
        return r
    if abs(r) > pair_correlation_limit(icc, measured_at) + 1e-12:
        k = f"{measured_at:g} trial{'' if measured_at == 1 else 's'}"
        msg = (
            f"a pair correlation of {r:.4g} at {k} per case needs an icc of at least "
            f"{_icc_for(abs(r), measured_at):.4g} (got {icc:.4g}): the two candidates can share only the "
            "variance between cases"
        )
        raise OptionError("pair_correlation", msg)
    return r * _shrink(icc, measured_at) / _shrink(icc, trials)


def pair_correlation_limit(icc: float, trials: float) -> float:
    """The largest correlation of two candidates' case means that ``icc`` allows at ``trials`` per case.

    ρ/(ρ + (1 − ρ)/K): the two sides' case means share at most the variance between cases.

    Examples
    --------
    >>> pair_correlation_limit(0.3, 1), round(pair_correlation_limit(0.3, 3), 4)
    (0.3, 0.5625)
    """
    return icc / _shrink(icc, trials)


def _icc_for(r: float, trials: float) -> float:
    """The least ρ with ρ/(ρ + (1 − ρ)/K) ≥ r."""
    return r / (trials - r * (trials - 1.0)) if trials > 1 else r


@dataclass(frozen=True, repr=False)
class PowerPlan:
    """What a design can detect: returned by :func:`power`."""

    inputs: dict[str, Any]
    """The design and assumptions: cases, trials, alpha, power, rate, icc, pair_correlation, target_difference,
    target (``sample`` or ``fixed``)."""
    detectable: Detectable
    """The minimum detectable difference of the design."""
    cases_needed: int | None
    """Cases needed for ``target_difference`` at these trials (None without a target or when out of reach)."""
    trade: pl.DataFrame
    """The trade of trials against cases (see :func:`power`)."""
    notes: list[str] = field(default_factory=list)
    """Assumptions the numbers rest on, in words."""
    sources: list[str] = field(default_factory=list)
    """Inputs read from an earlier audit or comparison (:func:`power`'s ``baseline`` and ``comparison``), in
    words."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON.

        Keys: ``inputs``, ``sentence``, ``detectable_difference`` (the smaller of ``detectable_rise`` and
        ``detectable_drop``, fractions, null when out of reach), ``model``, ``design_effect``,
        ``cases_needed``, ``trade`` (a list of rows), ``notes`` and ``sources``.
        """
        d = self.detectable
        return {
            "inputs": dict(self.inputs),
            "sentence": self.sentence(),
            "detectable_difference": d.difference,
            "detectable_rise": d.rise,
            "detectable_drop": d.drop,
            "model": d.model,
            "design_effect": d.design_effect,
            "cases_needed": self.cases_needed,
            "trade": self.trade.to_dicts(),
            "notes": list(self.notes),
            "sources": list(self.sources),
        }

    def _lines(self) -> list[str]:
        """The sentence, the cases a target needs (when one was given), each source and each note."""
        lines = [self.sentence()]
        target = self.inputs.get("target_difference")
        if target is not None:
            needed = "out of reach" if self.cases_needed is None else f"{self.cases_needed} cases"
            lines.append(f"cases needed for a difference of {target:g}: {needed}")
        return lines + self.sources + self.notes

    def __repr__(self) -> str:
        """A few lines: the sentence, the cases a target needs, the notes and where the trade table is.

        Examples
        --------
        >>> print(repr(power(200, 3, rate=0.5, icc=0.3, target_difference=0.1)))  # doctest: +ELLIPSIS
        PowerPlan: with 200 cases × 3 trials you can detect 10.2 points (80% power, ...)
          cases needed for a difference of 0.1: 209 cases
          - the power is that of compare's test: ...
          the trade of trials against cases: .trade
        """
        head, *rest = self._lines()
        bullets = [*self.sources, *self.notes]
        needed = rest[: len(rest) - len(bullets)]
        lines = [f"PowerPlan: {head}", *(f"  {n}" for n in needed), *(f"  - {n}" for n in bullets)]
        return "\n".join([*lines, "  the trade of trials against cases: .trade"])

    def _repr_html_(self) -> str:
        """HTML for Jupyter: the sentence, the cases a target needs, the notes and the trade table (polars')."""
        head, *rest = (html.escape(line) for line in self._lines())
        items = "".join(f"<li>{line}</li>" for line in rest)
        return f"<div><p><b>{head}</b></p><ul>{items}</ul>{self.trade._repr_html_()}</div>"

    def sentence(self) -> str:
        """The headline in words: "with 200 cases × 1 trial you can detect 14.3 points (...)".

        The direction is named when it matters: "a drop of 45.1 points but no rise" when only one way is
        within reach (a rate near 1 leaves little room to rise), "a rise of 15.7 points or a drop of 16.8
        points" (the smaller first) when the two round differently. Under the fixed target it says that the
        difference is about these cases only.

        Examples
        --------
        >>> print(power(20, 5, rate=0.5, icc=0.3, target="fixed").sentence())
        with 20 cases × 5 trials you can detect 16.5 points about these 20 cases only (--cases fixed)
        (80% power, two-sided α 0.05, baseline rate 0.5)
        """
        i, d = self.inputs, self.detectable
        k = f"{i['trials']:g} trial{'' if i['trials'] == 1 else 's'}"
        rise, drop = (None if v is None else f"{100 * v:.1f} points" for v in (d.rise, d.drop))
        if rise is None and drop is None:
            what = "no difference in pass rate"
        elif rise == drop:
            what = f"{rise}"
        elif drop is None:
            what = f"a rise of {rise} but no drop"
        elif rise is None:
            what = f"a drop of {drop} but no rise"
        elif d.difference == d.rise:  # the smaller (the MDE) first
            what = f"a rise of {rise} or a drop of {drop}"
        else:
            what = f"a drop of {drop} or a rise of {rise}"
        about = f" about these {i['cases']} cases only (--cases fixed)" if i.get("target") == "fixed" else ""
        return (
            f"with {i['cases']} cases × {k} you can detect {what}{about} "
            f"({i['power']:.0%} power, two-sided α {i['alpha']:g}, baseline rate {i['rate']:g})"
        )


def power(
    cases: int | None = None,
    trials: int | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    rate: float | None = None,
    icc: float | None = None,
    pair_correlation: float | None = None,
    pair_trials: float | None = None,
    target_difference: float | None = None,
    trade_trials: Sequence[int] = TRADE_TRIALS,
    target: Target = "sample",
    baseline: Mapping[str, Any] | None = None,
    comparison: Mapping[str, Any] | None = None,
) -> PowerPlan:
    """What a paired design of ``cases`` × ``trials`` can detect, and what more trials or more cases buy.

    Parameters
    ----------
    cases, trials
        The design: cases G ≥ 2 and trials per case K ≥ 1 (default: ``baseline``'s, else 1 trial; cases
        are needed from one or the other).
    alpha, power
        Two-sided level of ``compare``'s test and the target power.
    rate
        The baseline's pass rate in (0, 1) (default: ``baseline``'s ``pass_rate_scored``, else 0.5).
    icc
        Intra-case correlation of one candidate's trials in [0, 1] (default: ``baseline``'s ``icc`` clamped
        to [0, 1], else 0).
    pair_correlation
        Correlation of the two candidates' case means (``compare``'s ``pair_correlation``), measured at
        ``pair_trials`` trials per case; carried to other trials by :func:`pair_correlation_at` (default:
        ``comparison``'s, clamped to :func:`pair_correlation_limit` as sampling noise beyond what ``icc``
        allows, else 0).
    pair_trials
        Trials per case at which ``pair_correlation`` was measured (default: ``comparison``'s pairs per
        case, else ``trials``).
    target_difference
        A difference in pass rate to size the design for (``cases_needed``): a rise in (0, 1 − rate] or a
        drop in [−rate, 0); or None.
    trade_trials
        Trials per case for the trade table.
    target
        What ``compare``'s verdict will be about (its ``cases``): ``sample``, the cases as a sample of a
        population of tasks, or ``fixed``, these cases only (the within-case model of
        :mod:`evalframe.stats.detectable`: no pair correlation, nothing detectable with one trial per case).
    baseline
        An earlier audit's summary row of the baseline candidate (``report.summary.row(i, named=True)``,
        or a units table's as :func:`evalframe.funnel.funnel` computes it): ``cases_planned``,
        ``planned`` / ``cases_planned`` rounded, ``pass_rate_scored`` and ``icc`` give what is not given
        above. Each input read from it is named in ``sources``.
    comparison
        An earlier comparison's row (a row of ``Comparison.table``, of ``comparison.parquet`` or of
        ``compare --format json``): ``pair_correlation`` and ``pairs_used`` / ``cases_used`` give
        ``pair_correlation`` and ``pair_trials`` when ``pair_correlation`` is not given.

    Returns
    -------
    PowerPlan
        ``trade`` has one row per (basis, trials): ``basis`` (String: ``same_cases`` keeps G cases,
        ``same_budget`` keeps the G·K units and takes ⌊G·K/K'⌋ cases), ``trials``, ``cases``, ``units``
        (Int64), ``pair_correlation`` (Float64, at those trials), ``detectable_difference`` (Float64, a
        fraction; null when out of reach), ``detectable_rise`` and ``detectable_drop`` (Float64, the
        smallest detectable rise and drop as positive fractions, each null when out of reach; the difference
        is the smaller of the two) and ``cases_needed`` (Int64, for ``target_difference``; null
        without one).

    Raises
    ------
    evalframe.errors.OptionError
        A ``ValueError`` whose ``option`` names the input out of range, a ``pair_correlation`` beyond what
        ``icc`` allows, no ``cases`` at all, or a ``baseline`` / ``comparison`` without the number needed.

    Examples
    --------
    >>> plan = power(200, 1, rate=0.5, icc=0.3, target_difference=0.1)
    >>> round(plan.detectable.difference, 4), plan.cases_needed
    (0.1434, 408)
    >>> print(plan.sentence())
    with 200 cases × 1 trial you can detect 14.3 points (80% power, two-sided α 0.05, baseline rate 0.5)
    >>> print(power(20, 1, rate=0.9).sentence())  # near a rate of 1 only a drop has room to be detected
    with 20 cases × 1 trial you can detect a drop of 45.1 points but no rise
    (80% power, two-sided α 0.05, baseline rate 0.9)
    >>> [(k, g, round(d, 3)) for k, g, d in plan.trade.filter(basis="same_budget").select(
    ...     "trials", "cases", "detectable_difference").rows()]
    [(1, 200, 0.143), (2, 100, 0.159), (3, 66, 0.177), (5, 40, 0.207), (10, 20, 0.27)]
    """
    earlier = _Earlier(cases, trials, rate, icc, pair_correlation, pair_trials, baseline, comparison)
    cases, trials, rate, icc, pair_correlation = earlier.cases, earlier.trials, earlier.rate, earlier.icc, earlier.r
    cases, trials, measured, ks = _checked_design(
        cases, trials, rate, target_difference, earlier.pair_trials, trade_trials
    )
    check_design(cases, trials, rate, icc, pair_correlation, alpha, power)
    target = check_target(target)
    r_at = {k: pair_correlation_at(pair_correlation, icc=icc, measured_at=measured, trials=k) for k in ks}

    def detectable_at(g: int, k: int) -> Detectable:
        return detectable_difference(
            g, k, rate=rate, icc=icc, pair_correlation=r_at[k], alpha=alpha, power=power, target=target
        )

    needed_at: dict[int, int | None] = {
        k: None
        if target_difference is None
        else cases_needed(
            target_difference, k, rate=rate, icc=icc, pair_correlation=r_at[k], alpha=alpha, power=power, target=target
        )
        for k in ks
    }
    inputs = {
        "cases": int(cases),
        "trials": int(trials),
        "alpha": alpha,
        "power": power,
        "rate": rate,
        "icc": icc,
        "pair_correlation": pair_correlation,
        "pair_trials": measured,
        "target_difference": target_difference,
        "target": target,
    }
    trade = _trade_table(cases, trials, ks, r_at, needed_at, detectable_at)
    found = detectable_at(cases, trials)
    notes = _notes(cases, trials, icc, ks, target)
    return PowerPlan(inputs, found, needed_at[int(trials)], trade, notes, earlier.sources)


def _row(value: object, option: str) -> Mapping[str, Any]:
    """One row as a mapping: a mapping as it is, or the row of a one-row polars frame; else OptionError."""
    if isinstance(value, pl.DataFrame) and value.height == 1:
        return value.row(0, named=True)
    if isinstance(value, Mapping):
        return value
    shape = f"a frame of {value.height} rows" if isinstance(value, pl.DataFrame) else type(value).__name__
    reason = f"{option} is one row (a mapping, or a frame of one row, e.g. report.summary filtered), got {shape}"
    raise OptionError(option, reason)


@dataclass
class _Earlier:
    """:func:`power`'s inputs with what was not given read from ``baseline`` and ``comparison``, and the words."""

    cases: Any
    trials: Any
    rate: Any
    icc: Any
    r: Any
    pair_trials: float | None
    baseline: Mapping[str, Any] | None
    comparison: Mapping[str, Any] | None
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.baseline is not None:
            self._from_summary(_row(self.baseline, "baseline"))
        if self.cases is None:
            raise OptionError("cases", "cases is needed (or a baseline summary row to read it from)")
        self.trials = 1 if self.trials is None else self.trials
        self.rate = 0.5 if self.rate is None else self.rate
        unmeasured = self.icc is None  # neither given nor measured: 0 unless the comparison shows more
        self.icc = 0.0 if unmeasured else self.icc
        if self.r is None and self.comparison is not None:
            check_range("icc", self.icc, 0.0, 1.0, closed=True)  # the icc bounds the correlation read: checked first
            if self.pair_trials is not None:
                _measured_at(self.pair_trials, self.trials)
            self._from_comparison(_row(self.comparison, "comparison"), unmeasured)
        self.r = 0.0 if self.r is None else self.r

    def _from_summary(self, row: Mapping[str, Any]) -> None:
        name = row.get("candidate", "the baseline")
        planned, cases, rate, icc = (
            real_number(row.get(k)) for k in ("planned", "cases_planned", "pass_rate_scored", "icc")
        )
        if self.cases is None or self.trials is None:
            if not cases or not cases.is_integer() or planned is None:
                raise OptionError("baseline", f"{name}'s summary row has no whole cases_planned and planned to read")
            self.cases = int(cases) if self.cases is None else self.cases
            self.trials = max(1, round(planned / cases)) if self.trials is None else self.trials
        if self.rate is None:
            if rate is None or not 0.0 < rate < 1.0:
                said = "no pass_rate_scored (no unit scored)" if rate is None else f"pass_rate_scored {rate:g}"
                reason = f"{name}'s summary row has {said}: the power needs a rate strictly between 0 and 1"
                raise OptionError("baseline", reason)
            self.rate = rate
            self.sources.append(f"rate {rate:.4g}: {name}'s pass_rate_scored")
        if self.icc is None and icc is not None:
            self.icc = min(max(icc, 0.0), 1.0)
            self.sources.append(f"icc {self.icc:.4g}: {name}'s intra-case correlation")
        elif self.icc is None:
            self.sources.append(f"icc not measured: {name}'s summary has none (it needs a case with two scored units)")

    def _from_comparison(self, row: Mapping[str, Any], icc_unmeasured: bool) -> None:
        """The comparison's correlation, and the icc when the correlation exceeds what it allows.

        An unmeasured icc (one trial per case shows none) is raised to the least the correlation allows; a
        measured or given one stands, and the correlation is clamped to it (sampling noise).
        """
        r, pairs, cases = (real_number(row.get(k)) for k in ("pair_correlation", "pairs_used", "cases_used"))
        if r is None:
            reason = "the comparison has no pair correlation (numeric scores, or under 3 cases)"
            raise OptionError("comparison", reason)
        if self.pair_trials is None:
            self.pair_trials = pairs / cases if pairs and cases else float(self.trials)
        self.sources.append(f"pair correlation {r:.4g} at {self.pair_trials:g} pair(s) per case: the comparison's")
        if abs(r) <= pair_correlation_limit(self.icc, self.pair_trials):
            self.r = r
        elif icc_unmeasured:
            self.icc, self.r = _icc_for(abs(r), self.pair_trials), r
            self.sources.append(f"icc {self.icc:.4g}: the least the pair correlation allows (no icc measured)")
        else:
            self.r = math.copysign(pair_correlation_limit(self.icc, self.pair_trials), r)
            self.sources.append(f"pair correlation clamped to {self.r:.4g}, the most the icc allows")


def _checked_design(
    cases: int,
    trials: int,
    rate: float,
    target_difference: float | None,
    pair_trials: float | None,
    trade_trials: Sequence[int],
) -> tuple[int, int, float, list[int]]:
    """Cases and trials as ints, the trials ``pair_correlation`` was measured at, the trade's trials; or OptionError."""
    import numpy as np  # imported on use: `import evalframe` does not need it

    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise OptionError("trials", f"trials must be a whole number of at least 1, got {trials!r}")
    if not isinstance(cases, (int, np.integer)) or isinstance(cases, bool) or cases < 2:
        raise OptionError("cases", f"cases must be a whole number of at least 2, got {cases!r}")
    if target_difference is not None:
        check_range("rate", rate, 0.0, 1.0)  # the difference's range is the rate's
        check_difference(target_difference, rate, zero=False, name="target_difference")
    measured = _measured_at(pair_trials, trials)
    try:
        given: list[object] | None = None if isinstance(trade_trials, str) else list(trade_trials)
    except TypeError:  # not a collection
        given = None
    whole = [k for k in given or [] if isinstance(k, int | np.integer) and not isinstance(k, bool) and k >= 1]
    if given is None or len(whole) < len(given):
        raise OptionError("trade_trials", f"trade_trials must be whole numbers of at least 1, got {trade_trials!r}")
    cases, trials = int(cases), int(trials)
    ks = sorted({int(k) for k in whole} | {trials})
    check_units(cases, trials)
    check_units(cases, ks[-1], "trade_trials")
    return cases, trials, measured, ks


def _measured_at(pair_trials: object, trials: int) -> float:
    """The trials per case the pair correlation was measured at (``trials`` when not given); OptionError below 1."""
    measured = real_number(trials if pair_trials is None else pair_trials)
    if measured is None or measured < 1:
        raise OptionError("pair_trials", f"pair_trials must be at least 1, got {pair_trials!r}")
    return measured


def _trade_table(
    cases: int,
    trials: int,
    ks: list[int],
    r_at: dict[int, float],
    needed_at: dict[int, int | None],
    detectable_at: Callable[[int, int], Detectable],
) -> pl.DataFrame:
    """The trade of trials against cases: one row per (basis, trials), columns as :func:`power` returns them."""
    rows = []
    for basis in ("same_cases", "same_budget"):
        for k in ks:
            g = cases if basis == "same_cases" else cases * trials // k
            found = detectable_at(g, k) if g >= 2 else None
            rows.append(
                {
                    "basis": basis,
                    "trials": k,
                    "cases": g,
                    "units": g * k,
                    "pair_correlation": r_at[k],
                    "detectable_difference": None if found is None else found.difference,
                    "detectable_rise": None if found is None else found.rise,
                    "detectable_drop": None if found is None else found.drop,
                    "cases_needed": needed_at[k],
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "basis": pl.String,
            "trials": pl.Int64,
            "cases": pl.Int64,
            "units": pl.Int64,
            "pair_correlation": pl.Float64,
            "detectable_difference": pl.Float64,
            "detectable_rise": pl.Float64,
            "detectable_drop": pl.Float64,
            "cases_needed": pl.Int64,
        },
    )


def _notes(cases: int, trials: int, icc: float, ks: list[int], target: Target = "sample") -> list[str]:
    """The assumptions the numbers rest on, in words."""
    if target == "fixed":
        df = cases * (trials - 1)
        test = (
            f"the within-case interval of --cases fixed (t with {df} degrees of freedom), about these {cases} "
            "cases only, not the tasks they were drawn from; the pair correlation plays no part"
            if trials > 1
            else "none under --cases fixed with one trial per case: the trials' own variation cannot be estimated"
        )
    else:
        test = (
            "the exact McNemar test (one trial per case)"
            if trials == 1
            else f"the interval clustered by case (t with {cases - 1} degrees of freedom)"
        )
    notes = [f"the power is that of compare's test: {test}"]
    if trials == 1 and icc == 0.0 and any(k > 1 for k in ks):
        notes.append("icc 0 assumed: with icc 0 more trials per case count as more independent cases")
    return notes
