"""Terminal renderer (rich) of a :class:`~evalframe.report.view.View`: candidates as rows, verdict first.

Each candidate is one row, its rates beside their counts (``0.750 (3/4
scored)``), so twenty candidates read as twenty rows at any width; the
headline (and a comparison's verdict) come first, then the per-slice funnel
with ``--slice``, the notes with their texts, and a short provenance last.
Every cell is a :class:`rich.text.Text` with control characters escaped:
ids from the input are never read as markup.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Sequence
from typing import Any, Final, Literal

import polars as pl
from rich import box
from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from evalframe.report.candidate import Candidate, CaseRate
from evalframe.report.comparison import CASE_FLIP_LABELS, FLIPS, ComparisonView
from evalframe.report.crosscheck import RECONCILED, RETRY_TABLES
from evalframe.report.format import fmt_count, fmt_rate, fmt_signed, fmt_value, interval, visible
from evalframe.report.refusal import build_refusal
from evalframe.report.sentences import Ranking, graded_by
from evalframe.report.view import Gate, Note, TasksView, View
from evalframe.slices import detectable_words

#: The terminal's one symbol for a value that does not exist (Markdown and JSON write ``null``).
NULL: Final = "—"


def _text(value: Any, style: str = "") -> Text:
    return Text(NULL if value is None else visible(fmt_value(value)), style=style)


def _rate(value: float | None) -> str:
    """:func:`~evalframe.report.format.fmt_rate`, :data:`NULL` when undefined."""
    return NULL if value is None else fmt_rate(value)


def _interval(low: float | None, high: float | None) -> str:
    """:func:`~evalframe.report.format.interval`, :data:`NULL` when an end is undefined."""
    return NULL if low is None or high is None else interval(low, high)


def _table(title: str, *columns: str, right: Container[str] = (), **kwargs: Any) -> Table:
    """A table of ``columns`` (:func:`_column`), those in ``right`` right-aligned."""
    table = Table(title=Text(title, style="bold"), title_justify="left", **{"box": box.HEAVY_HEAD, **kwargs})
    for name in columns:
        _column(table, name, justify="right" if name in right else "left")
    return table


def _column(table: Table, name: str, **kwargs: Any) -> None:
    """A column whose long words fold (never cut with an ellipsis)."""
    table.add_column(Text(name), overflow="fold", **kwargs)


#: How the candidates are laid out: ``full`` (rates over their counts, intervals on a second line, the missing
#: case ids folded), ``compact`` (one line per candidate), ``auto`` (compact from :data:`COMPACT_FROM` candidates on).
TerminalLayout = Literal["auto", "compact", "full"]
#: From this many candidates on, ``auto`` lays them out one line each.
COMPACT_FROM: Final = 7


def _numbers(table: Table, name: str | Text, **kwargs: Any) -> None:
    """A column of numbers: never wrapped, so no number is split across lines (its header may wrap)."""
    table.add_column(name, no_wrap=True, **kwargs)


def _range_header(view: View) -> Text:
    """The worst-to-best-case range's header: its name, the two rates it runs between, and their denominator.

    No line is wider than ``(of planned)``, so the column is as narrow as its ranges (``0.270–0.440``).
    """
    name = "\n".join(view.range_name.rsplit(" ", 1))
    return Text(f"{name}\n(pass_rate_\nplanned–\npass_rate_\nupper, of\n{view.base})")


def frame_table(frame: pl.DataFrame, title: str) -> Table:
    """A rich table of ``frame``: numbers right-aligned and rounded for people, text as written."""
    table = _table(title)
    for name in frame.columns:
        _column(table, visible(name), justify="right" if frame.schema[name].is_numeric() else "left")
    for row in frame.iter_rows():
        table.add_row(*[_text(v) for v in row])
    return table


def _candidates_table(view: View) -> Table:
    """One row per candidate; the count cells never wrap (their columns are as wide as their longest cell)."""
    covered = f"scored_coverage\n({view.formulas['scored_coverage'].replace(' ', '')})"
    table = _table("candidates: funnel and rates, each beside its counts", "candidate", covered)
    _column(table, f"pass_rate_scored\n(passed/scored)\n[{view.level}CI]")
    case_level = view.case_level
    if case_level is not None:  # beside the trial-level rate, named with its reducer and its denominator
        formula = case_level.formula.replace(" / ", "/\n")
        _column(table, f"case_pass_rate\n({case_level.reducer})\n({formula})\n[{view.level}CI]")
    _numbers(table, _range_header(view))
    _numbers(table, Text("missing\n(no row)"), justify="right")
    show_others = any(c.ungraded for c in view.candidates)
    if show_others:
        _column(table, "other\nungraded")
    for c in view.candidates:
        cov, rate = c.rates["scored_coverage"], c.rates["pass_rate_scored"]
        coverage = Text(f"{_rate(cov.value)} ({cov.numerator}/{cov.denominator})", style="" if c.complete else "yellow")
        if rate.value is None:
            passing = Text("no pass rate", style="dim")
        else:
            passing = Text(f"{_rate(rate.value)} ({rate.numerator}/{rate.denominator} scored)")
            passing.append(f"\n{_interval(rate.ci_low, rate.ci_high)}", style="dim")
        row = [Text(visible(c.name), style="bold"), coverage, passing]
        row += [] if c.case_rate is None else [_case_cell(c.case_rate)]
        row += [Text(_span(c)), Text(str(c.counts["missing"]))]
        others = Text(", ".join(f"{n} {name}" for name, n in c.ungraded) or NULL)
        table.add_row(*row, *([others] if show_others else []))
    return table


def _span(c: Candidate) -> str:
    """The full-plan range ``pass_rate_planned–pass_rate_upper``, :data:`NULL` when an end is undefined."""
    low, high = c.rates["pass_rate_planned"].value, c.rates["pass_rate_upper"].value
    return NULL if low is None or high is None else f"{_rate(low)}–{_rate(high)}"


def _compact_table(view: View) -> Table:
    """One line per candidate: scored/planned, pass_rate_scored with its interval, the full-plan range.

    Every cell but the name is a number (or ``—``) in a column that never wraps, so at 80 columns no number
    is split across lines. Missing units follow in their own table; the case-level rate and the other
    ungraded outcomes are in ``--full`` and the report files.
    """
    table = _table("candidates (one line each)", "candidate", box=box.SIMPLE_HEAD, pad_edge=False)
    _numbers(table, Text(f"scored/\n{view.base}"), justify="right")
    _numbers(table, Text(f"pass_rate_scored\n[{view.level}CI]"))
    _numbers(table, _range_header(view))
    for c in view.candidates:
        rate = c.rates["pass_rate_scored"]
        table.add_row(
            Text(visible(c.name), style="bold"),
            Text(f"{fmt_count(c.counts['scored'])}/{fmt_count(c.observed)}", style="" if c.complete else "yellow"),
            Text(NULL if rate.value is None else f"{_rate(rate.value)} {_interval(rate.ci_low, rate.ci_high)}"),
            Text(_span(c)),
        )
    return table


def _case_cell(rate: CaseRate) -> Text:
    """A case-level rate with its cases and interval, e.g. ``1.000 (2/2 cases)`` over ``[0.0654, 1.0]``."""
    if rate.value is None:
        return Text("no pass threshold" if rate.denominator else "no case fully scored", style="dim")
    cell = Text(f"{_rate(rate.value)} ({rate.fraction.replace(' / ', '/')} cases)")
    cell.append(f"\n{_interval(rate.ci_low, rate.ci_high)}", style="dim")
    return cell


def _verdict(c: ComparisonView) -> Iterator[RenderableType]:
    line = Text.assemble(
        ("verdict: ", "bold"),
        (c.verdict, "bold green" if c.winner else "bold yellow"),
        f"  ({visible(c.candidate)} vs baseline {visible(c.baseline)}, {c.pair_policy})",
    )
    yield line
    for reason in c.reasons:
        yield Text(f"  - {visible(reason)}")
    if c.checks_passed:
        yield Text("  checks passed:", style="dim")
    for check in c.checks_passed:
        yield Text(f"  - {visible(check)}", style="dim")


def _gate(gate: Gate) -> Text:
    said = ("gate passed", "bold green") if gate.passed else ("gate failed", "bold red")
    return Text.assemble(said, ": " + "; ".join(gate.checks("≥", visible)))


#: Up to this many candidates, the headline gives each one's first sentence (more read better as table rows).
HEADLINE_CANDIDATES = 8


def _headline(candidates: Sequence[Candidate], ranking: Ranking | None) -> Iterator[RenderableType]:
    """The ranking note, then each candidate's first headline sentence (its range and missing ids are below)."""
    yield Text("headline", style="bold")
    if ranking is not None:
        yield Text(visible(ranking.text), style="bold yellow")
    if len(candidates) <= HEADLINE_CANDIDATES:
        for c in candidates:
            yield Text(f"• {visible(c.headline[0])}")
    else:
        yield Text(f"{len(candidates)} candidates: one row each below.")
    # SPEC §5: a headline rate whose missing units concentrate in a slice says so, whatever the number of candidates.
    for c in candidates:
        if c.selective_missingness:
            yield Text(f"• {visible(c.name)}: selective missingness: {visible(c.selective_missingness)}.", style="bold")
        if c.missing_slice:
            yield Text(f"• {visible(c.missing_slice)}.")


