"""Import EleutherAI lm-evaluation-harness output (``--output_path … --log_samples``).

One lm-eval run writes, into ``<output_path>/<org>__<model>/``, a
``results_<timestamp>.json`` (aggregate metrics per task, ``n-samples``,
``config``, versions) and, per task, ``samples_<task>_<timestamp>.jsonl``
(one JSON object per evaluated document and filter). Older writers named the
samples file ``.json`` although it is JSON Lines; both are read the same way.
The timestamp links a samples file to its sibling results file. There is no
formal schema: the layout is described in ``docs/interface.md``
(``--output_path``, ``--log_samples``) of EleutherAI/lm-evaluation-harness.

How an export becomes a plan and a ledger:

* **candidate**: the model of the results file (``config.model_args``
  ``pretrained=``/``model=``, else ``model_name``), else the folder name with
  ``__`` read back as ``/`` (``Qwen__Qwen3-8B`` → ``Qwen/Qwen3-8B``).
* **run_id**: the timestamp. Re-runs of a task for one candidate are attempts
  1, 2, … of the same units, numbered in timestamp order.
* **case_id**: ``<task>/<doc_id>``, or ``<task>/<filter>/<doc_id>`` when the
  task has more than one filter; one trial.
* **plan**: doc ids ``0 … n-samples.original − 1`` of every task read, so a
  ``--limit`` run shows its true coverage. The tasks planned are those of the
  samples files read plus, for a results file given directly (or found in a
  given folder), every task of its ``n-samples``. Without a results file the
  plan falls back to the doc ids present (with a note).
* **score**: one per-row metric per task (see :func:`read`). Header
  aggregates are recorded in ``info`` and are never evidence.
"""

from __future__ import annotations

import json
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
from evalframe.errors import InputFormatError, PlanError
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.load import PathLike
from evalframe.plan import Plan
from evalframe.problems import concat_problems, problems_frame

__all__ = ["read"]

#: Plan slice column: the lm-eval task of a case.
TASK: Final = "task"
#: Plan slice column: the lm-eval filter of a case (``none`` when the task has one unnamed filter).
FILTER: Final = "filter"


_TIMESTAMP: Final = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
_SAMPLES_NAME: Final = re.compile(rf"samples_(?P<task>.+)_(?P<ts>{_TIMESTAMP})\.jsonl?")
_RESULTS_NAME: Final = re.compile(rf"results_(?P<ts>{_TIMESTAMP})\.json")

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
#: Default metric preference for the older layout (rows without a ``metrics`` list).
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
    """Who ran a file: candidate, how that name was found, the sibling header."""

    candidate: str
    candidate_from: str
    header: _Header | None


def _note(kind: str, source: str, detail: str, **key: Any) -> dict[str, Any]:
    refusing = kind in ("unreadable_file", "missing_column")
    return {"kind": kind, "source": source, "detail": detail, "refusing": refusing, **key}


