"""How the audit runs its one step over a batch: whole, or candidate by candidate.

Both executors implement :class:`Executor` and give the same parts and the
same tables (a test holds them equal on the SPEC fixtures and a generated
ledger); the audit picks one (``partition_by``) and never branches on the mode
again.

* :class:`WholeBatch` runs :func:`~evalframe.audit.step.check_and_select` once
  on every row; the tables are DataFrames.
* :class:`ByCandidate` runs it per candidate, with the candidate filter pushed
  into the reader (a hive lake is read one partition at a time), several
  candidates at a time on threads; the tables are kept by a
  :class:`~evalframe.audit.spill.Spill` and given as lazy scans. Exact,
  because every key and every summary number is per candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Final, Literal, Protocol

import polars as pl

from evalframe.audit.spill import Spill
from evalframe.audit.step import Options, Part, check_and_select, table
from evalframe.columns import CANDIDATE
from evalframe.engine import sorts_on_this_thread
from evalframe.load import Loaded, collect_input
from evalframe.plan import CASE_CODE, Plan
from evalframe.progress import Progress

#: A report table: in memory, or a lazy scan of what a spill holds.
Table = pl.DataFrame | pl.LazyFrame

#: ``ByCandidate`` audits several candidates at a time, on as many threads as keep the ledger rows audited at
#: once within this bound, so that peak memory stays about that of this many rows (calibration in
#: ``benchmarks/RESULTS.md``).
ROWS_IN_FLIGHT: Final = 6_000_000

#: At most this many candidates at a time: with more threads than cores, one candidate's work in polars fills
#: the time another spends in Python or waiting.
MAX_WORKERS: Final = 4


class Executor(Protocol):
    """Runs the audit's step over a batch and holds the parts' tables until the report takes them."""

    #: What ``report.meta["partition_by"]`` records: None (the whole batch) or ``"candidate"``.
    partition_by: Literal["candidate"] | None

    def run(self, plan: Plan, loaded: Loaded, options: Options, progress: Progress | None) -> list[Part]:
        """Every part's problems and, for the parts computed, their summary and slice tables.

        A part whose checks refused has no tables, and once a check refused no later part's attempts are
        selected (as for the whole batch).
        """
        ...

    def tables(self, plan: Plan, parts: Sequence[Part]) -> tuple[Table, Table]:
        """The units and attempts tables of the computed ``parts``, in candidate and unit order."""
        ...

    def release(self, owner: object | None) -> None:
        """Tie what the tables read to ``owner``'s lifetime (the report), or free it now when None (refused)."""
        ...


class WholeBatch:
    """The whole batch in one part; its tables are DataFrames."""

    partition_by: Literal["candidate"] | None = None

    def run(self, plan: Plan, loaded: Loaded, options: Options, progress: Progress | None) -> list[Part]:
        """One part: :func:`~evalframe.audit.step.check_and_select` over every row."""
        part = check_and_select(plan, loaded.frame, options)
        if progress is not None:
            progress("candidates audited", len(plan.candidates), len(plan.candidates))
        return [part]

    def tables(self, plan: Plan, parts: Sequence[Part]) -> tuple[Table, Table]:
        """The parts' units with the plan's text given back, and their attempts."""
        units = pl.concat(
            [
                table(p.units, p.unit_schema, plan.cases, plan.cases.columns)
                for p in parts
                if p.units is not None and p.unit_schema
            ]
        )
        attempts = pl.concat([p.attempts for p in parts if p.attempts is not None], how="diagonal_relaxed")
        return units, attempts.drop(CASE_CODE, strict=False)

    def release(self, owner: object | None) -> None:
        """Nothing is held outside the report."""


