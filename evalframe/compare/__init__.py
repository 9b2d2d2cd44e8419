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

``evalframe.compare`` names the function :func:`compare`. The package defines
:func:`compare` and :class:`Comparison`, and holds:

* :mod:`~evalframe.compare.pairs`: the units paired on identity, the scale compared, the pair counts;
* :mod:`~evalframe.compare.inference`: the paired test, its quality columns, the detectable difference;
* :mod:`~evalframe.compare.reasons`: the verdict's reasons in words, one per check;
* :mod:`~evalframe.compare.settings`: the settings the two runs record, side by side (comparable at all?).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import polars as pl

from evalframe.columns import CANDIDATE
from evalframe.compare.flips import comparison_flips, flip_counts
from evalframe.compare.inference import Tested, batch_detectable, quality, tested
from evalframe.compare.pairs import (
    PAIR_KEY,
    PairPolicy,
    Scale,
    check_cases,
    check_compare_options,
    check_names,
    declared_confidence,
    dropped_by_slice,
    missingness_p_value,
    pair_counts,
    paired_units,
    task_report,
    unpaired_count,
)
from evalframe.compare.reasons import (
    bounds_reason,
    coverage_reasons,
    interval_reason,
    not_comparable_reason,
    policy_reason,
    power_reason,
    sample_reason,
    skew_reason,
    tipping_point,
    unpaired_reason,
)
from evalframe.compare.settings import settings_verdict
from evalframe.report.model import AuditReport
from evalframe.stats.clustered import SKEW_RULE_BASE, Target
from evalframe.stats.detectable import Detectable

__all__ = ["PAIR_KEY", "Comparison", "PairPolicy", "compare"]

#: The minimum ``scored_coverage`` of each side when none is declared (SPEC §6, check 1).
DEFAULT_MIN_COVERAGE: Final = 0.95


@dataclass(frozen=True, repr=False)
class Comparison:
    """A paired comparison and its verdict.

    Attributes
    ----------
    table
        One row: identities, policy, pair counts, coverage of each side and
        their difference, the paired quality difference (candidate −
        baseline) with its clustered standard error and interval, the exact
        McNemar p-value, each side's worst/best-case bounds, ``verdict``,
        ``reasons`` (List[String]: what blocks or qualifies the verdict) and
        ``checks_passed`` (List[String]: the checks that hold).
    pairs
        One row per (case_id, trial) planned for either side: each side's
        outcome, whether the pair is used, and the values compared.
    dropped_by_slice
        Under ``complete_pairs``: dropped pairs per (slice column, slice
        value) for the report's slices (empty otherwise).
    case_flips
        The trial-aware flips (SPEC §6c, :func:`evalframe.compare.flips.case_flips`): one row per
        case planned for both sides, each side's passes over its scored trials, Fisher's exact
        p-value, its Holm-adjusted value and the case's ``flip_class``; a ``task`` column first when
        the report holds several tasks. Empty for numeric scores without a pass threshold.
    flips_note
        Why no case could be classed fixed or regressed, when its trials rule it out (a single trial
        per side); else None.
    bins
        The slices cut into bins, as the audit declared them (``report.meta["bins"]``: column → edges);
        their values in ``pairs`` and ``dropped_by_slice`` are the bins' labels.
    """

    table: pl.DataFrame
    pairs: pl.DataFrame
    dropped_by_slice: pl.DataFrame = field(default_factory=pl.DataFrame)
    case_flips: pl.DataFrame = field(default_factory=pl.DataFrame)
    flips_note: str | None = None
    bins: Mapping[str, list[float]] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """``candidate_better``, ``baseline_better`` or ``no_supported_winner``."""
        return str(self.table.item(0, "verdict"))

    @property
    def reasons(self) -> list[str]:
        """What blocks or qualifies the verdict, in the order the checks ran (a check that holds is not one)."""
        return list(self.table.item(0, "reasons"))

    @property
    def checks_passed(self) -> list[str]:
        """The checks of SPEC §6 that hold (the interval that supports a winner, the tipping point), in words."""
        return list(self.table.item(0, "checks_passed"))

    @property
    def flip_counts(self) -> dict[str, int]:
        """Cases per flip class (:data:`evalframe.columns.FLIP_CLASSES`, every class, zero included)."""
        return flip_counts(self.case_flips)

    def to_markdown(self) -> str:
        """The comparison as Markdown: verdict, reasons, numbers, dropped and flipped pairs.

        Rendered by :func:`evalframe.report.markdown.comparison_markdown`, imported here (the import
        contract's exemption in pyproject.toml) so that importing the comparison loads no renderer.
        """
        from evalframe.report.markdown import comparison_markdown

        return comparison_markdown(self)

    def __repr__(self) -> str:
        """The verdict, the difference with its interval and the cases it rests on, and each reason.

        See :func:`evalframe.report.notebook.comparison_text` (imported here, as :meth:`to_markdown` does).
        """
        from evalframe.report.notebook import comparison_text

        return comparison_text(self)

    def _repr_html_(self) -> str:
        """HTML for Jupyter (see :func:`evalframe.report.notebook.comparison_html`)."""
        from evalframe.report.notebook import comparison_html

        return comparison_html(self)


