"""SPEC §7 reference fixtures, with their exact expected values and refusals."""

from __future__ import annotations

import itertools
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from tests.conftest import FIXTURES

ORBIT = FIXTURES / "orbit_desk"
LEDGER = FIXTURES / "ledger"
REVERSED = FIXTURES / "reversed_answers"
ORBIT_CASES = ["quote", "refund", "privacy", "handoff"]


def orbit_plan() -> ef.Plan:
    return ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])


def refusal_kinds(plan: ef.Plan, path: Path, **kwargs: object) -> set[tuple[str, int | None]]:
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, path, **kwargs)  # type: ignore[arg-type]
    refusing = info.value.problems.filter(pl.col("refusing"))
    return {(k, line) for k, line in refusing.select("kind", "line").iter_rows()}


def write(tmp_path: Path, text: str, name: str = "results.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


# --- Orbit Desk ------------------------------------------------------------------


def test_orbit_desk_expected_table() -> None:
    report = ef.audit(orbit_plan(), ORBIT / "results.csv")
    got = report.summary.select(
        "candidate",
        "planned",
        "scored",
        "passed",
        "missing",
        "missing_case_ids",
        "scored_coverage",
        "pass_rate_scored",
        "pass_rate_planned",
    )
    expected = pl.DataFrame(
        {
            "candidate": ["A", "B"],
            "planned": [4, 4],
            "scored": [2, 4],
            "passed": [2, 3],
            "missing": [2, 0],
            "missing_case_ids": [["handoff", "privacy"], []],
            "scored_coverage": [0.5, 1.0],
            "pass_rate_scored": [1.0, 0.75],
            "pass_rate_planned": [0.5, 0.75],
        },
        schema_overrides={c: pl.UInt32 for c in ("planned", "scored", "passed", "missing")}
        | {"missing_case_ids": pl.List(pl.String)},
    )
    assert_frame_equal(got, expected)
    # Missing units are missing, not failures.
    a_units = report.units.filter(pl.col("candidate") == "A").select("case_id", pl.col("outcome").cast(pl.String))
    assert sorted(a_units.rows()) == [
        ("handoff", "missing"),
        ("privacy", "missing"),
        ("quote", "passed"),
        ("refund", "passed"),
    ]
    assert report.summary.filter(pl.col("candidate") == "A").get_column("failed").item() == 0
    assert report.summary.get_column("pass_rate_upper").to_list() == [1.0, 0.75]


def test_orbit_desk_header_only_results() -> None:
    report = ef.audit(orbit_plan(), ORBIT / "results_header_only.csv")
    s = report.summary
    assert s.get_column("scored").to_list() == [0, 0]
    assert s.get_column("missing").to_list() == [4, 4]
    assert s.get_column("scored_coverage").to_list() == [0.0, 0.0]
    assert s.get_column("pass_rate_scored").to_list() == [None, None]
    assert s.get_column("pass_rate_planned").to_list() == [0.0, 0.0]
    assert s.get_column("pass_rate_upper").to_list() == [1.0, 1.0]


def test_quoted_identifier_with_comma_is_a_valid_case(tmp_path: Path) -> None:
    plan_path = write(tmp_path, 'case_id\n"quote, revised"\nrefund\n', "plan.csv")
    plan = ef.Plan.from_file(plan_path, candidates=["A"])
    results = write(tmp_path, 'candidate,case_id,passed\nA,"quote, revised",1\nA,refund,0\n')
    report = ef.audit(plan, results)
    assert report.units.select("case_id", "passed").sort("case_id").rows() == [
        ("quote, revised", True),
        ("refund", False),
    ]
    assert report.summary.get_column("pass_rate_scored").item() == 0.5


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("A,quote,1\nA,quote,1\n", {("duplicate_key", 2), ("duplicate_key", 3)}),
        ("A,quote,1\nA,invented,1\n", {("unknown_case", 3)}),
        ("A,quote,1\nC,quote,1\n", {("unknown_candidate", 3)}),
        ("A,quote,\n", {("invalid_grade", 2)}),
        ("A,quote,true\n", {("invalid_grade", 2)}),
        ("A,quote,2\n", {("invalid_grade", 2)}),
        ("A,quote,NaN\n", {("invalid_grade", 2)}),
        ("A,quote, 1\n", {("invalid_grade", 2)}),
        ("A,refund,1\nA,quote\n", {("field_count", 3)}),
        ("A,quote,1,extra\n", {("field_count", 2)}),
        ("A,quote,1\n\nA,refund,1\n", {("blank_line", 3)}),
        ('A,"quote,1\nA,refund,1\n', {("malformed_quoting", 2)}),
    ],
    ids=[
        "duplicate",
        "unknown-case",
        "unknown-candidate",
        "empty-grade",
        "true",
        "two",
        "nan",
        "padded-grade",
        "short-row",
        "long-row",
        "blank-line",
        "unterminated-quote",
    ],
)
def test_orbit_desk_refusals(tmp_path: Path, body: str, expected: set[tuple[str, int]]) -> None:
    path = write(tmp_path, "candidate,case_id,passed\n" + body)
    assert refusal_kinds(orbit_plan(), path) == expected


