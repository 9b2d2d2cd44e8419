"""The audit as users run it: the command (start-up and report writing included) against an expert DuckDB audit.

One command, from the repository root (datasets are made once under ``--data`` and reused)::

    python benchmarks/bench_command.py --sizes 1e6,1e7 --rounds 5 --data /work/bench-data

Every run is a fresh child process; each round runs every engine once, in an order that rotates
from round to round (round-robin), so a slow spell of a shared machine falls on all of them alike.
For each size it prints the median wall time, CPU time (user + system of the child and its
threads, from ``os.wait4``) and peak RSS of each engine, with ratios to the DuckDB audit doing
the same work in the same run, and the load average before and after.

Engines (``--engines``, comma-separated; default all):

- ``floor``: polars reads every column of the plan and the ledger once (the cost of reading);
- ``audit-floor``: ``polars_floor_audit.py`` (beside this script), the least work an audit of a clean
  batch can do in polars: only what DuckDB's ``fast`` does, on integer codes, four candidates at a time;
  no pandera, intervals, slices or tables (it writes its summary, whose counts are compared);
- ``import``: ``python -c "import evalframe"`` (and ``import-polars``: ``import polars``);
- ``duckdb:fast``, ``duckdb:fast_part``: ``../shared/tools/duckdb_audit.py VARIANT PLAN RESULTS``
  (run as it is, never copied: the whole batch at once, or candidate by candidate), and
  ``duckdb:fast+out``, ``duckdb:fast_part+out`` with ``--out DIR`` (it also writes its
  problems, units, attempts and summary tables as Parquet);
- ``cli+out``: ``python -m evalframe.cli audit --plan P --results R --out DIR`` (what users run);
- ``cli``: the same without ``--out`` (the terminal table is printed to a pipe);
- ``api``: ``ef.Plan.from_file`` + ``ef.audit`` in a child that imports evalframe.

``--rev NAME=REV`` (repeatable) measures evalframe as committed at a git revision, extracted with
``git archive`` and byte-compiled, beside the working tree (``tree``, copied and byte-compiled
alike); each rev's rows are labelled ``ENGINE@NAME``. In the first round every ``--out`` run's
summary counts per candidate (planned, attempted, completed, with_output, scored, passed, missing,
exec_failed) must equal DuckDB's, or the script exits 1. CPU time is the measure on a loaded
machine; wall time is what users wait for on a quiet one.

Datasets: ``../shared/tools/gen_ledger.py DATA/d<N> --rows N --unknown 0 --dups 0`` (a clean
batch, 20 candidates, 2 trials: the audit completes), made only when ``DATA/d<N>/manifest.json``
is absent. See benchmarks/README.md and benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_second_paths import extract  # the script's own folder is first on sys.path

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO.parent / "shared" / "tools"
GENERATOR = TOOLS / "gen_ledger.py"
DUCKDB_AUDIT = TOOLS / "duckdb_audit.py"

ENGINES = (
    "floor",
    "audit-floor",
    "import-polars",
    "import",
    "duckdb:fast",
    "duckdb:fast_part",
    "duckdb:fast+out",
    "duckdb:fast_part+out",
    "cli",
    "cli+out",
    "api",
)
#: The engines run once per evalframe revision.
EVALFRAME_ENGINES = ("import", "cli", "cli+out", "api")
#: Each evalframe engine's DuckDB baseline: the same work (with or without writing the tables).
BASELINE = {
    "cli+out": ("duckdb:fast+out", "duckdb:fast_part+out"),
    "cli": ("duckdb:fast", "duckdb:fast_part"),
    "api": ("duckdb:fast", "duckdb:fast_part"),
    "audit-floor": ("duckdb:fast", "duckdb:fast_part"),
}
#: The engines whose summary counts are compared with DuckDB's in the first round.
CHECKED = ("duckdb:fast+out", "duckdb:fast_part+out", "cli+out", "audit-floor")
AUDIT_FLOOR = Path(__file__).resolve().parent / "polars_floor_audit.py"
#: The summary counts compared between evalframe's and DuckDB's output.
COUNTS = ("planned", "attempted", "completed", "with_output", "scored", "passed", "missing", "exec_failed")

FLOOR = """
import sys, polars as pl
for path in sys.argv[1:]:
    pl.read_parquet(path)
