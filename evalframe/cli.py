"""Command-line interface: a thin layer over the library.

Exit codes: 0 audited, 1 batch refused (problems printed as a table on
stderr), 2 usage or input error, 3 a declared release gate failed.
"""

from __future__ import annotations

import gc
import json
import math
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

import click
import polars as pl
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from evalframe.audit import AUTO_PARTITION_ROWS, audit
from evalframe.columns import CANDIDATE, EXEC_FAILURES, KIND, REFUSING
from evalframe.compare import compare
from evalframe.errors import AuditRefused, EvalframeError, OutputFolderError
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS
from evalframe.importers import Imported
from evalframe.importers._kit import ImportRefused, declare
from evalframe.load import LIMIT_FLAGS, Limits, Loaded, limits
from evalframe.plan import Plan
from evalframe.report import STOP_SIGNALS, AuditReport, check_output_folder, write_output, write_refusal
from evalframe.slices import missingness_shown

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


#: Control characters (C0, DEL, C1) shown as Python escapes: a newline in an id must not start a table row, and
#: an ESC must not reach the terminal as the start of an escape sequence.
_CONTROL: Final = {i: repr(chr(i))[1:-1] for i in (*range(0x20), *range(0x7F, 0xA0))}


def _visible(text: str) -> str:
    r"""``text`` with its control characters written as escapes (a newline as ``\n``), else as it is.

    Examples
    --------
    >>> print(_visible("line\nbreak\x1b[31m"))
    line\nbreak\x1b[31m
    """
    return text.translate(_CONTROL)


def _plain(text: str) -> str:
    """Input-derived ``text`` ready to go inside a rich markup string: control characters and markup escaped."""
    return escape(_visible(text))


def _frame_table(frame: pl.DataFrame, title: str) -> Table:
    """A rich table of ``frame``; titles, names and cells are plain :class:`~rich.text.Text`, never markup.

    Ids come from the input: ``test_add[int-1]`` must print as written, and an
    id such as ``a[/x]b`` must not be read as a closing tag.
    """
    table = Table(title=Text(title), title_justify="left")
    for name in frame.columns:
        table.add_column(Text(_visible(name)), justify="right" if frame.schema[name].is_numeric() else "left")
    for row in frame.iter_rows():
        cells = ("null" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row)
        table.add_row(*[Text(_visible(c)) for c in cells])
    return table


#: Each rate's formula, shown next to its name.
FORMULAS = {
    "completion_rate": "completed / planned",
    "scored_coverage": "scored / planned",
    "pass_rate_scored": "passed / scored",
    "pass_rate_planned": "passed / planned (worst case)",
    "pass_rate_upper": "(passed + planned − scored) / planned (best case)",
}


#: Summary columns that say why an interval is wide, with their label in the terminal table.
CLUSTER_COLUMNS: Final = {
    "cases_planned": "cases_planned (the independent units)",
    "design_effect": "design_effect of pass_rate_scored (trials per case)",
    "effective_n": "effective_n = scored / design_effect",
}


def _cell(record: dict[str, Any], name: str) -> str:
    value = record[name]
    if value is None:
        return "null"
    if not isinstance(value, float):
        return str(value)
    low, high = record.get(f"{name}_ci_low"), record.get(f"{name}_ci_high")
    return f"{value:.4g} [{low:.3g}, {high:.3g}]" if low is not None and high is not None else f"{value:.4g}"


def funnel_long(summary: pl.DataFrame) -> pl.DataFrame:
    """One row per funnel count or rate (with its interval), one column per candidate (fits a terminal)."""
    rows = [*COUNT_COLUMNS, *RATE_COLUMNS, *(c for c in CLUSTER_COLUMNS if c in summary.columns)]
    out: dict[str, list[str]] = {
        "measure": [f"{r} = {FORMULAS[r]}" if r in RATE_COLUMNS else CLUSTER_COLUMNS.get(r, r) for r in rows]
    }
    for record in summary.iter_rows(named=True):
        out[str(record[CANDIDATE])] = [_cell(record, r) for r in rows]
    return pl.DataFrame(out)


