"""Benchmark evalframe's audit against straightforward DuckDB SQL, pandas and the read-all-columns floor.

Its ``duckdb`` engine is straightforward SQL written with the repository (``engines.py``), not tuned:
an expert-written DuckDB audit is about 1.8× faster (issue 25). The command as users run it, against
that expert audit, is measured by ``bench_command.py``.

For each size N this script generates two seeded datasets with the shared
generator (``gen_ledger.py OUT --rows N --layout both``): ``defects`` (its
default unknown rows and duplicate keys, so the audit refuses) and ``clean``
(``--unknown 0 --dups 0``, so the audit completes). Every engine then runs in
its own child process (``engines.py``) over the same files, as a single file
and as a hive lake; wall time and peak RSS are those of the child (``os.wait4``),
including interpreter start-up and imports. Each engine's findings are asserted
against the generator's ``manifest.json`` and against each other, and
evalframe's clean-run summary must equal DuckDB's funnel per candidate exactly.

    python benchmarks/bench_audit.py --sizes 1e6,1e7 [--work DIR] [--keep]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
ENGINES = HERE / "engines.py"
DEFAULT_GEN = HERE.parent.parent / "shared" / "tools" / "gen_ledger.py"
DATASETS = {"defects": [], "clean": ["--unknown", "0", "--dups", "0"]}
#: Findings every auditing engine reports; compared across engines and with the manifest.
SHARED_FINDINGS = (
    "missing_units",
    "unknown_rows",
    "unknown_keys",
    "dup_rows",
    "dup_keys",
    "dup_keys_planned",
    "refused",
    "retried_units",
    "ledger_rows",
)
GIB = 2**30


@dataclasses.dataclass(frozen=True)
class Task:
    """One engine variant on one layout."""

    engine: str
    layout: str
    partition: bool = False
    #: Name of the interpreter the child runs with (``--evalframe-python``); "" for this one.
    python: str = ""

    @property
    def label(self) -> str:
        name = f"{self.engine}[partition_by]" if self.partition else self.engine
        return f"{name}@{self.python}" if self.python else name


@dataclasses.dataclass
class Run:
    """What one child process did: times, memory, findings, and the checks that failed."""

    size: int
    dataset: str
    task: Task
    wall: float
    rss_bytes: int
    phases: dict[str, float]
    findings: dict[str, Any]
    cpu: float
    others: float
    error: str | None = None
    failures: list[str] = dataclasses.field(default_factory=list)


# --- running children ---------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Measured:
    """One child process: wall and CPU seconds, peak RSS, and the CPU share other processes took meanwhile."""

    wall: float
    rss_bytes: int
    cpu: float
    others: float
    error: str | None


def _busy(times: Any) -> float:
    """Non-idle CPU seconds of the whole machine since boot."""
    return float(sum(v for k, v in times._asdict().items() if k not in ("idle", "iowait", "guest", "guest_nice")))


def wait_idle(max_wait: float, threshold: float = 25.0) -> None:
    """Wait (at most ``max_wait`` s) until other processes use less than ``threshold`` % of the CPUs."""
    deadline = time.monotonic() + max_wait
    while time.monotonic() < deadline and psutil.cpu_percent(interval=0.5) >= threshold:
        pass


def measure(cmd: list[str], timeout: float, max_rss: int, log: Path, env: dict[str, str]) -> Measured:
    """Run ``cmd`` in a child process and measure it.

    Peak RSS and CPU time come from ``os.wait4`` (this child only, not the max
    over all children). ``others`` is the share of the machine's CPU time that
    other processes used while the child ran (0 on a quiet machine). A watchdog
    kills the child past ``timeout`` seconds or ``max_rss`` bytes of RSS, so one
    runaway engine cannot stall or OOM the machine.
    """
    reason: list[str] = []
    with log.open("wb") as err:
        busy0 = _busy(psutil.cpu_times())
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=err, stderr=subprocess.STDOUT, env=env)
        done = threading.Event()

        def watch() -> None:
            try:
                ps = psutil.Process(proc.pid)
                while not done.wait(0.25):
                    if time.perf_counter() - start > timeout:
                        reason.append(f"killed after {timeout:.0f} s (timeout)")
                    elif ps.memory_info().rss > max_rss:
                        reason.append(f"killed above {max_rss / GIB:.0f} GiB RSS")
                    if reason:
                        proc.kill()
                        return
            except psutil.NoSuchProcess:
                return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        busy = _busy(psutil.cpu_times()) - busy0
        done.set()
        watcher.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss = int(usage.ru_maxrss) * 1024  # KiB on Linux
    cpu = usage.ru_utime + usage.ru_stime
    others = max(0.0, busy - cpu) / (wall * (os.cpu_count() or 1))
    error = reason[0] if reason else None
    if error is None and proc.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        error = f"exit {proc.returncode}: {' | '.join(tail)}"
    return Measured(wall, rss, cpu, others, error)


def run_once(size: int, dataset: str, data: Path, task: Task, i: int, args: argparse.Namespace) -> Run:
    """Run one task once in a fresh child (after waiting for the machine to be idle)."""
    out = data / f"_{task.label}_{task.layout}_{i}.json"
    python = args.pythons[task.python] if task.python else sys.executable
    cmd = [python, str(ENGINES), task.engine, str(data), task.layout, str(out)]
    if task.partition:
        cmd.append("--partition")
    wait_idle(args.wait_idle)
    m = measure(cmd, args.timeout, int(args.max_rss_gib * GIB), out.with_suffix(".log"), args.env)
    payload: dict[str, Any] = json.loads(out.read_text()) if m.error is None else {}
    return Run(
        size,
        dataset,
        task,
        m.wall,
        m.rss_bytes,
        payload.get("phases", {}),
        payload.get("findings", {}),
        m.cpu,
        m.others,
        m.error,
    )


def run_all(size: int, dataset: str, data: Path, tasks: list[Task], args: argparse.Namespace) -> list[Run]:
    """Run every task ``args.repeat`` times, round-robin (so load from elsewhere hits all alike); keep the fastest."""
    best: dict[Task, Run] = {}
    for i in range(args.repeat):
        for task in tasks:
            if task in best and best[task].error is not None:
                continue
            run = run_once(size, dataset, data, task, i, args)
            old = best.get(task)
            if old is None or (run.error is None and run.wall < old.wall):
                best[task] = run
            print(
                f"  {task.label:<32} {task.layout:<5} {run.wall:8.2f} s {run.rss_bytes / GIB:6.2f} GiB "
                f"others {run.others:4.0%}  {run.error or 'ran'}",
                flush=True,
            )
    return [best[t] for t in tasks]


# --- checks -------------------------------------------------------------------


def check_manifest(run: Run, truth: dict[str, int]) -> list[str]:
    """Assert one engine's findings against the generator's ground truth.

    gen_ledger draws ``duplicate_rows`` copies of distinct source rows (without
    replacement), so each copy adds one surplus row to one key. Its
    ``unknown_rows`` rows get random (case, trial) draws *with* replacement, so
    two may share a key by chance, and a copy may duplicate an unknown row.
    Hence the exact identities used here, whatever the chance collisions:

    * duplicated planned keys + unknown rows = duplicate_rows + unknown_rows
      (a copy of a planned row makes a duplicated planned key; a copy of an
      unknown row makes one more unknown row);
    * surplus rows (dup_rows − dup_keys) + distinct unknown keys =
      duplicate_rows + unknown_rows (a chance collision turns one unknown key
      into one surplus row).
    """
    f, out = run.findings, []

    def expect(name: str, got: Any, want: Any) -> None:
        if got != want:
            out.append(f"{name}: got {got}, manifest says {want}")

    if run.task.engine == "floor":
        expect("plan rows", f.get("plan_rows"), truth["planned_pairs"])
        expect("ledger rows", f.get("ledger_rows"), truth["ledger_rows"])
        return out
    injected = truth["duplicate_rows"] + truth["unknown_rows"]
    expect("missing units", f["missing_units"], truth["missing_pairs"])
    expect("duplicated planned keys + unknown rows", f["dup_keys_planned"] + f["unknown_rows"], injected)
    expect("surplus rows + unknown keys", f["dup_rows"] - f["dup_keys"] + f["unknown_keys"], injected)
    if f["unknown_rows"] < truth["unknown_rows"] or f["dup_keys_planned"] > truth["duplicate_rows"]:
        out.append("unknown rows below, or duplicated planned keys above, what was injected")
    expect("refused", f["refused"], injected > 0)
    if "retried_units" in f:
        expect("retried units", f["retried_units"], truth["retried_pairs"])
    if "ledger_rows" in f:
        expect("ledger rows", f["ledger_rows"], truth["ledger_rows"])
    if "funnel" in f:
        expect("sum planned", sum(r["planned"] for r in f["funnel"]), truth["planned_pairs"])
        expect("sum missing", sum(r["missing"] for r in f["funnel"]), truth["missing_pairs"])
    if run.task.engine == "evalframe":
        want = ["duplicate_key", "unknown_case"] if f["refused"] else []
        expect("refusing problem kinds", f["refusing_kinds"], want)
    return out


def check_against(run: Run, ref: Run) -> list[str]:
    """Assert ``run`` found exactly what the DuckDB reference found (funnel: counts exact, rates to 1e-12)."""
    out = []
    for key in SHARED_FINDINGS:
        if key in run.findings and key in ref.findings and run.findings[key] != ref.findings[key]:
            out.append(f"{key}: {run.findings[key]} vs DuckDB {ref.findings[key]}")
    if "funnel" in run.findings or "funnel" in ref.findings:
        mine, theirs = run.findings.get("funnel"), ref.findings.get("funnel")
        if mine is None or theirs is None:
            out.append("funnel computed by only one of this engine and DuckDB")
        elif [r["candidate"] for r in mine] != [r["candidate"] for r in theirs]:
            out.append("funnel candidates differ from DuckDB's")
        else:
            for a, b in zip(mine, theirs, strict=True):
                for col, want in b.items():
                    got = a[col]
                    same = got == want or (
                        isinstance(got, float) and isinstance(want, float) and abs(got - want) <= 1e-12
                    )
                    if not same:
                        out.append(f"funnel {a['candidate']}.{col}: {got} vs DuckDB {want}")
    return out


# --- reporting ----------------------------------------------------------------


def fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def table(runs: list[Run]) -> str:
    """A markdown table: one row per run, with ratios to DuckDB and to the floor of the same dataset and layout."""

    def find(dataset: str, layout: str, engine: str) -> Run | None:
        for r in runs:
            if (r.dataset, r.task.layout, r.task.label) == (dataset, layout, engine) and r.error is None:
                return r
        return None

    head = (
        "| dataset | engine | layout | wall s | CPU s | work s | peak RSS GiB | time / DuckDB | RSS / DuckDB "
        "| time / floor | others' CPU | checks |"
    )
    lines = [head, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in runs:
        duck, floor = find(r.dataset, r.task.layout, "duckdb"), find(r.dataset, r.task.layout, "floor")
        ok = r.error is None
        status = r.error or ("ok" if not r.failures else "FAIL: " + "; ".join(r.failures[:3]))
        lines.append(
            f"| {r.dataset} | {r.task.label} | {r.task.layout} | {fmt(r.wall)} | {fmt(r.cpu)} "
            f"| {fmt(r.phases.get('work'))} | {fmt(r.rss_bytes / GIB)} "
            f"| {fmt(r.wall / duck.wall if ok and duck else None)} "
            f"| {fmt(r.rss_bytes / duck.rss_bytes if ok and duck else None)} "
            f"| {fmt(r.wall / floor.wall if ok and floor else None)} | {r.others:.0%} | {status} |"
        )
    return "\n".join(lines)


def findings_line(size: int, truth: dict[str, int], runs: list[Run]) -> str:
    """What the defects dataset holds, as the manifest and the DuckDB reference count it."""
    ref = next((r for r in runs if r.dataset == "defects" and r.task.engine == "duckdb" and r.error is None), None)
    text = (
        f"defects manifest: planned {truth['planned_pairs']:,}, ledger rows {truth['ledger_rows']:,}, "
        f"missing {truth['missing_pairs']:,}, unknown rows {truth['unknown_rows']:,}, "
        f"duplicate rows {truth['duplicate_rows']:,}, retried {truth['retried_pairs']:,}"
    )
    if ref is not None:
        f = ref.findings
        text += (
            f"; found: missing {f['missing_units']:,}, unknown rows {f['unknown_rows']:,} "
            f"({f['unknown_keys']:,} keys), duplicated keys {f['dup_keys']:,} "
            f"({f['dup_keys_planned']:,} planned, {f['dup_rows']:,} rows)"
        )
    return text


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, str]:
    """Date, machine and versions, for the record."""

    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    repo = HERE.parent
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True)
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} CPUs, {psutil.virtual_memory().total / GIB:.1f} GiB RAM, {platform.platform()}",
        "cpu": _cpu_model(),
        "versions": ", ".join(
            [f"python {platform.python_version()}"]
            + [f"{p} {ver(p)}" for p in ("evalframe", "polars", "duckdb", "pandas", "pyarrow")]
        ),
        "commit": commit.stdout.strip() + (" (working tree modified)" if dirty.stdout.strip() else ""),
    }


# --- main -----------------------------------------------------------------------


def evalframe_under_test(python: str, env: dict[str, str], cwd: Path) -> tuple[str, bool]:
    """Where ``python``'s children import evalframe from (and which libraries they see), and whether its
    ``ef.audit`` takes ``partition_by``."""
    code = (
        "import inspect, importlib.util as u, evalframe as ef; from importlib.metadata import version; "
        "print(ef.__file__); print('partition_by' in inspect.signature(ef.audit).parameters); "
        "print(', '.join(f'{p} {version(p)}' for p in ('polars', 'pandera', 'pyarrow')) + "
        "', pandas ' + (version('pandas') if u.find_spec('pandas') else 'not installed'))"
    )
    # Run outside the repository: ``python -c`` puts the working directory first on sys.path.
    lines = _child(python, ["-c", code], env, cwd, "cannot import evalframe and its libraries").strip().split("\n")
    if len(lines) != 3:
        sys.exit(f"bench_audit.py: {python} is not a Python interpreter that runs evalframe (it printed {lines!r})")
    where, partition, libraries = lines
    return f"{Path(where).parent} ({libraries})", partition == "True"


def _child(python: str, args: list[str], env: dict[str, str] | None, cwd: Path | None, failure: str) -> str:
    """Run ``python`` with ``args`` and return its output; exit with ``failure`` and its error output if it fails."""
    try:
        out = subprocess.run([python, *args], env=env, cwd=cwd, capture_output=True, text=True)
    except OSError as exc:
        sys.exit(f"bench_audit.py: cannot run {python}: {exc}")
    if out.returncode != 0:
        sys.exit(f"bench_audit.py: {python} {failure}:\n{out.stderr.strip()[-2000:]}")
    return out.stdout


def snapshot(rev: str, work: Path, pythons: list[str]) -> Path:
    """Extract ``evalframe/`` at git revision ``rev`` (read-only ``git archive``) so a moving tree is not measured."""
    repo = HERE.parent
    sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", rev], capture_output=True, text=True, check=True
    )
    dest = work / f"evalframe-{sha.stdout.strip()}"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "evalframe"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    # Byte-compile it, as installing a package does: otherwise a child started with PYTHONDONTWRITEBYTECODE
    # set compiles every module of evalframe from source (about 45 ms), a cost no other engine pays.
    for python in pythons:
        _child(python, ["-m", "compileall", "-q", str(dest)], None, None, "could not byte-compile the snapshot")
    return dest


def tasks_for(size: int, args: argparse.Namespace, partition: dict[str, bool]) -> list[Task]:
    """The runs at ``size``: every engine and layout, evalframe once per interpreter (``partition``: name →
    whether that evalframe takes ``partition_by``)."""
    out: list[Task] = []
    for layout in args.layouts:
        for engine in args.engines:
            if engine == "pandas" and size > args.pandas_max:
                continue
            for python in partition if engine == "evalframe" else [""]:
                if not (engine == "evalframe" and size > args.whole_max):
                    out.append(Task(engine, layout, python=python))
                if engine == "evalframe" and partition[python]:
                    out.append(Task(engine, layout, partition=True, python=python))
    return out


def parse_python(text: str) -> tuple[str, str]:
    """``NAME=PATH`` of ``--evalframe-python``."""
    name, sep, path = text.partition("=")
    if not (sep and name and path) or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=PYTHON (NAME a word), got {text!r}")
    return name, path


def generate(gen: Path, out: Path, size: int, extra: list[str], reuse: bool) -> dict[str, Any]:
    """Generate one dataset (or reuse one generated with the same parameters) and return its manifest."""
    manifest = out / "manifest.json"
    if reuse and manifest.exists():
        m: dict[str, Any] = json.loads(manifest.read_text())
        p = m["params"]
        if p["rows"] == size and p["layout"] == "both" and (p["unknown"] == 0) == bool(extra):
            return m
    cmd = [sys.executable, str(gen), str(out), "--rows", str(size), "--layout", "both", *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    m = json.loads(manifest.read_text())
    return m


def parse_sizes(text: str) -> list[int]:
    return [int(float(s)) for s in text.split(",") if s.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=parse_sizes, default=[1_000_000], help="ledger rows, e.g. 1e6,1e7")
    ap.add_argument("--work", type=Path, help="where datasets go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated datasets")
    ap.add_argument("--reuse", action="store_true", help="reuse datasets already generated under --work")
    ap.add_argument("--engines", type=lambda s: s.split(","), default=["floor", "duckdb", "pandas", "evalframe"])
    ap.add_argument("--layouts", type=lambda s: s.split(","), default=["file", "lake"])
    ap.add_argument("--no-partition", action="store_true", help="skip evalframe's partition_by='candidate' variant")
    ap.add_argument("--pandas-max", type=float, default=1e7, help="largest size pandas runs at")
    ap.add_argument("--whole-max", type=float, default=1e7, help="largest size evalframe runs at without partition_by")
    ap.add_argument("--repeat", type=int, default=1, help="runs per engine (round-robin); the fastest is reported")
    ap.add_argument("--wait-idle", type=float, default=30.0, help="max seconds to wait for an idle CPU before a run")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a run is killed")
    ap.add_argument("--max-rss-gib", type=float, default=20.0, help="RSS at which a run is killed")
    ap.add_argument("--gen", type=Path, default=DEFAULT_GEN, help="path to gen_ledger.py")
    ap.add_argument("--json", type=Path, help="also write every run as JSON here")
    ap.add_argument(
        "--evalframe-rev", help="measure evalframe as committed at this git revision (e.g. HEAD), not the working tree"
    )
    ap.add_argument(
        "--evalframe-python",
        type=parse_python,
        action="append",
        default=[],
        metavar="NAME=PYTHON",
        help="also run evalframe with this interpreter (rows labelled evalframe@NAME), e.g. of an environment "
        "made by the README's install command alone; repeatable",
    )
    args = ap.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="evalframe-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    args.pythons = dict(args.evalframe_python)
    if len(args.pythons) != len(args.evalframe_python):
        ap.error("--evalframe-python: each NAME once")
    args.env = dict(os.environ)
    if args.evalframe_rev:
        src = snapshot(args.evalframe_rev, work, [sys.executable, *args.pythons.values()])
        args.env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    info = machine()
    partition: dict[str, bool] = {}
    for name, python in [("", sys.executable), *args.pythons.items()]:
        where, has_partition = evalframe_under_test(python, args.env, work)
        partition[name] = "evalframe" in args.engines and not args.no_partition and has_partition
        rev = f" (git archive of {args.evalframe_rev})" if args.evalframe_rev else ""
        info[f"evalframe{'@' + name if name else ''} under test"] = f"{python}: {where}{rev}"
    print("\n".join(f"{k}: {v}" for k, v in info.items()), flush=True)
    print(f"command: python benchmarks/bench_audit.py {' '.join(sys.argv[1:])}")
    all_runs: list[Run] = []
    failed = False
    for size in args.sizes:
        size_dir = work / f"rows_{size}"
        runs: list[Run] = []
        truths: dict[str, dict[str, int]] = {}
        for dataset, extra in DATASETS.items():
            data = size_dir / dataset
            t0 = time.perf_counter()
            manifest = generate(args.gen, data, size, extra, args.reuse)
            truths[dataset] = manifest["truth"]
            print(f"\n[{size:,} rows] {dataset}: generated in {time.perf_counter() - t0:.1f} s", flush=True)
            for run in run_all(size, dataset, data, tasks_for(size, args, partition), args):
                if run.error is None:
                    run.failures = check_manifest(run, manifest["truth"])
                runs.append(run)
        for run in runs:
            ducks = [r for r in runs if r.dataset == run.dataset and r.task.engine == "duckdb"]
            ref = min(ducks, key=lambda r: r.task.layout != "file", default=None)  # the single file, else the lake
            if ref is None or ref.error is not None or run is ref or run.error is not None:
                continue
            if run.task.engine != "floor":
                run.failures += check_against(run, ref)
        print(f"\n### {size:,} rows\n")
        print(findings_line(size, truths["defects"], runs) + "\n")
        print(table(runs), flush=True)
        failed = failed or any(r.error or r.failures for r in runs)
        all_runs += runs
        if not args.keep:
            shutil.rmtree(size_dir, ignore_errors=True)
    gate = [r for r in all_runs if r.size == 10_000_000 and r.task == Task("evalframe", "file")]
    if gate:
        worst_t, worst_m = max(r.wall for r in gate), max(r.rss_bytes for r in gate) / GIB
        verdict = "eligible" if all(r.error is None for r in gate) and worst_t < 60 and worst_m < 6 else "not eligible"
        print(
            f"\n50M gate (every 10M evalframe single-file run < 60 s and < 6 GiB): worst {worst_t:.1f} s, "
            f"{worst_m:.2f} GiB -> {verdict}"
        )
    if args.json:
        args.json.write_text(
            json.dumps({"info": info, "runs": [dataclasses.asdict(r) for r in all_runs]}, indent=1, default=str)
        )
    if args.work is None and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print("\nSOME RUNS FAILED OR DISAGREED (see the checks column)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