def compare(
    report: AuditReport,
    *,
    baseline: str,
    candidate: str,
    pairs: PairPolicy = "complete_pairs",
    min_coverage: float | None = None,
    confidence: float | None = None,
    alpha: float = 0.05,
    task: str | None = None,
    cases: Target | None = None,
    comparable_on: Sequence[str] | None = None,
    ignore_settings: Sequence[str] = (),
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
        Declared minimum ``scored_coverage`` of each side (fraction); None: the default
        :data:`DEFAULT_MIN_COVERAGE` (0.95), which the coverage reason calls the default, not declared.
    confidence
        Coverage of the intervals of the paired difference (None: what the audit declared,
        ``report.meta["confidence"]``, else 0.95).
    alpha
        Significance level of the exact McNemar tests (paired gradedness;
        discordant pairs with one trial per case), and the family-wise error
        rate of the per-case flips (Holm across cases).
    task
        The task whose units are compared, required when the report holds
        several (``meta["tasks"]``): candidates are compared within one task,
        on its cases, as lm-eval and Inspect report per task; tasks are never
        pooled. The comparison is then that of ``report.by_task()[task]``,
        its table starting with a ``task`` column (String). For a report of
        one task it may be omitted (or name that task).
    cases
        What the verdict is about (None: what the audit declared, ``report.meta["cases"]``,
        else ``sample``): ``sample``, the cases as a sample of
        a larger population of tasks; ``fixed``, these cases as the whole
        population — inference over trial noise only, conditional on these
        cases (Miller 2024, "Adding Error Bars to Evals"): the paired
        difference's variance is the within-case variance of the per-pair
        differences (:func:`evalframe.stats.paired_rate_difference`,
        ``target="fixed"``), with no skewness rule, and no interval (so no
        winner) when no case holds two pairs or more.

    comparable_on, ignore_settings
        The recorded settings that decide whether the two runs are comparable (None: every key the exports
        record, but ``ignore_settings``); see :func:`evalframe.compare.settings.settings_side_by_side`. A
        deciding key whose values differ (or, for a ``comparable_on`` key, that a side does not record)
        makes the verdict ``not_comparable``, its reason naming each key and value first.

    Returns
    -------
    Comparison
        Its ``case_flips`` class each case planned for both sides (SPEC §6c): each side's passes over
        its scored trials, Fisher's exact test, Holm across cases; ``fixed`` or ``regressed`` only when
        the adjusted p-value is below ``alpha``, ``flaky`` when the sides differ without that,
        ``incomparable`` when a side has no scored trial (never ``regressed``). One trial per side can
        never show a case fixed or regressed (``flips_note`` says so); see
        :func:`evalframe.compare.flips.classify_cases`.

    Raises
    ------
    evalframe.errors.OptionError
        ``option`` ``"task"``: the report holds several tasks and ``task`` is
        not given or not one of them (the reason lists them), or a one-task
        report is asked for another task.
    evalframe.errors.OptionError
        When ``cases`` is neither ``sample`` nor ``fixed`` (``option`` ``"cases"``), ``pairs`` not a
        pair policy (``"pairs"``), ``confidence`` not strictly between 0 and 1 (``"confidence"``), or
        when the report has several observations per unit (audited with
        ``retry="every"`` and a unit retried): ``option`` is ``"retry"``, and
        the reason names the policies compare takes (``first``,
        ``last_allowed``). A ``ValueError`` too.
    ValueError
        When a name is not a candidate of the report, or both names are the same.

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
       fewer than two cases (:mod:`evalframe.stats`). Cases are taken as a
       sample of a larger population of tasks: a clustered interval (several
       trials per case, or numeric scores) also needs G > 28 + 25·g1², g1 the
       skewness of the per-case differences (Cochran's rule as refined by
       Sugden, Smith & Jones 2000, :func:`evalframe.stats.skew_check`), else
       a ``skewness:`` reason and no winner;
    3. the other pair policy's interval gives the same winner;
    4. tipping point: over every planned pair, with every ungraded unit
       filled against the claimed winner (a fail for it, a pass for the
       other side), the difference is still on the winner's side.

    Worst/best-case bounds (Manski 1990) are reported as a reason, not a
    route to a winner. Two candidates that share no planned case (units-table
    plans, or a task one of them was never run on) are not comparable: the
    verdict is ``no_supported_winner`` with that one reason, and no bounds or
    power sentence ranks them.
    A ``sample:`` reason says what the verdict is about
    and what the cases cannot show: with G cases, a kind of case that fails
    every time and makes up to 3/G of the population could be absent (the
    rule of three, :func:`evalframe.stats.rare_case_limit`).

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
    'coverage: A scored_coverage 0.5 is below the default minimum (none declared) 0.95'
    >>> compare(ef.audit(plan, results), baseline="B", candidate="A", min_coverage=0.9).reasons[0]
    'coverage: A scored_coverage 0.5 is below the declared minimum 0.9'
    """
    cases = check_cases(report.meta.get("cases", "sample") if cases is None else cases)
    confidence = declared_confidence([report], confidence)
    check_compare_options(pairs, min_coverage, alpha, comparable_on, ignore_settings)
    declared_minimum = min_coverage is not None
    min_coverage = DEFAULT_MIN_COVERAGE if min_coverage is None else min_coverage
    several = len(report.meta.get("tasks", [])) >= 2
    report = task_report(report, task)
    check_names(report, baseline, candidate, task)
    scale = Scale.of(report.meta)
    joined = paired_units(report, baseline, candidate, scale, pairs)
    in_use = joined.filter(pl.col("used"))
    side = {r[CANDIDATE]: r for r in report.summary.iter_rows(named=True) if r[CANDIDATE] in (baseline, candidate)}
    b, c = side[baseline], side[candidate]
    values = (pl.col("candidate_value"), pl.col("baseline_value"))
    graded = joined.filter(pl.col("baseline_graded") & pl.col("candidate_graded"))
    complete, as_fail = (tested(f, scale, confidence, alpha, cases) for f in (graded, joined))
    declared, other = (complete, as_fail) if pairs == "complete_pairs" else (as_fail, complete)
    other_name = "missing_as_fail" if pairs == "complete_pairs" else "complete_pairs"
    missingness_p = missingness_p_value(joined)
    reasons = coverage_reasons(
        {baseline: b, candidate: c}, min_coverage, missingness_p, alpha, declared=declared_minimum
    )
    coverage_ok = not reasons
    unpaired = {name: unpaired_count(report, name, joined) for name in (baseline, candidate)}
    if any(unpaired.values()):
        reasons.append(unpaired_reason(unpaired))
    said: tuple[list[str], list[str]] = (reasons, [])  # (reasons, checks that hold: neither block nor qualify)
    said[declared.winner is not None].append(interval_reason(declared, scale, candidate, baseline, alpha))
    winner, tipping = _supported_winner(declared, (other_name, other), joined, scale, (baseline, candidate), said)
    skew = None if declared.test is None else declared.test.skew
    bounds = (b["pass_rate_planned"], b["pass_rate_upper"], c["pass_rate_planned"], c["pass_rate_upper"])
    if None not in bounds:
        reasons.append(bounds_reason(bounds, candidate, baseline))
    verdict = winner if coverage_ok and winner is not None else "no_supported_winner"
    exports, names = report.meta.get("exports") or [], (baseline, candidate)
    verdict, reasons = settings_verdict(exports, names, task, comparable_on, ignore_settings, verdict, reasons)
    pair_r, found, base_rate = batch_detectable(
        in_use, b, numeric=scale.numeric, alpha=alpha, confidence=confidence, target=cases
    )
    if skew is not None and skew.cases <= SKEW_RULE_BASE:  # no data can meet G > 28 + 25·g1²: nothing detectable
        found = None
    detectable = None if found is None else found.difference
    reasons = _closing_reasons(
        reasons, joined, declared, verdict, found, base_rate, (baseline, candidate), task, cases, numeric=scale.numeric
    )
    row = {
        **({"task": task} if several else {}),
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
        "checks_passed": said[1],
    }
    table = pl.DataFrame([row], schema_overrides=_ROW_TYPES)
    flips, note = comparison_flips(joined, alpha=alpha, numeric=scale.numeric, task=task if several else None)
    dropped = dropped_by_slice(joined, scale.slices, pairs)
    return Comparison(
        table=table, pairs=joined, dropped_by_slice=dropped, case_flips=flips, flips_note=note, bins=scale.bins
    )


def _supported_winner(
    declared: Tested,
    other: tuple[str, Tested],
    joined: pl.DataFrame,
    scale: Scale,
    names: tuple[str, str],
    said: tuple[list[str], list[str]],
) -> tuple[str | None, float | None]:
    """The winner the declared test supports once the skew, the other pair policy and the tipping point agree.

    ``said`` is (reasons, checks passed): a check that fails appends its reason to the first, the tipping point
    that holds appends its sentence to the second; gives the winner (or None) and the tipping-point difference
    (None without a winner to test).
    """
    baseline, candidate = names
    reasons, passed = said
    other_name, other_test = other
    winner = declared.winner
    skew = None if declared.test is None else declared.test.skew
    if winner is not None and skew is not None and not skew.holds:
        reasons.append(skew_reason(skew, "mean score" if scale.numeric else "pass rate"))
        winner = None
    policies_agree = winner is None or other_test.winner == winner
    if not policies_agree:
        reasons.append(policy_reason(other_name, other_test, winner))
    tipping: float | None = None
    if winner is not None:
        tipping, holds, reason = tipping_point(joined, winner, scale, candidate, baseline)
        (passed if holds else reasons).append(reason)
        winner = winner if holds and policies_agree else None
    return winner, tipping


def _closing_reasons(
    reasons: list[str],
    joined: pl.DataFrame,
    declared: Tested,
    verdict: str,
    found: Detectable | None,
    base_rate: float | None,
    names: tuple[str, str],
    task: str | None,
    cases: Target,
    *,
    numeric: bool,
) -> list[str]:
    """``reasons`` with what the verdict is about and, without a winner, what the design could have detected.

    Two candidates with no unit in common are only "not comparable": no bounds or power sentence may read as a
    ranking of them.
    """
    baseline, candidate = names
    if joined.height == 0:
        return [not_comparable_reason(baseline, candidate, task)]
    test = declared.test
    if test is not None:
        reasons = [*reasons, sample_reason(test.n_clusters, cases)]
    if verdict == "no_supported_winner":
        n_cases, clustered = (0, False) if test is None else (test.n_clusters, test.skew is not None)
        reasons = [
            *reasons,
            power_reason(n_cases, found, base_rate, candidate, baseline, numeric=numeric, clustered=clustered),
        ]
    return reasons


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
#: The comparison row's column types that its values alone would not give (nulls, empty lists).
_ROW_TYPES: Final = dict.fromkeys(_NULLABLE_FLOATS, pl.Float64) | dict.fromkeys(
    ("reasons", "checks_passed"), pl.List(pl.String)
)
