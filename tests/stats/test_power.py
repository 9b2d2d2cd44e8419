"""Power and minimum detectable difference (SPEC §6a): the power is that of the test compare runs."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy.stats import binom, multinomial, nct
from scipy.stats import t as student_t

import evalframe as ef
from evalframe.compare import compare
from evalframe.errors import OptionError
from evalframe.stats import (
    achieved_power,
    bounded_mean_interval,
    cases_needed,
    check_confidence,
    detectable_difference,
    mcnemar_exact,
    pair_correlation_at,
    pair_correlation_limit,
    paired_rate_difference,
)
from evalframe.stats.detectable import EXACT_MCNEMAR_CASES, _mcnemar_critical, _power_mcnemar
from evalframe.stats.power import power


def _cells(rate: float, d: float, phi: float) -> tuple[float, float, float]:
    """(p11, p10, p01) written out: p11 = p(p + d) + φ·sqrt(p(1 − p)(p + d)(1 − p − d))."""
    p11 = rate * (rate + d) + phi * math.sqrt(rate * (1 - rate) * (rate + d) * (1 - rate - d))
    return p11, rate + d - p11, rate - p11


def _exact_rejection(cases: int, rate: float, d: float, phi: float) -> float:
    """The probability, summed over every table, that the exact McNemar test rejects on d's side.

    Written out for either sign (no mirroring): for a drop the baseline-only pairs must outnumber and reject.
    """
    p11, p10, p01 = _cells(rate, d, phi)
    total = 0.0
    for n10 in range(cases + 1):
        for n01 in range(cases + 1 - n10):
            if (n10 > n01 if d > 0 else n01 > n10) and mcnemar_exact(n10, n01) < 0.05:
                rest = cases - n10 - n01
                total += float(multinomial.pmf([n10, n01, rest], cases, [p10, p01, 1 - p10 - p01]))
    return total


@pytest.mark.parametrize(
    ("cases", "rate", "d", "phi"),
    [
        (12, 0.4, 0.25, 0.2),
        (17, 0.5, 0.3, 0.0),
        (9, 0.2, 0.5, 0.1),
        (12, 0.6, -0.25, 0.2),
        (20, 0.9, -0.45, 0.0),
        (9, 0.8, -0.5, 0.1),
    ],
)
def test_one_trial_power_is_the_exact_mcnemar_rejection_probability_over_every_table(
    cases: int, rate: float, d: float, phi: float
) -> None:
    total = _exact_rejection(cases, rate, d, phi)
    assert total > 0.05
    assert achieved_power(d, cases, 1, rate=rate, pair_correlation=phi) == pytest.approx(total, abs=1e-12)


@pytest.mark.parametrize(
    ("cases", "trials", "icc", "r"), [(20, 1, 0.0, 0.0), (30, 1, 0.3, 0.25), (40, 4, 0.3, 0.5), (12, 10, 0.6, 0.0)]
)
def test_a_drop_from_p_has_the_power_of_a_rise_from_1_minus_p(cases: int, trials: int, icc: float, r: float) -> None:
    for rate, d in ((0.9, 0.45), (0.7, 0.2), (0.55, 0.5), (0.2, 0.15)):
        drop = achieved_power(-d, cases, trials, rate=rate, icc=icc, pair_correlation=r)
        rise = achieved_power(d, cases, trials, rate=1 - rate, icc=icc, pair_correlation=r)
        assert drop == pytest.approx(rise, abs=1e-12), rate


def test_the_mde_is_the_smallest_difference_either_way() -> None:
    # The user's case: 20 cases × 1 trial. From 0.9 a rise has 10 points of room, and even +0.1 (the candidate
    # always passes: the discordant pairs are Binomial(20, 0.1), rejecting from 6 on) has power 0.011; a drop of
    # 45.1 points has 80 %, exactly the rise detectable from 0.1.
    high, low = detectable_difference(20, 1, rate=0.9), detectable_difference(20, 1, rate=0.1)
    assert high.difference == pytest.approx(low.difference, abs=1e-12)
    assert high.difference == pytest.approx(0.450706, abs=5e-7)
    assert (high.rise, high.drop, high.direction) == (None, high.difference, "drop")
    assert (low.rise, low.drop, low.direction) == (low.difference, None, "rise")
    assert achieved_power(0.1, 20, 1, rate=0.9) == pytest.approx(float(binom.sf(5, 20, 0.1)), abs=1e-12)
    assert achieved_power(-high.difference, 20, 1, rate=0.9) == pytest.approx(0.8, abs=1e-8)
    # At ½ the two directions are the same computation.
    half = detectable_difference(200, 1, rate=0.5)
    assert (half.rise, half.drop, half.direction) == (half.difference, half.difference, "either")
    # At 0.3 a drop (away from ½) is easier: 12.4 points against 14.0 for a rise, the rise and drop of 0.7.
    below, above = detectable_difference(200, 1, rate=0.3), detectable_difference(200, 1, rate=0.7)
    assert (below.drop, below.rise) == (pytest.approx(0.123723, abs=5e-7), pytest.approx(0.139915, abs=5e-7))
    assert below.difference == below.drop
    assert (above.rise, above.drop) == (pytest.approx(below.drop, abs=1e-12), pytest.approx(below.rise, abs=1e-12))
    for trials, icc in ((3, 0.3), (10, 0.5)):
        several = detectable_difference(30, trials, rate=0.85, icc=icc)
        mirror = detectable_difference(30, trials, rate=0.15, icc=icc)
        assert (several.drop, several.rise) == (
            pytest.approx(mirror.rise, abs=1e-12),
            pytest.approx(mirror.drop, abs=1e-12),
        )
    # cases needed for a drop: those for the rise of as much from 1 − rate.
    assert cases_needed(-0.10, 1, rate=0.8) == cases_needed(0.10, 1, rate=0.2) == 313
    assert cases_needed(-0.10, 3, rate=0.8, icc=0.3) == cases_needed(0.10, 3, rate=0.2, icc=0.3)


def test_critical_counts_are_those_of_mcnemar_exact() -> None:
    n = np.arange(0, 81)
    critical = _mcnemar_critical(n, 0.05)
    for k, j in zip(n.tolist(), critical.tolist(), strict=True):
        rejecting = [b for b in range(k + 1) if 2 * b < k and mcnemar_exact(b, k - b) < 0.05]
        assert j == (max(rejecting) if rejecting else -1), k
    assert critical[:6].tolist() == [-1, -1, -1, -1, -1, -1]  # five discordant pairs never reject at 0.05
    assert critical[6] == 0  # 6 to 0: p = 2/64


@pytest.mark.parametrize("cases", [12, 20, 30])
def test_newcombe_excludes_zero_whenever_the_exact_test_rejects(cases: int) -> None:
    # compare needs both; with one trial per case the exact test is the binding one, so its power is the rule's.
    critical = _mcnemar_critical(np.arange(cases + 1), 0.05)
    tables = 0
    for n in range(cases + 1):
        for n01 in range(int(critical[n]) + 1):
            n10 = n - n01
            for n11 in range(cases - n + 1):
                n00 = cases - n - n11
                cand = [1] * (n11 + n10) + [0] * (n01 + n00)
                base = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00
                low = paired_rate_difference(cand, base, range(cases)).ci_low
                assert low is not None and low > 0, (n11, n10, n01, n00)
                tables += 1
    assert tables == {12: 39, 20: 275, 30: 1139}[cases]


def test_the_bounded_interval_excludes_zero_exactly_when_the_t_rule_says_so() -> None:
    # Balanced cases: Wilson on n_eff = (1 − D̄²)/V excludes 0 iff D̄·sqrt(1 − D̄²)/sqrt(V) > t(G − 1).
    rng = np.random.default_rng(23)
    agreed = 0
    for _ in range(300):
        g, k = int(rng.integers(3, 40)), int(rng.integers(2, 8))
        shift = rng.uniform(0, 0.4)
        b = rng.random((g, k)) < 0.5
        c = rng.random((g, k)) < 0.5 + shift
        d = (c.astype(float) - b.astype(float)).sum(axis=1)
        est = bounded_mean_interval(d, np.full(g, k), low=-1.0, high=1.0)
        mean = d.sum() / (g * k)
        v = float(np.var(d / k, ddof=1)) / g
        if v == 0 or abs(mean) == 1:
            continue
        rule = mean * math.sqrt(1 - mean * mean) / math.sqrt(v) > float(student_t.ppf(0.975, g - 1))
        assert est.ci_low is not None
        assert (est.ci_low > 0) == rule
        agreed += 1
    assert agreed > 250


def test_several_trials_power_is_the_noncentral_t_written_out() -> None:
    # 100 cases × 5 trials, p = 0.5, d = 0.06, ρ = 0.3, r = 0.6.
    g, k, p, d, rho, r = 100, 5, 0.5, 0.06, 0.3, 0.6
    shrink = rho + (1 - rho) / k
    sb, sc = math.sqrt(p * (1 - p) * shrink), math.sqrt((p + d) * (1 - p - d) * shrink)
    sd = math.sqrt(sb**2 + sc**2 - 2 * r * sb * sc)
    expected = nct.sf(student_t.ppf(0.975, g - 1) / math.sqrt(1 - d * d), g - 1, d * math.sqrt(g) / sd)
    assert achieved_power(d, g, k, rate=p, icc=rho, pair_correlation=r) == pytest.approx(float(expected), abs=1e-12)


@pytest.mark.parametrize(
    ("cases", "trials", "rate", "icc", "r", "expected"),
    [
        (200, 1, 0.5, 0.0, 0.0, 0.143386),
        (30, 1, 0.5, 0.3, 0.268, 0.320135),
        (500, 1, 0.5, 0.3, 0.299, 0.075897),
        (100, 5, 0.5, 0.3, 0.679, 0.074913),
        (20, 20, 0.5, 0.3, 0.890, 0.089238),
        (200, 3, 0.5, 0.3, 0.0, 0.102095),
    ],
)
def test_the_mde_is_where_the_power_reaches_80_percent(
    cases: int, trials: int, rate: float, icc: float, r: float, expected: float
) -> None:
    found = detectable_difference(cases, trials, rate=rate, icc=icc, pair_correlation=r)
    assert found.difference == pytest.approx(expected, abs=5e-7)
    assert found.model == ("exact_mcnemar" if trials == 1 else "clustered_t")
    at = achieved_power(found.difference, cases, trials, rate=rate, icc=icc, pair_correlation=r)
    assert at == pytest.approx(0.8, abs=1e-8)
    assert achieved_power(0.98 * found.difference, cases, trials, rate=rate, icc=icc, pair_correlation=r) < 0.8


def test_what_changes_the_mde() -> None:
    one = detectable_difference(200, 1, rate=0.5).difference
    assert one is not None
    # More cases, pairing, more trials (while ρ < 1) each make it smaller.
    assert detectable_difference(400, 1, rate=0.5).difference < one
    assert detectable_difference(200, 1, rate=0.5, pair_correlation=0.5).difference < one
    three = detectable_difference(200, 3, rate=0.5, icc=0.3).difference
    assert three < one
    # With ρ = 1 a case's trials are one observation: 2 or 20 trials detect the same.
    assert detectable_difference(200, 20, rate=0.5, icc=1.0).difference == pytest.approx(
        detectable_difference(200, 2, rate=0.5, icc=1.0).difference, abs=1e-9
    )
    # Five cases × one trial: even 0 → 1 on every case is not significant (p = 1/16): nothing is detectable.
    assert detectable_difference(5, 1, rate=0.5).difference is None
    assert detectable_difference(1, 10).difference is None
    found = detectable_difference(200, 3, rate=0.5, icc=0.3)
    assert (found.design_effect, found.case_sd) == (pytest.approx(1.6), pytest.approx(math.sqrt(0.5 * 1.6 / 3)))


def test_cases_needed_is_the_inverse() -> None:
    needed = cases_needed(0.10, 1, rate=0.5)
    assert needed == 408
    assert achieved_power(0.10, needed, 1, rate=0.5) >= 0.8 > achieved_power(0.10, needed - 1, 1, rate=0.5)
    assert cases_needed(0.10, 5, rate=0.5, icc=0.3) == 173
    assert cases_needed(0.001, 1, most=1000) is None
    with pytest.raises(ValueError) as info:
        cases_needed(0.6, 1, rate=0.5)
    assert str(info.value) == "difference must be in [-rate, 0) or (0, 1 - rate] = [-0.5, 0) or (0, 0.5], got 0.6"
    with pytest.raises(ValueError) as info:
        achieved_power(-0.95, 20, 1, rate=0.9)
    assert str(info.value) == "difference must be in [-rate, 1 - rate] = [-0.9, 0.1], got -0.95"
    with pytest.raises(ValueError, match=r"rate must be in \(0.0, 1.0\), got 1.0"):
        detectable_difference(10, rate=1.0)


def test_pair_correlation_across_trials() -> None:
    # r_K = r·(ρ + (1 − ρ)/K₀)/(ρ + (1 − ρ)/K): 0.2 at 1 trial, ρ 0.3 → 0.2 / (0.3 + 0.7/3) at 3.
    assert pair_correlation_at(0.2, icc=0.3, measured_at=1, trials=3) == pytest.approx(0.2 / (0.3 + 0.7 / 3))
    assert pair_correlation_limit(0.3, 1) == 0.3
    with pytest.raises(ValueError) as info:
        pair_correlation_at(0.4, icc=0.0, measured_at=1, trials=3)
    assert str(info.value) == (
        "a pair correlation of 0.4 at 1 trial per case needs an icc of at least 0.4 (got 0): the two "
        "candidates can share only the variance between cases"
    )


def test_power_plan_trades_trials_against_cases() -> None:
    plan = power(60, 2, rate=0.6, icc=0.2, pair_correlation=0.3, target_difference=0.15, trade_trials=[1, 3])
    # At 0.6 a rise (away from ½) is the easier direction: the MDE is the rise, and the drop is named too.
    d = plan.detectable
    assert (round(d.rise, 4), round(d.drop, 4), d.difference, d.direction) == (0.1568, 0.1677, d.rise, "either")
    assert plan.sentence() == (
        "with 60 cases × 2 trials you can detect a rise of 15.7 points or a drop of 16.8 points "
        "(80% power, two-sided α 0.05, baseline rate 0.6)"
    )
    rows = plan.trade.rows(named=True)
    assert [(r["basis"], r["trials"], r["cases"], r["units"]) for r in rows] == [
        ("same_cases", 1, 60, 60),
        ("same_cases", 2, 60, 120),
        ("same_cases", 3, 60, 180),
        ("same_budget", 1, 120, 120),
        ("same_budget", 2, 60, 120),
        ("same_budget", 3, 40, 120),
    ]
    for row in rows:
        r = pair_correlation_at(0.3, icc=0.2, measured_at=2, trials=row["trials"])
        assert row["pair_correlation"] == pytest.approx(r)
        found = detectable_difference(row["cases"], row["trials"], rate=0.6, icc=0.2, pair_correlation=r)
        assert row["detectable_difference"] == pytest.approx(found.difference)
        assert (row["detectable_rise"], row["detectable_drop"]) == (
            pytest.approx(found.rise),
            pytest.approx(found.drop),
        )
        assert row["cases_needed"] == cases_needed(0.15, row["trials"], rate=0.6, icc=0.2, pair_correlation=r)
    assert plan.cases_needed == rows[1]["cases_needed"]
    assert plan.to_dict()["trade"][0]["basis"] == "same_cases"
    with pytest.raises(OptionError, match="target_difference must be in") as info:
        power(60, 2, rate=0.6, target_difference=0.5)
    assert info.value.option == "target_difference"
    with pytest.raises(OptionError, match="cases must be a whole number of at least 2, got 1") as info:
        power(1, 2)
    assert info.value.option == "cases"


@pytest.mark.parametrize(
    ("call", "option"),
    [
        (lambda: power(50, rate=1.2), "rate"),
        (lambda: power(50, icc=-0.1), "icc"),
        (lambda: power(50, alpha=0.0), "alpha"),
        (lambda: power(50, power=1.0), "power"),
        (lambda: power(50, pair_correlation=0.4), "pair_correlation"),
        (lambda: power(50, 0), "trials"),
        (lambda: power(50, pair_trials=0.5), "pair_trials"),
        (lambda: power(50, trade_trials=[0, 1]), "trade_trials"),
        (lambda: power(), "cases"),
        (lambda: achieved_power(0.6, 20, rate=0.5), "difference"),
        (lambda: detectable_difference(20, pair_correlation=1.0), "pair_correlation"),
        # text and numbers beyond a float are refused as out of range (were TypeError from a comparison or scipy)
        (lambda: power(50, rate="0.5"), "rate"),  # type: ignore[arg-type]
        (lambda: power(50, icc="0.1"), "icc"),  # type: ignore[arg-type]
        (lambda: power(50, alpha="x"), "alpha"),  # type: ignore[arg-type]
        (lambda: power(50, pair_correlation="x"), "pair_correlation"),  # type: ignore[arg-type]
        (lambda: power(50, rate="x", target_difference=0.1), "rate"),  # type: ignore[arg-type]
        (lambda: power(50, target_difference="0.1"), "target_difference"),  # type: ignore[arg-type]
        (lambda: detectable_difference(20, trials="2"), "trials"),  # type: ignore[arg-type]
        (lambda: power(10**30), "cases"),
        (lambda: power(2**53 // 10 + 1), "trade_trials"),  # × 10 trials of the trade table: past 2**53 units
        (lambda: power(np.int64(10**18)), "cases"),  # × 10 wrapped negative in int64 and passed
        (lambda: power(50, 10**30), "trials"),
        (lambda: power(50, trade_trials=["x"]), "trade_trials"),  # type: ignore[list-item]
        (lambda: power(50, trade_trials=[1.5]), "trade_trials"),  # type: ignore[list-item]
        (lambda: power(50, trade_trials="25"), "trade_trials"),  # was read as trials 2 and 5
        (lambda: power(50, trade_trials=None), "trade_trials"),  # type: ignore[arg-type]
        (lambda: detectable_difference(10**400), "cases"),  # was OverflowError
        (lambda: achieved_power(0.1, 20, 1e300), "trials"),  # was nan
        (lambda: cases_needed(0.1, 2**60), "trials"),  # was 2 cases
        (lambda: check_confidence(10**400), "confidence"),  # was OverflowError
    ],
)
def test_a_refused_power_input_is_named_on_the_error(call: Callable[[], object], option: str) -> None:
    # The command picks its hint by the argument the library names, never by the words of the message.
    with pytest.raises(OptionError) as info:
        call()
    assert info.value.option == option


def test_numpy_integers_count_as_python_integers_in_the_trade() -> None:
    # np.int8(100) trials once made the same-budget trade 100 × 100 = 16 (int8 wrapped); it is 10,000 units
    trade = power(100, np.int8(100)).trade.filter(basis="same_budget")
    assert trade.select("trials", "cases", "units").rows() == [
        (1, 10_000, 10_000),
        (2, 5_000, 10_000),
        (3, 3_333, 9_999),
        (5, 2_000, 10_000),
        (10, 1_000, 10_000),
        (100, 100, 10_000),
    ]


def test_power_reads_what_is_not_given_from_an_earlier_summary_and_comparison() -> None:
    # An audit's summary row: 40 cases, 120 planned units (3 per case), pass rate 0.7, icc 1.3 (an estimate
    # above 1 is clamped to 1); a comparison at 2 pairs per case (90 pairs over 45 cases) whose 0.8 exceeds
    # what icc 1 allows at 2 trials (1/(1 + 0) = 1: it does not) and then what icc 0.2 allows (0.2/0.6 = 1/3).
    summary = {"candidate": "base", "cases_planned": 40, "planned": 120, "pass_rate_scored": 0.7, "icc": 1.3}
    row = {"pair_correlation": 0.8, "pairs_used": 90, "cases_used": 45}
    plan = power(baseline=summary, comparison=row)
    assert {k: plan.inputs[k] for k in ("cases", "trials", "rate", "icc", "pair_correlation", "pair_trials")} == {
        "cases": 40,
        "trials": 3,
        "rate": 0.7,
        "icc": 1.0,
        "pair_correlation": 0.8,
        "pair_trials": 2.0,
    }
    assert plan.sources == [
        "rate 0.7: base's pass_rate_scored",
        "icc 1: base's intra-case correlation",
        "pair correlation 0.8 at 2 pair(s) per case: the comparison's",
    ]
    given = power(30, 2, icc=0.2, baseline=summary, comparison=row)
    assert (given.inputs["cases"], given.inputs["trials"], given.inputs["icc"]) == (30, 2, 0.2)
    assert given.inputs["pair_correlation"] == pytest.approx(1 / 3)
    assert given.sources == [
        "rate 0.7: base's pass_rate_scored",
        "pair correlation 0.8 at 2 pair(s) per case: the comparison's",
        "pair correlation clamped to 0.3333, the most the icc allows",
    ]
    assert power(30, baseline=summary | {"icc": None}).sources[1] == (
        "icc not measured: base's summary has none (it needs a case with two scored units)"
    )
    assert power(30, 3, icc=0.3, pair_correlation=0.1, comparison={}).inputs["pair_correlation"] == 0.1
    for bad, option, reason in [
        ({"baseline": summary | {"pass_rate_scored": None}}, "baseline", "base's summary row has no pass_rate_scored"),
        ({"baseline": {"candidate": "b", "cases_planned": 0, "planned": 0}}, "baseline", "b's summary row has no"),
        ({"cases": 30, "comparison": {"pair_correlation": None}}, "comparison", "the comparison has no pair"),
    ]:
        with pytest.raises(OptionError) as info:
            power(**bad)
        assert (info.value.option, str(info.value)[: len(reason)]) == (option, reason)


def _batch(cases: int, trials: int, seed: int) -> tuple[ef.Plan, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:03d}" for i in range(cases)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=["base", "cand"], trials=trials)
    p = rng.beta(1.5, 1.5, size=cases)
    frames = [
        pl.DataFrame(
            {
                "candidate": name,
                "case_id": np.repeat(ids, trials),
                "trial": np.tile(np.arange(1, trials + 1), cases),
                "passed": (rng.random((cases, trials)) < p[:, None]).astype(np.int64).ravel(),
            }
        )
        for name in ("base", "cand")
    ]
    return plan, pl.concat(frames)


def test_no_supported_winner_says_what_the_batch_could_have_detected() -> None:
    cases = [f"q{i:02d}" for i in range(40)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = [{"candidate": "base", "case_id": c, "passed": int(i % 2 == 0)} for i, c in enumerate(cases)]
    rows += [{"candidate": "cand", "case_id": c, "passed": int(i % 2 == 0 or i == 1)} for i, c in enumerate(cases)]
    c = compare(ef.audit(plan, pl.DataFrame(rows)), baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    row = c.table.row(0, named=True)
    base = np.array([float(i % 2 == 0) for i in range(40)])
    cand = np.array([float(i % 2 == 0 or i == 1) for i in range(40)])
    assert row["pair_correlation"] == pytest.approx(float(np.corrcoef(cand, base)[0, 1]))
    # One trial per case: the exact McNemar model, icc unused; base rate 0.5 over the 40 pairs.
    expected = detectable_difference(40, 1, rate=0.5, pair_correlation=row["pair_correlation"]).difference
    assert expected == pytest.approx(0.190464, abs=5e-7)
    assert row["detectable_difference"] == pytest.approx(expected)
    assert c.reasons[-1] == (
        "power: with 40 cases this batch could have detected a difference of 0.19 in pass rate (19.0 points) "
        "with 80% power (SPEC §6a); smaller differences may be missed"
    )
    assert json.loads(ef.audit(plan, pl.DataFrame(rows)).to_json(c))["comparison"]["detectable_difference"] == (
        pytest.approx(expected)
    )


def _one_trial(cases: int, base: list[int], cand: list[int]) -> ef.AuditReport:
    ids = [f"q{i:02d}" for i in range(cases)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=["base", "cand"])
    rows = [{"candidate": "base", "case_id": c, "passed": v} for c, v in zip(ids, base, strict=True)]
    rows += [{"candidate": "cand", "case_id": c, "passed": v} for c, v in zip(ids, cand, strict=True)]
    return ef.audit(plan, pl.DataFrame(rows))


def test_near_a_rate_of_1_the_batch_could_have_detected_a_drop() -> None:
    # The evalscope example's shape: 20 cases, base fails q00 and q01, cand only q00 (18 vs 19 passed). A rise
    # from 0.9 has 10 points of room; a drop is detectable, and the reason says it is one.
    report = _one_trial(20, [int(i >= 2) for i in range(20)], [int(i != 0) for i in range(20)])
    c = compare(report, baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    r = c.table.item(0, "pair_correlation")
    found = detectable_difference(20, 1, rate=0.9, pair_correlation=r)
    assert (found.rise, found.direction) == (None, "drop")
    assert found.drop == pytest.approx(0.366459, abs=5e-7)
    assert c.table.item(0, "detectable_difference") == found.drop
    assert c.reasons[-1] == (
        "power: with 20 cases this batch could have detected a difference of 0.366 in pass rate (36.6 points) "
        "with 80% power (SPEC §6a) only with cand below base: base passes 90% of these pairs, which leaves room "
        "for a rise of at most 10.0 points, too little to detect; smaller differences may be missed"
    )
    # Swapped roles, the baseline at 0.95: only a rise of cand (now the 18-pass side) over it is out of reach.
    swapped = compare(report, baseline="cand", candidate="base")
    assert swapped.reasons[-1].endswith(
        "only with base below cand: cand passes 95% of these pairs, which leaves room for a rise of at most "
        "5.0 points, too little to detect; smaller differences may be missed"
    )


def test_when_a_rise_and_a_drop_differ_the_reason_gives_both() -> None:
    # 60 cases, base passes every 4th (0.25), cand every 5th: a drop (away from ½) is the easier one to detect.
    c = compare(_one_trial(60, [int(i % 4 == 0) for i in range(60)], [int(i % 5 == 0) for i in range(60)]),
                baseline="base", candidate="cand")  # fmt: skip
    found = detectable_difference(60, 1, rate=0.25, pair_correlation=c.table.item(0, "pair_correlation"))
    assert (found.drop, found.rise) == (pytest.approx(0.193006, abs=5e-7), pytest.approx(0.265579, abs=5e-7))
    assert c.table.item(0, "detectable_difference") == pytest.approx(found.drop, abs=1e-12)
    assert c.reasons[-1] == (
        "power: with 60 cases this batch could have detected a difference of 0.193 in pass rate (19.3 points) "
        "with cand below base, or of 0.266 (26.6 points) with it above, with 80% power (SPEC §6a); smaller "
        "differences may be missed"
    )


def test_with_several_trials_compare_uses_the_clustered_model_and_the_summary_icc() -> None:
    plan, ledger = _batch(30, 4, seed=4)
    report = ef.audit(plan, ledger)
    c = compare(report, baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    row = c.table.row(0, named=True)
    base = report.summary.filter(pl.col("candidate") == "base").row(0, named=True)
    # The summary gives icc, design_effect and effective_n (Kish: icc = (deff − 1)/(m − 1), n_eff = n/deff).
    assert base["icc"] == pytest.approx((base["design_effect"] - 1) / 3)
    assert base["effective_n"] == pytest.approx(120 / base["design_effect"])
    rate = float(ledger.filter(pl.col("candidate") == "base").get_column("passed").mean())
    expected = detectable_difference(
        30, 4, rate=rate, icc=base["icc"], pair_correlation=row["pair_correlation"], alpha=0.05
    )
    assert expected.model == "clustered_t"
    assert row["detectable_difference"] == pytest.approx(expected.difference)
    assert f"({100 * expected.difference:.1f} points)" in c.reasons[-1]


def test_too_few_cases_to_detect_anything_is_said() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": list("wxyz")}), candidates=["base", "cand"])
    ledger = pl.DataFrame(
        {"candidate": ["base"] * 4 + ["cand"] * 4, "case_id": list("wxyz") * 2, "passed": [1, 1, 0, 0, 1, 1, 1, 0]}
    )
    c = compare(ef.audit(plan, ledger), baseline="base", candidate="cand")
    assert c.table.item(0, "detectable_difference") is None
    assert c.reasons[-1] == (
        "power: with 4 cases this batch could not have detected any difference in pass rate with 80% power "
        "(SPEC §6a): too few cases"
    )


def _no_power_reason(n: int) -> str:
    return (
        f"power: with {n} case{'' if n == 1 else 's'} this batch could not have detected any difference in pass "
        "rate with 80% power (SPEC §6a): too few cases"
    )


@pytest.mark.parametrize(
    ("base", "cand"),
    [
        ([1, 1], [1, 1]),  # Orbit Desk's used pairs: the baseline's rate is 1
        ([0, 0], [1, 1]),  # the HELM example: 0, and the interval excludes zero
        ([1, 0], [1, 1]),  # a rate of ½
        ([1, 0, 0], [1, 1, 0]),
    ],
)
def test_two_or_three_cases_say_nothing_was_detectable(base: list[int], cand: list[int]) -> None:
    # Two or three discordant pairs at most: the exact test needs 6, all one way, to reject at 0.05.
    c = compare(_one_trial(len(base), base, cand), baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    assert c.table.item(0, "detectable_difference") is None
    assert c.reasons[-1] == _no_power_reason(len(base))


def test_one_case_or_none_says_nothing_was_detectable() -> None:
    # One case of ten trials: no interval, so no winner, whatever the difference.
    from tests.test_compare import trials_report

    c = compare(trials_report([(10, 0)], 10), baseline="base", candidate="cand")
    assert (c.verdict, c.table.item(0, "detectable_difference")) == ("no_supported_winner", None)
    assert c.reasons[-1] == _no_power_reason(1)
    # No pair graded on both sides.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["base", "cand"])
    ledger = pl.DataFrame({"candidate": ["base", "cand"], "case_id": ["a", "b"], "passed": [1, 1]})
    none = compare(ef.audit(plan, ledger), baseline="base", candidate="cand", min_coverage=0.0)
    assert none.reasons[-3:] == [
        "interval: no pair has a grade on both sides",
        "bounds overlap: cand [0.5, 1] vs base [0.5, 1]",
        _no_power_reason(0),
    ]


def test_a_baseline_passing_every_pair_can_still_detect_a_drop() -> None:
    # 20 cases, base passes all, cand 19: from a rate of 1 only a drop is possible, detectable from 36.6
    # points (the discordant pairs are Binomial(20, d), all for base, rejecting from 6 on).
    c = compare(_one_trial(20, [1] * 20, [int(i != 0) for i in range(20)]), baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    assert c.table.item(0, "detectable_difference") == pytest.approx(0.366459, abs=5e-7)
    assert float(binom.sf(5, 20, c.table.item(0, "detectable_difference"))) == pytest.approx(0.8, abs=1e-8)
    assert c.reasons[-1] == (
        "power: with 20 cases this batch could have detected a difference of 0.366 in pass rate (36.6 points) "
        "with 80% power (SPEC §6a) only with cand below base: base passes every one of these pairs: no rise is "
        "possible; smaller differences may be missed"
    )
    # The mirror: a baseline failing every pair, only a rise.
    up = compare(_one_trial(20, [0] * 20, [int(i == 0) for i in range(20)]), baseline="base", candidate="cand")
    assert up.table.item(0, "detectable_difference") == pytest.approx(0.366459, abs=5e-7)
    assert "only with cand above base: base fails every one of these pairs: no drop is possible;" in up.reasons[-1]


def test_mean_scores_say_the_power_is_not_modelled() -> None:
    # 30 cases: more than the 28 the skewness rule needs at least (with 28 or fewer it says so instead).
    cases = [f"q{i}" for i in range(30)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = [{"candidate": n, "case_id": c, "score": 0.5 + 0.01 * ((i * 7 + k) % 5)}
            for k, n in enumerate(("base", "cand")) for i, c in enumerate(cases)]  # fmt: skip
    c = compare(ef.audit(plan, pl.DataFrame(rows), grade="numeric"), baseline="base", candidate="cand")
    assert (c.verdict, c.table.item(0, "detectable_difference")) == ("no_supported_winner", None)
    assert c.reasons[-1] == (
        "power: not estimated for a difference of mean scores: the power of SPEC §6a is that of a difference in "
        "pass rate (declare a pass threshold to compare pass rates)"
    )


def _connor(cases: int, rate: float, d: float, phi: float) -> float:
    """Connor's (1987) normal approximation of the one-sided McNemar power, written out."""
    from scipy.stats import norm

    _, p10, p01 = _cells(rate, d, phi)
    psi, shift = p10 + p01, p10 - p01
    return float(norm.cdf((math.sqrt(cases) * shift - norm.ppf(0.975) * math.sqrt(psi)) / math.sqrt(psi - shift**2)))


