"""The retry policies of :mod:`evalframe.attempts`, the units' outcomes and the counts the driver collects."""

from __future__ import annotations

from collections.abc import Sequence

import narwhals.stable.v2 as nw

from evalframe.attempts import Selection, marked_attempts, selection
from evalframe.columns import (
    CANDIDATE,
    CASE_ID,
    CASES,
    OUTCOMES,
    SCORE,
)
from evalframe.funnel import CASE_SUM_COLUMNS
from evalframe.validate.rows import _UNIT, Lazy, Options


def select_attempts(ledger: Lazy, options: Options, unit: Sequence[str] = _UNIT) -> Selection:
    """The retry policies of SPEC §4 over windows per unit: :func:`evalframe.attempts.marked_attempts`."""
    return selection(marked_attempts(ledger, options, unit), options)


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
