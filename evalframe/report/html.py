"""HTML renderer of a :class:`~evalframe.report.view.View`: one self-contained page, and a notebook summary.

The page leads with what a dashboard hides: the verdict (for a comparison)
and each candidate's pass rate next to its denominator and its coverage of
the plan, with the range the full-plan pass rate could take given the
ungraded units. Then the funnel (chart and table), every rate with its
formula, counts and interval, the missing and ungraded units, the slices
and the independence test, the comparison with its flipped pairs, the
notes with their texts, and the provenance last.

Last, the explorer (:mod:`evalframe.report.explore`): the units as JSON and
a small inline script; every count, rate and bar segment links to exactly
its units through the URL fragment. Without the script the page reads as
before.

The file loads nothing from the network (CSS inline, charts inline SVG,
see :mod:`evalframe.report.charts`) and has no timestamp: two renders of the
same report are byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from evalframe.funnel import RATE_COLUMNS
from evalframe.report.candidate import Candidate, CaseRate, Rate
from evalframe.report.charts import funnel_chart, headline_chart, missing_rate_chart
from evalframe.report.comparison import FLIPS, ComparisonView
from evalframe.report.crosscheck import RECONCILED, RETRY_TABLES
from evalframe.report.descriptions import describe
from evalframe.report.explore import (
    OUTCOME_MEANING,
    PASSED_OR_UNGRADED,
    explorer_section,
    outcome_groups,
    units_fragment,
    units_link,
)
from evalframe.report.format import fmt_value, interval, pct
from evalframe.report.htmlkit import Html, el, esc, fragment, frame_table, join, page, small, table, verdict_box
from evalframe.report.sentences import rated_units
from evalframe.report.view import Gate, Note, TasksView, View

#: Missing case ids named on a headline card (the missing-units section names up to 20).
CARD_IDS_SHOWN: Final = 5
#: Slice rows shown in the slice table.
SLICE_ROWS_SHOWN: Final = 300


def _verdict(c: ComparisonView) -> Html:
    detail = f" — {c.candidate} vs baseline {c.baseline} (pair policy {c.pair_policy})"
    return verdict_box(c.verdict, detail, c.reasons, c.checks_passed, winner=c.winner)


def _gate(gate: Gate) -> Html:
    said, cls = ("Gate passed", "gate pass") if gate.passed else ("Gate failed", "gate fail")
    return el("p", f"{said}: {'; '.join(gate.checks('is at least'))}.", cls=cls)


#: ``link(text, candidate, outcome)``: ``text`` as a link to that candidate's units of that outcome (or as is).
Linker = Callable[[Any, str, str], Any]


def _linker(view: View, task: str | None, *, links: bool) -> Linker:
    """Links to the explorer's units of ``task`` when ``links`` and the rates are over planned units, else none."""
    if not links or view.base == "observations":
        return lambda text, candidate, outcome: text
    return lambda text, candidate, outcome: units_link(text, candidate=candidate, outcome=outcome, task=task)


