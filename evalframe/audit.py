"""The audit: validate the whole batch, reconcile, select attempts, count.

Nothing is computed until the whole batch has been checked: if any refusing
problem exists, :func:`audit` raises :class:`~evalframe.errors.AuditRefused`
with all of them and no rate exists anywhere.
"""

from __future__ import annotations

import atexit
import math
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple, TypeVar, get_args

import polars as pl

from evalframe._version import evalframe_version
from evalframe.attempts import RETRY_FLAGS, select_attempts
from evalframe.columns import (
    ANSWER,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    EXEC_FAILURES,
    EXEC_STATUS,
    EXEC_STATUSES,
    KIND,
    LIMIT,
    LINE,
    RUN_ID,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    GradeKind,
    MissingPolicy,
    RetryPolicyName,
)
from evalframe.engine import in_memory, sorts_on_this_thread
from evalframe.errors import AuditRefused
from evalframe.funnel import check_reducer, funnel, outcome_in, unit_outcomes, with_uncertainty
from evalframe.load import Loaded, PathLike, collect_input, is_spark_frame, load
from evalframe.plan import CAND_CODE, CASE_CODE, UID, Plan, case_column
from evalframe.problems import Problems, problems_frame
from evalframe.progress import Progress
from evalframe.reconcile import MISSING_IDS_SHOWN, planned_units_coded, reconcile
from evalframe.report.model import AuditReport
from evalframe.slices import Bins, bin_edges, case_slices, missingness_tests, selective_flag, slice_funnel
from evalframe.validate import FILE_PROBLEMS, KNOWN_COLUMNS, only_value, validate_ledger

#: A frame, eager or lazy (helpers that keep the kind they are given).
FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

#: Internal integer-code columns, dropped from every report table.
CODES = [CAND_CODE, CASE_CODE, UID]

#: Units carry the candidate as an Enum while they are counted (cheap to group by); tables give it as text.
_AS_TEXT = pl.col(CANDIDATE).cast(pl.String)

#: ``partition_by="auto"`` audits candidate by candidate from this many ledger rows or planned units on
#: (the whole batch's work grows with both: 2M ledger rows against a 2.9M-unit plan took 3.8-4.3 s whole,
#: 2.5-3.1 s by candidate). Below it the whole batch is the faster (each candidate costs about 30 ms more)
#: and takes under 1 GiB; measured on the benchmark's clean data, 20 candidates: 1M rows 1.0-1.1 s whole,
#: 1.3-1.6 s by candidate; 2M rows 1.7-2.3 s both ways (0.8-0.9 against 0.45 GiB); 4M rows 2.7-3.7 s
#: whole, 2.3-2.5 s by candidate.
AUTO_PARTITION_ROWS: Final = 2_000_000

Results = pl.DataFrame | pl.LazyFrame | Loaded | PathLike | Sequence[PathLike]


def _as_loaded(results: Results) -> Loaded:
    if isinstance(results, Loaded):
        return results
    if isinstance(results, (pl.DataFrame, pl.LazyFrame)):
        frame = results.lazy()
        if LINE not in frame.collect_schema().names():  # numbered before any partition filter: row n is line n
            frame = frame.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
        return Loaded(frame, source="results")
    return load(results)


@dataclass(frozen=True)
class _Options:
    retry: RetryPolicyName
    max_attempts: int | None
    retry_on: tuple[str, ...]
    strict_retries: bool
    missing: MissingPolicy
    grade: GradeKind
    score_range: tuple[float, float]
    pass_threshold: float | None
    slices: tuple[str, ...] = ()
    bins: Bins | None = None
    confidence: float = 0.95
    extra_columns: tuple[str, ...] = ()
    reducer: str = "mean"


@dataclass(frozen=True)
class _Part:
    """What one (partition of a) batch gave: its problems and, when clean, its tables."""

    problems: Problems
    rows: int
    run_ids: frozenset[str]
    shape: str
    summary: pl.DataFrame | None = None
    slices: pl.DataFrame | None = None
    #: Cases counted by their planned, ungraded and missing units per slice value (the missingness test's input).
    case_slices: pl.DataFrame | None = None
    #: Units counted on codes: ``candidate`` (Enum), ``_case`` and the outcome columns, without the plan's text
    #: and all-null payload columns, which :func:`_table` gives back (see ``unit_schema``).
    units: pl.DataFrame | None = None
    attempts: pl.DataFrame | None = None
    #: The units table's columns and types, in order.
    unit_schema: pl.Schema | None = None
    #: Validation or reconciliation refused: no attempt is selected anywhere in the batch.
    checks_refused: bool = False


