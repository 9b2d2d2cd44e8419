"""Hypothesis invariants of an audit by task (SPEC §1, issue 40): row order and task order change nothing.

Plans draw their case ids from one small pool, so the same case id is often planned in several tasks
(two units, not a duplicate). Ledgers name each row's task and hold at most one row per planned unit.
"""

from __future__ import annotations

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalframe as ef

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POOL = ["q1", "q2", "q3"]
TABLES = ("summary", "units", "problems")
Batch = tuple[pl.DataFrame, pl.DataFrame, list[int], list[int]]


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    """Plan cases (case_id, task), a ledger (candidate, case_id, task, passed), and two permutations.

    The permutations reorder the plan's rows and the ledger's rows.
    """
    tasks = draw(
        st.lists(st.sampled_from(["belief", "desire", "task10", "task9"]), min_size=2, max_size=3, unique=True)
    )
    cases = [(case, task) for task in tasks for case in draw(st.lists(st.sampled_from(POOL), min_size=1, unique=True))]
    rows = [
        (cand, case, task, draw(st.integers(0, 1)))
        for cand in ("A", "B")
        for case, task in cases
        if draw(st.booleans()) or draw(st.booleans())  # about one unit in four has no row
    ]
    plan = pl.DataFrame(cases, schema={"case_id": pl.String, "task": pl.String}, orient="row")
    schema = {"candidate": pl.String, "case_id": pl.String, "task": pl.String, "passed": pl.Int64}
    ledger = pl.DataFrame(rows, schema=schema, orient="row")
    # each row keeps its line number wherever it moves (the line names the row in its file)
    ledger = ledger.with_row_index("line", offset=1).with_columns(pl.col("line").cast(pl.Int64))
    return plan, ledger, draw(st.permutations(range(plan.height))), draw(st.permutations(range(ledger.height)))


def audited(plan: pl.DataFrame, ledger: pl.DataFrame) -> dict[str, pl.DataFrame]:
    report = ef.audit(ef.Plan.from_frame(plan, candidates=["A", "B"]), ledger)
    units = report.units.lazy().collect()
    return {
        "summary": report.summary,
        "units": units.sort("task", "candidate", "case_id", "trial"),
        "problems": report.problems.select("task", "kind", "candidate", "case_id", "detail"),
    }


@SETTINGS
@given(batches())
def test_row_order_and_task_order_change_no_table(
    batch: tuple[pl.DataFrame, pl.DataFrame, list[int], list[int]],
) -> None:
    plan, ledger, plan_order, ledger_order = batch
    expected = audited(plan, ledger)
    shuffled = audited(plan[plan_order], ledger[ledger_order] if ledger.height else ledger)
    for name in TABLES:
        assert_frame_equal(shuffled[name], expected[name], check_row_order=True)


@SETTINGS
@given(batches())
def test_each_task_is_counted_as_its_own_batch(batch: Batch) -> None:
    plan, ledger, _, _ = batch
    summary = audited(plan, ledger)["summary"]
    for task in plan.get_column("task").unique().to_list():
        cases = plan.filter(pl.col("task") == task).drop("task")
        rows = ledger.filter(pl.col("task") == task).drop("task", "line")
        alone = ef.audit(ef.Plan.from_frame(cases, candidates=["A", "B"]), rows).summary
        assert_frame_equal(summary.filter(pl.col("task") == task).drop("task"), alone)
        # counted from the input itself: planned = the task's cases; scored and passed = its rows
        counts = [
            (c, cases.height, rows.filter(pl.col("candidate") == c).height,
             int(rows.filter(pl.col("candidate") == c).get_column("passed").sum()))
            for c in ("A", "B")
        ]  # fmt: skip
        assert alone.select("candidate", "planned", "scored", "passed").rows() == counts
