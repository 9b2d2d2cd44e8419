"""Where a by-candidate audit holds its parts' units and attempts: in memory up to a budget, on disk beyond it.

The spill belongs to :class:`~evalframe.audit.executors.ByCandidate`; nothing
else knows it exists. Its temporary folder lives as long as the report whose
lazy tables read it (:meth:`Spill.bind`, a :func:`weakref.finalize` on the
report; also run at interpreter exit), or goes at once when the audit refused
(:meth:`Spill.discard`). No process-wide hook is registered.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Final, NamedTuple

import polars as pl

from evalframe.audit.step import PAYLOAD, Part, table
from evalframe.columns import CANDIDATE, CASE_ID
from evalframe.plan import CASE_CODE
from evalframe.validate import only_value

#: The spill keeps the parts' units and attempts in memory while they take at most this many bytes
#: (``DataFrame.estimated_size``, without the text the plan gives back), and writes the parts after them to
#: disk, so that memory stays bounded however many candidates there are (the budget's calibration is in
#: ``benchmarks/RESULTS.md``).
TABLES_IN_MEMORY: Final = 640 * 2**20


class _Stored(NamedTuple):
    """One part's table, kept in memory or written to a file, and what its scan gives back."""

    #: The frame (kept in memory) or its Arrow IPC file.
    held: pl.DataFrame | Path
    #: The table's columns and types, in order (the frame or file holds some of them, see ``step.table``).
    schema: pl.Schema
    #: The part's one candidate (not held), or None when it has several.
    candidate: str | None

    def scan(self) -> pl.LazyFrame:
        """What is held, lazily."""
        return self.held.lazy() if isinstance(self.held, pl.DataFrame) else pl.scan_ipc(self.held)


class Spill:
    """Per-partition units and attempts, kept in memory up to a budget and written to disk beyond it.

    The first parts' tables stay in memory while they take at most :data:`TABLES_IN_MEMORY` bytes; every
    later part's are written to a temporary folder (made at the first write), so memory stays bounded
    however many candidates there are. :meth:`scan` gives each table as one lazy frame over all parts.

    Parts are written as Arrow IPC with LZ4 (quicker to write and scan back than Parquet;
    :meth:`AuditReport.write` streams them into Parquet), on a background thread while the next part is
    audited (at most one part waits). Text that the plan already holds is neither kept nor written: a table
    keeps its rows' case code (``_case``) instead of ``case_id`` (and, for units, the plan's case columns),
    a part's one candidate is noted, not repeated, and all-null payload columns are noted with their dtype;
    the scan gives them back (a gather by code, a literal, a typed null), so the scanned table equals the
    table computed. Figures for each of these choices are in ``benchmarks/RESULTS.md``.

    Lifetime: the lazy frames :meth:`scan` hands out read the folder's files whenever they are collected.
    :meth:`bind` ties the folder to the report that holds them (removed when the report is garbage
    collected, or at interpreter exit); :meth:`discard` removes it at once.
    """

    def __init__(self, cases: pl.DataFrame) -> None:
        self.cases = cases
        self.folder: Path | None = None
        self.parts: dict[str, list[_Stored]] = {"units": [], "attempts": []}
        self.in_memory = 0  # bytes of the tables kept in memory
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalframe-spill")
        self._writing: list[Future[None]] = []
        #: Removes the folder when the spill is garbage collected or at exit, until :meth:`bind` hands it on.
        self._removal: weakref.finalize[..., Spill] | None = None

    def _folder(self) -> Path:
        """The folder parts are written to, made at the first write."""
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="evalframe-audit-"))
            # Until a report owns it (bind), the folder goes with the spill: never left behind.
            self._removal = weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)
        return self.folder

    def flush(self) -> None:
        """Wait until every part's tables are written (re-raising a write's error); no part follows."""
        while self._writing:
            self._writing.pop(0).result()
        self._writer.shutdown()

    def bind(self, owner: object) -> None:
        """Keep the written files while ``owner`` (the report whose tables scan them) lives.

        The folder is removed by a :func:`weakref.finalize` on ``owner``: when it is garbage collected,
        or at interpreter exit if it still lives then. Read or write the report's tables while it lives.
        """
        if self.folder is not None and self._removal is not None:
            weakref.finalize(owner, shutil.rmtree, self.folder, ignore_errors=True)
            self._removal.detach()

    def discard(self) -> None:
        """Drop every part and remove the folder now (the audit refused: no table reads them).

        Waits until no write is under way.
        """
        for pending in self._writing:
            pending.exception()  # waits; an error of a table nobody will read does not matter
        self._writing.clear()
        self._writer.shutdown()
        self.parts = {"units": [], "attempts": []}
        if self._removal is not None:
            self._removal()  # removes the folder now (once)

    def _from_plan(self, name: str) -> list[str]:
        """The columns of table ``name`` that the plan's cases give by case code.

        Every plan column of a unit; an attempt's case_id (its other columns are its ledger row's own, even
        one named like a plan column).
        """
        return self.cases.columns if name == "units" else [CASE_ID]

    def keep(self, part: Part) -> Part:
        """Hold the part's units and attempts (in memory within the budget, else in files); drop them from it."""
        tables = []
        for name, frame, schema in (("units", part.units, part.unit_schema), ("attempts", part.attempts, None)):
            if frame is None:
                continue
            table = schema or pl.Schema({c: t for c, t in frame.schema.items() if c != CASE_CODE})
            # Read without the GIL (an eager n_unique of the candidate text holds it).
            first = only_value(frame, CANDIDATE)
            from_plan = [c for c in self._from_plan(name) if c in frame.columns and CASE_CODE in frame.columns]
            nulls = [c for c in PAYLOAD if c in frame.columns and frame.get_column(c).null_count() == frame.height]
            stored = frame.drop([*from_plan, *nulls, *([CANDIDATE] if first is not None else [])])
            tables.append((name, stored, table, first))
        size = sum(int(stored.estimated_size()) for _, stored, _, _ in tables)
        in_memory = self.in_memory + size <= TABLES_IN_MEMORY
        if in_memory:
            self.in_memory += size
        for name, stored, table, first in tables:
            held: pl.DataFrame | Path = stored
            if not in_memory:
                held = self._folder() / f"{name}-{len(self.parts[name]):05d}.arrow"
                self._writing.append(self._writer.submit(stored.write_ipc, held, compression="lz4"))
            self.parts[name].append(_Stored(held, table, first))
        while len(self._writing) > 2:  # at most one part's tables wait to be written
            self._writing.pop(0).result()
        return replace(part, units=None, attempts=None)

    def scan(self, name: str) -> pl.LazyFrame:
        """One table, lazily: every part with its dropped columns given back, in the table's column order."""
        self.flush()
        from_plan = self._from_plan(name)
        scans = [table(p.scan(), p.schema, self.cases, from_plan, p.candidate) for p in self.parts[name]]
        return pl.concat(scans, how="diagonal_relaxed", parallel=False) if scans else pl.LazyFrame()
