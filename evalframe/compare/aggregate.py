"""A declared aggregate of one rate across tasks: the stratified estimator, never a default headline (issue 40).

Each task is a stratum: its rate and its case-clustered variance come from its own audit, and the
aggregate is their weighted mean Σ w_t p_t with variance Σ w_t² v_t, as the stratified estimator of
W. G. Cochran (1977), *Sampling Techniques*, 3rd ed., Wiley, ch. 5 (eq. 5.1 and Theorem 5.2: strata
sampled independently, so their variances add with the squared weights). Its degrees of freedom are
Satterthwaite's (Cochran 1977, §5.4, eq. 5.16); the interval is the Wilson score interval on the effective
sample size p(1 − p)/V with that t quantile, the form :func:`evalframe.stats.rate_interval` gives one task
(Korn & Graubard 1998), so it lies inside the rate's range by construction.

``macro`` weighs each task 1/T (the mean of task rates); ``micro`` weighs each by its share of the units
in the rate's denominator (the pooled rate over units), and only pools tasks graded alike.
:func:`aggregate_difference` does the same for two candidates' paired difference, task by task from
:func:`evalframe.compare.compare`; the verdicts stay per task.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, PASSED, PLANNED, SCORED
from evalframe.compare import compare
from evalframe.compare.pairs import PairPolicy, Scale, declared_confidence
from evalframe.errors import AggregateError, OptionError
from evalframe.funnel import outcome_in
from evalframe.natural import natural_key
from evalframe.report.model import AuditReport
from evalframe.slices import GRADED_OUTCOMES
from evalframe.stats import wilson_bounds
from evalframe.stats.clustered import t_quantile

__all__ = ["AGGREGATE_RATES", "Weighting", "aggregate", "aggregate_difference"]

Weighting = Literal["macro", "micro"]
#: The rates an aggregate takes: those whose case-clustered standard error the summary holds, by denominator.
AGGREGATE_RATES: Final = {"pass_rate_scored": SCORED, "mean_score": SCORED}
#: The meta keys that say how a task is graded: tasks pooled by ``micro`` must agree on every one present.
_GRADING: Final = ("grade", "pass_threshold", "score_range", "score", "metric")


@dataclass(frozen=True)
class _Stratum:
    """One task's rate for one candidate: estimate, clustered variance, denominator units and cases."""

    rate: float | None
    variance: float | None
    units: int
    cases: int

    @classmethod
    def of(cls, rate: float | None, se: float | None, units: int, cases: int) -> _Stratum:
        """The stratum of a rate and its clustered standard error."""
        return cls(rate, None if se is None else float(se) ** 2, units, cases)


def _scale(report: AuditReport, rate: str) -> tuple[float, float]:
    """The range of one value of ``rate``: [0, 1] for a pass rate, the score range for ``mean_score``."""
    if rate != "mean_score":
        return (0.0, 1.0)
    low, high = (float(v) for v in report.meta.get("score_range", (0.0, 1.0)))
    return (low, high)


def _grading(report: AuditReport) -> dict[str, Any]:
    """How a task is graded, as its meta records it.

    The :data:`_GRADING` keys, and the metrics (or scorers) its export files name (``exports``, the
    provenance of an audit ``--from`` a format), when any do.
    """
    found = {key: report.meta[key] for key in _GRADING if key in report.meta}
    exports = report.meta.get("exports", [])
    named = {e.get("metric", e.get("scorer")) for e in exports if isinstance(e, Mapping)} - {None}
    if named:
        found["metrics"] = sorted(str(m) for m in named)
    return found


def _strata(report: AuditReport, rate: str) -> dict[str, _Stratum]:
    """Per candidate: the rate, its squared clustered standard error, its denominator and the cases graded."""
    units = report.units.lazy()
    graded = (
        units.filter(outcome_in(units.collect_schema(), *GRADED_OUTCOMES))
        .group_by(CANDIDATE)
        .agg(pl.col(CASE_ID).n_unique().alias("_cases"))
        .collect()
    )
    cases = dict(zip(graded.get_column(CANDIDATE).to_list(), graded.get_column("_cases").to_list(), strict=True))
    return {
        row[CANDIDATE]: _Stratum.of(
            row[rate], row[f"{rate}_se_clustered"], int(row[AGGREGATE_RATES[rate]]), int(cases.get(row[CANDIDATE], 0))
        )
        for row in report.summary.iter_rows(named=True)
    }


