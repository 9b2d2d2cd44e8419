"""Facts of a log's header: start time, epochs, planned sample ids, the scorer, run notes and info."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from evalframe.columns import KIND, REPORTED_HEADLINES
from evalframe.importers._kit import ScoreChoiceError, choose_score, json_object
from evalframe.importers._reported import headline
from evalframe.importers.inspect_ai.log import _are_ids, _is_count, _Log, _log_note, _obj, _retries


def _when(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _started(log: _Log) -> tuple[bool, datetime, datetime, str]:
    """Sort key of a log among runs of the same (task, model): start time, created time, path."""
    stats = json_object(log.doc.get("stats"))
    created = _when(log.spec.get("created"))
    started = _when(stats.get("started_at")) or created
    never = datetime.min.replace(tzinfo=UTC)
    return (started is None, started or never, created or never, log.path)


def _epochs(log: _Log) -> tuple[int, dict[str, Any] | None]:
    epochs = log.config.get("epochs")
    if epochs is None:
        return 1, None
    if not _is_count(epochs) or epochs < 1:
        return 1, _log_note(log, "unreadable_file", f"eval.config.epochs = {epochs!r} is not a positive integer")
    return epochs, None


def _declared_ids(log: _Log) -> tuple[list[int | str] | None, dict[str, Any] | None]:
    """``eval.dataset.sample_ids`` (None when absent or empty)."""
    ids = log.dataset.get("sample_ids")
    if ids is None or ids == []:
        return None, None
    if not isinstance(ids, list) or not _are_ids(ids):
        return None, _log_note(log, "unreadable_file", "eval.dataset.sample_ids is not a list of ints/strings")
    return list(ids), None


def _limited_note(log: _Log, planned: int) -> dict[str, Any] | None:
    """``limited_run`` when the dataset holds more samples than the run planned (``--limit``, ``--sample-id``).

    The plan is what the run was set to run (the header's ``sample_ids``); the note names the limit and the
    dataset's size, so that no rate reads as the task's.
    """
    samples = log.dataset.get("samples")
    limit = log.config.get("limit")
    chosen = log.config.get("sample_id")
    how = (
        f"--limit {json.dumps(limit)}"
        if limit is not None
        else f"--sample-id {json.dumps(chosen)}"
        if chosen is not None
        else "eval.dataset.sample_ids"
    )
    rates = f"the rates describe those {planned}, not the task"
    if _is_count(samples) and samples > planned:
        return _log_note(log, "limited_run", f"{how}: {planned} of {samples} samples planned; {rates}")
    if limit is not None and not _is_count(samples):
        detail = f"{how}: {planned} samples planned, of a dataset whose size is not recorded; {rates}"
        return _log_note(log, "limited_run", detail)
    return None


@dataclass(frozen=True)
class ScoreRef:
    """Where one score is read in every sample of a log.

    Inspect's ``Score.value`` is a scalar, a list or a dict of scalars; a scorer whose value is a dict (a
    control-arena ``scorer`` giving ``{main_task_success, side_task_success}``) has its metrics computed per
    key, and the header's ``results.scores`` lists each key as a score ``name`` beside the ``scorer`` that
    wrote it. A score is then the key's value inside the scorer's dict.
    """

    #: The score's name: what ``--score`` names and the header lists.
    name: str
    #: The key of each sample's ``scores`` that holds it.
    scorer: str
    #: The key inside that scorer's dict value; None: the value itself is the grade.
    key: str | None = None

    @property
    def place(self) -> str:
        """Where it is read, as a sample's JSON path."""
        inner = f"[{self.key!r}]" if self.key is not None else ""
        return f"scores[{self.scorer!r}].value{inner}"


def _header_scores(log: _Log) -> list[tuple[str, str]]:
    """(score name, scorer) pairs the header lists, in its order.

    From ``results.scores`` (``name``, ``scorer``), else the old ``results.scorer``, else ``eval.scorers``: a
    scorer's metrics given per key (``{key: [metrics]}``, alone or inside its metrics list) list those keys as
    scores of the scorer; metrics given for the whole value list the scorer itself.
    """
    pairs: list[tuple[str, str]] = []
    for entries in (log.results.get("scores"), [log.results.get("scorer")]):
        if isinstance(entries, list) and any(_obj(e) for e in entries):
            for entry in map(json_object, entries):
                name, scorer = entry.get("name"), entry.get("scorer")
                if isinstance(name, str):
                    pairs.append((name, scorer if isinstance(scorer, str) else name))
            return list(dict.fromkeys(pairs))
    declared = log.spec.get("scorers")
    for entry in map(json_object, declared if isinstance(declared, list) else []):
        scorer, metrics = entry.get("name"), entry.get("metrics")
        if not isinstance(scorer, str):
            continue
        parts = [metrics] if isinstance(metrics, dict) else metrics if isinstance(metrics, list) else []
        keys = [k for m in map(json_object, parts) if not isinstance(m.get("name"), str) for k in m]
        whole = not parts or any(not (isinstance(m, dict) and not isinstance(m.get("name"), str)) for m in parts)
        if whole:
            pairs.append((scorer, scorer))
        pairs.extend((str(k), scorer) for k in keys)
    return list(dict.fromkeys(pairs))


