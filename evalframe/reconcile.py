"""Reconcile the canonical ledger with the plan, on identity, by anti-joins.

Rows are joined on (candidate, case_id, trial[, attempt]) and never by
position: matching row counts prove nothing. Every function here is pure and
returns a (partial) problems frame; :func:`reconcile` gathers them all.
"""

from __future__ import annotations

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    ATTEMPT_KEY,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    DETAIL,
    KIND,
    LINE,
    REFUSING,
    RUN_ID,
    SOURCE,
    TRIAL,
    UNIT_KEY,
    MissingPolicy,
)
from evalframe.plan import Plan
from evalframe.problems import concat_problems

_ROW_COLS = (CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, SOURCE)


def _flag(rows: pl.LazyFrame, kind: str, detail: pl.Expr) -> pl.LazyFrame:
    return rows.select(pl.lit(kind).alias(KIND), *_ROW_COLS, detail.alias(DETAIL))


def unknown_rows(ledger: pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    """Rows whose candidate, case or trial is not in the plan (anti-joins).

    Each row gets the most specific kind that applies: ``unknown_candidate``,
    else ``unknown_case``, else ``trial_out_of_range`` (trial outside
    1..N), else ``unknown_unit`` (a units-table plan that does not list the
    unit).

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["quote"]}), candidates=["A"])
    >>> rows = pl.LazyFrame({"candidate": ["A", "C"], "case_id": ["invented", "quote"], "trial": [1, 1],
    ...                      "attempt": [1, 1], "line": [2, 3], "source": ["r.csv", "r.csv"]})
    >>> unknown_rows(rows, plan).select("kind", "case_id", "line").collect().rows()
    [('unknown_candidate', 'quote', 3), ('unknown_case', 'invented', 2)]
    """
    cands = pl.LazyFrame({CANDIDATE: list(plan.candidates)}, schema={CANDIDATE: pl.String})
    cases = plan.cases.lazy().select(CASE_ID)
    bad_cand = ledger.join(cands, on=CANDIDATE, how="anti", maintain_order="left")
    good_cand = ledger.join(cands, on=CANDIDATE, how="semi", maintain_order="left")
    bad_case = good_cand.join(cases, on=CASE_ID, how="anti", maintain_order="left")
    known = good_cand.join(cases, on=CASE_ID, how="semi", maintain_order="left")
    low, high = plan.trial_range
    out_of_range = known.filter((pl.col(TRIAL) < low) | (pl.col(TRIAL) > high))
    parts = [
        _flag(bad_cand, "unknown_candidate", pl.format("candidate {} is not planned", pl.col(CANDIDATE))),
        _flag(bad_case, "unknown_case", pl.format("case {} is not in the plan", pl.col(CASE_ID))),
        _flag(
            out_of_range,
            "trial_out_of_range",
            pl.format("trial {} is outside 1..{}", pl.col(TRIAL), pl.lit(plan.trials)),
        ),
    ]
    if plan.units is not None:
        in_range = known.filter(pl.col(TRIAL).is_between(low, high))
        not_unit = in_range.join(plan.units.lazy(), on=list(UNIT_KEY), how="anti", maintain_order="left")
        parts.append(_flag(not_unit, "unknown_unit", pl.lit("(candidate, case_id, trial) is not a planned unit")))
    return pl.concat(parts)


def duplicate_keys(ledger: pl.LazyFrame) -> pl.LazyFrame:
    """Every row whose (candidate, case_id, trial, attempt) occurs more than once.

    Examples
    --------
    >>> rows = pl.LazyFrame({"candidate": ["A", "A"], "case_id": ["quote", "quote"], "trial": [1, 1],
    ...                      "attempt": [1, 1], "line": [2, 3], "source": ["r.csv", "r.csv"]})
    >>> duplicate_keys(rows).select("kind", "line").collect().to_dicts()
    [{'kind': 'duplicate_key', 'line': 2}, {'kind': 'duplicate_key', 'line': 3}]
    """
    dups = ledger.filter(pl.len().over(ATTEMPT_KEY) > 1)
    return _flag(dups, "duplicate_key", pl.format("key appears {} times", pl.len().over(ATTEMPT_KEY)))


def binding_mismatches(ledger: pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    """Rows whose run_id, dataset_version or case_hash differ from what the plan requires.

    ``run_mismatch`` when the plan requires a run and the row's ``run_id``
    differs (a null run_id differs too); ``version_mismatch`` /
    ``hash_mismatch`` when the plan and the row both carry the value for a
    case and they differ (compared exactly).
    """
    parts: list[pl.LazyFrame] = []
    if plan.run_id is not None:
        wrong = ledger.filter(pl.col(RUN_ID).is_null() | (pl.col(RUN_ID) != plan.run_id))
        parts.append(
            _flag(
                wrong,
                "run_mismatch",
                pl.format(
                    "run_id {} is not the required run {}", pl.col(RUN_ID).fill_null("null"), pl.lit(plan.run_id)
                ),
            )
        )
    for col, kind in ((DATASET_VERSION, "version_mismatch"), (CASE_HASH, "hash_mismatch")):
        if col not in plan.cases.columns:
            continue
        planned = plan.cases.lazy().select(CASE_ID, pl.col(col).cast(pl.String).alias("_planned"))
        joined = ledger.join(planned, on=CASE_ID, how="inner", maintain_order="left").filter(
            pl.col(col).is_not_null() & pl.col("_planned").is_not_null() & (pl.col(col) != pl.col("_planned"))
        )
        parts.append(
            _flag(
                joined,
                kind,
                pl.format("{} {} differs from the plan's {}", pl.lit(col), pl.col(col), pl.col("_planned")),
            )
        )
    if not parts:
        return _flag(ledger.head(0), "run_mismatch", pl.lit(""))
    return pl.concat(parts)


def missing_units(ledger: pl.LazyFrame, plan: Plan, *, missing: MissingPolicy = "report") -> pl.LazyFrame:
    """Planned units with no ledger row at all (anti-join plan → ledger).

    Refusing only when ``missing="refuse"``; otherwise reported for the
    record (the funnel counts them as ``missing``, never as failures).
    """
    gone = plan.planned_units().join(ledger.select(UNIT_KEY).unique(), on=list(UNIT_KEY), how="anti")
    return gone.select(
        pl.lit("missing_unit").alias(KIND),
        *UNIT_KEY,
        pl.lit(plan.source).alias(SOURCE),
        pl.lit("planned unit has no row").alias(DETAIL),
        pl.lit(missing == "refuse").alias(REFUSING),
    )


def reconcile(ledger: pl.DataFrame, plan: Plan, *, missing: MissingPolicy = "report") -> pl.DataFrame:
    """Run every identity check of the ledger against the plan.

    Parameters
    ----------
    ledger
        Canonical ledger (see :data:`evalframe.validate.CANONICAL_SCHEMA`).
    plan
        The frozen plan.
    missing
        ``report`` (default): missing units are listed, not refusing.
        ``refuse``: a missing unit refuses the batch.

    Returns
    -------
    polars.DataFrame
        Problems table (sorted) with kinds ``unknown_candidate``,
        ``unknown_case``, ``trial_out_of_range``, ``unknown_unit``,
        ``duplicate_key``, ``run_mismatch``, ``version_mismatch``,
        ``hash_mismatch`` and ``missing_unit``.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> rows = pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "trial": [1], "attempt": [1],
    ...                      "run_id": [None], "line": [2], "source": ["r.csv"]},
    ...                     schema_overrides={"run_id": pl.String})
    >>> reconcile(rows, plan).select("kind", "case_id", "refusing").to_dicts()
    [{'kind': 'missing_unit', 'case_id': 'refund', 'refusing': False}]
    """
    lf = ledger.lazy()
    return concat_problems(
        [
            unknown_rows(lf, plan),
            duplicate_keys(lf),
            binding_mismatches(lf, plan),
            missing_units(lf, plan, missing=missing),
        ]
    )
