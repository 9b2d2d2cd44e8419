"""Seeded simulation of the selective-missingness test (SPEC §5, issue 18).

Each simulated audit has ``cases`` cases × ``trials`` trials per candidate;
every slice column gives each case one of four values (10 cases each at 40
cases, assigned independently per column). A design says how units go
ungraded; an audit *flags* when any (candidate, slice column) test is declared
selective. Under a case-level missing-at-random null (each case's dropout
probability does not depend on its slice) the flag rate must be at most
``alpha`` + 2 Monte Carlo standard errors; under a selective design it is the
detection rate.

Designs (alpha 0.05, 40 cases × 5 trials, 4 slices of 10 cases unless named):

* ``null_unit``: every unit absent with probability 0.2;
* ``null_case_beta``: case i's units absent with probability π_i ~ Beta(1, 4)
  (mean 0.2: cases differ, slices do not);
* ``null_whole_case`` (5 and 10 trials): a whole case absent with probability 0.2;
* ``null_4x5``: 4 candidates × 5 slice columns, whole-case dropout 0.2;
* ``null_4x5_beta``: 4 candidates × 5 slice columns, π_i ~ Beta(1, 4);
* ``null_timeouts``: units time out (a row, ``exec_failed``) with probability 0.2;
* ``detect_unit``: units absent with probability 0.15, 0.30 in one slice of four;
* ``detect_timeouts``: the same rates, as timeouts (rows present, ungraded).

The script runs against the ``evalframe.slices`` on ``PYTHONPATH``: the case-level
API (``case_slices``) when it has one, else the old unit-level one (``slice_funnel``),
so one script gives the before and after tables.

    PYTHONPATH=. python benchmarks/sim_missingness.py [--sims 400] [--seed 2024] [--design NAME ...]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe import slices as sl

SLICE_VALUES = ("qa", "math", "code", "long_context")


@dataclass(frozen=True)
class Design:
    name: str
    kind: str  # "null" or "detect"
    cases: int
    trials: int
    candidates: int
    columns: int
    #: (rng, slice index of each case in column 0, trials) -> codes (cases, trials): 0 graded, 1 absent, 2 timeout
    draw: Callable[[np.random.Generator, np.ndarray, int], np.ndarray]


def unit_absent(rate: float, code: int = 1) -> Callable[[np.random.Generator, np.ndarray, int], np.ndarray]:
    def draw(rng: np.random.Generator, s: np.ndarray, trials: int) -> np.ndarray:
        return np.where(rng.random((s.size, trials)) < rate, code, 0)

    return draw


def case_beta(a: float, b: float) -> Callable[[np.random.Generator, np.ndarray, int], np.ndarray]:
    def draw(rng: np.random.Generator, s: np.ndarray, trials: int) -> np.ndarray:
        p = rng.beta(a, b, size=s.size)
        return np.where(rng.random((s.size, trials)) < p[:, None], 1, 0)

    return draw


def whole_case(rate: float) -> Callable[[np.random.Generator, np.ndarray, int], np.ndarray]:
    def draw(rng: np.random.Generator, s: np.ndarray, trials: int) -> np.ndarray:
        gone = rng.random(s.size) < rate
        return np.repeat(gone[:, None], trials, axis=1).astype(np.int64)

    return draw


def one_slice(low: float, high: float, code: int = 1) -> Callable[[np.random.Generator, np.ndarray, int], np.ndarray]:
    def draw(rng: np.random.Generator, s: np.ndarray, trials: int) -> np.ndarray:
        p = np.where(s == 3, high, low)
        return np.where(rng.random((s.size, trials)) < p[:, None], code, 0)

    return draw


def one_slice_cases(low: float, high: float) -> Callable[[np.random.Generator, np.ndarray, int], np.ndarray]:
    def draw(rng: np.random.Generator, s: np.ndarray, trials: int) -> np.ndarray:
        gone = rng.random(s.size) < np.where(s == 3, high, low)
        return np.repeat(gone[:, None], trials, axis=1).astype(np.int64)

    return draw


DESIGNS = [
    Design("null_unit", "null", 40, 5, 1, 1, unit_absent(0.2)),
    Design("null_case_beta", "null", 40, 5, 1, 1, case_beta(1, 4)),
    Design("null_whole_case", "null", 40, 5, 1, 1, whole_case(0.2)),
    Design("null_whole_case_10", "null", 40, 10, 1, 1, whole_case(0.2)),
    Design("null_4x5", "null", 40, 5, 4, 5, whole_case(0.2)),
    Design("null_4x5_beta", "null", 40, 5, 4, 5, case_beta(1, 4)),
    Design("null_timeouts", "null", 40, 5, 1, 1, unit_absent(0.2, code=2)),
    Design("power_unit_15_30", "power", 40, 5, 1, 1, one_slice(0.15, 0.30)),
    Design("power_unit_25_50", "power", 40, 5, 1, 1, one_slice(0.25, 0.50)),
    Design("detect_unit_30_60", "detect", 40, 5, 1, 1, one_slice(0.30, 0.60)),
    Design("detect_timeouts_30_60", "detect", 40, 5, 1, 1, one_slice(0.30, 0.60, code=2)),
    Design("detect_unit_30_60_4x5", "detect", 40, 5, 4, 5, one_slice(0.30, 0.60)),
    Design("power_whole_case_30_60", "power", 40, 5, 1, 1, one_slice_cases(0.30, 0.60)),
]

OUTCOME_OF = np.array(["passed", "missing", "exec_failed"])


def simulate_units(design: Design, rng: np.random.Generator) -> pl.DataFrame:
    """One audit's units: candidate, case_id, trial, outcome and ``s0..`` slice columns."""
    n, t = design.cases, design.trials
    # Each column: a balanced random assignment of the four values to the cases.
    labels = [rng.permutation(np.arange(n) % len(SLICE_VALUES)) for _ in range(design.columns)]
    frames = []
    for c in range(design.candidates):
        codes = design.draw(rng, labels[0], t)
        frames.append(
            pl.DataFrame(
                {
                    "candidate": f"M{c}",
                    "case_id": np.repeat([f"c{i:03d}" for i in range(n)], t),
                    "trial": np.tile(np.arange(1, t + 1), n),
                    "outcome": OUTCOME_OF[codes.reshape(-1)],
                    **{f"s{j}": np.repeat(np.array(SLICE_VALUES)[lab], t) for j, lab in enumerate(labels)},
                }
            )
        )
    return pl.concat(frames)


