"""Retry policies and retry flags (SPEC §4)."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef

PLAN = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])


def ledger(rows: list[tuple[str, int, str, str, float | None]]) -> pl.DataFrame:
    """Rows of (case_id, attempt, exec_status, score_status, score)."""
    return pl.DataFrame(
        [
            {"candidate": "A", "case_id": c, "attempt": a, "exec_status": e, "score_status": s, "score": v}
            for c, a, e, s, v in rows
        ],
        schema={
            "candidate": pl.String,
            "case_id": pl.String,
            "attempt": pl.Int64,
            "exec_status": pl.String,
            "score_status": pl.String,
            "score": pl.Float64,
        },
    )


def outcomes(report: ef.AuditReport) -> list[tuple[Any, ...]]:
    return report.units.select("case_id", "counted_attempt", pl.col("outcome").cast(pl.String)).rows()


def flags(report: ef.AuditReport) -> list[tuple[Any, ...]]:
    return report.problems.filter(pl.col("kind") != "missing_unit").select("kind", "case_id", "attempt").rows()


TIMEOUT_THEN_PASS = ledger([("q1", 1, "timeout", "not_scored", None), ("q1", 2, "completed", "scored", 1.0)])


def test_timeout_then_pass_under_first_counts_the_timeout() -> None:
    report = ef.audit(PLAN, TIMEOUT_THEN_PASS, retry="first")
    assert outcomes(report) == [("q1", 1, "exec_failed"), ("q2", None, "missing")]
    assert report.summary.select("attempted", "scored", "passed", "exec_failed").row(0) == (1, 0, 0, 1)
    assert flags(report) == []


def test_timeout_then_pass_under_last_allowed_counts_the_retry() -> None:
    report = ef.audit(PLAN, TIMEOUT_THEN_PASS, retry="last_allowed")
    assert outcomes(report) == [("q1", 2, "passed"), ("q2", None, "missing")]
    assert report.summary.select("scored", "passed", "exec_failed").row(0) == (1, 1, 0)
    # Rejected attempts stay in the outputs.
    assert report.attempts.select("attempt", "counts").rows() == [(1, False), (2, True)]


SCORED_FAIL_THEN_PASS = ledger([("q1", 1, "completed", "scored", 0.0), ("q1", 2, "completed", "scored", 1.0)])


@pytest.mark.parametrize("retry", ["first", "last_allowed"])
def test_retry_after_scored_is_flagged_and_never_rescues_the_unit(retry: str) -> None:
    report = ef.audit(PLAN, SCORED_FAIL_THEN_PASS, retry=retry)  # type: ignore[arg-type]
    assert outcomes(report)[0] == ("q1", 1, "failed")
    assert flags(report) == [("retry_after_scored", "q1", 2)]
    assert report.problems.filter(pl.col("kind") == "retry_after_scored").get_column("refusing").to_list() == [False]


def test_strict_retries_refuse_the_batch() -> None:
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(PLAN, SCORED_FAIL_THEN_PASS, strict_retries=True)
    assert info.value.problems.filter(pl.col("refusing")).get_column("kind").to_list() == ["retry_after_scored"]


def test_attempt_gap_and_beyond_max() -> None:
    rows = ledger(
        [
            ("q1", 1, "timeout", "not_scored", None),
            ("q1", 3, "completed", "scored", 1.0),
            ("q2", 1, "error", "not_scored", None),
            ("q2", 2, "timeout", "not_scored", None),
            ("q2", 3, "completed", "scored", 1.0),
        ]
    )
    report = ef.audit(PLAN, rows, retry="last_allowed", max_attempts=2)
    assert sorted(flags(report)) == [
        ("attempt_beyond_max", "q1", 3),
        ("attempt_beyond_max", "q2", 3),
        ("attempt_gap", "q1", 3),
    ]
    # Attempts above max_attempts are never allowed: q1 counts attempt 1, q2 attempt 2.
    assert outcomes(report) == [("q1", 1, "exec_failed"), ("q2", 2, "exec_failed")]


def test_retry_after_ineligible_failure() -> None:
    rows = ledger([("q1", 1, "completed", "judge_error", None), ("q1", 2, "completed", "scored", 1.0)])
    report = ef.audit(PLAN, rows, retry="last_allowed")
    assert flags(report) == [("retry_after_ineligible", "q1", 2)]
    assert outcomes(report)[0] == ("q1", 1, "judge_failed")
    # A declared retry_on that includes nothing new changes nothing; an explicit policy is required to retry.
    report_error_only = ef.audit(PLAN, TIMEOUT_THEN_PASS, retry="last_allowed", retry_on=["error"])
    assert outcomes(report_error_only)[0] == ("q1", 1, "exec_failed")


def test_every_reports_each_attempt_as_an_observation() -> None:
    report = ef.audit(PLAN, TIMEOUT_THEN_PASS, retry="every")
    assert outcomes(report) == [("q1", 1, "exec_failed"), ("q1", 2, "passed"), ("q2", None, "missing")]
    # SPEC §4: planned counts the 2 planned units; the rates are over the 3 observations (2 attempts + 1
    # unit without one), each named by that denominator.
    counts = ("planned", "observations", "attempted", "completed", "scored", "passed", "exec_failed", "missing")
    assert report.summary.select(counts).row(0) == (2, 3, 2, 1, 1, 1, 1, 1)
    rates = ("completion_rate", "scored_coverage", "pass_rate_scored", "pass_rate_planned", "pass_rate_upper")
    assert report.summary.select(rates).row(0) == (1 / 3, 1 / 3, 1.0, 1 / 3, 1.0)


def test_every_counts_no_attempt_beyond_max_attempts() -> None:
    """Under every the declared max_attempts holds as under last_allowed: q2's attempt 3 (a pass) is flagged and
    kept in the attempts table, but is not an observation (it was counted: 9 observations, 4 passed)."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3", "q4"]}), candidates=["A"])
    rows = ledger(
        [
            ("q1", 1, "completed", "scored", 0.0),
            ("q1", 2, "completed", "scored", 1.0),
            ("q2", 1, "timeout", "not_scored", None),
            ("q2", 2, "timeout", "not_scored", None),
            ("q2", 3, "completed", "scored", 1.0),
            ("q3", 1, "error", "not_scored", None),
            ("q3", 2, "completed", "scored", 1.0),
            ("q4", 1, "completed", "judge_error", None),
            ("q4", 2, "completed", "scored", 1.0),
        ]
    )
    report = ef.audit(plan, rows, retry="every", max_attempts=2)
    counts = ("planned", "observations", "completed", "scored", "passed", "exec_failed", "judge_failed")
    assert report.summary.select(counts).row(0) == (4, 8, 5, 4, 3, 3, 1)
    assert report.summary.select("scored_coverage", "pass_rate_scored").row(0) == (0.5, 0.75)
    assert ("attempt_beyond_max", "q2", 3) in flags(report)
    attempts = report.attempts.lazy().filter(pl.col("case_id") == "q2").select("attempt", "counts").collect()
    assert attempts.rows() == [(1, True), (2, True), (3, False)]


