"""Import EleutherAI lm-evaluation-harness output (``--output_path … --log_samples``).

One lm-eval run writes a results file (aggregate metrics per task keyed
``"<metric>,<filter>"``, ``n-samples``, ``config``, versions) and, per task,
``samples_<task>_<timestamp>.jsonl`` (one JSON object per evaluated document
and filter). Given a folder, lm-eval writes ``<folder>/<org>__<model>/results_<timestamp>.json``;
given ``--output_path x.json`` it writes ``x_<timestamp>.json`` with the
samples files beside it. Older writers named the samples file ``.json``
although it is JSON Lines; both are read the same way. A samples file is
linked to the results file in its folder with the same timestamp suffix.
There is no formal schema: the layout is described in ``docs/interface.md``
(``--output_path``, ``--log_samples``) of EleutherAI/lm-evaluation-harness.

How an export becomes a plan and a ledger:

* **candidate**: the model the results file records, as lm-eval wrote it:
  ``config.model_args`` ``pretrained=`` (else ``model=``, ``model_name=``,
  ``engine=``, ``path=``), else ``model_name``, else ``config.model_name``.
  A local path such as ``/gpfs/…/FLOR-760M`` is kept whole (it is the only
  name the run recorded). Never the folder name: the result does not depend
  on how a path is typed. Samples rows carry no model, so a samples file
  without a results file (or a results file that records no model) is read
  as candidate :data:`UNKNOWN_MODEL`, said in a ``plan_from_rows`` note.
* **run_id**: the timestamp. Re-runs of a task for one candidate are attempts
  1, 2, … of the same units, numbered in timestamp order.
* **filter**: a task with several answer-extraction filters writes one row per
  document *per filter*; one filter is graded. ``--score <metric>,<filter>``
  (lm-eval's own key, e.g. ``exact_match,strict-match``) selects it; with
  several filters and none declared the import refuses (``ambiguous_rows``,
  naming the filters). A task with one filter needs no declaration.
* **case_id**: ``<task>/<doc_id>``; one trial; plan columns ``task`` and
  ``filter`` (the graded filter; ``none`` for older rows without one).
* **plan**: doc ids ``0 … n-samples.original − 1`` of every task read, so a
  ``--limit`` run shows its true coverage, and a ``limited_run`` note says
  "limited to N of M docs". The tasks planned are those of the samples files
  read plus, for a results file given directly (or found in a given folder),
  every task of its ``n-samples``. Without a results file the plan is the doc
  ids present (``plan_from_rows``).
* **score**: one per-row metric per task (see :func:`read`), graded by
  :func:`~evalframe.importers._kit.grade`: a number is a score, a non-finite
  value or one that is not a number is ``judge_error``. A metric that is never
  a per-row score (every row holds a (gold, prediction) pair that lm-eval
  aggregates over the task, e.g. ``f1`` of masakhaner) is not a grade at all:
  its rows are ``not_scored`` (one ``not_a_score`` note per file). A row whose
  ``percent_parseable`` is 0 (lm-eval could not parse the answer, and wrote 0
  for the task metric) is ``judge_error``: the 0 is not a judgment. Header
  aggregates are recorded in ``info`` and are never evidence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
)
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    Unreadable,
    build_plan,
    choose_score,
    find_files,
    finish,
    grade,
    note,
    planned_size,
    read_json,
    read_json_lines,
)
from evalframe.load import PathLike

__all__ = ["FILTER", "TASK", "UNKNOWN_MODEL", "read"]

#: Plan slice column: the lm-eval task of a case.
TASK: Final = "task"
#: Plan slice column: the lm-eval filter graded (``none`` when the task has one unnamed filter).
FILTER: Final = "filter"
#: The candidate of rows whose run records no model (no results file beside the samples file).
UNKNOWN_MODEL: Final = "unknown-model"

_TIMESTAMP: Final = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
_SAMPLES_NAME: Final = re.compile(rf"samples_(?P<task>.+)_(?P<ts>{_TIMESTAMP})\.jsonl?")
#: ``results_<ts>.json`` (``--output_path <folder>``) or ``<stem>_<ts>.json`` (``--output_path <stem>.json``).
_RESULTS_NAME: Final = re.compile(rf"(?P<stem>.+)_(?P<ts>{_TIMESTAMP})\.json")

#: Keys of a samples row that are not per-row metric values.
_ROW_KEYS: Final = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)
#: Well-known primary metrics, in preference order, when a task has several per-row scores.
_PREFERRED: Final = (
    "acc",
    "exact_match",
    "acc_norm",
    "em",
    "mc1",
    "mc2",
    "f1",
    "mcc",
    "bleu",
    "rouge1",
    "rouge2",
    "rougeL",
    "chrf",
    "ter",
    "brier_score",
    "mae",
    "mse",
    "word_perplexity",
    "byte_perplexity",
    "bits_per_byte",
    "perplexity",
)
#: Per-row metrics that say whether the answer could be parsed, never what it scored (0 = unparseable).
_PARSE_METRIC: Final = "percent_parseable"
#: Metrics whose per-row value is a magnitude, never a pass/fail, even when every value seen is 0 or 1.
_NEVER_BINARY: Final = frozenset(
    {
        "mae",
        "mse",
        "rmse",
        "f1",
        "mc2",
        "bleu",
        "chrf",
        "ter",
        "rouge1",
        "rouge2",
        "rougeL",
        "rougeLsum",
        "brier_score",
        "perplexity",
        "word_perplexity",
        "byte_perplexity",
        "bits_per_byte",
        "likelihood",
        "eqbench",
        _PARSE_METRIC,
    }
)
_MODEL_ARG_KEYS: Final = ("pretrained", "model", "model_name", "engine", "path")
_ABSENT: Final = object()


@dataclass
class _Header:
    """A results file as read (``data`` None when it could not be read)."""

    path: Path
    source: str
    run_id: str
    data: dict[str, Any] | None


@dataclass
class _Row:
    """One samples row: where it is, which document and filter, its metric values."""

    line: int
    doc_id: str
    filter: str
    values: dict[str, Any]
    has_output: bool | None


@dataclass
class _Samples:
    """One samples file as read."""

    path: Path
    source: str
    task: str
    run_id: str
    rows: list[_Row] = field(default_factory=list)
    metric_order: list[str] = field(default_factory=list)
    layout: str = "metrics list"
    normalised_ids: int = 0


@dataclass(frozen=True)
class _Run:
    """Who ran a file: candidate, how that name was found, the results file."""

    candidate: str
    candidate_from: str
    header: _Header | None


@dataclass(frozen=True)
class _Choice:
    """What a task is graded by: its filter and metric (metric None: no metric at all)."""

    filter: str
    metric: str | None


def _is_export(path: Path) -> bool:
    return bool(_SAMPLES_NAME.fullmatch(path.name) or _RESULTS_NAME.fullmatch(path.name))


def _split_score(score: str | None) -> tuple[str | None, str | None]:
    """``"metric,filter"`` → (metric, filter); ``"metric"`` → (metric, None)."""
    if score is None:
        return None, None
    metric, sep, flt = score.rpartition(",")
    if not sep:
        return score, None
    return metric or None, flt or None


def _read_header(path: Path, notes: list[dict[str, Any]]) -> _Header:
    source = str(path)
    match = _RESULTS_NAME.fullmatch(path.name)
    run_id = match.group("ts") if match else path.stem
    try:
        data = read_json(path)
    except Unreadable as exc:
        notes.append(exc.note)
        return _Header(path, source, run_id, None)
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        notes.append(note("unreadable_file", source, "the results file is not a JSON object with a 'results' object"))
        return _Header(path, source, run_id, None)
    return _Header(path, source, run_id, data)


def _doc_id(value: object) -> tuple[str | None, bool]:
    """Return (doc id as text, whether it had to be normalised); None when unusable."""
    if isinstance(value, bool):
        return None, False
    if isinstance(value, int):
        return str(value), False
    if isinstance(value, float) and value.is_integer():
        return str(int(value)), True
    if isinstance(value, str) and value != "":
        return value, bool(re.fullmatch(r"0|[1-9][0-9]*", value))
    return None, False


def _read_samples(path: Path, notes: list[dict[str, Any]]) -> _Samples:
    source = str(path)
    match = _SAMPLES_NAME.fullmatch(path.name)
    assert match is not None  # only matching names are read as samples
    found = _Samples(path, source, match.group("task"), match.group("ts"))
    try:
        lines, bad = read_json_lines(path)
    except Unreadable as exc:
        notes.append(exc.note)
        return found
    notes.extend(bad)
    has_metrics_list = False
    for number, obj in lines:
        if not isinstance(obj, dict):
            detail = f"expected a JSON object, found {type(obj).__name__}"
            notes.append(note("unreadable_file", source, detail, line=number))
            continue
        doc_id, normalised = _doc_id(obj.get("doc_id"))
        if doc_id is None:
            detail = f"doc_id is missing or not an integer: {obj.get('doc_id')!r}"
            notes.append(note("unreadable_file", source, detail, line=number))
            continue
        found.normalised_ids += normalised
        names = obj.get("metrics")
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            has_metrics_list = True
            metric_names = [str(n) for n in names]
        else:
            metric_names = [k for k in obj if k not in _ROW_KEYS]
        found.metric_order.extend(n for n in metric_names if n not in found.metric_order)
        flt = obj.get("filter")
        resps = obj.get("resps", _ABSENT)
        found.rows.append(
            _Row(
                line=number,
                doc_id=doc_id,
                filter="none" if flt is None else str(flt),
                values={n: obj[n] for n in {*metric_names, _PARSE_METRIC} if n in obj},
                has_output=None if resps is _ABSENT else bool(resps),
            )
        )
    if found.rows and not has_metrics_list:
        found.layout = "older (no metrics list)"
    return found


def _model_of(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """The model name a results file records, and where it was found.

    Examples
    --------
    >>> _model_of({"config": {"model_args": "pretrained=/gpfs/hf-models/FLOR-760M,trust_remote_code=True"}})
    ('/gpfs/hf-models/FLOR-760M', 'config.model_args.pretrained')
    >>> _model_of({"config": {"model_args": {"dtype": "bfloat16"}}, "model_name": "google/gemma-2b"})
    ('google/gemma-2b', 'model_name')
    """
    config = data.get("config")
    config = config if isinstance(config, dict) else {}
    args: object = config.get("model_args")
    parsed: dict[str, object] = {}
    if isinstance(args, dict):
        parsed = {str(k): v for k, v in args.items()}
    elif isinstance(args, str):
        for part in args.split(","):
            arg, sep, text = part.partition("=")
            if sep:
                parsed.setdefault(arg.strip(), text.strip())
    for name in _MODEL_ARG_KEYS:
        value = parsed.get(name)
        if isinstance(value, str) and value:
            return value, f"config.model_args.{name}"
    for where, value in (("model_name", data.get("model_name")), ("config.model_name", config.get("model_name"))):
        if isinstance(value, str) and value:
            return value, where
    return None


def _n_samples(data: Mapping[str, Any] | None, task: str) -> tuple[int | None, int | None]:
    """(original, effective) of a task from a results file's ``n-samples``."""
    entry = _dig(data, "n-samples", task)
    if not isinstance(entry, dict):
        return None, None

    def count(v: object) -> int | None:
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    return count(entry.get("original")), count(entry.get("effective"))


