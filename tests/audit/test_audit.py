"""ef.audit end to end: each option changes the report exactly as declared."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef

PLAN = ef.Plan.from_frame(
    pl.DataFrame({"case_id": ["q1", "q2", "q3", "q4"], "case_type": ["x", "x", "y", "y"]}), candidates=["A", "B"]
)
# A retries q1 after a timeout and passes; A's q4 errors once. B has a judge error on q2 and no row for q4.
LEDGER = pl.DataFrame(
    [
        ("A", "q1", 1, "timeout", "not_scored", None),
        ("A", "q1", 2, "completed", "scored", 1.0),
        ("A", "q2", 1, "completed", "scored", 0.0),
        ("A", "q3", 1, "completed", "scored", 1.0),
        ("A", "q4", 1, "error", "not_scored", None),
        ("B", "q1", 1, "completed", "scored", 1.0),
        ("B", "q2", 1, "completed", "judge_error", None),
        ("B", "q3", 1, "completed", "scored", 0.0),
    ],
    schema={
        "candidate": pl.String,
        "case_id": pl.String,
        "attempt": pl.Int64,
        "exec_status": pl.String,
        "score_status": pl.String,
        "score": pl.Float64,
    },
    orient="row",
)
COUNTS = ["candidate", "planned", "attempted", "completed", "scored", "passed", "failed", "missing", "exec_failed"]
B_FIRST = ("B", 4, 3, 3, 2, 1, 1, 1, 0)


def counts(report: ef.AuditReport) -> list[tuple[object, ...]]:
    return report.summary.select(COUNTS).rows()


def outcomes(report: ef.AuditReport) -> list[tuple[object, ...]]:
    units = report.units.collect() if isinstance(report.units, pl.LazyFrame) else report.units
    return units.select("candidate", "case_id", "counted_attempt", "attempts", "outcome").rows()


def not_missing(report: ef.AuditReport) -> pl.DataFrame:
    """The problems other than missing units (those are counted in the summary)."""
    return report.problems.filter(pl.col("kind") != "missing_unit")


def test_first_counts_the_first_attempt_of_each_unit() -> None:
    report = ef.audit(PLAN, LEDGER, retry="first")
    assert counts(report) == [("A", 4, 4, 2, 2, 1, 1, 0, 2), B_FIRST]
    assert outcomes(report) == [
        ("A", "q1", 1, 2, "exec_failed"),
        ("A", "q2", 1, 1, "failed"),
        ("A", "q3", 1, 1, "passed"),
        ("A", "q4", 1, 1, "exec_failed"),
        ("B", "q1", 1, 1, "passed"),
        ("B", "q2", 1, 1, "judge_failed"),
        ("B", "q3", 1, 1, "failed"),
        ("B", "q4", None, 0, "missing"),
    ]
    assert report.summary.get_column("judge_failed").to_list() == [0, 1]
    assert not_missing(report).height == 0


def test_last_allowed_counts_the_retry_after_a_timeout() -> None:
    report = ef.audit(PLAN, LEDGER, retry="last_allowed")
    assert counts(report) == [("A", 4, 4, 3, 3, 2, 1, 0, 1), B_FIRST]
    assert outcomes(report)[0] == ("A", "q1", 2, 2, "passed")
    assert not_missing(report).height == 0


def test_last_allowed_with_one_attempt_allowed_flags_the_retry_and_counts_the_first() -> None:
    report = ef.audit(PLAN, LEDGER, retry="last_allowed", max_attempts=1)
    assert counts(report) == [("A", 4, 4, 2, 2, 1, 1, 0, 2), B_FIRST]
    flagged = not_missing(report).select("kind", "candidate", "case_id", "attempt", "refusing").rows()
    assert flagged == [("attempt_beyond_max", "A", "q1", 2, False)]


def test_strict_retries_refuse_a_flagged_retry() -> None:
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(PLAN, LEDGER, retry="last_allowed", max_attempts=1, strict_retries=True)
    refusing = info.value.problems.filter("refusing").select("kind", "candidate", "case_id", "attempt").rows()
    assert refusing == [("attempt_beyond_max", "A", "q1", 2)]


def test_every_counts_each_attempt_as_an_observation() -> None:
    report = ef.audit(PLAN, LEDGER, retry="every")
    # SPEC §4: planned still counts A's 4 planned units; its 5 observations (attempts) are what the rates are over.
    assert counts(report) == [("A", 4, 5, 3, 3, 2, 1, 0, 2), B_FIRST]
    assert report.summary.select("candidate", "observations", "scored_coverage").rows() == [
        ("A", 5, 0.6),
        ("B", 4, 0.5),
    ]


def test_missing_refuse_refuses_a_batch_with_a_missing_unit() -> None:
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(PLAN, LEDGER, missing="refuse")
    refusing = info.value.problems.filter("refusing")
    assert set(refusing.get_column("kind")) == {"missing_unit"}
    assert set(refusing.get_column("candidate")) == {"B"}
    b_q4 = LEDGER.filter(pl.col("candidate") == "B", pl.col("case_id") == "q3").with_columns(case_id=pl.lit("q4"))
    complete = pl.concat([LEDGER, b_q4])  # B's q4 failed: nothing is missing, the batch is audited
    assert counts(ef.audit(PLAN, complete, missing="refuse"))[1] == ("B", 4, 4, 4, 3, 1, 2, 0, 0)


@pytest.mark.parametrize("retry", ["first", "last_allowed", "every"])
def test_partition_by_candidate_gives_the_whole_batch_report_bit_for_bit(retry: str) -> None:
    whole = ef.audit(PLAN, LEDGER, retry=retry, slices=["case_type"])  # type: ignore[arg-type]
    parts = ef.audit(PLAN, LEDGER, retry=retry, slices=["case_type"], partition_by="candidate")  # type: ignore[arg-type]
    for name in ("summary", "slices", "problems"):
        assert_frame_equal(getattr(parts, name), getattr(whole, name), check_exact=True)
    units = [r.units.collect() if isinstance(r.units, pl.LazyFrame) else r.units for r in (parts, whole)]
    assert_frame_equal(units[0], units[1], check_exact=True)


def test_slices_count_each_slice_value_per_candidate() -> None:
    report = ef.audit(PLAN, LEDGER, slices=["case_type"])
    columns = ["candidate", "slice_value", "planned", "scored", "passed", "missing", "missing_rate"]
    assert report.slices.select(columns).rows() == [
        ("A", "x", 2, 1, 0, 0, 0.0),
        ("A", "y", 2, 1, 1, 0, 0.0),
        ("B", "x", 2, 1, 1, 0, 0.0),
        ("B", "y", 2, 1, 0, 1, 0.5),
    ]
    assert set(report.slices.get_column("slice_column")) == {"case_type"}


NUMERIC = LEDGER.with_columns(pl.Series("score", [None, 0.5, 0.2, 0.9, None, 0.7, None, 0.49]))


def test_a_numeric_grade_passes_at_the_declared_threshold() -> None:
    report = ef.audit(PLAN, NUMERIC, grade="numeric", pass_threshold=0.5)
    # first attempts: A q2 0.2 fails, q3 0.9 passes; B q1 0.7 passes, q3 0.49 fails (0.5 itself would pass).
    assert counts(report) == [("A", 4, 4, 2, 2, 1, 1, 0, 2), B_FIRST]
    assert report.summary.get_column("mean_score").to_list() == [pytest.approx(0.55), pytest.approx(0.595)]
    last = ef.audit(PLAN, NUMERIC, grade="numeric", pass_threshold=0.5, retry="last_allowed")
    assert outcomes(last)[0] == ("A", "q1", 2, 2, "passed")  # the retry scored exactly 0.5


def test_a_numeric_grade_without_threshold_has_no_pass_or_fail() -> None:
    report = ef.audit(PLAN, NUMERIC, grade="numeric")
    # No pass and no fail, so no count of either: null, not 0.
    assert report.summary.select("scored", "passed", "failed").rows() == [(2, None, None), (2, None, None)]
    assert report.summary.get_column("pass_rate_scored").null_count() == 2


def test_a_numeric_score_outside_the_declared_range_refuses_naming_the_line() -> None:
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(PLAN, NUMERIC, grade="numeric", score_range=(0.0, 0.8), pass_threshold=0.5)
    refusing = info.value.problems.filter("refusing").select("kind", "line", "detail").rows()
    assert refusing == [("invalid_score", 4, "score = '0.9' is not a finite number in [0.0, 0.8]")]


def test_a_binary_audit_refuses_a_score_between_0_and_1() -> None:
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(PLAN, NUMERIC)
    kinds = info.value.problems.filter("refusing").select("kind", "line").rows()
    assert kinds == [
        ("invalid_grade", 2),
        ("invalid_grade", 3),
        ("invalid_grade", 4),
        ("invalid_grade", 6),
        ("invalid_grade", 8),
    ]


def test_answers_without_expected_answers_in_the_plan_refuse_as_missing_expected() -> None:
    answers = pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "answer": ["x"]})
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(PLAN, answers)
    problems = info.value.problems.select("kind", "source", "detail", "refusing").rows()
    assert problems == [("missing_expected", "results", "answers given but the plan has no expected column", True)]
