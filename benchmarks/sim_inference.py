"""Seeded simulation of evalframe's inference under repeated trials and few cases (issue 18, SPEC §4, §6).

For each design (cases × trials) it runs ``ef.audit`` and ``ef.compare`` end to end on batches drawn under a
case-level null: every case has its own pass probability (Beta(a, b) across cases), shared by both
candidates, and every trial is an independent draw. It reports

- the false-winner rate: how often ``compare`` declares ``candidate_better`` or ``baseline_better``
  (nominal 5 %; the bound printed is 5 % + 2 Monte Carlo standard errors);
- the coverage of the summary's 95 % interval of ``pass_rate_scored`` for the population mean of the case
  probabilities (a / (a + b) = 0.5), and whether every interval lies inside [0, 1];
- the power to detect a shift of +d in every case's pass probability for the candidate.

The fixed target's power statement (issue 41 item 2) is checked by ``--fixed-power``: on fixed cases,
the power ``ef.achieved_power(..., target="fixed")`` predicts at the reported MDE against the share of
seeded batches whose paired test supports the candidate.

Run: ``python benchmarks/sim_inference.py [--sims 400] [--seed 2026] [--fixed-power]``. Not part of the test
run; a smaller seeded version runs in tests/property/test_inference_simulation.py.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

import evalframe as ef
from evalframe.stats import Target

DESIGNS = [(1, 10), (2, 20), (3, 10), (5, 20), (10, 20), (20, 20), (30, 5), (200, 1)]


def batch(rng: np.random.Generator, cases: int, trials: int, shift: float = 0.0) -> tuple[ef.Plan, pl.DataFrame]:
    """A plan and a complete ledger of two candidates under a case-level model."""
    p = rng.beta(1.0, 1.0, size=cases)
    return planned_and_drawn(rng, trials, {"base": p, "cand": np.clip(p + shift, 0.0, 1.0)})


def planned_and_drawn(
    rng: np.random.Generator, trials: int, chances: dict[str, np.ndarray]
) -> tuple[ef.Plan, pl.DataFrame]:
    """A plan of the cases of ``chances`` (candidate -> each case's pass chance) and a complete ledger drawn from it."""
    cases = len(next(iter(chances.values())))
    ids = [f"q{i:04d}" for i in range(cases)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=list(chances), trials=trials)
    frames = []
    for name, prob in chances.items():
        passed = rng.random((cases, trials)) < prob[:, None]
        frames.append(
            pl.DataFrame(
                {
                    "candidate": name,
                    "case_id": np.repeat(ids, trials),
                    "trial": np.tile(np.arange(1, trials + 1), cases),
                    "passed": passed.ravel().astype(np.int64),
                }
            )
        )
    return plan, pl.concat(frames)


def run(
    cases: int, trials: int, sims: int, rng: np.random.Generator, shift: float = 0.0, target: Target = "sample"
) -> dict[str, float]:
    """False winners (or, with ``shift``, winners), and the coverage of 0.5 by base's ``pass_rate_scored`` interval.

    ``target`` is audit's and compare's ``cases``: under ``fixed`` the intervals are about the drawn cases, so
    their coverage of the population mean 0.5 is not what they claim (only the winners are read then).
    """
    winners = covered = inside = 0
    intervals = 0
    for _ in range(sims):
        plan, ledger = batch(rng, cases, trials, shift)
        report = ef.audit(plan, ledger, cases=target)
        verdict = ef.compare(report, baseline="base", candidate="cand", cases=target).verdict
        winners += verdict != "no_supported_winner"
        row = report.summary.filter(pl.col("candidate") == "base").row(0, named=True)
        low, high = row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]
        if low is not None:
            intervals += 1
            covered += low <= 0.5 <= high
            inside += 0.0 <= low <= high <= 1.0
    return {
        "winner_rate": winners / sims,
        "coverage": covered / intervals if intervals else float("nan"),
        "inside": inside / intervals if intervals else float("nan"),
        "intervals": intervals / sims,
    }


#: Issue 41's ``--cases fixed`` designs (cases × trials): the shared-case null of :func:`batch`, inference
#: conditional on the drawn cases (their effects are the same for both candidates, so any winner is a false one).
FIXED_DESIGNS = [(12, 20), (20, 10), (60, 5)]

#: Issue 41's skewed designs (cases × trials): A passes 90 % on nine kinds of case in ten and 0 % on the tenth
#: (population mean 0.81), B 81 % on every case: the same mean, so any winner is a false one.
SKEWED_DESIGNS = [(12, 20), (20, 10), (60, 5)]
#: A's pass probability on the usual kinds of case, the share of the impossible kind, and B's everywhere.
SKEWED_A, SKEWED_IMPOSSIBLE, SKEWED_B = 0.9, 0.1, 0.81