def _check_and_select(plan: Plan, frame: pl.LazyFrame, o: _Options, *, compute: bool = True) -> _Part:
    """Validate and reconcile one batch; only when nothing refuses, select attempts and summarise.

    Each intermediate frame is let go as soon as the next one exists (``del``), so a partition's peak
    memory holds about two copies of its rows, not every stage's (50M rows, two candidates at a time:
    peak RSS 2.95 -> 2.34 GiB).
    """
    validated = validate_ledger(
        frame,
        plan,
        grade=o.grade,
        score_range=o.score_range,
        pass_threshold=o.pass_threshold,
        extra_columns=o.extra_columns,
    )
    ledger, checked, shape = validated.ledger, validated.problems, validated.shape
    del validated
    found = _Part(Problems.gather([checked]), ledger.height, frozenset(), shape)
    if not ledger.width:
        return replace(found, checks_refused=bool(found.problems.refusing))
    rec = reconcile(ledger, plan, missing=o.missing)
    del ledger
    problems = Problems.gather([found.problems, rec.problems])
    refusing = bool(problems.refusing)
    if refusing or not compute:
        return replace(found, problems=problems, checks_refused=refusing)
    planned, compact = rec.planned, _compact(rec.ledger)
    del rec
    # Read from the Categorical (its codes are hashed, not the text); only a batch that is not refused needs them.
    run_ids = compact.lazy().select(pl.col(RUN_ID).drop_nulls().unique().cast(pl.String)).collect().to_series()
    found = replace(found, run_ids=frozenset(run_ids.to_list()))
    # Columns that only ride along to the tables are left out while attempts are sorted and joined when they
    # are all null (the usual case for most of them), and given back as typed nulls in their places.
    empty = {c: compact.schema[c] for c in _PAYLOAD if compact.get_column(c).null_count() == compact.height}
    order = compact.columns
    selected = select_attempts(
        compact.drop(list(empty)),
        policy=o.retry,
        max_attempts=o.max_attempts,
        retry_on=o.retry_on,
        strict=o.strict_retries,
        key=[UID],
    )
    del compact
    problems = Problems.gather([problems, selected.flags])
    if problems.refusing:
        return replace(found, problems=problems)
    attempts = selected.attempts
    del selected
    # Units are counted on codes; their text (case_id, the plan's columns) is given back only to the table.
    units = unit_outcomes(planned.lazy(), attempts.lazy(), key=[UID]).collect()
    if empty:
        attempts = _given_back(attempts, [*order, *attempts.columns], _nulls(empty))
    # A ledger column named like a plan column is the table's "<name>_right", as the join with the plan names it.
    units = units.rename({c: f"{c}_right" for c in units.columns if c in plan.cases.columns})
    units = units.with_columns(plan.candidate_name())
    named = unit_outcomes(planned_units_coded(plan).head(0), attempts.lazy().head(0), key=[UID]).collect_schema()
    del planned
    summary, slice_table, case_table = _summarize(units, o, plan)
    return replace(
        found,
        problems=problems,
        summary=summary,
        slices=slice_table,
        case_slices=case_table,
        # Each keeps its case code: a spill stores it instead of the case's text columns (see _Spill).
        units=units.drop(CAND_CODE, UID),
        attempts=attempts.drop(CAND_CODE, UID),
        unit_schema=pl.Schema({c: pl.String() if c == CANDIDATE else t for c, t in named.items() if c not in CODES}),
    )


def _table(
    frame: FrameT, schema: pl.Schema, cases: pl.DataFrame, from_plan: Sequence[str], candidate: str | None = None
) -> FrameT:
    """A units or attempts table with ``schema``'s columns, in order, from what a part (or its file) holds.

    A column ``frame`` lacks is given back: one of ``from_plan`` by gathering the cases at ``_case``, the
    candidate as ``candidate`` when a file has one, any other (an all-null payload column) as a typed null.
    A candidate held as an Enum becomes text.
    """
    present = frame.collect_schema()
    if CANDIDATE in present and present[CANDIDATE] != pl.String:
        frame = frame.with_columns(_AS_TEXT)
    given = {c: case_column(cases.get_column(c)) for c in from_plan if c not in present}
    given[CANDIDATE] = pl.lit(candidate, pl.String)
    return _given_back(frame, schema.names(), {**_nulls(schema), **given})