def _check_micro(reports: Mapping[str, AuditReport], tasks: list[str]) -> None:
    """Refuse ``micro`` over tasks graded differently (OptionError ``how`` naming each task's grading)."""
    gradings = {t: _grading(reports[t]) for t in tasks}
    if any(g != gradings[tasks[0]] for g in gradings.values()):
        named = "; ".join(f"{t}: {', '.join(f'{k}={v}' for k, v in g.items())}" for t, g in gradings.items())
        raise OptionError("how", f"micro pools units only of tasks graded alike, and these differ: {named}")


def _by_task(reports: Mapping[str, AuditReport] | AuditReport) -> Mapping[str, AuditReport]:
    """Task name → its report: the mapping given, or a report's own :meth:`~AuditReport.by_task`."""
    return reports.by_task() if isinstance(reports, AuditReport) else reports


def _headline_rate(reports: Mapping[str, AuditReport]) -> str:
    """The rate the tasks' headlines read (:class:`Scale`), or OptionError on ``rate`` when they differ."""
    rates = {t: "mean_score" if Scale.of(r.meta).numeric else "pass_rate_scored" for t, r in reports.items()}
    if len(set(rates.values())) > 1:
        listed = "; ".join(f"{t} {rate}" for t, rate in sorted(rates.items()))
        raise OptionError("rate", f"the tasks' headlines read different rates ({listed}): give rate")
    return next(iter(rates.values()), "pass_rate_scored")


def _tasks(reports: Mapping[str, AuditReport], how: str) -> list[str]:
    """The tasks in natural order, once ``how`` and their number are checked."""
    if how not in ("macro", "micro"):
        raise OptionError("how", f"how is 'macro' or 'micro', got {how!r}")
    tasks = sorted(reports, key=natural_key)
    if len(tasks) < 2:
        raise OptionError("reports", f"an aggregate is across two or more tasks, got {len(tasks)}")
    if how == "micro":
        _check_micro(reports, tasks)
    return tasks


def _weights(strata: list[_Stratum], how: Weighting) -> list[float]:
    if how == "macro":
        return [1.0 / len(strata)] * len(strata)
    total = sum(s.units for s in strata)
    return [s.units / total if total else math.nan for s in strata]


def _combined(
    strata: list[_Stratum], weights: list[float], scale: tuple[float, float], confidence: float
) -> dict[str, float | None]:
    """The stratified estimate, its standard error, Satterthwaite degrees of freedom and Wilson interval."""
    none: dict[str, float | None] = {"estimate": None, "se": None, "df": None, "ci_low": None, "ci_high": None}
    if any(s.rate is None or s.units == 0 for s in strata) or any(math.isnan(w) for w in weights):
        return none
    estimate = math.fsum(w * float(s.rate or 0.0) for w, s in zip(weights, strata, strict=True))
    result = none | {"estimate": estimate}
    if any(s.variance is None or s.cases < 2 for s in strata):  # SPEC §4: a task under two cases, no interval
        return result
    parts = [w * w * float(s.variance or 0.0) for w, s in zip(weights, strata, strict=True)]
    variance = math.fsum(parts)
    low, width = scale[0], scale[1] - scale[0]
    p = min(max((estimate - low) / width, 0.0), 1.0)
    v = variance / (width * width)
    if v > 0:
        df = variance**2 / math.fsum(part**2 / (s.cases - 1) for part, s in zip(parts, strata, strict=True))
        n_eff = p * (1.0 - p) / v if 0.0 < p < 1.0 else math.fsum(s.cases for s in strata)
    else:  # no spread seen in any task: Satterthwaite's lower bound, and each case as one observation
        df = float(min(s.cases for s in strata) - 1)
        n_eff = math.fsum(s.cases for s in strata)
    ci_low, ci_high = wilson_bounds(p, n_eff, t_quantile((1.0 + confidence) / 2.0, max(int(df), 1)))
    return result | {
        "se": math.sqrt(variance),
        "df": df,
        "ci_low": low + width * ci_low,
        "ci_high": low + width * ci_high,
    }


