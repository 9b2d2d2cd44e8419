"""``evalframe audit`` and ``evalframe compare``: audit a ledger against its plan, then print and write it."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from evalframe.cli.exits import EXIT_GATE, fail, plain, stderr, stdout, write_or_exit
from evalframe.cli.inputs import build_report, input_paths
from evalframe.cli.options import EXIT_CODES_HELP, audit_options, input_options, min_coverage_option
from evalframe.cli.progress import progress_bars
from evalframe.cli.signals import hold_stop_signals
from evalframe.columns import CANDIDATE, OUTCOME, UNITS
from evalframe.compare import Comparison, compare
from evalframe.progress import Progress
from evalframe.report import (
    AuditReport,
    View,
    check_output_folder,
    render_github,
    render_json,
    render_markdown,
)
from evalframe.report.terminal import print_view
from evalframe.report.view import Gate


def print_view_as(view: View, fmt: str) -> None:
    """Print the view on stdout in the chosen ``--format`` (every format lays out one view)."""
    if fmt == "json":
        click.echo(render_json(view))
    elif fmt == "markdown":
        click.echo(render_markdown(view), nl=False)
    elif fmt == "github":
        click.echo(render_github(view), nl=False)
    else:
        print_view(view, stdout())


def exit_on_failed_gate(view: View) -> None:
    """On a failed release gate (``--min-coverage``, ``--require-winner``), say which check failed and exit 3."""
    if view.gate is None or view.gate.passed:
        return
    stderr().print(f"[bold red]gate failed[/]: {plain('; '.join(view.gate.checks()))}")
    sys.exit(EXIT_GATE)


def _write_report(
    report: AuditReport,
    out: Path,
    comparison: Comparison | None,
    view: View,
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
def audit_command(
    out: Path | None, fmt: str, min_coverage: float | None, export: tuple[str, Path] | None, **kwargs: Any
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
    with progress_bars() as progress, build_report(out=out, fmt=fmt, progress=progress, **kwargs) as report:
        view = report.view(min_coverage=min_coverage)
        if export is not None:
            _export(report, export[1], inputs)
        if out is not None:
            _write_report(report, out, None, view, inputs=inputs, min_coverage=min_coverage, progress=progress)
    print_view_as(view, fmt)
    exit_on_failed_gate(view)


@click.command(
    "compare",
    epilog="\b\nExamples:\n  evalframe compare --plan plan.csv --results results.csv --candidates A,B "
    "--baseline A --candidate B\n  evalframe compare --from lm-eval runs/ --baseline old --candidate new "
    "--require-winner --format github\n\n" + EXIT_CODES_HELP,
)
@input_options
@audit_options
@click.option("--baseline", required=True, help="The baseline candidate.")
@click.option("--candidate", "challenger", required=True, help="The candidate compared against the baseline.")
@click.option(
    "--pairs",
    type=click.Choice(["complete_pairs", "missing_as_fail"]),
    default="complete_pairs",
    show_default=True,
    help="complete_pairs: drop pairs without a grade on both sides; missing_as_fail: an ungraded side fails.",
)
@min_coverage_option
@click.option("--require-winner", is_flag=True, help="Release gate: exit 3 unless the verdict is candidate_better.")
def compare_command(
    out: Path | None,
    fmt: str,
    baseline: str,
    challenger: str,
    pairs: str,
    min_coverage: float | None,
    require_winner: bool,
    **kwargs: Any,
) -> None:
    """Compare a candidate against a baseline on paired units, with a verdict.

    The verdict is candidate_better, baseline_better or no_supported_winner,
    with its reasons: coverage gate, worst/best-case bounds, interval of the
    paired difference; the cases that flipped are listed by slice.
    """
    with progress_bars() as progress, build_report(out=out, fmt=fmt, progress=progress, **kwargs) as report:
        try:
            comparison = compare(
                report,
                baseline=baseline,
                candidate=challenger,
                pairs=pairs,  # type: ignore[arg-type]
                min_coverage=0.95 if min_coverage is None else min_coverage,
                confidence=kwargs["confidence"],
                alpha=kwargs["alpha"],
                cases=kwargs["cases"],
            )
        except ValueError as exc:
            fail(str(exc))
        view = report.view(comparison, min_coverage=min_coverage)
        if require_winner:  # a release gate like --min-coverage: every output says whether it passed
            gate = view.gate or Gate(min_coverage=None)
            view = replace(view, gate=replace(gate, verdict=comparison.verdict))
        if out is not None:
            # Every table plus comparison/pairs Parquet, and report.md/.json/.html with the verdict.
            inputs = input_paths(kwargs["paths"], kwargs["plan_path"], kwargs["results_paths"])
            _write_report(report, out, comparison, view, inputs=inputs, min_coverage=min_coverage, progress=progress)
    print_view_as(view, fmt)
    exit_on_failed_gate(view)
