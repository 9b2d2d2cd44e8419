"""Hypothesis invariants of the audit: row order, funnel monotonicity, counts, refusals."""

from __future__ import annotations

from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalframe as ef

EXEC = ["completed", "timeout", "error", "not_started"]
SCORE = ["scored", "judge_error", "not_scored"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def batches(draw: st.DrawFn) -> tuple[ef.Plan, pl.DataFrame]:
    """A valid plan and a valid status ledger (possibly with missing units and retries)."""
    n_cases = draw(st.integers(1, 5))
    cands = draw(st.lists(st.sampled_from(["A", "B", "C"]), min_size=1, max_size=3, unique=True))
    trials = draw(st.integers(1, 2))
    cases = [f"c{i}" for i in range(n_cases)]
    plan = ef.Plan.from_frame(
        pl.DataFrame({"case_id": cases, "case_type": [f"t{i % 2}" for i in range(n_cases)]}),
        candidates=cands,
        trials=trials,
    )
    rows: list[dict[str, Any]] = []
    for cand in cands:
        for case in cases:
            for trial in range(1, trials + 1):
                for attempt in range(1, draw(st.integers(0, 2)) + 1):
                    ex = draw(st.sampled_from(EXEC))
                    sc = draw(st.sampled_from(SCORE)) if ex == "completed" else "not_scored"
                    score = float(draw(st.integers(0, 1))) if sc == "scored" else None
                    rows.append(
                        {
                            "candidate": cand,
                            "case_id": case,
                            "trial": trial,
                            "attempt": attempt,
                            "exec_status": ex,
                            "score_status": sc,
                            "score": score,
                        }
                    )
    schema = {
        "candidate": pl.String,
        "case_id": pl.String,
        "trial": pl.Int64,
        "attempt": pl.Int64,
        "exec_status": pl.String,
        "score_status": pl.String,
        "score": pl.Float64,
    }
    ledger = pl.DataFrame(rows, schema=schema)
    ledger = ledger.with_row_index("line", offset=1).with_columns(pl.col("line").cast(pl.Int64))
    return plan, ledger


def shuffled_plan(plan: ef.Plan, seed: int) -> ef.Plan:
    cases = plan.cases.sample(fraction=1.0, shuffle=True, seed=seed)
    cands = list(plan.candidates)[::-1]
    return ef.Plan.from_frame(cases, candidates=cands, trials=plan.trials)


@SETTINGS
@given(batches(), st.integers(0, 2**32 - 1), st.sampled_from(["first", "last_allowed", "every"]))
def test_row_order_never_changes_any_output(batch: tuple[ef.Plan, pl.DataFrame], seed: int, retry: str) -> None:
    plan, ledger = batch
    base = ef.audit(plan, ledger, retry=retry)  # type: ignore[arg-type]
    other = ef.audit(shuffled_plan(plan, seed), ledger.sample(fraction=1.0, shuffle=True, seed=seed), retry=retry)  # type: ignore[arg-type]
    for name, table in base.tables().items():
        assert_frame_equal(other.tables()[name], table, check_row_order=True), name


@SETTINGS
@given(batches(), st.sampled_from(["first", "last_allowed"]))
def test_funnel_is_monotone_and_outcomes_add_up(batch: tuple[ef.Plan, pl.DataFrame], retry: str) -> None:
    plan, ledger = batch
    report = ef.audit(plan, ledger, retry=retry)  # type: ignore[arg-type]
    for row in report.summary.iter_rows(named=True):
        chain = [row[c] for c in ("planned", "attempted", "completed", "with_output", "scored", "passed")]
        assert chain == sorted(chain, reverse=True)
        parts = ("missing", "not_started", "exec_failed", "no_output", "judge_failed", "not_scored", "failed", "passed")
        assert sum(row[c] for c in parts) == row["planned"]
        assert row["planned"] == len(plan.cases) * plan.trials
        assert row["pass_rate_planned"] <= row["pass_rate_upper"]
        if row["pass_rate_scored"] is not None:  # the conditional rate lies between the bounds
            assert row["pass_rate_planned"] <= row["pass_rate_scored"] <= row["pass_rate_upper"]
        else:
            assert row["scored"] == 0
    assert report.units.height == plan.n_units


@SETTINGS
@given(batches(), st.data())
def test_any_refusing_problem_means_no_score(batch: tuple[ef.Plan, pl.DataFrame], data: st.DataObject) -> None:
    plan, ledger = batch
    defect = data.draw(st.sampled_from(["unknown_case", "unknown_candidate", "duplicate", "bad_grade", "bad_trial"]))
    bad: dict[str, Any] = {
        "candidate": plan.candidates[0],
        "case_id": plan.cases.item(0, "case_id"),
        "trial": 1,
        "attempt": 9,
        "exec_status": "completed",
        "score_status": "scored",
        "score": 1.0,
        "line": 10_000,
    }
    if defect == "unknown_case":
        bad["case_id"] = "invented"
    elif defect == "unknown_candidate":
        bad["candidate"] = "Z"
    elif defect == "bad_grade":
        bad["score"] = 2.0
    elif defect == "bad_trial":
        bad["trial"] = plan.trials + 1
    rows = [bad, dict(bad, line=10_001)] if defect == "duplicate" else [bad]
    broken = pl.concat([ledger, pl.DataFrame(rows, schema=ledger.schema)])
    try:
        ef.audit(plan, broken)
    except ef.AuditRefused as exc:
        assert exc.problems.filter(pl.col("refusing")).height >= 1
        assert 10_000 in exc.problems.get_column("line").to_list()
    else:
        raise AssertionError(f"{defect} was not refused")


@SETTINGS
@given(batches())
def test_every_with_one_attempt_per_unit_equals_first(batch: tuple[ef.Plan, pl.DataFrame]) -> None:
    plan, ledger = batch
    single = ledger.filter(pl.col("attempt") == 1)
    first = ef.audit(plan, single, retry="first")
    every = ef.audit(plan, single, retry="every")
    assert_frame_equal(every.summary, first.summary)
    assert_frame_equal(every.units, first.units)


@SETTINGS
@given(batches(), st.sampled_from(["first", "last_allowed", "every"]))
def test_per_candidate_execution_equals_whole_frame(batch: tuple[ef.Plan, pl.DataFrame], retry: str) -> None:
    plan, ledger = batch
    whole = ef.audit(plan, ledger, retry=retry)  # type: ignore[arg-type]
    parts = ef.audit(plan, ledger, retry=retry, partition_by="candidate")  # type: ignore[arg-type]
    with parts:
        for name, table in whole.tables().items():
            assert_frame_equal(parts.tables()[name].lazy().collect(), table.lazy().collect(), check_exact=True), name
