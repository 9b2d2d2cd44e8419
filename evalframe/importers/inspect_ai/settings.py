"""The settings a log records for its run, and runs of one (task, model) split into candidates when they differ.

Two logs of one task and model are successive attempts of the same units only when they measured the same
thing: the same task arguments, model arguments, generate config, solver plan, scorers, dataset and per-sample
limits. A setting one log records and another does not is unknown, never assumed equal (SPEC §6c). Runs whose
settings differ are different candidates, named with the settings that set them apart
(``anthropic/claude-opus-4-20250514 [with_background=true]``), and a ``settings_differ`` note (a flag) names the
key, the values and the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from evalframe.compare.settings import setting_text
from evalframe.importers._kit import json_object
from evalframe.importers._settings import RunSettings
from evalframe.importers._settings import split_by_settings as kit_split_by_settings
from evalframe.importers.inspect_ai.header import _started
from evalframe.importers.inspect_ai.log import _Log

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
        found[str(key)] = setting_text(value)
    for key, value in json_object(spec.get("model_args")).items():
        found[f"model_args.{key}"] = setting_text(value)
    plan = json_object(log.doc.get("plan"))
    for source in (json_object(spec.get("model_generate_config")), json_object(plan.get("config"))):
        for key, value in source.items():
            if key not in _CONCURRENCY and value is not None:
                found[f"generate.{key}"] = setting_text(value)
    if "steps" in plan or "finish" in plan:
        found["solver"] = setting_text({"steps": plan.get("steps"), "finish": plan.get("finish")})
    scorers = spec.get("scorers")
    for entry in scorers if isinstance(scorers, list) else []:
        scorer = json_object(entry)
        if isinstance(scorer.get("name"), str):
            found[f"scorer.{scorer['name']}"] = setting_text(scorer.get("options") or {})
    for key in ("name", "location"):
        value = log.dataset.get(key)
        if value is not None:
            found[f"dataset.{key}"] = setting_text(value)
    for key in ("task_version", "model_base_url"):
        if spec.get(key) is not None:
            found[key] = setting_text(spec[key])
    for role, value in json_object(spec.get("model_roles")).items():
        found[f"model_roles.{role}"] = setting_text(value)
    for key in _CONFIG_SETTINGS:
        if log.config.get(key) is not None:
            found[f"config.{key}"] = setting_text(log.config[key])
    return found


def compared_settings(log: _Log) -> dict[str, str]:
    """The settings two runs must share to be compared: :func:`log_settings` and the units chosen.

    Beside what one sample measures, a comparison needs the same ``epochs`` and ``limit`` (``eval.config``) and
    the same code revision (``eval.revision.commit``): a run of other units, or other code, is another
    measurement even when each sample is measured alike.
    """
    found = log_settings(log)
    for key in ("epochs", "limit"):
        if log.config.get(key) is not None:
            found[key] = setting_text(log.config[key])
    commit = json_object(log.spec.get("revision")).get("commit")
    if commit is not None:
        found["revision.commit"] = setting_text(commit)
    return found


def _rank(key: str) -> int:
    """The order in which settings name a candidate: task arguments (0) first, the solver plan last."""
    if key == "solver":
        return len(_RANKED) + 1
    return next((i for i, prefix in enumerate(_RANKED, start=1) if key.startswith(prefix)), 0)


def split_by_settings(logs: Sequence[_Log]) -> list[dict[str, Any]]:
    """Name each log's candidate: its model, or its model and the settings that differ from its model's other runs.

    Logs of one (task, model) are compared by :func:`evalframe.importers._settings.split_by_settings` on
    :func:`log_settings`, in the order they ran (:func:`_started`), task arguments naming a run first.
    Sets ``log.candidate``; returns the ``settings_differ`` notes.

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
    runs of m (t) recorded different settings, read as 2 candidates, not as retries of one another:
    with_background = false in a.json; true in b.json, c.json
    """
    ordered = sorted(logs, key=_started)
    runs = [RunSettings(log.path, log.model, log_settings(log), group=log.task) for log in ordered]
    names, notes = kit_split_by_settings(runs, rank=_rank)
    for log in logs:
        log.candidate = names.get((log.path, log.model), log.model)
    return notes
