"""The every_eval_ever import: records and instance files read, the grade chosen, units planned, one ledger."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.columns import (
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    LINE,
    PASSED,
    RECORDED_SETTINGS,
    REPORTED_HEADLINES,
    SCORE,
    SCORE_STATUS,
    TRIAL,
)
from evalframe.importers import Imported
from evalframe.importers._kit import (
    CaseNames,
    ScoreChoiceError,
    Unreadable,
    choose_score,
    find_files,
    finish,
    json_int,
    json_object,
    ledger_frame,
    ledger_row,
    note,
    passed_if_complete,
    plan_from_units,
    planned_size,
    read_json,
    spelling_note,
)
from evalframe.importers._settings import recorded
from evalframe.importers.every_eval_ever.grading import _disagreements, _grade_row, _reported
from evalframe.importers.every_eval_ever.records import _instance_path, _is_export, _read_rows, _Record, _record, _Rows
from evalframe.importers.every_eval_ever.schema import DETAIL_TRIALS, GRADES, META_TRIAL, SCHEMA
from evalframe.load import PathLike


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read every_eval_ever aggregate records and instance-level files into a plan, a status ledger, notes and facts.

    Parameters
    ----------
    paths
        Aggregate records (``.json``), instance-level files (``.jsonl``) and
        folders searched for both. A record's instance file is found from
        its ``file_path`` (see the module docstring) and need not be given.
    score
        ``is_correct`` (the default) or ``score`` (``evaluation.score``;
        audit with ``--grade numeric``).

    Returns
    -------
    Imported
        ``plan``: per candidate, the record's ``sample_ids`` (else the rows'
        ids) × its trials, with a ``task`` and a ``case_hash`` case column
        (String). ``ledger``: one row per instance row: ``candidate``,
        ``case_id``, ``run_id`` (the record's ``evaluation_id``, else the
        row's), ``case_hash``, ``limit``, ``source`` (String), ``trial``,
        ``attempt`` (Int64; 1 unless evalframe wrote the record),
        ``exec_status`` (``error`` when the row has an ``error``, else
        ``completed``), ``score_status``, ``score`` (Float64), ``passed``
        (Boolean), ``has_output`` (Boolean: a non-empty ``output.raw`` or an
        assistant turn) and ``line`` (Int64, 1-based line of the row).
        ``notes``: flags (``header_rows_disagree``, ``limited_run``,
        ``plan_from_rows``, ``id_normalised``, ``not_a_score``,
        ``nonfinite_score``). ``info``: one dict per record or lone instance
        file (model, evaluation id, schema version, source, the record's
        scores: never evidence).

    Raises
    ------
    InputFormatError
        When a path does not exist.
    ImportUnreadable
        When a file is malformed: not JSON (a line of an instance file that
        is not), not an aggregate record, a record without ``model_info.id``,
        a row without a string or integer ``sample_id`` or ``model_id``
        (naming the file, the line and the reason; the CLI exits 2).
    ImportRefused
        When a note refuses: a folder with neither records nor instance
        files (``no_export``), a record with no per-sample evidence
        (``empty_plan``), a ``score`` that is not a grade of the rows
        (``unknown_score``).

    Examples
    --------
    >>> base = "../shared/data/real/every_eval_ever/evaleval-every_eval_ever-PR30/"
    >>> imported = read([base + "data/ai2_arc/ollama/qwen2.5-0.5b/75e7b3c4-5d2f-4526-aef0-9ccd88690f5a.json"])
    >>> imported.ledger.select("candidate", "case_id", "exec_status", "score", "passed").rows()
    [('ollama/qwen2.5-0.5b', '1', 'completed', 1.0, True), ('ollama/qwen2.5-0.5b', '2', 'completed', 0.0, False), \
('ollama/qwen2.5-0.5b', '3', 'completed', 0.0, False)]
    >>> for kind, detail in imported.notes.select("kind", "detail").rows():
    ...     print(kind, "|", detail)
    header_rows_disagree | the rows' evaluation_id (ai2_arc_ollama_qwen2.5:0.5b_2e4e64ca-5622-42d3-9ef1-0f4e4475cdf7) \
is not the record's 'ai2_arc/ollama_qwen2.5:0.5b/1761001924.0'
    limited_run | the record lists 3 of the dataset's 2376 samples (samples_number)
    """
    files, notes = find_files(paths, is_export=_is_export, what="every_eval_ever record (.json) or instance (.jsonl)")
    sources = _sources(files, notes)
    label = ";".join(str(p) for p in paths)
    chosen = _choose_grade(sources, score, label, notes)
    case_of = CaseNames.of(_task_of(r, rows) for r, rows in sources)
    units: list[tuple[str, str, int, str]] = []
    ledger_rows: list[dict[str, Any]] = []
    info: list[dict[str, Any]] = []
    spellings: dict[tuple[str, str], set[str]] = {}
    for rec, found in sources:
        task = _task_of(rec, found)
        own = _source_rows(rec, found, task, chosen, case_of, notes, spellings)
        if rec is not None:
            own.extend(_ungraded_rows(rec, task, case_of, spellings))
        ledger_rows.extend(own)
        source = str(rec.path) if rec is not None else str(found.path) if found is not None else ""
        facts: dict[str, Any] = {"format": "every_eval_ever", "source": source, "task": task}
        if rec is not None:
            for raw in rec.sample_ids:
                spellings.setdefault((task, str(raw)), set()).add(type(raw).__name__)
            facts |= _record_units(rec, found, own, task, chosen, case_of, units, notes)
        else:
            facts |= _lone_units(found, own, task, units, notes)
        info.append(facts)
    for (task, raw), kinds in sorted(spellings.items()):
        spelled = spelling_note(raw, kinds, label, case_id=case_of(task, raw))
        if spelled is not None:
            notes.append(spelled)
    read_files = [*files, *(rows.path for _, rows in sources if rows is not None)]
    return _assemble(ledger_rows, units, notes, info, label, read_files)


