"""The frozen audit report and its writers (Parquet, Markdown, JSON, HTML).

A report is immutable: its tables are polars DataFrames sorted by key, so the
same plan and ledger always give byte-identical tables whatever the row order
of the inputs. An output folder is evalframe's own (its manifest lists every
file it wrote, with its hash) and is replaced all or nothing: the new output is
written complete beside it, then exchanged with the old (see :func:`write_output`).
Every Parquet file carries a description of each of its columns and the
report's provenance in its key-value metadata.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import functools
import glob
import hashlib
import html
import itertools
import json
import math
import os
import shutil
import signal
import stat
import tempfile
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from evalframe.columns import CANDIDATE, KIND, OUTCOME
from evalframe.errors import OutputFolderError
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS
from evalframe.slices import missingness_shown

if TYPE_CHECKING:
    from evalframe.compare import Comparison

#: Each rate's formula: the rate is always shown next to it.
RATE_FORMULAS: Final[Mapping[str, str]] = {
    "completion_rate": "completed / planned",
    "scored_coverage": "scored / planned",
    "pass_rate_scored": "passed / scored",
    "pass_rate_planned": "passed / planned",
    "pass_rate_upper": "(passed + planned − scored) / planned",
}
#: Numerator and denominator column of each rate (the upper bound's numerator is computed).
RATE_PARTS: Final[Mapping[str, tuple[str, str]]] = {
    "completion_rate": ("completed", "planned"),
    "scored_coverage": ("scored", "planned"),
    "pass_rate_scored": ("passed", "scored"),
    "pass_rate_planned": ("passed", "planned"),
    "pass_rate_upper": ("passed + planned − scored", "planned"),
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
    "attempted": "units with a row whose execution started",
    "completed": "units whose counted attempt completed",
    "with_output": "completed units that produced an output",
    "scored": "units with a valid grade",
    "passed": "scored units that passed",
    "failed": "scored units that did not pass (wrong answers)",
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
        for rate, formula in RATE_FORMULAS.items()
        for end, side in (("low", "lower"), ("high", "upper"))
    },
    "cases_planned": "distinct planned cases of the candidate",
    "cases_fully_scored": "cases all of whose planned trials got a valid grade",
    "pass_rate_scored_se_naive": "binomial standard error of pass_rate_scored, as if scored units were independent",
    "pass_rate_scored_se_clustered": "CR1 standard error of pass_rate_scored by case_id (Cameron & Miller 2015)",
    "design_effect": "variance of pass_rate_scored over its binomial variance (at least 1): why its interval is wide",
    "icc": "intra-case correlation of pass/fail, (design_effect - 1) / (scored units per case - 1) (Kish 1965)",
    "effective_n": "scored units / design_effect: how many independent units the scored ones are worth",
    "case_reducer": "how trials of a case reduce to a case outcome: mean, any, all, majority or at_least:k",
    "cases_scored": "cases all of whose planned units got a grade: the denominator of case_pass_rate",
    "case_pass_rate": "mean over cases_scored of each case's reduced outcome (its trials reduced by case_reducer)",
    "case_pass_rate_ci_low": "lower end of the interval of case_pass_rate over cases (Wilson; mean: bounded interval)",
    "case_pass_rate_ci_high": "upper end of the interval of case_pass_rate over cases",
    "mean_score": "mean score among scored units, in score units",
    "mean_score_se_clustered": "CR1 standard error of mean_score clustered by case_id (Cameron & Miller 2015)",
    "mean_score_ci_low": "lower end of the case-clustered interval of mean_score, inside the score range",
    "mean_score_ci_high": "upper end of the case-clustered interval of mean_score, inside the score range",
    "missing_cases": "distinct cases with at least one missing unit",
    "missing_case_ids": "the first 20 such case ids, sorted (units.parquet lists every missing unit)",
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
    "test": "test of whether cases' missing fraction depends on the slice: case_permutation, or none",
    "statistic": "between-slice statistic H of cases' missing fraction; null when no test is possible",
    "p_value": "permutation p-value (b+1)/(m+1) of the missing test, unadjusted; null when no test is possible",
    "p_adjusted": "Holm-adjusted p-value of the missing test over every test of the audit",
    "selective": "p_adjusted <= alpha (meta): missing units (no row) depend on the slice",
    "stands_out": "when selective: slice values whose missing rate is at least twice the candidate's "
    "overall rate, else those with the highest rate",
    "test_ungraded": "test of whether cases' ungraded fraction depends on the slice: case_permutation, or none",
    "statistic_ungraded": "between-slice statistic H of cases' ungraded fraction; null when no test is possible",
    "p_value_ungraded": "permutation p-value (b+1)/(m+1) of the ungraded test, unadjusted",
    "p_adjusted_ungraded": "Holm-adjusted p-value of the ungraded test over every test of the audit",
    "selective_ungraded": "p_adjusted_ungraded <= alpha (meta): ungraded units depend on the slice",
    "stands_out_ungraded": "when selective_ungraded: slice values whose ungraded rate is at least twice the "
    "candidate's overall rate, else those with the highest rate",
    # comparison
    "baseline": "the baseline candidate",
    "pair_policy": "complete_pairs (drop pairs without a grade on both sides) or missing_as_fail",
    "pairs_planned": "(case_id, trial) pairs planned for either side",
    "pairs_used": "pairs the quality difference is computed on",
    "pairs_dropped": "pairs not used (a side without a grade under complete_pairs)",
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
    "interval_method": "newcombe (one trial per case, Newcombe 1998), wilson_clustered (cases × trials), none",
    "cases_used": "cases holding the pairs used: the independent units of the paired test",
    "other_policy_ci_low": "lower end of the same interval under the other pair policy (a winner must win under both)",
    "other_policy_ci_high": "upper end of the same interval under the other pair policy",
    "tipping_point_difference": "the difference over every planned pair with every ungraded unit against the winner",
    "pair_correlation": "correlation of the two sides' case means on the pairs used (pairing on the same cases)",
    "detectable_difference": "difference in pass rate this batch could detect with 80% power (evalframe.power)",
    "baseline_pass_rate_pairs": "the baseline's pass rate on the pairs used",
    "candidate_pass_rate_pairs": "the candidate's pass rate on the pairs used",
    "mcnemar_p_value": "exact McNemar p-value of the discordant pairs used (one trial per case; null otherwise)",
    "baseline_worst": "the baseline's pass_rate_planned (worst case)",
    "baseline_best": "the baseline's pass_rate_upper (best case)",
    "candidate_worst": "the candidate's pass_rate_planned (worst case)",
    "candidate_best": "the candidate's pass_rate_upper (best case)",
    "min_coverage": "declared minimum scored_coverage of each side",
    "confidence": "two-sided coverage of the intervals",
    "verdict": "candidate_better, baseline_better or no_supported_winner",
    "reasons": "why the verdict is what it is, in the order the checks ran",
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
        "planned": "planned units of the candidate over every slice value",
        "missing": "missing units of the candidate over every slice value",
        "ungraded": "ungraded units of the candidate over every slice value",
    },
    "comparison": {"candidate": "the candidate compared against the baseline"},
    "dropped_pairs": {"pairs_dropped": "pairs of this slice value dropped under complete_pairs"},
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


def fmt_value(value: Any, *, digits: int = 4) -> str:
    """Format a table value for people: ``digits`` significant digits, floats keep a decimal point.

    Examples
    --------
    >>> [fmt_value(v) for v in (1.0, 0.5, 2 / 3, 3, None, ["privacy", "handoff"], [])]
    ['1.0', '0.5', '0.6667', '3', 'null', 'privacy, handoff', '—']
    >>> fmt_value(0.34238, digits=3)
    '0.342'
    """
    if value is None:
        return "null"
    if isinstance(value, float):
        text = f"{value:.{digits}g}"
        return f"{text}.0" if math.isfinite(value) and text.lstrip("-").isdigit() else text
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    return str(value)


#: Control characters (C0, DEL, C1) written as Python escapes (a newline as ``\n``): a cell stays on its row.
_CONTROL: Final = {i: repr(chr(i))[1:-1] for i in (*range(0x20), *range(0x7F, 0xA0))}
#: Markdown text escapes: backslash escapes for the characters that make code, links, emphasis, strikethrough,
#: headings and table cells; entities for those that make HTML and entities. Applied before :data:`_CONTROL`.
_MARKDOWN: Final = str.maketrans({**{c: f"\\{c}" for c in "\\`*[]|~#!"}, "&": "&amp;", "<": "&lt;", ">": "&gt;"})


def markdown_text(value: Any) -> str:
    r"""A value as Markdown text that renders as written: no code, link, HTML, emphasis or table break.

    Text from the input (ids, candidate names, paths, reasons quoting them)
    goes through this before it is placed in Markdown: ``|`` cannot end a
    table cell, ``<script>`` is shown rather than run, ``[x](url)`` is not a
    link, and a newline is written ``\n`` so the cell stays on its row.

    Examples
    --------
    >>> print(markdown_text("<script>alert(1)</script> a|b [x](y) `c`"))
    &lt;script&gt;alert(1)&lt;/script&gt; a\|b \[x\](y) \`c\`
    >>> print(markdown_text("line\nbreak"))
    line\nbreak
    """
    return fmt_value(value).translate(_MARKDOWN).translate(_CONTROL)


def markdown_code(value: Any) -> str:
    r"""A value as a Markdown code span that shows it as written, whatever backticks it holds.

    The fence is one backtick longer than the longest run inside (CommonMark);
    a newline is written ``\n`` so the span stays on its line.

    Examples
    --------
    >>> print(markdown_code("plan.csv"), markdown_code("a`b"), markdown_code("`x"))
    `plan.csv` ``a`b`` `` `x ``
    """
    text = str(value).translate(_CONTROL)
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_table(frame: pl.DataFrame) -> str:
    """Render a frame as a GitHub Markdown table (nulls as ``null``); every name and cell is :func:`markdown_text`.

    Examples
    --------
    >>> print(markdown_table(pl.DataFrame({"candidate": ["A|B"], "scored_coverage": [0.5]})))
    | candidate | scored_coverage |
    |---|---|
    | A\\|B | 0.5 |
    """
    head = "| " + " | ".join(markdown_text(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(markdown_text(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join([head, rule, *body])


def missing_ids_text(record: Mapping[str, Any]) -> str:
    """The summary's missing case ids as text, with how many more the units table holds.

    Examples
    --------
    >>> missing_ids_text({"missing_cases": 23, "missing_case_ids": ["a", "b"]})
    'a, b … (+21 more)'
    >>> missing_ids_text({"missing_cases": 0, "missing_case_ids": []})
    '—'
    """
    ids = [str(v) for v in record.get("missing_case_ids") or []]
    more = int(record.get("missing_cases") or 0) - len(ids)
    return (", ".join(ids) or "—") + (f" … (+{more} more)" if more > 0 else "")


def interval_text(record: Mapping[str, Any], rate: str) -> str:
    """A summary rate's interval as ``[low, high]`` (``null`` when the rate is undefined).

    Examples
    --------
    >>> interval_text({"scored_coverage_ci_low": 0.15004, "scored_coverage_ci_high": 0.85}, "scored_coverage")
    '[0.15, 0.85]'
    >>> interval_text({"pass_rate_scored_ci_low": 0.34238, "pass_rate_scored_ci_high": 1.0}, "pass_rate_scored")
    '[0.342, 1.0]'
    """
    low, high = record.get(f"{rate}_ci_low"), record.get(f"{rate}_ci_high")
    if low is None or high is None:
        return "null"
    return f"[{fmt_value(low, digits=3)}, {fmt_value(high, digits=3)}]"


def _bounds(record: Mapping[str, Any]) -> tuple[float, float] | None:
    low, high = record.get("pass_rate_planned"), record.get("pass_rate_upper")
    return None if low is None or high is None else (float(low), float(high))


def headline(record: Mapping[str, Any]) -> list[str]:
    """Sentences that read one candidate's summary row with its denominators.

    Parameters
    ----------
    record
        One row of :attr:`AuditReport.summary` as a dict.

    Returns
    -------
    list of str
        The pass rate with passed / scored, the coverage with scored /
        planned, the full-plan range (worst and best case) when some unit is
        ungraded, and what happened to the ungraded units.

    Examples
    --------
    >>> row = {"candidate": "A", "planned": 4, "scored": 2, "passed": 2, "missing": 2,
    ...     "pass_rate_scored": 1.0, "scored_coverage": 0.5, "pass_rate_planned": 0.5, "pass_rate_upper": 1.0,
    ...     "missing_cases": 2, "missing_case_ids": ["handoff", "privacy"]}
    >>> for line in headline(row):
    ...     print(line)
    A: pass_rate_scored 1.0 = 2 passed / 2 scored, and only 2 of 4 planned units were scored
    (scored_coverage 0.5).
    Over all 4 planned units A's pass rate lies between 0.5 (pass_rate_planned = passed / planned,
    every ungraded unit failed) and 1.0 (pass_rate_upper, every ungraded unit passed).
    Ungraded: 2 missing (no row at all): handoff, privacy.
    """
    name = record[CANDIDATE]
    planned, scored, passed = int(record["planned"]), int(record["scored"]), int(record["passed"])
    coverage = fmt_value(record.get("scored_coverage"))
    rate = record.get("pass_rate_scored")
    lines = []
    if rate is None and scored == 0:
        lines.append(f"{name}: no pass rate — 0 of {planned} planned units were scored (pass_rate_scored is null).")
    elif rate is None:
        lines.append(
            f"{name}: {scored} of {planned} planned units were scored, but no pass threshold was declared: "
            "no pass rate."
        )
    elif scored == planned:
        lines.append(
            f"{name}: pass_rate_scored {fmt_value(rate)} = {passed} passed / {scored} scored; "
            f"every one of the {planned} planned units was scored (scored_coverage {coverage})."
        )
    else:
        lines.append(
            f"{name}: pass_rate_scored {fmt_value(rate)} = {passed} passed / {scored} scored, and only {scored} of "
            f"{planned} planned units were scored (scored_coverage {coverage})."
        )
    bounds = _bounds(record)
    if bounds is not None and scored < planned:
        lines.append(
            f"Over all {planned} planned units {name}'s pass rate lies between {fmt_value(bounds[0])} "
            "(pass_rate_planned = passed / planned, every ungraded unit failed) and "
            f"{fmt_value(bounds[1])} (pass_rate_upper, every ungraded unit passed)."
        )
    ungraded = []
    if record.get("missing"):
        ungraded.append(f"{record['missing']} missing (no row at all): {missing_ids_text(record)}")
    for name_ in ("not_started", "exec_failed", "no_output", "judge_failed", "not_scored"):
        if record.get(name_):
            ungraded.append(f"{record[name_]} {name_}")
    if ungraded:
        lines.append("Ungraded: " + "; ".join(ungraded) + ".")
    if record.get("selective_missingness"):
        lines.append(f"Selective missingness: {record['selective_missingness']}.")
    return lines


def ranking_note(summary: pl.DataFrame) -> str | None:
    """Whether the highest ``pass_rate_scored`` survives the missing grades, in one sentence.

    Each candidate's full-plan pass rate lies in [``pass_rate_planned``,
    ``pass_rate_upper``]. When the leader's range overlaps another
    candidate's, missing grades alone could reverse the order. Returns None
    with fewer than two candidates with a pass rate.

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["A", "B"], "planned": [4, 4], "scored": [2, 4],
    ...     "pass_rate_scored": [1.0, 0.75], "pass_rate_planned": [0.5, 0.75], "pass_rate_upper": [1.0, 0.75]})
    >>> print(ranking_note(summary))
    A has the highest pass_rate_scored (1.0), computed on only 2 of 4 planned units, but its full-plan range
    [0.5, 1.0] overlaps B [0.75, 0.75]: the missing grades alone could reverse the order, so pass_rate_scored
    does not rank these candidates.
    """
    rows = [r for r in summary.iter_rows(named=True) if r.get("pass_rate_scored") is not None and _bounds(r)]
    if len(rows) < 2:
        return None
    top = max(rows, key=lambda r: r["pass_rate_scored"])
    top_low, top_high = _bounds(top) or (0.0, 0.0)
    lead = f"{top[CANDIDATE]} has the highest pass_rate_scored ({fmt_value(top['pass_rate_scored'])})"
    scored, planned = top.get("scored"), top.get("planned")
    if scored is not None and planned is not None and scored != planned:
        lead += f", computed on only {scored} of {planned} planned units"
    overlapping = []
    for r in rows:
        low, high = _bounds(r) or (0.0, 0.0)
        if r is not top and low <= top_high and top_low <= high:
            overlapping.append(f"{r[CANDIDATE]} [{fmt_value(low)}, {fmt_value(high)}]")
    if overlapping:
        return (
            f"{lead}, but its full-plan range [{fmt_value(top_low)}, {fmt_value(top_high)}] overlaps "
            f"{', '.join(overlapping)}: the missing grades alone could reverse the order, so pass_rate_scored "
            "does not rank these candidates."
        )
    return (
        f"{lead}, and its worst case ({fmt_value(top_low)}) is above every other candidate's best case: missing "
        "grades alone cannot reverse the order (sampling noise still can; see the intervals)."
    )


#: The file in an output folder that lists what evalframe wrote there: every file with its SHA-256 and size,
#: the command, outcome and run that wrote them, evalframe's version and the time (see :func:`write_output`).
MANIFEST: Final = "evalframe-manifest.json"
#: The ``format`` field of a manifest this version writes and recognises.
MANIFEST_FORMAT: Final = "evalframe-output/1"
#: A larger ``evalframe-manifest.json`` is not one evalframe wrote (it is never read whole).
MANIFEST_MAX_BYTES: Final = 16 * 2**20
#: Name prefix of the temporary folder a write makes beside its output folder (same file system).
TEMPORARY_PREFIX: Final = ".evalframe-tmp-"
#: The marker file of a temporary folder: its writer holds it locked (``flock``) while it runs, so an
#: unlocked marker means the writer is gone and the next write removes the folder.
TEMPORARY_MARKER: Final = ".evalframe-temporary"

#: Signals that stop a write: :func:`_signals_held` holds them back while the output folder is exchanged,
#: and the ``evalframe`` command exits on them (so its stop never falls inside the exchange).
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Run the block without SIGINT or SIGTERM stopping it; then act on the first that arrived.

    The exchange of an output folder with its new version takes milliseconds, but a stop inside it would
    leave the temporary folder behind for the next run to clean. During the block a signal is only noted;
    afterwards the handlers in place before are restored and the signal raised again, so it does what it
    would have done (``KeyboardInterrupt``, the command's exit, or the default action). Python runs signal
    handlers in the main thread only, so elsewhere the block runs as it is; a signal that is ignored, or
    whose handler was set outside Python, is left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    held = {s: h for s in STOP_SIGNALS if (h := signal.getsignal(s)) not in (None, signal.SIG_IGN)}
    for signum in held:
        signal.signal(signum, lambda signum, frame: arrived.append(signum))
    try:
        yield
    finally:
        for signum, handler in held.items():
            signal.signal(signum, handler)
        if arrived:
            signal.raise_signal(arrived[0])


def _step(name: str) -> None:
    """Mark the end of one step of :func:`write_output` (the tests stop the process here, step by step)."""


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on a folder: writes beside each other check, clean and exchange in turn."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@functools.lru_cache(maxsize=256)
def _sha256(path: str, inode: int, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file, remembered while the file is unchanged (inode, size and modification time)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _digest(path: Path) -> tuple[str, int]:
    """SHA-256 (hex) and size in bytes of a regular file."""
    st = path.lstat()
    return _sha256(str(path), st.st_ino, st.st_size, st.st_mtime_ns), st.st_size


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest evalframe wrote in an output folder, or None when there is none it recognises.

    Returns
    -------
    dict or None
        ``format``, ``evalframe_version``, ``command``, ``outcome``
        (``audited``, ``refused``, ``imported``, ...), ``run_id``,
        ``written_at`` (UTC, ISO 8601) and ``files``: for each file name its
        ``sha256`` (hex) and ``size`` (bytes). None when the manifest is
        absent, unreadable, larger than :data:`MANIFEST_MAX_BYTES` or not in
        :data:`MANIFEST_FORMAT`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = write_output(f"{folder}/out", {"summary": pl.DataFrame({"scored": [2]})})
    ...     manifest = read_manifest(f"{folder}/out")
    >>> manifest["outcome"], sorted(manifest["files"]), manifest["files"]["summary.parquet"]["size"] > 0
    ('written', ['summary.parquet'], True)
    """
    path = Path(folder) / MANIFEST
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > MANIFEST_MAX_BYTES:
            return None
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT or not isinstance(doc.get("files"), dict):
        return None
    return doc


def _owned(path: Path, record: Any) -> bool:
    """Whether a folder entry is the regular file the manifest lists, with the same size and SHA-256."""
    if not isinstance(record, dict):
        return False
    try:
        if not stat.S_ISREG(path.lstat().st_mode) or path.lstat().st_size != record.get("size"):
            return False
        return _digest(path)[0] == record.get("sha256")
    except OSError:
        return False


def _input_roots(inputs: Iterable[str | os.PathLike[str]]) -> list[tuple[str, Path]]:
    """Each input as given with the real path it reads (a glob reads under its part before the first wildcard)."""
    roots = []
    for item in inputs:
        text = os.fspath(item)
        if glob.has_magic(text):
            fixed = list(itertools.takewhile(lambda part: not glob.has_magic(part), Path(text).parts))
            roots.append((text, Path(os.path.realpath(Path(*fixed) if fixed else Path.cwd()))))
        else:
            roots.append((text, Path(os.path.realpath(text))))
    return roots


def check_output_folder(out: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Refuse an output folder that is not evalframe's own to replace; change nothing.

    A folder is evalframe's own when it is new, empty, or holds only files
    its manifest (:data:`MANIFEST`) lists with their size and SHA-256: an
    earlier output. :func:`write_output` calls this before it writes and
    again, under a lock, just before it exchanges the folder.

    Parameters
    ----------
    out
        The output folder.
    inputs
        The files, folders and globs the run reads: none may lie inside the
        output folder, nor the folder inside one of them.

    Raises
    ------
    OutputFolderError
        With ``foreign`` listing every input inside the folder, or else
        every entry evalframe did not write (a changed file, a subfolder,
        a symbolic link); also when ``out`` is a file, or the current folder
        or one holding it (the folder is replaced as a whole).

    Notes
    -----
    The check holds the lock that writes beside the folder exchange under, so
    it never sees a folder half exchanged by another run.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = Path(folder, "notes.txt").write_text("mine")
    ...     try:
    ...         check_output_folder(folder)
    ...     except OutputFolderError as exc:
    ...         print([Path(p).name for p in exc.foreign], exc.reason.split(":")[0])
    ['notes.txt'] holds 1 file(s) evalframe did not write (not in its evalframe-manifest.json, or changed since)
    """
    parent = Path(os.path.realpath(out)).parent
    if not parent.is_dir():
        _check(out, inputs)
        return
    with _locked(parent):
        _check(out, inputs)


def _check(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """:func:`check_output_folder` without the lock (for a caller that holds it)."""
    shown = os.fspath(out)
    dest = Path(os.path.realpath(out))
    inside = [text for text, root in _input_roots(inputs) if root.is_relative_to(dest) or dest.is_relative_to(root)]
    if inside:
        msg = "holds an input of this run, or lies inside one: evalframe never writes where it reads; choose another"
        raise OutputFolderError(shown, f"{msg} output folder", foreign=inside)
    if os.path.lexists(dest) and not dest.is_dir():
        raise OutputFolderError(shown, "is a file, not a folder", foreign=[shown])
    if dest.is_dir():
        manifest = read_manifest(dest)
        files = {} if manifest is None else manifest["files"]
        foreign = []
        for entry in sorted(os.scandir(dest), key=lambda e: e.name):
            if entry.name == MANIFEST and manifest is not None:
                continue
            if not _owned(Path(entry.path), files.get(entry.name)):
                slash = "/" if entry.is_dir(follow_symlinks=False) else ""
                foreign.append(os.path.join(shown, entry.name) + slash)
        if foreign:
            msg = (
                f"holds {len(foreign)} file(s) evalframe did not write (not in its {MANIFEST}, or changed since): "
                "it never overwrites, moves or deletes them; move them away or choose a new or empty folder"
            )
            raise OutputFolderError(shown, msg, foreign=foreign)
    if Path.cwd().resolve().is_relative_to(dest):
        msg = "is the current folder or holds it: evalframe replaces its output folder as a whole; give a new folder"
        raise OutputFolderError(shown, f"{msg} inside it (e.g. --out out)")


def _remove_temporary(folder: Path) -> None:
    """Remove a temporary folder, its marker last: stopped midway, the next write still knows it as its own."""
    for entry in os.scandir(folder):
        if entry.name == TEMPORARY_MARKER:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
        _step(f"removed {entry.name}")
    (folder / TEMPORARY_MARKER).unlink(missing_ok=True)
    folder.rmdir()


def _clean_stale(parent: Path) -> list[Path]:
    """Remove the temporary folders that stopped writes left in ``parent``; return them.

    Only folders named :data:`TEMPORARY_PREFIX`… whose marker file is not held locked by a running write
    (or that are empty) are removed: a folder that merely looks like one is left alone.
    """
    removed = []
    for entry in os.scandir(parent):
        if not entry.name.startswith(TEMPORARY_PREFIX) or not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        try:
            fd = os.open(folder / TEMPORARY_MARKER, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()  # empty: stopped before its marker was made, or after it was removed
                removed.append(folder)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a write in progress
        finally:
            os.close(fd)
        _remove_temporary(folder)
        removed.append(folder)
    return removed


def write_output(
    out: str | os.PathLike[str],
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    texts: Mapping[str, str] | None = None,
    *,
    meta: Mapping[str, Any] | None = None,
    command: str = "python",
    outcome: str = "written",
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> list[Path]:
    """Write tables as ``<name>.parquet`` plus text files as evalframe's own output folder, all or nothing.

    The folder must be new, empty, or an earlier evalframe output (see
    :func:`check_output_folder`); the new output replaces the old one as a
    whole. It is written complete, with its manifest (:data:`MANIFEST`), into
    a temporary folder beside ``out`` (:data:`TEMPORARY_PREFIX`…, same file
    system); then, under a lock on the parent folder and with SIGINT and
    SIGTERM held back, the folder is checked again, the old one is moved into
    the temporary folder, the new one takes its name, and the temporary
    folder is removed. After any interruption (a signal, ``kill -9``, a full
    disk) ``out`` is the whole earlier output, the whole new one, or absent,
    and its manifest says which; the temporary folder a killed write leaves
    is removed by the next write in the same parent folder.

    Each Parquet file's key-value metadata holds ``evalframe.table`` (the
    table name), ``evalframe.descriptions`` (JSON: a description of every
    column, see :func:`describe`) and, when given, ``evalframe.meta`` (JSON
    provenance).

    Parameters
    ----------
    out
        The output folder (its parents are created if needed).
    tables
        Tables by file stem; a LazyFrame is streamed to its file.
    texts
        Text files by name (UTF-8).
    meta
        Provenance stored in every Parquet file.
    command, outcome
        What wrote the folder and how it ended, recorded in the manifest.
    inputs
        The run's input paths and globs: refused inside ``out``.

    Returns
    -------
    list of pathlib.Path
        The files written (the manifest aside), sorted by name.

    Raises
    ------
    OutputFolderError
        ``out`` is not evalframe's own to replace, or the output could not be
        written; nothing in ``out`` was changed.

    Examples
    --------
    >>> import tempfile, pyarrow.parquet as pq
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = write_output(folder + "/out", {"summary": pl.DataFrame({"scored_coverage": [0.5]})})
    ...     kv = pq.read_metadata(written[0]).metadata
    ...     names = sorted(p.name for p in Path(folder, "out").iterdir())
    >>> [p.name for p in written], names
    (['summary.parquet'], ['evalframe-manifest.json', 'summary.parquet'])
    >>> json.loads(kv[b"evalframe.descriptions"])
    {'scored_coverage': 'scored / planned'}
    """
    from evalframe.audit import evalframe_version

    inputs = list(inputs)
    check_output_folder(out, inputs=inputs)
    dest = Path(os.path.realpath(out))
    parent = dest.parent
    parent.mkdir(parents=True, exist_ok=True)
    with _locked(parent):  # a cleaning write never sees the temporary folder before its marker is held
        tmp = Path(tempfile.mkdtemp(prefix=f"{TEMPORARY_PREFIX}{dest.name[:64]}-", dir=parent))
        marker = os.open(tmp / TEMPORARY_MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        fcntl.flock(marker, fcntl.LOCK_EX)
    try:
        _step("temporary folder made")
        new = tmp / "new"
        new.mkdir()
        names = _write_files(new, tables, texts or {}, meta, shown=os.fspath(out))
        files = {}
        for name in names:
            with open(new / name, "rb") as f:
                os.fsync(f.fileno())
            sha, size = _digest(new / name)
            files[name] = {"sha256": sha, "size": size}
        manifest = {
            "format": MANIFEST_FORMAT,
            "evalframe_version": evalframe_version(),
            "command": command,
            "outcome": outcome,
            "run_id": uuid.uuid4().hex,
            "written_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds"),
            "files": files,
        }
        (new / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _step("manifest written")
        with _signals_held(), _locked(parent):
            _clean_stale(parent)
            _check(out, inputs)  # a person or another run may have written there meanwhile
            old = tmp / "old"
            if os.path.lexists(dest):
                os.rename(dest, old)
                _step("earlier output moved aside")
            try:
                os.rename(new, dest)
            except BaseException:
                if os.path.lexists(old):
                    os.rename(old, dest)
                raise
            _step("new output in place")
            _remove_temporary(tmp)
            _step("temporary folder removed")
    except BaseException:
        if tmp.exists():
            with contextlib.suppress(OSError):
                _remove_temporary(tmp)
        raise
    finally:
        os.close(marker)
    return sorted(dest / name for name in names)


def _write_files(
    folder: Path,
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    texts: Mapping[str, str],
    meta: Mapping[str, Any] | None,
    *,
    shown: str,
) -> list[str]:
    """Write each table and text into ``folder``; return the file names. A failed write is an OutputFolderError."""
    provenance = {} if meta is None else {"evalframe.meta": json.dumps(dict(meta), default=str)}
    names = []
    try:
        for name, frame in tables.items():
            descriptions = {c: describe(name, c) for c in frame.collect_schema().names()}
            metadata = {
                "evalframe.table": name,
                "evalframe.descriptions": json.dumps(descriptions, ensure_ascii=False),
                **provenance,
            }
            if isinstance(frame, pl.LazyFrame):  # a spilled table is streamed to its file, never held whole
                frame.sink_parquet(folder / f"{name}.parquet", metadata=metadata)
            else:
                frame.write_parquet(folder / f"{name}.parquet", metadata=metadata)
            names.append(f"{name}.parquet")
            _step(f"wrote {name}.parquet")
        for name, text in texts.items():
            (folder / name).write_text(text, encoding="utf-8")
            names.append(name)
            _step(f"wrote {name}")
    except OSError as exc:
        raise OutputFolderError(shown, f"cannot write the output: {exc.strerror or exc}") from exc
    except pl.exceptions.PolarsError as exc:  # polars reports a full disk as a ComputeError
        raise OutputFolderError(shown, f"cannot write the output: {str(exc).splitlines()[0]}") from exc
    return sorted(names)


def refusal_texts(problems: pl.DataFrame, *, shown: int = 50, counts: pl.DataFrame | None = None) -> dict[str, str]:
    """``report.md``, ``report.json`` and ``report.html`` of a refused batch: counts by kind, then the first rows.

    Parameters
    ----------
    problems
        The refusal's problems (see :mod:`evalframe.problems`).
    shown
        How many refusing problems are listed (all are in ``problems.parquet``).
    counts
        Every problem counted (``kind``, ``refusing``, ``count``; see
        ``AuditRefused.problem_counts``) when ``problems`` holds only the
        first rows of each kind; by default the rows are counted.

    Examples
    --------
    >>> problems = pl.DataFrame({"kind": ["duplicate_key"], "line": [3], "detail": ["<b>x</b>"], "refusing": [True]})
    >>> texts = refusal_texts(problems)
    >>> json.loads(texts["report.json"])["refusing_problems_by_kind"]
    {'duplicate_key': 1}
    >>> "&lt;b&gt;x&lt;/b&gt;" in texts["report.html"], texts["report.md"].splitlines()[0]
    (True, '# evalframe: batch refused')
    """
    refusing = problems.filter(pl.col(KIND).is_not_null() & pl.col("refusing"))
    if counts is None:
        counts = problems.group_by(KIND, "refusing").len("count").sort(KIND, "refusing")
    counts = counts.filter(pl.col(KIND).is_not_null())
    by_kind = counts.filter(pl.col("refusing")).group_by(KIND).agg(pl.col("count").sum()).sort(KIND)
    n_refusing = int(by_kind.get_column("count").sum())
    first = refusing.head(shown).drop("refusing")
    first = first.select([c for c in first.columns if first.get_column(c).null_count() < first.height])
    lead = f"No rate was computed: {n_refusing} refusing problem(s); every problem is in problems.parquet."
    title = f"refusing problems (first {first.height} of {n_refusing})"
    markdown = "\n\n".join(
        [
            "# evalframe: batch refused",
            lead,
            "## problems by kind",
            markdown_table(counts),
            f"## {title}",
            markdown_table(first),
        ]
    )
    doc = {
        "refused": True,
        "refusing_problems": n_refusing,
        "refusing_problems_by_kind": dict(by_kind.iter_rows()),
        "problems_by_kind": [dict(zip(counts.columns, row, strict=True)) for row in counts.iter_rows()],
        "first_refusing_problems": first.to_dicts(),
    }

    def table(frame: pl.DataFrame) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(fmt_value(v))}</td>" for v in row) + "</tr>"
            for row in frame.iter_rows()
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>evalframe: batch refused</title>'
        "<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}</style></head><body>"
        f"<h1>evalframe: batch refused</h1><p>{html.escape(lead)}</p><h2>problems by kind</h2>{table(counts)}"
        f"<h2>{html.escape(title)}</h2>{table(first)}</body></html>\n"
    )
    return {
        "report.md": markdown + "\n",
        "report.json": json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n",
        "report.html": page,
    }


def write_refusal(
    problems: pl.DataFrame,
    out: str | os.PathLike[str],
    *,
    command: str = "python",
    inputs: Iterable[str | os.PathLike[str]] = (),
    counts: pl.DataFrame | None = None,
    every: pl.LazyFrame | None = None,
) -> list[Path]:
    """Write a refused batch as evalframe's output folder: ``problems.parquet`` and the refusal's reports.

    The folder follows the rules of :func:`write_output`: an earlier
    output's rates are replaced as a whole, so a refusal never sits beside
    them. The texts are :func:`refusal_texts`. When ``problems`` holds only
    the first rows of each kind (``AuditRefused.problems``), ``counts``
    counts them all (``AuditRefused.problem_counts``) and ``every`` is the
    whole list (``AuditRefused.all_problems()``), streamed to
    ``problems.parquet``.

    Examples
    --------
    >>> import tempfile, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote"]}), candidates=["A"])
    >>> try:
    ...     ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [2]}))
    ... except ef.AuditRefused as refused:
    ...     with tempfile.TemporaryDirectory() as folder:
    ...         names = [p.name for p in write_refusal(refused.problems, folder + "/out")]
    >>> names
    ['problems.parquet', 'report.html', 'report.json', 'report.md']
    """
    table = problems if every is None else every
    texts = refusal_texts(problems, counts=counts)
    return write_output(out, {"problems": table}, texts, command=command, outcome="refused", inputs=inputs)


@dataclass(frozen=True)
class AuditReport:
    """The result of an audit. Immutable; every table is sorted by key.

    Attributes
    ----------
    summary
        One row per candidate: the funnel counts (UInt32), rates (Float64
        fractions named by their denominators, see :mod:`evalframe.funnel`)
        with intervals ``<rate>_ci_low``/``_high`` that treat cases as the
        independent units (see :func:`evalframe.funnel.with_uncertainty`),
        clustered standard errors, the design effect, ``missing_cases`` (UInt32, distinct cases with a
        missing unit) and ``missing_case_ids`` (List[String], the first 20
        of them, sorted).
    units
        One row per planned unit (per counted attempt under policy
        ``every``): plan columns, the counted attempt's ledger columns,
        ``counted_attempt``, ``attempts`` and ``outcome``. A
        ``polars.LazyFrame`` over temporary Arrow IPC files after
        ``audit(..., partition_by="candidate")`` (the files stay until the
        Python process exits); a DataFrame otherwise.
    attempts
        Every ledger row of a planned unit with ``attempts`` and ``counts``
        (lazy like ``units``).
    problems
        Non-refusing problems (missing units, retry flags); see
        :mod:`evalframe.problems`.
    slices
        One row per (candidate, slice column, slice value): the funnel,
        ``missing_rate`` and ``missing_ratio`` (see :mod:`evalframe.slices`);
        empty when no slice was declared.
    missingness
        One row per (candidate, slice column): the test of independence
        between slice and missingness; empty when no slice was declared.
    meta
        Provenance: evalframe version, plan hash and source, results
        source, candidates, trials, run ids, policies.
    """

    summary: pl.DataFrame
    units: pl.DataFrame | pl.LazyFrame
    attempts: pl.DataFrame | pl.LazyFrame
    problems: pl.DataFrame
    slices: pl.DataFrame = field(default_factory=pl.DataFrame)
    missingness: pl.DataFrame = field(default_factory=pl.DataFrame)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, pl.DataFrame | pl.LazyFrame]:
        """The report's tables by file stem (``units`` and ``attempts`` lazy after a partitioned audit)."""
        tables = {"summary": self.summary, "units": self.units, "attempts": self.attempts, "problems": self.problems}
        if self.slices.width:
            tables |= {"slices": self.slices, "missingness": self.missingness}
        return tables

    def outcome_counts(self) -> pl.DataFrame:
        """Units per (candidate, outcome), every outcome present in the units table, sorted.

        Returns
        -------
        polars.DataFrame
            Columns ``candidate``, ``outcome`` (String) and ``units``
            (UInt32); outcomes with no unit are absent.

        Examples
        --------
        >>> import evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
        >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
        >>> report.outcome_counts().rows()
        [('A', 'missing', 1), ('A', 'passed', 1)]
        """
        return (
            self.units.lazy()
            .group_by(CANDIDATE, pl.col(OUTCOME).cast(pl.String))
            .len("units")
            .with_columns(pl.col("units").cast(pl.UInt32))
            .sort(CANDIDATE, OUTCOME)
            .collect()
        )

    def to_markdown(self, comparison: Comparison | None = None) -> str:
        """Render the report as Markdown: provenance, headline, funnel, rates, missing units, slices, problems.

        Parameters
        ----------
        comparison
            A paired comparison of two of the report's candidates, appended
            with its verdict and reasons.
        """
        m = self.meta
        counts = self.summary.select(CANDIDATE, *COUNT_COLUMNS)
        rates = self.summary.select(CANDIDATE, *RATE_COLUMNS)
        intervals = pl.DataFrame(
            [
                {CANDIDATE: r[CANDIDATE]} | {rate: interval_text(r, rate) for rate in RATE_COLUMNS}
                for r in self.summary.iter_rows(named=True)
            ],
            schema={CANDIDATE: pl.String, **{rate: pl.String for rate in RATE_COLUMNS}},
        )
        lines = [
            "# evalframe audit",
            "",
            *[f"- {markdown_text(k)}: {v}" for k, v in provenance_lines(m, markdown=True)],
            "",
            "## Headline",
            "",
        ]
        for record in self.summary.iter_rows(named=True):
            lines += [f"- {markdown_text(' '.join(headline(record)))}"]
        note = ranking_note(self.summary)
        if note:
            lines += ["", f"**{markdown_text(note)}**"]
        lines += [
            "",
            "## Funnel (counts)",
            "",
            markdown_table(counts),
            "",
            "## Rates (each named by its denominator)",
            "",
            markdown_table(rates),
            "",
            ", ".join(f"`{r}` = {RATE_FORMULAS[r]}" for r in RATE_COLUMNS)
            + "; `pass_rate_planned` is the worst case and `pass_rate_upper` the best case of the full-plan pass rate.",
            "",
            f"{_confidence_text(m)} intervals, cases as the independent units (Wilson; with several trials per case "
            "on the effective sample size with t(cases − 1); none with fewer than two cases):",
            "",
            markdown_table(intervals),
            "",
            "## Missing units",
            "",
        ]
        missing = self.summary.select(CANDIDATE, "missing", "missing_cases").with_columns(
            pl.Series("missing_case_ids", [missing_ids_text(r) for r in self.summary.iter_rows(named=True)], pl.String)
        )
        lines.append(markdown_table(missing))
        if self.missingness.width:
            lines += ["", "## Missingness by slice", ""]
            tests = missingness_shown(self.missingness)
            lines.append(markdown_table(tests))
            lines += [
                "",
                "Cases are the test's units (case-level permutation test of each case's ungraded, and missing, "
                "fraction); p-values are Holm-adjusted over every test of the audit (Holm 1979).",
            ]
            lines += [
                "",
                markdown_table(
                    self.slices.select(
                        CANDIDATE,
                        "slice_column",
                        "slice_value",
                        "planned",
                        "missing",
                        "missing_rate",
                        "scored",
                        "pass_rate_scored",
                    )
                ),
            ]
        lines += ["", "## Problems (not refusing)", ""]
        if self.problems.height:
            lines.append(markdown_table(self.problems.group_by(KIND).len("count").sort(KIND)))
        else:
            lines.append("none")
        text = "\n".join(lines) + "\n"
        return text if comparison is None else text + "\n" + comparison.to_markdown()

    def to_dict(self, comparison: Comparison | None = None) -> dict[str, Any]:
        """A JSON-ready dictionary of the report.

        Keys: ``meta`` (provenance), ``summary`` (one dict per candidate),
        ``outcomes`` (units per candidate and outcome), ``problems_by_kind``,
        ``slices`` and ``missingness`` (only when slices were declared) and
        ``comparison`` (only when given: the comparison row and its pairs
        dropped by slice).
        """
        doc: dict[str, Any] = {
            "meta": dict(self.meta),
            "summary": self.summary.to_dicts(),
            "outcomes": self.outcome_counts().to_dicts(),
            "problems_by_kind": dict(self.problems.group_by(KIND).len().sort(KIND).iter_rows()),
        }
        if self.slices.width:
            doc |= {"slices": self.slices.to_dicts(), "missingness": self.missingness.to_dicts()}
        if comparison is not None:
            doc["comparison"] = {
                **comparison.table.row(0, named=True),
                "dropped_by_slice": comparison.dropped_by_slice.to_dicts(),
            }
        return doc

    def to_json(self, comparison: Comparison | None = None) -> str:
        """The :meth:`to_dict` content as indented JSON (non-finite floats as null)."""
        return json.dumps(_finite(self.to_dict(comparison)), indent=2, sort_keys=False, default=str)

    def to_html(self, comparison: Comparison | None = None) -> str:
        """The report as one self-contained HTML page (see :func:`evalframe.html.render_html`)."""
        from evalframe.html import render_html

        return render_html(self, comparison)

    def _repr_html_(self) -> str:
        """Compact HTML summary for Jupyter (headline, rates with denominators, missing units)."""
        from evalframe.html import render_summary_html

        return render_summary_html(self)

    def write(
        self,
        out: str | os.PathLike[str],
        *,
        comparison: Comparison | None = None,
        inputs: Iterable[str | os.PathLike[str]] | None = None,
        command: str = "python",
    ) -> list[Path]:
        """Write every table as Parquet plus ``report.md``, ``report.json`` and ``report.html``, all or nothing.

        The folder is evalframe's own (see :func:`write_output`): new, empty
        or an earlier evalframe output, which this one replaces as a whole;
        ``evalframe-manifest.json`` lists every file with its SHA-256.

        Parameters
        ----------
        out
            Destination folder (created if needed).
        comparison
            When given, also write ``comparison.parquet``, ``pairs.parquet``
            (and ``dropped_pairs.parquet`` when pairs were dropped by slice),
            and include the verdict in the text reports.
        inputs
            Paths and globs the audit read, refused inside ``out``; by
            default the plan and results sources in :attr:`meta` that name
            a file or folder.
        command
            What wrote the folder, recorded in its manifest.

        Returns
        -------
        list of pathlib.Path
            The files written (the manifest aside), sorted by name.

        Raises
        ------
        OutputFolderError
            ``out`` holds files evalframe did not write or an input, or could
            not be written; it was left as it was.

        Examples
        --------
        >>> import tempfile, evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
        >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     names = [p.name for p in report.write(folder)]
        >>> names
        ['attempts.parquet', 'problems.parquet', 'report.html', 'report.json', 'report.md',
         'summary.parquet', 'units.parquet']
        """
        tables = self.tables()
        if comparison is not None:
            tables |= {"comparison": comparison.table, "pairs": comparison.pairs}
            if comparison.dropped_by_slice.height:
                tables["dropped_pairs"] = comparison.dropped_by_slice
        texts = {
            "report.md": self.to_markdown(comparison),
            "report.json": self.to_json(comparison) + "\n",
            "report.html": self.to_html(comparison),
        }
        if inputs is None:
            sources = (self.meta.get("plan_source"), self.meta.get("results_source"))
            inputs = [s for s in sources if isinstance(s, str) and s and os.path.exists(s)]
        outcome = "audited" if comparison is None else "compared"
        return write_output(out, tables, texts, meta=self.meta, command=command, outcome=outcome, inputs=inputs)


def _confidence_text(meta: Mapping[str, Any]) -> str:
    confidence = meta.get("confidence")
    return f"{confidence:.0%}" if isinstance(confidence, float) else "Two-sided"


def _finite(value: Any) -> Any:
    """Replace NaN and infinities by None (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def provenance_lines(meta: Mapping[str, Any], *, markdown: bool = False) -> list[tuple[str, str]]:
    """What produced a report, as (label, text) pairs: plan, data, runs, policies, version.

    Every key of ``meta`` appears: the known ones in a fixed order under
    readable labels, any other (e.g. an importer's) after them by name.

    Parameters
    ----------
    meta
        :attr:`AuditReport.meta`.
    markdown
        Put identifiers (paths, hashes, policies) in code spans (:func:`markdown_code`) and write every
        other value as :func:`markdown_text`.

    Examples
    --------
    >>> meta = {"plan_source": "plan.csv", "plan_hash": "9b706404a107adbac3bd", "n_cases": 4,
    ...     "candidates": ["A", "B"], "trials": 1, "planned_units": 8, "retry": "first"}
    >>> for label, text in provenance_lines(meta)[:3]:
    ...     print(f"{label}: {text}")
    plan: plan.csv (hash 9b706404a107), 4 cases × 2 candidates × 1 trial(s) = 8 planned units
    plan hash: 9b706404a107adbac3bd
    candidates: A, B
    """

    def code(value: Any) -> str:
        return markdown_code(value) if markdown else str(value)

    def listed(value: Any, empty: str = "none recorded") -> str:
        items = [str(v) for v in (value or [])]
        return ", ".join(code(v) for v in items) if items else empty

    m = meta
    candidates = list(m.get("candidates") or [])
    retry = f"{code(m.get('retry'))}"
    if m.get("max_attempts") is not None:
        retry += f", max_attempts {m['max_attempts']}"
    if m.get("retry_on"):
        retry += f", retries allowed after {listed(m['retry_on'])}"
    lines = [
        (
            "plan",
            f"{code(m.get('plan_source'))} (hash {code(str(m.get('plan_hash', ''))[:12])}), "
            f"{m.get('n_cases')} cases × {len(candidates)} candidates × {m.get('trials')} trial(s) "
            f"= {m.get('planned_units')} planned units",
        ),
        ("plan hash", code(m.get("plan_hash"))),
        ("candidates", listed(candidates)),
        ("dataset versions", listed(m.get("dataset_versions"))),
        (
            "results",
            f"{code(m.get('results_source'))} ({m.get('ledger_shape')} ledger, {m.get('ledger_rows')} rows)",
        ),
        ("run ids", listed(m.get("run_ids"))),
        ("required run id", code(m["required_run_id"]) if m.get("required_run_id") else "none"),
        ("retry policy", retry),
        ("missing policy", code(m.get("missing"))),
        ("grade", code(m.get("grade"))),
        ("slices", listed(m.get("slices"), "none")),
        ("confidence, alpha", f"{m.get('confidence')}, {m.get('alpha')}"),
        ("evalframe version", str(m.get("evalframe_version"))),
    ]
    known = {
        "plan_source",
        "plan_hash",
        "n_cases",
        "candidates",
        "trials",
        "planned_units",
        "dataset_versions",
        "results_source",
        "ledger_shape",
        "ledger_rows",
        "run_ids",
        "required_run_id",
        "retry",
        "max_attempts",
        "retry_on",
        "missing",
        "grade",
        "slices",
        "confidence",
        "alpha",
        "evalframe_version",
    }
    for key in sorted(k for k in m if k not in known):
        value = m[key]
        if value is None:
            lines.append((key, "none"))
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
        lines.append((key, code(text) if markdown else text))
    return lines
