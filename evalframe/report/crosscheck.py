"""What the audit checks against the tool's own account: its reported headline and its retries (issue 43).

Every renderer shows the same small tables, built here once from the report's own tables as text cells
(terminal, Markdown, the job summary and report.html lay them out; report.json holds the full-precision
tables): the reconciliation of each headline an export reported, one line per (task, candidate, metric);
the pass rate by attempt number; the headline under ``first`` beside the declared retry policy; and
retried units beside never-retried ones within each slice value. Each is empty when there is nothing
to show (no export reported a headline; no unit was retried).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from evalframe.columns import (
    CANDIDATE,
    DENOMINATOR_OF,
    GAP,
    IMPLIED_DENOMINATOR,
    METRIC,
    PASS_RATE_PLANNED,
    PASS_RATE_SCORED,
    PASS_RATE_UPPER,
    REPORTED,
    TASK,
    TOOL,
)
from evalframe.funnel.reported import AGREES, POINTS_COLUMNS, points_text
from evalframe.report.format import fmt_count, fmt_rate, fmt_signed, interval

if TYPE_CHECKING:
    from evalframe.report.model import AuditReport

#: What the reconciliation table shows, as every renderer titles it.
RECONCILED: Final = "the headline each export reported, beside the audit"
#: What each retry table shows, as report.md and report.html title it, in their order.
RETRY_TABLES: Final = {
    "retry_headline": "the headline under first beside the declared policy",
    "attempt_rates": "pass rate by attempt number (intervals clustered by case)",
    "retried_by_slice": "retried vs never-retried units",
}
#: What each points column is called in the tables' ``gap made of`` cell.
PART_NAMES: Final = {column: column.removeprefix("points_") for column in POINTS_COLUMNS}


@dataclass(frozen=True)
class Crosscheck:
    """The tables a person reads beside the headline: each a frame of text cells, empty when not applicable.

    Attributes
    ----------
    reconciliation
        One row per reported headline: ``tool``, ``candidate``, ``metric``, ``reported`` (value over its
        implied denominator), the audited ``pass_rate_scored`` and range, ``gap`` and ``gap made of``.
    sentences
        The reconciliation's sentences, each once.
    attempt_rates
        Pass rate by attempt number with its case-clustered interval, per candidate.
    retry_headline
        The headline under ``first`` beside the declared policy's, per candidate, and ``retry_bias``.
    retried_by_slice
        Retried units' pass rate beside never-retried units', per slice value and candidate.
    """

    reconciliation: pl.DataFrame = field(default_factory=pl.DataFrame)
    sentences: tuple[str, ...] = ()
    attempt_rates: pl.DataFrame = field(default_factory=pl.DataFrame)
    retry_headline: pl.DataFrame = field(default_factory=pl.DataFrame)
    retried_by_slice: pl.DataFrame = field(default_factory=pl.DataFrame)

    @property
    def retried(self) -> bool:
        """Whether a unit was retried (the retry tables have rows)."""
        return self.attempt_rates.height > 0


def _ratio(passed: int | None, scored: int | None, rate: float | None) -> str:
    """``rate (passed/scored)`` as the tables write a pass rate with its counts."""
    return f"{fmt_rate(rate)} ({fmt_count(passed)}/{fmt_count(scored)})"


def _text_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows of text cells as a frame of String columns (no column without rows)."""
    return pl.DataFrame(rows, schema=dict.fromkeys(rows[0], pl.String) if rows else None)


def _task_column(frame: pl.DataFrame) -> list[str]:
    """``task`` when the frame has that column and some row names one (a batch of several tasks)."""
    return [TASK] if TASK in frame.columns and frame.get_column(TASK).null_count() < frame.height else []


