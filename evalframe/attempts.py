"""Retry policies: which attempt of a planned unit counts (SPEC §4).

The policy is declared before the audit and never looks at scores:

* ``first`` — the first attempt of each unit counts; later ones are reported
  but ignored for rates;
* ``last_allowed`` — a retry is allowed only after an eligible failure
  (``retry_on``, default timeout and error) and up to ``max_attempts``; the
  last allowed attempt counts;
* ``every`` — each attempt up to ``max_attempts`` is its own observation,
  clustered by unit (attempts beyond it are flagged and do not count, as under
  ``last_allowed``; a unit's first attempt always counts).

There is deliberately no policy that picks an attempt by its score.
Suspicious retry patterns are always flagged (not refusing unless
``strict=True``): a retry after an attempt that was already scored
(retry-until-pass), a retry after a failure the policy does not retry,
attempts beyond ``max_attempts`` and gaps in attempt numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import (
    ATTEMPT,
    ATTEMPTED,
    ATTEMPTS,
    CANDIDATE,
    CASE_ID,
    CASES,
    DETAIL,
    EXEC_FAILURES,
    EXEC_STATUS,
    FUNNEL_OUTCOMES,
    OUTCOME,
    PASS_RATE_SCORED,
    PASSED,
    SCORE_STATUS,
    SCORED,
    TASK,
    TRIAL,
    UNIT_KEY,
    RetryPolicyName,
)
from evalframe.problems import concat_problems, problems_frame
from evalframe.stats import DEFAULT_CONFIDENCE
from evalframe.validate.rows import ROW_KEYS, Lazy, Options, _lit, checked

#: Boolean column of the attempts table: does this attempt count for rates.
COUNTS = "counts"
#: Problem kinds of suspicious retry patterns (refusing only with ``strict=True``).
RETRY_FLAGS = ("retry_after_scored", "retry_after_ineligible", "attempt_gap", "attempt_beyond_max")


def retry_flag_details(retry_on: Sequence[str], max_attempts: int | None) -> dict[str, str]:
    """The detail of each retry flag of :data:`RETRY_FLAGS`, in the words of the declared policy.

    One text per flag for both engines (this module's :func:`select_attempts` and
    :func:`evalframe.engines.core.select_attempts`), so that their problems read the same.

    Parameters
    ----------
    retry_on
        The exec statuses after which a retry is allowed.
    max_attempts
        The highest allowed attempt number, or None.

    Returns
    -------
    dict of str to str
        Flag kind -> detail.

    Examples
    --------
    >>> retry_flag_details(["timeout"], 3)["retry_after_ineligible"]
    'retry after a failure the policy does not retry (retry_on: timeout)'
    """
    return {
        "retry_after_scored": "retry of a unit whose previous attempt was already scored",
        "retry_after_ineligible": f"retry after a failure the policy does not retry (retry_on: {', '.join(retry_on)})",
        "attempt_gap": "attempt numbers skip a value before this attempt",
        "attempt_beyond_max": f"attempt above max_attempts = {max_attempts}",
    }


@dataclass(frozen=True)
class Selected:
    """Result of applying a retry policy.

    Attributes
    ----------
    attempts
        Every attempt (the canonical ledger rows of planned units) plus
        ``attempts`` (UInt32, attempts of its unit) and ``counts`` (Boolean),
        sorted by key.
    flags
        Retry problems (``retry_after_scored``, ``retry_after_ineligible``,
        ``attempt_beyond_max``, ``attempt_gap``).
    """

    attempts: pl.DataFrame
    flags: pl.DataFrame


def select_attempts(
    ledger: pl.DataFrame,
    *,
    policy: RetryPolicyName = "first",
    max_attempts: int | None = None,
    retry_on: Sequence[str] = EXEC_FAILURES,
    strict: bool = False,
    key: Sequence[str] = UNIT_KEY,
) -> Selected:
    """Apply a declared retry policy to the attempts of each planned unit.

    The rule is :func:`marked_attempts` (every engine runs it); on polars the rows are put in (unit,
    attempt) order once and the previous attempt of a unit is the previous row, not a window per unit.

    Parameters
    ----------
    ledger
        Canonical ledger rows of planned units, unique on
        (candidate, case_id, trial, attempt).
    policy
        ``first``, ``last_allowed`` or ``every``.
    max_attempts
        Highest attempt number allowed (None: no limit).
    retry_on
        Execution statuses after which a retry is allowed.
    strict
        Make the retry flags refusing.
    key
        Columns identifying a unit (default: candidate, case_id, trial; the
        audit passes its integer unit code, which orders the same way).

    Returns
    -------
    Selected

    Raises
    ------
    ValueError
        An unknown ``policy``.

    Examples
    --------
    >>> ledger = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["q", "q"], "trial": [1, 1],
    ...     "attempt": [1, 2], "exec_status": ["timeout", "completed"], "score_status": ["not_scored", "scored"],
    ...     "line": [2, 3], "source": ["r", "r"]})
    >>> select_attempts(ledger, policy="first").attempts.select("attempt", "counts").to_dicts()
    [{'attempt': 1, 'counts': True}, {'attempt': 2, 'counts': False}]
    >>> select_attempts(ledger, policy="last_allowed").attempts.select("attempt", "counts").to_dicts()
    [{'attempt': 1, 'counts': False}, {'attempt': 2, 'counts': True}]
    """
    options = Options(retry=policy, max_attempts=max_attempts, retry_on=tuple(retry_on), strict_retries=strict)
    # Sorted once by unit and attempt, the rows are numbered: the rule's "previous attempt" is the previous row.
    ordered = _by_unit_and_attempt(ledger, list(key)).with_row_index(_ORDER)
    marked = marked_attempts(nw.from_native(ordered), options, key, order=_ORDER).to_native().collect()
    chosen = selection(nw.from_native(marked.lazy()), options)
    flags = concat_problems(flag.to_native() for flag in chosen.flags)
    attempts = chosen.attempts.to_native().drop(_ORDER).with_columns(pl.col(ATTEMPTS).cast(pl.UInt32)).collect()
    return Selected(attempts, flags)


#: The row number :func:`select_attempts` gives the rows in (unit, attempt) order.
_ORDER = "_order"


@dataclass(frozen=True)
class Selection:
    """Every attempt of a planned unit with ``attempts`` and ``counts``, and the retry flags (lazy, any engine)."""

    attempts: Lazy
    flags: list[Lazy]


#: The columns :func:`marked_attempts` adds for :func:`selection`'s flags (dropped from the attempts).
_MARKS = ("_prev_scored", "_prev_ineligible", "_gap")


def marked_attempts(
    ledger: Lazy, options: Options, unit: Sequence[str] = UNIT_KEY, *, order: str | None = None
) -> Lazy:
    """The retry policies of SPEC §4 on any engine: each attempt's ``attempts``, ``counts`` and the flags' marks.

    ``attempts`` (Int64) counts the unit's attempts; ``counts`` (Boolean) says whether the attempt counts;
    ``_prev_scored``, ``_prev_ineligible`` and ``_gap`` mark the rows :func:`selection` flags. The previous
    attempt of a unit is a window over ``unit`` ordered by attempt; with ``order``, a column numbering the
    rows in (unit, attempt) order (what a runner that sorted them passes), it is the previous row when
    that row is of the same unit: one ordered shift instead of a window per unit.

    Parameters
    ----------
    ledger
        Canonical ledger rows of planned units (narwhals lazy frame), unique on (unit, attempt).
    options
        The declared policy: ``retry``, ``max_attempts`` and ``retry_on`` are read.
    unit
        Columns naming a unit: (candidate, case_id, trial), or one column coding them.
    order
        None, or a column of ``ledger`` ordering its rows by unit, then attempt.

    Returns
    -------
    narwhals.LazyFrame
        ``ledger``'s rows with ``attempts``, ``counts`` and the three marks.

    Raises
    ------
    ValueError
        An unknown retry policy.

    Examples
    --------
    >>> rows = nw.from_native(pl.LazyFrame({"candidate": ["A", "A"], "case_id": ["q", "q"], "trial": [1, 1],
    ...     "attempt": [2, 1], "exec_status": ["completed", "timeout"], "score_status": ["scored", "not_scored"]}))
    >>> marked = marked_attempts(rows, Options(retry="last_allowed"))
    >>> marked.to_native().sort("attempt").select("attempt", "attempts", "counts").collect().rows()
    [(1, 2, False), (2, 2, True)]
    """
    by = list(unit)

    def running(expr: nw.Expr) -> nw.Expr:
        return expr.over(*by, order_by=ATTEMPT) if order is None else expr.over(order_by=order)

    prev = {"_prev_exec": EXEC_STATUS, "_prev_score": SCORE_STATUS, "_prev_attempt": ATTEMPT}
    lf = ledger.with_columns(running(nw.col(c).shift(1)).alias(n) for n, c in prev.items())
    if order is not None:  # the previous row is the previous attempt only when it is of the same unit
        same_unit = nw.all_horizontal(*(running(nw.col(c).shift(1)) == nw.col(c) for c in by), ignore_nulls=False)
        lf = lf.with_columns(nw.when(same_unit.fill_null(False)).then(nw.col(n)).alias(n) for n in prev)
    same = ~nw.col("_prev_attempt").is_null()
    helpers = [*prev, "_disallowed"]
    prev_eligible = nw.col("_prev_exec").is_in(list(options.retry_on)).fill_null(False)
    within = _lit(True) if options.max_attempts is None else nw.col(ATTEMPT) <= options.max_attempts
    if order is None:
        count = nw.len().over(*by)
    else:  # the unit's rows are consecutive: its last row's number less its first's, plus one (no hash window)
        row = nw.col(order)
        lf = lf.with_columns((~same).alias("_first"))
        lf = lf.with_columns(running(nw.col("_first").shift(-1)).fill_null(True).alias("_end"))
        lf = lf.with_columns(
            running(nw.when(nw.col("_first")).then(row).fill_null(strategy="forward")).alias("_from"),
            running(nw.when(nw.col("_end")).then(row).fill_null(strategy="backward")).alias("_to"),
        )
        count = nw.col("_to") - nw.col("_from") + 1
        helpers += ["_first", "_end", "_from", "_to"]
    lf = lf.with_columns(
        count.cast(nw.Int64()).alias(ATTEMPTS),
        (same & (nw.col("_prev_score") == "scored")).fill_null(False).alias("_prev_scored"),
        (same & ~prev_eligible).alias("_prev_ineligible"),
        (nw.col(ATTEMPT) - nw.col("_prev_attempt").fill_null(0) > 1).alias("_gap"),
        (~(~same | (prev_eligible & within))).cast(nw.Int64()).alias("_disallowed"),
    )
    if options.retry == "first":
        counts: nw.Expr = ~same
    elif options.retry == "every":
        counts = ~same | within
    elif options.retry == "last_allowed":
        # Disallowed steps so far in the unit: a running sum, less its value before the unit (the smallest in
        # the unit: a unit's first attempt is always allowed) when it runs over every row.
        lf = lf.with_columns(running(nw.col("_disallowed").cum_sum()).alias("_seen"))
        lf = lf.with_columns((nw.col("_seen") - nw.col("_seen").min().over(*by) == 0).alias("_allowed"))
        lf = lf.with_columns(nw.when(nw.col("_allowed")).then(nw.col(ATTEMPT)).max().over(*by).alias("_last"))
        counts = nw.col("_allowed") & (nw.col(ATTEMPT) == nw.col("_last"))
        helpers += ["_seen", "_allowed", "_last"]
    else:
        msg = f"unknown retry policy {options.retry!r}; use first, last_allowed or every"
        raise ValueError(msg)
    return lf.with_columns(counts.alias(COUNTS)).drop(*helpers)


def selection(marked: Lazy, options: Options) -> Selection:
    """The attempts (without the marks) and the retry flags of :func:`marked_attempts`' rows.

    A runner that holds ``marked`` (e.g. collected) passes it here, so that the flags do not run its
    windows again. The flags are refusing with ``options.strict_retries``; their details are
    :func:`retry_flag_details`.

    Examples
    --------
    >>> rows = nw.from_native(pl.LazyFrame({"candidate": ["A", "A"], "case_id": ["q", "q"], "trial": [1, 1],
    ...     "attempt": [1, 3], "exec_status": ["timeout", "completed"], "score_status": ["not_scored", "scored"],
    ...     "line": [2, 3], "source": ["r", "r"]}))
    >>> chosen = selection(marked_attempts(rows, Options()), Options())
    >>> [flag.to_native().collect().get_column("kind").to_list() for flag in chosen.flags]
    [['attempt_gap']]
    """
    masks = {
        "retry_after_scored": nw.col("_prev_scored"),
        "retry_after_ineligible": ~nw.col("_prev_scored") & nw.col("_prev_ineligible"),
        "attempt_gap": nw.col("_gap"),
    }
    if options.max_attempts is not None:
        masks["attempt_beyond_max"] = nw.col(ATTEMPT) > options.max_attempts
    details = retry_flag_details(options.retry_on, options.max_attempts)
    checks = [(mask, kind, _lit(details[kind])) for kind, mask in masks.items()]
    flags = checked(marked, checks, keys=ROW_KEYS, refusing=options.strict_retries)
    return Selection(marked.drop(*_MARKS), flags)


def unit_attempt_key(frame: pl.DataFrame, unit: str) -> pl.Expr | None:
    """``unit`` × (largest attempt + 1) + ``attempt`` as one Int64 expression, or None when it does not fit.

    The integer orders rows as (unit, attempt) do, and two rows share it exactly when they share both: one
    key to sort or compare instead of two. The bounds are read in one query (run without the GIL); null
    values are left out of them, so a row holding one has a null key.

    Parameters
    ----------
    frame
        Rows with the integer column ``unit`` (e.g. the audit's unit code ``_uid``) and ``attempt``.
    unit
        The unit column's name.

    Returns
    -------
    polars.Expr or None
        The Int64 key; None when either column is not an integer column, either holds a negative value or
        no value at all, or the key could pass 2**63 - 1.

    Examples
    --------
    >>> rows = pl.DataFrame({"_uid": [7, 7, 2], "attempt": [2, 1, 1]})
    >>> rows.select(unit_attempt_key(rows, "_uid")).to_series().to_list()
    [23, 22, 7]
    >>> unit_attempt_key(pl.DataFrame({"_uid": [2**62], "attempt": [3]}), "_uid") is None
    True
    """
    if not (frame.schema[unit].is_integer() and frame.schema[ATTEMPT].is_integer()):
        return None
    u, a = pl.col(unit), pl.col(ATTEMPT)
    low, top, high = (
        frame.lazy()
        .select(pl.min_horizontal(u.min(), a.min()).alias("low"), u.max().alias("top"), a.max().alias("high"))
        .collect()
        .row(0)
    )
    if None in (low, top, high) or low < 0 or (top + 1) * (high + 1) > 2**63 - 1:
        return None
    key: pl.Expr = u.cast(pl.Int64) * (high + 1) + a.cast(pl.Int64)
    return key


def _by_unit_and_attempt(ledger: pl.DataFrame, unit: list[str]) -> pl.LazyFrame:
    """The rows sorted by ``unit`` and then ``attempt``.

    A unit named by one integer column (the audit's unit code) with no null is sorted by one Int64 key
    (:func:`unit_attempt_key`) when it fits: one key to sort instead of two. Otherwise by the columns.
    """
    lf = ledger.lazy()
    if len(unit) == 1 and not any(ledger.get_column(c).null_count() for c in (*unit, ATTEMPT)):
        key = unit_attempt_key(ledger, unit[0])
        if key is not None:
            # Rows already in order (the audit's reconcile sorts them) are not sorted again: one pass, no gather.
            in_order = lf.select((key.diff() >= 0).all()).collect().item()
            return lf if in_order else lf.sort(key)
    return lf.sort([*unit, ATTEMPT])


def has_retries(attempts: pl.DataFrame | pl.LazyFrame) -> bool:
    """Whether any unit of ``attempts`` (:attr:`evalframe.AuditReport.attempts`) has an attempt numbered above 1.

    Examples
    --------
    >>> has_retries(pl.DataFrame({"attempt": [1, 2, 1]})), has_retries(pl.DataFrame({"attempt": [1, 1]}))
    (True, False)
    """
    return bool(attempts.lazy().select((pl.col(ATTEMPT) > 1).any()).collect().item())


def attempt_rates(attempts: pl.DataFrame | pl.LazyFrame, *, confidence: float = DEFAULT_CONFIDENCE) -> pl.DataFrame:
    """Pass rate by attempt number, per candidate, with intervals clustered by case (issue 43, retry audit).

    Retries are not independent draws: a unit is retried because of how its earlier attempt went, and
    the units that reach attempt 2 are not a random half of those that made attempt 1. Seen side by
    side, the rates of attempts 1, 2, … show whether later attempts pass more often than first ones
    (a retry-until-pass pattern lifts them) before any policy picks which attempt counts.

    Parameters
    ----------
    attempts
        :attr:`evalframe.AuditReport.attempts` (one row per attempt): ``candidate``, ``case_id``
        (String), ``attempt`` (integer), ``score_status`` and ``passed`` (Boolean, null when not
        scored), and ``task`` first when the batch has tasks.
    confidence
        Two-sided coverage of the intervals.

    Returns
    -------
    polars.DataFrame
        One row per ([task,] candidate, attempt number), sorted: ``attempted`` (UInt32, attempts with
        that number), ``scored`` and ``passed`` (UInt32), ``cases`` (UInt32, cases with a scored
        attempt of that number), ``pass_rate_scored`` (Float64, passed / scored; null when nothing
        was scored) and ``pass_rate_scored_ci_low`` / ``_ci_high`` (Float64, null with fewer than two
        cases): the interval of :func:`evalframe.stats.rate_interval`, the attempts of a case's trials
        clustered by case (CR1 with t(G − 1), Korn & Graubard 1998).

    Examples
    --------
    >>> attempts = pl.DataFrame({"candidate": ["A"] * 5, "case_id": ["q", "q", "r", "r", "s"],
    ...     "attempt": [1, 2, 1, 2, 1], "score_status": ["scored"] * 5, "passed": [False, True, False, True, True]})
    >>> attempt_rates(attempts).select("attempt", "attempted", "scored", "passed", "pass_rate_scored").rows()
    [(1, 3, 3, 1, 0.3333333333333333), (2, 2, 2, 2, 1.0)]
    """
    from evalframe.stats import rate_interval

    by = [c for c in (TASK, CANDIDATE) if c in attempts.collect_schema().names()]
    scored = pl.col(SCORE_STATUS) == "scored"
    counts = ["_rows", "_scored", "_passed"]
    # Cases alike in their counts are one row with their number (rate_interval's ``cases``): a few rows per
    # attempt number however many cases, in a fixed order (the sums are the same bit for bit on every run).
    patterns = (
        attempts.lazy()
        .group_by(*by, ATTEMPT, CASE_ID)
        .agg(
            pl.len().alias("_rows"),
            scored.sum().alias("_scored"),
            (scored & pl.col(PASSED).fill_null(False)).sum().alias("_passed"),
        )
        .group_by(*by, ATTEMPT, *counts)
        .agg(pl.len().alias("_cases"))
        .with_columns(pl.col([*counts, "_cases"]).cast(pl.Int64))
        .sort([*by, ATTEMPT, *counts])
        .collect()
    )
    rows = []
    for key, group in patterns.group_by([*by, ATTEMPT], maintain_order=True):
        n = group.get_column("_cases")
        attempted, n_scored, n_passed = (int((group.get_column(c) * n).sum()) for c in counts)
        graded = group.filter(pl.col("_scored") > 0)
        est = rate_interval(graded.get_column("_passed").to_numpy(), graded.get_column("_scored").to_numpy(),
                            confidence=confidence, cases=graded.get_column("_cases").to_numpy())  # fmt: skip
        rows.append(
            {
                **dict(zip([*by, ATTEMPT], key, strict=True)),
                ATTEMPTED: attempted,
                SCORED: n_scored,
                PASSED: n_passed,
                CASES: int(graded.get_column("_cases").sum()),
                PASS_RATE_SCORED: n_passed / n_scored if n_scored else None,
                f"{PASS_RATE_SCORED}_ci_low": est.ci_low,
                f"{PASS_RATE_SCORED}_ci_high": est.ci_high,
            }
        )
    schema: dict[str, pl.DataType] = {c: patterns.schema[c] for c in (*by, ATTEMPT)}
    schema |= dict.fromkeys((ATTEMPTED, SCORED, PASSED, CASES), pl.UInt32())
    schema |= dict.fromkeys(
        (PASS_RATE_SCORED, f"{PASS_RATE_SCORED}_ci_low", f"{PASS_RATE_SCORED}_ci_high"), pl.Float64()
    )
    return pl.DataFrame(rows, schema=schema)


def retry_bias(attempts: pl.DataFrame | pl.LazyFrame, *, confidence: float = DEFAULT_CONFIDENCE) -> pl.DataFrame:
    """The headline under ``first`` beside the declared policy's, and whether retries moved it (retry audit).

    Under ``first`` a unit's first attempt counts; under the declared policy, the attempts whose
    ``counts`` is true. Both headlines are ``pass_rate_scored`` (passes over scored attempts counted).
    Retries that are independent draws (an infrastructure failure retried, the retry as likely to pass
    as the first attempt) leave the rate where it was; retries tied to the outcome (a failure reported as
    an error and retried until it passes) lift it. ``retry_bias`` is true when the interval of the
    difference excludes 0 and the cases' own differences lean one way beyond chance (an exact sign test,
    :func:`_signs_agree`): the linearized variance is 0 when every case moved alike, and a handful of such
    cases is no evidence.

    Parameters
    ----------
    attempts
        :attr:`evalframe.AuditReport.attempts`: ``candidate``, ``case_id``, ``trial``, ``attempt``,
        ``score_status``, ``passed`` (Boolean, null when not scored), ``counts`` (Boolean), and
        ``task`` first when the batch has tasks.
    confidence
        Two-sided coverage of the interval of the difference.

    Returns
    -------
    polars.DataFrame
        One row per ([task,] candidate): ``first_scored``, ``first_passed``, ``declared_scored``,
        ``declared_passed`` (Int64), ``first_rate``, ``declared_rate`` (Float64, passes / scored; null
        when none scored), ``difference`` (declared − first) with ``ci_low`` / ``ci_high`` (Float64,
        inside [−1, 1]; null with fewer than two cases), ``retry_bias`` (Boolean) and ``note`` (String,
        e.g. ``+3 passes from retries: ...``, the difference times ``declared_scored``: the passes the
        declared headline holds beyond the first-attempt rate; null without a bias).

    Notes
    -----
    The two rates are ratio estimators over the same cases, so the difference is linearized per case,
    e_c = (P_d,c − r_d·S_d,c)/S_d − (P_f,c − r_f·S_f,c)/S_f (P passes, S scored, r = P/S; Woodruff
    1971, "A simple method for approximating the variance of a complicated estimate", JASA 66(334)),
    with the CR1 variance G/(G − 1)·Σ e_c² and t(G − 1) critical values (Cameron & Miller 2015, "A
    practitioner's guide to cluster-robust inference", J. Human Resources 50(2)): every trial and
    attempt of a case sits in one cluster.

    Examples
    --------
    >>> attempts = pl.DataFrame({"candidate": ["A"] * 4, "case_id": ["q", "q", "r", "s"], "trial": [1] * 4,
    ...     "attempt": [1, 2, 1, 1], "score_status": ["not_scored", "scored", "scored", "scored"],
    ...     "passed": [None, True, True, False], "counts": [False, True, True, True]})
    >>> retry_bias(attempts).select("first_passed", "first_scored", "declared_passed", "declared_scored").rows()
    [(1, 2, 2, 3)]
    """
    from evalframe.stats import critical_value

    by = [c for c in (TASK, CANDIDATE) if c in attempts.collect_schema().names()]
    unit = [*by, CASE_ID, TRIAL]
    scored = pl.col(SCORE_STATUS) == "scored"
    passed = scored & pl.col(PASSED).fill_null(False)
    first = pl.col(ATTEMPT) == pl.col(ATTEMPT).min().over(unit)
    sums = ["sf", "pf", "sd", "pd"]
    # Cases alike in their four sums are one row with their number ``n``: a few rows per candidate however
    # many cases, in a fixed order (the sums below are the same bit for bit on every run).
    per_case = (
        attempts.lazy()
        .with_columns(first.alias("_first"))  # one window over the frame, not one per group of the aggregation
        .group_by(*by, CASE_ID)
        .agg(
            (scored & pl.col("_first")).sum().alias("sf"),
            (passed & pl.col("_first")).sum().alias("pf"),
            (scored & pl.col(COUNTS)).sum().alias("sd"),
            (passed & pl.col(COUNTS)).sum().alias("pd"),
        )
        .group_by(*by, *sums)
        .agg(pl.len().alias("n"))
        .with_columns(pl.col([*sums, "n"]).cast(pl.Int64))
        .sort([*by, *sums])
        .collect()
    )
    rows = []
    for key, g in per_case.group_by(by, maintain_order=True):
        sf, pf, sd, pd_ = (int((g.get_column(c) * g.get_column("n")).sum()) for c in sums)
        rf, rd = (pf / sf if sf else None), (pd_ / sd if sd else None)
        diff = low = high = None
        if rf is not None and rd is not None:
            diff = rd - rf
            cases = g.filter((pl.col("sf") > 0) | (pl.col("sd") > 0))
            clusters = int(cases.get_column("n").sum())
            if clusters >= 2:
                e = cases.select(
                    (pl.col("pd") - rd * pl.col("sd")) / sd - (pl.col("pf") - rf * pl.col("sf")) / sf
                ).to_series()
                se = (clusters / (clusters - 1) * float((cases.get_column("n") * e**2).sum())) ** 0.5
                half = critical_value(confidence, clusters) * se
                low, high = max(-1.0, diff - half), min(1.0, diff + half)
        bias = low is not None and high is not None and (low > 0 or high < 0) and _signs_agree(g, 1 - confidence)
        note = None
        if bias and diff is not None and rd is not None and rf is not None:
            note = (
                f"{round(diff * sd):+d} passes from retries: pass_rate_scored {rd:.3g} ({pd_}/{sd}) under the "
                f"declared policy, {rf:.3g} ({pf}/{sf}) under first; difference {diff:+.3g} [{low:.3g}, {high:.3g}]"
            )
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "first_scored": sf,
                "first_passed": pf,
                "declared_scored": sd,
                "declared_passed": pd_,
                "first_rate": rf,
                "declared_rate": rd,
                "difference": diff,
                "ci_low": low,
                "ci_high": high,
                "retry_bias": bias,
                "note": note,
            }
        )
    schema: dict[str, pl.DataType] = {c: per_case.schema[c] for c in by}
    schema |= dict.fromkeys(("first_scored", "first_passed", "declared_scored", "declared_passed"), pl.Int64())
    schema |= dict.fromkeys(("first_rate", "declared_rate", "difference", "ci_low", "ci_high"), pl.Float64())
    schema |= {"retry_bias": pl.Boolean(), "note": pl.String()}
    return pl.DataFrame(rows, schema=schema)


def retry_bias_if_retried(
    attempts: pl.DataFrame | pl.LazyFrame, *, confidence: float = DEFAULT_CONFIDENCE
) -> pl.DataFrame:
    """The table of :func:`retry_bias` when a unit was retried (:func:`has_retries`); no rows when none was.

    A report's :attr:`~evalframe.AuditReport.retry_bias`, computed once by the audit: its notes
    (:func:`retry_bias_notes`) and the renderers' retry table read it.

    Examples
    --------
    >>> attempts = pl.DataFrame({"candidate": ["A"], "case_id": ["q"], "trial": [1], "attempt": [1],
    ...     "score_status": ["scored"], "passed": [True], "counts": [True]})
    >>> retry_bias_if_retried(attempts).height
    0
    >>> retry_bias_if_retried(attempts.with_columns(attempt=pl.lit(2))).select("candidate", "retry_bias").rows()
    [('A', False)]
    """
    retried = has_retries(attempts)
    return retry_bias(attempts if retried else attempts.lazy().head(0), confidence=confidence)


def retry_bias_notes(bias: pl.DataFrame) -> pl.DataFrame:
    """One non-refusing ``retry_bias`` note per ([task,] candidate) whose retries moved the headline.

    ``bias`` is a table of :func:`retry_bias` (a report's :attr:`~evalframe.AuditReport.retry_bias`);
    its rows with ``retry_bias`` true are the notes, their ``note`` the detail. Nothing (an empty
    problems table) when it has no rows (no unit was retried).

    Examples
    --------
    >>> attempts = pl.DataFrame({"candidate": ["A"], "case_id": ["q"], "trial": [1], "attempt": [1],
    ...     "score_status": ["scored"], "passed": [True], "counts": [True]})
    >>> retry_bias_notes(retry_bias_if_retried(attempts)).height
    0
    """
    flagged = bias.filter(pl.col("retry_bias"))
    return problems_frame(
        {"kind": "retry_bias", CANDIDATE: r[CANDIDATE], DETAIL: r["note"], "refusing": False}
        for r in flagged.iter_rows(named=True)
    )


def _signs_agree(per_case: pl.DataFrame, alpha: float) -> bool:
    """Whether more cases gained passes from retries than lost them (or the reverse) beyond chance.

    Each case with a scored first attempt and a scored counted attempt has a difference of its own
    (declared passes/scored − first passes/scored); the two-sided exact sign test over the cases whose
    difference is not 0 (Dixon & Mood 1946, "The statistical sign test", JASA 41(236)) must give p < alpha.
    Two cases that both gained give p = 0.5. ``per_case``: the sums ``sf``, ``pf``, ``sd``, ``pd`` and
    ``n``, the cases that have them.

    Examples
    --------
    >>> two = pl.DataFrame({"sf": [1], "pf": [0], "sd": [2], "pd": [1], "n": [2]})
    >>> _signs_agree(two, 0.05), _signs_agree(two.with_columns(n=8), 0.05)
    (False, True)
    """
    from scipy.stats import binomtest

    both = per_case.filter((pl.col("sf") > 0) & (pl.col("sd") > 0))
    moved = both.select((pl.col("pd") / pl.col("sd") - pl.col("pf") / pl.col("sf")).alias("d"), "n")
    up = int(moved.filter(pl.col("d") > 0).get_column("n").sum())
    down = int(moved.filter(pl.col("d") < 0).get_column("n").sum())
    return up + down > 0 and bool(binomtest(up, up + down, 0.5).pvalue < alpha)


#: Columns (and dtypes) of :func:`retried_by_slice` after its key columns.
RETRIED_COUNTS: Final = ("retried_units", "retried_scored", "retried_passed", "never_units", "never_scored",
                         "never_passed")  # fmt: skip


def retried_by_slice(units: pl.DataFrame | pl.LazyFrame, slices: Sequence[str] = ()) -> pl.DataFrame:
    """Retried units beside never-retried ones, within each slice value (issue 43, retry audit).

    Units are retried because of how their first attempt went, so retried and never-retried units differ
    by selection; within one slice value (one difficulty, one source) the comparison says whether the
    retried units still pass less, or more, than those that ran once. A unit is retried when it has two
    or more attempts; missing units (no attempt) are in neither group. The rate of a unit is its counted
    attempt's (the declared policy's), passes over scored units. Scored and passed units are the funnel's
    (:data:`~evalframe.columns.FUNNEL_OUTCOMES`, SPEC §2): a numeric score without a declared pass threshold
    (``scored_no_threshold``) is scored, and neither a pass nor a fail, so a group holding one has no count
    of passes and no rate (null, never 0), as the funnel's ``passed`` and ``pass_rate_scored``.

    Parameters
    ----------
    units
        :attr:`evalframe.AuditReport.units`: ``candidate``, ``attempts`` (integer), ``outcome``
        (Enum or String), ``task`` when the batch has tasks, and the ``slices`` columns.
    slices
        The plan's slice columns; one group of rows per column, and the whole candidate first (``slice``
        and ``value`` null).

    Returns
    -------
    polars.DataFrame
        One row per (slice, value, [task,] candidate) that holds a retried unit, sorted: ``slice``,
        ``value`` (String), the key, then :data:`RETRIED_COUNTS` (UInt32: units, scored units, passed
        units of each group; passed null when a scored unit of the group has no pass threshold) and
        ``retried_rate`` / ``never_rate`` (Float64, passed / scored; null when none scored or passed is
        null). Empty when no unit was retried.

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["A"] * 4, "level": ["easy", "easy", "hard", "hard"],
    ...     "attempts": [2, 1, 2, 1], "outcome": ["passed", "passed", "failed", "passed"]})
    >>> retried_by_slice(units, ["level"]).select("slice", "value", "retried_passed", "retried_scored",
    ...     "never_passed", "never_scored").rows()
    [(None, None, 1, 2, 2, 2), ('level', 'easy', 1, 1, 1, 1), ('level', 'hard', 0, 1, 1, 1)]

    A numeric score without a threshold is scored but neither passed nor failed:

    >>> numeric = units.with_columns(outcome=pl.lit("scored_no_threshold"))
    >>> retried_by_slice(numeric).select("retried_scored", "retried_passed", "retried_rate").row(0)
    (2, None, None)
    """
    lf = units.lazy()
    by = [c for c in (TASK, CANDIDATE) if c in lf.collect_schema().names()]
    outcome = pl.col(OUTCOME).cast(pl.String)

    def of(count: str) -> pl.Expr:  # units whose outcome the funnel's count adds up
        return outcome.is_in(list(FUNNEL_OUTCOMES[count]))

    groups = {"retried": pl.col(ATTEMPTS) > 1, "never": pl.col(ATTEMPTS) == 1}
    counts = [
        agg.alias(f"{name}_{what}")
        for name, mask in groups.items()
        for what, agg in (
            ("units", mask.sum()),
            ("scored", (mask & of(SCORED)).sum()),
            # No count of passes where a scored unit has no pass threshold (null, never 0), as the funnel.
            ("passed", pl.when(~(mask & of("_no_threshold")).any()).then((mask & of(PASSED)).sum())),
        )
    ]
    parts = [lf.group_by(by).agg(counts).with_columns(pl.lit(None, pl.String).alias("slice"),
                                                      pl.lit(None, pl.String).alias("value"))]  # fmt: skip
    parts += [
        lf.group_by(*by, pl.col(column).cast(pl.String).alias("value"))
        .agg(counts)
        .with_columns(pl.lit(column, pl.String).alias("slice"))
        for column in slices
    ]
    rates = [
        pl.when(pl.col(f"{g}_scored") > 0).then(pl.col(f"{g}_passed") / pl.col(f"{g}_scored")).alias(f"{g}_rate")
        for g in groups
    ]
    return (
        pl.concat([p.select("slice", "value", *by, *RETRIED_COUNTS) for p in parts])
        .filter(pl.col("retried_units") > 0)
        .with_columns(pl.col(c).cast(pl.UInt32) for c in RETRIED_COUNTS)
        .with_columns(rates)
        .sort("slice", "value", *by, nulls_last=False)
        .collect()
    )