def _sample_scores(sample: Mapping[str, Any], default: str | None) -> dict[str, Any]:
    scores = _obj(sample.get("scores"))
    if scores is not None:
        return scores
    old = _obj(sample.get("score"))  # single deprecated 'score' field
    return {default or "score": old} if old is not None else {}


@dataclass
class _InSamples:
    """What the samples of one log hold: scorer names, and for each scorer its values that are dicts."""

    scorers: list[str]
    keys: dict[str, list[str]]
    whole: dict[str, bool]

    @classmethod
    def of(cls, log: _Log, default: str | None) -> _InSamples:
        scorers: dict[str, None] = {}
        keys: dict[str, dict[str, None]] = {}
        values: dict[str, list[Any]] = {}
        for sample in log.samples:
            for scorer, entry in _sample_scores(sample.data, default).items():
                scorers.setdefault(scorer)
                value = json_object(entry).get("value")
                if value is not None:
                    values.setdefault(scorer, []).append(value)
                if isinstance(value, dict):
                    keys.setdefault(scorer, {}).update(dict.fromkeys(map(str, value)))
        whole = {s: bool(v) and all(isinstance(x, dict) for x in v) for s, v in values.items()}
        return cls(sorted(scorers), {s: sorted(k) for s, k in keys.items()}, whole)

    def names(self) -> list[str]:
        """Every score a sample holds: its scorers, then the keys of their dict values."""
        return [*self.scorers, *(k for s in self.scorers for k in self.keys.get(s, ()))]

    def shown(self) -> str:
        """The names, as a note gives them: ``scorer`` or ``scorer{key, key}``."""
        each = [f"{s}{{{', '.join(self.keys[s])}}}" if s in self.keys else s for s in self.scorers]
        return ", ".join(each) if each else "no score"

    def holds(self, ref: ScoreRef) -> bool:
        return ref.scorer in self.scorers and (ref.key is None or ref.key in self.keys.get(ref.scorer, ()))


def _choose_scorer(log: _Log, score: str | None) -> tuple[ScoreRef | None, list[str], dict[str, Any] | None]:
    """The score to read (see the module docstring), every score name seen, and a refusing note or None.

    A name is a scorer's (its value is the grade) or a key of a scorer's dict value (the header's
    ``results.scores`` says whose; else the one scorer whose dicts hold it). Refuses ``ambiguous_score`` when
    the score chosen is a scorer whose every value is a dict (no key named), or a key of several scorers;
    ``unknown_score`` when the name is not in the log, or when samples hold scores but none holds this one.
    """
    header = _header_scores(log)
    header_scorer = dict(reversed(header))  # a name's first pair wins
    first = header[0][0] if header else None
    found = _InSamples.of(log, header_scorer.get(first, first) if first is not None else None)
    available = list(dict.fromkeys([n for n, _ in header] + found.names()))
    offered = available if score is not None else list(dict.fromkeys([n for n, _ in header])) or found.scorers
    try:
        name = choose_score(score, offered, default=first, what="scorer", source=log.path)
    except ScoreChoiceError as exc:
        return None, available, _log_note(log, exc.note[KIND], exc.note["detail"])
    if name is None:
        return None, available, None
    if header_scorer.get(name, name) != name:
        ref = ScoreRef(name, header_scorer[name], name)
    elif name in found.scorers or name in header_scorer:
        ref = ScoreRef(name, name)
    else:
        holders = [s for s in found.scorers if name in found.keys.get(s, ())]
        if len(holders) > 1:
            detail = f"{name!r} is a key of several scorers' values ({', '.join(holders)}): the log does not say whose"
            return None, available, _log_note(log, "ambiguous_score", detail)
        ref = ScoreRef(name, holders[0], name)
    if ref.key is None and found.whole.get(ref.scorer):
        detail = (
            f"scorer {name!r} gives a dict per sample, not one grade: name one of its keys with --score "
            f"({', '.join(found.keys[ref.scorer])})"
        )
        return None, available, _log_note(log, "ambiguous_score", detail)
    if found.scorers and not found.holds(ref):
        whose = f"the header lists it as a score of scorer {ref.scorer!r}; " if name in header_scorer else ""
        detail = (
            f"score {name!r} is in no sample: {whose}looked for {ref.place} in the {len(log.samples)} samples, "
            f"which hold {found.shown()}"
        )
        return None, available, _log_note(log, "unknown_score", detail)
    return ref, available, None