def _card(c: Candidate, link: Linker) -> Html:
    """One candidate's card: its largest number is the pass rate over every planned unit.

    Exact when every unit is graded, else the range from worst to best case; pass_rate_scored (over graded
    units only) comes second. Each count and rate links (``link``) to its units: a rate to its denominator's.
    """
    scored, passed, planned, units = c.counts["scored"], c.counts["passed"], c.observed, c.units
    rate, coverage = c.rates["pass_rate_scored"].value, c.rates["scored_coverage"].value
    low, high = c.rates["pass_rate_planned"], c.rates["pass_rate_upper"]
    n = c.name
    counts = join([link(passed, n, "passed"), " / ", link(scored, n, "scored")])
    parts: list[Any] = [el("h3", n)]
    if c.no_pass_rate:
        parts.append(el("div", "no pass rate", small(f"pass_rate_scored is null: {c.no_pass_rate}"), cls="big na"))
    elif c.complete:
        said = small(join(["pass_rate_scored = passed / scored = ", counts]))
        parts.append(el("div", link(pct(rate), n, "scored"), said, cls="big"))
    elif low.value is not None and high.value is not None:
        span = link(f"{pct(low.value).removesuffix('%')}–{pct(high.value)}", n, "planned")
        parts.append(el("div", span, small(f"pass rate over all {planned} {units}, worst to best case"), cls="big"))
        formula = " pass_rate_scored = passed / scored = "  # a rate: no_pass_rate is None
        parts.append(el("p", el("b", link(pct(rate), n, "scored")), formula, counts, cls="cond"))
    if c.case_rate is not None:  # beside the trial-level rate, with its reducer and its denominator (cases)
        case = c.case_rate
        parts.append(
            el("p", el("b", pct(case.value)), f" {case.equation}", cls="cond")
            if case.value is not None
            else el("p", case.sentence, cls="cond")
        )
    cov = link(pct(coverage), n, "planned")
    of_planned = link(planned, n, "planned")
    some = ["all ", of_planned] if c.complete else ["only ", link(scored, n, "scored"), " of ", of_planned]
    some = some if scored or c.complete else ["none of ", of_planned]
    parts.append(el("p", *some, f" {units} scored: scored_coverage ", cov, f" (scored / {c.base})", cls="cov"))
    if not c.complete and low.value is not None and high.value is not None:
        whole = "over all observations" if c.base == "observations" else "over the whole plan"
        worst = [link(low.numerator, n, "passed"), " / ", link(low.denominator, n, "planned")]
        best = [link(high.numerator, n, PASSED_OR_UNGRADED), " / ", link(high.denominator, n, "planned")]
        told: list[Any] = [f"worst case pass_rate_planned = {low.formula} = ", *worst, "; best case pass_rate_upper = "]
        told += [f"{high.formula} = ", *best]
        bounds = [el("b", link(pct(low.value), n, "planned")), " to ", el("b", link(pct(high.value), n, "planned"))]
        parts.append(el("p", f"{whole} the pass rate could be anywhere from ", *bounds, small(join(told))))
    ungraded = []
    if c.counts["missing"]:
        ids = ", ".join(c.missing_ids[:CARD_IDS_SHOWN])
        more = c.missing_cases - min(len(c.missing_ids), CARD_IDS_SHOWN)
        missing = link(c.counts["missing"], n, "missing")
        ungraded.append(join([missing, f" missing (no row at all): {ids}" + (f" … (+{more} more)" if more else "")]))
    ungraded += [join([link(k, n, name), f" {name.replace('_', ' ')}"]) for name, k in c.ungraded]
    if ungraded:
        parts.append(el("p", "ungraded: ", join(ungraded, "; ")))
    if c.selective_missingness:
        parts.append(el("p", f"selective missingness: {c.selective_missingness}", cls="cov"))
    if c.missing_slice:
        parts.append(el("p", c.missing_slice, cls="cov"))
    return el("div", *parts, cls="card ok" if c.complete else "card warn")


def _ranking(view: View) -> Html:
    if view.ranking is None:
        return Html("")
    return el("p", view.ranking.text, cls="callout" if view.ranking.overlap else "callout ok")


#: Up to this many candidates the headline is one card each; more read better as the rows of one table.
CARDS_SHOWN: Final = 8


def _headline_table(view: View, link: Linker) -> Html:
    """One row per candidate: full-plan pass rate range, pass_rate_scored with its counts, coverage, missing.

    Each count and rate links (``link``) to its units: a rate to its denominator's.
    """
    header = [
        "candidate",
        join(["pass rate over all planned", small("worst – best case")]),
        join(["pass_rate_scored", small("passed / scored")]),
        join(["scored_coverage", small("scored / planned")]),
        join(["missing", small("no row at all")]),
    ]
    rows = []
    for c in view.candidates:
        low, high = c.rates["pass_rate_planned"].value, c.rates["pass_rate_upper"].value
        rate, cov = c.rates["pass_rate_scored"], c.rates["scored_coverage"]
        span = "—" if low is None or high is None else pct(low) if c.complete else f"{pct(low)} – {pct(high)}"
        n = c.name

        def fraction(numerator: str, denominator: str, r: Any = rate, n: str = n) -> Html:
            if r.value is None:
                return small(r.fraction)
            return small(join([link(r.numerator, n, numerator), " / ", link(r.denominator, n, denominator)]))

        rows.append(
            [
                el("b", n),
                el("b", link(span, n, "planned") if span != "—" else span),
                join([link(pct(rate.value), n, "scored"), fraction("passed", "scored")]),
                join([link(pct(cov.value), n, "planned"), fraction("scored", "planned", cov)]),
                link(c.counts["missing"], n, "missing"),
            ]
        )
    return table(header, rows)


