"""A smaller seeded version of benchmarks/sim_power.py: the power achieved at the reported MDE is 80 %.

For each design of issue 23 the candidate is planted exactly the minimum detectable difference that
:func:`evalframe.stats.detectable.detectable_difference` reports (at the pair correlation the generating model gives),
and the case-level paired test ``compare`` runs (the interval of
:func:`evalframe.stats.paired.paired_rate_difference`, with one trial per case also the exact McNemar test)
is applied to each seeded batch. With S batches the Monte Carlo standard error of the achieved power is
sqrt(0.8 · 0.2 / S) = 0.0103 at S = 1500: each design must land within 3 of them (0.031) of 0.80, the
issue's band. Before this issue the reported MDE gave 0.603 at 30 × 1 and 0.755 at 20 × 20
(benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.sim_power import DESIGNS, candidate_wins, draw, planted

SIMS = 1500
SE = math.sqrt(0.8 * 0.2 / SIMS)


@pytest.mark.parametrize("design", DESIGNS, ids=[f"{g}x{k}" for g, k, _, _ in DESIGNS])
def test_power_at_the_reported_mde_is_80_percent(design: tuple[int, int, float, float]) -> None:
    cases, trials, rate, icc = design
    mde, _ = planted(cases, trials, rate, icc)
    rng = np.random.default_rng(23_000 + 100 * cases + trials)
    wins = sum(candidate_wins(draw(rng, cases, trials, rate, icc, mde)) for _ in range(SIMS))
    assert abs(wins / SIMS - 0.8) <= 3 * SE