def test_every_counts_planned_units_by_slice_and_by_candidate_partition() -> None:
    plan = ef.Plan.from_frame(
        pl.DataFrame({"case_id": ["q1", "q2", "q3"], "kind": ["x", "x", "y"]}), candidates=["A", "B"]
    )
    rows = ledger(
        [
            ("q1", 1, "timeout", "not_scored", None),
            ("q1", 2, "timeout", "not_scored", None),
            ("q1", 3, "completed", "scored", 1.0),
            ("q3", 1, "completed", "scored", 0.0),
        ]
    )
    rows = pl.concat([rows, rows.with_columns(candidate=pl.lit("B"))])
    whole = ef.audit(plan, rows, retry="every", slices=["kind"])
    parts = ef.audit(plan, rows, retry="every", slices=["kind"], partition_by="candidate")
    for report in (whole, parts):
        assert report.summary.select("candidate", "planned", "observations", "attempted", "missing").rows() == [
            ("A", 3, 5, 4, 1),
            ("B", 3, 5, 4, 1),
        ]
        by_slice = report.slices.filter(pl.col("candidate") == "A")
        # Slice x: q1 (three attempts) and q2 (no row); slice y: q3. The missing rate is per planned unit.
        assert by_slice.select("slice_value", "planned", "observations", "missing", "missing_rate").rows() == [
            ("x", 2, 4, 1, 0.5),
            ("y", 1, 1, 0, 0.0),
        ]