def _summarize(
    units: pl.DataFrame, o: _Options, plan: Plan
) -> tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None]:
    """The per-candidate summary (funnel, intervals, missing case ids), slice funnel and case slices of units.

    ``units`` are counted on codes (``candidate`` an Enum, ``_cand``, ``_case``); the case ids listed and the
    slice columns are taken from ``plan``'s cases. Every number is per candidate, so summaries of candidate
    partitions concatenate exactly.
    """
    # Units are sorted by unit code, hence by (candidate, case): one integer names each cluster, in order. It is
    # not flagged sorted: with_uncertainty checks the order (2 ms) before it sums clusters as runs of rows.
    cases = units.with_columns((pl.col(CAND_CODE).cast(pl.Int64) * 2**32 + pl.col(CASE_CODE)).alias("_cluster"))
    # Under ``every`` a unit has a row per counted attempt: planned counts the unit codes, not the rows.
    unit = UID if o.retry == "every" else None
    summary = with_uncertainty(
        funnel(units.lazy(), unit=unit).collect(),
        cases,
        confidence=o.confidence,
        # A pass/fail grade's score is 0 or 1 whatever score_range says (it bounds numeric scores only).
        score_range=o.score_range if o.grade == "numeric" else (0.0, 1.0),
        cluster="_cluster",
        reducer=o.reducer,
    )
    # Case codes follow the sorted case ids: the first codes are the first ids.
    missing = (
        units.lazy()
        .filter(outcome_in(units.schema, "missing"))
        .group_by(CANDIDATE)
        .agg(
            pl.col(CASE_CODE).n_unique().cast(pl.UInt32).alias("missing_cases"),
            pl.col(CASE_CODE).unique().sort().head(MISSING_IDS_SHOWN).alias(CASE_CODE),
        )
    )
    # The ids are gathered from the exploded codes: inside list.eval, polars hashed the whole literal id
    # column for every candidate (245k ids: 8.5 -> 3.4 ms a candidate).
    shown = (
        missing.select(CANDIDATE, CASE_CODE)
        .explode(CASE_CODE)
        .select(CANDIDATE, case_column(plan.cases.get_column(CASE_ID)).alias("missing_case_ids"))
        .group_by(CANDIDATE, maintain_order=True)
        .agg("missing_case_ids")
    )
    missing_ids = missing.drop(CASE_CODE).join(shown, on=CANDIDATE, how="left").collect()
    summary = summary.join(missing_ids, on=CANDIDATE, how="left").with_columns(
        pl.col("missing_cases").fill_null(0),
        pl.col("missing_case_ids").fill_null(pl.lit([], pl.List(pl.String))),
    )
    slice_table = case_table = None
    if o.slices:
        labelled = units.select(
            CANDIDATE, CASE_CODE, UID, "outcome", *(case_column(plan.cases.get_column(c)) for c in o.slices)
        )
        slice_table = slice_funnel(labelled.drop(CASE_CODE), o.slices, o.bins, unit=unit).with_columns(_AS_TEXT)
        case_table = case_slices(labelled, o.slices, o.bins, case=CASE_CODE)
    return summary.with_columns(_AS_TEXT), slice_table, case_table


#: ``partition_by="candidate"`` audits several candidates at a time, on as many threads as keep the ledger rows
#: audited at once within this bound, so that peak memory stays about that of this many rows: candidates of
#: 2.5M rows two at a time (one at a time above 3M). Measured at 50M rows in 20 candidates of 2.5M: 43.9 ->
#: 39.1 s, peak RSS 2.5 GiB clean, 2.7 GiB refused.
ROWS_IN_FLIGHT: Final = 6_000_000

#: At most this many candidates at a time. With more threads than the 2 cores measured, one candidate's
#: work in polars fills the time another spends in Python or waiting (10M rows in 20 candidates of 0.5M:
#: 2 -> 3 threads, 6.1-6.7 -> 5.5-6.3 s clean, 3.8 -> 3.2 s refused; with the tables kept in memory (see
#: TABLES_IN_MEMORY), median of 3-4 audits in one process, 3 / 4 / 6 threads: 6.13 / 5.58 / 5.44 s clean,
#: 2.87 / 2.51 / 2.90 s refused).
MAX_WORKERS: Final = 4


#: Ledger columns that only ride along to the report tables (no count, rate or retry rule reads them).
_PAYLOAD: Final = (RUN_ID, ANSWER, LIMIT, DATASET_VERSION, CASE_HASH)


def _given_back(frame: FrameT, order: Sequence[str], given: Mapping[str, pl.Expr]) -> FrameT:
    """``frame``'s columns in ``order``, each one it lacks given by its expression in ``given``."""
    present = set(frame.collect_schema().names())
    return frame.select(pl.col(c) if c in present else given[c].alias(c) for c in dict.fromkeys(order))


def _nulls(dtypes: Mapping[str, pl.DataType]) -> dict[str, pl.Expr]:
    """A typed null literal for each column."""
    return {c: pl.lit(None, dtype) for c, dtype in dtypes.items()}


def _compact(ledger: pl.DataFrame) -> pl.DataFrame:
    """Store the few-valued text columns of a validated ledger as Enum/Categorical (cheap to sort and join).

    Only called once the batch passed every check, so every status is in the vocabulary.
    """
    return ledger.with_columns(
        pl.col(EXEC_STATUS).cast(pl.Enum(list(EXEC_STATUSES))),
        pl.col(SCORE_STATUS).cast(pl.Enum(list(SCORE_STATUSES))),
        pl.col(SOURCE).cast(pl.Categorical()),
        pl.col(RUN_ID).cast(pl.Categorical()),
    )


#: ``partition_by="candidate"`` keeps the parts' units and attempts in memory while they take at most this
#: many bytes (``DataFrame.estimated_size``, without the text the plan gives back), and writes the parts after
#: them to disk (LZ4 and Arrow IPC took a sixth of the audit's CPU). Measured in one process at 10M rows (20
#: candidates of 0.5M, 49 MiB of tables each): every part written 6.3-7.0 s, this budget (13 parts kept)
#: 5.7-6.6 s, every part kept 5.2-5.4 s; peak RSS 0.78, 1.39 and 1.60 GiB. At 50M rows two parts of 245 MiB
#: fit: peak 2.6-2.8 GiB (2.1-2.2 GiB with every part written).
TABLES_IN_MEMORY: Final = 640 * 2**20


