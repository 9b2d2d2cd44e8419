"""Progress bars: on stderr when it is a terminal (a pseudo-terminal here), never otherwise."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import polars as pl
from click.testing import CliRunner

import evalframe as ef
from evalframe.cli import main
from tests.conftest import FIXTURES, ROOT

ORBIT = FIXTURES / "orbit_desk"
ARGS = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv"), "--candidates", "A,B"]


def run_on_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run the command with stderr on a pseudo-terminal; return its exit code, stdout and what the terminal got."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-c", "from evalframe.cli import run; run()", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    stdout, _ = process.communicate()
    code = process.returncode
    os.close(master)
    return code, stdout.decode(), b"".join(chunks).decode(errors="replace")


def test_progress_bars_on_a_terminal_for_each_stage(tmp_path: Path) -> None:
    code, stdout, terminal = run_on_a_terminal([*ARGS, "--partition-by", "candidate", "--out", str(tmp_path / "o")])
    assert code == 0
    for stage in ("inputs read", "candidates audited", "outputs written"):
        assert stage in terminal, stage
    assert "2/2" in terminal  # candidates audited, one step per candidate
    assert "7/7" in terminal  # outputs written: 4 tables and 3 reports
    assert "inputs read" not in stdout  # stdout keeps only the report


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [*ARGS, "--partition-by", "candidate", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0
    assert result.stderr == ""
    done = subprocess.run(
        [sys.executable, "-c", "from evalframe.cli import run; run()", *ARGS, "--out", str(tmp_path / "p")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_the_library_reports_progress_through_a_callback_only(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B", "C"])
    ledger = pl.DataFrame({"candidate": ["A", "B", "C"], "case_id": ["q1"] * 3, "passed": [1, 0, 1]})
    report = ef.audit(plan, ledger, partition_by="candidate", progress=lambda *step: seen.append(step))
    assert seen == [
        ("inputs read", 1, 1),
        ("candidates audited", 1, 3),
        ("candidates audited", 2, 3),
        ("candidates audited", 3, 3),
    ]
    seen.clear()
    report.write(tmp_path / "out", progress=lambda *step: seen.append(step))
    assert seen == [("outputs written", k, 7) for k in range(1, 8)]