def print_problems(problems: pl.DataFrame, console: Console, counts: pl.DataFrame | None = None) -> None:
    """Print problem counts by kind, then the first rows (never one giant string).

    ``counts`` (kind, refusing, count) counts every problem when ``problems`` holds only the first rows of
    each kind (``AuditRefused.problem_counts``); by default the rows of ``problems`` are counted.
    """
    refusing = problems.filter(pl.col(REFUSING))
    if counts is None:
        counts = problems.group_by(KIND, REFUSING).len("count").sort(KIND)
    n_refusing = int(counts.filter(pl.col(REFUSING)).get_column("count").sum())
    console.print(f"[bold red]batch refused[/]: {n_refusing} refusing problem(s); no rate was computed.")
    console.print(_frame_table(counts, "problems by kind"))
    shown = refusing.head(PROBLEM_ROWS_SHOWN).drop(REFUSING)
    shown = shown.select([c for c in shown.columns if shown.get_column(c).null_count() < shown.height])
    console.print(_frame_table(shown, f"refusing problems (first {shown.height} of {n_refusing})"))


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
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Write every table as Parquet plus report.md, report.json and report.html here: a new or empty "
            "folder, or an earlier evalframe output (replaced whole; other files are refused).",
        ),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(["table", "json", "markdown"]),
            default="table",
            show_default=True,
            help="What to print on stdout.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _print_report(report: AuditReport, fmt: str) -> None:
    if fmt == "json":
        click.echo(report.to_json())
        return
    if fmt == "markdown":
        click.echo(report.to_markdown(), nl=False)
        return
    console = _stdout()
    m = report.meta
    console.print(
        f"[bold]evalframe audit[/] plan {_plain(str(m['plan_source']))} ({m['n_cases']} cases × {len(m['candidates'])} "
        f"candidates × {m['trials']} trial(s) = {m['planned_units']} planned units); retry policy {m['retry']}",
        highlight=False,
    )
    console.print(
        _frame_table(
            funnel_long(report.summary), "funnel: counts, then rates named by their denominator [interval over cases]"
        )
    )
    if m.get("grade") == "numeric":
        scores = report.summary.select(
            CANDIDATE,
            "scored",
            pl.format(
                "{} [{}, {}]",
                pl.col("mean_score").round_sig_figs(4),
                pl.col("mean_score_ci_low").round_sig_figs(3),
                pl.col("mean_score_ci_high").round_sig_figs(3),
            ).alias("mean_score [clustered interval]"),
        )
        no_pass = report.summary.get_column("pass_rate_scored").null_count() == report.summary.height
        title = "numeric scores: mean over scored units" + (" (no pass/fail: add --pass-threshold)" if no_pass else "")
        console.print(_frame_table(scores, title))
    more = pl.col("missing_cases") - pl.col("missing_case_ids").list.len()
    missing = report.summary.select(
        CANDIDATE,
        "missing",
        "missing_cases",
        pl.concat_str(
            pl.col("missing_case_ids").list.join(", "),
            pl.when(more > 0).then(pl.format(" … (+{} more)", more)).otherwise(pl.lit("")),
        ).alias("missing_case_ids"),
    )
    console.print(_frame_table(missing, "missing units (not failures)"))
    if report.missingness.width:
        tests = missingness_shown(report.missingness, joined=True)
        console.print(_frame_table(tests, "does missingness depend on the slice? (cases as units, Holm-adjusted)"))
    if report.problems.height:
        counts = report.problems.group_by(KIND).len("count").sort(KIND)
        console.print(_frame_table(counts, "problems (not refusing)"))


IMPORT_FORMATS = ["inspect", "lm-eval", "helm", "promptfoo", "openai-evals"]
#: The score an export reads under --grade numeric when --score is not given (its default is a pass/fail).
NUMERIC_SCORE: Final = {"promptfoo": "score"}


