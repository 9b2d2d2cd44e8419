"""Reading a command's inputs and auditing them: the plan and ledger from files or from another tool's exports.

:func:`build_report` is the one path of ``audit`` and ``compare``: flags checked, inputs read, the audit
run; a refusal is printed (and written to ``--out``) and exits 1, bad input exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Final, NoReturn

import click

from evalframe.audit import audit, with_ledger_problems
from evalframe.audit.arguments import check_options
from evalframe.cli.exits import EXIT_REFUSED, fail, print_problems, stderr, write_or_exit
from evalframe.cli.options import split_list
from evalframe.cli.signals import hold_stop_signals
from evalframe.columns import KIND, GradeKind
from evalframe.errors import AuditRefused, EvalframeError, OptionError, PlanError
from evalframe.importers._kit import declare
from evalframe.load import Loaded, storage_options
from evalframe.plan import Plan
from evalframe.progress import Progress
from evalframe.read import import_exports
from evalframe.report import AuditReport, build_refusal, check_output_folder, write_refusal
from evalframe.report.refusal import refusal_json, refusal_markdown

#: The audit options :func:`~evalframe.audit.arguments.check_options` checks, by their keyword names.
CHECKED: Final = ("retry", "missing", "grade", "max_attempts", "score_range", "pass_threshold", "slices", "cases")
#: The flag of an audit option whose name is not its keyword's (``--slice`` is repeated once per slice).
FLAGS: Final = {"slices": "--slice"}


def usage_error(exc: OptionError) -> click.BadParameter:
    """The usage error (exit 2) of an audit option at fault, against its flag, in the library's words."""
    return click.BadParameter(exc.reason, param_hint=FLAGS.get(exc.option, "--" + exc.option.replace("_", "-")))


def input_paths(paths: Sequence[Path], plan_path: Path | str | None, results_paths: Sequence[str]) -> list[str]:
    """Every path and glob a command reads (none may lie in its --out)."""
    return [*(str(p) for p in paths), *([] if plan_path is None else [str(plan_path)]), *results_paths]


def candidates_usage_error(exc: PlanError, plan_path: Path | str, candidates: str | None) -> None:
    """Raise the usage error (exit 2, with a hint) of a plan refused for how its candidates were named.

    A plan without a ``candidate`` column is crossed with the candidates named by --candidates; a plan with
    one (a units table, e.g. ``evalframe import``'s plan.parquet) names its own. The plan is read once
    (:meth:`Plan.from_file`); its refusal says which: no candidate declared (``empty_candidates``) without
    --candidates, or candidates named twice (``repeated_candidate``) with it, whose own names are distinct.
    """
    kinds = set(exc.problem_counts.get_column(KIND).to_list())
    if candidates is None and "empty_candidates" in kinds:
        msg = (
            f"the plan {plan_path} has no candidate column, so name the candidates: --candidates A,B "
            "(comma-separated, exactly as in the ledger's candidate column)"
        )
        raise click.UsageError(msg)
    if candidates is not None and "repeated_candidate" in kinds:
        msg = (
            f"the plan {plan_path} has a candidate column (one row per planned unit), which names the candidates: "
            "drop --candidates"
        )
        raise click.UsageError(msg)


@dataclass(frozen=True)
class InputFlags:
    """The flags of :func:`~evalframe.cli.options.input_options` that say how to read the plan and ledger."""

    score_name: str | None
    id_column: str | None
    candidates: str | None
    trials: int | None
    run_id: str | None


def _from_exports(
    from_format: str, paths: Sequence[Path], flags: InputFlags, *, grade: GradeKind, plan_given: bool
) -> tuple[Plan, Loaded, dict[str, Any]]:
    """The plan, ledger and provenance of ``--from FORMAT PATHS``."""
    if plan_given or not paths:
        raise click.UsageError("--from FORMAT takes export PATHS and no --plan/--results")
    imported = import_exports(from_format, paths, score=flags.score_name, grade=grade, id_column=flags.id_column)
    imported = declare(
        imported,
        candidates=split_list(flags.candidates),
        trials=flags.trials,
        run_id=flags.run_id,
    )
    results = Loaded(imported.ledger.lazy(), imported.notes, ", ".join(str(p) for p in paths))
    return imported.plan, results, {"imported_from": from_format, "exports": imported.info}


