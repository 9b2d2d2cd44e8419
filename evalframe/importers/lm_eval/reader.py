"""The lm-eval import: files linked, each task's filter and metric chosen, rows graded, units planned."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from evalframe.columns import ATTEMPT, CANDIDATE, CASE_ID, LINE, RUN_ID, SOURCE, TRIAL
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.importers._kit import build_plan, finish
from evalframe.importers.lm_eval.batch import _Batch
from evalframe.importers.lm_eval.files import _split_score
from evalframe.importers.lm_eval.grading import _Choice, grade_task
from evalframe.importers.lm_eval.results import _header_tasks
from evalframe.load import PathLike


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read lm-evaluation-harness samples and results files into a plan and a status ledger.

    Parameters
    ----------
    paths
        Samples files (``samples_<task>_<timestamp>.jsonl``, or the older
        JSON-Lines-in-``.json``), results files (``results_<timestamp>.json``
        or ``<stem>_<timestamp>.json``) or folders (searched recursively for
        both). Each samples file is read with the results file beside it
        with the same timestamp suffix. A results file given directly, or
        found in a given folder, also plans its tasks that have no samples
        file (they are all missing).
    score
        The per-row metric to grade by, optionally with lm-eval's filter:
        ``"metric"`` or ``"metric,filter"`` (e.g. ``"acc"``,
        ``"exact_match,strict-match"``). The filter must be declared when a
        task has several (in its rows or its results file). Default metric, per task: the only per-row score
        (``percent_parseable`` aside), else the first of acc, exact_match,
        acc_norm, em, mc1, … present; several and none of those refuses
        (``ambiguous_score``). A metric the rows do not have refuses
        (``unknown_score``, naming those they have).

    Returns
    -------
    Imported
        ``plan``: one unit per (candidate, ``<task>/<doc_id>``) with trial 1;
        doc ids ``0 … n-samples.effective − 1`` (the documents the run was set
        to run); plan columns ``task`` and ``filter`` (String).
        ``ledger``: one row per samples row of the graded filter with
        ``candidate``, ``case_id``, ``trial`` (1), ``attempt`` (re-runs of a
        unit numbered by timestamp), ``run_id`` (the timestamp),
        ``exec_status`` (``completed``), ``score_status`` (``scored``;
        ``judge_error`` for a non-finite value, a value that is not a number
        on a metric that scores other rows, or an unparseable answer;
        ``not_scored`` for a metric that is never a per-row score),
        ``score``, ``passed`` (set only for a binary metric, whose every
        value is 0 or 1), ``has_output`` (from ``resps``), ``line`` and
        ``source``.
        ``notes`` (flags): ``limited_run`` (``--limit``: "--limit 20: 20 of
        13812 documents planned"), ``settings_differ``,
        ``header_rows_disagree``, ``plan_from_rows``, ``not_a_score``,
        ``nonfinite_score``, ``id_normalised``.
        ``info``: one dict per file read (task, model, run id, n-samples,
        ``--limit``, task version, aggregate metric values, rows, filter,
        metric).

    Raises
    ------
    ImportUnreadable
        An ``unreadable_file`` note (bad JSON line, undecodable bytes,
        unknown file name, results file without a ``results`` object): the
        file, the line and the reason; the CLI exits 2.
    ImportRefused
        With the notes, when another refuses: ``ambiguous_rows`` (several
        filters, none declared), ``unknown_score``, ``ambiguous_score``,
        ``no_export`` (a folder with no lm-eval file), ``empty_plan``.
    InputFormatError
        When a path does not exist.

    Notes
    -----
    lm-eval has no formal schema; the layout follows ``docs/interface.md``
    (``--output_path``, ``--log_samples``) of EleutherAI/lm-evaluation-harness
    and the files its evaluation tracker writes. Header aggregates
    (``results``) and ``n-samples.effective`` are recorded in ``info`` but
    never used as evidence: coverage comes from the rows.

    Examples
    --------
    >>> from evalframe import audit
    >>> folder = ("../shared/data/real/lm_eval/EleutherAI-lm-evaluation-harness-PR1974/lm_eval/tasks/"
    ...           "bias_classification/results/meta-llama__Meta-Llama-3-8B")
    >>> imported = read([folder])
    >>> report = audit(imported.plan, imported.results)
    >>> report.summary.select("candidate", "planned", "scored", "passed", "pass_rate_scored")
    shape: (1, 5)
    ┌────────────────────────────┬─────────┬────────┬────────┬──────────────────┐
    │ candidate                  ┆ planned ┆ scored ┆ passed ┆ pass_rate_scored │
    │ ---                        ┆ ---     ┆ ---    ┆ ---    ┆ ---              │
    │ str                        ┆ u32     ┆ u32    ┆ u32    ┆ f64              │
    ╞════════════════════════════╪═════════╪════════╪════════╪══════════════════╡
    │ meta-llama/Meta-Llama-3-8B ┆ 609     ┆ 609    ┆ 311    ┆ 0.510673         │
    └────────────────────────────┴─────────┴────────┴────────┴──────────────────┘
    >>> from evalframe.importers._kit import ImportRefused
    >>> try:
    ...     read(["data/fixtures/lm_eval/two_filters"])
    ... except ImportRefused as exc:
    ...     print(exc.problems.get_column("kind").to_list())
    ['ambiguous_rows']
    >>> read(["data/fixtures/lm_eval/two_filters"], score="exact_match,strict-match").plan.n_units
    3
    """
    metric, flt = _split_score(score)
    notes: list[dict[str, Any]] = []
    batch = _Batch.gather(paths, notes)
    tasks = sorted(set(batch.by_task) | {t for h, _run in batch.explicit for t in _header_tasks(h.data)})
    choices: dict[str, _Choice] = {}
    for task in tasks:
        choice = batch.choose(task, metric, flt, notes)
        if choice is not None:
            choices[task] = choice
    info: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for task, choice in choices.items():
        rows.extend(grade_task(batch.by_task.get(task, []), batch.runs, choice, notes, info))
    batch.header_notes(set(choices), notes)
    info.extend(batch.results_info(choices))
    source = ", ".join(str(p) for p in paths)
    plan, plan_problems = build_plan(batch.planned_units(choices, notes), source=source)
    if any(n["refusing"] for n in notes):  # nothing planned because of a refusal above: say that refusal only
        plan_problems = plan_problems.filter(~pl.col("kind").is_in(["empty_plan", "empty_candidates"]))
    ledger = (
        pl.DataFrame(rows, schema=LEDGER_SCHEMA)
        .with_columns(pl.col(RUN_ID).rank("dense").over(CANDIDATE, CASE_ID, TRIAL).cast(pl.Int64).alias(ATTEMPT))
        .sort(CANDIDATE, SOURCE, LINE)
    )
    return finish(plan, ledger, [notes, plan_problems], info, files=batch.read)