def _key(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:  # pragma: no cover - resolve only fails on exotic file systems
        return path.absolute()


def _collect(paths: Sequence[PathLike], notes: list[dict[str, Any]]) -> tuple[list[Path], list[Path]]:
    """Split the inputs into samples files and results files (folders searched recursively)."""
    samples: dict[Path, Path] = {}
    results: dict[Path, Path] = {}
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputFormatError(str(given), "no such file or directory")
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if not child.is_file():
                    continue
                if _SAMPLES_NAME.fullmatch(child.name):
                    samples.setdefault(_key(child), child)
                elif _RESULTS_NAME.fullmatch(child.name):
                    results.setdefault(_key(child), child)
        elif _SAMPLES_NAME.fullmatch(path.name):
            samples.setdefault(_key(path), path)
        elif _RESULTS_NAME.fullmatch(path.name):
            results.setdefault(_key(path), path)
        else:
            notes.append(
                _note(
                    "unreadable_file",
                    str(path),
                    "not an lm-eval file name: expected samples_<task>_<timestamp>.jsonl (or .json) "
                    "or results_<timestamp>.json",
                )
            )
    return sorted(samples.values(), key=str), sorted(results.values(), key=str)


def _read_header(path: Path, notes: list[dict[str, Any]]) -> _Header:
    source = str(path)
    match = _RESULTS_NAME.fullmatch(path.name)
    run_id = match.group("ts") if match else path.stem
    try:
        text = path.read_bytes().decode("utf-8")
        data = json.loads(text)  # Python's json accepts the bare Infinity / NaN tokens lm-eval writes
    except OSError as exc:
        notes.append(_note("unreadable_file", source, f"cannot read the results file: {exc.strerror or exc}"))
        return _Header(path, source, run_id, None)
    except UnicodeDecodeError as exc:
        notes.append(_note("unreadable_file", source, f"the results file is not UTF-8 (byte {exc.start})"))
        return _Header(path, source, run_id, None)
    except json.JSONDecodeError as exc:
        detail = f"invalid JSON in the results file: {exc.msg} at line {exc.lineno} column {exc.colno}"
        notes.append(_note("unreadable_file", source, detail, line=exc.lineno))
        return _Header(path, source, run_id, None)
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        detail = "the results file is not a JSON object with a 'results' object"
        notes.append(_note("unreadable_file", source, detail))
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
        if re.fullmatch(r"0|[1-9][0-9]*", value):
            return value, True
        return value, False
    return None, False


def _read_samples(path: Path, notes: list[dict[str, Any]]) -> _Samples:
    source = str(path)
    match = _SAMPLES_NAME.fullmatch(path.name)
    assert match is not None  # _collect only passes matching names
    found = _Samples(path, source, match.group("task"), match.group("ts"))
    try:
        data = path.read_bytes()
    except OSError as exc:
        notes.append(_note("unreadable_file", source, f"cannot read the samples file: {exc.strerror or exc}"))
        return found
    has_metrics_list = False
    for number, raw_bytes in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        try:
            raw = raw_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            detail = f"bytes that are not UTF-8 at byte {exc.start} of the line"
            notes.append(_note("unreadable_file", source, detail, line=number))
            continue
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            detail = f"invalid JSON ({exc.msg}; column {exc.colno})"
            notes.append(_note("unreadable_file", source, detail, line=number))
            continue
        if not isinstance(obj, dict):
            notes.append(
                _note("unreadable_file", source, f"expected a JSON object, found {type(obj).__name__}", line=number)
            )
            continue
        doc_id, normalised = _doc_id(obj.get("doc_id"))
        if doc_id is None:
            detail = f"doc_id is missing or not an integer: {obj.get('doc_id')!r}"
            notes.append(_note("unreadable_file", source, detail, line=number))
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
        has_output = None if resps is _ABSENT else bool(resps)
        found.rows.append(
            _Row(
                line=number,
                doc_id=doc_id,
                filter="none" if flt is None else str(flt),
                values={n: obj[n] for n in metric_names if n in obj},
                has_output=has_output,
            )
        )
    if found.rows and not has_metrics_list:
        found.layout = "older (no metrics list)"
        preferred = [n for n in _PREFERRED if n in found.metric_order]
        found.metric_order = preferred + [n for n in found.metric_order if n not in preferred]
    return found


def _model_from_header(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """The model name of a results file and where it was found."""
    config = data.get("config")
    args: object = config.get("model_args") if isinstance(config, dict) else None
    parsed: dict[str, object] = {}
    if isinstance(args, dict):
        parsed = {str(k): v for k, v in args.items()}
    elif isinstance(args, str):
        for part in args.split(","):
            arg, sep, text = part.partition("=")
            if sep:
                parsed.setdefault(arg.strip(), text)
    for name in _MODEL_ARG_KEYS:
        value = parsed.get(name)
        if isinstance(value, str) and value:
            return value, f"config.model_args.{name}"
    name_value = data.get("model_name")
    if isinstance(name_value, str) and name_value:
        return name_value, "model_name"
    return None


def _run_of(path: Path, header: _Header | None) -> _Run:
    if header is not None and header.data is not None:
        model = _model_from_header(header.data)
        if model is not None:
            return _Run(model[0], model[1], header)
    folder = path.parent.name
    return _Run(folder.replace("__", "/") or folder, "folder name", header)


def _n_samples(data: Mapping[str, Any] | None, task: str) -> tuple[int | None, int | None]:
    """(original, effective) of a task from a results file's ``n-samples``."""
    if data is None:
        return None, None
    block = data.get("n-samples")
    entry = block.get(task) if isinstance(block, dict) else None
    if not isinstance(entry, dict):
        return None, None

    def count(v: object) -> int | None:
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    return count(entry.get("original")), count(entry.get("effective"))


def _header_tasks(data: Mapping[str, Any] | None) -> list[str]:
    block = data.get("n-samples") if data is not None else None
    return sorted(str(t) for t in block) if isinstance(block, dict) else []


def _aggregates(data: Mapping[str, Any] | None, task: str) -> dict[str, Any]:
    """The ``"<metric>,<filter>"`` aggregate values of a task (report only, never evidence)."""
    block = data.get("results") if data is not None else None
    entry = block.get(task) if isinstance(block, dict) else None
    if not isinstance(entry, dict):
        return {}
    return {str(k): v for k, v in entry.items() if "," in str(k)}


def _header_filters(data: Mapping[str, Any] | None, task: str) -> set[str]:
    return {k.rsplit(",", 1)[1] for k in _aggregates(data, task)}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float))