def _missing(view: View, *, compact: bool = False) -> Table | None:
    """Each candidate's missing units, cases and first missing ids (compact: on one line, cut with an ellipsis)."""
    rows = [c for c in view.candidates if c.counts["missing"]]
    if not rows:
        return None
    title = "missing units (no row at all: not failures)"
    options: dict[str, Any] = {"box": box.SIMPLE_HEAD, "expand": True} if compact else {}
    table = _table(title, "candidate", **options)
    _numbers(table, Text("missing"), justify="right")
    _numbers(table, Text("cases"), justify="right")
    if compact:  # the ids take the width left and are cut with an ellipsis: one line per candidate
        table.add_column(Text("first missing case ids (natural order)"), no_wrap=True, overflow="ellipsis", ratio=1)
    else:
        _column(table, "first missing case ids (natural order)")
    for c in rows:
        table.add_row(
            Text(visible(c.name)),
            Text(str(c.counts["missing"])),
            Text(str(c.missing_cases)),
            Text(visible(c.missing_ids_text())),
        )
    return table


def _numeric(view: View) -> Table:
    title = "numeric scores: mean over scored units" + (" (no pass/fail: add --pass-threshold)" if view.numeric else "")
    numbers = ("scored", "mean_score", "interval (clustered)")
    table = _table(title, "candidate", *numbers, right=numbers)
    for c in view.candidates:
        u = c.uncertainty
        table.add_row(
            Text(visible(c.name)),
            Text(str(c.counts["scored"])),
            _text(u.get("mean_score")),
            Text(_interval(u.get("mean_score_ci_low"), u.get("mean_score_ci_high"))),
        )
    return table


