"""Paired comparison of two candidates with a declared pair policy and a verdict (SPEC §6).

Units are joined on (case_id, trial), never by position. Completion and
conditional quality are reported separately, and the verdict follows the
order of DESIGN.md: coverage gate (and different missingness between the
sides) → worst/best-case bounds → interval of the paired difference.
Declaring no winner is a normal, correct outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, OUTCOME, TRIAL
from evalframe.report import AuditReport, markdown_table
from evalframe.stats import PairedDifference, mcnemar_exact, paired_difference

PairPolicy = Literal["complete_pairs", "missing_as_fail"]
Verdict = Literal["candidate_better", "baseline_better", "no_supported_winner"]
PAIR_KEY: Final = (CASE_ID, TRIAL)
_GRADED: Final = ("passed", "failed")


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
        """The comparison as Markdown: verdict, reasons, numbers."""
        row = self.table.row(0, named=True)
        lines = [
            f"## Comparison: {row['candidate']} vs baseline {row['baseline']}",
            "",
            f"**Verdict: `{row['verdict']}`** (pair policy `{row['pair_policy']}`)",
            "",
            *[f"- {r}" for r in row["reasons"]],
            "",
            markdown_table(self.table.drop("reasons")),
        ]
        if self.dropped_by_slice.height:
            lines += ["", "Dropped pairs by slice:", "", markdown_table(self.dropped_by_slice)]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Tested:
    diff: PairedDifference | None
    mcnemar_p: float | None
    winner: str | None

    def describe(self) -> str:
        if self.diff is None:
            return "(no pairs)"
        d = self.diff
        return (
            f"{d.mean_difference:+.4g} [{d.ci_low:+.4g}, {d.ci_high:+.4g}] "
            f"(clustered {d.confidence:.0%} interval; exact McNemar p={self.mcnemar_p:.2g})"
        )


def _tested_difference(
    cand: pl.Series, base: pl.Series, cluster: pl.Series, *, confidence: float, alpha: float
) -> _Tested:
    """Paired difference cand − base; a winner only if its interval excludes 0 and exact McNemar p < alpha.

    Grades are binary, so the interval (a normal approximation) must be
    backed by the exact McNemar test: a degenerate interval on a handful of
    identical discordant pairs is not evidence by itself.
    """
    if cand.len() == 0:
        return _Tested(None, None, None)
    diff = paired_difference(cand, base, cluster, confidence=confidence)
    p = mcnemar_exact(int(((cand == 1) & (base == 0)).sum()), int(((cand == 0) & (base == 1)).sum()))
    winner = None
    if p < alpha and diff.ci_low > 0:
        winner = "candidate_better"
    elif p < alpha and diff.ci_high < 0:
        winner = "baseline_better"
    return _Tested(diff, p, winner)


def _side(report: AuditReport, name: str, slices: Sequence[str]) -> pl.DataFrame:
    units = report.units.lazy().filter(pl.col(CANDIDATE) == name).collect()
    if units.select(pl.struct(*PAIR_KEY).is_duplicated().any()).item():
        msg = "compare needs one observation per unit: audit with retry 'first' or 'last_allowed', not 'every'"
        raise ValueError(msg)
    return units.select(*PAIR_KEY, *slices, pl.col(OUTCOME).cast(pl.String).alias("outcome"))


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
        ``complete_pairs``: use pairs where both sides have a grade; report
        how many were dropped and from which slices. ``missing_as_fail``:
        every planned pair is used and an ungraded side counts as a fail
        (labelled as such in the output).
    min_coverage
        Declared minimum ``scored_coverage`` of each side (fraction).
    confidence
        Coverage of the interval of the paired difference.
    alpha
        Significance level for "missingness differs between the sides"
        (exact McNemar test on paired gradedness).

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
    Verdict, in order (DESIGN.md): (1) a refused batch never reaches here;
    (2) coverage gate: both sides' ``scored_coverage`` ≥ ``min_coverage``
    and missingness not significantly different, else
    ``no_supported_winner``; (3) bounds: if one side's worst case
    (``pass_rate_planned``) exceeds the other's best case
    (``pass_rate_upper``), that side wins; (4) otherwise the interval of the
    paired difference on the pairs used (clustered by case_id, Miller 2024):
    excluding 0 gives a winner, including 0 gives ``no_supported_winner``.
    Bounds (3) separate missingness uncertainty, not sampling noise: a
    bounds win also needs the *worst-case* paired difference (the leader's
    ungraded pairs counted as fails, the other side's as passes, over every
    planned pair) to be significant. "Significant" means the clustered
    interval excludes 0 and the exact McNemar test gives p < ``alpha`` (grades
    are binary; a degenerate interval on a few pairs is not evidence).

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
    names = set(report.summary.get_column(CANDIDATE).to_list())
    for role, name in (("baseline", baseline), ("candidate", candidate)):
        if name not in names:
            msg = f"{role} {name!r} is not a candidate of the report (candidates: {', '.join(sorted(names))})"
            raise ValueError(msg)
    if baseline == candidate:
        msg = "baseline and candidate must differ"
        raise ValueError(msg)
    slices = [str(s) for s in report.meta.get("slices", [])]
    base = _side(report, baseline, slices).rename({"outcome": "baseline_outcome"})
    cand = _side(report, candidate, []).rename({"outcome": "candidate_outcome"})
    joined = base.join(cand, on=list(PAIR_KEY), how="full", coalesce=True).sort(list(PAIR_KEY))
    b_graded = pl.col("baseline_outcome").is_in(_GRADED).fill_null(False)
    c_graded = pl.col("candidate_outcome").is_in(_GRADED).fill_null(False)
    used = (b_graded & c_graded) if pairs == "complete_pairs" else pl.lit(True)
    joined = joined.with_columns(
        used.alias("used"),
        (pl.col("baseline_outcome") == "passed").fill_null(False).cast(pl.Float64).alias("baseline_value"),
        (pl.col("candidate_outcome") == "passed").fill_null(False).cast(pl.Float64).alias("candidate_value"),
        b_graded.alias("baseline_graded"),
        c_graded.alias("candidate_graded"),
    )
    in_use = joined.filter(pl.col("used"))
    summary = report.summary.filter(pl.col(CANDIDATE).is_in([baseline, candidate]))
    side = {r[CANDIDATE]: r for r in summary.iter_rows(named=True)}
    b, c = side[baseline], side[candidate]

    discordant_cov = joined.select(
        (pl.col("baseline_graded") & ~pl.col("candidate_graded")).sum().alias("only_baseline"),
        (~pl.col("baseline_graded") & pl.col("candidate_graded")).sum().alias("only_candidate"),
    ).row(0)
    missingness_p = mcnemar_exact(*discordant_cov)
    tested = _tested_difference(
        in_use.get_column("candidate_value"),
        in_use.get_column("baseline_value"),
        in_use.get_column(CASE_ID),
        confidence=confidence,
        alpha=alpha,
    )
    quality: dict[str, Any] = {
        "quality_difference": tested.diff.mean_difference if tested.diff else None,
        "se_naive": tested.diff.se_naive if tested.diff else None,
        "se_clustered": tested.diff.se_clustered if tested.diff else None,
        "ci_low": tested.diff.ci_low if tested.diff else None,
        "ci_high": tested.diff.ci_high if tested.diff else None,
        "baseline_pass_rate_pairs": tested.diff.mean_b if tested.diff else None,
        "candidate_pass_rate_pairs": tested.diff.mean_a if tested.diff else None,
    }
    mcnemar_p = tested.mcnemar_p

    reasons: list[str] = []
    verdict: str | None = None
    for n, s_ in ((baseline, b), (candidate, c)):
        if s_["scored_coverage"] < min_coverage:
            reasons.append(
                f"coverage: {n} scored_coverage {s_['scored_coverage']:.4g} is below the declared minimum "
                f"{min_coverage:.4g}"
            )
    if missingness_p < alpha:
        reasons.append(
            "coverage: missingness differs between the sides "
            f"(exact McNemar on paired gradedness, p={missingness_p:.2g})"
        )
    if reasons:
        verdict = "no_supported_winner"

    b_low, b_high, c_low, c_high = (
        b["pass_rate_planned"],
        b["pass_rate_upper"],
        c["pass_rate_planned"],
        c["pass_rate_upper"],
    )
    bounds_text = f"{candidate} [{c_low:.4g}, {c_high:.4g}] vs {baseline} [{b_low:.4g}, {b_high:.4g}]"
    if c_low > b_high or b_low > c_high:
        leader = candidate if c_low > b_high else baseline
        other = baseline if leader == candidate else candidate
        # Worst case for the leader: its ungraded pairs fail, the other side's ungraded pairs pass.
        lead_is_cand = leader == candidate
        worst_cand = (
            pl.when(pl.col("candidate_graded")).then(pl.col("candidate_value")).otherwise(0.0 if lead_is_cand else 1.0)
        )
        worst_base = (
            pl.when(pl.col("baseline_graded")).then(pl.col("baseline_value")).otherwise(1.0 if lead_is_cand else 0.0)
        )
        imputed = joined.select(worst_cand.alias("c"), worst_base.alias("b"), CASE_ID)
        worst = _tested_difference(
            imputed.get_column("c"),
            imputed.get_column("b"),
            imputed.get_column(CASE_ID),
            confidence=confidence,
            alpha=alpha,
        )
        expected_winner = "candidate_better" if lead_is_cand else "baseline_better"
        text = f"bounds: {leader}'s worst case beats {other}'s best case: {bounds_text}"
        if worst.winner == expected_winner:
            reasons.append(f"{text}; worst-case paired difference {worst.describe()}")
            if verdict is None:
                verdict = expected_winner
        else:
            reasons.append(f"{text}, but the worst-case paired difference {worst.describe()} is not significant")
    else:
        reasons.append(f"bounds overlap: {bounds_text}")
    if tested.diff is None:
        reasons.append("interval: no pair has a grade on both sides")
    else:
        verb = "supports" if tested.winner else "does not support"
        reasons.append(f"interval: paired difference {candidate} − {baseline} = {tested.describe()} {verb} a winner")
    if verdict is None:
        verdict = tested.winner or "no_supported_winner"

    table = pl.DataFrame(
        [
            {
                "baseline": baseline,
                "candidate": candidate,
                "pair_policy": pairs,
                "pairs_planned": joined.height,
                "pairs_used": in_use.height,
                "pairs_dropped": joined.height - in_use.height,
                "ungraded_counted_as_fail": int(
                    in_use.select((~pl.col("baseline_graded")).sum() + (~pl.col("candidate_graded")).sum()).item()
                )
                if pairs == "missing_as_fail"
                else 0,
                "baseline_scored_coverage": b["scored_coverage"],
                "candidate_scored_coverage": c["scored_coverage"],
                "coverage_difference": c["scored_coverage"] - b["scored_coverage"],
                "completion_difference": c["completion_rate"] - b["completion_rate"],
                "missingness_p_value": missingness_p,
                **quality,
                "mcnemar_p_value": mcnemar_p,
                "baseline_worst": b_low,
                "baseline_best": b_high,
                "candidate_worst": c_low,
                "candidate_best": c_high,
                "min_coverage": min_coverage,
                "confidence": confidence,
                "verdict": verdict,
                "reasons": reasons,
            }
        ]
    )
    dropped = joined.filter(~pl.col("used"))
    by_slice = (
        pl.concat(
            [
                dropped.group_by(pl.col(s).cast(pl.String).alias("slice_value"))
                .len("pairs_dropped")
                .with_columns(pl.lit(s).alias("slice_column"))
                .select("slice_column", "slice_value", "pairs_dropped")
                for s in slices
            ]
        ).sort("slice_column", "slice_value", nulls_last=True)
        if slices and pairs == "complete_pairs"
        else pl.DataFrame()
    )
    return Comparison(table=table, pairs=joined, dropped_by_slice=by_slice)
