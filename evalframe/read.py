"""Read another tool's export into polars frames, for analyses of your own (no audit runs).

Like Inspect AI's ``samples_df``, one call gives the tables an importer
reads: the planned units, the ledger of attempts and the import's notes.
(What ``evalframe import`` wrote is read back by the audit itself:
:mod:`evalframe.audit.imported`.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, NamedTuple

import polars as pl

from evalframe.columns import CANDIDATE, GradeKind
from evalframe.errors import ImportUnreadable
from evalframe.importers import Imported, registry
from evalframe.importers._kit import ImportRefused, as_numeric_scores
from evalframe.load import PathLike, fetched
from evalframe.load import storage_options as remote_options
from evalframe.plan.coding import CAND_CODE, CASE_CODE, UID
from evalframe.reconcile import planned_units_coded

#: Formats whose case id may come from a declared column (``id_column``) instead of the question text.
ID_COLUMN_FORMATS: Final = ("ragas", "deepeval")
#: The score a format reads under ``grade="numeric"`` when none is named (its default is a pass/fail verdict).
NUMERIC_SCORE: Final = {"promptfoo": "score", "every-eval-ever": "score"}

#: Formats whose importer reads files beside the one given (lm-eval: the results file beside a samples file;
#: HELM: the run folder of a run file; every_eval_ever: the instance file a record names): a URL naming one
#: object brings its folder's objects too (:func:`~evalframe.load.fetched`).
BESIDE: Final = ("lm-eval", "helm", "every-eval-ever")


class Frames(NamedTuple):
    """What an export holds, as polars DataFrames."""

    #: One row per planned unit: ``candidate``, ``case_id``, ``trial`` and the plan's case columns.
    plan: pl.DataFrame
    #: One row per attempt in the status-ledger shape (see :data:`evalframe.importers.LEDGER_SCHEMA`).
    ledger: pl.DataFrame
    #: The import's findings as a problems table (kind, source, line, detail, refusing, ...).
    notes: pl.DataFrame


def plan_units(imported: Imported) -> pl.DataFrame:
    """The planned units of an import with its case columns: what ``evalframe import`` writes as plan.parquet.

    Columns: ``candidate``, ``case_id`` (String), ``trial`` (Int64) and each case column, gathered by case code
    (no join on the case ids' text: 6M units of a 3M-case plan cost what their codes cost).
    """
    units = planned_units_coded(imported.plan).drop(CAND_CODE, CASE_CODE, UID)
    return units.with_columns(pl.col(CANDIDATE).cast(pl.String)).collect()


def import_exports(
    format: str,
    paths: PathLike | Sequence[PathLike],
    *,
    score: str | None = None,
    grade: GradeKind = "binary",
    id_column: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> Imported:
    """Read export files with the format's importer, as ``evalframe audit --from`` and ``evalframe import`` do.

    The one route from export files to an :class:`~evalframe.importers.Imported` (plan, ledger, notes):
    the command line and :func:`read` both take it, so they read the same numbers.

    Parameters
    ----------
    format, paths, score, grade
        As :func:`read`. Under ``grade="numeric"`` with no ``score`` named, a format whose default is a
        pass/fail verdict reads its numeric score instead (:data:`NUMERIC_SCORE`: promptfoo's weighted
        ``score``, every_eval_ever's ``evaluation.score``).
    id_column
        ragas and DeepEval CSVs: the column naming the cases (default: the question text).
    storage_options
        Options of the object store URLs in ``paths`` are read from (polars' ``storage_options`` keys),
        over the environment's credentials. A URL's objects (a file, a folder's, a glob's matches; for
        :data:`BESIDE` formats, a file's folder's objects too) are fetched whole into a private temporary
        folder, removed after the import
        (:func:`~evalframe.load.fetched`); the import names each by its URL (ledger ``source``, notes,
        ``info``, ``files``, errors).

    Raises
    ------
    ValueError
        When ``format`` names no importer, or ``id_column`` is given for a format without one.
    evalframe.errors.ImportUnreadable, evalframe.importers._kit.ImportRefused
        As :func:`read`.
    evalframe.errors.InputFormatError
        When a URL's object or folder is missing, the store denies the request or cannot be reached (one
        line naming the URL, no option value: :func:`evalframe.load.remote.store_error`).
    """
    from evalframe.importers import deepeval, ragas

    readers = registry()
    if format not in readers:
        msg = f"no importer named {format!r} (importers: {', '.join(sorted(readers))})"
        raise ValueError(msg)
    files = [paths] if isinstance(paths, str | bytes) or not isinstance(paths, Sequence) else list(paths)
    if score is None and grade == "numeric":
        score = NUMERIC_SCORE.get(format)
    if id_column is not None and format not in ID_COLUMN_FORMATS:
        msg = f"id_column names the case column of {' or '.join(ID_COLUMN_FORMATS)} exports only"
        raise ValueError(msg)
    beside = format in BESIDE  # an export is parsed whole: a URL's objects are fetched first
    with remote_options(storage_options), fetched(files, beside=beside) as (local, names):
        try:
            if id_column is None:
                imported = readers[format](local, score=score)
            else:
                imported = (ragas.read if format == "ragas" else deepeval.read)(local, score=score, id_column=id_column)
        except ImportUnreadable as exc:
            raise _renamed_error(exc, names) from None
        except ImportRefused as exc:
            raise ImportRefused(_renamed(exc.all_problems().collect(), names)) from None
    imported = _renamed_import(imported, names)
    return as_numeric_scores(imported) if grade == "numeric" else imported


def _named(text: str, names: dict[str, str]) -> str:
    """``text`` with each fetched file's local place written as its URL (``names``: longest place first)."""
    for place, url in names.items():
        text = text.replace(place, url)
    return text


def _renamed(frame: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """``frame`` with its text columns naming URLs where they named fetched files (types kept)."""
    if not names:
        return frame
    text = [c for c, t in frame.schema.items() if t in (pl.String, pl.Categorical, pl.Enum)]
    renamed = []
    for c in (c for c in text if not isinstance(frame.schema[c], pl.Enum)):
        column = pl.col(c).cast(pl.String)
        for place, url in names.items():  # longest first: one folder's copies are not named by another's URL
            column = column.str.replace_all(place, url, literal=True)
        renamed.append(column.cast(frame.schema[c]))
    return frame.with_columns(renamed) if renamed else frame


def _renamed_value(value: Any, names: dict[str, str]) -> Any:
    """A JSON-like value (an import's ``info``) with fetched files named by their URLs."""
    if isinstance(value, str):
        return _named(value, names)
    if isinstance(value, dict):
        return {_named(str(k), names): _renamed_value(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_renamed_value(v, names) for v in value)
    return value


def _renamed_import(imported: Imported, names: dict[str, str]) -> Imported:
    """An import of fetched files naming their URLs: the plan's source, the ledger's, the notes, info, files."""
    if not names:
        return imported
    return replace(
        imported,
        plan=replace(imported.plan, source=_named(imported.plan.source, names)),
        ledger=_renamed(imported.ledger, names),
        notes=_renamed(imported.notes, names),
        info=_renamed_value(imported.info, names),
        files=[_named(f, names) for f in imported.files],
    )


def _renamed_error(exc: ImportUnreadable, names: dict[str, str]) -> ImportUnreadable:
    """The same unreadable-export error, naming URLs where it named fetched files."""
    return ImportUnreadable(
        _named(exc.path, names),
        _named(exc.detail, names),
        line=exc.line,
        other_files=[_named(f, names) for f in exc.other_files],
        notes=_renamed(exc.notes, names),
    )


def read(
    format: str,
    paths: PathLike | Sequence[PathLike],
    *,
    score: str | None = None,
    grade: GradeKind = "binary",
    id_column: str | None = None,
    storage_options: Mapping[str, str] | None = None,
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
        numeric`` does (:func:`~evalframe.importers._kit.as_numeric_scores`); with no ``score`` named,
        promptfoo and every_eval_ever read their numeric score (see :func:`import_exports`).
    id_column
        ragas and DeepEval CSVs: the column naming the cases.
    storage_options
        Options of the object store of URLs in ``paths`` (``s3://``, ``gs://``, ``az://``, ``https://``;
        polars' ``storage_options`` keys): see :func:`import_exports`.

    Returns
    -------
    Frames
        ``plan`` (one row per planned unit with the case columns),
        ``ledger`` (one row per attempt) and ``notes``.

    Raises
    ------
    ValueError
        When ``format`` names no importer, or ``id_column`` is given for a format without one.
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
    imported = import_exports(
        format, paths, score=score, grade=grade, id_column=id_column, storage_options=storage_options
    )
    return Frames(plan=plan_units(imported), ledger=imported.ledger, notes=imported.notes)


def exports_json(imported: Imported) -> str:
    """What each export file's header recorded (the importer's ``info``), as ``evalframe import`` writes it."""
    return json.dumps(imported.info, indent=2, ensure_ascii=False, default=str) + "\n"
