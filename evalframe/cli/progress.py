"""Progress for the command: rich bars on a terminal, a plain line every ten seconds in a log.

The library reports steps (:mod:`evalframe.progress`); this module draws them.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from evalframe.progress import Progress as ProgressCallback

#: Seconds between two plain progress lines when stderr is not a terminal (a CI log): never minutes of silence.
PLAIN_EVERY: Final = 10.0
#: Seconds between two looks at the clock by the thread that writes the plain lines.
_LOOK_EVERY: Final = 1.0


class PlainLines:
    """Progress for a log: a plain line every :data:`PLAIN_EVERY` seconds, naming the last step reported.

    Called as the library's callback (``progress(stage, done, total)``), it remembers the step;
    :meth:`tick`, called by a thread about once a second (and after each step), writes
    ``evalframe: 0:00:20 elapsed; candidates audited 3/20`` when ``every`` seconds have passed since the
    last line. ``clock`` gives seconds (a fake clock in tests); a run shorter than ``every`` writes nothing.

    Examples
    --------
    >>> now = [0.0]
    >>> lines = PlainLines(print, clock=lambda: now[0])
    >>> lines("inputs read", 1, 1); now[0] = 10.5; lines.tick(); now[0] = 12.0; lines.tick()
    evalframe: 0:00:10 elapsed; inputs read 1/1
    """

    def __init__(
        self, write: Callable[[str], None], *, clock: Callable[[], float] = time.monotonic, every: float = PLAIN_EVERY
    ) -> None:
        self._write, self._clock, self._every = write, clock, every
        self._start = self._last = clock()
        self._step = "reading the inputs"
        self._lock = threading.Lock()

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            self._step = f"{stage} {done}/{total}"
        self.tick()

    def tick(self) -> None:
        """Write a line when ``every`` seconds have passed since the last one (or since the start)."""
        with self._lock:
            now = self._clock()
            if now - self._last < self._every:
                return
            self._last = now
            seconds = int(now - self._start)
            self._write(
                f"evalframe: {seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d} elapsed; {self._step}"
            )


@contextlib.contextmanager
def _ticking(lines: PlainLines) -> Iterator[None]:
    """A daemon thread that calls ``lines.tick()`` about once a second while the block runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(_LOOK_EVERY):
            lines.tick()

    thread = threading.Thread(target=loop, name="evalframe-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextlib.contextmanager
def progress_bars(console: Console | None = None, *, show: bool = True) -> Iterator[ProgressCallback | None]:
    """Progress on stderr while the block runs: rich bars on a terminal, plain lines in a log.

    On a terminal the callback the library receives (``progress(stage, done, total)``, see
    :mod:`evalframe.progress`) adds one bar per stage (inputs read, candidates audited, outputs written)
    and moves it; a spinner and the elapsed time move between steps (rich redraws ten times a second), so
    a long step is never a frozen screen; bars stay on the screen when the block ends. Not on a terminal
    (CI logs, pipes, files): :class:`PlainLines`, one line every :data:`PLAIN_EVERY` seconds. With
    ``show=False`` (``--no-progress``) nothing is drawn and the library receives no callback (``None``).
    """
    if not show:
        yield None
        return
    console = console or Console(stderr=True)
    if not console.is_terminal:
        lines = PlainLines(lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True))
        with _ticking(lines):
            yield lines
        return
    bars = Progress(
        SpinnerColumn(finished_text="✓"),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    # Until the first step is reported (reading the inputs), a spinner and the elapsed time already move.
    tasks: dict[str, Any] = {"": bars.add_task("reading the inputs", total=None)}

    def update(stage: str, done: int, total: int) -> None:
        if "" in tasks:
            bars.remove_task(tasks.pop(""))
        if stage not in tasks:
            tasks[stage] = bars.add_task(stage, total=total)
        bars.update(tasks[stage], completed=done, total=total)

    with bars:
        yield update
