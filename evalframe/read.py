"""Read another tool's export into polars frames, for analyses of your own (no audit runs).

Like Inspect AI's ``samples_df``, one call gives the tables an importer
reads: the planned units, the ledger of attempts and the import's notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import polars as pl

from evalframe.columns import CASE_ID, GradeKind
from evalframe.importers import Imported, registry
from evalframe.importers._kit import as_numeric_scores
from evalframe.load import PathLike


class Frames(NamedTuple):
    """What an export holds, as polars DataFrames."""

    #: One row per planned unit: ``candidate``, ``case_id``, ``trial`` and the plan's case columns.
    plan: pl.DataFrame
    #: One row per attempt in the status-ledger shape (see :data:`evalframe.importers.LEDGER_SCHEMA`).
    ledger: pl.DataFrame
    #: The import's findings as a problems table (kind, source, line, detail, refusing, ...).
    notes: pl.DataFrame


def plan_units(imported: Imported) -> pl.DataFrame:
    """The planned units of an import with its case columns: what ``evalframe import`` writes as plan.parquet."""
    return imported.plan.planned_units().join(imported.plan.cases.lazy(), on=CASE_ID, how="left").collect()


def read(
    format: str, paths: PathLike | Sequence[PathLike], *, score: str | None = None, grade: GradeKind = "binary"
) -> Frames:
    """Read export files of another tool into polars frames: planned units, ledger and notes.

    Parameters
    ----------
    format
        An importer of :func:`evalframe.importers.registry`: ``inspect``,
        ``lm-eval``, ``helm``, ``promptfoo``, ``openai-evals``, ...
    paths
        The export files (or one of them).
    score
        The scorer / metric / stat to read (None: the importer's default).
    grade
        ``binary`` (default) or ``numeric``, as the audit will be told (``ef.audit(..., grade=)``). With
        ``numeric``, the ledger has no ``passed`` column (neither one derived from ``score == 1`` nor the
        export's own verdict), so that a pass needs a declared threshold, as ``evalframe audit --grade
        numeric`` does (:func:`~evalframe.importers._kit.as_numeric_scores`).

    Returns
    -------
    Frames
        ``plan`` (one row per planned unit with the case columns),
        ``ledger`` (one row per attempt) and ``notes``.

    Raises
    ------
    ValueError
        When ``format`` names no importer.
    evalframe.errors.ImportUnreadable
        When a file could not be read at all (the file, line and reason; every
        note in ``notes``).
    evalframe.importers._kit.ImportRefused
        When another note refuses the import (its problems are on the exception).

    Examples
    --------
    >>> import evalframe as ef
    >>> export = "data/fixtures/inspect_ai/eval-set-retried/2025-05-12T20-28-13-04-00_popularity.json"
    >>> frames = ef.read("inspect", export)
    >>> frames.plan.columns, frames.ledger.height, frames.notes.height
    (['candidate', 'case_id', 'trial', 'task'], 3, 2)
    """
    readers = registry()
    if format not in readers:
        msg = f"no importer named {format!r} (importers: {', '.join(sorted(readers))})"
        raise ValueError(msg)
    files = [paths] if isinstance(paths, str | bytes) or not isinstance(paths, Sequence) else list(paths)
    imported = readers[format](files, score=score)
    if grade == "numeric":
        imported = as_numeric_scores(imported)
    return Frames(plan=plan_units(imported), ledger=imported.ledger, notes=imported.notes)