def _choose_metric(files: Sequence[_Samples], score: str | None) -> str | None:
    """The per-row metric of one task: ``score`` if given, else the first with a numeric value."""
    if score is not None:
        return score
    order: list[str] = []
    for f in files:
        order.extend(n for n in f.metric_order if n not in order)
    for name in order:
        if any(_is_number(r.values.get(name)) for f in files for r in f.rows):
            return name
    return None


def _is_binary(files: Sequence[_Samples], metric: str) -> bool:
    if metric in _NEVER_BINARY:
        return False
    numbers = [float(v) for f in files for r in f.rows if isinstance(v := r.values.get(metric), (int, float))]
    finite = [v for v in numbers if math.isfinite(v)]
    return bool(finite) and all(v in (0.0, 1.0) for v in finite)


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
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


def _grade(raw: object, metric: str, *, binary: bool) -> tuple[str, float | None, bool | None, str | None, str]:
    """Read one row's metric value: (score_status, score, passed, note kind or None, note detail)."""
    if isinstance(raw, bool):
        return "scored", float(raw), raw, None, ""
    if isinstance(raw, (int, float)):
        number = float(raw)
        if math.isfinite(number):
            return "scored", number, (number == 1.0) if binary else None, None, ""
        detail = f"{metric} = {number!r} is not a finite number; read as a grader failure"
        return "judge_error", None, None, "nonfinite_score", detail
    if raw is _ABSENT:
        return "not_scored", None, None, "not_a_score", f"{metric} is absent on this row"
    detail = f"{metric} = {_short(raw)} is a {type(raw).__name__}, not a score; the row is not scored"
    return "not_scored", None, None, "not_a_score", detail


