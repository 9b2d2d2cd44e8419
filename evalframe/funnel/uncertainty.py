"""Intervals that treat cases as the independent units, beside the funnel's rates (SPEC §2, §4).

:func:`with_uncertainty` adds them to a per-candidate summary from the units
(per-case sums by :func:`case_sums`, counted by :func:`case_patterns`), and
:func:`uncertainty_from_case_patterns` from the number of cases with each
distinct set of sums alone (what another engine sends to the driver: a few
rows per candidate, however many cases). Trials of a case reduce to a case outcome by a
declared reducer (:func:`reduce_case`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import (
    CANDIDATE,
    CASE_ID,
    CASES,
    COMPLETED,
    COMPLETION_RATE,
    FUNNEL_OUTCOMES,
    OBSERVATIONS,
    OUTCOMES,
    PASS_RATE_PLANNED,
    PASS_RATE_SCORED,
    PASS_RATE_UPPER,
    PASSED,
    SCORE,
    SCORED,
    SCORED_COVERAGE,
)
from evalframe.funnel.counts import RATE_COLUMNS
from evalframe.stats import (
    DEFAULT_CONFIDENCE,
    Target,
    bounded_mean_interval,
    rare_case_limit,
    rate_interval,
    skew_check,
)
from evalframe.stats.clustered import case_mean_fixed
from evalframe.validate.rows import Lazy

if TYPE_CHECKING:
    import numpy as np


def with_uncertainty(
    summary: pl.DataFrame,
    units: pl.DataFrame,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    score_range: tuple[float, float] = (0.0, 1.0),
    cluster: str = CASE_ID,
    reducer: str = "mean",
    cases: Target = "sample",
) -> pl.DataFrame:
    """Add intervals that treat cases as the independent units, and the design effect, to a per-candidate summary.

    Parameters
    ----------
    summary
        Output of :func:`funnel` (one row per candidate).
    units
        Unit outcomes (see :func:`unit_outcomes`) with ``candidate``,
        ``outcome``, ``score`` and the ``cluster`` column.
    confidence
        Two-sided coverage of every interval.
    cases
        What the rates' intervals are about: ``sample`` (default), the cases as a sample of a larger
        population of tasks; ``fixed``, these cases as the whole population — each rate's interval is then
        :func:`evalframe.stats.rate_interval`'s ``target="fixed"`` one (trial noise within these cases only,
        no skewness rule), withheld with a reason in ``pass_rate_scored_ci_withheld`` when no case holds two
        scored units. ``case_pass_rate`` under the ``mean`` reducer gets the fixed target's interval too
        (:func:`evalframe.stats.case_mean_fixed`), under another reducer none; the mean score keeps the sample
        target's interval.
    score_range
        Bounds of a score; the ``mean_score`` interval lies inside them.
    cluster
        Column identifying a case (default ``case_id``; the audit passes an
        integer code of (candidate, case)).
    reducer
        How a case's trials reduce to a case outcome (SPEC §4): ``mean``
        (the case's fraction of passed trials), ``any`` (passes if any trial
        passed), ``all``, ``majority`` (more than half passed), ``median``,
        ``at_least:k`` (k or more passed), ``pass_at:k`` (the unbiased pass@k
        estimate), or Inspect's name for one of them; see :func:`reduce_case`.

    Returns
    -------
    polars.DataFrame
        ``summary`` plus, for every rate of :data:`RATE_COLUMNS`, its interval
        ``<rate>_ci_low`` / ``<rate>_ci_high`` (Float64 fractions) from
        :func:`evalframe.stats.clustered.rate_interval` over the cases: Wilson
        (1927) when every case holds one unit, else the Wilson interval on
        the cluster-robust effective sample size with t(G − 1) (Korn &
        Graubard 1998), null with fewer than two cases; ``cases_planned``
        and ``cases_fully_scored`` (UInt32: cases all of whose planned units
        got a valid grade); for ``pass_rate_scored`` the binomial standard
        error ``pass_rate_scored_se_naive``, the CR1 case-clustered one
        ``pass_rate_scored_se_clustered``, the ``design_effect`` (variance
        over the binomial variance, ≥ 1), the intra-case correlation ``icc``
        = (design_effect − 1)/(m − 1) with m the mean scored units per case
        (Kish 1965, *Survey Sampling*; null with one unit per case) and the
        ``effective_n`` (scored units / design_effect); and ``mean_score``
        (mean score among scored units, in score units) with its CR1
        ``mean_score_se_clustered`` and interval ``mean_score_ci_low`` /
        ``_high`` inside ``score_range`` (:func:`evalframe.stats.clustered.bounded_mean_interval`).
        Standard errors and intervals are null where the rate is null.
        Cases are a sample of a larger population of tasks: when the interval of ``pass_rate_scored`` is the
        clustered one (several units in some case), it needs G > 28 + 25·g1² for G cases and g1 the skewness
        of the per-case results (Sugden, Smith & Jones 2000; :func:`evalframe.stats.skew_check`); otherwise
        ``pass_rate_scored_ci_low`` / ``_high`` are null and ``pass_rate_scored_ci_withheld`` (String, else
        null) says why, with the cases' rare-case limit (:func:`evalframe.stats.rare_case_limit`).
        The case-level rate beside the trial-level one: ``case_reducer``
        (String), ``cases_scored`` (UInt32: cases all of whose planned units
        got a grade, its denominator) and ``case_pass_rate`` (Float64: mean
        over those cases of the reduced outcome) with ``case_pass_rate_ci_low``
        / ``_high`` (cases are independent: Wilson for a pass/fail reducer,
        :func:`evalframe.stats.clustered.bounded_mean_interval` for one whose
        case outcome is a fraction: ``mean``, ``median``, ``pass_at:k``).

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["A"], "planned": [4], "completed": [4], "scored": [4],
    ...     "passed": [2], "completion_rate": [1.0], "scored_coverage": [1.0], "pass_rate_scored": [0.5],
    ...     "pass_rate_planned": [0.5], "pass_rate_upper": [0.5]})
    >>> units = pl.DataFrame({"candidate": ["A"] * 6, "case_id": ["a", "a", "b", "b", "c", "c"],
    ...     "trial": [1, 2, 1, 2, 1, 2], "outcome": ["passed", "passed", "failed", "failed", "passed", "failed"],
    ...     "score": [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]})
    >>> out = with_uncertainty(summary, units)
    >>> out.select("pass_rate_scored_se_clustered", "design_effect", "icc", "cases_fully_scored").row(0)
    (0.28867513459481287, 2.0, 1.0, 3)
    """
    return uncertainty_from_case_patterns(
        summary,
        collected_patterns(case_patterns(case_sums(nw.from_native(units.lazy()), cluster))),
        confidence=confidence,
        score_range=score_range,
        reducer=reducer,
        cases=cases,
    )


#: Columns of :func:`case_sums` after ``candidate`` and the case (all Float64 sums over the case's units).
CASE_SUM_COLUMNS: Final = (OBSERVATIONS, COMPLETED, SCORED, PASSED, "_score_sum", "_score_n")


#: :func:`case_sums` with ``outcomes``: the column counting a case's units of each outcome is this prefix and the
#: outcome (``n_passed``, ...).
OUTCOME_COUNT: Final = "n_"


def case_sums(units: Lazy, cluster: str = CASE_ID, *, outcomes: bool = False) -> Lazy:
    """Per candidate and case: the sums behind every interval of :func:`with_uncertainty` (any engine).

    Parameters
    ----------
    units
        Unit outcomes (narwhals lazy frame: ``candidate``, ``outcome`` as text or Enum, ``score`` and ``cluster``).
    cluster
        Column identifying a case.
    outcomes
        Also count the case's units of each outcome (Int64 ``n_<outcome>``, see :data:`OUTCOME_COUNT`): what
        the slice funnel adds up by the case's slice values.

    Returns
    -------
    narwhals.LazyFrame
        ``candidate``, ``cluster`` and the Float64 sums of :data:`CASE_SUM_COLUMNS`: observations (rows: units,
        or counted attempts under ``every``), completed, scored and passed, the sum of scores of scored units and
        their number; ``_missing`` (Int64, missing units); in no particular order (:func:`case_patterns` counts
        the cases with each set of sums).

    Examples
    --------
    >>> import narwhals.stable.v2 as nw
    >>> units = pl.LazyFrame({"candidate": ["A", "A"], "case_id": ["a", "a"], "outcome": ["passed", "missing"],
    ...                       "score": [1.0, None]})
    >>> case_sums(nw.from_native(units)).to_native().collect().row(0)
    ('A', 'a', 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1)
    """
    o = nw.col("outcome")
    graded, completed = (o.is_in(list(FUNNEL_OUTCOMES[step])) for step in (SCORED, COMPLETED))
    scored_score = graded & ~nw.col(SCORE).is_null()
    as_float = nw.Float64()
    return units.group_by(CANDIDATE, cluster).agg(
        nw.len().cast(as_float).alias(OBSERVATIONS),
        completed.cast(nw.Int64()).sum().cast(as_float).alias(COMPLETED),
        graded.cast(nw.Int64()).sum().cast(as_float).alias(SCORED),
        (o == "passed").cast(nw.Int64()).sum().cast(as_float).alias(PASSED),
        nw.when(scored_score).then(nw.col(SCORE)).otherwise(0.0).sum().cast(as_float).alias("_score_sum"),
        scored_score.cast(nw.Int64()).sum().cast(as_float).alias("_score_n"),
        (o == "missing").cast(nw.Int64()).sum().alias("_missing"),
        *(((o == name).cast(nw.Int64()).sum().alias(OUTCOME_COUNT + name)) for name in (OUTCOMES if outcomes else ())),
    )


def case_patterns(per_case: Lazy, by: Sequence[str] = ()) -> Lazy:
    """Per candidate (and ``by``), the number of cases (``cases``) with each set of :func:`case_sums`' sums.

    Every interval of :func:`with_uncertainty` depends on a candidate's cases only through how many of them
    have each set of sums (see :func:`evalframe.stats.rate_interval`'s ``cases``). With pass/fail grades the
    sums are small whole numbers, so a candidate has a few such patterns however many cases it has: what
    another engine sends to the driver instead of one row per case (:func:`collected_patterns` takes them).
    With ``by`` (a case's slice label), the outcome counts ``n_<outcome>`` are added up too, and the missing
    units counted: what the slice funnel and the missingness tests need, per candidate and slice value.

    Examples
    --------
    >>> import narwhals.stable.v2 as nw
    >>> per_case = pl.LazyFrame({"candidate": ["A"] * 3, "case_id": ["a", "b", "c"], "observations": [2.0] * 3,
    ...     "completed": [2.0] * 3, "scored": [2.0] * 3, "passed": [1.0, 2.0, 1.0], "_score_sum": [1.0, 2.0, 1.0],
    ...     "_score_n": [2.0] * 3})
    >>> collected_patterns(case_patterns(nw.from_native(per_case))).select("passed", "cases").rows()
    [(1.0, 2), (2.0, 1)]
    """
    names = per_case.collect_schema().names()
    counted = [c for c in names if c.startswith(OUTCOME_COUNT)] if by else []
    key = [CANDIDATE, *by, *CASE_SUM_COLUMNS, *(["_missing"] if by else [])]
    return per_case.group_by(*key).agg(nw.len().alias(CASES), *(nw.col(c).sum() for c in counted))


def collected_patterns(counted: Lazy, by: Sequence[str] = ()) -> pl.DataFrame:
    """:func:`case_patterns` (grouped by ``by`` besides the candidate) collected to polars, typed and sorted.

    The sums of :data:`CASE_SUM_COLUMNS` are Float64, ``cases`` Int64; rows are sorted by the candidate,
    ``by`` and the sums (what :func:`uncertainty_from_case_patterns` sums over, in order).
    """
    key = [CANDIDATE, *by, *CASE_SUM_COLUMNS]
    collected: pl.DataFrame = counted.collect("polars").to_native()
    return collected.with_columns(pl.col(CASE_SUM_COLUMNS).cast(pl.Float64), pl.col(CASES).cast(pl.Int64)).sort(
        key, nulls_last=True
    )


def uncertainty_from_case_patterns(
    summary: pl.DataFrame,
    patterns: pl.DataFrame,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    score_range: tuple[float, float] = (0.0, 1.0),
    reducer: str = "mean",
    cases: Target = "sample",
) -> pl.DataFrame:
    """The columns :func:`with_uncertainty` adds, from the case patterns of :func:`case_patterns`.

    The one implementation of the audit's interval statistics (:mod:`evalframe.stats.clustered`): polars counts
    ``patterns`` from its per-case sums, another engine (Spark, :mod:`evalframe.engines`) counts them itself
    and sends only them to the driver. ``patterns`` must be sorted as :func:`case_patterns` sorts them (sums in
    a fixed order are the same bit for bit). Parameters and returned columns are those of
    :func:`with_uncertainty`.

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["A"], "planned": [2], "completed": [2], "scored": [2],
    ...     "passed": [1], "completion_rate": [1.0], "scored_coverage": [1.0], "pass_rate_scored": [0.5],
    ...     "pass_rate_planned": [0.5], "pass_rate_upper": [0.5]})
    >>> patterns = pl.DataFrame({"candidate": ["A", "A"], "observations": [1.0, 1.0], "completed": [1.0, 1.0],
    ...     "scored": [1.0, 1.0], "passed": [0.0, 1.0], "_score_sum": [0.0, 1.0], "_score_n": [1.0, 1.0],
    ...     "cases": [1, 1]})
    >>> uncertainty_from_case_patterns(summary, patterns).select("cases_planned", "case_pass_rate").row(0)
    (2, 0.5)
    """
    low, high = score_range
    sums = patterns.with_columns((pl.col(PASSED) + pl.col(OBSERVATIONS) - pl.col(SCORED)).alias("_upper"))
    rows = [
        {
            CANDIDATE: name,
            "cases_planned": int(group.get_column(CASES).sum()),
            "cases_fully_scored": int(group.filter(pl.col(SCORED) == pl.col(OBSERVATIONS)).get_column(CASES).sum()),
            **_rate_intervals(group, confidence, cases),
            **_case_level(group, reducer, confidence, cases),
            **_score_interval(group, low, high, confidence),
        }
        for (name,), group in sums.group_by(CANDIDATE, maintain_order=True)
    ]
    added = pl.DataFrame(
        rows,
        schema={
            CANDIDATE: summary.schema[CANDIDATE],
            "cases_planned": pl.UInt32,
            "cases_fully_scored": pl.UInt32,
            "cases_scored": pl.UInt32,
            **dict.fromkeys(_ADDED_FLOATS, pl.Float64),
            CI_WITHHELD: pl.String,
        },
    ).with_columns(pl.lit(reducer, pl.String).alias("case_reducer"))
    # A column defined by a rate is null where that rate is null.
    defined = {f"{r}_ci_{end}": r for r in RATE_COLUMNS for end in ("low", "high")}
    defined |= dict.fromkeys((*_BY_PASS_RATE_SCORED, CI_WITHHELD), PASS_RATE_SCORED)
    first = [*_RATE_CI_COLUMNS, "cases_planned", "cases_fully_scored"]
    rest = ["case_reducer", "cases_scored", *(n for n in _ADDED_FLOATS if n not in first), CI_WITHHELD]
    return (
        summary.join(added, on=CANDIDATE, how="left")
        .with_columns(pl.when(pl.col(rate).is_not_null()).then(pl.col(c)).alias(c) for c, rate in defined.items())
        .select(*summary.columns, *first, *rest)
        .sort(CANDIDATE)
    )


#: Each rate's numerator and denominator among the per-case sums (``_upper``: passed plus ungraded).
_RATE_PARTS: Final = {
    COMPLETION_RATE: (COMPLETED, OBSERVATIONS),
    SCORED_COVERAGE: (SCORED, OBSERVATIONS),
    PASS_RATE_SCORED: (PASSED, SCORED),
    PASS_RATE_PLANNED: (PASSED, OBSERVATIONS),
    PASS_RATE_UPPER: ("_upper", OBSERVATIONS),
}
#: Why the interval of ``pass_rate_scored`` is withheld (String; null when it is given or there is no rate).
CI_WITHHELD: Final = "pass_rate_scored_ci_withheld"
#: The interval columns of every rate, in order.
_RATE_CI_COLUMNS: Final = tuple(f"{r}_ci_{end}" for r in RATE_COLUMNS for end in ("low", "high"))
#: The clustering of ``pass_rate_scored`` that :func:`with_uncertainty` adds: naive and clustered standard
#: errors, design effect, ICC and effective n (Float64).
CLUSTERING_COLUMNS: Final = (
    "pass_rate_scored_se_naive",
    "pass_rate_scored_se_clustered",
    "design_effect",
    "icc",
    "effective_n",
)
#: The mean score with its clustered standard error and interval (Float64).
MEAN_SCORE_COLUMNS: Final = ("mean_score", "mean_score_se_clustered", "mean_score_ci_low", "mean_score_ci_high")
_CASE_PASS_RATE: Final = ("case_pass_rate", "case_pass_rate_ci_low", "case_pass_rate_ci_high")
#: Columns derived from ``pass_rate_scored`` (null where it is null).
_BY_PASS_RATE_SCORED: Final = (*CLUSTERING_COLUMNS, *_CASE_PASS_RATE)
#: Every Float64 column :func:`uncertainty_from_case_patterns` adds, in order.
_ADDED_FLOATS: Final = (*_RATE_CI_COLUMNS, *_CASE_PASS_RATE, *CLUSTERING_COLUMNS, *MEAN_SCORE_COLUMNS)


def _rate_intervals(cases: pl.DataFrame, confidence: float, target: Target = "sample") -> dict[str, object]:
    """One candidate's interval of every rate over its case patterns, and the clustering of ``pass_rate_scored``.

    Under ``target="fixed"`` the intervals are :func:`~evalframe.stats.rate_interval`'s conditional ones; the
    clustering columns (standard errors, design effect, ICC, effective n) describe the cases' clustering either way.
    """
    row: dict[str, object] = {}
    for rate, (num, den) in _RATE_PARTS.items():
        parts = (cases.get_column(num).to_numpy(), cases.get_column(den).to_numpy())
        counted = cases.get_column(CASES).to_numpy()
        est = rate_interval(*parts, confidence=confidence, cases=counted)
        shown = rate_interval(*parts, confidence=confidence, cases=counted, target=target) if target == "fixed" else est
        row[f"{rate}_ci_low"], row[f"{rate}_ci_high"] = shown.ci_low, shown.ci_high
        if rate != PASS_RATE_SCORED:
            continue
        row[CI_WITHHELD] = None
        if shown.method == "none" and est.method != "none":  # fixed cases, one scored unit in each
            row[CI_WITHHELD] = (
                f"no interval: the cases are fixed (inference about these {est.n_clusters} cases only) and none "
                "holds two scored units, so the trials' own variation cannot be estimated"
            )
        if shown.method == "wilson_clustered":  # cases as a sample: the t(G − 1) interval needs enough cases for g1
            skew = skew_check(*parts, cases=counted)
            if not skew.holds:
                row[f"{rate}_ci_low"] = row[f"{rate}_ci_high"] = None
                row[CI_WITHHELD] = (
                    f"no interval: {skew.refusal('per-case pass rates', 'an interval')}; {rare_case_limit(skew.cases)}"
                )
        per = est.n / est.n_clusters if est.n_clusters else None
        row["pass_rate_scored_se_naive"] = None if est.rate is None else math.sqrt(est.rate * (1.0 - est.rate) / est.n)
        row["pass_rate_scored_se_clustered"] = est.se_clustered
        row["design_effect"] = est.design_effect
        row["icc"] = (
            None
            if est.design_effect is None or per is None or per <= 1
            else min(1.0, (est.design_effect - 1.0) / (per - 1.0))
        )
        row["effective_n"] = est.effective_n
    return row


def _case_level(cases: pl.DataFrame, reducer: str, confidence: float, target: Target = "sample") -> dict[str, object]:
    """One candidate's case-level rate over its fully scored cases, each reduced by ``reducer``.

    Under ``target="fixed"`` the ``mean`` reducer's interval is :func:`~evalframe.stats.case_mean_fixed`'s (trial
    noise within these cases only); another reducer's case outcome has no estimated trial-noise variance there, so
    no interval.
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    full = cases.filter((pl.col(SCORED) == pl.col(OBSERVATIONS)) & (pl.col(SCORED) > 0))
    reduced = reduce_case(full.get_column(PASSED).to_numpy(), full.get_column(SCORED).to_numpy(), reducer)
    ones = np.ones(full.height)
    # A case outcome that is a pass or a fail (a reducer other than mean, or one trial per case) gets the rate's
    # interval (Wilson with one unit per case), so the same 0/1 outcomes never get two different intervals.
    binary = is_pass_fail(reducer) or bool((full.get_column(SCORED) == 1).all())
    interval = rate_interval if binary else bounded_mean_interval
    counted = full.get_column(CASES).to_numpy()
    est = interval(reduced, ones, confidence=confidence, cases=counted)
    if target == "fixed":
        passed, scored = full.get_column(PASSED).to_numpy(), full.get_column(SCORED).to_numpy()
        fixed = case_mean_fixed(passed, scored, confidence=confidence, cases=counted)
        est = fixed if reducer_meaning(reducer) == "mean" else replace(est, ci_low=None, ci_high=None)
    return {
        "cases_scored": int(counted.sum()),
        "case_pass_rate": est.rate,
        "case_pass_rate_ci_low": est.ci_low,
        "case_pass_rate_ci_high": est.ci_high,
    }