def _tests(view: View) -> Table:
    assert view.slices is not None
    ungraded = (f"ungraded (of {view.base})", "ungraded: selective?")
    columns = ("candidate", "slice", *ungraded, "missing (no row)", "missing: selective?")
    table = _table("does missingness depend on the slice? (cases as units, Holm-adjusted p)", *columns)

    def said(r: dict[str, Any], of: str) -> Text:
        """The test of ``of`` (``_ungraded``, or ``""`` for missing) in words."""
        p = r[f"p_adjusted{of}"]
        if p is None:
            return Text("no test", style="dim")
        if r[f"selective{of}"]:
            return Text(f"yes, p={fmt_value(p)}: {visible(r[f'stands_out{of}'])}", style="bold red")
        return Text(f"no, p={fmt_value(p)}; {detectable_words(r[f'detectable{of}'])}")

    for r in view.slices.tests.iter_rows(named=True):
        table.add_row(
            Text(visible(str(r["candidate"]))),
            Text(visible(str(r["slice_column"]))),
            Text(f"{r['ungraded']}/{r[view.base]}"),
            said(r, "_ungraded"),
            Text(f"{r['missing']}/{r[view.base]}"),
            said(r, ""),
        )
    return table


def _slice_funnel(view: View) -> Table:
    assert view.slices is not None
    coverage = f"scored_coverage ({view.formulas['scored_coverage'].replace(' ', '')})"
    columns = ("candidate", "slice", "value", coverage, "missing", "pass_rate_scored")
    table = _table("funnel by slice", *columns, right=("missing",))
    for r in view.slices.funnel.iter_rows(named=True):
        rate = r.get("pass_rate_scored")
        table.add_row(
            Text(visible(str(r["candidate"]))),
            Text(visible(str(r["slice_column"]))),
            Text(visible(fmt_value(r["slice_value"]))),
            Text(f"{_rate(r.get('scored_coverage'))} ({r['scored']}/{r.get('observations', r['planned'])})"),
            Text(str(r["missing"])),
            Text(NULL if rate is None else f"{_rate(rate)} ({r['passed']}/{r['scored']} scored)"),
        )
    return table


