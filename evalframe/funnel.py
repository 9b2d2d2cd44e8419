"""Per-unit outcomes and the funnel of counts and rates (SPEC §2).

``planned ≥ attempted ≥ completed ≥ with_output ≥ scored ≥ passed``; every
rate is named by its denominator and sits next to its counts. A missing unit
is ``missing``: never a failure, never a pass, never dropped from ``planned``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
import polars as pl

from evalframe._callable import make_callable
from evalframe.attempts import COUNTS
from evalframe.columns import (
    ATTEMPT,
    ATTEMPTED,
    ATTEMPTS,
    CANDIDATE,
    CASE_ID,
    COMPLETED,
    COMPLETION_RATE,
    COUNTED_ATTEMPT,
    EXEC_FAILED,
    EXEC_FAILURES,
    EXEC_STATUS,
    FAILED,
    HAS_OUTPUT,
    JUDGE_FAILED,
    MISSING,
    NO_OUTPUT,
    NOT_SCORED,
    NOT_STARTED,
    OBSERVATIONS,
    OUTCOMES,
    PASS_RATE_PLANNED,
    PASS_RATE_SCORED,
    PASS_RATE_UPPER,
    PASSED,
    PLANNED,
    SCORE,
    SCORE_STATUS,
    SCORED,
    SCORED_COVERAGE,
    UNIT_KEY,
    WITH_OUTPUT,
)
from evalframe.plan import CAND_CODE, CASE_CODE, UID

#: Summary count columns, in funnel order.
COUNT_COLUMNS = (
    PLANNED,
    ATTEMPTED,
    COMPLETED,
    WITH_OUTPUT,
    SCORED,
    PASSED,
    FAILED,
    MISSING,
    NOT_STARTED,
    EXEC_FAILED,
    NO_OUTPUT,
    JUDGE_FAILED,
    NOT_SCORED,
)
#: Summary rate columns (fractions in [0, 1]).
RATE_COLUMNS = (COMPLETION_RATE, SCORED_COVERAGE, PASS_RATE_SCORED, PASS_RATE_PLANNED, PASS_RATE_UPPER)


def outcome_expr() -> pl.Expr:
    """Expression giving one outcome per unit row, from least to most evidence.

    A row with no attempt (null ``exec_status``) is ``missing``; then
    ``not_started``, ``exec_failed`` (timeout or error), ``no_output``,
    ``judge_failed``, ``not_scored``, and for scored units ``passed`` or
    ``failed`` — or ``scored_no_threshold`` when a numeric score was given
    but no pass threshold was declared (pass rates are then null).
    The result is an Enum of :data:`OUTCOMES`.
    """
    ex, sc = pl.col(EXEC_STATUS), pl.col(SCORE_STATUS)
    # The rules pick an outcome's position; the Enum value is gathered by it (2.5M units: 113 -> 11 ms,
    # against building a text column and casting it).
    code = {outcome: pl.lit(i, pl.UInt32) for i, outcome in enumerate(OUTCOMES)}
    position = (
        pl.when(ex.is_null())
        .then(code["missing"])
        .when(ex == "not_started")
        .then(code["not_started"])
        .when(ex.is_in(list(EXEC_FAILURES)))
        .then(code["exec_failed"])
        .when(~pl.col(HAS_OUTPUT).fill_null(True))
        .then(code["no_output"])
        .when(sc == "judge_error")
        .then(code["judge_failed"])
        .when(sc != "scored")
        .then(code["not_scored"])
        .when(pl.col(PASSED).is_null())
        .then(code["scored_no_threshold"])
        .when(pl.col(PASSED))
        .then(code["passed"])
        .otherwise(code["failed"])
    )
    return pl.lit(pl.Series(OUTCOMES, dtype=pl.Enum(list(OUTCOMES)))).gather(position)


def outcome_in(schema: pl.Schema, *values: str) -> pl.Expr:
    """``outcome`` is one of ``values``; on the Enum it compares physical codes, not strings (fast)."""
    if isinstance(schema["outcome"], pl.Enum):
        return pl.col("outcome").to_physical().is_in([OUTCOMES.index(v) for v in values])
    return pl.col("outcome").cast(pl.String).is_in(list(values))


def unit_outcomes(planned: pl.LazyFrame, attempts: pl.LazyFrame) -> pl.LazyFrame:
    """Join planned units to their counted attempt(s) by unit code and give each an outcome.

    Parameters
    ----------
    planned
        One row per planned unit: its unit code ``_uid`` (see
        :class:`~evalframe.plan.UnitCoding`) and any plan columns to carry
        along, sorted by ``_uid`` (required: the two sides are merged in
        order, without a hash join).
    attempts
        Attempts table from :func:`evalframe.attempts.select_attempts`
        (``counts`` marks the counted attempts), with ``_uid``, sorted by it.
        Its ``candidate``, ``case_id``, ``trial``, ``_cand`` and ``_case``
        are left out (the planned side has them).

    Returns
    -------
    polars.LazyFrame
        One row per planned unit (per counted attempt under policy
        ``every``), sorted by ``_uid``: the plan columns, the counted
        attempt's ledger columns, ``counted_attempt`` (Int64, null when
        missing), ``attempts`` (UInt32, 0 when missing) and ``outcome``
        (Enum).

    Examples
    --------
    >>> planned = pl.LazyFrame({"_uid": [0, 1], "case_id": ["q1", "q2"]})
    >>> attempts = pl.LazyFrame({"_uid": [1], "case_id": ["q2"], "attempt": [1], "exec_status": ["completed"],
    ...     "has_output": [True], "score_status": ["scored"], "passed": [True], "attempts": [1], "counts": [True]},
    ...     schema_overrides={"attempts": pl.UInt32})
    >>> unit_outcomes(planned, attempts).select("case_id", "attempts", "outcome").collect().rows()
    [('q1', 0, 'missing'), ('q2', 1, 'passed')]
    """
    counted = attempts.filter(pl.col(COUNTS)).drop(COUNTS).rename({ATTEMPT: COUNTED_ATTEMPT})
    names = counted.collect_schema().names()
    counted = counted.drop([c for c in (*UNIT_KEY, CAND_CODE, CASE_CODE) if c in names])
    # Both sides are sorted by the unit code: flagged so, the join merges them in order (no sort).
    flag = pl.col(UID).set_sorted()
    joined = planned.with_columns(flag).join(
        counted.with_columns(flag), on=UID, how="left", maintain_order="left_right"
    )
    return joined.with_columns(pl.col(ATTEMPTS).fill_null(0), outcome_expr().alias("outcome"))


def funnel(units: pl.LazyFrame, by: Sequence[str] = (CANDIDATE,), *, unit: str | None = None) -> pl.LazyFrame:
    """Count outcomes and compute the SPEC §2 rates per group.

    Parameters
    ----------
    units
        Unit outcomes (see :func:`unit_outcomes`), with an ``outcome`` column.
    by
        Grouping columns (default: ``candidate``).
    unit
        Column naming the planned unit of each row, when a unit can have
        several rows (retry policy ``every``: one row per counted attempt).
        None (the default): one row per planned unit.

    Returns
    -------
    polars.LazyFrame
        One row per group, sorted by ``by``: the counts of
        :data:`COUNT_COLUMNS` (UInt32), ``observations`` (UInt32) and the rates
        of :data:`RATE_COLUMNS` (Float64 fractions). ``planned`` counts planned units and
        ``observations`` the rows the rates are over: each planned unit once,
        or under ``every`` each counted attempt and each unit without one
        (SPEC §4); ``missing`` and ``not_started`` count units, the other
        stages count observations. ``completion_rate`` = completed /
        observations, ``scored_coverage`` = scored / observations,
        ``pass_rate_scored`` = passed / scored (null when scored = 0),
        ``pass_rate_planned`` = passed / observations (the worst case) and
        ``pass_rate_upper`` = (passed + observations − scored) /
        observations (the best case). Rates are null when there are no
        observations.

    Examples
    --------
    >>> units = pl.LazyFrame({"candidate": ["A"] * 4,
    ...     "outcome": ["passed", "exec_failed", "judge_failed", "failed"]})
    >>> funnel(units).select("planned", "attempted", "completed", "scored", "passed",
    ...                      "pass_rate_scored", "pass_rate_planned", "pass_rate_upper").collect()
    shape: (1, 8)
    ┌─────────┬───────────┬───────────┬────────┬────────┬──────────────────┬───────────────────┬─────────────────┐
    │ planned ┆ attempted ┆ completed ┆ scored ┆ passed ┆ pass_rate_scored ┆ pass_rate_planned ┆ pass_rate_upper │
    │ ---     ┆ ---       ┆ ---       ┆ ---    ┆ ---    ┆ ---              ┆ ---               ┆ ---             │
    │ u32     ┆ u32       ┆ u32       ┆ u32    ┆ u32    ┆ f64              ┆ f64               ┆ f64             │
    ╞═════════╪═══════════╪═══════════╪════════╪════════╪══════════════════╪═══════════════════╪═════════════════╡
    │ 4       ┆ 4         ┆ 3         ┆ 2      ┆ 1      ┆ 0.5              ┆ 0.25              ┆ 0.75            │
    └─────────┴───────────┴───────────┴────────┴────────┴──────────────────┴───────────────────┴─────────────────┘
    """
    schema = units.collect_schema()

    def n(*values: str) -> pl.Expr:
        return outcome_in(schema, *values).sum().cast(pl.UInt32)

    counts = units.group_by(list(by)).agg(
        (pl.len() if unit is None else pl.col(unit).n_unique()).cast(pl.UInt32).alias(PLANNED),
        pl.len().cast(pl.UInt32).alias(OBSERVATIONS),
        *(n(*values).alias(name) for name, values in _FUNNEL_OUTCOMES.items()),
    )
    return funnel_rates(counts, by)


#: Each count of the funnel (after ``planned``) and the outcomes it adds up.
_FUNNEL_OUTCOMES: Final = {
    "_not_attempted": ("missing", "not_started"),
    COMPLETED: ("no_output", "judge_failed", "not_scored", "scored_no_threshold", "failed", "passed"),
    WITH_OUTPUT: ("judge_failed", "not_scored", "scored_no_threshold", "failed", "passed"),
    SCORED: ("scored_no_threshold", "failed", "passed"),
    "_no_threshold": ("scored_no_threshold",),
    PASSED: ("passed",),
    FAILED: ("failed",),
    MISSING: ("missing",),
    NOT_STARTED: ("not_started",),
    EXEC_FAILED: ("exec_failed",),
    NO_OUTPUT: ("no_output",),
    JUDGE_FAILED: ("judge_failed",),
    NOT_SCORED: ("not_scored",),
}


def funnel_from_outcome_counts(
    counts: pl.DataFrame, by: Sequence[str] = (CANDIDATE,), *, planned: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The funnel of :func:`funnel` from units already counted per group and outcome.

    Parameters
    ----------
    counts
        One row per group and outcome: the ``by`` columns, ``outcome`` (String
        or Enum, one of :data:`~evalframe.columns.OUTCOMES`) and ``n`` (integer:
        units with that outcome). An engine that counts units elsewhere (Spark,
        see :mod:`evalframe.engines`) sends this small table to the driver.
    by
        Grouping columns.
    planned
        The ``by`` columns and ``planned`` (integer: planned units), when the
        counted rows are observations rather than units (retry policy
        ``every``); None: every counted row is one planned unit.

    Returns
    -------
    polars.DataFrame
        The columns of :func:`funnel`, one row per group, sorted by ``by``.

    Examples
    --------
    >>> counts = pl.DataFrame({"candidate": ["A"] * 4, "outcome": ["passed", "exec_failed", "judge_failed", "failed"],
    ...                        "n": [1, 1, 1, 1]})
    >>> funnel_from_outcome_counts(counts).select("planned", "scored", "passed", "pass_rate_upper").row(0)
    (4, 2, 1, 0.75)
    """
    outcome = pl.col("outcome").cast(pl.String)

    def n(*values: str) -> pl.Expr:
        return pl.col("n").filter(outcome.is_in(list(values))).sum().cast(pl.UInt32)

    summed = (
        counts.lazy()
        .group_by(list(by))
        .agg(
            pl.col("n").sum().cast(pl.UInt32).alias(OBSERVATIONS),
            *(n(*values).alias(name) for name, values in _FUNNEL_OUTCOMES.items()),
        )
    )
    if planned is None:  # every counted row is one planned unit
        summed = summed.with_columns(pl.col(OBSERVATIONS).alias(PLANNED))
    else:
        units = planned.lazy().select(*by, pl.col(PLANNED).cast(pl.UInt32))
        summed = summed.join(units, on=list(by), how="left")
    return funnel_rates(summed, by).collect()