def aggregate(
    reports: Mapping[str, AuditReport] | AuditReport,
    *,
    how: Weighting = "macro",
    rate: str | None = None,
    confidence: float | None = None,
) -> pl.DataFrame:
    """A declared aggregate of one rate across tasks, per candidate, with the weights stated.

    Parameters
    ----------
    reports
        Task name → that task's own audit report (what ``AuditReport.by_task()`` returns), two or more; or
        a report of several tasks, read through its ``by_task()``.
    how
        ``macro``: the mean of the task rates, each task weighing 1/T. ``micro``: each task weighing its
        share of the rate's denominator units (``scored``), which is the rate pooled over units; only for
        tasks graded alike.
    rate
        The rate aggregated: ``pass_rate_scored`` or ``mean_score`` (the rates whose case-clustered
        standard error the summary holds; ``mean_score`` only across tasks with one score range). None:
        the rate the headline reads, ``mean_score`` for numeric grades without a pass threshold, else
        ``pass_rate_scored``.
    confidence
        Two-sided coverage of the interval (None: what the audits declared, else 0.95).

    Returns
    -------
    polars.DataFrame
        One row per candidate of any task, sorted by candidate (natural order): ``candidate``,
        ``how``, ``rate`` (String); ``tasks`` (List[String], in natural order), and in that order
        ``weights``, ``task_rates``, ``task_se`` (List[Float64]) and ``task_cases`` (List[UInt32]: cases
        with a graded unit); ``estimate`` = Σ w_t p_t, ``se`` = √(Σ w_t² v_t) with v_t the task's squared
        case-clustered standard error, ``df`` (Satterthwaite's degrees of freedom), ``ci_low``,
        ``ci_high``, ``confidence`` (Float64); and the counts summed over the tasks, ``planned``,
        ``scored``, ``passed`` (UInt32; ``passed`` null for numeric grades without a pass threshold).
        ``estimate`` is null when a task's rate is; ``se``, ``df`` and the interval are null when a task
        has fewer than two graded cases (SPEC §4). ``missing_tasks``
        (List[String]) names the tasks a candidate was not audited in: such a candidate is left out, every
        column after ``tasks`` null but this one (a number over some of the tasks is not this aggregate).

    Raises
    ------
    AggregateError
        When every candidate lacks a task (``missing_tasks``: each candidate → the tasks it lacks).
    OptionError
        ``option`` ``"how"``: not ``macro``/``micro``, or ``micro`` over tasks graded differently (grade
        kind, pass threshold, score range, or the metrics its export files name), the reason naming
        each task's grading; ``"rate"``: a rate without a clustered standard error, or ``mean_score``
        over different score ranges, or no ``rate`` given and the tasks' headlines read different rates;
        ``"reports"``: fewer than two tasks; ``"confidence"``: none given and the audits declared
        different ones. A ``ValueError`` too.

    Notes
    -----
    The tasks are strata sampled independently (Cochran 1977, *Sampling Techniques*, ch. 5): the
    estimate is Σ w_t p_t and its variance Σ w_t² v_t, each v_t clustered by case within its task. The
    degrees of freedom are Satterthwaite's, ν = V² / Σ (w_t² v_t)² / (G_t − 1) with G_t the task's graded
    cases (Cochran 1977, §5.4), rounded down; the interval is Wilson's on the effective sample size
    n* = p(1 − p)/V with the t(ν) quantile (Korn & Graubard 1998), on the rate's range. When no task shows
    any spread (V = 0) ν is the smallest G_t − 1 and n* the total of graded cases.

    Examples
    --------
    >>> import evalframe as ef
    >>> def task(passed):
    ...     plan = ef.Plan.from_frame(pl.DataFrame({"case_id": [f"c{i}" for i in range(len(passed))]}),
    ...                               candidates=["A"])
    ...     results = pl.DataFrame({"candidate": "A", "case_id": plan.cases.get_column("case_id"), "passed": passed})
    ...     return ef.audit(plan, results)
    >>> out = ef.aggregate({"belief": task([1, 1, 1, 0]), "desire": task([1, 0])}, how="micro")
    >>> out.select("tasks", "weights", "estimate", "passed", "scored").row(0)
    (['belief', 'desire'], [0.6666666666666666, 0.3333333333333333], 0.6666666666666666, 4, 6)
    """
    reports = _by_task(reports)
    rate = _headline_rate(reports) if rate is None else rate
    if rate not in AGGREGATE_RATES:
        raise OptionError("rate", f"rate is one of {', '.join(AGGREGATE_RATES)} (with a clustered error), got {rate!r}")
    confidence = declared_confidence(reports.values(), confidence)
    tasks = _tasks(reports, how)
    scales = {t: _scale(reports[t], rate) for t in tasks}
    if len(set(scales.values())) > 1:
        ranges = "; ".join(f"{t} {list(s)}" for t, s in scales.items())
        raise OptionError("rate", f"{rate} is not averaged across different score ranges: {ranges}")
    strata = {t: _strata(reports[t], rate) for t in tasks}
    counts = {t: {r[CANDIDATE]: r for r in reports[t].summary.iter_rows(named=True)} for t in tasks}
    missing = _missing_tasks(strata, tasks)
    if all(missing.values()):
        lacking = "; ".join(f"{name} lacks {', '.join(m)}" for name, m in missing.items())
        reason = f"no candidate was audited in every task ({lacking}): nothing to aggregate"
        raise AggregateError(reason, missing_tasks=missing)
    rows: list[dict[str, Any]] = []
    for name, lacks in missing.items():
        if lacks:  # named, with the tasks it lacks, and no number (SPEC §2: missing is not a zero)
            rows.append({CANDIDATE: name, "how": how, "rate": rate, "tasks": tasks, "missing_tasks": lacks})
            continue
        own = [strata[t][name] for t in tasks]
        weights = _weights(own, how)
        rows.append(
            {
                CANDIDATE: name,
                "how": how,
                "rate": rate,
                "tasks": tasks,
                "weights": weights,
                "task_rates": [s.rate for s in own],
                "task_se": [None if s.variance is None else math.sqrt(s.variance) for s in own],
                "task_cases": [s.cases for s in own],
                **_combined(own, weights, scales[tasks[0]], confidence),
                "confidence": confidence,
                **{c: _total(counts[t][name][c] for t in tasks) for c in (PLANNED, SCORED, PASSED)},
                "missing_tasks": [],
            }
        )
    return pl.DataFrame(rows, schema=_SCHEMA)


