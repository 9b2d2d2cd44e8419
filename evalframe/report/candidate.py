"""One candidate's part of the view: its funnel counts, its rates with their parts, its case-level rate.

Read from one row of the report's summary (and the units per outcome) by :func:`candidates_of`; the
renderers lay these out and compute nothing. See :mod:`evalframe.report.view` for the whole view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from evalframe.columns import CANDIDATE, OUTCOMES
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS, is_pass_fail
from evalframe.funnel.uncertainty import CLUSTERING_COLUMNS, MEAN_SCORE_COLUMNS
from evalframe.natural import natural_key
from evalframe.report.descriptions import RATE_FORMULAS
from evalframe.report.format import fmt_count, fmt_value
from evalframe.report.sentences import UNGRADED_OUTCOMES, headline, missing_ids_text, rate_base, rated_units

#: Where a planned unit ended up, from best evidence to none (the headline's stacked bar).
COMPOSITION: Final = (
    "passed",
    "failed",
    "scored_no_threshold",
    "not_scored",
    "judge_failed",
    "no_output",
    "exec_failed",
    "not_started",
    "missing",
)
#: Rate -> (numerator column, denominator column); the upper bound's numerator is passed + planned − scored.
_PARTS: Final[Mapping[str, tuple[str, str]]] = {
    "completion_rate": ("completed", "planned"),
    "scored_coverage": ("scored", "planned"),
    "pass_rate_scored": ("passed", "scored"),
    "pass_rate_planned": ("passed", "planned"),
    "pass_rate_upper": ("upper", "planned"),
}
_UNCERTAINTY: Final = ("cases_planned", "cases_fully_scored", *CLUSTERING_COLUMNS, *MEAN_SCORE_COLUMNS)


@dataclass(frozen=True)
class Rate:
    """One rate of one candidate, with what it is a fraction of."""

    name: str
    #: e.g. ``passed / scored``.
    formula: str
    value: float | None
    numerator: int
    denominator: int
    #: The denominator's name (``scored`` or ``planned``).
    of: str
    ci_low: float | None
    ci_high: float | None

    @property
    def fraction(self) -> str:
        """``numerator / denominator``, or ``—`` when the rate has no value (its counts are not a fraction of it)."""
        return "—" if self.value is None else f"{fmt_count(self.numerator)} / {fmt_count(self.denominator)}"


@dataclass(frozen=True)
class CaseRate:
    """One candidate's case-level rate (SPEC §4): each case's trials reduced to one outcome by the declared reducer.

    Its denominator is cases (``cases_scored``: cases all of whose planned units got a grade), where the
    trial-level ``pass_rate_scored`` counts trials. Read from the summary's ``case_reducer``,
    ``case_pass_rate``, ``cases_scored`` and ``case_pass_rate_ci_low`` / ``_high``.
    """

    #: The reducer's name as declared (``mean``, ``any``, ``at_least:k``, Inspect's ``max`` …).
    reducer: str
    value: float | None
    #: Cases whose reduced outcome is a pass; under a reducer whose outcome is a fraction of a case (``mean``,
    #: ``median``, ``pass_at:k``) the sum of the cases' outcomes.
    numerator: float
    #: ``cases_scored``.
    denominator: int
    ci_low: float | None
    ci_high: float | None

    @property
    def label(self) -> str:
        """The rate named with its reducer, e.g. ``case_pass_rate (any)``."""
        return f"case_pass_rate ({self.reducer})"

    @property
    def pass_fail(self) -> bool:
        """Whether each case's reduced outcome is a pass or a fail (else a fraction of a case)."""
        return is_pass_fail(self.reducer)

    @property
    def formula(self) -> str:
        """What the rate is a fraction of, e.g. ``cases passed / cases scored``."""
        return "cases passed / cases scored" if self.pass_fail else "case pass fractions / cases scored"

    @property
    def fraction(self) -> str:
        """``numerator / denominator`` (``—`` when the rate has no value: no case is fully scored)."""
        return "—" if self.value is None else f"{fmt_count(self.numerator)} / {fmt_count(self.denominator)}"

    @property
    def equation(self) -> str:
        """Name, formula and counts: ``case_pass_rate (any) = cases passed / cases scored = 2 / 2``."""
        return f"{self.label} = {self.formula} = {self.fraction}"

    @property
    def sentence(self) -> str:
        """:attr:`equation` with the rate's value (or why it has none)."""
        if self.value is None:
            return f"{self.label} is null: {self.why_null}"
        return f"{self.equation} = {fmt_value(self.value)}"

    @property
    def why_null(self) -> str:
        """Why the rate has no value: no pass threshold for scored cases, or no case fully scored."""
        if self.denominator:
            return f"no pass threshold declared (cases scored = {self.denominator})"
        return "no case has every planned trial scored (cases scored = 0)"


