"""`evalframe compare --each` (or `--candidate all`): one baseline against every other candidate, Holm across them."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

import evalframe as ef
from evalframe.compare.family import compare_each
from evalframe.report.format import fmt_value
from evalframe.report.terminal import family_table
from tests.cli.support import run


def _inputs(tmp_path: Path, passes: dict[str, int]) -> list[str]:
    """40 cases, one trial; candidate c passes cases q0 .. q{passes[c] - 1}."""
    plan, results = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("case_id\n" + "".join(f"q{i}\n" for i in range(40)))
    rows = [f"{c},q{i},{int(i < n)}\n" for c, n in passes.items() for i in range(40)]
    results.write_text("candidate,case_id,passed\n" + "".join(rows))
    names = ",".join(passes)
    return ["compare", "--plan", str(plan), "--results", str(results), "--candidates", names, "--baseline", "base"]


def test_each_candidate_gets_one_verdict_and_the_family_is_adjusted(tmp_path: Path) -> None:
    # B, C, D each pass 6 cases the baseline fails and none the other way: exact McNemar p = 2 · 2^-6 = 0.03125,
    # a winner alone; Holm over three equal p-values gives 3 · 0.03125 = 0.09375 for each: no winner in the family.
    args = _inputs(tmp_path, {"base": 10, "B": 16, "C": 16, "D": 16})
    code, stdout, _ = run([*args, "--candidate", "all", "--format", "json"])
    assert code == 0
    doc = json.loads(stdout)
    got = [
        (r["candidate"], r["verdict"], r["mcnemar_p_value"], round(r["holm_p_value"], 9), r["family_verdict"])
        for r in doc["comparisons"]
    ]
    assert got == [(n, "candidate_better", 0.03125, 0.09375, "no_supported_winner") for n in ("B", "C", "D")]
    assert doc["multiplicity"].startswith("3 comparisons against one baseline: Holm's step-down adjustment (Holm 1979)")
    code, stdout, stderr = run([*args, "--candidate", "all", "--require-winner"])
    assert code == 3 and "no supported win over the baseline for B, C, D" in stderr
    assert "multiplicity: 3 comparisons" in stdout and "evalframe comparison: base against each other" in stdout


def test_require_winner_passes_when_every_candidate_wins_after_holm(tmp_path: Path) -> None:
    # B and C pass 20 more cases each: p = 2 · 2^-20, Holm × 2 = 2^-18 < 0.05 for both.
    args = _inputs(tmp_path, {"base": 10, "B": 30, "C": 30})
    code, stdout, _ = run([*args, "--candidate", "all", "--require-winner", "--format", "github"])
    assert code == 0
    assert stdout.splitlines()[0] == "### base against each other candidate"
    assert (
        sum(line.startswith(("| B | candidate_better", "| C | candidate_better")) for line in stdout.splitlines()) == 2
    )


def test_twenty_candidates_fit_80_and_120_columns_without_a_split_number(tmp_path: Path) -> None:
    # base passes q0..q9; candidate k (1..19) passes q0..q{9+k}: k discordant pairs, all for k.
    names = [f"candidate_{k:02d}" for k in range(1, 20)]
    passes = {"base": 10} | {n: 10 + k for k, n in enumerate(names, start=1)}
    plan, results = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("case_id\n" + "".join(f"q{i}\n" for i in range(40)))
    rows = [f"{c},q{i},{int(i < n)}\n" for c, n in passes.items() for i in range(40)]
    results.write_text("candidate,case_id,passed\n" + "".join(rows))
    report = ef.audit(ef.Plan.from_file(plan, candidates=list(passes)), results)
    table = compare_each(report, baseline="base").table
    for width in (80, 120):
        console = Console(width=width, file=io.StringIO(), color_system=None)
        console.print(family_table(table, width))
        lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
        assert max(len(line) for line in lines) <= width
        words = {w for line in lines for w in line.replace("[", " ").replace("]", " ").replace(",", " ").split()}
        for k, name in enumerate(names, start=1):
            assert name in words  # every candidate named whole
            assert f"+{fmt_value(k / 40)}" in words  # its difference (k pairs of 40, all its way) whole
        # every p-value of the table whole: McNemar's exact two-sided p for k discordant pairs all one way
        assert {fmt_value(min(1.0, 2 * 0.5**k)) for k in range(1, 20)} <= words
        assert len(lines) <= 60
    assert len(lines) == 4 + 19 + 1  # 120 columns: title, blank, header, rule, one line per candidate, the foot


def test_a_candidate_named_all_is_compared_alone_and_each_compares_every_one(tmp_path: Path) -> None:
    args = _inputs(tmp_path, {"base": 10, "all": 30, "B": 12})
    code, stdout, stderr = run([*args, "--candidate", "all", "--format", "json"])
    assert code == 0 and "--each compares every other candidate" in stderr
    doc = json.loads(stdout)
    assert (doc["comparison"]["candidate"], doc["comparison"]["verdict"]) == ("all", "candidate_better")
    code, stdout, _ = run([*args, "--each", "--format", "json"])
    assert code == 0
    assert [r["candidate"] for r in json.loads(stdout)["comparisons"]] == ["B", "all"]


def test_each_and_candidate_are_one_or_the_other(tmp_path: Path) -> None:
    args = _inputs(tmp_path, {"base": 10, "B": 12})
    for extra in (["--each", "--candidate", "B"], []):
        code, _, stderr = run([*args, *extra])
        assert code == 2 and "give either --candidate NAME (one comparison) or --each" in stderr


def test_compare_confidence_is_the_audits_on_the_command_line_and_in_python(tmp_path: Path) -> None:
    # `--confidence 0.9` is given to the audit; compare and compare --each read it from the audit, as
    # ef.compare does for a report audited at 0.9: one route, one number.
    args = _inputs(tmp_path, {"base": 10, "B": 16})
    code, stdout, _ = run([*args, "--candidate", "B", "--confidence", "0.9", "--format", "json"])
    assert code == 0
    row = json.loads(stdout)["comparison"]
    report = ef.audit(ef.Plan.from_file(tmp_path / "plan.csv", candidates=["base", "B"]), tmp_path / "results.csv",
                      confidence=0.9)  # fmt: skip
    table = ef.compare(report, baseline="base", candidate="B").table
    assert (row["confidence"], row["ci_low"], row["ci_high"]) == (
        0.9,
        table.item(0, "ci_low"),
        table.item(0, "ci_high"),
    )
    assert table.item(0, "ci_low") != ef.compare(report, baseline="base", candidate="B", confidence=0.95).table.item(
        0, "ci_low"
    )
    code, stdout, _ = run([*args, "--each", "--confidence", "0.9", "--format", "json"])
    assert json.loads(stdout)["comparisons"][0]["ci_low"] == table.item(0, "ci_low")
