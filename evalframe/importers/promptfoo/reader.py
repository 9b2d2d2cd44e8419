"""The promptfoo import: files loaded, the score chosen across them, each file read, one plan and ledger."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, PASSED, RECORDED_SETTINGS, SETTINGS_BY_TASK, TASK, TRIAL
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.importers._kit import (
    CaseNames,
    ScoreChoiceError,
    Unreadable,
    choose_score,
    find_files,
    finish,
    plan_from_units,
)
from evalframe.importers._settings import RunSettings, recorded, split_by_settings
from evalframe.importers.promptfoo.export import _Export, _export_named_scores, _is_export, _load
from evalframe.importers.promptfoo.file import _FileRead, _read_export
from evalframe.importers.promptfoo.rows import SUCCESS, WEIGHTED
from evalframe.load import PathLike


def _as_tasks(
    reads: Sequence[_FileRead], sources: Sequence[str], renamed: Mapping[tuple[str, str], str]
) -> pl.DataFrame:
    """The planned units, each prompt a task when the import holds several (its rows' case ids ``<task>/<id>``).

    With one prompt there is no ``task`` column, as in any one-task import; the rows and notes lose the
    ``task`` the file reading gave them. Candidates are renamed as ``renamed`` says (runs of other settings).
    """
    tasks = {t for r in reads for (t, _), _, _ in r.units} | {row[TASK] for r in reads for row in r.rows}
    case_of = CaseNames.of(tasks)
    for r in reads:
        for row in r.rows:
            task = row.pop(TASK)
            row[CASE_ID] = case_of(task, row[CASE_ID])
        if not case_of.prefixed:
            for n in r.notes:
                n.pop(TASK, None)
    units = {
        (renamed.get((source, c), c), case_of(t, case), trial, t): None
        for r, source in zip(reads, sources, strict=True)
        for (t, c), case, trial in r.units
    }
    schema = {CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, TASK: pl.String}
    frame = pl.DataFrame(list(units), schema=schema, orient="row")
    return frame if case_of.prefixed else frame.drop(TASK)


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read promptfoo eval exports into a plan and a status ledger.

    Parameters
    ----------
    paths
        One or more files written by ``promptfoo eval --output x.json`` or
        ``promptfoo export`` (summary version 2 or 3, or a bare legacy
        summary), or ``--output x.jsonl`` files (one result row per line), or
        folders holding them (searched recursively for ``.json``/``.jsonl``).
    score
        What ``score`` holds (see the module documentation): None or
        ``"success"``, the binary grade from ``success``; ``"score"``,
        promptfoo's weighted score (audit with ``grade="numeric"``); any
        other name, the named assertion metric ``namedScores[score]``.

    Returns
    -------
    Imported
        ``plan``: the declared providers (candidates) × the declared test
        runs (see the module documentation), with the case column ``task``
        (String: the prompt) when the import holds several prompts, ``trials``
        = the config's ``evaluateOptions.repeat`` when the repetitions could
        be matched.
        ``ledger``: one row per result with the columns of
        :data:`LEDGER_SCHEMA` — ``candidate``, ``case_id`` (String),
        ``trial``, ``attempt`` (Int64; attempt is always 1), ``run_id``
        (String, the ``evalId``), ``exec_status`` and ``score_status``
        (String), ``score`` (Float64, null unless scored), ``passed``
        (Boolean, promptfoo's verdict, null unless scored; absent for a named
        score without pass verdicts), ``has_output`` (Boolean: the response
        has an ``output``), ``limit`` (String: ``time`` or ``max_eval_time``
        for timeouts), ``line`` (Int64: 1-based position in
        ``results.results``, or the physical line of a ``.jsonl`` file) and
        ``source`` (String). ``notes``: the flags ``header_rows_disagree``,
        ``nonfinite_score``, ``not_a_score`` and ``plan_from_rows``.
        ``info``: one dict per file (layout, version, ``run_id`` = eval id,
        timestamp, promptfoo version, header ``stats``, rows read,
        candidates, prompts, plan basis, case id basis, score read, named
        scores).

    Raises
    ------
    InputFormatError
        When a path does not exist.
    ImportUnreadable
        A file or a result that cannot be read (an ``unreadable_file`` note:
        the file, the line and the reason; the CLI exits 2).
    ImportRefused
        When another import note refuses: ``no_export`` (a folder without an export),
        ``unknown_score`` (``score`` names no score of the export),
        ``empty_plan``/``empty_candidates`` (nothing planned), or a plan
        problem such as ``padded_identifier``.

    Examples
    --------
    >>> imp = read(["../shared/data/real/promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"])
    >>> imp.plan.candidates, imp.plan.cases.get_column("case_id").to_list()
    (('openai:gpt-5', 'openai:gpt-5-mini'), ['0', '1'])
    >>> imp.ledger.sort("candidate", "case_id").select("candidate", "case_id", "exec_status", "score", "passed")
    shape: (4, 5)
    ┌───────────────────┬─────────┬─────────────┬───────┬────────┐
    │ candidate         ┆ case_id ┆ exec_status ┆ score ┆ passed │
    │ ---               ┆ ---     ┆ ---         ┆ ---   ┆ ---    │
    │ str               ┆ str     ┆ str         ┆ f64   ┆ bool   │
    ╞═══════════════════╪═════════╪═════════════╪═══════╪════════╡
    │ openai:gpt-5      ┆ 0       ┆ completed   ┆ 0.0   ┆ false  │
    │ openai:gpt-5      ┆ 1       ┆ completed   ┆ 0.0   ┆ false  │
    │ openai:gpt-5-mini ┆ 0       ┆ completed   ┆ 0.0   ┆ false  │
    │ openai:gpt-5-mini ┆ 1       ┆ completed   ┆ 0.0   ┆ false  │
    └───────────────────┴─────────┴─────────────┴───────┴────────┘
    >>> read(["../shared/data/real/promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"],
    ...      score="score").ledger.sort("candidate", "case_id").get_column("score").round(3).to_list()
    [0.5, 0.667, 0.75, 0.667]
    """
    files, notes = find_files(paths, is_export=_is_export, what=".json or .jsonl promptfoo export", required=True)
    exports: list[_Export] = []
    info: list[dict[str, Any]] = []
    for path in files:
        try:
            exports.append(_load(path))
            info.append(exports[-1].info)
        except Unreadable as exc:
            notes.append(exc.note)
            info.append({"source": str(path), "format": "promptfoo", "layout": None, "rows_read": 0})
    source = "promptfoo:" + ",".join(str(f) for f in files)
    named = [name for e in exports for name in _export_named_scores(e)]
    try:
        choice = choose_score(score, [SUCCESS, WEIGHTED, *named], default=SUCCESS, what="score", source=source)
    except ScoreChoiceError as exc:
        notes.append(exc.note)
        choice = SUCCESS
    reads = [_read_export(e, choice=choice or SUCCESS) for e in exports]
    # Files of one provider whose config records other settings are other candidates (SPEC §6c).
    runs = [RunSettings(e.source, c, s) for e, r in zip(exports, reads, strict=True) for c, s in r.settings.items()]
    renamed, setting_notes = split_by_settings(runs)
    notes.extend(setting_notes)
    frame = _as_tasks(reads, [e.source for e in exports], renamed)
    for e, r in zip(exports, reads, strict=True):
        for row in r.rows:
            row[CANDIDATE] = renamed.get((e.source, row[CANDIDATE]), row[CANDIDATE])
        for n in r.notes:
            if n.get(CANDIDATE) is not None:
                n[CANDIDATE] = renamed.get((e.source, n[CANDIDATE]), n[CANDIDATE])
        # What a comparison reads: each provider's settings in this export (its config's options, prompts…).
        e.info[SETTINGS_BY_TASK] = [
            {CANDIDATE: renamed.get((e.source, c), c), RECORDED_SETTINGS: recorded(s)}
            for c, s in r.settings.items()
            if s
        ]
    rows = [row for r in reads for row in r.rows]
    ledger = pl.DataFrame(rows, schema=LEDGER_SCHEMA, orient="row") if rows else pl.DataFrame(schema=LEDGER_SCHEMA)
    if not all(r.named_pass_complete for r in reads):
        ledger = ledger.drop(PASSED)
    # Tests scoped to some prompts or providers make the plan a units table rather than a cross product.
    plan, plan_problems = plan_from_units(frame, source=source, notes=[*notes, *(n for r in reads for n in r.notes)])
    return finish(plan, ledger, [notes, *(r.notes for r in reads), plan_problems], info, files=files)