def funnel_rates(counts: pl.LazyFrame, by: Sequence[str] = (CANDIDATE,)) -> pl.LazyFrame:
    """The SPEC §2 counts in funnel order and their rates, from the counts and sums of :data:`_FUNNEL_OUTCOMES`.

    ``counts`` holds ``planned``, ``observations`` and those sums per group.

    The one implementation of the funnel's arithmetic, for units counted by polars (:func:`funnel`) or by
    another engine (:func:`funnel_from_outcome_counts`).
    """
    attempted = (pl.col(OBSERVATIONS) - pl.col("_not_attempted")).cast(pl.UInt32).alias(ATTEMPTED)
    counts = counts.with_columns(attempted).select(*by, PLANNED, OBSERVATIONS, *COUNT_COLUMNS[1:], "_no_threshold")
    planned = pl.col(OBSERVATIONS).cast(pl.Float64)
    per_planned = pl.when(pl.col(OBSERVATIONS) > 0)
    # Pass rates exist only when every scored unit has a pass/fail (binary grade or declared threshold).
    has_pass = pl.col("_no_threshold") == 0
    return (
        counts.with_columns(
            per_planned.then(pl.col(COMPLETED) / planned).alias(COMPLETION_RATE),
            per_planned.then(pl.col(SCORED) / planned).alias(SCORED_COVERAGE),
            pl.when((pl.col(SCORED) > 0) & has_pass)
            .then(pl.col(PASSED) / pl.col(SCORED).cast(pl.Float64))
            .alias(PASS_RATE_SCORED),
            per_planned.then(pl.when(has_pass).then(pl.col(PASSED) / planned)).alias(PASS_RATE_PLANNED),
            per_planned.then(pl.when(has_pass).then((pl.col(PASSED) + planned - pl.col(SCORED)) / planned)).alias(
                PASS_RATE_UPPER
            ),
        )
        .drop("_no_threshold")
        .sort(list(by))
    )