@pytest.mark.parametrize(("rate", "phi"), [(0.5, 0.0), (0.9, 0.3), (0.2, 0.5)])
def test_beyond_the_exact_range_the_one_trial_power_is_connors_approximation(rate: float, phi: float) -> None:
    # Bounded work: the exact sum has ~16·sqrt(G) terms, evaluated dozens of times per search.
    for k in (1.0, 2.5, 3.5):
        at = EXACT_MCNEMAR_CASES
        d = k * math.sqrt(rate * (1 - rate) / at)
        exact = _power_mcnemar(at, rate, d, phi, 0.05)
        assert abs(exact - _connor(at, rate, d, phi)) < 0.004  # the documented agreement where they meet
        big = 10 * at
        d = k * math.sqrt(rate * (1 - rate) / big)
        assert _power_mcnemar(big, rate, d, phi, 0.05) == pytest.approx(_connor(big, rate, d, phi), abs=1e-12)


def test_with_one_trial_per_case_power_from_an_audit_and_its_comparison_is_what_compare_could_detect() -> None:
    # One trial per case shows no icc, and the McNemar power uses the pair correlation φ as measured: the icc is
    # raised to the least φ allows (at one trial, φ itself) instead of clamping φ to an assumed icc of 0.
    plan, ledger = _batch(40, 1, seed=4)
    report = ef.audit(plan, ledger)
    comparison = compare(report, baseline="base", candidate="cand")
    r = comparison.table.item(0, "pair_correlation")
    assert r > 0
    baseline = report.summary.filter(pl.col("candidate") == "base")
    assert baseline.item(0, "icc") is None
    got = power(baseline=baseline, comparison=comparison.table)
    assert (got.inputs["icc"], got.inputs["pair_correlation"]) == (pytest.approx(r, rel=1e-12), r)
    assert got.detectable.difference == pytest.approx(comparison.table.item(0, "detectable_difference"), rel=1e-12)
    assert got.sources[-1] == f"icc {r:.4g}: the least the pair correlation allows (no icc measured)"
    # numpy's numbers are numbers (a pandas or numpy row): the same plan
    row = {"pair_correlation": np.float64(r), "pairs_used": np.int64(40), "cases_used": np.int64(40)}
    assert power(baseline=baseline, comparison=row).to_dict() == got.to_dict()


