"""The pairs of a comparison: the two candidates' units joined on identity, ``(case_id, trial)``, never by position.

What is compared (:class:`Scale`: pass/fail, or the score within its range), the paired units with each
side's gradedness and value and the pairs the declared policy uses (:func:`paired_units`), the units
planned for one side only (:func:`unpaired_count`), the pair counts, the dropped pairs by slice, and the
exact McNemar test of paired gradedness (:func:`missingness_p_value`). Used by
:func:`evalframe.compare.compare`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, OUTCOME, SCORE, TRIAL
from evalframe.errors import OptionError
from evalframe.report.model import AuditReport
from evalframe.slices import GRADED_OUTCOMES, binned
from evalframe.stats import DEFAULT_CONFIDENCE, Target, check_confidence, mcnemar_exact
from evalframe.stats.clustered import check_target
from evalframe.stats.detectable import check_range

PairPolicy = Literal["complete_pairs", "missing_as_fail"]
PAIR_KEY: Final = (CASE_ID, TRIAL)


def declared_confidence(reports: Iterable[AuditReport], confidence: float | None) -> float:
    """``confidence`` when given, else the one the audits declared (``meta["confidence"]``), else 0.95.

    So a comparison or an aggregate of a report audited at ``confidence=0.9`` has 90% intervals, as the
    command line's ``--confidence`` gives both. Raises :class:`~evalframe.errors.OptionError`
    (``option`` ``"confidence"``) when ``confidence`` is None and the audits declared different ones, or
    when the confidence is not strictly between 0 and 1 (:func:`~evalframe.stats.check_confidence`).

    Examples
    --------
    >>> class Audit:  # what is read: the meta
    ...     def __init__(self, meta): self.meta = meta
    >>> declared_confidence([Audit({"confidence": 0.9})], None), declared_confidence([Audit({})], 0.8)
    (0.9, 0.8)
    >>> declared_confidence([Audit({})], None)
    0.95
    """
    if confidence is not None:
        return check_confidence(confidence)
    found = {r.meta.get("confidence", DEFAULT_CONFIDENCE) for r in reports}
    if len(found) > 1:
        listed = ", ".join(sorted(map(str, found)))
        raise OptionError("confidence", f"the audits declared different confidences ({listed}): give confidence")
    return check_confidence(found.pop() if found else DEFAULT_CONFIDENCE)


@dataclass(frozen=True)
class Scale:
    """What is compared: pass/fail (0/1), or the score within its range for numeric grades without threshold."""

    numeric: bool
    low: float
    high: float
    slices: tuple[str, ...]
    #: The slices' bins as the audit declared them (``meta["bins"]``): column → edges (how slice values read,
    #: not what is compared: left out of equality).
    bins: Mapping[str, list[float]] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, meta: Mapping[str, Any]) -> Scale:
        """The scale of a report from its meta (grade, pass threshold, score range, slices and their bins)."""
        numeric = meta.get("grade") == "numeric" and meta.get("pass_threshold") is None
        low, high = (float(v) for v in meta.get("score_range", (0.0, 1.0))) if numeric else (0.0, 1.0)
        return cls(numeric, low, high, tuple(str(s) for s in meta.get("slices", [])), meta.get("bins") or {})


def check_compare_options(
    pairs: str,
    min_coverage: float | None,
    alpha: float,
    comparable_on: Sequence[str] | None,
    ignore_settings: Sequence[str],
) -> None:
    """OptionError on the first of :func:`evalframe.compare.compare`'s options outside its values.

    Examples
    --------
    >>> try:
    ...     check_compare_options("complete_pairs", None, 0.05, "judge", ())
    ... except OptionError as exc:
    ...     print(exc.option, "|", exc.reason)
    comparable_on | comparable_on is a list of setting names, got the text 'judge' (give ['judge'])
    """
    if pairs not in get_args(PairPolicy):
        listed = ", ".join(map(repr, get_args(PairPolicy)))
        raise OptionError("pairs", f"pairs must be one of {listed}, got {pairs!r}")
    if min_coverage is not None:
        check_range("min_coverage", min_coverage, 0.0, 1.0, closed=True)
    check_range("alpha", alpha, 0.0, 1.0)
    for name, value in (("comparable_on", comparable_on), ("ignore_settings", ignore_settings)):
        if isinstance(value, str):  # a text is a sequence of one-letter names
            raise OptionError(name, f"{name} is a list of setting names, got the text {value!r} (give [{value!r}])")


def check_cases(cases: str) -> Target:
    """Raise :class:`~evalframe.errors.OptionError` (``option`` ``"cases"``) unless ``cases`` is a target.

    The one check of the ``cases`` option, which :func:`evalframe.audit.arguments.check_options` runs too.

    Examples
    --------
    >>> check_cases("fixed")
    'fixed'
    >>> try:
    ...     check_cases("all")
    ... except OptionError as exc:
    ...     print(exc.option, "|", exc.reason)
    cases | cases must be one of 'sample', 'fixed', got 'all'
    """
    return check_target(cases, "cases")


def check_names(report: AuditReport, baseline: str, candidate: str, task: str | None = None) -> None:
    """Raise ValueError unless both names are candidates of the report (of ``task``'s, when named), and different."""
    names = set(report.summary.get_column(CANDIDATE).to_list())
    where = "the report" if task is None else f"task {task}"
    for role, name in (("baseline", baseline), ("candidate", candidate)):
        if name not in names:
            msg = f"{role} {name!r} is not a candidate of {where} (candidates: {', '.join(sorted(names))})"
            raise ValueError(msg)
    if baseline == candidate:
        msg = "baseline and candidate must differ"
        raise ValueError(msg)


def task_report(report: AuditReport, task: str | None) -> AuditReport:
    """The one task's report a comparison reads: ``task``'s own when the report holds several tasks.

    A report of one task (no ``tasks`` in its meta, or one) is its own task's; naming it is allowed, naming
    another is refused. With several tasks ``task`` is required: candidates are only compared within a task.
    """
    tasks = [str(t) for t in report.meta.get("tasks", [])]
    if len(tasks) < 2:
        if task is None or task in tasks:
            return report
        held = f"one task, {tasks[0]}" if tasks else "one unnamed task"
        raise OptionError("task", f"task {task!r} is not a task of the report (it holds {held})")
    if task is None or task not in tasks:
        given = "compare needs task=" if task is None else f"task {task!r} is not one of them"
        msg = f"the report holds {len(tasks)} tasks ({', '.join(tasks)}): candidates are compared within one; {given}"
        raise OptionError("task", msg)
    return report.by_task()[task]


def _side(report: AuditReport, name: str, slices: Sequence[str]) -> pl.DataFrame:
    units = report.units.lazy().filter(pl.col(CANDIDATE) == name).collect()
    if units.select(pl.struct(*PAIR_KEY).is_duplicated().any()).item():
        msg = "compare needs one observation per unit: audit with retry 'first' or 'last_allowed', not 'every'"
        raise OptionError("retry", msg)
    return units.select(*PAIR_KEY, *slices, pl.col(OUTCOME).cast(pl.String).alias("outcome"), SCORE)


def paired_units(report: AuditReport, baseline: str, candidate: str, scale: Scale, pairs: PairPolicy) -> pl.DataFrame:
    """One row per (case_id, trial) planned for both sides: outcomes, gradedness, values compared, ``used``.

    A unit planned for one side only (a units-table plan need not plan every case for every candidate)
    has no pair: it is neither ungraded nor a fail, and stays out (:func:`unpaired_count` counts it). An
    ungraded side's value is the low end of the scale (a fail); ``used`` marks the pairs the declared
    policy counts (both graded under ``complete_pairs``, every pair under ``missing_as_fail``).
    """
    base = _side(report, baseline, scale.slices).rename({"outcome": "baseline_outcome", SCORE: "_b_score"})
    cand = _side(report, candidate, []).rename({"outcome": "candidate_outcome", SCORE: "_c_score"})
    joined = base.join(cand, on=list(PAIR_KEY), how="inner").sort(list(PAIR_KEY))
    joined = binned(joined, scale.slices, scale.bins)  # a slice value as the audit's tables show it: its bin
    b_graded = pl.col("baseline_outcome").is_in(GRADED_OUTCOMES).fill_null(False)
    c_graded = pl.col("candidate_outcome").is_in(GRADED_OUTCOMES).fill_null(False)

    def value(side: str, score: str, graded: pl.Expr) -> pl.Expr:
        got = pl.col(score) if scale.numeric else (pl.col(side) == "passed").cast(pl.Float64)
        return pl.when(graded).then(got).otherwise(pl.lit(scale.low)).cast(pl.Float64)

    return joined.with_columns(
        ((b_graded & c_graded) if pairs == "complete_pairs" else pl.lit(True)).alias("used"),
        value("baseline_outcome", "_b_score", b_graded).alias("baseline_value"),
        value("candidate_outcome", "_c_score", c_graded).alias("candidate_value"),
        b_graded.alias("baseline_graded"),
        c_graded.alias("candidate_graded"),
    ).drop("_b_score", "_c_score")


def unpaired_count(report: AuditReport, side: str, joined: pl.DataFrame) -> int:
    """How many of ``side``'s planned units have no pair (the other side does not plan them)."""
    planned = report.summary.filter(pl.col(CANDIDATE) == side).get_column("planned").item()
    return int(planned) - joined.height


def missingness_p_value(joined: pl.DataFrame) -> float:
    """Exact McNemar p-value of paired gradedness: pairs graded on one side only, each way."""
    only_b, only_c = joined.select(
        (pl.col("baseline_graded") & ~pl.col("candidate_graded")).sum().alias("only_baseline"),
        (~pl.col("baseline_graded") & pl.col("candidate_graded")).sum().alias("only_candidate"),
    ).row(0)
    return mcnemar_exact(only_b, only_c)


def pair_counts(joined: pl.DataFrame, in_use: pl.DataFrame, pairs: PairPolicy) -> dict[str, int]:
    """Pairs planned, used and dropped, and the ungraded sides counted as fails (``missing_as_fail`` only)."""
    ungraded = in_use.select((~pl.col("baseline_graded")).sum() + (~pl.col("candidate_graded")).sum()).item()
    return {
        "pairs_planned": joined.height,
        "pairs_used": in_use.height,
        "pairs_dropped": joined.height - in_use.height,
        "ungraded_counted_as_fail": int(ungraded) if pairs == "missing_as_fail" else 0,
    }


def dropped_by_slice(joined: pl.DataFrame, slices: Sequence[str], pairs: PairPolicy) -> pl.DataFrame:
    """Under ``complete_pairs``, dropped pairs per (slice column, slice value); empty otherwise."""
    if not slices or pairs != "complete_pairs":
        return pl.DataFrame()
    dropped = joined.filter(~pl.col("used"))
    return pl.concat(
        [
            dropped.group_by(pl.col(s).cast(pl.String).alias("slice_value"))
            .len("pairs_dropped")
            .with_columns(pl.lit(s).alias("slice_column"))
            .select("slice_column", "slice_value", "pairs_dropped")
            for s in slices
        ]
    ).sort("slice_column", "slice_value", nulls_last=True)