def _score_interval(cases: pl.DataFrame, low: float, high: float, confidence: float) -> dict[str, object]:
    """One candidate's mean score among scored units, with its clustered standard error and bounded interval."""
    score = bounded_mean_interval(
        cases.get_column("_score_sum").to_numpy(),
        cases.get_column("_score_n").to_numpy(),
        low=low,
        high=high,
        confidence=confidence,
        cases=cases.get_column(CASES).to_numpy(),
    )
    return {
        "mean_score": score.rate,
        "mean_score_se_clustered": score.se_clustered,
        "mean_score_ci_low": score.ci_low,
        "mean_score_ci_high": score.ci_high,
    }


#: How trials of a case reduce to a case outcome (SPEC §4); ``at_least:k`` and ``pass_at:k`` take a count.
REDUCERS: Final = ("mean", "any", "all", "majority", "median", "at_least:k", "pass_at:k")
#: Inspect AI's epoch reducers (``epochs_reducer``) that are another name for one of :data:`REDUCERS` over
#: pass/fail trials: ``max`` passes a case when any trial passed, ``mode`` when most did (``majority``: a
#: tie, which Inspect's mode settles by the order of the values, fails). Inspect's ``mean`` and ``median``
#: are evalframe's; ``pass_at_K`` and ``at_least_K`` are ``pass_at:K`` and ``at_least:K``.
INSPECT_REDUCERS: Final = {"max": "any", "mode": "majority"}
#: The reducers whose case outcome is a pass or a fail (the others give a fraction of a case).
PASS_FAIL_REDUCERS: Final = frozenset({"any", "all", "majority", "at_least"})