def _cards(view: View, link: Linker) -> Html:
    if len(view.candidates) > CARDS_SHOWN:
        return _headline_table(view, link)
    return el("div", *[_card(c, link) for c in view.candidates], cls="cards")


def _rate_cell(r: Rate | CaseRate, link: Html | None = None) -> Html:
    """A rate's cell: the rate, numerator / denominator, and its interval; ``link``: the rate as a link to its units."""
    return join([link or el("span", fmt_value(r.value)), small(r.fraction), small(interval(r.ci_low, r.ci_high))])


def _rate_link(c: Candidate, name: str, task: str | None) -> Html | None:
    """A rate's value as a link to the units of its denominator (None when those are not units, e.g. observations)."""
    r = c.rates[name]
    if r.of not in outcome_groups():
        return None
    title = f"show the {r.denominator} {r.of} units this rate is over"
    return units_link(fmt_value(r.value), candidate=c.name, outcome=r.of, task=task, title=title)


def _rates_table(view: View, task: str | None = None, *, links: bool = True) -> Html:
    """Every rate with its formula, counts and interval; the case-level rate (when shown) beside pass_rate_scored.

    With ``links`` (and rates over planned units), each rate links to the explorer's units of its denominator.
    """
    links = links and view.base != "observations"
    case_level = view.case_level
    header: list[Any] = ["candidate"]
    for rate, formula in view.formulas.items():
        header.append(join([rate, small(formula)]))
        if rate == "pass_rate_scored" and case_level is not None:
            header.append(join([case_level.label, small(case_level.formula)]))
    rows = []
    for c in view.candidates:
        row: list[Any] = [c.name]
        for name in RATE_COLUMNS:
            row.append(_rate_cell(c.rates[name], _rate_link(c, name, task) if links else None))
            if name == "pass_rate_scored" and c.case_rate is not None:
                row.append(_rate_cell(c.case_rate))
        rows.append(row)
    by_case = (
        ""
        if case_level is None
        else f" {case_level.label} reduces the trials of each case to one outcome ({case_level.reducer}); its "
        "denominator is the cases all of whose planned trials were scored, where pass_rate_scored counts trials, "
        "and its interval treats the cases as independent."
    )
    note = el(
        "p",
        f"Each cell: the rate, numerator / denominator, and its {view.level}interval with cases as the independent "
        "units (Wilson 1927; with several trials per case on the effective sample size, Korn & Graubard 1998). "
        "pass_rate_planned is the worst case and pass_rate_upper the best case of the pass rate over every "
        f"planned unit.{by_case}",
        cls="muted",
    )
    return join([table(header, rows), note])


def _uncertainty_table(view: View) -> Html:
    header = [
        "candidate",
        join(["cases fully scored", small("cases_fully_scored / cases_planned")]),
        join(["SE naive", small("pass_rate_scored_se_naive")]),
        join(["SE clustered by case", small("pass_rate_scored_se_clustered")]),
        join(["design effect", small("design_effect (icc)")]),
        join(["effective n", small("effective_n of scored units")]),
        join(["mean score", small("mean_score (clustered SE)")]),
    ]
    rows = []
    for c in view.candidates:
        u = c.uncertainty
        deff, icc, se = u.get("design_effect"), u.get("icc"), u.get("mean_score_se_clustered")
        rows.append(
            [
                c.name,
                f"{u.get('cases_fully_scored')} / {u.get('cases_planned')}",
                u.get("pass_rate_scored_se_naive"),
                u.get("pass_rate_scored_se_clustered"),
                "null" if deff is None else fmt_value(deff) + ("" if icc is None else f" ({fmt_value(icc, digits=2)})"),
                u.get("effective_n"),
                fmt_value(u.get("mean_score")) + ("" if se is None else f" (SE {fmt_value(se)})"),
            ]
        )
    text = (
        "Repeated trials of one case are not independent: the CR1 standard error clustered by case "
        "(Cameron & Miller 2015; Miller 2024, arXiv:2411.00640) and the design effect say how many "
        "independent units the trials are worth; every interval treats cases as the units, with t(cases − 1) "
        f"critical values at {fmt_value(view.confidence)}."
    )
    return join([table(header, rows), el("p", text, cls="muted")])


