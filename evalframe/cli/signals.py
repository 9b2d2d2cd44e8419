"""Stop signals: the command's SIGINT/SIGTERM handling, the only process-wide signal state of evalframe.

The library never installs a handler. The command (:func:`~evalframe.cli.app.run`) exits on SIGINT or
SIGTERM with 128 + the signal's number after its clean-up, and hands :func:`hold_stop_signals` to every
output folder it writes, as the ``guard`` of :func:`~evalframe.report.write_output`, so a stop never
falls inside the exchange of the folder with its new version.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from evalframe._launch import STOP_SIGNALS, stopped_line


@contextmanager
def hold_stop_signals() -> Iterator[None]:
    """Run the block without SIGINT or SIGTERM stopping it; then act on the first that arrived.

    The exchange of an output folder with its new version takes milliseconds, but a stop inside it would
    leave the temporary folder behind for the next run to clean. During the block a signal is only noted;
    afterwards the handlers in place before are restored and the signal raised again, so it does what it
    would have done (``KeyboardInterrupt``, the command's exit, or the default action). Python runs signal
    handlers in the main thread only, so elsewhere the block runs as it is; a signal that is ignored, or
    whose handler was set outside Python, is left alone.

    Examples
    --------
    >>> with hold_stop_signals():
    ...     signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    False
    >>> signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    held = {s: h for s in STOP_SIGNALS if (h := signal.getsignal(s)) not in (None, signal.SIG_IGN)}
    for signum in held:
        signal.signal(signum, lambda signum, frame: arrived.append(signum))
    try:
        yield
    finally:
        for signum, handler in held.items():
            signal.signal(signum, handler)
        if arrived:
            signal.raise_signal(arrived[0])


def _stop(signum: int, frame: object) -> NoReturn:
    """Signal handler: leave as ``sys.exit`` does, so ``finally`` blocks and exit handlers still run.

    Later stop signals are ignored from here on: raised again while the clean-up waits for a query or a
    thread, they would cut it short (SIGKILL still ends the process).
    """
    for other in STOP_SIGNALS:
        if signal.getsignal(other) is _stop:
            signal.signal(other, signal.SIG_IGN)
    print(stopped_line(signum), file=sys.stderr)
    sys.exit(128 + signum)


def exit_on_stop_signals() -> None:
    """Make SIGINT and SIGTERM exit with 128 + their number, unless the process was started ignoring them.

    130 and 143 are the shell's convention, never an exit code of the contract (click turns Ctrl-C into
    1, the code of a refused batch); the exit runs ``finally`` blocks, so the audit's temporary folder is
    removed first (SIGTERM's default action ends the process with no clean-up at all). A signal the
    process was started ignoring (SIGINT of a background job) stays ignored.
    """
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _stop)
