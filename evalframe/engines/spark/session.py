"""The Spark session and the ledger it reads: Parquet paths, a table or a Spark DataFrame, and its shape."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import KIND, LINE, SOURCE
from evalframe.engines.core import Lazy
from evalframe.errors import AuditRefused, InputFormatError, MissingExtra
from evalframe.load import is_spark_frame
from evalframe.plan import Plan
from evalframe.validate import FILE_PROBLEMS, validate_ledger

if TYPE_CHECKING:
    from evalframe.audit.step import Options


#: The heap of a local session's driver (``spark.driver.memory``), see :func:`spark_session`.
DRIVER_MEMORY: Final = "3g"


#: Suffixes of the ledger formats the polars engine reads and Spark's Parquet reader does not.
NOT_PARQUET: Final = frozenset({".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".eval", ".zip", ".gz"})


def spark_session(remote: str | None = None) -> Any:
    """A Spark session: Spark Connect at ``remote`` (``sc://HOST:PORT``), else ``local[2]`` bound to 127.0.0.1.

    A local session's driver (its only JVM) gets :data:`DRIVER_MEMORY` of heap when it starts here (an
    already running JVM keeps its own): with pass/fail grades the driver receives a few rows per candidate,
    but a numeric grade's mean-score interval needs each case's sum of scores, which are not whole numbers,
    so its case patterns can hold a row per case (see :func:`evalframe.funnel.case_patterns`): 8 numbers per
    candidate and case, 5M rows for 250,000 cases × 20 candidates, beyond local mode's default 1 GiB.

    Raises
    ------
    MissingExtra
        When pyspark is not installed (``pip install 'evalframe[spark]'``).
    """
    try:
        from pyspark.sql import SparkSession
    except ModuleNotFoundError as exc:
        raise MissingExtra.of("spark", exc) from None

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
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        frame = spark.read.parquet(*paths)
    except (PySparkException, Py4JJavaError) as exc:  # a missing path, a file that is no Parquet: one line
        java = getattr(exc, "java_exception", None)
        text = (str(java.getMessage()) if java is not None else str(exc)).strip() or type(exc).__name__
        raise InputFormatError(", ".join(paths), f"Spark cannot read it as Parquet: {text.splitlines()[0]}") from None
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


@dataclass(frozen=True)
class _Ledger:
    """The ledger as Spark reads it, with ``source`` and ``line``, and where it came from."""

    spark: Any
    frame: Lazy
    source: str


def _paths(results: object) -> list[str]:
    """The Parquet paths or table names ``results`` gives.

    Raises
    ------
    ValueError
        For results that are neither a path, a table name nor a sequence of them.
    """
    if isinstance(results, (str, os.PathLike)):
        return [os.fspath(results)]
    if isinstance(results, Sequence) and all(isinstance(p, (str, os.PathLike)) for p in results):
        return [os.fspath(p) for p in results]
    msg = f"engine='spark' reads a Spark DataFrame, Parquet paths or a table name, not {type(results).__name__}"
    raise ValueError(msg)


def ledger_source(results: object) -> str:
    """What ``report.meta["results_source"]`` names: ``results`` for a Spark DataFrame, else the paths or tables.

    Raises
    ------
    ValueError
        For results that are neither a Spark DataFrame nor paths or a table name.

    Examples
    --------
    >>> ledger_source(["a.parquet", "b.parquet"])
    'a.parquet, b.parquet'
    """
    return "results" if is_spark_frame(results) else ", ".join(_paths(results))


def open_ledger(results: object, spark_remote: str | None) -> _Ledger:
    """The ledger of a Spark DataFrame (its own session), or of Parquet paths or a table (a new session)."""
    source = ledger_source(results)
    if is_spark_frame(results):
        native: Any = results
        spark = native.sparkSession
    else:
        paths = _paths(results)
        for path in paths:
            if Path(path).suffix.lower() in NOT_PARQUET:  # refused before a session starts
                detail = "the Spark engine reads Parquet files, folders or globs, or a table (this: --engine polars)"
                raise InputFormatError(path, detail)
        spark = spark_session(spark_remote)
        native = read_ledger(spark, paths)
    frame = nw.from_native(native)
    names = frame.collect_schema().names()
    if SOURCE not in names:
        frame = frame.with_columns(nw.lit("results", nw.String()).alias(SOURCE))
    if LINE not in names:
        frame = frame.with_columns(nw.lit(None, nw.Int64()).alias(LINE))
    return _Ledger(spark, frame, source)


def ledger_shape(frame: Lazy, plan: Plan, o: Options) -> str:
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
