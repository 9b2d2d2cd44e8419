"""The comparison's part of the view: verdict, reasons, measures, and the pairs that flipped, by slice.

Like :mod:`evalframe.report.view`, the numbers shown are read here once; the
renderers lay them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from evalframe.columns import CASE_ID, FLIP_CLASS, TASK, TRIAL
from evalframe.report.descriptions import describe
from evalframe.report.format import natural_sort_frame

if TYPE_CHECKING:
    from evalframe.compare import Comparison

#: Flipped pairs listed (pairs.parquet holds all of them).
FLIPS_SHOWN: Final = 50
#: Ways a pair can flip between baseline and candidate, with their label.
FLIPS: Final[Mapping[str, str]] = {
    "pass_to_fail": "pass → fail (baseline passed, candidate failed)",
    "fail_to_pass": "fail → pass (baseline failed, candidate passed)",
    "baseline_only": "graded for the baseline only",
    "candidate_only": "graded for the candidate only",
}


@dataclass(frozen=True)
class Flips:
    """Pairs whose outcome differs between baseline and candidate."""

    #: Pairs per flip kind (:data:`FLIPS`); pass → fail and fail → pass are None for numeric scores without a
    #: pass threshold (no pass or fail exists to flip: not 0).
    counts: Mapping[str, int | None]
    #: One row per (slice column, slice value) with a count per flip kind; empty without slices.
    by_slice: pl.DataFrame
    #: The first :data:`FLIPS_SHOWN` flipped pairs: case_id, trial, slices, flip, each side's outcome.
    pairs: pl.DataFrame

    @property
    def total(self) -> int:
        """Flipped pairs of every kind (those counted)."""
        return sum(v or 0 for v in self.counts.values())


#: Each class of :data:`evalframe.columns.FLIP_CLASSES` with what it means, as the outputs label it.
CASE_FLIP_LABELS: Final[Mapping[str, str]] = {
    "stable_pass": "every scored trial passed on both sides",
    "stable_fail": "every scored trial failed on both sides",
    "fixed": "candidate passes more often, Holm-adjusted Fisher p below alpha",
    "regressed": "candidate passes less often, Holm-adjusted Fisher p below alpha",
    "flaky": "the trials differ or are mixed, without a significant change",
    "incomparable": "a side has no scored trial: not a regression",
}
#: Fixed and regressed cases listed (flips.parquet holds every case).
CASE_FLIPS_SHOWN: Final = 20


@dataclass(frozen=True)
class CaseFlips:
    """The trial-aware flips of a comparison (SPEC §6c): cases per class, the note, the changed cases."""

    #: Cases per class of :data:`CASE_FLIP_LABELS`, every class, zero included.
    counts: Mapping[str, int]
    #: Why no case could be classed fixed or regressed (a single trial per side), or None.
    note: str | None
    #: The first :data:`CASE_FLIPS_SHOWN` fixed or regressed cases: case_id, each side's k/n, p_holm, class.
    changed: pl.DataFrame

    @property
    def cases(self) -> int:
        """Cases classed (planned for both sides)."""
        return sum(self.counts.values())


def case_flips_view(comparison: Comparison) -> CaseFlips:
    """The trial-aware flips of a comparison as the outputs show them.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q", "r"]}), candidates=["A", "B"])
    >>> ledger = pl.DataFrame({"candidate": ["A", "B", "A"], "case_id": ["q", "q", "r"], "passed": [1, 0, 1]})
    >>> view = case_flips_view(ef.compare(ef.audit(plan, ledger), baseline="A", candidate="B"))
    >>> {k: v for k, v in view.counts.items() if v}, view.changed.height
    ({'flaky': 1, 'incomparable': 1}, 0)
    """
    flips = comparison.case_flips
    counts = comparison.flip_counts
    if not flips.height:
        return CaseFlips(counts=counts, note=comparison.flips_note, changed=pl.DataFrame())
    changed = flips.filter(pl.col(FLIP_CLASS).is_in(["fixed", "regressed"]))
    changed = changed.drop(TASK, "p_value", "incomparable_side", strict=False).head(CASE_FLIPS_SHOWN)
    return CaseFlips(counts=counts, note=comparison.flips_note, changed=changed)


@dataclass(frozen=True)
class ComparisonView:
    """A paired comparison: verdict first, its reasons, its numbers and the pairs that flipped."""

    baseline: str
    candidate: str
    pair_policy: str
    verdict: str
    reasons: tuple[str, ...]
    #: (measure, value, meaning) for every column of the comparison table but reasons and checks passed.
    measures: tuple[tuple[str, Any, str], ...]
    dropped_by_slice: pl.DataFrame
    flips: Flips
    min_coverage: float
    #: The comparison table (one row), for full-precision output.
    table: pl.DataFrame
    #: The trial-aware flips per case (SPEC §6c); None for a view built without them.
    case_flips: CaseFlips | None = None
    #: The checks that hold, apart from the reasons (which block or qualify the verdict).
    checks_passed: tuple[str, ...] = ()

    @property
    def winner(self) -> bool:
        """A winner is supported."""
        return self.verdict in ("candidate_better", "baseline_better")


def flips(pairs: pl.DataFrame, slices: list[str], bins: Mapping[str, Sequence[float]] | None = None) -> Flips:
    """The pairs that flipped between baseline and candidate, counted overall and by slice.

    Parameters
    ----------
    pairs
        :attr:`evalframe.compare.Comparison.pairs`: ``case_id``, ``trial``,
        the slice columns, ``baseline_outcome`` and ``candidate_outcome``
        (String), ``baseline_graded`` and ``candidate_graded`` (Boolean).
    slices
        Slice columns of ``pairs`` to count by.

    Returns
    -------
    Flips
        ``counts`` per kind of :data:`FLIPS` (pass → fail, fail → pass,
        graded on one side only); ``by_slice`` one row per (slice column,
        slice value) with a UInt32 count per kind; ``pairs`` the first
        :data:`FLIPS_SHOWN` flipped pairs in natural case order. A pair
        graded ``scored_no_threshold`` (a numeric score without a pass
        threshold) has neither pass nor fail: pass → fail and fail → pass
        are then None (null by slice), never 0.

    Examples
    --------
    >>> pairs = pl.DataFrame({"case_id": ["q1", "q2", "q3"], "trial": [1, 1, 1],
    ...     "baseline_outcome": ["passed", "failed", "missing"], "candidate_outcome": ["failed", "failed", "passed"],
    ...     "baseline_graded": [True, True, False], "candidate_graded": [True, True, True]})
    >>> f = flips(pairs, [])
    >>> dict(f.counts)
    {'pass_to_fail': 1, 'fail_to_pass': 0, 'baseline_only': 0, 'candidate_only': 1}
    >>> f.pairs.get_column("flip").to_list()
    ['pass_to_fail', 'candidate_only']
    """
    b, c = pl.col("baseline_outcome"), pl.col("candidate_outcome")
    bg, cg = pl.col("baseline_graded"), pl.col("candidate_graded")
    flip = (
        pl.when((b == "passed") & (c == "failed"))
        .then(pl.lit("pass_to_fail"))
        .when((b == "failed") & (c == "passed"))
        .then(pl.lit("fail_to_pass"))
        .when(bg & ~cg)
        .then(pl.lit("baseline_only"))
        .when(~bg & cg)
        .then(pl.lit("candidate_only"))
    )
    flipped = pairs.with_columns(flip.alias("flip")).filter(pl.col("flip").is_not_null())
    counts: dict[str, int | None] = {k: 0 for k in FLIPS}
    counts |= dict(flipped.group_by("flip").len().iter_rows())
    no_pass = (b == "scored_no_threshold") | (c == "scored_no_threshold")
    undefined = ("pass_to_fail", "fail_to_pass") if pairs.select(no_pass.any()).item() else ()
    counts |= dict.fromkeys(undefined, None)
    parts = []
    for s in slices:
        per = (
            flipped.group_by(pl.col(s).cast(pl.String).alias("slice_value"), "flip")
            .len("pairs")
            .pivot("flip", index="slice_value", values="pairs")
        )
        per = per.with_columns(
            [pl.lit(s).alias("slice_column")]
            + [
                pl.col(k).fill_null(0).cast(pl.UInt32) if k in per.columns else pl.lit(0, pl.UInt32).alias(k)
                for k in FLIPS
            ]
        )
        parts.append(
            per.select("slice_column", "slice_value", *FLIPS).with_columns(
                pl.lit(None, pl.UInt32).alias(k) for k in undefined
            )
        )
    by_slice = natural_sort_frame(pl.concat(parts), ["slice_column", "slice_value"], bins) if parts else pl.DataFrame()
    shown = [CASE_ID, TRIAL, *slices, "flip", "baseline_outcome", "candidate_outcome"]
    first = natural_sort_frame(flipped.select(shown), [CASE_ID]).head(FLIPS_SHOWN) if flipped.height else flipped
    return Flips(counts=counts, by_slice=by_slice, pairs=first.select([c for c in shown if c in first.columns]))


#: Columns of :attr:`evalframe.compare.Comparison.pairs` that are not slice columns.
_PAIR_COLUMNS: Final = frozenset(
    {
        CASE_ID,
        TRIAL,
        "baseline_outcome",
        "candidate_outcome",
        "used",
        "baseline_value",
        "candidate_value",
        "baseline_graded",
        "candidate_graded",
    }
)


def comparison_view(comparison: Comparison, slices: list[str] | None = None) -> ComparisonView:
    """The view of a comparison: verdict, reasons, measures, dropped and flipped pairs.

    ``slices`` are the slice columns to count flipped pairs by; by default
    every column of ``comparison.pairs`` that is not one of its own.
    """
    if slices is None:
        slices = [c for c in comparison.pairs.columns if c not in _PAIR_COLUMNS]
    row = comparison.table.row(0, named=True)
    listed = ("reasons", "checks_passed")
    measures = tuple((c, row[c], describe("comparison", c)) for c in comparison.table.columns if c not in listed)
    return ComparisonView(
        baseline=str(row["baseline"]),
        candidate=str(row["candidate"]),
        pair_policy=str(row["pair_policy"]),
        verdict=str(row["verdict"]),
        reasons=tuple(str(r) for r in row["reasons"]),
        checks_passed=tuple(str(r) for r in row.get("checks_passed") or ()),
        measures=measures,
        dropped_by_slice=natural_sort_frame(
            comparison.dropped_by_slice, ["slice_column", "slice_value"], comparison.bins
        ),
        flips=flips(comparison.pairs, [s for s in slices if s in comparison.pairs.columns], comparison.bins),
        min_coverage=float(row["min_coverage"]),
        table=comparison.table,
        case_flips=case_flips_view(comparison),
    )
