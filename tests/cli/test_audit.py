"""`evalframe audit`: output formats, --out, refusals, input errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.cli.support import ORBIT, ORBIT_ARGS, REFUSAL_FILES, run
from tests.reducer_support import repro_args


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


#: SPEC §7 Orbit Desk: (candidate, planned, scored, passed, missing cases, scored_coverage, pass_rate_scored,
#: pass_rate_planned).
ORBIT_SUMMARY = [
    ("A", 4, 2, 2, ["handoff", "privacy"], 0.5, 1.0, 0.5),
    ("B", 4, 4, 3, [], 1.0, 0.75, 0.75),
]


def summary_rows(stdout: str) -> list[tuple[object, ...]]:
    """The Orbit Desk columns of ``--format json``'s summary, one tuple per candidate."""
    names = ["candidate", "planned", "scored", "passed", "missing_case_ids"]
    names += ["scored_coverage", "pass_rate_scored", "pass_rate_planned"]
    return [tuple(row[n] for n in names) for row in json.loads(stdout)["summary"]]


def test_a_plan_and_results_whose_names_hold_brackets_are_read_as_themselves(tmp_path: Path) -> None:
    # `[1]` is a glob character class: a file of that very name was taken for a pattern that matched nothing.
    plan, results = tmp_path / "plan [1].csv", tmp_path / "res [1].csv"
    plan.write_bytes((ORBIT / "plan.csv").read_bytes())
    results.write_bytes((ORBIT / "results.csv").read_bytes())
    for plan_arg, results_arg in ((plan, ORBIT / "results.csv"), (ORBIT / "plan.csv", results), (plan, results)):
        args = ["audit", "--plan", str(plan_arg), "--results", str(results_arg), "--candidates", "A,B"]
        code, out, err = run([*args, "--format", "json"])
        assert (code, err) == (0, "")
        assert summary_rows(out) == ORBIT_SUMMARY
        meta = json.loads(out)["meta"]
        sources = (meta["plan_source"], meta["results_source"], meta["ledger_rows"])
        assert sources == (str(plan_arg), str(results_arg), 6)


def test_a_bracket_pattern_that_names_no_file_is_still_a_glob(tmp_path: Path) -> None:
    header, *rows = (ORBIT / "results.csv").read_text().splitlines()
    (tmp_path / "res1.csv").write_text("\n".join([header, *(r for r in rows if r.startswith("A,"))]) + "\n")
    (tmp_path / "res2.csv").write_text("\n".join([header, *(r for r in rows if r.startswith("B,"))]) + "\n")
    (tmp_path / "res3.csv").write_text(f"{header}\nA,invented,1\n")  # not matched by [12]: would be refused
    pattern = str(tmp_path / "res[12].csv")
    args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", pattern, "--candidates", "A,B"]
    code, out, err = run([*args, "--format", "json"])
    assert (code, err) == (0, "")
    assert summary_rows(out) == ORBIT_SUMMARY
    assert (json.loads(out)["meta"]["results_source"], json.loads(out)["meta"]["ledger_rows"]) == (pattern, 6)