def _header_tasks(data: Mapping[str, Any] | None) -> list[str]:
    block = _dig(data, "n-samples")
    return sorted(str(t) for t in block) if isinstance(block, dict) else []


def _aggregates(data: Mapping[str, Any] | None, task: str) -> dict[str, Any]:
    """The ``"<metric>,<filter>"`` aggregate values of a task (report only, never evidence)."""
    entry = _dig(data, "results", task)
    if not isinstance(entry, dict):
        return {}
    return {str(k): v for k, v in entry.items() if "," in str(k)}


def _header_filters(data: Mapping[str, Any] | None, task: str) -> set[str]:
    return {k.rsplit(",", 1)[1] for k in _aggregates(data, task)}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float))


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _sort_ids(ids: Iterable[str]) -> list[str]:
    return sorted(set(ids), key=lambda d: (0, int(d), "") if d.isdigit() else (1, 0, d))


def _dig(data: Mapping[str, Any] | None, *keys: str) -> Any:
    """``data[k1][k2]…``, or None when any level is absent or not an object."""
    value: Any = data
    for k in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(k)
    return value


def _unparseable(row: _Row, metric: str) -> bool:
    """Whether lm-eval recorded that it could not parse this row's answer (``percent_parseable`` 0)."""
    flag = row.values.get(_PARSE_METRIC)
    return metric != _PARSE_METRIC and _is_number(flag) and not isinstance(flag, bool) and flag == 0


