"""The audit on Spark (PySpark or Spark Connect): the narwhals core on the cluster, statistics on the driver.

Spark runs the row work of :mod:`evalframe.engines.core` and writes the full units, attempts and problems
tables as Parquet under a folder the caller gives (SPEC §3 "Problems at scale"); the driver receives only
problem counts per kind with the first rows of each kind, the first missing case ids per candidate, units
per candidate and outcome, and the case patterns (how many cases have each set of per-case sums: a few rows
per candidate; with slices, per candidate and slice value, with their outcome counts), never one row per
case, and finishes the summary, the slice table and the missingness tests with the polars path's own functions
(:func:`evalframe.funnel.funnel_from_outcome_counts`, :func:`evalframe.funnel.uncertainty_from_case_patterns`,
:func:`evalframe.slices.slice_rates`, :func:`evalframe.slices.cases_by_slice`,
:func:`evalframe.slices.missingness_tests`). A case's slice labels (numeric columns binned) come from the
plan, on the driver.

pyspark is imported only here, and only when a Spark audit runs (``pip install 'evalframe[spark]'``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.attempts import RETRY_FLAGS
from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    CASES,
    DATASET_VERSION,
    DETAIL,
    EXEC_STATUSES,
    KIND,
    LINE,
    MISSING,
    OBSERVATIONS,
    OUTCOMES,
    PLANNED,
    REFUSING,
    RUN_ID,
    SCORE_STATUSES,
    SCORED,
    SOURCE,
    TRIAL,
)
from evalframe.engines import core
from evalframe.engines.core import Lazy
from evalframe.errors import AuditRefused
from evalframe.funnel import CASE_SUM_COLUMNS, funnel_from_outcome_counts, uncertainty_from_case_patterns
from evalframe.load import is_spark_frame
from evalframe.natural import KEPT, natural_sorted
from evalframe.plan import Plan
from evalframe.problems import concat_problems
from evalframe.reconcile import MISSING_IDS_SHOWN, missing_problems
from evalframe.slices import (
    SLICE_VALUE,
    UNGRADED,
    bin_edges,
    binned,
    cases_by_slice,
    missingness_tests,
    selective_flag,
    slice_rates,
)
from evalframe.validate import FILE_PROBLEMS, validate_ledger

if TYPE_CHECKING:
    from evalframe.audit.step import Options

#: The heap of a local session's driver (``spark.driver.memory``), see :func:`spark_session`.
DRIVER_MEMORY: Final = "3g"
#: The driver keeps this many problems of each kind (every count is kept; the full table is in the Parquet).
FIRST_ROWS: Final = 1000


def spark_session(remote: str | None = None) -> Any:
    """A Spark session: Spark Connect at ``remote`` (``sc://HOST:PORT``), else ``local[2]`` bound to 127.0.0.1.

    A local session's driver (its only JVM) gets :data:`DRIVER_MEMORY` of heap when it starts here (an
    already running JVM keeps its own): with pass/fail grades the driver receives a few rows per candidate,
    but a numeric grade's mean-score interval needs each case's sum of scores, which are not whole numbers,
    so its case patterns can hold a row per case (see :func:`evalframe.funnel.case_patterns`): 8 numbers per
    candidate and case, 5M rows for 250,000 cases × 20 candidates, beyond local mode's default 1 GiB.

    Raises
    ------
    ImportError
        When pyspark is not installed (``pip install 'evalframe[spark]'``).
    """
    from pyspark.sql import SparkSession

    if remote:
        return SparkSession.builder.remote(remote).getOrCreate()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", os.environ.get("EVALFRAME_SPARK_PARTITIONS", "4"))
        .config("spark.driver.memory", DRIVER_MEMORY)
        .getOrCreate()
    )


def read_ledger(spark: Any, source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> Any:
    """A Spark DataFrame of Parquet paths (files, folders, globs) or of a table name.

    A single name without a path separator that is no existing path is a table. Each Parquet row gets its
    file name as ``source`` and its 1-based row number in that file as ``line`` when it has none.
    """
    paths = [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else [os.fspath(p) for p in source]
    if len(paths) == 1 and not Path(paths[0]).exists() and "/" not in paths[0] and "://" not in paths[0]:
        return spark.table(paths[0])
    frame = spark.read.parquet(*paths)
    from pyspark.sql import functions as F

    names = set(frame.columns)
    added = {}
    if SOURCE not in names:
        added[SOURCE] = F.col("_metadata.file_name")
    if LINE not in names:
        added[LINE] = (F.col("_metadata.row_index") + 1).cast("long")
    return frame.withColumns(added) if added else frame


def _empty_like(schema: Mapping[str, Any]) -> pl.DataFrame:
    """A polars frame with the ledger's column names and closest types, no rows (for the structural checks)."""

    def dtype(t: Any) -> pl.DataType:
        if t == nw.Boolean:
            return pl.Boolean()
        if t.is_integer():
            return pl.Int64()
        if t.is_float():
            return pl.Float64()
        return pl.String()

    return pl.DataFrame(schema={name: dtype(t) for name, t in schema.items()})


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


