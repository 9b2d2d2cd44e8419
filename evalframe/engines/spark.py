"""The audit on Spark (PySpark or Spark Connect): the narwhals core on the cluster, statistics on the driver.

Spark runs the row work of :mod:`evalframe.engines.core` and writes the full units, attempts and problems
tables as Parquet under a folder the caller gives (SPEC §3 "Problems at scale"); the driver receives only
problem counts per kind with the first rows of each kind, units per candidate and outcome, and the
per-case sums, and finishes the summary with the polars path's own functions
(:func:`evalframe.funnel.funnel_from_outcome_counts`, :func:`evalframe.funnel.uncertainty_from_case_sums`).

pyspark is imported only here, and only when a Spark audit runs (``pip install 'evalframe[spark]'``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe._version import evalframe_version
from evalframe.attempts import RETRY_FLAGS
from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    DETAIL,
    EXEC_STATUSES,
    KIND,
    LINE,
    OUTCOMES,
    REFUSING,
    RUN_ID,
    SCORE_STATUSES,
    SOURCE,
    TRIAL,
)
from evalframe.engines import core
from evalframe.engines.core import Lazy
from evalframe.errors import AuditRefused
from evalframe.funnel import CASE_SUM_COLUMNS, funnel_from_outcome_counts, uncertainty_from_case_sums
from evalframe.load import is_spark_frame
from evalframe.plan import Plan
from evalframe.problems import concat_problems
from evalframe.reconcile import MISSING_IDS_SHOWN, missing_problems
from evalframe.report.model import AuditReport
from evalframe.validate import FILE_PROBLEMS, validate_ledger

#: The driver keeps this many problems of each kind (every count is kept; the full table is in the Parquet).
FIRST_ROWS: Final = 1000


def spark_session(remote: str | None = None) -> Any:
    """A Spark session: Spark Connect at ``remote`` (``sc://HOST:PORT``), else ``local[2]`` bound to 127.0.0.1.

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
        .getOrCreate()
    )


def read_ledger(spark: Any, source: str | Sequence[str]) -> Any:
    """A Spark DataFrame of Parquet paths (files, folders, globs) or of a table name.

    A single name without a path separator that is no existing path is a table. Each Parquet row gets its
    file name as ``source`` and its 1-based row number in that file as ``line`` when it has none.
    """
    paths = [source] if isinstance(source, str) else list(source)
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


def _empty_like(schema: nw.Schema) -> pl.DataFrame:
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


def _cache(frame: Lazy) -> Lazy:
    """The frame, cached by Spark (computed once, at its first use, for every later query that reads it)."""
    cached: Lazy = nw.from_native(frame.to_native().cache())
    return cached


def _first_rows(found: Lazy) -> tuple[pl.DataFrame, dict[str, int]]:
    """Problem counts per kind and the first :data:`FIRST_ROWS` rows of each kind (in the problems' sort order)."""
    counts = found.group_by(KIND).agg(nw.len().alias("n")).collect("polars").to_native()
    order = [SOURCE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, DETAIL]
    ranked = found.with_columns(nw.col(KIND).cum_count().over(KIND, order_by=order).alias("_rank"))
    first = ranked.filter(nw.col("_rank") <= FIRST_ROWS).drop("_rank").collect("polars").to_native()
    return concat_problems([first]), dict(counts.iter_rows())


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


