"""Which polars engine the audit's queries run on.

The audit's frames are one partition held in memory at a time; for those,
polars' in-memory engine takes less time and memory than the streaming
engine (figures in ``benchmarks/RESULTS.md``). The choice is made for the
duration of a call only: a user's own polars settings are restored
afterwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

import polars as pl

P = ParamSpec("P")
R = TypeVar("R")


def in_memory(func: Callable[P, R]) -> Callable[P, R]:
    """Run ``func`` with polars' engine affinity set to ``in-memory`` (restored on return)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with pl.Config(engine_affinity="in-memory"):
            return func(*args, **kwargs)

    return wrapper


#: Whether a sort may run on polars' thread pool. Off while the audit runs several candidates at once on
#: threads of its own, which keep the cores busy already: a sort on one thread then spends less CPU on
#: coordinating the pool (see benchmarks/RESULTS.md).
_SORT_ON_POOL: ContextVar[bool] = ContextVar("evalframe_sort_on_pool", default=True)


def sort_on_pool() -> bool:
    """Whether this thread's sorts may use polars' thread pool (see :func:`sorts_on_this_thread`)."""
    return _SORT_ON_POOL.get()


@contextmanager
def sorts_on_this_thread() -> Iterator[None]:
    """Within the block, the audit's large sorts run on the calling thread only (``multithreaded=False``)."""
    token = _SORT_ON_POOL.set(False)
    try:
        yield
    finally:
        _SORT_ON_POOL.reset(token)
