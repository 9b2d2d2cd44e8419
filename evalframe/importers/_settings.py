"""Runs of one candidate whose recorded settings differ are different candidates (SPEC §6c).

An importer that reads several runs (files) of one candidate gives each run's settings as a flat mapping
(``temperature``, ``config.max_tokens``, ``eval_spec.args.samples_jsonl``...). Where two runs of a candidate
record different values for a key, or one records a key the other does not (unknown, never assumed equal),
each run's candidate name carries the keys that differ (``openai:gpt-5 [temperature=0.9]``) and a
``settings_differ`` flag names the key, the values and the files. Runs whose settings agree keep the name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalframe.importers._notes import note

#: How a setting a run does not record is shown.
UNKNOWN = "unknown"


@dataclass(frozen=True)
class RunSettings:
    """One run of one candidate: where it was read, its candidate name, its recorded settings (flat)."""

    source: str
    candidate: str
    settings: Mapping[str, Any]


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as dotted keys (lists and scalars are leaves).

    Examples
    --------
    >>> flatten({"config": {"temperature": 0, "stop": ["x"]}, "id": "a"})
    {'config.temperature': 0, 'config.stop': ['x'], 'id': 'a'}
    """
    if not isinstance(value, Mapping):
        return {prefix: value} if prefix else {}
    out: dict[str, Any] = {}
    for key, inner in value.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(inner, Mapping) and inner:
            out.update(flatten(inner, name))
        else:
            out[name] = inner
    return out


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def split_by_settings(runs: Sequence[RunSettings]) -> tuple[dict[tuple[str, str], str], list[dict[str, Any]]]:
    """Candidate names that carry the settings in which runs of one candidate differ, and the notes.

    Parameters
    ----------
    runs
        Every (file, candidate) read, with the settings that file records for the candidate.

    Returns
    -------
    tuple
        ``{(source, candidate): new name}`` for every run whose candidate is renamed, and one
        ``settings_differ`` note per renamed candidate (``candidate=`` the new name) naming each differing key
        with its value in every file.

    Examples
    --------
    >>> runs = [RunSettings("a.json", "m", {"temperature": 0}), RunSettings("b.json", "m", {"temperature": 0.9})]
    >>> names, notes = split_by_settings(runs)
    >>> names
    {('a.json', 'm'): 'm [temperature=0]', ('b.json', 'm'): 'm [temperature=0.9]'}
    >>> print(notes[0]["detail"])
    runs of m record different settings, read as different candidates: temperature = 0 (a.json), 0.9 (b.json)
    >>> split_by_settings([RunSettings("a.json", "m", {"t": 1}), RunSettings("b.json", "m", {"t": 1})])
    ({}, [])
    """
    by_candidate: dict[str, list[RunSettings]] = {}
    for run in runs:
        by_candidate.setdefault(run.candidate, []).append(run)
    names: dict[tuple[str, str], str] = {}
    notes: list[dict[str, Any]] = []
    for candidate, group in by_candidate.items():
        if len({r.source for r in group}) < 2:
            continue
        keys = sorted({k for r in group for k in r.settings})
        differ = [k for k in keys if len({_shown(r.settings[k]) if k in r.settings else None for r in group}) > 1]
        if not differ:
            continue
        values = {k: [(_shown(r.settings[k]) if k in r.settings else UNKNOWN, r.source) for r in group] for k in differ}
        detail = f"runs of {candidate} record different settings, read as different candidates: " + "; ".join(
            f"{k} = " + ", ".join(f"{v} ({src})" for v, src in values[k]) for k in differ
        )
        renamed = set()
        for r in group:
            label = ", ".join(f"{k}={_shown(r.settings[k]) if k in r.settings else UNKNOWN}" for k in differ)
            names[(r.source, candidate)] = new = f"{candidate} [{label}]"
            if new not in renamed:
                renamed.add(new)
                notes.append(note("settings_differ", r.source, detail, candidate=new))
    return names, notes