class _Stored(NamedTuple):
    """One part's table, kept in memory or written to a file, and what its scan gives back."""

    #: The frame (kept in memory) or its Arrow IPC file.
    held: pl.DataFrame | Path
    #: The table's columns and types, in order (the frame or file holds some of them, see :func:`_table`).
    schema: pl.Schema
    #: The part's one candidate (not held), or None when it has several.
    candidate: str | None

    def scan(self) -> pl.LazyFrame:
        """What is held, lazily."""
        return self.held.lazy() if isinstance(self.held, pl.DataFrame) else pl.scan_ipc(self.held)


class _Spill:
    """Per-partition units and attempts, kept in memory up to a budget and written to disk beyond it.

    The first parts' tables stay in memory while they take at most :data:`TABLES_IN_MEMORY` bytes; every
    later part's are written to a temporary folder (made at the first write), so memory stays bounded
    however many candidates there are. :meth:`scan` gives each table as one lazy frame over all parts.

    Arrow IPC with LZ4 is the quickest to write and to scan back (measured: about half the time of
    Parquet for a 0.5M-unit partition); :meth:`AuditReport.write` streams them into Parquet. A part is
    written on a background thread while the next one is audited (at most one part waits; 50M rows:
    31.6 s -> 29.4 s, as the audit alone keeps about 1.5 of 2 cores busy). Text that
    the plan already holds is neither kept nor written: a table keeps its rows' case code (``_case``)
    instead of ``case_id`` (and, for units, the plan's case columns), and a part's one candidate is
    noted, not repeated, and all-null payload columns (e.g. ``answer`` of a status ledger: 16 bytes a
    row as Arrow string views, over half of a units file's bytes) are noted with their dtype; the scan
    gives them back (a gather by code, a literal, a typed null), so the scanned table equals the table
    computed (measured at 50M rows: writing 7.4 s -> 4.7 s; leaving out the null columns, a 2.5M-row
    candidate's two tables 556 -> 440 ms of CPU).
    """

    def __init__(self, cases: pl.DataFrame) -> None:
        self.cases = cases
        self.folder: Path | None = None
        self.parts: dict[str, list[_Stored]] = {"units": [], "attempts": []}
        self.in_memory = 0  # bytes of the tables kept in memory
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalframe-spill")
        self._writing: list[Future[None]] = []

    def _folder(self) -> Path:
        """The folder parts are written to, made at the first write.

        Lazy frames handed out read its files whenever they are collected, even after the report is gone:
        the folder lives until the interpreter exits (or goes at once when the audit refused).
        """
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="evalframe-audit-"))
            atexit.register(self._remove)
        return self.folder

    def _remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def flush(self) -> None:
        """Wait until every part's tables are written (re-raising a write's error); no part follows."""
        while self._writing:
            self._writing.pop(0).result()
        self._writer.shutdown()

    def discard(self) -> None:
        """Drop every part and remove the folder now (the audit refused: no table reads them).

        Waits until no write is under way.
        """
        for pending in self._writing:
            pending.exception()  # waits; an error of a table nobody will read does not matter
        self._writing.clear()
        self._writer.shutdown()
        self.parts = {"units": [], "attempts": []}
        if self.folder is not None:
            self._remove()
            atexit.unregister(self._remove)

    def _from_plan(self, name: str) -> list[str]:
        """The columns of table ``name`` that the plan's cases give by case code.

        Every plan column of a unit; an attempt's case_id (its other columns are its ledger row's own, even
        one named like a plan column).
        """
        return self.cases.columns if name == "units" else [CASE_ID]

    def keep(self, part: _Part) -> _Part:
        """Hold the part's units and attempts (in memory within the budget, else in files); drop them from it."""
        tables = []
        for name, frame, schema in (("units", part.units, part.unit_schema), ("attempts", part.attempts, None)):
            if frame is None:
                continue
            table = schema or pl.Schema({c: t for c, t in frame.schema.items() if c != CASE_CODE})
            # Run without the GIL (an eager n_unique of the candidate text held it: 0.35 s of 10M rows
            # audited two candidates at a time).
            first = only_value(frame, CANDIDATE)
            from_plan = [c for c in self._from_plan(name) if c in frame.columns and CASE_CODE in frame.columns]
            nulls = [c for c in _PAYLOAD if c in frame.columns and frame.get_column(c).null_count() == frame.height]
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
        scans = [_table(p.scan(), p.schema, self.cases, from_plan, p.candidate) for p in self.parts[name]]
        return pl.concat(scans, how="diagonal_relaxed", parallel=False) if scans else pl.LazyFrame()