def _overview(view: TasksView) -> Table:
    """A batch's overview: one row per (task, candidate) (:meth:`~evalframe.report.view.TasksView.overview_cells`)."""
    cells = view.overview_cells(null=NULL)
    right = [name for name in cells.columns if name not in ("task", "candidate")]
    table = _table("overview: one row per task and candidate", *cells.columns, right=right)
    for row in cells.iter_rows():
        table.add_row(*(Text(visible(c)) for c in row))
    return table


def _notes(notes: Sequence[Note], *, title: str = "notes and problems (not refusing)") -> Table:
    table = _table(title, "kind", "problem rows", "what it says", right=("problem rows",))
    for n in notes:
        texts = "\n".join(visible(t) for t in n.texts) or visible(n.meaning)
        table.add_row(Text(n.kind), Text(str(n.count)), Text(texts))
    return table


def _comparison(c: ComparisonView) -> Iterator[RenderableType]:
    wanted = (
        "pairs_planned",
        "pairs_used",
        "pairs_dropped",
        "units_not_paired",
        "quality_difference",
        "ci_low",
        "ci_high",
        "interval_method",
        "cases_used",
        "mcnemar_p_value",
        "tipping_point_difference",
        "detectable_difference",
    )
    table = _table("comparison", "measure", "value", right=("value",))
    for name, value, _ in c.measures:
        if name in wanted:
            table.add_row(Text(name), _text(value))
    yield table
    if c.dropped_by_slice.height:  # SPEC §6: how many pairs were dropped, and from which slices
        yield frame_table(c.dropped_by_slice, "dropped pairs by slice")
    flips = _table(f"flipped pairs ({c.flips.total})", "flip", "pairs", right=("pairs",))
    for key, label in FLIPS.items():
        flips.add_row(Text(label), _text(c.flips.counts[key]))
    yield flips
    if c.flips.by_slice.height:
        yield frame_table(c.flips.by_slice, "flipped pairs by slice")
    if c.flips.pairs.height:
        yield frame_table(
            c.flips.pairs.head(20), f"first {min(20, c.flips.pairs.height)} of {c.flips.total} flipped pairs"
        )
    yield from _case_flips_parts(c)


def _case_flips_parts(c: ComparisonView) -> Iterator[RenderableType]:
    """Cases per trial-aware flip class (SPEC §6c), the note when trials rule a change out, the changed cases."""
    f = c.case_flips
    if f is None or not f.cases:
        return
    table = _table(f"cases by flip class, trial-aware ({f.cases})", "class", "cases", "meaning", right=("cases",))
    for key, label in CASE_FLIP_LABELS.items():
        table.add_row(Text(key), Text(str(f.counts[key])), Text(label))
    yield table
    if f.note:
        yield Text(f"note: {f.note}")
    if f.changed.height:
        yield frame_table(f.changed, "fixed and regressed cases (flips.parquet holds every case)")


