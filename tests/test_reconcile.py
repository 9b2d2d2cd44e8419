"""Reconciliation with the plan: duplicate keys, unknown rows, run/version/hash mismatches, missing units."""

from __future__ import annotations

import importlib
from unittest import mock

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe.reconcile import reconcile
from evalframe.validate import validate_ledger

PLAN = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3"]}), candidates=["A", "B"], trials=2)


def _ledger(rows: list[tuple[str, str, int, int]]) -> pl.DataFrame:
    schema = {"candidate": pl.String, "case_id": pl.String, "trial": pl.Int64, "attempt": pl.Int64}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.with_columns(
        pl.int_range(2, pl.len() + 2, dtype=pl.Int64).alias("line"),
        pl.lit("r.csv").alias("source"),
    )


def _duplicates(rows: list[tuple[str, str, int, int]]) -> list[tuple[int, str]]:
    found = reconcile(_ledger(rows).with_columns(pl.lit(None, pl.String).alias("run_id")), PLAN).problems.shown
    return sorted(found.filter(pl.col("kind") == "duplicate_key").select("line", "detail").iter_rows())


def test_every_row_of_a_repeated_key_is_flagged_with_its_count() -> None:
    rows = [
        ("A", "q1", 1, 1),
        ("A", "q1", 1, 1),  # three times
        ("B", "q2", 2, 1),
        ("A", "q1", 1, 1),
        ("A", "q1", 1, 2),  # another attempt: not a repeat
        ("B", "q2", 2, 1),  # twice
        ("Z", "q9", 1, 1),  # not planned: compared on the text
        ("Z", "q9", 1, 1),
    ]
    assert _duplicates(rows) == [
        (2, "key appears 3 times"),
        (3, "key appears 3 times"),
        (4, "key appears 2 times"),
        (5, "key appears 3 times"),
        (7, "key appears 2 times"),
        (8, "key appears 2 times"),
        (9, "key appears 2 times"),
    ]


def test_attempt_numbers_too_large_for_one_integer_are_compared_as_pairs() -> None:
    # unit code × (largest attempt + 1) would overflow an Int64: the pairs themselves are compared.
    huge = 2**62
    rows = [("A", "q1", 1, huge), ("A", "q1", 1, huge), ("A", "q1", 1, 1), ("B", "q3", 2, huge)]
    assert _duplicates(rows) == [(2, "key appears 2 times"), (3, "key appears 2 times")]


KEY = st.tuples(
    st.sampled_from(["A", "B", "Z"]), st.sampled_from(["q1", "q2", "q9"]), st.integers(0, 3), st.integers(1, 3)
)


@settings(max_examples=150, deadline=None)
@given(st.lists(KEY, max_size=25))
def test_the_flagged_rows_are_those_whose_key_occurs_twice(rows: list[tuple[str, str, int, int]]) -> None:
    ledger = _ledger(rows)
    counts = ledger.group_by("candidate", "case_id", "trial", "attempt").len()
    expected = ledger.join(counts, on=["candidate", "case_id", "trial", "attempt"]).filter(pl.col("len") > 1)
    assert [line for line, _ in _duplicates(rows)] == sorted(expected.get_column("line").to_list())


def test_a_planned_ledger_is_handed_on_in_unit_order_and_one_with_an_unplanned_row_as_given() -> None:
    rows = [("B", "q2", 1, 1), ("A", "q3", 2, 2), ("A", "q3", 2, 1), ("A", "q1", 1, 1)]
    raw = pl.DataFrame(rows, schema=["candidate", "case_id", "trial", "attempt"], orient="row").with_columns(
        pl.lit(1).alias("passed")
    )
    planned = reconcile(validate_ledger(raw, PLAN).ledger, PLAN)
    order = planned.ledger.select("candidate", "case_id", "trial", "attempt", "line").rows()
    assert order == [("A", "q1", 1, 1, 4), ("A", "q3", 2, 1, 3), ("A", "q3", 2, 2, 2), ("B", "q2", 1, 1, 1)]
    assert planned.ledger.get_column("_uid").is_sorted()
    unplanned = raw.vstack(pl.DataFrame([("C", "q1", 1, 1, 1)], schema=raw.schema, orient="row"))
    given = reconcile(validate_ledger(unplanned, PLAN).ledger, PLAN)
    assert given.ledger.get_column("line").to_list() == [1, 2, 3, 4, 5]
    refusing = given.problems.shown.filter(pl.col("refusing"))
    assert refusing.select("kind", "line").rows() == [("unknown_candidate", 5)]
    # The order changes no problem: the missing units are the same either way.
    missing = pl.col("kind") == "missing_unit"
    assert planned.problems.shown.filter(missing).equals(given.problems.shown.filter(missing))
    # Above SORT_EARLY_ROWS the rows are left as given (select_attempts sorts the compact ledger instead).
    with mock.patch.object(importlib.import_module("evalframe.reconcile"), "SORT_EARLY_ROWS", 3):
        large = reconcile(validate_ledger(raw, PLAN).ledger, PLAN)
    assert large.ledger.get_column("line").to_list() == [1, 2, 3, 4]
    assert large.problems.shown.equals(planned.problems.shown)


