"""The reasons of a comparison's verdict, in words, one per check of SPEC §6 in the order the checks run.

Coverage of each side and paired missingness (check 1, :func:`coverage_reasons`), the units planned
for one side only (:func:`unpaired_reason`), the declared policy's paired interval and exact McNemar test
(check 2, :func:`interval_reason`), the other pair policy's disagreement (check 3, :func:`policy_reason`),
the tipping point (check 4, :func:`tipping_point`), two sides sharing no planned case
(:func:`not_comparable_reason`, the only reason then), the worst/best-case bounds (a reason, not a route to a
winner, :func:`bounds_reason`), and for ``no_supported_winner`` the difference the batch could have
detected (SPEC §6a, :func:`power_reason`). Used by :func:`evalframe.compare.compare`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from evalframe.compare.inference import Tested
from evalframe.compare.pairs import Scale
from evalframe.stats import Detectable, SkewCheck, Target, rare_case_limit
from evalframe.stats.clustered import SKEW_RULE_BASE, fixed_way_out


def coverage_reasons(
    sides: Mapping[str, Mapping[str, Any]],
    min_coverage: float,
    missingness_p: float,
    alpha: float,
    *,
    declared: bool = True,
) -> list[str]:
    """Check 1 of SPEC §6: a reason for each side below the minimum coverage, and for differing missingness.

    ``declared``: the minimum was declared (``min_coverage=``, ``--min-coverage``); else it is the default
    and the reason says so, never "declared".
    """
    minimum = "the declared minimum" if declared else "the default minimum (none declared)"
    reasons = [
        f"coverage: {name} scored_coverage {row['scored_coverage']:.3g} is below {minimum} {min_coverage:.3g}"
        for name, row in sides.items()
        if row["scored_coverage"] < min_coverage
    ]
    if missingness_p < alpha:
        reasons.append(
            "coverage: missingness differs between the sides "
            f"(exact McNemar on paired gradedness, p={missingness_p:.2g})"
        )
    return reasons


def unpaired_reason(unpaired: Mapping[str, int]) -> str:
    """The units planned for one side only, per side (``unpaired``: side name to count): they are not compared."""
    only = ", ".join(f"{n} planned for {name} only" for name, n in unpaired.items() if n)
    return (
        f"pairs: {only}: not compared (the other side was never planned on them); coverage and "
        "bounds are each side's over its own plan"
    )


def not_comparable_reason(baseline: str, candidate: str, task: str | None) -> str:
    """Why two candidates that share no planned unit get no verdict: nothing pairs them, so nothing ranks them."""
    where = "" if task is None else f" in task {task}"
    return (
        f"not comparable: {candidate} and {baseline} share no planned case{where}; "
        "no pair, hence no difference and no ranking"
    )


def interval_reason(declared: Tested, scale: Scale, candidate: str, baseline: str, alpha: float) -> str:
    """Check 2 of SPEC §6, in words: does the declared policy's paired test support a winner, and if not, why.

    A winner needs the interval to exclude zero and, with one trial per case, the exact McNemar test to reject
    at ``alpha``: when the interval excludes zero but the test does not reject, the reason names the test.
    """
    what = "mean score" if scale.numeric else "pass rate"
    if declared.test is None:
        return "interval: no pair has a grade on both sides"
    difference = f"paired difference of {what} {candidate} − {baseline}"
    if declared.winner is not None:
        return f"interval: {difference} = {declared.describe()} supports {declared.winner}"
    p, discordant = declared.mcnemar_p, declared.discordant
    if declared.interval_side == 0 or p is None or discordant is None:
        return f"interval: {difference} = {declared.describe()} does not support a winner"
    n10, n01 = discordant
    needed = math.floor(math.log2(2.0 / alpha)) + 1  # fewest pairs, all one way, with 2 · 0.5ⁿ < alpha
    hint = f"; p < {alpha:g} needs at least {needed} discordant pairs, all one way" if n10 + n01 < needed else ""
    return (
        f"exact McNemar test: p={p:.2g} ≥ α {alpha:g} on {n10 + n01} discordant pair{'' if n10 + n01 == 1 else 's'} "
        f"({n10} passed by {candidate} alone, {n01} by {baseline} alone), so the paired test does not reject no "
        f"difference and does not support a winner, although the {difference} = "
        f"{declared.describe(with_test=False)} excludes zero{hint}"
    )


def skew_reason(skew: SkewCheck, what: str) -> str:
    """The skewness guard, when it fails: too few cases for how skewed the per-case differences are.

    The words are :meth:`evalframe.stats.SkewCheck.refusal`'s, as the summary's withheld interval says them.
    """
    return f"skewness: {skew.refusal(f'per-case differences of {what}', 'a winner')}"


def sample_reason(cases: int, target: Target = "sample") -> str:
    """What the inference is about, and what these cases cannot show (the rule of three) or leave out."""
    if target == "fixed":
        return (
            f"sample: the verdict is about these {cases} case{'' if cases == 1 else 's'} only (cases fixed: the "
            "interval covers trial noise within them, not other tasks)"
        )
    return f"sample: the verdict is about the population of tasks these cases were drawn from; {rare_case_limit(cases)}"


def policy_reason(other_name: str, other: Tested, winner: str | None) -> str:
    """Check 3 of SPEC §6, when it fails: the other pair policy's difference does not give the declared ``winner``."""
    return (
        f"pair policy: under {other_name} the difference is {other.describe()}, which does not give "
        f"{winner}: the verdict depends on how ungraded units are counted"
    )


