"""The differential test's two halves: seeded hostile ledgers, and the narwhals core run on polars frames.

:func:`batch` makes a small plan and a hostile ledger of 1-8 typed rows (as a Parquet file or a lake gives
them: text columns, a float score, nulls) from one seed, reusing the fuzz suite's ids and hostile values
(:mod:`tests.property.test_fuzz`). :func:`polars_side` audits it with :func:`evalframe.audit` on polars;
:func:`core_side` runs the Spark engine's own steps (:mod:`evalframe.engines.driver`) on the same polars
frames. Both give an :class:`Outcome`; they must be equal.

Run by hand to count the differing seeds: ``python -m tests.differential 1000``.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe.attempts import RETRY_FLAGS
from evalframe.audit.step import Options
from evalframe.columns import (
    CANDIDATE,
    CASE_ID,
    DATASET_VERSION,
    EXEC_STATUSES,
    KIND,
    REFUSING,
    SCORE_STATUSES,
    TRIAL,
)
from evalframe.engines import core
from evalframe.engines.driver import PolarsFrames, case_patterns, missing_cases, row_work, summary_table
from evalframe.engines.spark.aggregates import planned_by
from evalframe.engines.spark.session import ledger_shape
from evalframe.engines.spark.tables import units_schema
from evalframe.problems import concat_problems
from evalframe.reconcile import missing_problems
from tests.property.test_fuzz import ANSWERS, CANDIDATES, CASE_IDS, HOSTILE

#: Statuses a row is given: the SPEC's spellings, and spellings that are not (with hostile text, see :func:`_value`).
EXEC = (list(EXEC_STATUSES), ["Completed", "skipped"])
SCORED = (list(SCORE_STATUSES), ["unscored", "invented"])
#: Scores of a typed score column: grades and a range, and what is not a number in it.
SCORES = ([0.0, 1.0, 1.0, 0.5, -0.0], [2.0, -1.0, float("nan"), float("inf"), float("-inf")])


@dataclass(frozen=True)
class Batch:
    """One generated plan, ledger (with ``line`` and ``source``) and the audit's options."""

    plan: ef.Plan
    ledger: pl.DataFrame
    options: dict[str, Any]


@dataclass(frozen=True)
class Shape:
    """What every part of a stacked batch shares: the ledger's columns, the plan's, the run and the options.

    ``hostile`` scales how often a value is hostile, null or not a SPEC spelling (1: as the fuzz suite; 0: never).
    ``sole`` is the one candidate of a ledger without a ``candidate`` column.
    """

    columns: tuple[str, ...]
    expected: bool
    version: bool
    run_id: str | None
    options: dict[str, Any]
    hostile: float
    sole: str | None


def _value(rng: random.Random, good: Sequence[Any], hostile: float) -> Any:
    """A good value mostly; sometimes a hostile token (``hostile`` of the time) or a null."""
    roll = rng.random()
    if roll < hostile:
        return rng.choice(HOSTILE)
    if roll < hostile + 0.8 * hostile:
        return None
    return rng.choice(good)


def _spelled(rng: random.Random, values: tuple[list[Any], list[Any]], hostile: float) -> Any:
    """A SPEC spelling mostly; one that is not a quarter of the time at ``hostile`` 1."""
    valid, invalid = values
    return rng.choice(invalid if rng.random() < 0.25 * hostile else valid)


def _shape(rng: random.Random, hostile: float) -> Shape:
    kind = rng.choice(["passed", "score", "status", "answers"])
    columns = [CASE_ID]
    if rng.random() < 0.7:
        columns.append(CANDIDATE)
    if rng.random() < 0.7:
        columns.append(TRIAL)
    options: dict[str, Any] = {}
    if kind == "status":
        if rng.random() < 0.5:
            columns.append("attempt")
            options["retry"] = rng.choice(["first", "last_allowed", "every"])
        columns.append("exec_status")
        if rng.random() < 0.7:
            columns.append("score_status")
    if kind in ("passed", "status") and rng.random() < 0.8:
        columns.append("passed")
    if kind == "score" or (kind == "status" and "passed" not in columns):
        columns.append("score")
        if rng.random() < 0.4:
            options["grade"] = "numeric"
            if rng.random() < 0.5:
                options["pass_threshold"] = 0.5
    if kind == "answers":
        columns.append("answer")
    run_id = rng.choice([None, None, "run-1"])
    if run_id is not None or rng.random() < 0.2:
        columns.append("run_id")
    sole = None if CANDIDATE in columns else rng.choice(CANDIDATES)
    return Shape(tuple(columns), kind == "answers", rng.random() < 0.3, run_id, options, hostile, sole)


