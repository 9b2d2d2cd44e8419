"""The Inspect AI import: logs read, planned units from their headers, rows from their samples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import polars as pl

from evalframe.columns import (
    CANDIDATE,
    CASE_ID,
    KIND,
    PASSED,
    RECORDED_SETTINGS,
    SCORE,
    SCORE_STATUS,
)
from evalframe.importers import Imported
from evalframe.importers._kit import (
    TRIALS,
    CaseNames,
    build_plan_of_trials,
    find_files,
    finish,
    ledger_frame,
    note,
    planned_size,
    spelling_note,
)
from evalframe.importers.inspect_ai.archive import _read_log
from evalframe.importers.inspect_ai.header import (
    ScoreRef,
    _choose_scorer,
    _declared_ids,
    _epochs,
    _header_notes,
    _limited_note,
    _log_info,
)
from evalframe.importers.inspect_ai.log import _COMPANIONS, TASK, _is_log, _Log, _log_note
from evalframe.importers.inspect_ai.rows import _attempt_rows
from evalframe.importers.inspect_ai.settings import compared_settings, split_by_settings
from evalframe.load import PathLike


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read Inspect AI eval logs into a plan, a status ledger, notes and per-file facts.

    Parameters
    ----------
    paths
        ``.eval`` archives, ``.json`` logs and folders (a folder stands for
        every ``*.eval`` and ``*.json`` log below it; an eval set's
        ``eval-set.json``, ``logs.json`` and ``.eval-set-id`` are skipped).
        Several logs combine into one plan and one ledger; the order of
        ``paths`` never changes the result.
    score
        Name of the score to read: a scorer (a key of each sample's
        ``scores``) or a key of a scorer's dict value (a score name the
        header's ``results.scores`` lists); it must be a score of every log
        read. Default: per log, the first score its header lists
        (``results.scores``, else ``eval.scorers``); a log whose header lists
        none uses the one scorer its samples carry. A sample without the
        chosen score is ``not_scored``.

    Returns
    -------
    Imported
        ``plan``: the planned units (``eval.dataset.sample_ids`` × epochs ×
        ``eval.model``, unioned over logs), cases with a ``task`` column.
        ``ledger``: one row per attempt with ``candidate`` (String, the
        model, with its settings when runs of it differ), ``case_id`` (String; ``<task>/<id>`` when several tasks are
        read), ``trial`` (Int64, the epoch), ``attempt`` (Int64), ``run_id``
        (String), ``exec_status`` (``completed``/``error``),
        ``score_status`` (``scored``/``judge_error``/``not_scored``),
        ``score`` (Float64), ``passed`` (Boolean; only when every grade is 0
        or 1 — otherwise the column is left out so the audit's declared
        ``grade``/``pass_threshold`` decides), ``has_output`` (Boolean),
        ``limit`` (String, ``<type>=<value>``), ``line`` (Int64: the
        sample's 1-based position in the ``samples`` array, or among the
        archive's sample members) and ``source`` (String: the file, plus
        ``!samples/<id>_epoch_<n>.json`` for archive members).
        ``notes`` (none refusing; each keyed by the log's candidate):
        ``run_status``, ``header_rows_disagree``, ``limited_run``,
        ``plan_from_rows``, ``duplicate_import``, ``id_normalised``,
        ``not_a_score``, ``nonfinite_score``, ``settings_differ`` (runs of one
        task and model with different settings, read as different candidates
        named ``<model> [<key>=<value>]``).
        ``info``: one dict per log (format, inspect version, status, task,
        model, candidate, run_id, eval_id, eval_set_id, created, dataset size, declared
        sample ids, limit, epochs, header totals, chosen score and where it is read, samples read).

    Raises
    ------
    InputFormatError
        When a path does not exist, or an archive's members take more than
        ``Limits.archive_bytes`` decompressed (see :class:`~evalframe.load.Limits`).
    ImportUnreadable
        An ``unreadable_file`` note (a truncated or oversized archive member,
        invalid JSON, a missing header or key), naming the file and member or
        line; the CLI exits 2.
    ImportRefused
        With every note, when another refuses: ``no_export`` (a folder with no
        log), ``unknown_score``/``ambiguous_score``, ``empty_plan`` and any
        problem of the plan itself (e.g. a padded sample id). ``unknown_score``
        also when the samples hold scores but none holds the one chosen.

    Examples
    --------
    >>> imported = read(["../shared/data/real/inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/"
    ...                  "log_streaming.eval"])
    >>> imported.plan.candidates, imported.plan.trials, imported.plan.n_units
    (('azureai/Meta-Llama-3-1-405B-Instruct-jqf',), 2, 4)
    >>> imported.ledger.select("case_id", "trial", "attempt", "exec_status", "score_status", "score", "passed")
    shape: (4, 7)
    ┌─────────┬───────┬─────────┬─────────────┬──────────────┬───────┬────────┐
    │ case_id ┆ trial ┆ attempt ┆ exec_status ┆ score_status ┆ score ┆ passed │
    │ ---     ┆ ---   ┆ ---     ┆ ---         ┆ ---          ┆ ---   ┆ ---    │
    │ str     ┆ i64   ┆ i64     ┆ str         ┆ str          ┆ f64   ┆ bool   │
    ╞═════════╪═══════╪═════════╪═════════════╪══════════════╪═══════╪════════╡
    │ 1       ┆ 1     ┆ 1       ┆ completed   ┆ scored       ┆ 0.0   ┆ false  │
    │ 1       ┆ 2     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    │ 2       ┆ 1     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    │ 2       ┆ 2     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    └─────────┴───────┴─────────┴─────────────┴──────────────┴───────┴────────┘
    >>> imported.notes.select("kind", "candidate").rows()
    [('limited_run', 'azureai/Meta-Llama-3-1-405B-Instruct-jqf')]
    >>> print(imported.notes.item(0, "detail"))  # doctest: +NORMALIZE_WHITESPACE
    azureai/Meta-Llama-3-1-405B-Instruct-jqf (popularity): --limit 2: 2 of 100 samples planned;
    the rates describe those 2, not the task
    """
    found, notes = find_files(paths, is_export=_is_log, what=".eval or .json Inspect log")
    files = [f for f in found if f.name not in _COMPANIONS]
    if found and not files:
        named = "; ".join(str(f) for f in found)
        notes.append(note("no_export", named, "an eval set's manifest, index or id file is not a log: name its logs"))
    source = "; ".join(str(f) for f in files) if files else "inspect_ai"
    info: list[dict[str, Any]] = []
    logs: list[_Log] = []
    for path in files:
        log, file_notes = _read_log(path)
        notes.extend(file_notes)
        if log is None:
            info.append({"source": str(path), "format": path.suffix.lstrip("."), "readable": False})
        else:
            logs.append(log)
    notes.extend(split_by_settings(logs))
    case_of = CaseNames.of(log.task for log in logs)
    case_frames: list[pl.DataFrame] = []
    id_frames: list[pl.DataFrame] = []  # every sample id of each log (planned or present), as written
    chosen: dict[str, ScoreRef | None] = {}
    for number, log in enumerate(logs):
        epochs, plan_ids = _planned_ids(log, notes)
        ids = _written_ids(number, log, [*plan_ids, *(s.raw_id for s in log.samples)])
        id_frames.append(ids)
        too_many = planned_size(len(plan_ids) * epochs, log.path, "eval.config.epochs × sample ids")
        if too_many is not None:
            notes.append(too_many)
        else:
            case_frames.append(_log_cases(log, ids.get_column(_RAW).head(len(plan_ids)), epochs, case_of))
        ref, available, score_note = _choose_scorer(log, score)
        if score_note is not None:
            notes.append(score_note)
        chosen[log.path] = ref
        facts = _log_info(log, score=ref, available=available, epochs=epochs)
        facts["case_id_prefix"] = case_of.prefix(log.task)
        facts[RECORDED_SETTINGS] = compared_settings(log)
        info.append(facts)
    notes.extend(_spelling_notes(logs, id_frames, case_of))

    rows = _attempt_rows(logs, chosen, case_of, notes)
    plan, plan_problems = build_plan_of_trials(_cases(case_frames), source=source)
    if not logs:  # nothing was readable: the notes say why, an empty plan would only repeat it
        plan_problems = plan_problems.clear()
    ledger = ledger_frame(rows)
    scored = ledger.filter(pl.col(SCORE_STATUS) == "scored")
    if scored.filter(~pl.col(SCORE).is_in([0.0, 1.0])).height:
        ledger = ledger.drop(PASSED)
    info = sorted(info, key=lambda d: str(d["source"]))
    return finish(plan, ledger, [notes, plan_problems], info, files=files)


