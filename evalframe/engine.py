"""Which polars engine the audit's queries run on.

The audit's frames are one partition held in memory at a time; for those,
polars' in-memory engine takes less time and memory than the streaming
engine (figures in ``benchmarks/RESULTS.md``). The choice is made for the
duration of a call only: a user's own polars settings are restored
afterwards, also when calls nest or overlap on several threads (polars'
settings are the process's, so the first call to start sets the affinity and
the last to end restores what the first found).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from contextlib import ExitStack
from typing import ParamSpec, TypeVar

import polars as pl

P = ParamSpec("P")
R = TypeVar("R")


class _Affinity:
    """Polars' in-memory engine affinity while any call of :func:`in_memory` runs, the caller's otherwise."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._settings = ExitStack()

    def __enter__(self) -> None:
        with self._lock:
            if not self._running:
                # pl.Config saves the settings it finds and gives them back when its context is left.
                self._settings.enter_context(pl.Config(engine_affinity="in-memory"))
            self._running += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._running -= 1
            if not self._running:
                self._settings.close()


_AFFINITY = _Affinity()


def in_memory(func: Callable[P, R]) -> Callable[P, R]:
    """Run ``func`` with polars' engine affinity set to ``in-memory``, the caller's restored after the last call.

    Calls may nest and overlap on several threads: the affinity is set when the first starts and the
    settings it found are restored when the last ends (returning or raising).

    Examples
    --------
    >>> import os
    >>> @in_memory
    ... def affinity() -> str | None:
    ...     return os.environ.get("POLARS_ENGINE_AFFINITY")
    >>> with pl.Config(engine_affinity="streaming"):
    ...     print(affinity(), os.environ.get("POLARS_ENGINE_AFFINITY"))
    in-memory streaming
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with _AFFINITY:
            return func(*args, **kwargs)

    return wrapper