def _part(rng: random.Random, shape: Shape, prefix: str) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """One part's planned units and ledger rows; its case ids and candidates begin with ``prefix``."""
    h = shape.hostile
    cases = [prefix + c for c in rng.sample(CASE_IDS, rng.randint(1, 3))]
    cands = [shape.sole] if shape.sole is not None else [prefix + c for c in rng.sample(CANDIDATES, rng.randint(1, 2))]
    trials = rng.randint(1, 2) if TRIAL in shape.columns else 1
    expected = {c: rng.choice(ANSWERS) for c in cases}
    version = {c: rng.choice(["1.10", "1.1"]) for c in cases}
    units = [(d, c, t) for d in cands for c in cases for t in range(1, trials + 1)]
    plan: dict[str, list[Any]] = {CANDIDATE: [d for d, _, _ in units], CASE_ID: [c for _, c, _ in units]}
    plan[TRIAL] = [t for _, _, t in units]
    if shape.expected:
        plan["expected"] = [expected[c] for _, c, _ in units]
    if shape.version:
        plan[DATASET_VERSION] = [version[c] for _, c, _ in units]
    n = rng.randint(1, 8)
    # Keys drawn at random (unplanned ones among them), or, in a part that is not hostile, distinct planned units.
    keys = rng.sample(units, min(n, len(units))) if rng.random() >= h else None
    n = n if keys is None else len(keys)
    draw = {
        CANDIDATE: lambda: _value(rng, cands + ["Z"], 0.1 * h),
        CASE_ID: lambda: _value(rng, cases + ["zz"], 0.1 * h),
        TRIAL: lambda: _value(rng, [str(t) for t in range(1, trials + 1)] + ["3"], 0.15 * h),
        "attempt": lambda: _value(rng, ["1", "1", "2"], 0.1 * h),
        "exec_status": lambda: _value(rng, [_spelled(rng, EXEC, h)], 0.1 * h),
        "score_status": lambda: _value(rng, [_spelled(rng, SCORED, h)], 0.1 * h),
        "passed": lambda: _value(rng, ["0", "1"], 0.25 * h),
        "score": lambda: _spelled(rng, SCORES, h) if rng.random() > 0.1 * h else None,
        "answer": lambda: _value(rng, ANSWERS, 0.15 * h),
        "run_id": lambda: _value(rng, ["run-1", "run-1", "run-2"] if rng.random() < h else ["run-1"], 0.1 * h),
    }
    rows = {c: [draw[c]() for _ in range(n)] for c in shape.columns}
    if keys is not None:
        rows[CASE_ID] = [c for _, c, _ in keys]
        for column, values in ((CANDIDATE, [d for d, _, _ in keys]), (TRIAL, [str(t) for _, _, t in keys])):
            if column in rows:
                rows[column] = values
    if rng.random() < 0.2 * h and n > 1:  # a repeated row
        i = rng.randrange(n)
        for values in rows.values():
            values[rng.randrange(n)] = values[i]
    return plan, rows


Part = tuple[dict[str, list[Any]], dict[str, list[Any]]]


def parts(seed: int, count: int, hostile: float = 1.0) -> tuple[Shape, list[Part]]:
    """A seeded :class:`Shape` and ``count`` parts of it (see :func:`stacked`), to audit alone or stacked."""
    rng = random.Random(seed)
    shape = _shape(rng, hostile)
    return shape, [_part(rng, shape, f"{i}|" if count > 1 else "") for i in range(count)]


def stacked(shape: Shape, drawn: Sequence[Part]) -> Batch:
    """The plan and ledger of generated parts that share one :class:`Shape`, stacked into one batch.

    Each part has its own cases, candidates and trials, named apart by a prefix ``"<part>|"`` (none for one
    part); hostile values are not prefixed, so they stay what they are. With several parts the plan is their
    units table; one part's plan is its cases crossed with its candidates and trials.
    """
    plan_cols = {c: [v for p, _ in drawn for v in p[c]] for c in drawn[0][0]}
    rows = {c: [v for _, r in drawn for v in r[c]] for c in shape.columns}
    if len(drawn) > 1:
        plan = ef.Plan.from_frame(pl.DataFrame(plan_cols), run_id=shape.run_id)
    else:
        cases = pl.DataFrame(plan_cols).drop(CANDIDATE, TRIAL).unique(CASE_ID, maintain_order=True)
        candidates = list(dict.fromkeys(plan_cols[CANDIDATE]))
        plan = ef.Plan.from_frame(cases, candidates=candidates, trials=max(plan_cols[TRIAL]), run_id=shape.run_id)
    schema = {c: (pl.Float64 if c == "score" else pl.String) for c in rows}
    n = len(rows[CASE_ID])
    ledger = pl.DataFrame(rows, schema=schema).with_columns(
        pl.int_range(1, n + 1, dtype=pl.Int64).alias("line"), pl.lit("results.parquet").alias("source")
    )
    return Batch(plan, ledger, shape.options)


