"""Runs of one candidate whose recorded settings differ are different candidates (SPEC §6c).

An importer that reads several runs (files) of one candidate gives each run's settings as a flat mapping
(``with_background``, ``generate.temperature``, ``config.max_tokens``...), the runs in the order they ran.
Runs of one candidate (within one task, when the format has several) whose settings are equal (same keys,
same values) stay that candidate: successive attempts of the same units. When they differ, each class of
runs with equal settings becomes its own candidate, named by the first differing keys that tell the classes
apart (``anthropic/claude-opus-4-20250514 [with_background=true]``); a key one run records and another does
not is ``unknown``, never assumed equal; and one ``settings_differ`` note (a flag) per new candidate names
every differing key, each class's value and its files. Every importer calls :func:`split_by_settings`; each
knows only which settings its format records and in which order they best name a run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evalframe.compare.settings import setting_text, setting_texts
from evalframe.importers._notes import note

#: How a setting a run does not record is written in a candidate name and a note.
UNKNOWN: Final = "unknown"
#: The longest setting value written in full in a candidate name (longer ones are cut and given a hash).
SHOWN: Final = 32
#: The longest setting value written in full in a note.
SHOWN_IN_NOTE: Final = 120


@dataclass(frozen=True)
class RunSettings:
    """One run of one candidate: where it was read, its candidate name, its recorded settings (flat).

    ``group`` is what else runs of one candidate must share to be compared at all (Inspect's task: runs of
    two tasks are never attempts of one another anyway).
    """

    source: str
    candidate: str
    settings: Mapping[str, Any]
    group: str = ""


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


def shown(value: str | None, width: int = SHOWN) -> str:
    r"""A setting's value as a name or note shows it: whole when short and on one line, else cut with a hash.

    Examples
    --------
    >>> shown("true"), shown(None), shown("x" * 40), shown("temperature: 0.7\nseed: 1")
    ('true', 'unknown', 'xxxxxxxxxxxxxxxxxxxx…#bd913ff6', 'temperature: 0.7…#d3bd710e')
    """
    if value is None:
        return UNKNOWN
    first = value.split("\n", 1)[0]
    if first == value and len(value) <= width:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:8]
    return f"{first[: width - 12]}…#{digest}"


def short_names(sources: Sequence[str]) -> dict[str, str]:
    """Each source by its last path parts, as few as tell the sources apart (a file name when that does).

    Examples
    --------
    >>> short_names(["x/v1/run", "x/v3/run", "y/a.json"])
    {'x/v1/run': 'v1/run', 'x/v3/run': 'v3/run', 'y/a.json': 'a.json'}
    """
    parts = {s: Path(s).parts for s in dict.fromkeys(sources)}
    out: dict[str, str] = {}
    for source, own in parts.items():
        for k in range(1, len(own) + 1):
            tail = own[-k:]
            if all(other[-k:] != tail for name, other in parts.items() if name != source):
                break
        out[source] = "/".join(tail)
    return out


def _naming_keys(
    differing: Sequence[str], classes: Sequence[Mapping[str, str]], rank: Callable[[str], Any]
) -> list[str]:
    """The first keys whose values tell every class of runs apart.

    Keys in ``rank`` order, those whose every value is short enough to be shown whole before the others
    (``mode=attack`` names a run better than a cut JSON object does).
    """

    def order(key: str) -> tuple[Any, bool, str]:
        return rank(key), any(len(own.get(key, UNKNOWN)) > SHOWN for own in classes), key

    keys: list[str] = []
    for key in sorted(differing, key=order):
        keys.append(key)
        if len({tuple(own.get(k) for k in keys) for own in classes}) == len(classes):
            break
    return keys


def split_by_settings(
    runs: Sequence[RunSettings], *, rank: Callable[[str], Any] = lambda key: 0
) -> tuple[dict[tuple[str, str], str], list[dict[str, Any]]]:
    """Candidate names that carry the settings in which runs of one candidate differ, and the notes.

    Parameters
    ----------
    runs
        Every (file, candidate) read, with the settings that file records for the candidate, in the order
        the runs ran (classes and their files are named in that order).
    rank
        The order in which keys name a candidate (lower first; ties by name): the importer's judgment of
        which settings say best what a run was (Inspect: task arguments first, the solver plan last).

    Returns
    -------
    tuple
        ``{(source, candidate): new name}`` for every run whose candidate is renamed, and one
        ``settings_differ`` note per new candidate (``candidate=`` the new name, ``source`` its first file)
        naming each differing key with every class's value and files.

    Examples
    --------
    >>> runs = [RunSettings("a.json", "m", {"temperature": 0, "seed": 1}),
    ...         RunSettings("b.json", "m", {"temperature": 0.9, "seed": 1}),
    ...         RunSettings("c.json", "m", {"temperature": 0.9, "seed": 1})]
    >>> names, notes = split_by_settings(runs)
    >>> sorted(set(names.values())), names[("c.json", "m")]
    (['m [temperature=0.9]', 'm [temperature=0]'], 'm [temperature=0.9]')
    >>> print(notes[0]["detail"])  # doctest: +NORMALIZE_WHITESPACE
    runs of m recorded different settings, read as 2 candidates, not as retries of one another:
    temperature = 0 in a.json; 0.9 in b.json, c.json
    >>> split_by_settings([RunSettings("a.json", "m", {"t": 1}), RunSettings("b.json", "m", {"t": 1})])
    ({}, [])
    """
    groups: dict[tuple[str, str], list[RunSettings]] = {}
    for run in runs:
        groups.setdefault((run.group, run.candidate), []).append(run)
    names: dict[tuple[str, str], str] = {}
    notes: list[dict[str, Any]] = []
    for (group, candidate), members in groups.items():
        classes: dict[str, list[RunSettings]] = {}
        texts: dict[str, dict[str, str]] = {}
        for run in members:
            own = setting_texts(run.settings)
            key = json.dumps(own, sort_keys=True)
            classes.setdefault(key, []).append(run)
            texts.setdefault(key, own)
        if len(classes) < 2:
            continue
        owns = list(texts.values())
        keys = sorted({k for own in owns for k in own}, key=lambda k: (rank(k), k))
        differing = [k for k in keys if len({own.get(k) for own in owns}) > 1]
        naming = _naming_keys(differing, owns, rank)
        new = [f"{candidate} [{', '.join(f'{k}={shown(own.get(k))}' for k in naming)}]" for own in owns]
        short = short_names([r.source for r in members])
        per_key = [
            f"{key} = "
            + "; ".join(
                f"{shown(own[key], SHOWN_IN_NOTE) if key in own else UNKNOWN + ' (not recorded)'} in "
                + ", ".join(short[r.source] for r in members_of)
                for own, members_of in zip(owns, classes.values(), strict=True)
            )
            for key in differing
        ]
        of = f"{candidate} ({group})" if group else candidate
        detail = (
            f"runs of {of} recorded different settings, read as {len(owns)} candidates, not as retries of one "
            f"another: {'. '.join(per_key)}"
        )
        for name, members_of in zip(new, classes.values(), strict=True):
            for run in members_of:
                names[(run.source, candidate)] = name
            notes.append(note("settings_differ", members_of[0].source, detail, candidate=name))
    return names, notes


def recorded(settings: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Settings as an export's info records them for a comparison (``settings``): flat keys, value texts.

    Several mappings (a record's results, each with its own config) merge: a key they give different values
    keeps every value, sorted and joined by `` | ``, so that it never reads as equal to either.

    Examples
    --------
    >>> recorded({"generation_args": {"temperature": 0, "stop": ["x"]}})
    {'generation_args.temperature': '0', 'generation_args.stop': '["x"]'}
    >>> recorded([{"temperature": 0}, {"temperature": 0.7}, {"temperature": 0}])
    {'temperature': '0 | 0.7'}
    """
    values: dict[str, set[str]] = {}
    for one in [settings] if isinstance(settings, Mapping) else settings:
        for key, value in flatten(one).items():
            values.setdefault(key, set()).add(setting_text(value))
    return {key: " | ".join(sorted(texts)) for key, texts in values.items()}
