"""``evalframe import``: another tool's exports as plan.parquet + ledger.parquet (+ notes.parquet)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evalframe.cli.exits import EXIT_REFUSED, fail, print_problems, stderr, write_or_exit
from evalframe.cli.options import IMPORT_FORMATS, ExportPath
from evalframe.cli.signals import hold_stop_signals
from evalframe.errors import EvalframeError
from evalframe.importers._kit import ImportRefused
from evalframe.read import exports_json, import_exports, plan_units
from evalframe.report import check_output_folder, write_output


@click.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(IMPORT_FORMATS))
@click.argument("paths", nargs=-1, required=True, type=ExportPath())
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
    OUT/ledger.parquet`. Exit 2 when a file could not be read (one line
    naming it, nothing written); exit 1 when the import is refused (its
    problems are in notes.parquet and on stderr).
    """
    console = stderr()
    inputs, command = [str(p) for p in paths], f"evalframe import {fmt}"
    write_or_exit(lambda: check_output_folder(out, inputs=inputs))
    try:
        imported = import_exports(fmt, inputs, score=score_name, id_column=id_column)
    except ImportRefused as exc:
        # A refused import leaves only its notes: no plan or ledger that looks complete.
        notes = exc.all_problems().collect()
        write_or_exit(
            lambda: write_output(
                out, {"notes": notes}, command=command, outcome="refused", inputs=inputs, guard=hold_stop_signals
            )
        )
        console.print(f"import refused: {notes.height} note(s) → {out}", highlight=False)
        print_problems(notes, console)
        sys.exit(EXIT_REFUSED)
    except (EvalframeError, ValueError) as exc:  # an unreadable file (ImportUnreadable) too: exit 2, nothing written
        fail(str(exc))
    planned = plan_units(imported)
    tables = {"plan": planned, "ledger": imported.ledger, "notes": imported.notes}
    texts = {"exports.json": exports_json(imported)}
    write_or_exit(
        lambda: write_output(
            out, tables, texts=texts, command=command, outcome="imported", inputs=inputs, guard=hold_stop_signals
        )
    )
    console.print(
        f"imported {len(imported.files)} file(s): {planned.height} planned units, "
        f"{imported.ledger.height} ledger rows, {imported.notes.height} note(s) → {out}",
        highlight=False,
    )
