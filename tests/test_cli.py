"""The command line, through click's runner: exit codes, outputs, atomic writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import polars as pl
import pytest
from click.testing import CliRunner

from evalframe.cli import main
from tests.conftest import FIXTURES

ORBIT = FIXTURES / "orbit_desk"
ORBIT_ARGS = [
    "audit",
    "--plan",
    str(ORBIT / "plan.csv"),
    "--results",
    str(ORBIT / "results.csv"),
    "--candidates",
    "A,B",
]


#: What a refused batch leaves in --out.
REFUSAL_FILES = ["evalframe-manifest.json", "problems.parquet", "report.html", "report.json", "report.md"]


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def test_audit_table_output_leads_with_denominators() -> None:
    code, out, _ = run(ORBIT_ARGS)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "evalframe audit: A, B" and lines[3] == "headline"
    assert "scored_coverage" in out and "(scored/planned)" in out
    assert "0.500 (2/4)" in out and "1.000 (2/2 scored)" in out and "0.750 (3/4 scored)" in out
    assert "handoff, privacy" in out


def test_audit_json_output() -> None:
    code, out, _ = run([*ORBIT_ARGS, "--format", "json"])
    assert code == 0
    doc = json.loads(out)
    rows = {r["candidate"]: r for r in doc["summary"]}
    assert (rows["A"]["scored"], rows["A"]["pass_rate_scored"], rows["A"]["scored_coverage"]) == (2, 1.0, 0.5)
    assert doc["meta"]["planned_units"] == 8
    assert doc["problems_by_kind"] == {"missing_unit": 1}  # one per candidate with missing units: A


def test_audit_markdown_output() -> None:
    code, out, _ = run([*ORBIT_ARGS, "--format", "markdown"])
    assert code == 0
    assert "| A | 4 | 2 | 2 | 2 | 2 | 2 | 0 | 2 | 0 | 0 | 0 | 0 | 0 |" in out


def test_out_writes_every_table(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, _ = run([*ORBIT_ARGS, "--out", str(out)])
    assert code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "attempts.parquet",
        "evalframe-manifest.json",
        "problems.parquet",
        "report.html",
        "report.json",
        "report.md",
        "summary.parquet",
        "units.parquet",
    ]
    assert pl.read_parquet(out / "summary.parquet").height == 2
    assert pl.read_parquet(out / "units.parquet").height == 8


def test_refused_batch_exits_1_and_writes_its_problems_and_the_refusal_reports(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    raw = b"candidate,case_id,passed\nA,quote,1\nA,quote,1\nA,invented,true\n"
    bad.write_bytes(raw)
    out = tmp_path / "out"
    code, stdout, stderr = run(
        ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(bad), "--candidates", "A,B", "--out", str(out)]
    )
    assert code == 1
    assert stdout == ""
    assert "batch refused" in stderr and "duplicate_key" in stderr and "unknown_case" in stderr
    assert sorted(p.name for p in out.iterdir()) == REFUSAL_FILES
    problems = pl.read_parquet(out / "problems.parquet").filter(pl.col("refusing"))
    assert sorted(problems.select("kind", "line").rows()) == [
        ("duplicate_key", 2),
        ("duplicate_key", 3),
        ("invalid_grade", 4),
        ("unknown_case", 4),
    ]
    # CI shows the refusal from the report files: counts by kind, then the first rows.
    markdown = (out / "report.md").read_text(encoding="utf-8").splitlines()
    assert markdown[:3] == [
        "# evalframe: batch refused",
        "",
        "No rate was computed: 4 refusing problem(s); every problem is in problems.parquet.",
    ]
    assert "| unknown_case | True | 1 |" in markdown and "| duplicate_key | True | 2 |" in markdown
    assert "## refusing problems (first 4 of 4)" in markdown
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert doc["refusing_problems_by_kind"] == {"duplicate_key": 2, "invalid_grade": 1, "unknown_case": 1}
    assert [(p["kind"], p["line"]) for p in doc["first_refusing_problems"]] == [
        ("duplicate_key", 2),
        ("duplicate_key", 3),
        ("invalid_grade", 4),
        ("unknown_case", 4),
    ]
    assert "<h1>evalframe: batch refused</h1>" in (out / "report.html").read_text(encoding="utf-8")
    manifest = json.loads((out / "evalframe-manifest.json").read_text(encoding="utf-8"))
    assert (manifest["command"], manifest["outcome"]) == ("evalframe audit", "refused")
    assert bad.read_bytes() == raw  # inputs are never modified


def test_refused_plan_exits_1(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\nquote\nquote\n")
    code, _, stderr = run(["audit", "--plan", str(plan), "--results", str(ORBIT / "results.csv"), "--candidates", "A"])
    assert code == 1
    assert "duplicate_case" in stderr


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


def test_every_command_has_help_text() -> None:
    assert isinstance(main, click.Group)
    for name, command in main.commands.items():
        assert command.help, name
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0, name


def test_import_then_audit_round_trip(tmp_path: Path) -> None:
    from tests.conftest import real

    export = real("inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/log_streaming.eval")
    code, _, _ = run(["import", "inspect", str(export), "--out", str(tmp_path / "imp")])
    assert code == 0
    code, out, _ = run(
        [
            "audit",
            "--plan",
            str(tmp_path / "imp/plan.parquet"),
            "--results",
            str(tmp_path / "imp/ledger.parquet"),
            "--format",
            "json",
        ]
    )
    assert code == 0
    (row,) = json.loads(out)["summary"]
    assert (row["planned"], row["scored"], row["passed"]) == (4, 4, 3)
    # Provenance columns of the ledger still name the original export.
    units = pl.read_parquet(tmp_path / "imp/ledger.parquet")
    assert units.get_column("source").str.contains("log_streaming.eval").all()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--candidates", "A,,B"], "empty name"),
        (["--candidates", "A, B"], "white space"),
        (["--candidates", "A,A"], "repeated"),
        (["--candidates", "A,B", "--trials", "0"], "--trials"),
        (["--candidates", "A,B", "--grade", "numeric", "--score-range", "1", "0"], "LOW < HIGH"),
        (["--candidates", "A,B", "--pass-threshold", "0.5"], "--grade numeric only"),
        (["--candidates", "A,B", "--slice", "case_id"], "identity, not a slice"),
        (["--candidates", "A,B", "--bins", "case_type=0,1"], "without --slice"),
        (["--candidates", "A,B", "--slice", "case_type", "--bins", "case_type=0,1"], "not a number"),
        (["--candidates", "A,B", "--out", "/dev/null/x"], "cannot write"),
    ],
)
def test_flag_mistakes_are_usage_errors(extra: list[str], message: str) -> None:
    result = CliRunner().invoke(main, [*ORBIT_ARGS[:5], *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_refusal_replaces_an_old_report_and_speaks_json(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run([*ORBIT_ARGS, "--out", str(out), "--slice", "case_type"])[0] == 0
    assert (out / "summary.parquet").exists() and (out / "slices.parquet").exists()
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate,case_id,passed\nA,quote,2\n")
    code, stdout, _ = run(
        [
            "audit",
            "--plan",
            str(ORBIT / "plan.csv"),
            "--results",
            str(bad),
            "--candidates",
            "A,B",
            "--out",
            str(out),
            "--format",
            "json",
        ]
    )
    assert code == 1
    doc = json.loads(stdout)
    assert (doc["refused"], doc["refusing_problems"], doc["refusing_problems_by_kind"]) == (
        True,
        1,
        {"invalid_grade": 1},
    )
    assert [(p["kind"], p["line"], p["case_id"]) for p in doc["first_refusing_problems"]] == [
        ("invalid_grade", 2, "quote")
    ]
    # No stale rates next to the refusal.
    assert sorted(p.name for p in out.iterdir()) == REFUSAL_FILES


def test_the_command_freezes_its_imports_out_of_the_collector_and_main_does_not() -> None:
    # The console script (cli.run) freezes what it imported; main, called where the process goes on, does not.
    code = (
        "import gc, sys\n"
        "from evalframe import cli\n"
        "sys.argv = ['evalframe', '--version']\n"
        "for name, entry in (('main', cli.main), ('run', cli.run)):\n"
        "    try:\n"
        "        entry()\n"
        "    except SystemExit as done:\n"
        "        print(name, done.code, gc.get_freeze_count() > 0)\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert [line for line in shown.splitlines() if line.startswith(("main", "run"))] == ["main 0 False", "run 0 True"]


def test_a_hive_folder_value_holding_an_equals_sign_is_an_input_error(tmp_path: Path) -> None:
    # polars cannot resolve candidate=p=q as a hive partition: a clear input error (exit 2), not a traceback.
    for cand in ("A", "p=q"):
        folder = tmp_path / "lake" / f"candidate={cand}"
        folder.mkdir(parents=True)
        pl.DataFrame({"case_id": ["q0"], "passed": [1]}).write_parquet(folder / "p0.parquet")
    pl.DataFrame({"case_id": ["q0"]}).write_csv(tmp_path / "plan.csv")
    args = ["audit", "--plan", str(tmp_path / "plan.csv"), "--results", str(tmp_path / "lake"), "--candidates", "A"]
    code, _, err = run(args)
    assert code == 2
    assert "cannot read its files as one lake" in err and "key=value folder names" in err


#: Script lines that send the process SIGTERM after each step of writing an output folder for which ``{when}``.
STOP_AT_STEPS = """
import evalframe.report.output
def step_then_stop(name):
    if {when}:
        os.kill(os.getpid(), signal.SIGTERM)
