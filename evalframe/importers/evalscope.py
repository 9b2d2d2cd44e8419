"""Import EvalScope reviews and reports (``evalscope eval`` output folders) into a plan and status ledger.

Format
------
``evalscope eval`` writes ``<work_dir>/<timestamp>/{configs,predictions,
reviews,reports}/<model>/…``. Each **review** file
``reviews/<model>/<benchmark>_<subset>.jsonl`` (``CacheManager`` in
``evalscope/api/evaluator/cache.py`` of modelscope/evalscope) holds one
``ReviewResult`` per sample: ``index`` (the sample's index in the dataset),
``input``/``messages``, ``target`` and ``sample_score``: ``score.value`` (a
dict metric -> value), ``score.main_score_name``, ``sample_id`` and
``group_id`` (the dataset sample a repeated sample belongs to). Each
**report** ``reports/<model>/<benchmark>.json`` holds ``dataset_name``,
``model_name`` and ``metrics[]``: ``name`` (``mean_<metric>``), ``num`` and
``score``, broken down by ``categories[].subsets[].{name, num, score}``.
User documentation: https://evalscope.readthedocs.io/en/latest/.

How files are read
------------------
* **candidate**: the review file's folder (``reviews/<model>/``), the
  model name EvalScope writes under.
* **case_id**: ``<benchmark>_<subset>/<group_id>`` (the file's stem, then the
  sample's ``group_id``, else ``sample_id``, else ``index``), so two models'
  reviews of one subset share their cases, and two subsets with the same
  sample ids (IQuiz's ``EQ`` and ``IQ``) never share one. Rows of the **old
  layout** (before EvalScope 1.0: ``choices[0].review.result`` is the grade,
  ``reviewer_spec.metric`` the metric) carry no index: the case is the
  dataset sample, ``raw_input.id`` or a 12-digit hash of ``raw_input``. Samples of one group (EvalScope's
  ``repeats``) are trials 1..k of the case, numbered in ``sample_id`` order;
  attempt 1.
* **slices**: ``dataset`` (the report's ``dataset_name`` whose
  ``<dataset>_`` prefixes the file's stem, else the stem) and ``subset``
  (the rest of the stem, else the stem).
* **task**: when the import reads several evaluations, the case column
  ``task`` names each case's: the dataset, or ``<dataset>/<subset>`` for a
  dataset read with several subsets (IQuiz's ``iquiz/EQ`` and ``iquiz/IQ``).
  Tasks are keys: each is audited apart, and no rate pools gsm8k's ``acc``
  with IFEval's ``prompt_level_strict``. An import of one dataset and subset
  has no ``task`` column.
* **grade** (``--score``): one metric of ``score.value``. The default is the
  rows' ``main_score_name`` (``prompt_level_strict`` for IFEval), else the
  only metric; several and no main one refuse (``ambiguous_score``), and a
  name no row has refuses (``unknown_score``) naming those there are. Each
  value goes through :func:`~evalframe.importers._kit.grade` (a null, NaN or
  text is ``judge_error``); a row without the metric is ``not_scored``.
  Scores of 0 and 1 read under ``--grade binary``; fractional ones
  (``inst_level_strict``) need ``--grade numeric``.
* **runs and settings**: a run is a model's folder under one output folder;
  its ``configs/task_config_*.yaml`` records its settings (compared as the
  text of each top-level key, the places it was written to or read from
  aside). Runs of one model whose settings differ (or that one records and
  another does not: unknown) are different candidates,
  ``<model> [key=value, ...]``, with a ``settings_differ`` flag; runs whose
  settings agree are successive attempts of the same samples, in the order
  of their folders. A config's ``limit`` is a ``limited_run`` flag.
* **plan**: the samples of the reviews (``plan_from_rows``: reviews declare
  no dataset size). The report is never evidence: when its subset ``num``
  differs from the review rows, or its ``mean_<metric>`` score from the
  rows' mean (beyond its 4 decimals), a ``header_rows_disagree`` flag says
  so. The report is found beside the reviews
  (``../../reports/<model>/<benchmark>.json``) or given as a path.

A file that is not a review file (invalid JSON, a row without an integer
``index`` or a ``sample_score.score.value`` dict, and not of the old layout)
or not a report is an input error naming the file, line and reason.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evalframe.columns import CANDIDATE, CASE_ID, RECORDED_SETTINGS, REPORTED_HEADLINES, SCORE, SCORE_STATUS, TASK
from evalframe.errors import InputFormatError
from evalframe.importers import Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    Unreadable,
    choose_score,
    failure_kind,
    find_files,
    grade,
    json_int,
    ledger_row,
    note,
    read_json,
    read_json_lines,
)
from evalframe.importers._per_case import assemble, input_error
from evalframe.importers._reported import headline
from evalframe.importers._settings import RunSettings, split_by_settings
from evalframe.load import PathLike

__all__ = ["read"]

#: Decimals EvalScope rounds report scores to.
REPORT_DECIMALS: Final = 4


@dataclass
class _Report:
    path: Path
    dataset: str
    model: str | None
    metrics: list[dict[str, Any]]


@dataclass
class _Review:
    path: Path
    candidate: str
    stem: str
    #: (line, index, sample id, group id, values, main score name); in the old layout the group id is the
    #: sample's content key (:func:`_old_row`) and the index and sample id its line.
    samples: list[tuple[int, int, int, int | str, dict[str, Any], str | None]] = field(default_factory=list)


def _is_export(path: Path) -> bool:
    return (
        path.suffix == ".jsonl"
        and path.parent.parent.name == "reviews"
        or (path.suffix == ".json" and path.parent.parent.name == "reports")
    )


def _read_report(path: Path) -> _Report:
    try:
        obj = read_json(path)
    except Unreadable as exc:
        raise input_error(exc) from None
    if (
        not isinstance(obj, dict)
        or not isinstance(obj.get("dataset_name"), str)
        or not isinstance(obj.get("metrics"), list)
    ):
        raise InputFormatError(str(path), 'not an EvalScope report: expected "dataset_name" and a "metrics" list')
    metrics = [m for m in obj["metrics"] if isinstance(m, dict) and isinstance(m.get("name"), str)]
    model = obj.get("model_name") if isinstance(obj.get("model_name"), str) else None
    return _Report(path, obj["dataset_name"], model, metrics)


def _read_review(path: Path) -> _Review:
    source = str(path)
    try:
        lines, unreadable = read_json_lines(path)
    except Unreadable as exc:
        raise input_error(exc) from None
    if unreadable:
        raise input_error(Unreadable(source, unreadable[0]["detail"], line=unreadable[0]["line"]))
    review = _Review(path, path.parent.name, path.stem)
    for number, obj in lines:
        old = _old_row(obj, number)
        if old is not None:
            review.samples.append(old)
            continue
        sample = obj.get("sample_score") if isinstance(obj, dict) else None
        score = sample.get("score") if isinstance(sample, dict) else None
        index = json_int(obj.get("index")) if isinstance(obj, dict) else None
        if index is None or not isinstance(score, dict) or not isinstance(score.get("value"), dict):
            detail = "not an EvalScope review row: expected an integer index and a sample_score.score.value dict"
            raise InputFormatError(source, detail, line=number)
        assert isinstance(sample, dict)
        sample_id = json_int(sample.get("sample_id"))
        sample_id = index if sample_id is None else sample_id
        group = json_int(sample.get("group_id"))
        main = score.get("main_score_name")
        review.samples.append(
            (
                number,
                index,
                sample_id,
                sample_id if group is None else group,
                score["value"],
                main if isinstance(main, str) else None,
            )
        )
    if not review.samples:
        raise InputFormatError(source, "an EvalScope review file with no row")
    return review


def _old_row(obj: Any, number: int) -> tuple[int, int, int, str, dict[str, Any], str | None] | None:
    """A review row of EvalScope's old layout (``choices[0].review.result``), or None for any other row.

    The old layout (EvalScope before its 1.0 rewrite) writes the OpenAI-style completion with the review in
    its first choice: ``review.result`` is the grade, ``reviewer_spec.metric`` names the metric (the report's
    ``AverageAccuracy``) and ``raw_input`` is the dataset sample. It writes no sample index, so the case is
    the sample itself: ``raw_input.id`` when it has one, else the first 12 hex digits of the SHA-256 of
    ``raw_input`` (canonical JSON), the same for every model that reviewed the sample.

    Examples
    --------
    >>> row = {"choices": [{"review": {"result": True}}], "raw_input": {"question": "2+2?"},
    ...        "reviewer_spec": {"metric": ["AverageAccuracy"]}}
    >>> _old_row(row, 3)
    (3, 3, 3, 'edde7d758cea', {'AverageAccuracy': True}, 'AverageAccuracy')
    >>> _old_row({"index": 0, "sample_score": {}}, 1) is None
    True
    """
    choices = obj.get("choices") if isinstance(obj, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    review = first.get("review") if first is not None else None
    if not isinstance(review, dict) or "result" not in review or "sample_score" in obj:
        return None
    spec = obj.get("reviewer_spec")
    metrics = spec.get("metric") if isinstance(spec, dict) else None
    metric = metrics[0] if isinstance(metrics, list) and metrics and isinstance(metrics[0], str) else "result"
    raw = obj.get("raw_input")
    own = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(own, (str, int)) and not isinstance(own, bool):
        key = str(own)
    else:
        text = json.dumps(raw, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return number, number, number, key, {metric: review["result"]}, metric


#: Top-level keys of an EvalScope task config that say where a run was written or read, not how it ran.
PLACE_KEYS: Final = frozenset({"work_dir", "use_cache", "dataset_dir", "model", "model_id", "api_url", "api_key"})


def _config(run: Path) -> tuple[Path | None, dict[str, str]]:
    r"""The run's task config (``configs/task_config_*.yaml``) and its top-level settings, each as its YAML text.

    EvalScope writes the config as block YAML: a top-level key starts a line without indentation, and its
    value is the rest of that line and the indented lines below it. Settings are compared as that text, so
    no YAML parser is needed (two runs that differ in ``generation_config.temperature`` differ in the
    ``generation_config`` block). A run with no config, or several, has no settings (all unknown).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     (Path(folder) / "configs").mkdir()
    ...     _ = (Path(folder) / "configs" / "task_config_1.yaml").write_text("limit: 10\ngen:\n  temperature: 0.7\n")
    ...     _config(Path(folder))[1]
    {'limit': '10', 'gen': 'temperature: 0.7'}
    """
    found = sorted((run / "configs").glob("task_config*.yaml")) if (run / "configs").is_dir() else []
    if len(found) != 1:
        return None, {}
    settings: dict[str, list[str]] = {}
    key: str | None = None
    try:
        text = found[0].read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None, {}
    for line in text.splitlines():
        if line and not line[0].isspace() and ":" in line and not line.startswith(("#", "-")):
            key, _, rest = line.partition(":")
            settings[key] = [rest.strip()] if rest.strip() else []
        elif key is not None and line.strip():
            settings[key].append(line.strip())
    return found[0], {k: "\n".join(v) for k, v in settings.items()}


def _runs(reviews: Sequence[_Review], notes: list[dict[str, Any]]) -> dict[Path, tuple[str, int, dict[str, str]]]:
    """Per review file: its candidate, attempt and settings (runs of one model told apart by their configs).

    A run is ``<run>/reviews/<model>/``; places are no setting; a run's ``limit`` is a ``limited_run`` flag.
    """
    runs: dict[tuple[str, Path], dict[str, str]] = {}
    configs: dict[Path, Path | None] = {}
    for review in reviews:
        root = review.path.parent.parent.parent
        if (review.candidate, root) not in runs:
            configs[root], settings = _config(root)
            runs[(review.candidate, root)] = settings
    order = sorted(runs, key=lambda run: (run[0], run[1]))
    names, found = split_by_settings(
        [
            RunSettings(str(root), model, {k: v for k, v in runs[(model, root)].items() if k not in PLACE_KEYS})
            for model, root in order
        ]
    )
    notes.extend(found)
    named = {(model, root): names.get((str(root), model), model) for model, root in order}
    attempt: dict[tuple[str, Path], int] = {}
    for run in order:
        attempt[run] = sum(1 for other in order[: order.index(run)] if named[other] == named[run]) + 1
        limit = runs[run].get("limit")
        if limit is not None and limit.isdigit():
            detail = (
                f"{configs[run[1]]} sets limit {limit}: each subset's plan is the samples its review holds (at "
                "most that many); the dataset's full size is not recorded, so the rates describe those samples"
            )
            notes.append(note("limited_run", str(configs[run[1]]), detail, candidate=named[run]))
    out: dict[Path, tuple[str, int, dict[str, str]]] = {}
    for review in reviews:
        run = (review.candidate, review.path.parent.parent.parent)
        out[review.path] = (named[run], attempt[run], {k: v for k, v in runs[run].items() if k not in PLACE_KEYS})
    return out


def _report_of(review: _Review, reports: list[_Report]) -> _Report | None:
    """The report of the review's benchmark: same model folder, ``<dataset>_`` prefixing the stem (longest)."""
    beside = review.path.parent.parent.parent / "reports" / review.candidate
    found = [r for r in reports if review.stem.startswith(r.dataset + "_")]
    if not found and beside.is_dir():
        for path in sorted(beside.glob("*.json")):
            if review.stem.startswith(path.stem + "_"):
                found.append(_read_report(path))
    same_model = [r for r in found if r.model in (None, review.candidate)]
    return max(same_model, key=lambda r: len(r.dataset)) if same_model else None


