"""The row work of :mod:`evalframe.engines.core`, laid out on Spark (lazy; what several queries read is cached)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import CANDIDATE, CASE_HASH, CASE_ID, DATASET_VERSION, TRIAL
from evalframe.engines import core
from evalframe.engines.core import Lazy
from evalframe.plan import Plan

if TYPE_CHECKING:
    from evalframe.audit.step import Options


def _cases_frame(spark: Any, plan: Plan) -> Any:
    """The plan's cases as a Spark DataFrame (identifiers and plan columns as text or their own types)."""
    cases = plan.cases
    return spark.createDataFrame(cases.to_pandas()) if cases.height else spark.createDataFrame([], "case_id string")


def _planned_units(spark: Any, plan: Plan, cases: Lazy) -> Lazy:
    """The planned units with their plan columns: a units table's own, else cases × candidates × trials."""
    columns = [c for c in plan.cases.columns if c != CASE_ID]
    if plan.unit_codes is not None:
        listed = plan.planned_units().select(CANDIDATE, CASE_ID, pl.col(TRIAL).cast(pl.Int64)).collect()
        units: Lazy = nw.from_native(spark.createDataFrame(listed.to_pandas()))
        return units.join(cases, on=CASE_ID, how="left").select(CANDIDATE, CASE_ID, TRIAL, *columns)
    low, high = plan.trial_range
    grid = [(c, t) for c in plan.candidates for t in range(low, high + 1)]
    pairs: Lazy = nw.from_native(spark.createDataFrame(grid, f"{CANDIDATE} string, {TRIAL} long"))
    return pairs.join(cases, how="cross").select(CANDIDATE, CASE_ID, TRIAL, *columns)


def _cache(frame: Lazy, cached: list[Lazy]) -> Lazy:
    """The frame, cached by Spark (computed once, at its first use, for every later query that reads it).

    It is added to ``cached``, which the audit unpersists when it ends.
    """
    kept: Lazy = nw.from_native(frame.to_native().cache())
    cached.append(kept)
    return kept


@dataclass(frozen=True)
class RowWork:
    """The audit's row work, laid out on Spark (lazy; what several queries read is cached)."""

    #: The planned units with their plan columns.
    planned: Lazy
    #: Every ledger row in canonical columns, with ``_planned``.
    marked: Lazy
    #: Every attempt of a planned unit with ``attempts`` and ``counts``.
    attempts: Lazy
    #: Every row problem: the checks, the identity problems and the retry flags.
    problems: list[Lazy]
    #: The planned units with no ledger row.
    missing: Lazy


def row_work(spark: Any, frame: Lazy, plan: Plan, shape: str, o: Options, cached: list[Lazy]) -> RowWork:
    """Canonical columns, identity checks and retry selection of :mod:`evalframe.engines.core`, on Spark."""
    options = core.Options(
        retry=o.retry,
        max_attempts=o.max_attempts,
        retry_on=o.retry_on,
        strict_retries=o.strict_retries,
        missing_refuses=o.missing == "refuse",
        grade=o.grade,
        score_range=o.score_range,
        pass_threshold=o.pass_threshold,
        extra_columns=o.extra_columns,
    )
    cases = nw.from_native(_cases_frame(spark, plan))
    expected = (
        cases.select(CASE_ID, nw.col("expected").cast(nw.String()).alias("_expected")) if shape == "answers" else None
    )
    only = plan.candidates[0] if len(plan.candidates) == 1 else None
    made = core.canonical(frame, shape, options, expected, only)
    planned = _cache(_planned_units(spark, plan, cases), cached)
    ident = core.identity(
        made.ledger,
        cases.select(CASE_ID, *(c for c in (DATASET_VERSION, CASE_HASH) if c in plan.cases.columns)),
        planned,
        candidates=plan.candidates,
        trial_range=plan.trial_range,
        units_table=plan.unit_codes is not None,
        run_id=plan.run_id,
        plan_source=plan.source,
        missing_refuses=options.missing_refuses,
        checks=made.checks,
    )
    marked = _cache(ident.ledger, cached)
    selection = core.select_attempts(marked.filter(nw.col("_planned")).drop("_planned"), options)
    problems = [*made.problems, *ident.problems, *selection.flags]
    return RowWork(planned, marked, selection.attempts, problems, ident.missing)