evalframe.report.output._step = step_then_stop
"""


def test_a_stop_signal_during_the_write_of_out_takes_effect_after_the_exchange(tmp_path: Path) -> None:
    # A refusal replaces an earlier run's rates. SIGTERM at each step of the write: a stop while files are
    # written leaves the earlier output whole; once the exchange starts, it finishes first, then the command stops.
    out = tmp_path / "out"
    assert run([*ORBIT_ARGS, "--out", str(out)])[0] == 0
    earlier = sorted(p.name for p in out.iterdir())
    assert {"summary.parquet", "units.parquet", "report.md"} <= set(earlier)
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate,case_id,passed\nA,quote,1\nA,quote,1\n")

    def command(when: str) -> subprocess.CompletedProcess[str]:
        script = f"""
import os, signal, sys
from evalframe import cli
{STOP_AT_STEPS.format(when=when)}
sys.argv = ["evalframe", "audit", "--plan", {str(ORBIT / "plan.csv")!r}, "--results", {str(bad)!r},
            "--candidates", "A,B", "--out", {str(out)!r}]
cli.run()
"""
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    done = command("True")
    assert done.returncode == 143, done.stderr
    assert done.stderr.count("evalframe: stopped by SIGTERM") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "out"]
    assert sorted(p.name for p in out.iterdir()) == earlier
    done = command("name == 'earlier output moved aside'")
    assert done.returncode == 143, done.stderr
    assert done.stderr.count("evalframe: stopped by SIGTERM") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "out"]
    assert sorted(p.name for p in out.iterdir()) == REFUSAL_FILES
    assert pl.read_parquet(out / "problems.parquet").filter(pl.col("refusing")).height == 2


def test_sigterm_with_its_default_action_during_a_guarded_exchange_still_leaves_a_whole_folder(tmp_path: Path) -> None:
    # Python, no command, the command's guard passed: SIGTERM ends the process, but only after the exchange and
    # the temporary folder's removal.
    out = tmp_path / "out"
    script = f"""
