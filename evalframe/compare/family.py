"""Families of comparisons: one baseline against every other candidate (Holm 1979), or one pair in every task.

Comparing one baseline with m candidates runs m tests; the chance that at least one "winner" is a fluke
grows with m. :func:`compare_each` runs :func:`evalframe.compare.compare` once per candidate and adjusts
the p-values evalframe computes (the exact McNemar test, one trial per case) with Holm's step-down
procedure (:func:`evalframe.slices.missingness.holm`), which keeps the family-wise error rate at most α
under any dependence between the comparisons. A winner stands in the family only when its Holm-adjusted
p-value is below α. With several trials per case the verdict rests on the clustered interval, which gives
no p-value: those comparisons are not adjusted, and the family says so.

:func:`compare_by_task` compares one pair within each task of a report of several, in turn: tasks are
never pooled, and a task one side was not run on is not comparable (no verdict), said in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalframe.columns import CANDIDATE
from evalframe.compare import Comparison, PairPolicy, compare
from evalframe.compare.pairs import check_cases, check_compare_options, check_names, declared_confidence, task_report
from evalframe.natural import natural_sorted
from evalframe.report.model import AuditReport
from evalframe.slices.missingness import holm
from evalframe.stats.clustered import Target

#: The columns of :attr:`Family.table`, in order.
FAMILY_COLUMNS = (
    "baseline",
    "candidate",
    "verdict",
    "quality_difference",
    "ci_low",
    "ci_high",
    "pairs_used",
    "mcnemar_p_value",
    "holm_p_value",
    "family_verdict",
)


@dataclass(frozen=True)
class Family:
    """A baseline compared with each other candidate, and the multiplicity of those comparisons.

    Attributes
    ----------
    comparisons
        One :class:`~evalframe.compare.Comparison` per candidate, candidates in natural order.
    table
        One row per candidate (:data:`FAMILY_COLUMNS`): ``verdict`` is the comparison's own;
        ``holm_p_value`` (Float64, null without a p-value) is the Holm-adjusted exact McNemar p-value;
        ``family_verdict`` is the verdict once the family is accounted for: a winner whose adjusted
        p-value is not below ``alpha`` becomes ``no_supported_winner``.
    alpha
        The family-wise significance level.
    """

    comparisons: tuple[Comparison, ...]
    table: pl.DataFrame
    alpha: float

    @property
    def multiplicity(self) -> str:
        """The family in one sentence: how many comparisons, how they were adjusted, which were not."""
        m = self.table.height
        unadjusted = self.table.filter(pl.col("mcnemar_p_value").is_null()).get_column(CANDIDATE).to_list()
        text = (
            f"{m} comparison{'' if m == 1 else 's'} against one baseline: Holm's step-down adjustment (Holm 1979) "
            f"of the exact McNemar p-values keeps the chance of any false winner at most α = {self.alpha:g}"
        )
        if unadjusted:
            text += (
                f"; not adjusted (several trials per case: the verdict rests on its interval, no p-value): "
                f"{', '.join(unadjusted)}"
            )
        return text

    @property
    def every_candidate_better(self) -> bool:
        """Every candidate beats the baseline once the family is accounted for (``--require-winner``)."""
        return bool(self.table.height) and bool((self.table.get_column("family_verdict") == "candidate_better").all())


def compare_each(
    report: AuditReport,
    *,
    baseline: str,
    pairs: PairPolicy = "complete_pairs",
    min_coverage: float | None = None,
    confidence: float | None = None,
    alpha: float = 0.05,
    task: str | None = None,
    cases: Target | None = None,
    comparable_on: Sequence[str] | None = None,
    ignore_settings: Sequence[str] = (),
) -> Family:
    """Compare every candidate of ``report`` other than ``baseline`` against it, Holm across the family.

    Each comparison is :func:`evalframe.compare.compare` with the same arguments; raises what it raises
    (``ValueError`` for an unknown baseline), and ``ValueError`` when the report (or ``task``) has no
    candidate but the baseline: a family of no comparison says nothing. The family-wise adjustment is
    Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2):65–70.

    Examples
    --------
    >>> import evalframe as ef
    >>> cases = [f"q{i}" for i in range(40)]
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["base", "B", "C"])
    >>> passed = {"base": [i < 10 for i in range(40)], "B": [i < 30 for i in range(40)],
    ...           "C": [i < 12 for i in range(40)]}
    >>> ledger = pl.DataFrame([{"candidate": c, "case_id": q, "passed": int(p)}
    ...                        for c, ps in passed.items() for q, p in zip(cases, ps)])
    >>> family = compare_each(ef.audit(plan, ledger), baseline="base")
    >>> family.table.select("candidate", "verdict", "family_verdict").rows()
    [('B', 'candidate_better', 'candidate_better'), ('C', 'no_supported_winner', 'no_supported_winner')]
    """
    names = natural_sorted(str(n) for n in report.summary.get_column(CANDIDATE).unique().to_list() if n != baseline)
    if not names:
        raise ValueError(f"the report has no candidate other than the baseline {baseline!r} to compare it with")
    comparisons = tuple(
        compare(
            report,
            baseline=baseline,
            candidate=name,
            pairs=pairs,
            min_coverage=min_coverage,
            confidence=confidence,
            alpha=alpha,
            task=task,
            cases=cases,
            comparable_on=comparable_on,
            ignore_settings=ignore_settings,
        )
        for name in names
    )
    rows: list[dict[str, Any]] = [
        {k: c.table.item(0, k) for k in FAMILY_COLUMNS[:8] if k in c.table.columns} for c in comparisons
    ]
    tested = [i for i, r in enumerate(rows) if r.get("mcnemar_p_value") is not None]
    adjusted = dict(zip(tested, holm([float(rows[i]["mcnemar_p_value"]) for i in tested]), strict=True))
    for i, r in enumerate(rows):
        r["holm_p_value"] = adjusted.get(i)
        winner = r["verdict"] in ("candidate_better", "baseline_better")
        held = i not in adjusted or adjusted[i] < alpha
        r["family_verdict"] = r["verdict"] if not winner or held else "no_supported_winner"
    schema = {
        "quality_difference": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "mcnemar_p_value": pl.Float64,
        "holm_p_value": pl.Float64,
    }
    table = pl.DataFrame(rows, schema_overrides=schema).select(FAMILY_COLUMNS) if rows else pl.DataFrame()
    return Family(comparisons=comparisons, table=table, alpha=alpha)


def compare_by_task(
    report: AuditReport,
    *,
    baseline: str,
    candidate: str,
    pairs: PairPolicy = "complete_pairs",
    min_coverage: float | None = None,
    confidence: float | None = None,
    alpha: float = 0.05,
    cases: Target | None = None,
    comparable_on: Sequence[str] | None = None,
    ignore_settings: Sequence[str] = (),
) -> dict[str, Comparison | str]:
    """``candidate`` against ``baseline`` within each task of ``report``, in turn (``evalframe compare``'s rule).

    Parameters
    ----------
    report
        An audit report, of several tasks (``meta["tasks"]``) or of one.
    baseline, candidate
        Candidate names: each must be a candidate of some task.
    pairs, min_coverage, confidence, alpha, cases, comparable_on, ignore_settings
        As in :func:`evalframe.compare.compare`, for every task.

    Returns
    -------
    dict
        Task name (the report's order; ``""`` for a report of one unnamed task) → its
        :class:`~evalframe.compare.Comparison`, or the reason it is not comparable: a side the task was not
        run on (no verdict; never a pooled number).

    Raises
    ------
    ValueError
        When a name is a candidate of no task (a typo), or the names are the same; what ``compare`` raises.

    Examples
    --------
    >>> import evalframe as ef
    >>> units = pl.DataFrame({"candidate": ["A", "B", "A", "B", "A"], "task": ["belief"] * 4 + ["desire"],
    ...                       "case_id": ["q1", "q1", "q2", "q2", "q1"]})
    >>> ledger = units.with_columns(passed=pl.Series([1, 1, 0, 1, 1]))
    >>> by_task = compare_by_task(ef.audit(ef.Plan.from_frame(units), ledger), baseline="A", candidate="B")
    >>> by_task["belief"].verdict
    'no_supported_winner'
    >>> print(by_task["desire"])  # B was not run on desire
    candidate 'B' is not a candidate of task desire (candidates: A)
    """
    check_names(report, baseline, candidate)  # a name in no task is a typo, not a task "not comparable"
    check_compare_options(pairs, min_coverage, alpha, comparable_on, ignore_settings)  # even where none compares
    confidence = declared_confidence([report], confidence)  # resolved once, as compare would for each task
    cases = check_cases(report.meta.get("cases", "sample") if cases is None else cases)
    tasks = [str(t) for t in report.meta.get("tasks", [])] or [""]
    compared: dict[str, Comparison | str] = {}
    for task in tasks:
        try:
            check_names(task_report(report, task or None), baseline, candidate, task or None)
        except ValueError as exc:
            compared[task] = str(exc)
            continue
        compared[task] = compare(
            report,
            baseline=baseline,
            candidate=candidate,
            pairs=pairs,
            min_coverage=min_coverage,
            confidence=confidence,
            alpha=alpha,
            task=task or None,
            cases=cases,
            comparable_on=comparable_on,
            ignore_settings=ignore_settings,
        )
    return compared
