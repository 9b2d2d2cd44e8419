"""Command-line interface: a thin layer over the library.

Exit codes: 0 audited, 1 batch refused (problems printed as a table on
stderr), 2 usage or input error, 3 a declared release gate failed.
"""

from __future__ import annotations

import contextlib
import gc
import math
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from evalframe.audit import AUTO_PARTITION_ROWS, audit
from evalframe.cli_power import power_command
from evalframe.columns import CANDIDATE, EXEC_FAILURES
from evalframe.compare import compare
from evalframe.errors import AuditRefused, EvalframeError, OutputFolderError
from evalframe.importers import Imported
from evalframe.importers._kit import ImportRefused, declare
from evalframe.load import LIMIT_FLAGS, Limits, Loaded, limits, load
from evalframe.plan import Plan
from evalframe.progress import Progress as ProgressCallback
from evalframe.read import plan_units
from evalframe.report import (
    STOP_SIGNALS,
    AuditReport,
    View,
    build_refusal,
    check_output_folder,
    print_refusal,
    print_view,
    render_github,
    render_json,
    render_markdown,
    write_output,
    write_refusal,
)
from evalframe.report.format import visible as _visible
from evalframe.report.refusal import refusal_json

F = TypeVar("F", bound=Callable[..., Any])
PROBLEM_ROWS_SHOWN = 50

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_GATE = 0, 1, 2, 3


def _console(*, stderr: bool) -> Console:
    probe = Console(stderr=stderr)
    # Not a terminal (CI logs, pipes): use a wide page instead of rich's 80 columns.
    return Console(stderr=stderr, width=None if probe.is_terminal else 200)


def _stdout() -> Console:
    return _console(stderr=False)


def _stderr() -> Console:
    return _console(stderr=True)


def _plain(text: str) -> str:
    """Input-derived ``text`` ready to go inside a rich markup string: control characters and markup escaped."""
    return escape(_visible(text))


def print_problems(problems: Any, console: Console, counts: Any = None) -> None:
    """Print a refusal's problems: counts by kind, then the first rows of each refusing kind.

    ``counts`` (kind, refusing, count) counts every problem when ``problems`` holds only the first rows of
    each kind (``AuditRefused.problem_counts``).
    """
    print_refusal(problems, console, counts=counts)


# --- progress (state lives here, in the command; the library only calls back) ---------------------------


@contextlib.contextmanager
def progress_bars(console: Console | None = None) -> Iterator[ProgressCallback | None]:
    """Rich progress bars on stderr while the block runs, when stderr is a terminal; else no callback.

    The callback the library receives (``progress(stage, done, total)``, see :mod:`evalframe.progress`)
    adds one bar per stage (inputs read, candidates audited, outputs written) and moves it; bars stay on
    the screen when the block ends. Not on a terminal (CI logs, pipes, files), nothing is drawn.
    """
    console = console or Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    tasks: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bars.add_task(stage, total=total)
        bars.update(tasks[stage], completed=done, total=total)

    with bars:
        yield update


def _fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    _stderr().print(f"[bold red]error[/]: {_plain(message)}", highlight=False, soft_wrap=True)  # one line
    sys.exit(code)


def _split_list(text: str | None) -> list[str] | None:
    return None if text is None else text.split(",")


def _parse_bins(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, Any]:
    bins: dict[str, Any] = {}
    for value in values:
        name, sep, spec = value.partition("=")
        if not sep or not name or not spec:
            raise click.BadParameter(f"expected COL=EDGE,EDGE,... or COL=q<k>, got {value!r}")
        if spec.startswith("q"):
            bins[name] = spec
            continue
        try:
            bins[name] = [float(e) for e in spec.split(",")]
        except ValueError:
            raise click.BadParameter(f"bin edges must be numbers, got {spec!r}") from None
    return bins


