"""Paired comparison and verdict (SPEC §6, DESIGN verdict logic)."""

from __future__ import annotations

import html
import io
import json

import polars as pl
import pytest
from rich.console import Console

import evalframe as ef
from evalframe.compare import compare
from evalframe.errors import OptionError
from evalframe.report.terminal import print_view
from tests.conftest import FIXTURES

ORBIT = FIXTURES / "orbit_desk"


def orbit_report() -> ef.AuditReport:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    return ef.audit(plan, ORBIT / "results.csv", slices=["case_type"])


def test_orbit_desk_has_no_supported_winner_and_says_why() -> None:
    c = compare(orbit_report(), baseline="B", candidate="A")
    assert c.verdict == "no_supported_winner"
    assert c.reasons[0] == "coverage: A scored_coverage 0.5 is below the default minimum (none declared) 0.95"
    # Two cases with grades on both sides, both passed by both: a difference of 0, and no winner.
    assert c.reasons[1].startswith("interval: paired difference of pass rate A − B = +0 [")
    assert c.reasons[1].endswith("(95% interval over 2 cases; exact McNemar p=1) does not support a winner")
    assert c.reasons[2] == "bounds overlap: A [0.5, 1] vs B [0.75, 0.75]"
    # SPEC §6a: B passes both used pairs (a rate of 1), and two pairs can never reject (p ≥ 2 · 0.5² = 0.5).
    assert c.reasons[3] == (
        "sample: the verdict is about the population of tasks these cases were drawn from; with 2 cases, a kind "
        "of case that fails every time and makes up most of the population could be absent from this sample"
    )
    assert c.reasons[4] == (
        "power: with 2 cases this batch could not have detected any difference in pass rate with 80% power "
        "(SPEC §6a): too few cases"
    )
    assert len(c.reasons) == 5
    row = c.table.row(0, named=True)
    assert (row["pairs_planned"], row["pairs_used"], row["pairs_dropped"]) == (4, 2, 2)
    assert row["detectable_difference"] is None
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


def test_a_winner_passes_every_check_and_says_so() -> None:
    # base: 19 of 20 scored, 2 passed → bounds [0.10, 0.15]; cand: 19 scored, 18 passed → [0.90, 0.95].
    report = lopsided(20, base_pass=2, cand_pass=18, base_missing=1, cand_missing=1)
    c = compare(report, baseline="base", candidate="cand", min_coverage=0.9)
    assert c.verdict == "candidate_better"
    row = c.table.row(0, named=True)
    # 19 complete pairs: cand 18/19, base 2/19, 16 discordant pairs all for cand.
    assert row["quality_difference"] == pytest.approx(16 / 19)
    assert row["mcnemar_p_value"] == pytest.approx(2 * 0.5**16)
    assert (row["interval_method"], row["cases_used"]) == ("newcombe", 19)
    # Tipping point over all 20 pairs: cand's missing case fails (18/20), base's passes (3/20).
    assert row["tipping_point_difference"] == pytest.approx(0.75)
    assert row["other_policy_ci_low"] > 0
    # The checks that hold are not reasons: they are listed apart, in the order they ran.
    assert c.checks_passed[0].startswith("interval: paired difference of pass rate cand − base = +0.842 [")
    assert c.checks_passed[0].endswith("supports candidate_better")
    assert c.checks_passed[1] == (
        "tipping point: the difference stays on its side (+0.75) with every ungraded unit filled against the winner"
    )
    assert len(c.checks_passed) == 2
    assert c.reasons[0] == "bounds separate: cand [0.9, 0.95] vs base [0.1, 0.15]"
    assert not any(r.startswith(("interval:", "tipping point:")) for r in c.reasons)
    swapped = compare(report, baseline="cand", candidate="base", min_coverage=0.9)
    assert swapped.verdict == "baseline_better"
    assert swapped.table.item(0, "tipping_point_difference") == pytest.approx(-0.75)


def test_interval_decides_when_coverage_is_complete() -> None:
    # Full coverage; cand passes 30/40, base 10/40, cases nested so every discordant pair favours cand.
    report = lopsided(40, base_pass=10, cand_pass=30, base_missing=0, cand_missing=0)
    c = compare(report, baseline="base", candidate="cand")
    row = c.table.row(0, named=True)
    assert row["quality_difference"] == pytest.approx(0.5)
    assert row["mcnemar_p_value"] == pytest.approx(2 * 0.5**20)  # 20 discordant pairs, all one way
    assert c.verdict == "candidate_better"
    assert c.checks_passed[0].startswith("interval: paired difference of pass rate cand − base = +0.5 [")


