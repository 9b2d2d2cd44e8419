"""``load()``: the reader of a path chosen by its name, and paths loaded together."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalframe.errors import InputFormatError
from evalframe.load.csv_strict import read_csv_strict
from evalframe.load.files import READERS_BY_SUFFIX, expand_path
from evalframe.load.jsonl import read_jsonl
from evalframe.load.lake import is_lake_table, read_lake_table
from evalframe.load.loaded import Loaded, PathLike
from evalframe.load.parquet import scan_parquet

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame
    from typing_extensions import TypeIs


def load(path: PathLike | Sequence[PathLike]) -> Loaded:
    """Load CSV, JSON Lines or Parquet input by its name.

    ``.csv`` → :func:`read_csv_strict`; ``.jsonl``/``.ndjson`` →
    :func:`read_jsonl`; ``.parquet`` → :func:`scan_parquet`; ``delta:PATH[@VERSION]`` → a Delta
    table's files at that version, ``iceberg:METADATA_JSON[@SNAPSHOT]`` an Iceberg snapshot's
    (:mod:`~evalframe.load.lake`). A directory or
    a glob loads the files it holds: Parquet ones as one lazy scan (hive
    ``key=value`` folders become columns), CSV / JSON Lines ones each
    strictly, stacked. A sequence of paths loads each and stacks them
    (columns unioned, missing ones null).

    Raises
    ------
    InputFormatError
        When a file is missing, empty, mixed Parquet and text in one folder,
        or in no readable format.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "plan.csv"
    >>> _ = p.write_text("case_id\\nquote\\n")
    >>> load(p).frame.select("case_id", "line").collect().to_dicts()
    [{'case_id': 'quote', 'line': 2}]
    """
    if not isinstance(path, (str, os.PathLike)):
        parts = [load(p) for p in path]
        if not parts:
            raise InputFormatError("", "no input files given")
        return Loaded(
            pl.concat([p.frame for p in parts], how="diagonal_relaxed"),
            pl.concat([p.problems for p in parts]),
            ",".join(p.source for p in parts),
            tuple(dict.fromkeys(k for p in parts for k in p.partitions)),
            tuple(dict.fromkeys(k for p in parts for k in p.stored)),
            tuple(f for p in parts for f in p.files),
            parts[0].provenance if len(parts) == 1 else None,  # a lake table's version read
        )
    if is_lake_table(path):
        return read_lake_table(str(path))
    files = expand_path(path)
    kind = READERS_BY_SUFFIX.get(Path(files[0]).suffix.lower(), "parquet")
    if kind == "parquet":
        return scan_parquet(path if len(files) > 1 or files[0] != str(path) else files[0])
    if len(files) > 1 or files[0] != str(path):
        loaded = load(files)
        return Loaded(loaded.frame, loaded.problems, str(path), stored=loaded.stored)
    return read_csv_strict(path) if kind == "csv" else read_jsonl(path)


def is_spark_frame(obj: object) -> TypeIs[SparkDataFrame]:
    """A PySpark or Spark Connect DataFrame, told by its class (pyspark is never imported here)."""
    return any(k.__module__.startswith("pyspark.") and k.__name__ == "DataFrame" for k in type(obj).__mro__)