@pytest.mark.parametrize(
    ("kwargs", "option", "reason"),
    [
        ({"baseline": pl.DataFrame({"cases_planned": [4, 4]})}, "baseline", "baseline is one row (a mapping, or a"),
        ({"cases": 30, "comparison": [0.2]}, "comparison", "comparison is one row (a mapping, or a frame of one row,"),
        ({"cases": 30, "pair_trials": 0, "comparison": {"pair_correlation": 0.1}}, "pair_trials", "pair_trials must"),
        ({"cases": 30, "icc": -1.0, "comparison": {"pair_correlation": 0.1}}, "icc", "icc must be in [0.0, 1.0]"),
        ({"cases": 30, "trials": 3, "icc": -1.0, "pair_correlation": 0.1, "pair_trials": 3}, "icc", "icc must be in"),
        ({"baseline": {"candidate": "b", "cases_planned": 4, "planned": 4, "pass_rate_scored": 1.0}}, "baseline",
         "b's summary row has pass_rate_scored 1: the power needs a rate strictly between 0 and 1"),
        ({"baseline": {"candidate": "b", "cases_planned": 2.5, "planned": 5, "pass_rate_scored": 0.4}}, "baseline",
         "b's summary row has no whole cases_planned and planned to read"),
    ],
)  # fmt: skip
def test_a_malformed_earlier_row_or_input_is_an_option_error(kwargs: dict[str, Any], option: str, reason: str) -> None:
    with pytest.raises(OptionError) as info:
        power(**kwargs)
    assert (info.value.option, info.value.reason[: len(reason)]) == (option, reason)


def test_a_baseline_row_is_read_only_for_what_is_not_given() -> None:
    # cases and trials given: a row without them still gives the rate and the icc.
    plan = power(40, 3, baseline={"candidate": "b", "pass_rate_scored": 0.3, "icc": 0.2})
    assert (plan.inputs["cases"], plan.inputs["trials"], plan.inputs["rate"], plan.inputs["icc"]) == (40, 3, 0.3, 0.2)
    # an integer beyond any float is no number of pairs: the correlation is taken at the design's trials
    huge = {"pair_correlation": 0.1, "pairs_used": 10**400, "cases_used": 3}
    assert power(30, icc=0.3, comparison=huge).inputs["pair_trials"] == 1.0
