"""Seeded simulation of evalframe.power: is the power achieved at the reported minimum detectable difference 80 %?

For each design (cases × trials) the case probabilities are drawn from a Beta distribution with mean
``rate`` and intra-case correlation ``icc`` (a + b = 1/icc − 1); the candidate's probability in every case
is the baseline's plus the reported MDE (the pair correlation of case means is then icc / (icc + (1 − icc)/K)).
It reports how often the case-level paired test excludes 0 on the candidate's side (``test``: the interval
of :func:`evalframe.inference.paired_rate_difference`, which ``compare`` uses; with one trial per case also
the exact McNemar test), and how often ``ef.compare`` declares ``candidate_better`` (``compare``: every check
of SPEC §6, on complete data).

Run: ``python benchmarks/sim_power.py [--sims 400] [--compare]``. Not part of the test run.
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl

import evalframe as ef
from evalframe.inference import paired_rate_difference
from evalframe.power import detectable_difference
from evalframe.stats import mcnemar_exact

DESIGNS = [(30, 1), (100, 5), (500, 1), (20, 20)]


def draw(rng: np.random.Generator, cases: int, trials: int, rate: float, icc: float, shift: float) -> np.ndarray:
    """Outcomes (2, cases, trials): baseline then candidate."""
    if icc > 0:
        total = 1.0 / icc - 1.0
        p = rng.beta(rate * total, (1.0 - rate) * total, size=cases)
    else:
        p = np.full(cases, rate)
    probs = np.stack([p, np.clip(p + shift, 0.0, 1.0)])
    return (rng.random((2, cases, trials)) < probs[:, :, None]).astype(np.float64)


def achieved(
    cases: int, trials: int, sims: int, rng: np.random.Generator, *, rate: float, icc: float, with_compare: bool
) -> tuple[float, float, float]:
    r = icc / (icc + (1 - icc) / trials) if icc > 0 else 0.0
    mde = detectable_difference(cases, trials, rate=rate, icc=icc, pair_correlation=r).difference
    assert mde is not None
    wins = verdicts = 0
    cluster = np.repeat(np.arange(cases), trials)
    for _ in range(sims):
        y = draw(rng, cases, trials, rate, icc, mde)
        base, cand = y[0].ravel(), y[1].ravel()
        t = paired_rate_difference(cand, base, cluster)
        win = t.excludes_zero() == 1
        if win and t.method == "newcombe":
            win = mcnemar_exact(int(((cand == 1) & (base == 0)).sum()), int(((cand == 0) & (base == 1)).sum())) < 0.05
        wins += win
        if with_compare:
            ids = [f"q{i:04d}" for i in range(cases)]
            plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ids}), candidates=["base", "cand"], trials=trials)
            ledger = pl.concat(
                pl.DataFrame(
                    {
                        "candidate": name,
                        "case_id": np.repeat(ids, trials),
                        "trial": np.tile(np.arange(1, trials + 1), cases),
                        "passed": y[k].ravel().astype(np.int64),
                    }
                )
                for k, name in enumerate(("base", "cand"))
            )
            verdict = ef.compare(ef.audit(plan, ledger), baseline="base", candidate="cand").verdict
            verdicts += verdict == "candidate_better"
    return mde, wins / sims, verdicts / sims if with_compare else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--icc", type=float, default=0.3)
    parser.add_argument("--compare", action="store_true", help="also run ef.compare end to end (slower)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.sims} simulations per design, seed {args.seed}, rate {args.rate}, icc {args.icc}")
    print("| design | reported MDE | power of the test | power of compare |")
    print("|---|---|---|---|")
    for cases, trials in DESIGNS:
        mde, test, verdict = achieved(
            cases, trials, args.sims, rng, rate=args.rate, icc=args.icc, with_compare=args.compare
        )
        print(f"| {cases} × {trials} | {mde:.4f} | {test:.3f} | {verdict:.3f} |")


if __name__ == "__main__":
    main()
