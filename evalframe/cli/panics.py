"""The reader's panic reports kept off the terminal: the command's stderr, split from native code's.

A damaged Parquet page can make polars' Rust reader panic. Python gets a
``PanicException``, which the loaders turn into one ``error:`` line naming the
file (exit 2); but Rust's panic hook has already written its report (``thread
'…' panicked at crates/…``, and a stack backtrace under ``RUST_BACKTRACE``)
straight to file descriptor 2, where no Python code can catch it. The command
(:func:`~evalframe.cli.app.run`, never the library) therefore gives Python's
``sys.stderr`` a descriptor of its own on the real stderr, and points
descriptor 2, which only native code writes to directly, at a pipe: a thread
copies what arrives there to the real stderr, leaving out each panic report,
from its ``thread '…' panicked at`` line through its closing ``note:`` line
(Rust prints that note after the first report of a process only: native output
after a later report, rare as it is, is left out with it).
"""

from __future__ import annotations

import atexit
import io
import os
import re
import sys
import threading
from contextlib import suppress
from typing import Final

#: The first line of a Rust panic report (the thread's id in parentheses since Rust 1.88).
PANIC_REPORT: Final = re.compile(rb"^thread '[^']*'(?: \(\d+\))? panicked at ")
#: The line that closes the first panic report of a process (with or without a backtrace).
REPORT_END: Final = b"note: "


class PanicFilter:
    """Lines of native stderr in, the lines outside Rust panic reports out.

    A report opens with an empty line and ``thread '…' panicked at …``; an empty line is held back until
    the next line shows whether a report starts.

    Examples
    --------
    >>> f = PanicFilter()
    >>> text = [b"\\n", b"thread 'x' (7) panicked at a.rs:1:2:\\n", b"boom\\n",
    ...         b"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\\n", b"kept\\n"]
    >>> [line for t in text for line in f.feed(t)]
    [b'kept\\n']
    """

    def __init__(self) -> None:
        self.inside = False
        self.blank = False

    def feed(self, line: bytes) -> list[bytes]:
        """The lines to show now, given the next ``line``."""
        held, self.blank = [b"\n"] if self.blank else [], False
        if PANIC_REPORT.match(line):
            self.inside = True
            return []
        if self.inside:
            self.inside = not line.startswith(REPORT_END)
            return []
        if line in (b"\n", b"\r\n"):
            self.blank = True
            return held
        return [*held, line]


def _copy(pipe: int, out: int) -> None:
    """Copy the lines arriving on ``pipe`` to ``out``, leaving out panic reports, until the pipe closes.

    The pipe is read to its end even when ``out`` can no longer be written (a closed terminal): a writer
    to a full pipe that nobody reads would wait for ever.
    """
    keep = PanicFilter()
    shown = True
    with open(pipe, "rb", buffering=0, closefd=True) as reader:
        for line in reader:
            for text in keep.feed(line) if shown else ():
                try:
                    os.write(out, text)
                except OSError:  # the real stderr is gone: nothing to show it on, but keep the pipe drained
                    shown = False
    if keep.blank and shown:
        with suppress(OSError):
            os.write(out, b"\n")


def hide_native_panic_reports() -> None:
    """Route native code's writes to stderr through a filter that drops Rust panic reports.

    Only the command calls this, once, before its work starts. Python's ``sys.stderr`` keeps writing straight
    to the real stderr (a duplicate of descriptor 2, line-buffered); descriptor 2 becomes a pipe whose
    reader thread copies everything but panic reports there. At exit descriptor 2 is restored, the pipe
    closes, and the thread's last lines are copied before the process ends. Where descriptors cannot be
    duplicated, stderr is left as it is.
    """
    try:
        sys.stderr.flush()
        real = os.dup(2)
        out = os.dup(2)
        pipe, writer = os.pipe()
    except (OSError, ValueError):
        return
    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    sys.stderr = io.TextIOWrapper(
        open(real, "wb", buffering=0, closefd=True),
        encoding=encoding,
        errors="backslashreplace",
        line_buffering=True,
        write_through=True,
    )
    os.dup2(writer, 2)
    os.close(writer)
    copier = threading.Thread(target=_copy, args=(pipe, out), name="evalframe-stderr", daemon=True)
    copier.start()

    def restore() -> None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(out, 2)  # closes the pipe's last writer: the thread reads to the end and stops
        copier.join(timeout=2)

    atexit.register(restore)