def _sources(files: Sequence[Path], notes: list[dict[str, Any]]) -> list[tuple[_Record | None, _Rows | None]]:
    """(record or None, its rows or None) per record, then per instance file no record names: what each contributes.

    A record's instance file is found from its ``file_path`` (one not found is flagged); each file is read once.
    """
    records: list[_Record] = []
    lone: list[Path] = []
    for path in files:
        if path.suffix == ".jsonl":
            lone.append(path)
            continue
        try:
            records.append(_record(path, read_json(path)))
        except Unreadable as exc:
            notes.append(exc.note)
    claimed: set[Path] = set()
    for record in records:
        record.instance = _instance_path(record)
        if record.instance is not None:
            claimed.add(record.instance.resolve())
        elif record.detail:
            detail = (
                f"detailed_evaluation_results names {record.detail['file_path']!r} "
                f"(total_rows {record.detail.get('total_rows')}), which is not found: its units have no rows"
            )
            notes.append(note("header_rows_disagree", str(record.path), detail, candidate=record.candidate))
    lone = [p for p in lone if p.resolve() not in claimed]
    read_rows: dict[Path, _Rows] = {}
    for path in [r.instance for r in records if r.instance is not None] + lone:
        if path.resolve() in read_rows:
            continue
        try:
            rows, row_notes = _read_rows(path)
        except Unreadable as exc:
            notes.append(exc.note)
            rows, row_notes = _Rows(path=path), []
        notes.extend(row_notes)
        read_rows[path.resolve()] = rows
    return [(r, read_rows.get(r.instance.resolve()) if r.instance is not None else None) for r in records] + [
        (None, read_rows[p.resolve()]) for p in lone
    ]


def _choose_grade(
    sources: Sequence[tuple[_Record | None, _Rows | None]], score: str | None, label: str, notes: list[dict[str, Any]]
) -> str | None:
    """The grade read (:data:`GRADES`, the first the rows carry); a refusing note when ``score`` is not one of them."""
    all_rows = [obj for _, rows in sources if rows is not None for _, obj in rows.rows]
    available = [
        k for obj in all_rows if isinstance(obj.get("evaluation"), dict) for k in GRADES if k in obj["evaluation"]
    ]
    if score is not None and not available:
        looked = " or ".join(f"evaluation.{g}" for g in GRADES)
        detail = f"none of the {len(all_rows)} instance row(s) carries {looked} (asked for {score!r})"
        notes.append(note("unknown_score", label, detail))
        return score
    try:
        where = "the instance rows' evaluation"
        return (
            choose_score(score, available, default=GRADES, what="grade", source=label, where=where)
            if available
            else score
        )
    except ScoreChoiceError as exc:
        notes.append(exc.note)
        return None


