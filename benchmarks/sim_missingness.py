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

Designs run end to end through ``ef.audit(plan, ledger, slices=[...])`` (issue 41), reading the summary's
``selective_missingness``; planned trials differ by case:

* ``null_trials_15x1_45x6``: slice ``long`` 15 cases × 1 trial, slice ``short`` 45 cases × 6 trials, every
  unit absent at random with probability 0.25 (nothing is selective; a case with more trials is more likely
  to have some unit absent);
* ``null_trials_30x1_30x6``: the same with 30 cases in each slice;
* ``null_trials_45x1_15x6``: the same with the slice sizes reversed (45 one-trial cases, 15 six-trial ones);
* ``dropout_60x3`` and ``dropout_120x3``: 4 slices, 3 trials, units absent at 0.2 everywhere and 30% of one
  slice's cases lost whole (every unit absent): the power to see real selective dropout.

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

import evalframe as ef
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


@dataclass(frozen=True)
class AuditDesign:
    """A design audited end to end: (rng) -> (plan, ledger); the slice column is ``length`` or ``s0``."""

    name: str
    kind: str
    shape: str
    draw: Callable[[np.random.Generator], tuple[ef.Plan, pl.DataFrame]]


def by_trials(
    slices: tuple[tuple[str, int, int], ...], rate: float
) -> Callable[[np.random.Generator], tuple[ef.Plan, pl.DataFrame]]:
    """Slices of (name, cases, trials); every unit absent at random with probability ``rate``."""

    def draw(rng: np.random.Generator) -> tuple[ef.Plan, pl.DataFrame]:
        ids, trial, value = [], [], []
        for name, cases, trials in slices:
            ids += [f"{name}{i:03d}" for i in range(cases) for _ in range(trials)]
            trial += [t for _ in range(cases) for t in range(1, trials + 1)]
            value += [name] * (cases * trials)
        units = pl.DataFrame({"candidate": "A", "case_id": ids, "trial": trial, "length": value})
        present = rng.random(units.height) >= rate
        ledger = units.filter(pl.Series(present)).drop("length")
        ledger = ledger.with_columns(passed=pl.Series(rng.integers(0, 2, ledger.height)))
        return ef.Plan.from_frame(units), ledger

    return draw


def dropout(cases: int, trials: int) -> Callable[[np.random.Generator], tuple[ef.Plan, pl.DataFrame]]:
    """4 slices; units absent at 0.2; 30% of slice ``long_context``'s cases lost whole."""

    def draw(rng: np.random.Generator) -> tuple[ef.Plan, pl.DataFrame]:
        s = rng.permutation(np.arange(cases) % len(SLICE_VALUES))
        ids = [f"c{i:04d}" for i in range(cases)]
        plan = ef.Plan.from_frame(
            pl.DataFrame({"case_id": ids, "s0": np.array(SLICE_VALUES)[s]}), candidates=["A"], trials=trials
        )
        absent = rng.random((cases, trials)) < 0.2
        absent |= ((s == 3) & (rng.random(cases) < 0.3))[:, None]
        ledger = pl.DataFrame(
            {"candidate": "A", "case_id": np.repeat(ids, trials), "trial": np.tile(np.arange(1, trials + 1), cases)}
        ).filter(pl.Series(~absent.reshape(-1)))
        return plan, ledger.with_columns(passed=pl.Series(rng.integers(0, 2, ledger.height)))

    return draw


AUDIT_DESIGNS = [
    AuditDesign(
        "null_trials_15x1_45x6", "null", "15 × 1 + 45 × 6", by_trials((("long", 15, 1), ("short", 45, 6)), 0.25)
    ),
    AuditDesign(
        "null_trials_30x1_30x6", "null", "30 × 1 + 30 × 6", by_trials((("long", 30, 1), ("short", 30, 6)), 0.25)
    ),
    AuditDesign("dropout_60x3", "power", "60 × 3", dropout(60, 3)),
    AuditDesign("dropout_120x3", "power", "120 × 3", dropout(120, 3)),
    # Last, so that the designs above keep their seeds ([seed, 100 + index]).
    AuditDesign(
        "null_trials_45x1_15x6", "null", "45 × 1 + 15 × 6", by_trials((("long", 45, 1), ("short", 15, 6)), 0.25)
    ),
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
    for i, audited in enumerate(AUDIT_DESIGNS):
        if args.design and audited.name not in args.design:
            continue
        rng = np.random.default_rng([args.seed, 100 + i])
        start = time.perf_counter()
        hits = 0
        for _ in range(args.sims):
            plan, ledger = audited.draw(rng)
            column = "length" if "length" in plan.cases.columns else "s0"
            summary = ef.audit(plan, ledger, slices=[column], alpha=args.alpha).summary
            hits += summary.get_column("selective_missingness").is_not_null().any()
        rate = hits / args.sims
        if audited.kind == "null":
            se = math.sqrt(args.alpha * (1 - args.alpha) / args.sims)
            bound, ok = f"≤ {args.alpha + 2 * se:.3f}", rate <= args.alpha + 2 * se
        else:
            se = math.sqrt(rate * (1 - rate) / args.sims)
            bound, ok = "(shown)", True
        print(
            f"| {audited.name} | {audited.kind} | {audited.shape} | 1 × 1 (ef.audit) | {rate:.3f} | {se:.3f} | "
            f"{bound} | {'yes' if ok else 'NO'} | {time.perf_counter() - start:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