class ByCandidate:
    """Candidate by candidate, up to :data:`MAX_WORKERS` at a time; the tables are kept by a :class:`Spill`.

    Candidates are audited on threads (polars runs without the GIL), as many as keep the rows audited at
    once within :data:`ROWS_IN_FLIGHT` (one at a time when a candidate has more than half of it), so that
    peak memory stays about that of those rows. A candidate begins before the ones before it have been
    checked, so it may be computed when a sequential run would have stopped: its tables are then not kept,
    an error of that computation makes it redo only its checks, and its retry flags are dropped with all
    others (see :func:`~evalframe.audit.step.batch_problems`), so the outcome is the sequential run's.
    """

    partition_by: Literal["candidate"] | None = "candidate"

    def __init__(self, plan: Plan) -> None:
        self.spill = Spill(plan.cases)

    def run(self, plan: Plan, loaded: Loaded, options: Options, progress: Progress | None) -> list[Part]:
        """One part per candidate of the plan or the ledger, in candidate order, then one for rows without one."""
        frame = loaded.frame
        if CANDIDATE not in frame.collect_schema().names():
            parts = [self.spill.keep(check_and_select(plan, frame, options))]
        else:
            sizes = candidate_sizes(frame, loaded.source, in_folders=CANDIDATE in loaded.partitions)
            run = _CandidateRun(plan, frame, options, self.spill, workers(max(sizes.values(), default=0)))
            names = sorted({*plan.candidates, *(c for c in sizes if c is not None)})
            parts = run.all(names, progress)
            if None in sizes:
                nulls = frame.filter(pl.col(CANDIDATE).is_null())
                parts.append(check_and_select(plan.without_units(), nulls, options, compute=False))
        self.spill.flush()  # a failed write fails the audit here, and the folder goes
        return parts

    def tables(self, plan: Plan, parts: Sequence[Part]) -> tuple[Table, Table]:
        """Lazy scans over the spilled parts (in memory or in files)."""
        return self.spill.scan("units"), self.spill.scan("attempts")

    def release(self, owner: object | None) -> None:
        """Bind the spill's folder to ``owner`` (see :meth:`Spill.bind`), or discard it now."""
        if owner is None:
            self.spill.discard()
        else:
            self.spill.bind(owner)


@dataclass
class _CandidateRun:
    """The candidates of one by-candidate audit, run on a pool of ``workers`` threads in candidate order."""

    plan: Plan
    frame: pl.LazyFrame
    options: Options
    spill: Spill
    workers: int
    #: A check refused in a part taken so far: later candidates are only checked.
    blocked: bool = False
    parts: list[Part] = field(default_factory=list)

    def one(self, name: str, compute: bool) -> Part:
        """Candidate ``name``'s part (a candidate the plan lacks is checked against no unit)."""
        rows = self.frame.filter(pl.col(CANDIDATE).cast(pl.String) == name)
        sub_plan = self.plan.for_candidate(name) if name in self.plan.candidates else self.plan.without_units()
        if self.workers == 1:
            return check_and_select(sub_plan, rows, self.options, compute=compute)
        with sorts_on_this_thread():
            return check_and_select(sub_plan, rows, self.options, compute=compute)

    def finish(self, name: str, compute: bool, pending: Future[Part]) -> Part:
        """The part as a sequential run gives it: begun before a refusal was known, only its checks count."""
        if not (self.blocked and compute):
            return self.spill.keep(pending.result())
        try:
            part = pending.result()
        except Exception:  # noqa: BLE001  (an error of the work a sequential run never does; it redoes the checks)
            return self.one(name, compute=False)
        return replace(part, units=None, attempts=None)  # the batch is refused: its tables are never kept

    def all(self, names: Sequence[str], progress: Progress | None) -> list[Part]:
        """Every candidate's part, in the order of ``names``."""
        running: list[tuple[str, bool, Future[Part]]] = []

        def take_first() -> None:
            part = self.finish(*running.pop(0))
            self.blocked = self.blocked or part.checks_refused
            self.parts.append(part)
            if progress is not None:
                progress("candidates audited", len(self.parts), len(names))

        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="evalframe-audit") as pool:
            for name in names:
                running.append((name, not self.blocked, pool.submit(self.one, name, not self.blocked)))
                while len(running) >= self.workers:
                    take_first()
            while running:
                take_first()
        return self.parts


def workers(largest: int) -> int:
    """How many candidates to audit at a time when the largest has ``largest`` ledger rows (see ROWS_IN_FLIGHT)."""
    return max(1, min(MAX_WORKERS, ROWS_IN_FLIGHT // max(largest, 1)))


def candidate_sizes(frame: pl.LazyFrame, source: str, *, in_folders: bool) -> dict[str | None, int]:
    """Ledger rows per candidate (None: rows without one), in one pass over the candidate column.

    When the candidate names the lake's folders, each candidate's count is read from its folder's
    file footers instead (grouping the lake's rows by its folder column reads them all).
    """
    if in_folders:
        names = collect_input(frame.select(pl.col(CANDIDATE).unique()), source).to_series().to_list()
        return {
            name: collect_input(frame.filter(pl.col(CANDIDATE).eq_missing(name)).select(pl.len()), source).item()
            for name in names
        }
    sizes = collect_input(frame.group_by(pl.col(CANDIDATE).cast(pl.String)).len(), source)
    return dict(sizes.iter_rows())
