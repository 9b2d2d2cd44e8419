"""Time and peak memory of the command on the input shapes users have besides the generator's default (issue 25).

Shapes (each run with ``--out``, in a fresh child; medians of ``--rounds``):

* ``plan_heavy``: a plan of 1M cases x 100 candidates (100M planned units, a CSV of case ids and
  ``--candidates``) against a ledger of 10k cases x 100 candidates (1M rows, every unit passed): 99% of the
  plan is missing and is reported, unit by unit, in ``units.parquet``.
* ``problem_heavy``: ``gen_ledger.py --rows 1e7 --unknown 0.1 --dups 0.1`` (run, not copied): the batch
  is refused (exit 1, duplicate keys) with every problem in ``problems.parquet``; beside it the expert
  DuckDB audit ``duckdb_audit.py fast_part --out`` on the same files, which reports the same findings.
* ``inspect_10k``: a folder of 10,000 Inspect ``.eval`` logs (100 tasks x 100 models, one sample each), made
  from a real log of ``../shared/data/real`` by rewriting its task, model and ids; ``audit --from inspect``.

Baselines measured in the same run: ``import`` (a child that imports the command line) and, for the
Parquet shapes, the read floor (polars reads the inputs whole once). Peak RSS is the child's
``ru_maxrss`` (``os.wait4``); the issue's bound is 4 GiB for every shape.

    python benchmarks/bench_shapes.py [--shapes plan_heavy,problem_heavy,inspect_10k] [--rounds 3]
                                      [--data /work/bench-data/shapes]

Run it from a folder outside the repository (``python -c`` puts the working directory first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
GENERATOR = SHARED / "tools" / "gen_ledger.py"
DUCKDB_AUDIT = SHARED / "tools" / "duckdb_audit.py"
LOG = (
    SHARED
    / "data/real/inspect_ai/UKGovernmentBEIS-inspect_ai-PR2488/eval-set1"
    / "2025-09-12T11-41-56-04-00_popularity_HdSVrmTDEge636qZ2op64f.eval"
)
CLI = [sys.executable, "-m", "evalframe.cli"]
FLOOR = """
import sys, polars as pl
for p in sys.argv[1:]:
    pl.read_csv(p) if p.endswith(".csv") else pl.read_parquet(p)
"""
GIB = 2**30


def run(cmd: list[str], expected: int, cwd: Path) -> dict[str, float]:
    """Run one child with this tree first on PYTHONPATH: wall s, CPU s, peak RSS GiB; its exit code checked."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    if code != expected:
        raise SystemExit(f"{' '.join(cmd[:5])}: exit {code}, expected {expected}\n{text[-2000:]}")
    return {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 2**20}


def plan_heavy(data: Path, out: Path) -> dict[str, tuple[list[str], int]]:
    """1M cases x 100 candidates planned, 10k cases x 100 candidates graded."""
    folder = data / "plan_heavy"
    plan, results = folder / "plan.csv", folder / "results.parquet"
    candidates = [f"model_{i:03d}" for i in range(100)]
    if not results.exists():
        import polars as pl

        folder.mkdir(parents=True, exist_ok=True)
        cases = pl.DataFrame({"case_id": [f"case-{i:07d}" for i in range(1_000_000)]})
        cases.write_csv(plan)
        graded = cases.head(10_000).join(pl.DataFrame({"candidate": candidates}), how="cross")
        graded.with_columns(passed=pl.lit(1, pl.Int8)).write_parquet(results)
    audit = [*CLI, "audit", "--plan", str(plan), "--results", str(results), "--candidates", ",".join(candidates)]
    return {
        "evalframe --out": ([*audit, "--out", str(out)], 0),
        "floor": ([sys.executable, "-c", FLOOR, str(plan), str(results)], 0),
    }


