"""Grading lm-eval samples rows: which metric is binary, unparseable answers, and the ledger rows of a task."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from evalframe.importers._kit import grade, ledger_row, note
from evalframe.importers.lm_eval.files import _ABSENT, _PARSE_METRIC, UNKNOWN_MODEL, _Row, _Samples
from evalframe.importers.lm_eval.results import _aggregates, _dig, _n_samples, _Run

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


@dataclass(frozen=True)
class _Choice:
    """What a task is graded by: its filter and metric (metric None: no metric at all)."""

    filter: str
    metric: str | None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float))


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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


@dataclass(frozen=True)
class _Metric:
    """What a task's chosen metric is across the rows of the graded filter."""

    name: str | None
    is_score: bool
    binary: bool

    @classmethod
    def of(cls, name: str | None, rows: Sequence[_Row]) -> _Metric:
        is_score = name is not None and any(_is_number(r.values.get(name)) for r in rows)
        return cls(name, is_score, name is not None and _is_binary(rows, name))

    @property
    def kind(self) -> str | None:
        """``binary``/``numeric`` for a per-row score, None otherwise (for ``info``)."""
        return None if self.name is None or not self.is_score else "binary" if self.binary else "numeric"


def _metric_notes(
    metric: _Metric, task: str, rows: Sequence[_Row], source: str, who: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """A ``not_a_score`` note when a task has no per-row metric, or its metric is never a per-row score."""
    if not rows or metric.is_score:
        return []
    if metric.name is None:
        detail = f"task {task!r} has no per-row metric; its {len(rows)} rows are not scored"
        return [note("not_a_score", source, detail, **who)]
    example = next((r.values[metric.name] for r in rows if metric.name in r.values), None)
    detail = (
        f"metric {metric.name!r} of task {task!r} is never a per-row score: each row holds a "
        f"{type(example).__name__} ({_short(example)}) that lm-eval aggregates over the whole task; "
        f"the {len(rows)} rows are not scored"
    )
    return [note("not_a_score", source, detail, **who)]


def _grade_row(
    row: _Row, metric: _Metric, source: str, where: Mapping[str, Any], notes: list[dict[str, Any]]
) -> tuple[str, float | None, bool | None] | None:
    """Score status, score and passed of one row (a grader failure noted); None when the metric is absent."""
    if metric.name is None or not metric.is_score:
        return "not_scored", None, None
    raw = row.values.get(metric.name, _ABSENT)
    if raw is _ABSENT:
        return None
    if _unparseable(row, metric.name):
        detail = (
            f"{metric.name} = {_short(raw)} on a row whose {_PARSE_METRIC} is 0: lm-eval could not parse "
            "the answer, so the value is not a judgment; read as a grader failure"
        )
        notes.append(note("not_a_score", source, detail, **where))
        return "judge_error", None, None
    status, value = grade(raw)
    if status == "scored":
        return status, value, (value == 1.0) if metric.binary else None
    if _is_number(raw):
        detail = f"{metric.name} = {_short(raw)} is not a finite number; read as a grader failure"
        notes.append(note("nonfinite_score", source, detail, **where))
    else:
        detail = f"{metric.name} = {_short(raw)} is a {type(raw).__name__}, not a score; read as a grader failure"
        notes.append(note("not_a_score", source, detail, **where))
    return status, value, None


def _file_rows(
    f: _Samples, rows: Sequence[_Row], metric: _Metric, candidate: str, notes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Ledger rows of one samples file's graded rows (attempts are numbered later, by run id)."""
    out: list[dict[str, Any]] = []
    absent = 0
    for row in rows:
        cid = f"{f.task}/{row.doc_id}"
        where: dict[str, Any] = {"line": row.line, "case_id": cid, "trial": 1, "candidate": candidate, "task": f.task}
        graded = _grade_row(row, metric, f.source, where, notes)
        if graded is None:
            absent += 1
            graded = ("not_scored", None, None)
        status, value, passed = graded
        out.append(
            ledger_row(
                candidate,
                cid,
                run_id=f.run_id,
                score_status=status,
                score=value,
                passed=passed,
                has_output=row.has_output,
                line=row.line,
                source=f.source,
            )
        )
    if absent:
        detail = f"metric {metric.name!r} is absent from {absent} row(s) of task {f.task!r}; they are not scored"
        notes.append(note("not_a_score", f.source, detail, candidate=candidate, task=f.task))
    return out


def _file_notes(f: _Samples, run: _Run, rows: Sequence[_Row], choice: _Choice) -> list[dict[str, Any]]:
    """``id_normalised``, ``header_rows_disagree`` and ``plan_from_rows`` (an unknown model) of one samples file."""
    who: dict[str, Any] = {"candidate": run.candidate, "task": f.task}
    data = run.header.data if run.header is not None else None
    original, effective = _n_samples(data, f.task)
    notes: list[dict[str, Any]] = []
    if f.normalised_ids:
        detail = f"{f.normalised_ids} doc_id value(s) were not JSON integers and were read as integers"
        notes.append(note("id_normalised", f.source, detail, **who))
    if effective is not None and len(rows) != effective:
        detail = (
            f"results file says {effective} document(s) of task {f.task!r} were run "
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
                f", and the plan is the {n_docs} doc ids present, so documents that never ran cannot show as missing"
            )
        notes.append(note("plan_from_rows", f.source, detail, **who))
    return notes


def _file_info(f: _Samples, run: _Run, choice: _Choice, metric: _Metric) -> dict[str, Any]:
    """The ``info`` dict of one samples file."""
    data = run.header.data if run.header is not None else None
    original, effective = _n_samples(data, f.task)
    return {
        "format": "lm-eval samples",
        "source": f.source,
        "task": f.task,
        "candidate": run.candidate,
        "candidate_from": run.candidate_from,
        "run_id": f.run_id,
        "results_file": run.header.source if run.header is not None else None,
        "layout": f.layout,
        "n_samples_original": original,
        "n_samples_effective": effective,
        "limit": _dig(data, "config", "limit"),
        "task_version": _dig(data, "versions", f.task),
        "lm_eval_version": _dig(data, "lm_eval_version"),
        "git_hash": _dig(data, "git_hash"),
        "aggregates": _aggregates(data, f.task),
        "rows": len(f.rows),
        "filters": sorted({r.filter for r in f.rows}),
        "filter": choice.filter,
        "metrics": list(f.metric_order),
        "metric": metric.name,
        "metric_kind": metric.kind,
    }


def grade_task(
    task_files: Sequence[_Samples],
    runs: Mapping[str, _Run],
    choice: _Choice,
    notes: list[dict[str, Any]],
    info: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Ledger rows of every samples file of one task (rows of the chosen filter); notes and info appended."""
    chosen_rows = {f.source: [r for r in f.rows if r.filter == choice.filter] for f in task_files}
    metric = _Metric.of(choice.metric, [r for rows in chosen_rows.values() for r in rows])
    out: list[dict[str, Any]] = []
    for f in task_files:
        run = runs[f.source]
        rows = chosen_rows[f.source]
        notes.extend(_metric_notes(metric, f.task, rows, f.source, {"candidate": run.candidate, "task": f.task}))
        out.extend(_file_rows(f, rows, metric, run.candidate, notes))
        notes.extend(_file_notes(f, run, rows, choice))
        info.append(_file_info(f, run, choice, metric))
    return out