def _counted(head: str, count: str) -> str | None:
    """``head:K`` for a whole count K ≥ 1 written in ASCII digits (leading zeros dropped), else None."""
    if count.isascii() and count.isdigit() and int(count) >= 1:
        return f"{head}:{int(count)}"
    return None


def check_reducer(reducer: str) -> str:
    """The name of a case reducer as the audit records it, or ValueError when it has no meaning here.

    Accepts evalframe's names (:data:`REDUCERS`) and Inspect AI's (:data:`INSPECT_REDUCERS`,
    ``pass_at_K``, ``at_least_K``, ``median``), so that a user coming from Inspect types what Inspect
    calls it. The name given is kept (``max`` stays ``max``); a count is written back without leading
    zeros and with evalframe's colon (``at_least_02`` is ``at_least:2``). :func:`reducer_meaning`
    says what a name does.

    Raises
    ------
    ValueError
        When the name is none of those, or its count is not a whole number ≥ 1.

    Examples
    --------
    >>> check_reducer("any"), check_reducer("at_least:02"), check_reducer("max"), check_reducer("pass_at_3")
    ('any', 'at_least:2', 'max', 'pass_at:3')
    """
    if reducer in ("mean", "any", "all", "majority", "median") or reducer in INSPECT_REDUCERS:
        return reducer
    for head in ("at_least", "pass_at"):
        for sep in (":", "_"):
            if reducer.startswith(head + sep) and (named := _counted(head, reducer[len(head) + 1 :])):
                return named
    msg = (
        "reducer must be mean, any, all, majority, median, at_least:K or pass_at:K (K a positive integer), "
        f"or Inspect's max, mode, at_least_K, pass_at_K; got {reducer!r}"
    )
    raise ValueError(msg)


