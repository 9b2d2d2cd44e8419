"""What each format shows: CI summary, gate result, flipped pairs, usage hints, help, natural order, rounding."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from click.testing import CliRunner

import evalframe as ef
from evalframe.cli import main
from evalframe.report import build_view, render_github, render_html, render_markdown
from evalframe.report.comparison import flips
from tests.conftest import FIXTURES
from tests.reducer_support import repro_args

ORBIT = FIXTURES / "orbit_desk"
ARGS = ["--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv"), "--candidates", "A,B"]
COMPARE = ["compare", *ARGS, "--baseline", "B", "--candidate", "A", "--slice", "case_type"]


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def test_github_summary_gives_verdict_coverage_and_gate() -> None:
    code, out, err = run([*COMPARE, "--format", "github", "--min-coverage", "0.9"])
    assert code == 3 and err.startswith("gate failed: scored_coverage below 0.9: A (0.5)")
    lines = out.splitlines()
    assert lines[0] == "### evalframe comparison: A vs baseline B"
    assert lines[2] == "**Gate failed**: scored_coverage below 0.9: A (0.5)."
    assert lines[4] == "**Verdict: `no_supported_winner`** — A vs baseline B (pair policy `complete_pairs`)"
    assert "| A | 2 / 4 | 50% | 1.000 (2/2) | \\[0.5, 1.0\\] | 2 |" in lines
    assert "Flipped pairs: 2 graded for the baseline only." in lines


def test_gate_result_is_in_the_json_and_passes_or_fails() -> None:
    code, out, _ = run(["audit", *ARGS, "--format", "json", "--min-coverage", "0.5"])
    assert code == 0
    assert json.loads(out)["gate"] == {
        "min_coverage": 0.5,
        "passed": True,
        "below": [],
        "require_winner": False,
        "checks": ["every scored_coverage ≥ 0.5"],
    }
    code, out, _ = run(["audit", *ARGS, "--format", "json", "--min-coverage", "0.75"])
    assert code == 3
    assert json.loads(out)["gate"] == {
        "min_coverage": 0.75,
        "passed": False,
        "below": [{"candidate": "A", "scored_coverage": 0.5}],
        "require_winner": False,
        "checks": ["scored_coverage below 0.75: A (0.5)"],
    }
    code, out, _ = run(["audit", *ARGS, "--format", "json"])
    assert code == 0 and "gate" not in json.loads(out)


def test_min_coverage_is_one_gate_in_audit_and_compare() -> None:
    # Not given: no gate in either command (compare's verdict uses 0.95).
    assert run(["audit", *ARGS])[0] == 0
    assert run(COMPARE)[0] == 0
    # Given: both exit 3 when a candidate (in compare, a compared side) is below it.
    assert run(["audit", *ARGS, "--min-coverage", "0.6"])[0] == 3
    code, out, _ = run([*COMPARE, "--min-coverage", "0.6", "--format", "json"])
    assert code == 3
    doc = json.loads(out)
    assert doc["comparison"]["min_coverage"] == 0.6 and doc["gate"]["below"] == [
        {"candidate": "A", "scored_coverage": 0.5}
    ]


def test_flipped_pairs_in_every_format(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, _ = run([*COMPARE, "--out", str(out)])
    assert code == 0
    assert any(
        "graded for the baseline only" in line and line.rstrip(" │").endswith(" 2") for line in stdout.splitlines()
    )
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert doc["comparison"]["flips"]["counts"] == {
        "pass_to_fail": 0,
        "fail_to_pass": 0,
        "baseline_only": 2,
        "candidate_only": 0,
    }
    assert [(r["case_id"], r["case_type"], r["flip"]) for r in doc["comparison"]["flips"]["first_pairs"]] == [
        ("handoff", "escalation", "baseline_only"),
        ("privacy", "policy", "baseline_only"),
    ]
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "| case_type | escalation | 0 | 0 | 1 | 0 |" in markdown
    assert "| handoff | 1 | escalation | baseline_only | failed | missing |" in markdown
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Flipped pairs (2)" in page and "<td>handoff</td>" in page


def test_flips_count_every_kind_by_slice() -> None:
    pairs = pl.DataFrame(
        {
            "case_id": ["q10", "q9", "q2", "q1", "q3"],
            "trial": [1] * 5,
            "task": ["x", "x", "y", "y", "y"],
            "baseline_outcome": ["passed", "failed", "missing", "passed", "passed"],
            "candidate_outcome": ["failed", "passed", "passed", "exec_failed", "passed"],
            "baseline_graded": [True, True, False, True, True],
            "candidate_graded": [True, True, True, False, True],
        }
    )
    f = flips(pairs, ["task"])
    assert dict(f.counts) == {"pass_to_fail": 1, "fail_to_pass": 1, "baseline_only": 1, "candidate_only": 1}
    assert f.by_slice.rows() == [("task", "x", 1, 1, 0, 0), ("task", "y", 0, 0, 1, 1)]
    assert f.pairs.get_column("case_id").to_list() == ["q1", "q2", "q9", "q10"]  # natural order


def test_numeric_scores_without_a_threshold_have_no_pass_or_fail_to_flip() -> None:
    # SPEC: without --pass-threshold passed and failed are null (no count, not 0); one pair graded on one side only.
    pairs = pl.DataFrame(
        {
            "case_id": ["q1", "q2", "q3"],
            "trial": [1] * 3,
            "task": ["x", "x", "y"],
            "baseline_outcome": ["scored_no_threshold", "scored_no_threshold", "missing"],
            "candidate_outcome": ["scored_no_threshold", "scored_no_threshold", "scored_no_threshold"],
            "baseline_graded": [True, True, False],
            "candidate_graded": [True, True, True],
        }
    )
    f = flips(pairs, ["task"])
    assert dict(f.counts) == {"pass_to_fail": None, "fail_to_pass": None, "baseline_only": 0, "candidate_only": 1}
    assert f.total == 1
    assert f.by_slice.rows() == [("task", "y", None, None, 0, 1)]


def test_compare_html_is_titled_comparison_and_puts_the_verdict_and_provenance_in_their_places() -> None:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    report = ef.audit(plan, ORBIT / "results.csv")
    page = render_html(build_view(report, ef.compare(report, baseline="B", candidate="A")))
    assert "<title>evalframe comparison: A vs baseline B</title>" in page
    assert page.index("Verdict: no_supported_winner") < page.index('id="headline"') < page.index('id="provenance"')
    assert "<title>evalframe audit: A, B</title>" in render_html(build_view(report))


def test_missing_ids_sort_naturally_and_numbers_are_rounded_for_people() -> None:
    ids = [f"case/{n}" for n in (1, 100, 1000, 10000, 2)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=["A"])
    ledger = pl.DataFrame({"candidate": ["A"] * 3, "case_id": ["case/1", "case/2", "case/100"], "passed": [1, 1, 0]})
    report = ef.audit(plan, ledger)
    (a,) = build_view(report).candidates
    assert a.missing_ids == ("case/1000", "case/10000")
    markdown = render_markdown(build_view(report))
    assert "| A | 0.6 | 0.6 | 0.667 | 0.4 | 0.8 |" in markdown  # 2/3 rounded for people
    assert json.loads(report.to_json())["summary"][0]["pass_rate_scored"] == 2 / 3  # full precision
    assert render_github(build_view(report)).count("0.667 (2/3)") == 1


def test_many_missing_ids_are_the_first_in_natural_order() -> None:
    ids = [f"case/{n}" for n in range(1, 40)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=["A"])
    report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["case/1"], "passed": [1]}))
    (a,) = build_view(report).candidates
    assert a.missing_ids == tuple(f"case/{n}" for n in range(2, 22))  # not case/10, case/11, ... as text
    assert report.summary.get_column("missing_case_ids").to_list() == [list(a.missing_ids)]
    assert a.missing_ids_text().endswith("case/21 … (+18 more)")


def test_each_candidates_first_missing_ids_are_its_own_under_repeated_trials() -> None:
    ids = [f"case/{n}" for n in range(1, 40)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=["A", "B"], trials=2)
    graded = [("A", "case/2", 1), ("A", "case/2", 2), ("B", "case/3", 1), ("B", "case/30", 2)]
    ledger = pl.DataFrame(graded, schema=["candidate", "case_id", "trial"], orient="row").with_columns(passed=1)
    a, b = build_view(ef.audit(plan, ledger)).candidates
    assert a.missing_ids == ("case/1", *(f"case/{n}" for n in range(3, 22)))
    assert b.missing_ids == tuple(f"case/{n}" for n in range(1, 21))  # case/3 has trial 2 still missing
    assert (a.missing_cases, b.missing_cases) == (38, 39)


def test_the_ungraded_units_listed_are_the_first_in_natural_order_of_candidate_and_case() -> None:
    ids = [f"q{n}" for n in range(1, 80)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=["m10", "m2", "m9"])
    ledger = pl.DataFrame({"candidate": ["m9"], "case_id": ["q1"], "passed": [1]})
    view = build_view(ef.audit(plan, ledger))
    assert view.ungraded_total == 3 * 79 - 1
    listed = view.ungraded_units.select("candidate", "case_id").rows()
    assert listed == [("m2", f"q{n}") for n in range(1, 80)] + [("m9", f"q{n}") for n in range(2, 23)]


def test_write_lays_out_the_view_it_is_given(tmp_path: Path) -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]}))
    report.write(tmp_path / "given", view=report.view(min_coverage=0.9))
    report.write(tmp_path / "built", min_coverage=0.9)
    for name in ("report.md", "report.json", "report.html"):
        assert (tmp_path / "given" / name).read_bytes() == (tmp_path / "built" / name).read_bytes(), name
    assert json.loads((tmp_path / "given" / "report.json").read_text())["gate"]["below"] == [
        {"candidate": "A", "scored_coverage": 0.5}
    ]


def test_candidates_given_for_a_plan_with_a_candidate_column_is_a_usage_error_before_the_ledger(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "units.csv"
    plan.write_text("candidate,case_id\nA,q1\n")
    # The ledger does not exist: the usage error comes first.
    code, _, err = run(["audit", "--plan", str(plan), "--results", str(tmp_path / "nope.csv"), "--candidates", "A"])
    assert code == 2
    assert "has a candidate column (one row per planned unit), which names the candidates: drop --candidates" in err


def test_help_lists_examples_and_exit_codes() -> None:
    for command in ([], ["audit"], ["compare"]):
        result = CliRunner().invoke(main, [*command, "--help"])
        assert result.exit_code == 0
        text = result.output
        assert "Exit codes:" in text and "3  a declared release gate failed" in text, command
        assert "Examples:" in text and "evalframe " in text.split("Examples:")[1], command
    audit_help = CliRunner().invoke(main, ["audit", "--help"]).output
    compare_help = CliRunner().invoke(main, ["compare", "--help"]).output
    gate = "Release gate: exit 3 when a candidate's scored_coverage"
    assert gate in " ".join(audit_help.split()) and gate in " ".join(compare_help.split())


def test_refusal_json_on_stdout_lists_kind_line_and_key_per_kind(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate,case_id,passed\nA,quote,1\nA,quote,1\nA,invented,1\n")
    code, out, _ = run(
        ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(bad), "--candidates", "A,B", "--format", "json"]
    )
    assert code == 1
    doc = json.loads(out)
    assert doc["refusing_problems_by_kind"] == {"duplicate_key": 2, "unknown_case": 1}
    # The same shape as an audited report.json's, every problem counted; each kind's refusing flag beside.
    assert doc["problems_by_kind"] == {"duplicate_key": 2, "missing_unit": 2, "unknown_case": 1}
    assert doc["problem_counts"] == [
        {"kind": "duplicate_key", "refusing": True, "count": 2},
        {"kind": "missing_unit", "refusing": False, "count": 2},
        {"kind": "unknown_case", "refusing": True, "count": 1},
    ]
    kinds = {k["kind"]: k for k in doc["refusing_kinds"]}
    assert [(r["line"], r["case_id"]) for r in kinds["duplicate_key"]["first_rows"]] == [(2, "quote"), (3, "quote")]
    assert kinds["unknown_case"]["count"] == 1 and kinds["unknown_case"]["texts"]


def _selective(tmp_path: Path) -> list[str]:
    """60 cases, half in slice x and half in y; 15 of y's cases have no row (all the missing units)."""
    ids = [f"c{n:03d}" for n in range(60)]
    pl.DataFrame({"case_id": ids, "grp": ["x"] * 30 + ["y"] * 30}).write_csv(tmp_path / "plan.csv")
    graded = ids[:30] + ids[45:]
    pl.DataFrame({"candidate": "A", "case_id": graded, "passed": [0, 1, 1] * 15}).write_csv(tmp_path / "res.csv")
    return [*_audit_args(tmp_path, "A"), "--slice", "grp"]