def _funnel_table(view: View, task: str | None = None) -> Html:
    header = ["count", "meaning", *[c.name for c in view.candidates]]
    link, rows = _linker(view, task, links=True), []
    for name in view.counts_shown:
        cells: list[Any] = [name, describe("summary", name)]
        for c in view.candidates:
            count = c.shown(name)
            if count is None:  # no pass or fail to count (numeric scores without a threshold)
                cells.append("—")
                continue
            shared = c.observed and name not in ("planned", "observations")
            share = f" <small>{pct(c.shares[name])} of {c.base}</small>" if shared else ""
            shown = link(count, c.name, name) if name in outcome_groups() else count
            cells.append(Html(f"{esc(shown)}{share}"))
        rows.append(cells)
    return table(header, rows)


def _missing_section(view: View, task: str | None = None) -> Html:
    rows = [[c.name, c.planned, c.counts["missing"], c.missing_cases, c.missing_ids_text()] for c in view.candidates]
    parts: list[Any] = [table(["candidate", "planned", "missing units", "missing cases", "missing case ids"], rows)]
    header = [
        "candidate",
        *[el("span", o, title=OUTCOME_MEANING.get(o, "")) for o in view.outcomes_present],
        "planned",
    ]

    link = _linker(view, task, links=True)
    outcome_rows = [
        [c.name, *[link(c.outcomes[o], c.name, o) for o in view.outcomes_present], link(c.planned, c.name, "planned")]
        for c in view.candidates
    ]
    parts += [el("h3", "Units by outcome"), table(header, outcome_rows)]
    parts.append(
        el(
            "p",
            "A missing unit has no row at all: it is neither a failure nor a pass. exec_failed: the run timed out or "
            "errored; judge_failed: the grader could not produce a valid judgment; failed: a wrong answer.",
            cls="muted",
        )
    )
    if view.ungraded_total:
        shown = view.ungraded_units
        parts += [
            el("h3", "Ungraded units"),
            el(
                "details",
                el("summary", f"first {shown.height} of {view.ungraded_total} (units.parquet lists every unit)"),
                frame_table(shown, "units"),
                open="open" if view.ungraded_total <= 20 else None,
            ),
        ]
    return join(parts)


def _notes_section(notes: tuple[Note, ...]) -> Html:
    if not notes:
        return el("p", "No problems were flagged.")
    rows = [
        [
            join([n.kind, small(n.meaning)]),
            n.count,
            n.named or "—",
            el("ul", *[el("li", t) for t in n.texts]) if n.texts else "—",
        ]
        for n in notes
    ]
    return join(
        [
            table(["kind", "problem rows", "candidates", "texts"], rows),
            el("p", "These were flagged but do not refuse the batch; problems.parquet lists every one.", cls="muted"),
        ]
    )


#: Each count and rate of the slice table, with the outcomes of its units (a rate: its denominator's).
SLICE_LINKS: Final = {
    "planned": "planned",
    "completed": "completed",
    "scored": "scored",
    "passed": "passed",
    "missing": "missing",
    "missing_rate": "planned",
    "scored_coverage": "planned",
    "pass_rate_scored": "scored",
}


