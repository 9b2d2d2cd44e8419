"""The narwhals core's row work laid out on a backend, and what the driver finishes from its aggregates.

One implementation serves every backend the core runs on: :mod:`evalframe.engines.spark` lays it out on Spark
(:class:`~evalframe.engines.spark.SparkFrames`), and the differential test (``tests/differential.py``) on
polars frames (:class:`PolarsFrames`), so that what it compares with :func:`evalframe.audit` is the Spark
engine's own code, not a copy of it. A backend is only how the driver's small polars tables become frames
of that backend, and how a frame that several queries read is kept (:class:`Frames`).

Here: :func:`row_work` (canonical columns, identity checks and retry selection), :func:`missing_cases` (each
candidate's missing units, with its first case ids), :func:`case_patterns` (the case patterns collected
and typed) and :func:`summary_table` (the summary, finished on the driver with the polars path's own
functions, :func:`evalframe.funnel.funnel_from_outcome_counts` and
:func:`evalframe.funnel.uncertainty_from_case_patterns`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import CANDIDATE, CASE_HASH, CASE_ID, DATASET_VERSION, TRIAL
from evalframe.engines import core
from evalframe.engines.core import Lazy
from evalframe.funnel import collected_patterns as case_patterns
from evalframe.funnel import funnel_from_outcome_counts, uncertainty_from_case_patterns
from evalframe.plan import Plan
from evalframe.reconcile import case_order_table, with_missing_cases
from evalframe.reconcile import missing_cases as counted_missing

if TYPE_CHECKING:
    from evalframe.audit.step import Options

__all__ = [
    "Frames",
    "PolarsFrames",
    "RowWork",
    "case_patterns",
    "missing_cases",
    "row_work",
    "summary_table",
]


class Frames(Protocol):
    """How the driver's small polars tables become frames of a backend, and how a frame read twice is kept."""

    def frame(self, data: pl.DataFrame) -> Lazy:
        """``data`` as a lazy frame of the backend, with its column names and types."""
        ...

    def keep(self, frame: Lazy) -> Lazy:
        """``frame``, computed once for every later query that reads it (or as it is, where that is free)."""
        ...


class PolarsFrames:
    """Polars as a backend: a table is its own lazy frame, and keeping one is free.

    Examples
    --------
    >>> PolarsFrames().frame(pl.DataFrame({"a": [1]})).collect("polars").to_native().rows()
    [(1,)]
    """

    def frame(self, data: pl.DataFrame) -> Lazy:
        """``data`` as a narwhals lazy frame over polars."""
        made: Lazy = nw.from_native(data.lazy())
        return made

    def keep(self, frame: Lazy) -> Lazy:
        """``frame`` itself (polars plans a lazy frame once per query; nothing to keep)."""
        return frame


def _planned_units(frames: Frames, plan: Plan, cases: Lazy) -> Lazy:
    """The planned units with their plan columns: a units table's own, else cases × candidates × trials."""
    columns = [c for c in plan.cases.columns if c != CASE_ID]
    if plan.unit_codes is not None:
        listed = plan.planned_units().select(CANDIDATE, CASE_ID, pl.col(TRIAL).cast(pl.Int64)).collect()
        return frames.frame(listed).join(cases, on=CASE_ID, how="left").select(CANDIDATE, CASE_ID, TRIAL, *columns)
    low, high = plan.trial_range
    grid = pl.DataFrame(
        [(c, t) for c in plan.candidates for t in range(low, high + 1)],
        schema={CANDIDATE: pl.String, TRIAL: pl.Int64},
        orient="row",
    )
    return frames.frame(grid).join(cases, how="cross").select(CANDIDATE, CASE_ID, TRIAL, *columns)


@dataclass(frozen=True)
class RowWork:
    """The audit's row work on a backend (lazy; what several queries read is kept)."""

    #: The planned units with their plan columns.
    planned: Lazy
    #: Every ledger row in canonical columns, with ``_planned``.
    marked: Lazy
    #: Every attempt of a planned unit with ``attempts`` and ``counts``.
    attempts: Lazy
    #: Every row problem: the checks, the identity problems and the retry flags.
    problems: list[Lazy]
    #: The planned units with no ledger row.
    missing: Lazy


