"""Markdown renderers of a :class:`~evalframe.report.view.View`: the full report, and a CI job summary.

Every number comes from the view; text from the input goes through
:func:`~evalframe.report.format.markdown_text` or
:func:`~evalframe.report.format.markdown_code`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from evalframe.columns import CANDIDATE
from evalframe.funnel import RATE_COLUMNS
from evalframe.report.candidate import Candidate, Rate
from evalframe.report.comparison import CASE_FLIP_LABELS, FLIPS, ComparisonView, comparison_view
from evalframe.report.crosscheck import RECONCILED, RETRY_TABLES
from evalframe.report.format import (
    fmt_rate,
    fmt_value,
    interval,
    markdown_code,
    markdown_table,
    markdown_text,
    pct,
)
from evalframe.report.view import Gate, Note, Slices, TasksView, View

if TYPE_CHECKING:
    from evalframe.compare import Comparison

#: A column's polars type, as a Markdown table's frame is declared (``pl.String``, ``pl.Int64``...).
_DType = type[pl.DataType]


def _confidence(view: View) -> str:
    return f"{view.confidence:.0%}" if isinstance(view.confidence, float) else "Two-sided"


def _verdict_lines(c: ComparisonView) -> list[str]:
    return [
        f"**Verdict: `{c.verdict}`** — {markdown_text(c.candidate)} vs baseline {markdown_text(c.baseline)} "
        f"(pair policy `{c.pair_policy}`)",
        "",
        *[f"- {markdown_text(r)}" for r in c.reasons],
        *(["", "Checks passed:", ""] if c.checks_passed else []),
        *[f"- {markdown_text(r)}" for r in c.checks_passed],
    ]


def _gate_lines(gate: Gate) -> list[str]:
    said = "**Gate passed**" if gate.passed else "**Gate failed**"
    return [f"{said}: {'; '.join(markdown_text(c) for c in gate.checks('is at least'))}."]


def _notes_table(notes: tuple[Note, ...]) -> str:
    frame = pl.DataFrame(
        {
            "kind": [n.kind for n in notes],
            "problem rows": [n.count for n in notes],
            "meaning": [n.meaning for n in notes],
            "texts": [" / ".join(n.texts) or "—" for n in notes],
        },
        schema={"kind": pl.String, "problem rows": pl.Int64, "meaning": pl.String, "texts": pl.String},
    )
    return markdown_table(frame)


def _batch_notes_lines(view: TasksView) -> list[str]:
    """A batch of several tasks before its tasks: the overview of every (task, candidate), then the notes of no task.

    The notes of no task are the input's own (an importer's), shown once.
    """
    lines = [_heading(2, "Overview (one row per task and candidate)"), "", markdown_table(view.overview_cells()), ""]
    if view.notes:
        lines += [_heading(2, "Notes of no task (not refusing)"), "", _notes_table(view.notes), ""]
    return lines


def _heading(level: int, text: str) -> str:
    """A Markdown heading of ``level`` (``## text`` at 2); a task's sections sit one level below the task's own."""
    return f"{'#' * level} {text}"


def _flips_lines(c: ComparisonView, depth: int = 0) -> list[str]:
    f = c.flips
    lines = [_heading(3 + depth, "Flipped pairs"), ""]
    counts = pl.DataFrame({"flip": list(FLIPS.values()), "pairs": [f.counts[k] for k in FLIPS]})
    lines.append(markdown_table(counts))
    if f.by_slice.height:
        lines += ["", "By slice:", "", markdown_table(f.by_slice)]
    if f.pairs.height:
        lines += ["", f"First {f.pairs.height} of {f.total} flipped pairs (pairs.parquet holds all):", ""]
        lines.append(markdown_table(f.pairs))
    return lines


def _case_flips_lines(c: ComparisonView, depth: int = 0) -> list[str]:
    """Cases per trial-aware flip class (SPEC §6c), the note when trials rule a change out, the changed cases."""
    f = c.case_flips
    if f is None or not f.cases:
        return []
    lines = [_heading(3 + depth, "Cases by flip class (trial-aware)"), ""]
    counts = [(k, f.counts[k], meaning) for k, meaning in CASE_FLIP_LABELS.items()]
    lines.append(markdown_table(pl.DataFrame(counts, schema=["class", "cases", "meaning"], orient="row")))
    if f.note:
        lines += ["", f"Note: {markdown_text(f.note)}."]
    if f.changed.height:
        lines += ["", "Fixed and regressed cases (flips.parquet holds every case):", "", markdown_table(f.changed)]
    return ["", *lines]


def render_markdown(view: View | TasksView) -> str:
    """The report as Markdown: verdict, headline, funnel, rates, missing units, slices, notes, comparison, provenance.

    A batch of several tasks (:class:`~evalframe.report.view.TasksView`) is
    its title and batch line, then one ``## task `name``` section per task
    holding that task's report, its headings one level down.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> render_markdown(ef.report.build_view(report)).splitlines()[0]
    '# evalframe audit: A'
    >>> views = ef.report.build_task_views({"belief": report, "desire": report})
    >>> [line for line in render_markdown(views).splitlines() if line.startswith(("# ", "## "))]
    ['# evalframe audit: A', '## Overview (one row per task and candidate)', '## task `belief`', '## task `desire`']
    """
    if isinstance(view, TasksView):
        lines = [f"# {markdown_text(view.title)}", "", markdown_text(view.batch), "", *_batch_notes_lines(view)]
        for task, one in view.tasks:
            lines += [_heading(2, f"task {markdown_code(task)}"), "", *_markdown_lines(one, depth=1), ""]
        return "\n".join(lines[:-1]) + "\n"
    return "\n".join([f"# {markdown_text(view.title)}", "", *_markdown_lines(view)]) + "\n"


def _markdown_lines(view: View, depth: int = 0) -> list[str]:
    """The report's lines under its title: subtitle, sections with headings ``depth`` levels below ``##``."""
    c = view.comparison
    h = 2 + depth
    lines = [markdown_text(view.subtitle), ""]
    if c is not None:
        lines += [_heading(h, "Verdict"), "", *_verdict_lines(c), ""]
    if view.gate is not None:
        lines += [*_gate_lines(view.gate), ""]
    lines += [_heading(h, "Headline"), ""]
    lines += [f"- {markdown_text(' '.join(cand.headline))}" for cand in view.candidates]
    lines += [f"- {markdown_text(cand.missing_slice)}." for cand in view.candidates if cand.missing_slice]
    if view.ranking is not None:
        lines += ["", f"**{markdown_text(view.ranking.text)}**"]
    lines += [
        "",
        *_funnel_and_rates_lines(view, depth),
        *_mean_score_lines(view, depth),
        "",
        _heading(h, "Missing units"),
        "",
        _missing_table(view),
    ]
    if view.slices is not None:
        lines += ["", *_slices_lines(view.slices, depth)]
    lines += _crosscheck_lines(view, h)
    lines += ["", _heading(h, "Notes and problems (not refusing)"), ""]
    lines.append(_notes_table(view.notes) if view.notes else "none")
    if c is not None:
        lines += ["", *_comparison_lines(c, depth)]
    lines += ["", _heading(h, "Provenance"), "", *[f"- {markdown_text(k)}: {v}" for k, v in view.provenance_markdown]]
    return lines


def _by_candidate(view: View, schema: Mapping[str, _DType], row: Callable[[Candidate], list[Any]]) -> str:
    """A Markdown table, one row per candidate: its name, then ``row(candidate)``, one cell per ``schema`` column."""
    rows = [[cand.name, *row(cand)] for cand in view.candidates]
    return markdown_table(pl.DataFrame(rows, schema={CANDIDATE: pl.String, **schema}, orient="row"))


def _rate_cells(view: View, cell: Callable[[Rate], Any], dtype: _DType = pl.String) -> str:
    """One row per candidate, one column per rate of :data:`RATE_COLUMNS` holding ``cell(rate)``."""
    return _by_candidate(view, dict.fromkeys(RATE_COLUMNS, dtype), lambda c: [cell(c.rates[r]) for r in RATE_COLUMNS])


def _funnel_and_rates_lines(view: View, depth: int = 0) -> list[str]:
    """The funnel's counts, the rates, each rate's numerator / denominator, and the rates' intervals."""
    names = view.counts_shown
    counts = _by_candidate(view, dict.fromkeys(names, pl.Int64), lambda c: [c.shown(k) for k in names])
    return [
        _heading(2 + depth, "Funnel (counts)"),
        "",
        counts,
        "",
        _heading(2 + depth, "Rates (each named by its denominator)"),
        "",
        _rate_cells(view, lambda rate: rate.value, pl.Float64),
        "",
        ", ".join(f"`{r}` = {formula}" for r, formula in view.formulas.items())
        + "; `pass_rate_planned` is the worst case and `pass_rate_upper` the best case of the full-plan pass rate.",
        "",
        "Numerator / denominator of each rate:",
        "",
        _rate_cells(view, lambda rate: rate.fraction),
        "",
        f"{_confidence(view)} intervals, cases as the independent units (Wilson; with several trials per case "
        "on the effective sample size with t(cases − 1); none with fewer than two cases):",
        "",
        _rate_cells(view, lambda rate: interval(rate.ci_low, rate.ci_high)),
        *_case_level_lines(view, depth),
    ]


def _case_level_lines(view: View, depth: int = 0) -> list[str]:
    """The case-level rate beside the trial-level one, each with its denominator (none when not shown)."""
    case_level = view.case_level
    if case_level is None:
        return []
    rows = []
    for cand in view.candidates:
        trial, case = cand.rates["pass_rate_scored"], cand.case_rate
        assert case is not None  # shown for every candidate or none
        rows.append(
            {
                CANDIDATE: cand.name,
                "pass_rate_scored": fmt_value(trial.value),
                "passed / scored (trials)": trial.fraction,
                case.label: fmt_value(case.value),
                case.formula: case.fraction,
                f"{_confidence(view)} interval": interval(case.ci_low, case.ci_high),
            }
        )
    return [
        "",
        _heading(3 + depth, f"Case-level rate (trials of a case reduced by `{case_level.reducer}`)"),
        "",
        f"`{case_level.label}` = {case_level.formula}, over the cases all of whose planned trials were scored, "
        "beside the trial-level `pass_rate_scored` = passed / scored trials; cases are independent: "
        + ("Wilson over cases." if case_level.pass_fail else "the bounded interval of a mean over cases."),
        "",
        markdown_table(pl.DataFrame(rows)),
        "",
        *[f"- {markdown_text(cand.name)}: {cand.case_rate.sentence}" for cand in view.candidates if cand.case_rate],
    ]


def _missing_table(view: View) -> str:
    """Missing units per candidate: how many, in how many cases, and the first case ids."""
    schema = {"missing": pl.Int64, "missing_cases": pl.Int64, "missing_case_ids": pl.String}
    return _by_candidate(view, schema, lambda c: [c.counts["missing"], c.missing_cases, c.missing_ids_text()])


def _slices_lines(slices: Slices, depth: int = 0) -> list[str]:
    """Missingness by slice (the tests, Holm-adjusted) and the funnel by slice."""
    return [
        _heading(2 + depth, "Missingness by slice"),
        "",
        markdown_table(slices.tests),
        "",
        "Cases are the test's units, each counted once (a seeded permutation test of Welch's statistic on each "
        "case's ungraded, and missing, share, its spread taken from the case's planned trials); p-values are "
        "Holm-adjusted over every test of the audit (Holm 1979). detectable: the shift of one slice's mean share "
        "the test would detect with 80% power at alpha / tests (1.0 = the whole slice).",
        "",
        _heading(3 + depth, "Funnel by slice"),
        "",
        markdown_table(slices.funnel),
    ]


def _comparison_lines(c: ComparisonView, depth: int = 0, *, verdict: bool = False) -> list[str]:
    """The comparison's heading, (with ``verdict``) its verdict, its table, the pairs dropped by slice, the flips."""
    title = f"Comparison: {markdown_text(c.candidate)} vs baseline {markdown_text(c.baseline)}"
    lines = [_heading(2 + depth, title), "", *([*_verdict_lines(c), ""] if verdict else [])]
    lines.append(markdown_table(c.table.drop("reasons", "checks_passed", strict=False)))
    if c.dropped_by_slice.height:
        lines += ["", "Dropped pairs by slice:", "", markdown_table(c.dropped_by_slice)]
    return [*lines, "", *_flips_lines(c, depth), *_case_flips_lines(c, depth)]


def render_comparison_markdown(c: ComparisonView) -> str:
    """Only the comparison: verdict, reasons, numbers, dropped and flipped pairs."""
    return "\n".join(_comparison_lines(c, verdict=True)) + "\n"


def comparison_markdown(comparison: Comparison) -> str:
    """:func:`render_comparison_markdown` of a comparison's view (what ``Comparison.to_markdown`` returns).

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
    >>> ledger = pl.DataFrame({"candidate": ["A", "A", "B", "B"], "case_id": ["q1", "q2"] * 2, "passed": [1, 0, 0, 0]})
    >>> report = ef.audit(plan, ledger)
    >>> comparison_markdown(ef.compare(report, baseline="B", candidate="A")).splitlines()[2]
    '**Verdict: `no_supported_winner`** — A vs baseline B (pair policy `complete_pairs`)'
    """
    return render_comparison_markdown(comparison_view(comparison))


def render_github(view: View | TasksView) -> str:
    """A short Markdown summary for a CI job page (``$GITHUB_STEP_SUMMARY``): verdict, coverage, gate.

    A batch of several tasks (:class:`~evalframe.report.view.TasksView`) is
    its title and batch line, then one ``#### task `name``` section per task
    holding that task's summary.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> print(render_github(ef.report.build_view(report, min_coverage=0.9)).splitlines()[2])
    **Gate failed**: scored_coverage below 0.9: A (0.5).
    >>> print(render_github(ef.report.build_task_views({"belief": report, "desire": report})).splitlines()[2])
    2 tasks × 1 candidate: rates are per task; no number pools tasks
    """
    if isinstance(view, TasksView):
        lines = [f"### {markdown_text(view.title)}", "", markdown_text(view.batch)]
        if view.notes:  # the notes of no task, once
            counted = ", ".join(f"{markdown_code(n.kind)} {n.count}" for n in view.notes)
            lines += ["", f"Notes of no task: {counted}."]
        for task, one in view.tasks:
            lines += ["", _heading(4, f"task {markdown_code(task)}"), "", *_github_lines(one)]
        return "\n".join(lines) + "\n"
    return "\n".join([f"### {markdown_text(view.title)}", "", *_github_lines(view)]) + "\n"


def _github_lines(view: View) -> list[str]:
    """The job summary's lines under its title: gate, verdict, one row per candidate, ranking, flips, notes."""
    lines: list[str] = []
    c = view.comparison
    if view.gate is not None:
        lines += [*_gate_lines(view.gate), ""]
    if c is not None:
        lines += [*_verdict_lines(c), ""]
    case_level, numeric = view.case_level, view.numeric_grade
    texts = [
        f"scored / {view.base}",
        "scored_coverage",
        "pass_rate_scored",
        *(["mean_score"] if numeric else []),
        *([] if case_level is None else [case_level.label]),
        view.range_name,
    ]
    schema: dict[str, _DType] = {**dict.fromkeys(texts, pl.String), "missing": pl.Int64}

    def row(cand: Candidate) -> list[Any]:
        low, high = cand.rates["pass_rate_planned"].value, cand.rates["pass_rate_upper"].value
        cells = [f"{cand.counts['scored']} / {cand.observed}", pct(cand.rates["scored_coverage"].value)]
        cells += [_pass_cell(cand), *([_mean_cell(cand)] if numeric else [])]
        cells += [] if case_level is None else [_case_cell(cand)]
        return [*cells, interval(low, high), cand.counts["missing"]]

    lines.append(_by_candidate(view, schema, row))
    selective = [c for c in view.candidates if c.selective_missingness]
    if selective:  # SPEC §5: the headline rate says where its missing units concentrate
        lines += [
            "",
            *(
                f"**{markdown_text(c.name)}: selective missingness**: {markdown_text(str(c.selective_missingness))}."
                for c in selective
            ),
        ]
    lines += [line for c in view.candidates if c.missing_slice for line in ("", f"{markdown_text(c.missing_slice)}.")]
    if view.ranking is not None:
        lines += ["", markdown_text(view.ranking.text)]
    if c is not None and c.flips.total:
        flipped = ", ".join(f"{c.flips.counts[k]} {label}" for k, label in FLIPS.items() if c.flips.counts[k])
        lines += ["", f"Flipped pairs: {markdown_text(flipped)}."]
    lines += _crosscheck_lines(view, 0, full=False)
    if view.notes:
        lines += ["", "Notes: " + ", ".join(f"{markdown_code(n.kind)} {n.count}" for n in view.notes) + "."]
    return lines


def _crosscheck_lines(view: View, level: int, *, full: bool = True) -> list[str]:
    """The reconciliation (its sentences, then one row per headline) and the retry tables, under ``level`` headings.

    ``full=False`` (the job summary, ``level`` 0: bold lines, not headings): the reconciliation and the
    headline under ``first`` beside the declared policy only.
    """
    checked, lines = view.crosscheck, []

    def heading(text: str) -> str:
        return _heading(level, text) if level else f"**{text}**"

    if checked.reconciliation.height:
        lines += ["", heading(f"Reconciliation: {RECONCILED}"), ""]
        lines += [*(f"- {markdown_text(s)}" for s in checked.sentences), "", markdown_table(checked.reconciliation)]
    if checked.retried:
        lines += ["", heading("Retries"), ""]
        for name, title in RETRY_TABLES.items() if full else list(RETRY_TABLES.items())[:1]:
            lines += [f"{markdown_text(title.capitalize())}:", "", markdown_table(getattr(checked, name)), ""]
        lines.pop()
    return lines


def _case_cell(cand: Candidate) -> str:
    """The case-level rate with its cases passed / cases scored, or ``—`` when it has none."""
    rate = cand.case_rate
    if rate is None or rate.value is None:
        return "—"
    return f"{fmt_rate(rate.value)} ({rate.fraction.replace(' / ', '/')})"


def _mean_interval(cand: Candidate) -> str:
    """The clustered interval of the mean score among scored units."""
    return interval(cand.uncertainty.get("mean_score_ci_low"), cand.uncertainty.get("mean_score_ci_high"))


def _mean_cell(cand: Candidate) -> str:
    """The mean score among scored units with its clustered interval, or ``—`` when nothing was scored."""
    mean = cand.uncertainty.get("mean_score")
    return "—" if mean is None else f"{fmt_value(mean)} {_mean_interval(cand)}"


def _mean_score_lines(view: View, depth: int = 0) -> list[str]:
    """Numeric scores: each candidate's mean over its scored units, its clustered SE and interval."""
    if not view.numeric_grade:
        return []
    hint = (
        " No pass threshold was declared, so there is no pass or fail (add `--pass-threshold`)." if view.numeric else ""
    )
    schema = {"scored": pl.Int64, "mean_score": pl.Float64, "mean_score_se_clustered": pl.Float64}
    u = ("mean_score", "mean_score_se_clustered")
    table = _by_candidate(
        view,
        {**schema, f"{_confidence(view)} interval": pl.String},
        lambda c: [c.counts["scored"], *(c.uncertainty.get(k) for k in u), _mean_interval(c)],
    )
    return [
        "",
        _heading(2 + depth, "Mean score (numeric scores, over scored units)"),
        "",
        f"Cases are the independent units.{hint}",
        "",
        table,
    ]


def _pass_cell(cand: Candidate) -> str:
    """``pass_rate_scored`` with passed/scored, or ``—`` when there is none (no count of passes either)."""
    rate = cand.rates["pass_rate_scored"].value
    return "—" if rate is None else f"{fmt_rate(rate)} ({cand.counts['passed']}/{cand.counts['scored']})"