def skewed_batch(rng: np.random.Generator, cases: int, trials: int) -> tuple[ef.Plan, pl.DataFrame]:
    """A plan and a complete ledger of A and B under issue 41's skewed null (each case's kind drawn at random)."""
    impossible = rng.random(cases) < SKEWED_IMPOSSIBLE
    return planned_and_drawn(rng, trials, {"A": np.where(impossible, 0.0, SKEWED_A), "B": np.full(cases, SKEWED_B)})


def run_skewed(cases: int, trials: int, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """False winners of ``compare`` (B baseline, A candidate) and the coverage of A's ``pass_rate_scored`` of 0.81.

    ``intervals`` is the share of batches where A's interval was given; ``withheld_with_reason`` the share of
    the others whose summary says why (``pass_rate_scored_ci_withheld``).
    """
    winners = covered = intervals = reasoned = 0
    mean = (1.0 - SKEWED_IMPOSSIBLE) * SKEWED_A
    for _ in range(sims):
        plan, ledger = skewed_batch(rng, cases, trials)
        report = ef.audit(plan, ledger)
        winners += ef.compare(report, baseline="B", candidate="A").verdict != "no_supported_winner"
        row = report.summary.filter(pl.col("candidate") == "A").row(0, named=True)
        low, high = row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]
        if low is not None:
            intervals += 1
            covered += low <= mean <= high
        else:
            reasoned += bool(row["pass_rate_scored_ci_withheld"])
    return {
        "winner_rate": winners / sims,
        "coverage": covered / intervals if intervals else float("nan"),
        "intervals": intervals / sims,
        "withheld_with_reason": reasoned / (sims - intervals) if sims > intervals else float("nan"),
    }


#: Designs (cases, trials, baseline rate, icc) for the fixed target's power statement (issue 41 item 2).
FIXED_POWER_DESIGNS = [(20, 5, 0.5, 0.3), (12, 20, 0.7, 0.2), (60, 3, 0.5, 0.1), (30, 10, 0.8, 0.4), (10, 2, 0.5, 0.2)]


def fixed_cases(cases: int, rate: float, icc: float) -> np.ndarray:
    """Pass probabilities of ``cases`` fixed cases: the Beta quantiles at (i + ½)/G of mean ``rate``, ICC ``icc``."""
    from scipy.stats import beta

    k = 1.0 / icc - 1.0
    return np.asarray(beta.ppf((np.arange(cases) + 0.5) / cases, rate * k, (1.0 - rate) * k), dtype=np.float64)