def audit_options(func: F) -> F:
    """Options shared by commands that run an audit."""
    options = [
        click.option(
            "--retry",
            type=click.Choice(["first", "last_allowed", "every"]),
            default="first",
            show_default=True,
            help="Declared retry policy: which attempt of a unit counts.",
        ),
        click.option(
            "--max-attempts", type=click.IntRange(min=1), default=None, help="Highest allowed attempt number."
        ),
        click.option(
            "--retry-on",
            default=",".join(EXEC_FAILURES),
            show_default=True,
            help="Comma-separated exec statuses after which a retry is allowed.",
        ),
        click.option("--strict-retries", is_flag=True, help="Make retry flags refuse the batch."),
        click.option(
            "--reducer",
            default="mean",
            show_default=True,
            help="How trials of a case reduce to the case-level rate: mean, any (pass@k), all, majority, at_least:K.",
        ),
        click.option(
            "--extra-columns",
            "extra_columns",
            default=None,
            callback=lambda ctx, param, value: tuple(_split_list(value) or ()),
            help="Comma-separated ledger columns carried untouched to units/attempts (e.g. output,latency).",
        ),
        click.option(
            "--missing",
            type=click.Choice(["report", "refuse"]),
            default="report",
            show_default=True,
            help="report: missing units are counted as missing; refuse: any missing unit refuses the batch.",
        ),
        click.option(
            "--grade",
            type=click.Choice(["binary", "numeric"]),
            default="binary",
            show_default=True,
            help="binary: grades are exactly 0 or 1; numeric: scores in --score-range.",
        ),
        click.option(
            "--score-range",
            nargs=2,
            type=float,
            default=(0.0, 1.0),
            show_default=True,
            help="Inclusive bounds of a numeric score.",
        ),
        click.option(
            "--pass-threshold", type=float, default=None, help="Numeric score at or above which a unit passes."
        ),
        click.option(
            "--slice", "slices", multiple=True, help="Plan column to break funnel and missingness down by (repeatable)."
        ),
        click.option(
            "--bins",
            "bins",
            multiple=True,
            callback=_parse_bins,
            help="Bins of a numeric slice: COL=EDGE,EDGE,... or COL=q<k> for k quantile bins (repeatable).",
        ),
        click.option(
            "--alpha",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.05,
            show_default=True,
            help="Significance level of the selective-missingness test.",
        ),
        click.option(
            "--partition-by",
            type=click.Choice(["auto", "candidate", "none"]),
            default="auto",
            show_default=True,
            help="Audit candidate by candidate (up to four at a time, 6M ledger rows at most), writing units and "
            "attempts out beyond 640 MiB (bounded memory on large lakes; same result), or the whole batch at once "
            f"(none); auto: candidate by candidate from {AUTO_PARTITION_ROWS:,} ledger rows or planned units on.",
        ),
        click.option(
            "--confidence",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.95,
            show_default=True,
            help="Two-sided coverage of every interval.",
        ),
        click.option(
            "--engine",
            type=click.Choice(["polars", "spark"]),
            default="polars",
            show_default=True,
            help="Where the row work runs: polars on this machine, or Spark (--results: Parquet paths or a table; "
            "needs pip install 'evalframe[spark]'; the JVM alone takes 30+ s to start).",
        ),
        click.option("--spark-remote", default=None, help="Spark Connect address sc://HOST:PORT (default: local[2])."),
        click.option(
            "--spark-tables",
            default=None,
            help="Folder (or URI) Spark writes the full units, attempts and problems tables to, as Parquet.",
        ),
        click.option(
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Write every table as Parquet plus report.md, report.json and report.html here: a new or empty "
            "folder, or an earlier evalframe output (replaced whole; other files are refused).",
        ),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(["table", "json", "markdown", "github"]),
            default="table",
            show_default=True,
            help="What to print on stdout: a terminal table, JSON (full precision), the Markdown report, or github: "
            "a short Markdown summary (verdict, coverage, gate) for $GITHUB_STEP_SUMMARY.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


# --- rendering: every format lays out one view (evalframe.report.view) ------------------------------------


def print_view_as(view: View, fmt: str) -> None:
    """Print the view on stdout in the chosen ``--format``."""
    if fmt == "json":
        click.echo(render_json(view))
    elif fmt == "markdown":
        click.echo(render_markdown(view), nl=False)
    elif fmt == "github":
        click.echo(render_github(view), nl=False)
    else:
        print_view(view, _stdout())


def print_gate(view: View) -> None:
    """On a failed ``--min-coverage`` gate, say who is below it on stderr (exit 3 follows)."""
    if view.gate is None or view.gate.passed:
        return
    names = ", ".join(f"{c} ({v:.3g})" for c, v in view.gate.below)
    _stderr().print(f"[bold red]gate failed[/]: scored_coverage below {view.gate.min_coverage:g}: {_plain(names)}")


IMPORT_FORMATS = [
    "inspect",
    "lm-eval",
    "helm",
    "promptfoo",
    "openai-evals",
    "evalscope",
    "ragas",
    "deepeval",
    "lighteval",
    "every-eval-ever",
]
#: Formats whose case id may come from a declared column (--id-column) instead of the question text.
ID_COLUMN_FORMATS: Final = ("ragas", "deepeval")
#: The score an export reads under --grade numeric when --score is not given (its default is a pass/fail).
NUMERIC_SCORE: Final = {"promptfoo": "score", "every-eval-ever": "score"}


def _import(fmt: str, paths: Sequence[str], score: str | None, id_column: str | None = None) -> Imported:
    from evalframe.importers import deepeval, ragas, registry

    if id_column is None:
        return registry()[fmt]([Path(p) for p in paths], score=score)
    if fmt not in ID_COLUMN_FORMATS:
        raise click.UsageError(f"--id-column names the case column of --from {' or '.join(ID_COLUMN_FORMATS)} only")
    read = ragas.read if fmt == "ragas" else deepeval.read
    return read([Path(p) for p in paths], score=score, id_column=id_column)


def input_options(func: F) -> F:
    """Options that say where the plan and the ledger come from."""
    options = [
        click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path)),
        click.option(
            "--plan",
            "plan_path",
            type=click.Path(exists=True, dir_okay=True, path_type=Path),
            default=None,
            help="Plan: CSV, JSON Lines or Parquet with a case_id column (or a units table with candidate).",
        ),
        click.option(
            "--results",
            "results_paths",
            multiple=True,
            help="Ledger: CSV, JSON Lines, Parquet file, directory or glob (repeatable).",
        ),
        click.option(
            "--from",
            "from_format",
            type=click.Choice(IMPORT_FORMATS),
            default=None,
            help="Read plan and ledger from other tools' exports given as PATHS (instead of --plan/--results).",
        ),
        click.option(
            "--score",
            "score_name",
            default=None,
            help="With --from: the scorer / metric / stat to read (default: the importer's).",
        ),
        click.option("--id-column", default=None, help="With --from ragas|deepeval: the CSV column naming the cases."),
        click.option("--candidates", default=None, help="Comma-separated planned candidates, e.g. A,B (exact)."),
        click.option(
            "--trials",
            type=click.IntRange(min=1),
            default=None,
            help="Trials per (candidate, case) [default: 1; with --from, what the export planned].",
        ),
        click.option(
            "--run-id", default=None, help="Require every row to come from this run (with --from: one in the export)."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def build_report(
    *,
    paths: tuple[Path, ...],
    plan_path: Path | None,
    results_paths: tuple[str, ...],
    from_format: str | None,
    score_name: str | None,
    id_column: str | None,
    candidates: str | None,
    trials: int | None,
    run_id: str | None,
    out: Path | None,
    retry_on: str,
    fmt: str = "table",
    progress: ProgressCallback | None = None,
    **options: Any,
) -> AuditReport:
    """Read the inputs and audit them; on refusal print the problems and exit 1, on bad input exit 2."""
    check_options(
        candidates=candidates,
        slices=options["slices"],
        bins=options["bins"],
        grade=options["grade"],
        score_range=options["score_range"],
        pass_threshold=options["pass_threshold"],
    )
    inputs = _inputs(paths, plan_path, results_paths)
    if out is not None:  # refused before the audit runs: a folder that is not evalframe's own is never touched
        _write(lambda: check_output_folder(out, inputs=inputs))
    options["retry_on"] = retry_on.split(",")
    options["partition_by"] = None if options["partition_by"] == "none" else options["partition_by"]
    try:
        if from_format is not None:
            if plan_path is not None or results_paths or not paths:
                raise click.UsageError("--from FORMAT takes export PATHS and no --plan/--results")
            imported = declare(
                _import(
                    from_format,
                    [str(p) for p in paths],
                    NUMERIC_SCORE.get(from_format)
                    if score_name is None and options["grade"] == "numeric"
                    else score_name,
                    id_column,
                ),
                candidates=_split_list(candidates),
                trials=trials,
                run_id=run_id,
            )
            plan = imported.plan
            results: Loaded | list[str] = Loaded(
                imported.ledger.lazy(), imported.notes, ", ".join(str(p) for p in paths)
            )
            options["provenance"] = {"imported_from": from_format, "exports": imported.info}
        else:
            if plan_path is None or not results_paths or paths:
                raise click.UsageError("give --plan and --results (or --from FORMAT PATHS)")
            if score_name is not None:
                raise click.UsageError("--score names the scorer of an export: it needs --from FORMAT")
            if id_column is not None:
                raise click.UsageError("--id-column names a column of an export: it needs --from ragas or deepeval")
            check_candidates_against_plan(plan_path, candidates)
            plan = Plan.from_file(
                plan_path, candidates=_split_list(candidates), trials=1 if trials is None else trials, run_id=run_id
            )
            results = list(results_paths)
        return audit(plan, results, progress=progress, **options)
    except AuditRefused as exc:
        print_problems(exc.problems, _stderr(), exc.problem_counts)
        if fmt == "json":  # machine readers get the refusal on stdout too: counts, then kind, line, key per kind
            click.echo(refusal_json(build_refusal(exc.problems, counts=exc.problem_counts)))
        if out is not None:  # problems.parquet holds every problem, streamed from the refusal's files
            refused, folder, command = exc, out, f"evalframe {click.get_current_context().info_name}"
            _write(
                lambda: write_refusal(
                    refused.problems,
                    folder,
                    command=command,
                    inputs=inputs,
                    progress=progress,
                    counts=refused.problem_counts,
                    every=refused.all_problems(),
                )
            )
        sys.exit(EXIT_REFUSED)
    except (EvalframeError, ValueError) as exc:
        _fail(str(exc))
    except OSError as exc:  # inputs are read by the loaders (InputFormatError): this is the audit's own files
        where = f" {exc.filename}" if exc.filename else ""
        _fail(f"cannot write the audit's temporary files{where}: {exc.strerror or exc}")


def check_candidates_against_plan(plan_path: Path, candidates: str | None) -> None:
    """Usage errors (exit 2, with a hint) for --candidates against the plan's columns, before any ledger is read.

    A plan without a ``candidate`` column is crossed with the candidates named by --candidates; a plan with
    one (a units table, e.g. ``evalframe import``'s plan.parquet) names its own. Only the plan's column
    names are read here; a plan that cannot be read is left for :meth:`Plan.from_file` to report.
    """
    try:
        names = load(plan_path).frame.collect_schema().names()
    except (EvalframeError, OSError, ValueError):
        return
    if CANDIDATE not in names and candidates is None:
        msg = (
            f"the plan {plan_path} has no candidate column, so name the candidates: --candidates A,B "
            "(comma-separated, exactly as in the ledger's candidate column)"
        )
        raise click.UsageError(msg)
    if CANDIDATE in names and candidates is not None:
        msg = (
            f"the plan {plan_path} has a candidate column (one row per planned unit), which names the candidates: "
            "drop --candidates"
        )
        raise click.UsageError(msg)


def _inputs(paths: Sequence[Path], plan_path: Path | None, results_paths: Sequence[str]) -> list[str]:
    """Every path and glob a command reads (none may lie in its --out)."""
    return [*(str(p) for p in paths), *([] if plan_path is None else [str(plan_path)]), *results_paths]


def _write(action: Callable[[], object]) -> None:
    """Run a check or write of --out; a refused or unwritable folder is an input error (exit 2), not a traceback.

    A refusal prints each path in the way on its own line, then the reason.
    """
    try:
        action()
    except OutputFolderError as exc:
        console = _stderr()
        for path in exc.foreign[:PROBLEM_ROWS_SHOWN]:
            console.print(Text(path), highlight=False, soft_wrap=True)
        if len(exc.foreign) > PROBLEM_ROWS_SHOWN:
            console.print(f"… and {len(exc.foreign) - PROBLEM_ROWS_SHOWN} more", highlight=False)
        console.print(Text.assemble(("error", "bold red"), f": {exc}"), highlight=False, soft_wrap=True)
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        _fail(f"cannot write the output folder: {exc.strerror or exc} ({exc.filename or ''})")


def check_options(
    *,
    candidates: str | None,
    slices: Sequence[str],
    bins: dict[str, Any],
    grade: str,
    score_range: tuple[float, float],
    pass_threshold: float | None,
) -> None:
    """Refuse contradictory or malformed flags as usage errors (exit 2) before reading any file."""
    if candidates is not None:
        names = candidates.split(",")
        if any(n == "" for n in names):
            raise click.BadParameter(f"an empty name in {candidates!r}", param_hint="--candidates")
        if any(n.strip() != n for n in names):
            raise click.BadParameter(
                f"white space around a name in {candidates!r} (names are exact)", param_hint="--candidates"
            )
        if len(set(names)) != len(names):
            raise click.BadParameter(f"a name is repeated in {candidates!r}", param_hint="--candidates")
    low, high = score_range
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise click.BadParameter(f"need finite LOW < HIGH, got {low} {high}", param_hint="--score-range")
    if pass_threshold is not None:
        if grade != "numeric":
            raise click.BadParameter("a pass threshold applies to --grade numeric only", param_hint="--pass-threshold")
        if not low <= pass_threshold <= high:
            raise click.BadParameter(
                f"{pass_threshold} is outside --score-range {low} {high}", param_hint="--pass-threshold"
            )
    if "case_id" in slices:
        raise click.BadParameter("case_id is the unit's identity, not a slice", param_hint="--slice")
    unsliced = sorted(set(bins) - set(slices))
    if unsliced:
        raise click.BadParameter(f"bins given for {', '.join(unsliced)} without --slice", param_hint="--bins")


def _limit_option(name: str, help_text: str) -> Callable[[F], F]:
    """A group option setting one of :class:`~evalframe.load.Limits` (also from ``EVALFRAME_MAX_...``)."""
    flag = LIMIT_FLAGS[name]
    return click.option(
        flag,
        name,
        type=click.IntRange(min=1),
        default=getattr(Limits(), name),
        show_default=True,
        envvar="EVALFRAME_" + flag.removeprefix("--").replace("-", "_").upper(),
        help=help_text,
    )


#: Exit codes, shown in every command's --help.
EXIT_CODES_HELP: Final = (
    "\b\nExit codes:\n  0  audited (or compared)\n  1  batch refused: the problems are printed (and written to --out)\n"
    "  2  usage or input error (a hint says what to change)\n  3  a declared release gate failed "
    "(--min-coverage, --require-winner)"
)

MIN_COVERAGE_HELP: Final = (
    "Release gate: exit 3 when a candidate's scored_coverage (scored / planned) is below this fraction; in "
    "compare, either compared side's, and the verdict's coverage check uses it too (0.95 when not given)."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(package_name="evalframe")
@_limit_option("line_bytes", "Longest line of a CSV / JSON Lines input, in bytes (longer: exit 2).")
@_limit_option("json_depth", "Deepest nesting of arrays and objects in JSON input (deeper: exit 2).")
@_limit_option("member_bytes", "Largest decompressed archive member (.eval), in bytes.")
@_limit_option("archive_bytes", "Largest total of an archive's decompressed members, in bytes (larger: exit 2).")
def main(**limits_given: int) -> None:
    """Audit AI evaluation results against a frozen plan before anyone believes a score.

    \b
    Examples:
      evalframe audit --plan plan.csv --results results.csv --candidates A,B
      evalframe audit --from inspect logs/*.eval --out report/
      evalframe compare --plan plan.csv --results lake/ --candidates A,B --baseline A --candidate B
      evalframe import lm-eval results.json samples.jsonl --out imported/

    Limits (SPEC §6b) go before the command: `evalframe --max-line-bytes 268435456 audit ...`.
    """
    click.get_current_context().with_resource(limits(**limits_given))


main.add_command(power_command)  # evalframe power (SPEC §6a), in its own module


def _min_coverage_option(func: F) -> F:
    return click.option("--min-coverage", type=click.FloatRange(0, 1), default=None, help=MIN_COVERAGE_HELP)(func)


@main.command(
    "audit",
    epilog="\b\nExamples:\n  evalframe audit --plan plan.csv --results results.csv --candidates A,B\n"
    "  evalframe audit --plan plan.csv --results 'lake/**/*.parquet' --candidates A,B --slice task --out out/\n"
    "  evalframe audit --from inspect logs/*.eval --min-coverage 0.95 --format github >> $GITHUB_STEP_SUMMARY\n\n"
    + EXIT_CODES_HELP,
)
@input_options
@audit_options
@_min_coverage_option
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
    inputs = _inputs(kwargs["paths"], kwargs["plan_path"], kwargs["results_paths"])
    if export is not None:
        if out is not None and out.resolve() == export[1].resolve():
            raise click.BadParameter("DIR must not be the --out folder", param_hint="--export")
        _write(lambda: check_output_folder(export[1], inputs=inputs))
    with progress_bars() as progress:
        report = build_report(out=out, fmt=fmt, progress=progress, **kwargs)
        view = report.view(min_coverage=min_coverage)
        if export is not None:
            from evalframe.importers.every_eval_ever import ExportError, write

            try:
                _write(lambda: write(report, export[1], inputs=inputs, command="evalframe audit --export"))
            except ExportError as exc:
                _fail(str(exc))
        if out is not None:
            command = "evalframe audit"
            _write(
                lambda: report.write(out, inputs=inputs, command=command, min_coverage=min_coverage, progress=progress)
            )
    print_view_as(view, fmt)
    if view.gate is not None and not view.gate.passed:
        print_gate(view)
        sys.exit(EXIT_GATE)


@main.command(
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
@_min_coverage_option
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
    with progress_bars() as progress:
        report = build_report(out=out, fmt=fmt, progress=progress, **kwargs)
        try:
            comparison = compare(
                report,
                baseline=baseline,
                candidate=challenger,
                pairs=pairs,  # type: ignore[arg-type]
                min_coverage=0.95 if min_coverage is None else min_coverage,
                confidence=kwargs["confidence"],
                alpha=kwargs["alpha"],
            )
        except ValueError as exc:
            _fail(str(exc))
        view = report.view(comparison, min_coverage=min_coverage)
        if out is not None:
            # Every table plus comparison/pairs Parquet, and report.md/.json/.html with the verdict.
            inputs = _inputs(kwargs["paths"], kwargs["plan_path"], kwargs["results_paths"])
            _write(
                lambda: report.write(
                    out,
                    comparison=comparison,
                    inputs=inputs,
                    command="evalframe compare",
                    min_coverage=min_coverage,
                    progress=progress,
                )
            )
    print_view_as(view, fmt)
    if view.gate is not None and not view.gate.passed:
        print_gate(view)
        sys.exit(EXIT_GATE)
    if require_winner and comparison.verdict != "candidate_better":
        _stderr().print(f"[bold red]gate failed[/]: verdict is {comparison.verdict}, not candidate_better")
        sys.exit(EXIT_GATE)


@main.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(IMPORT_FORMATS))
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for plan.parquet, ledger.parquet and notes.parquet: new, empty, or an earlier evalframe output.",
)
@click.option("--score", "score_name", default=None, help="The scorer / metric / stat to read.")
@click.option("--id-column", default=None, help="ragas, deepeval: the CSV column naming the cases.")
def import_command(fmt: str, paths: tuple[Path, ...], out: Path, score_name: str | None, id_column: str | None) -> None:
    """Convert exports of another tool into plan.parquet + ledger.parquet (+ notes.parquet).

    The plan is what the export says was planned; the ledger is the rows it
    holds. Audit them with `evalframe audit --plan OUT/plan.parquet --results
    OUT/ledger.parquet`. Exit 1 when a file could not be read (its problems
    are in notes.parquet and on stderr).
    """
    console = _stderr()
    inputs, command = [str(p) for p in paths], f"evalframe import {fmt}"
    _write(lambda: check_output_folder(out, inputs=inputs))
    try:
        imported = _import(fmt, [str(p) for p in paths], score_name, id_column)
    except ImportRefused as exc:
        # A file that could not be read leaves only its notes: no plan or ledger that looks complete.
        notes = exc.all_problems().collect()
        _write(lambda: write_output(out, {"notes": notes}, command=command, outcome="refused", inputs=inputs))
        console.print(f"import refused: {notes.height} note(s) → {out}", highlight=False)
        print_problems(notes, console)
        sys.exit(EXIT_REFUSED)
    except EvalframeError as exc:
        _fail(str(exc))
    planned = plan_units(imported)
    tables = {"plan": planned, "ledger": imported.ledger, "notes": imported.notes}
    _write(lambda: write_output(out, tables, command=command, outcome="imported", inputs=inputs))
    console.print(
        f"imported {len(paths)} file(s): {planned.height} planned units, {imported.ledger.height} ledger rows, "
        f"{imported.notes.height} note(s) → {out}",
        highlight=False,
    )


def _stop(signum: int, frame: object) -> NoReturn:
    """Signal handler: leave as ``sys.exit`` does, so ``finally`` blocks and exit handlers still run.

    Later stop signals are ignored from here on: raised again while the clean-up waits for a query or a
    thread, they would cut it short (SIGKILL still ends the process).
    """
    for other in STOP_SIGNALS:
        if signal.getsignal(other) is _stop:
            signal.signal(other, signal.SIG_IGN)
    print(f"evalframe: stopped by {signal.Signals(signum).name}", file=sys.stderr)
    sys.exit(128 + signum)


def run() -> None:
    """The ``evalframe`` command: :func:`main` in a process of its own.

    Everything imported so far lives until the process ends, so it is frozen out of the garbage collector
    first (``gc.freeze``): Python's last collection at exit otherwise walks every object of pandas and
    pandera, about 0.3 s of each run. Only the command does this; ``main`` called in a process that goes
    on (tests, notebooks) leaves the collector as it is.

    SIGINT (Ctrl-C) and SIGTERM (a CI runner cancelling a job; :data:`~evalframe.report.STOP_SIGNALS`)
    exit with 128 + the signal's number, 130 and 143 (the shell's convention), never with an exit
    code of the contract (click turns Ctrl-C into 1, the code of a refused batch), and only after the
    audit's temporary folder is removed: SIGTERM's default action ends the process with no clean-up at
    all. Python runs the handler between two bytecodes, so a signal that arrives during one long query
    takes effect when the query returns; the exchange that puts the new ``--out`` folder in place finishes
    first (see :func:`~evalframe.report.write_output`). A signal the process was started ignoring (SIGINT
    of a background job) stays ignored. Before this runs, while Python imports the command (about
    0.5 s, nothing written yet), and after it, as Python shuts down, a signal has its default action.
    """
    gc.freeze()
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _stop)
    main()


if __name__ == "__main__":  # pragma: no cover
    run()
