"""Process state of the command: stop signals, the guarded exchange of --out, the garbage collector."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import evalframe.report.output as output
from evalframe._launch import STOP_SIGNALS, is_the_command
from evalframe.cli.app import MALLOC_ARENAS, OUT_OF_MEMORY
from evalframe.cli.signals import hold_stop_signals
from evalframe.report import write_output
from tests.cli.support import ORBIT, ORBIT_ARGS, REFUSAL_FILES, run

#: Script lines that send the process SIGTERM after each step of writing an output folder for which ``{when}``.
STOP_AT_STEPS = """
import evalframe.report.output
def step_then_stop(name):
    if {when}:
        os.kill(os.getpid(), signal.SIGTERM)
evalframe.report.output._step = step_then_stop
"""


def test_a_stop_signal_during_the_write_of_out_takes_effect_after_the_exchange(tmp_path: Path) -> None:
    # A refusal replaces an earlier run's rates. SIGTERM at each step of the write: a stop while files are
    # written leaves the earlier output whole; once the exchange starts, it finishes first, then the command stops.
    out = tmp_path / "out"
    assert run([*ORBIT_ARGS, "--out", str(out)])[0] == 0
    earlier = sorted(p.name for p in out.iterdir())
    assert {"summary.parquet", "units.parquet", "report.md"} <= set(earlier)
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate,case_id,passed\nA,quote,1\nA,quote,1\n")

    def command(when: str) -> subprocess.CompletedProcess[str]:
        script = f"""
import os, signal, sys
from evalframe import cli
{STOP_AT_STEPS.format(when=when)}
sys.argv = ["evalframe", "audit", "--plan", {str(ORBIT / "plan.csv")!r}, "--results", {str(bad)!r},
            "--candidates", "A,B", "--out", {str(out)!r}]
cli.run()
"""
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    done = command("True")
    assert done.returncode == 143, done.stderr
    assert done.stderr.count("evalframe: stopped by SIGTERM") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "out"]
    assert sorted(p.name for p in out.iterdir()) == earlier
    done = command("name == 'earlier output moved aside'")
    assert done.returncode == 143, done.stderr
    assert done.stderr.count("evalframe: stopped by SIGTERM") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "out"]
    assert sorted(p.name for p in out.iterdir()) == REFUSAL_FILES
    assert pl.read_parquet(out / "problems.parquet").filter(pl.col("refusing")).height == 2


def test_sigterm_with_its_default_action_during_a_guarded_exchange_still_leaves_a_whole_folder(tmp_path: Path) -> None:
    # Python, no command, the command's guard passed: SIGTERM ends the process, but only after the exchange and
    # the temporary folder's removal.
    out = tmp_path / "out"
    script = f"""
import os, signal
import polars as pl
import evalframe as ef
from evalframe.cli.app import MALLOC_ARENAS, OUT_OF_MEMORY
from evalframe.cli.signals import hold_stop_signals
def report(candidates):
    plan = ef.Plan.from_file({str(ORBIT / "plan.csv")!r}, candidates=candidates)
    results = ef.load({str(ORBIT / "results.csv")!r}).frame
    return ef.audit(plan, results.filter(pl.col("candidate").is_in(candidates)))
report(["A", "B"]).write({str(out)!r})
{STOP_AT_STEPS.format(when="name == 'earlier output moved aside'")}
report(["A"]).write({str(out)!r}, guard=hold_stop_signals)
print("not reached")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == -15, done.stderr
    assert "not reached" not in done.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    for table in ("summary", "units", "attempts"):
        assert pl.read_parquet(out / f"{table}.parquet").get_column("candidate").unique().to_list() == ["A"], table
    assert json.loads((out / "report.json").read_text())["summary"][0]["candidate"] == "A"


