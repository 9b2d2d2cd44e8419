"""``evalframe audit`` and ``evalframe compare``: audit a ledger against its plan, then print and write it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import click
import polars as pl
from rich.table import Table
from rich.text import Text

from evalframe.cli.exits import EXIT_GATE, fail, plain, stderr, stdout, write_or_exit
from evalframe.cli.inputs import build_report, input_paths
from evalframe.cli.options import EXIT_CODES_HELP, audit_options, input_options, layout_of, min_coverage_option
from evalframe.cli.progress import progress_bars
from evalframe.cli.signals import hold_stop_signals
from evalframe.columns import CANDIDATE, OUTCOME, UNITS
from evalframe.compare import Comparison, compare
from evalframe.compare.aggregate import aggregate, aggregate_difference
from evalframe.compare.family import Family, compare_by_task, compare_each
from evalframe.compare.pairs import task_report
from evalframe.errors import AggregateError, OptionError
from evalframe.progress import Progress
from evalframe.report import (
    AuditReport,
    TasksView,
    View,
    check_output_folder,
    render_github,
    render_json,
    render_markdown,
)
from evalframe.report.format import fmt_value, markdown_code, markdown_table, markdown_text, visible
from evalframe.report.terminal import NULL, TerminalLayout, family_table, print_view
from evalframe.report.view import Gate


def print_view_as(view: View | TasksView, fmt: str, layout: TerminalLayout = "auto") -> None:
    """Print the view on stdout in the chosen ``--format`` (every format lays out one view, or one per task).

    ``layout`` (``--compact/--full``) is the terminal table's.
    """
    if fmt == "json":
        click.echo(render_json(view))
    elif fmt == "markdown":
        click.echo(render_markdown(view), nl=False)
    elif fmt == "github":
        click.echo(render_github(view), nl=False)
    else:
        print_view(view, stdout(), layout=layout)


def _gate_failed(said: str) -> NoReturn:
    """Say which declared release gate failed (``--min-coverage``, ``--require-winner``) and exit 3."""
    stderr().print(f"[bold red]gate failed[/]: {plain(said)}")
    sys.exit(EXIT_GATE)


def exit_on_failed_gate(view: View | TasksView) -> None:
    """On a failed release gate (``--min-coverage``, ``--require-winner``), say which check failed and exit 3."""
    if view.gate is not None and not view.gate.passed:
        _gate_failed("; ".join(view.gate.checks()))


def _write_report(
    report: AuditReport,
    out: Path,
    comparison: Comparison | None,
    view: View | TasksView,
    *,
    inputs: list[str],
    min_coverage: float | None,
    progress: Progress | None,
) -> None:
    """Write the audit (with the comparison, for ``compare``) and its printed view to ``--out``, stop signals held."""
    command = "evalframe audit" if comparison is None else "evalframe compare"
    write_or_exit(
        lambda: report.write(
            out,
            comparison=comparison,
            inputs=inputs,
            command=command,
            min_coverage=min_coverage,
            progress=progress,
            guard=hold_stop_signals,
            view=view,
        )
    )


def _export(report: AuditReport, folder: Path, inputs: list[str]) -> None:
    """Publish the audit as every_eval_ever records into ``folder`` (``--export``); say what the rows leave out."""
    from evalframe.importers.every_eval_ever import ExportError, left_out, write

    try:
        write_or_exit(
            lambda: write(report, folder, inputs=inputs, command="evalframe audit --export", guard=hold_stop_signals),
            option="--export",
        )
    except ExportError as exc:
        fail(str(exc))
    parts = []
    for (candidate,), rows in left_out(report).group_by(CANDIDATE, maintain_order=True):
        counts = [f"{n} {o}" for o, n in rows.select(OUTCOME, UNITS).iter_rows() if n]
        total = int(rows.get_column(UNITS).sum())
        parts.append(f"{candidate} {total}" + (f" ({', '.join(counts)})" if counts else ""))
    stderr().print(
        plain(
            f"exported every-eval-ever → {folder}: instance rows for scored units only; "
            f"left out (no valid grade, counted in each record): {'; '.join(parts)}"
        ),
        highlight=False,
        soft_wrap=True,
    )


def _aggregate(report: AuditReport, how: str) -> pl.DataFrame:
    """``--aggregate``: :func:`evalframe.aggregate` of the report as it is; its refusals are usage errors."""
    try:
        return aggregate(report, how=how)  # type: ignore[arg-type]
    except OptionError as exc:
        raise click.BadParameter(exc.reason, param_hint="--aggregate") from None


def _print_declared(table: pl.DataFrame, value: str, counts: str, fmt: str) -> None:
    """A declared aggregate as a table after the report (markdown, github, or the terminal's).

    ``value`` names the aggregated column (``estimate``, ``difference``), ``counts`` the count shown; the
    candidates the library left out (a non-empty ``missing_tasks``) are named under the table with the
    tasks they lack.
    """
    named = []
    if "missing_tasks" in table.columns:  # an aggregate of rates; a difference's sides are in every task
        lacks = pl.col("missing_tasks").list.len() > 0
        named = [
            f"{c} (lacks {', '.join(m)})" for c, m in table.filter(lacks).select(CANDIDATE, "missing_tasks").rows()
        ]
        table = table.filter(~lacks)
    caption = f"not aggregated (not audited in every task): {'; '.join(named)}" if named else None
    first = table.row(0, named=True) if table.height else None
    title = "declared aggregate"
    if first is not None:
        title += f" ({first['how']} of {first.get('rate', 'the paired difference')} across tasks)"
    null = "null" if fmt in ("markdown", "github") else NULL  # the terminal's one null symbol

    def shown(v: Any) -> str:
        return null if v is None else fmt_value(v)

    cells = [
        (
            " − ".join(str(r[k]) for k in (CANDIDATE, "baseline") if k in r),
            null if r[value] is None else f"{shown(r[value])} [{shown(r['ci_low'])}, {shown(r['ci_high'])}]",
            shown(r["se"]),
            ", ".join(f"{t} {fmt_value(w)}" for t, w in zip(r["tasks"], r["weights"], strict=True)),
            counts.format(**r),
        )
        for r in table.iter_rows(named=True)
    ]
    level = f"{float(first['confidence']):.0%} CI" if first else "CI"
    summed = " summed over tasks" if first is not None and first.get("how") == "macro" else ""  # not the estimate
    head = ("candidate", f"{value} [{level}]", "se", "weights", counts.replace("{", "").replace("}", "") + summed)
    if fmt in ("markdown", "github"):
        text = markdown_table(pl.DataFrame(cells, schema=list(head), orient="row"))
        click.echo(f"## {title}\n\n{text}\n" + (f"\n{markdown_text(caption)}\n" if caption else ""))
        return
    grid = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for name in head:
        grid.add_column(name)
    for row in cells:
        grid.add_row(*(plain(c) for c in row))
    stdout().print(grid)


def _print_aggregate(view: View | TasksView, table: pl.DataFrame, fmt: str, layout: TerminalLayout) -> None:
    """The audit's view, then its declared aggregate: one JSON document ``{"report", "aggregate"}`` for json.

    The aggregate is the library's table as it is: a candidate left out has its ``missing_tasks``.
    """
    if fmt == "json":
        doc = {"report": json.loads(render_json(view)), "aggregate": table.to_dicts()}
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    print_view_as(view, fmt, layout)
    numeric = table.height and table.item(0, "rate") == "mean_score"  # no pass or fail to count
    _print_declared(table, "estimate", "{scored}" if numeric else "{passed}/{scored}", fmt)


@click.command(
    "audit",
    epilog="\b\nExamples:\n  evalframe audit --plan plan.csv --results results.csv --candidates A,B\n"
    "  evalframe audit --plan plan.csv --results 'lake/**/*.parquet' --candidates A,B --slice task --out out/\n"
    "  evalframe audit --from inspect logs/*.eval --min-coverage 0.95 --format github >> $GITHUB_STEP_SUMMARY\n\n"
    + EXIT_CODES_HELP,
)
@input_options
@audit_options
@min_coverage_option
@click.option(
    "--export",
    nargs=2,
    type=(click.Choice(["every-eval-ever"]), click.Path(file_okay=False, path_type=Path)),
    default=None,
    metavar="FORMAT DIR",
    help="Also publish the audit in FORMAT to DIR (evalframe's own folder, as --out): counts and clustered intervals.",
)
@click.option(
    "--aggregate",
    "how",
    type=click.Choice(["macro", "micro"]),
    default=None,
    help="Also print a declared aggregate across tasks (two or more): macro, the mean of task rates (1/T each); "
    "micro, weighted by scored units (tasks graded alike only). Weights and a stratified interval are stated.",
)
def audit_command(
    out: Path | None,
    fmt: str,
    min_coverage: float | None,
    export: tuple[str, Path] | None,
    how: str | None,
    compact: bool | None,
    no_progress: bool,
    **kwargs: Any,
) -> None:
    """Audit a results ledger against a frozen plan.

    Either --plan and --results, or --from FORMAT followed by export files
    (e.g. `evalframe audit --from inspect logs/*.eval`).
    """
    inputs = input_paths(kwargs["paths"], kwargs["plan_path"], kwargs["results_paths"])
    if export is not None:
        if out is not None and out.resolve() == export[1].resolve():
            raise click.BadParameter("DIR must not be the --out folder", param_hint="--export")
        write_or_exit(lambda: check_output_folder(export[1], inputs=inputs), option="--export")
    with (
        progress_bars(show=not no_progress) as progress,
        build_report(out=out, fmt=fmt, progress=progress, **kwargs) as report,
    ):
        view = report.view(min_coverage=min_coverage)
        declared = None if how is None else _aggregate(report, how)
        if export is not None:
            _export(report, export[1], inputs)
        if out is not None:
            _write_report(report, out, None, view, inputs=inputs, min_coverage=min_coverage, progress=progress)
    if declared is None:
        print_view_as(view, fmt, layout_of(compact))
    else:
        _print_aggregate(view, declared, fmt, layout_of(compact))
    exit_on_failed_gate(view)


def _compared_view(
    report: AuditReport, task: str | None, comparison: Comparison, *, min_coverage: float | None, require_winner: bool
) -> tuple[AuditReport, View]:
    """``task``'s report (the report itself for one task) and the view of its comparison printed."""
    shown = task_report(report, task)
    view = shown.view(comparison, min_coverage=min_coverage)
    assert isinstance(view, View)  # a comparison's view is of one task
    if require_winner:  # a release gate like --min-coverage: every output says whether it passed
        gate = view.gate or Gate(min_coverage=None)
        view = replace(view, gate=replace(gate, verdict=comparison.verdict))
    return shown, view


def _print_task_sections(
    sections: list[tuple[str, View | str]], fmt: str, declared: pl.DataFrame | None, layout: TerminalLayout
) -> None:
    """Each task's comparison under its name, in the chosen ``--format``; a text says why a task is not compared.

    Then the declared aggregate of the paired difference (``--aggregate``), when asked: in json, the key
    ``aggregate`` beside ``tasks``, which maps each task to its document as the audit's json does.
    """
    if fmt == "json":
        doc = {
            task: json.loads(render_json(got)) if isinstance(got, View) else {"not_comparable": got}
            for task, got in sections
        }
        extra = {} if declared is None else {"aggregate": declared.to_dicts()}
        click.echo(json.dumps({"tasks": doc, **extra}, indent=2, default=str))
        return
    for task, got in sections:
        markdown = fmt in ("markdown", "github")
        if markdown:
            click.echo(f"## Task {markdown_code(task)}\n")
        else:
            stdout().rule(f"task {plain(task)}")
        if isinstance(got, View):
            print_view_as(got, fmt, layout)
        elif markdown:
            click.echo(f"Not comparable: {markdown_text(got)}\n")
        else:
            stdout().print(f"not comparable: {plain(got)}", highlight=False, soft_wrap=True)
    if declared is not None:
        _print_declared(declared, "difference", "{pairs_used} pairs", fmt)


def _exit_on_failed_task_gates(sections: list[tuple[str, View | str]], require_winner: bool) -> None:
    """Exit 3 when a task's gate failed; under ``--require-winner`` a task not compared fails it too."""
    failed = [
        f"task {task}: {'; '.join(got.gate.checks())}"
        for task, got in sections
        if isinstance(got, View) and got.gate is not None and not got.gate.passed
    ]
    failed += [f"task {task}: not comparable" for task, got in sections if require_winner and isinstance(got, str)]
    if failed:
        _gate_failed(" | ".join(failed))


def _print_family(family: Family, view: View, fmt: str) -> None:
    """``compare --candidate all``: one verdict per candidate, the multiplicity stated, in ``--format``."""
    table = family.table
    if fmt == "json":
        doc = {"multiplicity": family.multiplicity, "alpha": family.alpha, "comparisons": table.to_dicts()}
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    baseline = str(table.item(0, "baseline")) if table.height else ""
    title = f"{baseline} against each other candidate"
    if fmt in ("markdown", "github"):
        head = "###" if fmt == "github" else "#"
        click.echo(f"{head} {markdown_text(title)}\n\n{markdown_text(family.multiplicity)}.\n")
        click.echo(markdown_table(table.drop("baseline")) + "\n")
        return
    console = stdout()
    console.print(Text(visible(f"evalframe comparison: {title}"), style="bold"))
    console.print(Text(visible(view.subtitle), style="dim"))
    console.print(Text(visible(f"multiplicity: {family.multiplicity}."), style="bold"))
    console.print(family_table(table, console.width))


def _compare_all(
    report: AuditReport, *, fmt: str, require_winner: bool, alone: bool, task: str | None, options: dict[str, Any]
) -> None:
    """``compare --candidate all``: the baseline against every other candidate, Holm across them.

    ``alone``: one task, printed on stdout (no ``--out``, no ``--aggregate``); else a usage error. Exit 3
    under ``--require-winner`` unless every candidate's verdict after Holm is candidate_better. ``options``
    are :func:`~evalframe.compare.family.compare_each`'s.
    """
    if not alone:
        fail(
            "--candidate all compares one task on stdout: give --task NAME with several tasks, no --out, no --aggregate"
        )
    try:
        family = compare_each(report, task=task, **options)
    except ValueError as exc:
        fail(str(exc))
    view = task_report(report, task).view()
    assert isinstance(view, View)  # one task
    _print_family(family, view, fmt)
    if require_winner and not family.every_candidate_better:
        behind = family.table.filter(pl.col("family_verdict") != "candidate_better").get_column(CANDIDATE)
        _gate_failed(f"no supported win over the baseline for {', '.join(str(n) for n in behind.to_list())}")


def _family_asked(report: AuditReport, challenger: str) -> bool:
    """``--candidate all`` when no candidate is named ``all``: the family, as ``--each`` (else a name is a name).

    When a candidate is named ``all``, ``--candidate all`` compares it, and a note on stderr names ``--each``.
    """
    if challenger != "all":
        return False
    if "all" in report.summary.get_column(CANDIDATE).cast(pl.String).to_list():
        stderr().print("note: --candidate all names the candidate 'all' (--each compares every other candidate)")
        return False
    return True


def _task_sections(
    report: AuditReport,
    tasks: list[str],
    viewed: Callable[[str | None, Comparison], tuple[AuditReport, View]],
    *,
    out: Path | None,
    options: dict[str, Any],
) -> list[tuple[str, View | str]]:
    """Each task's view, or why it is not compared (:func:`~evalframe.compare.family.compare_by_task`).

    Exit 2 with ``--out`` (one comparison per folder) or on what the library refuses (a name in no task).
    """
    if out is not None:
        fail(
            f"--out holds one comparison and the inputs hold {len(tasks)} tasks ({', '.join(tasks)}): give --task NAME"
        )
    try:
        by_task = compare_by_task(report, **options)
    except ValueError as exc:
        fail(str(exc))
    return [(t, got if isinstance(got, str) else viewed(t, got)[1]) for t, got in by_task.items()]


@click.command(
    "compare",
    epilog="\b\nExamples:\n  evalframe compare --plan plan.csv --results results.csv --candidates A,B "
    "--baseline A --candidate B\n  evalframe compare --from lm-eval runs/ --baseline old --candidate new "
    "--require-winner --format github\n  evalframe compare --from lm-eval runs/ --baseline old --candidate new "
    "--task belief --out out/\n\n" + EXIT_CODES_HELP,
)
@input_options
@audit_options
@click.option("--baseline", required=True, help="The baseline candidate.")
@click.option(
    "--candidate",
    "challenger",
    default=None,
    help="The candidate compared against the baseline; all (when no candidate is named all): the same as --each.",
)
@click.option(
    "--each",
    is_flag=True,
    help="Compare the baseline with every other candidate, one verdict each, with Holm's adjustment (Holm 1979) "
    "of their exact McNemar p-values stated (one task, no --out). Instead of --candidate.",
)
@click.option(
    "--pairs",
    type=click.Choice(["complete_pairs", "missing_as_fail"]),
    default="complete_pairs",
    show_default=True,
    help="complete_pairs: drop pairs without a grade on both sides; missing_as_fail: an ungraded side fails.",
)
@click.option(
    "--task",
    default=None,
    metavar="NAME",
    help="Compare on this task only (needed with --out when the inputs hold several; else each task is compared "
    "on its own, in turn). Tasks are never pooled.",
)
@min_coverage_option
@click.option(
    "--require-winner",
    is_flag=True,
    help="Release gate: exit 3 unless the verdict is candidate_better (with --candidate all: unless every "
    "candidate's verdict after Holm is candidate_better).",
)
@click.option(
    "--aggregate",
    "how",
    type=click.Choice(["macro", "micro"]),
    default=None,
    help="With several tasks, also print the declared aggregate of the paired difference across them (macro: 1/T "
    "each; micro: by pairs used, tasks graded alike), with weights and a stratified interval; no verdict.",
)
@click.option(
    "--comparable-on",
    "comparable_on",
    multiple=True,
    metavar="KEY",
    help="A setting the runs must agree on (repeatable); given, only these keys are checked. Default: every key "
    "both exports record.",
)
@click.option(
    "--ignore-setting",
    "ignore_settings",
    multiple=True,
    metavar="KEY",
    help="A recorded setting declared not to matter (repeatable): a difference in it does not make the runs "
    "not comparable.",
)
def compare_command(
    out: Path | None,
    fmt: str,
    baseline: str,
    challenger: str | None,
    each: bool,
    pairs: str,
    task: str | None,
    min_coverage: float | None,
    require_winner: bool,
    how: str | None,
    compact: bool | None,
    no_progress: bool,
    comparable_on: tuple[str, ...],
    ignore_settings: tuple[str, ...],
    **kwargs: Any,
) -> None:
    """Compare a candidate against a baseline on paired units, with a verdict.

    The verdict is candidate_better, baseline_better, no_supported_winner or
    not_comparable (the runs record different settings, named; --comparable-on
    and --ignore-setting declare which matter; exit 3 under --require-winner),
    with its reasons: coverage gate, worst/best-case bounds, interval of the
    paired difference; the cases that flipped are listed by slice. When the
    inputs hold several tasks each task is compared on its own, in turn (or
    only --task NAME's); a task one side was not run on is "not comparable".
    """
    options = {k: kwargs[k] for k in ("alpha", "cases")}  # compare's and compare_each's own (the audit's confidence)
    options.update(pairs=pairs, min_coverage=min_coverage, comparable_on=list(comparable_on) or None)
    options.update(baseline=baseline, ignore_settings=ignore_settings)
    if each == (challenger is not None):
        fail("give either --candidate NAME (one comparison) or --each (the baseline against every other candidate)")
    challenger = challenger or ""  # with --each: no one candidate
    sections: list[tuple[str, View | str]] = []  # with several tasks: each task's view, or why it is not compared
    view: View | None = None
    declared: pl.DataFrame | None = None
    with (
        progress_bars(show=not no_progress) as progress,
        build_report(out=out, fmt=fmt, progress=progress, **kwargs) as report,
    ):
        tasks = [str(t) for t in report.meta.get("tasks", [])]
        viewed = partial(_compared_view, report, min_coverage=min_coverage, require_winner=require_winner)
        if each or _family_asked(report, challenger):  # one baseline against every other candidate, Holm across them
            alone = out is None and how is None and (task is not None or len(tasks) < 2)
            _compare_all(report, fmt=fmt, require_winner=require_winner, alone=alone, task=task, options=options)
            return
        if task is None and len(tasks) >= 2:
            sections = _task_sections(report, tasks, viewed, out=out, options=options | {"candidate": challenger})
        if sections and how is not None:
            try:
                declared = aggregate_difference(
                    report.by_task(),
                    baseline=baseline,
                    candidate=challenger,
                    how=how,  # type: ignore[arg-type]
                    pairs=pairs,  # type: ignore[arg-type]
                )
            except AggregateError as exc:  # a side lacks a task: named with the task, not the flag
                fail(exc.reason)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--aggregate") from None
        if not sections:
            if how is not None:
                raise click.BadParameter(
                    "an aggregate is across two or more tasks; these inputs hold one, or --task names one",
                    param_hint="--aggregate",
                )
            try:
                comparison = compare(report, candidate=challenger, task=task, **options)
            except ValueError as exc:
                fail(str(exc))
            shown, view = viewed(task, comparison)
            if out is not None:
                # Every table plus comparison/pairs Parquet, and report.md/.json/.html with the verdict.
                inputs = input_paths(kwargs["paths"], kwargs["plan_path"], kwargs["results_paths"])
                _write_report(shown, out, comparison, view, inputs=inputs, min_coverage=min_coverage, progress=progress)
    if view is None:
        _print_task_sections(sections, fmt, declared, layout_of(compact))
        _exit_on_failed_task_gates(sections, require_winner)
        return
    print_view_as(view, fmt, layout_of(compact))
    exit_on_failed_gate(view)
