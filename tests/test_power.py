"""Minimum detectable difference and cases needed (SPEC §6a), with the arithmetic written out."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import t

import evalframe as ef
from evalframe.compare import compare
from evalframe.power import cases_needed, detectable_difference

T975_199, T80_199 = (float(t.ppf(q, 199)) for q in (0.975, 0.8))


def test_the_detectable_difference_of_a_single_trial_design() -> None:
    # 200 cases × 1 trial at p = 0.5: per-case difference variance 2 · 0.25 = 0.5.
    found = detectable_difference(200, 1, rate=0.5)
    assert found.difference == pytest.approx((T975_199 + T80_199) * math.sqrt(0.5 / 200))
    assert (found.case_sd, found.design_effect) == (pytest.approx(math.sqrt(0.5)), 1.0)


def test_more_trials_help_less_when_trials_of_a_case_agree() -> None:
    # σ² = p(1 − p)(ρ + (1 − ρ)/K): K = 3 trials, ρ = 0.3 → 0.25 · (0.3 + 0.7/3).
    found = detectable_difference(200, 3, rate=0.5, icc=0.3)
    variance = 0.25 * (0.3 + 0.7 / 3)
    assert found.difference == pytest.approx((T975_199 + T80_199) * math.sqrt(2 * variance / 200))
    assert found.design_effect == pytest.approx(1.6)
    # With ρ = 1 a case's trials are one observation: any number of trials detects what one does.
    one = detectable_difference(200, 1, rate=0.5, icc=1.0).difference
    assert detectable_difference(200, 20, rate=0.5, icc=1.0).difference == pytest.approx(one)
    # Pairing on the same cases (r > 0) shrinks the variance of a difference by (1 − r).
    paired = detectable_difference(200, 1, rate=0.5, pair_correlation=0.5).difference
    assert paired == pytest.approx(detectable_difference(200, 1, rate=0.5).difference * math.sqrt(0.5))


def test_one_case_detects_nothing_and_cases_needed_is_the_inverse() -> None:
    assert detectable_difference(1, 10).difference is None
    needed = cases_needed(0.10, 1, rate=0.5)
    assert needed is not None
    assert detectable_difference(needed, 1).difference <= 0.10 < detectable_difference(needed - 1, 1).difference
    assert cases_needed(0.001, 1, most=1000) is None
    with pytest.raises(ValueError, match="rate must be in"):
        detectable_difference(10, rate=1.0)


def test_no_supported_winner_says_what_the_batch_could_have_detected() -> None:
    cases = [f"q{i:02d}" for i in range(40)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "cand"])
    rows = [{"candidate": "base", "case_id": c, "passed": int(i % 2 == 0)} for i, c in enumerate(cases)]
    rows += [{"candidate": "cand", "case_id": c, "passed": int(i % 2 == 0 or i == 1)} for i, c in enumerate(cases)]
    c = compare(ef.audit(plan, pl.DataFrame(rows)), baseline="base", candidate="cand")
    assert c.verdict == "no_supported_winner"
    row = c.table.row(0, named=True)
    # One trial per case: icc is null (taken as 0); base rate 0.5 over the 40 pairs; r = corr of the pairs.
    expected = detectable_difference(40, 1, rate=0.5, pair_correlation=row["pair_correlation"]).difference
    assert row["detectable_difference"] == pytest.approx(expected)
    base = np.array([float(i % 2 == 0) for i in range(40)])
    cand = np.array([float(i % 2 == 0 or i == 1) for i in range(40)])
    assert row["pair_correlation"] == pytest.approx(float(np.corrcoef(cand, base)[0, 1]))
    assert c.reasons[-1] == (
        f"power: with 40 cases this batch could have detected a difference of {expected:.3g} in pass rate "
        "with 80% power (SPEC §6a); smaller differences may be missed"
    )
