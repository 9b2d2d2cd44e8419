"""What ``evalframe import`` wrote beside a plan and a ledger: its notes and what each export recorded.

An audit of an import's ``plan.parquet`` and ``ledger.parquet`` (:func:`evalframe.audit`, in Python as on the
command line) carries the import's notes and provenance, as an audit of the exports themselves does; this
module finds them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import KIND, REFUSING, SOURCE
from evalframe.errors import InputFormatError
from evalframe.load import PathLike
from evalframe.problems import problems_frame
from evalframe.report.output import listed_unchanged, read_manifest

__all__ = ["IMPORTED", "IMPORT_FILES", "ImportFolder", "import_folder"]

#: The files ``evalframe import`` writes (with its manifest): the planned units, the ledger, the import's
#: notes and, per export file, what its header recorded (the importer's ``info``).
IMPORT_FILES: Final = ("plan.parquet", "ledger.parquet", "notes.parquet", "exports.json")
#: The ``outcome`` an ``evalframe import`` manifest records for a finished import.
IMPORTED: Final = "imported"


@dataclass(frozen=True)
class ImportFolder:
    """What ``evalframe import`` wrote in a folder beside its plan and ledger.

    Attributes
    ----------
    folder
        The import's folder.
    fmt
        The format imported (``inspect``, ``lm-eval``, ...), from the command its manifest records.
    notes
        The import's notes (a problems table: ``kind``, ``source``, ``detail``, ``refusing``, key columns).
    exports
        Per export file, what its header recorded (the provenance ``exports`` of an audit ``--from`` it).
    """

    folder: Path
    fmt: str
    notes: pl.DataFrame
    exports: list[dict[str, Any]]

    @property
    def provenance(self) -> dict[str, Any]:
        """The audit's provenance, as an audit ``--from FORMAT`` of the same exports records it."""
        return {"imported_from": self.fmt, "exports": self.exports, "import_folder": os.fspath(self.folder)}


def import_folder(plan: PathLike, results: PathLike | Sequence[PathLike]) -> ImportFolder | None:
    """The notes and exports ``evalframe import`` wrote beside ``plan`` and ``results``, or None.

    A plan and a ledger are an import's when they are the ``plan.parquet`` and
    ``ledger.parquet`` of one folder whose manifest (``evalframe-manifest.json``)
    records a finished ``evalframe import`` and lists them with its
    ``notes.parquet``, unchanged since (same size and SHA-256). Anything else
    (other files, several ledgers, a folder evalframe did not write) is None:
    the audit then has no notes but its own. An import whose files changed
    since (one rewritten or missing) has one note instead, ``import_altered``,
    so that what its notes flagged is not lost without a word. Paths are compared once resolved
    (relative or absolute, through a link), and the folder is the real one.

    Parameters
    ----------
    plan
        The plan file given to the audit.
    results
        The ledger file(s) given to the audit.

    Returns
    -------
    ImportFolder or None

    Raises
    ------
    evalframe.errors.InputFormatError
        Naming ``notes.parquet`` or ``exports.json`` when the manifest lists it unchanged but it does not
        read as the import wrote it (the manifest edited to match).

    Examples
    --------
    >>> import tempfile
    >>> from evalframe.importers import registry
    >>> from evalframe.read import exports_json, plan_units
    >>> from evalframe.report import write_output
    >>> export = "data/fixtures/inspect_ai/eval-set-retried/2025-05-12T20-28-13-04-00_popularity.json"
    >>> imported = registry()["inspect"]([export])
    >>> tables = {"plan": plan_units(imported), "ledger": imported.ledger, "notes": imported.notes}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = write_output(f"{folder}/imp", tables, texts={"exports.json": exports_json(imported)},
    ...                      command="evalframe import inspect", outcome="imported")
    ...     found = import_folder(f"{folder}/imp/plan.parquet", f"{folder}/imp/ledger.parquet")
    ...     notes = sorted(found.notes.get_column("kind"))
    >>> found.fmt, notes, found.exports[0]["task"]
    ('inspect', ['limited_run', 'run_status'], 'popularity')
    """
    paths = [results] if isinstance(results, str | os.PathLike) else list(results)
    plan_path = Path(os.path.realpath(plan))  # however the paths are spelled: relative, with .., through a link
    folder = plan_path.parent
    if plan_path.name != IMPORT_FILES[0] or [Path(os.path.realpath(p)) for p in paths] != [folder / IMPORT_FILES[1]]:
        return None
    manifest = read_manifest(folder)
    if manifest is None or manifest.get("outcome") != IMPORTED:
        return None
    command = str(manifest.get("command") or "")
    if not command.startswith("evalframe import "):
        return None
    fmt = command.removeprefix("evalframe import ").strip()
    changed = [name for name in IMPORT_FILES[:3] if not listed_unchanged(folder, manifest, name)]
    if changed:  # said, not silently dropped: the notes may have flagged a cancelled or limited run
        detail = f"{', '.join(changed)} changed or missing since evalframe import wrote them: its notes are not read"
        altered = problems_frame([{KIND: "import_altered", SOURCE: str(folder), "detail": detail, REFUSING: False}])
        return ImportFolder(folder, fmt, altered, [])
    exports: list[dict[str, Any]] = []
    name = IMPORT_FILES[3]
    try:
        if listed_unchanged(folder, manifest, name):
            doc = json.loads((folder / name).read_text(encoding="utf-8"))
            exports = [e for e in doc if isinstance(e, dict)] if isinstance(doc, list) else []
        name = IMPORT_FILES[2]
        notes = pl.read_parquet(folder / name)
    except (OSError, ValueError, RecursionError, pl.exceptions.PolarsError) as exc:  # the manifest vouches for them
        raise InputFormatError(str(folder / name), f"not as evalframe import wrote it ({type(exc).__name__})") from None
    return ImportFolder(folder, fmt, notes, exports)