def _slice_funnel_table(view: View, funnel: Any, binned: frozenset[str], task: str | None, *, links: bool) -> Html:
    """The slice table; with ``links`` each count and rate links to its units of that candidate and slice value.

    A binned numeric slice is not linked: its rows are intervals, where the explorer filters by value.
    """
    if not links or view.base == "observations" or funnel.is_empty():
        return frame_table(funnel, "slices")
    rows = []
    for r in funnel.iter_rows(named=True):
        where = {str(r["slice_column"]): str(r["slice_value"])}
        cells: list[Any] = []
        for column, value in r.items():
            outcome = SLICE_LINKS.get(column)
            if outcome is None or value is None or r["slice_column"] in binned:
                cells.append(value)
                continue
            shown = fmt_value(value) if isinstance(value, float) else value
            cells.append(units_link(shown, candidate=str(r["candidate"]), outcome=outcome, task=task, where=where))
        rows.append(cells)
    return table([el("span", c, title=describe("slices", c)) for c in funnel.columns], rows)


def _slices_section(
    view: View, *, chart: bool = True, prefix: str = "", task: str | None = None, links: bool = False
) -> Html:
    s = view.slices
    if s is None:
        return el("p", "No slice column was declared (audit with slices=[...] or --slice COLUMN).")
    rows = []
    for r in s.tests.iter_rows(named=True):
        cells = {c: el("span", "yes", cls="yes") if r[c] else "no" for c in r if c.startswith("selective")}
        cells |= {c: r[c] or "—" for c in r if c.startswith("stands_out")}
        rows.append([cells.get(c, r[c]) for c in s.tests.columns])
    parts: list[Any] = [
        el("h3", "Does missingness depend on the slice?"),
        table([el("span", c, title=describe("missingness", c)) for c in s.tests.columns], rows),
        el(
            "p",
            "Cases are the test's units, each counted once: a seeded permutation test of Welch's statistic on each "
            "case's ungraded share (no row, execution or grader failure) and, separately, on its missing share "
            "(no row), across slice values, each slice's spread taken from its cases' planned trials; "
            "p-values are Holm-adjusted over every test of the audit (Holm 1979). detectable = the shift of one "
            "slice's mean share the test would detect with 80% power at alpha / tests (1.0 = the whole slice). "
            f"selective = p_adjusted ≤ alpha ({fmt_value(view.alpha)}); stands_out = when selective, slice values "
            "whose rate is at least twice the candidate's overall rate (else those with the highest rate).",
            cls="muted",
        ),
    ]
    if chart:
        parts.append(el("figure", Html(missing_rate_chart(s, prefix=prefix)), cls="chart"))
    shown = min(s.funnel.height, SLICE_ROWS_SHOWN)
    parts += [
        el("h3", f"Funnel by slice ({shown} of {s.funnel.height} rows)"),
        _slice_funnel_table(view, s.funnel.head(SLICE_ROWS_SHOWN), s.binned, task, links=links),
    ]
    return join(parts)


def _crosscheck_section(view: View) -> Html:
    """The reconciliation of each reported headline (its sentences, a table) and the retry tables."""
    checked, parts = view.crosscheck, []
    if checked.reconciliation.height:
        parts += [
            el("h3", RECONCILED.capitalize()),
            el("ul", *[el("li", s) for s in checked.sentences]),
            frame_table(checked.reconciliation),
            el("p", "gap = reported − pass_rate_planned; its parts sum to it exactly (reconciliation.parquet).",
               cls="muted"),  # fmt: skip
        ]
    for name, title in RETRY_TABLES.items() if checked.retried else ():
        parts += [el("h3", f"Retries: {title}"), frame_table(getattr(checked, name))]
    return join(parts)


def _comparison_section(c: ComparisonView) -> Html:
    rows = [[el("code", name), value, meaning] for name, value, meaning in c.measures]
    parts: list[Any] = [table(["measure", "value", "meaning"], rows)]
    if c.dropped_by_slice.height:
        parts += [el("h3", "Dropped pairs by slice"), frame_table(c.dropped_by_slice, "dropped_pairs")]
    f = c.flips
    parts += [
        el("h3", f"Flipped pairs ({f.total})"),
        table(["flip", "pairs"], [[label, f.counts[k]] for k, label in FLIPS.items()]),
    ]
    if f.by_slice.height:
        parts += [el("h3", "Flipped pairs by slice"), frame_table(f.by_slice)]
    if f.pairs.height:
        summary = f"first {f.pairs.height} of {f.total} flipped pairs (pairs.parquet holds every pair)"
        parts.append(el("details", el("summary", summary), frame_table(f.pairs), open="open"))
    return join(parts)


