"""Spark local mode against polars: the same audit of one generated ledger, at several sizes, in one run.

    python benchmarks/bench_spark.py --rows 1e6 10e6 [--out /tmp/bench-spark]

For each size, ../shared/tools/gen_ledger.py writes a clean ledger (no unknown rows or duplicate keys, so the
audit completes; 3% missing, 5% retried); the plan is its cases × candidates × trials. Timed separately:
the JVM start (the first ``spark_session()``, local[2] on 127.0.0.1), the Spark audit (``ef.audit(...,
engine="spark")``: checks, retry selection, the three Parquet tables written, the summary finished on the
driver) and the polars audit of the same Parquet file (``partition_by="auto"``, what the CLI does). The
summaries are asserted equal. The machine's load average is recorded with the figures (it is shared).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from polars.testing import assert_frame_equal

import evalframe as ef

GEN = Path(__file__).resolve().parents[2] / "shared" / "tools" / "gen_ledger.py"


def plan_of(folder: Path) -> ef.Plan:
    """The generator's plan as the cross product it is (Spark builds it from the cases, not a units table)."""
    listed = ef.Plan.from_file(folder / "plan.parquet")
    plan = dataclasses.replace(listed, unit_codes=None)
    assert plan.n_units == listed.n_units, "the generated plan is a full cross product"
    return plan


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", nargs="+", type=lambda s: int(float(s)), default=[1_000_000, 10_000_000])
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="bench-spark-")))
    args = ap.parse_args()
    from evalframe.engines.spark import spark_session

    figures: dict[str, object] = {"load_before": os.getloadavg(), "cpus": os.cpu_count()}
    t = time.perf_counter()
    spark = spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    figures["jvm_start_s"] = round(time.perf_counter() - t, 2)
    runs = []
    for rows in args.rows:
        folder = args.out / f"g{rows}"
        if not (folder / "results.parquet").exists():
            subprocess.run(
                [sys.executable, str(GEN), str(folder), "--rows", str(rows), "--layout", "single", "--unknown", "0",
                 "--dups", "0"],
                check=True,
                capture_output=True,
            )  # fmt: skip
        plan = plan_of(folder)
        results = str(folder / "results.parquet")
        load = os.getloadavg()
        t = time.perf_counter()
        on_polars = ef.audit(plan, results, partition_by="auto")
        polars_s = time.perf_counter() - t
        t = time.perf_counter()
        on_spark = ef.audit(plan, results, engine="spark", spark_tables=str(folder / "spark-tables"))
        spark_s = time.perf_counter() - t
        assert_frame_equal(on_spark.summary, on_polars.summary)
        run = {
            "rows": rows,
            "ledger_rows": on_spark.meta["ledger_rows"],
            "planned_units": plan.n_units,
            "polars_s": round(polars_s, 2),
            "spark_s": round(spark_s, 2),
            "ratio": round(spark_s / polars_s, 1),
            "load_1min": round(load[0], 2),
        }
        runs.append(run)
        print(json.dumps(run), flush=True)
    figures["runs"] = runs
    figures["load_after"] = os.getloadavg()
    print(json.dumps(figures, indent=2))
    spark.stop()


if __name__ == "__main__":
    main()