def test_unknown_policy_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown retry policy"):
        ef.select_attempts(TIMEOUT_THEN_PASS.with_columns(trial=pl.lit(1, pl.Int64)), policy="best")  # type: ignore[arg-type]


STATUS = st.sampled_from(["completed", "timeout", "error", "not_started"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(STATUS, min_size=1, max_size=5), min_size=1, max_size=6), st.sampled_from([None, 1, 2, 3]))
def test_last_allowed_counts_the_last_attempt_reached_by_allowed_retries(
    units: list[list[str]], max_attempts: int | None
) -> None:
    # Reference, unit by unit: a retry is allowed after a timeout or an error, up to max_attempts; the counted
    # attempt is the last one before the first retry that is not allowed.
    rows, expected = [], []
    for unit, statuses in enumerate(units):
        counted = 1
        for attempt in range(2, len(statuses) + 1):
            if statuses[attempt - 2] not in ("timeout", "error") or (max_attempts and attempt > max_attempts):
                break
            counted = attempt
        for attempt, status in enumerate(statuses, start=1):
            scored = "scored" if status == "completed" else "not_scored"
            rows.append((f"q{unit}", attempt, status, scored, len(rows) + 2))
            expected.append(attempt == counted)
    ledger = pl.DataFrame(
        rows, schema=["case_id", "attempt", "exec_status", "score_status", "line"], orient="row"
    ).with_columns(pl.lit("A").alias("candidate"), pl.lit(1).alias("trial"), pl.lit("r.csv").alias("source"))
    shuffled = ledger.sample(fraction=1.0, shuffle=True, seed=1)
    selected = ef.select_attempts(shuffled, policy="last_allowed", max_attempts=max_attempts)
    assert selected.attempts.sort("line").get_column("counts").to_list() == expected
    # Every attempt carries its unit's number of attempts.
    assert selected.attempts.sort("line").get_column("attempts").to_list() == [len(s) for s in units for _ in s]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(0, 6), st.integers(-3, -1), st.integers(2**61, 2**62), st.none()),
            st.one_of(st.integers(1, 4), st.integers(0, 0), st.integers(2**40, 2**41)),
        ),
        max_size=25,
        unique=True,
    )
)
def test_units_and_attempts_sorted_by_one_integer_or_by_the_two_columns_alike(pairs: list[tuple[Any, int]]) -> None:
    # One Int64 (unit × (largest attempt + 1) + attempt) when it fits, the two columns otherwise: the same order.
    from evalframe.attempts import _by_unit_and_attempt

    frame = pl.DataFrame(pairs, schema={"_uid": pl.Int64, "attempt": pl.Int64}, orient="row")
    expected = sorted(pairs, key=lambda p: (p[0] is not None, p[0] or 0, p[1]))
    assert _by_unit_and_attempt(frame, ["_uid"]).collect().rows() == expected
    # Rows given in order (as the audit's reconcile hands them on) are found in order and kept.
    in_order = pl.DataFrame(expected, schema=frame.schema, orient="row")
    assert _by_unit_and_attempt(in_order, ["_uid"]).collect().rows() == expected


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"grade": "fuzzy"}, "grade must be one of 'binary', 'numeric', got 'fuzzy'"),
        ({"retry": "best"}, "retry must be one of 'first', 'last_allowed', 'every', got 'best'"),
        ({"missing": "ignore"}, "missing must be one of 'report', 'refuse', got 'ignore'"),
        ({"max_attempts": 0}, "max_attempts must be at least 1"),
        ({"score_range": (1.0, 0.0)}, r"score_range must be finite \(low, high\) with low < high, got \(1.0, 0.0\)"),
        ({"grade": "numeric", "score_range": (0.0, float("nan"))}, "score_range must be finite"),
        ({"pass_threshold": 0.5}, "pass_threshold applies to grade='numeric' only.*got 0.5 with grade='binary'"),
        ({"grade": "numeric", "pass_threshold": 2.0}, r"within score_range \(0.0, 1.0\); got 2.0"),
    ],
)
def test_an_audit_option_outside_its_values_is_a_value_error(option: dict[str, Any], message: str) -> None:
    # Checked before anything is read: a refused batch would otherwise never reach the retry policy.
    with pytest.raises(ValueError, match=message):
        ef.audit(PLAN, TIMEOUT_THEN_PASS, **option)


