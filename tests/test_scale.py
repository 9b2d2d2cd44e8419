"""Lakes and per-partition execution give exactly the reports of single files and whole frames."""

from __future__ import annotations

import gc
import importlib
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from tests.conftest import ROOT

GEN = ROOT.parent / "shared" / "tools" / "gen_ledger.py"
RUNNERS = importlib.import_module("evalframe.audit.runners")
RUN = importlib.import_module("evalframe.audit.run")
STEP = importlib.import_module("evalframe.audit.step")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two small seeded datasets from the shared generator: with defects, and clean."""
    if not GEN.exists():
        pytest.skip("needs ../shared/tools/gen_ledger.py, which is not laid beside the repository (CI has it)")
    out = {}
    for name, extra in (("defects", []), ("clean", ["--unknown", "0", "--dups", "0"])):
        d = tmp_path_factory.mktemp(name)
        subprocess.run(
            [sys.executable, str(GEN), str(d / "g"), "--rows", "6000", "--candidates", "3", *extra],
            check=True,
            capture_output=True,
        )
        out[name] = d / "g"
    return out


def comparable(report: ef.AuditReport) -> dict[str, pl.DataFrame]:
    # Row provenance (file, row number) legitimately differs between a lake and a single file.
    return {k: v.lazy().drop("source", "line", strict=False).collect() for k, v in report.tables().items()}


def assert_same(a: ef.AuditReport, b: ef.AuditReport) -> None:
    ta, tb = comparable(a), comparable(b)
    assert ta.keys() == tb.keys()
    for name in ta:
        assert_frame_equal(ta[name], tb[name], check_column_order=False, check_dtypes=False, check_exact=True), name


def test_lake_single_file_and_partitions_agree_on_a_clean_batch(generated: dict[str, Path]) -> None:
    d = generated["clean"]
    plan = ef.Plan.from_file(d / "plan.parquet")
    single = ef.audit(plan, d / "results.parquet", slices=["case_type"])
    lake = ef.audit(plan, d / "results_hive", slices=["case_type"])
    parts = ef.audit(plan, d / "results_hive", slices=["case_type"], partition_by="candidate")
    assert_same(single, lake)
    assert_same(single, parts)
    lake_plan = ef.audit(ef.Plan.from_file(d / "plan_hive"), d / "results_hive", slices=["case_type"])
    assert_same(single, lake_plan)
    manifest = pl.read_json(d / "manifest.json").unnest("truth")
    assert single.summary.get_column("planned").sum() == manifest.item(0, "planned_pairs")
    assert single.summary.get_column("missing").sum() == manifest.item(0, "missing_pairs")


def test_refusals_agree_and_match_the_generator_manifest(generated: dict[str, Path]) -> None:
    d = generated["defects"]
    plan = ef.Plan.from_file(d / "plan.parquet")
    found = []
    for results, partition in ((d / "results.parquet", None), (d / "results_hive", "candidate")):
        with pytest.raises(ef.AuditRefused) as info:
            ef.audit(plan, results, partition_by=partition)  # type: ignore[arg-type]
        found.append(info.value.all_problems().collect().drop("source", "line"))
    assert_frame_equal(found[0], found[1])
    problems = found[0]
    truth = pl.read_json(d / "manifest.json").unnest("truth").row(0, named=True)
    by_kind = dict(problems.group_by("kind").len().iter_rows())
    assert by_kind["unknown_case"] == truth["unknown_rows"]
    # One problem per candidate, counting its missing units (SPEC §3 "Problems at scale").
    missing = problems.filter(pl.col("kind") == "missing_unit").get_column("detail")
    assert missing.str.extract(r"^(\d+) planned").cast(pl.Int64).sum() == truth["missing_pairs"]
    dup_keys = problems.filter(pl.col("kind") == "duplicate_key").select("candidate", "case_id", "trial", "attempt")
    assert dup_keys.unique().height == truth["duplicate_rows"]


def test_partitioned_refusal_with_an_unplanned_candidate() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    ledger = pl.DataFrame({"candidate": ["A", "Z", "A"], "case_id": ["q1", "q1", "q2"], "passed": [1, 0, 1]})
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, ledger, partition_by="candidate")
    refusing = info.value.problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "candidate").rows() == [("unknown_candidate", "Z")]


@pytest.fixture(autouse=True)
def private_temp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's report folders go to a folder of its own, so other evalframe processes cannot disturb the counts."""
    folder = str(tmp_path_factory.mktemp("temp"))
    monkeypatch.setattr(tempfile, "tempdir", folder)
    monkeypatch.setenv("TMPDIR", folder)  # for the child processes