def _case_rate(record: Mapping[str, Any]) -> CaseRate:
    """The case-level rate of one summary row; a pass/fail reducer's passed cases are its rate × cases scored."""
    reducer = str(record.get("case_reducer") or "mean")
    value, cases = record.get("case_pass_rate"), int(record.get("cases_scored") or 0)
    passed = 0.0 if value is None else value * cases
    return CaseRate(
        reducer=reducer,
        value=value,
        numerator=float(round(passed)) if is_pass_fail(reducer) else passed,
        denominator=cases,
        ci_low=record.get("case_pass_rate_ci_low"),
        ci_high=record.get("case_pass_rate_ci_high"),
    )


def shows_case_level(meta: Mapping[str, Any], summary: pl.DataFrame) -> bool:
    """Whether the report shows the case-level rate beside the trial-level one.

    Shown when a reducer other than the default ``mean`` was declared, or when some candidate plans
    several trials of a case (more planned units than planned cases); with one trial per case and the
    default reducer it equals ``pass_rate_scored`` over the fully scored cases and is left to the tables.

    Examples
    --------
    >>> one_trial = pl.DataFrame({"planned": [2], "cases_planned": [2], "case_pass_rate": [0.5]})
    >>> two_trials = pl.DataFrame({"planned": [4], "cases_planned": [2], "case_pass_rate": [0.5]})
    >>> [shows_case_level({"case_reducer": r}, s) for r, s in [("mean", one_trial), ("any", one_trial),
    ...                                                         ("mean", two_trials)]]
    [False, True, True]
    """
    if "case_pass_rate" not in summary.columns or summary.is_empty():
        return False
    if str(meta.get("case_reducer") or "mean") != "mean":
        return True
    if "cases_planned" not in summary.columns:
        return False
    return bool((summary.get_column("planned") > summary.get_column("cases_planned")).any())


@dataclass(frozen=True)
class Candidate:
    """One candidate's row: funnel counts, rates, missing units, outcomes and headline sentences."""

    name: str
    counts: Mapping[str, int]
    rates: Mapping[str, Rate]
    missing_cases: int
    #: The first :data:`~evalframe.reconcile.MISSING_IDS_SHOWN` missing case ids, in natural order.
    missing_ids: tuple[str, ...]
    #: Ungraded units other than missing, by outcome (non-zero only).
    ungraded: tuple[tuple[str, int], ...]
    headline: tuple[str, ...]
    #: Units per outcome (every outcome of :data:`evalframe.columns.OUTCOMES`).
    outcomes: Mapping[str, int]
    #: (outcome, units, share of planned: of observations under retry every) in :data:`COMPOSITION` order, non-zero.
    composition: tuple[tuple[str, int, float], ...]
    selective_missingness: str | None
    #: Cases, standard errors, design effect and mean score (:data:`_UNCERTAINTY`); None when absent.
    uncertainty: Mapping[str, Any]
    #: Each count of :data:`evalframe.funnel.COUNT_COLUMNS` as a share of planned (of observations under retry every).
    shares: Mapping[str, float]
    #: The summary counts passes and fails (its ``passed`` and ``failed`` are not null): every scored unit has one.
    pass_fail_counted: bool = True
    #: The case-level rate beside ``pass_rate_scored``; None when not shown (see :func:`shows_case_level`).
    case_rate: CaseRate | None = None
    #: The described fact that every missing unit lies in one slice value (SPEC §5), beside the test; else None.
    missing_slice: str | None = None

    def shown(self, count: str) -> int | None:
        """A funnel count as the summary gives it (``observations``: :attr:`observed`).

        ``passed`` and ``failed`` are None where it has none.
        """
        if count == "observations":
            return self.observed
        if count in ("passed", "failed") and not self.pass_fail_counted:
            return None
        return self.counts[count]

    @property
    def planned(self) -> int:
        """Planned units."""
        return self.counts["planned"]

    @property
    def no_pass_rate(self) -> str | None:
        """Why ``pass_rate_scored`` is null (nothing scored, or numeric scores without a threshold), else None."""
        if self.rates["pass_rate_scored"].value is not None:
            return None
        return "nothing scored" if self.counts["scored"] == 0 else "no pass threshold declared"

    @property
    def base(self) -> str:
        """What this candidate's rates are over: ``planned``, or ``observations`` (retry every, with retries)."""
        return self.rates["scored_coverage"].of

    @property
    def observed(self) -> int:
        """The count the rates are over: planned units, or observations under retry every."""
        return self.rates["scored_coverage"].denominator

    @property
    def units(self) -> str:
        """The words for what the rates are over: ``planned units`` or ``observations``."""
        return rated_units(self.base)

    @property
    def complete(self) -> bool:
        """Every planned unit (every observation, under retry every) has a valid grade."""
        return self.observed > 0 and self.counts["scored"] == self.observed

    def missing_ids_text(self) -> str:
        """The named missing ids, with how many more there are (``—`` when none)."""
        return missing_ids_text({"missing_cases": self.missing_cases, "missing_case_ids": self.missing_ids})