def reconciliation_cells(table: pl.DataFrame) -> pl.DataFrame:
    """The reconciliation table as the renderers show it: one line per (task, candidate, metric).

    Parameters
    ----------
    table
        :attr:`evalframe.AuditReport.reconciliation`.

    Returns
    -------
    polars.DataFrame
        One row per distinct line (exports that report one headline alike are one line), string columns
        ``[task,] tool, candidate, metric, reported`` (the value over the denominator it
        implies), ``pass_rate_scored``, ``pass_rate_planned–upper`` (the audited full-plan range), ``gap``
        (``0`` when the header agrees with its rows) and ``gap made of`` (each non-zero part in percentage
        points, summing to the gap).

    Examples
    --------
    >>> table = pl.DataFrame({"tool": ["Inspect"], "candidate": ["m"], "metric": ["accuracy"],
    ...     "reported": [80 / 90], "implied_denominator": [90], "denominator_of": ["scored samples"],
    ...     "pass_rate_scored": [80 / 90], "pass_rate_planned": [0.8], "pass_rate_upper": [0.9], "gap": [8 / 90],
    ...     **{c: [0.0] for c in POINTS_COLUMNS}}).with_columns(points_exec_failed=pl.lit(8 / 90))
    >>> reconciliation_cells(table).row(0, named=True)  # doctest: +NORMALIZE_WHITESPACE
    {'tool': 'Inspect', 'candidate': 'm', 'metric': 'accuracy', 'reported': '0.889 over 90 scored samples',
     'pass_rate_scored': '0.889', 'pass_rate_planned–upper': '[0.8, 0.9]', 'gap': '+8.9 points',
     'gap made of': 'exec_failed +8.9 points'}
    """
    rows = []
    for r in table.iter_rows(named=True):
        over = r[IMPLIED_DENOMINATOR]
        said = fmt_rate(r[REPORTED]) + (f" over {over} {r[DENOMINATOR_OF] or 'units'}" if over is not None else "")
        gap = r[GAP]
        parts = [f"{name} {points_text(r[c])}" for c, name in PART_NAMES.items() if abs(r[c] or 0.0) >= AGREES]
        made_of = "—" if gap is None else "; ".join(parts) if parts else "agrees (gap 0)"
        rows.append(
            {
                **{c: r[c] for c in _task_column(table)},
                TOOL: r[TOOL] or "—",
                CANDIDATE: r[CANDIDATE],
                METRIC: r[METRIC] or "—",
                REPORTED: said,
                PASS_RATE_SCORED: fmt_rate(r[PASS_RATE_SCORED]),
                f"{PASS_RATE_PLANNED}–upper": interval(r[PASS_RATE_PLANNED], r[PASS_RATE_UPPER]),
                GAP: "—" if gap is None else "0" if abs(gap) < AGREES else points_text(gap),
                "gap made of": made_of,
            }
        )
    # Several exports reporting one headline alike (a run's results and samples files) say it once.
    return _text_frame(rows).unique(maintain_order=True)


def attempt_rate_cells(table: pl.DataFrame) -> pl.DataFrame:
    """Pass rate by attempt number as the renderers show it (:attr:`evalframe.AuditReport.attempt_rates`).

    Examples
    --------
    >>> table = pl.DataFrame({"candidate": ["A"], "attempt": [2], "attempted": [3], "scored": [2], "passed": [2],
    ...     "cases": [2], "pass_rate_scored": [1.0], "pass_rate_scored_ci_low": [None],
    ...     "pass_rate_scored_ci_high": [None]})
    >>> attempt_rate_cells(table).row(0)
    ('A', '2', '3', '1.000 (2/2)', '2', 'null')
    """
    key = _task_column(table) + [CANDIDATE]
    return table.select(
        *key,
        pl.col("attempt").cast(pl.String),
        pl.col("attempted").cast(pl.String),
        pl.struct("passed", "scored", PASS_RATE_SCORED)
        .map_elements(lambda s: _ratio(s["passed"], s["scored"], s[PASS_RATE_SCORED]), return_dtype=pl.String)
        .alias("pass_rate_scored (passed/scored)"),
        pl.col("cases").cast(pl.String).alias("cases (clusters)"),
        pl.struct(f"{PASS_RATE_SCORED}_ci_low", f"{PASS_RATE_SCORED}_ci_high")
        .map_elements(lambda s: interval(*s.values()), return_dtype=pl.String)
        .alias("interval (by case)"),
    )


