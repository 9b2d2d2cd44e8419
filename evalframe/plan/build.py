"""Building a plan: from a cases frame, from a units table read one candidate at a time, or from a file.

The functions here validate what they read (:mod:`evalframe.plan.checks`)
and construct the :class:`~evalframe.plan.Plan` they are given as ``cls``;
:meth:`Plan.from_frame <evalframe.plan.Plan.from_frame>` and
:meth:`Plan.from_file <evalframe.plan.Plan.from_file>` document them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, LINE, SOURCE, TASK, TRIAL
from evalframe.errors import PlanError
from evalframe.load import Loaded, PathLike, check_planned_units, collect_input, load, naming_the_damaged_file
from evalframe.plan.checks import (
    case_key,
    checked_cases,
    column_problems,
    identifier_problems,
    repeated_cases,
    reserved_column,
)
from evalframe.plan.coding import CASE_CODE, UID, UnitCoding, case_codes, case_column, id_codes
from evalframe.problems import concat_problems, problems_frame

if TYPE_CHECKING:
    from evalframe.plan.model import Plan


def from_frame(
    cls: type[Plan],
    cases: pl.DataFrame | pl.LazyFrame,
    *,
    candidates: Sequence[str] | None,
    trials: int,
    run_id: str | None,
    source: str,
    problems: pl.DataFrame | None,
) -> Plan:
    """Build and validate a plan from a cases (or units) frame (see :meth:`Plan.from_frame`)."""
    lf = cases.lazy()
    names = lf.collect_schema().names()
    found: list[pl.DataFrame] = [problems if problems is not None else problems_frame()]
    extra: list[dict[str, Any]] = []
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        extra.append(
            {
                "kind": "invalid_trials",
                "source": source,
                "detail": f"trials must be a positive integer, got {trials!r}",
            }
        )
        trials = 1
    if CASE_ID not in names:
        extra.append({"kind": "missing_column", "source": source, "detail": "the plan has no case_id column"})
        raise PlanError(concat_problems([*found, problems_frame(extra)]))
    columns = column_problems(lf.collect_schema(), source)
    if columns:
        raise PlanError(concat_problems([*found, problems_frame([*extra, *columns])]))
    lf = lf.with_columns(pl.col(CASE_ID).cast(pl.String))
    if LINE not in names:
        lf = lf.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
    if CANDIDATE in names:
        if candidates is not None:
            extra.append(
                {
                    "kind": "repeated_candidate",
                    "source": source,
                    "detail": "candidates given both as a list and as a plan column",
                }
            )
        return from_units_table(cls, lf, trials, run_id, source, found, extra)
    frame = collect_input(lf, source)
    if candidates is None:
        candidates = []
    key = case_key(frame.columns)  # case ids are unique within a task (SPEC §1)
    n_cases, n_candidates = frame.select(key).n_unique(), len(set(candidates))
    what = f"{_counted(n_cases, 'case')} × {_counted(n_candidates, 'candidate')} × {_counted(trials, 'trial')}"
    check_planned_units(n_cases * n_candidates * trials, source, what)  # before any unit is built
    extra.extend(identifier_problems(list(candidates), "candidate", source))
    within = "its task" if len(key) > 1 else "the plan"
    if n_cases < frame.height:  # a case key is repeated (a null one too: counted once): find each of its rows
        found.append(repeated_cases(frame, source, f"case_id appears more than once in {within}", key=key))
    try:
        frame = checked_cases(frame, source, found, extra)
    except PlanError as exc:  # what is left to check a ledger against in the same run (SPEC §3: every problem)
        kinds = set(exc.problem_counts.get_column("kind").to_list())
        planned = tuple(dict.fromkeys(candidates))
        cases = frame.filter(pl.col(CASE_ID).is_not_null()).unique(key, keep="first", maintain_order=True)
        if kinds <= CASE_SET_KEPT and planned and cases.height:
            cases = cases.drop(LINE, SOURCE, strict=False)
            exc.checkable = cls(cases=cases, candidates=planned, trials=trials, run_id=run_id, source=source)
        raise
    return cls(cases=frame, candidates=tuple(candidates), trials=trials, run_id=run_id, source=source)


#: Plan problems that leave its cases and candidates known, each as written (a repeated case is one case):
#: a ledger's problems are still found against them in the same run (:attr:`PlanError.checkable`). Any other
#: (a CSV record that could not be read, a missing column, an empty plan) leaves the plan in doubt.
CASE_SET_KEPT: Final = frozenset({"duplicate_case", "padded_identifier", "repeated_candidate"})


def from_file(
    cls: type[Plan], path: PathLike, *, candidates: Sequence[str] | None, trials: int, run_id: str | None
) -> Plan:
    """Load a plan from CSV, JSON Lines or Parquet and validate it (see :meth:`Plan.from_file`)."""
    loaded: Loaded = load(path)
    frame: pl.DataFrame | pl.LazyFrame = loaded.frame.drop(SOURCE)
    # A Parquet plan's own line / source columns (a CSV's or JSON Lines' are refused by the loader).
    reserved = [reserved_column(name, str(path)) for name in loaded.stored]
    with naming_the_damaged_file(loaded):
        return cls.from_frame(
            frame,
            candidates=candidates,
            trials=trials,
            run_id=run_id,
            source=str(path),
            problems=concat_problems([loaded.problems, problems_frame(reserved)]) if reserved else loaded.problems,
        )


def from_units_table(
    cls: type[Plan],
    lf: pl.LazyFrame,
    trials: int,
    run_id: str | None,
    source: str,
    found: list[pl.DataFrame],
    extra: list[dict[str, Any]],
) -> Plan:
    """Validate and encode a units table one candidate at a time (see :meth:`Plan.from_frame`).

    Each candidate's rows are read once: joined on ``case_id`` to the
    distinct case-level rows seen so far (new or disagreeing ones are
    added), checked, and kept only as integer codes (case row << 32 |
    trial). Those become unit codes once the cases and trial range are
    final.

    With a ``task`` column a case is (task, case_id) (SPEC §1): the rows are read on an identity that joins
    the two (:func:`_task_identity`), so one case id in two tasks is two cases.
    """
    names = lf.collect_schema().names()
    if TASK in names:
        lf = lf.with_columns(pl.col(CASE_ID).alias(_OWN_ID), _task_identity().alias(CASE_ID))
        names = [*names, _OWN_ID]
        first = len(found)
    lf = lf.with_columns(pl.col(CANDIDATE).cast(pl.String))
    in_plan = collect_input(lf.select(pl.col(CANDIDATE).unique(maintain_order=True)), source).to_series()
    candidates = [c for c in in_plan.to_list() if c is not None]
    chunks: list[tuple[str | None, pl.Expr]] = [(c, pl.col(CANDIDATE) == c) for c in sorted(candidates)]
    if in_plan.null_count():
        chunks.append((None, pl.col(CANDIDATE).is_null()))
    # Every name is checked in one call, every row only of a bad name.
    named_once = pl.DataFrame({CASE_ID: candidates}, schema={CASE_ID: pl.String})
    from evalframe.schemas import PlanCasesModel, failures_as_problems  # imported on use: pandera is slow to import

    bad_names = set(failures_as_problems(named_once, PlanCasesModel).get_column(CASE_ID).to_list())
    rows = collect_input(lf.select(pl.len()), source).item()
    if TRIAL in names:
        check_planned_units(rows, source, f"{_counted(rows, 'row')} of planned units")
    else:  # each row is crossed with the trials below: counted before
        check_planned_units(rows * trials, source, f"{_counted(rows, 'row')} × {_counted(trials, 'trial')}")
    reader = _UnitsReader([c for c in names if c not in (CANDIDATE, TRIAL, SOURCE)], source, bad_names, found)
    for name, where in chunks:
        chunk = collect_input(lf.filter(where), source)
        if TRIAL not in names:
            chunk = chunk.join(pl.DataFrame({TRIAL: range(1, trials + 1)}, schema={TRIAL: pl.Int64}), how="cross")
        reader.add(name, chunk)
    frame = reader.known if reader.known is not None else lf.select(reader.case_cols).head(0).collect()
    found.append(repeated_cases(frame, source, "case-level plan columns disagree between rows of this case"))
    final = identity = frame
    if TASK in names:  # each problem and case with its own case id again
        found[first:] = [f.with_columns(_own_id(f)) if CASE_ID in f.columns else f for f in found[first:]]
        frame = frame.with_columns(pl.col(_OWN_ID).alias(CASE_ID)).drop(_OWN_ID)
    frame = checked_cases(frame, source, found, extra)  # raises on any problem: codes below are clean
    if TASK in names:  # the plan's order (by case_id, then task); every candidate's rows renumbered into it
        frame = frame.sort(CASE_ID, TASK)
        identity, final = frame.with_columns(_task_identity()), frame.clear()
    values = reader.trial_values
    bounds = (min(values), max(values)) if values else (1, 1)
    coding = UnitCoding(tuple(sorted(candidates)), frame.height, bounds[0], bounds[1] - bounds[0] + 1)
    return cls(
        cases=frame,
        candidates=tuple(candidates),
        trials=max(1, len(values)),
        run_id=run_id,
        unit_codes=reader.unit_codes(coding, identity if TASK in names else frame, final),
        source=source,
        trial_bounds=bounds,
    )


#: A units table's own case ids while it is read on the (task, case_id) identity (see :func:`_task_identity`).
_OWN_ID: Final = "_ef_case_id"


def _task_identity() -> pl.Expr:
    r"""(task, case_id) as one string that sorts as the pair: the task, a NUL, the case id (null without a case id).

    Examples
    --------
    >>> pl.DataFrame({"task": ["a", None], "case_id": ["q1", "q2"]}).select(_task_identity()).to_series().to_list()
    ['a\x00q1', '\x00q2']
    """
    task = pl.col(TASK).cast(pl.String).fill_null("")
    return pl.concat_str([task, pl.lit("\x00"), pl.col(CASE_ID).cast(pl.String)]).alias(CASE_ID)


def _own_id(problems: pl.DataFrame) -> pl.Expr:
    """The case id of problems found on the (task, case_id) identity: the part after its NUL."""
    return pl.col(CASE_ID).cast(pl.String).str.split_exact("\x00", 1).struct.field("field_1").alias(CASE_ID)


def _counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``"4 cases"``, ``"1 trial"``)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


#: Bits of a trial number in the per-candidate codes of a units table being read.
_TRIAL_BITS: Final = 32
#: Largest trial number a units table may plan.
_MAX_TRIAL: Final = 2**31 - 1


@dataclass
class _UnitsReader:
    """What reading a units table one candidate at a time has found so far.

    Attributes
    ----------
    case_cols
        The case-level columns (``case_id``, the plan columns, ``line``).
    source, bad_names, found
        Where the plan came from; the candidate names that fail the
        identifier checks; the problems found (appended to).
    known
        The distinct case-level rows so far, sorted by (case_id, line).
    index
        The lookup table of ``known``'s ids (:func:`~evalframe.plan.coding.id_codes`) while it holds one
        row per case.
    local
        Per candidate: its codes (case row << 32 | trial) against that version of ``known``.
    trial_values
        Every valid trial number seen.
    previous
        The last candidate's compared columns and codes, when it had no repeated unit.
    """

    case_cols: list[str]
    source: str
    bad_names: set[str]
    found: list[pl.DataFrame]
    known: pl.DataFrame | None = None
    index: pl.DataFrame | None = None
    local: list[tuple[pl.Series, pl.DataFrame]] = field(default_factory=list)
    trial_values: set[int] = field(default_factory=set)
    previous: tuple[pl.DataFrame, pl.Series] | None = None

    def add(self, name: str | None, chunk: pl.DataFrame) -> None:
        """Check one candidate's rows (with a ``trial`` column) and keep their codes."""
        chunk = chunk.with_columns(_trial_number(chunk.schema[TRIAL]).alias("_trial"))
        self.found.append(
            chunk.filter(pl.col("_trial").is_null()).select(
                pl.lit("invalid_trials").alias("kind"),
                pl.lit(self.source).alias(SOURCE),
                LINE,
                CANDIDATE,
                CASE_ID,
                pl.format(
                    "trial {} is not a whole number in 0..{}", pl.col(TRIAL).cast(pl.String), pl.lit(_MAX_TRIAL)
                ).alias("detail"),
            )
        )
        self.trial_values.update(chunk.get_column("_trial").drop_nulls().unique().to_list())
        # One candidate per chunk: its rows are checked only when its name is bad (or null).
        if name is None or name in self.bad_names:
            named = chunk.select(pl.col(CANDIDATE).alias(CASE_ID), LINE)
            from evalframe.schemas import PlanCasesModel, failures_as_problems  # pandera: imported on use

            bad = failures_as_problems(named, PlanCasesModel).rename({CASE_ID: CANDIDATE})
            self.found.append(
                bad.with_columns(
                    pl.lit(self.source).alias(SOURCE), pl.col("detail").str.replace(CASE_ID, CANDIDATE, literal=True)
                )
            )
        compared = [*(c for c in self.case_cols if c != LINE), "_trial"]
        # Plans usually list the same cases, in the same order, for every candidate: then the rows of the
        # previous candidate were matched already, and their codes are this candidate's (an exact shortcut).
        if self.previous is not None and chunk.select(compared).equals(self.previous[0]):
            codes = self.previous[1]
        else:
            codes, repeated = self._numbered(name, chunk)
            # Kept for the next candidate only when it had no repeated unit (those need their own lines).
            self.previous = None if repeated else (chunk.select(compared), codes)
        assert self.known is not None  # set by the first chunk, which is never a repeat
        self.local.append((codes, self.known))

    def _numbered(self, name: str | None, chunk: pl.DataFrame) -> tuple[pl.Series, bool]:
        """The chunk's codes against ``known`` (updated), and whether a unit is listed twice (a problem)."""
        before = self.known
        self.known, rows = _match_cases(self.known, self.index, chunk, self.case_cols, carry=["_trial"])
        if self.known is not before:
            self.index = id_codes(self.known.get_column(CASE_ID)) if _one_row_per_case(self.known) else None
        code = (pl.col(CASE_CODE).cast(pl.Int64) * 2**_TRIAL_BITS + pl.col("_trial")).alias(UID)
        rows = rows.with_columns(code)
        codes = rows.get_column(UID)
        listed = codes.drop_nulls()
        if listed.n_unique() == listed.len():  # counting distinct codes is quick; marking them is not
            return codes, False
        self.found.append(
            rows.filter(codes.is_duplicated() & codes.is_not_null()).select(
                pl.lit("duplicate_case").alias("kind"),
                pl.lit(self.source).alias(SOURCE),
                LINE,
                pl.lit(name, pl.String).alias(CANDIDATE),
                CASE_ID,
                pl.col("_trial").alias(TRIAL),
                pl.lit("planned unit listed more than once").alias("detail"),
            )
        )
        return codes, True

    def unit_codes(self, coding: UnitCoding, cases: pl.DataFrame, final: pl.DataFrame) -> pl.Series:
        """The sorted unit codes of every candidate against the final ``cases`` (``final``: ``known`` at the end)."""
        per_candidate: list[pl.Series] = []
        for position, (codes, version) in enumerate(self.local[: len(coding.candidates)]):
            if position and codes is self.local[position - 1][0] and version is self.local[position - 1][1]:
                # Listed like the candidate before it: its units are that candidate's, one block further.
                per_candidate.append(per_candidate[-1] + coding.block)
            else:
                per_candidate.append(_unit_codes(codes, None if version is final else version, cases, coding, position))
        return pl.concat(per_candidate or [pl.Series(UID, [], dtype=pl.Int64)])


