"""One view of an audit (and of a comparison), built once from the report tables.

Every number a person sees is read here from the report's tables: each
candidate's funnel, its rates with their numerator, denominator and
interval, its missing units, the slices with their funnel and independence
tests, the notes with their texts, the comparison's verdict with its reasons
and the cases that flipped, and a release gate's result. The renderers
(terminal, Markdown, JSON, HTML) only lay this out; none computes a number.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final, Literal

import polars as pl

from evalframe.columns import (
    CANDIDATE,
    CASE_ID,
    KIND,
    OBSERVATIONS,
    OUTCOME,
    OUTCOMES,
    PASS_RATE_PLANNED,
    PASS_RATE_SCORED,
    PASS_RATE_UPPER,
    PLANNED,
    SCORED,
    TASK,
    TRIAL,
)
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS
from evalframe.natural import KEPT, natural_key, natural_sorted, shape_keys
from evalframe.problems import PROBLEM_KINDS
from evalframe.report.candidate import Candidate, CaseRate, candidates_of, formula_over
from evalframe.report.comparison import ComparisonView, comparison_view
from evalframe.report.crosscheck import Crosscheck, crosscheck
from evalframe.report.format import fmt_value, natural_sort_frame
from evalframe.report.sentences import Ranking, plan_size, provenance_lines, range_name, ranking_note, rate_base
from evalframe.slices import GRADED_OUTCOMES, missing_in_one_slice, missingness_shown

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
#: Candidates a note names before "…".
CANDIDATES_NAMED: Final = 10


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

    @property
    def named(self) -> str:
        """The first :data:`CANDIDATES_NAMED` candidates, ``…`` after them when there are more."""
        return ", ".join(self.candidates[:CANDIDATES_NAMED]) + (" …" if len(self.candidates) > CANDIDATES_NAMED else "")


@dataclass(frozen=True)
class Slices:
    """The breakdown by slice: the tests of independence and the funnel of every slice value."""

    #: One row per (candidate, slice column): :data:`evalframe.slices.MISSINGNESS_SHOWN` with lists as text.
    tests: pl.DataFrame
    #: One row per (candidate, slice column, slice value), values in natural order (bins in the order of their edges).
    funnel: pl.DataFrame
    #: The slice columns cut into bins (``report.meta["bins"]``): their values are intervals.
    binned: frozenset[str]
    #: The report's slices and missingness tables as they are (for the chart).
    table: pl.DataFrame
    missingness: pl.DataFrame


@dataclass(frozen=True)
class Gate:
    """The release gates of a run: ``--min-coverage`` (who is below it) and ``--require-winner`` (the verdict)."""

    #: The declared minimum scored_coverage; None when only a winner is required.
    min_coverage: float | None
    #: (candidate, scored_coverage) below the minimum.
    below: tuple[tuple[str, float], ...] = ()
    #: Under ``--require-winner``, the comparison's verdict, which must be ``candidate_better``; else None.
    verdict: str | None = None

    @property
    def passed(self) -> bool:
        """No candidate is below the minimum, and a required winner was found."""
        return not self.below and self.verdict in (None, WINNER)

    def checks(self, at_least: str = "≥", name: Callable[[str], str] = str) -> list[str]:
        """Each check in words: every one when the gate passed, else the failed ones (names through ``name``).

        Examples
        --------
        >>> for check in Gate(0.9, (("A", 0.5),), verdict="no_supported_winner").checks():
        ...     print(check)
        scored_coverage below 0.9: A (0.5)
        the verdict is no_supported_winner, not candidate_better (--require-winner)
        >>> Gate(None, verdict="candidate_better").checks()
        ['the verdict is candidate_better (--require-winner)']
        """
        words = []
        if self.min_coverage is not None and self.below:
            below = ", ".join(f"{name(n)} ({fmt_value(v)})" for n, v in self.below)
            words.append(f"scored_coverage below {self.min_coverage:g}: {below}")
        elif self.min_coverage is not None and self.passed:
            words.append(f"every scored_coverage {at_least} {self.min_coverage:g}")
        if self.verdict is not None and self.verdict != WINNER:
            words.append(f"the verdict is {self.verdict}, not {WINNER} (--require-winner)")
        elif self.verdict is not None and self.passed:
            words.append(f"the verdict is {WINNER} (--require-winner)")
        return words


#: The verdict ``--require-winner`` asks for.
WINNER: Final = "candidate_better"


@dataclass(frozen=True)
class View:
    """Everything a renderer shows of an audit (and comparison), in reading order."""

    kind: Literal["audit", "comparison"]
    title: str
    subtitle: str
    candidates: tuple[Candidate, ...]
    #: The ranking note with its flag (the leader's range overlaps or touches another's); None with one candidate.
    ranking: Ranking | None
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
    #: The reconciliation and retry tables as text cells (empty without a reported headline, a retry).
    crosscheck: Crosscheck = field(default_factory=Crosscheck)
    #: The report's units (one row per planned unit, with its outcome), read by report.html's explorer only.
    units: pl.DataFrame | pl.LazyFrame | None = field(default=None, repr=False, compare=False)

    @property
    def base(self) -> str:
        """What the rates and the missingness counts are over: ``observations`` (retry every), else ``planned``."""
        over = any(r.of == "observations" for c in self.candidates for r in c.rates.values())
        return "observations" if over else "planned"

    @property
    def counts_shown(self) -> list[str]:
        """The funnel's counts in order; under retry every ``observations`` stands beside ``planned``."""
        return [COUNT_COLUMNS[0], *(["observations"] if self.base == "observations" else []), *COUNT_COLUMNS[1:]]

    @property
    def range_name(self) -> str:
        """The worst-to-best-case range's name: over the plan, or over the observations (retry every)."""
        return range_name(self.base)

    @property
    def case_level(self) -> CaseRate | None:
        """The first candidate's case-level rate (its label and formula head a column), None when not shown."""
        return next((c.case_rate for c in self.candidates if c.case_rate is not None), None)

    @property
    def level(self) -> str:
        """The intervals' coverage before ``CI`` in a header (``95% ``), empty when not recorded."""
        return f"{self.confidence:.0%} " if isinstance(self.confidence, float) else ""

    @property
    def numeric_grade(self) -> bool:
        """Whether the audit read numeric scores (``grade="numeric"``): the renderers give their mean."""
        return bool(self.data.get("meta", {}).get("grade") == "numeric")

    @property
    def formulas(self) -> dict[str, str]:
        """Each rate's formula for a column header, over :attr:`base`."""
        return {rate: formula_over(rate, self.base) for rate in RATE_COLUMNS}


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
        details = _named_details(rows)
        first = rows.sort([c for c in keys if c in ("source", "line")] or keys[:1], nulls_last=True).head(shown)
        first = _without_null_columns(first.select([KIND, *keys, "detail"]))
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


