"""Trial-aware flips between two candidates (SPEC §6c, issue 43 item 2): exact tests, Holm, classes."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

import evalframe as ef
from evalframe.compare.flips import classify_cases, fisher_p, smallest_p
from tests.conftest import readme_example


def _hypergeometric_p(bk: int, bn: int, ck: int, cn: int) -> float:
    """Fisher's two-sided p written out: the tables with the same margins no more likely than the one seen."""
    passes, total = bk + ck, bn + cn
    prob = [comb(bn, x) * comb(cn, passes - x) for x in range(max(0, passes - cn), min(bn, passes) + 1)]
    seen = comb(bn, bk) * comb(cn, ck)
    return sum(p for p in prob if p <= seen) / comb(total, passes)


def test_fisher_p_matches_the_hypergeometric_sum() -> None:
    # 6/10 vs 4/10: every table but 5/10 vs 5/10 (252² of C(20,10) = 184756) is as or less likely.
    assert fisher_p(6, 10, 4, 10) == pytest.approx(1 - 252**2 / 184756, rel=1e-12)
    # 4/4 vs 0/4: the two extreme tables of C(8,4) = 70.
    assert fisher_p(4, 4, 0, 4) == pytest.approx(2 / 70, rel=1e-12)
    assert smallest_p(3, 3) == pytest.approx(2 / 20, rel=1e-12)
    for table in [(3, 7, 0, 5), (1, 2, 2, 9), (9, 10, 2, 10), (0, 3, 3, 3)]:
        assert fisher_p(*table) == pytest.approx(_hypergeometric_p(*table), rel=1e-9), table


def _counts(rows: list[tuple[str, int, int, int, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema=["case_id", "baseline_k", "baseline_n", "candidate_k", "candidate_n"], orient="row"
    )


def test_six_of_ten_against_four_of_ten_is_flaky_not_regressed() -> None:
    out = classify_cases(_counts([("c", 6, 10, 4, 10)])).row(0, named=True)
    assert out["flip_class"] == "flaky"
    assert out["p_value"] == pytest.approx(1 - 252**2 / 184756, rel=1e-12)
    assert out["p_holm"] == out["p_value"]  # a family of one


def test_a_side_with_no_scored_trial_is_incomparable_and_names_the_side() -> None:
    out = classify_cases(_counts([("a", 5, 5, 0, 0), ("b", 0, 0, 0, 4), ("c", 0, 0, 0, 0)]))
    assert out.get_column("flip_class").to_list() == ["incomparable"] * 3
    assert out.get_column("incomparable_side").to_list() == ["candidate", "baseline", "both"]
    assert out.get_column("p_value").null_count() == 3


def test_holm_adjusts_across_the_cases_that_can_differ_and_names_the_direction() -> None:
    rows = [
        ("reg", 10, 10, 0, 10),
        ("fix", 0, 10, 10, 10),
        ("mid", 8, 10, 3, 10),
        ("sp", 4, 4, 4, 4),
        ("sf", 0, 3, 0, 5),
    ]
    out = classify_cases(_counts(rows), alpha=0.05)
    extreme = 2 / comb(20, 10)
    mid = _hypergeometric_p(8, 10, 3, 10)
    assert out.get_column("flip_class").to_list() == ["regressed", "fixed", "flaky", "stable_pass", "stable_fail"]
    # Family of 3 (the stable cases are outside it): extreme p-values ×3 then ×2, the largest ×1, monotone.
    assert out.get_column("p_holm").to_list() == pytest.approx([3 * extreme, 3 * extreme, max(mid, 2 * extreme), 1, 1])
    assert mid > 0.05


def test_one_trial_per_side_can_never_be_significant() -> None:
    many = _counts([(f"c{i}", 1, 1, 0, 1) for i in range(50)])
    out = classify_cases(many)
    assert set(out.get_column("flip_class").to_list()) == {"flaky"}
    assert set(out.get_column("p_value").to_list()) == {1.0}


def _simulate(rng: np.random.Generator, cases: int, trials: int, shift: float = 0.0) -> pl.DataFrame:
    p = rng.beta(2, 2, size=cases)
    b = rng.binomial(trials, p)
    c = rng.binomial(trials, np.clip(p + shift, 0, 1))
    return pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(cases)],
            "baseline_k": b,
            "baseline_n": [trials] * cases,
            "candidate_k": c,
            "candidate_n": [trials] * cases,
        }
    )


