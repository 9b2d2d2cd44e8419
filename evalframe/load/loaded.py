"""The ``Loaded`` type every loader returns, and what the loaders share: path type and reserved columns."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from evalframe.columns import LINE, SOURCE
from evalframe.problems import problems_frame

#: Columns the loader adds to every row (SPEC §3 "reserved names"): an input column of that name is refused
#: (``unexpected_column``), never overwritten.
RESERVED: Final = (LINE, SOURCE)

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Loaded:
    """A raw frame read from a file together with the problems found reading it.

    Attributes
    ----------
    frame
        The records that could be read, columns as in the file (CSV: all
        String) plus ``line`` (Int64) and ``source`` (String).
    problems
        Structural problems (see :mod:`evalframe.problems`); empty when the
        file is well formed.
    source
        The path (or paths) the frame was read from.
    partitions
        Columns that came from hive ``key=value`` folders, not from the files.
    stored
        Of ``line`` and ``source``, those the files hold themselves (Parquet
        only, e.g. a ledger written by ``evalframe import``: they name the
        original export). A CSV or JSON Lines column of either name is
        refused instead.
    files
        The Parquet files read (empty for CSV and JSON Lines, read whole):
        a query over them that fails names the damaged one
        (:func:`~evalframe.load.naming_the_damaged_file`).
    provenance
        What an importer read from the exports' headers (``exports``, ...), recorded in the audit's meta
        unless the audit is given its own (:attr:`evalframe.importers.Imported.results` fills it).
    """

    frame: pl.LazyFrame
    problems: pl.DataFrame = field(default_factory=problems_frame)
    source: str = ""
    partitions: tuple[str, ...] = ()
    stored: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    provenance: Mapping[str, Any] | None = None


def reserved_problem(name: str, source: str, line: int | None) -> dict[str, Any]:
    """The ``unexpected_column`` problem of an input column named like one the loader adds."""
    what = "the row's line number" if name == LINE else "the file the row came from"
    msg = f"column {name!r} is reserved: evalframe adds it ({what}); rename it"
    return {"kind": "unexpected_column", "source": source, "line": line, "detail": msg}
