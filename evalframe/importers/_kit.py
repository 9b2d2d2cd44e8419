"""The importer toolkit: what every importer does the same way, in one place (importers take every name here).

* :func:`find_files`: files as given, folders searched; a folder without an export file is a refusing
  ``no_export`` note, a missing path an :class:`~evalframe.errors.InputFormatError`.
* :mod:`~evalframe.importers._json`: unreadable bytes, invalid or too deep JSON are one ``unreadable_file``
  note naming file and line (:func:`finish` raises :class:`ImportUnreadable`, exit 2); ``NaN`` is read.
* :mod:`~evalframe.importers._notes`: every note kind is one of :data:`~evalframe.problems.PROBLEM_KINDS`.
* :mod:`~evalframe.importers._grades`: one grade meaning (:func:`grade`) and one way to choose the score
  (:func:`choose_score`: ``unknown_score`` / ``ambiguous_score`` refuse, naming the scores there are).
* :mod:`~evalframe.importers._rows`: one row shape (:func:`ledger_row`), one row order (:func:`ledger_frame`),
  ``passed`` kept only when complete, ``<task>/<id>`` case ids when several tasks are read (:class:`CaseNames`).
* :func:`build_plan`, :func:`plan_from_units`, :func:`finish`: the plan is what the export says was planned,
  the ledger the rows present; a refusing note raises :class:`ImportRefused` (an unreadable file
  :class:`ImportUnreadable`), so neither the CLI nor the Python API audits a partial import.
* :func:`declare`: ``candidates``, ``trials`` and ``run_id`` bind an import exactly as a ``--plan`` file does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, KIND, LINE, PASSED, REFUSING, RUN_ID, SOURCE, TASK, TRIAL
from evalframe.errors import AuditRefused, ImportUnreadable, InputFormatError, PlanError
from evalframe.importers import Imported
from evalframe.importers._grades import LETTER_GRADES, ScoreChoiceError, choose_score, failure_kind, grade, mean
from evalframe.importers._json import json_int, json_object, parse_json, read_json, read_json_lines
from evalframe.importers._notes import Refusal, Unreadable, note, planned_size, spelling_note
from evalframe.importers._rows import CaseNames, ledger_frame, ledger_row, passed_if_complete
from evalframe.load import MAX_PLANNED_UNITS, PathLike
from evalframe.plan import Plan
from evalframe.problems import concat_problems, problems_frame

__all__ = [
    "LETTER_GRADES",
    "MAX_PLANNED_UNITS",
    "TRIALS",
    "CaseNames",
    "ImportRefused",
    "ImportUnreadable",
    "Refusal",
    "ScoreChoiceError",
    "Unreadable",
    "build_plan",
    "build_plan_of_trials",
    "choose_score",
    "declare",
    "failure_kind",
    "find_files",
    "finish",
    "grade",
    "json_int",
    "json_object",
    "ledger_frame",
    "ledger_row",
    "mean",
    "note",
    "parse_json",
    "passed_if_complete",
    "plan_from_units",
    "planned_size",
    "read_json",
    "read_json_lines",
    "spelling_note",
]


class ImportRefused(AuditRefused):
    """An export could not be imported as a whole: its refusing notes are in ``problems``.

    Raised by every importer's ``read`` (and so by ``evalframe audit
    --from``, exit 1) when a note refuses (other than an unreadable file:
    :class:`ImportUnreadable`), so a plan and ledger that look complete never
    leave an import that is not.
    """


def find_files(
    paths: Sequence[PathLike], *, is_export: Callable[[Path], bool], what: str, required: bool = False
) -> tuple[list[Path], list[dict[str, Any]]]:
    """The export files named by ``paths``: files as given, folders searched recursively.

    Parameters
    ----------
    paths
        Files and folders.
    is_export
        Whether a file found inside a folder is one of this format's export
        files (files given directly are always returned: the importer judges them).
    what
        What the format's files are called, for the ``no_export`` note (e.g.
        ``".eval or .json Inspect log"``).
    required
        Whether no path at all (no file and no note) is an input error (else an empty import).

    Returns
    -------
    tuple
        The files, sorted and each once (a file named twice is read once),
        and the notes: one refusing ``no_export`` per folder with no export file.

    Raises
    ------
    InputFormatError
        When a path does not exist, or nothing is found and ``required``.

    Examples
    --------
    >>> files, notes = find_files(["data/fixtures/orbit_desk"], is_export=lambda p: p.suffix == ".eval", what="log")
    >>> files, notes[0]["kind"]
    ([], 'no_export')
    """
    files: dict[Path, Path] = {}
    notes: list[dict[str, Any]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(q for q in path.rglob("*") if q.is_file() and is_export(q))
            if not found:
                notes.append(note("no_export", str(path), f"no {what} file found in this folder"))
            for q in found:
                files.setdefault(q.resolve(), q)
        elif path.exists():
            files.setdefault(path.resolve(), path)
        else:
            raise InputFormatError(str(path), "no such file or directory")
    if required and not files and not notes:
        raise InputFormatError("", "no input files given")
    return sorted(files.values()), notes


def build_plan(units: pl.DataFrame, *, source: str) -> tuple[Plan, pl.DataFrame]:
    """The plan of planned units, or an unvalidated plan and the problems that refuse it.

    Parameters
    ----------
    units
        One row per planned unit: ``candidate``, ``case_id`` (String),
        ``trial`` (Int64), plus case columns (slices such as ``task`` or
        ``split``), equal for every row of a case.
    source
        Where the plan came from.

    Returns
    -------
    tuple
        The :class:`~evalframe.plan.Plan` (a cross product when the units are
        every candidate × case × trial, else a units table) and its problems
        (``empty_plan`` when there is no unit; ``duplicate_case`` when a case
        is listed with different case columns; identifier problems).

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["m", "m"], "case_id": ["1", "2"], "trial": [1, 1], "task": ["t", "t"]})
    >>> plan, problems = build_plan(units, source="x.eval")
    >>> plan.n_units, plan.units is None, problems.height
    (2, True, 0)
    >>> build_plan(units.clear(), source="x.eval")[1].get_column("kind").to_list()
    ['empty_candidates', 'empty_plan']
    """
    units = units.with_columns(pl.col(TRIAL).cast(pl.Int64))
    case_columns = [c for c in units.columns if c not in (CANDIDATE, TRIAL)]
    cases = units.select(case_columns).unique(maintain_order=True)
    keys = units.select(CANDIDATE, CASE_ID, TRIAL).unique()  # Plan.with_units codes and sorts them
    candidates = units.get_column(CANDIDATE).unique(maintain_order=True).to_list()  # not one str per unit
    plan, problems = _validated_plan(cases, candidates, source)
    if problems.height:
        return plan, problems
    trials = int(keys.get_column(TRIAL).max())  # type: ignore[arg-type]
    plan = replace(plan, trials=trials)
    # Units are unique and inside candidates × cases × trials: equal sizes mean the full cross product.
    if keys.height == len(candidates) * plan.cases.height * trials and int(keys.get_column(TRIAL).min()) == 1:  # type: ignore[arg-type]
        return plan, problems
    return plan.with_units(keys), problems


#: Column of the frame :func:`build_plan_of_trials` reads: a (candidate, case)'s trials are 1 to this count.
TRIALS = "trials"


def build_plan_of_trials(cases: pl.DataFrame, *, source: str) -> tuple[Plan, pl.DataFrame]:
    """:func:`build_plan` of units given as a trial count per candidate and case (trials 1..``trials``).

    The plan and problems are those of :func:`build_plan` on the units the rows stand for, built without a
    row per unit when every candidate has every case and the same count (a cross product): an Inspect header
    planning 3M sample ids × 2 epochs is then 3M rows, never 6M rows made unique and sorted by their text.
    Only a plan that is not a cross product is spelled out unit by unit (its units table).

    Parameters
    ----------
    cases
        One row per (candidate, case): ``candidate``, ``case_id`` (String), ``trials`` (Int64, ≥ 1), plus case
        columns equal for every row of a case. Rows repeating a candidate and case are their union: trials
        1 to the largest count.
    source
        Where the plan came from.

    Returns
    -------
    tuple
        As :func:`build_plan`: the plan and its problems. Candidates are in sorted order; the cases' rows
        (their ``line`` in a problem) in the order of their first row.

    Examples
    --------
    >>> cases = pl.DataFrame({"candidate": ["m", "m", "n"], "case_id": ["1", "2", "1"], "trials": [2, 2, 1]})
    >>> plan, problems = build_plan_of_trials(cases.head(2), source="x.eval")
    >>> plan.n_units, plan.trials, plan.units is None, problems.height
    (4, 2, True, 0)
    >>> plan, _ = build_plan_of_trials(cases, source="x.eval")
    >>> plan.units.sort("candidate", "case_id", "trial").rows()
    [('m', '1', 1), ('m', '1', 2), ('m', '2', 1), ('m', '2', 2), ('n', '1', 1)]
    """
    case_columns = [c for c in cases.columns if c not in (CANDIDATE, TRIALS)]
    ranges = cases.with_columns(pl.col(TRIALS).cast(pl.Int64))
    if ranges.select(CANDIDATE, *case_columns).n_unique() < ranges.height:  # a case repeated: grouped, not always
        ranges = ranges.group_by(CANDIDATE, *case_columns, maintain_order=True).agg(pl.col(TRIALS).max())
    candidates = sorted(ranges.get_column(CANDIDATE).unique().to_list())
    # One candidate's rows are its cases, each once; several candidates share theirs.
    listed = ranges.select(case_columns)
    plan, problems = _validated_plan(
        listed if len(candidates) == 1 else listed.unique(maintain_order=True), candidates, source
    )
    if problems.height:
        return plan, problems
    counts = ranges.get_column(TRIALS)
    plan = replace(plan, trials=int(counts.max()))  # type: ignore[arg-type]
    # Validated cases are unique, so (candidate, case) pairs are: as many as candidates × cases is all of them.
    if ranges.height == len(candidates) * plan.cases.height and counts.min() == counts.max():
        return plan, problems
    units = ranges.select(CANDIDATE, CASE_ID, pl.int_ranges(1, pl.col(TRIALS) + 1, dtype=pl.Int64).alias(TRIAL))
    return plan.with_units(units.explode(TRIAL)), problems


def _validated_plan(cases: pl.DataFrame, candidates: list[str], source: str) -> tuple[Plan, pl.DataFrame]:
    """The plan of ``cases`` × ``candidates`` and no problem, or an unvalidated plan and the problems refusing it."""
    try:
        return Plan.from_frame(cases, candidates=candidates, source=source), problems_frame()
    except PlanError as exc:
        unvalidated = Plan(cases=cases.unique(CASE_ID, keep="first"), candidates=tuple(candidates), source=source)
        return unvalidated, exc.problems


def plan_from_units(
    units: pl.DataFrame, *, source: str, notes: Iterable[Mapping[str, Any]]
) -> tuple[Plan, pl.DataFrame]:
    """:func:`build_plan`, without its problems when there is no unit and a note already refuses.

    Nothing was read then, and the refusing notes say why: an ``empty_plan`` would only repeat them.

    Examples
    --------
    >>> empty = pl.DataFrame(schema={"candidate": pl.String, "case_id": pl.String, "trial": pl.Int64})
    >>> plan_from_units(empty, source="x", notes=[note("no_export", "logs/", "no log")])[1].height
    0
    >>> plan_from_units(empty, source="x", notes=[])[1].get_column("kind").to_list()
    ['empty_candidates', 'empty_plan']
    """
    plan, problems = build_plan(units, source=source)
    if units.height == 0 and any(n[REFUSING] for n in notes):
        problems = problems.clear()
    return plan, problems


def pooled_metrics(info: Sequence[Mapping[str, Any]], source: str) -> list[dict[str, Any]]:
    """A ``pooled_metrics`` note for each candidate and task whose files were graded by different metrics (or scorers).

    Tasks are keys (SPEC §1): every rate is per (task, candidate), so rows graded by different metrics in
    different tasks never share a denominator. Within one task, rows graded by ``acc`` in one file and by
    ``prompt_level_strict`` in another make one rate of two measures; the note names the candidate (the
    file's ``candidate`` or ``model``; files naming neither count as one), the task (the file's ``task``;
    files naming none count as one) and each metric with its files' count (not refusing: ``--slice`` on
    the plan's columns, or one metric's files at a time, keeps them apart).

    Examples
    --------
    >>> info = [{"candidate": "A", "metric": m} for m in ("acc", "prompt_level_strict", "prompt_level_strict")]
    >>> print(pooled_metrics(info, "viz/")[0]["detail"])  # doctest: +NORMALIZE_WHITESPACE
    A's rates pool rows graded by 2 metrics: acc (1 file), prompt_level_strict (2 files); read one metric's
    files at a time, or break the funnel down with --slice
    >>> pooled_metrics([{"candidate": "A", "metric": "acc"}, {"candidate": "B", "metric": "f1"}], "viz/")
    []
    >>> pooled_metrics([{"candidate": "A", "task": t, "metric": m} for t, m in (("b", "acc"), ("i", "em"))], "x/")
    []
    """
    files: dict[tuple[str | None, str | None], dict[str, int]] = {}
    for facts in info:
        metric = facts.get("metric", facts.get("scorer"))
        if metric is not None:
            who, task = facts.get("candidate", facts.get("model")), facts.get(TASK)
            mine = files.setdefault((None if who is None else str(who), None if task is None else str(task)), {})
            mine[str(metric)] = mine.get(str(metric), 0) + 1
    notes = []
    for (who, task), metrics in files.items():
        if len(metrics) < 2:
            continue
        each = ", ".join(f"{m} ({n} file{'' if n == 1 else 's'})" for m, n in sorted(metrics.items()))
        whose = "the" if who is None else f"{who}'s"
        where = "" if task is None else f" on task {task!r}"
        detail = (
            f"{whose} rates{where} pool rows graded by {len(metrics)} metrics: {each}; read one metric's files "
            "at a time, or break the funnel down with --slice"
        )
        own = {} if task is None else {TASK: task}
        notes.append({**note("pooled_metrics", source, detail, candidate=who), **own})
    return notes


def finish(
    plan: Plan,
    ledger: pl.DataFrame,
    notes: Sequence[pl.DataFrame | Sequence[Mapping[str, Any]]],
    info: list[dict[str, Any]],
    *,
    files: Sequence[PathLike],
) -> Imported:
    """The import's result; raises :class:`ImportUnreadable` or :class:`ImportRefused` when a note refuses.

    A file that could not be read at all is an input error, not a refused
    batch (SPEC §6b): evalframe reads no part of an export whose files it
    cannot read, so the CLI exits 2 with one line naming the first such file,
    its line and the reason, and writes nothing.

    Parameters
    ----------
    plan, ledger, info
        As in :class:`~evalframe.importers.Imported`.
    files
        The export files read (:attr:`~evalframe.importers.Imported.files`
        holds them sorted, each once).
    notes
        Problem frames and lists of note dictionaries, in any number.

    Raises
    ------
    ImportUnreadable
        When a note is ``unreadable_file``: ``path``, ``line`` and ``detail``
        of the first (sorted by file and line), the other files with one, and
        every note in ``notes``.
    ImportRefused
        When another note refuses; ``problems`` holds every note.

    Examples
    --------
    >>> empty = pl.DataFrame(schema={"candidate": pl.String, "case_id": pl.String, "trial": pl.Int64})
    >>> plan, _ = build_plan(empty, source="x")
    >>> bad = [note("unreadable_file", "b.jsonl", "invalid JSON", line=3), note("unreadable_file", "a.jsonl", "bad")]
    >>> try:
    ...     finish(plan, empty, [bad], [], files=[])
    ... except ImportUnreadable as exc:
    ...     print(exc.path, exc.line, exc.other_files, exc.notes.height)
    ...     print(exc)
    a.jsonl None ['b.jsonl'] 2
    a.jsonl: bad (and 1 more unreadable place(s))
    """
    frames = [n if isinstance(n, pl.DataFrame) else problems_frame(n) for n in notes]
    table = concat_problems([*frames, problems_frame(pooled_metrics(info, plan.source))])
    unreadable = table.filter(pl.col(REFUSING) & (pl.col(KIND) == "unreadable_file")).sort(
        SOURCE, LINE, nulls_last=False
    )
    if unreadable.height:
        first = unreadable.row(0, named=True)
        others = sorted(set(unreadable.get_column(SOURCE).to_list()) - {first[SOURCE]})
        raise ImportUnreadable(first[SOURCE], first["detail"], line=first[LINE], other_files=others, notes=table)
    if table.filter(pl.col(REFUSING)).height:
        raise ImportRefused(table)
    read = sorted({os.fspath(f) for f in files})
    return Imported(plan=plan, ledger=ledger, notes=table, info=info, files=read)


def declare(
    imported: Imported,
    *,
    candidates: Sequence[str] | None = None,
    trials: int | None = None,
    run_id: str | None = None,
) -> Imported:
    """Bind an import to what the user declared, exactly as a ``--plan`` file is bound.

    Parameters
    ----------
    imported
        What an importer read.
    candidates
        The planned candidates. Each is planned on the export's cases (a
        declared candidate the export has no row for is planned and all its
        units are missing); the export's rows of an undeclared candidate are
        then ``unknown_candidate`` and refuse the audit.
    trials
        Trials per (candidate, case): units 1..``trials`` of every planned
        (candidate, case); a row of a higher trial refuses as
        ``trial_out_of_range``, a trial with no row is missing.
    run_id
        The run every row must come from (rows of another run refuse as
        ``run_mismatch``). A run id no row and no export header carries
        refuses the import (``unknown_run``).

    Returns
    -------
    Imported
        The same import with its plan re-declared.

    Raises
    ------
    ImportRefused
        ``unknown_run`` when ``run_id`` is not in the export;
        ``empty_candidates``/``repeated_candidate`` for a bad list.

    Examples
    --------
    >>> from evalframe.importers import inspect_ai
    >>> path = ("../shared/data/real/inspect_ai/evaleval-every_eval_ever/tests/data/inspect/"
    ...         "data_arc_qwen.json")
    >>> imported = declare(inspect_ai.read([path]), candidates=["ollama/qwen2.5:0.5b", "other"], trials=2)
    >>> imported.plan.candidates, imported.plan.n_units
    (('ollama/qwen2.5:0.5b', 'other'), 12)
    """
    plan = imported.plan
    if run_id is not None:
        seen = set(imported.ledger.get_column(RUN_ID).drop_nulls().to_list())
        seen |= {str(i.get("run_id")) for i in imported.info if i.get("run_id") is not None}
        if run_id not in seen:
            have = ", ".join(sorted(seen)) or "none"
            raise ImportRefused(
                problems_frame([note("unknown_run", plan.source, f"no run {run_id!r} in the export (has: {have})")])
            )
        plan = replace(plan, run_id=run_id)
    if candidates is not None or trials is not None:
        names = list(candidates) if candidates is not None else list(plan.candidates)
        n = trials if trials is not None else plan.trial_range[1]
        if plan.units is None:
            plan = Plan.from_frame(plan.cases, candidates=names, trials=n, run_id=plan.run_id, source=plan.source)
        else:
            cases_of = plan.units.select(CANDIDATE, CASE_ID).unique()
            all_cases = plan.cases.select(CASE_ID)
            rows = []
            for name in names:
                own = cases_of.filter(pl.col(CANDIDATE) == name).select(CASE_ID)
                rows.append((own if own.height else all_cases).with_columns(pl.lit(name).alias(CANDIDATE)))
            pairs = pl.concat(rows) if rows else pl.DataFrame(schema={CASE_ID: pl.String, CANDIDATE: pl.String})
            units = pairs.join(pl.DataFrame({TRIAL: list(range(1, n + 1))}, schema={TRIAL: pl.Int64}), how="cross")
            base = Plan.from_frame(plan.cases, candidates=names, trials=n, run_id=plan.run_id, source=plan.source)
            plan = replace(base.with_units(units.select(CANDIDATE, CASE_ID, TRIAL)), candidates=tuple(names))
    return replace(imported, plan=plan)


def as_numeric_scores(imported: Imported) -> Imported:
    """The import read as numeric scores (``--grade numeric``): its ledger without ``passed``.

    A number is never a pass or a fail without a declared threshold, in every format: HELM's and Inspect's
    importers give a score as a pass/fail grade when every score they read happens to be 0 or 1, and
    DeepEval's metric ``success``, promptfoo's ``success`` or every_eval_ever's ``is_correct`` is the
    export's own verdict beside the score. Once the scores are declared numeric, that column is dropped,
    so that without ``--pass-threshold`` ``passed`` and every pass rate are null (the summary gives the
    mean score), and with one the declared threshold alone decides every unit. The binary reading of an
    export's own verdict is ``--grade binary`` (DeepEval's ``success``, every_eval_ever's ``is_correct``).

    Examples
    --------
    >>> from evalframe.importers import helm
    >>> runs = "../shared/data/real/helm/stanford-crfm-helm-PR2828/benchmark_output_TRUE_latest/runs/v3/"
    >>> imported = helm.read([runs + "simple_safety_tests:model=google_gemini-1.5-pro-001"], score="sst_score")
    >>> "passed" in imported.ledger.columns, "passed" in as_numeric_scores(imported).ledger.columns
    (True, False)
    """
    if PASSED not in imported.ledger.columns:
        return imported
    return replace(imported, ledger=imported.ledger.drop(PASSED))