@pytest.mark.parametrize(("cases", "trials", "seeds"), [(200, 10, 300), (2, 40, 1000)])
def test_no_true_change_classes_at_most_alpha_of_cases_fixed_or_regressed(cases: int, trials: int, seeds: int) -> None:
    # Each case's pass rate from Beta(2, 2), the same for both sides. 200 cases × 10 trials is the brief's
    # design; 2 cases × 40 trials is one where Holm's bound comes close to alpha (measured 0.03 on 1000 seeds).
    alpha = 0.05
    shares, any_false = [], 0
    for seed in range(seeds):
        out = classify_cases(_simulate(np.random.default_rng(seed), cases, trials), alpha=alpha)
        false = out.filter(pl.col("flip_class").is_in(["fixed", "regressed"])).height
        shares.append(false / cases)
        any_false += false > 0
    # Holm bounds the family-wise error by alpha, so the share of cases too; 3 binomial SE of Monte Carlo slack.
    assert any_false / seeds <= alpha + 3 * (alpha * (1 - alpha) / seeds) ** 0.5
    assert float(np.mean(shares)) <= alpha


def test_a_real_regression_is_found() -> None:
    # Power check, so the null test above can fail: cases that drop from ~0.95 to ~0.05 are regressed.
    rng = np.random.default_rng(7)
    counts = _counts([(f"r{i}", int(rng.binomial(10, 0.95)), 10, int(rng.binomial(10, 0.05)), 10) for i in range(5)])
    out = classify_cases(counts)
    assert out.get_column("flip_class").to_list() == ["regressed"] * 5


def _report(trials: int, rows: list[tuple[str, str, int, int]]) -> ef.AuditReport:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q", "r", "s"]}), candidates=["A", "B"], trials=trials)
    return ef.audit(plan, pl.DataFrame(rows, schema=["candidate", "case_id", "trial", "passed"], orient="row"))


def test_compare_classes_each_case_and_counts_the_classes() -> None:
    rows = []
    for t in range(1, 5):
        rows += [("A", "q", t, 1), ("B", "q", t, 1), ("A", "r", t, 1), ("B", "r", t, t % 2), ("A", "s", t, 1)]
    c = ef.compare(_report(4, rows), baseline="A", candidate="B", min_coverage=0)
    flips = c.case_flips
    assert flips.columns[:5] == ["case_id", "baseline_k", "baseline_n", "candidate_k", "candidate_n"]
    assert flips.select("case_id", "baseline_k", "baseline_n", "candidate_k", "candidate_n", "flip_class").rows() == [
        ("q", 4, 4, 4, 4, "stable_pass"),
        ("r", 4, 4, 2, 4, "flaky"),
        ("s", 4, 4, 0, 0, "incomparable"),
    ]
    # r: 4/4 vs 2/4, P = (C(4,4)C(4,2) + C(4,2)C(4,4)) / C(8,6) = 12/28.
    assert flips.item(1, "p_value") == pytest.approx(12 / 28, rel=1e-12)
    assert c.flip_counts == {
        "stable_pass": 1, "stable_fail": 0, "fixed": 0, "regressed": 0, "flaky": 1, "incomparable": 1,
    }  # fmt: skip
    assert c.flips_note is None  # 4 trials per side can reach 2/70 < 0.05


