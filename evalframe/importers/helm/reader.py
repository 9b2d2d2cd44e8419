"""The HELM import: every run folder read, case ids prefixed by scenario when several meet, one ledger."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from evalframe.columns import (
    CANDIDATE,
    CASE_ID,
    PASSED,
    RECORDED_SETTINGS,
    REPORTED_HEADLINES,
    SCORE,
    SCORE_STATUS,
    TASK,
    TRIAL,
)
from evalframe.importers import Imported
from evalframe.importers._kit import Refusal, finish, ledger_frame, plan_from_units
from evalframe.importers._settings import RunSettings, recorded, split_by_settings
from evalframe.importers.helm.files import (
    REQUIRED_FILES,
    SCENARIO,
    SPLIT,
    STATS,
    _Malformed,
    _parse_score,
    _run_folders,
)
from evalframe.importers.helm.run import _read_run, _RunRead
from evalframe.load import PathLike


def _split_by_settings(runs: Sequence[_RunRead]) -> list[dict[str, Any]]:
    """Runs of one scenario and model whose adapter specs differ become other candidates (the kit's rule)."""
    notes: list[dict[str, Any]] = []
    for scenario in sorted({run.scenario for run in runs}):
        mine = [run for run in runs if run.scenario == scenario]
        names, found = split_by_settings(
            [RunSettings(run.info["source"], run.info["model"], run.settings, group=scenario) for run in mine]
        )
        notes.extend(found)
        for run in mine:
            new = names.get((run.info["source"], run.info["model"]))
            if new is not None:
                run.rename(new)
    return notes


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read HELM run folders into a plan, a status ledger, notes and run facts.

    Parameters
    ----------
    paths
        Run folders (each holding ``run_spec.json``, ``scenario_state.json``
        and ``per_instance_stats.json``; ``stats.json`` is optional), files
        inside a run folder (their folder is read), or parent folders (every
        run folder below is read, e.g. ``benchmark_output/runs/<suite>``).
    score
        Name of the per-instance stat to grade with (``MetricName.name``, e.g.
        ``quasi_exact_match``, ``f1_score``, ``sst_score``), optionally with
        the split to audit (``exact_match,split=valid``); None reads
        ``exact_match`` on the split the module docstring's rule gives.

    Returns
    -------
    Imported
        ``plan``: one row per (candidate, case_id, trial) request planned in
        ``scenario_state.json`` (instances of the audited split ×
        ``num_train_trials``), with case columns ``split`` (String) and
        ``scenario`` (String), and ``task`` (String, the scenario) when runs
        of several scenarios are read. ``ledger``: one row per unit with at least one
        request (or a stat), columns ``candidate``, ``case_id``, ``run_id``
        (String), ``trial``, ``attempt`` (Int64, always 1), ``exec_status``
        (``completed``; ``error`` when a request's ``result.success`` is
        false; ``not_started`` when it has no result), ``score_status``
        (``scored``; ``judge_error`` for a stat with no value, a non-finite
        or an ambiguous one; ``not_scored`` when the unit has no such stat or
        its request did not complete), ``score`` (Float64, the stat's
        ``mean``), ``passed`` (Boolean, only when every score is 0 or 1),
        ``has_output`` (Boolean), ``line`` (Int64: 1-based position of the
        unit's entry in ``per_instance_stats.json``, or of its first request
        in ``scenario_state.json``) and ``source`` (String: that file).
        ``notes``: problems table of flags (``limited_run`` for the splits
        left out, ``header_rows_disagree``, ``not_a_score``,
        ``nonfinite_score``, ``run_status``). ``info``: one dict per run
        folder (run id, scenario, model, stat and split audited, splits left
        out, ``max_eval_instances``, ``num_train_trials``, instances per
        split, ``stats_json`` values per split — never evidence).

    Raises
    ------
    InputFormatError
        When a path does not exist.
    ImportUnreadable
        A missing or malformed run file (an ``unreadable_file`` note: the
        file, the line when known and the reason; the CLI exits 2).
    ImportRefused
        When another note refuses: a folder with no run (``no_export``), a stat
        or split the run does not have (``unknown_score``), several splits
        and none of them ``test`` (``ambiguous_score``). ``problems`` holds
        every note, of the other runs too.

    Examples
    --------
    >>> imported = read(["../shared/data/real/helm/evaleval-every_eval_ever/tests/data/helm/"
    ...                  "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"])
    >>> imported.ledger.group_by("candidate", "score_status", "passed").len().sort("passed")
    shape: (2, 4)
    ┌─────────────┬──────────────┬────────┬─────┐
    │ candidate   ┆ score_status ┆ passed ┆ len │
    │ ---         ┆ ---          ┆ ---    ┆ --- │
    │ str         ┆ str          ┆ bool   ┆ u32 │
    ╞═════════════╪══════════════╪════════╪═════╡
    │ openai/gpt2 ┆ scored       ┆ false  ┆ 8   │
    │ openai/gpt2 ┆ scored       ┆ true   ┆ 1   │
    └─────────────┴──────────────┴────────┴─────┘
    >>> imported.notes.select("kind", "refusing").rows()
    [('limited_run', False)]
    >>> read(["../shared/data/real/helm/evaleval-every_eval_ever/tests/data/helm/"
    ...       "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"],
    ...      score="exact_match,split=valid").plan.cases.select("case_id", "split").rows()
    [('id11', 'valid')]
    """
    declared_stat, declared_split = _parse_score(score)
    folders, raw_notes = _run_folders(paths)
    runs: list[_RunRead] = []
    for folder in folders:
        try:
            runs.append(_read_run(folder, declared_stat, declared_split))
        except _Malformed as exc:
            raw_notes.append(exc.note())
        except Refusal as exc:
            raw_notes.append(exc.note)
    raw_notes.extend(_split_by_settings(runs))
    several = len({run.scenario for run in runs}) > 1
    for run in runs:  # what a comparison reads: the adapter spec but the model's identity, and how many instances ran
        limit = run.info.get("max_eval_instances")
        own = {k: v for k, v in run.settings.items() if k != "model_deployment"}
        run.info[RECORDED_SETTINGS] = recorded({**own, **({"max_eval_instances": limit} if limit else {})})
        if several:
            run.info[TASK] = run.scenario
    if several:  # each scenario is a task (tasks are keys: never pooled), its case ids prefixed by it
        for run in runs:
            for row in (*run.plan_rows, *run.ledger_rows, *run.notes):
                if row.get(CASE_ID) is not None:
                    row[CASE_ID] = f"{run.scenario}/{row[CASE_ID]}"
            for row in run.plan_rows:
                row[TASK] = run.scenario
            for reported in run.info[REPORTED_HEADLINES]:
                reported[TASK] = run.scenario
    plan_rows = [row for run in runs for row in run.plan_rows]
    ledger_rows = [row for run in runs for row in run.ledger_rows]
    raw_notes.extend(n for run in runs for n in run.notes)
    source = ";".join(str(p) for p in paths)

    ledger = ledger_frame(ledger_rows)
    scores = ledger.get_column(SCORE).drop_nulls()
    if scores.is_in([0.0, 1.0]).all():
        ledger = ledger.with_columns(pl.when(pl.col(SCORE_STATUS) == "scored").then(pl.col(SCORE) == 1.0).alias(PASSED))
    else:
        ledger = ledger.drop(PASSED)

    schema = {CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, SPLIT: pl.String, SCENARIO: pl.String}
    if several:
        schema[TASK] = pl.String
    plan, plan_problems = plan_from_units(pl.DataFrame(plan_rows, schema=schema), source=source, notes=raw_notes)
    # the files of each run folder read: the required ones and stats.json when there
    files = [folder / name for folder in folders for name in (*REQUIRED_FILES, STATS) if (folder / name).is_file()]
    return finish(plan, ledger, [raw_notes, plan_problems], [run.info for run in runs], files=files)