def _reconciled(rows: list[tuple[str, str, int, int]], plan: ef.Plan = PLAN, **columns: list[object]) -> pl.DataFrame:
    """Every problem of reconciling ``rows`` (passed, lines 1..n) against ``plan``."""
    raw = pl.DataFrame(rows, schema=["candidate", "case_id", "trial", "attempt"], orient="row")
    raw = raw.with_columns(pl.lit(1).alias("passed"), *(pl.Series(k, v) for k, v in columns.items()))
    validated = validate_ledger(raw, plan)
    assert validated.problems.height == 0
    problems = reconcile(validated.ledger, plan).problems.every().collect()
    return problems.select("kind", "candidate", "case_id", "trial", "line", "detail", "refusing")


def test_rows_outside_the_plan_are_unknown_by_the_first_part_that_is_not_planned() -> None:
    rows = [("A", "q1", 1, 1), ("Z", "q1", 1, 1), ("A", "q9", 1, 1), ("B", "q2", 3, 1)]
    rows += [(c, q, t, 1) for c in "AB" for q in ("q1", "q2", "q3") for t in (1, 2) if (c, q, t) != ("A", "q1", 1)]
    refusing = _reconciled(rows).filter(pl.col("refusing")).drop("refusing")
    assert refusing.rows() == [
        ("trial_out_of_range", "B", "q2", 3, 4, "trial 3 is outside 1..2"),
        ("unknown_candidate", "Z", "q1", 1, 2, "candidate Z is not planned"),
        ("unknown_case", "A", "q9", 1, 3, "case q9 is not in the plan"),
    ]


def test_planned_units_without_a_row_are_one_missing_unit_problem_per_candidate() -> None:
    rows = [("A", "q1", 1, 1), ("A", "q1", 2, 1), ("A", "q2", 1, 1), ("B", "q3", 2, 1)]
    problems = _reconciled(rows)
    assert problems.select("kind", "candidate", "case_id", "trial", "line", "refusing").rows() == [
        ("missing_unit", "A", None, None, None, False),
        ("missing_unit", "B", None, None, None, False),
    ]
    assert problems.get_column("detail").to_list() == [
        "3 planned units have no row, in 2 cases: q2, q3",
        "5 planned units have no row, in 3 cases: q1, q2, q3",
    ]
    every = [(c, q, t, 1) for c in "AB" for q in ("q1", "q2", "q3") for t in (1, 2)]
    assert _reconciled(every).height == 0
    refused = reconcile(
        validate_ledger(_ledger(rows[:1]).with_columns(passed=pl.lit(1)), PLAN).ledger, PLAN, missing="refuse"
    )
    assert refused.problems.every().collect().select("kind", "refusing").rows() == [
        ("missing_unit", True),
        ("missing_unit", True),
    ]


def test_a_row_of_another_run_than_the_plan_requires_is_a_run_mismatch() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"], run_id="run-7")
    rows = [("A", "q1", 1, 1), ("A", "q2", 1, 1)]
    problems = _reconciled(rows, plan, run_id=["run-7", "run-6"]).drop("trial")
    assert problems.rows() == [("run_mismatch", "A", "q2", 2, "run_id run-6 is not the required run run-7", True)]
    unbound = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    assert _reconciled(rows, unbound, run_id=["run-7", "run-6"]).height == 0  # no run required, none compared