def test_compare_with_one_trial_says_a_regression_cannot_be_shown() -> None:
    c = ef.compare(_report(1, [("A", "q", 1, 1), ("B", "q", 1, 0), ("A", "r", 1, 0), ("B", "r", 1, 0)]),
                   baseline="A", candidate="B", min_coverage=0)  # fmt: skip
    assert c.case_flips.get_column("flip_class").to_list() == ["flaky", "stable_fail", "incomparable"]
    assert c.flips_note == (
        "no case can be classed fixed or regressed: with 1 scored trial per side the smallest p-value of Fisher's "
        "exact test is 1 (not below alpha 0.05); a single trial per side cannot show a regression, so a pass that "
        "became a fail is flaky"
    )


def test_compare_writes_flips_parquet(tmp_path: Path) -> None:
    report = _report(1, [("A", "q", 1, 1), ("B", "q", 1, 0)])
    c = ef.compare(report, baseline="A", candidate="B", min_coverage=0)
    report.write(tmp_path / "out", comparison=c)
    written = pl.read_parquet(tmp_path / "out" / "flips.parquet")
    assert written.select("case_id", "flip_class", "incomparable_side").rows() == [
        ("q", "flaky", None),
        ("r", "incomparable", "both"),
        ("s", "incomparable", "both"),
    ]
    assert pq.read_metadata(tmp_path / "out" / "flips.parquet").metadata[b"evalframe.table"] == b"flips"


def test_the_readme_example_prints_what_the_readme_says(capsys: pytest.CaptureFixture[str]) -> None:
    code, shown = readme_example("flips-example")
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own example, run as written
    assert capsys.readouterr().out == shown
    # The classes follow from the counts: 6/10 vs 4/10 is noise; 10/10 vs 0/10 has p = 2 / C(20, 10), ×2 by Holm
    # over the two unstable cases; 10/10 twice is stable; d has no scored trial for the candidate.
    assert f"('b', 10, 10, 0, 10, {round(2 * 2 / comb(20, 10), 6)}, 'regressed', None)" in shown
    assert "('a', 6, 10, 4, 10, " in shown and "'flaky', None)" in shown
    assert "('d', 7, 10, 0, 0, None, 'incomparable', 'candidate')" in shown


def test_compare_of_one_task_puts_the_task_first_in_its_flips() -> None:
    cases = pl.DataFrame({"case_id": ["b/1", "d/1"], "task": ["belief", "desire"]})
    plan = ef.Plan.from_frame(cases, candidates=["A", "B"])
    ledger = pl.DataFrame(
        {"candidate": ["A", "B", "A", "B"], "case_id": ["b/1", "b/1", "d/1", "d/1"], "passed": [1, 0, 1, 1]}
    )
    c = ef.compare(ef.audit(plan, ledger), baseline="A", candidate="B", task="belief", min_coverage=0)
    assert c.case_flips.select("task", "case_id", "flip_class").rows() == [("belief", "b/1", "flaky")]


def test_the_command_line_compare_writes_and_prints_the_case_classes(tmp_path: Path) -> None:
    from tests.report.test_formats import COMPARE, run

    out = tmp_path / "out"
    code, stdout, _ = run([*COMPARE, "--out", str(out)])
    assert code == 0
    # Orbit Desk, baseline B, candidate A, one trial: quote and refund pass on both sides; A has no row for
    # privacy and handoff, so those are incomparable on the candidate's side, never regressed.
    flips = pl.read_parquet(out / "flips.parquet")
    assert flips.select("case_id", "flip_class", "incomparable_side").sort("case_id").rows() == [
        ("handoff", "incomparable", "candidate"),
        ("privacy", "incomparable", "candidate"),
        ("quote", "stable_pass", None),
        ("refund", "stable_pass", None),
    ]
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))["comparison"]["case_flips"]
    assert doc["counts"] == {
        "stable_pass": 2, "stable_fail": 0, "fixed": 0, "regressed": 0, "flaky": 0, "incomparable": 2,
    }  # fmt: skip
    assert doc["note"].startswith("no case can be classed fixed or regressed: with 1 scored trial per side")
    assert doc["fixed_or_regressed"] == []
    assert "cases by flip class, trial-aware (4)" in stdout
    assert "### Cases by flip class (trial-aware)" in (out / "report.md").read_text(encoding="utf-8")