def test_a_handful_of_pairs_is_not_a_win() -> None:
    # Two cases, cand passes both, base fails both: bounds [1, 1] vs [0, 0], but two discordant pairs give
    # exact McNemar p = 2 · 0.5² = 0.5: no supported winner, whatever the interval.
    c = compare(
        lopsided(2, base_pass=0, cand_pass=2, base_missing=0, cand_missing=0), baseline="base", candidate="cand"
    )
    assert c.verdict == "no_supported_winner"
    assert c.table.item(0, "mcnemar_p_value") == 0.5
    # The interval [+0.07, +1] excludes zero; the test that fails is the exact one, and the reason names it.
    assert c.reasons[0] == (
        "exact McNemar test: p=0.5 ≥ α 0.05 on 2 discordant pairs (2 passed by cand alone, 0 by base alone), so "
        "the paired test does not reject no difference and does not support a winner, although the paired "
        "difference of pass rate cand − base = +1 [+0.07, +1] (95% interval over 2 cases) excludes zero; "
        "p < 0.05 needs at least 6 discordant pairs, all one way"
    )
    assert (c.table.item(0, "ci_low"), c.table.item(0, "ci_high")) == (pytest.approx(0.0700, abs=5e-5), 1.0)
    # Four cases, 3 vs 1 passes, nested: 2 discordant pairs, p = 0.5 again.
    c4 = compare(
        lopsided(4, base_pass=1, cand_pass=3, base_missing=0, cand_missing=0), baseline="base", candidate="cand"
    )
    assert c4.verdict == "no_supported_winner"
    # Here the interval includes zero as well: it is the interval the reason names, in the usual words.
    assert c4.reasons[0] == (
        "interval: paired difference of pass rate cand − base = +0.5 [-0.0189, +0.736] (95% interval over 4 cases; "
        "exact McNemar p=0.5) does not support a winner"
    )


def _tables(n11: int, n10: int, n01: int, n00: int) -> ef.AuditReport:
    """One trial per case: n11 cases both pass, n10 only cand, n01 only base, n00 neither."""
    cases = [f"c{i:02d}" for i in range(n11 + n10 + n01 + n00)]
    base = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00
    cand = [1] * n11 + [1] * n10 + [0] * n01 + [0] * n00
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = [{"candidate": "base", "case_id": c, "passed": v} for c, v in zip(cases, base, strict=True)]
    rows += [{"candidate": "cand", "case_id": c, "passed": v} for c, v in zip(cases, cand, strict=True)]
    return ef.audit(plan, pl.DataFrame(rows))


