"""Import lighteval details Parquet files (``--save-details``) into a plan and status ledger.

Built from lighteval's documented schema, not from a real file: no published
details file could be collected (the ones in huggingface/lighteval's
``tests/reference_details/`` are Git LFS pointers in the snapshot the project
holds, see ``../shared/data/real/SOURCES.md``). The tests read small files
written with the published column layout (``data/fixtures/lighteval/``,
whose README says how they were made).

Format
------
``EvaluationTracker.save_details`` (``src/lighteval/logging/
evaluation_tracker.py`` of huggingface/lighteval) writes one Parquet file per
task, ``{output_dir}/details/{model_name}/{date_id}/details_{task}_{date_id}.parquet``
(``date_id`` an ISO time with ``-`` for ``:``; ``task`` such as
``lighteval|gsm8k|0``), one row per document, from
``DetailsLogger.Detail`` (``src/lighteval/logging/info_loggers.py``) through
``datasets.Dataset.from_list(...).to_parquet``, so dicts become struct
columns. Two layouts exist:

* **lighteval ≥ 0.10**: columns ``doc`` (the ``Doc``: ``query``,
  ``choices``, ``gold_index``, ``id``, ``task_name``, …), ``model_response``
  (``text``, ``logprobs``, ``input_tokens``, …) and ``metric`` (metric name
  -> value for the document);
* **older versions**: flat columns ``example``, ``full_prompt``,
  ``predictions``, ``gold``, ``choices``, ``gold_index``, ``specifics``, …
  and ``metrics`` (metric name -> value); no document id.

How rows are read
-----------------
* **candidate**: the model name, the folders between ``details/`` and the
  ``date_id`` folder (``org/model``); without a ``details`` folder, the
  folder above the ``date_id`` folder.
* **case_id**: ``<task>/<doc.id>``; where the document has no id (older
  layout, or an empty id), ``<task>/`` and the first 12 hex digits of the
  SHA-256 of the query (``doc.query``, else ``example``, else
  ``full_prompt``). Trial and attempt 1; ``line`` is the 1-based row.
* **slice**: ``task`` (from the file name).
* **grade** (``--score``): one metric of ``metric`` (``metrics``), chosen
  with :func:`~evalframe.importers._kit.choose_score` (the only one by
  default; several refuse as ``ambiguous_score``, a name no file has as
  ``unknown_score``). A value goes through
  :func:`~evalframe.importers._kit.grade`: NaN or null (lighteval writes NaN
  where a metric failed) is ``judge_error``, never a zero. 0/1 metrics read
  under ``--grade binary``, others need ``--grade numeric``.
* **plan**: the documents of the file (``plan_from_rows``: a details file
  declares no dataset size; ``--max-samples`` runs cannot be told apart).

A file that is not Parquet, or a Parquet file with neither layout, is an
input error naming the file and the reason.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import CANDIDATE
from evalframe.errors import InputFormatError
from evalframe.importers import Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    choose_score,
    failure_kind,
    find_files,
    grade,
    json_object,
    ledger_row,
)
from evalframe.importers._per_case import MetricTable, assemble_tables, failures_note
from evalframe.load import PathLike

__all__ = ["read"]

#: ``details_<task>_<date_id>.parquet``: the date id is an ISO time with ``-`` for ``:``.
FILE_NAME: Final = re.compile(r"details_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.parquet")


_PLAN_NOTE: Final = (
    "a details file declares no dataset size: the plan is its {n} document(s), so a document "
    "lighteval did not write (e.g. under --max-samples) cannot be counted as missing"
)


def _is_export(path: Path) -> bool:
    return path.suffix == ".parquet" and path.name.startswith("details_")


def _candidate(path: Path) -> str:
    parts = path.parent.parts
    if "details" in parts[:-1]:
        at = len(parts) - 1 - parts[::-1].index("details")
        if at < len(parts) - 2:
            return "/".join(parts[at + 1 : -1])
    return path.parent.parent.name or path.parent.name


def _query_id(text: Any) -> str:
    data = text if isinstance(text, str) else repr(text)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:12]


def _read_file(path: Path, score: str | None) -> MetricTable:
    source = str(path)
    try:
        frame = pl.read_parquet(path, glob=False)
    except Exception as exc:  # polars/pyarrow raise several types for a file that is not Parquet
        raise InputFormatError(source, f"not a readable Parquet file ({type(exc).__name__}: {exc})"[:300]) from None
    match = FILE_NAME.fullmatch(path.name)
    task = match.group("task") if match else path.stem.removeprefix("details_")
    new = "metric" in frame.columns and "doc" in frame.columns
    metrics_column = "metric" if new else "metrics"
    if metrics_column not in frame.columns:
        raise InputFormatError(
            source, "not a lighteval details file: no doc and metric columns (lighteval >= 0.10) nor a metrics column"
        )
    struct = frame.schema[metrics_column]
    if not isinstance(struct, pl.Struct):
        raise InputFormatError(source, f"the {metrics_column} column is not a struct of metric values")
    candidate = _candidate(path)
    names = [f.name for f in struct.fields]
    table = MetricTable(info={"format": "lighteval", "source": source, "candidate": candidate, "task": task})
    table.info.update(layout="doc/metric" if new else "flat", metrics=names, rows=frame.height)
    if match:
        table.info["date_id"] = match.group("date")
    try:
        chosen = choose_score(score, names, default=None, what="metric", source=source)
    except ScoreChoiceError as exc:
        table.notes.append({**exc.note, CANDIDATE: candidate})
        return table
    table.info["metric"] = chosen
    docs = frame.get_column("doc").to_list() if new else [None] * frame.height
    flat_query = next((c for c in ("example", "full_prompt") if c in frame.columns), None)
    queries = frame.get_column(flat_query).to_list() if flat_query else [None] * frame.height
    values = frame.get_column(metrics_column).to_list()
    failed: dict[str, list[str]] = {"nonfinite_score": [], "not_a_score": []}
    for number, (doc, query, metric) in enumerate(zip(docs, queries, values, strict=True), start=1):
        doc = json_object(doc)
        doc_id = doc.get("id")
        key = str(doc_id) if doc_id not in (None, "") else _query_id(doc.get("query", query))
        case_id = f"{task}/{key}"
        raw = (metric or {}).get(chosen) if chosen is not None else None
        status, value = ("not_scored", None) if chosen is None else grade(raw)
        if chosen is not None and status != "scored":
            failed[failure_kind(raw, null_is_nan=True)].append(case_id)
        table.rows.append(ledger_row(candidate, case_id, score_status=status, score=value, line=number, source=source))
    table.notes.extend(failures_note(source, str(chosen), failed, candidate=candidate))
    return table


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read lighteval details Parquet files into a plan, a status ledger, notes and file facts.

    Parameters
    ----------
    paths
        ``details_<task>_<date_id>.parquet`` files, or folders searched for them.
    score
        The metric to grade with (e.g. ``extractive_match``); None: the only one.

    Returns
    -------
    Imported
        ``plan``: per candidate its documents, with case column ``task``
        (String). ``ledger``: one row per document, columns ``candidate``,
        ``case_id``, ``run_id`` (String, null), ``trial``, ``attempt``
        (Int64, 1), ``exec_status`` (``completed``), ``score_status``
        (``scored``, ``judge_error``), ``score`` (Float64), ``has_output``
        (null), ``limit`` (null), ``line`` (Int64, the 1-based row) and
        ``source``; no ``passed``. ``notes``: ``plan_from_rows`` per file,
        ``nonfinite_score`` / ``not_a_score`` listing failed documents.
        ``info``: per file its task, date id, layout, metrics, chosen metric.

    Raises
    ------
    InputFormatError
        A path that does not exist, or a file that is not a details file.
    ImportRefused
        ``unknown_score`` / ``ambiguous_score``, ``no_export``.

    Examples
    --------
    >>> imported = read(["data/fixtures/lighteval/details"], score="extractive_match")
    >>> imported.ledger.group_by("candidate", "score_status").len().sort("candidate", "score_status")
    shape: (3, 3)
    ┌─────────────────┬──────────────┬─────┐
    │ candidate       ┆ score_status ┆ len │
    │ ---             ┆ ---          ┆ --- │
    │ str             ┆ str          ┆ u32 │
    ╞═════════════════╪══════════════╪═════╡
    │ toy-org/model-a ┆ judge_error  ┆ 1   │
    │ toy-org/model-a ┆ scored       ┆ 3   │
    │ toy-org/model-b ┆ scored       ┆ 4   │
    └─────────────────┴──────────────┴─────┘
    """
    files, notes = find_files(paths, is_export=_is_export, what="lighteval details (details_*.parquet)", required=True)
    tables = [_read_file(path, score) for path in files]
    tasks = {r["case_id"]: {"task": t.info["task"]} for t in tables for r in t.rows}
    return assemble_tables(tables, notes, paths=paths, files=files, plan_note=_PLAN_NOTE, case_columns=tasks)