def run_fixed_power(cases: int, trials: int, rate: float, icc: float, sims: int, rng: np.random.Generator) -> dict:
    """Predicted and simulated power of ``compare --cases fixed``'s test at the fixed target's MDE, on fixed cases.

    The cases are drawn once (:func:`fixed_cases`): base's probabilities at ``rate``, the candidate's the same
    quantiles of the Beta of mean ``rate`` + d with the same ICC, d the detectable rise ``ef.detectable_difference``
    reports under ``target="fixed"``. Each batch draws only the trials; the test is the paired difference under
    the fixed target (``evalframe.stats.paired_rate_difference``, what ``compare`` runs on complete pairs) and a
    batch counts when it supports the candidate. The prediction is ``ef.achieved_power`` at these cases' own mean
    difference, mean rate and ICC (var / p(1 − p), the two sides' average).
    """
    from evalframe.stats import paired_rate_difference

    d = ef.detectable_difference(cases, trials, rate=rate, icc=icc, target="fixed").rise
    assert d is not None
    base, cand = fixed_cases(cases, rate, icc), fixed_cases(cases, rate + d, icc)
    mean = float(base.mean())
    rho = 0.5 * sum(float(x.var()) / (float(x.mean()) * (1.0 - float(x.mean()))) for x in (base, cand))
    predicted = ef.achieved_power(float((cand - base).mean()), cases, trials, rate=mean, icc=rho, target="fixed")
    cluster = np.repeat(np.arange(cases), trials)
    found = 0
    for _ in range(sims):
        a = (rng.random((cases, trials)) < cand[:, None]).astype(np.float64).ravel()
        b = (rng.random((cases, trials)) < base[:, None]).astype(np.float64).ravel()
        found += paired_rate_difference(a, b, cluster, target="fixed").excludes_zero() == 1
    simulated = found / sims
    return {"mde": d, "predicted": predicted, "simulated": simulated, "se": (simulated * (1 - simulated) / sims) ** 0.5}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--shift", type=float, default=0.15, help="candidate's shift for the power column")
    parser.add_argument("--skewed-only", action="store_true", help="run only issue 41's skewed and fixed designs")
    parser.add_argument("--fixed-only", action="store_true", help="run only issue 41's --cases fixed designs")
    parser.add_argument("--fixed-power", action="store_true", help="run only the fixed target's power calibration")
    parser.add_argument("--design", action="append", help="run only these designs, as CASESxTRIALS (repeatable)")
    parser.add_argument("--null-only", action="store_true", help="skip the power columns (0 in the table)")
    args = parser.parse_args()

    def chosen(designs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return [d for d in designs if args.design is None or f"{d[0]}x{d[1]}" in args.design]

    power_sims = 0 if args.null_only else args.sims // 4

    if args.fixed_power:
        fixed_power_table(args.sims, args.seed)
        return
    rng = np.random.default_rng(args.seed)
    bound = 0.05 + 2 * (0.05 * 0.95 / args.sims) ** 0.5
    print(f"{args.sims} simulations per design, seed {args.seed}; false-winner bound {bound:.3f}")
    print(f"| design | false winners | 95% interval coverage of 0.5 | inside [0, 1] | power at +{args.shift:.2f} | s |")
    print("|---|---|---|---|---|---|")
    for cases, trials in [] if args.skewed_only or args.fixed_only else chosen(DESIGNS):
        start = time.perf_counter()
        null = run(cases, trials, args.sims, rng)
        power = run(cases, trials, power_sims, rng, shift=args.shift) if power_sims else {"winner_rate": 0.0}
        flag = "" if null["winner_rate"] <= bound else " (over)"
        print(
            f"| {cases} × {trials} | {null['winner_rate']:.3f}{flag} | {null['coverage']:.3f} "
            f"| {null['inside']:.3f} | {power['winner_rate']:.2f} | {time.perf_counter() - start:.0f} |"
        )
    print()
    print("Skewed case effects (issue 41): A 90 % on 9 kinds of case in 10, 0 % on the 10th; B 81 % everywhere")
    print("| design | false winners | A's intervals given | their coverage of 0.81 | withheld with a reason | s |")
    print("|---|---|---|---|---|---|")
    for cases, trials in [] if args.fixed_only else chosen(SKEWED_DESIGNS):
        start = time.perf_counter()
        skewed = run_skewed(cases, trials, args.sims, rng)
        flag = "" if skewed["winner_rate"] <= bound else " (over)"
        print(
            f"| {cases} × {trials} | {skewed['winner_rate']:.3f}{flag} | {skewed['intervals']:.3f} "
            f"| {skewed['coverage']:.3f} | {skewed['withheld_with_reason']:.3f} | {time.perf_counter() - start:.0f} |"
        )
    print()
    print("Cases fixed (issue 41, --cases fixed): the shared-case null, inference about the drawn cases only")
    print(f"| design | false winners | power at +{args.shift:.2f} (clipped to 1) | s |")
    print("|---|---|---|---|")
    for cases, trials in chosen(FIXED_DESIGNS):
        start = time.perf_counter()
        null = run(cases, trials, args.sims, rng, target="fixed")
        shifted = run(cases, trials, power_sims, rng, shift=args.shift, target="fixed") if power_sims else None
        power = shifted or {"winner_rate": 0.0}
        flag = "" if null["winner_rate"] <= bound else " (over)"
        print(
            f"| {cases} × {trials} | {null['winner_rate']:.3f}{flag} | {power['winner_rate']:.2f} "
            f"| {time.perf_counter() - start:.0f} |"
        )


def fixed_power_table(sims: int, seed: int) -> None:
    """The fixed target's power calibration: predicted against simulated at the reported MDE, per design."""
    print(f"Fixed target's power at its MDE: {sims} batches per design, seed {seed} + design index")
    print("| design | rate | icc | MDE | predicted | simulated | MC SE | within 2 SE | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for i, (cases, trials, rate, icc) in enumerate(FIXED_POWER_DESIGNS):
        start = time.perf_counter()
        r = run_fixed_power(cases, trials, rate, icc, sims, np.random.default_rng([seed, i]))
        ok = "yes" if abs(r["simulated"] - r["predicted"]) <= 2 * r["se"] else "no"
        print(
            f"| {cases} × {trials} | {rate:g} | {icc:g} | {r['mde']:.4f} | {r['predicted']:.3f} | {r['simulated']:.3f} "
            f"| {r['se']:.3f} | {ok} | {time.perf_counter() - start:.0f} |"
        )


if __name__ == "__main__":
    main()