def renderables(view: View | TasksView, *, layout: TerminalLayout = "auto") -> list[RenderableType]:
    """The view's parts in reading order, for :meth:`rich.console.Console.print`.

    A batch of several tasks is its title and batch line, then per task a rule naming the task and that
    task's parts (its plan size, headline, candidates table, notes ...). ``layout`` is
    :data:`TerminalLayout`.
    """
    if isinstance(view, TasksView):
        parts: list[RenderableType] = [Text(visible(view.title), style="bold"), Text(visible(view.batch), style="bold")]
        parts.append(_overview(view))
        if view.notes:  # the notes of no task, once
            parts.append(_notes(view.notes, title="notes of no task (not refusing)"))
        for task, one in view.tasks:
            parts += [Text(""), Rule(Text(f"task {visible(task)}", style="bold"), align="left"), *_parts(one, layout)]
        return parts
    return [Text(visible(view.title), style="bold"), *_parts(view, layout)]


def is_compact(view: View, layout: TerminalLayout = "auto") -> bool:
    """Whether the candidates are laid out one line each: ``compact``, or ``auto`` with :data:`COMPACT_FROM` or more.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"]}), candidates=["A"])
    >>> ledger = pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]})
    >>> view = ef.report.build_view(ef.audit(plan, ledger))
    >>> is_compact(view), is_compact(view, "compact")
    (False, True)
    """
    return layout == "compact" or (layout == "auto" and len(view.candidates) >= COMPACT_FROM)


def _parts(view: View, layout: TerminalLayout = "auto") -> list[RenderableType]:
    """The view's parts under its title: subtitle, verdict, gate, headline, tables, notes, provenance."""
    compact = is_compact(view, layout)
    parts: list[RenderableType] = [Text(visible(view.subtitle), style="dim")]
    grades = graded_by(view.data.get("meta", {}))
    if grades is not None:  # the scorer or metric the import read the grades from
        parts.append(Text(visible(f"graded by: {grades}")))
    if view.comparison is not None:
        parts += [Text(""), *_verdict(view.comparison)]
    if view.gate is not None:
        parts.append(_gate(view.gate))
    if view.comparison is not None:  # the comparison, not the audit again: one line of the audit's counts
        parts += [Text(""), _audit_line(view), *_comparison(view.comparison)]
    else:
        parts += _audit_parts(view, compact=compact)
    if view.notes:
        parts.append(_notes(view.notes))
    parts += [
        Text(visible(f"{label}: {text}"), style="dim") for label, text in view.provenance[:1] + view.provenance[4:5]
    ]
    return parts


def _audit_parts(view: View, *, compact: bool) -> list[RenderableType]:
    """The audit's own parts: headline, candidates, missing units, numeric scores, slices."""
    table = _compact_table(view) if compact else _candidates_table(view)
    parts: list[RenderableType] = [Text(""), *_headline(view.candidates, view.ranking), Text(""), table]
    missing = _missing(view, compact=compact)
    if missing is not None:
        parts.append(missing)
    if view.numeric_grade:
        parts.append(_numeric(view))
    if view.slices is not None:
        parts += [_tests(view), _slice_funnel(view)]
    return parts + _crosscheck(view)


def _crosscheck(view: View) -> list[RenderableType]:
    """The reconciliation of each reported headline, one line each, and the retry tables when a unit was retried."""
    checked, parts = view.crosscheck, list[RenderableType]()
    titles = {
        "reconciliation": f"reconciliation: {RECONCILED}",
        "attempt_rates": "retries: pass rate by attempt number",
        "retry_headline": f"retries: {RETRY_TABLES['retry_headline']}",
        "retried_by_slice": f"retries: {RETRY_TABLES['retried_by_slice']}",
    }
    for name, title in titles.items():
        table: pl.DataFrame = getattr(checked, name)
        if table.height:
            parts.append(frame_table(table, title))
    return parts


def _audit_line(view: View) -> Text:
    """The audit under a comparison in one line: each compared candidate's scored and planned units."""
    counts = "; ".join(
        f"{visible(c.name)} {fmt_count(c.counts['scored'])}/{fmt_count(c.observed)}" for c in view.candidates
    )
    return Text(f"audit (scored/{view.base}): {counts} · evalframe audit prints the whole audit", style="dim")


