"""Seeded simulation of evalframe.stats.detectable: is the power at the reported minimum detectable difference 80 %?

The generating model is the one :mod:`evalframe.stats.power` assumes, with nothing clipped: case c has a latent
u_c ~ Uniform(0, 1); the baseline passes each trial of it with probability F⁻¹(u_c) of a Beta with mean
``rate`` and intra-case correlation ``icc`` (a + b = 1/icc − 1), the candidate with the quantile u_c of a
Beta with mean ``rate + d`` and the same icc (so the true difference in pass rate is exactly d, and both
sides find the same cases hard); trials are independent given the case. The two sides' case means then
correlate with r = Cov(p_b, p_c)/sqrt(σ_b² σ_c²), σ² = p(1 − p)(icc + (1 − icc)/K), computed by quadrature.
d is the MDE that :func:`evalframe.stats.detectable.detectable_difference` reports for that r, and r the correlation at
that d: a fixed point, reached in a few rounds.

It reports how often the case-level paired test declares the candidate better (``test``: the interval of
:func:`evalframe.stats.paired.paired_rate_difference`, which ``compare`` uses, and with one trial per case also
the exact McNemar test) and, on the first ``--compare-sims`` batches, how often ``ef.compare`` declares
``candidate_better`` (every check of SPEC §6, on complete data). The Monte Carlo standard error is sqrt(p(1 − p)/sims).

Run: ``python benchmarks/sim_power.py [--sims 4000] [--compare-sims 400] [--extra]``. Not part of the test run; a
smaller seeded version is ``tests/property/test_power_simulation.py``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import polars as pl
from scipy.stats import beta

import evalframe as ef
from evalframe.stats import detectable_difference, mcnemar_exact, paired_rate_difference

#: (cases, trials, rate, icc): the four designs of issue 23, then others (``--extra``).
DESIGNS = [(30, 1, 0.5, 0.3), (100, 5, 0.5, 0.3), (500, 1, 0.5, 0.3), (20, 20, 0.5, 0.3)]
EXTRA = [(60, 2, 0.7, 0.2), (200, 3, 0.3, 0.5), (15, 10, 0.5, 0.1), (1000, 1, 0.8, 0.4), (40, 4, 0.5, 0.0)]
_U = (np.arange(20_000) + 0.5) / 20_000  # midpoints for the quadrature over u


def _ppf(u: np.ndarray, mean: float, icc: float) -> np.ndarray:
    if icc == 0:
        return np.full(u.shape, mean)
    total = 1.0 / icc - 1.0
    return np.asarray(beta.ppf(u, mean * total, (1.0 - mean) * total))


def pair_correlation(rate: float, difference: float, icc: float, trials: int) -> float:
    """The correlation of the two sides' case means under the generating model (quadrature over u)."""
    if icc == 0:
        return 0.0
    pb, pc = _ppf(_U, rate, icc), _ppf(_U, rate + difference, icc)
    cov = float(np.mean(pb * pc)) - float(np.mean(pb)) * float(np.mean(pc))
    shrink = icc + (1.0 - icc) / trials
    return cov / math.sqrt(rate * (1 - rate) * (rate + difference) * (1 - rate - difference) * shrink * shrink)


def planted(cases: int, trials: int, rate: float, icc: float) -> tuple[float, float]:
    """(MDE, r): the reported MDE at the correlation the model gives at that MDE."""
    r = icc / (icc + (1 - icc) / trials)
    for _ in range(6):
        mde = detectable_difference(cases, trials, rate=rate, icc=icc, pair_correlation=r).rise  # a rise is planted
        assert mde is not None
        r = pair_correlation(rate, mde, icc, trials)
    return mde, r


def draw(rng: np.random.Generator, cases: int, trials: int, rate: float, icc: float, shift: float) -> np.ndarray:
    """Outcomes (2, cases, trials): baseline then candidate."""
    u = rng.random(cases)
    probs = np.stack([_ppf(u, rate, icc), _ppf(u, rate + shift, icc)])
    return (rng.random((2, cases, trials)) < probs[:, :, None]).astype(np.float64)


def candidate_wins(y: np.ndarray, alpha: float = 0.05) -> bool:
    """The case-level paired test of ``compare`` (interval, and exact McNemar with one trial per case)."""
    cases, trials = y.shape[1], y.shape[2]
    base, cand = y[0].ravel(), y[1].ravel()
    t = paired_rate_difference(cand, base, np.repeat(np.arange(cases), trials), confidence=1 - alpha)
    win = t.excludes_zero() == 1
    if win and t.method == "newcombe":
        win = mcnemar_exact(int(((cand == 1) & (base == 0)).sum()), int(((cand == 0) & (base == 1)).sum())) < alpha
    return win


def compare_wins(y: np.ndarray) -> bool:
    """``ef.compare`` end to end on complete data."""
    cases, trials = y.shape[1], y.shape[2]
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
    return ef.compare(ef.audit(plan, ledger), baseline="base", candidate="cand").verdict == "candidate_better"


def achieved(
    design: tuple[int, int, float, float], sims: int, rng: np.random.Generator, *, compare_sims: int = 0
) -> tuple[float, float, float, float]:
    """(MDE, r, power of the test, power of compare) at the planted MDE; compare on the first ``compare_sims``."""
    cases, trials, rate, icc = design
    mde, r = planted(cases, trials, rate, icc)
    wins = verdicts = 0
    for i in range(sims):
        y = draw(rng, cases, trials, rate, icc, mde)
        wins += candidate_wins(y)
        verdicts += i < compare_sims and compare_wins(y)
    return mde, r, wins / sims, verdicts / compare_sims if compare_sims else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--compare-sims", type=int, default=0, help="run ef.compare end to end on this many")
    parser.add_argument("--extra", action="store_true", help="also the other designs (rates, iccs, trials)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    se = math.sqrt(0.8 * 0.2 / args.sims)
    print(f"{args.sims} simulations per design, seed {args.seed}; Monte Carlo SE at 0.80: {se:.3f}", end="")
    if args.compare_sims:
        print(f"; compare on the first {args.compare_sims} (SE {math.sqrt(0.16 / args.compare_sims):.3f})", end="")
    print()
    print("| design | rate | icc | r | reported MDE | power of the test | power of compare |")
    print("|---|---|---|---|---|---|---|")
    for design in DESIGNS + (EXTRA if args.extra else []):
        mde, r, test, verdict = achieved(design, args.sims, rng, compare_sims=args.compare_sims)
        cases, trials, rate, icc = design
        print(f"| {cases} × {trials} | {rate:g} | {icc:g} | {r:.3f} | {mde:.4f} | {test:.3f} | {verdict:.3f} |")


if __name__ == "__main__":
    main()