def row_work(frames: Frames, frame: Lazy, plan: Plan, shape: str, o: Options) -> RowWork:
    """Canonical columns, identity checks and retry selection of :mod:`evalframe.engines.core`, on ``frames``.

    ``frame`` is the ledger as read, with each row's ``line`` and ``source``, ``shape`` its shape
    (:func:`evalframe.engines.spark.session.ledger_shape`), ``o`` the audit's checked options.

    Examples
    --------
    >>> from evalframe.audit.step import Options
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["A"])
    >>> rows = pl.DataFrame({"case_id": ["a"], "passed": ["1"], "line": [1], "source": ["r.csv"]})
    >>> ledger = PolarsFrames().frame(rows)
    >>> o = Options("first", None, ("timeout", "error"), False, "report", "binary", (0.0, 1.0), None)
    >>> work = row_work(PolarsFrames(), ledger, plan, "passed", o)
    >>> work.missing.collect("polars").to_native().select("candidate", "case_id").rows()
    [('A', 'b')]
    """
    options = core.Options(
        retry=o.retry,
        max_attempts=o.max_attempts,
        retry_on=o.retry_on,
        strict_retries=o.strict_retries,
        missing_refuses=o.missing == "refuse",
        grade=o.grade,
        score_range=o.score_range,
        pass_threshold=o.pass_threshold,
        extra_columns=o.extra_columns,
    )
    cases = frames.frame(plan.cases)
    expected = (
        cases.select(CASE_ID, nw.col("expected").cast(nw.String()).alias("_expected")) if shape == "answers" else None
    )
    only = plan.candidates[0] if len(plan.candidates) == 1 else None
    made = core.canonical(frame, shape, options, expected, only)
    planned = frames.keep(_planned_units(frames, plan, cases))
    ident = core.identity(
        made.ledger,
        cases.select(CASE_ID, *(c for c in (DATASET_VERSION, CASE_HASH) if c in plan.cases.columns)),
        planned,
        candidates=plan.candidates,
        trial_range=plan.trial_range,
        units_table=plan.unit_codes is not None,
        run_id=plan.run_id,
        checks=made.checks,
    )
    marked = frames.keep(ident.ledger)
    selection = core.select_attempts(marked.filter(nw.col("_planned")).drop("_planned"), options)
    problems = [*made.problems, *ident.problems, *selection.flags]
    return RowWork(planned, marked, selection.attempts, problems, ident.missing)


def missing_cases(frames: Frames, gone: Lazy, plan: Plan) -> pl.DataFrame:
    """Each candidate's missing units counted, with its first case ids: :func:`evalframe.reconcile.missing_cases`.

    ``gone`` holds the missing units with ``candidate`` and ``case_id``; the plan's case order goes to the
    backend as a small table.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["A"])
    >>> gone = PolarsFrames().frame(pl.DataFrame({"candidate": ["A"], "case_id": ["b"], "trial": [1]}))
    >>> missing_cases(PolarsFrames(), gone, plan).rows()
    [('A', 1, 1, ['b'])]
    """
    return counted_missing(gone, frames.frame(case_order_table(plan, CASE_ID)), CANDIDATE, CASE_ID)


def summary_table(
    outcome_counts: pl.DataFrame,
    patterns: pl.DataFrame,
    planned: pl.DataFrame | None,
    o: Options,
    missing: pl.DataFrame,
) -> pl.DataFrame:
    """The summary of the units' outcome counts and case patterns, with each candidate's missing cases.

    ``outcome_counts`` is :func:`evalframe.engines.core.outcome_counts` of the units, collected; ``patterns``
    is :func:`case_patterns` with no ``by``; ``planned`` the planned units per candidate under ``every``
    (the counted rows are then observations, SPEC §4), else None. The columns are those of
    :attr:`evalframe.AuditReport.summary` before the slice flags: the funnel, the rates with their intervals,
    ``missing_cases`` (UInt32) and ``missing_case_ids`` (List[String], the first
    :data:`~evalframe.reconcile.MISSING_IDS_SHOWN`); ``missing`` is :func:`missing_cases`.
    """
    summary = uncertainty_from_case_patterns(
        funnel_from_outcome_counts(outcome_counts, planned=planned, pass_fail=o.pass_fail),
        patterns,
        confidence=o.confidence,
        score_range=o.score_range if o.grade == "numeric" else (0.0, 1.0),
        reducer=o.reducer,
        cases=o.cases,
    )
    return with_missing_cases(summary, missing)
