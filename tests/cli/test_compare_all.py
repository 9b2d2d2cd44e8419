"""`evalframe compare --candidate all`: one baseline against every other candidate, Holm across them."""

from __future__ import annotations

import json
from pathlib import Path

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
