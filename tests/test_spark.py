"""The audit on Spark (PySpark ``local[2]`` on 127.0.0.1) gives the polars audit's tables, value for value.

Summary, units, attempts, problems, slices and missingness tests are compared with ``assert_frame_equal``
(exact) on the SPEC §7 fixtures, on seeded ledgers of ../shared/tools/gen_ledger.py with each of its
defects, and under every retry policy (with slices: text, null and quantile-binned numeric values). One
Spark session serves the module; ``test_spark_connect.py`` repeats a part on Spark Connect.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from tests.spark_support import (
    GEN,
    LEDGER,
    ORBIT,
    REVERSED,
    as_spark,
    assert_same_audit,
    frame_of,
    generated,
    needs_spark,
)

pytestmark = [
    needs_spark,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


def orbit_plan() -> ef.Plan:
    return ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])


def test_orbit_desk_by_case_type_and_its_header_only_export(spark: Any, tmp_path: Path) -> None:
    frame = frame_of(ORBIT / "results.csv")
    kind, report = assert_same_audit(spark, orbit_plan(), frame, tmp_path, slices=["case_type"])
    assert kind == "report" and isinstance(report, ef.AuditReport)
    got = report.summary.select("candidate", "planned", "scored", "passed", "missing_case_ids").rows()
    assert got == [("A", 4, 2, 2, ["handoff", "privacy"]), ("B", 4, 4, 3, [])]
    by_type = report.slices.filter(pl.col("candidate") == "A").select("slice_value", "missing", "missing_ratio")
    assert by_type.rows() == [("billing", 0, 0.0), ("escalation", 1, 2.0), ("policy", 1, 2.0), ("sales", 0, 0.0)]
    assert report.missingness.select("candidate", "missing", "p_value").rows() == [("A", 2, 1.0), ("B", 0, None)]
    kind, report = assert_same_audit(spark, orbit_plan(), frame_of(ORBIT / "results_header_only.csv"), tmp_path)
    assert isinstance(report, ef.AuditReport)
    assert report.summary.select("scored", "pass_rate_scored", "pass_rate_planned").rows() == [(0, None, 0.0)] * 2


def test_first_missing_case_ids_in_natural_order_as_on_polars(spark: Any, tmp_path: Path) -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": [f"case/{n}" for n in range(1, 40)]}), candidates=["A", "B"])
    (tmp_path / "results.csv").write_text("candidate,case_id,passed\nA,case/1,1\nB,case/30,0\n")
    _, report = assert_same_audit(spark, plan, frame_of(tmp_path / "results.csv"), tmp_path / "audit")
    assert isinstance(report, ef.AuditReport)
    ids = report.summary.get_column("missing_case_ids").to_list()
    assert ids == [[f"case/{n}" for n in range(2, 22)], [f"case/{n}" for n in range(1, 21)]]
    (detail,) = report.problems.filter(pl.col("candidate") == "A").get_column("detail").to_list()
    assert detail == "38 planned units have no row, in 38 cases: " + ", ".join(ids[0]) + ", …"


@pytest.mark.parametrize(
    ("rows", "kinds"),
    [
        ("A,quote,1\nA,quote,1\n", {("duplicate_key", 2), ("duplicate_key", 3)}),
        ("A,invented,1\n", {("unknown_case", 2)}),
        ("C,quote,1\n", {("unknown_candidate", 2)}),
        ("A,quote,\nA,refund,true\nA,privacy,2\nA,handoff, 1\n", {("invalid_grade", n) for n in (2, 3, 4, 5)}),
    ],
)
def test_orbit_desk_refusals(spark: Any, tmp_path: Path, rows: str, kinds: set[tuple[str, int]]) -> None:
    path = tmp_path / "results.csv"
    path.write_text("candidate,case_id,passed\n" + rows)
    kind, problems = assert_same_audit(spark, orbit_plan(), frame_of(path), tmp_path)
    assert kind == "refused" and isinstance(problems, pl.DataFrame)
    assert set(problems.filter(pl.col("refusing")).select("kind", "line").iter_rows()) == kinds


def test_integer_tokens_beyond_int64_read_as_on_polars(spark: Any, tmp_path: Path) -> None:
    """Text compared, never cast: a 23-digit trial is refused with the same detail, not an ANSI cast error."""
    path = tmp_path / "results.csv"
    path.write_text("candidate,case_id,trial,passed\nA,quote,99999999999999999999999,1\nA,refund,x,1\n")
    kind, problems = assert_same_audit(spark, orbit_plan(), frame_of(path), tmp_path)
    assert kind == "refused" and isinstance(problems, pl.DataFrame)
    assert problems.filter(pl.col("kind") == "invalid_integer").select("line", "detail").rows() == [
        (2, "trial = 99999999999999999999999 is beyond the 64-bit integer range (at most 9223372036854775807)"),
        (3, "trial = x is not a positive integer"),
    ]


def test_status_ledger(spark: Any, tmp_path: Path) -> None:
    plan = ef.Plan.from_file(LEDGER / "plan.csv", candidates=["agent"])
    frame = frame_of(LEDGER / "results.csv").with_columns(
        pl.col("score").replace("", None).cast(pl.Float64), pl.col("has_output") == "true"
    )
    kind, report = assert_same_audit(spark, plan, frame, tmp_path)
    assert isinstance(report, ef.AuditReport)
    counts = ("planned", "attempted", "completed", "with_output", "scored", "passed", "exec_failed", "judge_failed")
    assert report.summary.select(*counts, "pass_rate_scored", "pass_rate_upper").row(0) == (
        4,
        4,
        3,
        3,
        2,
        1,
        1,
        1,
        0.5,
        0.75,
    )


def test_reversed_answers_and_a_wrong_run(spark: Any, tmp_path: Path) -> None:
    plan = ef.Plan.from_file(REVERSED / "plan.csv", candidates=["m"], run_id="run-1")
    frame = frame_of(REVERSED / "results.csv")
    kind, report = assert_same_audit(spark, plan, frame, tmp_path)
    assert isinstance(report, ef.AuditReport)
    assert report.summary.select("scored", "passed").row(0) == (2, 0)
    kind, problems = assert_same_audit(spark, plan, frame.with_columns(pl.lit("run-2").alias("run_id")), tmp_path)
    assert isinstance(problems, pl.DataFrame)
    assert problems.get_column("kind").to_list() == ["run_mismatch", "run_mismatch"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[ef.Plan, pl.DataFrame, dict[str, Any]]:
    if not GEN.exists():
        pytest.skip("needs ../shared/tools/gen_ledger.py beside the repository (CI has it)")
    folder = tmp_path_factory.mktemp("clean")
    _, frame, manifest = generated(folder, 20_000, 7, unknown=0, dups=0, missing=0.05, retries=0.1)
    # Cases without a tool form a slice of their own (a null slice value).
    units = pl.read_parquet(folder / "plan.parquet")
    units.with_columns(pl.col("tool_path").replace("none", None)).write_parquet(folder / "plan.parquet")
    return ef.Plan.from_file(folder / "plan.parquet"), frame, manifest


@pytest.mark.parametrize("retry", ["first", "last_allowed", "every"])
def test_generated_clean_ledger_by_slice_under_each_retry_policy(
    spark: Any, tmp_path: Path, clean: tuple[ef.Plan, pl.DataFrame, dict[str, Any]], retry: str
) -> None:
    plan, frame, manifest = clean
    slices = {"slices": ["case_type", "tool_path", "input_length"], "bins": {"input_length": "q4"}}
    kind, report = assert_same_audit(spark, plan, frame, tmp_path, retry=retry, max_attempts=2, **slices)
    assert isinstance(report, ef.AuditReport)
    truth = manifest["truth"]
    assert int(report.summary.get_column("missing").sum()) == truth["missing_pairs"]
    by_type = report.slices.filter(pl.col("slice_column") == "case_type").group_by("slice_value").agg(pl.sum("missing"))
    assert dict(by_type.iter_rows()) == truth["missing_by_case_type"]
    tools = report.slices.filter(pl.col("slice_column") == "tool_path").get_column("slice_value")
    assert tools.null_count() == len(plan.candidates)  # one null slice per candidate
    lengths = report.slices.filter(pl.col("slice_column") == "input_length").get_column("slice_value").unique()
    assert lengths.len() == 4 and lengths.str.starts_with("(").all()
    # Half of the missing units are long_context cases: every candidate's missing units concentrate there.
    flags = report.summary.get_column("selective_missingness")
    assert flags.null_count() == 0 and flags.str.contains("case_type: [^;]*concentrate in [^;(]*long_context").all()


def test_generated_ledger_with_every_defect(
    spark: Any, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    if not GEN.exists():
        pytest.skip("needs ../shared/tools/gen_ledger.py beside the repository (CI has it)")
    plan, frame, manifest = generated(tmp_path_factory.mktemp("defects"), 20_000, 11, unknown=0.002, dups=0.002)
    kind, problems = assert_same_audit(spark, plan, frame, tmp_path)
    assert isinstance(problems, pl.DataFrame)
    truth = manifest["truth"]
    by_kind = dict(problems.group_by("kind").len().iter_rows())
    assert by_kind["unknown_case"] == truth["unknown_rows"]
    # Missing units are one problem per candidate (SPEC §3 "Problems at scale"), counted in its detail.
    missing = problems.filter(pl.col("kind") == "missing_unit")
    assert missing.get_column("candidate").n_unique() == missing.height  # one row per candidate
    counted = missing.get_column("detail").str.extract(r"^(\d+) planned unit").cast(pl.Int64).sum()
    assert counted == truth["missing_pairs"]


def test_spark_refuses_a_polars_frame_before_starting_a_session() -> None:
    frame = pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]})
    with pytest.raises(ValueError, match="engine='spark' reads a Spark DataFrame, Parquet paths or a table name"):
        ef.audit(orbit_plan(), frame, engine="spark")


def test_the_polars_path_never_imports_pyspark() -> None:
    code = (
        "import sys; sys.modules['pyspark'] = None\n"  # any import of pyspark raises ImportError
        "import evalframe as ef, polars as pl\n"
        "plan = ef.Plan.from_frame(pl.DataFrame({'case_id': ['q']}), candidates=['A'])\n"
        "report = ef.audit(plan, pl.DataFrame({'candidate': ['A'], 'case_id': ['q'], 'passed': [1]}))\n"
        "print(report.summary.item(0, 'passed'), [m for m in sys.modules if m.startswith('evalframe.engines')])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1 []"


def test_problem_counts_beyond_the_first_rows(
    spark: Any, tmp_path: Path, clean: tuple[ef.Plan, pl.DataFrame, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one row of each kind shown, the report still counts every problem of each kind, as polars does."""
    import evalframe.engines.spark as on_spark

    plan, frame, manifest = clean
    monkeypatch.setattr(on_spark, "FIRST_ROWS", 1)
    report = ef.audit(plan, as_spark(spark, frame, tmp_path), spark_tables=tmp_path / "tables")
    assert isinstance(report, ef.AuditReport)
    expected = ef.audit(plan, frame).problem_counts
    assert_frame_equal(report.problem_counts, expected)
    counts = dict(expected.select("kind", "count").iter_rows())
    assert counts["missing_unit"] == len(plan.candidates)  # one missing_unit problem per candidate, one shown
    assert report.problems.height == expected.height  # one row of each kind