def _total(counts: Iterable[int | None]) -> int | None:
    """The sum of the tasks' counts; None when a task has none (``passed`` of grades without pass or fail)."""
    got = list(counts)
    return None if None in got else sum(got)  # type: ignore[arg-type]


def _missing_tasks(strata: Mapping[str, Mapping[str, _Stratum]], tasks: list[str]) -> dict[str, list[str]]:
    """Every candidate of any task (natural order) → the tasks it was not audited in (empty: in every one)."""
    everyone = sorted(set().union(*(set(s) for s in strata.values())), key=natural_key)
    return {name: [t for t in tasks if name not in strata[t]] for name in everyone}


def aggregate_difference(
    reports: Mapping[str, AuditReport] | AuditReport,
    *,
    baseline: str,
    candidate: str,
    how: Weighting = "macro",
    pairs: PairPolicy = "complete_pairs",
    confidence: float | None = None,
) -> pl.DataFrame:
    """A declared aggregate across tasks of the paired difference candidate − baseline; no verdict.

    Each task is compared on its own (:func:`evalframe.compare.compare`, which keeps the verdicts); the
    tasks' paired differences are then combined as strata, as :func:`aggregate` combines rates.

    Parameters
    ----------
    reports
        Task name → that task's own audit report (``AuditReport.by_task()``), two or more, each holding both
        candidates; or a report of several tasks, read through its ``by_task()``.
    baseline, candidate
        Candidate names.
    how
        ``macro`` (each task 1/T) or ``micro`` (each task its share of the pairs used; tasks graded alike).
    pairs
        The pair policy of every task's comparison.
    confidence
        Two-sided coverage of the interval (None: what the audits declared, else 0.95).

    Returns
    -------
    polars.DataFrame
        One row: ``baseline``, ``candidate``, ``how``, ``pair_policy`` (String); ``tasks`` (List[String],
        natural order) with, in that order, ``weights``, ``task_differences``, ``task_se`` (List[Float64])
        and ``task_cases`` (List[UInt32], cases used); ``difference`` = Σ w_t d_t, ``se`` = √(Σ w_t² se_t²)
        with se_t the task's case-clustered standard error, ``df``, ``ci_low``, ``ci_high``,
        ``confidence`` (Float64; the interval as in :func:`aggregate`, on [−w, w] for a score range of width
        w) and ``pairs_used`` (UInt32).

    Raises
    ------
    AggregateError
        When ``baseline`` or ``candidate`` was not audited in every task (``missing_tasks``: the side's name →
        the tasks it lacks; a task one side was not run on is not comparable).
    OptionError
        As :func:`aggregate` (``how``, ``reports``), and ``option`` ``"reports"`` when the tasks' score ranges
        differ.

    Examples
    --------
    >>> import evalframe as ef
    >>> def task(a, b):
    ...     cases = pl.DataFrame({"case_id": [f"c{i}" for i in range(len(a))]})
    ...     plan = ef.Plan.from_frame(cases, candidates=["A", "B"])
    ...     ids = plan.cases.get_column("case_id").to_list()
    ...     return ef.audit(plan, pl.DataFrame({"candidate": ["A"] * len(a) + ["B"] * len(b), "case_id": ids * 2,
    ...                                         "passed": a + b}))
    >>> out = aggregate_difference({"belief": task([1, 1, 1, 0], [1, 0, 1, 0]), "desire": task([1, 0], [1, 0])},
    ...                            baseline="B", candidate="A")
    >>> out.select("tasks", "task_differences", "difference").row(0)
    (['belief', 'desire'], [0.25, 0.0], 0.125)
    """
    reports = _by_task(reports)
    tasks = _tasks(reports, how)
    sides = {"baseline": baseline, "candidate": candidate}
    held = {t: set(reports[t].summary.get_column(CANDIDATE).cast(pl.String).to_list()) for t in tasks}
    missing = {name: [t for t in tasks if name not in held[t]] for name in sides.values()}
    if any(missing.values()):
        lacking = "; ".join(f"{side} {name!r} was not audited in task {', '.join(missing[name])}"
                            for side, name in sides.items() if missing[name])  # fmt: skip
        reason = f"{lacking}: the paired difference is aggregated only across tasks that hold both sides"
        raise AggregateError(reason, missing_tasks={n: m for n, m in missing.items() if m})
    scales = {Scale.of(reports[t].meta) for t in tasks}
    widths = {s.high - s.low for s in scales}
    if len(widths) > 1:
        raise OptionError("reports", "the tasks' score ranges differ: their differences are on different scales")
    width = widths.pop()
    confidence = declared_confidence(reports.values(), confidence)
    strata = []
    for t in tasks:
        r = compare(reports[t], baseline=baseline, candidate=candidate, pairs=pairs, confidence=confidence).table.row(
            0, named=True
        )
        strata.append(
            _Stratum.of(r["quality_difference"], r["se_clustered"], int(r["pairs_used"]), int(r["cases_used"]))
        )
    weights = _weights(strata, how)
    combined = _combined(strata, weights, (-width, width), confidence)
    row = {
        "baseline": baseline,
        "candidate": candidate,
        "how": how,
        "pair_policy": pairs,
        "tasks": tasks,
        "weights": weights,
        "task_differences": [s.rate for s in strata],
        "task_se": [None if s.variance is None else math.sqrt(s.variance) for s in strata],
        "task_cases": [s.cases for s in strata],
        "difference": combined["estimate"],
        **{k: combined[k] for k in ("se", "df", "ci_low", "ci_high")},
        "confidence": confidence,
        "pairs_used": sum(s.units for s in strata),
    }
    return pl.DataFrame([row], schema=_DIFFERENCE_SCHEMA)


