"""What a notebook and a Python prompt show of a report and of a comparison.

``repr`` gives a short summary in plain text (a few lines, never the tables);
``_repr_html_`` gives Jupyter its rich display. Every number is read from the
object's own tables or from the report's view (:mod:`evalframe.report.view`);
nothing here computes one. Strings from the data (candidates, case ids, note
texts) are escaped by :func:`~evalframe.report.htmlkit.esc`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from evalframe.columns import CANDIDATE, TASK
from evalframe.report.format import fmt_count, fmt_signed, fmt_value, interval, visible
from evalframe.report.html import render_summary_html
from evalframe.report.htmlkit import Html, el, fragment, small, verdict_box
from evalframe.report.sentences import plan_size
from evalframe.report.view import Note, TasksView, View

if TYPE_CHECKING:
    from evalframe.compare import Comparison
    from evalframe.report.model import AuditReport

#: (task, candidate) lines a report's summary lists before saying how many more there are.
ROWS_LISTED: Final = 8

#: How a notebook user reaches the tables and the units behind a number.
TABLES_HINT: Final = (
    "tables: report.summary, .units, .problems, .slices; the units behind a number: "
    "report.units_of(candidate=..., outcome=...); everything: report.to_markdown()"
)


def _note_item(note: Note) -> Html:
    """One note: its kind, problem rows, meaning, candidates and each of its quoted texts."""
    shown = f"the first {len(note.texts)} distinct texts; report.all_problems() lists all {note.count} rows"
    rest = [small(shown)] if note.texts and note.count > len(note.texts) else []
    return el(
        "li",
        el("b", note.kind),
        f" ({note.count} problem row{'' if note.count == 1 else 's'}; {note.named or '—'}): {note.meaning}",
        el("ul", *[el("li", t) for t in note.texts]) if note.texts else "",
        *rest,
    )


def _task_words(task: str, view: View) -> list[Any]:
    """One view's headline sentences (every candidate's, as report.md words them) and its notes."""
    sentences = [el("li", line) for c in view.candidates for line in c.headline]
    parts: list[Any] = [el("p", el("b", f"task {task}"))] if task else []
    parts.append(el("ul", *sentences))
    if view.notes:
        parts.append(el("ul", *[_note_item(n) for n in view.notes]))
    elif not task:
        parts.append(el("p", "No problems were flagged."))
    return parts


def words_html(view: View | TasksView) -> Html:
    """The headline in words and every note, of a view or of each task's view under its name.

    The notes of no task (:attr:`~evalframe.report.view.TasksView.notes`, an importer's note of the whole
    batch) are listed once, first.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> text = words_html(report.view())
    >>> "<b>missing_unit</b> (1 problem row; A)" in text, "Ungraded: 1 missing (no row at all): refund." in text
    (True, True)
    """
    parts: list[Any] = [el("h4", "In words: each candidate's headline, then the notes and problems (not refusing)")]
    if not isinstance(view, TasksView):
        return el("div", *parts, *_task_words("", view), cls="ef")
    if view.notes:
        parts += [el("p", el("b", "every task")), el("ul", *[_note_item(n) for n in view.notes])]
    for task, one in view.tasks:
        parts += _task_words(task, one)
    return el("div", *parts, cls="ef")


def report_html(report: AuditReport) -> str:
    """A report's rich display: the summary (verdict, headline, rates, slices), the headline in words, every note.

    The summary is :func:`~evalframe.report.html.render_summary_html`'s; :func:`words_html` follows it.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> text = report_html(report)
    >>> text.count("missing_unit"), "only 1 of 2 planned units scored" in text
    (1, True)
    """
    view = report.view()
    return render_summary_html(view) + str(words_html(view))


def report_text(report: AuditReport) -> str:
    """A report in a few lines: plan size, planned and scored units per (task, candidate), problems, how to read on.

    At most :data:`ROWS_LISTED` (task, candidate) lines, then how many more there are. A control character
    in a name (a bidi override, a newline) is written as its escape (:func:`~evalframe.report.format.visible`).

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> print(report_text(report))  # doctest: +ELLIPSIS
    AuditReport: 2 cases × 1 candidates × 1 trial(s) = 2 planned units
      A: 1 of 2 planned units scored (scored_coverage 0.5), 1 missing; pass_rate_scored 1.0
    no verdict (evalframe.compare.compare gives one)
    problems (not refusing): missing_unit 1
    tables: report.summary, ...
    """
    summary = report.summary
    tasks = list(report.meta.get("tasks") or [])
    lines = [f"AuditReport: {plan_size(report.meta)}"]
    if len(tasks) >= 2:
        lines.append(f"  {len(tasks)} tasks (rates are per task): {', '.join(tasks)}")
    for row in summary.head(ROWS_LISTED).iter_rows(named=True):
        who = f"{row[TASK]} · {row[CANDIDATE]}" if TASK in row else str(row[CANDIDATE])
        lines.append(
            f"  {who}: {fmt_count(row['scored'])} of {fmt_count(row['planned'])} planned units scored "
            f"(scored_coverage {fmt_value(row['scored_coverage'])}), {fmt_count(row['missing'])} missing; "
            f"pass_rate_scored {fmt_value(row['pass_rate_scored'])}"
        )
    if summary.height > ROWS_LISTED:
        lines.append(f"  … and {summary.height - ROWS_LISTED} more rows in report.summary")
    lines.append("no verdict (evalframe.compare.compare gives one)")
    counts = report.problem_counts
    kinds = ", ".join(f"{k} {fmt_count(n)}" for k, n in counts.select("kind", "count").iter_rows())
    lines.append(f"problems (not refusing): {kinds or 'none'}")
    lines.append(TABLES_HINT)
    return "\n".join(visible(line) for line in lines)


def _comparison_lines(comparison: Comparison) -> tuple[str, str]:
    """A comparison's heading and its difference with the interval and the cases and pairs it rests on."""
    row = comparison.table.row(0, named=True)
    head = f"{row['verdict']}: {row['candidate']} vs baseline {row['baseline']} (pairs {row['pair_policy']})"
    difference = (
        f"difference {row['candidate']} − {row['baseline']} = {fmt_signed(row['quality_difference'])} "
        f"{interval(row['ci_low'], row['ci_high'])} ({fmt_value(row['confidence'])} interval) over "
        f"{fmt_count(row['cases_used'])} cases, {fmt_count(row['pairs_used'])} of {fmt_count(row['pairs_planned'])} "
        "planned pairs used"
    )
    return head, difference


