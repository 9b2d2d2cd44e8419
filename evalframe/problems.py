"""The problems table: one row per thing found wrong with a batch.

Every check in evalframe reports into the same tidy frame, so a notebook user
can filter problems like any other data and the CLI can print them as a table.
Columns and dtypes:

========== ======= ==========================================================
column     dtype   meaning
========== ======= ==========================================================
kind       String  what is wrong (one of :data:`PROBLEM_KINDS`)
source     String  ``plan``, ``results`` or the file the row came from
line       Int64   CSV/JSON Lines physical line (header = line 1 of a CSV),
                   Parquet row number (1-based); null when not file-bound
candidate  String  offending candidate, when the problem has one
case_id    String  offending case, when the problem has one
trial      Int64   offending trial, when the problem has one
attempt    Int64   offending attempt, when the problem has one
detail     String  a sentence for a person
refusing   Boolean whether the problem refuses the batch
========== ======= ==========================================================

A first ``task`` column (String) is added by an audit of several tasks (every problem labelled with its task,
null for a problem of no task, see :func:`with_task`) and by an importer whose notes are about one task each
(see :func:`problems_frame`); a batch of one task has none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    DETAIL,
    KIND,
    LINE,
    REFUSING,
    SOURCE,
    TASK,
    TRIAL,
)
from evalframe.natural import shape_keys
from evalframe.store import TableStore

PROBLEM_SCHEMA: Final = pl.Schema(
    {
        KIND: pl.String,
        SOURCE: pl.String,
        LINE: pl.Int64,
        CANDIDATE: pl.String,
        CASE_ID: pl.String,
        TRIAL: pl.Int64,
        ATTEMPT: pl.Int64,
        DETAIL: pl.String,
        REFUSING: pl.Boolean,
    }
)

#: Every problem kind with a one-line description. Kinds whose description
#: starts with "(flag)" are reported but do not refuse the batch by default.
PROBLEM_KINDS: Final[Mapping[str, str]] = {
    # input structure
    "missing_column": "a required column is absent",
    "unexpected_column": "a column evalframe does not know",
    "repeated_column": "a header name appears more than once",
    "field_count": "a CSV record has a different number of fields than the header",
    "blank_line": "a blank line inside the data (a record with zero fields)",
    "malformed_quoting": "a CSV quote is unterminated or misplaced",
    "undecodable_bytes": "bytes that are not valid UTF-8",
    "misplaced_bom": "a byte-order mark anywhere but the very start of the file",
    "mixed_line_endings": "a CSV file whose records end in more than one way (LF, CRLF, lone CR)",
    "unreadable_file": "a file that could not be read or parsed at all",
    "partition_mismatch": "a row's own value differs from the key=value folder (hive partition) it is stored in",
    # identifiers
    "empty_identifier": "an empty case_id, candidate or run_id",
    "padded_identifier": "an identifier with leading or trailing white space",
    # plan
    "empty_plan": "the plan has no cases",
    "duplicate_case": "a case_id appears more than once in the plan",
    "empty_candidates": "no candidate was declared",
    "repeated_candidate": "a candidate is declared more than once",
    "invalid_trials": "the number of trials is not a positive integer",
    # identity against the plan
    "unknown_candidate": "a row names a candidate that is not planned",
    "unknown_case": "a row names a case that is not planned",
    "unknown_task": (
        "a row's task (the ledger's task column) is not one of the plan's tasks, or a row without one names a case "
        "id that several tasks plan"
    ),
    "trial_out_of_range": "a row's trial is outside 1..N",
    "unknown_unit": "a row's (candidate, case_id, trial) is not a planned unit",
    "duplicate_key": (
        "(candidate, case_id, trial, attempt) appears more than once (a key holding a value that did not parse "
        "repeats none)"
    ),
    "missing_unit": (
        "planned units with no row: one problem per candidate, counted in its detail "
        "(refusing only under missing='refuse')"
    ),
    # values
    "invalid_grade": "a binary grade that is not exactly 0 or 1",
    "invalid_score": "a score that is not a finite number in the declared range",
    "invalid_integer": "a trial or attempt that is not a positive integer",
    "invalid_status": "an exec_status or score_status outside the vocabulary",
    "empty_value": (
        "an empty answer or status, or a key or status with no value (not on a row whose token did not parse: "
        "that is its one problem)"
    ),
    "missing_expected": "answers were given but the plan has no expected answer",
    # consistency and binding
    "status_inconsistent": "score and statuses contradict each other",
    "run_mismatch": "a row's run_id differs from the run the plan requires",
    "version_mismatch": "a row's dataset_version differs from the plan's",
    "hash_mismatch": "a row's case_hash differs from the plan's",
    # importers (notes)
    "no_export": "a folder given as an export holds no file of that format",
    "unknown_score": "the declared (or default) scorer, metric or stat is not in the export",
    "ambiguous_score": "the export has several scorers, metrics or stats and none was declared",
    "unknown_run": "the declared run_id is not in the export",
    "ambiguous_rows": "an export holds several rows for one unit that differ by a key the plan does not declare",
    "duplicate_import": "(flag) the same attempt was found twice (one sample in two files) and is read once",
    "reducer_differs": "(flag) the export's header records another case reducer than the one the audit applies",
    "reducer_unreachable": "(flag) cases that plan fewer trials than at_least:k needs: they can never pass",
    "limited_run": "(flag) the run was limited to fewer units than its dataset holds",
    "header_rows_disagree": "(flag) an export's header totals disagree with its rows (rows are the evidence)",
    "id_normalised": '(flag) identifiers of different types (1 and "1") were read as the same case',
    "plan_from_rows": "(flag) the export declares no plan; the plan was taken from the rows present",
    "pooled_metrics": (
        "(flag) the files of one task (and candidate) of an import were graded by different metrics: its rate "
        "pools them"
    ),
    "run_status": "(flag) the export says its run did not finish successfully",
    "import_altered": (
        "(flag) the plan and ledger are an evalframe import's, but a file of its folder changed since the import "
        "wrote it: what the import noticed is not read"
    ),
    "headline_reconciled": (
        "(flag) the headline value the export reported, beside the audited rates, its gap decomposed into the "
        "points each kind of ungraded unit accounts for"
    ),
    "settings_pooled": (
        "(flag) exports of one task and candidate, audited together, record different settings (epochs, limit, "
        "revision...): the audit pools two measurements"
    ),
    "settings_differ": (
        "(flag) runs of one task and model recorded different settings (or one did not record a setting): "
        "they are read as different candidates, not as retries"
    ),
    "not_a_score": "(flag) a grader value that is not a score (text, a list, a pair) was read as no grade",
    "nonfinite_score": "(flag) a non-finite metric value (NaN, Infinity) was read as a grader failure",
    "grader_error": "(flag) the grader (a judge, a metric) reported an error for a unit: a grader failure, not a fail",
    # retries (flags)
    "retry_after_scored": "(flag) a retry follows an attempt that was already scored",
    "retry_after_ineligible": "(flag) a retry follows a failure the policy does not retry",
    "attempt_beyond_max": "(flag) an attempt number above max_attempts",
    "attempt_gap": "(flag) attempt numbers of a unit are not 1..k without gaps",
    "retry_bias": (
        "(flag) retries moved the headline: pass_rate_scored under the declared policy differs from the rate under "
        "first beyond the interval of the difference"
    ),
}


def problems_frame(rows: Iterable[Mapping[str, Any]] = ()) -> pl.DataFrame:
    """Build a problems table from dictionaries.

    Parameters
    ----------
    rows
        Mappings with any subset of the columns of :data:`PROBLEM_SCHEMA`;
        ``refusing`` defaults to True. A row may carry its ``task`` (an
        importer's note about one task of a batch of several).

    Returns
    -------
    polars.DataFrame
        One row per problem with the columns of :data:`PROBLEM_SCHEMA`, after
        a first ``task`` column (String, null where a row has none) when any
        row carries one.

    Examples
    --------
    >>> problems_frame([{"kind": "unknown_case", "case_id": "invented", "line": 3}]).select(
    ...     "kind", "case_id", "line", "refusing"
    ... )
    shape: (1, 4)
    ┌──────────────┬──────────┬──────┬──────────┐
    │ kind         ┆ case_id  ┆ line ┆ refusing │
    │ ---          ┆ ---      ┆ ---  ┆ ---      │
    │ str          ┆ str      ┆ i64  ┆ bool     │
    ╞══════════════╪══════════╪══════╪══════════╡
    │ unknown_case ┆ invented ┆ 3    ┆ true     │
    └──────────────┴──────────┴──────┴──────────┘
    """
    given = list(rows)
    tasked = any(TASK in r for r in given)
    schema = pl.Schema([(TASK, pl.String()), *PROBLEM_SCHEMA.items()]) if tasked else PROBLEM_SCHEMA
    filled = [{c: r.get(c, True if c == REFUSING else None) for c in schema} for r in given]
    return pl.DataFrame(filled, schema=schema)


def conform(frame: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Give a partial problems frame every column of :data:`PROBLEM_SCHEMA`, in order.

    A ``task`` column (String; the problems of an audit of several tasks, see :func:`with_task`) is kept,
    first.
    """
    lf = frame.lazy()
    names = lf.collect_schema().names()
    task = [pl.col(TASK).cast(pl.String)] if TASK in names else []
    return lf.select(
        [
            *task,
            *(
                pl.col(c).cast(t) if c in names else pl.lit(True if c == REFUSING else None, t).alias(c)
                for c, t in PROBLEM_SCHEMA.items()
            ),
        ]
    )


def _aligned(frames: Iterable[pl.DataFrame | pl.LazyFrame]) -> list[pl.LazyFrame]:
    """``frames`` conformed (see :func:`conform`), each with a ``task`` column (null where none) when any has one."""
    lazy = [f.lazy() for f in frames]
    if not any(TASK in f.collect_schema().names() for f in lazy):
        return [conform(f) for f in lazy]
    none = pl.lit(None, pl.String).alias(TASK)
    return [conform(f if TASK in f.collect_schema().names() else f.with_columns(none)) for f in lazy]


def with_task(frame: pl.DataFrame | pl.LazyFrame, task: str | None) -> pl.LazyFrame:
    """Problems (any partial columns) of one task of an audit of several, labelled with it in a first ``task`` column.

    ``task`` None: a problem of no task (of the input itself, or of a row whose case or task is in no task).
    A row that already names its task (an importer's note about one task, see :func:`problems_frame`) keeps it.

    Examples
    --------
    >>> with_task(problems_frame([{"kind": "unknown_case", "line": 3}]), "belief").collect().columns[:3]
    ['task', 'kind', 'source']
    """
    lf = frame.lazy()
    label = pl.lit(task, pl.String)
    if TASK in lf.collect_schema().names():
        label = pl.coalesce(pl.col(TASK).cast(pl.String), label)
    return conform(lf.with_columns(label.alias(TASK)))


def of_task(frame: pl.DataFrame, task: str | None) -> pl.DataFrame:
    """The problems of ``frame`` that are ``task``'s or of no task, without a ``task`` column: one task's own.

    An importer's notes name the task they are about (see :func:`problems_frame`); a task's report holds
    those of its task and those of none. ``task`` None: the notes of a batch of one task, every row.

    Examples
    --------
    >>> notes = problems_frame([{"kind": "limited_run", "task": "a"}, {"kind": "limited_run", "task": "b"},
    ...                         {"kind": "no_export"}])
    >>> of_task(notes, "a").get_column("kind").to_list(), of_task(notes, "a").columns == list(PROBLEM_SCHEMA)
    (['limited_run', 'no_export'], True)
    """
    if TASK not in frame.columns:
        return frame
    own = frame if task is None else frame.filter(pl.col(TASK).is_null() | (pl.col(TASK) == task))
    return own.drop(TASK)


def _sort_keys(names: Iterable[str]) -> list[pl.Expr | str]:
    """Kind then key, after the task (in shape order, see :func:`~evalframe.natural.shape_keys`) when there is one."""
    task = shape_keys(pl.col(TASK)) if TASK in names else []
    return [*task, KIND, SOURCE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, DETAIL]


def sort_problems(frame: pl.DataFrame) -> pl.DataFrame:
    """Sort a problems table by (task,) kind then key, nulls first, so output never depends on row order."""
    return frame.sort(_sort_keys(frame.columns), nulls_last=False)


def concat_problems(frames: Iterable[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame:
    """Concatenate problem frames (any partial columns) into one sorted table.

    Its text columns hold their own bytes: rows taken from a large ledger would otherwise keep all of
    that ledger's text alive (polars shares string buffers between a frame and the rows filtered from
    it).
    """
    parts = _aligned(frames)
    if not parts:
        return problems_frame()
    table = sort_problems(pl.concat(parts, how="vertical").collect())
    return table.with_columns(
        pl.concat_str([pl.col(c), pl.lit("")]) for c, t in PROBLEM_SCHEMA.items() if t == pl.String
    )


#: How many rows of each kind a bounded problems table keeps in memory (SPEC §3 "Problems at scale"):
#: :attr:`Problems.shown`, hence ``AuditRefused.problems`` and the terminal. Every kind's count is kept
#: whole (:attr:`Problems.counts`), and the rows beyond these are held in temporary Arrow IPC files, from
#: which ``problems.parquet`` is written whole.
PROBLEM_ROWS_KEPT: Final = 1000

#: The count column of :attr:`Problems.counts`.
COUNT: Final = "count"

#: Columns and dtypes of :attr:`Problems.counts`.
COUNTS_SCHEMA: Final = pl.Schema({KIND: pl.String, REFUSING: pl.Boolean, COUNT: pl.Int64})


def _own_text(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with text columns that hold their own bytes (see :func:`concat_problems`)."""
    return frame.with_columns(
        pl.concat_str([pl.col(c), pl.lit("")]) for c, t in PROBLEM_SCHEMA.items() if t == pl.String
    )


def _counts_of(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    counted = frame.lazy().group_by(KIND, REFUSING).agg(pl.len().cast(pl.Int64).alias(COUNT))
    return counted.sort(KIND, REFUSING, nulls_last=False).collect()


def _first_of_each_kind(frame: pl.DataFrame | pl.LazyFrame, kinds: Iterable[str | None], kept: int) -> pl.DataFrame:
    """The first ``kept`` rows of each kind, in the order of :func:`sort_problems` (a top-k per kind)."""
    lf = frame.lazy()
    keys = _sort_keys(lf.collect_schema().names())
    parts = [
        lf.filter(pl.col(KIND).is_null() if k is None else pl.col(KIND) == k).sort(keys, nulls_last=False).head(kept)
        for k in dict.fromkeys(kinds)
    ]
    if not parts:
        return problems_frame()
    return _own_text(sort_problems(pl.concat(pl.collect_all(parts, engine="streaming"))))


@dataclass(frozen=True)
class _Spilled:
    """An Arrow IPC file of problem rows in a :class:`~evalframe.store.TableStore`, and the kinds left out when read.

    The store is removed by :meth:`Problems.close` (the report's or refusal's ``close``) or at interpreter
    exit, never by the garbage collector: a frame read from it stays readable after the table is gone.
    """

    path: Path
    store: TableStore
    dropped: tuple[str, ...] = ()

    @classmethod
    def new(cls) -> _Spilled:
        """A file not written yet, in a store of its own."""
        store = TableStore()
        return cls(store.path("problems", 0, "arrow"), store)

    def scan(self) -> pl.LazyFrame:
        lf = pl.scan_ipc(self.path)
        return lf.filter(~pl.col(KIND).is_in(list(self.dropped))) if self.dropped else lf


@dataclass(frozen=True)
class Problems:
    """A problems table bounded in memory: every kind's count, the first rows of each kind, the rest on disk.

    SPEC §3 "Problems at scale": a batch can hold millions of problems (10M
    duplicate keys), so evalframe keeps in memory the count of each kind and
    its first :data:`PROBLEM_ROWS_KEPT` rows (in the sorted order of
    :func:`sort_problems`); the rows beyond them are written to temporary Arrow
    IPC files in :class:`~evalframe.store.TableStore` folders (removed by
    :meth:`close` or when the Python process exits, never by the garbage
    collector) and :meth:`every` reads the whole list back, sorted
    (``problems.parquet`` is streamed from it). Build one with
    :meth:`gather`; instances are immutable (:meth:`every` writes its sorted
    files once and keeps them with the table).

    Attributes
    ----------
    shown
        The first rows of each kind (at most ``kept`` per kind), sorted; the
        columns of :data:`PROBLEM_SCHEMA`. All of them when no kind has more.
    counts
        Every problem counted: ``kind`` (String), ``refusing`` (Boolean),
        ``count`` (Int64), one row per (kind, refusing), sorted.
    held
        Rows in memory that no file holds (at most ``kept`` per kind).
    spilled
        The files holding the other rows.
    kept
        Rows of each kind kept in memory.

    Examples
    --------
    >>> rows = [{"kind": "duplicate_key", "line": n} for n in range(2, 7)]
    >>> found = Problems.gather([problems_frame(rows)], kept=2)
    >>> found.shown.get_column("line").to_list(), found.counts.rows(), found.refusing
    ([2, 3], [('duplicate_key', True, 5)], 5)
    >>> found.every().collect().get_column("line").to_list()
    [2, 3, 4, 5, 6]
    """

    shown: pl.DataFrame
    counts: pl.DataFrame
    held: pl.DataFrame
    spilled: tuple[_Spilled, ...] = ()
    kept: int = PROBLEM_ROWS_KEPT
    #: The files :meth:`every` sorted the rows into, and their store (written at its first call).
    _sorted: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def gather(
        cls, parts: Iterable[Problems | pl.DataFrame | pl.LazyFrame], *, kept: int = PROBLEM_ROWS_KEPT
    ) -> Problems:
        """Gather problem frames (any partial columns, eager or lazy) and bounded tables into one.

        A lazy frame is evaluated for its first ``kept + 1`` rows; when it has
        more, it is streamed to a file (polars ``sink_ipc``) and its counts and
        first rows of each kind are read from there, so it is never held whole.
        """
        found = [p if isinstance(p, Problems) else cls._of(p, kept) for p in parts]
        counts = [p.counts for p in found if p.counts.height]
        total = (
            pl.concat(counts).group_by(KIND, REFUSING).agg(pl.col(COUNT).sum()).sort(KIND, REFUSING, nulls_last=False)
            if counts
            else pl.DataFrame(schema=COUNTS_SCHEMA)
        )
        shown = [p.shown for p in found if p.shown.height]
        # No problem at all keeps the parts' columns: an audit of several tasks writes an empty table with a task.
        empty = next((p.shown.head(0) for p in found if TASK in p.shown.columns), problems_frame())
        first = _first_of_each_kind(pl.concat(_aligned(shown)), total.get_column(KIND), kept) if shown else empty
        held = [p.held for p in found if p.held.height]
        in_memory = pl.concat(_aligned(held)).collect() if held else problems_frame()
        spilled = tuple(s for p in found for s in p.spilled)
        if in_memory.height > kept and in_memory.group_by(KIND).len().get_column("len").max() > kept:  # type: ignore[operator]
            spilled = (*spilled, cls._write(in_memory))
            in_memory = problems_frame()
        return cls(first, total, in_memory, spilled, kept)

    @classmethod
    def counted(cls, shown: pl.DataFrame, counts: Mapping[str, int]) -> Problems:
        """The first rows of each kind with every kind's count, for problems another engine holds whole.

        The Spark engine writes every problem to its tables folder (``meta["tables"]``) and hands the
        driver the first rows of each kind and each kind's count: :attr:`counts` is then every problem,
        and :meth:`every` gives the rows shown (the full list is the Parquet Spark wrote).

        Parameters
        ----------
        shown
            The first rows of each kind, sorted, with the columns of :data:`PROBLEM_SCHEMA`; every kind
            of ``counts`` has at least one row (its ``refusing`` value is taken from there).
        counts
            Every problem counted by kind.

        Examples
        --------
        >>> first = problems_frame([{"kind": "attempt_gap", "refusing": False, "line": 2}])
        >>> Problems.counted(first, {"attempt_gap": 3}).counts.rows()
        [('attempt_gap', False, 3)]
        """
        refusing = dict(shown.select(KIND, REFUSING).unique(KIND).iter_rows())
        table = pl.DataFrame(
            {KIND: list(counts), REFUSING: [refusing[k] for k in counts], COUNT: list(counts.values())},
            schema=COUNTS_SCHEMA,
        )
        return cls(shown, table.sort(KIND, REFUSING, nulls_last=False), shown)

    @classmethod
    def _of(cls, frame: pl.DataFrame | pl.LazyFrame, kept: int) -> Problems:
        lf = conform(frame)
        rows = lf.collect() if isinstance(frame, pl.DataFrame) else lf.head(kept + 1).collect()
        if isinstance(frame, pl.DataFrame) and rows.height > kept:
            counts = _counts_of(rows)
            if counts.get_column(COUNT).max() > kept:  # type: ignore[operator]
                first = _first_of_each_kind(rows, counts.get_column(KIND), kept)
                return cls(first, counts, problems_frame(), (cls._write(rows),), kept)
        elif rows.height > kept:
            spilled = _Spilled.new()
            lf.sink_ipc(spilled.path)
            counts = _counts_of(spilled.scan())
            first = _first_of_each_kind(spilled.scan(), counts.get_column(KIND), kept)
            return cls(first, counts, problems_frame(), (spilled,), kept)
        rows = _own_text(sort_problems(rows))
        return cls(rows, _counts_of(rows), rows, (), kept)

    @staticmethod
    def _write(rows: pl.DataFrame) -> _Spilled:
        spilled = _Spilled.new()
        rows.write_ipc(spilled.path)
        return spilled

    @property
    def refusing(self) -> int:
        """How many problems refuse the batch."""
        return int(self.counts.filter(pl.col(REFUSING)).get_column(COUNT).sum())

    @property
    def total(self) -> int:
        """How many problems there are."""
        return int(self.counts.get_column(COUNT).sum())

    @property
    def complete(self) -> bool:
        """Whether :attr:`shown` holds every problem (no kind has more than ``kept`` rows)."""
        return self.shown.height == self.total

    def every(self) -> pl.LazyFrame:
        """Every problem, sorted as :func:`sort_problems` does (read back from the files when spilled).

        Spilled rows are sorted one (kind, source, candidate) group at a time, each group written to a
        temporary Arrow IPC file in turn, and the files are scanned in order: collecting or streaming the
        result (``sink_parquet``) never sorts every row at once, so memory holds the largest group. The sorted
        files are written once, in a store of this table's (see :meth:`close`): the frame stays readable until
        then, even when this table is gone.
        """
        if not self.spilled:
            return self.shown.lazy()
        if "paths" not in self._sorted:
            self._sorted["paths"] = self._sort_spilled()
        return pl.scan_ipc(self._sorted["paths"])

    def _sort_spilled(self) -> list[Path]:
        """Sort the rows in memory and in the files, group by group, into files of a store this table holds."""
        # Which parts (the rows in memory, each file) hold each group: a group is read from those alone.
        # A task, when the rows have one, leads the group (in shape order, as :func:`sort_problems` orders it).
        names = (self.spilled[0].scan() if self.spilled else self.held.lazy()).collect_schema().names()
        group_by = [c for c in (TASK, KIND, SOURCE, CANDIDATE) if c in names]
        held: dict[tuple[str | None, ...], list[pl.LazyFrame]] = {}
        for part in [self.held.lazy(), *(s.scan() for s in self.spilled)]:
            found = part.select(group_by).unique().collect(engine="streaming")
            for group in found.iter_rows():
                held.setdefault(group, []).append(part)
        store = self._sorted["store"] = TableStore()
        paths: list[Path] = []
        groups = pl.DataFrame(list(held), schema=dict.fromkeys(group_by, pl.String), orient="row")
        order = [k for k in _sort_keys(group_by) if not isinstance(k, str) or k in group_by]
        for group in groups.sort(order, nulls_last=False).iter_rows():
            path = store.path("sorted", len(paths), "arrow")
            rows = pl.concat(held[group], how="vertical").filter(
                *(pl.col(c).eq_missing(v) for c, v in zip(group_by, group, strict=True))
            )
            rows.sort(_sort_keys(names), nulls_last=False).sink_ipc(path)
            paths.append(path)
        return paths

    def of_kinds(self, kinds: Iterable[str]) -> pl.DataFrame:
        """Every row of ``kinds``, sorted (read from the files when spilled, without sorting the other kinds).

        For kinds with few rows (e.g. one per input column): the rows are collected whole.
        """
        wanted = pl.col(KIND).is_in(list(kinds))
        if not self.spilled:
            return self.shown.filter(wanted)
        parts = [self.held.lazy(), *(s.scan() for s in self.spilled)]
        rows = pl.concat(parts, how="diagonal").filter(wanted).collect(engine="streaming")
        return _own_text(sort_problems(conform(rows).collect()))

    def without(self, kinds: Iterable[str]) -> Problems:
        """These problems without the rows of ``kinds``."""
        gone = list(kinds)
        keep = ~pl.col(KIND).is_in(gone)
        return Problems(
            self.shown.filter(keep),
            self.counts.filter(keep),
            self.held.filter(keep),
            tuple(_Spilled(s.path, s.store, (*s.dropped, *gone)) for s in self.spilled),
            self.kept,
        )

    @property
    def stores(self) -> tuple[TableStore, ...]:
        """The stores of the files holding the rows beyond the first of each kind (none when nothing spilled)."""
        sorted_store = [self._sorted["store"]] if "store" in self._sorted else []
        return tuple(dict.fromkeys([*(s.store for s in self.spilled), *sorted_store]))

    def close(self) -> None:
        """Remove the files of :attr:`stores` now (a second call does nothing).

        Without it they stay until the interpreter exits, never removed by the garbage collector: a frame
        taken from :meth:`every` stays readable after this table is gone. After it, :meth:`every` and
        :meth:`of_kinds` of spilled problems fail; :attr:`shown` and :attr:`counts` stay in memory.

        Examples
        --------
        >>> rows = [{"kind": "duplicate_key", "line": n} for n in (2, 3, 4)]
        >>> found = Problems.gather([problems_frame(rows)], kept=1)
        >>> found.every().collect().get_column("line").to_list()
        [2, 3, 4]
        >>> found.close()
        >>> [store.closed for store in found.stores]
        [True, True]
        """
        for store in self.stores:
            store.close()

    def has(self, kinds: Iterable[str]) -> bool:
        """Whether any problem is of one of ``kinds``."""
        return bool(self.counts.filter(pl.col(KIND).is_in(list(kinds))).height)