def report_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("evalframe-report-*"))


def test_a_partitioned_report_writes_the_same_files_and_its_folder_stays_until_closed(
    generated: dict[str, Path], tmp_path: Path
) -> None:
    d = generated["clean"]
    plan = ef.Plan.from_file(d / "plan_hive")
    before = report_folders()
    whole = ef.audit(plan, d / "results.parquet", slices=["case_type"])
    parts = ef.audit(plan, d / "results_hive", slices=["case_type"], partition_by="candidate")
    assert isinstance(parts.units, pl.LazyFrame) and isinstance(whole.units, pl.DataFrame)
    assert len(report_folders() - before) == 1
    whole.write(tmp_path / "whole")
    parts.write(tmp_path / "parts")
    for name in ("summary", "units", "attempts", "problems", "slices", "missingness"):
        a = pl.read_parquet(tmp_path / "whole" / f"{name}.parquet").drop("source", "line", strict=False)
        b = pl.read_parquet(tmp_path / "parts" / f"{name}.parquet").drop("source", "line", strict=False)
        assert_frame_equal(a, b, check_dtypes=False, check_exact=True), name
    units = parts.units
    assert units.select(pl.len()).collect().item() == plan.n_units == whole.summary.get_column("planned").sum()
    store = parts.store
    del parts
    gc.collect()
    # The folder is the report's until closed, not the garbage collector's: a table taken from it stays readable.
    assert units.select(pl.len()).collect().item() == plan.n_units
    assert store is not None
    store.close()
    assert report_folders() == before


def test_written_tables_are_removed_when_the_process_exits(generated: dict[str, Path]) -> None:
    d = generated["clean"]
    script = (
        "import evalframe as ef; "
        f"r = ef.audit(ef.Plan.from_file({str(d / 'plan.parquet')!r}), {str(d / 'results_hive')!r}, "
        "partition_by='candidate'); print(r.units.select('candidate').collect().height)"
    )
    before = report_folders()
    done = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    assert int(done.stdout) > 0
    assert report_folders() == before


def test_a_partitioned_refusal_leaves_no_written_files(generated: dict[str, Path]) -> None:
    d = generated["defects"]
    before = report_folders()
    with pytest.raises(ef.AuditRefused):
        ef.audit(ef.Plan.from_file(d / "plan.parquet"), d / "results_hive", partition_by="candidate")
    assert report_folders() == before


def test_a_failed_table_write_fails_the_audit_and_leaves_no_files(
    monkeypatch: pytest.MonkeyPatch, generated: dict[str, Path]
) -> None:
    d = generated["clean"]
    plan = ef.Plan.from_file(d / "plan.parquet")
    before = report_folders()

    def full_disk(self: pl.DataFrame, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full_disk)
    with pytest.raises(OSError, match="No space left"):
        ef.audit(plan, d / "results_hive", partition_by="candidate")
    assert report_folders() == before


def refused_alike(plan: ef.Plan, results: Any, **options: Any) -> pl.DataFrame:
    """The problems of a refused audit, which must be the same whole batch and ``partition_by="candidate"``."""
    found = []
    for partition in (None, "candidate"):
        with pytest.raises(ef.AuditRefused) as info:
            ef.audit(plan, results, partition_by=partition, **options)  # type: ignore[arg-type]
        found.append(info.value.problems)
    assert_frame_equal(found[0], found[1])
    return found[0]


