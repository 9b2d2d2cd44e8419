"""What the driver collects besides the case patterns: the slice tables' counts, the missing cases, the ledger's facts.

Each is one small aggregate per candidate (and slice value), never one row per case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import (
    CANDIDATE,
    CASE_ID,
    CASES,
    MISSING,
    OBSERVATIONS,
    OUTCOMES,
    PLANNED,
    RUN_ID,
    SCORED,
)
from evalframe.engines import core
from evalframe.engines.core import Lazy
from evalframe.funnel import funnel_from_outcome_counts
from evalframe.plan import Plan
from evalframe.slices import SLICE_VALUE, UNGRADED, bin_edges, cases_by_slice, slice_rates

if TYPE_CHECKING:
    from evalframe.audit.step import Options


def planned_by(plan: Plan, by: Sequence[str]) -> pl.DataFrame:
    """The plan's planned units counted by ``by`` (``candidate``, ``case_id``): ``planned`` (UInt32)."""
    return plan.planned_units().group_by(*by).agg(pl.len().cast(pl.UInt32).alias(PLANNED)).collect()


def slice_tables(
    by_slice: Mapping[str, pl.DataFrame], labels: pl.DataFrame, plan: Plan, o: Options
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The slice funnel and the missingness test's case counts, from the case patterns of each slice value.

    Each case's slice labels (numeric columns binned by the audit's resolved bins) are the plan's; the
    counts per slice value are added up here, as :func:`evalframe.slices.slice_funnel` and
    :func:`evalframe.slices.case_slices` add up the units on polars.
    """
    counted = [core.OUTCOME_COUNT + name for name in OUTCOMES]
    planned = planned_by(plan, [CANDIDATE, CASE_ID]).join(labels, on=CASE_ID) if o.retry == "every" else None
    funnels, parts = {}, []
    for name, patterns in by_slice.items():
        value = pl.col(name).alias(SLICE_VALUE)
        counts = (
            patterns.group_by(CANDIDATE, value)
            .agg(pl.col(counted).sum())
            .unpivot(counted, index=[CANDIDATE, SLICE_VALUE], variable_name="outcome", value_name="n")
            .with_columns(pl.col("outcome").str.strip_prefix(core.OUTCOME_COUNT))
        )
        units = None if planned is None else planned.group_by(CANDIDATE, value).agg(pl.col(PLANNED).sum())
        funnels[name] = funnel_from_outcome_counts(
            counts, by=[CANDIDATE, SLICE_VALUE], planned=units, pass_fail=o.pass_fail
        )
        cases = patterns.select(
            CANDIDATE,
            name,
            pl.col(OBSERVATIONS).cast(pl.Int64).alias(PLANNED),
            (pl.col(OBSERVATIONS) - pl.col(SCORED)).cast(pl.Int64).alias(UNGRADED),
            pl.col("_missing").cast(pl.Int64).alias(MISSING),
            CASES,
        )
        parts.append(cases_by_slice(cases, [name]))
    edges = {name: bin_edges(plan.cases, name, spec) for name, spec in (o.bins or {}).items() if name in funnels}
    return slice_rates(funnels, edges), pl.concat(parts)


def ledger_facts(marked: Lazy) -> tuple[int, list[str]]:
    """The ledger's rows and the run ids of its planned units' rows, from one aggregate."""
    by_run = marked.group_by("_planned", RUN_ID).agg(nw.len().alias("n")).collect("polars").to_native()
    run_ids = by_run.filter(pl.col("_planned") & pl.col(RUN_ID).is_not_null()).get_column(RUN_ID).to_list()
    return int(by_run.get_column("n").sum()), [str(r) for r in run_ids]