_LOG, _RAW, _KIND = "log", "raw", "kind"


def _written_ids(number: int, log: _Log, raws: list[int | str]) -> pl.DataFrame:
    """Sample ids of log ``number`` as columns: ``log``, ``task``, ``raw`` (the id's text) and ``kind`` (JSON type).

    Held as columns rather than Python objects, so that a header listing millions of ids stays small.
    """
    text, kind = _id_texts(raws)
    return pl.DataFrame(
        {
            _LOG: pl.repeat(number, len(raws), dtype=pl.Int64, eager=True),
            TASK: pl.repeat(log.task, len(raws), dtype=pl.String, eager=True),
            _RAW: text,
            _KIND: kind.cast(pl.Categorical),
        }
    )


#: The range of an id polars holds as an Int64 (a JSON integer outside it is written out by Python).
_INT64 = (-(2**63), 2**63 - 1)


def _id_texts(raws: list[int | str]) -> tuple[pl.Series, pl.Series]:
    """Each sample id's text (``str(id)``) and JSON type (``int`` or ``str``), as String columns.

    A list of one type is converted by polars (3M ids: a tenth of a CPU-second, where a Python ``str()`` per
    id took more than a second); ids of both types are written out one by one.
    """
    types = set(map(type, raws))
    if types == {str}:
        text = pl.Series(raws, dtype=pl.String)
    elif types == {int} and _INT64[0] <= min(cast("list[int]", raws)) and max(cast("list[int]", raws)) <= _INT64[1]:
        text = pl.Series(raws, dtype=pl.Int64).cast(pl.String)
    else:
        return pl.Series([str(r) for r in raws], dtype=pl.String), pl.Series([type(r).__name__ for r in raws])
    kind = types.pop().__name__ if types else "str"
    return text, pl.repeat(kind, len(raws), dtype=pl.String, eager=True)