def test_the_reason_names_the_exact_test_when_it_alone_fails() -> None:
    # 20 cases, 7 discordant pairs for cand and 1 for base: Newcombe [+0.0465, +0.497] excludes zero, exact
    # McNemar p = 2 · 9/256 = 0.07 does not reject. The verdict is unchanged: no winner.
    c = compare(_tables(6, 7, 1, 6), baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    assert c.table.item(0, "mcnemar_p_value") == pytest.approx(18 / 256)
    assert c.table.item(0, "ci_low") > 0
    assert c.reasons[0] == (
        "exact McNemar test: p=0.07 ≥ α 0.05 on 8 discordant pairs (7 passed by cand alone, 1 by base alone), so "
        "the paired test does not reject no difference and does not support a winner, although the paired "
        "difference of pass rate cand − base = +0.3 [+0.0465, +0.497] (95% interval over 20 cases) excludes zero"
    )
    # The other way round: the interval excludes zero below it, and the reason says the same of the test.
    swapped = compare(_tables(6, 7, 1, 6), baseline="cand", candidate="base")
    assert swapped.verdict == "no_supported_winner"
    assert swapped.table.item(0, "ci_high") < 0
    assert swapped.reasons[0].startswith(
        "exact McNemar test: p=0.07 ≥ α 0.05 on 8 discordant pairs (1 passed by base alone, 7 by cand alone)"
    )
    # At α 0.1 the same tables reject, and the candidate wins: the decision is the test's and the interval's.
    at_10 = compare(_tables(6, 7, 1, 6), baseline="base", candidate="cand", alpha=0.1, confidence=0.9)
    assert at_10.verdict == "candidate_better"
    assert at_10.checks_passed[0].endswith("exact McNemar p=0.07) supports candidate_better")


def trials_report(per_case: list[tuple[int, int]], trials: int, *, shuffle_trials: bool = False) -> ef.AuditReport:
    """One case per entry (cand passes, base passes) out of ``trials`` trials each."""
    cases = [f"q{i}" for i in range(len(per_case))]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"], trials=trials)
    rows = []
    for case, (c_pass, b_pass) in zip(cases, per_case, strict=True):
        order = list(range(1, trials + 1))
        for name, k in (("cand", c_pass), ("base", b_pass)):
            labels = order[::-1] if shuffle_trials and name == "base" else order
            rows += [
                {"candidate": name, "case_id": case, "trial": t, "passed": int(i < k)} for i, t in enumerate(labels)
            ]
    return ef.audit(plan, pl.DataFrame(rows))


@pytest.mark.parametrize(("passes", "trials"), [((10, 0), 10), ((1, 0), 1)])
def test_one_case_has_no_interval_and_no_winner(passes: tuple[int, int], trials: int) -> None:
    """SPEC §4: fewer than two cases, no interval, of one trial as of many (one trial had a Newcombe interval)."""
    c = compare(trials_report([passes], trials), baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    row = c.table.row(0, named=True)
    assert (row["quality_difference"], row["ci_low"], row["ci_high"], row["interval_method"], row["cases_used"]) == (
        1.0,
        None,
        None,
        "none",
        1,
    )
    assert c.reasons[0] == (
        "interval: paired difference of pass rate cand − base = +1 over 1 case (fewer than two cases: "
        "no interval) does not support a winner"
    )


def test_trial_labels_do_not_change_the_verdict() -> None:
    # Same per-case counts; base's passes sit on the other trials. A unit-level test over trials saw different
    # discordant pairs (p 0.008 vs 0.115); the case-level test sees the same per-case differences.
    per_case = [(5, 1), (4, 2), (5, 3), (3, 0), (4, 4)]
    one = compare(trials_report(per_case, 5), baseline="base", candidate="cand").table
    other = compare(trials_report(per_case, 5, shuffle_trials=True), baseline="base", candidate="cand").table
    keep = ["quality_difference", "ci_low", "ci_high", "interval_method", "cases_used", "verdict"]
    assert one.select(keep).rows() == other.select(keep).rows()
    assert one.item(0, "interval_method") == "wilson_clustered"
    assert one.item(0, "mcnemar_p_value") is None


def test_the_pair_policies_must_agree() -> None:
    # 40 cases. cand has grades on 20 (all passed) and no rows for 20; base is graded on all 40, passing 30,
    # failing cases q00-q09 of those cand has. complete_pairs: cand 20/20 vs base 10/20; missing_as_fail:
    # cand 20/40 vs base 30/40. The verdict used to flip with the policy; now neither gives a winner.
    cases = [f"q{i:02d}" for i in range(40)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = [{"candidate": "cand", "case_id": c, "passed": 1} for c in cases[:20]]
    rows += [{"candidate": "base", "case_id": c, "passed": int(i >= 10)} for i, c in enumerate(cases)]
    report = ef.audit(plan, pl.DataFrame(rows))
    complete = compare(report, baseline="base", candidate="cand", min_coverage=0.0)
    as_fail = compare(report, baseline="base", candidate="cand", pairs="missing_as_fail", min_coverage=0.0)
    assert (complete.verdict, as_fail.verdict) == ("no_supported_winner", "no_supported_winner")
    assert complete.table.item(0, "quality_difference") == pytest.approx(0.5)
    assert as_fail.table.item(0, "quality_difference") == pytest.approx(-0.25)
    assert complete.reasons[0].startswith("coverage: missingness differs between the sides")
    assert complete.checks_passed == [c for c in complete.checks_passed if c.endswith("supports candidate_better")]
    assert len(complete.checks_passed) == 1  # the interval holds; coverage, pair policy and tipping point fail
    assert complete.reasons[1].startswith("pair policy: under missing_as_fail the difference is -0.25 [")
    # Tipping point: cand's 20 ungraded units fail, base has none: 20/40 − 30/40.
    assert complete.table.item(0, "tipping_point_difference") == pytest.approx(-0.25)
    assert complete.reasons[2].startswith("tipping point: with every ungraded unit a fail for cand")
    assert as_fail.reasons[1].endswith("does not support a winner")


def test_numeric_scores_compare_mean_scores_without_a_threshold() -> None:
    cases = [f"q{i}" for i in range(12)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = [{"candidate": "cand", "case_id": c, "score": 0.9 - 0.01 * i} for i, c in enumerate(cases)]
    rows += [{"candidate": "base", "case_id": c, "score": 0.4 + 0.01 * i} for i, c in enumerate(cases)]
    report = ef.audit(plan, pl.DataFrame(rows), grade="numeric")
    c = compare(report, baseline="base", candidate="cand")
    row = c.table.row(0, named=True)
    # Differences 0.5 − 0.02 i, i = 0..11: mean 0.39.
    assert row["quality_difference"] == pytest.approx(0.39)
    assert row["interval_method"] == "wilson_clustered"
    assert -1.0 <= row["ci_low"] <= 0.39 <= row["ci_high"] <= 1.0
    # The interval excludes 0, but 12 cases are too few for the t(G − 1) interval under the sample target:
    # the differences are symmetric (g1 = 0) and Sugden, Smith & Jones (2000) need more than 28 + 25·0² cases.
    assert row["ci_low"] > 0
    assert c.verdict == "no_supported_winner"
    assert c.checks_passed[0].startswith("interval: paired difference of mean score cand − base = +0.39 [")
    assert c.reasons[0] == (
        "skewness: Cochran's rule as refined by Sugden, Smith and Jones (2000) needs more than 28 + 25·g1² = 28 "
        "cases for the per-case differences of mean score (skewness g1 = 0); there are 12: with 12 cases the "
        "sample target (cases standing for a larger population of tasks) cannot support a winner for this skew; "
        "--cases fixed gives inference about these 12 cases only"
    )
    assert c.reasons[-1] == (
        "power: with 12 cases of several trials (or numeric scores) no difference could have been supported: the "
        "clustered interval needs more than 28 + 25·g1² cases, g1 the skewness of the per-case differences (Sugden, "
        "Smith and Jones 2000), so more than 28 whatever the data; --cases fixed gives inference about these 12 "
        "cases only"
    )
    assert row["detectable_difference"] is None
    assert c.reasons[-2] == (
        "sample: the verdict is about the population of tasks these cases were drawn from; with 12 cases, a kind "
        "of case that fails every time and makes up to 3/12 (25%) of the population could be absent from this sample"
    )


def test_numeric_scores_with_29_symmetric_cases_meet_the_skewness_rule_and_give_a_winner() -> None:
    cases = [f"q{i}" for i in range(29)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = [{"candidate": "cand", "case_id": c, "score": 0.9 - 0.01 * i} for i, c in enumerate(cases)]
    rows += [{"candidate": "base", "case_id": c, "score": 0.4 + 0.01 * i} for i, c in enumerate(cases)]
    c = compare(ef.audit(plan, pl.DataFrame(rows), grade="numeric"), baseline="base", candidate="cand")
    # Differences 0.5 − 0.02 i, i = 0..28: symmetric (g1 = 0), and 29 > 28 + 25·0².
    assert c.table.item(0, "quality_difference") == pytest.approx(0.22)
    assert c.verdict == "candidate_better"
    assert not any(r.startswith("skewness:") for r in c.reasons)
    assert c.reasons[-1].startswith("sample: the verdict is about the population of tasks these cases were drawn")


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
    with pytest.raises(OptionError) as caught:
        compare(ef.audit(plan, ledger, retry="every"), baseline="A", candidate="B")
    assert (caught.value.option, caught.value.reason) == (
        "retry",
        "compare needs one observation per unit: audit with retry 'first' or 'last_allowed', not 'every'",
    )


def test_units_planned_for_one_side_only_are_not_paired_nor_failed() -> None:
    """Two Inspect logs of one task, each limited to its own samples: qwen plans ids 1-3, sonnet ids 1-5.

    Ids 4 and 5 were never planned for qwen, so they are no pairs: not ungraded baseline sides, and never a fail
    under ``missing_as_fail`` (SOURCES.md, data_arc_qwen / data_arc_sonnet).
    """
    from evalframe.importers import inspect_ai
    from evalframe.load import Loaded
    from tests.conftest import real

    arc = "inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_arc_{}.json"
    imported = inspect_ai.read([real(arc.format("qwen")), real(arc.format("sonnet"))])
    report = ef.audit(imported.plan, Loaded(imported.ledger.lazy(), imported.notes, "arc"))
    qwen, sonnet = "ollama/qwen2.5:0.5b", "anthropic/claude-sonnet-4-0"
    for policy in ("complete_pairs", "missing_as_fail"):
        c = compare(report, baseline=qwen, candidate=sonnet, pairs=policy)
        row = c.table.row(0, named=True)
        assert (row["pairs_planned"], row["pairs_used"], row["units_not_paired"], row["ungraded_counted_as_fail"]) == (
            3,
            3,
            2,
            0,
        )
        assert c.pairs.get_column("case_id").to_list() == ["1", "2", "3"]
        assert (row["baseline_pass_rate_pairs"], row["candidate_pass_rate_pairs"]) == (1 / 3, 1.0)
        assert row["mcnemar_p_value"] == 0.5
        assert c.verdict == "no_supported_winner"
        assert c.reasons[0] == (
            f"pairs: 2 planned for {sonnet} only: not compared (the other side was never planned on them); "
            "coverage and bounds are each side's over its own plan"
        )


def test_fixed_cases_drop_the_skewness_rule_and_take_the_within_case_variance() -> None:
    # 12 cases × 10 trials, cand passes trials 1-8 and base trials 1-4 of every case: per case the differences
    # are four 1s and six 0s, s² = 10/9 · 0.4 · 0.6 = 4/15, so V = 12 · 10 · (4/15) / 120² = 32/14400.
    report = trials_report([(8, 4)] * 12, 10)
    sampled = compare(report, baseline="base", candidate="cand")
    assert sampled.verdict == "no_supported_winner"  # 12 cases ≤ 28: the skewness rule cannot hold
    fixed = compare(report, baseline="base", candidate="cand", cases="fixed")
    row = fixed.table.row(0, named=True)
    assert (row["interval_method"], row["quality_difference"]) == ("wilson_fixed", pytest.approx(0.4))
    assert row["se_clustered"] == pytest.approx((32 / 14400) ** 0.5)
    assert fixed.verdict == "candidate_better"
    assert not any(r.startswith(("skewness:", "power:")) for r in fixed.reasons)
    assert fixed.reasons[-1] == (
        "sample: the verdict is about these 12 cases only (cases fixed: the interval covers trial noise within "
        "them, not other tasks)"
    )
    with pytest.raises(OptionError) as caught:
        compare(report, baseline="base", candidate="cand", cases="all")  # type: ignore[arg-type]
    assert (caught.value.option, caught.value.reason) == ("cases", "cases must be one of 'sample', 'fixed', got 'all'")


def test_fixed_cases_report_the_within_case_power_and_say_so() -> None:
    # 12 cases × 10 trials: cand passes 5 and base 4 in half the cases, 4 and 5 in the others: no difference.
    # base's rate over the pairs is 0.45 and its icc 0 (per-case residuals ±0.5: the CR1 variance is below the
    # binomial one, the design effect taken as 1). Under cases fixed the power is the within-case t with
    # 12 · 9 = 108 df (SPEC §6a; stats.detectable): σ_W² = p(1 − p) + (p + d)(1 − p − d), δ = d·sqrt(120)/σ_W.
    from scipy.optimize import brentq
    from scipy.stats import nct
    from scipy.stats import t as student

    def rise(p: float) -> float:
        def power(d: float) -> float:
            sd = (p * (1 - p) + (p + d) * (1 - p - d)) ** 0.5
            return float(nct.sf(student.ppf(0.975, 108) / (1 - d * d) ** 0.5, 108, d * 120**0.5 / sd))

        return brentq(lambda d: power(d) - 0.8, 1e-6, 1 - p)

    report = trials_report([(5, 4), (4, 5)] * 6, 10)
    fixed = compare(report, baseline="base", candidate="cand", cases="fixed")
    assert fixed.verdict == "no_supported_winner"
    up, down = rise(0.45), rise(0.55)  # a drop from 0.45 is a rise from 0.55
    assert down < up
    assert fixed.table.item(0, "detectable_difference") == pytest.approx(down, abs=1e-6)
    assert fixed.reasons[-1] == (
        f"power: with 12 cases this batch (about these cases only: cases fixed) could have detected a difference "
        f"of {down:.3g} in pass rate ({100 * down:.1f} points) with cand below base, or of {up:.3g} "
        f"({100 * up:.1f} points) with it above, with 80% power (SPEC §6a); smaller differences may be missed"
    )
    # one trial per case: about fixed cases there is no interval, so no difference could have been supported
    single = compare(trials_report([(1, 0), (0, 1)] * 6, 1), baseline="base", candidate="cand", cases="fixed")
    assert single.table.item(0, "detectable_difference") is None
    assert single.reasons[-1] == (
        "power: with cases fixed and one pair in each of the 12 cases no difference could have been supported: the "
        "trials' own variation cannot be estimated (several trials per case, or --cases sample)"
    )


def test_a_withheld_winner_and_a_withheld_interval_say_it_in_the_same_words() -> None:
    # issue 41: the skewness rule's refusal is one sentence (SkewCheck.refusal) in compare and in the summary,
    # naming the sample target and --cases fixed. 12 cases × 10 trials, cand 8, 9, 7 and base 4 of 10.
    from evalframe.stats import skew_check

    report = trials_report([(8, 4), (9, 4), (7, 4)] * 4, 10)
    c = compare(report, baseline="base", candidate="cand")
    said = [r for r in c.reasons if r.startswith("skewness:")]
    # per-case differences 4, 5, 3 of 10: symmetric, g1 = 0, and 12 cases are not more than 28
    assert said == [
        "skewness: Cochran's rule as refined by Sugden, Smith and Jones (2000) needs more than 28 + 25·g1² = 28 "
        "cases for the per-case differences of pass rate (skewness g1 = 0); there are 12: with 12 cases the sample "
        "target (cases standing for a larger population of tasks) cannot support a winner for this skew; --cases "
        "fixed gives inference about these 12 cases only"
    ]
    withheld = report.summary.filter(pl.col("candidate") == "cand").item(0, "pass_rate_scored_ci_withheld")
    check = skew_check([8, 9, 7] * 4, [10] * 12)
    assert withheld.startswith(f"no interval: {check.refusal('per-case pass rates', 'an interval')}; with 12 cases")
    assert "cannot support an interval for this skew; --cases fixed gives inference about these 12 cases only" in (
        withheld
    )


def test_the_coverage_reason_says_declared_only_when_a_minimum_was_declared() -> None:
    # issue 42: "declared minimum 0.95" was printed when nothing was declared. A scored 2 of its 4 planned units.
    declared = compare(orbit_report(), baseline="B", candidate="A", min_coverage=0.9)
    assert declared.reasons[0] == "coverage: A scored_coverage 0.5 is below the declared minimum 0.9"
    assert declared.table.item(0, "min_coverage") == 0.9
    default = compare(orbit_report(), baseline="B", candidate="A")
    assert default.table.item(0, "min_coverage") == 0.95  # the default, still a number in the table


def test_checks_that_hold_are_listed_apart_from_the_reasons_in_every_output() -> None:
    # 20 cases: cand passes 18, base 2, one missing row each: the interval supports cand and the tipping point
    # holds (test above), so both are checks passed; the bounds and the sample are what qualify the verdict.
    report = lopsided(20, base_pass=2, cand_pass=18, base_missing=1, cand_missing=1)
    c = compare(report, baseline="base", candidate="cand", min_coverage=0.9)
    tipping = c.checks_passed[1]
    assert tipping.startswith("tipping point: the difference stays on its side")
    assert all(not r.startswith("tipping point") for r in c.reasons)
    console = Console(file=io.StringIO(), width=250, color_system=None)
    print_view(report.view(c), console)
    terminal = console.file.getvalue()  # type: ignore[attr-defined]
    # the reasons, then "checks passed:" and the checks, each once
    assert terminal.count(tipping) == 1
    last = c.reasons[-1][:40]  # the terminal wraps a long reason
    assert terminal.index(last) < terminal.index("checks passed:") < terminal.index(tipping)
    markdown = report.to_markdown(c)
    assert markdown.count(tipping) == 1
    assert markdown.index(c.reasons[-1]) < markdown.index("Checks passed:") < markdown.index(tipping)
    page = report.to_html(c)
    assert page.count(html.escape(tipping, quote=False)) == 1
    assert page.index("Checks passed:") < page.index(html.escape(tipping, quote=False))
    doc = json.loads(report.to_json(c))["comparison"]
    assert (doc["reasons"], doc["checks_passed"]) == (c.reasons, c.checks_passed)
