"""Reconcile the headline an export reported itself with the audited funnel (SPEC §6c).

Many tools report a rate whose denominator has quietly lost the units that
errored (Inspect's ``accuracy`` over its scored samples: 100 planned, 10
errored, 80 correct reads 0.889). The audit knows every unit's outcome, so the
gap between the reported value and ``pass_rate_planned`` is split exactly
into the points each kind of ungraded unit accounts for.

The decomposition removes the ungraded units from the denominator one kind
at a time, in the funnel's order — missing, not started, execution failed
(timeout or error), no output, grader failed, not scored — so that after the
last step the denominator is the scored units. With ``passed`` fixed, a
step's points are the rate after it minus the rate before it:

``passed / (planned − removed so far − this kind) − passed / (planned − removed so far)``

They telescope from ``pass_rate_planned`` to ``pass_rate_scored``. Two more
terms finish the sum at the reported value: ``points_duplicates``, the shift
from counting every scored attempt (retries and repeated rows) instead of
one per unit, taken only when the denominator the export states equals the
number of scored attempts and not the number of scored units; and
``points_unexplained``, whatever the rows do not account for (rounding of the
reported value, a metric that is not the pass rate, a reducer over epochs).
The points therefore sum to the gap by construction, and a non-zero
unexplained term is itself a finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    CANDIDATE,
    DENOMINATOR_OF,
    EXEC_FAILED,
    GAP,
    IMPLIED_DENOMINATOR,
    JUDGE_FAILED,
    METRIC,
    MISSING,
    NO_OUTPUT,
    NOT_SCORED,
    NOT_STARTED,
    PASS_RATE_PLANNED,
    PASS_RATE_SCORED,
    PASS_RATE_UPPER,
    PASSED,
    PLANNED,
    POINTS_DUPLICATES,
    POINTS_EXEC_FAILED,
    POINTS_JUDGE_FAILED,
    POINTS_MISSING,
    POINTS_NO_OUTPUT,
    POINTS_NOT_SCORED,
    POINTS_NOT_STARTED,
    POINTS_UNEXPLAINED,
    REPORTED,
    REPORTED_HEADLINES,
    SCORE_STATUS,
    SCORED,
    SOURCE,
    TASK,
    TOOL,
)
from evalframe.problems import problems_frame

#: The decomposition's steps in the order their units leave the denominator: (points column, count column,
#: what the sentence calls such units).
STEPS: Final = (
    (POINTS_MISSING, MISSING, "missing units"),
    (POINTS_NOT_STARTED, NOT_STARTED, "units never started"),
    (POINTS_EXEC_FAILED, EXEC_FAILED, "errored or timed-out units"),
    (POINTS_NO_OUTPUT, NO_OUTPUT, "units without output"),
    (POINTS_JUDGE_FAILED, JUDGE_FAILED, "grader failures"),
    (POINTS_NOT_SCORED, NOT_SCORED, "units not scored"),
)
#: Every points column, in the order they sum to the gap.
POINTS_COLUMNS: Final = (*(s[0] for s in STEPS), POINTS_DUPLICATES, POINTS_UNEXPLAINED)
#: Columns (and dtypes) of the reconciliation table.
RECONCILIATION_SCHEMA: Final = pl.Schema(
    {
        TASK: pl.String,
        CANDIDATE: pl.String,
        TOOL: pl.String,
        METRIC: pl.String,
        SOURCE: pl.String,
        REPORTED: pl.Float64,
        IMPLIED_DENOMINATOR: pl.Int64,
        DENOMINATOR_OF: pl.String,
        PLANNED: pl.Int64,
        SCORED: pl.Int64,
        PASSED: pl.Int64,
        PASS_RATE_SCORED: pl.Float64,
        PASS_RATE_PLANNED: pl.Float64,
        PASS_RATE_UPPER: pl.Float64,
        GAP: pl.Float64,
        **dict.fromkeys(POINTS_COLUMNS, pl.Float64),
        "sentence": pl.String,
    }
)
#: A gap (or an unexplained remainder) smaller than this is read as zero in the sentence (the table keeps it).
AGREES: Final = 1e-9


def reported_headlines(exports: Sequence[Any]) -> list[dict[str, Any]]:
    """The headline values every export recorded, one dict per (file, metric), with the file's task and candidate.

    ``exports`` is the ``exports`` list an import leaves in the audit's provenance (``report.meta["exports"]``,
    :attr:`evalframe.importers.Imported.info`); an entry's ``reported`` list holds dicts with ``tool``,
    ``metric``, ``reported`` (float), ``implied_denominator`` (int or None) and ``denominator_of`` (what the
    denominator counts, e.g. ``"scored samples"``), and ``task`` / ``candidate`` when they are the headline's
    own (a file of several tasks) rather than the file's. Entries that are not mappings, and values that are not
    finite numbers, are left out.

    Examples
    --------
    >>> export = {"source": "a.eval", "task": "t", "candidate": "m", "reported": [
    ...     {"tool": "Inspect", "metric": "accuracy", "reported": 0.5, "implied_denominator": 4,
    ...      "denominator_of": "scored samples"}]}
    >>> [(h["candidate"], h["metric"], h["reported"]) for h in reported_headlines([export, "not a mapping"])]
    [('m', 'accuracy', 0.5)]
    """
    found: list[dict[str, Any]] = []
    for export in exports:
        if not isinstance(export, Mapping):
            continue
        for value in export.get(REPORTED_HEADLINES) or []:
            number = value.get(REPORTED) if isinstance(value, Mapping) else None
            if not isinstance(number, int | float) or isinstance(number, bool) or number != number:
                continue
            found.append(
                {
                    TASK: value.get(TASK, export.get(TASK)),
                    CANDIDATE: value.get(CANDIDATE, export.get(CANDIDATE)),
                    SOURCE: export.get(SOURCE),
                    **{k: value.get(k) for k in (TOOL, METRIC, IMPLIED_DENOMINATOR, DENOMINATOR_OF)},
                    REPORTED: float(number),
                }
            )
    return found


def _scored_attempts(attempts: pl.DataFrame | pl.LazyFrame, candidate: str) -> tuple[int, int] | None:
    """(scored attempts, passed among them) of one candidate, every attempt counted; None without those columns."""
    frame = attempts.lazy()
    if not {CANDIDATE, SCORE_STATUS, PASSED} <= set(frame.collect_schema().names()):
        return None
    got = (
        frame.filter((pl.col(CANDIDATE) == candidate) & (pl.col(SCORE_STATUS) == "scored"))
        .select(pl.len().alias("n"), pl.col(PASSED).cast(pl.Int64).sum().alias("k"))
        .collect()
    )
    return int(got.item(0, "n")), int(got.item(0, "k") or 0)


def decompose(
    counts: Mapping[str, Any],
    reported: float,
    *,
    implied: int | None = None,
    every_attempt: tuple[int, int] | None = None,
) -> dict[str, float | None]:
    """The gap between a reported rate and ``pass_rate_planned``, in points by kind of ungraded unit.

    Parameters
    ----------
    counts
        One funnel row (:data:`~evalframe.funnel.COUNT_COLUMNS`): ``planned``, ``passed``, ``scored`` and the
        counts of :data:`STEPS`.
    reported
        The value the export reported (a fraction in [0, 1]).
    implied
        The denominator the export states it used (None: not stated).
    every_attempt
        (scored attempts, passed among them) counting every attempt; its rate gives ``points_duplicates``
        when ``implied`` equals its count and not ``scored``.

    Returns
    -------
    dict
        ``gap`` and every column of :data:`POINTS_COLUMNS` (floats that sum to ``gap``); all None when no unit
        was scored, when ``passed`` is null (numeric scores without a threshold), or when the counts do not
        partition ``planned`` (then no step order applies).

    Notes
    -----
    The order of the steps and the two closing terms are in the module's docstring. The decomposition is
    evalframe's own (a sequential, telescoping attribution); it adds no estimate, only arithmetic on counts.

    Examples
    --------
    Inspect issue 3707's numbers: 100 planned, 10 errored, 80 correct, reported 80/90.

    >>> row = {"planned": 100, "passed": 80, "scored": 90, "missing": 0, "not_started": 0, "exec_failed": 10,
    ...        "no_output": 0, "judge_failed": 0, "not_scored": 0}
    >>> parts = decompose(row, 80 / 90, implied=90)
    >>> round(parts["gap"], 4), round(parts["points_exec_failed"], 4), parts["points_unexplained"]
    (0.0889, 0.0889, 0.0)
    """
    empty: dict[str, float | None] = {GAP: None, **dict.fromkeys(POINTS_COLUMNS)}
    planned, passed, scored = (counts.get(c) for c in (PLANNED, PASSED, SCORED))
    if not planned or not scored or passed is None:
        return empty
    removed = [int(counts.get(count) or 0) for _, count, _ in STEPS]
    if planned - sum(removed) != scored:
        return empty
    points: dict[str, float | None] = {}
    denominator, rate = int(planned), passed / planned
    for (column, _, _), count in zip(STEPS, removed, strict=True):
        denominator -= count
        points[column], rate = passed / denominator - rate, passed / denominator
    duplicates = 0.0
    if every_attempt is not None and implied is not None and implied == every_attempt[0] != scored:
        duplicates = every_attempt[1] / every_attempt[0] - rate
    points[POINTS_DUPLICATES] = duplicates
    points[POINTS_UNEXPLAINED] = reported - (rate + duplicates)
    return {GAP: reported - passed / planned, **points}


def points_text(value: float) -> str:
    """A part of a gap (a fraction) in percentage points with its sign, as the sentence and the tables say it.

    Examples
    --------
    >>> points_text(8 / 90), points_text(-0.0125)
    ('+8.9 points', '-1.2 points')
    """
    return f"{value * 100:+.1f} points"


def reconciliation_sentence(row: Mapping[str, Any]) -> str:
    """One sentence for a reconciliation row: what the tool reported, the audited range, what the gap is made of.

    Examples
    --------
    >>> row = {"tool": "Inspect", "metric": "accuracy", "reported": 80 / 90, "implied_denominator": 90,
    ...        "denominator_of": "scored samples", "planned": 100, "scored": 90, "pass_rate_scored": 80 / 90,
    ...        "pass_rate_planned": 0.8, "pass_rate_upper": 0.9, "gap": 8 / 90, "exec_failed": 10,
    ...        **dict.fromkeys(POINTS_COLUMNS, 0.0), "points_exec_failed": 8 / 90}
    >>> for part in reconciliation_sentence(row).split("; "):
    ...     print(part)
    Inspect reported accuracy 0.889 over 90 scored samples
    over 100 planned the rate lies in 0.800–0.900
    10 errored or timed-out units account for +8.9 points.
    """
    over = row.get(IMPLIED_DENOMINATOR)
    said = f"{row.get(TOOL) or 'The export'} reported {row.get(METRIC) or 'a rate'} {row[REPORTED]:.3f}"
    said += f" over {over} {row.get(DENOMINATOR_OF) or 'units'}" if over is not None else ""
    gap = row.get(GAP)
    if gap is None:
        why = "nothing scored, no pass threshold, or counts that do not partition the plan"
        return f"{said}; the audit gives no decomposition of it ({why})."
    low, high, planned = row[PASS_RATE_PLANNED], row[PASS_RATE_UPPER], row[PLANNED]
    if abs(gap) < AGREES:
        return f"{said}; it agrees with the audit over {planned} planned (gap 0)."
    parts = [
        f"{int(row.get(count) or 0)} {what} account for {points_text(row[column])}"
        for column, count, what in STEPS
        if abs(row[column]) >= AGREES
    ]
    if abs(row[POINTS_DUPLICATES]) >= AGREES:
        parts.append(f"counting every scored attempt accounts for {points_text(row[POINTS_DUPLICATES])}")
    if abs(row[POINTS_UNEXPLAINED]) >= AGREES:
        parts.append(f"{points_text(row[POINTS_UNEXPLAINED])} are not explained by the rows")
    return f"{said}; over {planned} planned the rate lies in {low:.3f}–{high:.3f}; " + "; ".join(parts) + "."


def reconciliation(
    summary: pl.DataFrame,
    exports: Sequence[Any],
    *,
    attempts: pl.DataFrame | pl.LazyFrame | None = None,
    task: str | None = None,
) -> pl.DataFrame:
    """The reconciliation table: each headline an export reported beside the audited rates, its gap decomposed.

    Parameters
    ----------
    summary
        The audit's summary (``report.summary``): one row per candidate (and ``task`` when it has that column)
        with the funnel counts (UInt32) and rates (Float64).
    exports
        The import's per-file facts (``report.meta["exports"]``), read by :func:`reported_headlines`.
    attempts
        The audit's attempts table (``report.attempts``), for ``points_duplicates``; None: that term is 0.
    task
        The task a summary without a ``task`` column is of (one task's report); headlines of another task are
        left out. None: every headline is matched on its candidate alone.

    Returns
    -------
    polars.DataFrame
        :data:`RECONCILIATION_SCHEMA`, one row per reported headline whose candidate (and task) the summary
        has, sorted by task, candidate, metric and source: ``reported`` and ``implied_denominator`` as the
        export states them; ``planned``, ``scored``, ``passed`` and the three pass rates as audited; ``gap``
        (reported − ``pass_rate_planned``, a fraction) and the ``points_*`` columns (fractions, not
        percentage points) that sum to it exactly (see :func:`decompose`); ``sentence`` for a person.

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["m"], "planned": [4], "passed": [2], "scored": [3], "missing": [1],
    ...     "not_started": [0], "exec_failed": [0], "no_output": [0], "judge_failed": [0], "not_scored": [0],
    ...     "pass_rate_scored": [2 / 3], "pass_rate_planned": [0.5], "pass_rate_upper": [0.75]})
    >>> export = {"candidate": "m", "source": "a.json", "reported": [{"tool": "Inspect", "metric": "accuracy",
    ...     "reported": 2 / 3, "implied_denominator": 3, "denominator_of": "scored samples"}]}
    >>> for part in reconciliation(summary, [export]).item(0, "sentence").split("; "):
    ...     print(part)
    Inspect reported accuracy 0.667 over 3 scored samples
    over 4 planned the rate lies in 0.500–0.750
    1 missing units account for +16.7 points.
    """
    by_task = TASK in summary.columns
    rows: list[dict[str, Any]] = []
    for headline in reported_headlines(exports):
        if not by_task and task is not None and headline[TASK] not in (None, task):
            continue
        match = pl.col(CANDIDATE) == headline[CANDIDATE]
        if by_task:
            match &= pl.col(TASK) == headline[TASK]
        found = summary.filter(match)
        if found.height != 1:
            continue
        counts = found.row(0, named=True)
        implied = headline[IMPLIED_DENOMINATOR]
        every = None
        if implied is not None and implied != counts.get(SCORED) and attempts is not None:  # a duplicates term only
            of_task = attempts.lazy().filter(pl.col(TASK) == headline[TASK]) if by_task else attempts
            every = _scored_attempts(of_task, str(headline[CANDIDATE]))
        parts = decompose(counts, headline[REPORTED], implied=implied, every_attempt=every)
        row = {
            **headline,
            TASK: counts.get(TASK, task if task is not None else headline[TASK]),
            **{c: counts.get(c) for c in (PLANNED, SCORED, PASSED, PASS_RATE_SCORED, PASS_RATE_PLANNED)},
            PASS_RATE_UPPER: counts.get(PASS_RATE_UPPER),
            **parts,
        }
        rows.append({**row, "sentence": reconciliation_sentence({**counts, **row})})
    return _sorted(pl.DataFrame(rows, schema=RECONCILIATION_SCHEMA))


def _sorted(table: pl.DataFrame) -> pl.DataFrame:
    """A reconciliation table in its order: task, candidate, metric, source (nulls last, ties as they came)."""
    return table.sort(TASK, CANDIDATE, METRIC, SOURCE, nulls_last=True, maintain_order=True)


def no_reconciliation() -> pl.DataFrame:
    """The reconciliation table of a report whose exports reported no headline: :data:`RECONCILIATION_SCHEMA`, no rows.

    Examples
    --------
    >>> no_reconciliation().shape == (0, len(RECONCILIATION_SCHEMA))
    True
    """
    return pl.DataFrame(schema=RECONCILIATION_SCHEMA)


def reconciliation_of_tasks(tables: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The reconciliation of a report of several tasks: each task's own table (its ``task`` filled), in one.

    Each task's report reconciles its own headlines (:func:`reconciliation` with its ``task``); the report of
    every task holds those rows, not a second reconciliation of its own, so its table and its
    ``headline_reconciled`` notes (the tasks' notes) are the same rows.

    Examples
    --------
    >>> tables = [pl.DataFrame([{"task": t, "candidate": "m"}], schema=RECONCILIATION_SCHEMA) for t in ("t2", "t1")]
    >>> reconciliation_of_tasks(tables).get_column("task").to_list()
    ['t1', 't2']
    """
    own = [t for t in tables if t.height]
    return _sorted(pl.concat(own)) if own else no_reconciliation()


def reconciliation_notes(table: pl.DataFrame) -> pl.DataFrame:
    """One non-refusing ``headline_reconciled`` note per row of a reconciliation table, its sentence the detail.

    The report's notes reach every renderer (terminal, Markdown, HTML, JSON), so the sentence is in each.

    Examples
    --------
    >>> table = pl.DataFrame({"candidate": ["m"], "source": ["a.json"], "sentence": ["Inspect reported …"]})
    >>> reconciliation_notes(table).select("kind", "candidate", "refusing").row(0)
    ('headline_reconciled', 'm', False)
    """
    return problems_frame(
        {
            "kind": "headline_reconciled",
            CANDIDATE: r[CANDIDATE],
            SOURCE: r[SOURCE],
            "detail": r["sentence"],
            "refusing": False,
        }  # fmt: skip
        for r in table.iter_rows(named=True)
    )