def test_repeated_header_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "candidate,case_id,case_id\nA,quote,quote\n")
    kinds = refusal_kinds(orbit_plan(), path)
    assert ("repeated_column", 1) in kinds
    assert ("missing_column", None) in kinds  # and no grade column at all


def test_every_problem_is_reported_not_just_the_first(tmp_path: Path) -> None:
    path = write(tmp_path, "candidate,case_id,passed\nA,quote,1\nA,quote,1\nA,invented,true\nC,quote, 1\n\nA,refund\n")
    kinds = refusal_kinds(orbit_plan(), path)
    assert kinds == {
        ("duplicate_key", 2),
        ("duplicate_key", 3),
        ("unknown_case", 4),
        ("invalid_grade", 4),
        ("unknown_candidate", 5),
        ("invalid_grade", 5),
        ("blank_line", 6),
        ("field_count", 7),
    }


@pytest.mark.parametrize(
    ("plan_text", "kind"),
    [
        ("case_id\n", "empty_plan"),
        ("case_id\nquote\nquote\n", "duplicate_case"),
        ("case_id\n x\n", "padded_identifier"),
        ('case_id\n""\n', "empty_identifier"),
    ],
    ids=["empty", "repeated-id", "padded-id", "empty-id"],
)
def test_orbit_desk_plan_refusals(tmp_path: Path, plan_text: str, kind: str) -> None:
    path = write(tmp_path, plan_text, "plan.csv")
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_file(path, candidates=["A", "B"])
    assert kind in info.value.problems.get_column("kind").to_list()


@pytest.mark.parametrize(
    ("candidates", "kind"),
    [
        ([], "empty_candidates"),
        (["A", "A"], "repeated_candidate"),
        (["A", " B"], "padded_identifier"),
        ([""], "empty_identifier"),
    ],
)
def test_candidate_list_refusals(candidates: list[str], kind: str) -> None:
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_file(ORBIT / "plan.csv", candidates=candidates)
    assert kind in info.value.problems.get_column("kind").to_list()


# --- status ledger -------------------------------------------------------------------


def test_status_ledger_expected_funnel() -> None:
    plan = ef.Plan.from_file(LEDGER / "plan.csv", candidates=["agent"])
    row = ef.audit(plan, LEDGER / "results.csv").summary.row(0, named=True)
    assert {
        k: row[k]
        for k in (
            "planned",
            "attempted",
            "completed",
            "with_output",
            "scored",
            "passed",
            "exec_failed",
            "judge_failed",
            "missing",
        )
    } == {
        "planned": 4,
        "attempted": 4,
        "completed": 3,
        "with_output": 3,
        "scored": 2,
        "passed": 1,
        "exec_failed": 1,
        "judge_failed": 1,
        "missing": 0,
    }
    assert (row["pass_rate_scored"], row["pass_rate_planned"], row["pass_rate_upper"]) == (0.5, 0.25, 0.75)


def test_status_ledger_outcomes_stay_distinguishable() -> None:
    plan = ef.Plan.from_file(LEDGER / "plan.csv", candidates=["agent"])
    units = ef.audit(plan, LEDGER / "results.csv").units
    assert units.select("case_id", pl.col("outcome").cast(pl.String)).rows() == [
        ("A", "passed"),
        ("B", "exec_failed"),
        ("C", "judge_failed"),
        ("D", "failed"),
    ]


# --- reversed answers -----------------------------------------------------------------

REV_PLAN = [("allow-own", "ALLOW"), ("deny-other", "DENY")]
REV_RESULTS = [("deny-other", "ALLOW", "run-1"), ("allow-own", "DENY", "run-1")]