def _provenance(view: View) -> Html:
    items: list[Html] = []
    for label, text in view.provenance:
        value: Any = text
        if len(text) > 240:
            value = el("details", el("summary", text[:120] + " …"), el("div", text, cls="mono"))
        items += [el("dt", label), el("dd", value)]
    return el("dl", *items, cls="prov")


def _section(anchor: str, title: str, *body: Any, heading: str = "h2") -> Html:
    return el("section", el(heading, title), *body, id=anchor)


def task_anchor(number: int, task: str) -> str:
    """The HTML id of a task's section: its number in the batch (unique) and its name's letters and digits.

    Examples
    --------
    >>> task_anchor(1, "negotiationtom_belief"), task_anchor(2, "<script>x</script>"), task_anchor(3, "日本語")
    ('task-1-negotiationtom_belief', 'task-2-script-x-script', 'task-3')
    """
    slug = re.sub(r"[^0-9A-Za-z_]+", "-", task).strip("-")[:40].strip("-")
    return f"task-{number}" + (f"-{slug}" if slug else "")


def _headline(view: View, prefix: str = "", *, links: bool = False, task: str | None = None) -> Html:
    """Ranking note, cards and chart; with ``links`` (over planned units) each bar segment links to its units."""
    units = rated_units(view.base)
    each = " (under retry every, each counted attempt)" if view.base == "observations" else ""
    caption = (
        f"Left: what happened to each candidate's {units}{each} (hatched = missing, no row at all). "
        "Right: pass_rate_scored (dot, with its Wilson interval) is computed over scored units only; "
        f"the orange band is where the pass rate over all {units} could lie."
    )
    linked = links and view.base != "observations"
    caption += " Click a bar's segment for its units." if linked else ""
    href = (lambda candidate, outcome: units_fragment(candidate, outcome, task)) if linked else None
    drawn = headline_chart(view.candidates, prefix=prefix, href=href)
    chart = el("figure", Html(drawn), el("figcaption", caption), cls="chart")
    return join([_ranking(view), _cards(view, _linker(view, task, links=links)), chart])


def render_html(view: View | TasksView) -> str:
    """The view as one self-contained HTML page.

    Sections: verdict (comparison), gate, headline (each pass rate with its
    denominator and coverage, chart), funnel (chart and table), rates with
    formulas, counts and intervals, missing and ungraded units, slices and
    the missingness test, comparison with its flipped pairs, notes,
    provenance. Two calls with the same view return the same string. A
    batch of several tasks (:class:`~evalframe.report.view.TasksView`) is
    its title and batch line, an index of the tasks, then one section per
    task (id :func:`task_anchor`) holding those sections, their ids led by
    the task's.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund", "privacy", "handoff"]}),
    ...                           candidates=["A", "B"])
    >>> results = pl.DataFrame({"candidate": ["A", "A", "B", "B", "B", "B"],
    ...     "case_id": ["quote", "refund", "quote", "refund", "privacy", "handoff"], "passed": [1, 1, 1, 1, 1, 0]})
    >>> text = render_html(ef.report.build_view(ef.audit(plan, results)))
    >>> text.startswith("<!DOCTYPE html>"), "pass_rate_scored = passed / scored = " in text, "http://" in text
    (True, True, False)
    """
    if isinstance(view, TasksView):
        anchors = [(task_anchor(n, task), task) for n, (task, _) in enumerate(view.tasks, 1)]
        body: list[Any] = [
            el("header", el("h1", view.title), el("p", view.batch, cls="sub")),
            el("nav", "tasks: ", *[el("a", task, href=f"#{anchor}") for anchor, task in anchors], cls="tasks"),
        ]
        if view.notes:  # the notes of no task, once
            body.append(el("section", el("h2", "Notes of no task"), _notes_section(view.notes), id="batch-notes"))
        for (anchor, task), (_, one) in zip(anchors, view.tasks, strict=True):
            parts = _page_parts(one, prefix=f"{anchor}-", heading="h3", task=task)
            body.append(el("section", el("h2", f"task {task}"), el("p", one.subtitle, cls="sub"), *parts, id=anchor))
        return page(view.title, *body, explorer_section(view))
    header = el("header", el("h1", view.title), el("p", view.subtitle, cls="sub"))
    return page(view.title, header, *_page_parts(view), explorer_section(view))