def _audit_args(tmp_path: Path, candidates: str) -> list[str]:
    """``audit`` of the plan.csv and res.csv in ``tmp_path`` for ``candidates``."""
    files = ["--plan", str(tmp_path / "plan.csv"), "--results", str(tmp_path / "res.csv")]
    return ["audit", *files, "--candidates", candidates]


def test_selective_missingness_is_in_the_terminal_headline_and_the_github_summary(tmp_path: Path) -> None:
    """SPEC §5: a headline rate whose missing units concentrate in one slice says so, naming the slice."""
    said = "grp: ungraded units, all of them absent rows, concentrate in y (Holm-adjusted p=0.0001)."
    code, out, _ = run(_selective(tmp_path))
    assert code == 0
    head = out.split("candidates: funnel and rates")[0]
    assert f"• A: selective missingness: {said}" in head.splitlines()
    code, out, _ = run([*_selective(tmp_path), "--format", "github"])
    assert code == 0 and f"**A: selective missingness**: {said}" in out.splitlines()


def test_retry_every_names_observations_wherever_the_rates_are_over_them() -> None:
    """Under retry every A's rates are over its 11 observations, not its 8 planned units (SPEC §2, §4)."""
    ledger = FIXTURES / "every_eval_ever" / "ungraded"  # retries, a judge error, a unit not started, two missing
    args = ["audit", "--plan", str(ledger / "plan.csv"), "--results", str(ledger / "results.csv")]
    args += ["--candidates", "A,B", "--trials", "2", "--retry", "every"]
    code, out, _ = run([*args, "--format", "github"])
    lines = out.splitlines()
    assert code == 0
    assert (
        "| candidate | scored / observations | scored_coverage | pass_rate_scored | case_pass_rate (mean) "
        "| range over observations | missing |"
    ) in lines
    # A has no case whose every observation was scored: no case-level rate. B: its 4 cases sum 3 pass fractions.
    assert "| A | 4 / 11 | 36.4% | 0.750 (3/4) | — | \\[0.273, 0.909\\] | 2 |" in lines
    assert "| B | 8 / 8 | 100% | 0.750 (6/8) | 0.750 (3/4) | \\[0.75, 0.75\\] | 0 |" in lines
    assert (
        "A and B share the highest pass_rate_scored (0.75), computed on only 4 of 11 observations, but A's range "
        "over observations \\[0.273, 0.909\\] overlaps B \\[0.75, 0.75\\]: the missing grades alone could reverse "
        "the order, so pass_rate_scored does not rank these candidates."
    ) in lines
    code, out, _ = run([*args, "--format", "markdown"])
    assert code == 0
    assert "| candidate | planned | observations | attempted | completed | with_output | scored | passed |" in out
    assert "| A | 8 | 11 | 8 | 5 | 5 | 4 | 3 | 1 | 2 | 1 | 3 | 0 | 1 | 0 |" in out.splitlines()
    code, out, _ = run(args)
    assert code == 0 and "computed on only 4 of 11 observations" in " ".join(out.split())