def comparison_text(comparison: Comparison) -> str:
    """A comparison in a few lines: verdict, difference with its interval and cases, each reason.

    A control character in a name is written as its escape (:func:`~evalframe.report.format.visible`).

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> from evalframe.compare import compare
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q", "r"]}), candidates=["A", "B"])
    >>> ledger = pl.DataFrame({"candidate": ["A", "A", "B", "B"], "case_id": ["q", "r"] * 2, "passed": [1, 1, 1, 0]})
    >>> print(comparison_text(compare(ef.audit(plan, ledger), baseline="B", candidate="A")))  # doctest: +ELLIPSIS
    Comparison no_supported_winner: A vs baseline B (pairs complete_pairs)
      difference A − B = +0.5 [...] (0.95 interval) over 2 cases, 2 of 2 planned pairs used
      - ...
    """
    head, difference = _comparison_lines(comparison)
    lines = [f"Comparison {head}", f"  {difference}", *(f"  - {r}" for r in comparison.reasons)]
    if comparison.checks_passed:
        lines += ["  checks passed:", *(f"  - {r}" for r in comparison.checks_passed)]
    return "\n".join(visible(line) for line in lines)


def comparison_html(comparison: Comparison) -> str:
    """A comparison's rich display: the verdict, the difference with its interval and cases, the reasons."""
    head, difference = _comparison_lines(comparison)
    winner = comparison.verdict != "no_supported_winner"
    return fragment(verdict_box(head, el("p", difference), comparison.reasons, comparison.checks_passed, winner=winner))
