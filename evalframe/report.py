"""The frozen audit report and its writers (Parquet, Markdown, JSON, HTML).

A report is immutable: its tables are polars DataFrames sorted by key, so the
same plan and ledger always give byte-identical tables whatever the row order
of the inputs. Writing is atomic: files are written into a temporary folder
beside the destination and moved into place only when all were written.
Every Parquet file carries a description of each of its columns and the
report's provenance in its key-value metadata.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from evalframe.columns import CANDIDATE, KIND, OUTCOME
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS

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


#: Every file an audit or comparison writes; a new write into a folder replaces all of them.
AUDIT_OUTPUTS: tuple[str, ...] = (
    *(
        f"{t}.parquet"
        for t in (
            "summary",
            "units",
            "attempts",
            "problems",
            "slices",
            "missingness",
            "comparison",
            "pairs",
            "dropped_pairs",
        )
    ),
    "report.md",
    "report.json",
    "report.html",
)


#: Signals that stop a write: :func:`_signals_held` holds them back while files are moved into place, and
#: the ``evalframe`` command exits on them (so its stop never falls between two moves).
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Run the block without SIGINT or SIGTERM stopping it; then act on the first that arrived.

    The moves that put a folder's new files in place take milliseconds, but stopped between two of them
    the folder would hold new files beside old ones. During the block a signal is only noted; afterwards
    the handlers in place before are restored and the signal raised again, so it does what it would have
    done (``KeyboardInterrupt``, the command's exit, or the default action). Python runs signal handlers in
    the main thread only, so elsewhere the block runs as it is; a signal that is ignored, or whose handler
    was set outside Python, is left alone.
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


def write_parquet_atomic(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    out: str | os.PathLike[str],
    texts: Mapping[str, str] | None = None,
    *,
    meta: Mapping[str, Any] | None = None,
    replaces: Sequence[str] = (),
) -> list[Path]:
    """Write tables as ``<name>.parquet`` (and text files) into ``out`` atomically.

    ``replaces`` names files of the same family (e.g. :data:`AUDIT_OUTPUTS`)
    that this write supersedes: those not written now are removed, so a
    folder never mixes a new refusal with an old run's rates.

    Everything is written to a temporary folder inside ``out``, then each
    file is moved into place with :func:`os.replace`; on any error nothing
    half-written is left in ``out``, and SIGINT or SIGTERM arriving during
    the moves takes effect after the last one. Each Parquet file's key-value metadata
    holds ``evalframe.table`` (the table name), ``evalframe.descriptions``
    (JSON: a description of every column, see :func:`describe`) and, when
    given, ``evalframe.meta`` (JSON provenance).

    Returns
    -------
    list of pathlib.Path
        The files written, sorted by name.

    Examples
    --------
    >>> import tempfile, pyarrow.parquet as pq
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = write_parquet_atomic({"summary": pl.DataFrame({"scored_coverage": [0.5]})}, folder)
    ...     kv = pq.read_metadata(written[0]).metadata
    >>> [p.name for p in written]
    ['summary.parquet']
    >>> json.loads(kv[b"evalframe.descriptions"])
    {'scored_coverage': 'scored / planned'}
    """
    dest = Path(out)
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".evalframe-", dir=dest))
    written: list[Path] = []
    provenance = {} if meta is None else {"evalframe.meta": json.dumps(dict(meta), default=str)}
    try:
        for name, frame in tables.items():
            descriptions = {c: describe(name, c) for c in frame.collect_schema().names()}
            metadata = {
                "evalframe.table": name,
                "evalframe.descriptions": json.dumps(descriptions, ensure_ascii=False),
                **provenance,
            }
            if isinstance(frame, pl.LazyFrame):  # a spilled table is streamed to its file, never held whole
                frame.sink_parquet(tmp / f"{name}.parquet", metadata=metadata)
            else:
                frame.write_parquet(tmp / f"{name}.parquet", metadata=metadata)
        for name, text in (texts or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    with _signals_held():  # the temporary folder goes too before a signal acts (SIGTERM's default ends all)
        try:
            for f in sorted(tmp.iterdir()):
                target = dest / f.name
                os.replace(f, target)
                written.append(target)
            names = {p.name for p in written}
            for stale in replaces:
                if stale not in names:
                    (dest / stale).unlink(missing_ok=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return written


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
            tests = self.missingness.select(
                CANDIDATE,
                "slice_column",
                "cases",
                "planned",
                "ungraded",
                "p_adjusted_ungraded",
                "selective_ungraded",
                "stands_out_ungraded",
                "missing",
                "p_adjusted",
                "selective",
                "stands_out",
            )
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

    def write(self, out: str | os.PathLike[str], *, comparison: Comparison | None = None) -> list[Path]:
        """Write every table as Parquet plus ``report.md``, ``report.json`` and ``report.html``, atomically.

        Parameters
        ----------
        out
            Destination folder (created if needed).
        comparison
            When given, also write ``comparison.parquet``, ``pairs.parquet``
            (and ``dropped_pairs.parquet`` when pairs were dropped by slice),
            and include the verdict in the text reports.

        Returns
        -------
        list of pathlib.Path
            The files written, sorted by name.

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
        return write_parquet_atomic(tables, out, texts, meta=self.meta, replaces=AUDIT_OUTPUTS)


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