_SCHEMA: Final = pl.Schema(
    {
        CANDIDATE: pl.String(),
        "how": pl.String(),
        "rate": pl.String(),
        "tasks": pl.List(pl.String()),
        "weights": pl.List(pl.Float64()),
        "task_rates": pl.List(pl.Float64()),
        "task_se": pl.List(pl.Float64()),
        "task_cases": pl.List(pl.UInt32()),
        "estimate": pl.Float64(),
        "se": pl.Float64(),
        "df": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
        "confidence": pl.Float64(),
        PLANNED: pl.UInt32(),
        SCORED: pl.UInt32(),
        PASSED: pl.UInt32(),
        "missing_tasks": pl.List(pl.String()),
    }
)

_DIFFERENCE_SCHEMA: Final = pl.Schema(
    {
        "baseline": pl.String(),
        "candidate": pl.String(),
        "how": pl.String(),
        "pair_policy": pl.String(),
        "tasks": pl.List(pl.String()),
        "weights": pl.List(pl.Float64()),
        "task_differences": pl.List(pl.Float64()),
        "task_se": pl.List(pl.Float64()),
        "task_cases": pl.List(pl.UInt32()),
        "difference": pl.Float64(),
        "se": pl.Float64(),
        "df": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
        "confidence": pl.Float64(),
        "pairs_used": pl.UInt32(),
    }
)
