"""Spark as a backend of :mod:`evalframe.engines.driver`: small tables sent to the cluster, shared frames cached."""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.engines.core import Lazy


class SparkFrames:
    """Spark frames for the driver's small polars tables; a frame several queries read is cached.

    Every frame kept is listed in ``cached``; :meth:`release` unpersists them when the audit ends.
    """

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.cached: list[Lazy] = []

    def frame(self, data: pl.DataFrame) -> Lazy:
        """``data`` as a Spark DataFrame (an empty table, whose types Spark cannot infer, has text columns)."""
        if not data.height:
            text = ", ".join(f"`{c}` string" for c in data.columns)
            empty: Lazy = nw.from_native(self.spark.createDataFrame([], text))
            return empty
        made: Lazy = nw.from_native(self.spark.createDataFrame(data.to_pandas()))
        return made

    def keep(self, frame: Lazy) -> Lazy:
        """The frame, cached by Spark (computed once, at its first use, for every later query that reads it)."""
        kept: Lazy = nw.from_native(frame.to_native().cache())
        self.cached.append(kept)
        return kept

    def release(self) -> None:
        """Unpersist every frame kept."""
        for frame in self.cached:
            frame.to_native().unpersist()
