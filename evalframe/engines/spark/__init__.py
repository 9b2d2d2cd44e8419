"""The audit's step on Spark (PySpark or Spark Connect): the narwhals core on the cluster, counts to the driver.

:class:`evalframe.audit.runners.OnSpark` runs :func:`audit_on_spark` as the audit's runner, so the report is
assembled, noted and refused by the one code path every runner shares (:mod:`evalframe.audit.run`). Spark runs the
row work of :mod:`evalframe.engines.core` and writes the full units, attempts and problems tables as Parquet
under a folder the caller gives (SPEC §3 "Problems at scale"); the driver receives only problem counts per kind
with the first rows of each kind, the first missing case ids per candidate, units per candidate and outcome, and
the case patterns (how many cases have each set of per-case sums: a few rows per candidate; with slices, per
candidate and slice value, with their outcome counts), never one row per case, and finishes the summary and the
slice tables with the polars path's own functions (:func:`evalframe.funnel.funnel_from_outcome_counts`,
:func:`evalframe.funnel.uncertainty_from_case_patterns`, :func:`evalframe.slices.slice_rates`,
:func:`evalframe.slices.cases_by_slice`). A case's slice labels (numeric columns binned) come from the plan, on
the driver.

The row work, the missing cases and the summary's finishing are :mod:`evalframe.engines.driver`'s, the
one implementation every backend runs (here with :class:`~evalframe.engines.spark.rows.SparkFrames`; the
differential test runs the same functions on polars frames). One module a step besides:
:mod:`~evalframe.engines.spark.session` (the session, the ledger it reads and the ledger's shape),
:mod:`~evalframe.engines.spark.tables` (where the full tables are written, and their types when read back)
and :mod:`~evalframe.engines.spark.aggregates` (the slice tables' counts and the ledger's facts). Here:
:func:`audit_on_spark`, which runs them in order, with the two steps that read :data:`FIRST_ROWS` (the
problems' first rows) and ``_patterns`` (the case patterns collected), so that replacing either on this
module, as the tests do, changes what the audit reads.

pyspark is imported only in this package, and only when a Spark audit runs (``pip install 'evalframe[spark]'``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.attempts import RETRY_FLAGS
from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    DETAIL,
    KIND,
    LINE,
    REFUSING,
    SOURCE,
    TRIAL,
)
from evalframe.engines import core
from evalframe.engines.core import Lazy
from evalframe.engines.driver import RowWork, missing_cases, row_work, summary_table
from evalframe.engines.driver import case_patterns as _patterns
from evalframe.engines.spark.aggregates import ledger_facts, planned_by, slice_tables
from evalframe.engines.spark.rows import SparkFrames
from evalframe.engines.spark.session import DRIVER_MEMORY, ledger_shape, open_ledger, read_ledger, spark_session
from evalframe.engines.spark.tables import Tables, check_tables_path, rename, units_schema, write, write_tables
from evalframe.plan import Plan
from evalframe.problems import concat_problems
from evalframe.reconcile import missing_problems
from evalframe.slices import binned

if TYPE_CHECKING:
    from evalframe.audit.step import Options

__all__ = [
    "DRIVER_MEMORY",
    "FIRST_ROWS",
    "SparkAudit",
    "audit_on_spark",
    "read_ledger",
    "spark_session",
]


#: The driver keeps this many problems of each kind (every count is kept; the full table is in the Parquet).
FIRST_ROWS: Final = 1000


def _first_rows(found: Lazy) -> tuple[pl.DataFrame, dict[str, int]]:
    """The first :data:`FIRST_ROWS` rows of each kind (in the problems' sort order) and every kind's count.

    One query: each row is ranked within its kind, and carries its kind's count.
    """
    order = [SOURCE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, DETAIL]
    ranked = found.with_columns(
        nw.col(KIND).cum_count().over(KIND, order_by=order).alias("_rank"), nw.len().over(KIND).alias("_n")
    )
    first = ranked.filter(nw.col("_rank") <= FIRST_ROWS).collect("polars").to_native()
    counts = first.group_by(KIND).agg(pl.col("_n").first()).sort(KIND)
    return concat_problems([first.drop("_rank", "_n")]), {k: int(n) for k, n in counts.iter_rows()}


@dataclass(frozen=True)
class SparkAudit:
    """What the step on Spark hands back (see :func:`audit_on_spark`): one part of the audit and its tables.

    :class:`evalframe.audit.runners.OnSpark` gives them to the audit as a polars runner gives its parts: the
    audit assembles the report, its notes, meta and refusal the same way whichever ran.
    """

    #: The first :data:`FIRST_ROWS` problems of each kind, and every kind's count.
    problems: pl.DataFrame
    problem_counts: dict[str, int]
    #: What the results were read from, the ledger's shape, its rows and run ids.
    source: str
    shape: str
    rows: int
    run_ids: list[str]
    #: Where the full tables are.
    root: str
    #: ``root`` is a temporary folder of this audit's (no ``tables`` given): it goes with the report.
    temporary: bool
    #: A check refused (a refusing problem besides the retry flags): no attempt was selected, no table written.
    checks_refused: bool = False
    #: The summary (before the missingness test's flag), the slice table and the missingness test's case counts
    #: (see :func:`evalframe.slices.cases_by_slice`); None once a problem refused.
    summary: pl.DataFrame | None = None
    slices: pl.DataFrame | None = None
    case_slices: pl.DataFrame | None = None
    #: Polars scans of the Parquet Spark wrote, with the polars tables' types and order.
    units: pl.LazyFrame | None = None
    attempts: pl.LazyFrame | None = None


def audit_on_spark(
    plan: Plan,
    results: object,
    options: Options,
    *,
    tables: str | os.PathLike[str] | None = None,
    spark_remote: str | None = None,
) -> SparkAudit:
    """Check a Spark DataFrame, a Parquet path or a table against a frozen plan on Spark; when clean, count it.

    Run by :class:`evalframe.audit.runners.OnSpark` (``engine="spark"`` or a Spark DataFrame) with the audit's
    checked options (numeric slice columns parsed and their bins resolved from the plan); they mean the same.
    ``tables`` is the folder Spark writes ``units``, ``attempts`` and ``problems`` (Parquet folders) to
    (default: a new temporary folder, removed when the audit fails, and otherwise by the caller with the report
    that reads it, or at once on refusal: ``temporary``); the units and attempts handed back are polars scans of
    them, the problems the first :data:`FIRST_ROWS` of each kind, with every kind's count. A refusing problem
    stops the step before the tables are written (``summary`` None): the caller refuses the batch.

    Raises
    ------
    AuditRefused
        When a column is unexpected or missing (:func:`~evalframe.engines.spark.session.ledger_shape`).
    ValueError
        For results that are neither a Spark DataFrame nor paths or a table name, and for a ``tables`` path
        holding glob characters (:func:`~evalframe.engines.spark.tables.check_tables_path`), before Spark starts.
    """
    check_tables_path(tables)
    ledger = open_ledger(results, spark_remote)
    where = Tables.make(tables)
    frames = SparkFrames(ledger.spark)
    try:
        shape = ledger_shape(ledger.frame, plan, options)
        work = row_work(frames, ledger.frame, plan, shape, options)
        missing = missing_cases(frames, work.missing, plan)
        first, counts, refused = _problems(ledger.spark, work, missing, plan, options, where)
        if first.filter(pl.col(REFUSING)).height:
            return SparkAudit(
                first, counts, ledger.source, shape, 0, [], where.root, temporary=tables is None, checks_refused=refused
            )
        write_tables(ledger.spark, work, plan, where)
        summary, slices, case_slices = _summaries(ledger.spark, plan, options, where, missing)
        rows, run_ids = ledger_facts(work.marked)
    except BaseException:
        if tables is None:  # a failed audit's temporary tables: no report will read them
            shutil.rmtree(where.root, ignore_errors=True)
        raise
    finally:
        frames.release()
    return SparkAudit(
        first,
        counts,
        ledger.source,
        shape,
        rows,
        run_ids,
        where.root,
        temporary=tables is None,
        summary=summary,
        slices=slices,
        case_slices=case_slices,
        units=units_schema(pl.scan_parquet(where.path("units") + "/*.parquet"), plan),
        attempts=units_schema(pl.scan_parquet(where.path("attempts") + "/*.parquet"), plan),
    )


def _problems(
    spark: Any, work: RowWork, missing: pl.DataFrame, plan: Plan, o: Options, where: Tables
) -> tuple[pl.DataFrame, dict[str, int], bool]:
    """Write every problem once (``problems``, Parquet) and read back the first rows of each kind and the counts.

    ``missing`` gives the ``missing_unit`` problems (one per candidate with missing units). The third value
    says whether a check refused (a refusing problem besides the retry flags).

    As on polars, a batch refused by its checks selects no attempt, so has no retry flags: they are left out.
    """
    everything = where.path("problems-all")
    gone = _missing_problems(spark, missing, plan.source, refusing=o.missing == "refuse")
    write(_union([*work.problems, gone]), everything)
    found = nw.from_native(spark.read.parquet(everything))
    first, counts = _first_rows(found)
    is_flag = pl.col(KIND).is_in(list(RETRY_FLAGS))
    refused = bool(first.filter(pl.col(REFUSING) & ~is_flag).height)
    if refused:
        write(found.filter(~nw.col(KIND).is_in(list(RETRY_FLAGS))), where.path("problems"))
        first, counts = first.filter(~is_flag), {k: n for k, n in counts.items() if k not in RETRY_FLAGS}
    elif where.local:
        rename(Path(everything.removeprefix("file://")), Path(where.path("problems").removeprefix("file://")))
    else:
        write(found, where.path("problems"))
    return first, counts, refused


def _summaries(
    spark: Any, plan: Plan, o: Options, where: Tables, missing: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None]:
    """The summary, slice and case-slice tables (None without slices), from counts of the units Spark wrote.

    The driver receives units per candidate and outcome, the case patterns per candidate
    (:func:`evalframe.engines.core.case_patterns`: how many cases have each set of per-case sums) and, per
    slice column, the same per candidate and slice value with their outcome counts and missing units; never
    one row per case. ``missing`` holds each candidate's missing cases (see
    :func:`~evalframe.engines.driver.missing_cases`). The missingness test over the case-slice table is the
    audit's, as for every runner.
    """
    units = nw.from_native(spark.read.parquet(where.path("units")))
    outcome_counts = core.outcome_counts(units).collect("polars").to_native()
    per_case = core.case_sums(units, outcomes=bool(o.slices))
    # Under ``every`` the counted rows are observations: planned counts the planned units themselves (SPEC §4).
    planned = planned_by(plan, [CANDIDATE]) if o.retry == "every" else None
    summary = summary_table(outcome_counts, _patterns(core.case_patterns(per_case), []), planned, o, missing)
    if not o.slices:
        return summary, None, None
    labels = binned(plan.cases.select(CASE_ID, *o.slices), o.slices, o.bins)
    labelled = per_case.join(nw.from_native(_labels_frame(spark, labels)), on=CASE_ID, how="left")
    by_slice = {name: _patterns(core.case_patterns(labelled, by=[name]), [name]) for name in o.slices}
    slice_table, case_table = slice_tables(by_slice, labels, plan, o)
    return summary, slice_table, case_table


def _labels_frame(spark: Any, labels: pl.DataFrame) -> Any:
    """Each case's slice labels (text, null without a value) as a Spark DataFrame."""
    schema = ", ".join(f"`{c}` string" for c in labels.columns)
    return spark.createDataFrame(labels.rows(), schema=schema)


def _missing_problems(spark: Any, missing: pl.DataFrame, source: str, *, refusing: bool) -> Lazy:
    """One ``missing_unit`` problem per candidate with missing units, worded as on polars."""
    rows = missing_problems(missing, source, refusing=refusing).select(core.PROBLEM_COLUMNS)
    schema = ", ".join(
        f"{c} {'boolean' if c == REFUSING else 'bigint' if c in ('line', 'trial', 'attempt') else 'string'}"
        for c in core.PROBLEM_COLUMNS
    )
    made: Lazy = nw.from_native(spark.createDataFrame(rows.rows(), schema=schema))
    return made


def _union(frames: Sequence[Lazy]) -> Lazy:
    """One problems frame of several (every part has :data:`evalframe.engines.core.PROBLEM_COLUMNS`)."""
    return nw.concat(list(frames), how="vertical")