"""
API = """
import sys, evalframe as ef
report = ef.audit(ef.Plan.from_file(sys.argv[1]), sys.argv[2])
assert report.summary.height > 0
"""


def dataset(data: Path, rows: int) -> Path:
    """The clean dataset of ``rows`` ledger rows under ``data`` (made when absent)."""
    folder = data / f"d{rows}"
    if not (folder / "manifest.json").exists():
        cmd = [sys.executable, str(GENERATOR), str(folder), "--rows", str(rows), "--unknown", "0", "--dups", "0"]
        subprocess.run([*cmd, "--layout", "single"], check=True)
    return folder


def command(engine: str, folder: Path, out: Path) -> list[str]:
    """The child's command line for ``engine`` (without the revision's PYTHONPATH)."""
    plan, results = str(folder / "plan.parquet"), str(folder / "results.parquet")
    py = sys.executable
    if engine == "floor":
        return [py, "-c", FLOOR, plan, results]
    if engine == "audit-floor":
        return [py, str(AUDIT_FLOOR), plan, results, "--out", str(out)]
    if engine == "import-polars":
        return [py, "-c", "import polars"]
    if engine == "import":
        return [py, "-c", "import evalframe"]
    if engine.startswith("duckdb:"):
        variant, _, write = engine.removeprefix("duckdb:").partition("+")
        return [py, str(DUCKDB_AUDIT), variant, plan, results, *(["--out", str(out)] if write else [])]
    if engine in ("cli", "cli+out"):
        cli = [py, "-m", "evalframe.cli", "audit", "--plan", plan, "--results", results]
        return [*cli, "--out", str(out)] if engine == "cli+out" else cli
    if engine == "api":
        return [py, "-c", API, plan, results]
    raise ValueError(engine)


def run_one(cmd: list[str], code: Path | None, cwd: Path) -> dict[str, float]:
    """Run one child to its end: wall s, CPU s (user + system), peak RSS GiB.

    ``cwd`` holds no ``evalframe``: ``python -c`` and ``-m`` put the working directory before
    ``PYTHONPATH`` on ``sys.path``, so run from the repository every child would import its tree.
    """
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    start = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed ({status}): {err.decode(errors='replace')[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 2**20}


def summary_counts(out: Path) -> dict[str, tuple[int, ...]]:
    """Per candidate, the summary counts of an output folder (evalframe's or DuckDB's)."""
    import polars as pl

    frame = pl.read_parquet(out / "summary.parquet").sort("candidate")
    return {r["candidate"]: tuple(int(r[c]) for c in COUNTS) for r in frame.iter_rows(named=True)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="ledger rows, comma-separated (e.g. 1e6,1e7,5e7)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--data", type=Path, default=Path("/work/bench-data"), help="where the datasets are kept")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--rev", action="append", default=[], metavar="NAME=REV", help="also measure a git revision")
    ap.add_argument("--no-tree", action="store_true", help="measure only the --rev revisions, not the working tree")
    ap.add_argument("--json", type=Path, help="write every run here")
    a = ap.parse_args()
    engines = [e for e in a.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        ap.error(f"unknown engines: {sorted(unknown)}")
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    all_runs: list[dict[str, Any]] = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-command-") as tmp:
        codes: dict[str, Path | None] = {} if a.no_tree else {"tree": extract(None, Path(tmp) / "rev" / "tree")}
        for spec in a.rev:
            name, _, rev = spec.partition("=")
            codes[name] = extract(rev, Path(tmp) / "rev" / name)
        for name, code in codes.items():
            where = subprocess.run(
                [sys.executable, "-c", "import evalframe; print(evalframe.__file__)"],
                env={**os.environ, "PYTHONPATH": str(code)},
                cwd=tmp,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
            if not Path(where).is_relative_to(str(code)):
                raise SystemExit(f"{name}: the child imports evalframe from {where}, not {code}")
            print(f"{name}: {where}", file=sys.stderr)
        for rows in sizes:
            folder = dataset(a.data.resolve(), rows)
            runs, good = measure(folder, rows, engines, codes, a.rounds, Path(tmp))
            ok &= good
            all_runs += runs
    if a.json:
        a.json.write_text(json.dumps(all_runs, indent=1))
    return 0 if ok else 1


def measure(
    folder: Path, rows: int, engines: list[str], codes: dict[str, Path | None], rounds: int, tmp: Path
) -> tuple[list[dict[str, Any]], bool]:
    """Every round of one size; print its table. False when an output disagreed with DuckDB's."""
    jobs: list[tuple[str, str | None]] = []
    for engine in engines:
        if engine in EVALFRAME_ENGINES:
            jobs += [(engine, name) for name in codes]
        else:
            jobs.append((engine, None))
    load_before = os.getloadavg()
    runs: list[dict[str, Any]] = []
    agree = True
    for r in range(rounds):
        shift = r % len(jobs)
        for engine, name in jobs[shift:] + jobs[:shift]:
            out = tmp / "out" / f"{engine}@{name}".replace(":", "_").replace("+", "_")
            shutil.rmtree(out, ignore_errors=True)
            code = None if name is None else codes[name]
            run = run_one(command(engine, folder, out), code if engine in EVALFRAME_ENGINES else None, tmp)
            run.update(rows=rows, engine=engine if name is None else f"{engine}@{name}", round=r)
            runs.append(run)
            if r == 0 and engine in CHECKED:
                run["counts"] = summary_counts(out)
            print(
                f"  {rows:>10,} round {r} {run['engine']:28s} wall {run['wall']:7.2f} cpu {run['cpu']:7.2f}",
                file=sys.stderr,
            )
    expected = [run["counts"] for run in runs if "counts" in run and run["engine"].startswith("duckdb")]
    for run in runs:
        if "counts" in run:
            same = all(run["counts"] == e for e in expected)
            agree &= same
            run["counts"] = "same as DuckDB" if same else "DIFFERENT from DuckDB"
    print_table(rows, runs, load_before, os.getloadavg())
    return runs, agree