def audit_on_spark(
    plan: Plan,
    results: Any,
    *,
    tables: str | os.PathLike[str] | None = None,
    spark_remote: str | None = None,
    retry: Any = "first",
    max_attempts: int | None = None,
    retry_on: Sequence[str] = ("timeout", "error"),
    strict_retries: bool = False,
    missing: str = "report",
    grade: Any = "binary",
    score_range: tuple[float, float] = (0.0, 1.0),
    pass_threshold: float | None = None,
    confidence: float = 0.95,
    extra_columns: Sequence[str] = (),
    reducer: str = "mean",
    provenance: Mapping[str, Any] | None = None,
) -> AuditReport:
    """Audit a Spark DataFrame, a Parquet path or a table against a frozen plan, on Spark.

    Called by :func:`evalframe.audit.audit` (``engine="spark"`` or a Spark DataFrame); the options mean the
    same. ``tables`` is the folder Spark writes ``units``, ``attempts`` and ``problems`` (Parquet folders) to
    (default: a new temporary folder); ``report.units`` and ``report.attempts`` are polars scans of them,
    ``report.problems`` holds the first :data:`FIRST_ROWS` problems of each kind and
    ``report.meta["problem_counts"]`` every count.

    Raises
    ------
    AuditRefused
        As :func:`evalframe.audit.audit`: ``.problems`` holds the first rows of each kind.
    ValueError
        For slices (audited on polars) and for text score or has_output columns.
    """
    root = str(tables) if tables is not None else tempfile.mkdtemp(prefix="evalframe-spark-")
    local = "://" not in root or root.startswith("file://")
    if local:
        Path(root.removeprefix("file://")).mkdir(parents=True, exist_ok=True)

    def at(name: str) -> str:
        return f"{root.rstrip('/')}/{name}"

    spark = None
    if is_spark_frame(results):
        native = results
        spark = native.sparkSession
        source = "results"
    else:
        spark = spark_session(spark_remote)
        native = read_ledger(spark, results)
        source = results if isinstance(results, str) else ", ".join(map(str, results))
    frame = nw.from_native(native)
    names = frame.collect_schema().names()
    if SOURCE not in names:
        frame = frame.with_columns(nw.lit("results", nw.String()).alias(SOURCE))
    if LINE not in names:
        frame = frame.with_columns(nw.lit(None, nw.Int64()).alias(LINE))
    options = core.Options(
        retry=retry,
        max_attempts=max_attempts,
        retry_on=tuple(retry_on),
        strict_retries=strict_retries,
        missing_refuses=missing == "refuse",
        grade=grade,
        score_range=score_range,
        pass_threshold=pass_threshold,
        extra_columns=tuple(extra_columns),
    )
    structure = validate_ledger(
        _empty_like(frame.collect_schema()),
        plan,
        grade=grade,
        score_range=score_range,
        pass_threshold=pass_threshold,
        extra_columns=extra_columns,
    )
    if structure.problems.filter(pl.col(KIND).is_in(list(FILE_PROBLEMS))).height:
        raise AuditRefused(structure.problems)
    cases_native = _cases_frame(spark, plan)
    cases = nw.from_native(cases_native)
    expected = (
        cases.select(CASE_ID, nw.col("expected").cast(nw.String()).alias("_expected"))
        if structure.shape == "answers"
        else None
    )
    only = plan.candidates[0] if len(plan.candidates) == 1 else None
    made = core.canonical(frame, structure.shape, options, expected, only)
    planned = _cache(_planned_units(spark, plan, cases))
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
    )
    marked = _cache(ident.ledger)
    selection = core.select_attempts(marked.filter(nw.col("_planned")).drop("_planned"), options)
    attempts = selection.attempts
    # One write of every problem; the first rows and counts are read back from it (no second evaluation).
    everything = at("problems-all")
    missing_rows = _missing_problems(spark, ident.missing, plan.source, refusing=options.missing_refuses)
    _write(_union([*made.problems, *ident.problems, missing_rows, *selection.flags]), everything)
    found = nw.from_native(spark.read.parquet(str(everything)))
    is_flag = nw.col(KIND).is_in(list(RETRY_FLAGS))
    checks_refused = found.filter(nw.col(REFUSING) & ~is_flag).select(nw.len()).collect("polars").to_native().item()
    if checks_refused:  # as on polars: a batch refused by its checks selects no attempt, so has no retry flags
        _write(found.filter(~is_flag), at("problems"))
    elif local:
        _rename(Path(everything.removeprefix("file://")), Path(at("problems").removeprefix("file://")))
    else:
        _write(found, at("problems"))
    found = nw.from_native(spark.read.parquet(at("problems")))
    first, counts = _first_rows(found)
    if first.filter(pl.col(REFUSING)).height:
        raise AuditRefused(first)
    units = core.unit_outcomes(planned, attempts, plan.cases.columns)
    _write(units, at("units"))
    _write(attempts, at("attempts"))
    written = nw.from_native(spark.read.parquet(at("units")))
    outcome_counts = core.outcome_counts(written).collect("polars").to_native()
    per_case = (
        core.case_sums(written)
        .collect("polars")
        .to_native()
        .with_columns(pl.col(c).cast(pl.Float64) for c in CASE_SUM_COLUMNS)
        .sort(CANDIDATE, CASE_ID)
    )
    # Under ``every`` the counted rows are observations: planned counts the planned units themselves (SPEC §4).
    units_planned = (
        planned.group_by(CANDIDATE).agg(nw.len().alias("planned")).collect("polars").to_native()
        if retry == "every"
        else None
    )
    summary = uncertainty_from_case_sums(
        funnel_from_outcome_counts(outcome_counts, planned=units_planned),
        per_case.drop("_missing"),
        confidence=confidence,
        score_range=score_range if grade == "numeric" else (0.0, 1.0),
        reducer=reducer,
    )
    missing_ids = (
        per_case.filter(pl.col("_missing") > 0)
        .group_by(CANDIDATE, maintain_order=True)
        .agg(
            pl.len().cast(pl.UInt32).alias("missing_cases"),
            pl.col(CASE_ID).head(MISSING_IDS_SHOWN).alias("missing_case_ids"),
        )
    )
    summary = summary.join(missing_ids, on=CANDIDATE, how="left").with_columns(
        pl.col("missing_cases").fill_null(0),
        pl.col("missing_case_ids").fill_null(pl.lit([], pl.List(pl.String))),
    )
    units_scan = _units_schema(pl.scan_parquet(at("units") + "/*.parquet"), plan)
    attempts_scan = _units_schema(pl.scan_parquet(at("attempts") + "/*.parquet"), plan)
    rows = marked.select(nw.len()).collect("polars").to_native().item()
    run_ids = sorted(
        attempts.select(RUN_ID).unique().drop_nulls().collect("polars").to_native().get_column(RUN_ID).to_list()
    )
    meta: dict[str, Any] = {
        "engine": "spark",
        "evalframe_version": evalframe_version(),
        "slices": [],
        "plan_source": plan.source,
        "plan_hash": plan.plan_hash,
        "n_cases": plan.cases.height,
        "candidates": list(plan.candidates),
        "trials": plan.trials,
        "planned_units": plan.n_units,
        "required_run_id": plan.run_id,
        "results_source": source,
        "ledger_shape": structure.shape,
        "ledger_rows": rows,
        "run_ids": run_ids,
        "retry": retry,
        "case_reducer": reducer,
        "max_attempts": max_attempts,
        "retry_on": list(retry_on),
        "missing": missing,
        "grade": grade,
        "score_range": list(score_range),
        "pass_threshold": pass_threshold,
        "confidence": confidence,
        "tables": root,
        "problem_counts": counts,
        **(provenance or {}),
    }
    return AuditReport(
        summary=summary,
        units=units_scan,
        attempts=attempts_scan,
        problems=first,
        slices=pl.DataFrame(),
        missingness=pl.DataFrame(),
        meta=meta,
    )


def _missing_problems(spark: Any, gone: Lazy, source: str, *, refusing: bool) -> Lazy:
    """One ``missing_unit`` problem per candidate, worded as on polars: counts and the first ids, from Spark."""
    counts = (
        gone.group_by(CANDIDATE)
        .agg(nw.len().alias("_units"), nw.col(CASE_ID).n_unique().alias("_cases"))
        .sort(CANDIDATE)
        .collect("polars")
        .to_native()
    )
    found = []
    for candidate, n_units, n_cases in counts.iter_rows():
        first = (
            gone.filter(nw.col(CANDIDATE) == candidate).select(CASE_ID).unique().sort(CASE_ID).head(MISSING_IDS_SHOWN)
        )
        ids = first.collect("polars").to_native().get_column(CASE_ID).to_list()
        found.append((candidate, int(n_units), int(n_cases), [str(i) for i in ids]))
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
