"""One view of an audit (and of a comparison), built once from the report tables.

Every number a person sees is read here from the report's tables: each
candidate's funnel, its rates with their numerator, denominator and
interval, its missing units, the slices with their funnel and independence
tests, the notes with their texts, the comparison's verdict with its reasons
and the cases that flipped, and a release gate's result. The renderers
(terminal, Markdown, JSON, HTML) only lay this out; none computes a number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, KIND, OBSERVATIONS, OUTCOME, OUTCOMES, TRIAL
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS
from evalframe.funnel.uncertainty import CLUSTERING_COLUMNS, MEAN_SCORE_COLUMNS
from evalframe.natural import KEPT, natural_key, natural_sorted, shape_keys
from evalframe.problems import PROBLEM_KINDS
from evalframe.report.comparison import ComparisonView, comparison_view
from evalframe.report.descriptions import RATE_FORMULAS
from evalframe.report.format import fmt_value, natural_sort_frame
from evalframe.report.sentences import headline, plan_size, provenance_lines, ranking_note, rate_base
from evalframe.slices import interval_start, missingness_shown

if TYPE_CHECKING:
    from evalframe.compare import Comparison
    from evalframe.report.model import AuditReport

#: Ungraded units listed (units.parquet holds all of them).
UNGRADED_ROWS_SHOWN: Final = 100
#: Rows of each note kind (and each refusing kind) listed; the counts cover all of them.
NOTE_ROWS_SHOWN: Final = 5
#: Rows of each refusing kind listed for a refused batch (problems.parquet holds all).
REFUSAL_ROWS_SHOWN: Final = 20
#: Distinct texts quoted per note kind.
NOTE_TEXTS_SHOWN: Final = 3
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
#: Outcomes with a valid grade.
GRADED: Final = ("passed", "failed", "scored_no_threshold")
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
        return "—" if self.value is None else f"{self.numerator} / {self.denominator}"


@dataclass(frozen=True)
class CaseRate:
    """One candidate's case-level rate (SPEC §4): each case's trials reduced to one outcome by the declared reducer.

    Its denominator is cases (``cases_scored``: cases all of whose planned units got a grade), where the
    trial-level ``pass_rate_scored`` counts trials. Read from the summary's ``case_reducer``,
    ``case_pass_rate``, ``cases_scored`` and ``case_pass_rate_ci_low`` / ``_high``.
    """

    #: ``mean``, ``any``, ``all``, ``majority`` or ``at_least:k``.
    reducer: str
    value: float | None
    #: Cases whose reduced outcome is a pass; under ``mean`` the sum of the cases' pass fractions (passed / scored).
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
    def formula(self) -> str:
        """What the rate is a fraction of, e.g. ``cases passed / cases scored``."""
        if self.reducer == "mean":
            return "case pass fractions / cases scored"
        return "cases passed / cases scored"

    @property
    def fraction(self) -> str:
        """``numerator / denominator`` (``—`` when the rate has no value: no case is fully scored)."""
        if self.value is None:
            return "—"
        top = fmt_value(self.numerator) if self.reducer == "mean" else str(int(self.numerator))
        return f"{top} / {self.denominator}"

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
        numerator=passed if reducer == "mean" else float(round(passed)),
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

    def shown(self, count: str) -> int | None:
        """A funnel count as the summary gives it: ``passed`` and ``failed`` are None where it has none."""
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
        return "observations" if self.base == "observations" else "planned units"

    @property
    def complete(self) -> bool:
        """Every planned unit (every observation, under retry every) has a valid grade."""
        return self.observed > 0 and self.counts["scored"] == self.observed

    @property
    def more_missing(self) -> int:
        """Missing cases beyond those named."""
        return max(0, self.missing_cases - len(self.missing_ids))

    def missing_ids_text(self) -> str:
        """The named missing ids, with how many more there are (``—`` when none)."""
        more = f" … (+{self.more_missing} more)" if self.more_missing else ""
        return (", ".join(self.missing_ids) or "—") + more


@dataclass(frozen=True)
class Note:
    """The problems (or importer notes) of one kind: count, meaning, texts and the first rows."""

    kind: str
    meaning: str
    count: int
    refusing: bool
    candidates: tuple[str, ...]
    #: Up to :data:`NOTE_TEXTS_SHOWN` distinct ``detail`` texts.
    texts: tuple[str, ...]
    #: The first :data:`NOTE_ROWS_SHOWN` rows (kind, line, key columns, detail; all-null columns dropped).
    rows: pl.DataFrame


@dataclass(frozen=True)
class Slices:
    """The breakdown by slice: the tests of independence and the funnel of every slice value."""

    #: One row per (candidate, slice column): :data:`evalframe.slices.MISSINGNESS_SHOWN` with lists as text.
    tests: pl.DataFrame
    #: One row per (candidate, slice column, slice value), values in natural order.
    funnel: pl.DataFrame
    #: The report's slices and missingness tables as they are (for the chart).
    table: pl.DataFrame
    missingness: pl.DataFrame


@dataclass(frozen=True)
class Gate:
    """The ``--min-coverage`` release gate: who is below the declared minimum scored_coverage."""

    min_coverage: float
    #: (candidate, scored_coverage) below the minimum.
    below: tuple[tuple[str, float], ...]

    @property
    def passed(self) -> bool:
        """No candidate is below the minimum."""
        return not self.below


@dataclass(frozen=True)
class View:
    """Everything a renderer shows of an audit (and comparison), in reading order."""

    kind: Literal["audit", "comparison"]
    title: str
    subtitle: str
    candidates: tuple[Candidate, ...]
    ranking: str | None
    #: The leader's full-plan range overlaps another's: pass_rate_scored does not rank them.
    ranking_overlap: bool
    confidence: float | None
    alpha: float | None
    #: Numeric grades with no pass threshold and no pass rate (the export gave no pass/fail): a mean score.
    numeric: bool
    ungraded_units: pl.DataFrame
    ungraded_total: int
    outcomes_present: tuple[str, ...]
    slices: Slices | None
    notes: tuple[Note, ...]
    comparison: ComparisonView | None
    gate: Gate | None
    provenance: tuple[tuple[str, str], ...]
    provenance_markdown: tuple[tuple[str, str], ...]
    #: The report's tables and meta, full precision, for JSON.
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> str:
        """What the rates and the missingness counts are over: ``observations`` (retry every), else ``planned``."""
        over = any(r.of == "observations" for c in self.candidates for r in c.rates.values())
        return "observations" if over else "planned"

    @property
    def case_level(self) -> CaseRate | None:
        """The first candidate's case-level rate (its label and formula head a column), None when not shown."""
        return next((c.case_rate for c in self.candidates if c.case_rate is not None), None)

    @property
    def formulas(self) -> dict[str, str]:
        """Each rate's formula for a column header, over :attr:`base`."""
        return {rate: _formula(rate, self.base) for rate in RATE_COLUMNS}


