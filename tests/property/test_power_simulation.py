"""A smaller seeded version of benchmarks/sim_power.py: the power achieved at the reported MDE is 80 %.

For each design of issue 23 the candidate is planted exactly the minimum detectable difference that
:func:`evalframe.stats.detectable.detectable_difference` reports (at the pair correlation the generating model gives),
and the case-level paired test ``compare`` runs (the interval of
:func:`evalframe.stats.paired.paired_rate_difference`, with one trial per case also the exact McNemar test)
is applied to each seeded batch. With S batches the Monte Carlo standard error of the achieved power is
sqrt(0.8 · 0.2 / S) = 0.0103 at S = 1500: each design must land within 3 of them (0.031) of 0.80, the
issue's band. Before this issue the reported MDE gave 0.603 at 30 × 1 and 0.755 at 20 × 20
(benchmarks/RESULTS.md).

A drop is checked the same way: at a baseline rate of 0.9, where only a drop has room to be detected, the
rate at which the test declares the baseline better must match :func:`evalframe.stats.achieved_power` of the
negative difference within 3 Monte Carlo standard errors, sqrt(p(1 − p)/S) at its power p.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.sim_power import DESIGNS, candidate_wins, draw, planted
from evalframe.stats import achieved_power, detectable_difference, mcnemar_exact, paired_rate_difference

pytestmark = pytest.mark.slow  # seeded simulations: `pytest -m "not slow"` leaves them out

SIMS = 1500
SE = math.sqrt(0.8 * 0.2 / SIMS)


@pytest.mark.parametrize("design", DESIGNS, ids=[f"{g}x{k}" for g, k, _, _ in DESIGNS])
def test_power_at_the_reported_mde_is_80_percent(design: tuple[int, int, float, float]) -> None:
    cases, trials, rate, icc = design
    mde, _ = planted(cases, trials, rate, icc)
    rng = np.random.default_rng(23_000 + 100 * cases + trials)
    wins = sum(candidate_wins(draw(rng, cases, trials, rate, icc, mde)) for _ in range(SIMS))
    assert abs(wins / SIMS - 0.8) <= 3 * SE


def _baseline_wins(y: np.ndarray, alpha: float = 0.05) -> bool:
    """``compare``'s one-trial rule declaring baseline_better: Newcombe's interval below 0 and McNemar p < alpha."""
    base, cand = y[0, :, 0], y[1, :, 0]
    t = paired_rate_difference(cand, base, np.arange(base.size), confidence=1 - alpha)
    n10, n01 = int(((cand == 1) & (base == 0)).sum()), int(((cand == 0) & (base == 1)).sum())
    return t.excludes_zero() == -1 and mcnemar_exact(n10, n01) < alpha


DROP_SIMS = 3000


@pytest.mark.parametrize(("cases", "rate", "drop"), [(20, 0.9, None), (20, 0.9, 0.3), (40, 0.8, 0.25)])
def test_the_power_of_a_drop_is_what_the_exact_sum_says(cases: int, rate: float, drop: float | None) -> None:
    # None: the reported MDE at 0.9 (a drop, 0.4507; no rise reaches 80 %), where the power is 0.8 by construction.
    if drop is None:
        found = detectable_difference(cases, 1, rate=rate)
        assert found.direction == "drop"
        drop = found.difference
    assert drop is not None
    expected = achieved_power(-drop, cases, 1, rate=rate)  # independent sides: the pair correlation is 0
    assert expected == pytest.approx({0.3: 0.434634, 0.25: 0.581627}.get(drop, 0.8), abs=5e-7)
    rng = np.random.default_rng(29_000 + cases)
    wins = sum(_baseline_wins(draw(rng, cases, 1, rate, 0.0, -drop)) for _ in range(DROP_SIMS))
    assert abs(wins / DROP_SIMS - expected) <= 3 * math.sqrt(expected * (1 - expected) / DROP_SIMS)
