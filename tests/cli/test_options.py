"""The command group: help texts, usage errors (exit 2) and the flags checked before any file is read."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from evalframe.cli import main
from tests.cli.support import ORBIT, ORBIT_ARGS, run


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "--plan", "nope.csv", "--results", "x.csv"],
        ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", "missing.parquet", "--candidates", "A"],
        ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv"), "--retry", "best"],
        ["nonsense"],
    ],
    ids=["missing-plan", "missing-results", "bad-policy", "unknown-command"],
)
def test_usage_and_input_errors_exit_2_without_traceback(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_undeclared_candidates_is_a_usage_error_with_a_hint() -> None:
    code, _, stderr = run(["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv")])
    assert code == 2
    assert "has no candidate column, so name the candidates: --candidates A,B" in stderr


@pytest.mark.parametrize(("extra", "code"), [([], 2), (["--candidates", "A,B"], 0)], ids=["undeclared", "declared"])
def test_the_plan_csv_is_parsed_once(monkeypatch: pytest.MonkeyPatch, extra: list[str], code: int) -> None:
    """The candidate-column hint comes from the plan's one reading, not from a second parse of the file."""
    from evalframe.load import dispatch

    parsed: list[str] = []
    read = dispatch.read_csv_strict

    def spy(path: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append(Path(path).name)
        return read(path, *args, **kwargs)

    monkeypatch.setattr(dispatch, "read_csv_strict", spy)
    result = run(["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv"), *extra])
    assert result[0] == code, result[2]
    assert parsed.count("plan.csv") == 1


