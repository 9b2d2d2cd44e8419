"""Options shared by the commands, in groups (the audit's own checks are :mod:`evalframe.audit.arguments`).

Each group is a decorator adding its click options in the order ``--help`` lists them: where the inputs
come from (:func:`input_options`), and the audit's declarations (:func:`audit_options`: retry policy,
grades, slices, engine, output).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import click

from evalframe.audit import AUTO_PARTITION_ROWS
from evalframe.columns import EXEC_FAILURES
from evalframe.load import LIMIT_FLAGS, MAX_PLANNED_UNITS, Limits, is_glob, is_url
from evalframe.stats import DEFAULT_CONFIDENCE

if TYPE_CHECKING:
    from evalframe.report.terminal import TerminalLayout

F = TypeVar("F", bound=Callable[..., Any])


class InputPath(click.Path):
    """An input file or folder: a local one that exists (a :class:`~pathlib.Path`), a glob, or an object-storage URL.

    A URL (``s3://``, ``gs://``, ``az://``, ``https://``) or a glob (see :func:`~evalframe.load.is_glob`) is kept
    as text: the loaders read it (:mod:`evalframe.load.remote`) and say in one line when it matches nothing or
    is missing, denied or unreachable.
    """

    def __init__(self) -> None:
        super().__init__(exists=True, dir_okay=True, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The URL as given, or the checked local path."""
        return value if is_url(value) or is_glob(value) else super().convert(value, param, ctx)


class OutFolder(click.Path):
    """``--out``: a local folder. A URL is a usage error: evalframe publishes outputs locally only.

    An output is written to a temporary folder and renamed into place, its manifest last, so that no reader
    sees half of it; object storage offers no rename of a prefix, so the same promise is not made there.
    """

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The folder as a path; a usage error for an object-storage URL."""
        if is_url(value):
            self.fail(
                f"{value}: outputs are written locally (an atomic publish on object storage is not offered); "
                "write to a local folder, then copy it",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


def storage_option_pairs(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> dict[str, str]:
    """``--storage-option KEY=VALUE`` (repeatable) as a mapping; a usage error without ``=`` (the value unsaid)."""
    pairs: dict[str, str] = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{key.strip() or '(empty)'}: give KEY=VALUE")
        pairs[key.strip()] = value
    return pairs


class Number(click.FloatRange):
    """A numeric flag: a finite number, within the range given (``nan`` and ``inf`` satisfy no range check).

    Every float flag of the command line takes this type, so that ``--min-coverage nan`` or ``--alpha inf``
    is a usage error (exit 2) rather than a gate that always passes or a level that means nothing.
    """

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The flag's value as a float; a usage error when it is not finite or out of range."""
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


#: Every whole-number flag that sizes a plan (trials, cases) is at most the units evalframe plans at all.
Count: Final = click.IntRange(min=1, max=MAX_PLANNED_UNITS)


def count_in(text: str, *, low: int = 1) -> int:
    """A whole number written inside a flag's value (``q<k>``, a list), from ``low`` up to :data:`Count`'s top.

    Raises ``click.BadParameter`` (click's words: "... is not in the range ...") otherwise.
    """
    checked: int = click.IntRange(min=low, max=MAX_PLANNED_UNITS).convert(cast(Any, text), None, None)
    return checked


#: The exports ``--from`` and ``evalframe import`` read.
IMPORT_FORMATS: Final = [
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


def split_list(text: str | None) -> list[str] | None:
    """A comma-separated flag value as a list (None when the flag was not given)."""
    return None if text is None else text.split(",")


def _check_candidates(ctx: click.Context, param: click.Parameter, text: str | None) -> str | None:
    """``--candidates``: comma-separated exact names, none empty, padded or repeated (a usage error otherwise)."""
    names = split_list(text) or []
    if any(n == "" for n in names):
        raise click.BadParameter(f"an empty name in {text!r}")
    if any(n.strip() != n for n in names):
        raise click.BadParameter(f"white space around a name in {text!r} (names are exact)")
    if len(set(names)) != len(names):
        raise click.BadParameter(f"a name is repeated in {text!r}")
    return text


def _parse_bins(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, Any]:
    bins: dict[str, Any] = {}
    for value in values:
        name, sep, spec = value.rpartition("=")  # at the last "=": no edge holds one, a column name may
        if not sep or not name or not spec:
            raise click.BadParameter(f"expected COL=EDGE,EDGE,... or COL=q<k>, got {value!r}")
        if name in bins:
            raise click.BadParameter(f"bins for {name!r} given more than once")
        if spec.startswith("q"):  # k is checked against the column's distinct values once the plan is read
            try:
                count_in(spec[1:], low=2)
            except click.BadParameter as exc:
                raise click.BadParameter(f"the k of {value!r}: {exc.message}") from None
            bins[name] = spec
            continue
        try:
            bins[name] = [float(e) for e in spec.split(",")]
        except ValueError:
            raise click.BadParameter(f"bin edges must be numbers, got {spec!r}") from None
    return bins


def _apply(options: Sequence[Callable[[F], F]], func: F) -> F:
    for option in reversed(options):
        func = option(func)
    return func


def _choice(*decls: str, choices: Sequence[str], help: str) -> Callable[[F], F]:
    """An option taking one of ``choices``, the first by default (shown in ``--help``)."""
    return click.option(*decls, type=click.Choice(list(choices)), default=choices[0], show_default=True, help=help)


def _open_fraction(flag: str, default: float, help: str) -> Callable[[F], F]:
    """An option taking a number strictly between 0 and 1."""
    kind = Number(0, 1, min_open=True, max_open=True)
    return click.option(flag, type=kind, default=default, show_default=True, help=help)


_RETRY_OPTIONS: Final = [
    _choice(
        "--retry",
        choices=["first", "last_allowed", "every"],
        help="Declared retry policy: which attempt of a unit counts.",
    ),
    click.option("--max-attempts", type=click.IntRange(min=1), default=None, help="Highest allowed attempt number."),
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
        help=(
            "How trials of a case reduce to the case-level rate: mean, any (a pass in any trial), all, majority, "
            "median, at_least:K, pass_at:K (the unbiased pass@K estimate); Inspect's max (= any), mode "
            "(= majority), at_least_K and pass_at_K are accepted and recorded as given."
        ),
    ),
    click.option(
        "--extra-columns",
        "extra_columns",
        default=None,
        callback=lambda ctx, param, value: tuple(split_list(value) or ()),
        help="Comma-separated ledger columns carried untouched to units/attempts (e.g. output,latency).",
    ),
    _choice(
        "--missing",
        choices=["report", "refuse"],
        help="report: missing units are counted as missing; refuse: any missing unit refuses the batch.",
    ),
]

_GRADE_OPTIONS: Final = [
    _choice(
        "--grade",
        choices=["binary", "numeric"],
        help="binary: grades are exactly 0 or 1; numeric: scores in --score-range.",
    ),
    click.option(
        "--score-range",
        nargs=2,
        type=Number(),
        default=(0.0, 1.0),
        show_default=True,
        help="Inclusive bounds of a numeric score.",
    ),
    click.option(
        "--pass-threshold", type=Number(), default=None, help="Numeric score at or above which a unit passes."
    ),
]

_SLICE_OPTIONS: Final = [
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
    _open_fraction(
        "--alpha",
        0.05,
        "Significance level of the selective-missingness test, and in compare of the exact McNemar test with one "
        "trial per case (with several, the winner needs the --confidence interval to exclude 0).",
    ),
]

_ENGINE_OPTIONS: Final = [
    _choice(
        "--partition-by",
        choices=["auto", "candidate", "none"],
        help="Audit candidate by candidate (up to four at a time, 6M ledger rows at most), writing units and "
        "attempts out beyond 640 MiB (bounded memory on large lakes; same result), or the whole batch at once "
        f"(none); auto: candidate by candidate from {AUTO_PARTITION_ROWS:,} ledger rows or planned units on.",
    ),
    _open_fraction(
        "--confidence",
        DEFAULT_CONFIDENCE,
        "Two-sided coverage of every interval; in compare with several trials per case, the winner's interval.",
    ),
    _choice(
        "--cases",
        choices=["sample", "fixed"],
        help="What the intervals and compare's verdict are about: sample: the cases stand for a larger population "
        "of tasks; fixed: these cases are the whole population (trial noise within them only, no skewness rule; "
        "needs some case with two trials or more).",
    ),
    _choice(
        "--engine",
        choices=["polars", "spark"],
        help="Where the row work runs: polars on this machine, or Spark (--results: Parquet paths or a table; "
        "needs pip install 'evalframe[spark]'; starting the JVM alone takes 10-30 s; --slice works there too).",
    ),
    click.option("--spark-remote", default=None, help="Spark Connect address sc://HOST:PORT (default: local[2])."),
    click.option(
        "--spark-tables",
        default=None,
        help="Folder (or URI) Spark writes the full units, attempts and problems tables to, as Parquet.",
    ),
]

_OUTPUT_OPTIONS: Final = [
    click.option(
        "--out",
        type=OutFolder(),
        default=None,
        help="Write every table as Parquet plus report.md, report.json and report.html here: a new or empty "
        "folder, or an earlier evalframe output (replaced whole; other files are refused).",
    ),
    _choice(
        "--format",
        "fmt",
        choices=["table", "json", "markdown", "github"],
        help="What to print on stdout: a terminal table, JSON (full precision), the Markdown report, or github: "
        "a short Markdown summary (verdict, coverage, gate) for $GITHUB_STEP_SUMMARY.",
    ),
    click.option(
        "--compact/--full",
        "compact",
        default=None,
        help="Terminal table: one line per candidate (planned, scored, missing, pass_rate_scored with its "
        "interval, full-plan range), or each rate over its counts. Default: compact from 7 candidates on.",
    ),
    click.option(
        "--no-progress",
        "no_progress",
        is_flag=True,
        help="Print no progress on stderr (by default: bars on a terminal, elsewhere a line every 10 s of a long "
        "run); errors and refusals are still printed.",
    ),
]


def layout_of(compact: bool | None) -> TerminalLayout:
    """The terminal layout of ``--compact/--full`` (neither: ``auto``)."""
    return "auto" if compact is None else "compact" if compact else "full"


class ExportPath(InputPath):
    """An export an importer reads: a local file or folder that exists, or an object-storage URL.

    No local glob (the shell expands one); a URL's glob is listed by :func:`~evalframe.load.fetched`.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The URL as given, or the checked local path."""
        return value if is_url(value) else click.Path.convert(self, value, param, ctx)


def audit_options(func: F) -> F:
    """Options shared by commands that run an audit: retry policy, grades, slices, engine, output."""
    return _apply([*_RETRY_OPTIONS, *_GRADE_OPTIONS, *_SLICE_OPTIONS, *_ENGINE_OPTIONS, *_OUTPUT_OPTIONS], func)


_INPUT_OPTIONS: Final = [
    click.argument("paths", nargs=-1, type=ExportPath()),
    click.option(
        "--plan",
        "plan_path",
        type=InputPath(),
        default=None,
        help="Plan: CSV, JSON Lines or Parquet with a case_id column (or a units table with candidate); a local "
        "path, a glob, or an s3://, gs://, az://, https:// URL.",
    ),
    click.option(
        "--results",
        "results_paths",
        multiple=True,
        help="Ledger: CSV, JSON Lines, Parquet file, directory or glob, local or an s3://, gs://, az://, https:// "
        "URL (repeatable).",
    ),
    click.option(
        "--storage-option",
        "storage_options",
        multiple=True,
        callback=storage_option_pairs,
        metavar="KEY=VALUE",
        help="An option of the object store URLs are read from (polars' storage_options keys, e.g. "
        "aws_endpoint_url=http://127.0.0.1:9000, aws_region=eu-west-1); repeatable; over AWS_*, GOOGLE_*, "
        "AZURE_* variables. Never printed.",
    ),
    click.option(
        "--from",
        "from_format",
        type=click.Choice(IMPORT_FORMATS),
        default=None,
        help="Read plan and ledger from other tools' exports given as PATHS: files, folders or s3://, gs://, az://, "
        "https:// URLs (fetched whole) (instead of --plan/--results).",
    ),
    click.option(
        "--score",
        "score_name",
        default=None,
        help="With --from: the scorer / metric / stat to read (default: the importer's).",
    ),
    click.option("--id-column", default=None, help="With --from ragas|deepeval: the CSV column naming the cases."),
    click.option(
        "--candidates",
        default=None,
        callback=_check_candidates,
        help="Comma-separated planned candidates, e.g. A,B (exact).",
    ),
    click.option(
        "--trials",
        type=Count,
        default=None,
        help="Trials per (candidate, case) [default: 1; with --from, what the export planned].",
    ),
    click.option(
        "--run-id", default=None, help="Require every row to come from this run (with --from: one in the export)."
    ),
]


def input_options(func: F) -> F:
    """Options that say where the plan and the ledger come from."""
    return _apply(_INPUT_OPTIONS, func)


def min_coverage_option(func: F) -> F:
    """``--min-coverage``, the release gate of audit and compare."""
    return click.option("--min-coverage", type=Number(0, 1), default=None, help=MIN_COVERAGE_HELP)(func)


def limit_option(name: str, help_text: str) -> Callable[[F], F]:
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
