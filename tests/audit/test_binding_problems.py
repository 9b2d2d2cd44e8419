"""Problems binding a ledger to the plan's dataset: version, case hash, expected answers (exactly)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef

CASES = pl.DataFrame(
    {
        "case_id": ["q1", "q2", "q3"],
        "dataset_version": ["v2", "v2", "v2"],
        "case_hash": ["h1", "h2", "h3"],
    }
)
PLAN = ef.Plan.from_frame(CASES, candidates=["A", "B"])


def refused(plan: ef.Plan, ledger: pl.DataFrame, **options: object) -> list[tuple[object, ...]]:
    for partition_by in (None, "candidate"):  # both runners refuse alike
        with pytest.raises(ef.AuditRefused) as info:
            ef.audit(plan, ledger, partition_by=partition_by, **options)  # type: ignore[arg-type]
        problems = info.value.problems.filter(pl.col("refusing"))
        rows = problems.select("kind", "candidate", "case_id", "line", "detail").rows()
        if partition_by is None:
            whole = rows
        else:
            assert rows == whole
    return whole


def ledger(**columns: list[object]) -> pl.DataFrame:
    """Six rows, A and B on q1-q3 (a frame's row n is line n), with the given columns added."""
    base = {"candidate": ["A", "A", "A", "B", "B", "B"], "case_id": ["q1", "q2", "q3"] * 2, "passed": [1] * 6}
    return pl.DataFrame({**base, **columns})


def test_a_row_of_another_dataset_version_refuses_as_version_mismatch() -> None:
    rows = ledger(dataset_version=["v2", "v1", "v2", "v2", "v2", "v3"])
    assert refused(PLAN, rows) == [
        ("version_mismatch", "A", "q2", 2, "dataset_version v1 differs from the plan's v2"),
        ("version_mismatch", "B", "q3", 6, "dataset_version v3 differs from the plan's v2"),
    ]


def test_a_row_whose_case_hash_differs_refuses_as_hash_mismatch() -> None:
    rows = ledger(case_hash=["h1", "h2", "h3", "x1", "h2", None])  # a null hash is not compared
    assert refused(PLAN, rows) == [("hash_mismatch", "B", "q1", 4, "case_hash x1 differs from the plan's h1")]


def test_matching_versions_and_hashes_audit_cleanly() -> None:
    rows = ledger(dataset_version=["v2"] * 6, case_hash=["h1", "h2", "h3"] * 2)
    report = ef.audit(PLAN, rows)
    assert report.summary.select("candidate", "planned", "passed").rows() == [("A", 3, 3), ("B", 3, 3)]
    assert report.problems.height == 0


def test_answers_against_a_plan_without_expected_answers_refuse_as_missing_expected() -> None:
    answers = pl.DataFrame({"candidate": ["A", "B"], "case_id": ["q1", "q2"], "answer": ["x", "y"]})
    assert refused(PLAN, answers) == [
        ("missing_expected", None, None, None, "answers given but the plan has no expected column")
    ]
