"""The settings a log records for its run, and runs of one (task, model) split into candidates when they differ.

Two logs of one task and model are successive attempts of the same units only when they measured the same
thing: the same task arguments, model arguments, generate config, solver plan, scorers, dataset and per-sample
limits. A setting one log records and another does not is unknown, never assumed equal (SPEC §6c). Runs whose
settings differ are different candidates, named with the settings that set them apart
(``anthropic/claude-opus-4-20250514 [with_background=true]``), and a ``settings_differ`` note (a flag) names the
key, the values and the files.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from evalframe.importers._kit import json_object
from evalframe.importers.inspect_ai.header import _started
from evalframe.importers.inspect_ai.log import _Log, _log_note

#: ``eval.config`` keys that change what one sample measures (the per-sample limits and tool approval); the
#: others (``limit``, ``epochs``, ``max_samples``, logging…) choose which units run, or how, not what they are.
_CONFIG_SETTINGS: Final = (
    "message_limit",
    "token_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
    "approval",
)
#: Generate-config keys that say how many requests run at once, nothing about one request.
_CONCURRENCY: Final = frozenset({"max_connections"})
#: Setting key prefixes in the order they name a candidate, after the bare task arguments and before the solver.
_RANKED: Final = (
    "model_args.",
    "generate.",
    "config.",
    "task_version",
    "dataset.",
    "model_base_url",
    "model_roles.",
    "scorer.",
)
#: How a setting the log does not record is written in a candidate name and a note.
UNKNOWN: Final = "unknown"
#: The longest setting value written in full in a candidate name (longer ones are cut and given a hash).
_SHOWN: Final = 32


def _text(value: Any) -> str:
    """A setting's value as one canonical text: strings bare, everything else as compact sorted JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def log_settings(log: _Log) -> dict[str, str]:
    """The settings ``log`` records, as ``{key: value text}``.

    Keys: each ``eval.task_args`` key bare (``with_background``); ``model_args.<k>``; ``generate.<k>`` (the
    generate config: ``eval.model_generate_config`` and ``plan.config``, but for ``max_connections``);
    ``solver`` (``plan.steps`` and ``plan.finish``); ``scorer.<name>`` (the options of each of
    ``eval.scorers``); ``dataset.name`` / ``dataset.location``; ``task_version``; ``model_base_url``;
    ``model_roles.<role>``;
    ``config.<k>`` for the per-sample limits of ``eval.config``. A key the log does not record is absent.
    """
    spec = log.spec
    found: dict[str, str] = {}
    for key, value in json_object(spec.get("task_args")).items():
        found[str(key)] = _text(value)
    for key, value in json_object(spec.get("model_args")).items():
        found[f"model_args.{key}"] = _text(value)
    plan = json_object(log.doc.get("plan"))
    for source in (json_object(spec.get("model_generate_config")), json_object(plan.get("config"))):
        for key, value in source.items():
            if key not in _CONCURRENCY and value is not None:
                found[f"generate.{key}"] = _text(value)
    if "steps" in plan or "finish" in plan:
        found["solver"] = _text({"steps": plan.get("steps"), "finish": plan.get("finish")})
    scorers = spec.get("scorers")
    for entry in scorers if isinstance(scorers, list) else []:
        scorer = json_object(entry)
        if isinstance(scorer.get("name"), str):
            found[f"scorer.{scorer['name']}"] = _text(scorer.get("options") or {})
    for key in ("name", "location"):
        value = log.dataset.get(key)
        if value is not None:
            found[f"dataset.{key}"] = _text(value)
    for key in ("task_version", "model_base_url"):
        if spec.get(key) is not None:
            found[key] = _text(spec[key])
    for role, value in json_object(spec.get("model_roles")).items():
        found[f"model_roles.{role}"] = _text(value)
    for key in _CONFIG_SETTINGS:
        if log.config.get(key) is not None:
            found[f"config.{key}"] = _text(log.config[key])
    return found


def _shown(value: str | None, width: int = _SHOWN) -> str:
    """A setting's value as a name or note shows it: whole when short, else cut with a hash of the whole."""
    if value is None:
        return UNKNOWN
    if len(value) <= width:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:8]
    return f"{value[: width - 12]}…#{digest}"


