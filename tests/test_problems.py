"""Problems at scale (SPEC §3): counts per kind, the first rows of each kind in memory, the rest on disk."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe.cli import main
from evalframe.errors import ReportClosed
from evalframe.problems import PROBLEM_ROWS_KEPT, Problems, problems_frame, sort_problems

CASES = [f"c{i:04d}" for i in range(2000)]


def test_the_bound_is_a_thousand_rows_per_kind() -> None:
    assert PROBLEM_ROWS_KEPT == 1000


def test_2000_missing_units_are_counted_in_the_summary_not_listed_as_problems() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES}), candidates=["A", "B"])
    ledger = pl.DataFrame({"candidate": ["B"] * 2000, "case_id": CASES, "passed": [1] * 2000})
    report = ef.audit(plan, ledger)
    summary = report.summary.select("candidate", "planned", "missing", "missing_cases").rows()
    assert summary == [("A", 2000, 2000, 2000), ("B", 2000, 0, 0)]
    assert report.units.filter(pl.col("outcome") == "missing").height == 2000
    first = ", ".join(CASES[:20])
    assert report.problems.select("kind", "candidate", "case_id", "trial", "detail", "refusing").rows() == [
        ("missing_unit", "A", None, None, f"2000 planned units have no row, in 2000 cases: {first}, …", False)
    ]


def test_missing_refuse_refuses_with_one_problem_per_candidate_naming_the_count() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES}), candidates=["A", "B"], trials=2)
    ledger = pl.DataFrame({"candidate": ["A"], "case_id": ["c0001"], "trial": [2], "passed": [1]})
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, ledger, missing="refuse")
    refused = info.value
    assert str(refused) == "batch refused: 2 refusing problem(s): missing_unit ×2"
    assert refused.problem_counts.rows() == [("missing_unit", True, 2)]
    details = refused.problems.select("candidate", "detail").rows()
    first_a = ", ".join(CASES[:20])  # c0001 still misses its trial 1
    first_b = ", ".join(CASES[:20])
    assert details == [
        ("A", f"3999 planned units have no row, in 2000 cases: {first_a}, …"),
        ("B", f"4000 planned units have no row, in 2000 cases: {first_b}, …"),
    ]


def test_a_header_only_ledger_gives_one_problem_per_candidate() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A", "B", "C"])
    header_only = pl.DataFrame(schema={"candidate": pl.String, "case_id": pl.String, "passed": pl.Int64})
    report = ef.audit(plan, header_only)
    assert report.summary.get_column("missing").to_list() == [2, 2, 2]
    assert report.problems.select("candidate", "detail").rows() == [
        (name, "2 planned units have no row, in 2 cases: quote, refund") for name in "ABC"
    ]


def duplicated_ledger() -> pl.DataFrame:
    """2000 cases of candidate A each twice, plus 600 rows of an unknown case: 4000 duplicate-key rows."""
    rows = pl.DataFrame({"candidate": "A", "case_id": CASES, "passed": 1})
    unknown = pl.DataFrame({"candidate": "A", "case_id": [f"zz{i:03d}" for i in range(600)], "passed": 1})
    return pl.concat([rows, rows, unknown]).sample(fraction=1.0, shuffle=True, seed=7)


@pytest.mark.parametrize("partition", [None, "candidate"])
def test_a_refusal_keeps_the_counts_and_the_first_thousand_rows_of_each_kind(partition: str | None) -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES}), candidates=["A"])
    ledger = duplicated_ledger()
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, ledger, partition_by=partition)  # type: ignore[arg-type]
    refused = info.value
    assert refused.problem_counts.rows() == [("duplicate_key", True, 4000), ("unknown_case", True, 600)]
    assert str(refused) == "batch refused: 4600 refusing problem(s): duplicate_key ×4000, unknown_case ×600"
    kinds = dict(refused.problems.group_by("kind").len().iter_rows())
    assert kinds == {"duplicate_key": 1000, "unknown_case": 600}
    # The first rows in key order: c0000..c0499, each twice (lines in order), whatever the row order.
    first = refused.problems.filter(pl.col("kind") == "duplicate_key")
    assert first.get_column("case_id").to_list() == [c for c in CASES[:500] for _ in range(2)]
    assert first.get_column("detail").unique().to_list() == ["key appears 2 times"]
    every = refused.all_problems().collect()
    assert every.height == 4600
    assert every.equals(sort_problems(every))
    assert every.filter(pl.col("kind") == "duplicate_key").get_column("case_id").n_unique() == 2000
    assert_frame_equal(every.head(1000), first)


def test_the_refusal_in_out_holds_every_problem_and_the_counts(tmp_path: Path) -> None:
    plan_csv, results_csv = tmp_path / "plan.csv", tmp_path / "results.csv"
    pl.DataFrame({"case_id": CASES}).write_csv(plan_csv)
    ledger = duplicated_ledger()
    ledger.write_csv(results_csv)
    out = tmp_path / "out"
    args = ["audit", "--plan", str(plan_csv), "--results", str(results_csv), "--candidates", "A"]
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--format", "json"])
    assert result.exit_code == 1
    stdout = json.loads(result.stdout)
    assert (stdout["refused"], stdout["refusing_problems"]) == (True, 4600)
    assert stdout["refusing_problems_by_kind"] == {"duplicate_key": 4000, "unknown_case": 600}
    assert [(k["kind"], k["count"]) for k in stdout["refusing_kinds"]] == [
        ("duplicate_key", 4000),
        ("unknown_case", 600),
    ]
    assert "batch refused: 4600 refusing problem(s)" in result.stderr
    assert "refusing problems (first 40 of 4600)" in result.stderr  # 20 of each kind
    written = pl.read_parquet(out / "problems.parquet")
    assert written.height == 4600
    assert written.equals(sort_problems(written))
    lines = ledger.with_row_index("line", offset=2).filter(pl.col("case_id").str.starts_with("c"))
    flagged = written.filter(pl.col("kind") == "duplicate_key").get_column("line").sort()
    assert flagged.to_list() == lines.get_column("line").cast(pl.Int64).sort().to_list()
    doc = json.loads((out / "report.json").read_text())
    assert doc["refusing_problems"] == 4600
    assert doc["refusing_problems_by_kind"] == {"duplicate_key": 4000, "unknown_case": 600}
    assert len(doc["first_refusing_problems"]) == 40


def test_gathered_parts_keep_the_first_rows_across_parts_and_every_row_on_disk() -> None:
    part_one = problems_frame([{"kind": "duplicate_key", "line": n} for n in (9, 3, 7)])
    part_two = problems_frame([{"kind": "duplicate_key", "line": n} for n in (4, 1)])
    flags = problems_frame([{"kind": "attempt_gap", "line": 5, "refusing": False}])
    found = Problems.gather([part_one, part_two.lazy(), flags], kept=2)
    assert found.shown.select("kind", "line").rows() == [("attempt_gap", 5), ("duplicate_key", 1), ("duplicate_key", 3)]
    assert found.counts.rows() == [("attempt_gap", False, 1), ("duplicate_key", True, 5)]
    assert (found.refusing, found.total, found.complete) == (5, 6, False)
    assert found.every().collect().get_column("line").to_list() == [5, 1, 3, 4, 7, 9]
    dropped = found.without(["duplicate_key"])
    assert dropped.every().collect().select("kind", "line").rows() == [("attempt_gap", 5)]
    assert (dropped.refusing, dropped.complete) == (0, True)
    # Re-gathered, the dropped kind's rows do not come back from the files.
    again = Problems.gather([dropped, problems_frame([{"kind": "duplicate_key", "line": 8}])], kept=2)
    assert again.every().collect().select("kind", "line").rows() == [("attempt_gap", 5), ("duplicate_key", 8)]


def test_a_small_table_stays_in_memory() -> None:
    rows = problems_frame([{"kind": "unknown_case", "case_id": c} for c in ("b", "a")])
    found = Problems.gather([rows])
    assert not found.spilled and found.complete
    assert found.shown.get_column("case_id").to_list() == ["a", "b"]


def test_every_problem_is_read_back_sorted_group_by_group_from_every_file() -> None:
    rows = [
        {"kind": kind, "source": source, "candidate": name, "case_id": case, "line": line}
        for kind in ("unknown_case", "duplicate_key")
        for source in ("b.csv", None, "a.csv")
        for name in ("B", None, "A")
        for case, line in (("q2", 5), ("q1", 9), (None, 1))
    ]
    half = len(rows) // 2
    found = Problems.gather([problems_frame(rows[:half]), problems_frame(rows[half:]).lazy()], kept=1)
    assert len(found.spilled) == 2 and not found.complete
    every = found.every().collect()
    assert every.height == len(rows) == 54
    assert_frame_equal(every, sort_problems(problems_frame(rows)))


# --- a report that is not refused: its flags are bounded too (SPEC §3 "Problems at scale") ---------------


def gapped_ledger(cases: list[str]) -> pl.DataFrame:
    """Candidate A's only attempt of each case is attempt 2: one ``attempt_gap`` flag per case."""
    return pl.DataFrame({"candidate": "A", "case_id": cases, "attempt": 2, "passed": 1}).sample(
        fraction=1.0, shuffle=True, seed=3
    )


