"""The retry policies of :mod:`evalframe.attempts`, the units' outcomes and the counts the driver collects."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import narwhals.stable.v2 as nw

from evalframe.attempts import COUNTS, retry_flag_details
from evalframe.columns import (
    ATTEMPT,
    ATTEMPTS,
    CANDIDATE,
    CASE_ID,
    CASES,
    COUNTED_ATTEMPT,
    EXEC_STATUS,
    OUTCOMES,
    SCORE,
    SCORE_STATUS,
)
from evalframe.funnel import CASE_SUM_COLUMNS, outcome
from evalframe.validate.rows import _UNIT, ROW_KEYS, Lazy, Options, _lit, checked


@dataclass(frozen=True)
class Selection:
    """Every attempt of a planned unit with ``attempts`` and ``counts``, and the retry flags."""

    attempts: Lazy
    flags: list[Lazy]


def select_attempts(ledger: Lazy, options: Options) -> Selection:
    """The retry policies of :func:`evalframe.attempts.select_attempts`, as windows ordered by attempt."""
    unit = _UNIT
    prev_exec = nw.col(EXEC_STATUS).shift(1).over(*unit, order_by=ATTEMPT)
    prev_score = nw.col(SCORE_STATUS).shift(1).over(*unit, order_by=ATTEMPT)
    prev_attempt = nw.col(ATTEMPT).shift(1).over(*unit, order_by=ATTEMPT)
    lf = ledger.with_columns(
        prev_exec.alias("_prev_exec"), prev_score.alias("_prev_score"), prev_attempt.alias("_prev_attempt")
    )
    same = ~nw.col("_prev_attempt").is_null()
    prev_eligible = nw.col("_prev_exec").is_in(list(options.retry_on)).fill_null(False)
    prev_scored = (same & (nw.col("_prev_score") == "scored")).fill_null(False)
    within = _lit(True) if options.max_attempts is None else nw.col(ATTEMPT) <= options.max_attempts
    lf = lf.with_columns(
        nw.len().over(*unit).cast(nw.Int64()).alias(ATTEMPTS),
        prev_scored.alias("_prev_scored"),
        (same & ~prev_eligible).alias("_prev_ineligible"),
        (nw.col(ATTEMPT) - nw.col("_prev_attempt").fill_null(0) > 1).alias("_gap"),
        (~(~same | (prev_eligible & within))).cast(nw.Int64()).alias("_disallowed"),
    )
    if options.retry == "first":
        counts: nw.Expr = ~same
    elif options.retry == "every":
        counts = ~same | within
    elif options.retry == "last_allowed":
        lf = lf.with_columns(nw.col("_disallowed").cum_sum().over(*unit, order_by=ATTEMPT).alias("_seen"))
        allowed = nw.col("_seen") == 0
        lf = lf.with_columns(nw.when(allowed).then(nw.col(ATTEMPT)).max().over(*unit).alias("_last_allowed"))
        counts = allowed & (nw.col(ATTEMPT) == nw.col("_last_allowed"))
    else:
        msg = f"unknown retry policy {options.retry!r}; use first, last_allowed or every"
        raise ValueError(msg)
    lf = lf.with_columns(counts.alias(COUNTS))
    strict = options.strict_retries
    masks = {
        "retry_after_scored": nw.col("_prev_scored"),
        "retry_after_ineligible": ~nw.col("_prev_scored") & nw.col("_prev_ineligible"),
        "attempt_gap": nw.col("_gap"),
    }
    if options.max_attempts is not None:
        masks["attempt_beyond_max"] = nw.col(ATTEMPT) > options.max_attempts
    details = retry_flag_details(options.retry_on, options.max_attempts)
    flags = checked(
        lf, [(mask, kind, _lit(details[kind])) for kind, mask in masks.items()], keys=ROW_KEYS, refusing=strict
    )
    helpers = [c for c in lf.collect_schema().names() if c.startswith("_")]
    return Selection(lf.drop(*helpers), flags)


def unit_outcomes(planned: Lazy, attempts: Lazy, plan_columns: Sequence[str]) -> Lazy:
    """Planned units (with their plan columns) joined to their counted attempt(s), each with its outcome.

    A ledger column named like a plan column becomes ``<name>_right``, as in the polars units table.
    """
    counted = attempts.filter(nw.col(COUNTS)).drop(COUNTS).rename({ATTEMPT: COUNTED_ATTEMPT})
    clash = [c for c in counted.collect_schema().names() if c in plan_columns and c not in _UNIT]
    counted = counted.rename({c: f"{c}_right" for c in clash})
    joined = planned.join(counted, on=_UNIT, how="left")
    return joined.with_columns(nw.col(ATTEMPTS).fill_null(0), outcome().alias("outcome"))


def outcome_counts(units: Lazy) -> Lazy:
    """Units per candidate and outcome (the input of :func:`evalframe.funnel.funnel_from_outcome_counts`)."""
    return units.group_by(CANDIDATE, "outcome").agg(nw.len().alias("n"))


#: :func:`case_sums` with ``outcomes``: the column counting a case's units of each outcome is this prefix and the
#: outcome (``n_passed``, ...).
OUTCOME_COUNT = "n_"


def case_sums(units: Lazy, *, outcomes: bool = False) -> Lazy:
    """Per candidate and case, the sums of :func:`evalframe.funnel.case_sums`, plus its missing units.

    With ``outcomes``, also the case's units of each outcome (Int64 ``n_<outcome>``, see :data:`OUTCOME_COUNT`):
    what the slice funnel adds up by the case's slice values.
    """
    o = nw.col("outcome")
    graded = o.is_in(["passed", "failed", "scored_no_threshold"])
    completed = o.is_in(["no_output", "judge_failed", "not_scored", "scored_no_threshold", "failed", "passed"])
    scored_score = graded & ~nw.col(SCORE).is_null()
    as_float = nw.Float64()
    return units.group_by(CANDIDATE, CASE_ID).agg(
        nw.len().cast(as_float).alias("observations"),
        completed.cast(nw.Int64()).sum().cast(as_float).alias("completed"),
        graded.cast(nw.Int64()).sum().cast(as_float).alias("scored"),
        (o == "passed").cast(nw.Int64()).sum().cast(as_float).alias("passed"),
        nw.when(scored_score).then(nw.col(SCORE)).otherwise(0.0).sum().cast(as_float).alias("_score_sum"),
        scored_score.cast(nw.Int64()).sum().cast(as_float).alias("_score_n"),
        (o == "missing").cast(nw.Int64()).sum().alias("_missing"),
        *(((o == name).cast(nw.Int64()).sum().alias(OUTCOME_COUNT + name)) for name in (OUTCOMES if outcomes else ())),
    )


def case_patterns(per_case: Lazy, by: Sequence[str] = ()) -> Lazy:
    """Per candidate (and ``by``), the number of cases (``cases``) with each set of :func:`case_sums`' sums.

    What :func:`evalframe.funnel.uncertainty_from_case_patterns` finishes on the driver: a few rows per
    candidate with pass/fail grades, however many cases. With ``by`` (a case's slice label), the outcome
    counts ``n_<outcome>`` are added up too, and the missing units counted: what the slice funnel and the
    missingness tests need, per candidate and slice value.
    """
    names = per_case.collect_schema().names()
    counted = [c for c in names if c.startswith(OUTCOME_COUNT)] if by else []
    key = [CANDIDATE, *by, *CASE_SUM_COLUMNS, *(["_missing"] if by else [])]
    return per_case.group_by(*key).agg(nw.len().alias(CASES), *(nw.col(c).sum() for c in counted))