import os, signal
import polars as pl
import evalframe as ef
from evalframe.cli.signals import hold_stop_signals
def report(candidates):
    plan = ef.Plan.from_file({str(ORBIT / "plan.csv")!r}, candidates=candidates)
    results = ef.load({str(ORBIT / "results.csv")!r}).frame
    return ef.audit(plan, results.filter(pl.col("candidate").is_in(candidates)))
report(["A", "B"]).write({str(out)!r})
{STOP_AT_STEPS.format(when="name == 'earlier output moved aside'")}
report(["A"]).write({str(out)!r}, guard=hold_stop_signals)
print("not reached")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == -15, done.stderr
    assert "not reached" not in done.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    for table in ("summary", "units", "attempts"):
        assert pl.read_parquet(out / f"{table}.parquet").get_column("candidate").unique().to_list() == ["A"], table
    assert json.loads((out / "report.json").read_text())["summary"][0]["candidate"] == "A"


def test_declared_extra_columns_reach_the_units_and_attempts_tables(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\nq1\nq2\n")
    results = tmp_path / "results.csv"
    results.write_text('candidate,case_id,attempt,passed,output,latency\nA,q1,1,1,hello,0.50\nA,q2,1,0,"a, b",1.25\n')
    base = ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"]
    code, _, err = run(base)
    assert code == 1
    assert "column 'latency' is not a ledger column" in err
    for partition in ("none", "candidate"):
        out = tmp_path / f"out-{partition}"
        code, _, _ = run([*base, "--extra-columns", "output,latency", "--partition-by", partition, "--out", str(out)])
        assert code == 0
        units = pl.read_parquet(out / "units.parquet").select("case_id", "outcome", "output", "latency")
        assert units.rows() == [("q1", "passed", "hello", "0.50"), ("q2", "failed", "a, b", "1.25")]
        attempts = pl.read_parquet(out / "attempts.parquet").select("case_id", "output")
        assert attempts.rows() == [("q1", "hello"), ("q2", "a, b")]


def test_text_stays_text_in_a_csv_plan(tmp_path: Path) -> None:
    # Issue 19's repro: 007 and 1.50 were read as 7 and 1.5, so the answers 007 and 1.50 were graded wrong.
    plan = tmp_path / "p.csv"
    plan.write_text("case_id,expected,dataset_version,input_length\nq1,007,1.10,120\nq2,1.50,1.10,3000\n")
    results = tmp_path / "r.csv"
    results.write_text("case_id,answer,dataset_version\nq1,007,1.10\nq2,1.50,1.10\n")
    code, out, err = run(
        ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--format", "json"]
    )
    assert code == 0, err
    row = json.loads(out)["summary"][0]
    assert (row["scored"], row["passed"]) == (2, 2)
    # A column declared numeric by --bins is parsed; a value that is not a number says where it is.
    args = ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--slice", "input_length"]
    code, out, err = run([*args, "--bins", "input_length=0,512", "--format", "json"])
    assert code == 0, err
    plan.write_text("case_id,expected,dataset_version,input_length\nq1,007,1.10,120\nq2,1.50,1.10,long\n")
    code, _, err = run([*args, "--bins", "input_length=0,512"])
    assert code == 2
    assert "column 'input_length' is declared numeric (bins) but case 'q2' has 'long', not a number" in err