@dataclass
class _Batch:
    """Every file of one :func:`read` call, with who ran it and the filters of each task."""

    files: list[_Samples]
    runs: dict[str, _Run]
    explicit: list[tuple[_Header, _Run]]
    by_task: dict[str, list[_Samples]]
    task_filters: dict[str, set[str]]

    @classmethod
    def gather(cls, paths: Sequence[PathLike], notes: list[dict[str, Any]]) -> _Batch:
        samples_paths, results_paths = _collect(paths, notes)
        headers: dict[Path, _Header] = {}

        def header_at(path: Path) -> _Header | None:
            key = _key(path)
            if key not in headers:
                if not path.is_file():
                    return None
                headers[key] = _read_header(path, notes)
            return headers[key]

        files = [_read_samples(p, notes) for p in samples_paths]
        runs = {f.source: _run_of(f.path, header_at(f.path.parent / f"results_{f.run_id}.json")) for f in files}
        explicit: list[tuple[_Header, _Run]] = []
        for p in results_paths:
            h = header_at(p)
            if h is not None:
                explicit.append((h, _run_of(p, h)))
        by_task: dict[str, list[_Samples]] = {}
        for f in files:
            by_task.setdefault(f.task, []).append(f)
        # Filters of a task: those of its rows plus those its results files name ("<metric>,<filter>").
        task_filters: dict[str, set[str]] = {}
        for f in files:
            header = runs[f.source].header
            task_filters.setdefault(f.task, set()).update(r.filter for r in f.rows)
            task_filters[f.task].update(_header_filters(header.data if header else None, f.task))
        for h, _run in explicit:
            for task in _header_tasks(h.data):
                task_filters.setdefault(task, set()).update(_header_filters(h.data, task))
        for filters in task_filters.values():
            if not filters:
                filters.add("none")
        return cls(files, runs, explicit, by_task, task_filters)

    def case_id(self, task: str, flt: str, doc_id: str) -> str:
        """``<task>/<doc_id>``, or ``<task>/<filter>/<doc_id>`` when the task has several filters."""
        return f"{task}/{flt}/{doc_id}" if len(self.task_filters[task]) > 1 else f"{task}/{doc_id}"

    def grade_task(
        self,
        task: str,
        task_files: Sequence[_Samples],
        score: str | None,
        notes: list[dict[str, Any]],
        info: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        """Ledger rows of every samples file of one task; notes and info appended."""
        metric = _choose_metric(task_files, score)
        binary = metric is not None and _is_binary(task_files, metric)
        rows: list[dict[str, Any]] = []
        for f in task_files:
            run = self.runs[f.source]
            data = run.header.data if run.header is not None else None
            original, effective = _n_samples(data, task)
            has_metric = metric is not None and any(metric in r.values for r in f.rows)
            names = ", ".join(f.metric_order) or "none"
            if metric is None and f.rows:
                detail = f"no per-row metric of task {task!r} is a number ({names}); its rows are not scored"
                notes.append(_note("not_a_score", f.source, detail, candidate=run.candidate))
            elif metric is not None and f.rows and not has_metric:
                detail = f"metric {metric!r} is not in the rows of task {task!r} (they have: {names})"
                notes.append(_note("missing_column", f.source, detail, candidate=run.candidate))
            for row in f.rows:
                cid = self.case_id(task, row.filter, row.doc_id)
                status: str = "not_scored"
                value: float | None = None
                passed: bool | None = None
                if metric is not None:
                    raw = row.values.get(metric, _ABSENT)
                    status, value, passed, kind, detail = _grade(raw, metric, binary=binary)
                    if kind is not None and (raw is not _ABSENT or has_metric):
                        where = {"line": row.line, "candidate": run.candidate, "case_id": cid, "trial": 1}
                        notes.append(_note(kind, f.source, detail, **where))
                rows.append(
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
            if f.normalised_ids:
                detail = f"{f.normalised_ids} doc_id value(s) were not JSON integers and were read as integers"
                notes.append(_note("id_normalised", f.source, detail, candidate=run.candidate))
            if effective is not None:
                for flt in sorted(self.task_filters[task]):
                    n_rows = sum(1 for r in f.rows if r.filter == flt)
                    if n_rows != effective:
                        detail = (
                            f"results file says {effective} document(s) of task {task!r} were run "
                            f"(n-samples.effective); the samples file holds {n_rows} row(s) for filter {flt!r}"
                        )
                        notes.append(_note("header_rows_disagree", f.source, detail, candidate=run.candidate))
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
                    "metrics": list(f.metric_order),
                    "metric": metric,
                    "metric_kind": None if metric is None else "binary" if binary else "numeric",
                }
            )
        return rows

    def _listed_headers(self) -> list[tuple[_Header, _Run, bool]]:
        """Every results file read, and whether it was given (so plans all its tasks) or is only a sibling."""
        listed = [(h, run, True) for h, run in self.explicit]
        seen = {_key(h.path) for h, _run in self.explicit}
        for f in self.files:
            run = self.runs[f.source]
            if run.header is not None and _key(run.header.path) not in seen:
                seen.add(_key(run.header.path))
                listed.append((run.header, run, False))
        return listed

    def results_info(self) -> list[dict[str, Any]]:
        """One info dict per results file read."""
        out: list[dict[str, Any]] = []
        for h, run, given in self._listed_headers():
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
                    "plans_all_tasks": given,
                    "n_samples": _dig(h.data, "n-samples"),
                    "limit": _dig(h.data, "config", "limit"),
                    "versions": _dig(h.data, "versions"),
                    "lm_eval_version": _dig(h.data, "lm_eval_version"),
                    "git_hash": _dig(h.data, "git_hash"),
                    "aggregates": {t: _aggregates(h.data, t) for t in tasks},
                }
            )
        return out

    def planned_units(self, notes: list[dict[str, Any]]) -> pl.DataFrame:
        """Planned units: ``candidate``, ``case_id``, ``task``, ``filter`` (all String), one trial each."""
        # (candidate, task) -> the results headers describing it (None: a samples file without one)
        described: dict[tuple[str, str], list[_Header | None]] = {}
        for f in self.files:
            run = self.runs[f.source]
            described.setdefault((run.candidate, f.task), []).append(run.header)
        read_runs = {(_key(f.path.parent), f.run_id, f.task) for f in self.files}
        for h, run in self.explicit:
            for task in _header_tasks(h.data):
                described.setdefault((run.candidate, task), []).append(h)
                if (_key(h.path.parent), h.run_id, task) not in read_runs:
                    effective = _n_samples(h.data, task)[1]
                    detail = (
                        f"results file says {effective} document(s) of task {task!r} were run "
                        f"(n-samples.effective); no samples_{task}_{h.run_id} file was read, so they are missing"
                    )
                    notes.append(_note("header_rows_disagree", h.source, detail, candidate=run.candidate))
        columns: dict[str, list[str]] = {CANDIDATE: [], CASE_ID: [], TASK: [], FILTER: []}
        for (candidate, task), headers in sorted(described.items()):
            originals = [n for n in (_n_samples(h.data if h else None, task)[0] for h in headers) if n is not None]
            if originals:
                doc_ids = [str(i) for i in range(max(originals))]
            else:
                own = [f for f in self.by_task.get(task, []) if self.runs[f.source].candidate == candidate]
                doc_ids = _sort_ids(r.doc_id for f in own for r in f.rows)
                for f in own:
                    detail = (
                        "no results file gives n-samples for this task: the plan is only the doc ids present "
                        f"({len(doc_ids)}), so documents that never ran cannot show as missing"
                    )
                    notes.append(_note("header_rows_disagree", f.source, detail, candidate=candidate))
            for flt in sorted(self.task_filters.get(task, {"none"})):
                for doc in doc_ids:
                    columns[CANDIDATE].append(candidate)
                    columns[CASE_ID].append(self.case_id(task, flt, doc))
                    columns[TASK].append(task)
                    columns[FILTER].append(flt)
        return pl.DataFrame(columns, schema={name: pl.String for name in columns})


