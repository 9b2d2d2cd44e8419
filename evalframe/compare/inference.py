"""The paired test of a comparison: candidate − baseline over the pairs, and what the batch could detect.

:func:`tested` runs the case-level paired test on a set of pairs (the clustered interval, or for one trial
per case Newcombe's interval with the exact McNemar test on the discordant pairs, see :mod:`evalframe.stats`)
and gives a :class:`Tested`; :func:`quality` turns the declared policy's into the comparison table's quality
columns; :func:`batch_detectable` gives the difference the used pairs could detect with 80% power
(SPEC §6a). Used by :func:`evalframe.compare.compare`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from evalframe.columns import CASE_ID
from evalframe.compare.pairs import Scale
from evalframe.stats import (
    MIN_CASES,
    Detectable,
    PairedTest,
    Target,
    mcnemar_exact,
    paired_mean_difference,
    paired_rate_difference,
)
from evalframe.stats.detectable import observed_detectable


@dataclass(frozen=True)
class Tested:
    """A paired test on one set of pairs: the interval and, for one trial per case, exact McNemar."""

    test: PairedTest | None
    mcnemar_p: float | None
    winner: str | None
    interval_side: int = 0
    """The side the interval alone excludes zero on: 1 (candidate), −1 (baseline), 0 (includes it, or none)."""
    discordant: tuple[int, int] | None = None
    """With one trial per case: the discordant pairs (candidate passes alone, baseline passes alone)."""

    def describe(self, *, with_test: bool = True) -> str:
        t = self.test
        if t is None:
            return "(no pairs)"
        if t.ci_low is None or t.ci_high is None:
            cases = f"{t.n_clusters} case{'' if t.n_clusters == 1 else 's'}"
            if t.n_clusters >= MIN_CASES:  # cases fixed, one pair in each: no trial variation to estimate
                return f"{t.difference:+.3g} over {cases} (cases fixed and one pair per case: no interval)"
            return f"{t.difference:+.3g} over {cases} (fewer than two cases: no interval)"
        text = f"{t.difference:+.3g} [{t.ci_low:+.3g}, {t.ci_high:+.3g}] "
        text += f"({t.confidence:.0%} interval over {t.n_clusters} cases"
        if with_test and self.mcnemar_p is not None:
            text += f"; exact McNemar p={self.mcnemar_p:.2g}"
        return text + ")"


def tested(frame: pl.DataFrame, scale: Scale, confidence: float, alpha: float, target: Target = "sample") -> Tested:
    """The paired test of candidate − baseline over ``frame``'s pairs (``candidate_value``, ``baseline_value``).

    A winner needs the interval to exclude 0 and, with one trial per case, exact McNemar p < ``alpha``.
    """
    if frame.height == 0:
        return Tested(None, None, None)
    cand, base = frame.get_column("candidate_value"), frame.get_column("baseline_value")
    cluster = frame.get_column(CASE_ID)
    if scale.numeric:
        width = scale.high - scale.low
        test = paired_mean_difference(cand, base, cluster, width=width, confidence=confidence, target=target)
    else:
        test = paired_rate_difference(cand, base, cluster, confidence=confidence, target=target)
    p, discordant = None, None
    if test.method == "newcombe":
        discordant = (int(((cand == 1) & (base == 0)).sum()), int(((cand == 0) & (base == 1)).sum()))
        p = mcnemar_exact(*discordant)
    interval_side = test.excludes_zero()
    side = 0 if p is not None and p >= alpha else interval_side
    winner = {1: "candidate_better", -1: "baseline_better"}.get(side)
    return Tested(test, p, winner, interval_side, discordant)


def batch_detectable(
    used: pl.DataFrame,
    baseline: dict[str, Any],
    *,
    numeric: bool,
    alpha: float,
    confidence: float,
    target: Target = "sample",
) -> tuple[float | None, Detectable | None, float | None]:
    """The correlation of the two sides' case means, the difference this batch could detect at 80% power, the rate.

    Pass/fail only (:func:`evalframe.stats.detectable.detectable_difference` with the used pairs' cases and mean
    trials per case, the baseline's pass rate over them and ``icc``, and the observed pair correlation): the
    power of the test :func:`tested` runs, exact McNemar at ``alpha`` with one trial per case, else the
    clustered interval at ``confidence``; the smallest difference either way, with the smallest rise and drop.
    A baseline passing (or failing) every used pair is taken at its rate of 1 (or 0): only a drop (a rise)
    has room to be detected. Fewer than two cases detect nothing. None for numeric scores or without pairs.
    Under ``target="fixed"`` the power is that of the within-case interval (``fixed_t``, no pair correlation;
    nothing with one pair per case), at the interval's confidence.
    """
    if numeric or used.height == 0:
        return None, None, None
    means = used.group_by(CASE_ID, maintain_order=True).agg(
        pl.col("candidate_value").mean().alias("c"), pl.col("baseline_value").mean().alias("b"), pl.len().alias("m")
    )
    r = means.select(pl.corr("c", "b")).item() if means.height > 2 else None
    r = None if r is None or not math.isfinite(r) else max(-1.0, min(float(r), 0.99))
    rate = used.get_column("baseline_value").mean()
    if not isinstance(rate, float) or not 0.0 <= rate <= 1.0:
        return r, None, None
    icc = baseline.get("icc")
    trials = float(used.height) / means.height
    found = observed_detectable(
        means.height,
        trials,
        rate=rate,
        icc=0.0 if icc is None else min(max(float(icc), 0.0), 1.0),
        pair_correlation=0.0 if r is None else r,
        alpha=alpha if trials == 1 and target == "sample" else 1.0 - confidence,
        target=target,
    )
    return r, found, rate


def _se_naive(differences: pl.Series) -> float:
    """sqrt(population variance / n) of the paired differences, as if every pair were independent."""
    mean = math.fsum(differences.to_list()) / differences.len()
    return math.sqrt(math.fsum((d - mean) ** 2 for d in differences.to_list())) / differences.len()


def quality(declared: Tested, in_use: pl.DataFrame, c_value: pl.Expr, b_value: pl.Expr) -> dict[str, Any]:
    """The declared policy's paired quality difference with its standard errors and interval."""
    t = declared.test
    if t is None:
        empty: dict[str, Any] = dict.fromkeys(_QUALITY, None)
        return empty | {"interval_method": "none", "cases_used": 0}
    differences = in_use.select(c_value - b_value).to_series()
    return {
        "quality_difference": t.difference,
        "se_naive": _se_naive(differences),
        "se_clustered": t.se_clustered,
        "ci_low": t.ci_low,
        "ci_high": t.ci_high,
        "interval_method": t.method,
        "cases_used": t.n_clusters,
        "baseline_pass_rate_pairs": t.mean_b,
        "candidate_pass_rate_pairs": t.mean_a,
    }


#: The quality columns of the comparison table, in order.
_QUALITY: Final = (
    "quality_difference",
    "se_naive",
    "se_clustered",
    "ci_low",
    "ci_high",
    "interval_method",
    "cases_used",
    "baseline_pass_rate_pairs",
    "candidate_pass_rate_pairs",
)