def tipping_point(
    joined: pl.DataFrame, winner: str, scale: Scale, candidate: str, baseline: str
) -> tuple[float, bool, str]:
    """Check 4 of SPEC §6: the difference over every planned pair with every ungraded unit against ``winner``.

    Returns the difference, whether it stays on the winner's side, and the reason in words.
    """
    lead_is_cand = winner == "candidate_better"
    fill_c, fill_b = (scale.low, scale.high) if lead_is_cand else (scale.high, scale.low)
    worst_c = pl.when(pl.col("candidate_graded")).then(pl.col("candidate_value")).otherwise(pl.lit(fill_c))
    worst_b = pl.when(pl.col("baseline_graded")).then(pl.col("baseline_value")).otherwise(pl.lit(fill_b))
    tipping = float(joined.select((worst_c - worst_b).mean()).item())
    if (tipping > 0) != lead_is_cand or tipping == 0:
        leader = candidate if lead_is_cand else baseline
        return (
            tipping,
            False,
            f"tipping point: with every ungraded unit a fail for {leader} and a pass for the other side, the "
            f"difference {candidate} − {baseline} is {tipping:+.3g}: the ungraded units could reverse it",
        )
    reason = f"tipping point: the difference stays on its side ({tipping:+.3g}) with every ungraded unit filled"
    return tipping, True, f"{reason} against the winner"


def bounds_reason(bounds: Sequence[float], candidate: str, baseline: str) -> str:
    """Worst/best-case bounds (Manski 1990) of both sides, and whether they separate (a reason, not a route)."""
    b_low, b_high, c_low, c_high = bounds
    text = f"{candidate} [{c_low:.3g}, {c_high:.3g}] vs {baseline} [{b_low:.3g}, {b_high:.3g}]"
    separate = c_low > b_high or b_low > c_high
    return f"bounds {'separate' if separate else 'overlap'}: {text}"


def power_reason(
    cases: int,
    found: Detectable | None,
    rate: float | None,
    candidate: str,
    baseline: str,
    *,
    numeric: bool,
    clustered: bool = False,
) -> str:
    """The difference this batch could have detected with 80% power (SPEC §6a), in words, either way.

    Under the fixed target (``found.model`` ``fixed_t``) the difference is about these cases only, and one pair
    per case detects nothing (the trials' own variation cannot be estimated).

    ``found`` holds the smallest detectable rise (``candidate`` above ``baseline``) and drop; the direction
    is named when only one is within reach (``rate``, the baseline's over the used pairs, leaves the other
    too little room) or when the two differ. Every ``no_supported_winner`` gets one: with fewer than two
    cases nothing is detectable (there is no interval), and for mean scores the power is not modelled. With a
    ``clustered`` interval (several trials per case, or numeric scores) and at most 28 cases, nothing is
    detectable either: the skewness rule (G > 28 + 25·g1², :func:`evalframe.stats.skew_check`) cannot hold.
    """
    if clustered and 2 <= cases <= SKEW_RULE_BASE:
        return (
            f"power: with {cases} cases of several trials (or numeric scores) no difference could have been "
            "supported: the clustered interval needs more than 28 + 25·g1² cases, g1 the skewness of the per-case "
            f"differences (Sugden, Smith and Jones 2000), so more than 28 whatever the data; {fixed_way_out(cases)}"
        )
    fixed = found is not None and found.model == "fixed_t"
    if fixed and found is not None and found.trials == 1 and cases >= 2:
        return (
            f"power: with cases fixed and one pair in each of the {cases} cases no difference could have been "
            "supported: the trials' own variation cannot be estimated (several trials per case, or --cases sample)"
        )
    batch = f"power: with {cases} case{'' if cases == 1 else 's'} this batch"
    batch += " (about these cases only: cases fixed)" if fixed else ""
    what = "mean score" if numeric else "pass rate"
    nothing = f"{batch} could not have detected any difference in {what} with 80% power (SPEC §6a): too few cases"
    missed = "smaller differences may be missed"
    if found is None or rate is None:
        if numeric and cases >= 2:
            return (
                "power: not estimated for a difference of mean scores: the power of SPEC §6a is that of a "
                "difference in pass rate (declare a pass threshold to compare pass rates)"
            )
        return nothing
    rise, drop = found.rise, found.drop
    if rise is None and drop is None:
        return nothing
    if rise is None or drop is None:
        if rise is not None:
            seen, side, other, room = rise, "above", "drop", rate
        else:
            assert drop is not None  # one of the two, not both
            seen, side, other, room = drop, "below", "rise", 1.0 - rate
        if room == 0.0:
            why = f"{baseline} {'passes' if rate == 1.0 else 'fails'} every one of these pairs: no {other} is possible"
        else:
            why = (
                f"{baseline} passes {100 * rate:.3g}% of these pairs, which leaves room for a {other} of at most "
                f"{100 * room:.1f} points, too little to detect"
            )
        return (
            f"{batch} could have detected a difference of {seen:.3g} in pass rate ({100 * seen:.1f} points) "
            f"with 80% power (SPEC §6a) only with {candidate} {side} {baseline}: {why}; {missed}"
        )
    if f"{rise:.3g}" == f"{drop:.3g}":
        return (
            f"{batch} could have detected a difference of {drop:.3g} in pass rate ({100 * drop:.1f} "
            f"points) with 80% power (SPEC §6a); {missed}"
        )
    (first, first_side), (second, second_side) = sorted(((rise, "above"), (drop, "below")))
    return (
        f"{batch} could have detected a difference of {first:.3g} in pass rate ({100 * first:.1f} points) with "
        f"{candidate} {first_side} {baseline}, or of {second:.3g} ({100 * second:.1f} points) with it "
        f"{second_side}, with 80% power (SPEC §6a); {missed}"
    )