def formula_over(rate: str, base: str) -> str:
    """``rate``'s formula over ``base`` (``planned`` or ``observations``), e.g. ``passed / observations``."""
    return RATE_FORMULAS[rate].replace("planned", base)


def _rates(record: Mapping[str, Any]) -> dict[str, Rate]:
    base = rate_base(record)
    counts = {c: int(record.get(c) or 0) for c in ("completed", "scored", "passed")}
    counts["planned"] = int(record.get(base) or 0)
    counts["upper"] = counts["passed"] + counts["planned"] - counts["scored"]
    return {
        rate: Rate(
            name=rate,
            formula=formula_over(rate, base),
            value=record.get(rate),
            numerator=counts[_PARTS[rate][0]],
            denominator=counts[_PARTS[rate][1]],
            of=base if _PARTS[rate][1] == "planned" else _PARTS[rate][1],
            ci_low=record.get(f"{rate}_ci_low"),
            ci_high=record.get(f"{rate}_ci_high"),
        )
        for rate in RATE_COLUMNS
    }


def candidates_of(summary: pl.DataFrame, meta: Mapping[str, Any], outcomes: pl.DataFrame) -> tuple[Candidate, ...]:
    """One :class:`Candidate` per row of a report's ``summary``, in natural order of their names.

    ``outcomes`` holds the units per (candidate, outcome) (columns candidate, outcome, units); ``meta`` is
    the report's, which says whether the case-level rate is shown (:func:`shows_case_level`).
    """
    by = {(c, o): n for c, o, n in outcomes.iter_rows()}
    case_level = shows_case_level(meta, summary)
    out = []
    for r in summary.iter_rows(named=True):
        name = str(r[CANDIDATE])
        planned = int(r[rate_base(r)])
        mine = {o: int(by.get((name, o), 0)) for o in OUTCOMES}
        composition = tuple((o, mine[o], mine[o] / planned if planned else 0.0) for o in COMPOSITION if mine.get(o, 0))
        ungraded = tuple((c, int(r[c])) for c in UNGRADED_OUTCOMES if r.get(c))
        ids = tuple(str(v) for v in r.get("missing_case_ids") or [])
        out.append(
            Candidate(
                name=name,
                counts={c: int(r.get(c) or 0) for c in COUNT_COLUMNS},
                rates=_rates(r),
                missing_cases=int(r.get("missing_cases") or 0),
                missing_ids=ids,
                ungraded=ungraded,
                headline=tuple(headline({**r, "missing_case_ids": list(ids), "cases": meta.get("cases", "sample")})),
                outcomes=mine,
                composition=composition,
                selective_missingness=r.get("selective_missingness"),
                uncertainty={c: r.get(c) for c in _UNCERTAINTY},
                shares={c: int(r.get(c) or 0) / planned if planned else 0.0 for c in COUNT_COLUMNS},
                pass_fail_counted=r.get("passed") is not None,
                case_rate=_case_rate(r) if case_level else None,
            )
        )
    return tuple(sorted(out, key=lambda c: natural_key(c.name)))
