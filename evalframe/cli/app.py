"""The ``evalframe`` command group and its entry point: limits, version, and one command per family.

Exit codes: 0 audited, 1 batch refused (problems printed as a table on
stderr), 2 usage or input error, 3 a declared release gate failed
(:mod:`evalframe.cli.exits`).
"""

from __future__ import annotations

import ctypes
import gc
import sys
from typing import Final

import click

from evalframe.cli.auditing import audit_command, compare_command
from evalframe.cli.exits import fail
from evalframe.cli.importing import import_command
from evalframe.cli.options import EXIT_CODES_HELP, limit_option
from evalframe.cli.panics import hide_native_panic_reports
from evalframe.cli.power import power_command
from evalframe.cli.signals import exit_on_stop_signals
from evalframe.load import limits


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(package_name="evalframe")
@limit_option("line_bytes", "Longest line of a CSV / JSON Lines input, in bytes (longer: exit 2).")
@limit_option("json_depth", "Deepest nesting of arrays and objects in JSON input (deeper: exit 2).")
@limit_option("member_bytes", "Largest decompressed archive member (.eval), in bytes.")
@limit_option("archive_bytes", "Largest total of an archive's decompressed members, in bytes (larger: exit 2).")
@limit_option("planned_units", "Most planned units (candidate × case × trial) of a plan or an import (more: exit 2).")
def main(**limits_given: int) -> None:
    """Audit AI evaluation results against a frozen plan before anyone believes a score.

    \b
    Examples:
      evalframe audit --plan plan.csv --results results.csv --candidates A,B
      evalframe audit --from inspect logs/*.eval --out report/
      evalframe compare --plan plan.csv --results lake/ --candidates A,B --baseline A --candidate B
      evalframe import lm-eval results.json samples.jsonl --out imported/

    Limits (SPEC §6b) go before the command: `evalframe --max-line-bytes 268435456 audit ...`.
    """
    click.get_current_context().with_resource(limits(**limits_given))


for _command in (audit_command, compare_command, import_command, power_command):
    main.add_command(_command)


def run() -> None:
    """The ``evalframe`` command: :func:`main` in a process of its own.

    Everything imported so far lives until the process ends, so it is frozen out of the garbage collector
    first (``gc.freeze``): Python's last collection at exit otherwise walks every object of pandas and
    pandera. Only the command does this; ``main`` called in a process that goes on (tests, notebooks)
    leaves the collector as it is.

    SIGINT (Ctrl-C) and SIGTERM exit with 128 + the signal's number, after the audit's temporary folder is
    removed (:func:`~evalframe.cli.signals.exit_on_stop_signals`). Python runs the handler between two
    bytecodes, so a signal that arrives during one long query takes effect when the query returns; the
    exchange that puts the new ``--out`` folder in place finishes first (every command writes with
    :func:`~evalframe.cli.signals.hold_stop_signals` as its guard). Before this runs, while Python imports
    the command (nothing written yet), a stop signal ends the process at once with the same line and code
    (:mod:`evalframe._launch`, imported first by the package).

    The reader's panic reports (Rust's, written straight to file descriptor 2 before Python sees the
    ``PanicException`` that becomes an ``error:`` line) are kept off stderr
    (:func:`~evalframe.cli.panics.hide_native_panic_reports`).

    The C library's allocator keeps at most :data:`MALLOC_ARENAS` arenas (:func:`few_malloc_arenas`).

    Memory that Python cannot get (a ``MemoryError``, under a limit such as ``ulimit -v``) is one ``error:``
    line and exit 2, not a traceback; nothing is written to ``--out`` (the new folder is put in place last).
    """
    gc.freeze()
    few_malloc_arenas()
    exit_on_stop_signals()
    hide_native_panic_reports()
    try:
        main()
    except MemoryError:
        fail(OUT_OF_MEMORY)


#: Arenas of the C library's allocator the command's threads share (glibc's ``M_ARENA_MAX``).
MALLOC_ARENAS: Final = 2
#: glibc's ``mallopt`` parameter number of ``M_ARENA_MAX``.
_M_ARENA_MAX: Final = -8


def few_malloc_arenas() -> bool:
    """Have glibc's allocator keep at most :data:`MALLOC_ARENAS` arenas; whether it could be told (glibc only).

    glibc gives each new thread an arena of its own, up to eight per core, each reserving 64 MiB of address
    space: the command's threads (the audit's pool, polars', the stderr copier) reserved about 0.8 GiB beyond
    what they used, which is what an address-space limit (``ulimit -v``, ``prlimit --as``) counts. Shared
    arenas hold the same data. Only the command calls this; the library leaves the allocator as it is.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_ARENA_MAX, MALLOC_ARENAS))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False


#: What the command says when Python runs out of memory.
OUT_OF_MEMORY: Final = (
    "out of memory: the inputs need more than this process may use (its memory limit or the machine's); "
    "give it more, or audit fewer rows at a time"
)