def _from_files(
    plan_path: Path | str | None, results_paths: Sequence[str], paths: Sequence[Path], flags: InputFlags
) -> Plan:
    """The plan of ``--plan FILE --results ...`` (the ledger is read by the audit, an import's with its notes)."""
    if plan_path is None or not results_paths or paths:
        raise click.UsageError("give --plan and --results (or --from FORMAT PATHS)")
    if flags.score_name is not None:
        raise click.UsageError("--score names the scorer of an export: it needs --from FORMAT")
    if flags.id_column is not None:
        raise click.UsageError("--id-column names a column of an export: it needs --from ragas or deepeval")
    trials = 1 if flags.trials is None else flags.trials
    try:
        return Plan.from_file(plan_path, candidates=split_list(flags.candidates), trials=trials, run_id=flags.run_id)
    except PlanError as exc:
        candidates_usage_error(exc, plan_path, flags.candidates)
        raise


def _refused(
    exc: AuditRefused, *, fmt: str, out: Path | None, inputs: list[str], progress: Progress | None
) -> NoReturn:
    """Print a refusal on stderr (and on stdout for json, markdown, github), write it to ``--out``; exit 1."""
    print_problems(exc.problems, stderr(), exc.problem_counts)
    refusal = replace(build_refusal(exc.problems, counts=exc.problem_counts), written=out is not None)
    if fmt == "json":  # machine readers get the refusal on stdout too: counts, then kind, line, key per kind
        click.echo(refusal_json(refusal))
    elif fmt in ("markdown", "github"):  # a CI job summary is never empty when the batch is refused
        click.echo(refusal_markdown(refusal, level=1 if fmt == "markdown" else 3))
    if out is not None:  # problems.parquet holds every problem, streamed from the refusal's files
        folder, command = out, f"evalframe {click.get_current_context().info_name}"
        write_or_exit(
            lambda: write_refusal(
                exc.problems,
                folder,
                command=command,
                inputs=inputs,
                progress=progress,
                counts=exc.problem_counts,
                every=exc.all_problems(),
                guard=hold_stop_signals,
            )
        )
    sys.exit(EXIT_REFUSED)


def build_report(
    *,
    paths: tuple[Path, ...],
    plan_path: Path | str | None,
    results_paths: tuple[str, ...],
    from_format: str | None,
    out: Path | None,
    retry_on: str,
    fmt: str = "table",
    progress: Progress | None = None,
    **options: Any,
) -> AuditReport:
    """Read the inputs and audit them; on refusal print the problems and exit 1, on bad input exit 2.

    ``options`` holds the :class:`InputFlags` and the audit's keyword arguments.
    """
    flags = InputFlags(**{f.name: options.pop(f.name) for f in fields(InputFlags)})
    try:  # the audit's own checks, before any file is read, in the words ef.audit uses
        check_options(**{k: options[k] for k in CHECKED}, bins=list(options["bins"]))
    except OptionError as exc:
        raise usage_error(exc) from None
    inputs = input_paths(paths, plan_path, results_paths)
    if out is not None:  # refused before the audit runs: a folder that is not evalframe's own is never touched
        write_or_exit(lambda: check_output_folder(out, inputs=inputs))
    options["retry_on"] = retry_on.split(",")
    options["partition_by"] = None if options["partition_by"] == "none" else options["partition_by"]
    with storage_options(options.pop("storage_options", None)):  # read every URL with them
        try:
            if from_format is not None:
                plan_given = plan_path is not None or bool(results_paths)
                plan, results, options["provenance"] = _from_exports(
                    from_format, paths, flags, grade=options["grade"], plan_given=plan_given
                )
                return audit(plan, results, progress=progress, **options)
            try:
                plan = _from_files(plan_path, results_paths, paths, flags)
            except PlanError as exc:  # the ledger's own problems too, in the same run (SPEC §3)
                checks = {k: options[k] for k in ("missing", "grade", "score_range", "pass_threshold", "extra_columns")}
                raise with_ledger_problems(exc, list(results_paths), **checks) from None
            return audit(plan, list(results_paths), progress=progress, **options)
        except OptionError as exc:
            raise usage_error(exc) from None
        except AuditRefused as exc:
            _refused(exc, fmt=fmt, out=out, inputs=inputs, progress=progress)
        except (EvalframeError, ValueError) as exc:
            fail(str(exc))
        except OSError as exc:  # inputs are read by the loaders (InputFormatError): this is the audit's own files
            where = f" {exc.filename}" if exc.filename else ""
            fail(f"cannot write the audit's temporary files{where}: {exc.strerror or exc}")
