"""Progress bars: on stderr when it is a terminal (a pseudo-terminal here), never otherwise."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

import polars as pl
from click.testing import CliRunner
from rich.console import Console

import evalframe as ef
from evalframe.cli import main
from evalframe.cli.progress import PlainLines, progress_bars
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


def test_no_progress_switch_leaves_the_terminal_empty(tmp_path: Path) -> None:
    code, stdout, terminal = run_on_a_terminal(
        [*ARGS, "--partition-by", "candidate", "--no-progress", "--out", str(tmp_path / "o")]
    )
    assert (code, terminal) == (0, "")  # no bar, no spinner: the audit of orbit_desk refuses nothing
    assert "inputs read" not in stdout


def test_no_progress_gives_the_library_no_callback() -> None:
    with progress_bars(Console(file=io.StringIO(), force_terminal=True), show=False) as progress:
        assert progress is None
    with progress_bars(Console(file=io.StringIO(), force_terminal=False), show=False) as progress:
        assert progress is None


#: A plain progress line (not a terminal): only ever printed after 10 s, so a loaded machine may show some.
PLAIN_LINE: Final = re.compile(r"evalframe: \d+:\d\d:\d\d elapsed; [a-z ]+( \d+/\d+)?")


def test_no_bars_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [*ARGS, "--partition-by", "candidate", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0
    assert all(PLAIN_LINE.fullmatch(line) for line in result.stderr.splitlines()), result.stderr
    done = subprocess.run(
        [sys.executable, "-c", "from evalframe.cli import run; run()", *ARGS, "--out", str(tmp_path / "p")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0
    assert all(PLAIN_LINE.fullmatch(line) for line in done.stderr.splitlines()), done.stderr
    quiet = CliRunner().invoke(main, [*ARGS, "--no-progress", "--out", str(tmp_path / "q")])
    assert (quiet.exit_code, quiet.stderr) == (0, "")  # --no-progress: nothing, however long the run takes


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


def test_not_on_a_terminal_a_plain_line_every_ten_seconds_on_a_fake_clock() -> None:
    # issue 42: a CI log saw nothing for minutes. A fake clock: no real sleeps.
    now, written = [100.0], []
    lines = PlainLines(written.append, clock=lambda: now[0])
    lines.tick()
    now[0] = 109.9  # under ten seconds: nothing yet
    lines.tick()
    assert written == []
    now[0] = 110.0
    lines.tick()
    lines("inputs read", 1, 1)  # a step within ten seconds of the last line writes nothing
    now[0] = 125.0
    lines("candidates audited", 3, 20)
    now[0] = 134.0
    lines.tick()
    now[0] = 3_700.0
    lines.tick()
    assert written == [
        "evalframe: 0:00:10 elapsed; reading the inputs",
        "evalframe: 0:00:25 elapsed; candidates audited 3/20",
        "evalframe: 1:00:00 elapsed; candidates audited 3/20",
    ]


def test_the_command_gets_the_plain_lines_when_stderr_is_not_a_terminal() -> None:
    console = Console(file=io.StringIO(), force_terminal=False)
    with progress_bars(console) as progress:
        assert isinstance(progress, PlainLines)
    assert console.file.getvalue() == ""  # type: ignore[attr-defined]  # a run under ten seconds writes nothing
