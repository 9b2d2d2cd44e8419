"""The frozen plan: which (candidate, case_id, trial) units were meant to be evaluated.

A plan is fixed before any result is read. It holds one row per case (with
optional slice columns, ``expected``, ``dataset_version`` and ``case_hash``),
the candidates, the number of trials, and optionally the run every result row
must come from. Its planned units are the cross product
candidates × cases × trials, unless an explicit units table is given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, TASK, TRIAL
from evalframe.load import PathLike
from evalframe.load import storage_options as remote_options
from evalframe.natural import natural_sorted, shape_order
from evalframe.plan import build
from evalframe.plan.coding import CAND_CODE, CASE_CODE, UID, UnitCoding, case_codes, case_column, id_codes


@dataclass(frozen=True)
class Plan:
    """A frozen evaluation plan.

    Attributes
    ----------
    cases
        One row per case: ``case_id`` (String) plus any plan columns
        (slices, ``expected``, ``dataset_version``, ``case_hash``, ``task``:
        the case's task, see :attr:`tasks`), sorted by ``case_id``.
    candidates
        The planned candidates, in declaration order.
    trials
        Trials per (candidate, case); trials are numbered 1..``trials``
        (a units table may number its own, e.g. from 0: see
        :attr:`trial_range`).
    run_id
        The run every ledger row must come from, or None.
    unit_codes
        When the plan is not the full cross product: its units as sorted
        Int64 codes (see :class:`UnitCoding`; :attr:`units` decodes them).
        Eight bytes per unit, so a plan of tens of millions of units fits in
        memory. None for a cross product.
    source
        Where the plan came from (file path or ``"plan"``).
    trial_bounds
        Overrides :attr:`trial_range` (a units table's own trial range, kept
        by :meth:`for_candidate` so a restricted plan judges trials exactly
        as the whole plan does).
    """

    cases: pl.DataFrame
    candidates: tuple[str, ...]
    trials: int = 1
    run_id: str | None = None
    unit_codes: pl.Series | None = None
    source: str = "plan"
    trial_bounds: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        # Case codes are row numbers of the cases sorted by case_id (then task: the same id may be in two tasks).
        if TASK in self.cases.columns:
            object.__setattr__(self, "cases", self.cases.sort(CASE_ID, TASK))
        elif not self.cases.get_column(CASE_ID).is_sorted():
            object.__setattr__(self, "cases", self.cases.sort(CASE_ID))

    @property
    def case_index(self) -> pl.DataFrame:
        """The cases' ids and codes: ``case_id`` (String) and ``_case`` (UInt32, the case's row in :attr:`cases`)."""
        return id_codes(self.cases.get_column(CASE_ID))

    @classmethod
    def from_frame(
        cls,
        cases: pl.DataFrame | pl.LazyFrame,
        *,
        candidates: Sequence[str] | None = None,
        trials: int = 1,
        run_id: str | None = None,
        source: str = "plan",
        problems: pl.DataFrame | None = None,
    ) -> Plan:
        """Build and validate a plan from a cases (or units) frame.

        Parameters
        ----------
        cases
            One row per ``case_id`` (String). If it has a ``candidate``
            column it is an explicit units table instead: one row per
            (candidate, case_id[, trial]); case-level columns must then agree
            across the rows of a case. A units table is read one candidate at
            a time (a lazy Parquet scan pushes the filter into the reader),
            so memory is bounded by the largest candidate plus the cases.
        candidates
            Planned candidates; required unless ``cases`` has a ``candidate``
            column.
        trials
            Trials per (candidate, case), ≥ 1 (ignored for a units table with
            a ``trial`` column).
        run_id
            Require every ledger row to carry this ``run_id``.
        source
            Name used in problems (a file path for file input).
        problems
            Problems already found while reading the plan file.

        Returns
        -------
        Plan

        Raises
        ------
        PlanError
            With every problem found: ``empty_plan``, ``duplicate_case``,
            ``empty_identifier``, ``padded_identifier``, ``empty_candidates``,
            ``repeated_candidate``, ``invalid_trials``, ``missing_column``,
            ``unexpected_column`` (a plan column named like a column the
            ledger or the audit's tables give per attempt or unit, see
            :data:`RESERVED_COLUMNS`, or of a type other than text, numbers,
            booleans, dates and times) and any problem of the file itself.

        Examples
        --------
        >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["refund", "quote"]}), candidates=["A", "B"])
        >>> plan.planned_units().collect()
        shape: (4, 3)
        ┌───────────┬─────────┬───────┐
        │ candidate ┆ case_id ┆ trial │
        │ ---       ┆ ---     ┆ ---   │
        │ str       ┆ str     ┆ i64   │
        ╞═══════════╪═════════╪═══════╡
        │ A         ┆ quote   ┆ 1     │
        │ A         ┆ refund  ┆ 1     │
        │ B         ┆ quote   ┆ 1     │
        │ B         ┆ refund  ┆ 1     │
        └───────────┴─────────┴───────┘
        """
        return build.from_frame(
            cls, cases, candidates=candidates, trials=trials, run_id=run_id, source=source, problems=problems
        )

    @classmethod
    def from_file(
        cls,
        path: PathLike,
        *,
        candidates: Sequence[str] | None = None,
        trials: int = 1,
        run_id: str | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> Plan:
        """Load a plan from CSV, JSON Lines or Parquet and validate it.

        ``path`` may be an object-storage URL (``s3://``, ``gs://``, ``az://``, ``https://``), read with
        ``storage_options`` (polars' keys, e.g. ``aws_endpoint_url``) over the environment's credentials
        (see :mod:`evalframe.load.remote`).

        CSV plan columns other than identifiers are cast to Int64 or Float64
        when every value parses (so ``input_length`` is numeric). A Parquet
        plan (file, folder, glob or hive lake) stays a lazy scan: a units
        table is read one candidate at a time.

        Raises
        ------
        PlanError
            With every problem of the file and of the plan (see
            :meth:`from_frame`).
        InputFormatError
            When the file cannot be read at all.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "plan.csv"
        >>> _ = p.write_text("case_id,input_length,expected\\nquote,120,007\\n")
        >>> Plan.from_file(p, candidates=["A"]).cases
        shape: (1, 3)
        ┌─────────┬──────────────┬──────────┐
        │ case_id ┆ input_length ┆ expected │
        │ ---     ┆ ---          ┆ ---      │
        │ str     ┆ str          ┆ str      │
        ╞═════════╪══════════════╪══════════╡
        │ quote   ┆ 120          ┆ 007      │
        └─────────┴──────────────┴──────────┘

        A CSV's columns stay text (SPEC §3: ``007`` is not ``7``); a column
        declared numeric (binned with ``bins=``) is parsed by :meth:`with_numeric`.
        """
        with remote_options(storage_options):
            return build.from_file(cls, path, candidates=candidates, trials=trials, run_id=run_id)

    def with_numeric(self, names: Sequence[str]) -> Plan:
        """The same plan with the text columns ``names`` parsed as numbers (they were declared numeric).

        Only a column declared numeric is ever parsed (SPEC §3: text stays
        text): the audit calls this for the slice columns given ``bins``. An
        empty field is null.

        Raises
        ------
        ValueError
            When a value of a named column is not a number, naming the
            column, the case and the value.

        Examples
        --------
        >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"], "n": ["120", "7"]}), candidates=["A"])
        >>> plan.with_numeric(["n"]).cases.get_column("n").to_list()
        [120.0, 7.0]
        """
        casts = []
        for name in names:
            column = self.cases.get_column(name)
            if column.dtype != pl.String:
                continue
            text = column.str.strip_chars()
            parsed = text.cast(pl.Float64, strict=False)
            bad = parsed.is_null() & text.is_not_null() & (text != "")
            if bad.any():
                case, value = self.cases.filter(bad).select(CASE_ID, name).row(0)
                msg = f"column {name!r} is declared numeric (bins) but case {case!r} has {value!r}, not a number"
                raise ValueError(msg)
            casts.append(parsed.alias(name))
        return replace(self, cases=self.cases.with_columns(casts)) if casts else self

    def with_units(self, units: pl.DataFrame) -> Plan:
        """The same plan with an explicit units table (``candidate``, ``case_id``, ``trial``).

        Units whose case the plan does not have are dropped (a validated plan
        never has them); a unit's candidate that the plan does not list is
        added. ``trials`` is kept. Used by importers that build the cases and
        the units separately.

        Examples
        --------
        >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
        >>> units = pl.DataFrame({"candidate": ["B", "A"], "case_id": ["q2", "q1"], "trial": [1, 1]})
        >>> plan.with_units(units).units.rows()
        [('A', 'q1', 1), ('B', 'q2', 1)]
        """
        listed = units.get_column(CANDIDATE).unique(maintain_order=True).to_list()
        candidates = (*self.candidates, *(c for c in listed if c not in self.candidates))
        trials = units.get_column(TRIAL).cast(pl.Int64)
        bounds = (int(trials.min()), int(trials.max())) if units.height else (1, 1)  # type: ignore[arg-type]
        plan = replace(self, candidates=candidates, unit_codes=None, trial_bounds=bounds)
        coded = plan.encode(units.with_columns(pl.col(TRIAL).cast(pl.Int64)))
        codes = coded.select(pl.col(UID).drop_nulls().unique().sort()).collect().get_column(UID)
        return replace(plan, unit_codes=codes)

    def without_units(self) -> Plan:
        """The same plan with no planned unit and no candidate (same cases and trial range).

        The audit checks rows of a candidate the plan does not have against
        it: every row is then unknown and no planned unit is missing.
        """
        return replace(
            self, candidates=(), unit_codes=pl.Series(UID, [], dtype=pl.Int64), trial_bounds=self.trial_range
        )

    def encode(self, rows: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
        """Add this plan's codes to rows with ``candidate``, ``case_id`` and ``trial`` (see :class:`UnitCoding`).

        ``_cand`` and ``_case`` (UInt32) are null when the candidate / case is
        not planned; ``_uid`` (Int64) is null unless both are planned and the
        trial is within :attr:`trial_range`. Case ids are matched exactly
        (a join on the strings). Rows keep their order; a lazy input is collected.
        """
        coding = self.coding
        in_range = pl.col(TRIAL).is_between(coding.low, coding.low + coding.span - 1)
        # The case codes are looked up on the case_id column alone, then put beside the rows (same order).
        frame = rows.collect() if isinstance(rows, pl.LazyFrame) else rows
        cases = case_codes(self.case_index, frame.get_column(CASE_ID))
        coded = frame.with_columns(coding.candidate_code().alias(CAND_CODE), cases)
        # The code is computed apart and put beside the rows as a Series: as an expression of with_columns
        # over rows read in several chunks (Parquet row groups), polars copies every column into one chunk
        # first.
        uid = coded.lazy().select(pl.when(in_range).then(coding.code()).alias(UID)).collect().to_series()
        return coded.with_columns(uid).lazy()

    @cached_property
    def case_order(self) -> pl.Series:
        """Each case's position (UInt32, by case code) in shape order (see :func:`evalframe.natural.shape_order`).

        Computed once per plan, when first asked for: the audit keeps a candidate's first missing cases by it.
        """
        return shape_order(self.cases.get_column(CASE_ID))

    @property
    def coding(self) -> UnitCoding:
        """How this plan numbers its units (see :class:`UnitCoding`)."""
        low, high = self.trial_range
        return UnitCoding(tuple(sorted(self.candidates)), self.cases.height, low, high - low + 1)

    def planned_codes(self) -> pl.LazyFrame:
        """The planned units as one sorted ``_uid`` (Int64) column (see :class:`UnitCoding`)."""
        if self.unit_codes is not None:
            return self.unit_codes.alias(UID).to_frame().lazy()
        return pl.LazyFrame().select(pl.int_range(0, self.n_units, dtype=pl.Int64).alias(UID))

    def decode(self, coded: pl.LazyFrame) -> pl.LazyFrame:
        """Add ``_cand``, ``_case`` (UInt32), ``trial`` (Int64), ``candidate`` and ``case_id`` to a frame of ``_uid``.

        ``candidate`` is an Enum of the sorted candidates (cheap to group
        by); ``case_id`` is a String.
        """
        return coded.with_columns(self.coding.parts()).with_columns(
            self.candidate_name(), case_column(self.cases.get_column(CASE_ID))
        )

    def candidate_name(self) -> pl.Expr:
        """``candidate`` from ``_cand``: an Enum of the sorted candidates, gathered by code (no text is hashed)."""
        names = self.coding.candidates
        return pl.lit(pl.Series(names, dtype=pl.Enum(names))).gather(pl.col(CAND_CODE)).alias(CANDIDATE)

    @property
    def units(self) -> pl.DataFrame | None:
        """The explicit planned units (``candidate``, ``case_id``, ``trial`` Int64), sorted; None: cross product."""
        if self.unit_codes is None:
            return None
        return self.planned_units().collect()

    def planned_units(self) -> pl.LazyFrame:
        """Return the planned units, one row per (candidate, case_id, trial), sorted by key.

        Columns: ``candidate`` (String), ``case_id`` (String), ``trial`` (Int64).
        """
        return self.decode(self.planned_codes()).select(pl.col(CANDIDATE).cast(pl.String), CASE_ID, TRIAL)

    @property
    def plan_hash(self) -> str:
        """SHA-256 (hex) of the plan's content: cases, candidates, trials, run and units.

        Independent of row order, so a shuffled plan file has the same hash
        (cases are sorted, and unit codes follow sorted candidates and cases).
        """
        digest = hashlib.sha256()
        digest.update(self.cases.sort(CASE_ID).write_csv().encode())
        digest.update(repr((sorted(self.candidates), self.trials, self.run_id)).encode())
        if self.unit_codes is not None:
            digest.update(repr(self.trial_range).encode())
            digest.update(self.unit_codes.cast(pl.Int64).to_numpy().data)  # the buffer, not a copy of it
        return digest.hexdigest()

    def for_candidate(self, candidate: str) -> Plan:
        """The same plan restricted to one planned candidate (for per-candidate execution).

        Raises
        ------
        ValueError
            When ``candidate`` is not planned.
        """
        if candidate not in self.candidates:
            msg = f"candidate {candidate!r} is not planned"
            raise ValueError(msg)
        codes = None
        if self.unit_codes is not None:
            coding = self.coding
            first = coding.candidates.index(candidate) * coding.block
            # The codes are sorted: the candidate's run is found by binary search and sliced, not filtered (a
            # filter would compare every unit of the plan for each candidate).
            start, stop = self.unit_codes.search_sorted(pl.Series([first, first + coding.block]), side="left")
            codes = self.unit_codes.slice(start, stop - start) - first
        restricted = replace(self, candidates=(candidate,), unit_codes=codes, trial_bounds=self.trial_range)
        restricted.__dict__["case_order"] = self.case_order  # the same cases: computed once for every candidate
        return restricted

    @property
    def tasks(self) -> tuple[str, ...]:
        """The plan's tasks: the distinct values of its ``task`` case column, in natural order; () without one.

        A task is part of a unit's identity (SPEC §1): the audit counts every number per (task, candidate).

        Examples
        --------
        >>> cases = pl.DataFrame({"case_id": ["b/1", "a/1", "a/2"], "task": ["task10", "task9", "task9"]})
        >>> Plan.from_frame(cases, candidates=["A"]).tasks
        ('task9', 'task10')
        >>> Plan.from_frame(pl.DataFrame({"case_id": ["q"]}), candidates=["A"]).tasks
        ()
        """
        if TASK not in self.cases.columns:
            return ()
        return tuple(natural_sorted(self.cases.get_column(TASK).cast(pl.String).unique().drop_nulls().to_list()))

    def for_task(self, task: str) -> Plan:
        """The plan restricted to one task's cases, without the ``task`` column: the plan of that task alone.

        A cross product keeps its candidates and trials. A units table keeps the task's units, and its
        candidates are those with a planned unit in the task, in declaration order; the trial range is the
        whole plan's (trials are judged as the whole plan judges them).

        Raises
        ------
        ValueError
            When ``task`` is not one of :attr:`tasks`.

        Examples
        --------
        >>> cases = pl.DataFrame({"case_id": ["b/1", "a/1", "a/2"], "task": ["b", "a", "a"]})
        >>> units = pl.DataFrame({"candidate": ["B", "A", "A"], "case_id": ["b/1", "a/1", "a/2"], "trial": [1, 1, 1]})
        >>> plan = Plan.from_frame(cases, candidates=["A", "B"]).with_units(units)
        >>> only_a = plan.for_task("a")
        >>> only_a.cases.columns, only_a.candidates, only_a.units.rows()
        (['case_id'], ('A',), [('A', 'a/1', 1), ('A', 'a/2', 1)])
        """
        if task not in self.tasks:
            msg = f"task {task!r} is not planned (the plan's tasks: {', '.join(self.tasks) or 'none'})"
            raise ValueError(msg)
        mine = self.cases.get_column(TASK).cast(pl.String) == task
        cases = self.cases.filter(mine).drop(TASK)
        if self.unit_codes is None or cases.height == self.cases.height:  # every unit is the task's: codes kept
            return replace(self, cases=cases)
        # The task's units by their case's row, not its id: the same case id may be planned in another task.
        rows = pl.Series(CASE_CODE, mine.arg_true(), dtype=pl.UInt32).implode()
        decoded = self.decode(self.planned_codes()).filter(pl.col(CASE_CODE).is_in(rows))
        units = decoded.select(pl.col(CANDIDATE).cast(pl.String), CASE_ID, TRIAL).collect()
        listed = set(units.get_column(CANDIDATE).unique().to_list())
        candidates = tuple(c for c in self.candidates if c in listed)
        restricted = replace(self, cases=cases, candidates=candidates, unit_codes=None, trial_bounds=self.trial_range)
        coded = restricted.encode(units).select(pl.col(UID).unique().sort()).collect().get_column(UID)
        return replace(restricted, unit_codes=coded)

    @property
    def trial_range(self) -> tuple[int, int]:
        """Lowest and highest planned trial: (1, trials), or a units table's own range (0-based allowed)."""
        if self.trial_bounds is not None:
            return self.trial_bounds
        return 1, self.trials

    @property
    def n_units(self) -> int:
        """Number of planned units."""
        if self.unit_codes is not None:
            return self.unit_codes.len()
        return len(self.candidates) * self.cases.height * self.trials
