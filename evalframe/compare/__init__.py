"""Paired comparison of two candidates with a declared pair policy and a verdict (SPEC §6).

Units are joined on (case_id, trial), never by position. Completion and
conditional quality are reported separately. A winner needs every check of
SPEC §6 (DESIGN.md "Verdict logic"): both sides' coverage at or above the
declared minimum and no significant difference in missingness; a case-level
paired interval that excludes zero (clustered by case with t(G − 1) when
cases repeat trials, Newcombe with an exact McNemar test for one trial per
case, see :mod:`evalframe.stats`); the same winner under both pair
policies; and a tipping point that holds: filling every ungraded unit
against the claimed winner leaves the difference on its side. Declaring no
winner is a normal, correct outcome.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from evalframe._callable import make_callable
from evalframe.columns import CANDIDATE
from evalframe.compare.inference import Tested, batch_detectable, quality, tested
from evalframe.compare.pairs import (
    PAIR_KEY,
    PairPolicy,
    Scale,
    check_names,
    dropped_by_slice,
    missingness_p_value,
    pair_counts,
    paired_units,
    unpaired_count,
)
from evalframe.report.model import RENDERERS, AuditReport
from evalframe.stats import Detectable

__all__ = ["PAIR_KEY", "Comparison", "PairPolicy", "compare"]


@dataclass(frozen=True)
class Comparison:
    """A paired comparison and its verdict.

    Attributes
    ----------
    table
        One row: identities, policy, pair counts, coverage of each side and
        their difference, the paired quality difference (candidate −
        baseline) with its clustered standard error and interval, the exact
        McNemar p-value, each side's worst/best-case bounds, ``verdict`` and
        ``reasons`` (List[String]).
    pairs
        One row per (case_id, trial) planned for either side: each side's
        outcome, whether the pair is used, and the values compared.
    dropped_by_slice
        Under ``complete_pairs``: dropped pairs per (slice column, slice
        value) for the report's slices (empty otherwise).
    """

    table: pl.DataFrame
    pairs: pl.DataFrame
    dropped_by_slice: pl.DataFrame = field(default_factory=pl.DataFrame)

    @property
    def verdict(self) -> str:
        """``candidate_better``, ``baseline_better`` or ``no_supported_winner``."""
        return str(self.table.item(0, "verdict"))

    @property
    def reasons(self) -> list[str]:
        """Why the verdict is what it is, in the order the checks ran."""
        return list(self.table.item(0, "reasons"))

    def to_markdown(self) -> str:
        """The comparison as Markdown: verdict, reasons, numbers, dropped and flipped pairs.

        Rendered by :func:`evalframe.report.markdown.comparison_markdown`, reached through the
        report's registry: this module imports no renderer.
        """
        return str(RENDERERS["comparison_markdown"](self))


def compare(
    report: AuditReport,
    *,
    baseline: str,
    candidate: str,
    pairs: PairPolicy = "complete_pairs",
    min_coverage: float = 0.95,
    confidence: float = 0.95,
    alpha: float = 0.05,
) -> Comparison:
    """Compare ``candidate`` against ``baseline`` on paired units.

    Parameters
    ----------
    report
        An audit report holding both candidates (one observation per unit).
    baseline, candidate
        Candidate names, compared exactly.
    pairs
        The declared pair policy, whose numbers the table shows:
        ``complete_pairs`` uses pairs where both sides have a grade and
        reports how many were dropped and from which slices;
        ``missing_as_fail`` uses every planned pair and counts an ungraded
        side as a fail (the low end of the score range for numeric scores),
        labelled as such. A winner must win under both.
    min_coverage
        Declared minimum ``scored_coverage`` of each side (fraction).
    confidence
        Coverage of the intervals of the paired difference.
    alpha
        Significance level of the exact McNemar tests (paired gradedness;
        discordant pairs with one trial per case).

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        When a name is not a candidate of the report, both names are the
        same, or the report has several observations per unit.

    Notes
    -----
    The compared value is pass (1) / fail (0), or the score for numeric
    grades without a pass threshold (then the difference of mean scores,
    inside ± the score range's width). A winner needs all of (SPEC §6):

    1. coverage: both sides' ``scored_coverage`` ≥ ``min_coverage``, and
       missingness not significantly different between them (exact McNemar
       on paired gradedness, p ≥ ``alpha``);
    2. interval: the case-level paired interval of the difference under
       the declared policy excludes 0 — with several trials per case the
       per-pair differences clustered by case (CR1, t(G − 1)); with one
       trial per case Newcombe's interval and the exact McNemar test on the
       discordant pairs (p < ``alpha``); no interval, hence no winner, with
       fewer than two cases (:mod:`evalframe.stats`);
    3. the other pair policy's interval gives the same winner;
    4. tipping point: over every planned pair, with every ungraded unit
       filled against the claimed winner (a fail for it, a pass for the
       other side), the difference is still on the winner's side.

    Worst/best-case bounds (Manski 1990) are reported as a reason, not a
    route to a winner.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund", "privacy", "handoff"]}),
    ...                           candidates=["A", "B"])
    >>> results = pl.DataFrame({"candidate": ["A", "A", "B", "B", "B", "B"],
    ...     "case_id": ["quote", "refund", "quote", "refund", "privacy", "handoff"], "passed": [1, 1, 1, 1, 1, 0]})
    >>> c = compare(ef.audit(plan, results), baseline="B", candidate="A")
    >>> c.verdict
    'no_supported_winner'
    >>> c.reasons[0]
    'coverage: A scored_coverage 0.5 is below the declared minimum 0.95'
    """
    check_names(report, baseline, candidate)
    scale = Scale.of(report.meta)
    joined = paired_units(report, baseline, candidate, scale, pairs)
    in_use = joined.filter(pl.col("used"))
    side = {r[CANDIDATE]: r for r in report.summary.iter_rows(named=True) if r[CANDIDATE] in (baseline, candidate)}
    b, c = side[baseline], side[candidate]
    values = (pl.col("candidate_value"), pl.col("baseline_value"))
    complete = tested(joined.filter(pl.col("baseline_graded") & pl.col("candidate_graded")), scale, confidence, alpha)
    as_fail = tested(joined, scale, confidence, alpha)
    declared, other = (complete, as_fail) if pairs == "complete_pairs" else (as_fail, complete)
    other_name = "missing_as_fail" if pairs == "complete_pairs" else "complete_pairs"
    missingness_p = missingness_p_value(joined)
    reasons = _coverage_reasons({baseline: b, candidate: c}, min_coverage, missingness_p, alpha)
    coverage_ok = not reasons
    unpaired = {name: unpaired_count(report, name, joined) for name in (baseline, candidate)}
    if any(unpaired.values()):
        only = ", ".join(f"{n} planned for {name} only" for name, n in unpaired.items() if n)
        reasons.append(
            f"pairs: {only}: not compared (the other side was never planned on them); coverage and "
            "bounds are each side's over its own plan"
        )
    reasons.append(_interval_reason(declared, scale, candidate, baseline, alpha))
    winner = declared.winner
    policies_agree = winner is None or other.winner == winner
    if not policies_agree:
        reasons.append(
            f"pair policy: under {other_name} the difference is {other.describe()}, which does not give "
            f"{winner}: the verdict depends on how ungraded units are counted"
        )
    tipping: float | None = None
    if winner is not None:
        tipping, holds, reason = _tipping_point(joined, winner, scale, candidate, baseline)
        reasons.append(reason)
        winner = winner if holds and policies_agree else None
    bounds = (b["pass_rate_planned"], b["pass_rate_upper"], c["pass_rate_planned"], c["pass_rate_upper"])
    if None not in bounds:
        reasons.append(_bounds_reason(bounds, candidate, baseline))
    verdict = winner if coverage_ok and winner is not None else "no_supported_winner"
    pair_r, found, base_rate = batch_detectable(in_use, b, numeric=scale.numeric, alpha=alpha, confidence=confidence)
    detectable = None if found is None else found.difference
    if verdict == "no_supported_winner":
        cases = 0 if declared.test is None else declared.test.n_clusters
        reasons.append(_power_reason(cases, found, base_rate, candidate, baseline, numeric=scale.numeric))
    row = {
        "baseline": baseline,
        "candidate": candidate,
        "pair_policy": pairs,
        **pair_counts(joined, in_use, pairs),
        "units_not_paired": sum(unpaired.values()),
        "baseline_scored_coverage": b["scored_coverage"],
        "candidate_scored_coverage": c["scored_coverage"],
        "coverage_difference": c["scored_coverage"] - b["scored_coverage"],
        "completion_difference": c["completion_rate"] - b["completion_rate"],
        "missingness_p_value": missingness_p,
        **quality(declared, in_use, *values),
        "mcnemar_p_value": declared.mcnemar_p,
        "other_policy_ci_low": other.test.ci_low if other.test else None,
        "other_policy_ci_high": other.test.ci_high if other.test else None,
        "tipping_point_difference": tipping,
        "pair_correlation": pair_r,
        "detectable_difference": detectable,
        "baseline_worst": bounds[0],
        "baseline_best": bounds[1],
        "candidate_worst": bounds[2],
        "candidate_best": bounds[3],
        "min_coverage": min_coverage,
        "confidence": confidence,
        "verdict": verdict,
        "reasons": reasons,
    }
    table = pl.DataFrame([row], schema_overrides=dict.fromkeys(_NULLABLE_FLOATS, pl.Float64))
    return Comparison(table=table, pairs=joined, dropped_by_slice=dropped_by_slice(joined, scale.slices, pairs))


#: Columns of the comparison table that may be null in its one row (typed Float64 all the same).
_NULLABLE_FLOATS: Final = (
    "tipping_point_difference",
    "pair_correlation",
    "detectable_difference",
    "other_policy_ci_low",
    "other_policy_ci_high",
    "mcnemar_p_value",
    "ci_low",
    "ci_high",
    "se_clustered",
)


def _coverage_reasons(
    sides: Mapping[str, Mapping[str, Any]], min_coverage: float, missingness_p: float, alpha: float
) -> list[str]:
    """Check 1 of SPEC §6: a reason for each side below the declared coverage, and for differing missingness."""
    reasons = [
        f"coverage: {name} scored_coverage {row['scored_coverage']:.3g} is below the declared minimum "
        f"{min_coverage:.3g}"
        for name, row in sides.items()
        if row["scored_coverage"] < min_coverage
    ]
    if missingness_p < alpha:
        reasons.append(
            "coverage: missingness differs between the sides "
            f"(exact McNemar on paired gradedness, p={missingness_p:.2g})"
        )
    return reasons


def _interval_reason(declared: Tested, scale: Scale, candidate: str, baseline: str, alpha: float) -> str:
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


def _tipping_point(
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


def _bounds_reason(bounds: Sequence[float], candidate: str, baseline: str) -> str:
    """Worst/best-case bounds (Manski 1990) of both sides, and whether they separate (a reason, not a route)."""
    b_low, b_high, c_low, c_high = bounds
    text = f"{candidate} [{c_low:.3g}, {c_high:.3g}] vs {baseline} [{b_low:.3g}, {b_high:.3g}]"
    separate = c_low > b_high or b_low > c_high
    return f"bounds {'separate' if separate else 'overlap'}: {text}"


def _power_reason(
    cases: int, found: Detectable | None, rate: float | None, candidate: str, baseline: str, *, numeric: bool
) -> str:
    """The difference this batch could have detected with 80% power (SPEC §6a), in words, either way.

    ``found`` holds the smallest detectable rise (``candidate`` above ``baseline``) and drop; the direction
    is named when only one is within reach (``rate``, the baseline's over the used pairs, leaves the other
    too little room) or when the two differ. Every ``no_supported_winner`` gets one: with fewer than two
    cases nothing is detectable (there is no interval), and for mean scores the power is not modelled.
    """
    batch = f"power: with {cases} case{'' if cases == 1 else 's'} this batch"
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


make_callable(__name__, "compare")  # `evalframe.compare(...)` calls the function; the module stays a module