def _without_null_columns(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select([c for c in frame.columns if frame.get_column(c).null_count() < frame.height])


def counts_by_kind(counts: pl.DataFrame) -> dict[str, int]:
    """Problems per kind, kinds in name order, from a table of ``kind``, ``refusing`` and ``count``.

    Examples
    --------
    >>> counts_by_kind(pl.DataFrame({"kind": ["b", "a", "b"], "refusing": [True, False, False], "count": [1, 2, 3]}))
    {'a': 2, 'b': 4}
    """
    counted = counts.group_by(KIND).agg(pl.col("count").sum()).sort(KIND)
    return {str(k): int(n) for k, n in counted.iter_rows()}


def _named_details(rows: pl.DataFrame) -> list[str]:
    """The distinct detail texts of a kind's rows, each of a row with a candidate led by its name (``A: …``)."""
    texts = pl.col("detail")
    if CANDIDATE in rows.columns:
        name = pl.col(CANDIDATE).cast(pl.String)
        texts = pl.when(name.is_null()).then(texts).otherwise(name + ": " + texts)
    named = rows.select(texts.alias("detail")).get_column("detail").drop_nulls().unique(maintain_order=True)
    return [str(d) for d in named.to_list()]


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
    bins: Mapping[str, list[float]] = report.meta.get("bins") or {}
    return Slices(
        tests=natural_sort_frame(tests, [CANDIDATE]),
        funnel=natural_sort_frame(funnel, [CANDIDATE, "slice_column", "slice_value"], bins),
        binned=frozenset(bins),
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
    counts = outcomes.filter(~pl.col(OUTCOME).is_in(GRADED_OUTCOMES)).group_by(CANDIDATE).agg(pl.col("units").sum())
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
        pl.col(CANDIDATE).cast(pl.String).is_in(needed) & ~pl.col(OUTCOME).cast(pl.String).is_in(list(GRADED_OUTCOMES))
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
    return _without_null_columns(first), total


def _audit_title(candidates: list[str]) -> str:
    """``evalframe audit: A, B``, or the number of candidates when their names are long."""
    names = ", ".join(candidates)
    return "evalframe audit: " + (names if len(names) <= 60 else f"{len(candidates)} candidates")


def _title(report: AuditReport, comparison: ComparisonView | None) -> tuple[str, str]:
    m = report.meta
    candidates = [str(c) for c in (m.get("candidates") or report.summary.get_column(CANDIDATE).to_list())]
    if comparison is not None:
        title = f"evalframe comparison: {comparison.candidate} vs baseline {comparison.baseline}"
    else:
        title = _audit_title(candidates)
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
    facts = {
        name: f"{name}: {fact} (a described fact, beside the slice test)"
        for name, fact in (missing_in_one_slice(report.slices) if report.slices.width else {}).items()
    }
    candidates = tuple(
        replace(c, missing_slice=facts.get(c.name)) for c in candidates_of(report.summary, meta, outcomes)
    )
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
    by_kind = counts_by_kind(report.problem_counts)
    data: dict[str, Any] = {
        "meta": dict(meta),
        "summary": report.summary,
        "outcomes": outcomes,
        "problems_by_kind": by_kind,
    }
    if report.slices.width:
        data |= {"slices": report.slices, "missingness": report.missingness}
    if report.reconciliation.height:  # each headline an export reported, its gap decomposed (report.json)
        data["reconciliation"] = report.reconciliation
    if report.attempt_rates.height:  # a unit was retried: the retry audit's tables (report.json)
        data |= {"attempt_rates": report.attempt_rates, "retried_by_slice": report.retried_by_slice}
    return View(
        kind="audit" if compared is None else "comparison",
        title=title,
        subtitle=subtitle,
        candidates=candidates,
        ranking=ranking_note(report.summary),
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
        crosscheck=crosscheck(report),
        units=report.units,
    )


@dataclass(frozen=True)
class TasksView:
    """A batch of several tasks: one :class:`View` per task, in natural order of the task names.

    Every number lives in a task's own view; nothing here pools tasks, and a ranking note only ever
    sits inside one task (SPEC §2: everything is per (task, candidate)). The renderers lay each task
    out as a section with the single-task layout, after :attr:`title` and :attr:`batch`.
    """

    #: (task name, that task's view), task names in natural order.
    tasks: tuple[tuple[str, View], ...]
    #: ``evalframe audit: A, B``: every candidate of the batch, in natural order.
    title: str
    #: The one line before the sections, e.g. ``3 tasks × 1 candidate: rates are per task; no number pools tasks``.
    batch: str
    #: The notes of no task (the input's own, an importer's): shown once, after :attr:`batch`, in no task's section.
    notes: tuple[Note, ...] = ()
    #: One row per (task, candidate), tasks in natural order: ``task`` then :data:`OVERVIEW_COLUMNS` of each
    #: task's summary, as they are (a projection of ``report.summary``, no number of its own).
    overview: pl.DataFrame = field(default_factory=pl.DataFrame)

    def overview_cells(self, *, null: str = "null") -> pl.DataFrame:
        """:attr:`overview` as text for a table: task, candidate, planned, scored, the rate with its interval, range.

        ``null`` is written for an undefined number (the terminal's ``—``); a rate that is undefined (nothing
        scored) is that alone, without an interval.

        Examples
        --------
        >>> row = {"task": "belief", "candidate": "A", "planned": 4, "scored": 2, "pass_rate_scored": 0.5,
        ...        "pass_rate_scored_ci_low": 0.1, "pass_rate_scored_ci_high": 0.9, "pass_rate_planned": 0.25,
        ...        "pass_rate_upper": 0.75}
        >>> TasksView((), "", "", overview=pl.DataFrame([row])).overview_cells().row(0)
        ('belief', 'A', '4', '2', '0.5 [0.1, 0.9]', '[0.25, 0.75]')
        >>> none = row | {"scored": 0, "pass_rate_scored": None, "pass_rate_scored_ci_low": None,
        ...               "pass_rate_scored_ci_high": None}
        >>> TasksView((), "", "", overview=pl.DataFrame([none])).overview_cells(null="—").row(0)[3:5]
        ('0', '—')
        """

        def text(value: Any) -> str:
            return null if value is None else fmt_value(value)

        def rate(r: dict[str, Any]) -> str:
            if r[PASS_RATE_SCORED] is None:
                return null
            return (
                f"{text(r[PASS_RATE_SCORED])} [{text(r[f'{PASS_RATE_SCORED}_ci_low'])}, "
                f"{text(r[f'{PASS_RATE_SCORED}_ci_high'])}]"
            )

        rows = [
            (
                str(r[TASK]),
                str(r[CANDIDATE]),
                text(r[PLANNED]),
                text(r[SCORED]),
                rate(r),
                f"[{text(r[PASS_RATE_PLANNED])}, {text(r[PASS_RATE_UPPER])}]",
            )
            for r in self.overview.iter_rows(named=True)
        ]
        level = self.tasks[0][1].level if self.tasks else ""
        head = ["task", CANDIDATE, PLANNED, SCORED, f"{PASS_RATE_SCORED} [{level}CI]", "full-plan range"]
        return pl.DataFrame(rows, schema=dict.fromkeys(head, pl.String), orient="row")

    @property
    def gate(self) -> Gate | None:
        """Every task's release gate as one: a candidate below the minimum is named ``task/candidate``.

        None when no gate was declared.
        """
        gates = [(task, view.gate) for task, view in self.tasks if view.gate is not None]
        if not gates:
            return None
        below = tuple((f"{task}/{name}", value) for task, gate in gates for name, value in gate.below)
        verdicts = [gate.verdict for _, gate in gates if gate.verdict is not None]
        verdict = next((v for v in verdicts if v != WINNER), verdicts[0] if verdicts else None)
        return Gate(min_coverage=gates[0][1].min_coverage, below=below, verdict=verdict)


#: The columns of a batch's overview (:attr:`TasksView.overview`), from each task's summary.
OVERVIEW_COLUMNS: Final = (
    CANDIDATE,
    PLANNED,
    SCORED,
    PASS_RATE_SCORED,
    f"{PASS_RATE_SCORED}_ci_low",
    f"{PASS_RATE_SCORED}_ci_high",
    PASS_RATE_PLANNED,
    PASS_RATE_UPPER,
)


def task_names(report: AuditReport) -> list[str]:
    """The tasks a report's ``meta["tasks"]`` lists (as text); empty without that entry.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> task_names(SimpleNamespace(meta={"tasks": ["belief", "desire"]})), task_names(SimpleNamespace(meta={}))
    (['belief', 'desire'], [])
    """
    return [str(t) for t in report.meta.get("tasks") or []]


def batch_line(tasks: int, candidates: int) -> str:
    """The line that heads a batch of several tasks: how many of each, and that no number pools tasks.

    Examples
    --------
    >>> batch_line(3, 1)
    '3 tasks × 1 candidate: rates are per task; no number pools tasks'
    >>> batch_line(2, 4)
    '2 tasks × 4 candidates: rates are per task; no number pools tasks'
    """
    plural = "" if candidates == 1 else "s"
    return f"{tasks} tasks × {candidates} candidate{plural}: rates are per task; no number pools tasks"


def build_task_views(
    reports: Mapping[str, AuditReport],
    *,
    comparisons: Mapping[str, Comparison] | None = None,
    min_coverage: float | None = None,
    batch_problems: pl.DataFrame | None = None,
) -> TasksView:
    """Build one :class:`View` per task with :func:`build_view`, tasks in natural order of their names.

    Parameters
    ----------
    reports
        Task name -> that task's own single-task report (what
        :meth:`~evalframe.report.model.AuditReport.by_task` returns).
    comparisons
        Task name -> a comparison of two of that task's candidates; a task
        without one shows its audit only.
    min_coverage
        A declared release gate, checked in every task.
    batch_problems
        The problems of no task (the rows of the whole report's ``problems`` whose ``task`` is null: the
        input's own, an importer's notes), which every task's report holds too: they become the batch's
        :attr:`TasksView.notes`, shown once, and leave every task's notes.

    Returns
    -------
    TasksView

    Raises
    ------
    ValueError
        When ``comparisons`` names a task ``reports`` does not hold.

    Examples
    --------
    >>> import evalframe as ef
    >>> def report(passed):
    ...     plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    ...     return ef.audit(plan, pl.DataFrame({"candidate": ["A"] * 2, "case_id": ["q1", "q2"], "passed": passed}))
    >>> views = build_task_views({"task10": report([1, 1]), "task9": report([1, 0])})
    >>> views.batch
    '2 tasks × 1 candidate: rates are per task; no number pools tasks'
    >>> [(task, view.candidates[0].rates["pass_rate_scored"].value) for task, view in views.tasks]
    [('task9', 0.5), ('task10', 1.0)]
    """
    comparisons = comparisons or {}
    unknown = sorted(set(comparisons) - set(reports))
    if unknown:
        raise ValueError(f"comparisons of tasks the batch does not hold: {', '.join(unknown)}")
    shared = None if batch_problems is None else batch_problems.drop(TASK, strict=False)
    views = {t: build_view(r, comparisons.get(t), min_coverage=min_coverage) for t, r in reports.items()}
    tasks = tuple((task, _without(views[task], reports[task], shared)) for task in natural_sorted(reports))
    candidates = natural_sorted({c.name for _, view in tasks for c in view.candidates})
    batch = batch_line(len(tasks), len(candidates))
    notes = () if shared is None else notes_of(shared)
    overview = pl.concat(
        [one.data["summary"].select(pl.lit(task, pl.String).alias(TASK), *OVERVIEW_COLUMNS) for task, one in tasks],
        how="vertical_relaxed",
    )
    return TasksView(tasks=tasks, title=_audit_title(candidates), batch=batch, notes=notes, overview=overview)


def _without(view: View, report: AuditReport, shared: pl.DataFrame | None) -> View:
    """``view`` of ``report`` with its notes and counts by kind without the rows of ``shared`` (see :class:`TasksView`).

    A kind's count drops by the rows of that kind ``shared`` holds; a kind left with none is no note of the task.
    """
    if shared is None or shared.is_empty():
        return view
    keys = [c for c in shared.columns if c in report.problems.columns]
    own = report.problems.join(shared.select(keys).unique(), on=keys, how="anti", nulls_equal=True)
    taken = {str(k): int(n) for k, n in shared.group_by(KIND).len().iter_rows()}
    left = {k: n - taken.get(k, 0) for k, n in view.data["problems_by_kind"].items()}
    counts = {k: n for k, n in left.items() if n > 0}
    return replace(view, notes=notes_of(own, counts=counts), data={**view.data, "problems_by_kind": counts})
