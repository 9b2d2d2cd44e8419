"""How the audit runs its one step over a batch: whole, candidate by candidate, or on Spark.

Every runner implements :class:`Runner` and gives the same parts and the same
tables; the audit picks one (``partition_by``, ``engine``) and never branches on
it again: the report, its notes, meta and refusal are assembled the one way.

* :class:`WholeBatch` runs :func:`~evalframe.audit.step.check_and_select` once
  on every row; the tables are DataFrames.
* :class:`ByCandidate` runs it on one candidate's rows at a time, with the
  candidate filter pushed into the reader (a hive lake is read one partition
  at a time), and writes each candidate's units and attempts as Parquet files
  to a :class:`~evalframe.store.TableStore` the report owns; the tables
  are lazy scans of those files. Exact, because every key and every summary
  number is per candidate.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Protocol

import polars as pl

from evalframe.audit.step import Options, Part, check_and_select, table
from evalframe.columns import CANDIDATE, CASE_ID
from evalframe.errors import MissingExtra
from evalframe.load import Loaded, collect_input
from evalframe.plan import CASE_CODE, Plan
from evalframe.problems import Problems
from evalframe.progress import Progress
from evalframe.store import TableStore

#: A report table: in memory, or a lazy scan of the files a store holds.
Table = pl.DataFrame | pl.LazyFrame


class Runner(Protocol):
    """Runs the audit's step over a batch and gives the computed parts' tables."""

    #: What ``report.meta["partition_by"]`` records: None (the whole batch) or ``"candidate"``.
    partition_by: Literal["candidate"] | None
    #: Where the tables' files are (the report takes it), or None when they are in memory.
    store: TableStore | None

    def run(
        self, plan: Plan, loaded: Loaded, options: Options, progress: Progress | None, *, compute: bool = True
    ) -> list[Part]:
        """Every part's problems and, for the parts computed, their summary and slice tables.

        A part whose checks refused has no tables, and once a check refused no later part's attempts are
        selected (as for the whole batch). ``compute=False``: no part's (a task audited after another
        task's checks refused).
        """
        ...

    def tables(self, plan: Plan, parts: Sequence[Part]) -> tuple[Table, Table]:
        """The units and attempts tables of the computed ``parts``, in candidate and unit order."""
        ...

    def meta(self, layout_only: Sequence[str]) -> dict[str, Any]:
        """What ``report.meta`` records of how the audit ran (after ``run_ids``; see :func:`layout_meta`)."""
        ...


def layout_meta(partition_by: str | None, layout_only: Sequence[str]) -> dict[str, Any]:
    """The polars runners' meta: ``partition_by`` and the hive folder keys ignored (``partition_folders_ignored``)."""
    return {"partition_by": partition_by, "partition_folders_ignored": list(layout_only)}


class _OnPolars:
    """What the polars runners record in ``report.meta`` (:func:`layout_meta`)."""

    partition_by: Literal["candidate"] | None

    def meta(self, layout_only: Sequence[str]) -> dict[str, Any]:
        """See :func:`layout_meta`."""
        return layout_meta(self.partition_by, layout_only)


class WholeBatch(_OnPolars):
    """The whole batch in one part; its tables are DataFrames."""

    partition_by: Literal["candidate"] | None = None
    store: TableStore | None = None

    def run(
        self, plan: Plan, loaded: Loaded, options: Options, progress: Progress | None, *, compute: bool = True
    ) -> list[Part]:
        """One part: :func:`~evalframe.audit.step.check_and_select` over every row."""
        part = check_and_select(plan, loaded.frame, options, compute=compute)
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