def batch(seed: int) -> Batch:
    """A seeded plan and hostile ledger of 1-8 rows (see the module docstring)."""
    return stacked(*parts(seed, 1))


@dataclass(frozen=True)
class Outcome:
    """What an audit gave: ``refused`` with its problems, or a ``report`` with problems, units and summary."""

    kind: str
    problems: pl.DataFrame
    units: pl.DataFrame | None = None
    summary: pl.DataFrame | None = None


def polars_side(b: Batch) -> Outcome:
    """:func:`evalframe.audit` on polars."""
    try:
        report = ef.audit(b.plan, b.ledger, **b.options)
    except ef.AuditRefused as refused:
        return Outcome("refused", refused.problems)
    return Outcome("report", report.problems, report.units.lazy().collect(), report.summary)


def _options(options: dict[str, Any]) -> Options:
    return Options(
        options.get("retry", "first"),
        None,
        ("timeout", "error"),
        False,
        "report",
        options.get("grade", "binary"),
        (0.0, 1.0),
        options.get("pass_threshold"),
    )


def core_side(b: Batch) -> Outcome:
    """The Spark engine's own steps (:mod:`evalframe.engines.driver`) run on polars frames.

    The row work, the missing cases and the summary are the functions :func:`evalframe.engines.spark.audit_on_spark`
    calls; only what Spark writes to Parquet and reads back (the problems, the units) is collected here instead.
    """
    plan, o, frames = b.plan, _options(b.options), PolarsFrames()
    frame = nw.from_native(b.ledger.lazy())
    try:
        shape = ledger_shape(frame, plan, o)
    except ef.AuditRefused as refused:
        return Outcome("refused", refused.problems)
    work = row_work(frames, frame, plan, shape, o)
    missing = missing_cases(frames, work.missing, plan)
    rows = nw.concat(work.problems, how="vertical")  # one query, as on Spark
    gone_problems = missing_problems(missing, plan.source, refusing=False).select(core.PROBLEM_COLUMNS)
    problems = concat_problems([rows.collect("polars").to_native(), gone_problems])
    if problems.filter(pl.col(REFUSING) & ~pl.col(KIND).is_in(list(RETRY_FLAGS))).height:
        return Outcome("refused", problems.filter(~pl.col(KIND).is_in(list(RETRY_FLAGS))))
    attempts = frames.frame(work.attempts.collect("polars").to_native())  # as Spark reads the attempts written
    units = units_schema(core.unit_outcomes(work.planned, attempts, plan.cases.columns).to_native(), plan).collect()
    counted = frames.frame(units.with_columns(pl.col("outcome").cast(pl.String)))
    planned = planned_by(plan, [CANDIDATE]) if o.retry == "every" else None
    patterns = case_patterns(core.case_patterns(core.case_sums(counted)), [])
    outcome_counts = core.outcome_counts(counted).collect("polars").to_native()
    return Outcome("report", problems, units, summary_table(outcome_counts, patterns, planned, o, missing))


def differences(a: Outcome, b: Outcome) -> str | None:
    """None when the outcomes agree, else the first difference found."""
    if a.kind != b.kind:
        return f"kind {a.kind} != {b.kind}"
    for name in ("problems", "units", "summary"):
        left, right = getattr(a, name), getattr(b, name)
        if left is None and right is None:
            continue
        try:
            assert_frame_equal(left, right)
        except AssertionError as exc:
            return f"{name}: {exc}"
    return None


def main(count: int) -> None:
    """Print each differing seed and the count."""
    differing = 0
    for seed in range(count):
        b = batch(seed)
        found = differences(polars_side(b), core_side(b))
        if found is not None:
            differing += 1
            print(seed, found.splitlines()[0][:200])
    print(f"{differing}/{count} differ")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