def _import(fmt: str, paths: Sequence[str], score: str | None) -> Imported:
    from evalframe.importers import registry

    return registry()[fmt]([Path(p) for p in paths], score=score)


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
    candidates: str | None,
    trials: int | None,
    run_id: str | None,
    out: Path | None,
    retry_on: str,
    fmt: str = "table",
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
            plan = Plan.from_file(
                plan_path, candidates=_split_list(candidates), trials=1 if trials is None else trials, run_id=run_id
            )
            results = list(results_paths)
        return audit(plan, results, **options)
    except AuditRefused as exc:
        print_problems(exc.problems, _stderr(), exc.problem_counts)
        if fmt == "json":  # machine readers get the refusal on stdout too
            counts = exc.problem_counts.filter(pl.col(REFUSING)).group_by(KIND).agg(pl.col("count").sum()).sort(KIND)
            click.echo(json.dumps({"refused": True, "refusing_problems_by_kind": dict(counts.iter_rows())}, indent=2))
        if out is not None:  # problems.parquet holds every problem, streamed from the refusal's files
            refused, folder, command = exc, out, f"evalframe {click.get_current_context().info_name}"
            _write(
                lambda: write_refusal(
                    refused.problems,
                    folder,
                    command=command,
                    inputs=inputs,
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evalframe")
@_limit_option("line_bytes", "Longest line of a CSV / JSON Lines input, in bytes (longer: exit 2).")
@_limit_option("json_depth", "Deepest nesting of arrays and objects in JSON input (deeper: exit 2).")
@_limit_option("member_bytes", "Largest decompressed archive member (.eval), in bytes.")
@_limit_option("archive_bytes", "Largest total of an archive's decompressed members, in bytes (larger: exit 2).")
def main(**limits_given: int) -> None:
    """Audit AI evaluation results against a frozen plan before anyone believes a score.

    Limits (SPEC §6b) go before the command: `evalframe --max-line-bytes 268435456 audit ...`.
    """
    click.get_current_context().with_resource(limits(**limits_given))


@main.command("audit")
@input_options
@audit_options
@click.option(
    "--min-coverage",
    type=click.FloatRange(0, 1),
    default=None,
    help="Release gate: exit 3 when any candidate's scored_coverage is below this fraction.",
)
def audit_command(out: Path | None, fmt: str, min_coverage: float | None, **kwargs: Any) -> None:
    """Audit a results ledger against a frozen plan.

    Either --plan and --results, or --from FORMAT followed by export files
    (e.g. `evalframe audit --from inspect logs/*.eval`).
    """
    report = build_report(out=out, fmt=fmt, **kwargs)
    _print_report(report, fmt)
    if out is not None:
        inputs = _inputs(kwargs["paths"], kwargs["plan_path"], kwargs["results_paths"])
        _write(lambda: report.write(out, inputs=inputs, command="evalframe audit"))
    if min_coverage is not None:
        low = report.summary.filter(pl.col("scored_coverage") < min_coverage)
        if low.height:
            names = ", ".join(f"{c} ({v:.4g})" for c, v in low.select(CANDIDATE, "scored_coverage").iter_rows())
            _stderr().print(f"[bold red]gate failed[/]: scored_coverage below {min_coverage:g}: {_plain(names)}")
            sys.exit(EXIT_GATE)


@main.command("compare")
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
@click.option(
    "--min-coverage",
    type=click.FloatRange(0, 1),
    default=0.95,
    show_default=True,
    help="Declared minimum scored_coverage of each side.",
)
@click.option("--require-winner", is_flag=True, help="Release gate: exit 3 unless the verdict is candidate_better.")
def compare_command(
    out: Path | None,
    fmt: str,
    baseline: str,
    challenger: str,
    pairs: str,
    min_coverage: float,
    require_winner: bool,
    **kwargs: Any,
) -> None:
    """Compare a candidate against a baseline on paired units, with a verdict.

    The verdict is candidate_better, baseline_better or no_supported_winner,
    with its reasons: coverage gate, worst/best-case bounds, interval of the
    paired difference.
    """
    report = build_report(out=out, fmt=fmt, **kwargs)
    try:
        comparison = compare(
            report,
            baseline=baseline,
            candidate=challenger,
            pairs=pairs,  # type: ignore[arg-type]
            min_coverage=min_coverage,
            confidence=kwargs["confidence"],
            alpha=kwargs["alpha"],
        )
    except ValueError as exc:
        _fail(str(exc))
    if out is not None:
        # Every table plus comparison/pairs Parquet, and report.md/.json/.html with the verdict.
        inputs = _inputs(kwargs["paths"], kwargs["plan_path"], kwargs["results_paths"])
        _write(lambda: report.write(out, comparison=comparison, inputs=inputs, command="evalframe compare"))
    if fmt == "json":
        click.echo(comparison.table.write_json())
    elif fmt == "markdown":
        click.echo(comparison.to_markdown(), nl=False)
    else:
        console = _stdout()
        colour = "green" if comparison.verdict != "no_supported_winner" else "yellow"
        console.print(
            f"[bold]verdict[/]: [{colour}]{comparison.verdict}[/]  "
            f"({_plain(challenger)} vs baseline {_plain(baseline)}, {pairs})"
        )
        for reason in comparison.reasons:
            console.print(Text(_visible(f"  - {reason}")), highlight=False)
        numbers = comparison.table.drop("reasons", "verdict").transpose(include_header=True, column_names=["value"])
        console.print(_frame_table(numbers.with_columns(pl.col("value").cast(pl.String)), "comparison"))
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
def import_command(fmt: str, paths: tuple[Path, ...], out: Path, score_name: str | None) -> None:
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
        imported = _import(fmt, [str(p) for p in paths], score_name)
    except ImportRefused as exc:
        # A file that could not be read leaves only its notes: no plan or ledger that looks complete.
        notes = exc.all_problems().collect()
        _write(lambda: write_output(out, {"notes": notes}, command=command, outcome="refused", inputs=inputs))
        console.print(f"import refused: {notes.height} note(s) → {out}", highlight=False)
        print_problems(notes, console)
        sys.exit(EXIT_REFUSED)
    except EvalframeError as exc:
        _fail(str(exc))
    plan_units = imported.plan.planned_units().join(imported.plan.cases.lazy(), on="case_id", how="left").collect()
    tables = {"plan": plan_units, "ledger": imported.ledger, "notes": imported.notes}
    _write(lambda: write_output(out, tables, command=command, outcome="imported", inputs=inputs))
    console.print(
        f"imported {len(paths)} file(s): {plan_units.height} planned units, {imported.ledger.height} ledger rows, "
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
