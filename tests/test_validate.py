"""Ledger shapes, token parsing and pandera value checks."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe.schemas import LedgerModel, failures_as_problems
from evalframe.validate import CANONICAL_SCHEMA, validate_ledger

PLAN = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])


def problem_kinds(raw: pl.DataFrame, **kwargs: object) -> list[tuple[str, int | None]]:
    v = validate_ledger(raw, PLAN, **kwargs)  # type: ignore[arg-type]
    return sorted(v.problems.select("kind", "line").iter_rows())


def test_pandera_value_checks_really_run_on_lazy_input() -> None:
    # pandera alone only checks the schema of a LazyFrame; evalframe must still catch bad values.
    raw = pl.LazyFrame(
        {"candidate": ["A"], "case_id": ["q1"], "exec_status": ["done"], "score_status": ["scored"], "score": [1.0]}
    )
    assert problem_kinds(raw.collect()) == [("invalid_status", 1)]
    v = validate_ledger(raw, PLAN)
    assert v.problems.get_column("kind").to_list() == ["invalid_status"]


def test_failures_as_problems_maps_checks_to_kinds() -> None:
    frame = pl.DataFrame(
        {
            "candidate": ["A", ""],
            "case_id": [" q1", "q2"],
            "trial": [-1, 1],
            "attempt": [1, 0],
            "run_id": [None, "r"],
            "exec_status": ["completed", "bogus"],
            "score_status": ["scored", "scored"],
            "line": [2, 3],
        }
    )
    got = sorted(failures_as_problems(frame, LedgerModel).select("kind", "line").iter_rows())
    assert got == [
        ("empty_identifier", 3),
        ("invalid_integer", 2),
        ("invalid_integer", 3),
        ("invalid_status", 3),
        ("padded_identifier", 2),
    ]


def test_canonical_columns_and_dtypes() -> None:
    raw = pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": ["1"]})
    v = validate_ledger(raw, PLAN)
    assert v.shape == "grades"
    assert v.ledger.schema == CANONICAL_SCHEMA
    assert v.ledger.select("trial", "attempt", "exec_status", "score_status", "score", "passed").row(0) == (
        1,
        1,
        "completed",
        "scored",
        1.0,
        True,
    )


def test_single_candidate_plan_fills_a_missing_candidate_column() -> None:
    v = validate_ledger(pl.DataFrame({"case_id": ["q1"], "passed": [0]}), PLAN)
    assert v.ledger.get_column("candidate").to_list() == ["A"]


@pytest.mark.parametrize(
    ("row", "kind"),
    [
        ({"exec_status": "timeout", "score_status": "scored", "score": "1"}, "status_inconsistent"),
        ({"exec_status": "completed", "score_status": "judge_error", "score": "1"}, "status_inconsistent"),
        ({"exec_status": "completed", "score_status": "scored", "score": ""}, "status_inconsistent"),
        ({"exec_status": "completed", "score_status": "scored", "score": "0.5"}, "invalid_grade"),
        ({"exec_status": "completed", "score_status": "scored", "score": "inf"}, "invalid_grade"),
        ({"exec_status": "", "score_status": "not_scored", "score": ""}, "empty_value"),
        ({"exec_status": "completed", "score_status": "maybe", "score": ""}, "invalid_status"),
    ],
)
def test_status_ledger_refusals(row: dict[str, str], kind: str) -> None:
    raw = pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], **{k: [v] for k, v in row.items()}})
    assert kind in [k for k, _ in problem_kinds(raw)]


def test_a_score_that_does_not_parse_is_one_problem_not_also_a_scored_row_without_a_score() -> None:
    """' 0.5' is an invalid score; its null parse is not reported again as "scored but there is no score"."""
    raw = pl.DataFrame(
        {
            "candidate": ["A", "A"],
            "case_id": ["q1", "q2"],
            "exec_status": ["completed", "completed"],
            "score_status": ["scored", "scored"],
            "score": [" 0.5", ""],
        }
    )
    v = validate_ledger(raw, PLAN, grade="numeric")
    assert v.problems.select("kind", "line", "detail").rows() == [
        ("invalid_score", 1, "score = ' 0.5' is not a finite number in [0.0, 1.0]"),
        ("status_inconsistent", 2, "score_status is 'scored' but there is no score"),
    ]


def test_status_ledger_empty_score_is_null_not_zero() -> None:
    raw = pl.DataFrame(
        {
            "candidate": ["A"],
            "case_id": ["q1"],
            "exec_status": ["timeout"],
            "score_status": ["not_scored"],
            "score": [""],
        }
    )
    v = validate_ledger(raw, PLAN)
    assert v.problems.height == 0
    assert v.ledger.select("score", "passed", "has_output").row(0) == (None, None, False)


@pytest.mark.parametrize(
    ("token", "kinds"),
    [
        ("0", ["trial_out_of_range"]),
        ("1", []),
        ("2", ["trial_out_of_range"]),
        ("-1", ["invalid_integer"]),
        ("1.0", ["invalid_integer"]),
        ("01", ["invalid_integer"]),
    ],
)
def test_trial_tokens(token: str, kinds: list[str]) -> None:
    raw = pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "trial": [token], "passed": ["1"]})
    try:
        ef.audit(PLAN, raw)
        found: list[str] = []
    except ef.AuditRefused as exc:
        found = exc.problems.filter(pl.col("refusing")).get_column("kind").to_list()
    assert found == kinds


def test_integer_tokens_beyond_int64_say_so() -> None:
    """A positive integer Int64 cannot hold is named as such; other bad tokens are not positive integers."""
    raw = pl.DataFrame(
        {
            "candidate": ["A"] * 4,
            "case_id": ["q1"] * 4,
            "trial": ["99999999999999999999999", "1", "1", "00000000000000000000001"],
            "attempt": ["1", "9223372036854775808", "9223372036854775807", "1"],
            "passed": ["1"] * 4,
        }
    )
    details = validate_ledger(raw, PLAN).problems.filter(pl.col("kind") == "invalid_integer")
    assert details.select("line", "trial", "attempt", "detail").rows() == [
        (
            1,
            None,
            1,
            "trial = 99999999999999999999999 is beyond the 64-bit integer range (at most 9223372036854775807)",
        ),
        (4, None, 1, "trial = 00000000000000000000001 is not a positive integer"),
        (2, 1, None, "attempt = 9223372036854775808 is beyond the 64-bit integer range (at most 9223372036854775807)"),
    ]


def test_zero_based_trials_of_a_units_plan_are_identities() -> None:
    units = pl.DataFrame({"candidate": ["A"] * 4, "case_id": ["q1", "q1", "q2", "q2"], "trial": [0, 1, 0, 1]})
    plan = ef.Plan.from_frame(units)
    assert (plan.trials, plan.trial_range) == (2, (0, 1))
    ledger = pl.DataFrame(
        {"candidate": ["A", "A", "A"], "case_id": ["q1", "q2", "q2"], "trial": [0, 1, 2], "passed": [1, 0, 1]}
    )
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, ledger)
    assert info.value.problems.filter(pl.col("refusing")).select("kind", "trial").rows() == [("trial_out_of_range", 2)]
    report = ef.audit(plan, ledger.head(2))
    assert report.summary.select("planned", "scored", "missing").row(0) == (4, 2, 2)


def test_numeric_scores_in_range_with_threshold() -> None:
    raw = pl.DataFrame(
        {"candidate": ["A"] * 3, "case_id": ["q1", "q2", "q1"], "attempt": [1, 1, 2], "score": ["0.7", "0.2", "1.5"]}
    )
    v = validate_ledger(raw, PLAN, grade="numeric", pass_threshold=0.5)
    assert sorted(v.problems.select("kind", "line").iter_rows()) == [("invalid_score", 3)]
    assert v.ledger.get_column("passed").to_list()[:2] == [True, False]


def test_unknown_column_and_missing_grade_column() -> None:
    raw = pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "grade": ["1"]})
    kinds = [k for k, _ in problem_kinds(raw)]
    assert kinds == ["missing_column", "unexpected_column"]


def test_parquet_typed_grades(tmp_path: object) -> None:
    raw = pl.DataFrame(
        {
            "candidate": ["A", "A", "A"],
            "case_id": ["q1", "q2", "q1"],
            "attempt": [1, 1, 2],
            "passed": [True, False, None],
        }
    )
    assert problem_kinds(raw) == [("invalid_grade", 3)]
    ints = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["q1", "q2"], "passed": [1, 2]})
    assert problem_kinds(ints) == [("invalid_grade", 2)]


def test_threshold_fills_null_passed_from_an_importer() -> None:
    raw = pl.DataFrame(
        {
            "candidate": ["A", "A"],
            "case_id": ["q1", "q2"],
            "exec_status": ["completed"] * 2,
            "score_status": ["scored"] * 2,
            "score": [0.7, 0.2],
            "passed": [None, None],
        },
        schema_overrides={"passed": pl.Boolean},
    )
    v = validate_ledger(raw, PLAN, grade="numeric", pass_threshold=0.5)
    assert v.problems.height == 0
    assert v.ledger.get_column("passed").to_list() == [True, False]
    assert validate_ledger(raw, PLAN, grade="numeric").ledger.get_column("passed").to_list() == [None, None]


def test_declared_extra_columns_ride_along_untouched() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    raw = pl.DataFrame(
        {"case_id": ["q1", "q2"], "passed": ["1", "0"], "output": ["007", "a, b"], "latency": ["1.50", "2"]}
    )
    refused = validate_ledger(raw, plan)
    assert refused.problems.get_column("kind").to_list() == ["unexpected_column", "unexpected_column"]
    kept = validate_ledger(raw, plan, extra_columns=["output", "latency"])
    assert kept.problems.height == 0
    assert kept.ledger.select("case_id", "passed", "output", "latency").rows() == [
        ("q1", True, "007", "1.50"),
        ("q2", False, "a, b", "2"),
    ]


@pytest.mark.parametrize(
    ("extra", "kind"),
    [("passed", "unexpected_column"), ("outcome", "unexpected_column"), ("tokens", "missing_column")],
)
def test_an_extra_column_cannot_shadow_evalframe_columns_or_be_absent(extra: str, kind: str) -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"]}), candidates=["A"])
    raw = pl.DataFrame({"case_id": ["q1"], "passed": ["1"], "outcome": ["x"] if extra == "outcome" else ["y"]})
    raw = raw if extra == "outcome" else raw.drop("outcome")
    found = validate_ledger(raw, plan, extra_columns=[extra])
    assert found.problems.get_column("kind").to_list() == [kind]


def test_a_parquet_ledger_of_bytes_or_unsigned_integers_beyond_int64_is_refused_not_a_traceback(
    tmp_path: Path,
) -> None:
    # A BYTE_ARRAY case_id (bytes, not text; here not even UTF-8) is a column type ledgers do not hold, as a plan's
    # is; a UInt64 trial of 2**64 - 1 is an invalid_integer of its row. Both raised polars' ComputeError (exit 1).
    import pyarrow as pa
    import pyarrow.parquet as pq

    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    ids = pa.array([b"q1", b"q\xff"])
    pq.write_table(pa.table({"candidate": ["A", "A"], "case_id": ids, "passed": [1, 0]}), tmp_path / "r1.parquet")
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, tmp_path / "r1.parquet")
    assert refused.value.problems.filter(pl.col("refusing")).select("kind", "detail").rows() == [
        ("unexpected_column", "ledger column 'case_id' has type Binary; ledger columns hold text, numbers or booleans")
    ]
    trial = pa.array([2**64 - 1], pa.uint64())
    pq.write_table(pa.table({"case_id": ["q1"], "trial": trial, "passed": [1]}), tmp_path / "r2.parquet")
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, tmp_path / "r2.parquet")
    assert refused.value.problems.filter(pl.col("refusing")).select("kind", "line", "detail").rows() == [
        (
            "invalid_integer",
            1,
            "trial = 18446744073709551615 is beyond the 64-bit integer range (at most 9223372036854775807)",
        )
    ]


def test_a_jsonl_binary_grade_is_exactly_the_token_0_or_1(tmp_path: Path) -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3", "q4", "q5"]}), candidates=["A"])
    rows = ["0.99999999999999999999", "1", "1.0", "1e0", "0"]
    ledger = tmp_path / "r.jsonl"
    lines = [f'{{"candidate": "A", "case_id": "q{i}", "passed": {g}}}\n' for i, g in enumerate(rows, 1)]
    ledger.write_text("".join(lines))
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, ledger)
    problems = refused.value.problems.filter(pl.col("refusing"))
    assert problems.select("kind", "line", "detail").rows() == [
        ("invalid_grade", 1, "passed = '0.99999999999999999999' is not exactly 0 or 1"),
        ("invalid_grade", 3, "passed = '1.0' is not exactly 0 or 1"),
        ("invalid_grade", 4, "passed = '1e0' is not exactly 0 or 1"),
    ]


def test_typed_booleans_are_grades_in_every_input(tmp_path: Path) -> None:
    # Decided once (README, Inputs): a typed boolean is a value, not the text token SPEC §3 refuses.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    frame = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["q1", "q2"], "passed": [True, False]})
    frame.write_parquet(tmp_path / "r.parquet")
    (tmp_path / "r.jsonl").write_text(
        '{"candidate": "A", "case_id": "q1", "passed": true}\n{"candidate": "A", "case_id": "q2", "passed": false}\n'
    )
    for results in (frame, tmp_path / "r.parquet", tmp_path / "r.jsonl"):
        summary = ef.audit(plan, results).summary  # type: ignore[arg-type]
        assert summary.select("scored", "passed").rows() == [(2, 1)]
    # The text true is refused wherever it is text: a CSV cell, a JSON string, a JSON Lines column of mixed types.
    (tmp_path / "r.csv").write_text("candidate,case_id,passed\nA,q1,true\nA,q2,0\n")
    (tmp_path / "s.jsonl").write_text(
        '{"candidate": "A", "case_id": "q1", "passed": "true"}\n{"candidate": "A", "case_id": "q2", "passed": 0}\n'
    )
    (tmp_path / "m.jsonl").write_text(
        '{"candidate": "A", "case_id": "q1", "passed": true}\n{"candidate": "A", "case_id": "q2", "passed": 0}\n'
    )
    for results in (tmp_path / "r.csv", tmp_path / "s.jsonl", tmp_path / "m.jsonl"):
        with pytest.raises(ef.AuditRefused) as refused:
            ef.audit(plan, results)
        rows = refused.value.problems.filter(pl.col("refusing")).select("kind", "line", "detail").rows()
        line = 2 if results.suffix == ".csv" else 1  # a CSV's header is line 1
        assert rows == [("invalid_grade", line, "passed = 'true' is not exactly 0 or 1")]


def test_an_undeclared_column_does_not_hide_the_row_problems() -> None:
    # Issue 45 item 9: an unexpected column stopped validation, so the rows' problems needed a second run.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"]}), candidates=["A"])
    raw = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["q1", "zz"], "passed": ["2", "1"], "note": ["x", "y"]})
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, raw)
    rows = refused.value.problems.filter(pl.col("refusing")).select("kind", "line").rows()
    assert sorted(rows, key=str) == [("invalid_grade", 1), ("unexpected_column", None), ("unknown_case", 2)]
    # A missing column leaves the rows in doubt: it is reported alone (with the stray column).
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, raw.rename({"passed": "pased"}))
    assert sorted(refused.value.problems.get_column("kind").to_list()) == [
        "missing_column",
        "unexpected_column",
        "unexpected_column",
    ]