def test_every_command_has_help_text() -> None:
    assert isinstance(main, click.Group)
    for name, command in main.commands.items():
        assert command.help, name
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0, name


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--candidates", "A,,B"], "empty name"),
        (["--candidates", "A, B"], "white space"),
        (["--candidates", "A,A"], "repeated"),
        (["--candidates", "A,B", "--trials", "0"], "--trials"),
        (
            ["--candidates", "A,B", "--grade", "numeric", "--score-range", "1", "0"],
            "--score-range: score_range must be finite (low, high) with low < high, got (1.0, 0.0)",
        ),
        (
            ["--candidates", "A,B", "--pass-threshold", "0.5"],
            "--pass-threshold: pass_threshold applies to grade='numeric' only, within score_range (0.0, 1.0); got 0.5 "
            "with grade='binary'",
        ),
        (["--candidates", "A,B", "--slice", "case_id"], "--slice: case_id is the unit's identity, not a slice"),
        (
            ["--candidates", "A,B", "--bins", "case_type=0,1"],
            "--bins: bins given for 'case_type', which is not a slice",
        ),
        (["--candidates", "A,B", "--slice", "case_type", "--bins", "case_type=0,1"], "not a number"),
        (["--candidates", "A,B", "--out", "/dev/null/x"], "cannot write"),
        (
            ["--candidates", "A,B", "--slice", "case_type", "--slice", "case_type"],
            "--slice: slice column(s) 'case_type' given more than once",
        ),
        (  # the last one given won, silently, where a repeated --slice is refused
            ["--candidates", "A,B", "--slice", "case_type", "--bins", "case_type=q2", "--bins", "case_type=q3"],
            "bins for 'case_type' given more than once",
        ),
        (
            ["--candidates", "A,B", "--slice", "case_type", "--bins", f"case_type=q{10**30}"],
            f"the k of 'case_type=q{10**30}': {10**30} is not in the range 2<=x<=100000000",
        ),
    ],
)
def test_flag_mistakes_are_usage_errors(extra: list[str], message: str) -> None:
    result = CliRunner().invoke(main, [*ORBIT_ARGS[:5], *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_spark_tables_folder_with_glob_characters_is_refused_before_spark_starts(tmp_path: Path) -> None:
    """Spark and polars would read ``t[1]`` back as a pattern (matching ``t1``): refused, nothing created."""
    tables = tmp_path / "t[1]"
    result = CliRunner().invoke(main, [*ORBIT_ARGS, "--engine", "spark", "--spark-tables", str(tables)])
    assert result.exit_code == 2, result.output
    assert f"spark_tables '{tables}' holds [ ], which Spark and polars read as a path pattern" in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_csv_ledger_on_the_spark_engine_is_an_input_error_before_spark_starts() -> None:
    """Spark reads Parquet (or a table): a CSV is refused in one line, exit 2, not with Spark's trace."""
    result = CliRunner().invoke(main, [*ORBIT_ARGS, "--engine", "spark"])
    assert result.exit_code == 2, result.output
    results = ORBIT / "results.csv"
    assert result.output.strip().splitlines()[-1] == (
        f"error: {results}: the Spark engine reads Parquet files, folders or globs, or a table (this: --engine polars)"
    )
    assert "Traceback" not in result.output


def test_the_spark_engine_without_its_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without narwhals (``pip install .`` alone) the engine is a usage error naming the extra, not a traceback."""
    for name in [m for m in sys.modules if m.startswith("evalframe.engines")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "narwhals", None)
    result = CliRunner().invoke(main, [*ORBIT_ARGS, "--engine", "spark"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        "error: the spark engine needs pip install 'evalframe[spark]' (no module named 'narwhals')"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--min-coverage", "nan"], "Invalid value for '--min-coverage': 'nan' is not a finite number"),
        (["--alpha", "nan"], "Invalid value for '--alpha': 'nan' is not a finite number"),
        (["--confidence", "inf"], "Invalid value for '--confidence': inf is not in the range 0<x<1."),
        (["--grade", "numeric", "--pass-threshold", "-inf"], "Invalid value for '--pass-threshold': '-inf' is not"),
        (["--grade", "numeric", "--score-range", "0", "nan"], "Invalid value for '--score-range': 'nan' is not"),
        (["--trials", str(10**30)], "Invalid value for '--trials': 1000000000000000000000000000000 is not in the"),
    ],
    ids=["min-coverage", "alpha", "confidence", "pass-threshold", "score-range", "trials"],
)
def test_a_numeric_flag_is_finite_and_bounded(args: list[str], message: str) -> None:
    # A NaN gate compared false both ways and passed ("every scored_coverage is at least nan"), exit 0 at 50%.
    code, stdout, stderr = run([*ORBIT_ARGS, *args])
    assert (code, stdout) == (2, "")
    assert message in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--n-cases", str(10**30)],
            "Invalid value for '--n-cases': 1000000000000000000000000000000 is not in the range",
        ),
        (["--n-cases", "100", "--alpha", "nan"], "Invalid value for '--alpha': 'nan' is not a finite number"),
        (["--n-cases", "100", "--icc", "inf"], "Invalid value for '--icc': 'inf' is not a finite number"),
        (
            ["--n-cases", "100", "--trials", "1000000000"],
            "Invalid value for '--trials': 1000000000 is not in the range",
        ),
        (
            ["--n-cases", "100", "--trade-trials", f"1,{10**11}"],
            f"error: --trade-trials '1,{10**11}' is not a list of whole numbers ({10**11} is not in the range "
            "1<=x<=100000000.)",
        ),
    ],
    ids=["cases", "alpha", "icc", "trials", "trade-trials"],
)
def test_power_flags_are_finite_and_bounded(args: list[str], message: str) -> None:
    code, stdout, stderr = run(["power", *args])
    assert (code, stdout) == (2, "")
    assert message in stderr and "Traceback" not in stderr


def test_quantile_bins_are_at_most_the_columns_distinct_values(tmp_path: Path) -> None:
    # q1000000 on a 2-case plan built a million edges and ran past a minute: more bins than values mean nothing.
    plan, results = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("case_id,input_length\nq1,10\nq2,20\n", encoding="utf-8")
    results.write_text("candidate,case_id,passed\nA,q1,1\nA,q2,0\n", encoding="utf-8")
    args = ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--slice", "input_length"]
    code, stdout, stderr = run([*args, "--bins", "input_length=q1000000"])
    assert (code, stdout) == (2, "")
    assert stderr == (
        "error: bins for 'input_length': q1000000 asks for 1000000 quantile bins, more than its 2 distinct values\n"
    )
    code, stdout, stderr = run([*args, "--bins", "input_length=q2", "--format", "json"])
    assert code == 0, stderr
    slices = json.loads(stdout)["slices"]
    assert sorted((r["slice_value"], r["planned"]) for r in slices) == [("(-inf, 15]", 1), ("(15, inf]", 1)]


def test_bins_of_a_column_whose_name_holds_an_equals_sign(tmp_path: Path) -> None:
    # --bins splits at the last "=" (no edge holds one): "a=b=15" once read column "a" with edges "b=15"
    plan, results = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("case_id,a=b\nq1,10\nq2,20\n", encoding="utf-8")
    results.write_text("candidate,case_id,passed\nA,q1,1\nA,q2,0\n", encoding="utf-8")
    args = ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--slice", "a=b"]
    code, stdout, stderr = run([*args, "--bins", "a=b=15", "--format", "json"])
    assert code == 0, stderr
    report = json.loads(stdout)
    assert report["meta"]["bins"] == {"a=b": [15.0]}
    assert sorted((r["slice_value"], r["planned"]) for r in report["slices"]) == [("(-inf, 15]", 1), ("(15, inf]", 1)]


@pytest.mark.parametrize("args", [["--n-cases", "100", "--trials", "100000000"], ["--n-cases", "100000000"]])
def test_power_of_the_largest_designs_is_bounded_work(args: list[str]) -> None:
    start = time.process_time()
    code, stdout, stderr = run(["power", *args, "--format", "json"])
    assert code == 0, stderr
    assert time.process_time() - start < 10  # 56 CPU-seconds and more before (an exact sum over 10^10 cases)


def test_cases_fixed_is_recorded_and_said_and_another_target_is_a_usage_error() -> None:
    # Orbit Desk has one trial per case: with the cases fixed no trial variation can be estimated.
    code, stdout, stderr = run([*ORBIT_ARGS, "--cases", "everything"])
    assert (code, stdout) == (2, "")
    assert "Invalid value for '--cases': 'everything' is not one of 'sample', 'fixed'." in stderr
    compare = ["compare", *ORBIT_ARGS[1:], "--baseline", "A", "--candidate", "B", "--cases", "fixed"]
    code, stdout, _ = run([*compare, "--format", "json"])
    doc = json.loads(stdout)
    assert code == 0
    assert doc["meta"]["cases"] == "fixed"
    text = json.dumps(doc)
    assert "sample: the verdict is about these 2 cases only (cases fixed" in text  # A lacks 2: 2 complete pairs
    assert "(cases fixed and one pair per case: no interval) does not support a winner" in text