def test_unplanned_and_null_candidates_and_retry_flags_refuse_alike_in_both_modes() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3"]}), candidates=["A", "B"])
    ledger = pl.DataFrame(
        {
            "candidate": ["A", "Z", None, "B", "B"],
            "case_id": ["q1", "q1", "q2", "q2", "q2"],
            "attempt": [1, 1, 1, 1, 3],
            "passed": [1, 0, 1, 1, 1],
        }
    )
    problems = refused_alike(plan, ledger, retry="last_allowed", max_attempts=2)
    # Z's row is unknown, not a reason to call A's and B's units missing again; no attempt was selected.
    assert problems.select("kind", "candidate", "case_id", "detail").rows() == [
        ("empty_value", None, "q2", "candidate = null fails check not_nullable"),
        ("missing_unit", "A", None, "2 planned units have no row, in 2 cases: q2, q3"),
        ("missing_unit", "B", None, "2 planned units have no row, in 2 cases: q1, q3"),
        ("unknown_candidate", None, "q2", "candidate null is not planned"),
        ("unknown_candidate", "Z", "q1", "candidate Z is not planned"),
    ]


def test_a_candidate_after_one_that_refuses_adds_nothing() -> None:
    # A refuses (unknown case). B has a retry flag, but once A refused B is only checked: the
    # whole-batch problems.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B", "C"])
    ledger = pl.DataFrame(
        {
            "candidate": ["A", "A", "B", "B", "B", "C", "C"],
            "case_id": ["q1", "zz", "q1", "q2", "q2", "q1", "q2"],
            "attempt": [1, 1, 1, 1, 4, 1, 1],
            "passed": [1, 0, 1, 1, 1, 0, 1],
        }
    )
    problems = refused_alike(plan, ledger, retry="last_allowed", max_attempts=2)
    assert problems.select("kind", "candidate", "case_id").rows() == [
        ("missing_unit", "A", None),
        ("unknown_case", "A", "zz"),
    ]


def test_a_write_failure_after_a_refusal_still_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    # B's tables would fail to be written (a full disk), but A refuses first: B's tables are never computed.

    def full_disk(self: pl.DataFrame, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full_disk)
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
    ledger = pl.DataFrame({"candidate": ["A", "A", "B", "B"], "case_id": ["q1", "zz", "q1", "q2"], "passed": [1] * 4})
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, ledger, partition_by="candidate")
    assert info.value.problems.select("kind", "candidate", "case_id").rows() == [
        ("missing_unit", "A", None),
        ("unknown_case", "A", "zz"),
    ]


def test_an_error_of_work_after_a_refusal_still_refuses() -> None:
    # B's scores overflow the summary's sums (an error of its own), but A refuses first: B is only checked.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
    ledger = pl.DataFrame(
        {
            "candidate": ["A", "A", "B", "B"],
            "case_id": ["q1", "zz", "q1", "q2"],
            "exec_status": ["completed"] * 4,
            "score_status": ["scored"] * 4,
            "score": [1.0, 1.0, 1e308, 1e308],
        }
    )
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, ledger, grade="numeric", score_range=(0, 1e308), partition_by="candidate")
    assert info.value.problems.select("kind", "case_id").rows() == [("missing_unit", None), ("unknown_case", "zz")]


def test_a_file_level_problem_is_reported_once_in_both_modes() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"]}), candidates=["A", "B"])
    ledger = pl.DataFrame({"candidate": ["A", "B"], "case_id": ["q1", "q1"], "passed": [1, 0], "note": ["x", "y"]})
    for partition in (None, "candidate"):
        with pytest.raises(ef.AuditRefused) as info:
            ef.audit(plan, ledger, partition_by=partition)  # type: ignore[arg-type]
        assert info.value.problems.select("kind", "detail").rows() == [
            ("unexpected_column", "column 'note' is not a ledger column (declare it as an extra column to carry it)")
        ]


def test_a_problem_of_the_input_names_the_input_in_both_modes(tmp_path: Path) -> None:
    # Each part finds an unexpected column: a lake's part names its own file, a plan candidate without rows
    # names none. The batch names the input once, as the whole-batch audit does.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"]}), candidates=["A", "B", "C"])
    rows = pl.DataFrame({"candidate": ["A", "B"], "case_id": ["q1", "q1"], "passed": [1, 0], "note": ["x", "y"]})
    rows.write_csv(tmp_path / "r.csv")
    rows.write_parquet(tmp_path / "r.parquet")
    for name in ("A", "B"):
        (tmp_path / "lake" / f"candidate={name}").mkdir(parents=True)
        rows.filter(pl.col("candidate") == name).drop("candidate").write_parquet(
            tmp_path / "lake" / f"candidate={name}" / "p.parquet"
        )
    for results, line in ((tmp_path / "r.csv", 1), (tmp_path / "r.parquet", None), (tmp_path / "lake", None)):
        assert refused_alike(plan, results).filter(pl.col("refusing")).select("kind", "source", "line").rows() == [
            ("unexpected_column", str(results), line)
        ]