def _rank(key: str) -> tuple[int, str]:
    """The order in which settings name a candidate: task arguments first, the solver plan last."""
    prefixes = _RANKED
    if key == "solver":
        return len(prefixes) + 1, key
    for i, prefix in enumerate(prefixes, start=1):
        if key.startswith(prefix):
            return i, key
    return 0, key


def _naming_keys(differing: Sequence[str], classes: Sequence[Mapping[str, str]]) -> list[str]:
    """The first keys whose values tell every class of runs apart.

    Keys in :func:`_rank` order, those whose every value is short enough to be shown whole before the others
    (``mode=attack`` names a run better than a cut JSON object does).
    """

    def order(key: str) -> tuple[int, bool, str]:
        group, name = _rank(key)
        return group, any(len(own.get(key, UNKNOWN)) > _SHOWN for own in classes), name

    keys: list[str] = []
    for key in sorted(differing, key=order):
        keys.append(key)
        if len({tuple(own.get(k) for k in keys) for own in classes}) == len(classes):
            break
    return keys


def split_by_settings(logs: Sequence[_Log]) -> list[dict[str, Any]]:
    """Name each log's candidate: its model, or its model and the settings that differ from its model's other runs.

    Logs of one (task, model) whose recorded settings are equal (same keys, same values) keep the model as
    their candidate and stay successive attempts of the same units. When they differ, each group of equal
    settings becomes its own candidate, ``<model> [<key>=<value>, ...]`` named by the first differing keys
    that tell the groups apart (task arguments first; a key a log does not record is ``unknown``), and one
    ``settings_differ`` note per new candidate names every differing key, each group's values and its files
    (groups and files in the order they ran).
    Sets ``log.candidate``; returns the notes.

    Examples
    --------
    >>> def run(path, background):
    ...     doc = {"eval": {"task": "t", "model": "m", "task_args": {"with_background": background}}}
    ...     return _Log(path, "json", None, doc, "success")
    >>> logs = [run("a.json", False), run("b.json", True), run("c.json", True)]
    >>> notes = split_by_settings(logs)
    >>> [log.candidate for log in logs]
    ['m [with_background=false]', 'm [with_background=true]', 'm [with_background=true]']
    >>> print(notes[0]["detail"])  # doctest: +NORMALIZE_WHITESPACE
    m (t): runs of this task and model recorded different settings, read as 2 candidates, not as retries of
    one another: with_background = false in a.json; true in b.json, c.json
    """
    groups: dict[tuple[str, str], list[_Log]] = defaultdict(list)
    for log in logs:
        log.candidate = log.model
        groups[(log.task, log.model)].append(log)
    notes: list[dict[str, Any]] = []
    for (_, model), runs in groups.items():
        settings = {log.path: log_settings(log) for log in runs}
        classes: dict[str, list[_Log]] = defaultdict(list)
        for log in sorted(runs, key=_started):  # groups and their files in the order they ran
            classes[json.dumps(settings[log.path], sort_keys=True)].append(log)
        if len(classes) < 2:
            continue
        keys = sorted({k for s in settings.values() for k in s}, key=_rank)
        differing = [k for k in keys if len({settings[log.path].get(k) for log in runs}) > 1]
        members = list(classes.values())
        owns = [settings[member[0].path] for member in members]
        naming = _naming_keys(differing, owns)
        names = [f"{model} [{', '.join(f'{k}={_shown(own.get(k))}' for k in naming)}]" for own in owns]
        for name, member in zip(names, members, strict=True):
            for log in member:
                log.candidate = name
        per_key = []
        for key in differing:
            each = "; ".join(
                f"{_shown(own.get(key), 120) if key in own else UNKNOWN + ' (not recorded)'} in "
                f"{', '.join(Path(g.path).name for g in member)}"
                for own, member in zip(owns, members, strict=True)
            )
            per_key.append(f"{key} = {each}")
        detail = (
            f"runs of this task and model recorded different settings, read as {len(members)} candidates, "
            f"not as retries of one another: {'. '.join(per_key)}"
        )
        for name, member in zip(names, members, strict=True):
            notes.append(_log_note(member[0], "settings_differ", detail, candidate=name))
    return notes