def problem_heavy(data: Path, out: Path) -> dict[str, tuple[list[str], int]]:
    """10M rows, 10% unknown and 10% duplicate keys: refused, with every problem written."""
    folder = data / "problem_heavy"
    if not (folder / "manifest.json").exists():
        gen = [sys.executable, str(GENERATOR), str(folder), "--rows", "10000000", "--unknown", "0.1", "--dups", "0.1"]
        subprocess.run([*gen, "--layout", "single"], check=True)
    plan, results = str(folder / "plan.parquet"), str(folder / "results.parquet")
    return {
        "evalframe --out": ([*CLI, "audit", "--plan", plan, "--results", results, "--out", str(out)], 1),
        "duckdb fast_part --out": (
            [sys.executable, str(DUCKDB_AUDIT), "fast_part", plan, results, "--out", str(out)],
            0,
        ),
        "floor": ([sys.executable, "-c", FLOOR, plan, results], 0),
    }


def inspect_10k(data: Path, out: Path) -> dict[str, tuple[list[str], int]]:
    """10,000 one-sample logs: 100 tasks x 100 models."""
    folder = data / "inspect_10k"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        write_logs(folder, tasks=100, models=100)
        (folder / "done").write_text("")
    return {"evalframe --out": ([*CLI, "audit", "--from", "inspect", str(folder), "--out", str(out)], 0)}


def write_logs(folder: Path, *, tasks: int, models: int) -> None:
    """Copies of :data:`LOG`, each with its own task, model and ids (header, journal start, sample uuid)."""
    rng = random.Random(25)
    with zipfile.ZipFile(LOG) as real:
        members = {info.filename: real.read(info) for info in real.infolist()}
    for t in range(tasks):
        for m in range(models):
            ids = {k: f"{k}-{t:03d}-{m:03d}-{rng.randrange(10**9):09d}" for k in ("task_id", "eval_id", "run_id")}
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as log:
                for name, raw in members.items():
                    if name in ("header.json", "_journal/start.json"):
                        doc = json.loads(raw)
                        doc["eval"].update(task=f"task_{t:03d}", model=f"provider/model_{m:03d}", **ids)
                        raw = json.dumps(doc).encode()
                    elif name.startswith("samples/"):
                        doc = json.loads(raw)
                        doc["uuid"] = f"{ids['eval_id']}-sample"
                        raw = json.dumps(doc).encode()
                    log.writestr(name, raw)
            (folder / f"task_{t:03d}_model_{m:03d}.eval").write_bytes(buffer.getvalue())


SHAPES = {"plan_heavy": plan_heavy, "problem_heavy": problem_heavy, "inspect_10k": inspect_10k}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path("/work/bench-data/shapes"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-shapes-") as tmp:
        cwd = Path(tmp)
        for shape in a.shapes.split(","):
            jobs = SHAPES[shape](a.data.resolve(), cwd / "out")
            jobs["import"] = ([sys.executable, "-c", "import evalframe.cli"], 0)
            load = os.getloadavg()
            got: dict[str, list[dict[str, float]]] = {name: [] for name in jobs}
            names = list(jobs)
            for r in range(a.rounds):
                for name in names[r % len(names) :] + names[: r % len(names)]:
                    shutil.rmtree(cwd / "out", ignore_errors=True)
                    got[name].append(run(*jobs[name], cwd))
            print(f"\n{shape} ({a.rounds} rounds, load {load[0]:.1f} -> {os.getloadavg()[0]:.1f})")
            print(f"| {'run':24s} | wall s | CPU s | peak RSS GiB | within 4 GiB |")
            print(f"|{'-' * 26}|--------|-------|--------------|--------------|")
            for name, runs in got.items():
                wall, cpu, rss = (statistics.median(x[k] for x in runs) for k in ("wall", "cpu", "rss"))
                print(f"| {name:24s} | {wall:6.2f} | {cpu:5.2f} | {rss:12.2f} | {'yes' if rss < 4 else 'NO':12s} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
