"""Explicit units tables: read one candidate at a time, kept as integer unit codes, decoded exactly."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe.plan import UnitCoding
from evalframe.plan.coding import case_codes, id_codes


def units_table(rows: list[tuple[str, str, int, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["candidate", "case_id", "trial", "case_type"], orient="row")


# B plans a case ("a0") that sorts before every case of A, read after A: A's rows must be renumbered.
UNEVEN = units_table(
    [
        ("A", "c2", 0, "x"),
        ("A", "c1", 0, "y"),
        ("A", "c1", 1, "y"),
        ("B", "a0", 1, "z"),
        ("B", "c2", 0, "x"),
    ]
)


def test_candidates_planning_different_cases_decode_exactly() -> None:
    plan = ef.Plan.from_frame(UNEVEN)
    assert plan.candidates == ("A", "B")
    assert plan.trial_range == (0, 1) and plan.trials == 2 and plan.n_units == 5
    assert plan.cases.rows() == [("a0", "z"), ("c1", "y"), ("c2", "x")]
    assert plan.units is not None
    assert plan.units.rows() == [
        ("A", "c1", 0),
        ("A", "c1", 1),
        ("A", "c2", 0),
        ("B", "a0", 1),
        ("B", "c2", 0),
    ]
    # (candidate index × 3 cases + case row) × 2 trials + (trial − 0)
    assert plan.unit_codes is not None and plan.unit_codes.to_list() == [2, 3, 4, 7, 10]


def test_a_units_plan_audits_each_candidate_on_its_own_units() -> None:
    plan = ef.Plan.from_frame(UNEVEN)
    ledger = pl.DataFrame(
        {"candidate": ["A", "B", "B"], "case_id": ["c1", "a0", "c2"], "trial": [0, 1, 0], "passed": [1, 0, 1]}
    )
    summary = ef.audit(plan, ledger).summary
    assert summary.select("candidate", "planned", "scored", "passed", "missing").rows() == [
        ("A", 3, 1, 1, 2),
        ("B", 2, 2, 1, 0),
    ]
    refused = pl.DataFrame({"candidate": ["A"], "case_id": ["a0"], "trial": [1], "passed": [1]})
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, refused)
    assert info.value.problems.filter(pl.col("refusing")).select("kind", "case_id").rows() == [("unknown_unit", "a0")]


def test_for_candidate_keeps_that_candidates_units_and_the_trial_range() -> None:
    plan = ef.Plan.from_frame(UNEVEN)
    only_b = plan.for_candidate("B")
    assert only_b.units is not None and only_b.units.rows() == [("B", "a0", 1), ("B", "c2", 0)]
    assert only_b.trial_range == (0, 1)
    with pytest.raises(ValueError, match="not planned"):
        plan.for_candidate("C")


def test_case_columns_that_disagree_between_candidates_refuse_the_plan() -> None:
    rows = units_table([("A", "c1", 1, "x"), ("B", "c1", 1, "y"), ("B", "c2", 1, "x")])
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_frame(rows)
    assert info.value.problems.select("kind", "case_id", "line", "detail").rows() == [
        ("duplicate_case", "c1", 1, "case-level plan columns disagree between rows of this case"),
        ("duplicate_case", "c1", 2, "case-level plan columns disagree between rows of this case"),
    ]


def test_a_unit_listed_twice_is_named_with_both_lines() -> None:
    rows = units_table([("A", "c1", 1, "x"), ("A", "c2", 1, "x"), ("A", "c1", 1, "x")])
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_frame(rows)
    assert info.value.problems.select("kind", "candidate", "case_id", "trial", "line").rows() == [
        ("duplicate_case", "A", "c1", 1, 1),
        ("duplicate_case", "A", "c1", 1, 3),
    ]


def test_a_parquet_units_plan_equals_the_same_plan_from_a_frame(tmp_path: Path) -> None:
    path = tmp_path / "plan.parquet"
    UNEVEN.write_parquet(path)
    from_file, from_frame = ef.Plan.from_file(path), ef.Plan.from_frame(UNEVEN)
    assert from_file.plan_hash == from_frame.plan_hash
    assert from_file.units is not None and from_frame.units is not None
    assert_frame_equal(from_file.units, from_frame.units)
    assert_frame_equal(from_file.cases, from_frame.cases)


def test_with_units_adds_listed_candidates_and_drops_unknown_cases() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["B"], trials=3)
    units = pl.DataFrame({"candidate": ["C", "B", "B"], "case_id": ["q1", "q2", "nope"], "trial": [2, 1, 1]})
    with_units = plan.with_units(units)
    assert with_units.candidates == ("B", "C") and with_units.trials == 3 and with_units.trial_range == (1, 2)
    assert with_units.units is not None and with_units.units.rows() == [("B", "q2", 1), ("C", "q1", 2)]


def test_unit_coding_orders_like_the_key() -> None:
    coding = UnitCoding(("A", "B"), n_cases=3, low=0, span=2)
    frame = pl.DataFrame({"_cand": [1, 0], "_case": [0, 2], "trial": [1, 0]}, schema_overrides={"_cand": pl.UInt32})
    codes = frame.select(coding.code()).to_series().to_list()
    assert codes == [7, 4]
    decoded = pl.DataFrame({"_uid": codes}).select(coding.parts())
    assert decoded.rows() == [(1, 0, 1), (0, 2, 0)]


units_rows = st.lists(
    st.tuples(st.sampled_from(["A", "B", "C"]), st.sampled_from(["q1", "q2", "q3", "q4"]), st.integers(0, 3)),
    min_size=1,
    max_size=30,
    unique=True,
)


@settings(max_examples=60, deadline=None)
@given(units_rows, st.randoms(use_true_random=False))
def test_any_units_table_in_any_order_decodes_to_its_sorted_units(
    rows: list[tuple[str, str, int]], rnd: object
) -> None:
    shuffled = list(rows)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    frame = pl.DataFrame(shuffled, schema=["candidate", "case_id", "trial"], orient="row")
    plan = ef.Plan.from_frame(frame)
    assert plan.units is not None
    assert plan.units.rows() == sorted(rows)
    assert plan.n_units == len(rows)
    assert plan.plan_hash == ef.Plan.from_frame(frame.reverse()).plan_hash
    for name in plan.candidates:
        restricted = plan.for_candidate(name).units
        assert restricted is not None and restricted.rows() == sorted(r for r in rows if r[0] == name)


def test_trials_that_are_not_whole_numbers_refuse_the_plan() -> None:
    rows = pl.DataFrame({"candidate": ["A", "A", "A"], "case_id": ["c1", "c2", "c3"], "trial": [1.5, 1.0, 2.0**33]})
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_frame(rows)
    assert info.value.problems.select("kind", "case_id", "detail").rows() == [
        ("invalid_trials", "c1", "trial 1.5 is not a whole number in 0..2147483647"),
        ("invalid_trials", "c3", "trial 8589934592.0 is not a whole number in 0..2147483647"),
    ]


def test_a_bad_candidate_name_in_a_units_table_is_named_as_a_candidate() -> None:
    rows = pl.DataFrame({"candidate": ["A", None, " B"], "case_id": ["c1", "c1", "c1"], "trial": [1, 1, 1]})
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_frame(rows, source="units.csv")
    problems = info.value.problems.select("kind", "candidate", "source", "line", "detail")
    assert problems.rows() == [
        ("empty_value", None, "units.csv", 2, "candidate = null fails check not_nullable"),
        ("padded_identifier", " B", "units.csv", 3, "candidate =  B fails check padded_identifier"),
    ]
    with pytest.raises(ef.PlanError, match="invalid_trials"):
        ef.Plan.from_frame(pl.DataFrame({"candidate": ["A"], "case_id": ["c1"], "trial": [True]}))


def string_join_codes(ids: list[str], probe: list[str | None]) -> list[int | None]:
    """What a join on the strings gives: the position of each probe id among ``ids``, or None."""
    where = {case_id: row for row, case_id in enumerate(ids)}
    return [where.get(p) if p is not None else None for p in probe]


ids_strategy = st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=30, unique=True).map(sorted)


@settings(max_examples=80, deadline=None)
@given(ids_strategy, st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=40))
def test_case_codes_are_the_rows_of_the_ids_matched_exactly(ids: list[str], probe: list[str | None]) -> None:
    probe = [*probe, *ids[::2]]
    codes = case_codes(id_codes(pl.Series(ids)), pl.Series(probe, dtype=pl.String))
    assert codes.dtype == pl.UInt32
    assert codes.to_list() == string_join_codes(ids, probe)


@pytest.mark.parametrize("high_trial", [3, 5_000_000])  # compact plan (membership mask) and sparse plan (anti-join)
def test_rows_of_units_the_plan_does_not_list_are_unknown_units(high_trial: int) -> None:
    plan = ef.Plan.from_frame(units_table([("A", "c1", 1, "x"), ("A", "c1", high_trial, "x"), ("A", "c2", 2, "y")]))
    rows = pl.DataFrame(
        {
            "candidate": ["A"] * 4,
            "case_id": ["c1", "c1", "c2", "c2"],
            "trial": [1, 2, 2, high_trial],
            "passed": [1, 1, 0, 1],
        }
    )
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, rows)
    unknown = refused.value.problems.filter(pl.col("kind") == "unknown_unit")
    assert unknown.select("case_id", "trial", "line").rows() == [("c1", 2, 2), ("c2", high_trial, 4)]


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("outcome", [7, 8]),
        ("attempts", [1, 2]),
        ("score", [0.5, 1.0]),
        ("passed", [1, 0]),
        ("_case", [0, 1]),
        ("trial", [1, 2]),
        ("steps", [[1], [2, 3]]),
        ("meta", [b"x", b"y"]),
        # The units table's name for the ledger's dataset_version beside the plan's (an audit crashed on it).
        ("dataset_version_right", ["v1", "v2"]),
    ],
)
def test_a_plan_column_named_like_a_unit_column_or_of_a_nested_type_refuses_the_plan(
    name: str, values: list[object]
) -> None:
    cases = pl.DataFrame({"case_id": ["a", "b"], name: values})
    with pytest.raises(ef.PlanError) as refused:
        ef.Plan.from_frame(cases, candidates=["A"])
    problems = refused.value.problems
    assert problems.select("kind", "refusing").rows() == [("unexpected_column", True)]
    assert f"plan column {name!r}" in problems.item(0, "detail")


def test_all_null_plan_columns_keep_their_types_in_the_units_table_in_both_modes() -> None:
    # polars gives gathers from two all-null literals of different types one type unless they are typed nulls.
    schema = {"case_id": pl.String, "case_hash": pl.String, "flag": pl.Boolean, "weight": pl.Float32}
    cases = pl.DataFrame({"case_id": ["c1", "c2"], "case_hash": None, "flag": None, "weight": None}, schema=schema)
    plan = ef.Plan.from_frame(cases, candidates=["A"])
    rows = pl.DataFrame({"candidate": ["A"], "case_id": ["c1"], "passed": [1]})
    whole = ef.audit(plan, rows).units
    parts = ef.audit(plan, rows, partition_by="candidate").units.collect()
    for units in (whole, parts):
        assert {c: units.schema[c] for c in schema} == schema
        assert units.select("case_id", "flag", "outcome").rows() == [("c1", None, "passed"), ("c2", None, "missing")]


def test_candidates_listing_the_same_rows_share_codes_and_problems_are_still_each_candidates() -> None:
    # A and B list identical rows (B reuses A's codes); C differs from B only in one case column.
    same = [("c2", 1, "x"), ("c1", 1, "y"), ("c1", 2, "y")]
    rows = units_table([(cand, *row) for cand in ("A", "B") for row in same] + [("C", *same[0]), ("C", "c1", 1, "z")])
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_frame(rows)
    assert info.value.problems.select("kind", "case_id", "line").rows() == [
        ("duplicate_case", "c1", 2),
        ("duplicate_case", "c1", 8),
    ]
    plan = ef.Plan.from_frame(units_table([(cand, *row) for cand in ("B", "A") for row in same]))
    assert plan.units is not None
    assert plan.units.rows() == [(c, case, t) for c in ("A", "B") for case, t in (("c1", 1), ("c1", 2), ("c2", 1))]


def test_a_unit_repeated_by_two_candidates_listing_the_same_rows_is_named_for_each() -> None:
    same = [("c1", 1, "x"), ("c2", 1, "x"), ("c1", 1, "x")]
    with pytest.raises(ef.PlanError) as info:
        ef.Plan.from_frame(units_table([(cand, *row) for cand in ("A", "B") for row in same]))
    assert info.value.problems.select("candidate", "case_id", "line").rows() == [
        ("A", "c1", 1),
        ("A", "c1", 3),
        ("B", "c1", 4),
        ("B", "c1", 6),
    ]
