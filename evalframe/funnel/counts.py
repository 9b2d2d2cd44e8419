"""Per-unit outcomes and the funnel of counts and rates (SPEC §2).

``planned ≥ attempted ≥ completed ≥ with_output ≥ scored ≥ passed``; every
rate is named by its denominator and sits next to its counts. A missing unit
is ``missing``: never a failure, never a pass, never dropped from ``planned``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.attempts import COUNTS
from evalframe.columns import (
    ATTEMPT,
    ATTEMPTED,
    ATTEMPTS,
    CANDIDATE,
    COMPLETED,
    COMPLETION_RATE,
    COUNTED_ATTEMPT,
    EXEC_FAILED,
    EXEC_FAILURES,
    EXEC_STATUS,
    FAILED,
    FUNNEL_OUTCOMES,
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
    SCORE_STATUS,
    SCORED,
    SCORED_COVERAGE,
    UNIT_KEY,
    WITH_OUTPUT,
)
from evalframe.validate.rows import Lazy

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


def outcome(value: Callable[[str], nw.Expr] | None = None) -> nw.Expr:
    """One outcome per unit row, from least to most evidence: the one rule every engine runs (narwhals).

    A row with no attempt (null ``exec_status``) is ``missing``; then
    ``not_started``, ``exec_failed`` (timeout or error), ``no_output``,
    ``judge_failed``, ``not_scored``, and for scored units ``passed`` or
    ``failed`` — or ``scored_no_threshold`` when a numeric score was given
    but no pass threshold was declared (pass rates are then null).

    ``value`` gives the expression of each outcome's name (default: the name as text); the polars path
    gives its position in :data:`OUTCOMES`, which :func:`unit_outcomes` turns into the Enum.

    Examples
    --------
    >>> import narwhals.stable.v2 as nw
    >>> rows = pl.DataFrame({"exec_status": [None, "timeout", "completed"], "score_status": [None, None, "scored"],
    ...     "has_output": [None, None, True], "passed": [None, None, False]})
    >>> nw.from_native(rows).select(outcome().alias("outcome")).to_native().get_column("outcome").to_list()
    ['missing', 'exec_failed', 'failed']
    """
    name = value or (lambda text: nw.lit(text, nw.String()))
    ex, sc = nw.col(EXEC_STATUS), nw.col(SCORE_STATUS)
    return (
        nw.when(ex.is_null())
        .then(name("missing"))
        .when(ex == "not_started")
        .then(name("not_started"))
        .when(ex.is_in(list(EXEC_FAILURES)))
        .then(name("exec_failed"))
        .when(~nw.col(HAS_OUTPUT).fill_null(True))
        .then(name("no_output"))
        .when(sc == "judge_error")
        .then(name("judge_failed"))
        .when(sc != "scored")
        .then(name("not_scored"))
        .when(nw.col(PASSED).is_null())
        .then(name("scored_no_threshold"))
        .when(nw.col(PASSED))
        .then(name("passed"))
        .otherwise(name("failed"))
    )


def outcome_in(schema: pl.Schema, *values: str) -> pl.Expr:
    """``outcome`` is one of ``values``; on the Enum it compares physical codes, not strings (fast)."""
    if isinstance(schema["outcome"], pl.Enum):
        return pl.col("outcome").to_physical().is_in([OUTCOMES.index(v) for v in values])
    return pl.col("outcome").cast(pl.String).is_in(list(values))


def unit_outcomes(
    planned: Lazy,
    attempts: Lazy,
    plan_columns: Sequence[str] = (),
    unit: Sequence[str] = UNIT_KEY,
    *,
    value: Callable[[str], nw.Expr] | None = None,
) -> Lazy:
    """Planned units joined to their counted attempt(s), each with its outcome: the rule every engine runs.

    Parameters
    ----------
    planned
        One row per planned unit (narwhals lazy frame): the ``unit`` columns and any columns to carry along
        (the plan's, or the polars audit's unit codes).
    attempts
        Attempts with ``counts`` (:func:`evalframe.attempts.select_attempts`) and the ``unit`` columns.
    plan_columns
        The plan's case columns: a ledger column named like one (other than the unit key) becomes
        ``<name>_right``, as a join with the plan names it.
    unit
        Columns naming a unit: (candidate, case_id, trial), or one column coding them. The attempts' other
        unit-key columns, and those ``planned`` holds that are not plan columns, come from ``planned``.
    value
        The expression of each outcome's name, as in :func:`outcome` (default: the name as text).

    Returns
    -------
    narwhals.LazyFrame
        One row per planned unit (per counted attempt under policy ``every``), in no particular order:
        ``planned``'s columns, the counted attempt's ledger columns, ``counted_attempt`` (null when
        missing), ``attempts`` (0 when missing) and ``outcome``.

    Examples
    --------
    >>> planned = nw.from_native(pl.LazyFrame({"_uid": [0, 1], "case_id": ["q1", "q2"]}))
    >>> attempts = nw.from_native(pl.LazyFrame({"_uid": [1], "case_id": ["q2"], "attempt": [1],
    ...     "exec_status": ["completed"], "has_output": [True], "score_status": ["scored"], "passed": [True],
    ...     "attempts": [1], "counts": [True]}))
    >>> units = unit_outcomes(planned, attempts, unit=["_uid"]).to_native().sort("_uid")
    >>> units.select("case_id", "attempts", "outcome").collect().rows()
    [('q1', 0, 'missing'), ('q2', 1, 'passed')]
    """
    counted = attempts.filter(nw.col(COUNTS)).drop(COUNTS).rename({ATTEMPT: COUNTED_ATTEMPT})
    names, held = counted.collect_schema().names(), planned.collect_schema().names()
    given = [c for c in (*UNIT_KEY, *held) if c in names and c not in unit and (c in UNIT_KEY or c not in plan_columns)]
    counted = counted.drop(*dict.fromkeys(given))
    clash = {c: f"{c}_right" for c in names if c in plan_columns and c not in UNIT_KEY and c not in given}
    joined = planned.join(counted.rename(clash), on=list(unit), how="left")
    return joined.with_columns(nw.col(ATTEMPTS).fill_null(0), outcome(value).alias("outcome"))


def funnel(
    units: pl.LazyFrame, by: Sequence[str] = (CANDIDATE,), *, unit: str | None = None, pass_fail: bool = True
) -> pl.LazyFrame:
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
    pass_fail
        Whether the grading gives every scored unit a pass or a fail (binary grades, or numeric scores
        with a declared threshold; the default). False for numeric scores without a threshold: a pass
        rate then exists only where scored units carry the export's own pass/fail, never for a group
        with nothing scored (see :func:`funnel_rates`).

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
        *(n(*values).alias(name) for name, values in FUNNEL_OUTCOMES.items()),
    )
    return funnel_rates(counts, by, pass_fail=pass_fail)


def funnel_from_outcome_counts(
    counts: pl.DataFrame,
    by: Sequence[str] = (CANDIDATE,),
    *,
    planned: pl.DataFrame | None = None,
    pass_fail: bool = True,
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
            *(n(*values).alias(name) for name, values in FUNNEL_OUTCOMES.items()),
        )
    )
    if planned is None:  # every counted row is one planned unit
        summed = summed.with_columns(pl.col(OBSERVATIONS).alias(PLANNED))
    else:
        units = planned.lazy().select(*by, pl.col(PLANNED).cast(pl.UInt32))
        # A null group (a slice value of cases without one) is a group: nulls match nulls.
        summed = summed.join(units, on=list(by), how="left", nulls_equal=True)
    return funnel_rates(summed, by, pass_fail=pass_fail).collect()


def funnel_rates(counts: pl.LazyFrame, by: Sequence[str] = (CANDIDATE,), *, pass_fail: bool = True) -> pl.LazyFrame:
    """The SPEC §2 counts in funnel order and their rates, from the counts and sums of :data:`FUNNEL_OUTCOMES`.

    ``counts`` holds ``planned``, ``observations`` and those sums per group. Pass rates, and the counts
    ``passed`` and ``failed``, exist only when every scored unit has a pass or a fail (else null, never 0);
    without a declared one (``pass_fail`` False: numeric scores, no threshold) a group with nothing scored
    shows none either, since nothing says its units could pass.

    The one implementation of the funnel's arithmetic, for units counted by polars (:func:`funnel`) or by
    another engine (:func:`funnel_from_outcome_counts`).
    """
    attempted = (pl.col(OBSERVATIONS) - pl.col("_not_attempted")).cast(pl.UInt32).alias(ATTEMPTED)
    counts = counts.with_columns(attempted).select(*by, PLANNED, OBSERVATIONS, *COUNT_COLUMNS[1:], "_no_threshold")
    planned = pl.col(OBSERVATIONS).cast(pl.Float64)
    per_planned = pl.when(pl.col(OBSERVATIONS) > 0)
    # Pass rates exist only when every scored unit has a pass/fail (binary grade or declared threshold).
    has_pass = (pl.col("_no_threshold") == 0) & (pl.lit(pass_fail) | (pl.col(SCORED) > 0))
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
        # Without a pass or a fail for every scored unit, no count of passes or fails is one: null, not 0.
        .with_columns(pl.when(has_pass).then(pl.col(c)).alias(c) for c in (PASSED, FAILED))
        .drop("_no_threshold")
        .sort(list(by))
    )
