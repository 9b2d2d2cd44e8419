"""every_eval_ever instance rows graded, and the header numbers of a record checked against its rows."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from evalframe.columns import EXEC_STATUS, EXEC_STATUSES, HAS_OUTPUT, PASSED, SCORE, SCORE_STATUS, SCORE_STATUSES
from evalframe.importers._kit import grade, json_int, json_object, mean, note
from evalframe.importers._reported import headline
from evalframe.importers.every_eval_ever.records import _Record, _Rows
from evalframe.importers.every_eval_ever.schema import META_EXEC, META_OUTPUT, META_SCORE


def _has_output(row: Mapping[str, Any]) -> bool:
    output = row.get("output")
    if isinstance(output, dict):
        raw = output.get("raw")
        if (isinstance(raw, str) and raw) or (isinstance(raw, list) and any(raw)):
            return True
    for key in ("messages", "interactions"):
        turns = row.get(key)
        if isinstance(turns, list) and any(isinstance(t, dict) and t.get("role") == "assistant" for t in turns):
            return True
    return False


def _grade_row(
    row: Mapping[str, Any],
    chosen: str | None,
    source: str,
    line: int,
    notes: list[dict[str, Any]],
    keys: dict[str, Any],
) -> dict[str, Any]:
    """Exec status, score status, score, passed and has_output of one instance row."""
    meta = json_object(row.get("metadata"))
    error = row.get("error")
    exec_status = "error" if error is not None and error != "" else "completed"
    if meta.get(META_EXEC) in EXEC_STATUSES:
        exec_status = meta[META_EXEC]
    out: dict[str, Any] = {EXEC_STATUS: exec_status, SCORE_STATUS: "not_scored", SCORE: None, PASSED: None}
    written = meta.get(META_OUTPUT)
    out[HAS_OUTPUT] = (
        written == "true" if written in ("true", "false") else exec_status == "completed" and _has_output(row)
    )
    if exec_status != "completed":
        return out
    if meta.get(META_SCORE) in SCORE_STATUSES and meta[META_SCORE] != "scored":
        out[SCORE_STATUS] = meta[META_SCORE]
        return out
    evaluation = row.get("evaluation")
    if chosen is None or not isinstance(evaluation, dict) or chosen not in evaluation:
        return out
    raw = evaluation[chosen]
    status, number = grade(raw) if chosen == "score" or isinstance(raw, bool) else ("judge_error", None)
    out[SCORE_STATUS], out[SCORE] = status, number
    if status != "scored":
        kind = "nonfinite_score" if isinstance(raw, float) else "not_a_score"
        notes.append(note(kind, source, f"evaluation.{chosen} = {raw!r} is not a grade", line=line, **keys))
        return out
    verdict = evaluation.get("is_correct")
    if isinstance(verdict, bool):
        out[PASSED] = verdict
    elif number in (0.0, 1.0):
        out[PASSED] = number == 1.0
    return out


def _disagreements(record: _Record, rows: _Rows, ledger_rows: list[dict[str, Any]], chosen: str | None) -> list[str]:
    """Sentences for each header number of ``record`` that its rows contradict."""
    out: list[str] = []
    total = json_int(record.detail.get("total_rows"))
    if total is not None and total != len(rows.rows):
        out.append(f"detailed_evaluation_results.total_rows = {total}; the instance file has {len(rows.rows)} row(s)")
    checksum = record.detail.get("checksum")
    if record.detail.get("hash_algorithm") == "sha256" and isinstance(checksum, str):
        actual = hashlib.sha256(rows.raw).hexdigest()
        if actual != checksum.lower():
            out.append(f"the instance file's sha256 is {actual}, not the record's checksum {checksum}")
    ids = {r.get("evaluation_id") for _, r in rows.rows} - {None}
    if record.evaluation_id is not None and ids and ids != {record.evaluation_id}:
        shown = ", ".join(sorted(map(str, ids)))
        out.append(f"the rows' evaluation_id ({shown}) is not the record's {record.evaluation_id!r}")
    scored = [r for r in ledger_rows if r[SCORE_STATUS] == "scored"]
    for result in _results_of(record, rows):
        details = json_object(result.get("score_details"))
        claimed = details.get("score")
        given = mean([r[SCORE] for r in scored])
        name = result.get("evaluation_name")
        if isinstance(claimed, (int, float)) and not isinstance(claimed, bool):
            if given is None:
                out.append(f"{name!r} claims score {claimed:g}, but no row has a valid {chosen} grade")
            elif not math.isclose(given, float(claimed), rel_tol=1e-9, abs_tol=1e-9):
                out.append(f"{name!r} claims score {claimed:g}; the {len(scored)} graded row(s) give {given:g}")
        uncertainty = json_object(details.get("uncertainty"))
        claimed_n = json_int(uncertainty.get("num_samples"))
        if claimed_n is not None and claimed_n != len(scored):
            out.append(f"{name!r} claims num_samples = {claimed_n}; {len(scored)} row(s) have a valid grade")
    return out


def _results_of(record: _Record, rows: _Rows | None) -> list[dict[str, Any]]:
    """The record's evaluation results its rows are of: all of one, else those an instance row names."""
    names = {r.get("evaluation_name") for _, r in rows.rows} if rows is not None else set()
    return [
        result
        for result in map(json_object, record.results)
        if len(record.results) == 1 or result.get("evaluation_name") in names
    ]


def _reported(record: _Record, rows: _Rows | None) -> list[dict[str, Any]]:
    """The headline each of the record's results reports (``score_details.score``) over its ``num_samples``."""
    found = []
    for result in _results_of(record, rows):
        details = json_object(result.get("score_details"))
        n = json_int(json_object(details.get("uncertainty")).get("num_samples"))
        name = str(result.get("evaluation_name"))
        got = headline("every_eval_ever", name, details.get("score"), denominator=n, of="samples")
        if got is not None:
            found.append(got)
    return found
