"""Peak memory of hostile and huge inputs (issue 19), each run in its own child process.

Cases and the targets of issue 19:

* ``a`` zip-bomb-like ``.eval`` archives (a few MB compressed, GBs decompressed): refused under 1 GiB.
  ``a1`` twelve 200 MiB sample members (2.4 GB in all, over ``--max-archive-bytes``: refused from the
  recorded sizes, exit 2); ``a2`` one 3 GiB member, ``--max-archive-bytes`` raised to 8 GiB (over
  ``--max-member-bytes``: refused from its recorded size, an ``unreadable_file`` note, exit 2);
  ``a3`` ``a1`` with ``--max-archive-bytes`` raised to 8 GiB, so every member is decompressed (bounded
  while streaming) and parsed (samples without an id: unreadable, exit 2).
* ``b`` a plan of 1M cases x 100 candidates against a header-only ledger (100M missing units): audited
  under 4 GiB, without and with ``--out``.
* ``c`` 10M duplicate keys (``gen_ledger.py --rows 1e7 --dups 1.0``, run, not copied: 5M rows each
  repeated once): refused under 3 GiB, without and with ``--out``.
* ``d`` a 1 GiB JSON Lines ledger of one line: refused (``--max-line-bytes``, exit 2) without reading it
  whole (issue 19 measured 6.25 GB).
* ``e`` a batch that is not refused but flags 3M units (1M cases x 3 candidates, every unit's one attempt
  numbered 2: 3M ``attempt_gap`` flags): audited with counts + the first rows of each kind in memory, without
  and with ``--out`` (problems.parquet holds all 3M). With ``--before DIR`` (another worktree, e.g. the
  commit before a change) the same runs are measured with that tree too, interleaved A B A B.

Peak RSS is the child's ``ru_maxrss`` from ``os.wait4``, including interpreter start-up and imports. Every
case is put beside baselines measured in the same run: ``import`` (a child that only imports evalframe's
command line) and the read floor of its input (a child that imports it and reads the same input whole with
polars, or the archive's bytes). The exit code of every run is checked against the expected one.

    python benchmarks/bench_memory.py [--cases a,b,c,d,e] [--work DIR] [--keep] [--candidates 100] [--n-cases 1e6]
                                      [--before DIR] [--rounds 2]
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
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GEN = ROOT.parent / "shared" / "tools" / "gen_ledger.py"
HEADER_FROM = (
    ROOT / "data/fixtures/real/inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/log_streaming.eval"
)
GIB = 2**30
MIB = 2**20
CLI = "from evalframe.cli import run; run()"


@dataclass(frozen=True)
class Run:
    """One child process: what it ran and what it took."""

    case: str
    label: str
    code: int
    expected: int
    seconds: float
    cpu_seconds: float
    peak_bytes: int
    target_bytes: int | None
    floor: str | None


def measure(args: list[str], *, cwd: Path, root: Path = ROOT) -> tuple[int, float, float, int, str]:
    """Run a child with ``root`` (this worktree) first on PYTHONPATH; exit code, wall s, CPU s, peak RSS, stderr."""
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    return child.returncode, time.perf_counter() - start, cpu, usage.ru_maxrss * 1024, text


def bomb(path: Path, members: int, member_bytes: int) -> Path:
    """An .eval whose header is a real log's and whose sample members are ``member_bytes`` blanks then ``{}``."""
    if path.exists():
        return path
    with zipfile.ZipFile(HEADER_FROM) as real:
        header = real.read("header.json")
    block = b" " * (16 * MIB)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("header.json", header)
        for i in range(members):
            with archive.open(f"samples/s{i}_epoch_1.json", "w", force_zip64=True) as member:
                for _ in range(member_bytes // len(block)):
                    member.write(block)
                member.write(b"{}")
    return path


def case_a(work: Path) -> list[tuple[str, list[str], int, int | None, str | None]]:
    many = bomb(work / "bomb_many.eval", 12, 200 * MIB)
    one = bomb(work / "bomb_one.eval", 1, 3 * GIB)
    sizes = {p.name: (p.stat().st_size, sum(m.file_size for m in zipfile.ZipFile(p).infolist())) for p in (many, one)}
    for name, (packed, unpacked) in sizes.items():
        print(f"{name}: {packed / MIB:.1f} MiB compressed, {unpacked / GIB:.2f} GiB decompressed", flush=True)
    out = str(work / "out_a")
    floor = ["-c", f"import evalframe.cli, pathlib; pathlib.Path({str(many)!r}).read_bytes()"]
    return [
        ("a0", floor, 0, None, None),
        ("a1", ["-c", CLI, "import", "inspect", str(many), "--out", out], 2, GIB, "a0"),
        (
            "a2",
            ["-c", CLI, "--max-archive-bytes", str(8 * GIB), "import", "inspect", str(one), "--out", out],
            2,
            GIB,
            "a0",
        ),
        (
            "a3",
            ["-c", CLI, "--max-archive-bytes", str(8 * GIB), "import", "inspect", str(many), "--out", out],
            2,
            GIB,
            "a0",
        ),
    ]


def case_b(work: Path, n_cases: int, candidates: int) -> list[tuple[str, list[str], int, int | None, str | None]]:
    plan, results = work / "plan_b.csv", work / "header_only.csv"
    if not plan.exists():
        width = len(str(n_cases))
        plan.write_text("case_id\n" + "".join(f"case-{i:0{width}d}\n" for i in range(n_cases)))
    results.write_text("candidate,case_id,passed\n")
    names = ",".join(f"model_{i:03d}" for i in range(candidates))
    audit = ["-c", CLI, "audit", "--plan", str(plan), "--results", str(results), "--candidates", names]
    out = work / "out_b"
    shutil.rmtree(out, ignore_errors=True)
    floor = ["-c", f"import evalframe.cli, polars as pl; pl.read_csv({str(plan)!r}, infer_schema=False)"]
    return [
        ("b0", floor, 0, None, None),
        ("b1", [*audit, "--format", "json"], 0, 4 * GIB, "b0"),
        ("b2", [*audit, "--format", "json", "--out", str(out)], 0, 4 * GIB, "b0"),
    ]


def case_c(work: Path) -> list[tuple[str, list[str], int, int | None, str | None]]:
    data = work / "dups10m"
    if not (data / "manifest.json").exists():
        gen = ["--rows", "10_000_000", "--dups", "1.0", "--missing", "0", "--unknown", "0", "--retries", "0"]
        subprocess.run([sys.executable, str(GEN), str(data), *gen, "--layout", "single"], check=True)
    truth = json.loads((data / "manifest.json").read_text())["truth"]
    print(f"dups10m: {truth['ledger_rows']:,} rows, {truth['duplicate_rows']:,} repeated", flush=True)
    plan, results = data / "plan.parquet", data / "results.parquet"
    audit = ["-c", CLI, "audit", "--plan", str(plan), "--results", str(results)]
    out = work / "out_c"
    shutil.rmtree(out, ignore_errors=True)
    read = f"import evalframe.cli, polars as pl; pl.read_parquet({str(plan)!r}); pl.read_parquet({str(results)!r})"
    return [
        ("c0", ["-c", read], 0, None, None),
        ("c1", audit, 1, 3 * GIB, "c0"),
        ("c2", [*audit, "--out", str(out)], 1, 3 * GIB, "c0"),
    ]


def case_d(work: Path) -> list[tuple[str, list[str], int, int | None, str | None]]:
    results, plan = work / "one_line.jsonl", work / "plan_d.csv"
    if not results.exists() or results.stat().st_size < GIB:
        with results.open("wb") as file:
            file.write(b'{"case_id": "q1", "passed": 1, "note": "')
            block = b"y" * (16 * MIB)
            for _ in range(GIB // len(block)):
                file.write(block)
            file.write(b'"}\n')
    plan.write_text("case_id\nq1\n")
    floor = ["-c", f"import evalframe.cli, pathlib; pathlib.Path({str(results)!r}).read_bytes()"]
    audit = ["-c", CLI, "audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"]
    return [("d0", floor, 0, None, None), ("d1", audit, 2, GIB, "d0")]


def case_e(work: Path) -> list[tuple[str, list[str], int, int | None, str | None]]:
    plan, results = work / "plan_e.parquet", work / "gaps_e.parquet"
    names = [f"model_{i}" for i in range(3)]
    if not results.exists():
        import polars as pl

        cases = pl.DataFrame({"case_id": [f"case-{i:07d}" for i in range(1_000_000)]})
        cases.write_parquet(plan)
        rows = cases.join(pl.DataFrame({"candidate": names}), how="cross")
        rows.with_columns(attempt=pl.lit(2, pl.Int64), passed=pl.lit(1, pl.Int64)).write_parquet(results)
    audit = ["-c", CLI, "audit", "--plan", str(plan), "--results", str(results), "--candidates", ",".join(names)]
    out = work / "out_e"
    shutil.rmtree(out, ignore_errors=True)
    read = f"import evalframe.cli, polars as pl; pl.read_parquet({str(plan)!r}); pl.read_parquet({str(results)!r})"
    return [
        ("e0", ["-c", read], 0, None, None),
        ("e1", [*audit, "--format", "json"], 0, None, "e0"),
        ("e2", [*audit, "--format", "json", "--out", str(out)], 0, None, "e0"),
    ]


LABELS = {
    "import": "python -c 'import evalframe.cli' (baseline)",
    "a0": "read floor: the 12-member bomb's bytes",
    "a1": "a1 bomb, 12 x 200 MiB members (2.4 GB): --max-archive-bytes refuses from recorded sizes",
    "a2": "a2 bomb, one 3 GiB member: --max-member-bytes refuses from its recorded size",
    "a3": "a3 a1 with --max-archive-bytes 8 GiB: every member decompressed (bounded) and parsed",
    "b0": "read floor: the plan CSV",
    "b1": "b1 audit, header-only ledger",
    "b2": "b2 audit, header-only ledger, --out",
    "c0": "read floor: plan + ledger Parquet",
    "c1": "c1 audit refused",
    "c2": "c2 audit refused, --out (problems.parquet holds every problem)",
    "d0": "read floor: the 1 GiB line's bytes",
    "d1": "d1 audit of a 1 GiB single-line JSON Lines ledger: --max-line-bytes refuses",
    "e0": "read floor: plan + 3M-row ledger Parquet",
    "e1": "e1 audit, 3M attempt_gap flags (not refused)",
    "e2": "e2 audit, 3M attempt_gap flags, --out (problems.parquet: 3M rows)",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="a,b,c,d,e")
    ap.add_argument("--work", type=Path, default=None, help="keep inputs here (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--n-cases", type=lambda s: int(float(s)), default=1_000_000)
    ap.add_argument("--json", type=Path, default=None, help="write every run here")
    ap.add_argument("--before", type=Path, default=None, help="another worktree to measure every case with too")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of every run (interleaved with --before)")
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="evalframe-bench-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    chosen = set(a.cases.split(","))
    plan: list[tuple[str, list[str], int, int | None, str | None]] = [
        ("import", ["-c", "import evalframe.cli"], 0, None, None)
    ]
    if "a" in chosen:
        plan += case_a(work)
    if "b" in chosen:
        plan += case_b(work, a.n_cases, a.candidates)
    if "c" in chosen:
        plan += case_c(work)
    if "d" in chosen:
        plan += case_d(work)
    if "e" in chosen:
        plan += case_e(work)
    trees = [("this", ROOT)] + ([("before", a.before.resolve())] if a.before else [])
    runs: dict[tuple[str, str], list[Run]] = {}
    failed = False
    try:
        for _ in range(a.rounds):
            for key, args, expected, target, floor in plan:
                baseline = floor is None  # import and read floors: measured once per round, with this tree
                for tree, root in trees[:1] if baseline else trees:  # this tree, then the one before: A B A B
                    code, seconds, cpu, peak, err = measure(args, cwd=work, root=root)
                    run = Run(key, LABELS[key], code, expected, seconds, cpu, peak, target, floor)
                    runs.setdefault((key, tree), []).append(run)
                    last = err.strip().splitlines()[-1:] if code else []
                    print(
                        f"{key} [{tree}]: exit {code} (expected {expected}), {seconds:.1f} s wall, {cpu:.1f} s CPU, "
                        f"{peak / GIB:.2f} GiB {last}",
                        flush=True,
                    )
                    if tree == "this":
                        failed |= code != expected or (target is not None and peak > target)
    finally:
        if a.work is None and not a.keep:
            shutil.rmtree(work, ignore_errors=True)

    def peak(key: str, tree: str = "this") -> int:
        return int(statistics.median(r.peak_bytes for r in runs[(key, tree)]))

    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"rounds: {a.rounds}; peak RSS and times are medians over the rounds (min-max of the peak in brackets)")
    head = "| run | tree | exit (expected) | wall s | CPU s | peak RSS GiB | target GiB | x import | x read floor |"
    print("\n" + head + (" x before |" if a.before else "") + " within |")
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if a.before else "") + "---|")
    for (key, tree), done in runs.items():
        r = done[0]
        peaks = [d.peak_bytes / GIB for d in done]
        spread = f" ({min(peaks):.2f}-{max(peaks):.2f})" if len(done) > 1 else ""
        target = r.target_bytes
        within = "" if target is None or tree != "this" else ("yes" if peak(key) <= target else "**no**")
        to_floor = "" if r.floor is None else f"{peak(key, tree) / peak(r.floor):.2f}"
        to_before = ""
        if a.before:
            paired = tree == "this" and (key, "before") in runs
            to_before = f" {peak(key) / peak(key, 'before'):.2f} |" if paired else " |"
        print(
            f"| {r.label} | {tree} | {r.code} ({r.expected}) | {statistics.median(d.seconds for d in done):.1f} | "
            f"{statistics.median(d.cpu_seconds for d in done):.1f} | {peak(key, tree) / GIB:.2f}{spread} | "
            f"{'' if target is None else f'{target / GIB:g}'} | {peak(key, tree) / peak('import'):.1f} | {to_floor} |"
            f"{to_before} {within} |"
        )
    if a.json:
        a.json.write_text(json.dumps({f"{k}/{t}": [r.__dict__ for r in v] for (k, t), v in runs.items()}, indent=2))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