@pytest.mark.parametrize("partition", [None, "candidate"])
def test_a_report_keeps_the_counts_and_the_first_thousand_flags_of_each_kind(
    partition: str | None, tmp_path: Path
) -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES}), candidates=["A"])
    report = ef.audit(plan, gapped_ledger(CASES[:1500]), partition_by=partition)  # type: ignore[arg-type]
    assert type(report.problems) is pl.DataFrame
    assert report.problem_counts.rows() == [("attempt_gap", False, 1500), ("missing_unit", False, 1)]
    assert dict(report.problems.group_by("kind").len().iter_rows()) == {"attempt_gap": 1000, "missing_unit": 1}
    gaps = report.problems.filter(pl.col("kind") == "attempt_gap")
    assert gaps.get_column("case_id").to_list() == CASES[:1000]
    assert report.to_dict()["problems_by_kind"] == {"attempt_gap": 1500, "missing_unit": 1}
    assert [(n.kind, n.count) for n in report.view().notes] == [("attempt_gap", 1500), ("missing_unit", 1)]
    every = report.all_problems().collect()
    assert every.height == 1501
    assert every.equals(sort_problems(every))
    assert every.filter(pl.col("kind") == "attempt_gap").get_column("case_id").to_list() == CASES[:1500]
    report.write(tmp_path / "out")
    assert_frame_equal(pl.read_parquet(tmp_path / "out" / "problems.parquet"), every)
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["problems_by_kind"] == {"attempt_gap": 1500, "missing_unit": 1}