def print_table(rows: int, runs: list[dict[str, Any]], before: tuple[float, ...], after: tuple[float, ...]) -> None:
    """Medians per engine, with ratios to the DuckDB audit doing the same work, and the report's share."""
    med: dict[str, dict[str, float]] = {}
    for engine in dict.fromkeys(run["engine"] for run in runs):
        mine = [run for run in runs if run["engine"] == engine]
        med[engine] = {k: statistics.median(run[k] for run in mine) for k in ("wall", "cpu", "rss")}
        med[engine]["n"] = len(mine)
        med[engine]["min_wall"] = min(run["wall"] for run in mine)
        med[engine]["max_wall"] = max(run["wall"] for run in mine)
    load = "load average {:.1f} / {:.1f} / {:.1f} before, {:.1f} / {:.1f} / {:.1f} after".format(*before, *after)
    print(f"\n### {rows:,} ledger rows ({load})\n")
    print(
        "| engine | runs | wall s (median) | wall range | CPU s | peak RSS GiB "
        "| DuckDB ÷ this, wall (above 1: evalframe faster) | CPU | this ÷ floor (wall) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    floor = med.get("floor")
    for engine, m in med.items():
        bases = [(base, med[base]) for base in BASELINE.get(engine.partition("@")[0], ()) if base in med]
        vs = ", ".join(f"{b['wall'] / m['wall']:.2f}× vs {base.removeprefix('duckdb:')}" for base, b in bases)
        vs_cpu = ", ".join(f"{b['cpu'] / m['cpu']:.2f}×" for _, b in bases)
        vs_floor = f"{m['wall'] / floor['wall']:.1f}" if floor else ""
        print(
            f"| {engine} | {m['n']:.0f} | {m['wall']:.2f} | {m['min_wall']:.2f}–{m['max_wall']:.2f} | {m['cpu']:.2f} "
            f"| {m['rss']:.2f} | {vs} | {vs_cpu} | {vs_floor} |"
        )
    for engine in med:
        if engine.startswith("cli+out"):
            without = med.get(engine.replace("cli+out", "cli", 1))
            if without:
                share = (med[engine]["wall"] - without["wall"]) / med[engine]["wall"]
                cpu_share = (med[engine]["cpu"] - without["cpu"]) / med[engine]["cpu"]
                print(f"\n{engine}: writing the report: {share:.0%} of the wall time, {cpu_share:.0%} of the CPU time")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