def retry_headline_cells(table: pl.DataFrame) -> pl.DataFrame:
    """The headline under ``first`` beside the declared policy's (:func:`evalframe.attempts.retry_bias`).

    Examples
    --------
    >>> table = pl.DataFrame({"candidate": ["A"], "first_scored": [4], "first_passed": [1], "declared_scored": [4],
    ...     "declared_passed": [4], "first_rate": [0.25], "declared_rate": [1.0], "difference": [0.75],
    ...     "ci_low": [0.2], "ci_high": [1.0], "retry_bias": [True]})
    >>> retry_headline_cells(table).row(0)
    ('A', '0.250 (1/4)', '1.000 (4/4)', '+0.75 [0.2, 1.0]', 'yes')
    """
    rows = [
        {
            **{c: r[c] for c in _task_column(table)},
            CANDIDATE: r[CANDIDATE],
            "under first": _ratio(r["first_passed"], r["first_scored"], r["first_rate"]),
            "under the declared policy": _ratio(r["declared_passed"], r["declared_scored"], r["declared_rate"]),
            "difference": f"{fmt_signed(r['difference'])} {interval(r['ci_low'], r['ci_high'])}",
            "retry_bias": "yes" if r["retry_bias"] else "no",
        }
        for r in table.iter_rows(named=True)
    ]
    return _text_frame(rows)


def retried_cells(table: pl.DataFrame) -> pl.DataFrame:
    """Retried beside never-retried units per slice value (:func:`evalframe.attempts.retried_by_slice`).

    Examples
    --------
    >>> table = pl.DataFrame({"slice": [None], "value": [None], "candidate": ["A"], "retried_units": [2],
    ...     "retried_scored": [2], "retried_passed": [1], "never_units": [3], "never_scored": [2], "never_passed": [2],
    ...     "retried_rate": [0.5], "never_rate": [1.0]})
    >>> retried_cells(table).row(0)
    ('every unit', 'A', '0.500 (1/2 of 2 units)', '1.000 (2/2 of 3 units)')
    """
    rows = [
        {
            "within": "every unit" if r["slice"] is None else f"{r['slice']} = {r['value']}",
            **{c: r[c] for c in _task_column(table)},
            CANDIDATE: r[CANDIDATE],
            **{
                f"{label} (passed/scored)": (
                    f"{fmt_rate(r[f'{g}_rate'])} ({fmt_count(r[f'{g}_passed'])}/{fmt_count(r[f'{g}_scored'])} "
                    f"of {fmt_count(r[f'{g}_units'])} units)"
                )
                for g, label in (("retried", "retried"), ("never", "never retried"))
            },
        }
        for r in table.iter_rows(named=True)
    ]
    return _text_frame(rows)


def crosscheck(report: AuditReport) -> Crosscheck:
    """The reconciliation and retry tables of ``report``, as text cells for the renderers.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["x", "y"]}), candidates=["B"])
    >>> ledger = pl.DataFrame({"candidate": "B", "case_id": ["x", "y", "y"], "attempt": [1, 1, 2],
    ...     "exec_status": ["completed", "error", "completed"], "passed": [0, None, 1]})
    >>> checked = crosscheck(ef.audit(plan, ledger, retry="last_allowed"))
    >>> checked.reconciliation.height, checked.retry_headline.row(0)
    (0, ('B', '0.000 (0/1)', '0.500 (1/2)', '+0.5 [-1.0, 1.0]', 'no'))
    """
    table = report.reconciliation
    checked = Crosscheck(
        reconciliation=reconciliation_cells(table), sentences=tuple(dict.fromkeys(table.get_column("sentence")))
    )
    if not report.retry_bias.height:  # no unit was retried
        return checked
    return Crosscheck(
        reconciliation=checked.reconciliation,
        sentences=checked.sentences,
        attempt_rates=attempt_rate_cells(report.attempt_rates),
        retry_headline=retry_headline_cells(report.retry_bias),
        retried_by_slice=retried_cells(report.retried_by_slice),
    )