def _header_notes(log: _Log) -> list[dict[str, Any]]:
    """``run_status`` and ``header_rows_disagree`` notes of one log."""
    notes: list[dict[str, Any]] = []
    if log.status != "success":
        error = _obj(log.doc.get("error"))
        why = f": {str(error.get('message'))[:200]}" if error else ""
        notes.append(_log_note(log, "run_status", f"the run's status is {log.status!r}, not 'success'{why}"))
    rows = len(log.samples)
    completed = sum(1 for s in log.samples if not s.data.get("error"))
    for key, count, what in (
        ("total_samples", rows, "sample rows"),
        ("completed_samples", completed, "sample rows without an error"),
    ):
        declared = log.results.get(key)
        if _is_count(declared) and declared != count:
            detail = f"header results.{key} = {declared} but the log has {count} {what} (rows are the evidence)"
            notes.append(_log_note(log, "header_rows_disagree", detail))
    return notes


def _case_reducer(declared: Any) -> str | None:
    """Inspect's ``epochs_reducer`` as the header records it (``max``, ``pass_at_2``, …), or None when it has none.

    Kept in Inspect's words; the audit reads what each name means with
    :func:`evalframe.funnel.reducer_meaning` (``max`` is ``any``). Several reducers are joined with ``+``.
    """
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    if not names:
        return None
    return "+".join(map(str, names))


def _log_info(log: _Log, *, score: ScoreRef | None, available: list[str], epochs: int) -> dict[str, Any]:
    ids = log.dataset.get("sample_ids")
    packages = json_object(log.spec.get("packages"))
    error = _obj(log.doc.get("error"))
    return {
        "source": log.path,
        "format": log.fmt,
        "header": log.header_member,
        "readable": True,
        "inspect_version": packages.get("inspect_ai"),
        "status": log.status,
        "task": log.task,
        "task_id": log.spec.get("task_id"),
        "model": log.model,
        "candidate": log.candidate,
        "run_id": log.spec.get("run_id"),
        "eval_id": log.spec.get("eval_id"),
        "eval_set_id": log.spec.get("eval_set_id"),
        "created": log.spec.get("created"),
        "dataset_name": log.dataset.get("name"),
        "dataset_samples": log.dataset.get("samples"),
        "sample_ids_declared": len(ids) if isinstance(ids, list) else None,
        "limit": log.config.get("limit"),
        "epochs": epochs,
        "case_reducer": _case_reducer(log.config.get("epochs_reducer")),
        "total_samples": log.results.get("total_samples"),
        "completed_samples": log.results.get("completed_samples"),
        "scorer": None if score is None else score.name,
        "score_read_at": None if score is None else score.place,
        "scorers": available,
        "samples_read": len(log.samples),
        "attempts_read": sum(1 + len(_retries(s.data)) for s in log.samples),
        "samples_with_error": sum(1 for s in log.samples if s.data.get("error")),
        "error": (str(error.get("message"))[:500] if error else None),
        REPORTED_HEADLINES: _reported(log, score),
    }


#: Inspect metrics that are the mean of a sample's grades, i.e. a pass rate when grades are 0/1.
_RATE_METRICS = ("accuracy", "mean")


def _reported(log: _Log, score: ScoreRef | None) -> list[dict[str, Any]]:
    """The headline values the log's ``results.scores`` entry of ``score`` holds, with its ``scored_samples``.

    Inspect computes a scorer's metrics over the samples that have that score (errored samples are left
    out): ``scored_samples`` states that count (older logs: ``completed_samples``).
    """
    if score is None:
        return []
    entries = log.results.get("scores")
    for entry in map(json_object, entries if isinstance(entries, list) else []):
        if entry.get("name") != score.name:
            continue
        scored, of = entry.get("scored_samples"), "scored samples"
        if not _is_count(scored):
            scored, of = log.results.get("completed_samples"), "completed samples"
        metrics = json_object(entry.get("metrics"))
        found = (
            headline("Inspect", name, json_object(metrics.get(name)).get("value"), denominator=scored, of=of)
            for name in _RATE_METRICS
        )
        return [h for h in found if h is not None]
    return []