def flagged(units: pl.DataFrame, columns: list[str], alpha: float) -> bool:
    """Whether the audit flags any selective missingness (either API)."""
    if hasattr(sl, "case_slices"):
        tests = sl.missingness_tests(sl.case_slices(units, columns), alpha=alpha)
        return bool(tests.get_column("selective").any() or tests.get_column("selective_ungraded").any())
    tests = sl.missingness_tests(sl.slice_funnel(units.drop("case_id", "trial"), columns), alpha=alpha)
    return bool(tests.get_column("selective").any())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--design", action="append", help="run only these designs (repeatable)")
    args = parser.parse_args()
    api = "case-level (case_slices)" if hasattr(sl, "case_slices") else "unit-level (slice_funnel)"
    print(f"evalframe.slices from {sl.__file__}: {api}; {args.sims} simulations per design, alpha {args.alpha}")
    print()
    print("| design | kind | cases × trials | candidates × columns | flag rate | MC SE | bound | ok | seconds |")
    print("|---|---|---|---|--:|--:|--:|---|--:|")
    for i, design in enumerate(DESIGNS):
        if args.design and design.name not in args.design:
            continue
        rng = np.random.default_rng([args.seed, i])
        columns = [f"s{j}" for j in range(design.columns)]
        start = time.perf_counter()
        hits = sum(flagged(simulate_units(design, rng), columns, args.alpha) for _ in range(args.sims))
        rate = hits / args.sims
        if design.kind == "null":
            se = math.sqrt(args.alpha * (1 - args.alpha) / args.sims)
            bound, ok = f"≤ {args.alpha + 2 * se:.3f}", rate <= args.alpha + 2 * se
        elif design.kind == "detect":
            se = math.sqrt(rate * (1 - rate) / args.sims)
            bound, ok = "≥ 0.800", rate >= 0.8
        else:  # power shown, no bound
            se = math.sqrt(rate * (1 - rate) / args.sims)
            bound, ok = "(shown)", True
        seconds = time.perf_counter() - start
        print(
            f"| {design.name} | {design.kind} | {design.cases} × {design.trials} | "
            f"{design.candidates} × {design.columns} | {rate:.3f} | {se:.3f} | {bound} | "
            f"{'yes' if ok else 'NO'} | {seconds:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
