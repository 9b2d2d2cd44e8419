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
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import polars as pl

from evalframe.scoped import ProcessSetting

P = ParamSpec("P")
R = TypeVar("R")


#: Polars' in-memory engine affinity while any call of :func:`in_memory` runs, the caller's otherwise
#: (pl.Config saves the settings it finds and gives them back when its context is left).
_AFFINITY = ProcessSetting(lambda: pl.Config(engine_affinity="in-memory"))


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