def _distinct_ids(raws: list[int | str]) -> int:
    """How many different ids ``raws`` holds, as text (``1`` and ``"1"`` are one id)."""
    return len(set(raws)) if len(set(map(type, raws))) < 2 else len(set(map(str, raws)))


def _log_cases(log: _Log, raws: pl.Series, epochs: int, case_of: CaseNames) -> pl.DataFrame:
    """A log's planned cases: ``candidate``, ``case_id``, ``task`` and its ``trials`` (each case's trials 1..epochs)."""
    return raws.to_frame(CASE_ID).select(
        pl.lit(log.candidate, pl.String).alias(CANDIDATE),
        (pl.lit(case_of.prefix(log.task) or "") + pl.col(CASE_ID)).alias(CASE_ID),
        pl.lit(log.task, pl.String).alias(TASK),
        pl.lit(epochs, pl.Int64).alias(TRIALS),
    )


def _cases(cases: list[pl.DataFrame]) -> pl.DataFrame:
    """The planned cases of every log, in the order read: ``candidate``, ``case_id``, ``task``, ``trials``.

    Logs of one candidate and task may list a case twice; the plan's units are then the union, trials 1..the
    most epochs any log gave the case (:func:`~evalframe.importers._kit.build_plan_of_trials`).
    """
    schema = {CANDIDATE: pl.String, CASE_ID: pl.String, TASK: pl.String, TRIALS: pl.Int64}
    return pl.concat([pl.DataFrame(schema=schema), *cases])


def _spelling_notes(logs: list[_Log], id_frames: list[pl.DataFrame], case_of: CaseNames) -> list[dict[str, Any]]:
    """``id_normalised`` per log and id written as several JSON types in its task (``1`` and ``"1"``)."""
    ids = pl.concat(id_frames).with_columns(pl.col(_KIND).cast(pl.String)) if id_frames else None
    if ids is None or ids.get_column(_KIND).n_unique() < 2:  # every id written as one JSON type: none respelled
        return []
    kinds = ids.group_by(TASK, _RAW).agg(pl.col(_KIND).unique()).filter(pl.col(_KIND).list.len() > 1)
    flagged = ids.select(_LOG, TASK, _RAW).unique().join(kinds, on=[TASK, _RAW]).sort(_LOG, _RAW)
    notes = []
    for number, task, raw, spelled_as in flagged.iter_rows():
        log, case_id = logs[number], case_of(task, raw)
        spelled = spelling_note(raw, spelled_as, log.path, case_id=case_id)
        if spelled is not None:
            notes.append(_log_note(log, spelled[KIND], spelled["detail"], case_id=case_id))
    return notes


def _planned_ids(log: _Log, notes: list[dict[str, Any]]) -> tuple[int, list[int | str]]:
    """A log's epochs and planned sample ids: ``eval.dataset.sample_ids``, else the ids present (flagged).

    The header's notes (a bad epochs or id list, run status, totals, a limited run) are added to ``notes``.
    """
    epochs, epochs_note = _epochs(log)
    declared, id_note = _declared_ids(log)
    notes.extend(n for n in (epochs_note, id_note) if n is not None)
    notes.extend(_header_notes(log))
    if declared is not None:
        limited = _limited_note(log, _distinct_ids(declared))
        if limited is not None:
            notes.append(limited)
        return epochs, declared
    plan_ids = sorted({s.raw_id for s in log.samples}, key=lambda r: (str(r), type(r).__name__))
    if id_note is None:
        n = len({str(i) for i in plan_ids})
        taken = f"it was taken from the {n} sample id(s) present" if n else "the log has no samples: no unit"
        notes.append(_log_note(log, "plan_from_rows", f"the header lists no eval.dataset.sample_ids; {taken}"))
    return epochs, plan_ids