def test_hive_folders_are_text_and_only_those_inside_the_lake(tmp_path: Path) -> None:
    lake = tmp_path / "exp=3" / "lake"
    for name, case in (("007", "q1"), ("010", "q2")):
        (lake / f"candidate={name}").mkdir(parents=True)
        pl.DataFrame({"case_id": [case], "passed": [1]}).write_parquet(lake / f"candidate={name}" / "p.parquet")
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["007", "010"])
    for results in (lake, f"{lake}/*/*.parquet"):
        report = ef.audit(plan, results, partition_by="candidate")
        assert report.summary.select("candidate", "planned", "passed").rows() == [("007", 2, 1), ("010", 2, 1)]
    single = ef.load(lake / "candidate=007" / "p.parquet").frame.collect_schema().names()
    assert single == ["case_id", "passed", "source", "line"]


def test_candidates_are_read_from_folders_or_from_the_column(tmp_path: Path) -> None:
    rows = pl.DataFrame({"candidate": ["A"] * 3 + ["B"] * 5, "case_id": [f"q{i}" for i in range(8)], "passed": [1] * 8})
    for name, part in rows.group_by("candidate"):
        (tmp_path / "lake" / f"candidate={name[0]}").mkdir(parents=True)
        part.drop("candidate").write_parquet(tmp_path / "lake" / f"candidate={name[0]}" / "p.parquet")
    rows.write_parquet(tmp_path / "single.parquet")
    lake, single = ef.load(tmp_path / "lake"), ef.load(tmp_path / "single.parquet")
    assert lake.partitions == ("candidate",) and single.partitions == ()
    for loaded in (lake, single):
        assert sorted(RUNNERS.candidate_names(loaded.frame, loaded.source)) == ["A", "B"]


def test_a_row_whose_candidate_differs_from_its_hive_folder_refuses_in_both_modes(tmp_path: Path) -> None:
    # The reader would give every row its folder's candidate: row 2 of A's file, B's row, would count for A.
    lake = tmp_path / "lake"
    for name, stored in (("A", ["A", "B", None]), ("B", ["B", "B", "B"])):
        (lake / f"candidate={name}").mkdir(parents=True)
        rows = pl.DataFrame({"candidate": stored, "case_id": ["q1", "q2", "q3"], "passed": [1, 0, 1]})
        rows.write_parquet(lake / f"candidate={name}" / "p.parquet")
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3"]}), candidates=["A", "B"])
    for partition_by in (None, "candidate"):
        with pytest.raises(ef.AuditRefused) as refused:
            ef.audit(plan, lake, partition_by=partition_by)
        found = refused.value.problems.filter(pl.col("kind") == "partition_mismatch")
        assert found.select("source", "line", "detail", "refusing").rows() == [
            (
                str(lake / "candidate=A" / "p.parquet"),
                2,
                "candidate 'B' in the file differs from its folder candidate=A",
                True,
            ),
            (
                str(lake / "candidate=A" / "p.parquet"),
                3,
                "candidate null in the file differs from its folder candidate=A",
                True,
            ),
        ]