def _write(frame: Lazy, path: str) -> None:
    frame.to_native().write.mode("overwrite").parquet(path)


def _rename(old: Path, new: Path) -> None:
    """Move a local folder Spark wrote to its final name (on object storage the table is written again)."""
    if new.exists():
        shutil.rmtree(new)
    old.rename(new)


def _units_schema(units: pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    """The units (or attempts) Parquet written by Spark, with the polars units table's types and order."""
    names = units.collect_schema().names()
    casts = {
        "exec_status": pl.Enum(list(EXEC_STATUSES)),
        "score_status": pl.Enum(list(SCORE_STATUSES)),
        "outcome": pl.Enum(list(OUTCOMES)),
        RUN_ID: pl.Categorical(),
        SOURCE: pl.Categorical(),
        "attempts": pl.UInt32(),
    }
    key = [CANDIDATE, CASE_ID, TRIAL, *(["counted_attempt"] if "counted_attempt" in names else [ATTEMPT])]
    return units.with_columns(pl.col(c).cast(t) for c, t in casts.items() if c in names).sort(key, nulls_last=False)


@dataclass(frozen=True)
class SparkAudit:
    """What a Spark audit hands back: the report's tables and the facts of its meta (see :func:`audit_on_spark`).

    :func:`evalframe.audit.audit` assembles the report from them, with the same meta as on polars
    (:func:`evalframe.audit.meta.audit_meta`).
    """

    summary: pl.DataFrame
    #: Polars scans of the Parquet Spark wrote, with the polars tables' types and order.
    units: pl.LazyFrame
    attempts: pl.LazyFrame
    #: The first :data:`FIRST_ROWS` problems of each kind.
    problems: pl.DataFrame
    slices: pl.DataFrame
    missingness: pl.DataFrame
    #: What the results were read from, the ledger's shape, its rows and run ids.
    source: str
    shape: str
    rows: int
    run_ids: list[str]
    #: Where the full tables are, and every problem kind's count.
    root: str
    problem_counts: dict[str, int]


def audit_on_spark(
    plan: Plan,
    results: object,
    options: Options,
    *,
    tables: str | os.PathLike[str] | None = None,
    spark_remote: str | None = None,
    alpha: float = 0.05,
) -> SparkAudit:
    """Audit a Spark DataFrame, a Parquet path or a table against a frozen plan, on Spark.

    Called by :func:`evalframe.audit.audit` (``engine="spark"`` or a Spark DataFrame) with its checked
    options (numeric slice columns parsed and their bins resolved from the plan); they mean the same.
    ``tables`` is the folder Spark writes ``units``, ``attempts`` and ``problems`` (Parquet folders) to
    (default: a new temporary folder); the units and attempts handed back are polars scans of them, the
    problems the first :data:`FIRST_ROWS` of each kind, with every kind's count.

    Raises
    ------
    AuditRefused
        As :func:`evalframe.audit.audit`: ``.problems`` holds the first rows of each kind.
    ValueError
        For text score or has_output columns, and for results that are neither a Spark DataFrame nor paths
        or a table name.
    """
    ledger = _ledger(results, spark_remote)
    where = _Tables.make(tables)
    shape = _shape(ledger.frame, plan, options)
    cached: list[Lazy] = []
    try:
        work = _row_work(ledger.spark, ledger.frame, plan, shape, options, cached)
        missing = _missing_cases(ledger.spark, work.missing, plan)
        first, counts = _problems(ledger.spark, work, missing, plan, options, where)
        _write_tables(ledger.spark, work, plan, where)
        summaries = _summaries(ledger.spark, plan, options, where, missing, alpha)
        rows, run_ids = _ledger_facts(work.marked)
    finally:
        for frame in cached:
            frame.to_native().unpersist()
    return SparkAudit(
        units=_units_schema(pl.scan_parquet(where.path("units") + "/*.parquet"), plan),
        attempts=_units_schema(pl.scan_parquet(where.path("attempts") + "/*.parquet"), plan),
        problems=first,
        source=ledger.source,
        shape=shape,
        rows=rows,
        run_ids=run_ids,
        root=where.root,
        problem_counts=counts,
        **summaries,
    )


@dataclass(frozen=True)
class _Tables:
    """Where Spark writes the full tables: a local folder, or a URI (object storage)."""

    root: str

    @classmethod
    def make(cls, tables: str | os.PathLike[str] | None) -> _Tables:
        """The folder ``tables`` (created when local), or a new temporary folder."""
        made = cls(os.fspath(tables) if tables is not None else tempfile.mkdtemp(prefix="evalframe-spark-"))
        if made.local:
            Path(made.root.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
        return made

    @property
    def local(self) -> bool:
        return "://" not in self.root or self.root.startswith("file://")

    def path(self, name: str) -> str:
        return f"{self.root.rstrip('/')}/{name}"


@dataclass(frozen=True)
class _Ledger:
    """The ledger as Spark reads it, with ``source`` and ``line``, and where it came from."""

    spark: Any
    frame: Lazy
    source: str


def _ledger(results: object, spark_remote: str | None) -> _Ledger:
    """The ledger of a Spark DataFrame (its own session), or of Parquet paths or a table (a new session)."""
    if is_spark_frame(results):
        native: Any = results
        spark, source = native.sparkSession, "results"
    elif isinstance(results, (str, os.PathLike)) or (
        isinstance(results, Sequence) and all(isinstance(p, (str, os.PathLike)) for p in results)
    ):
        spark = spark_session(spark_remote)
        native = read_ledger(spark, results)
        source = os.fspath(results) if isinstance(results, (str, os.PathLike)) else ", ".join(map(os.fspath, results))
    else:
        msg = f"engine='spark' reads a Spark DataFrame, Parquet paths or a table name, not {type(results).__name__}"
        raise ValueError(msg)
    frame = nw.from_native(native)
    names = frame.collect_schema().names()
    if SOURCE not in names:
        frame = frame.with_columns(nw.lit("results", nw.String()).alias(SOURCE))
    if LINE not in names:
        frame = frame.with_columns(nw.lit(None, nw.Int64()).alias(LINE))
    return _Ledger(spark, frame, source)


def _shape(frame: Lazy, plan: Plan, o: Options) -> str:
    """The ledger's shape, from its columns (the structural checks of :func:`validate_ledger`).

    Raises
    ------
    AuditRefused
        When a column is unexpected or missing.
    """
    structure = validate_ledger(
        _empty_like(frame.collect_schema()),
        plan,
        grade=o.grade,
        score_range=o.score_range,
        pass_threshold=o.pass_threshold,
        extra_columns=o.extra_columns,
    )
    if structure.problems.filter(pl.col(KIND).is_in(list(FILE_PROBLEMS))).height:
        raise AuditRefused(structure.problems)
    return structure.shape


@dataclass(frozen=True)
class _RowWork:
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


def _row_work(spark: Any, frame: Lazy, plan: Plan, shape: str, o: Options, cached: list[Lazy]) -> _RowWork:
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
    return _RowWork(planned, marked, selection.attempts, problems, ident.missing)


def _problems(
    spark: Any, work: _RowWork, missing: Sequence[MissingCases], plan: Plan, o: Options, where: _Tables
) -> tuple[pl.DataFrame, dict[str, int]]:
    """Write every problem once (``problems``, Parquet) and read back the first rows of each kind and the counts.

    ``missing`` gives the ``missing_unit`` problems (one per candidate with missing units).

    As on polars, a batch refused by its checks selects no attempt, so has no retry flags: they are left out.

    Raises
    ------
    AuditRefused
        When a problem refuses: ``.problems`` holds the first rows of each kind.
    """
    everything = where.path("problems-all")
    gone = _missing_problems(spark, missing, plan.source, refusing=o.missing == "refuse")
    _write(_union([*work.problems, gone]), everything)
    found = nw.from_native(spark.read.parquet(everything))
    first, counts = _first_rows(found)
    is_flag = pl.col(KIND).is_in(list(RETRY_FLAGS))
    if first.filter(pl.col(REFUSING) & ~is_flag).height:
        _write(found.filter(~nw.col(KIND).is_in(list(RETRY_FLAGS))), where.path("problems"))
        first, counts = first.filter(~is_flag), {k: n for k, n in counts.items() if k not in RETRY_FLAGS}
    elif where.local:
        _rename(Path(everything.removeprefix("file://")), Path(where.path("problems").removeprefix("file://")))
    else:
        _write(found, where.path("problems"))
    if first.filter(pl.col(REFUSING)).height:
        raise AuditRefused(first)
    return first, counts


def _write_tables(spark: Any, work: _RowWork, plan: Plan, where: _Tables) -> None:
    """Write the attempts, then the units from the attempts written (the retry windows run once)."""
    _write(work.attempts, where.path("attempts"))
    written = nw.from_native(spark.read.parquet(where.path("attempts")))
    _write(core.unit_outcomes(work.planned, written, plan.cases.columns), where.path("units"))


def _summaries(
    spark: Any, plan: Plan, o: Options, where: _Tables, missing: Sequence[MissingCases], alpha: float
) -> dict[str, pl.DataFrame]:
    """The summary, slice and missingness tables, from counts of the units Spark wrote.

    The driver receives units per candidate and outcome, the case patterns per candidate
    (:func:`evalframe.engines.core.case_patterns`: how many cases have each set of per-case sums) and, per
    slice column, the same per candidate and slice value with their outcome counts and missing units; never
    one row per case. ``missing`` holds each candidate's missing cases (see :func:`_missing_cases`).
    """
    units = nw.from_native(spark.read.parquet(where.path("units")))
    outcome_counts = core.outcome_counts(units).collect("polars").to_native()
    per_case = core.case_sums(units, outcomes=bool(o.slices))
    patterns = _patterns(core.case_patterns(per_case), [])
    # Under ``every`` the counted rows are observations: planned counts the planned units themselves (SPEC §4).
    planned = _planned_by(plan, [CANDIDATE]) if o.retry == "every" else None
    summary = uncertainty_from_case_patterns(
        funnel_from_outcome_counts(outcome_counts, planned=planned, pass_fail=o.pass_fail),
        patterns,
        confidence=o.confidence,
        score_range=o.score_range if o.grade == "numeric" else (0.0, 1.0),
        reducer=o.reducer,
    )
    missing_ids = pl.DataFrame(
        [(m.candidate, m.cases, m.case_ids[:MISSING_IDS_SHOWN]) for m in missing],
        schema={CANDIDATE: pl.String, "missing_cases": pl.UInt32, "missing_case_ids": pl.List(pl.String)},
        orient="row",
    )
    summary = summary.join(missing_ids, on=CANDIDATE, how="left").with_columns(
        pl.col("missing_cases").fill_null(0),
        pl.col("missing_case_ids").fill_null(pl.lit([], pl.List(pl.String))),
    )
    if not o.slices:
        return {"summary": summary, "slices": pl.DataFrame(), "missingness": pl.DataFrame()}
    labels = binned(plan.cases.select(CASE_ID, *o.slices), o.slices, o.bins)
    labelled = per_case.join(nw.from_native(_labels_frame(spark, labels)), on=CASE_ID, how="left")
    by_slice = {name: _patterns(core.case_patterns(labelled, by=[name]), [name]) for name in o.slices}
    slice_table, case_table = _slice_tables(by_slice, labels, plan, o)
    tests = missingness_tests(case_table, alpha=alpha)
    return {
        "summary": summary.join(selective_flag(tests), on=CANDIDATE, how="left"),
        "slices": slice_table,
        "missingness": tests,
    }


def _patterns(counted: Lazy, by: Sequence[str]) -> pl.DataFrame:
    """Case patterns collected from Spark, typed and sorted as :func:`evalframe.funnel.case_patterns` gives them."""
    key = [CANDIDATE, *by, *CASE_SUM_COLUMNS]
    collected: pl.DataFrame = counted.collect("polars").to_native()
    return collected.with_columns(pl.col(CASE_SUM_COLUMNS).cast(pl.Float64), pl.col(CASES).cast(pl.Int64)).sort(
        key, nulls_last=True
    )


def _labels_frame(spark: Any, labels: pl.DataFrame) -> Any:
    """Each case's slice labels (text, null without a value) as a Spark DataFrame."""
    schema = ", ".join(f"`{c}` string" for c in labels.columns)
    return spark.createDataFrame(labels.rows(), schema=schema)


def _planned_by(plan: Plan, by: Sequence[str]) -> pl.DataFrame:
    """The plan's planned units counted by ``by`` (``candidate``, ``case_id``): ``planned`` (UInt32)."""
    return plan.planned_units().group_by(*by).agg(pl.len().cast(pl.UInt32).alias(PLANNED)).collect()


def _slice_tables(
    by_slice: Mapping[str, pl.DataFrame], labels: pl.DataFrame, plan: Plan, o: Options
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The slice funnel and the missingness test's case counts, from the case patterns of each slice value.

    Each case's slice labels (numeric columns binned by the audit's resolved bins) are the plan's; the
    counts per slice value are added up here, as :func:`evalframe.slices.slice_funnel` and
    :func:`evalframe.slices.case_slices` add up the units on polars.
    """
    counted = [core.OUTCOME_COUNT + name for name in OUTCOMES]
    planned = _planned_by(plan, [CANDIDATE, CASE_ID]).join(labels, on=CASE_ID) if o.retry == "every" else None
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


def _ledger_facts(marked: Lazy) -> tuple[int, list[str]]:
    """The ledger's rows and the run ids of its planned units' rows, from one aggregate."""
    by_run = marked.group_by("_planned", RUN_ID).agg(nw.len().alias("n")).collect("polars").to_native()
    run_ids = by_run.filter(pl.col("_planned") & pl.col(RUN_ID).is_not_null()).get_column(RUN_ID).to_list()
    return int(by_run.get_column("n").sum()), [str(r) for r in run_ids]


@dataclass(frozen=True)
class MissingCases:
    """One candidate's planned units with no ledger row: how many, in how many cases, the first case ids."""

    candidate: str
    units: int
    cases: int
    #: The first :data:`~evalframe.reconcile.MISSING_IDS_SHOWN` case ids, in order.
    case_ids: list[str]


def _missing_cases(spark: Any, gone: Lazy, plan: Plan) -> list[MissingCases]:
    """Each candidate's missing units counted, with its first case ids (one query; candidates without any left out).

    The missing units are counted per case, each case ranked within its candidate by the plan's shape order
    (:attr:`~evalframe.plan.Plan.case_order`, sent as a small table) and carrying its candidate's totals;
    :data:`~evalframe.natural.KEPT` times :data:`~evalframe.reconcile.MISSING_IDS_SHOWN` come back and are
    put in natural order here, as :func:`evalframe.reconcile.first_missing_cases` does on polars.
    """
    order = plan.cases.select(pl.col(CASE_ID).cast(pl.String), plan.case_order.alias("_order").cast(pl.Int64))
    orders: Lazy = nw.from_native(spark.createDataFrame(order.to_pandas(), schema=f"{CASE_ID} string, _order bigint"))
    ranked = (
        gone.group_by(CANDIDATE, CASE_ID)
        .agg(nw.len().alias("_units"))
        .join(orders, on=CASE_ID, how="left")
        .with_columns(
            nw.col("_order").cum_count().over(CANDIDATE, order_by="_order").alias("_rank"),
            nw.len().over(CANDIDATE).alias("_cases"),
            nw.col("_units").sum().over(CANDIDATE).alias("_all_units"),
        )
    )
    kept = ranked.filter(nw.col("_rank") <= KEPT * MISSING_IDS_SHOWN).collect("polars").to_native()
    return [
        MissingCases(
            str(c),
            int(rows.item(0, "_all_units")),
            int(rows.item(0, "_cases")),
            natural_sorted(rows[CASE_ID].to_list())[:MISSING_IDS_SHOWN],
        )
        for (c,), rows in kept.sort(CANDIDATE).group_by(CANDIDATE, maintain_order=True)
    ]


def _missing_problems(spark: Any, missing: Sequence[MissingCases], source: str, *, refusing: bool) -> Lazy:
    """One ``missing_unit`` problem per candidate with missing units, worded as on polars."""
    found = [(m.candidate, m.units, m.cases, m.case_ids) for m in missing]
    rows = missing_problems(found, source, refusing=refusing).select(core.PROBLEM_COLUMNS)
    schema = ", ".join(
        f"{c} {'boolean' if c == REFUSING else 'bigint' if c in ('line', 'trial', 'attempt') else 'string'}"
        for c in core.PROBLEM_COLUMNS
    )
    made: Lazy = nw.from_native(spark.createDataFrame(rows.rows(), schema=schema))
    return made


def _union(frames: Sequence[Lazy]) -> Lazy:
    """One problems frame of several (every part has :data:`evalframe.engines.core.PROBLEM_COLUMNS`)."""
    return nw.concat(list(frames), how="vertical")