def reducer_meaning(reducer: str) -> str:
    """What a reducer name does, in evalframe's own names (``max`` is ``any``, ``mode`` is ``majority``).

    Examples
    --------
    >>> reducer_meaning("max"), reducer_meaning("mode"), reducer_meaning("at_least_2"), reducer_meaning("mean")
    ('any', 'majority', 'at_least:2', 'mean')
    """
    named = check_reducer(reducer)
    return INSPECT_REDUCERS.get(named, named)


def is_pass_fail(reducer: str) -> bool:
    """Whether the reducer's case outcome is a pass or a fail (else a fraction: ``mean``, ``median``, ``pass_at:k``).

    Examples
    --------
    >>> is_pass_fail("max"), is_pass_fail("pass_at:2"), is_pass_fail("mean")
    (True, False, False)
    """
    return reducer_meaning(reducer).partition(":")[0] in PASS_FAIL_REDUCERS


def reducer_count(reducer: str) -> int | None:
    """The k of ``at_least:k`` / ``pass_at:k`` (trials a case needs to plan for the reducer to reach 1), else None.

    Examples
    --------
    >>> reducer_count("at_least_3"), reducer_count("any")
    (3, None)
    """
    head, _, count = reducer_meaning(reducer).partition(":")
    return int(count) if head in ("at_least", "pass_at") else None