def _is_binary(rows: Sequence[_Row], metric: str) -> bool:
    """Whether a metric is a pass/fail: every finite value of a parseable row is 0 or 1 (and there is one)."""
    if metric in _NEVER_BINARY:
        return False
    values = [r.values.get(metric) for r in rows if not _unparseable(r, metric)]
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return bool(finite) and all(v in (0.0, 1.0) for v in finite)


@dataclass
class _Batch:
    """Every file of one :func:`read` call, with who ran it."""

    files: list[_Samples]
    runs: dict[str, _Run]
    explicit: list[tuple[_Header, _Run]]
    by_task: dict[str, list[_Samples]]

    @classmethod
    def gather(cls, paths: Sequence[PathLike], notes: list[dict[str, Any]]) -> _Batch:
        found, missing = find_files(
            paths, is_export=_is_export, what="lm-eval samples_<task>_<timestamp>.jsonl or results"
        )
        notes.extend(missing)
        samples_paths: list[Path] = []
        results_paths: list[Path] = []
        for path in found:
            if _SAMPLES_NAME.fullmatch(path.name):
                samples_paths.append(path)
            elif _RESULTS_NAME.fullmatch(path.name):
                results_paths.append(path)
            else:
                detail = (
                    "not an lm-eval file name: expected samples_<task>_<timestamp>.jsonl (or .json), "
                    "results_<timestamp>.json or <name>_<timestamp>.json"
                )
                notes.append(note("unreadable_file", str(path), detail))
        headers: dict[Path, _Header] = {}

        def header_at(path: Path) -> _Header:
            key = path.resolve()
            if key not in headers:
                headers[key] = _read_header(path, notes)
            return headers[key]

        def sibling(samples: Path, run_id: str) -> _Header | None:
            """The results file beside a samples file with the same timestamp suffix."""
            named = sorted(
                p
                for p in samples.parent.iterdir()
                if p.is_file()
                and not _SAMPLES_NAME.fullmatch(p.name)
                and (m := _RESULTS_NAME.fullmatch(p.name))
                and m.group("ts") == run_id
            )
            # lm-eval's own name first, then <stem>_<ts>.json
            named.sort(key=lambda p: p.name != f"results_{run_id}.json")
            return header_at(named[0]) if named else None

        files = [_read_samples(p, notes) for p in samples_paths]
        runs = {f.source: _run_of(sibling(f.path, f.run_id)) for f in files}
        explicit = [(h, _run_of(h)) for h in (header_at(p) for p in results_paths)]
        by_task: dict[str, list[_Samples]] = {}
        for f in files:
            by_task.setdefault(f.task, []).append(f)
        return cls(files, runs, explicit, by_task)

    def header_only_filters(self, task: str) -> set[str]:
        """Filters the results files name for a task that no samples file was read for."""
        return {flt for h, _run in self.explicit for flt in _header_filters(h.data, task)}

    def choose(self, task: str, metric: str | None, flt: str | None, notes: list[dict[str, Any]]) -> _Choice | None:
        """The filter and metric a task is graded by; None (and a refusing note) when they cannot be chosen."""
        task_files = self.by_task.get(task, [])
        source = task_files[0].source if task_files else self.explicit[0][0].source
        filters = sorted({r.filter for f in task_files for r in f.rows}) or sorted(self.header_only_filters(task))
        filters = filters or ["none"]
        try:
            if flt is not None:
                chosen_filter = choose_score(flt, filters, default=None, what="filter", source=source)
            elif len(filters) > 1:
                detail = (
                    f"task {task!r} has one row per document for each of {len(filters)} filters "
                    f"({', '.join(filters)}): the rows differ by 'filter' and none was declared; "
                    f"name one with --score <metric>,<filter> (e.g. {metric or 'exact_match'},{filters[0]})"
                )
                notes.append(note("ambiguous_rows", source, detail))
                return None
            else:
                chosen_filter = filters[0]
            if not task_files:  # a task only a results file names: nothing to grade
                return _Choice(str(chosen_filter), metric)
            rows = [r for f in task_files for r in f.rows if r.filter == chosen_filter]
            order: list[str] = []
            for f in task_files:
                order.extend(n for n in f.metric_order if n not in order)
            if metric is not None:
                return _Choice(
                    str(chosen_filter), choose_score(metric, order, default=None, what="metric", source=source)
                )
            scores = [n for n in order if n != _PARSE_METRIC and any(_is_number(r.values.get(n)) for r in rows)]
            offered = scores or order
            preferred = next((n for n in _PREFERRED if n in offered), None)
            chosen = choose_score(None, offered, default=preferred, what="metric", source=source)
            return _Choice(str(chosen_filter), chosen)
        except ScoreChoiceError as exc:
            notes.append(exc.note)
            return None

    def grade_task(
        self, task: str, choice: _Choice, notes: list[dict[str, Any]], info: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Ledger rows of every samples file of one task (rows of the chosen filter); notes and info appended."""
        task_files = self.by_task.get(task, [])
        metric = choice.metric
        chosen_rows = {f.source: [r for r in f.rows if r.filter == choice.filter] for f in task_files}
        all_rows = [r for rows in chosen_rows.values() for r in rows]
        is_score = metric is not None and any(_is_number(r.values.get(metric)) for r in all_rows)
        binary = metric is not None and _is_binary(all_rows, metric)
        out: list[dict[str, Any]] = []
        for f in task_files:
            run = self.runs[f.source]
            data = run.header.data if run.header is not None else None
            original, effective = _n_samples(data, task)
            rows = chosen_rows[f.source]
            who: dict[str, Any] = {"candidate": run.candidate}
            if metric is None and rows:
                detail = f"task {task!r} has no per-row metric; its {len(rows)} rows are not scored"
                notes.append(note("not_a_score", f.source, detail, **who))
            elif metric is not None and rows and not is_score:
                example = next((r.values[metric] for r in rows if metric in r.values), None)
                detail = (
                    f"metric {metric!r} of task {task!r} is never a per-row score: each row holds a "
                    f"{type(example).__name__} ({_short(example)}) that lm-eval aggregates over the whole task; "
                    f"the {len(rows)} rows are not scored"
                )
                notes.append(note("not_a_score", f.source, detail, **who))
            absent = 0
            for row in rows:
                cid = f"{task}/{row.doc_id}"
                where: dict[str, Any] = {"line": row.line, "case_id": cid, "trial": 1, **who}
                status, value, passed = "not_scored", None, None
                raw = row.values.get(metric, _ABSENT) if metric is not None else _ABSENT
                if metric is not None and is_score and raw is _ABSENT:
                    absent += 1
                elif metric is not None and is_score and _unparseable(row, metric):
                    status = "judge_error"
                    detail = (
                        f"{metric} = {_short(raw)} on a row whose {_PARSE_METRIC} is 0: lm-eval could not parse "
                        "the answer, so the value is not a judgment; read as a grader failure"
                    )
                    notes.append(note("not_a_score", f.source, detail, **where))
                elif metric is not None and is_score:
                    status, value = grade(raw)
                    if status == "scored":
                        passed = (value == 1.0) if binary else None
                    elif _is_number(raw):
                        detail = f"{metric} = {_short(raw)} is not a finite number; read as a grader failure"
                        notes.append(note("nonfinite_score", f.source, detail, **where))
                    else:
                        detail = (
                            f"{metric} = {_short(raw)} is a {type(raw).__name__}, not a score; read as a grader failure"
                        )
                        notes.append(note("not_a_score", f.source, detail, **where))
                out.append(
                    {
                        CANDIDATE: run.candidate,
                        CASE_ID: cid,
                        TRIAL: 1,
                        RUN_ID: f.run_id,
                        EXEC_STATUS: "completed",
                        SCORE_STATUS: status,
                        SCORE: value,
                        PASSED: passed,
                        HAS_OUTPUT: row.has_output,
                        LINE: row.line,
                        SOURCE: f.source,
                    }
                )
            if absent:
                detail = f"metric {metric!r} is absent from {absent} row(s) of task {task!r}; they are not scored"
                notes.append(note("not_a_score", f.source, detail, **who))
            if f.normalised_ids:
                detail = f"{f.normalised_ids} doc_id value(s) were not JSON integers and were read as integers"
                notes.append(note("id_normalised", f.source, detail, **who))
            if effective is not None and len(rows) != effective:
                detail = (
                    f"results file says {effective} document(s) of task {task!r} were run "
                    f"(n-samples.effective); the samples file holds {len(rows)} row(s) for filter {choice.filter!r}"
                )
                notes.append(note("header_rows_disagree", f.source, detail, **who))
            if run.candidate == UNKNOWN_MODEL:
                if run.header is None:
                    reason = f"no results file with timestamp {f.run_id} beside this samples file"
                elif run.header.data is None:
                    reason = f"its results file {run.header.path.name} cannot be read"
                else:
                    reason = f"its results file {run.header.path.name} records no model"
                detail = f"{reason}: the rows do not record the model, so the candidate is {UNKNOWN_MODEL!r}"
                if original is None and (run.header is None or run.header.data is None):
                    n_docs = len({r.doc_id for r in f.rows})
                    detail += (
                        f", and the plan is the {n_docs} doc ids present, so documents that never ran cannot "
                        "show as missing"
                    )
                notes.append(note("plan_from_rows", f.source, detail, **who))
            info.append(
                {
                    "format": "lm-eval samples",
                    "source": f.source,
                    "task": task,
                    "candidate": run.candidate,
                    "candidate_from": run.candidate_from,
                    "run_id": f.run_id,
                    "results_file": run.header.source if run.header is not None else None,
                    "layout": f.layout,
                    "n_samples_original": original,
                    "n_samples_effective": effective,
                    "limit": _dig(data, "config", "limit"),
                    "task_version": _dig(data, "versions", task),
                    "lm_eval_version": _dig(data, "lm_eval_version"),
                    "git_hash": _dig(data, "git_hash"),
                    "aggregates": _aggregates(data, task),
                    "rows": len(f.rows),
                    "filters": sorted({r.filter for r in f.rows}),
                    "filter": choice.filter,
                    "metrics": list(f.metric_order),
                    "metric": metric,
                    "metric_kind": None if metric is None or not is_score else "binary" if binary else "numeric",
                }
            )
        return out

    def listed_headers(self) -> list[tuple[_Header, _Run, list[str]]]:
        """Every results file read, with the tasks it plans (all of them when given, else its samples' tasks)."""
        listed: dict[Path, tuple[_Header, _Run, list[str]]] = {
            h.path.resolve(): (h, run, _header_tasks(h.data)) for h, run in self.explicit
        }
        for f in self.files:
            run = self.runs[f.source]
            if run.header is None:
                continue
            key = run.header.path.resolve()
            _header, _run, tasks = listed.setdefault(key, (run.header, run, []))
            if f.task not in tasks:
                tasks.append(f.task)
        return sorted(listed.values(), key=lambda item: item[0].source)

    def results_info(self) -> list[dict[str, Any]]:
        """One info dict per results file read."""
        given = {h.path.resolve() for h, _run in self.explicit}
        out: list[dict[str, Any]] = []
        for h, run, _tasks in self.listed_headers():
            tasks = _header_tasks(h.data)
            out.append(
                {
                    "format": "lm-eval results",
                    "source": h.source,
                    "candidate": run.candidate,
                    "candidate_from": run.candidate_from,
                    "run_id": h.run_id,
                    "readable": h.data is not None,
                    "tasks": tasks,
                    "plans_all_tasks": h.path.resolve() in given,
                    "n_samples": _dig(h.data, "n-samples"),
                    "limit": _dig(h.data, "config", "limit"),
                    "versions": _dig(h.data, "versions"),
                    "lm_eval_version": _dig(h.data, "lm_eval_version"),
                    "git_hash": _dig(h.data, "git_hash"),
                    "aggregates": {t: _aggregates(h.data, t) for t in tasks},
                }
            )
        return out

    def header_notes(self, planned: set[str], notes: list[dict[str, Any]]) -> None:
        """``limited_run`` per (results file, planned task) run on fewer docs than it holds; tasks without rows."""
        read_runs = {(f.path.parent.resolve(), f.run_id, f.task) for f in self.files}
        given = {h.path.resolve() for h, _run in self.explicit}
        for h, run, tasks in self.listed_headers():
            who: dict[str, Any] = {"candidate": run.candidate}
            for task in sorted(tasks):
                if task not in planned:
                    continue
                original, effective = _n_samples(h.data, task)
                limit = _dig(h.data, "config", "limit")
                limit = int(limit) if isinstance(limit, float) and limit.is_integer() else limit
                if original is not None and effective is not None and effective < original:
                    detail = (
                        f"task {task!r}: limited to {effective} of {original} docs "
                        f"(n-samples effective/original; config.limit {limit}); the rest are planned and missing"
                    )
                    notes.append(note("limited_run", h.source, detail, **who))
                if h.path.resolve() in given and (h.path.parent.resolve(), h.run_id, task) not in read_runs:
                    detail = (
                        f"results file says {effective} document(s) of task {task!r} were run "
                        f"(n-samples.effective); no samples_{task}_{h.run_id} file was read, so they are missing"
                    )
                    notes.append(note("header_rows_disagree", h.source, detail, **who))

    def planned_units(self, choices: Mapping[str, _Choice], notes: list[dict[str, Any]]) -> pl.DataFrame:
        """Planned units: ``candidate``, ``case_id``, ``trial``, ``task``, ``filter``."""
        described: dict[tuple[str, str], list[_Header | None]] = {}
        for f in self.files:
            run = self.runs[f.source]
            described.setdefault((run.candidate, f.task), []).append(run.header)
        for h, run in self.explicit:
            for task in _header_tasks(h.data):
                described.setdefault((run.candidate, task), []).append(h)
        columns: dict[str, list[Any]] = {CANDIDATE: [], CASE_ID: [], TRIAL: [], TASK: [], FILTER: []}
        for (candidate, task), headers in sorted(described.items()):
            if task not in choices:
                continue
            originals = [n for n in (_n_samples(h.data if h else None, task)[0] for h in headers) if n is not None]
            own = [f for f in self.by_task.get(task, []) if self.runs[f.source].candidate == candidate]
            if originals:
                where = next((h.source for h in headers if h is not None), task)
                too_many = planned_size(max(originals), where, f"task {task!r}: n-samples.original")
                if too_many is not None:
                    notes.append(too_many)
                    continue
                doc_ids = [str(i) for i in range(max(originals))]  # a row outside them is an unknown case
            else:
                doc_ids = _sort_ids(r.doc_id for f in own for r in f.rows)
                for h in {id(h): h for h in headers if h is not None and h.data is not None}.values():
                    detail = (
                        f"the results file gives no n-samples for task {task!r}: the plan is the "
                        f"{len(doc_ids)} doc ids present, so documents that never ran cannot show as missing"
                    )
                    notes.append(note("plan_from_rows", h.source, detail, candidate=candidate))
            for doc in doc_ids:
                columns[CANDIDATE].append(candidate)
                columns[CASE_ID].append(f"{task}/{doc}")
                columns[TRIAL].append(1)
                columns[TASK].append(task)
                columns[FILTER].append(choices[task].filter)
        schema = {CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, TASK: pl.String, FILTER: pl.String}
        return pl.DataFrame(columns, schema=schema)


def _run_of(header: _Header | None) -> _Run:
    """Who ran the files of a results file: the model it records, else :data:`UNKNOWN_MODEL`."""
    if header is not None and header.data is not None:
        model = _model_of(header.data)
        if model is not None:
            return _Run(model[0], model[1], header)
        return _Run(UNKNOWN_MODEL, "not recorded in the results file", header)
    return _Run(UNKNOWN_MODEL, "no results file", header)


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
        task has several. Default metric, per task: the only per-row score
        (``percent_parseable`` aside), else the first of acc, exact_match,
        acc_norm, em, mc1, … present; several and none of those refuses
        (``ambiguous_score``). A metric the rows do not have refuses
        (``unknown_score``, naming those they have).

    Returns
    -------
    Imported
        ``plan``: one unit per (candidate, ``<task>/<doc_id>``) with trial 1;
        doc ids ``0 … n-samples.original − 1``; plan columns ``task`` and
        ``filter`` (String).
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
        ``notes`` (flags): ``limited_run`` (``--limit``: "limited to N of M
        docs"), ``header_rows_disagree``, ``plan_from_rows``,
        ``not_a_score``, ``nonfinite_score``, ``id_normalised``.
        ``info``: one dict per file read (task, model, run id, n-samples,
        ``--limit``, task version, aggregate metric values, rows, filter,
        metric).

    Raises
    ------
    ImportRefused
        With the notes, when one refuses: ``ambiguous_rows`` (several filters,
        none declared), ``unknown_score``, ``ambiguous_score``,
        ``unreadable_file`` (bad JSON line, undecodable bytes, unknown file
        name, results file without a ``results`` object), ``no_export`` (a
        folder with no lm-eval file), ``empty_plan``.
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
        rows.extend(batch.grade_task(task, choice, notes, info))
    batch.header_notes(set(choices), notes)
    info.extend(batch.results_info())
    source = ", ".join(str(p) for p in paths)
    plan, plan_problems = build_plan(batch.planned_units(choices, notes), source=source)
    if any(n["refusing"] for n in notes):  # nothing planned because of a refusal above: say that refusal only
        plan_problems = plan_problems.filter(~pl.col("kind").is_in(["empty_plan", "empty_candidates"]))
    ledger = (
        pl.DataFrame(rows, schema={k: v for k, v in LEDGER_SCHEMA.items() if k != ATTEMPT})
        .with_columns(pl.col(RUN_ID).rank("dense").over(CANDIDATE, CASE_ID, TRIAL).cast(pl.Int64).alias(ATTEMPT))
        .select(list(LEDGER_SCHEMA))
        .sort(CANDIDATE, SOURCE, LINE)
    )
    return finish(plan, ledger, [notes, plan_problems], info)
