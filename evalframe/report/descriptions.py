"""What every column of every report table means: the text stored in each Parquet file's metadata.

One dictionary of descriptions serves the writers (Parquet key-value metadata), the HTML page (header
tooltips) and the docs; a column that means something else in one table has its own entry there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: Each rate's formula: the rate is always shown next to it.
RATE_FORMULAS: Final[Mapping[str, str]] = {
    "completion_rate": "completed / planned",
    "scored_coverage": "scored / planned",
    "pass_rate_scored": "passed / scored",
    "pass_rate_planned": "passed / planned",
    "pass_rate_upper": "(passed + planned − scored) / planned",
}


#: Column descriptions shared by every table, stored in Parquet metadata and shown in docs.
DESCRIPTIONS: Mapping[str, str] = {
    # identity
    "candidate": "the system under evaluation (model, prompt revision, agent build); compared exactly",
    "case_id": "planned case identifier; compared exactly",
    "trial": "planned repetition of the case, 1..N (Inspect AI's epoch)",
    "attempt": "execution number of the unit; retries are 2, 3, …",
    "run_id": "identity of the run that produced the row",
    # funnel counts (summary, slices)
    "planned": "planned units (candidate × case × trial)",
    "observations": (
        "what the rates are over: the planned units, or under retry policy every each counted attempt and each"
        " unit without one"
    ),
    "attempted": "units with a row whose execution started",
    "completed": "units whose counted attempt completed",
    "with_output": "completed units that produced an output",
    "scored": "units with a valid grade",
    "passed": "scored units that passed (null when the grading gives no pass or fail: numeric scores, no threshold)",
    "failed": "scored units that did not pass (wrong answers; null like passed)",
    "missing": "planned units with no row at all (not failures)",
    "not_started": "units skipped or cancelled before running",
    "exec_failed": "units whose execution timed out or errored",
    "no_output": "completed units without an output",
    "judge_failed": "units whose grader could not produce a valid judgment",
    "not_scored": "completed units that were not graded",
    # rates
    "completion_rate": "completed / planned",
    "scored_coverage": "scored / planned",
    "pass_rate_scored": "passed / scored: quality given a valid grade; null when scored = 0",
    "pass_rate_planned": "passed / planned: worst case of the full-plan pass rate",
    "pass_rate_upper": "(passed + planned − scored) / planned: best case if every ungraded unit passed",
    # intervals and standard errors (summary)
    **{
        f"{rate}_ci_{end}": f"{side} end of the interval of {rate} = {formula}, at meta.confidence, cases as the "
        "independent units: Wilson 1927 with one unit per case, else Wilson on the CR1 effective sample size with "
        "t(cases - 1) (Korn & Graubard 1998); null with fewer than two cases"
        + ("; also null when withheld (see pass_rate_scored_ci_withheld)" if rate == "pass_rate_scored" else "")
        for rate, formula in RATE_FORMULAS.items()
        for end, side in (("low", "lower"), ("high", "upper"))
    },
    "pass_rate_scored_ci_withheld": (
        "why pass_rate_scored has no interval although units repeat in cases: cases sampled from a population "
        "need more than 28 + 25·g1² of them, g1 the skewness of the per-case results (Sugden, Smith & Jones "
        "2000); with the rule-of-three limit on an unseen kind of case; with cases fixed (--cases fixed), "
        "withheld when no case holds two scored units; null when the interval is given"
    ),
    "cases_planned": "distinct planned cases of the candidate",
    "cases_fully_scored": "cases all of whose planned trials got a valid grade",
    "pass_rate_scored_se_naive": "binomial standard error of pass_rate_scored, as if scored units were independent",
    "pass_rate_scored_se_clustered": "CR1 standard error of pass_rate_scored by case_id (Cameron & Miller 2015)",
    "design_effect": "variance of pass_rate_scored over its binomial variance (at least 1): why its interval is wide",
    "icc": "intra-case correlation of pass/fail, (design_effect - 1) / (scored units per case - 1) (Kish 1965)",
    "effective_n": "scored units / design_effect: how many independent units the scored ones are worth",
    "case_reducer": (
        "how trials of a case reduce to a case outcome, as declared: mean, any, all, majority, median, at_least:k, "
        "pass_at:k, or Inspect's max (any) or mode (majority)"
    ),
    "cases_scored": "cases all of whose planned units got a grade: the denominator of case_pass_rate",
    "case_pass_rate": "mean over cases_scored of each case's reduced outcome (its trials reduced by case_reducer)",
    "case_pass_rate_ci_low": "lower end of the interval of case_pass_rate (Wilson; fractional outcomes: bounded; "
    "--cases fixed: the within-case variance with the mean reducer, null with another)",
    "case_pass_rate_ci_high": "upper end of the interval of case_pass_rate over cases",
    "mean_score": "mean score among scored units, in score units",
    "mean_score_se_clustered": "CR1 standard error of mean_score clustered by case_id (Cameron & Miller 2015)",
    "mean_score_ci_low": "lower end of the case-clustered interval of mean_score, inside the score range",
    "mean_score_ci_high": "upper end of the case-clustered interval of mean_score, inside the score range",
    "missing_cases": "distinct cases with at least one missing unit",
    "missing_case_ids": "the first 20 such case ids in natural order (case/9 before case/10); units.parquet "
    "lists every missing unit",
    "selective_missingness": "slice columns whose ungraded or missing units concentrate in slices (Holm-adjusted "
    "case-level test), naming the slices; or null",
    # unit and ledger columns (units, attempts)
    "counted_attempt": "the attempt counted under the retry policy; null when the unit is missing",
    "attempts": "ledger rows (attempts) of the unit",
    "counts": "whether this attempt is the one counted under the retry policy",
    "outcome": (
        "the unit's outcome: missing, not_started, exec_failed, no_output, judge_failed, not_scored, "
        "scored_no_threshold, failed or passed"
    ),
    "exec_status": "completed, timeout, error or not_started",
    "score_status": "scored, judge_error or not_scored",
    "score": "the grade as a number (0 or 1 for binary grades)",
    "has_output": "whether the execution produced an output",
    "answer": "the answer, exact-matched against the plan's expected",
    "expected": "the plan's expected answer",
    "limit": "the limit an execution hit (from importers), if any",
    "dataset_version": "dataset version of the case",
    "case_hash": "content hash of the case's input and expected answer",
    "line": "1-based line (CSV, JSON Lines; the CSV header is line 1) or row (Parquet) in the source",
    "source": "the file (or plan/importer source) the row came from",
    # problems
    "kind": "what is wrong (see evalframe.problems.PROBLEM_KINDS)",
    "detail": "a sentence for a person",
    "refusing": "whether the problem refuses the batch",
    # slices and missingness
    "slice_column": "the plan column the funnel is broken down by",
    "slice_value": "the slice's value (numeric columns as interval labels); null for units without a value",
    "missing_rate": "missing / planned within the slice",
    "missing_ratio": "the slice's missing_rate over the candidate's overall missing rate; null when nothing is missing",
    "n_slices": "slice values with at least one planned unit",
    "cases": "planned cases of the candidate over every slice value (the test's independent units)",
    "ungraded": "units without a grade (no row, not started, execution failure, no output, grader failure, not scored)",
    "correction": "multiplicity correction over every test of the audit: holm (Holm 1979, step-down)",
    "test": "test of whether the slices' mean missing share per case differs: welch_permutation, or none",
    "statistic": "Welch's between-slice statistic W of cases' missing shares; null when no test is possible",
    "p_value": "larger of the permutation p-value (b+1)/(m+1) and the chi-square one of W, unadjusted; "
    "null when no test is possible",
    "p_adjusted": "Holm-adjusted p-value of the missing test over every test of the audit",
    "selective": "p_adjusted <= alpha (meta): missing units (no row) depend on the slice",
    "stands_out": "when selective: slice values whose missing rate is at least twice the candidate's "
    "overall rate, else those with the highest rate",
    "detectable": "shift of one slice's mean missing share per case the test detects with 80% power at "
    "alpha / tests (the largest over the slices); null when no test is possible",
    "test_ungraded": "test of whether the slices' mean ungraded share per case differs: welch_permutation, or none",
    "statistic_ungraded": "Welch's between-slice statistic W of cases' ungraded shares; null when no test is possible",
    "p_value_ungraded": "larger of the permutation p-value (b+1)/(m+1) and the chi-square one of W, unadjusted",
    "p_adjusted_ungraded": "Holm-adjusted p-value of the ungraded test over every test of the audit",
    "selective_ungraded": "p_adjusted_ungraded <= alpha (meta): ungraded units depend on the slice",
    "stands_out_ungraded": "when selective_ungraded: slice values whose ungraded rate is at least twice the "
    "candidate's overall rate, else those with the highest rate",
    "detectable_ungraded": "shift of one slice's mean ungraded share per case the test detects with 80% power "
    "at alpha / tests (the largest over the slices); null when no test is possible",
    # comparison
    "baseline": "the baseline candidate",
    "pair_policy": "complete_pairs (drop pairs without a grade on both sides) or missing_as_fail",
    "pairs_planned": "(case_id, trial) pairs planned for both sides",
    "pairs_used": "pairs the quality difference is computed on",
    "pairs_dropped": "pairs not used (a side without a grade under complete_pairs)",
    "units_not_paired": "units planned for one side only (a units-table plan): not compared, never a fail",
    "ungraded_counted_as_fail": "ungraded sides counted as a fail under missing_as_fail (0 otherwise)",
    "baseline_scored_coverage": "the baseline's scored_coverage (scored / planned)",
    "candidate_scored_coverage": "the candidate's scored_coverage (scored / planned)",
    "coverage_difference": "candidate − baseline scored_coverage",
    "completion_difference": "candidate − baseline completion_rate",
    "missingness_p_value": "exact McNemar p-value of paired gradedness: does missingness differ between sides?",
    "quality_difference": "mean paired difference candidate − baseline (pass 1 / fail 0, or score) on the pairs used",
    "se_naive": "standard error of quality_difference treating pairs as independent",
    "se_clustered": "CR1 standard error of quality_difference clustered by case_id (Cameron & Miller 2015)",
    "ci_low": "lower end of the case-level paired interval of quality_difference (interval_method)",
    "ci_high": "upper end of the case-level paired interval of quality_difference (interval_method)",
    "interval_method": (
        "newcombe (one trial per case, Newcombe 1998), wilson_clustered (cases × trials), wilson_fixed "
        "(cases fixed: within-case variance only), none"
    ),
    "cases_used": "cases holding the pairs used: the independent units of the paired test",
    "other_policy_ci_low": "lower end of the same interval under the other pair policy (a winner must win under both)",
    "other_policy_ci_high": "upper end of the same interval under the other pair policy",
    "tipping_point_difference": "the difference over every planned pair with every ungraded unit against the winner",
    "pair_correlation": "correlation of the two sides' case means on the pairs used (pairing on the same cases)",
    "detectable_difference": "smallest difference in pass rate, either way, this batch could detect with 80% power",
    "baseline_pass_rate_pairs": "the baseline's pass rate on the pairs used",
    "candidate_pass_rate_pairs": "the candidate's pass rate on the pairs used",
    "mcnemar_p_value": "exact McNemar p-value of the discordant pairs used (one trial per case; null otherwise)",
    "baseline_worst": "the baseline's pass_rate_planned (worst case)",
    "baseline_best": "the baseline's pass_rate_upper (best case)",
    "candidate_worst": "the candidate's pass_rate_planned (worst case)",
    "candidate_best": "the candidate's pass_rate_upper (best case)",
    "min_coverage": "minimum scored_coverage of each side (as declared, else the default 0.95)",
    "confidence": "two-sided coverage of the intervals",
    "verdict": "candidate_better, baseline_better, no_supported_winner or not_comparable (recorded settings differ)",
    "reasons": "what blocks or qualifies the verdict, in the order the checks ran",
    "checks_passed": "the checks that hold (an interval that supports a winner, a tipping point that holds)",
    "baseline_outcome": "the baseline's outcome for the pair (null when not planned for it)",
    "candidate_outcome": "the candidate's outcome for the pair (null when not planned for it)",
    "used": "whether the pair enters the quality difference",
    "baseline_value": "the baseline's value compared: 1 passed, 0 otherwise (numeric: score; ungraded: range low)",
    "candidate_value": "the candidate's value compared: 1 passed, 0 otherwise (numeric: score; ungraded: range low)",
    "baseline_graded": "whether the baseline side has a valid grade",
    "candidate_graded": "whether the candidate side has a valid grade",
}

#: Where a column means something else in one table than in the summary.
TABLE_DESCRIPTIONS: Mapping[str, Mapping[str, str]] = {
    "units": {
        "passed": "grade of the counted attempt: true pass, false fail, null when not scored",
        "line": "line or row of the counted attempt in its source; null when the unit is missing",
        "source": "the file the counted attempt came from; null when the unit is missing",
    },
    "attempts": {
        "passed": "this attempt's grade: true pass, false fail, null when not scored",
        "attempts": "ledger rows (attempts) of this attempt's unit",
    },
    "missingness": {
        "planned": "planned units of the candidate over every slice value (under retry every: its observations)",
        "missing": "missing units of the candidate over every slice value",
        "ungraded": "ungraded units (under retry every: observations) of the candidate over every slice value",
    },
    "comparison": {"candidate": "the candidate compared against the baseline"},
    "dropped_pairs": {"pairs_dropped": "pairs of this slice value dropped under complete_pairs"},
    "flips": {
        "baseline_k": "trials of the case the baseline passed, among its scored trials",
        "baseline_n": "scored trials of the case for the baseline (ungraded trials are not counted)",
        "candidate_k": "trials of the case the candidate passed, among its scored trials",
        "candidate_n": "scored trials of the case for the candidate (ungraded trials are not counted)",
        "p_value": "two-sided Fisher exact p-value of equal pass rates on the case's 2x2 table, unadjusted; "
        "null when incomparable",
        "p_holm": "p_value Holm-adjusted across the cases neither stable pass nor stable fail (1 for those); "
        "null when incomparable",
        "flip_class": "stable_pass, stable_fail, fixed or regressed (p_holm below alpha), flaky (otherwise), "
        "incomparable (a side has no scored trial)",
        "incomparable_side": "the side with no scored trial: baseline, candidate or both; null when comparable",
    },
    "reconciliation": {
        "task": "the task the export reported the headline for; null when it names none",
        "tool": "the tool whose export reported the headline (Inspect, lm-eval, ...)",
        "metric": "the metric the export reported",
        "source": "the export file that reported the headline",
        "reported": "the headline value the export reported, as it states it",
        "implied_denominator": "the units the reported value is over, as the export states or implies them",
        "denominator_of": "what the implied denominator counts, in the export's terms (e.g. scored samples)",
        "planned": "planned units of the candidate, as audited",
        "scored": "scored units of the candidate, as audited",
        "passed": "passed units of the candidate, as audited",
        "gap": "reported − pass_rate_planned (a fraction): what the points columns decompose",
        "points_missing": "part of the gap from missing units (fraction, not percentage points)",
        "points_not_started": "part of the gap from units never started (fraction)",
        "points_exec_failed": "part of the gap from errored or timed-out units (fraction)",
        "points_no_output": "part of the gap from units without output (fraction)",
        "points_judge_failed": "part of the gap from grader failures (fraction)",
        "points_not_scored": "part of the gap from units not scored (fraction)",
        "points_duplicates": "part of the gap from counting every scored attempt (duplicates, retries) (fraction)",
        "points_unexplained": "part of the gap no kind of ungraded unit accounts for (fraction); 0 when explained",
        "sentence": "the reconciliation said for a person (also a headline_reconciled note)",
    },
    "attempt_rates": {
        "attempt": "attempt number: 1 the first execution, retries 2, 3, ...",
        "attempted": "attempts with this number",
        "scored": "attempts with this number that have a valid grade",
        "passed": "scored attempts with this number that passed",
        "cases": "cases with a scored attempt of this number (the interval's clusters)",
        "pass_rate_scored": "passed / scored over the attempts with this number; null when none scored",
        "pass_rate_scored_ci_low": "lower end of the interval of pass_rate_scored, attempts clustered by case (CR1, "
        "Korn & Graubard 1998); null with fewer than two cases",
        "pass_rate_scored_ci_high": "upper end of the interval of pass_rate_scored, attempts clustered by case (CR1, "
        "Korn & Graubard 1998); null with fewer than two cases",
    },
    "retried_by_slice": {
        "slice": "the slice column the row is within; null for the whole candidate",
        "value": "the slice value the row is within; null for the whole candidate",
        "retried_units": "units with two or more attempts",
        "retried_scored": "retried units whose counted attempt was scored",
        "retried_passed": "retried units whose counted attempt passed",
        "never_units": "units with exactly one attempt (missing units are in neither group)",
        "never_scored": "never-retried units that were scored",
        "never_passed": "never-retried units that passed",
        "retried_rate": "retried_passed / retried_scored; null when none scored",
        "never_rate": "never_passed / never_scored; null when none scored",
    },
}

#: Description of a column no table above knows (e.g. a plan's slice column).
CARRIED = "column carried unchanged from the plan or the ledger"


def describe(table: str, column: str) -> str:
    """Describe a column of a report table (the text stored in Parquet metadata).

    Examples
    --------
    >>> describe("summary", "pass_rate_scored_ci_low")[:68]
    'lower end of the interval of pass_rate_scored = passed / scored, at '
    >>> describe("units", "passed")
    'grade of the counted attempt: true pass, false fail, null when not scored'
    >>> describe("units", "case_type")
    'column carried unchanged from the plan or the ledger'
    """
    return TABLE_DESCRIPTIONS.get(table, {}).get(column) or DESCRIPTIONS.get(column, CARRIED)
