"""Paired comparison and verdict (SPEC §6, DESIGN verdict logic)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe.compare import compare
from tests.conftest import FIXTURES

ORBIT = FIXTURES / "orbit_desk"


def orbit_report() -> ef.AuditReport:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    return ef.audit(plan, ORBIT / "results.csv", slices=["case_type"])


def test_orbit_desk_has_no_supported_winner_and_says_why() -> None:
    c = compare(orbit_report(), baseline="B", candidate="A")
    assert c.verdict == "no_supported_winner"
    assert c.reasons[0] == "coverage: A scored_coverage 0.5 is below the declared minimum 0.95"
    assert c.reasons[1] == "bounds overlap: A [0.5, 1] vs B [0.75, 0.75]"
    row = c.table.row(0, named=True)
    assert (row["pairs_planned"], row["pairs_used"], row["pairs_dropped"]) == (4, 2, 2)
    assert (row["candidate_worst"], row["candidate_best"], row["baseline_worst"], row["baseline_best"]) == (
        0.5,
        1.0,
        0.75,
        0.75,
    )
    assert row["coverage_difference"] == -0.5
    # Dropped pairs and the slices they come from.
    assert c.dropped_by_slice.rows() == [("case_type", "escalation", 1), ("case_type", "policy", 1)]


def test_orbit_desk_missing_as_fail_is_labelled() -> None:
    c = compare(orbit_report(), baseline="A", candidate="B", pairs="missing_as_fail", min_coverage=0.0)
    row = c.table.row(0, named=True)
    assert row["pair_policy"] == "missing_as_fail"
    assert (row["pairs_used"], row["ungraded_counted_as_fail"]) == (4, 2)
    # B 3/4 vs A 2/4 counted as fail: difference +0.25.
    assert row["quality_difference"] == pytest.approx(0.25)
    assert c.verdict == "no_supported_winner"


def lopsided(n: int, base_pass: int, cand_pass: int, base_missing: int, cand_missing: int) -> ef.AuditReport:
    """n cases; each side passes its first k cases and has no rows for its last m cases."""
    cases = [f"c{i:02d}" for i in range(n)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = []
    for name, k, m in (("base", base_pass, base_missing), ("cand", cand_pass, cand_missing)):
        for i, case in enumerate(cases[: n - m]):
            rows.append({"candidate": name, "case_id": case, "passed": int(i < k)})
    return ef.audit(plan, pl.DataFrame(rows))


def test_worst_case_beating_best_case_wins_despite_missing_grades() -> None:
    # base: 19 of 20 scored, 2 passed → bounds [0.10, 0.15]; cand: 19 scored, 18 passed → [0.90, 0.95].
    report = lopsided(20, base_pass=2, cand_pass=18, base_missing=1, cand_missing=1)
    c = compare(report, baseline="base", candidate="cand", min_coverage=0.9)
    assert c.verdict == "candidate_better"
    assert c.reasons[0].startswith(
        "bounds: cand's worst case beats base's best case: cand [0.9, 0.95] vs base [0.1, 0.15]; "
        # Worst case for cand over all 20 pairs: cand 18/20 (its missing case fails), base 3/20 (passes).
        "worst-case paired difference +0.75 ["
    )
    swapped = compare(report, baseline="cand", candidate="base", min_coverage=0.9)
    assert swapped.verdict == "baseline_better"


def test_interval_decides_when_bounds_overlap() -> None:
    # Full coverage; cand passes 30/40, base 10/40, cases nested so every discordant pair favours cand.
    report = lopsided(40, base_pass=10, cand_pass=30, base_missing=0, cand_missing=0)
    c = compare(report, baseline="base", candidate="cand")
    row = c.table.row(0, named=True)
    assert row["quality_difference"] == pytest.approx(0.5)
    assert row["mcnemar_p_value"] == pytest.approx(2 * 0.5**20)  # 20 discordant pairs, all one way
    assert c.verdict == "candidate_better"
    assert c.reasons[-1].startswith("interval: paired difference cand − base = +0.5 [")


def test_separated_bounds_on_a_handful_of_pairs_are_not_a_win() -> None:
    # Two cases, cand passes both, base fails both: bounds [1, 1] vs [0, 0] and interval [+1, +1],
    # but two discordant pairs give exact McNemar p = 2 · 0.5² = 0.5: no supported winner.
    c = compare(
        lopsided(2, base_pass=0, cand_pass=2, base_missing=0, cand_missing=0), baseline="base", candidate="cand"
    )
    assert c.verdict == "no_supported_winner"
    assert c.table.item(0, "mcnemar_p_value") == 0.5
    assert "is not significant" in c.reasons[0]
    assert c.reasons[1].endswith("does not support a winner")
    # Four cases, 3 vs 1 passes, nested: 2 discordant pairs, p = 0.5 again.
    c4 = compare(
        lopsided(4, base_pass=1, cand_pass=3, base_missing=0, cand_missing=0), baseline="base", candidate="cand"
    )
    assert c4.verdict == "no_supported_winner"


def test_different_missingness_between_sides_blocks_a_winner() -> None:
    # Both sides above min coverage 0.5, but base misses 12 cases cand has (paired McNemar p < 0.05).
    report = lopsided(30, base_pass=5, cand_pass=25, base_missing=12, cand_missing=0)
    c = compare(report, baseline="base", candidate="cand", min_coverage=0.5)
    assert c.verdict == "no_supported_winner"
    assert c.reasons[0].startswith("coverage: missingness differs between the sides")


def test_bad_names_and_every_policy_are_value_errors() -> None:
    report = orbit_report()
    with pytest.raises(ValueError, match="not a candidate"):
        compare(report, baseline="A", candidate="Z")
    with pytest.raises(ValueError, match="must differ"):
        compare(report, baseline="A", candidate="A")
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q"]}), candidates=["A", "B"])
    ledger = pl.DataFrame(
        {
            "candidate": ["A", "A", "B"],
            "case_id": ["q"] * 3,
            "attempt": [1, 2, 1],
            "exec_status": ["timeout", "completed", "completed"],
            "score_status": ["not_scored", "scored", "scored"],
            "score": [None, 1.0, 0.0],
        }
    )
    with pytest.raises(ValueError, match="one observation per unit"):
        compare(ef.audit(plan, ledger, retry="every"), baseline="A", candidate="B")
