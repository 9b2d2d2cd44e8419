"""The files of one lm-eval import linked together: samples to their results file, choices, the plan."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, RECORDED_SETTINGS, REPORTED_HEADLINES, SETTINGS_BY_TASK, TRIAL
from evalframe.importers._kit import ScoreChoiceError, choose_score, find_files, note, planned_size
from evalframe.importers._reported import headline
from evalframe.importers._settings import RunSettings, split_by_settings
from evalframe.importers.lm_eval.files import (
    _PARSE_METRIC,
    _RESULTS_NAME,
    _SAMPLES_NAME,
    FILTER,
    TASK,
    _Header,
    _is_export,
    _read_header,
    _read_samples,
    _Samples,
)
from evalframe.importers.lm_eval.grading import _PREFERRED, _Choice, _is_number
from evalframe.importers.lm_eval.results import (
    _aggregates,
    _dig,
    _header_filters,
    _header_tasks,
    _n_samples,
    _Run,
    _run_of,
    _settings,
)
from evalframe.load import PathLike


def _ran(data: Mapping[str, Any] | None, task: str) -> int | None:
    """Documents of ``task`` the run was set to run: ``n-samples.effective`` (else ``original``), None if neither."""
    original, effective = _n_samples(data, task)
    return effective if effective is not None else original


def _limited(task: str, data: Mapping[str, Any] | None, effective: int, original: int) -> str:
    """The ``limited_run`` sentence of a task run on ``effective`` of its ``original`` documents.

    Examples
    --------
    >>> print(_limited("gsm8k", {"config": {"limit": 10.0}}, 10, 1319))  # doctest: +NORMALIZE_WHITESPACE
    task 'gsm8k': --limit 10: 10 of 1319 documents planned (doc ids 0-9, the first 10, as lm-eval takes them);
    the rates describe those 10, not the task
    """
    limit = _dig(data, "config", "limit")
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
    how = f"--limit {limit}" if isinstance(limit, (int, float)) and not isinstance(limit, bool) else "a limit"
    return (
        f"task {task!r}: {how}: {effective} of {original} documents planned (doc ids 0-{effective - 1}, "
        f"the first {effective}, as lm-eval takes them); the rates describe those {effective}, not the task"
    )


def _sort_ids(ids: Iterable[str]) -> list[str]:
    return sorted(set(ids), key=lambda d: (0, int(d), "") if d.isdigit() else (1, 0, d))


@dataclass
class _Batch:
    """Every file of one :func:`read` call, with who ran it."""

    files: list[_Samples]
    runs: dict[str, _Run]
    explicit: list[tuple[_Header, _Run]]
    by_task: dict[str, list[_Samples]]
    #: Every file read: the samples files and the results files (given, found, or beside a samples file).
    read: list[Path]
    #: (results file, task) → candidate, for runs of one task and model whose recorded settings differ.
    renamed: dict[tuple[str, str], str] = field(default_factory=dict)

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
        batch = cls(files, runs, explicit, by_task, [*samples_paths, *(h.path for h in headers.values())])
        batch.split_by_settings(notes)
        return batch

    def task_headers(self, task: str) -> list[tuple[_Header, _Run]]:
        """The readable results files that ran ``task`` (beside its samples files, or read for it), each once."""
        found: dict[Path, tuple[_Header, _Run]] = {}
        for f in self.by_task.get(task, []):
            run = self.runs[f.source]
            if run.header is not None and run.header.data is not None:
                found.setdefault(run.header.path.resolve(), (run.header, run))
        for h, run in self.explicit:
            if h.data is not None and task in _header_tasks(h.data):
                found.setdefault(h.path.resolve(), (h, run))
        return [found[k] for k in sorted(found)]

    def split_by_settings(self, notes: list[dict[str, Any]]) -> None:
        """Runs (results files) of one task and model whose settings differ become other candidates (the kit's rule)."""
        for task in sorted({*self.by_task, *(t for h, _run in self.explicit for t in _header_tasks(h.data))}):
            headers = self.task_headers(task)
            runs = [RunSettings(h.source, run.candidate, _settings(h.data, task), group=task) for h, run in headers]
            names, found = split_by_settings(runs)
            notes.extend(found)
            for (source, _candidate), name in names.items():
                self.renamed[(source, task)] = name
        for f in self.files:
            run = self.runs[f.source]
            if run.header is not None and (run.header.source, f.task) in self.renamed:
                self.runs[f.source] = replace(run, candidate=self.renamed[(run.header.source, f.task)])

    def example_metric(self, task: str, flt: str) -> str:
        """A metric ``task`` reports under filter ``flt`` (its first samples metric, else ``exact_match``)."""
        for f in self.by_task.get(task, []):
            for name in f.metric_order:
                if name != _PARSE_METRIC and any(r.filter == flt and name in r.values for r in f.rows):
                    return name
        for h, _run in self.task_headers(task):
            for key in _aggregates(h.data, task):
                name, _sep, of = key.rpartition(",")
                if of == flt and not name.endswith("_stderr"):
                    return name
        return "exact_match"

    def candidate(self, header: _Header, run: _Run, task: str) -> str:
        """The candidate of a results file's run of ``task`` (its model, with settings when they differ)."""
        return self.renamed.get((header.source, task), run.candidate)

    def choose(self, task: str, metric: str | None, flt: str | None, notes: list[dict[str, Any]]) -> _Choice | None:
        """The filter and metric a task is graded by; None (and a refusing note) when they cannot be chosen."""
        task_files = self.by_task.get(task, [])
        source = task_files[0].source if task_files else self.explicit[0][0].source
        # the filters the run graded by: the rows' and those its results files report (a trimmed samples
        # file may hold the rows of one filter only; the run still had the others)
        recorded = {flt for h, _run in self.task_headers(task) for flt in _header_filters(h.data, task)}
        filters = sorted({r.filter for f in task_files for r in f.rows} | recorded) or ["none"]
        try:
            example = metric or self.example_metric(task, filters[0])
            if flt is not None:
                chosen_filter = choose_score(
                    flt, filters, default=None, what="filter", source=source, flag=f"--score {example},{{}}"
                )
            elif len(filters) > 1:
                detail = (
                    f"task {task!r} is graded under {len(filters)} filters ({', '.join(filters)}; lm-eval writes "
                    f"one row per document for each) and none was declared; name one with --score "
                    f"<metric>,<filter>, e.g. --score {example},{filters[0]}"
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
            # with several filters (or one declared) a metric is declared with its filter
            flag = f"--score {{}},{chosen_filter}" if flt is not None or len(filters) > 1 else "--score {}"
            if metric is not None:
                return _Choice(
                    str(chosen_filter),
                    choose_score(metric, order, default=None, what="metric", source=source, flag=flag),
                )
            scores = [n for n in order if n != _PARSE_METRIC and any(_is_number(r.values.get(n)) for r in rows)]
            offered = scores or order
            preferred = next((n for n in _PREFERRED if n in offered), None)
            chosen = choose_score(None, offered, default=preferred, what="metric", source=source, flag=flag)
            return _Choice(str(chosen_filter), chosen)
        except ScoreChoiceError as exc:
            notes.append(exc.note)
            return None

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

    def results_info(self, choices: Mapping[str, _Choice]) -> list[dict[str, Any]]:
        """One info dict per results file read, with the headline it reports for each task's chosen metric."""
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
                    REPORTED_HEADLINES: self.reported(h, run, choices),
                    SETTINGS_BY_TASK: [
                        {TASK: t, CANDIDATE: self.candidate(h, run, t), RECORDED_SETTINGS: _compared(h.data, t)}
                        for t in tasks
                    ],
                }
            )
        return out

    def reported(self, h: _Header, run: _Run, choices: Mapping[str, _Choice]) -> list[dict[str, Any]]:
        """The ``"<metric>,<filter>"`` value a results file reports for each task, over its documents run.

        lm-eval averages a metric over every document it ran (``n-samples.effective``); the task and
        candidate are the headline's own, as one results file holds several tasks.
        """
        found: list[dict[str, Any]] = []
        for task in _header_tasks(h.data):
            choice = choices.get(task)
            if choice is None or choice.metric is None:
                continue
            key = f"{choice.metric},{choice.filter}"
            value = _aggregates(h.data, task).get(key)
            ran = _n_samples(h.data, task)[1]
            got = headline("lm-eval", key, value, denominator=ran, of="documents run")
            if got is not None:
                found.append({**got, TASK: task, CANDIDATE: self.candidate(h, run, task)})
        return found

    def header_notes(self, planned: set[str], notes: list[dict[str, Any]]) -> None:
        """``limited_run`` per (results file, planned task) run on fewer docs than it holds; tasks without rows."""
        read_runs = {(f.path.parent.resolve(), f.run_id, f.task) for f in self.files}
        given = {h.path.resolve() for h, _run in self.explicit}
        for h, run, tasks in self.listed_headers():
            for task in sorted(tasks):
                if task not in planned:
                    continue
                who: dict[str, Any] = {CANDIDATE: self.candidate(h, run, task), TASK: task}
                original, effective = _n_samples(h.data, task)
                if original is not None and effective is not None and effective < original:
                    notes.append(note("limited_run", h.source, _limited(task, h.data, effective, original), **who))
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
                described.setdefault((self.candidate(h, run, task), task), []).append(h)
        columns: dict[str, list[Any]] = {CANDIDATE: [], CASE_ID: [], TRIAL: [], TASK: [], FILTER: []}
        for (candidate, task), headers in sorted(described.items()):
            if task not in choices:
                continue
            ran = [n for n in (_ran(h.data if h else None, task) for h in headers) if n is not None]
            own = [f for f in self.by_task.get(task, []) if self.runs[f.source].candidate == candidate]
            if ran:
                where = next((h.source for h in headers if h is not None), task)
                too_many = planned_size(max(ran), where, f"task {task!r}: n-samples.effective")
                if too_many is not None:
                    notes.append({**too_many, CANDIDATE: candidate, TASK: task})
                    continue
                # lm-eval runs the first `effective` documents (all of them without --limit): doc ids
                # 0 … effective − 1. A row outside them is an unknown case, as anywhere else.
                doc_ids = [str(i) for i in range(max(ran))]
            else:
                doc_ids = _sort_ids(r.doc_id for f in own for r in f.rows)
                for h in {id(h): h for h in headers if h is not None and h.data is not None}.values():
                    detail = (
                        f"the results file gives no n-samples for task {task!r}: the plan is the "
                        f"{len(doc_ids)} doc ids present, so documents that never ran cannot show as missing"
                    )
                    notes.append(note("plan_from_rows", h.source, detail, candidate=candidate, task=task))
            for doc in doc_ids:
                columns[CANDIDATE].append(candidate)
                columns[CASE_ID].append(f"{task}/{doc}")
                columns[TRIAL].append(1)
                columns[TASK].append(task)
                columns[FILTER].append(choices[task].filter)
        schema = {CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, TASK: pl.String, FILTER: pl.String}
        return pl.DataFrame(columns, schema=schema)


#: Settings that say which model ran (its name, weights, revision and the chat template it ships): two candidates
#: compared are two models, so these differ by design and never make them not comparable.
_MODEL_IDENTITY = frozenset(
    {"model_args.pretrained", "model_args.model", "model_sha", "model_revision", "chat_template_sha"}
)


def _compared(data: Mapping[str, Any] | None, task: str) -> dict[str, str]:
    """The settings two runs of ``task`` must share to be compared: those naming a run (not the model) and more.

    ``limit`` and ``task_hashes`` never split a candidate, but a comparison of two runs needs them equal.
    """
    found = {k: v for k, v in _settings(data, task).items() if k not in _MODEL_IDENTITY}
    for key, value in (("limit", _dig(data, "config", "limit")), ("task_hash", _dig(data, "task_hashes", task))):
        if value is not None:
            found[key] = str(value)
    return found