def _task_of(record: _Record | None, rows: _Rows | None) -> str:
    """The task of a source: the record's dataset name, else its rows' ``evaluation_name``."""
    if record is not None and record.task is not None:
        return record.task
    names = [obj.get("evaluation_name") for _, obj in rows.rows] if rows is not None else []
    return next((n for n in names if isinstance(n, str)), "unknown")


def _source_rows(
    rec: _Record | None,
    found: _Rows | None,
    task: str,
    chosen: str | None,
    case_of: CaseNames,
    notes: list[dict[str, Any]],
    spellings: dict[tuple[str, str], set[str]],
) -> list[dict[str, Any]]:
    """Ledger rows of one source's instance rows (each sample id's spelling recorded)."""
    row_source = str(found.path) if found is not None else ""
    own: list[dict[str, Any]] = []
    for line, obj in found.rows if found is not None else []:
        candidate = rec.candidate if rec is not None else obj.get("model_id")
        if not isinstance(candidate, str) or not candidate:
            notes.append(note("unreadable_file", row_source, "an instance row without a model_id", line=line))
            continue
        raw = obj["sample_id"]
        spellings.setdefault((task, str(raw)), set()).add(type(raw).__name__)
        trial_text = json_object(obj.get("metadata")).get(META_TRIAL)
        trial = int(trial_text) if isinstance(trial_text, str) and trial_text.isdigit() else 1
        case = case_of(task, raw)
        graded = _grade_row(obj, chosen, row_source, line, notes, {CANDIDATE: candidate, CASE_ID: case, TRIAL: trial})
        turns = json_int(json_object(obj.get("evaluation")).get("num_turns"))
        limit = rec.message_limit if rec is not None else None
        run = rec.evaluation_id if rec is not None and rec.evaluation_id else obj.get("evaluation_id")
        row = ledger_row(
            candidate,
            case,
            trial=trial,
            run_id=run if isinstance(run, str) else None,
            exec_status=graded[EXEC_STATUS],
            score_status=graded[SCORE_STATUS],
            score=graded[SCORE],
            passed=graded[PASSED],
            has_output=graded[HAS_OUTPUT],
            limit=f"message={limit}" if limit is not None and turns is not None and turns >= limit else None,
            line=line,
            source=row_source,
        )
        own.append({**row, CASE_HASH: obj.get("sample_hash") if isinstance(obj.get("sample_hash"), str) else None})
    return own


def _ungraded_rows(
    rec: _Record, task: str, case_of: CaseNames, spellings: dict[tuple[str, str], set[str]]
) -> list[dict[str, Any]]:
    """Ledger rows of the units a record evalframe wrote lists without an instance row (the record is the source)."""
    rows = []
    for unit in rec.ungraded:
        raw = unit["sample_id"]
        spellings.setdefault((task, str(raw)), set()).add(type(raw).__name__)
        row = ledger_row(
            rec.candidate,
            case_of(task, raw),
            trial=unit[TRIAL],
            run_id=rec.evaluation_id,
            exec_status=unit[EXEC_STATUS],
            score_status=unit[SCORE_STATUS],
            has_output=unit[HAS_OUTPUT],
            line=0,
            source=str(rec.path),
        )
        rows.append({**row, LINE: None, CASE_HASH: None})
    return rows


