"""Routing a ledger of many tasks: one pass against a filter per task (issue 40), ratios in one run.

A MMLU-like batch: 57 tasks (subjects) of ``--cases`` questions each, ``--candidates`` models, one row per
(task, case, candidate) with its ``task`` column, written as a Parquet lake (one file per candidate). Each round
times, in a fresh child process, what the audit of several tasks does before any check: split the rows by task
and read each task's rows, under ``route(mode="one_pass")`` (read once, ``partition_by``) and under
``route(mode="filters")`` (a lazy filter per task, what route did before: one read of the lake per task); also
the whole ``ef.audit`` of the plan and lake (which routes one pass). Wall and CPU time (user + system) and peak
RSS per child; rounds alternate the order. Data seeded (``--seed``).

    python benchmarks/bench_tasks.py --tasks 57 --cases 250 --candidates 20 --rounds 5 --work /tmp/bt
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make(work: Path, tasks: int, cases: int, candidates: int, seed: int) -> None:
    import numpy as np
    import polars as pl

    if (work / "plan.parquet").exists():
        return
    rng = np.random.default_rng(seed)
    work.mkdir(parents=True, exist_ok=True)
    names = [f"subject_{t:02d}" for t in range(tasks)]
    plan = pl.DataFrame(
        {"task": [n for n in names for _ in range(cases)], "case_id": [str(c) for _ in names for c in range(cases)]}
    )
    plan.write_parquet(work / "plan.parquet")
    lake = work / "lake"
    lake.mkdir()
    for c in range(candidates):
        order = rng.permutation(plan.height)
        rows = plan[order].with_columns(
            pl.lit(f"model_{c:02d}").alias("candidate"),
            pl.Series("passed", rng.integers(0, 2, plan.height), dtype=pl.Int64),
        )
        rows.write_parquet(lake / f"candidate_{c:02d}.parquet")


def child(work: Path, what: str, candidates: int) -> None:
    """One timed run in this process; prints a JSON line."""
    sys.path.insert(0, str(ROOT))
    import polars as pl

    import evalframe as ef
    from evalframe.audit.tasks import route
    from evalframe.load import load

    plan = ef.Plan.from_frame(
        pl.read_parquet(work / "plan.parquet"), candidates=[f"model_{c:02d}" for c in range(candidates)]
    )
    start, cpu = time.perf_counter(), time.process_time()
    if what == "audit":
        report = ef.audit(plan, str(work / "lake"))
        rows = int(report.summary.get_column("scored").sum())
    else:
        task_plans = {t: plan.for_task(t) for t in plan.tasks}
        routed = route(plan, task_plans, load(str(work / "lake")), mode=what)  # type: ignore[arg-type]
        rows = sum(r.frame.collect().height for _, _, r in routed.tasks)  # every column, as the audit reads them
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"what": what, "wall": wall, "cpu": cpu, "rss": peak, "rows": rows}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=57)
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=4040)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_tasks"))
    parser.add_argument("--child", choices=["one_pass", "filters", "audit"])
    args = parser.parse_args()
    if args.child:
        child(args.work, args.child, args.candidates)
        return
    make(args.work, args.tasks, args.cases, args.candidates, args.seed)
    kinds = ["one_pass", "filters", "audit"]
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    for i in range(args.rounds):
        for what in kinds[i % 3 :] + kinds[: i % 3]:
            cmd = [sys.executable, __file__, "--child", what, "--work", str(args.work)]
            cmd += ["--candidates", str(args.candidates)]
            out = subprocess.run(
                cmd, check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
            )
            runs[what].append(json.loads(out.stdout.strip().splitlines()[-1]))
    expected = args.tasks * args.cases * args.candidates
    assert all(r["rows"] == expected for rs in runs.values() for r in rs), "every run must read every row"
    shape = f"{args.tasks} tasks × {args.cases} cases × {args.candidates} candidates"
    print(f"{shape} = {expected} rows, {args.rounds} rounds")
    med = {k: {m: statistics.median(r[m] for r in rs) for m in ("wall", "cpu", "rss")} for k, rs in runs.items()}
    for k in kinds:
        walls = ", ".join(f"{r['wall']:.2f}" for r in runs[k])
        m = med[k]
        print(f"{k:<9} wall {walls} (median {m['wall']:.2f} s)  cpu {m['cpu']:.2f} s  rss {m['rss'] / 2**20:.0f} MiB")
    wall = med["filters"]["wall"] / med["one_pass"]["wall"]
    cpu = med["filters"]["cpu"] / med["one_pass"]["cpu"]
    print(f"filters ÷ one_pass: wall {wall:.1f}×, cpu {cpu:.1f}×")


if __name__ == "__main__":
    main()
