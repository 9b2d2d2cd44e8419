"""CPU and memory of ``evalframe import inspect`` on a header that plans millions of sample ids (issue 45).

An Inspect ``.eval`` archive whose only member is ``header.json``: a real log's header
(``log_streaming.eval`` under ``data/fixtures/real``) with ``eval.dataset.sample_ids`` set to ``--ids``
integer ids (``--string-ids``: ``case-0000001``-style strings) and ``eval.config.epochs`` to ``--epochs``, so
the plan is ids × epochs units and no sample is read. Each run is a fresh child, ``python -m evalframe.cli
import inspect H --out DIR`` as a user types it (so the command's own start-up settings apply), under an
address-space limit (``--as-gib``, default 4: what ``prlimit --as=4G`` sets). It prints every run's exit code,
CPU seconds (user + system, ``os.wait4``), wall seconds and peak RSS, then medians per tree, with the
``import`` baseline (a child that only imports the command) measured in the same rounds. ``--rev NAME=REV``
adds evalframe as committed at a git revision (extracted with ``git archive``), run A B A B with the tree.

    python benchmarks/bench_inspect_header.py --ids 3e6 --epochs 2 --rounds 3 --rev before=HEAD~1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from bench_memory import GIB, HEADER_FROM  # the script's own folder is first on sys.path
from bench_second_paths import extract


def header_archive(path: Path, ids: int, epochs: int, *, strings: bool) -> Path:
    """The ``.eval`` archive: the real header with ``ids`` planned sample ids and ``epochs`` epochs."""
    with zipfile.ZipFile(HEADER_FROM) as real:
        header = json.loads(real.read("header.json"))
    width = len(str(ids))
    planned = [f"case-{i:0{width}d}" for i in range(1, ids + 1)] if strings else list(range(1, ids + 1))
    header["eval"]["dataset"].update(sample_ids=planned, samples=ids)
    header["eval"]["config"] = {"epochs": epochs}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
    return path


def run(args: list[str], code: Path, cwd: Path, limit: int) -> dict[str, Any]:
    """One child with ``code`` first on PYTHONPATH, under an address-space limit of ``limit`` bytes."""
    env = {**os.environ, "PYTHONPATH": str(code)}

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            [sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limited
        )
        _, status, usage = os.wait4(child.pid, 0)
        err.seek(0)
        last = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "wall": time.perf_counter() - start,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_gib": usage.ru_maxrss * 1024 / GIB,
        "stderr": last[0] if last else "",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", type=lambda s: int(float(s)), default=3_000_000)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--string-ids", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--as-gib", type=float, default=4.0, help="address-space limit of every child (GiB)")
    ap.add_argument("--rev", action="append", default=[], help="NAME=REV: also evalframe at a git revision")
    ap.add_argument("--no-tree", action="store_true", help="leave the working tree out")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evalframe-bench-inspect-"))
    try:
        archive = header_archive(work / "header.eval", a.ids, a.epochs, strings=a.string_ids)
        print(f"{archive.name}: {a.ids:,} sample ids x {a.epochs} epochs, {archive.stat().st_size / 2**20:.1f} MiB")
        trees = [] if a.no_tree else [("tree", extract(None, work / "code_tree"))]
        for spec in a.rev:
            name, rev = spec.split("=", 1)
            trees.append((name, extract(rev, work / f"code_{name}")))
        limit = int(a.as_gib * GIB)
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for number in range(a.rounds):
            order = trees[number % len(trees) :] + trees[: number % len(trees)]  # the first tree rotates
            for name, code in order:
                for what, args in (
                    ("import", ["-c", "import evalframe.cli.app"]),
                    ("import inspect", ["-m", "evalframe.cli", "import", "inspect", str(archive), "--out", "o"]),
                ):
                    shutil.rmtree(work / "o", ignore_errors=True)
                    result = run(args, code, work, limit)
                    runs.setdefault((what, name), []).append(result)
                    print(f"round {number + 1} {name} {what}: {json.dumps(result)}", flush=True)
        print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(f"address-space limit of every run: {a.as_gib:g} GiB")
        print("| run | tree | exits | CPU s (median; min-max) | wall s | peak RSS GiB |")
        print("|---|---|---|---|---|---|")
        for (what, name), done in runs.items():
            cpu = [d["cpu"] for d in done]
            print(
                f"| {what} | {name} | {','.join(str(d['exit']) for d in done)} | {statistics.median(cpu):.1f} "
                f"({min(cpu):.1f}-{max(cpu):.1f}) | {statistics.median(d['wall'] for d in done):.1f} | "
                f"{statistics.median(d['peak_gib'] for d in done):.2f} |"
            )
        return 0 if all(d["exit"] == 0 for done in runs.values() for d in done) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