def _trial_number(dtype: pl.DataType) -> pl.Expr:
    """A units table's ``trial`` as Int64, null unless it is a whole number in 0.._MAX_TRIAL (1.5 is not 1)."""
    trial = pl.col(TRIAL)
    if dtype == pl.Boolean:  # True is not trial 1
        return pl.lit(None, pl.Int64)
    whole = pl.when(trial == trial.round(0)).then(trial) if dtype.is_float() else trial
    number = whole.cast(pl.Int64, strict=False)
    return pl.when(number.is_between(0, _MAX_TRIAL)).then(number)


def _match_cases(
    known: pl.DataFrame | None,
    index: pl.DataFrame | None,
    chunk: pl.DataFrame,
    columns: Sequence[str],
    carry: Sequence[str],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Add a candidate's distinct case-level rows to ``known``; number its rows by their row in ``known``.

    ``known`` holds the distinct case-level rows (``columns``: ``case_id``,
    the plan columns and the first ``line``) seen so far, sorted by case.
    ``index`` is the lookup table of its ids when it holds one row per
    case (the caller keeps it, see :func:`_one_row_per_case`), else None.
    The usual plan lists the same cases with the same columns for every
    candidate: that is confirmed by one lookup of the chunk's ``case_id``
    that also numbers the rows; only new or disagreeing rows are
    deduplicated and added. Returns ``known`` and the chunk's ``case_id``,
    ``line``, ``carry`` columns and ``_case``, in any order.
    """
    key = [c for c in columns if c != LINE]
    keep = [CASE_ID, LINE, *carry]
    if known is not None and index is not None:
        rows = chunk.select(list(dict.fromkeys([*key, *keep]))).with_columns(
            case_codes(index, chunk.get_column(CASE_ID))
        )
        others = [
            pl.col(c).ne_missing(case_column(known.get_column(c)).alias(f"{c}_known")) for c in key if c != CASE_ID
        ]
        differ = pl.col(CASE_CODE).is_null() | pl.any_horizontal([pl.lit(False), *others])
        new = rows.filter(differ).select(columns)
        if new.height == 0:
            return known, rows.select(*keep, CASE_CODE)
    else:
        new = chunk.select(columns)
    distinct = new.unique(subset=key, keep="first")
    if known is not None:  # the first chunk's distinct rows are all there is (no second pass over them)
        merged = pl.concat([known, distinct], how="vertical_relaxed")
        distinct = merged.unique(subset=key, keep="first", maintain_order=True)
    known = distinct.sort(CASE_ID, LINE)
    numbered = known.select(CASE_ID).unique(keep="first", maintain_order=True).with_row_index(CASE_CODE)
    return known, chunk.select(keep).join(numbered, on=CASE_ID, how="left")


def _one_row_per_case(known: pl.DataFrame) -> bool:
    """Whether the case-level rows seen so far hold one row per case (no disagreement yet).

    They are sorted by case_id: a repeated id follows itself (no id is hashed).
    """
    ids = pl.col(CASE_ID)
    return not known.lazy().select(ids.eq_missing(ids.shift(1)).any()).collect().item()


def _unit_codes(
    codes: pl.Series, version: pl.DataFrame | None, cases: pl.DataFrame, coding: UnitCoding, candidate: int
) -> pl.Series:
    """Per-candidate codes (case row << 32 | trial) → sorted unit codes against the final ``cases``.

    ``version`` is the case-level table the rows were numbered against when
    cases were added after this candidate was read (None: the final one).
    """
    row = codes // 2**_TRIAL_BITS
    if version is not None:  # renumber the rows of that older table
        first_rows = version.select(CASE_ID).unique(keep="first", maintain_order=True)
        renumber = first_rows.join(
            cases.select(CASE_ID).with_row_index("_final"), on=CASE_ID, how="left", maintain_order="left"
        )
        row = renumber.get_column("_final").cast(pl.Int64).gather(row)
    trial = codes % 2**_TRIAL_BITS
    unit: pl.Series = (candidate * coding.n_cases + row) * coding.span + (trial - coding.low)
    return unit.alias(UID).sort()