def test_the_driver_receives_case_patterns_not_cases(
    spark: Any, tmp_path: Path, clean: tuple[ef.Plan, pl.DataFrame, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What comes back for the intervals and the slices is a few rows per candidate (and slice value), not a row
    per case: each collected table has fewer rows per candidate than the candidate has cases, and counts them all."""
    import evalframe.engines.spark as on_spark

    plan, frame, _ = clean
    collected: list[pl.DataFrame] = []

    def patterns(counted: Any, by: Any) -> pl.DataFrame:
        got = real(counted, by)
        collected.append(got)
        return got

    real = on_spark._patterns
    monkeypatch.setattr(on_spark, "_patterns", patterns)
    report = ef.audit(plan, as_spark(spark, frame, tmp_path), spark_tables=tmp_path / "tables", slices=["case_type"])
    assert isinstance(report, ef.AuditReport)
    assert len(collected) == 2  # the candidates' patterns, then by case_type
    cases = plan.cases.height
    for table in collected:
        per_candidate = table.group_by("candidate").agg(pl.len(), pl.col("cases").sum()).sort("candidate")
        assert per_candidate.get_column("candidate").to_list() == sorted(plan.candidates)
        assert per_candidate.get_column("cases").to_list() == [cases] * len(plan.candidates)
        assert per_candidate.get_column("len").max() < cases


def test_a_file_that_is_not_parquet_is_an_input_error_in_one_line(spark: Any, tmp_path: Path) -> None:
    """Spark's reader fails on the footer; the audit says so as an input error, not with Spark's trace."""
    fake = tmp_path / "results.parquet"
    fake.write_text("not parquet")
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    with pytest.raises(ef.InputFormatError) as caught:
        ef.audit(plan, str(fake), engine="spark")
    assert caught.value.path == str(fake)
    assert caught.value.detail.startswith(
        "Spark cannot read it as Parquet: [FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] Encountered error while reading "
        f"file file:{fake}."
    )


def test_the_temporary_tables_folder_stays_until_the_report_is_closed_or_goes_on_refusal(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without spark_tables the tables live in a folder the report owns: removed by close(), or at once on refusal."""
    import gc
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    report = ef.audit(orbit_plan(), as_spark(spark, frame_of(ORBIT / "results.csv"), tmp_path / "in"))
    folder = Path(report.meta["tables"])
    assert folder.parent == tmp_path / "tmp" and folder.name.startswith("evalframe-spark-")
    units, store = report.units, report.store
    del report
    gc.collect()
    assert units.collect().height == 8  # the folder is the report's until closed, not the garbage collector's
    assert store is not None
    store.close()
    assert not folder.exists()
    bad = frame_of(ORBIT / "results.csv").with_columns(pl.lit("run-x").alias("candidate"))
    with pytest.raises(ef.AuditRefused):
        ef.audit(orbit_plan(), as_spark(spark, bad, tmp_path / "bad"))
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == []


def test_the_exports_notes_are_the_audits_whichever_engine_runs(spark: Any, tmp_path: Path) -> None:
    """An export recording another case reducer gets the same reducer_differs note on Spark as on polars (SPEC §4)."""
    provenance = {"exports": [{"case_reducer": "any"}]}
    frame = frame_of(ORBIT / "results.csv")
    kind, report = assert_same_audit(spark, orbit_plan(), frame, tmp_path, provenance=provenance)
    assert kind == "report" and isinstance(report, ef.AuditReport)
    notes = report.problems.filter(pl.col("kind") == "reducer_differs")
    assert notes.select("detail", "refusing").rows() == [
        ("the export records the case reducer any; the audit applies the declared 'mean'", False)
    ]


def test_a_refusal_counts_every_problem_beyond_the_first_rows(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three unknown cases with one row of each kind shown: the refusal on Spark still counts the three."""
    import evalframe.engines.spark as on_spark

    monkeypatch.setattr(on_spark, "FIRST_ROWS", 1)
    path = tmp_path / "results.csv"
    path.write_text("candidate,case_id,passed\nA,x1,1\nA,x2,1\nA,x3,0\n")
    with pytest.raises(ef.AuditRefused) as caught:
        ef.audit(orbit_plan(), as_spark(spark, frame_of(path), tmp_path), spark_tables=tmp_path / "tables")
    assert caught.value.problems.filter(pl.col("kind") == "unknown_case").height == 1
    counts = caught.value.problem_counts.filter(pl.col("kind") == "unknown_case")
    assert counts.select("refusing", "count").rows() == [(True, 3)]
