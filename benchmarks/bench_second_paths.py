"""Second code paths re-measured: evalframe at several git revisions, end to end, in one run.

Each revision is extracted read-only (``git archive``, byte-compiled) into a
temporary folder and run in fresh child processes that load the plan
(``ef.Plan.from_file``) and audit the ledger (``ef.audit``), as the CLI does.
Rounds alternate the revisions (the order rotates every round), so slow
phases of a shared machine fall on all of them alike; the report gives the
median wall time, CPU time (user + system of the child, all threads) and the
plan-load time, each as a ratio to the first revision, plus the machine's
load average before and after. Every revision must give the same plan hash
and the same summary, or the script exits 1.

    python benchmarks/bench_second_paths.py --data /tmp/d10m --rows 10_000_000 \\
        --rev base=70b61c2 --rev split=715ca88 --rev no_case_index=86b49d2 --rounds 5

``--data`` is made with ``../shared/tools/gen_ledger.py DATA --rows N
--unknown 0 --dups 0`` when it does not exist (a clean batch: the audit
completes).
"""

from __future__ import annotations

import argparse
import hashlib
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

REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO.parent / "shared" / "tools" / "gen_ledger.py"

#: Run in the child: load and audit, print the phase times and what the outputs hash to.
CHILD = """
import hashlib, json, sys, time
t0 = time.perf_counter()
import evalframe as ef
t1 = time.perf_counter()
plan = ef.Plan.from_file(sys.argv[1])
t2 = time.perf_counter()
partition = None if sys.argv[3] == "whole" else sys.argv[3]
report = ef.audit(plan, sys.argv[2], partition_by=partition)
summary = report.summary
t3 = time.perf_counter()
columns = {c: hashlib.sha256(summary.select(c).write_ndjson().encode()).hexdigest() for c in summary.columns}
print(json.dumps({"evalframe": ef.__file__, "import_s": t1 - t0, "plan_s": t2 - t1, "audit_s": t3 - t2,
                  "plan_hash": plan.plan_hash, "summary": columns}))
"""


def extract(rev: str | None, into: Path) -> Path:
    """The ``evalframe`` package as committed at ``rev`` (None: the working tree's), byte-compiled, under ``into``.

    Every measured package is compiled alike: with ``PYTHONDONTWRITEBYTECODE`` set, a package imported
    from the repository would be compiled again by every child (about 0.06 s of its start).
    """
    into.mkdir(parents=True)
    if rev is None:
        shutil.copytree(REPO / "evalframe", into / "evalframe", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "evalframe"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into)], check=True)
    return into


def run_child(code: Path, plan: Path, results: Path, mode: str) -> dict[str, Any]:
    """One child process: its findings, wall time and CPU time."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    start = time.perf_counter()
    # Run inside the extracted tree: ``python -c`` puts the working directory before PYTHONPATH on sys.path,
    # so a child started in the repository would import the working tree whatever the revision.
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(plan.resolve()), str(results.resolve()), mode],
        env=env,
        cwd=code,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        msg = f"child failed ({status}): {out}"
        raise RuntimeError(msg)
    found: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    if not Path(found["evalframe"]).resolve().is_relative_to(code.resolve()):
        msg = f"the child imported evalframe from {found['evalframe']}, not from {code}"
        raise RuntimeError(msg)
    found.update(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, rss_gib=usage.ru_maxrss / 2**20)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--rows", default="10_000_000", help="ledger rows when --data must be generated")
    parser.add_argument("--rev", action="append", required=True, help="NAME=REV; the first is the baseline")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--mode", action="append", help="LAYOUT:PARTITION, layout file|hive, partition whole|candidate (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="write every run here")
    args = parser.parse_args()
    modes = args.mode or ["file:whole", "hive:candidate"]
    if not (args.data / "manifest.json").exists():
        gen = [sys.executable, str(GENERATOR), str(args.data), "--rows", args.rows, "--unknown", "0", "--dups", "0"]
        subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
    revs = [tuple(r.split("=", 1)) for r in args.rev]
    runs: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ef-second-paths-") as tmp:
        code = {name: extract(rev, Path(tmp) / name) for name, rev in revs}
        for mode in modes:
            layout, partition = mode.split(":")
            suffix = "_hive" if layout == "hive" else ".parquet"
            plan, results = args.data / f"plan{suffix}", args.data / f"results{suffix}"
            for r in range(args.rounds):
                order = revs[r % len(revs) :] + revs[: r % len(revs)]
                for name, rev in order:
                    found = run_child(code[name], plan, results, partition)
                    found.update(rev=name, commit=rev, mode=mode, round=r, loadavg=os.getloadavg()[0])
                    runs.append(found)
                    print(
                        f"{mode:16} round {r} {name:16} wall {found['wall_s']:6.2f} s  cpu {found['cpu_s']:6.2f} s  "
                        f"plan {found['plan_s']:5.2f} s  load {found['loadavg']:.2f}",
                        flush=True,
                    )
    load_after = os.getloadavg()
    failed = report(runs, revs, modes)
    print(
        f"\nload average before {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}, "
        f"after {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f}; {os.cpu_count()} cores"
    )
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 1 if failed else 0


def report(runs: list[dict[str, Any]], revs: list[tuple[str, ...]], modes: list[str]) -> bool:
    """Print the median of each measure per (mode, revision) and its ratio to the first revision."""
    failed = False
    print("\n| mode | revision | wall s | wall / base | CPU s | CPU / base | plan load s | plan / base | RSS GiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in modes:
        of_mode = [r for r in runs if r["mode"] == mode]
        shared = set.intersection(*(set(r["summary"]) for r in of_mode))
        outputs = {
            (r["plan_hash"], tuple(sorted((c, h) for c, h in r["summary"].items() if c in shared))) for r in of_mode
        }
        if len(outputs) != 1:
            print(f"{mode}: the revisions disagree on the plan hash or a shared summary column")
            failed = True
        only_some = sorted(set.union(*(set(r["summary"]) for r in of_mode)) - shared)
        if only_some:
            print(f"{mode}: summary columns not in every revision (not compared): {', '.join(only_some)}")
        measures = ("wall_s", "cpu_s", "plan_s", "rss_gib")
        medians = {
            name: {k: statistics.median(r[k] for r in of_mode if r["rev"] == name) for k in measures}
            for name, _ in revs
        }
        base = medians[revs[0][0]]
        for name, _ in revs:
            m = medians[name]
            print(
                f"| {mode} | {name} | {m['wall_s']:.2f} | {m['wall_s'] / base['wall_s']:.3f} | {m['cpu_s']:.2f} | "
                f"{m['cpu_s'] / base['cpu_s']:.3f} | {m['plan_s']:.2f} | {m['plan_s'] / base['plan_s']:.3f} | "
                f"{m['rss_gib']:.2f} |"
            )
    digest = hashlib.sha256(
        json.dumps(sorted({json.dumps(r["summary"], sort_keys=True) for r in runs})).encode()
    ).hexdigest()[:12]
    print(f"\nsummaries: {digest}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