def _by_candidate(
    plan: Plan,
    frame: pl.LazyFrame,
    o: _Options,
    spill: _Spill,
    source: str,
    folders: Sequence[str] = (),
    progress: Progress | None = None,
) -> list[_Part]:
    """Run :func:`_check_and_select` per candidate, in candidate order; stop computing once anything refuses.

    Up to :data:`MAX_WORKERS` candidates are audited at a time, on threads (polars runs without the GIL), as
    many as keep the rows audited at once within :data:`ROWS_IN_FLIGHT` (one at a time when a candidate
    has more than half of it), so that peak memory stays about that of those rows. A candidate begins
    before the ones before it have been checked, so it may be computed when a sequential run would have
    stopped: its tables are then not written, an error of that computation makes it redo only its checks,
    and its retry flags are dropped with all others (see :func:`_batch_problems`), so the outcome is the
    sequential run's.
    """
    names = frame.collect_schema().names()
    if CANDIDATE not in names:
        return [spill.keep(_check_and_select(plan, frame, o))]
    sizes = _candidate_sizes(frame, source, in_folders=CANDIDATE in folders)
    in_ledger = list(sizes)
    workers = _workers(max(sizes.values(), default=0))
    plan.case_index  # noqa: B018  (built once, before the threads share the plan)

    def run(name: str, compute: bool) -> _Part:
        rows = frame.filter(pl.col(CANDIDATE).cast(pl.String) == name)
        sub_plan = plan.for_candidate(name) if name in plan.candidates else plan.without_units()
        if workers == 1:
            return _check_and_select(sub_plan, rows, o, compute=compute)
        with sorts_on_this_thread():
            return _check_and_select(sub_plan, rows, o, compute=compute)

    parts: list[_Part] = []
    blocked = False  # as for the whole batch: once a check refuses, no candidate's attempts are selected

    def finish(name: str, compute: bool, pending: Future[_Part]) -> _Part:
        """The part as a sequential run gives it: begun before a refusal was known, only its checks count."""
        if not (blocked and compute):
            return spill.keep(pending.result())
        try:
            part = pending.result()
        except Exception:  # noqa: BLE001  (an error of the work a sequential run never does; it redoes the checks)
            return run(name, compute=False)
        return replace(part, units=None, attempts=None)  # the batch is refused: its tables are never written

    running: list[tuple[str, bool, Future[_Part]]] = []

    def take_first() -> None:
        nonlocal blocked
        part = finish(*running.pop(0))
        blocked = blocked or part.checks_refused
        parts.append(part)
        if progress is not None:
            progress("candidates audited", len(parts), len(order))

    order = sorted({*plan.candidates, *(c for c in in_ledger if c is not None)})
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evalframe-audit") as pool:
        for name in order:
            running.append((name, not blocked, pool.submit(run, name, not blocked)))
            while len(running) >= workers:
                take_first()
        while running:
            take_first()
    if None in in_ledger:
        nulls = frame.filter(pl.col(CANDIDATE).is_null())
        parts.append(_check_and_select(plan.without_units(), nulls, o, compute=False))
    return parts


