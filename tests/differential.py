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
from evalframe.columns import CANDIDATE, CASE_ID, DATASET_VERSION, KIND, REFUSING, TRIAL
from evalframe.engines import core
from evalframe.engines.driver import PolarsFrames, case_patterns, missing_cases, row_work, summary_table
from evalframe.engines.spark.aggregates import planned_by
from evalframe.engines.spark.session import ledger_shape
from evalframe.engines.spark.tables import units_schema
from evalframe.problems import concat_problems
from evalframe.reconcile import missing_problems
from tests.property.test_fuzz import ANSWERS, CANDIDATES, CASE_IDS, HOSTILE

#: Statuses a row is given (valid ones, spellings that are not, and hostile text).
EXEC = ["completed", "completed", "timeout", "error", "not_started", "Completed", "skipped"]
SCORED = ["scored", "scored", "not_scored", "unscored", "judge_error", "invented"]
#: Scores of a typed score column: grades, a range, and what is not a number in it.
SCORES = [0.0, 1.0, 1.0, 0.5, -0.0, 2.0, -1.0, float("nan"), float("inf"), float("-inf")]


@dataclass(frozen=True)
class Batch:
    """One generated plan, ledger (with ``line`` and ``source``) and the audit's options."""

    plan: ef.Plan
    ledger: pl.DataFrame
    options: dict[str, Any]


def _value(rng: random.Random, good: Sequence[Any], hostile: float = 0.2) -> Any:
    """A good value mostly; sometimes a hostile token or a null."""
    roll = rng.random()
    if roll < hostile:
        return rng.choice(HOSTILE)
    if roll < hostile + 0.08:
        return None
    return rng.choice(good)


def batch(seed: int) -> Batch:
    """A seeded plan and hostile ledger of 1-8 rows (see the module docstring)."""
    rng = random.Random(seed)
    cases = rng.sample(CASE_IDS, rng.randint(1, 3))
    cands = rng.sample(CANDIDATES, rng.randint(1, 2))
    trials = rng.randint(1, 2)
    shape = rng.choice(["passed", "score", "status", "answers"])
    plan_cols: dict[str, list[Any]] = {CASE_ID: cases}
    if shape == "answers":
        plan_cols["expected"] = [rng.choice(ANSWERS) for _ in cases]
    if rng.random() < 0.3:
        plan_cols[DATASET_VERSION] = [rng.choice(["1.10", "1.1"]) for _ in cases]
    run_id = rng.choice([None, None, "run-1"])
    plan = ef.Plan.from_frame(pl.DataFrame(plan_cols), candidates=cands, trials=trials, run_id=run_id)
    n = rng.randint(1, 8)
    cols: dict[str, list[Any]] = {}
    if len(cands) > 1 or rng.random() < 0.5:
        cols[CANDIDATE] = [_value(rng, cands + ["Z"], 0.1) for _ in range(n)]
    cols[CASE_ID] = [_value(rng, cases + ["zz"], 0.1) for _ in range(n)]
    if trials > 1 or rng.random() < 0.5:
        cols[TRIAL] = [_value(rng, [str(t) for t in range(1, trials + 1)] + ["3"], 0.15) for _ in range(n)]
    options: dict[str, Any] = {}
    if shape == "status":
        if rng.random() < 0.5:
            cols["attempt"] = [_value(rng, ["1", "1", "2"], 0.1) for _ in range(n)]
            options["retry"] = rng.choice(["first", "last_allowed", "every"])
        cols["exec_status"] = [_value(rng, EXEC, 0.1) for _ in range(n)]
        if rng.random() < 0.7:
            cols["score_status"] = [_value(rng, SCORED, 0.1) for _ in range(n)]
    if shape in ("passed", "status") and rng.random() < 0.8:
        cols["passed"] = [_value(rng, ["0", "1"], 0.25) for _ in range(n)]
    if shape == "score" or (shape == "status" and "passed" not in cols):
        cols["score"] = [rng.choice(SCORES) if rng.random() > 0.1 else None for _ in range(n)]
        if rng.random() < 0.4:
            options["grade"] = "numeric"
            if rng.random() < 0.5:
                options["pass_threshold"] = 0.5
    if shape == "answers":
        cols["answer"] = [_value(rng, ANSWERS, 0.15) for _ in range(n)]
    if run_id is not None or rng.random() < 0.2:
        cols["run_id"] = [_value(rng, ["run-1", "run-1", "run-2"], 0.1) for _ in range(n)]
    if rng.random() < 0.2 and n > 1:  # a repeated row
        i = rng.randrange(n)
        for values in cols.values():
            values[rng.randrange(n)] = values[i]
    schema = {c: (pl.Float64 if c == "score" else pl.String) for c in cols}
    ledger = pl.DataFrame(cols, schema=schema).with_columns(
        pl.int_range(1, n + 1, dtype=pl.Int64).alias("line"), pl.lit("results.parquet").alias("source")
    )
    return Batch(plan, ledger, options)


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
    found = missing.rows()
    gone_problems = missing_problems(found, plan.source, refusing=False).select(core.PROBLEM_COLUMNS)
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