class ByCandidate(_OnPolars):
    """Candidate by candidate; each one's units and attempts are written to the :class:`TableStore` at once.

    A file keeps its rows' case code (``_case``) instead of the text the plan holds (``case_id`` and,
    for units, the plan's case columns); the scan gives the text back by gathering the plan's cases.
    """

    partition_by: Literal["candidate"] | None = "candidate"

    def __init__(self) -> None:
        self.store: TableStore | None = TableStore()
        #: Per table, the schema of each written part (in candidate order).
        self.written: dict[str, list[pl.Schema]] = {"units": [], "attempts": []}

    def run(
        self, plan: Plan, loaded: Loaded, options: Options, progress: Progress | None, *, compute: bool = True
    ) -> list[Part]:
        """One part per candidate of the plan or the ledger, in candidate order, then one for rows without one."""
        frame = loaded.frame
        if CANDIDATE not in frame.collect_schema().names():
            return [self._write(plan, check_and_select(plan, frame, options, compute=compute))]
        found = candidate_names(frame, loaded.source)
        names = sorted({*plan.candidates, *(c for c in found if c is not None)})
        parts: list[Part] = []
        for name in names:
            rows = frame.filter(pl.col(CANDIDATE).cast(pl.String) == name)
            sub_plan = plan.for_candidate(name) if name in plan.candidates else plan.without_units()
            computing = compute and not any(p.checks_refused for p in parts)
            parts.append(self._write(plan, check_and_select(sub_plan, rows, options, compute=computing)))
            if progress is not None:
                progress("candidates audited", len(parts), len(names))
        if None in found:
            nulls = frame.filter(pl.col(CANDIDATE).is_null())
            parts.append(check_and_select(plan.without_units(), nulls, options, compute=False))
        return parts

    def _write(self, plan: Plan, part: Part) -> Part:
        """Write the part's units and attempts (without the plan's text) to the store; drop them from it."""
        assert self.store is not None
        for name, frame, schema in (("units", part.units, part.unit_schema), ("attempts", part.attempts, None)):
            if frame is None:
                continue
            from_plan = _from_plan(plan, name) if CASE_CODE in frame.columns else []
            self.written[name].append(schema or pl.Schema({c: t for c, t in frame.schema.items() if c != CASE_CODE}))
            # Read back whole and soon: quick LZ4 and no statistics (nothing is pruned by them).
            frame.drop(from_plan, strict=False).write_parquet(
                self.store.path(name, len(self.written[name]) - 1), compression="lz4", statistics=False
            )
        return replace(part, units=None, attempts=None)

    def tables(self, plan: Plan, parts: Sequence[Part]) -> tuple[Table, Table]:
        """Lazy scans over the written parts, with the plan's text given back."""
        assert self.store is not None
        scans = {
            name: [
                table(pl.scan_parquet(self.store.path(name, i)), schema, plan.cases, _from_plan(plan, name))
                for i, schema in enumerate(schemas)
            ]
            for name, schemas in self.written.items()
        }
        return tuple(  # type: ignore[return-value]
            pl.concat(s, how="diagonal_relaxed", parallel=False) if s else pl.LazyFrame() for s in scans.values()
        )


class OnSpark:
    """The step on Spark: one part, its problems the first rows of each kind with every kind's count.

    Spark reads ``results`` itself (Parquet paths, a table name or a Spark DataFrame): the
    :class:`~evalframe.load.Loaded` the audit passes only names them. Without ``tables`` the Parquet
    Spark writes is in a temporary folder the report owns (:attr:`store`), removed on refusal.
    """

    partition_by: Literal["candidate"] | None = None

    def __init__(self, results: object, tables: str | os.PathLike[str] | None, remote: str | None) -> None:
        self.results, self.where, self.remote = results, tables, remote
        self.store: TableStore | None = None
        self.facts: dict[str, Any] = {}
        self.scans: tuple[Table, Table] = (pl.LazyFrame(), pl.LazyFrame())

    def loaded(self) -> Loaded:
        """What the audit reads of the ledger: its name alone (no polars rows; Spark reads them in :meth:`run`).

        Raises
        ------
        MissingExtra
            Without ``pip install 'evalframe[spark]'``.
        ValueError
            For results that are neither a Spark DataFrame nor paths or a table name.
        """
        try:
            from evalframe.engines.spark.session import ledger_source
        except ModuleNotFoundError as exc:
            raise MissingExtra.of("spark", exc) from None
        return Loaded(pl.LazyFrame(), source=ledger_source(self.results))

    def run(
        self, plan: Plan, loaded: Loaded, options: Options, progress: Progress | None, *, compute: bool = True
    ) -> list[Part]:
        """One part: :func:`~evalframe.engines.spark.audit_on_spark` over the ledger (read by Spark)."""
        from evalframe.engines.spark import audit_on_spark

        done = audit_on_spark(plan, self.results, options, tables=self.where, spark_remote=self.remote)
        # The tables' temporary folder is the report's, as a by-candidate audit's files are.
        self.store = TableStore(Path(done.root)) if done.temporary else None
        self.facts = {"engine": "spark", "tables": done.root, "problem_counts": done.problem_counts}
        if done.units is not None and done.attempts is not None:
            self.scans = (done.units, done.attempts)
        if progress is not None:
            progress("candidates audited", len(plan.candidates), len(plan.candidates))
        problems = Problems.counted(done.problems, done.problem_counts)
        part = Part(problems, done.rows, frozenset(done.run_ids), done.shape, checks_refused=done.checks_refused)
        return [replace(part, summary=done.summary, slices=done.slices, case_slices=done.case_slices)]

    def tables(self, plan: Plan, parts: Sequence[Part]) -> tuple[Table, Table]:
        """Scans of the units and attempts Spark wrote."""
        return self.scans

    def meta(self, layout_only: Sequence[str]) -> dict[str, Any]:
        """``engine``, the ``tables`` folder and every problem kind's count."""
        return self.facts


def _from_plan(plan: Plan, name: str) -> list[str]:
    """The columns of table ``name`` that the plan's cases give by case code.

    Every plan column of a unit; an attempt's case_id (its other columns are its ledger row's own, even
    one named like a plan column).
    """
    return plan.cases.columns if name == "units" else [CASE_ID]


def candidate_names(frame: pl.LazyFrame, source: str) -> list[str | None]:
    """The distinct candidates of the ledger as text (None: rows without one), in one pass over the column."""
    return collect_input(frame.select(pl.col(CANDIDATE).cast(pl.String).unique()), source).to_series().to_list()