def _report_subset(report: _Report, metric: str, subset: str) -> list[tuple[str, int | None, Any]]:
    """(metric name, ``num``, ``score``) of each entry the report gives for this metric and subset."""
    found = []
    for entry in report.metrics:
        if entry["name"] not in (metric, f"mean_{metric}"):
            continue
        for category in entry.get("categories") or []:
            for part in (category.get("subsets") or []) if isinstance(category, dict) else []:
                if isinstance(part, dict) and part.get("name") == subset:
                    found.append((str(entry["name"]), json_int(part.get("num")), part.get("score")))
    return found


def _reported(report: _Report, metric: str, subset: str) -> list[dict[str, Any]]:
    """The report's score of this metric and subset over its ``num`` samples (4 decimals, as EvalScope writes)."""
    found = (headline("EvalScope", name, value, denominator=num, of="samples") for name, num, value in
             _report_subset(report, metric, subset))  # fmt: skip
    return [h for h in found if h is not None]


def _report_checks(review: _Review, report: _Report, metric: str, rows: list[dict[str, Any]], subset: str) -> list[str]:
    """Where the report's ``num`` / ``score`` of this subset disagree with the review rows."""
    details = []
    for name, num, value in _report_subset(report, metric, subset):
        if num is not None and num != len(rows):
            details.append(
                f"report {report.path} says {name} num {num} for subset {subset!r}, "
                f"the review file has {len(rows)} row(s)"
            )
        scores = [r[SCORE] for r in rows if r[SCORE_STATUS] == "scored"]
        stated = grade(value)[1]
        if stated is not None and scores:
            mean = math.fsum(scores) / len(scores)
            if abs(round(mean, REPORT_DECIMALS) - stated) > 10**-REPORT_DECIMALS:
                details.append(
                    f"report {report.path} says {name} {value} for subset {subset!r}, "
                    f"the {len(scores)} scored row(s) average {mean:.4f}"
                )
    return details