def test_every_names_observations_as_the_denominator_wherever_a_rate_is_shown() -> None:
    report = ef.audit(PLAN, TIMEOUT_THEN_PASS, retry="every")
    (candidate,) = report.view().candidates
    coverage = candidate.rates["scored_coverage"]
    assert (coverage.numerator, coverage.denominator, coverage.of) == (1, 3, "observations")
    assert coverage.formula == "scored / observations"
    assert candidate.headline[0] == (
        "A: pass_rate_scored 1.0 = 1 passed / 1 scored, and only 1 of 3 observations were scored"
        " (scored_coverage 0.333)."
    )
    # Under first the same rates are over the 2 planned units.
    (first,) = ef.audit(PLAN, TIMEOUT_THEN_PASS, retry="first").view().candidates
    assert (first.rates["scored_coverage"].denominator, first.rates["scored_coverage"].of) == (2, "planned")


@pytest.mark.parametrize(
    ("policy", "counted"),
    # Unit u1: attempts 1 (timeout), 2 (error), 4 (completed, scored); unit u2: attempt 1 (error), 2 (completed)
    # after a non-retried failure under retry_on=("timeout",). SPEC §4: first counts each unit's attempt 1;
    # last_allowed counts the last attempt reached by allowed retries (u1: 2 follows a timeout, 4 follows an
    # error, which is not retried, so 2; u2: 2 follows an error, so 1); every counts each attempt up to
    # max_attempts = 3 (u1's 4 is beyond it).
    [("first", [1, 0, 0, 1, 0]), ("last_allowed", [0, 1, 0, 1, 0]), ("every", [1, 1, 0, 1, 1])],
)
def test_the_rule_by_unit_windows_and_by_row_order_alike(policy: str, counted: list[int]) -> None:
    import narwhals.stable.v2 as nw

    from evalframe.attempts import marked_attempts, selection
    from evalframe.validate.rows import Options

    rows = pl.DataFrame(
        {
            "candidate": ["A"] * 5,
            "case_id": ["u1", "u1", "u1", "u2", "u2"],
            "trial": [1] * 5,
            "attempt": [1, 2, 4, 1, 2],
            "exec_status": ["timeout", "error", "completed", "error", "completed"],
            "score_status": ["not_scored", "not_scored", "scored", "not_scored", "scored"],
            "line": [2, 3, 4, 5, 6],
            "source": ["r"] * 5,
        }
    )
    options = Options(retry=policy, max_attempts=3, retry_on=("timeout",))  # type: ignore[arg-type]
    by_windows = marked_attempts(nw.from_native(rows.reverse().lazy()), options)
    by_order = marked_attempts(nw.from_native(rows.with_row_index("_o").lazy()), options, order="_o")
    for marked in (by_windows, by_order):
        chosen = selection(marked, options)
        attempts = chosen.attempts.to_native().collect().sort("case_id", "attempt")
        assert attempts.get_column("counts").cast(pl.Int64).to_list() == counted
        assert attempts.get_column("attempts").to_list() == [3, 3, 3, 2, 2]
        found = pl.concat([f.to_native().collect() for f in chosen.flags]).sort("line")
        # u1's 4: a gap (3 skipped), beyond max_attempts, after an ineligible error; u2's 2: after an ineligible error.
        expected = [("attempt_beyond_max", 4), ("attempt_gap", 4), ("retry_after_ineligible", 4)]
        assert sorted(found.select("kind", "line").rows()) == [*expected, ("retry_after_ineligible", 6)]
