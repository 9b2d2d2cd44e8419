"""``evalframe power``: what a plan can detect before the compute is spent (SPEC §6a).

The command is a thin layer over :func:`evalframe.stats.power.power`. Its assumptions come from the options or
from earlier runs, read by the library as its ``baseline`` and ``comparison``: ``--from-units`` reads an
audit's ``units.parquet`` (the chosen candidate's summary row, as the audit computes it) and
``--from-compare`` a compare's ``comparison.parquet`` or JSON (its row). Bad inputs exit 2 with a hint
chosen by the option the library names (:class:`evalframe.errors.OptionError`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
import polars as pl
from narwhals.exceptions import NarwhalsError

from evalframe.cli.exits import EXIT_USAGE
from evalframe.cli.options import Count, Number, count_in
from evalframe.columns import CANDIDATE, CASE_ID, TASK
from evalframe.errors import InputFormatError, OptionError
from evalframe.load import JSONLimitError, parse_json_text
from evalframe.natural import natural_sorted
from evalframe.report.format import fmt_count, fmt_value
from evalframe.stats.clustered import check_target

#: What to do about each input the power analysis refuses, keyed by the argument the library names.
HINTS = {
    "rate": "--rate is the baseline's pass rate as a fraction strictly between 0 and 1, e.g. --rate 0.62",
    "icc": "--icc is the intra-case correlation in [0, 1] (an audit's summary icc; --from-units estimates it)",
    "alpha": "--alpha is the two-sided level, e.g. 0.05",
    "power": "--power is the target power, e.g. 0.8",
    "pair_correlation": "--pair-correlation is in [-1, 1) and at most what --icc allows (give --icc or --from-units)",
    "target_difference": "--target-difference is a fraction of pass rate, e.g. 0.05 for 5 points (-0.05 a drop)",
    "cases": "--n-cases is the number of cases, at least 2",
    "trials": "--trials is a whole number of trials per case, at least 1",
    "pair_trials": "--pair-trials is the trials per case at which --pair-correlation was measured",
    "trade_trials": "--trade-trials lists whole numbers of trials, e.g. 1,2,3,5,10",
    "baseline": "give the missing number as an option (--n-cases, --trials, --rate)",
    "comparison": "give --pair-correlation, or --from-compare a comparison of pass/fail grades",
}
#: The option each earlier run is read from.
FLAGS = {"baseline": "--from-units", "comparison": "--from-compare"}


def verified(path: Path) -> None:
    """Check the page checksums of a Parquet file evalframe wrote (see :func:`evalframe.load.scan_parquet`)."""
    from evalframe.load.parquet import WRITTEN_BY_EVALFRAME, footer_metadata, verify_page_checksums

    if WRITTEN_BY_EVALFRAME in footer_metadata(str(path)):
        verify_page_checksums(str(path))


def _fail(message: str, hint: str | None = None) -> NoReturn:
    click.echo(f"error: {message}" + ("" if hint is None else f"\nhint: {hint}"), err=True)
    sys.exit(EXIT_USAGE)


def read_units(path: Path, candidate: str | None, task: str | None = None) -> dict[str, Any]:
    """One candidate's summary row of an audit's units table (of one task), as the audit computes it.

    :func:`evalframe.funnel.funnel` and :func:`evalframe.funnel.with_uncertainty` over the candidate's units
    of ``task``: tasks are never pooled. Raises ValueError naming the candidates (tasks) when ``candidate``
    (``task``) is needed or unknown, or when the table is not an audit's.
    """
    from evalframe.funnel import funnel, with_uncertainty

    try:
        verified(path)
        units = pl.read_parquet(path, glob=False)
    except InputFormatError as exc:
        raise ValueError(f"--from-units {exc}") from None
    except (OSError, pl.exceptions.PolarsError) as exc:
        msg = f"--from-units {path}: not a readable units table ({type(exc).__name__})"
        raise ValueError(msg) from None
    missing = {CANDIDATE, CASE_ID, "outcome", "score"} - set(units.columns)
    if missing:
        msg = f"--from-units {path}: not an audit's units table (no {', '.join(sorted(missing))} column)"
        raise ValueError(msg)
    try:
        units = units.with_columns(pl.col(c).cast(pl.String) for c in (CANDIDATE, TASK) if c in units.columns)
        if TASK in units.columns or task is not None:
            units = units.filter(pl.col(TASK) == _one(path, "task", task, _names(units, TASK)))
        candidate = _one(path, "candidate", candidate, _names(units, CANDIDATE))
        mine = units.filter(pl.col(CANDIDATE) == candidate)
        return with_uncertainty(funnel(mine.lazy()).collect(), mine).row(0, named=True) | {CANDIDATE: candidate}
    except (pl.exceptions.PolarsError, NarwhalsError) as exc:  # e.g. a score column of text
        raise ValueError(f"--from-units {path}: not an audit's units table ({type(exc).__name__})") from None


def _names(units: pl.DataFrame, column: str) -> list[str]:
    """The values of ``column`` (none when the table has no such column), in natural order."""
    return natural_sorted(units.get_column(column).drop_nulls().unique()) if column in units.columns else []


def _one(path: Path, flag: str, given: str | None, names: list[str]) -> str:
    """``given`` when it is one of ``names``, the only name when none is given; else ValueError naming them."""
    if given is None and len(names) == 1:
        return names[0]
    if given not in names:
        listed = ", ".join(names) or "none"
        msg = (
            f"--from-units {path} holds {flag}s {listed}: give --{flag}"
            if given is None
            else f"--{flag} {given!r} is not in --from-units {path} ({flag}s: {listed})"
        )
        raise ValueError(msg)
    return given


def read_comparison(path: Path) -> dict[str, Any]:
    """A compare's row: its ``pair_correlation`` and the pairs and cases it was measured over.

    Reads ``comparison.parquet`` (``--out`` of ``evalframe compare``), the JSON of ``compare --format
    json`` (a list of one row) or an output folder's ``report.json`` (its ``comparison``), JSON within the
    limits every JSON input is read under (``--max-json-depth``).
    """
    row: Any
    try:
        if path.suffix == ".parquet":
            verified(path)
            row = pl.read_parquet(path, glob=False).row(0, named=True)
        else:
            doc = parse_json_text(path.read_text(encoding="utf-8"))
            row = doc[0] if isinstance(doc, list) else doc.get("comparison") if isinstance(doc, dict) else None
    except InputFormatError as exc:
        raise ValueError(f"--from-compare {exc}") from None
    except JSONLimitError as exc:  # nested too deeply, an integer literal longer than Python converts
        raise ValueError(f"--from-compare {path}: {exc.detail}") from None
    except (OSError, ValueError, IndexError, RecursionError, pl.exceptions.PolarsError) as exc:
        msg = f"--from-compare {path}: not a readable comparison ({type(exc).__name__})"
        raise ValueError(msg) from None
    if not isinstance(row, dict) or "pair_correlation" not in row:
        msg = f"--from-compare {path}: no pair_correlation (give comparison.parquet or compare's JSON)"
        raise ValueError(msg)
    return row


def _target(difference: float) -> str:
    """A target difference in words: "a rise of 10.0 points", or "a drop of 10.0 points" for a negative one."""
    return f"a {'rise' if difference > 0 else 'drop'} of {100 * abs(difference):.1f} points"


def _text(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    probe = Console()
    console = Console(width=None if probe.is_terminal else 200, highlight=False)
    console.print(doc["sentence"])
    i = doc["inputs"]
    if i["target_difference"] is not None:
        needed = doc["cases_needed"]
        console.print(
            f"cases needed for {_target(i['target_difference'])} at {i['trials']} trial(s) per case: "
            + ("more than 10,000,000" if needed is None else f"{needed}")
        )
    for note in [*doc["sources"], *doc["notes"]]:
        console.print(f"  - {note}")
    for basis, title in (("same_cases", f"same {i['cases']} cases"), ("same_budget", "same budget of units")):
        table = Table(title=f"trials vs cases: {title}", title_justify="left")
        columns = ["trials", "cases", "units", "pair_correlation", "detectable_rise", "detectable_drop", "cases_needed"]
        for name in columns:
            table.add_column(name, justify="right")
        for row in (r for r in doc["trade"] if r["basis"] == basis):
            cells = [
                "-" if row[c] is None else fmt_value(row[c]) if isinstance(row[c], float) else fmt_count(row[c])
                for c in columns
            ]
            table.add_row(*cells)
        console.print(table)


def target_of(value: str) -> str:
    """``--cases`` of ``evalframe power``: ``sample`` or ``fixed``, as in audit and compare; a count is refused.

    ``--cases G`` once gave the number of cases here; one flag name means one thing across the commands, so a
    whole number is a usage error naming ``--n-cases`` (never taken silently as something else).
    """
    if value in ("sample", "fixed"):
        return value
    if value.strip().isdigit():
        _fail(
            f"--cases {value}: --cases is sample|fixed (what the power is about, as in audit and compare); "
            f"give the number of cases as --n-cases {value.strip()}"
        )
    _fail(f"--cases {value!r} is not one of 'sample', 'fixed'", "--cases sample|fixed: the target, as in compare")


@click.command("power")
@click.option("--n-cases", "cases", type=Count, default=None, help="Cases planned (default: those of --from-units).")
@click.option(
    "--cases",
    "target",
    default="sample",
    show_default=True,
    metavar="sample|fixed",
    help="What compare's verdict will be about, as in audit and compare: sample (the cases stand for a larger "
    "population of tasks) or fixed (these cases only: trial noise within them, nothing with one trial per case).",
)
@click.option("--trials", type=Count, default=None, help="Trials per case (default: --from-units', else 1).")
@click.option("--alpha", type=Number(), default=0.05, show_default=True, help="Two-sided level of compare's test.")
@click.option("--power", "target_power", type=Number(), default=0.8, show_default=True, help="Target power.")
@click.option("--rate", type=Number(), default=None, help="Baseline pass rate (default: --from-units', else 0.5).")
@click.option("--icc", type=Number(), default=None, help="Intra-case correlation (default: --from-units', else 0).")
@click.option(
    "--pair-correlation",
    type=Number(),
    default=None,
    help="Correlation of the two candidates' case means (default: --from-compare's, else 0).",
)
@click.option("--pair-trials", type=Number(), default=None, help="Trials per case --pair-correlation was measured at.")
@click.option(
    "--from-units",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="An audit's units.parquet: estimate icc (and the rate, cases, trials) from it.",
)
@click.option("--candidate", default=None, help="With --from-units: the candidate (the baseline) to read.")
@click.option("--task", default=None, metavar="NAME", help="With --from-units of several tasks: the task to read.")
@click.option(
    "--from-compare",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A compare's comparison.parquet or JSON: read pair_correlation from it.",
)
@click.option("--target-difference", type=Number(), default=None, help="Difference to size for (fraction of rate).")
@click.option("--trade-trials", default="1,2,3,5,10", show_default=True, help="Trials per case to trade off.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def power_command(
    cases: int | None,
    trials: int | None,
    alpha: float,
    target_power: float,
    rate: float | None,
    icc: float | None,
    pair_correlation: float | None,
    pair_trials: float | None,
    from_units: Path | None,
    candidate: str | None,
    task: str | None,
    from_compare: Path | None,
    target_difference: float | None,
    trade_trials: str,
    fmt: str,
    target: str,
) -> None:
    """The difference in pass rate a paired plan can detect, the cases a target needs, trials vs cases.

    The power is that of compare's test (exact McNemar with one trial per case, the clustered interval
    with several; under --cases fixed the within-case interval). Example:
    `evalframe power --n-cases 200 --trials 3 --icc 0.3`.
    """
    from evalframe.stats.power import power

    chosen = check_target(target_of(target))
    if cases is None and from_units is None:
        _fail("give --n-cases (or --from-units)", HINTS["cases"])
    try:
        ks = [count_in(k.strip()) for k in trade_trials.split(",") if k.strip()]
    except click.BadParameter as exc:
        _fail(f"--trade-trials {trade_trials!r} is not a list of whole numbers ({exc.message})", HINTS["trade_trials"])
    read = {"baseline": from_units, "comparison": from_compare if pair_correlation is None else None}
    try:
        result = power(
            cases,
            trials,
            alpha=alpha,
            power=target_power,
            rate=rate,
            icc=icc,
            pair_correlation=pair_correlation,
            pair_trials=pair_trials,
            target_difference=target_difference,
            trade_trials=ks or [1],
            target=chosen,
            baseline=None if from_units is None else read_units(from_units, candidate, task),
            comparison=None if read["comparison"] is None else read_comparison(read["comparison"]),
        )
    except OptionError as exc:
        path = read.get(exc.option)
        _fail(str(exc) if path is None else f"{FLAGS[exc.option]} {path}: {exc}", HINTS.get(exc.option))
    except ValueError as exc:
        _fail(str(exc))
    doc = result.to_dict()
    doc["sources"] = [f"read from {FLAGS[k]} {path}" for k, path in read.items() if path is not None] + doc["sources"]
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        _text(doc)