def _review_rows(
    review: _Review,
    chosen: str | None,
    columns: dict[str, Any],
    cases: dict[str, dict[str, Any]],
    notes: list[dict[str, Any]],
    *,
    attempt: int = 1,
) -> tuple[list[dict[str, Any]], int]:
    """Ledger rows of one review file (repeats of a sample are its trials, by sample id), and its sample count.

    Each case's ``columns`` (dataset, subset) are recorded in ``cases``; a value that is not a score is noted.
    """
    source, candidate = str(review.path), review.candidate
    trials: dict[int | str, list[int]] = {}
    for _, _, sample_id, group, _, _ in review.samples:
        trials.setdefault(group, []).append(sample_id)
    own: list[dict[str, Any]] = []
    for number, _, sample_id, group, values, _ in review.samples:
        case_id = f"{review.stem}/{group}"
        cases[case_id] = columns
        trial = sorted(trials[group]).index(sample_id) + 1
        if chosen is None or chosen not in values:
            status, value = "not_scored", None
        else:
            status, value = grade(values[chosen])
            if status != "scored":
                raw = values[chosen]
                kind = failure_kind(raw, null_is_nan=True)
                detail = f"{chosen} = {raw!r} is not a score: read as a grader failure"
                notes.append(note(kind, source, detail, line=number, candidate=candidate, case_id=case_id))
        own.append(
            ledger_row(
                candidate,
                case_id,
                score_status=status,
                score=value,
                trial=trial,
                attempt=attempt,
                line=number,
                source=source,
            )
        )
    return own, len(trials)