def test_slices_under_retry_every_name_observations_where_they_are_the_denominator(tmp_path: Path) -> None:
    """Under every, g2's 2 planned units are 4 observations: coverage 2/4 (it showed 2/2), and the
    missingness counts are of observations (it said 4/8 'of planned' for 4 planned units)."""
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id,grp\nc1,g1\nc2,g1\nc3,g2\nc4,g2\n")
    ledger = tmp_path / "results.csv"
    ledger.write_text(
        "candidate,case_id,attempt,exec_status,score_status,passed\n"
        "A,c1,1,completed,scored,0\nA,c1,2,completed,scored,1\n"
        "A,c2,1,timeout,not_scored,\nA,c2,2,timeout,not_scored,\nA,c2,3,completed,scored,1\n"
        "A,c3,1,error,not_scored,\nA,c3,2,completed,scored,1\n"
        "A,c4,1,completed,judge_error,\nA,c4,2,completed,scored,1\n"
    )
    args = ["audit", "--plan", str(plan), "--results", str(ledger), "--candidates", "A", "--retry", "every"]
    out = tmp_path / "out"
    code, stdout, _ = run([*args, "--max-attempts", "2", "--slice", "grp", "--out", str(out)])
    assert code == 0
    rows = [" ".join(line.replace("│", " ").split()) for line in stdout.splitlines() if line.startswith("│ A")]
    assert "A grp 4/8 no, p=1.0; too few cases to detect even a whole slice lost 0/8 no test" in rows
    assert "A grp g1 0.500 (2/4) 0 0.500 (1/2 scored)" in rows
    assert "A grp g2 0.500 (2/4) 0 1.000 (2/2 scored)" in rows
    markdown = (out / "report.md").read_text()
    assert "| A | grp | g2 | 2 | 4 | 3 | 2 | 2 | 0 | 0.0 | 0.5 | 1.0 |" in markdown
    assert "| candidate | slice_column | n_slices | cases | observations | ungraded |" in markdown