def test_a_report_with_few_problems_holds_them_all() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES[:3]}), candidates=["A"])
    report = ef.audit(plan, gapped_ledger(CASES[:2]))
    assert report.found is not None and report.found.complete and not report.found.spilled
    assert report.problems.select("kind", "case_id").rows() == [
        ("attempt_gap", "c0000"),
        ("attempt_gap", "c0001"),
        ("missing_unit", None),
    ]
    assert_frame_equal(report.all_problems().collect(), report.problems)


def test_spilled_rows_stay_readable_after_the_tables_are_gone_until_close() -> None:
    found = Problems.gather([problems_frame([{"kind": "duplicate_key", "line": n} for n in range(5)])], kept=2)
    dropped = found.without(["unknown_case"])
    every = dropped.every()
    stores = dropped.stores
    assert len(stores) == 2  # the spilled rows (shared with found), and the sorted files of dropped.every()
    del found, dropped
    gc.collect()  # the garbage collector never removes a store
    assert every.collect().get_column("line").to_list() == [0, 1, 2, 3, 4]
    for store in stores:
        store.close()
    assert [store.folder.exists() for store in stores] == [False, False]


def test_problems_taken_from_a_report_stay_readable_after_it_is_gone_until_close() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES}), candidates=["A"])
    report = ef.audit(plan, gapped_ledger(CASES[:1500]))
    assert report.found is not None and report.found.spilled and report.store is None
    problems = report.all_problems()
    stores = report.found.stores
    del report
    gc.collect()
    every = problems.collect()
    assert every.height == 1501
    assert every.filter(pl.col("kind") == "attempt_gap").get_column("case_id").to_list() == CASES[:1500]
    for store in stores:
        store.close()

    with ef.audit(plan, gapped_ledger(CASES[:1500])) as report:
        assert report.all_problems().collect().height == 1501
        assert report.found is not None
        folders = [store.folder for store in report.found.stores]
        assert len(folders) == 2 and all(folder.is_dir() for folder in folders)
    assert report.closed and [folder.exists() for folder in folders] == [False, False]
    with pytest.raises(ReportClosed) as closed:
        report.all_problems()
    assert closed.value.folder == str(folders[0])


def test_a_refusals_spilled_problems_stay_readable_after_it_is_gone_until_close() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES[:1500]}), candidates=["A"])
    ledger = pl.DataFrame({"candidate": ["A"] * 1500, "case_id": CASES[:1500], "passed": [2] * 1500})
    with pytest.raises(ef.AuditRefused) as caught:
        ef.audit(plan, ledger)
    refused = caught.value
    assert refused.problem_counts.rows() == [("invalid_grade", True, 1500)]
    assert refused.problems.height == PROBLEM_ROWS_KEPT
    problems = refused.all_problems()
    stores = refused.found.stores
    del refused, caught
    gc.collect()
    assert problems.collect().get_column("case_id").to_list() == CASES[:1500]
    with pytest.raises(ef.AuditRefused) as caught:
        ef.audit(plan, ledger)
    folders = [store.folder for store in caught.value.found.stores]
    assert len(folders) == 1 and folders[0].is_dir()
    caught.value.close()
    assert not folders[0].exists()
    for store in stores:
        store.close()