def _tasks(parts: Iterable[tuple[Any, str, str]]) -> dict[tuple[str, str], str]:
    """Each (dataset, subset) read and its task: the dataset, or ``<dataset>/<subset>`` when it has several subsets.

    A dataset's subsets are one evaluation when the import reads one of them (``gsm8k``'s ``main``); IQuiz's
    ``EQ`` and ``IQ`` read together are two (tasks are keys: their rates are never pooled).

    Examples
    --------
    >>> _tasks([(None, "gsm8k", "main"), (None, "iquiz", "EQ"), (None, "iquiz", "IQ")])
    {('gsm8k', 'main'): 'gsm8k', ('iquiz', 'EQ'): 'iquiz/EQ', ('iquiz', 'IQ'): 'iquiz/IQ'}
    """
    subsets: dict[str, set[str]] = {}
    for _, dataset, subset in parts:
        subsets.setdefault(dataset, set()).add(subset)
    return {
        (dataset, subset): dataset if len(found) == 1 else f"{dataset}/{subset}"
        for dataset, found in subsets.items()
        for subset in sorted(found)
    }


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read EvalScope review files (and their reports) into a plan, a status ledger, notes and file facts.

    Parameters
    ----------
    paths
        Review files (``reviews/<model>/<benchmark>_<subset>.jsonl``),
        reports (``reports/<model>/<benchmark>.json``), or output folders
        searched for both.
    score
        The metric of ``sample_score.score.value``; None: the rows'
        ``main_score_name``, else the only metric.

    Returns
    -------
    Imported
        ``plan``: per candidate the samples of its reviews, with case columns
        ``dataset`` and ``subset`` (String), and ``task`` (String) when the
        files hold several tasks. ``ledger``: one row per review
        row, columns ``candidate``, ``case_id``, ``run_id`` (String, null),
        ``trial``, ``attempt`` (Int64), ``exec_status`` (``completed``),
        ``score_status`` (``scored``, ``judge_error``, ``not_scored``),
        ``score`` (Float64), ``has_output`` (null), ``limit`` (null),
        ``line`` (Int64, the JSON Lines line) and ``source``; no ``passed``
        (the audit reads 0/1 scores under ``--grade binary``). ``notes``:
        ``plan_from_rows`` per review file, ``header_rows_disagree`` where the
        report disagrees, ``nonfinite_score`` / ``not_a_score`` per value that
        is not a score. ``info``: per review file its dataset, subset,
        task (with several tasks), metrics, chosen metric, rows and report.

    Raises
    ------
    InputFormatError
        A path that does not exist, or a file that is not a review / report.
    ImportRefused
        ``unknown_score`` / ``ambiguous_score``, ``no_export``, or no review
        file at all (``empty_plan``: a report alone is no per-sample evidence).

    Examples
    --------
    >>> viz = "data/fixtures/real/evalscope/modelscope-evalscope/examples/viz/"
    >>> imported = read([viz + "qwen3-max/reviews/qwen3-max/ifeval_default.jsonl"])
    >>> imported.info[0]["metric"], imported.ledger.get_column("score").sum()
    ('prompt_level_strict', 8.0)
    >>> imported.plan.cases.head(2)
    shape: (2, 3)
    ┌──────────────────┬─────────┬─────────┐
    │ case_id          ┆ dataset ┆ subset  │
    │ ---              ┆ ---     ┆ ---     │
    │ str              ┆ str     ┆ str     │
    ╞══════════════════╪═════════╪═════════╡
    │ ifeval_default/0 ┆ ifeval  ┆ default │
    │ ifeval_default/1 ┆ ifeval  ┆ default │
    └──────────────────┴─────────┴─────────┘
    """
    files, notes = find_files(
        paths, is_export=_is_export, what="EvalScope review (.jsonl) or report (.json)", required=True
    )
    reports = [_read_report(p) for p in files if p.suffix == ".json"]
    reviews = [_read_review(p) for p in files if p.suffix != ".json"]
    rows: list[dict[str, Any]] = []
    info: list[dict[str, Any]] = []
    cases: dict[str, dict[str, Any]] = {}
    runs = _runs(reviews, notes)
    parts: dict[Path, tuple[_Report | None, str, str]] = {}
    for review in reviews:
        report = _report_of(review, reports)
        dataset = report.dataset if report is not None else review.stem
        subset = review.stem.removeprefix(dataset + "_") if report is not None else review.stem
        parts[review.path] = (report, dataset, subset)
    tasks = _tasks(parts.values())
    for review in reviews:
        report, dataset, subset = parts[review.path]
        review.candidate, attempt, settings = runs[review.path]
        source, candidate = str(review.path), review.candidate
        # The task column only when the import reads several tasks: a single-task import is as before.
        task = {TASK: tasks[(dataset, subset)]} if len(set(tasks.values())) > 1 else {}
        mains = {main for *_, main in review.samples if main is not None}
        available = [name for *_, values, _ in review.samples for name in values]
        facts: dict[str, Any] = {
            "format": "evalscope",
            "source": source,
            "candidate": candidate,
            "dataset": dataset,
            "subset": subset,
            **task,
            "metrics": sorted(set(available)),
            "rows": len(review.samples),
            "report": None if report is None else str(report.path),
            **({RECORDED_SETTINGS: settings} if settings else {}),  # what a comparison reads: the run's config
        }
        info.append(facts)
        try:
            chosen = choose_score(
                score,
                available,
                default=sorted(mains) if len(mains) == 1 else None,
                what="metric",
                source=source,
                where="sample_score.score.value",
            )
        except ScoreChoiceError as exc:
            notes.append({**exc.note, CANDIDATE: candidate})
            continue
        facts["metric"] = chosen
        own, n_samples = _review_rows(
            review, chosen, {"dataset": dataset, "subset": subset, **task}, cases, notes, attempt=attempt
        )
        rows.extend(own)
        if report is not None and chosen is not None:
            facts[REPORTED_HEADLINES] = [{**h, **task} for h in _reported(report, chosen, subset)]
            for detail in _report_checks(review, report, chosen, own, subset):
                notes.append(note("header_rows_disagree", source, detail, candidate=candidate))
        detail = (
            f"EvalScope reviews declare no dataset size: the plan is the {n_samples} sample(s) of this file, "
            "so a sample that was never reviewed cannot be counted as missing"
        )
        notes.append(note("plan_from_rows", source, detail, candidate=candidate))
    if not reviews:
        shown = ", ".join(str(r.path) for r in reports)
        what = "no review file: a report's totals are no per-sample evidence"
        notes.append(note("empty_plan", shown or ";".join(map(str, paths)), what))
    case_ids = {r[CASE_ID] for r in rows}
    return assemble(
        rows,
        notes,
        info,
        paths=paths,
        files=files,
        case_columns={c: v for c, v in cases.items() if c in case_ids},
    )