def test_at_least_k_above_the_planned_trials_exits_2_naming_reducer_k_and_trials(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = run(
        [*repro_args(tmp_path), "--reducer", "at_least:3", "--format", "json", "--out", str(out)]
    )
    assert code == 2
    assert stdout == ""
    assert stderr == (
        "error: reducer 'at_least:3' needs 3 passed trials in a case, but the plan has at most 2 trial(s) per "
        "case: no case could ever pass (use k <= 2, or 'all')\n"
    )
    assert not out.exists()  # nothing written: no score exists


def test_a_misspelt_reducer_exits_2_the_same_way(tmp_path: Path) -> None:
    code, stdout, stderr = run([*repro_args(tmp_path), "--reducer", "at_lest:3"])
    assert (code, stdout) == (2, "")
    assert stderr == (
        "error: reducer must be mean, any, all, majority, median, at_least:K or pass_at:K (K a positive integer), "
        "or Inspect's max, mode, at_least_K, pass_at_K; got 'at_lest:3'\n"
    )


def test_a_declared_reducer_shows_the_case_level_rate_in_the_terminal_markdown_and_html(tmp_path: Path) -> None:
    args = [*repro_args(tmp_path), "--reducer", "any"]
    code, table, _ = run(args)
    assert code == 0
    assert "│ A         │ 1.000 (4/4)      │ 0.750 (3/4 scored) │ 1.000 (2/2 cases) │ 0.750–0.750 │        0 │" in table
    code, markdown, _ = run([*args, "--format", "markdown"])
    assert code == 0
    assert "- A: case_pass_rate (any) = cases passed / cases scored = 2 / 2 = 1.0" in markdown.splitlines()
    code, _, _ = run([*args, "--out", str(tmp_path / "out")])
    assert code == 0
    written = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "- A: case_pass_rate (any) = cases passed / cases scored = 2 / 2 = 1.0" in written.splitlines()
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert '<p class="cond"><b>100%</b> case_pass_rate (any) = cases passed / cases scored = 2 / 2</p>' in page
    assert "<td><span>1.0</span><small>2 / 2</small><small>[0.342, 1.0]</small></td>" in page


def test_a_plan_problem_does_not_hide_the_ledger_problems(tmp_path: Path) -> None:
    # Issue 45 item 9: a repeated plan case reported alone needed a second run to show the ledger's problems.
    plan, results = tmp_path / "pd.csv", tmp_path / "r.csv"
    plan.write_text("case_id\nq1\nq1\n", encoding="utf-8")
    results.write_text("candidate,case_id,passed\nA,q1,2\nA,zz,1\n", encoding="utf-8")
    code, stdout, _ = run(
        ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--format", "json"]
    )
    assert code == 1
    refusal = json.loads(stdout)
    assert refusal["refusing_problems_by_kind"] == {"duplicate_case": 2, "invalid_grade": 1, "unknown_case": 1}
    rows = [(p["kind"], Path(p["source"]).name, p["line"]) for p in refusal["first_refusing_problems"]]
    assert sorted(rows) == [
        ("duplicate_case", "pd.csv", 2),
        ("duplicate_case", "pd.csv", 3),
        ("invalid_grade", "r.csv", 2),
        ("unknown_case", "r.csv", 3),
    ]
    # With nothing left to check against (no case_id column), the plan's problem stands alone.
    plan.write_text("case\nq1\n", encoding="utf-8")
    code, stdout, _ = run(
        ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--format", "json"]
    )
    assert (code, json.loads(stdout)["refusing_problems_by_kind"]) == (1, {"missing_column": 1})


def test_compare_under_retry_every_is_a_usage_error_in_one_line(tmp_path: Path) -> None:
    # Under every, a unit has one observation per attempt; compare pairs one value per (case_id, trial) and
    # refuses rather than choose how to reduce the attempts (issue 41: kept as a documented refusal).
    plan, ledger = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("case_id\nq1\nq2\n")
    ledger.write_text(
        "candidate,case_id,trial,attempt,passed\nA,q1,1,1,1\nA,q1,1,2,0\nA,q2,1,1,1\nB,q1,1,1,1\nB,q2,1,1,0\n"
    )
    args = ["compare", "--plan", str(plan), "--results", str(ledger), "--candidates", "A,B"]
    code, out, err = run([*args, "--baseline", "A", "--candidate", "B", "--retry", "every"])
    assert (code, out) == (2, "")
    assert err == (
        "error: compare needs one observation per unit: audit with retry 'first' or 'last_allowed', not 'every'\n"
    )


def test_a_refused_batch_writes_its_problems_as_the_markdown_and_github_summary(tmp_path: Path) -> None:
    # issue 42: a CI job summary showed nothing exactly when the batch was refused.
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate,case_id,passed\nA,quote,1\nA,quote,1\nA,invented,1\n")
    args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(bad), "--candidates", "A,B"]
    for fmt, title in (("github", "### evalframe: batch refused"), ("markdown", "# evalframe: batch refused")):
        code, stdout, _ = run([*args, "--format", fmt])
        assert code == 1  # the exit code of a refusal, whatever the format
        lines = stdout.splitlines()
        assert lines[0] == title
        # No --out: no problems.parquet was written, so the lead says how to get one rather than where it is.
        lead = "No rate was computed: 3 refusing problem(s); --out DIR writes every problem to problems.parquet."
        assert lines[2] == lead
        # The file holds two rows of one key (lines 2 and 3) and one case the plan does not hold (line 4).
        assert "| duplicate_key | True | 2 |" in lines and "| unknown_case | True | 1 |" in lines
        assert "refusing problems (first 3 of 3)" in stdout
        rows = [line.strip("| ").split(" | ") for line in lines[-3:]]
        # The first rows: kind, key (case_id), line of each refusing problem.
        assert [(r[0], r[4], r[2]) for r in rows] == [
            ("duplicate_key", "quote", "2"),
            ("duplicate_key", "quote", "3"),
            ("unknown_case", "invented", "4"),
        ]


def test_compact_lays_the_candidates_out_one_line_each() -> None:
    # orbit_desk: 4 planned cases; results.csv has rows for A on quote and refund, for B on all four.
    code, stdout, _ = run([*ORBIT_ARGS, "--compact"])
    assert code == 0
    table = stdout.split("candidates (one line each)")[1].split("missing units")[0]
    rows = [line.split() for line in table.splitlines() if line.startswith((" A ", " B "))]
    assert [row[:2] for row in rows] == [["A", "2/4"], ["B", "4/4"]]
    code, stdout, _ = run([*ORBIT_ARGS, "--full"])
    assert code == 0 and "candidates: funnel and rates" in stdout and "one line each" not in stdout