def with_uncertainty(
    summary: pl.DataFrame,
    units: pl.DataFrame,
    *,
    confidence: float = 0.95,
    score_range: tuple[float, float] = (0.0, 1.0),
    cluster: str = CASE_ID,
    reducer: str = "mean",
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
    score_range
        Bounds of a score; the ``mean_score`` interval lies inside them.
    cluster
        Column identifying a case (default ``case_id``; the audit passes an
        integer code of (candidate, case)).
    reducer
        How a case's trials reduce to a case outcome (SPEC §4): ``mean``
        (the case's fraction of passed trials), ``any`` (pass@k: passes if
        any trial passed), ``all``, ``majority`` (more than half passed) or
        ``at_least:k`` (k or more passed); see :func:`reduce_case`.

    Returns
    -------
    polars.DataFrame
        ``summary`` plus, for every rate of :data:`RATE_COLUMNS`, its interval
        ``<rate>_ci_low`` / ``<rate>_ci_high`` (Float64 fractions) from
        :func:`evalframe.inference.rate_interval` over the cases: Wilson
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
        ``_high`` inside ``score_range`` (:func:`evalframe.inference.bounded_mean_interval`).
        Standard errors and intervals are null where the rate is null.
        The case-level rate beside the trial-level one: ``case_reducer``
        (String), ``cases_scored`` (UInt32: cases all of whose planned units
        got a grade, its denominator) and ``case_pass_rate`` (Float64: mean
        over those cases of the reduced outcome) with ``case_pass_rate_ci_low``
        / ``_high`` (cases are independent: Wilson for a pass/fail reducer,
        :func:`evalframe.inference.bounded_mean_interval` for ``mean``).

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
    return uncertainty_from_case_sums(
        summary, case_sums(units, cluster), confidence=confidence, score_range=score_range, reducer=reducer
    )


#: Columns of :func:`case_sums` after ``candidate`` and the case (all Float64 sums over the case's units).
CASE_SUM_COLUMNS: Final = (OBSERVATIONS, COMPLETED, SCORED, PASSED, "_score_sum", "_score_n")


def case_sums(units: pl.DataFrame, cluster: str = CASE_ID) -> pl.DataFrame:
    """Per candidate and case: the sums behind every interval of :func:`with_uncertainty`.

    Parameters
    ----------
    units
        Unit outcomes (``candidate``, ``outcome``, ``score`` and ``cluster``).
    cluster
        Column identifying a case.

    Returns
    -------
    polars.DataFrame
        ``candidate``, ``cluster`` and the Float64 sums of :data:`CASE_SUM_COLUMNS`: observations (rows: units,
        or counted attempts under ``every``), completed, scored and passed, the sum of scores of scored units and
        their number; sorted by candidate and case.

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["a", "a"], "outcome": ["passed", "missing"],
    ...                       "score": [1.0, None]})
    >>> case_sums(units).row(0)
    ('A', 'a', 2.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    """
    schema = units.schema
    graded = outcome_in(schema, "passed", "failed", "scored_no_threshold")
    completed = outcome_in(schema, "no_output", "judge_failed", "not_scored", "scored_no_threshold", "failed", "passed")
    scored_score = graded & pl.col(SCORE).is_not_null()
    return (
        units.lazy()
        .group_by(CANDIDATE, cluster)
        .agg(
            pl.len().cast(pl.Float64).alias(OBSERVATIONS),
            completed.sum().cast(pl.Float64).alias(COMPLETED),
            graded.sum().cast(pl.Float64).alias(SCORED),
            outcome_in(schema, "passed").sum().cast(pl.Float64).alias(PASSED),
            pl.when(scored_score).then(pl.col(SCORE)).sum().cast(pl.Float64).alias("_score_sum"),
            scored_score.sum().cast(pl.Float64).alias("_score_n"),
        )
        # Cases in key order: the sums over them are then the same, bit for bit, however the units were read
        # (whole batch, candidate by candidate, a lake, another engine) — a group-by gives its groups in any order.
        .sort(CANDIDATE, cluster)
        .collect()
    )


def uncertainty_from_case_sums(
    summary: pl.DataFrame,
    per_case: pl.DataFrame,
    *,
    confidence: float = 0.95,
    score_range: tuple[float, float] = (0.0, 1.0),
    reducer: str = "mean",
) -> pl.DataFrame:
    """The columns :func:`with_uncertainty` adds, from the per-case sums of :func:`case_sums`.

    The one implementation of the audit's interval statistics (:mod:`evalframe.inference`): polars computes
    ``per_case`` from its units, another engine (Spark, :mod:`evalframe.engines`) from its own and sends
    only these sums to the driver. ``per_case`` must be sorted by candidate and case (sums in a fixed order
    are the same bit for bit); its case column may have any name. Parameters and returned columns are those
    of :func:`with_uncertainty`.

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["A"], "planned": [2], "completed": [2], "scored": [2],
    ...     "passed": [1], "completion_rate": [1.0], "scored_coverage": [1.0], "pass_rate_scored": [0.5],
    ...     "pass_rate_planned": [0.5], "pass_rate_upper": [0.5]})
    >>> per_case = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["a", "b"], "observations": [1.0, 1.0],
    ...     "completed": [1.0, 1.0], "scored": [1.0, 1.0], "passed": [1.0, 0.0], "_score_sum": [1.0, 0.0],
    ...     "_score_n": [1.0, 1.0]})
    >>> uncertainty_from_case_sums(summary, per_case).select("cases_planned", "case_pass_rate").row(0)
    (2, 0.5)
    """
    from evalframe.inference import bounded_mean_interval, rate_interval

    rates = {
        COMPLETION_RATE: (COMPLETED, OBSERVATIONS),
        SCORED_COVERAGE: (SCORED, OBSERVATIONS),
        PASS_RATE_SCORED: (PASSED, SCORED),
        PASS_RATE_PLANNED: (PASSED, OBSERVATIONS),
        PASS_RATE_UPPER: ("_upper", OBSERVATIONS),
    }
    low, high = score_range
    rows = []
    for (name,), cases in per_case.with_columns(
        (pl.col(PASSED) + pl.col(OBSERVATIONS) - pl.col(SCORED)).alias("_upper")
    ).group_by(CANDIDATE, maintain_order=True):
        row: dict[str, object] = {
            CANDIDATE: name,
            "cases_planned": cases.height,
            "cases_fully_scored": int((cases.get_column(SCORED) == cases.get_column(OBSERVATIONS)).sum()),
        }
        for rate, (num, den) in rates.items():
            est = rate_interval(
                cases.get_column(num).to_numpy(), cases.get_column(den).to_numpy(), confidence=confidence
            )
            row[f"{rate}_ci_low"], row[f"{rate}_ci_high"] = est.ci_low, est.ci_high
            if rate == PASS_RATE_SCORED:
                per = est.n / est.n_clusters if est.n_clusters else None
                row["pass_rate_scored_se_naive"] = (
                    None if est.rate is None else math.sqrt(est.rate * (1.0 - est.rate) / est.n)
                )
                row["pass_rate_scored_se_clustered"] = est.se_clustered
                row["design_effect"] = est.design_effect
                row["icc"] = (
                    None
                    if est.design_effect is None or per is None or per <= 1
                    else min(1.0, (est.design_effect - 1.0) / (per - 1.0))
                )
                row["effective_n"] = est.effective_n
        full = cases.filter((pl.col(SCORED) == pl.col(OBSERVATIONS)) & (pl.col(SCORED) > 0))
        reduced = reduce_case(full.get_column(PASSED).to_numpy(), full.get_column(SCORED).to_numpy(), reducer)
        ones = np.ones(full.height)
        case_est = (
            bounded_mean_interval(reduced, ones, confidence=confidence)
            if reducer == "mean"
            else rate_interval(reduced, ones, confidence=confidence)
        )
        row["cases_scored"] = full.height
        row["case_pass_rate"] = case_est.rate
        row["case_pass_rate_ci_low"], row["case_pass_rate_ci_high"] = case_est.ci_low, case_est.ci_high
        score = bounded_mean_interval(
            cases.get_column("_score_sum").to_numpy(),
            cases.get_column("_score_n").to_numpy(),
            low=low,
            high=high,
            confidence=confidence,
        )
        row["mean_score"], row["mean_score_se_clustered"] = score.rate, score.se_clustered
        row["mean_score_ci_low"], row["mean_score_ci_high"] = score.ci_low, score.ci_high
        rows.append(row)
    names = [
        *(f"{r}_ci_{end}" for r in RATE_COLUMNS for end in ("low", "high")),
        "case_pass_rate",
        "case_pass_rate_ci_low",
        "case_pass_rate_ci_high",
        "pass_rate_scored_se_naive",
        "pass_rate_scored_se_clustered",
        "design_effect",
        "icc",
        "effective_n",
        "mean_score",
        "mean_score_se_clustered",
        "mean_score_ci_low",
        "mean_score_ci_high",
    ]
    added = pl.DataFrame(
        rows,
        schema={
            CANDIDATE: summary.schema[CANDIDATE],
            "cases_planned": pl.UInt32,
            "cases_fully_scored": pl.UInt32,
            "cases_scored": pl.UInt32,
            **dict.fromkeys(names, pl.Float64),
        },
    ).with_columns(pl.lit(reducer, pl.String).alias("case_reducer"))
    defined = {f"{r}_ci_{end}": r for r in RATE_COLUMNS for end in ("low", "high")}
    defined |= dict.fromkeys(
        (
            "pass_rate_scored_se_naive",
            "pass_rate_scored_se_clustered",
            "design_effect",
            "icc",
            "effective_n",
            "case_pass_rate",
            "case_pass_rate_ci_low",
            "case_pass_rate_ci_high",
        ),
        PASS_RATE_SCORED,
    )
    first = [*(f"{r}_ci_{end}" for r in RATE_COLUMNS for end in ("low", "high")), "cases_planned", "cases_fully_scored"]
    rest = ["case_reducer", "cases_scored", *(n for n in names if n not in first)]
    return (
        summary.join(added, on=CANDIDATE, how="left")
        .with_columns(pl.when(pl.col(rate).is_not_null()).then(pl.col(c)).alias(c) for c, rate in defined.items())
        .select(*summary.columns, *first, *rest)
        .sort(CANDIDATE)
    )


#: How trials of a case reduce to a case outcome (SPEC §4); ``at_least:k`` takes a count.
REDUCERS: Final = ("mean", "any", "all", "majority", "at_least:k")


def check_reducer(reducer: str) -> str:
    """``reducer`` when it is one of :data:`REDUCERS` (``at_least:k`` with an integer k ≥ 1); else ValueError."""
    if reducer in ("mean", "any", "all", "majority"):
        return reducer
    head, _, count = reducer.partition(":")
    if head == "at_least" and count.isdigit() and int(count) >= 1:
        return reducer
    msg = f"reducer must be mean, any, all, majority or at_least:k (k a positive integer), got {reducer!r}"
    raise ValueError(msg)


def reduce_case(passed: np.ndarray, scored: np.ndarray, reducer: str) -> np.ndarray:
    """The case outcome of each case from its passed and scored trial counts.

    Parameters
    ----------
    passed, scored
        Per case: trials passed and trials scored (scored ≥ 1).
    reducer
        ``mean`` gives the fraction passed / scored; ``any`` 1 when a trial
        passed (pass@k); ``all`` 1 when every trial passed; ``majority`` 1
        when more than half passed; ``at_least:k`` 1 when k or more passed.

    Examples
    --------
    >>> passed, scored = np.array([0, 1, 2, 3]), np.array([3, 3, 3, 3])
    >>> [reduce_case(passed, scored, r).tolist() for r in ("any", "all", "majority", "at_least:1")]
    [[0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]]
    """
    p, n = passed.astype(np.float64), scored.astype(np.float64)
    if reducer == "mean":
        fraction: np.ndarray = p / n
        return fraction
    if reducer == "any":
        return (p >= 1).astype(np.float64)
    if reducer == "all":
        return np.equal(p, n).astype(np.float64)
    if reducer == "majority":
        return (2 * p > n).astype(np.float64)
    return (p >= int(check_reducer(reducer).partition(":")[2])).astype(np.float64)


make_callable(__name__, "funnel")  # `evalframe.funnel(...)` calls the function; the module stays a module