def _page_parts(view: View, *, prefix: str = "", heading: str = "h2", task: str | None = None) -> list[Html]:
    """The page's parts under its header: the index of sections, verdict, gate and the sections.

    Each section's id is led by ``prefix`` and its heading is a ``heading`` element (a task's are one level down);
    a count or rate links to the explorer's units of ``task`` (a batch of several tasks) and of its candidate.
    """
    c = view.comparison
    checked = view.crosscheck.reconciliation.height > 0 or view.crosscheck.retried
    anchors = [
        *((("comparison", "comparison"),) if c is not None else ()),
        ("headline", "headline"),
        ("funnel", "funnel"),
        ("rates", "rates"),
        ("missing", "missing units"),
        ("slices", "slices"),
        *((("crosscheck", "reconciliation and retries"),) if checked else ()),
        ("notes", "notes"),
        ("provenance", "provenance"),
    ]
    body: list[Html] = [el("nav", *[el("a", label, href=f"#{prefix}{anchor}") for anchor, label in anchors])]
    if c is not None:
        body.append(_verdict(c))
    if view.gate is not None:
        body.append(_gate(view.gate))

    def section(anchor: str, title: str, *parts: Any) -> Html:
        return _section(f"{prefix}{anchor}", title, *parts, heading=heading)

    body += [
        section(
            "headline", "Headline: each pass rate with its denominator", _headline(view, prefix, links=True, task=task)
        ),
        section(
            "funnel",
            "Coverage funnel",
            el("figure", Html(funnel_chart(view.candidates, prefix=prefix)), cls="chart"),
            _funnel_table(view, task),
        ),
        section(
            "rates",
            "Rates, each named by its denominator",
            _rates_table(view, task),
            el("h3", "Uncertainty of pass_rate_scored (repeated trials clustered by case)"),
            _uncertainty_table(view),
        ),
        section("missing", "Missing and ungraded units", _missing_section(view, task)),
        section(
            "slices", "Slices and selective missingness", _slices_section(view, prefix=prefix, task=task, links=True)
        ),
    ]
    if checked:
        body.append(section("crosscheck", "Reconciliation and retries", _crosscheck_section(view)))
    if c is not None:
        body.append(section("comparison", "Paired comparison", _comparison_section(c)))
    body += [
        section("notes", "Notes and problems (not refusing), by kind", _notes_section(view.notes)),
        section("provenance", "Provenance", _provenance(view)),
    ]
    return body


def render_summary_html(view: View | TasksView) -> str:
    """What a notebook shows for a report: headline, chart, rates with denominators and the slice table.

    A batch of several tasks shows its batch line, then these per task under the task's name.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> results = pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]})
    >>> "only 1 of 2 planned units scored" in render_summary_html(ef.report.build_view(ef.audit(plan, results)))
    True
    """
    if isinstance(view, TasksView):
        inner: list[Any] = [el("h3", view.title), el("p", view.batch, cls="sub")]
        for n, (task, one) in enumerate(view.tasks, 1):
            inner += [el("h3", f"task {task}"), *_summary_parts(one, prefix=f"{task_anchor(n, task)}-")]
    else:
        inner = [el("h3", view.title), *_summary_parts(view)]
    note = el(
        "p",
        "Tables: report.summary, report.units, report.problems, report.slices; "
        "report.write(folder) adds report.html with every chart.",
        cls="muted",
    )
    return fragment(*inner, note)


def _summary_parts(view: View, prefix: str = "") -> list[Any]:
    """A notebook's parts of one view under its title: subtitle, verdict, headline, rates, slices.

    The chart's id is led by ``prefix`` (a task's, when the notebook shows several).
    """
    return [
        el("p", view.subtitle, cls="sub"),
        _verdict(view.comparison) if view.comparison is not None else "",
        _headline(view, prefix),
        _rates_table(view, links=False),
        _slices_section(view, chart=False) if view.slices is not None else "",
    ]