def test_lake_files_with_different_schemas_are_an_input_error(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    (lake / "candidate=A").mkdir(parents=True)
    (lake / "candidate=B").mkdir(parents=True)
    pl.DataFrame({"case_id": ["q1"], "passed": [1]}).write_parquet(lake / "candidate=A" / "p.parquet")
    pl.DataFrame({"case_id": ["q1"], "passed": [1], "note": ["x"]}).write_parquet(lake / "candidate=B" / "p.parquet")
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"]}), candidates=["A", "B"])
    for partition in (None, "candidate"):
        with pytest.raises(ef.InputFormatError, match="files of one input need one schema") as info:
            ef.audit(plan, lake, partition_by=partition)  # type: ignore[arg-type]
        assert info.value.path == str(lake / "candidate=B" / "p.parquet")  # the file that differs, read first


def test_a_plan_lake_chunk_that_cannot_be_read_is_an_input_error(tmp_path: Path) -> None:
    # The third candidate's file disagrees with the others' schema: its footer says so before any row is read.
    lake = tmp_path / "plan"
    for name, extra in (("A", {}), ("B", {}), ("C", {"note": ["x"]})):
        (lake / f"candidate={name}").mkdir(parents=True)
        pl.DataFrame({"case_id": ["q1"], **extra}).write_parquet(lake / f"candidate={name}" / "p.parquet")
    with pytest.raises(ef.InputFormatError, match="files of one input need one schema") as info:
        ef.Plan.from_file(lake)
    assert info.value.path == str(lake / "candidate=C" / "p.parquet")
    (lake / "candidate=C" / "p.parquet").unlink()
    pl.DataFrame({"case_id": ["q1"]}).write_parquet(lake / "candidate=C" / "p.parquet")
    plan = ef.Plan.from_file(lake)
    assert plan.candidates == ("A", "B", "C") and plan.n_units == 3


def test_layout_folders_that_are_not_ledger_columns_are_left_out(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    for name, day in (("A", "2024-01-01"), ("B", "2024-01-02")):
        folder = lake / f"candidate={name}" / f"date={day}"
        folder.mkdir(parents=True)
        pl.DataFrame({"case_id": ["q1"], "passed": [1]}).write_parquet(folder / "part.parquet")
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
    report = ef.audit(plan, lake, partition_by="auto")
    assert report.summary.select("candidate", "planned", "passed", "missing").rows() == [
        ("A", 2, 1, 1),
        ("B", 2, 1, 1),
    ]
    assert report.meta["partition_folders_ignored"] == ["date"]
    assert report.meta["partition_by"] is None  # auto: 2 rows are far below AUTO_PARTITION_ROWS
    assert isinstance(report.units, pl.DataFrame)


def test_auto_partitions_a_large_ledger(monkeypatch: pytest.MonkeyPatch, generated: dict[str, Path]) -> None:
    d = generated["clean"]
    monkeypatch.setattr(RUN, "AUTO_PARTITION_ROWS", 1000)
    report = ef.audit(ef.Plan.from_file(d / "plan.parquet"), d / "results_hive", partition_by="auto")
    assert report.meta["partition_by"] == "candidate" and isinstance(report.units, pl.LazyFrame)


@pytest.mark.parametrize(("cases", "chosen"), [(499, None), (500, "candidate")])
def test_auto_partitions_a_large_plan_even_with_a_small_ledger(
    monkeypatch: pytest.MonkeyPatch, cases: int, chosen: str | None
) -> None:
    # The whole batch's work grows with the plan too: 2 candidates x 500 cases reach the limit of 1000.
    monkeypatch.setattr(RUN, "AUTO_PARTITION_ROWS", 1000)
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": [f"q{i}" for i in range(cases)]}), candidates=["A", "B"])
    ledger = pl.DataFrame({"candidate": ["A", "B"], "case_id": ["q0", "q1"], "passed": [1, 0]})
    report = ef.audit(plan, ledger, partition_by="auto")
    assert report.meta["partition_by"] == chosen
    assert report.summary.select("candidate", "planned", "scored", "passed").rows() == [
        ("A", cases, 1, 1),
        ("B", cases, 1, 0),
    ]


def test_partitioned_tables_equal_the_whole_batch_tables_column_for_column() -> None:
    # A part's tables hold case codes for the plan's text and note its one candidate; the scan gives them back.
    cases = pl.DataFrame(
        {
            "case_id": ["q1", "q2", "q3"],
            "dataset_version": ["v1", "v1", "v2"],
            "topic": ["tax", None, "tax"],
            "input_length": [10, 20, 30],
        }
    )
    plan = ef.Plan.from_frame(cases, candidates=["B", "A"], trials=2)
    rows = pl.DataFrame(
        {
            "candidate": ["A", "A", "A", "B", "B", "B", "B"],
            "case_id": ["q1", "q2", "q3", "q3", "q1", "q1", "q2"],
            "trial": [1, 1, 2, 1, 2, 2, 1],
            "attempt": [1, 1, 1, 1, 1, 2, 1],
            "exec_status": ["completed", "error", "completed", "completed", "timeout", "completed", "completed"],
            "score": [1, None, 0, 1, None, 1, 0],
            # All null in B's rows only: B's files leave it out, the scan gives it back as typed nulls.
            "dataset_version": ["v1", "v1", "v2", None, None, None, None],
        }
    )
    whole = ef.audit(plan, rows, retry="last_allowed")
    parts = ef.audit(plan, rows, retry="last_allowed", partition_by="candidate")
    assert isinstance(parts.units, pl.LazyFrame) and isinstance(parts.attempts, pl.LazyFrame)
    assert whole.units.height == 12 and whole.attempts.height == 7
    assert_frame_equal(parts.units.collect(), whole.units, check_exact=True)
    assert_frame_equal(parts.attempts.collect(), whole.attempts, check_exact=True)
    assert parts.units.select("candidate", "case_id", "topic").collect().row(4) == ("A", "q3", "tax")
    assert parts.attempts.select("dataset_version").collect().to_series().to_list() == ["v1", "v1", "v2"] + [None] * 4


@pytest.mark.parametrize("partition_by", [None, "candidate"])
@pytest.mark.parametrize("retry", ["first", "every"])
def test_all_null_payload_columns_left_out_while_counting_come_back_in_place(
    monkeypatch: pytest.MonkeyPatch, partition_by: str | None, retry: str
) -> None:
    cases = pl.DataFrame({"case_id": ["q1", "q2"], "dataset_version": ["v1", "v1"], "topic": ["a", "b"]})
    plan = ef.Plan.from_frame(cases, candidates=["A", "B"])
    rows = pl.DataFrame(
        {
            "candidate": ["A", "A", "A", "B"],
            "case_id": ["q1", "q1", "q2", "q2"],
            "attempt": [1, 2, 1, 1],
            "exec_status": ["timeout", "completed", "completed", "completed"],
            "score": [None, 1, 0, 1],
            "run_id": [None, None, None, None],
            "answer": [None, None, None, None],
            "dataset_version": [None, "v1", None, None],
        },
        schema_overrides={"run_id": pl.String, "answer": pl.String},
    )
    fast = ef.audit(plan, rows, retry=retry, partition_by=partition_by)
    monkeypatch.setattr(STEP, "PAYLOAD", ())  # nothing left out: the reference
    reference = ef.audit(plan, rows, retry=retry, partition_by=partition_by)
    for name in ("units", "attempts"):
        got, expected = getattr(fast, name).lazy().collect(), getattr(reference, name).lazy().collect()
        assert got.columns == expected.columns
        assert_frame_equal(got, expected, check_exact=True)
    assert fast.units.lazy().collect().height == (5 if retry == "every" else 4)


@pytest.mark.parametrize("partition", [None, "candidate"])
def test_an_audit_warns_of_nothing(partition: str | None) -> None:
    # polars reports some deprecations from its engine, where no Python frame can raise them: recorded here.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
    ledger = pl.DataFrame({"candidate": ["A", "B"], "case_id": ["q1", "q2"], "passed": [1, 0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = ef.audit(plan, ledger, partition_by=partition)  # type: ignore[arg-type]
        assert report.summary.get_column("missing").to_list() == [1, 1]
    assert [str(w.message).splitlines()[0] for w in caught] == []


def test_refused_problems_of_parts_in_candidate_order_equal_the_whole_batch_sort() -> None:
    # Parts are audited in candidate order; their sorted problems are merged by a stable sort on kind and
    # source only, which must give the whole batch's full sort (names ordered by code point = UTF-8 bytes).
    names = ["中", "Z", "é", "a b", "A"]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3"]}), candidates=names[:4], trials=2)
    rows = [
        (name, case, trial, attempt)
        for name in names
        for case in ("q1", "q2", "q9")
        for trial in (1, 2, 3)
        for attempt in ((1, 1) if case == "q2" and trial == 2 else (1,))
        if not (case == "q1" and trial == 1 and name == "é")
    ]
    ledger = pl.DataFrame(rows, schema=["candidate", "case_id", "trial", "attempt"], orient="row", strict=False)
    ledger = ledger.with_columns(pl.lit(1).alias("passed")).sample(fraction=1.0, shuffle=True, seed=3)
    problems = refused_alike(plan, ledger)
    kinds = dict(problems.group_by("kind").len().iter_rows())
    assert kinds == {
        "unknown_candidate": 10,  # every row of A
        "unknown_case": 12,  # q9, three trials, four planned candidates
        "trial_out_of_range": 8,  # trial 3 of q1 and q2
        "duplicate_key": 10,  # (q2, 2, 1) twice for each of the five
        "missing_unit": 4,  # one per planned candidate: q3 twice for each, and é's (q1, 1) too
    }
    duplicates = problems.filter(pl.col("kind") == "duplicate_key").get_column("candidate").to_list()
    assert duplicates == ["A", "A", "Z", "Z", "a b", "a b", "é", "é", "中", "中"]


def stopped_command(d: Path, tmp: Path, setup: str) -> subprocess.CompletedProcess[str]:
    """Run the command on ``d``'s lake, by candidate, every part written, with ``setup`` run first.

    ``write`` (the by-candidate runner's) and ``close`` (the report store's) are the originals, for ``setup``
    to wrap. SIGINT starts as in a
    shell's foreground (raising KeyboardInterrupt) even when the tests run as a background job, which
    inherits it ignored.
    """
    script = f"""
import importlib, os, signal, sys
runners = importlib.import_module("evalframe.audit.runners")
store = importlib.import_module("evalframe.store")
from evalframe import cli
write, close = runners.ByCandidate._write, store.TableStore.close
signal.signal(signal.SIGINT, signal.default_int_handler)
{setup}
sys.argv = ["evalframe", "audit", "--plan", {str(d / "plan.parquet")!r}, "--results", {str(d / "results_hive")!r},
            "--trials", "2", "--partition-by", "candidate"]
cli.run()
"""
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)


#: ``setup`` of :func:`stopped_command`: signal the process once the first candidate's tables are written.
STOP_AFTER_FIRST_PART = """
def write_then_stop(self, plan, part):
    kept = write(self, plan, part)
    print(self.store.folder, sorted(p.name for p in self.store.folder.iterdir()), flush=True)
    os.kill(os.getpid(), signal.{stop})
    return kept
runners.ByCandidate._write = write_then_stop
"""


@pytest.mark.parametrize(("stop", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_stopped_command_exits_128_plus_the_signal_and_removes_its_written_files(
    generated: dict[str, Path], tmp_path: Path, stop: str, code: int
) -> None:
    # The command signals itself once the first candidate's tables are written, mid-audit.
    done = stopped_command(generated["clean"], tmp_path, STOP_AFTER_FIRST_PART.format(stop=stop))
    assert done.returncode == code, done.stderr
    assert f"evalframe: stopped by {stop}" in done.stderr
    assert "Traceback" not in done.stderr
    folder, written = done.stdout.splitlines()[0].split(" ", 1)
    assert Path(folder).parent == tmp_path and written == "['attempts-00000.parquet', 'units-00000.parquet']"
    assert not Path(folder).exists()
    assert list(tmp_path.iterdir()) == []


def test_a_second_stop_signal_does_not_cut_the_clean_up_short(generated: dict[str, Path], tmp_path: Path) -> None:
    # Ctrl-C pressed again while the report's folder is removed: ignored, one message, no traceback, no files left.
    again = """
def close_after_another(self):
    os.kill(os.getpid(), signal.SIGINT)
    close(self)
store.TableStore.close = close_after_another
"""
    done = stopped_command(generated["clean"], tmp_path, STOP_AFTER_FIRST_PART.format(stop="SIGINT") + again)
    assert done.returncode == 130, done.stderr
    assert done.stderr.count("evalframe: stopped by") == 1
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_command_started_ignoring_sigint_keeps_ignoring_it(generated: dict[str, Path], tmp_path: Path) -> None:
    # A background job of a shell script starts with SIGINT ignored; the command leaves it so and finishes.
    ignored = "signal.signal(signal.SIGINT, signal.SIG_IGN)\n" + STOP_AFTER_FIRST_PART.format(stop="SIGINT")
    done = stopped_command(generated["clean"], tmp_path, ignored)
    assert done.returncode == 0, done.stderr
    assert "stopped" not in done.stderr
    assert "planned" in done.stdout