def _build_plan(units: pl.DataFrame, source: str) -> tuple[Plan, pl.DataFrame]:
    """The plan of a units table (``candidate``, ``case_id``, ``task``, ``filter``) and its problems.

    The cases and candidates are validated by :meth:`Plan.from_frame`; the
    units (one trial each) are attached afterwards. A plan that fails
    validation (e.g. nothing planned) is returned unvalidated with its
    problems, which refuse the audit.
    """
    cases = units.select(CASE_ID, TASK, FILTER).unique(subset=[CASE_ID], keep="first").sort(CASE_ID)
    candidates = list(dict.fromkeys(units.get_column(CANDIDATE).to_list()))
    pairs = units.select(CANDIDATE, CASE_ID, pl.lit(1, pl.Int64).alias(TRIAL)).sort(CANDIDATE, CASE_ID)
    try:
        plan = Plan.from_frame(cases, candidates=candidates, source=source)
    except PlanError as exc:  # reported, never raised past the importer
        return Plan(cases=cases, candidates=tuple(candidates), source=source).with_units(pairs), exc.problems
    return plan.with_units(pairs), problems_frame()


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read lm-evaluation-harness samples and results files into a plan and a status ledger.

    Parameters
    ----------
    paths
        Samples files (``samples_<task>_<timestamp>.jsonl``, or the older
        JSON-Lines-in-``.json``), results files (``results_<timestamp>.json``)
        or folders (searched recursively for both). Each samples file is read
        with its sibling results file (same folder, same timestamp). A
        results file given directly, or found in a given folder, also plans
        its tasks that have no samples file (they are all missing).
    score
        The per-row metric to score by (e.g. ``"acc"``, ``"exact_match"``,
        ``"mae"``). Default: per task, the first name of the rows' ``metrics``
        list whose value is a number (lists such as micro_f1's (gold,
        prediction) pairs are skipped); for the older layout without a
        ``metrics`` list, the first of acc, exact_match, acc_norm, em, mc1, …
        present with a numeric value, then any other numeric key.

    Returns
    -------
    Imported
        ``plan``: one unit per (candidate, case_id) with trial 1; ``case_id``
        is ``<task>/<doc_id>`` (``<task>/<filter>/<doc_id>`` when the task
        has several filters); doc ids ``0 … n-samples.original − 1``; plan
        columns ``task`` (String) and ``filter`` (String).
        ``ledger``: one row per samples row with ``candidate``, ``case_id``,
        ``trial`` (Int64, 1), ``attempt`` (Int64, re-runs of a unit numbered
        by timestamp), ``run_id`` (String, the timestamp), ``exec_status``
        (``completed``), ``score_status`` (``scored``; ``judge_error`` for a
        non-finite value; ``not_scored`` for a value that is not a number),
        ``score`` (Float64), ``passed`` (Boolean; set only for a binary
        metric, whose every value is 0 or 1), ``has_output`` (Boolean, from
        ``resps``), ``line`` (Int64, physical line) and ``source`` (String).
        ``notes``: ``header_rows_disagree`` (row count ≠ ``n-samples.effective``,
        a results task without samples file, no results file to plan from),
        ``not_a_score``, ``nonfinite_score``, ``id_normalised`` (not
        refusing); ``unreadable_file`` (bad JSON line, undecodable bytes,
        unknown file name, results file without a ``results`` object) and
        ``missing_column`` (``score`` names a metric a file does not have),
        refusing.
        ``info``: one dict per file read (task, model, run id, n-samples,
        ``--limit``, task version, aggregate metric values, rows, metric).

    Raises
    ------
    InputFormatError
        When a path does not exist. Malformed files never raise: they are
        ``unreadable_file`` notes and the other files are still read.

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
    >>> from evalframe.load import Loaded
    >>> folder = ("../shared/data/real/lm_eval/EleutherAI-lm-evaluation-harness-PR1974/lm_eval/tasks/"
    ...           "bias_classification/results/meta-llama__Meta-Llama-3-8B")
    >>> imported = read([folder])
    >>> report = audit(imported.plan, Loaded(imported.ledger.lazy(), imported.notes, folder))
    >>> report.summary.select("candidate", "planned", "scored", "passed", "pass_rate_scored")
    shape: (1, 5)
    ┌────────────────────────────┬─────────┬────────┬────────┬──────────────────┐
    │ candidate                  ┆ planned ┆ scored ┆ passed ┆ pass_rate_scored │
    │ ---                        ┆ ---     ┆ ---    ┆ ---    ┆ ---              │
    │ str                        ┆ u32     ┆ u32    ┆ u32    ┆ f64              │
    ╞════════════════════════════╪═════════╪════════╪════════╪══════════════════╡
    │ meta-llama/Meta-Llama-3-8B ┆ 609     ┆ 609    ┆ 311    ┆ 0.510673         │
    └────────────────────────────┴─────────┴────────┴────────┴──────────────────┘
    """
    notes: list[dict[str, Any]] = []
    batch = _Batch.gather(paths, notes)
    info: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for task, task_files in sorted(batch.by_task.items()):
        rows.extend(batch.grade_task(task, task_files, score, notes, info))
    info.extend(batch.results_info())
    source = ", ".join(str(p) for p in paths)
    plan, plan_problems = _build_plan(batch.planned_units(notes), source)
    ledger = (
        pl.DataFrame(rows, schema={k: v for k, v in LEDGER_SCHEMA.items() if k != ATTEMPT})
        .with_columns(pl.col(RUN_ID).rank("dense").over(CANDIDATE, CASE_ID, TRIAL).cast(pl.Int64).alias(ATTEMPT))
        .select(list(LEDGER_SCHEMA))
        .sort(CANDIDATE, SOURCE, LINE)
    )
    return Imported(plan=plan, ledger=ledger, notes=concat_problems([problems_frame(notes), plan_problems]), info=info)