def test_github_summary_gives_the_case_level_rate_beside_the_trial_level_one(tmp_path: Path) -> None:
    """pass@k (reducer any) over 2 cases × 2 trials: 2 of 2 cases pass, beside 3 of 4 trials (SPEC §4)."""
    code, out, _ = run([*repro_args(tmp_path), "--reducer", "any", "--format", "github"])
    lines = out.splitlines()
    assert code == 0
    assert (
        "| candidate | scored / planned | scored_coverage | pass_rate_scored | case_pass_rate (any) | full-plan range "
        "| missing |"
    ) in lines
    assert "| A | 4 / 4 | 100% | 0.750 (3/4) | 1.000 (2/2) | \\[0.75, 0.75\\] | 0 |" in lines
    code, out, _ = run([*repro_args(tmp_path), "--format", "github"])  # mean over 2 trials: 1.5 of 2 cases
    assert code == 0 and "| A | 4 / 4 | 100% | 0.750 (3/4) | 0.750 (1.5/2) | \\[0.75, 0.75\\] | 0 |" in out.splitlines()


def _four_cases(tmp_path: Path, results: str) -> list[str]:
    """``audit`` over cases c1–c4 and the results CSV text ``results``, candidates A and B."""
    (tmp_path / "plan.csv").write_text("case_id\nc1\nc2\nc3\nc4\n")
    (tmp_path / "res.csv").write_text(results)
    return _audit_args(tmp_path, "A,B")