def _formula(rate: str, base: str) -> str:
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
            formula=_formula(rate, base),
            value=record.get(rate),
            numerator=counts[_PARTS[rate][0]],
            denominator=counts[_PARTS[rate][1]],
            of=base if _PARTS[rate][1] == "planned" else _PARTS[rate][1],
            ci_low=record.get(f"{rate}_ci_low"),
            ci_high=record.get(f"{rate}_ci_high"),
        )
        for rate in RATE_COLUMNS
    }


def _candidates(report: AuditReport, outcomes: pl.DataFrame) -> tuple[Candidate, ...]:
    by = {(c, o): n for c, o, n in outcomes.iter_rows()}
    case_level = shows_case_level(report.meta, report.summary)
    out = []
    for r in report.summary.iter_rows(named=True):
        name = str(r[CANDIDATE])
        planned = int(r[rate_base(r)])
        mine = {o: int(by.get((name, o), 0)) for o in OUTCOMES}
        composition = tuple((o, mine[o], mine[o] / planned if planned else 0.0) for o in COMPOSITION if mine.get(o, 0))
        ungraded = tuple(
            (c, int(r[c]))
            for c in ("not_started", "exec_failed", "no_output", "judge_failed", "not_scored")
            if r.get(c)
        )
        ids = tuple(str(v) for v in r.get("missing_case_ids") or [])
        out.append(
            Candidate(
                name=name,
                counts={c: int(r.get(c) or 0) for c in COUNT_COLUMNS},
                rates=_rates(r),
                missing_cases=int(r.get("missing_cases") or 0),
                missing_ids=ids,
                ungraded=ungraded,
                headline=tuple(headline({**r, "missing_case_ids": list(ids)})),
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


def notes_of(
    problems: pl.DataFrame, *, shown: int = NOTE_ROWS_SHOWN, counts: Mapping[str, int] | None = None
) -> tuple[Note, ...]:
    """One :class:`Note` per problem kind, kinds in name order, each with its first rows in line order.

    Parameters
    ----------
    problems
        A problems table (:mod:`evalframe.problems`): ``kind``, ``detail``,
        ``refusing`` and the key columns it has (``source``, ``line``,
        ``candidate``, ``case_id``, ``trial``, ``attempt``).
    shown
        Rows listed per kind.
    counts
        Every problem counted by kind, when ``problems`` holds only the first rows of a kind
        (a bounded table, SPEC §3 "Problems at scale"); each note's ``count`` is then this count.

    Examples
    --------
    >>> problems = pl.DataFrame({"kind": ["duplicate_key", "duplicate_key"], "line": [3, 2],
    ...     "case_id": ["q1", "q1"], "detail": ["again", "again"], "refusing": [True, True]})
    >>> (note,) = notes_of(problems)
    >>> note.kind, note.count, note.texts, note.rows.get_column("line").to_list()
    ('duplicate_key', 2, ('again',), [2, 3])
    """
    if problems.is_empty():
        return ()
    notes = []
    keys = [c for c in ("source", "line", CANDIDATE, CASE_ID, TRIAL, "attempt") if c in problems.columns]
    for (kind,), rows in sorted(problems.group_by(KIND), key=lambda g: str(g[0][0])):
        details = [d for d in rows.get_column("detail").drop_nulls().unique(maintain_order=True).to_list()]
        first = rows.sort([c for c in keys if c in ("source", "line")] or keys[:1], nulls_last=True).head(shown)
        first = first.select([KIND, *keys, "detail"])
        first = first.select([c for c in first.columns if first.get_column(c).null_count() < first.height])
        candidates: list[str] = []
        if CANDIDATE in rows.columns:
            candidates = rows.get_column(CANDIDATE).drop_nulls().cast(pl.String).unique().to_list()
        notes.append(
            Note(
                kind=str(kind),
                meaning=PROBLEM_KINDS.get(str(kind), ""),
                count=rows.height if counts is None else int(counts.get(str(kind), rows.height)),
                refusing=bool(rows.get_column("refusing").any()) if "refusing" in rows.columns else False,
                candidates=tuple(natural_sorted(candidates)),
                texts=tuple(str(d) for d in details[:NOTE_TEXTS_SHOWN]),
                rows=first,
            )
        )
    return tuple(notes)


def _slice_order(funnel: pl.DataFrame) -> pl.DataFrame:
    """Slice rows by candidate and slice column in natural order; bins by their lower end, other values naturally."""
    if funnel.is_empty():
        return funnel

    def key(row: Mapping[str, Any]) -> tuple[Any, ...]:
        start = interval_start(row["slice_value"])
        value = natural_key(row["slice_value"]) if start is None else ((-1, start),)
        return (natural_key(row[CANDIDATE]), natural_key(row["slice_column"]), value)

    keys = [key(row) for row in funnel.select(CANDIDATE, "slice_column", "slice_value").iter_rows(named=True)]
    return funnel[sorted(range(funnel.height), key=keys.__getitem__)]


def _slices(report: AuditReport) -> Slices | None:
    if not report.slices.width or report.slices.is_empty():
        return None
    tests = missingness_shown(report.missingness, joined=True).insert_column(
        2, report.missingness.get_column("n_slices")
    )
    tests = tests.with_columns(pl.col("^stands_out.*$").replace("", "—"))
    if any(rate_base(r) == OBSERVATIONS for r in report.summary.iter_rows(named=True)):
        tests = tests.rename({"planned": OBSERVATIONS})  # under retry every the cases' counts are of observations
    columns = [
        CANDIDATE,
        "slice_column",
        "slice_value",
        "planned",
        "observations",
        "completed",
        "scored",
        "passed",
        "missing",
        "missing_rate",
        "scored_coverage",
        "pass_rate_scored",
    ]
    table = report.slices
    if OBSERVATIONS in table.columns and table.get_column(OBSERVATIONS).equals(table.get_column("planned")):
        table = table.drop(OBSERVATIONS)  # shown only where the rates are over more than the planned units
    funnel = table.select([c for c in columns if c in table.columns])
    return Slices(
        tests=natural_sort_frame(tests, [CANDIDATE]),
        funnel=_slice_order(funnel),
        table=report.slices,
        missingness=report.missingness,
    )


def _gate(report: AuditReport, min_coverage: float, names: list[str] | None) -> Gate:
    rows = report.summary.select(CANDIDATE, "scored_coverage")
    if names is not None:
        rows = rows.filter(pl.col(CANDIDATE).is_in(names))
    below = [(str(n), float(v)) for n, v in rows.iter_rows() if v is not None and v < min_coverage]
    return Gate(min_coverage=min_coverage, below=tuple(sorted(below, key=lambda x: natural_key(x[0]))))


def _ungraded(report: AuditReport, outcomes: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """The first ungraded units in natural order of (candidate, case), and how many there are.

    Counted from ``outcomes`` (:meth:`~evalframe.report.model.AuditReport.outcome_counts`); only the
    candidates that hold the first :data:`UNGRADED_ROWS_SHOWN` are read and ordered.
    """
    counts = outcomes.filter(~pl.col(OUTCOME).is_in(GRADED)).group_by(CANDIDATE).agg(pl.col("units").sum())
    by_name = {str(name): int(n) for name, n in counts.rows()}
    total = sum(by_name.values())
    if not total:
        return pl.DataFrame(), 0
    needed: list[str] = []
    listed = 0
    for name in natural_sorted(by_name):
        if listed >= UNGRADED_ROWS_SHOWN:
            break
        needed.append(name)
        listed += by_name[name]
    units = report.units.lazy().filter(
        pl.col(CANDIDATE).cast(pl.String).is_in(needed) & ~pl.col(OUTCOME).cast(pl.String).is_in(list(GRADED))
    )
    names = units.collect_schema().names()
    slices = [str(s) for s in report.meta.get("slices", []) if s in names]
    extra = [c for c in ("exec_status", "score_status", "line", "source") if c in names]
    case = pl.col(CASE_ID).cast(pl.String)
    in_order = pl.col(CANDIDATE).cast(pl.String).cast(pl.Enum(needed))
    first = (
        units.sort(in_order, *shape_keys(case), TRIAL)
        .head(KEPT * UNGRADED_ROWS_SHOWN)
        .select(pl.col(CANDIDATE).cast(pl.String), CASE_ID, TRIAL, pl.col(OUTCOME).cast(pl.String), *slices, *extra)
        .collect()
    )
    first = natural_sort_frame(first, [CANDIDATE, CASE_ID]).head(UNGRADED_ROWS_SHOWN)
    return first.select([c for c in first.columns if first.get_column(c).null_count() < first.height]), total


def _title(report: AuditReport, comparison: ComparisonView | None) -> tuple[str, str]:
    m = report.meta
    candidates = [str(c) for c in (m.get("candidates") or report.summary.get_column(CANDIDATE).to_list())]
    if comparison is not None:
        title = f"evalframe comparison: {comparison.candidate} vs baseline {comparison.baseline}"
    else:
        names = ", ".join(candidates)
        title = "evalframe audit: " + (names if len(names) <= 60 else f"{len(candidates)} candidates")
    sub = (
        f"{plan_size({**m, 'candidates': candidates})} · retry policy {m.get('retry')} · evalframe "
        f"{m.get('evalframe_version')}"
    )
    return title, sub


def build_view(report: AuditReport, comparison: Comparison | None = None, *, min_coverage: float | None = None) -> View:
    """Build the one view of a report (and a comparison) that every renderer lays out.

    Parameters
    ----------
    report
        The audit report.
    comparison
        A paired comparison of two of its candidates: the view's verdict,
        reasons and flipped pairs.
    min_coverage
        A declared release gate: the candidates (or, with a comparison, the
        two compared sides) whose ``scored_coverage`` is below it.

    Returns
    -------
    View

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q10", "q9", "q100"]}), candidates=["A"])
    >>> view = build_view(ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["q9"], "passed": [1]})),
    ...                   min_coverage=0.5)
    >>> (a,) = view.candidates
    >>> a.missing_ids, a.rates["scored_coverage"].numerator, a.rates["scored_coverage"].denominator
    (('q10', 'q100'), 1, 3)
    >>> view.gate.passed, view.gate.below
    (False, (('A', 0.3333333333333333),))
    """
    meta = report.meta
    outcomes = report.outcome_counts()
    candidates = _candidates(report, outcomes)
    note = ranking_note(report.summary)
    slices = [str(s) for s in meta.get("slices", [])]
    compared = None if comparison is None else comparison_view(comparison, slices)
    title, subtitle = _title(report, compared)
    ungraded, total = _ungraded(report, outcomes)
    present = set(outcomes.get_column(OUTCOME).to_list())
    names = None if compared is None else [compared.baseline, compared.candidate]
    # Numeric scores without pass/fail: no threshold declared and no candidate has a pass rate (an export
    # can give its own pass/fail, e.g. DeepEval's verdict against its metric's threshold).
    numeric = (
        meta.get("grade") == "numeric"
        and meta.get("pass_threshold") is None
        and report.summary.get_column("pass_rate_scored").null_count() == report.summary.height
    )
    provenance = provenance_lines(meta)
    provenance_md = provenance_lines(meta, markdown=True)
    if compared is not None:
        policy = (
            f"{compared.pair_policy} ({compared.candidate} vs baseline {compared.baseline}, "
            f"min_coverage {compared.min_coverage:g})"
        )
        provenance.append(("pair policy", policy))
        provenance_md.append(("pair policy", policy))
    # Counted whole: report.problems holds only the first rows of a kind with many (SPEC §3 "Problems at scale").
    counted = report.problem_counts.group_by(KIND).agg(pl.col("count").sum()).sort(KIND)
    by_kind = {str(k): int(n) for k, n in counted.iter_rows()}
    data: dict[str, Any] = {
        "meta": dict(meta),
        "summary": report.summary,
        "outcomes": outcomes,
        "problems_by_kind": by_kind,
    }
    if report.slices.width:
        data |= {"slices": report.slices, "missingness": report.missingness}
    return View(
        kind="audit" if compared is None else "comparison",
        title=title,
        subtitle=subtitle,
        candidates=candidates,
        ranking=note,
        ranking_overlap=note is not None and "overlaps" in note,
        confidence=meta.get("confidence"),
        alpha=meta.get("alpha"),
        numeric=numeric,
        ungraded_units=ungraded,
        ungraded_total=total,
        outcomes_present=tuple(o for o in OUTCOMES if o in present),
        slices=_slices(report),
        notes=notes_of(report.problems, counts=by_kind),
        comparison=compared,
        gate=None if min_coverage is None else _gate(report, min_coverage, names),
        provenance=tuple(provenance),
        provenance_markdown=tuple(provenance_md),
        data=data,
    )
