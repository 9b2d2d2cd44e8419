"""What the Spark test modules share: the engine-against-polars comparison of one batch."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe.validate import FILE_PROBLEMS
from tests.conftest import FIXTURES, ROOT

GEN = ROOT.parent / "shared" / "tools" / "gen_ledger.py"

#: The Java major version Spark needs (PySpark 4 runs on Java 17 or 21).
JAVA: Final = 17


def java_major(environ: Mapping[str, str] | None = None) -> int | None:
    """The major version of the ``java`` Spark would start (``$JAVA_HOME/bin/java``, else on PATH); None without one."""
    environ = os.environ if environ is None else environ
    home = environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java", path=environ.get("PATH", ""))
    if java is None or not Path(java).exists():
        return None
    shown = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    found = re.search(r'version "(\d+)(?:\.(\d+))?', shown)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def spark_missing(environ: Mapping[str, str] | None = None) -> str | None:
    """Why the Spark tests cannot run here (the skip reason), or None when they can."""
    if importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("narwhals") is None:
        return "needs the spark extra: pip install '.[spark]'"
    major = java_major(environ)
    if major is None:
        where = f"no java under JAVA_HOME or on PATH (e.g. apt-get install openjdk-{JAVA}-jdk)"
        return f"needs Java {JAVA} for Spark: {where}"
    if major < JAVA:
        return f"needs Java {JAVA} for Spark: the java found is Java {major}"
    return None


#: Why the Spark tests are skipped here; None when they run.
SPARK_MISSING: Final = spark_missing()
needs_spark = pytest.mark.skipif(SPARK_MISSING is not None, reason=SPARK_MISSING or "")


def frame_of(path: Path) -> pl.DataFrame:
    """A ledger file as polars reads it (strict CSV: every field text; line and source included)."""
    return ef.load(path).frame.collect()


def as_spark(spark: Any, frame: pl.DataFrame, folder: Path) -> Any:
    """The same rows as a Spark DataFrame, through Parquet (as a lake gives them)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"ledger-{len(list(folder.iterdir()))}.parquet"
    frame.write_parquet(path)
    return spark.read.parquet(str(path))


def outcome(plan: ef.Plan, ledger: Any, **options: Any) -> tuple[str, ef.AuditReport | pl.DataFrame]:
    """("report", report) or ("refused", problems)."""
    try:
        return "report", ef.audit(plan, ledger, **options)
    except ef.AuditRefused as refused:
        return "refused", refused.problems


def assert_same_audit(
    spark: Any, plan: ef.Plan, frame: pl.DataFrame, folder: Path, **options: Any
) -> tuple[str, ef.AuditReport | pl.DataFrame]:
    """Audit ``frame`` with polars and the same rows on Spark; assert identical tables (slices too)."""
    kind, polars_side = outcome(plan, frame, **options)
    tables = folder / f"tables-{len(list(folder.glob('tables-*')))}"
    spark_kind, spark_side = outcome(plan, as_spark(spark, frame, folder), spark_tables=tables, **options)
    assert spark_kind == kind
    if isinstance(polars_side, pl.DataFrame):
        assert isinstance(spark_side, pl.DataFrame)
        assert_frame_equal(spark_side, polars_side)
        written = sorted((tables / "problems").glob("*.parquet"))
        if polars_side["kind"].is_in(list(FILE_PROBLEMS)).all():  # refused from its columns: before Spark runs
            assert written == []
            return kind, polars_side
        assert_frame_equal(ef.problems.concat_problems([pl.read_parquet(written)]), polars_side)
        return kind, polars_side
    assert isinstance(spark_side, ef.AuditReport)
    assert_frame_equal(spark_side.summary, polars_side.summary)
    assert_frame_equal(spark_side.slices, polars_side.slices)
    assert_frame_equal(spark_side.missingness, polars_side.missingness)
    assert_frame_equal(spark_side.problems, polars_side.problems)
    assert_frame_equal(spark_side.problem_counts, polars_side.problem_counts)
    assert_frame_equal(spark_side.units.lazy().collect(), polars_side.units.lazy().collect())
    attempts = polars_side.attempts.lazy().collect()
    assert_frame_equal(spark_side.attempts.lazy().collect().select(attempts.columns), attempts)
    return kind, polars_side


def generated(folder: Path, rows: int, seed: int, **knobs: float) -> tuple[ef.Plan, pl.DataFrame, dict[str, Any]]:
    """A seeded ledger of ../shared/tools/gen_ledger.py, its plan and its manifest."""
    import json

    args = [sys.executable, str(GEN), str(folder), "--rows", str(rows), "--seed", str(seed), "--layout", "single"]
    args += [f"--{k}={v}" for k, v in knobs.items()]
    subprocess.run(args, check=True, capture_output=True)
    plan = ef.Plan.from_file(folder / "plan.parquet")
    ledger = pl.read_parquet(folder / "results.parquet")
    ledger = ledger.with_row_index("line", offset=1).with_columns(
        pl.col("line").cast(pl.Int64), pl.lit("results.parquet").alias("source")
    )
    return plan, ledger, json.loads((folder / "manifest.json").read_text())


ORBIT = FIXTURES / "orbit_desk"
LEDGER = FIXTURES / "ledger"
REVERSED = FIXTURES / "reversed_answers"