NUMERIC = "candidate,case_id,score\nA,c1,0.9\nA,c2,0.2\nA,c3,0.6\nB,c1,0.5\nB,c2,0.5\nB,c3,0.4\nB,c4,0.1\n"


def test_numeric_scores_without_a_threshold_give_a_mean_and_no_count_of_passes(tmp_path: Path) -> None:
    """GitHub summary and report.md: no '0/3' passes where none were counted, and the mean score is there."""
    args = [*_four_cases(tmp_path, NUMERIC), "--grade", "numeric"]
    code, out, _ = run([*args, "--format", "github"])
    assert code == 0
    assert "| A | 3 / 4 | 75% | — | 0.567 \\[0.0824, 0.95\\] | null | 1 |" in out.splitlines()
    assert "| B | 4 / 4 | 100% | — | 0.375 \\[0.152, 0.668\\] | null | 0 |" in out.splitlines()
    code, out, _ = run([*args, "--format", "markdown"])
    lines = out.splitlines()
    assert code == 0 and "## Mean score (numeric scores, over scored units)" in lines
    assert "| A | 3 | 0.567 | 0.203 | \\[0.0824, 0.95\\] |" in lines


def test_html_under_retry_every_gives_shares_of_observations(tmp_path: Path) -> None:
    """A: 4 planned units, 7 observations (retries counted), 3 passed: '3 of 7 observations (42.9%)', never 'of 4'."""
    ledger = (
        "candidate,case_id,attempt,exec_status,passed\nA,c1,1,timeout,\nA,c1,2,completed,1\nA,c1,3,completed,1\n"
        "A,c2,1,completed,1\nA,c2,2,completed,0\nA,c3,1,completed,0\n"
        "B,c1,1,completed,1\nB,c2,1,completed,1\nB,c3,1,completed,1\nB,c4,1,completed,0\n"
    )
    code, _, _ = run(
        [*_four_cases(tmp_path, ledger), "--retry", "every", "--max-attempts", "3", "--out", str(tmp_path / "o")]
    )
    html = (tmp_path / "o" / "report.html").read_text()
    assert code == 0
    assert "A: passed 3 of 7 observations (42.9%)" in html and "A: missing 1 of 7 observations (14.3%)" in html
    assert "5 of 7 scored" in html and "B: passed 3 of 4 planned units (75%)" in html
    assert "A: pass rate over all 7 observations, worst to best case: 42.9% to 71.4%" in html
    assert "6 <small>85.7% of observations</small>" in html
    assert "A: passed 3 of 4" not in html and "5 of 4 scored" not in html  # as it read before