def reversed_audit(
    tmp_path: Path, plan_rows: list[tuple[str, str]], rows: list[tuple[str, str, str]]
) -> ef.AuditReport:
    plan_path = write(tmp_path, "case_id,expected\n" + "".join(f"{c},{e}\n" for c, e in plan_rows), "plan.csv")
    res_path = write(tmp_path, "case_id,answer,run_id\n" + "".join(f"{c},{a},{r}\n" for c, a, r in rows))
    plan = ef.Plan.from_file(plan_path, candidates=["model"], run_id="run-1")
    return ef.audit(plan, res_path, missing="refuse")


def test_reversed_answers_are_matched_on_identity_not_position() -> None:
    plan = ef.Plan.from_file(REVERSED / "plan.csv", candidates=["model"], run_id="run-1")
    report = ef.audit(plan, REVERSED / "results.csv", missing="refuse")
    row = report.summary.row(0, named=True)
    assert (row["scored"], row["passed"], row["pass_rate_scored"]) == (2, 0, 0.0)
    assert report.units.select("case_id", "passed").rows() == [("allow-own", False), ("deny-other", False)]


def test_reversed_answers_every_ordering_gives_the_same_report(tmp_path: Path) -> None:
    reports = []
    for i, (plan_rows, rows) in enumerate(
        itertools.product(itertools.permutations(REV_PLAN), itertools.permutations(REV_RESULTS))
    ):
        d = tmp_path / str(i)
        d.mkdir()
        reports.append(reversed_audit(d, list(plan_rows), list(rows)))
    first = reports[0]
    for other in reports[1:]:
        assert_frame_equal(other.summary, first.summary)
        assert_frame_equal(other.units.drop("line", "source"), first.units.drop("line", "source"))
    assert len(reports) == 4


@pytest.mark.parametrize(
    ("plan_rows", "rows", "kind"),
    [
        (REV_PLAN, REV_RESULTS[:1], "missing_unit"),
        (REV_PLAN, [*REV_RESULTS, ("allow-own", "ALLOW", "run-1")], "duplicate_key"),
        (REV_PLAN, [("deny-other", "ALLOW", "run-2"), ("allow-own", "DENY", "run-1")], "run_mismatch"),
        (REV_PLAN, [("deny-other", "ALLOW", "run-1"), ("invented", "DENY", "run-1")], "unknown_case"),
        (REV_PLAN, [("deny-other", "", "run-1"), ("allow-own", "DENY", "run-1")], "empty_value"),
        (REV_PLAN, [("", "ALLOW", "run-1"), ("allow-own", "DENY", "run-1")], "empty_identifier"),
        (REV_PLAN, [("deny-other", "ALLOW", ""), ("allow-own", "DENY", "run-1")], "empty_identifier"),
    ],
    ids=[
        "missing-case",
        "duplicate-result",
        "wrong-run",
        "unknown-replaces-expected",
        "empty-answer",
        "empty-case-id",
        "empty-run-id",
    ],
)
def test_reversed_answers_refusals(
    tmp_path: Path, plan_rows: list[tuple[str, str]], rows: list[tuple[str, str, str]], kind: str
) -> None:
    with pytest.raises(ef.AuditRefused) as info:
        reversed_audit(tmp_path, plan_rows, rows)
    assert kind in info.value.problems.filter(pl.col("refusing")).get_column("kind").to_list()


def test_reversed_answers_plan_refusals(tmp_path: Path) -> None:
    with pytest.raises(ef.PlanError, match="duplicate_case"):
        reversed_audit(tmp_path, [*REV_PLAN, ("allow-own", "ALLOW")], REV_RESULTS)
    with pytest.raises(ef.PlanError, match="empty_plan"):
        reversed_audit(tmp_path, [], REV_RESULTS)


def test_an_empty_units_table_plan_is_an_empty_plan_however_it_is_given(tmp_path: Path) -> None:
    header_only = write(tmp_path, "candidate,case_id,trial\n", "units.csv")
    lake = tmp_path / "lake" / "candidate=A"
    lake.mkdir(parents=True)
    pl.DataFrame(schema={"case_id": pl.String, "trial": pl.Int64}).write_parquet(lake / "p.parquet")
    empty = pl.DataFrame(schema={"candidate": pl.String, "case_id": pl.String, "trial": pl.Int64})
    for load in (
        lambda: ef.Plan.from_frame(empty),
        lambda: ef.Plan.from_file(header_only),
        lambda: ef.Plan.from_file(tmp_path / "lake"),
    ):
        with pytest.raises(ef.PlanError) as info:
            load()
        assert info.value.problems.get_column("kind").to_list() == ["empty_plan"]