def _workers(largest: int) -> int:
    """How many candidates to audit at a time when the largest has ``largest`` ledger rows (see ROWS_IN_FLIGHT)."""
    return max(1, min(MAX_WORKERS, ROWS_IN_FLIGHT // max(largest, 1)))


def _candidate_sizes(frame: pl.LazyFrame, source: str, *, in_folders: bool) -> dict[str | None, int]:
    """Ledger rows per candidate (None: rows without one), in one pass over the candidate column.

    When the candidate names the lake's folders, each candidate's count is read from its folder's
    file footers instead (grouping the lake's rows by its folder column read them all: 50M rows, 3 GiB).
    """
    if in_folders:
        names = collect_input(frame.select(pl.col(CANDIDATE).unique()), source).to_series().to_list()
        return {
            name: collect_input(frame.filter(pl.col(CANDIDATE).eq_missing(name)).select(pl.len()), source).item()
            for name in names
        }
    sizes = collect_input(frame.group_by(pl.col(CANDIDATE).cast(pl.String)).len(), source)
    return dict(sizes.iter_rows())


def _batch_problems(read: pl.DataFrame, parts: Sequence[_Part], source: str) -> Problems:
    """The problems of the whole batch from those of its parts, as one whole-batch run finds them.

    A problem of the input itself (an unexpected or missing column) names the
    input ``source`` (an unexpected column at line 1, the header, when that is
    one CSV file) and is kept once: each part finds it, naming its own file,
    or no file when it has no rows. When a check refused anywhere, retry flags
    found in the parts that were computed before it are dropped (a
    whole-batch run selects no attempt then). Bounded like every part's (see
    :class:`~evalframe.problems.Problems`): the parts' first rows of each kind
    are merged, their counts added.
    """
    problems = Problems.gather([read, *(p.problems for p in parts)])
    if problems.has(FILE_PROBLEMS):
        header = 1 if Path(source).suffix.lower() == ".csv" and Path(source).is_file() else None
        # One per part and column at most: few rows, read whole.
        file_level = problems.every().filter(pl.col(KIND).is_in(list(FILE_PROBLEMS))).collect()
        at_header = pl.col(KIND) == "unexpected_column"
        named = file_level.with_columns(
            pl.lit(source, pl.String).alias(SOURCE),
            pl.when(at_header).then(pl.lit(header, pl.Int64)).otherwise(pl.col(LINE)).alias(LINE),
        )
        problems = Problems.gather([problems.without(FILE_PROBLEMS), named.unique(maintain_order=True)])
    return problems.without(RETRY_FLAGS) if any(p.checks_refused for p in parts) else problems


def _resolved_bins(plan: Plan, slices: Sequence[str], bins: Bins | None) -> Bins | None:
    """Quantile bins (``"q<k>"``) of numeric slice columns as edges, from the planned units (not the results)."""
    if not bins:
        return bins
    resolved = dict(bins)
    for name, spec in bins.items():
        if isinstance(spec, str) and name in slices and plan.cases.schema[name].is_numeric():
            values = planned_units_coded(plan).select(name).collect()
            resolved[name] = bin_edges(values, name, spec)
    return resolved


@in_memory
def audit(
    plan: Plan,
    results: Results,
    *,
    retry: RetryPolicyName = "first",
    max_attempts: int | None = None,
    retry_on: Sequence[str] = EXEC_FAILURES,
    strict_retries: bool = False,
    missing: MissingPolicy = "report",
    grade: GradeKind = "binary",
    score_range: tuple[float, float] = (0.0, 1.0),
    pass_threshold: float | None = None,
    slices: Sequence[str] = (),
    bins: Bins | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    partition_by: Literal["candidate", "auto"] | None = None,
    provenance: Mapping[str, Any] | None = None,
    extra_columns: Sequence[str] = (),
    reducer: str = "mean",
    engine: Literal["polars", "spark"] = "polars",
    spark_tables: str | Path | None = None,
    spark_remote: str | None = None,
    progress: Progress | None = None,
) -> AuditReport:
    """Audit a ledger against a frozen plan.

    Parameters
    ----------
    plan
        The frozen plan (:class:`~evalframe.plan.Plan`).
    results
        The ledger: a polars frame, a :class:`~evalframe.load.Loaded`, or a
        path (CSV, JSON Lines, Parquet file/directory/glob) or list of paths.
        One row per attempt; see :mod:`evalframe.validate` for the shapes.
    retry
        Declared retry policy: ``first``, ``last_allowed`` or ``every``.
    max_attempts
        Highest allowed attempt number (None: unlimited).
    retry_on
        Execution statuses after which a retry is allowed.
    strict_retries
        Make retry flags refusing.
    missing
        ``report`` (missing units are counted as missing) or ``refuse``
        (any missing unit refuses the batch).
    grade, score_range, pass_threshold
        How grades are read; see :func:`~evalframe.validate.validate_ledger`.
    slices
        Plan columns to break the funnel down by (SPEC §5).
    bins
        Bins for numeric slice columns: edges or ``"q<k>"`` (see
        :func:`~evalframe.slices.binned`).
    alpha
        Significance level of the selective-missingness test.
    confidence
        Two-sided coverage of every interval in the summary.
    partition_by
        ``"candidate"``: audit candidate by candidate (up to four at a time
        on threads, as many as keep :data:`ROWS_IN_FLIGHT` ledger rows at
        most: two of 2.5M rows, one above 3M). A
        candidate's rows are read with the candidate filter pushed into the
        reader (a hive lake is read one partition at a time), validated,
        reconciled, counted and summarised; its units and attempts are
        kept in memory while the tables kept so far take at most
        :data:`TABLES_IN_MEMORY` bytes, and written to a temporary folder
        after that; ``report.units`` / ``report.attempts`` are lazy scans
        of those tables and files (the folder is removed when the Python
        process exits; write the report to keep the tables). Exact, because
        every key and every summary number is per candidate; peak memory is
        that of the candidates audited at once, the tables kept and the
        plan (measured in ``benchmarks/RESULTS.md``: 50M ledger rows in
        about 2.8 GiB). None
        (default): the whole batch at once, tables in memory. ``"auto"``:
        ``"candidate"`` from :data:`AUTO_PARTITION_ROWS` ledger rows or
        planned units on, else None (what the CLI does);
        ``report.meta["partition_by"]`` says which ran.
    provenance
        Extra facts recorded in ``report.meta`` (e.g. what an importer read).
    extra_columns
        Ledger columns carried through untouched to ``report.attempts`` (every
        attempt) and ``report.units`` (the counted attempt's values): model
        output, prompt, latency, tokens, cost (SPEC §3). Any other column
        the ledger does not define refuses the batch as ``unexpected_column``.
    reducer
        How trials of a case reduce to a case outcome for the case-level
        rate beside the trial-level one (SPEC §4): ``mean``, ``any``,
        ``all``, ``majority`` or ``at_least:k`` (see
        :func:`evalframe.funnel.reduce_case`).
    engine
        ``polars`` (default) or ``spark``: the row work runs on Spark
        (:func:`evalframe.engines.spark.audit_on_spark`; ``results`` a
        Parquet path or a table name). A PySpark or Spark Connect DataFrame
        as ``results`` selects ``spark`` by itself. Needs
        ``pip install 'evalframe[spark]'``; slices stay on polars.
    spark_tables
        Folder Spark writes the full units, attempts and problems tables to
        (Parquet); default a new temporary folder.
    spark_remote
        Spark Connect address (``sc://HOST:PORT``); default a local
        ``local[2]`` session.
    progress
        Called as ``progress(stage, done, total)`` once the inputs are read
        (``"inputs read"``) and as candidates are audited (``"candidates
        audited"``: one step per candidate when auditing candidate by
        candidate, else all at once); see :mod:`evalframe.progress`.

    Returns
    -------
    AuditReport

    Raises
    ------
    AuditRefused
        When any refusing problem exists; ``.problems`` holds every problem
        found (kind, source, line, candidate, case_id, trial, attempt,
        detail, refusing).
    InputFormatError
        When a results file cannot be opened at all.
    ValueError
        When a slice column is not a plan column, a bins spec is malformed,
        ``retry``, ``missing`` or ``grade`` is not one of its values,
        ``max_attempts`` is below 1, ``score_range`` is not finite with low
        < high, or ``pass_threshold`` is given for binary grades or outside
        ``score_range``.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund", "privacy", "handoff"]}),
    ...                        candidates=["A", "B"])
    >>> results = pl.DataFrame({"candidate": ["A", "A", "B", "B", "B", "B"],
    ...     "case_id": ["quote", "refund", "quote", "refund", "privacy", "handoff"],
    ...     "passed": [1, 1, 1, 1, 1, 0]})
    >>> audit(plan, results).summary.select("candidate", "planned", "scored", "passed",
    ...     "scored_coverage", "pass_rate_scored", "pass_rate_planned")
    shape: (2, 7)
    ┌───────────┬─────────┬────────┬────────┬─────────────────┬──────────────────┬───────────────────┐
    │ candidate ┆ planned ┆ scored ┆ passed ┆ scored_coverage ┆ pass_rate_scored ┆ pass_rate_planned │
    │ ---       ┆ ---     ┆ ---    ┆ ---    ┆ ---             ┆ ---              ┆ ---               │
    │ str       ┆ u32     ┆ u32    ┆ u32    ┆ f64             ┆ f64              ┆ f64               │
    ╞═══════════╪═════════╪════════╪════════╪═════════════════╪══════════════════╪═══════════════════╡
    │ A         ┆ 4       ┆ 2      ┆ 2      ┆ 0.5             ┆ 1.0              ┆ 0.5               │
    │ B         ┆ 4       ┆ 4      ┆ 3      ┆ 1.0             ┆ 0.75             ┆ 0.75              │
    └───────────┴─────────┴────────┴────────┴─────────────────┴──────────────────┴───────────────────┘
    """
    for name, value, allowed in (
        ("retry", retry, get_args(RetryPolicyName)),
        ("missing", missing, get_args(MissingPolicy)),
        ("grade", grade, get_args(GradeKind)),
    ):
        if value not in allowed:
            msg = f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}"
            raise ValueError(msg)
    if max_attempts is not None and max_attempts < 1:
        msg = f"max_attempts must be at least 1 (or None: no limit), got {max_attempts!r}"
        raise ValueError(msg)
    low, high = score_range
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        msg = f"score_range must be finite (low, high) with low < high, got {score_range!r}"
        raise ValueError(msg)
    if pass_threshold is not None and not (grade == "numeric" and low <= pass_threshold <= high):
        msg = f"pass_threshold applies to grade='numeric' only, within score_range {score_range!r}"
        raise ValueError(f"{msg}; got {pass_threshold!r} with grade={grade!r}")
    unknown_slices = [c for c in slices if c not in plan.cases.columns or c == CASE_ID]
    if unknown_slices:
        usable = ", ".join(c for c in plan.cases.columns if c != CASE_ID) or "none"
        msg = f"slice column(s) {', '.join(map(repr, unknown_slices))} not in the plan (plan columns: {usable})"
        raise ValueError(msg)
    if engine == "spark" or is_spark_frame(results):
        if slices:
            raise ValueError("slices are audited on the polars engine (engine='polars'), not yet on Spark")
        from evalframe.engines.spark import audit_on_spark

        return audit_on_spark(
            plan,
            results,
            tables=spark_tables,
            spark_remote=spark_remote,
            retry=retry,
            max_attempts=max_attempts,
            retry_on=retry_on,
            strict_retries=strict_retries,
            missing=missing,
            grade=grade,
            score_range=score_range,
            pass_threshold=pass_threshold,
            confidence=confidence,
            extra_columns=extra_columns,
            reducer=check_reducer(reducer),
            provenance=provenance,
        )
    loaded = _as_loaded(results)
    if progress is not None:
        progress("inputs read", 1, 1)
    # Folder keys such as date=2024-01-01 organise a lake; only those naming a ledger column are data.
    layout_only = [k for k in loaded.partitions if k not in KNOWN_COLUMNS]
    loaded = replace(loaded, frame=loaded.frame.drop(layout_only))
    if bins:
        plan = plan.with_numeric([name for name in bins if name in plan.cases.columns])
    options = _Options(
        retry,
        max_attempts,
        tuple(retry_on),
        strict_retries,
        missing,
        grade,
        score_range,
        pass_threshold,
        tuple(slices),
        _resolved_bins(plan, slices, bins),
        confidence,
        tuple(extra_columns),
        check_reducer(reducer),
    )
    if partition_by == "auto":  # the ledger's row count (Parquet: from the footers) or the plan's size decides
        rows = collect_input(loaded.frame.select(pl.len()), loaded.source).item()
        partition_by = CANDIDATE if max(rows, plan.n_units) >= AUTO_PARTITION_ROWS else None
    spill: _Spill | None = None
    try:
        if partition_by is None:
            parts = [_check_and_select(plan, loaded.frame, options)]
            if progress is not None:
                progress("candidates audited", len(plan.candidates), len(plan.candidates))
        elif partition_by == CANDIDATE:
            spill = _Spill(plan.cases)
            parts = _by_candidate(plan, loaded.frame, options, spill, loaded.source, loaded.partitions, progress)
            spill.flush()  # a failed write fails the audit here, and the folder goes
        else:
            msg = f"partition_by must be None, 'candidate' or 'auto', got {partition_by!r}"
            raise ValueError(msg)
        problems = _batch_problems(loaded.problems, parts, loaded.source)
        if problems.refusing:
            raise AuditRefused(problems)
    except BaseException:
        if spill is not None:
            spill.discard()
        raise
    ledger_rows = sum(p.rows for p in parts)
    run_ids = sorted({r for p in parts for r in p.run_ids})
    shape = next((p.shape for p in parts if p.shape != "unknown"), parts[0].shape if parts else "unknown")
    computed = [p for p in parts if p.summary is not None]
    # Parts come in candidate order and each is sorted by its unit code: concatenations are sorted by key.
    summary = pl.concat([p.summary for p in computed if p.summary is not None], how="diagonal_relaxed")
    units: pl.DataFrame | pl.LazyFrame
    attempts_table: pl.DataFrame | pl.LazyFrame
    if spill is not None:
        units, attempts_table = spill.scan("units"), spill.scan("attempts")
    else:
        units = pl.concat(
            [
                _table(p.units, p.unit_schema, plan.cases, plan.cases.columns)
                for p in computed
                if p.units is not None and p.unit_schema
            ]
        )
        attempts_table = pl.concat(
            [p.attempts for p in computed if p.attempts is not None], how="diagonal_relaxed"
        ).drop(CASE_CODE, strict=False)
    slice_table = (
        pl.concat([p.slices for p in computed if p.slices is not None], how="diagonal_relaxed")
        if slices
        else pl.DataFrame()
    )
    # One test family for the whole audit (every candidate and slice column): Holm's correction spans them all.
    case_tables = [p.case_slices for p in computed if p.case_slices is not None]
    tests = missingness_tests(pl.concat(case_tables), alpha=alpha) if slices and case_tables else pl.DataFrame()
    if slices:
        summary = summary.join(selective_flag(tests), on=CANDIDATE, how="left")
    meta: dict[str, Any] = {
        "evalframe_version": evalframe_version(),
        "plan_source": plan.source,
        "plan_hash": plan.plan_hash,
        "n_cases": plan.cases.height,
        "candidates": list(plan.candidates),
        "trials": plan.trials,
        "planned_units": plan.n_units,
        "required_run_id": plan.run_id,
        "dataset_versions": sorted(
            str(v)
            for v in plan.cases.get_column("dataset_version", default=pl.Series([], dtype=pl.String))
            .unique()
            .drop_nulls()
        ),
        "results_source": loaded.source,
        "ledger_shape": shape,
        "ledger_rows": ledger_rows,
        "run_ids": run_ids,
        "partition_by": partition_by,
        "partition_folders_ignored": layout_only,
        "retry": retry,
        "case_reducer": reducer,
        "max_attempts": max_attempts,
        "retry_on": list(retry_on),
        "missing": missing,
        "grade": grade,
        "score_range": list(score_range),
        "pass_threshold": pass_threshold,
        "slices": list(slices),
        "alpha": alpha,
        "confidence": confidence,
        **(provenance or {}),
    }
    recorded = sorted(
        {str(e["case_reducer"]) for e in meta.get("exports", []) if isinstance(e, Mapping) and e.get("case_reducer")}
    )
    differs = [r for r in recorded if r != reducer]
    if differs:  # the plan's declared reducer applies; the export's header said otherwise (SPEC §4)
        detail = f"the export records the case reducer {', '.join(differs)}; the audit applies the declared {reducer!r}"
        problems = Problems.gather(
            [problems, problems_frame([{"kind": "reducer_differs", "detail": detail, "refusing": False}])]
        )
    report = AuditReport(
        summary=summary,
        units=units,
        attempts=attempts_table,
        # Not refused: the flags (missing units per candidate, retry flags) are read whole.
        problems=problems.every().collect(),
        slices=slice_table,
        missingness=tests,
        meta=meta,
    )
    return report
