"""Which polars engine the audit's queries run on.

The audit's frames are one partition held in memory at a time; for those,
polars' in-memory engine takes less time and memory than the streaming
engine (figures in ``benchmarks/RESULTS.md``). The choice is made for the
duration of a call only: a user's own polars settings are restored
afterwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
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