def reduce_case(passed: np.ndarray, scored: np.ndarray, reducer: str) -> np.ndarray:
    """The case outcome of each case from its passed and scored trial counts.

    Parameters
    ----------
    passed, scored
        Per case: trials passed and trials scored (scored ≥ 1).
    reducer
        A name :func:`check_reducer` accepts. ``mean`` gives the fraction
        passed / scored; ``any`` 1 when a trial passed; ``all`` 1 when every
        trial passed; ``majority`` 1 when more than half passed; ``median``
        the median of the case's 0/1 trial grades (1 above half, 0.5 at a
        tie, 0 below); ``at_least:k`` 1 when k or more passed;
        ``pass_at:k`` the unbiased estimate of the chance that k trials
        drawn without replacement hold a pass, 1 − C(n − c, k) / C(n, k)
        with n scored and c passed (Chen et al. 2021, *Evaluating Large
        Language Models Trained on Code*, eq. 1), which needs n ≥ k.

    Raises
    ------
    ValueError
        When ``pass_at:k`` meets a case with fewer than k scored trials.

    Examples
    --------
    >>> import numpy as np
    >>> passed, scored = np.array([0, 1, 2, 3]), np.array([3, 3, 3, 3])
    >>> [reduce_case(passed, scored, r).tolist() for r in ("any", "all", "majority", "at_least:1")]
    [[0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]]
    >>> reduce_case(np.array([0, 1, 2]), np.array([4, 4, 4]), "median").tolist()
    [0.0, 0.0, 0.5]
    >>> [round(x, 4) for x in reduce_case(np.array([0, 1, 2]), np.array([4, 4, 4]), "pass_at:2").tolist()]
    [0.0, 0.5, 0.8333]
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    p, n = passed.astype(np.float64), scored.astype(np.float64)
    meaning = reducer_meaning(reducer)
    head, _, count = meaning.partition(":")
    if meaning == "mean":
        fraction: np.ndarray = p / n
        return fraction
    if meaning == "any":
        return (p >= 1).astype(np.float64)
    if meaning == "all":
        return np.equal(p, n).astype(np.float64)
    if meaning == "majority":
        return (2 * p > n).astype(np.float64)
    if meaning == "median":
        return np.where(2 * p > n, 1.0, np.where(2 * p == n, 0.5, 0.0))
    k = int(count)
    if head == "at_least":
        return (p >= k).astype(np.float64)
    if bool((n < k).any()):
        msg = f"reducer {reducer!r} estimates pass@{k} from k or more scored trials; a case has {int(n.min())}"
        raise ValueError(msg)
    # math.comb is exact on whole counts (C(n - c, k) is 0 when fewer than k trials failed).
    fails = [math.comb(int(total - good), k) / math.comb(int(total), k) for good, total in zip(p, n, strict=True)]
    return 1.0 - np.array(fails, dtype=np.float64)
