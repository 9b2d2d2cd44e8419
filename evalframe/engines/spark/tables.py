"""Where Spark writes the full units, attempts and problems tables (Parquet), and their types when read back."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUSES,
    OUTCOMES,
    RUN_ID,
    SCORE_STATUSES,
    SOURCE,
    TRIAL,
)
from evalframe.engines import core
from evalframe.engines.core import Lazy
from evalframe.engines.driver import RowWork
from evalframe.plan import Plan


def write(frame: Lazy, path: str) -> None:
    """Write ``frame`` to ``path`` as Parquet, in place of what is there."""
    frame.to_native().write.mode("overwrite").parquet(path)


def rename(old: Path, new: Path) -> None:
    """Move a local folder Spark wrote to its final name (on object storage the table is written again)."""
    if new.exists():
        shutil.rmtree(new)
    old.rename(new)


def units_schema(units: pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    """The units (or attempts) Parquet written by Spark, with the polars units table's types and order."""
    names = units.collect_schema().names()
    casts = {
        "exec_status": pl.Enum(list(EXEC_STATUSES)),
        "score_status": pl.Enum(list(SCORE_STATUSES)),
        "outcome": pl.Enum(list(OUTCOMES)),
        RUN_ID: pl.Categorical(),
        SOURCE: pl.Categorical(),
        "attempts": pl.UInt32(),
    }
    key = [CANDIDATE, CASE_ID, TRIAL, *(["counted_attempt"] if "counted_attempt" in names else [ATTEMPT])]
    return units.with_columns(pl.col(c).cast(t) for c, t in casts.items() if c in names).sort(key, nulls_last=False)


#: Characters that Spark (Hadoop's path globbing) and polars read as a pattern in a path, not as a name.
GLOB_CHARACTERS: Final = "*?[]{}"


def check_tables_path(tables: str | os.PathLike[str] | None) -> None:
    """Refuse a tables folder whose path holds :data:`GLOB_CHARACTERS`: it would be read back as a pattern.

    Raises
    ------
    ValueError
        Naming the path and the characters it holds.

    Examples
    --------
    >>> check_tables_path("/data/audit-2026")
    >>> try:
    ...     check_tables_path("/d[1]")
    ... except ValueError as exc:
    ...     print(exc)
    spark_tables '/d[1]' holds [ ], which Spark and polars read as a path pattern; choose a folder without *?[]{}
    """
    if tables is None:
        return
    path = os.fspath(tables)
    found = [c for c in GLOB_CHARACTERS if c in path]
    if found:
        msg = f"spark_tables {path!r} holds {' '.join(found)}, which Spark and polars read as a path pattern"
        raise ValueError(f"{msg}; choose a folder without {GLOB_CHARACTERS}")


@dataclass(frozen=True)
class Tables:
    """Where Spark writes the full tables: a local folder, or a URI (object storage)."""

    root: str

    @classmethod
    def make(cls, tables: str | os.PathLike[str] | None) -> Tables:
        """The folder ``tables`` (created when local), or a new temporary folder."""
        made = cls(os.fspath(tables) if tables is not None else tempfile.mkdtemp(prefix="evalframe-spark-"))
        if made.local:
            Path(made.root.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
        return made

    @property
    def local(self) -> bool:
        return "://" not in self.root or self.root.startswith("file://")

    def path(self, name: str) -> str:
        return f"{self.root.rstrip('/')}/{name}"


def write_tables(spark: Any, work: RowWork, plan: Plan, where: Tables) -> None:
    """Write the attempts, then the units from the attempts written (the retry windows run once)."""
    write(work.attempts, where.path("attempts"))
    written = nw.from_native(spark.read.parquet(where.path("attempts")))
    write(core.unit_outcomes(work.planned, written, plan.cases.columns), where.path("units"))