def test_a_case_level_rate_without_a_threshold_says_why_it_is_null(tmp_path: Path) -> None:
    """Every case of A fully scored (numeric, 2 trials), no threshold: null for that reason, not 'no case scored'."""
    scores = "".join(f"A,c{c},{t},0.{c}{t}\n" for c in range(1, 5) for t in (1, 2))
    args = _four_cases(tmp_path, "candidate,case_id,trial,score\n" + scores)[:-2]
    args += ["--candidates", "A", "--trials", "2", "--grade", "numeric", "--reducer", "any", "--format", "markdown"]
    code, out, _ = run(args)
    assert code == 0
    assert "- A: case_pass_rate (any) is null: no pass threshold declared (cases scored = 4)" in out.splitlines()


def test_require_winner_is_a_gate_that_every_output_reports(tmp_path: Path) -> None:
    """Orbit Desk A vs B has no supported winner: --require-winner fails the gate (exit 3) and no output says
    'Gate passed' (it did, from the coverage check alone, while the command exited 3)."""
    failed = "the verdict is no_supported_winner, not candidate_better (--require-winner)"
    gate = [*COMPARE, "--min-coverage", "0.4", "--require-winner"]
    code, out, err = run([*gate, "--format", "github"])
    assert code == 3 and err.splitlines() == [f"gate failed: {failed}"]
    assert out.splitlines()[2] == f"**Gate failed**: {failed}."
    code, out, _ = run([*gate, "--format", "json"])
    assert code == 3
    assert json.loads(out)["gate"] == {
        "min_coverage": 0.4,
        "passed": False,
        "below": [],
        "require_winner": True,
        "checks": [failed],
    }
    code, _, _ = run([*gate, "--out", str(tmp_path / "o")])
    assert code == 3
    assert f"**Gate failed**: {failed}." in (tmp_path / "o" / "report.md").read_text().splitlines()
    assert f'<p class="gate fail">Gate failed: {failed}.</p>' in (tmp_path / "o" / "report.html").read_text()
    code, out, err = run([*gate[:-1], "--format", "github"])  # the coverage gate alone passes
    assert code == 0 and out.splitlines()[2] == "**Gate passed**: every scored_coverage is at least 0.4."


def test_the_terminal_says_from_which_slices_pairs_were_dropped() -> None:
    """SPEC §6: A has no row for privacy (policy) and handoff (escalation): 2 pairs dropped, one per slice."""
    code, out, _ = run(COMPARE)
    lines = [" ".join(line.strip("│ ").split()) for line in out.splitlines()]
    at = lines.index("dropped pairs by slice")
    assert code == 0
    assert lines[at + 4 : at + 6] == ["case_type │ escalation │ 1", "case_type │ policy │ 1"]