def _record_units(
    rec: _Record,
    found: _Rows | None,
    own: Sequence[dict[str, Any]],
    task: str,
    chosen: str | None,
    case_of: CaseNames,
    units: list[tuple[str, str, int, str]],
    notes: list[dict[str, Any]],
) -> dict[str, Any]:
    """A record's planned units (its sample ids, else its rows' ids, × trials), its notes, and its facts."""
    source = str(rec.path)
    planned = [case_of(task, i) for i in rec.sample_ids]
    if not planned:
        planned = list(dict.fromkeys(r[CASE_ID] for r in own))
        if planned:
            detail = f"the record lists no sample_ids: the plan is the {len(planned)} sample id(s) of its rows"
            notes.append(note("plan_from_rows", source, detail, candidate=rec.candidate))
        else:
            detail = (
                f"no sample_ids and no instance rows: the record's {len(rec.results)} score(s) "
                "have no per-sample evidence, so nothing can be audited"
            )
            notes.append(note("empty_plan", source, detail, candidate=rec.candidate))
    too_many = planned_size(len(planned) * rec.trials, source, f"{len(planned)} sample_ids × {DETAIL_TRIALS}")
    if too_many is not None:
        notes.append(too_many)
    else:
        units.extend((rec.candidate, c, t, task) for c in planned for t in range(1, rec.trials + 1))
    n_ids = len(rec.sample_ids)
    if rec.samples_number is not None and n_ids and rec.samples_number > n_ids:
        detail = f"the record lists {n_ids} of the dataset's {rec.samples_number} samples (samples_number)"
        notes.append(note("limited_run", source, detail, candidate=rec.candidate))
    if found is not None:
        for sentence in _disagreements(rec, found, list(own), chosen):
            notes.append(note("header_rows_disagree", source, sentence, candidate=rec.candidate))
    return {
        "candidate": rec.candidate,
        "run_id": rec.evaluation_id,
        "instance_file": str(rec.instance) if rec.instance is not None else None,
        "sample_ids": n_ids,
        "samples_number": rec.samples_number,
        "trials": rec.trials,
        "scores": {
            str(r.get("evaluation_name")): (r.get("score_details") or {}).get("score")
            for r in rec.results
            if isinstance(r, dict)
        },
        REPORTED_HEADLINES: _reported(rec, found),
        **_settings(rec),
    }


def _settings(rec: _Record) -> dict[str, Any]:
    """``{"settings": ...}``: the generation config the record's results record (merged), for a comparison.

    Nothing when no result records one (a key then is unknown, never equal).
    """
    found = [r.get("generation_config") for r in rec.results if isinstance(r, dict)]
    configs: list[dict[str, Any]] = [c for c in found if isinstance(c, dict)]
    return {RECORDED_SETTINGS: recorded(configs)} if configs else {}


def _lone_units(
    found: _Rows | None,
    own: Sequence[dict[str, Any]],
    task: str,
    units: list[tuple[str, str, int, str]],
    notes: list[dict[str, Any]],
) -> dict[str, Any]:
    """The units of an instance file read without its record (its rows' units, flagged), and its facts."""
    source = str(found.path) if found is not None else ""
    planned_rows = list(dict.fromkeys((r[CANDIDATE], r[CASE_ID], r[TRIAL]) for r in own))
    units.extend((c, k, t, task) for c, k, t in planned_rows)
    if planned_rows:
        detail = f"an instance file without its record: the plan is the {len(planned_rows)} unit(s) of its rows"
        models = sorted({r[CANDIDATE] for r in own})
        notes.append(note("plan_from_rows", source, detail, candidate=models[0] if len(models) == 1 else None))
    return {"candidate": sorted({r[CANDIDATE] for r in own}), "rows": len(own)}


def _assemble(
    ledger_rows: Sequence[dict[str, Any]],
    units: Sequence[tuple[str, str, int, str]],
    notes: list[dict[str, Any]],
    info: list[dict[str, Any]],
    label: str,
    files: Sequence[Path],
) -> Imported:
    """The import: the ledger, the plan (with case hashes) and notes (:func:`finish` refuses a malformed file)."""
    ledger = passed_if_complete(ledger_frame(ledger_rows, schema=SCHEMA))
    hashes = ledger.filter(pl.col(CASE_HASH).is_not_null()).unique(CASE_ID, keep="first", maintain_order=True)
    frame = pl.DataFrame(
        list(units), schema={CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, "task": pl.String}, orient="row"
    )
    frame = frame.unique(maintain_order=True).join(hashes.select(CASE_ID, CASE_HASH), on=CASE_ID, how="left")
    plan, plan_problems = plan_from_units(frame, source=label, notes=notes)
    return finish(plan, ledger, [notes, plan_problems], info, files=files)
