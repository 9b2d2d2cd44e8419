"""Seeded simulation of the selective-missingness test, small enough for CI (SPEC §5, issue 18).

The full version, with 400 simulations per design, is ``benchmarks/sim_missingness.py``
(results in benchmarks/RESULTS.md). Here each design runs fewer audits with 999
permutations per test (any number of permutations gives a valid p-value); the
bounds are alpha + 2 Monte Carlo standard errors for false flags and, for
detection, 0.80 − 1 MC SE (the benchmark measures 0.850 at 400 simulations).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from evalframe.slices import case_slices, missingness_tests

ALPHA = 0.05
VALUES = np.array(["qa", "math", "code", "long_context"])


def audit_flags(rng: np.random.Generator, *, candidates: int, columns: int, design: str) -> bool:
    """One simulated audit of 40 cases × 5 trials; whether any test is declared selective."""
    n, t = 40, 5
    labels = [rng.permutation(np.arange(n) % 4) for _ in range(columns)]
    frames = []
    for c in range(candidates):
        if design == "whole_case":  # a whole case absent with probability 0.2, whatever its slice
            gone = np.repeat(rng.random(n)[:, None] < 0.2, t, axis=1)
        elif design == "case_beta":  # case i's units absent with probability Beta(1, 4): cases differ, slices not
            gone = rng.random((n, t)) < rng.beta(1, 4, size=n)[:, None]
        else:  # "selective": units absent with probability 0.30, 0.60 in one slice of four
            gone = rng.random((n, t)) < np.where(labels[0] == 3, 0.6, 0.3)[:, None]
        frames.append(
            pl.DataFrame(
                {
                    "candidate": f"M{c}",
                    "case_id": np.repeat(np.arange(n), t),
                    "outcome": np.where(gone.reshape(-1), "missing", "passed"),
                    **{f"s{j}": np.repeat(VALUES[lab], t) for j, lab in enumerate(labels)},
                }
            )
        )
    cols = [f"s{j}" for j in range(columns)]
    tests = missingness_tests(case_slices(pl.concat(frames), cols), alpha=ALPHA, resamples=999)
    return bool(tests.get_column("selective").any() or tests.get_column("selective_ungraded").any())


def rate(seed: int, sims: int, **design: object) -> float:
    rng = np.random.default_rng(seed)
    return sum(audit_flags(rng, **design) for _ in range(sims)) / sims  # type: ignore[arg-type]


def null_bound(sims: int) -> float:
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / sims)


def test_whole_cases_dropping_out_at_random_are_not_selective() -> None:
    # The unit-level test flagged 74% of these audits (benchmarks/RESULTS.md).
    assert rate(1, 300, candidates=1, columns=1, design="whole_case") <= null_bound(300)


def test_case_level_missing_at_random_over_4_candidates_and_5_columns_flags_at_most_alpha() -> None:
    # 20 (candidate, column) pairs in one Holm family; the unit-level test without correction flagged 98.5%.
    assert rate(2, 60, candidates=4, columns=5, design="case_beta") <= null_bound(60)


def test_one_slice_dropping_out_at_twice_the_rate_is_detected() -> None:
    sims = 200
    detected = rate(3, sims, candidates=1, columns=1, design="selective")
    assert detected >= 0.80 - math.sqrt(0.8 * 0.2 / sims)


def trials_by_slice_flags(rng: np.random.Generator) -> bool:
    """Slice long: 15 cases × 1 trial; slice short: 45 cases × 6 trials; every unit absent at 0.25 (issue 41)."""
    rows = [("long", f"l{i:02d}", 1) for i in range(15)] + [("short", f"s{i:02d}", 6) for i in range(45)]
    value = [v for v, _, t in rows for _ in range(t)]
    case = [c for _, c, t in rows for _ in range(t)]
    units = pl.DataFrame(
        {
            "candidate": "A",
            "case_id": case,
            "length": value,
            "outcome": np.where(rng.random(len(case)) < 0.25, "missing", "passed"),
        }
    )
    tests = missingness_tests(case_slices(units, ["length"]), alpha=ALPHA, resamples=999)
    return bool(tests.get_column("selective").any() or tests.get_column("selective_ungraded").any())


def test_more_trials_per_case_in_one_slice_is_not_selective() -> None:
    # Nothing is selective, but a six-trial case is likelier to miss some unit than a one-trial case: the
    # unweighted case-level test flagged 16% of these audits (benchmarks/RESULTS.md, issue 41).
    rng = np.random.default_rng(41)
    flags = sum(trials_by_slice_flags(rng) for _ in range(300))
    assert flags <= 27  # 0.09 of 300; seed 41 gives 7 (the unweighted test: 50). 1000 audits: RESULTS.md
