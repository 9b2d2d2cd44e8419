"""Progress bars: the command's drawing of the steps the library reports (:mod:`evalframe.progress`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evalframe.progress import Progress as ProgressCallback


@contextlib.contextmanager
def progress_bars(console: Console | None = None) -> Iterator[ProgressCallback | None]:
    """Rich progress bars on stderr while the block runs, when stderr is a terminal; else no callback.

    The callback the library receives (``progress(stage, done, total)``, see :mod:`evalframe.progress`)
    adds one bar per stage (inputs read, candidates audited, outputs written) and moves it; bars stay on
    the screen when the block ends. Not on a terminal (CI logs, pipes, files), nothing is drawn.
    """
    console = console or Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    tasks: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bars.add_task(stage, total=total)
        bars.update(tasks[stage], completed=done, total=total)

    with bars:
        yield update