def test_the_command_freezes_its_imports_out_of_the_collector_and_main_does_not() -> None:
    # The console script (cli.run) freezes what it imported; main, called where the process goes on, does not.
    code = (
        "import gc, sys\n"
        "from evalframe import cli\n"
        "sys.argv = ['evalframe', '--version']\n"
        "for name, entry in (('main', cli.main), ('run', cli.run)):\n"
        "    try:\n"
        "        entry()\n"
        "    except SystemExit as done:\n"
        "        print(name, done.code, gc.get_freeze_count() > 0)\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert [line for line in shown.splitlines() if line.startswith(("main", "run"))] == ["main 0 False", "run 0 True"]


@pytest.fixture
def sigint_default() -> Iterator[None]:
    """SIGINT raising KeyboardInterrupt, as in a shell's foreground (a background job inherits it ignored)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.usefixtures("sigint_default")
def test_the_library_writes_an_output_folder_without_touching_a_signal_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # write_output holds nothing by default; with the command's guard, SIGTERM is only noted during the exchange.
    set_handlers: list[int] = []
    real_signal = signal.signal
    monkeypatch.setattr(
        signal, "signal", lambda signum, handler: set_handlers.append(signum) or real_signal(signum, handler)
    )
    during: list[object] = []
    monkeypatch.setattr(
        output,
        "_step",
        lambda name: during.append(signal.getsignal(signal.SIGTERM)) if name == "new output in place" else None,
    )
    table = pl.DataFrame({"scored_coverage": [0.5]})
    write_output(tmp_path / "out", {"summary": table})
    assert (set_handlers, during) == ([], [signal.SIG_DFL])
    before = signal.getsignal(signal.SIGTERM)
    write_output(tmp_path / "out", {"summary": table}, guard=hold_stop_signals)
    assert set_handlers == [signal.SIGINT, signal.SIGTERM, signal.SIGINT, signal.SIGTERM]
    assert during[1] not in (signal.SIG_DFL, before) and signal.getsignal(signal.SIGTERM) is before


def test_an_ignored_stop_signal_is_left_ignored_by_the_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """A background job inherits SIGINT ignored: the guard holds SIGTERM only and leaves SIGINT as it was."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        set_handlers: list[int] = []
        real_signal = signal.signal
        monkeypatch.setattr(
            signal, "signal", lambda signum, handler: set_handlers.append(signum) or real_signal(signum, handler)
        )
        with hold_stop_signals():
            held = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
        assert held == (signal.SIG_IGN, False)
        assert set_handlers == [signal.SIGTERM, signal.SIGTERM]
    finally:
        signal.signal(signal.SIGINT, before)


def test_memory_python_cannot_get_is_one_error_line_and_exit_2() -> None:
    # A MemoryError while the ledger is read (as under `ulimit -v` or prlimit --as): no traceback.
    code = (
        "import sys\n"
        "from evalframe.load import csv_strict\n"
        "def no_memory(*args, **kwargs):\n"
        "    raise MemoryError\n"
        "csv_strict._records = no_memory\n"
        "from evalframe import cli\n"
        f"sys.argv = ['evalframe', *{ORBIT_ARGS!r}, '--no-progress']\n"
        "cli.run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {OUT_OF_MEMORY}\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_the_command_caps_the_allocators_arenas_and_the_address_space_its_threads_reserve() -> None:
    # Each thread's own glibc arena reserves 64 MiB of address space: counted by `prlimit --as`, never used.
    code = (
        "import threading\n"
        "from evalframe.cli.app import few_malloc_arenas\n"
        "def size():\n"
        "    return int(next(l for l in open('/proc/self/status') if l.startswith('VmSize')).split()[1])\n"
        "def spawn():\n"
        "    def work():\n"
        "        [bytearray(1000) for _ in range(1000)]\n"
        "        done.wait()\n"
        "    done = threading.Event()\n"
        "    threads = [threading.Thread(target=work) for _ in range(8)]\n"
        "    before = size()\n"
        "    [t.start() for t in threads]\n"
        "    grown = size() - before\n"
        "    done.set()\n"
        "    [t.join() for t in threads]\n"
        "    return grown\n"
        "import sys\n"
        "if sys.argv[1] == 'capped':\n"
        "    assert few_malloc_arenas()\n"
        "print(spawn())\n"
    )
    grown = {
        how: int(subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, check=True).stdout)
        for how in ("capped", "default")
    }
    # 8 threads: 8 stacks of 8 MiB either way (in KiB below); capped, at most MALLOC_ARENAS more arenas of
    # 64 MiB; by default an arena for (nearly) every thread (measured: 66,092 KiB capped, 589,984 by default).
    stacks, arena = 8 * 8 * 1024, 64 * 1024
    assert grown["capped"] <= stacks + MALLOC_ARENAS * arena < stacks + 4 * arena < grown["default"], grown


def test_ctrl_c_while_the_command_imports_is_one_line_and_exit_130() -> None:
    # The command's modules take a moment to import (polars, pandera); SIGINT then was a KeyboardInterrupt
    # traceback of whichever import it fell in. Python's own start (site, an editable install's finder) comes
    # before any of evalframe runs: -X importtime says when evalframe._launch is imported, and the signal
    # follows that by 0 to 0.3 s, during the imports of the rest.
    for delay in (0.0, 0.01, 0.05, 0.1, 0.2, 0.3):
        command = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "evalframe.cli", "audit", "--help"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert command.stderr is not None
        for line in command.stderr:
            if line.rstrip().endswith("| evalframe._launch"):
                break
        time.sleep(delay)
        command.send_signal(signal.SIGINT)
        _, err = command.communicate()
        said = [line for line in err.splitlines() if not line.startswith("import time:")]
        if command.returncode == 0:  # finished before the signal: nothing to check at this delay
            assert said == [], delay
            continue
        assert (command.returncode, said) == (130, ["evalframe: stopped by SIGINT"]), (delay, err[-2000:])


def test_only_the_command_is_the_command() -> None:
    assert is_the_command(["/venv/bin/evalframe", "audit"], ["/venv/bin/python", "/venv/bin/evalframe", "audit"])
    assert is_the_command(["-m"], ["python", "-m", "evalframe.cli", "audit", "--help"])
    assert not is_the_command(["/venv/bin/pytest"], ["python", "/venv/bin/pytest", "-m", "evalframe.cli"])
    assert not is_the_command(["-c"], ["python", "-c", "import evalframe"])
    # importing evalframe (here, in the tests) installed nothing
    assert all(getattr(signal.getsignal(s), "__module__", None) != "evalframe._launch" for s in STOP_SIGNALS)


def test_the_command_gives_freed_address_space_back_unless_the_user_set_the_allocator() -> None:
    # jemalloc (polars' allocator) keeps freed address space by default: under prlimit --as=4G an import of 6M
    # planned units aborted at 2.0 GB resident. The command sets retain:false before polars is loaded (polars
    # appends a set value to its own decay settings).
    script = "import sys; sys.argv = ['evalframe']; import os, evalframe; print(os.environ.get('_RJEM_MALLOC_CONF'))"
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == "dirty_decay_ms:500,muzzy_decay_ms:1000,retain:false\n"
    env["_RJEM_MALLOC_CONF"] = "narenas:1"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == "dirty_decay_ms:500,muzzy_decay_ms:1000,narenas:1\n"
    library = "import os, evalframe; print(os.environ.get('_RJEM_MALLOC_CONF'))"
    env.pop("_RJEM_MALLOC_CONF")
    done = subprocess.run([sys.executable, "-c", library], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == "dirty_decay_ms:500,muzzy_decay_ms:1000\n"