def print_view(view: View | TasksView, console: Console, *, layout: TerminalLayout = "auto") -> None:
    """Print the view on ``console`` (its width decides how cells wrap; numbers never do).

    ``layout`` (:data:`TerminalLayout`): ``compact`` lays the candidates out one line each (the default
    ``auto`` does from :data:`COMPACT_FROM` candidates on), ``full`` puts each rate over its counts.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3", "q4"]}), candidates=["A"])
    >>> ledger = pl.DataFrame({"candidate": ["A"] * 4, "case_id": ["q1", "q2", "q3", "q4"], "passed": [1, 1, 1, 0]})
    >>> import io
    >>> console = Console(width=100, record=True, file=io.StringIO())
    >>> print_view(ef.report.build_view(ef.audit(plan, ledger)), console)
    >>> "0.750 (3/4 scored)" in console.export_text()
    True
    """
    console.print(Group(*renderables(view, layout=layout)))


def print_refusal(problems: pl.DataFrame, console: Console, *, counts: pl.DataFrame | None = None) -> None:
    """Print a refusal: the lead, counts by kind, then the first rows of each kind.

    What is shown is :func:`~evalframe.report.refusal.build_refusal`'s, as in the output folder's reports.
    """
    r = build_refusal(problems, counts=counts)
    console.print(f"[bold red]batch refused[/]: {r.refusing} refusing problem(s); no rate was computed.")
    console.print(frame_table(r.counts, "problems by kind"))
    console.print(frame_table(r.first_rows, r.title))


def family_table(table: pl.DataFrame, width: int) -> Table:
    """``compare --each``'s verdicts as a table that fits ``width`` columns without splitting a number.

    ``table`` is :attr:`evalframe.compare.family.Family.table` (candidate, verdict, quality_difference, ci_low,
    ci_high, pairs_used, mcnemar_p_value, holm_p_value, family_verdict). One line per candidate when that fits;
    else each candidate takes two lines: its verdict over its verdict after Holm, its difference over its
    interval, its exact McNemar p-value over Holm's. Numbers never wrap (``no_wrap``); only a long candidate
    name may fold. An undefined number is the one null symbol.

    Examples
    --------
    >>> t = pl.DataFrame({"candidate": ["B"], "verdict": ["candidate_better"], "quality_difference": [0.475],
    ...     "ci_low": [0.302], "ci_high": [0.601], "pairs_used": [40], "mcnemar_p_value": [3.81e-06],
    ...     "holm_p_value": [7.25e-05], "family_verdict": ["candidate_better"]})
    >>> [len(family_table(t, w).columns) for w in (80, 120)]
    [5, 7]
    """

    def num(value: Any) -> str:
        return NULL if value is None else fmt_value(value)

    def laid_out(title: str, names: Sequence[str]) -> Table:
        laid = _table(title, box=box.SIMPLE_HEAD, pad_edge=False)
        for name in names:
            laid.add_column(name, no_wrap=name != "candidate", overflow="fold", justify="left")
        return laid

    wide_names = ("candidate", "verdict", "difference [interval]", "pairs", "McNemar p", "Holm p", "family_verdict")
    wide = laid_out("verdicts (family_verdict: after Holm)", wide_names)
    narrow_names = ("candidate", "verdict\nafter Holm", "difference\ninterval", "pairs", "McNemar p\nHolm p")
    narrow = laid_out("verdicts: alone / after Holm", narrow_names)
    for r in table.iter_rows(named=True):
        d = NULL if r["quality_difference"] is None else fmt_signed(r["quality_difference"])
        ci, pairs = _interval(r["ci_low"], r["ci_high"]), fmt_count(r["pairs_used"])
        mcnemar, holm = num(r["mcnemar_p_value"]), num(r["holm_p_value"])
        name, verdict, family = visible(str(r["candidate"])), r["verdict"], r["family_verdict"]
        wide.add_row(name, verdict, f"{d} {ci}", pairs, mcnemar, holm, family)
        narrow.add_row(name, f"{verdict}\n{family}", f"{d}\n{ci}", pairs, f"{mcnemar}\n{holm}")
    return wide if Console(width=10 * width).measure(wide).maximum <= width else narrow  # wide: its natural width
