"""The ``evalframe`` command while Python imports it: a stop signal is one line and exit 128 + its number.

The command's own handlers (:func:`evalframe.cli.signals.exit_on_stop_signals`) are installed once
its modules are imported, which takes a noticeable moment (polars, pandera). Before that, SIGINT would
be Python's ``KeyboardInterrupt`` with a traceback of whichever import it fell in. This module is
imported first by ``evalframe/__init__.py`` and imports only ``os``, ``signal`` and ``sys`` (not even ``typing``);
it acts only in the process of the command (the ``evalframe`` console script or ``python -m
evalframe.cli``), never when evalframe is imported as a library.
"""

from __future__ import annotations

import os
import signal
import sys

#: Signals that stop the command (SIGINT, SIGTERM): it exits on them with 128 + their number.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stopped_line(signum: int) -> str:
    """The one line the command prints when a stop signal ends it.

    Examples
    --------
    >>> stopped_line(signal.SIGINT)
    'evalframe: stopped by SIGINT'
    """
    return f"evalframe: stopped by {signal.Signals(signum).name}"


def is_the_command(argv: list[str], orig_argv: list[str]) -> bool:
    """Whether the process is the ``evalframe`` command: its console script, or ``python -m evalframe.cli``.

    Examples
    --------
    >>> is_the_command(["/venv/bin/evalframe", "audit"], ["python", "/venv/bin/evalframe", "audit"])
    True
    >>> is_the_command(["-m"], ["python", "-m", "evalframe.cli", "audit"])
    True
    >>> is_the_command(["-m"], ["python", "-m", "pytest"]), is_the_command([""], ["python"])
    (False, False)
    """
    script = os.path.basename(argv[0]) if argv else ""
    if script.removesuffix(".exe") == "evalframe":
        return True
    if argv[:1] != ["-m"]:  # Python's sys.argv[0] while it finds the module of ``-m`` (and imports its packages)
        return False
    args = orig_argv[1:]
    return "-m" in args and args[args.index("-m") + 1 : args.index("-m") + 2] == ["evalframe.cli"]


def _stop_while_starting(signum: int, frame: object) -> None:
    """Handler while the command imports: nothing is written yet, so the process ends at once."""
    os.write(2, (stopped_line(signum) + "\n").encode())
    os._exit(128 + signum)


#: polars' allocator (jemalloc, configured by this environment variable when polars is loaded): ``retain:false``
#: gives freed memory's address space back to the system. jemalloc keeps it by default, and under an
#: address-space limit (``prlimit --as=4G``) an import of 6M planned units aborted at 2.0 GB resident; with
#: this it completes (benchmarks/RESULTS.md). A value the user set is kept.
JEMALLOC_CONF = ("_RJEM_MALLOC_CONF", "retain:false")


def stop_quietly_while_the_command_starts() -> None:
    """In the command's process, make SIGINT and SIGTERM exit with one line until its own handlers take over.

    A signal the process was started ignoring (SIGINT of a background job) stays ignored; elsewhere (a
    library user, a test) nothing changes. The command's allocator setting (:data:`JEMALLOC_CONF`) is made
    here too, before polars is loaded.
    """
    if not is_the_command(sys.argv, getattr(sys, "orig_argv", [])):
        return
    os.environ.setdefault(*JEMALLOC_CONF)
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _stop_while_starting)
