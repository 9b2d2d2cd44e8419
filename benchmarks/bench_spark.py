"""Spark local mode against polars: the same audit of one generated ledger, at several sizes, in one run.

    python benchmarks/bench_spark.py --rows 1e6 10e6 [--rounds 2] [--data /work/bench-data/spark] [--slices]

For each size, ../shared/tools/gen_ledger.py writes a clean ledger (no unknown rows or duplicate keys, so the
audit completes; 3% missing, 5% retried) under ``--data`` (kept between runs); the plan is its cases ×
candidates × trials. Timed separately: the JVM start (the first ``spark_session()``, local[2] on
127.0.0.1), then per size ``--rounds`` interleaved rounds (polars, Spark, polars, Spark, ...) of the polars
audit of the Parquet file (``partition_by="auto"``, what the CLI does) and the Spark audit of the same file
(``ef.audit(..., engine="spark")``: checks, retry selection, the three Parquet tables written, the summary
finished on the driver). Each audit reports wall seconds, CPU seconds (this process, plus the JVM's for
Spark, read from /proc) and the Spark jobs it ran; the summaries are asserted equal. A size whose Spark
audit takes longer than ``--spark-budget`` seconds gets no further rounds. The 1-minute load average is
printed with every figure (the machine is shared).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from polars.testing import assert_frame_equal

import evalframe as ef

GEN = Path(__file__).resolve().parents[2] / "shared" / "tools" / "gen_ledger.py"
TICKS = os.sysconf("SC_CLK_TCK")


def plan_of(folder: Path) -> ef.Plan:
    """The generator's plan as the cross product it is (Spark builds it from the cases, not a units table)."""
    listed = ef.Plan.from_file(folder / "plan.parquet")
    plan = dataclasses.replace(listed, unit_codes=None)
    assert plan.n_units == listed.n_units, "the generated plan is a full cross product"
    return plan


def children_cpu(pid: int) -> float:
    """CPU seconds (user + system) of every live descendant of ``pid`` (the JVM and its launcher), from /proc."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        child = int(stat.parent.name)
        parents[child] = int(fields[1])
        times[child] = (int(fields[11]) + int(fields[12])) / TICKS
    total, todo = 0.0, [pid]
    while todo:
        here = todo.pop()
        for child, parent in parents.items():
            if parent == here:
                total += times[child]
                todo.append(child)
    return total


def measured(run: Callable[[], Any], spark: Any | None = None) -> tuple[Any, dict[str, float]]:
    """``run()``'s result with its wall and CPU seconds (and Spark jobs when ``spark`` is given)."""
    group = f"bench-{time.monotonic_ns()}"
    if spark is not None:
        spark.sparkContext.setJobGroup(group, group)
    load = os.getloadavg()[0]
    jvm = children_cpu(os.getpid())
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    figures = {
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(time.process_time() - cpu + children_cpu(os.getpid()) - jvm, 2),
        "load_1min": round(load, 1),
    }
    if spark is not None:
        figures["jobs"] = len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))
    return result, figures


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", nargs="+", type=lambda s: int(float(s)), default=[1_000_000, 10_000_000])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--data", type=Path, default=Path("/work/bench-data/spark"))
    ap.add_argument("--spark-budget", type=float, default=900.0, help="no further rounds after a slower Spark audit")
    ap.add_argument("--slices", action="store_true", help="audit by case_type and input_length (q4) too")
    args = ap.parse_args()
    from evalframe.engines.spark import spark_session

    print(json.dumps({"cpus": os.cpu_count(), "load": os.getloadavg()}), flush=True)
    spark, start = measured(spark_session)
    spark.sparkContext.setLogLevel("ERROR")
    print(json.dumps({"step": "jvm start", **start}), flush=True)
    options: dict[str, Any] = {}
    if args.slices:
        options = {"slices": ["case_type", "input_length"], "bins": {"input_length": "q4"}}
    for rows in args.rows:
        folder = args.data / f"g{rows}"
        if not (folder / "results.parquet").exists():
            subprocess.run(
                [sys.executable, str(GEN), str(folder), "--rows", str(rows), "--layout", "single", "--unknown", "0",
                 "--dups", "0"],
                check=True,
                capture_output=True,
            )  # fmt: skip
        plan = plan_of(folder)
        results = str(folder / "results.parquet")
        tables = str(folder / "spark-tables")
        for round_ in range(1, args.rounds + 1):
            on_polars, pf = measured(partial(ef.audit, plan, results, partition_by="auto", **options))
            print(json.dumps({"rows": rows, "round": round_, "engine": "polars", **pf}), flush=True)
            on_spark, sf = measured(
                partial(ef.audit, plan, results, engine="spark", spark_tables=tables, **options), spark
            )
            print(json.dumps({"rows": rows, "round": round_, "engine": "spark", **sf}), flush=True)
            assert_frame_equal(on_spark.summary, on_polars.summary)
            ratio = {"wall": round(sf["wall_s"] / pf["wall_s"], 1), "cpu": round(sf["cpu_s"] / pf["cpu_s"], 1)}
            print(json.dumps({"rows": rows, "round": round_, "spark_over_polars": ratio}), flush=True)
            del on_polars, on_spark
            if sf["wall_s"] > args.spark_budget:
                break
    spark.stop()


if __name__ == "__main__":
    main()
