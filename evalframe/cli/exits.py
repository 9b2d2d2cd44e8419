"""The exit-code mapping: how library errors reach the terminal, and with which code.

Exit codes: 0 audited, 1 batch refused (problems printed as a table on
stderr), 2 usage or input error, 3 a declared release gate failed. Every
command ends through these helpers, so a library error becomes one line on
stderr and a code of the contract, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final, NoReturn

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from evalframe.errors import OutputFolderError
from evalframe.report.format import visible
from evalframe.report.terminal import print_refusal

EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_GATE: Final = 3
#: Rows of a long list (problems, paths in the way) printed before "… and N more".
PROBLEM_ROWS_SHOWN: Final = 50


def console(*, stderr: bool) -> Console:
    """A rich console on stdout or stderr; not on a terminal (CI logs, pipes), 200 columns instead of 80."""
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, width=None if probe.is_terminal else 200)


def stdout() -> Console:
    """The console of the command's result."""
    return console(stderr=False)


def stderr() -> Console:
    """The console of errors, refusals and progress."""
    return console(stderr=True)


def plain(text: str) -> str:
    """Input-derived ``text`` ready to go inside a rich markup string: control characters and markup escaped."""
    return escape(visible(text))


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``error: message`` on one line of stderr and exit with ``code`` (a usage error by default)."""
    stderr().print(f"[bold red]error[/]: {plain(message)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def print_problems(problems: Any, console: Console, counts: Any = None) -> None:
    """Print a refusal's problems: counts by kind, then the first rows of each refusing kind.

    ``counts`` (kind, refusing, count) counts every problem when ``problems`` holds only the first rows of
    each kind (``AuditRefused.problem_counts``).
    """
    print_refusal(problems, console, counts=counts)


def write_or_exit(action: Callable[[], object], *, option: str = "--out") -> None:
    """Run a check or write of an output folder; a refused or unwritable folder exits 2, not a traceback.

    A refusal prints each path in the way on its own line, then the reason,
    naming the folder by the ``option`` that gave it (``--out``, ``--export``).
    """
    try:
        action()
    except OutputFolderError as exc:
        err = stderr()
        for path in exc.foreign[:PROBLEM_ROWS_SHOWN]:
            err.print(Text(path), highlight=False, soft_wrap=True)
        if len(exc.foreign) > PROBLEM_ROWS_SHOWN:
            err.print(f"… and {len(exc.foreign) - PROBLEM_ROWS_SHOWN} more", highlight=False)
        err.print(
            Text.assemble(("error", "bold red"), f": {option} {exc.folder}: {exc.reason}"),
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot write the output folder: {exc.strerror or exc} ({exc.filename or ''})")
