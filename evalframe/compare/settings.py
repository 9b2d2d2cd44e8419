"""The settings two runs record, side by side, and whether they are comparable at all (SPEC §6c).

A doubled timeout, another judge, temperature, dataset revision, ``epochs`` or ``limit`` changes what a
score measures. Each importer records the settings its export holds (``settings`` in each export's info,
``{key: value text}``); this module lays a baseline's and a candidate's side by side. A key one side does
not record is unknown (``equal`` null), never assumed equal. Which keys decide is declared: every key by
default, minus ``ignore``; only ``comparable_on`` when it is given (then a declared key that a side does not
record decides too: it cannot be shown equal).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import BASELINE, CANDIDATE, DECIDES, EQUAL, RECORDED_SETTINGS, SETTING, SETTINGS_BY_TASK, TASK

#: Columns (and dtypes) of the settings side by side.
SETTINGS_SCHEMA: Final = pl.Schema(
    {SETTING: pl.String, BASELINE: pl.String, CANDIDATE: pl.String, EQUAL: pl.Boolean, DECIDES: pl.Boolean}
)


def _setting_units(exports: Sequence[Any]) -> list[Mapping[str, Any]]:
    """Each export, and each task of an export of several tasks (its ``settings_by_task`` entries)."""
    units: list[Mapping[str, Any]] = []
    for export in exports:
        if isinstance(export, Mapping):
            units.append(export)
            by_task = export.get(SETTINGS_BY_TASK)
            if isinstance(by_task, list):
                units.extend(u for u in by_task if isinstance(u, Mapping))
    return units


def recorded_settings(exports: Sequence[Any], candidate: str, *, task: str | None = None) -> dict[str, str] | None:
    """The settings the exports of one candidate (of ``task``, when given) record; None when none records any.

    An export of several tasks gives each task's settings under ``settings_by_task`` (entries with their own
    ``task``, ``candidate`` and ``settings``). A key its exports give different values is kept with every
    value, sorted and joined by `` | ``, so that it never reads as equal to either.

    Examples
    --------
    >>> exports = [{"candidate": "m", "settings": {"epochs": "1"}}, {"candidate": "m", "settings": {"epochs": "2"}}]
    >>> recorded_settings(exports, "m"), recorded_settings(exports, "other")
    ({'epochs': '1 | 2'}, None)
    """
    values: dict[str, set[str]] = {}
    found = False
    for unit in _setting_units(exports):
        if unit.get(CANDIDATE) != candidate or (task is not None and unit.get(TASK) not in (None, task)):
            continue
        settings = unit.get(RECORDED_SETTINGS)
        if not isinstance(settings, Mapping):
            continue
        found = True
        for key, value in setting_texts(settings).items():
            values.setdefault(key, set()).add(value)
    return {k: " | ".join(sorted(v)) for k, v in sorted(values.items())} if found else None


def setting_text(value: Any) -> str:
    """A setting's value as one canonical text: strings bare, everything else as compact sorted JSON.

    Examples
    --------
    >>> setting_text("x"), setting_text(False), setting_text({"b": 1, "a": [2]})
    ('x', 'false', '{"a":[2],"b":1}')
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def setting_texts(settings: Mapping[Any, Any]) -> dict[str, str]:
    """A settings mapping as texts (keys by ``str``, values by :func:`setting_text`): equal text is equal.

    The one spelling that the importers' runs, :func:`recorded_settings` (hence :func:`settings_side_by_side`)
    and :func:`pooled_settings_notes` compare.

    Examples
    --------
    >>> setting_texts({"epochs": 2, "limit": None, "model": "m"})
    {'epochs': '2', 'limit': 'null', 'model': 'm'}
    """
    return {str(key): setting_text(value) for key, value in settings.items()}


def settings_side_by_side(
    exports: Sequence[Any],
    baseline: str,
    candidate: str,
    *,
    task: str | None = None,
    comparable_on: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> pl.DataFrame:
    """Each setting either side records: both values, whether they agree, and whether the key decides.

    Parameters
    ----------
    exports
        The import's per-file facts (``report.meta["exports"]``, :attr:`evalframe.importers.Imported.info`).
    baseline, candidate
        The two candidates compared.
    task
        The task compared (exports of another task are left out); None: every export of each candidate.
    comparable_on
        The keys that decide comparability (None: every key but ``ignore``).
    ignore
        Keys that never decide.

    Returns
    -------
    polars.DataFrame
        :data:`SETTINGS_SCHEMA`, one row per key either side records (and per ``comparable_on`` key), sorted by
        key: ``baseline`` / ``candidate`` the value text (null: that side does not record it), ``equal``
        (null: unknown), ``decides``.

    Examples
    --------
    >>> exports = [{"candidate": "a", "settings": {"epochs": "1", "temperature": "0"}},
    ...            {"candidate": "b", "settings": {"epochs": "2"}}]
    >>> settings_side_by_side(exports, "a", "b").rows()
    [('epochs', '1', '2', False, True), ('temperature', '0', None, None, True)]
    """
    base = recorded_settings(exports, baseline, task=task) or {}
    cand = recorded_settings(exports, candidate, task=task) or {}
    keys = sorted({*base, *cand, *(comparable_on or ())})
    declared = set(comparable_on) if comparable_on is not None else None
    rows = [
        {
            SETTING: key,
            BASELINE: base.get(key),
            CANDIDATE: cand.get(key),
            EQUAL: None if key not in base or key not in cand else base[key] == cand[key],
            DECIDES: key not in ignore and (declared is None or key in declared),
        }
        for key in keys
    ]
    return pl.DataFrame(rows, schema=SETTINGS_SCHEMA)


def not_comparable_keys(table: pl.DataFrame, *, declared: bool = False) -> list[str]:
    """The keys of a side-by-side table that make two runs not comparable, sorted.

    A deciding key whose values differ; with ``declared`` (the table was built with ``comparable_on``) also a
    deciding key a side does not record, since it cannot be shown equal.

    Examples
    --------
    >>> exports = [{"candidate": "a", "settings": {"epochs": "1", "limit": "5"}},
    ...            {"candidate": "b", "settings": {"epochs": "2", "limit": "5"}}]
    >>> not_comparable_keys(settings_side_by_side(exports, "a", "b"))
    ['epochs']
    >>> not_comparable_keys(settings_side_by_side(exports, "a", "b", ignore=["epochs"]))
    []
    """
    unequal = pl.col(EQUAL).not_() if not declared else pl.col(EQUAL).not_().fill_null(True)
    return sorted(table.filter(pl.col(DECIDES) & unequal).get_column(SETTING).to_list())


def settings_reason(table: pl.DataFrame, keys: Sequence[str]) -> str:
    """The reason two runs are not comparable, naming each key and its two values.

    Examples
    --------
    >>> exports = [{"candidate": "a", "settings": {"epochs": "1"}}, {"candidate": "b", "settings": {}}]
    >>> table = settings_side_by_side(exports, "a", "b", comparable_on=["epochs"])
    >>> settings_reason(table, not_comparable_keys(table, declared=True))
    'not comparable: the runs record different settings: epochs 1 (baseline) vs not recorded (candidate)'
    """
    rows = {r[SETTING]: r for r in table.iter_rows(named=True)}

    def shown(value: str | None) -> str:
        return "not recorded" if value is None else value

    parts = [f"{k} {shown(rows[k][BASELINE])} (baseline) vs {shown(rows[k][CANDIDATE])} (candidate)" for k in keys]
    return "not comparable: the runs record different settings: " + "; ".join(parts)


def settings_verdict(
    exports: Sequence[Any],
    names: tuple[str, str],
    task: str | None,
    comparable_on: Sequence[str] | None,
    ignore: Sequence[str],
    verdict: str,
    reasons: list[str],
) -> tuple[str, list[str]]:
    """``verdict`` and ``reasons`` of a comparison of ``names`` (baseline, candidate), once their settings are read.

    A deciding key that differs (:func:`not_comparable_keys`) makes the verdict ``not_comparable``, its reason
    (:func:`settings_reason`) first: runs whose recorded settings differ get no verdict on their scores.

    Examples
    --------
    >>> exports = [{"candidate": "a", "settings": {"epochs": "1"}}, {"candidate": "b", "settings": {"epochs": "2"}}]
    >>> settings_verdict(exports, ("a", "b"), None, None, (), "no_supported_winner", ["interval: …"])[0]
    'not_comparable'
    >>> settings_verdict(exports, ("a", "b"), None, None, ["epochs"], "no_supported_winner", [])
    ('no_supported_winner', [])
    """
    baseline, candidate = names
    table = settings_side_by_side(exports, baseline, candidate, task=task, comparable_on=comparable_on, ignore=ignore)
    differing = not_comparable_keys(table, declared=comparable_on is not None)
    if not differing:
        return verdict, reasons
    return "not_comparable", [settings_reason(table, differing), *reasons]


def pooled_settings_notes(exports: Sequence[Any]) -> list[dict[str, Any]]:
    """One ``settings_pooled`` note per (task, candidate) whose exports record different settings.

    An audit pools every export of one task and candidate into one ledger (successive runs are attempts or
    trials of the same units). When those exports record different settings (``epochs``, ``limit``, the
    code revision: what :func:`settings_side_by_side` compares), pooling mixes two measurements; the note
    names each differing key with every export's value (``not recorded`` where an export does not record
    it), never silently. Exports that record no settings at all are left out: nothing is known of them.

    Parameters
    ----------
    exports
        The import's per-file facts (``report.meta["exports"]``), each with ``candidate``, ``source``,
        ``settings`` and ``task`` when the format has tasks (and ``settings_by_task`` entries).

    Returns
    -------
    list of dict
        Problem rows (``kind``, ``candidate``, ``source`` the first export, ``detail``, ``refusing`` False),
        in the order the (task, candidate) pairs first appear.

    Examples
    --------
    >>> exports = [{"candidate": "m", "source": "a.json", "settings": {"epochs": "1", "limit": "5"}},
    ...            {"candidate": "m", "source": "b.json", "settings": {"epochs": "2", "limit": "5"}}]
    >>> print(pooled_settings_notes(exports)[0]["detail"].split(": ", 1)[1])
    epochs 1 in a.json; 2 in b.json
    >>> pooled_settings_notes(exports[:1] * 2)
    []
    """
    groups: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for unit in _setting_units(exports):
        if isinstance(unit.get(RECORDED_SETTINGS), Mapping) and unit.get(CANDIDATE) is not None:
            groups.setdefault((unit.get(TASK), unit.get(CANDIDATE)), []).append(unit)
    notes: list[dict[str, Any]] = []
    for (task, candidate), units in groups.items():
        owns = [setting_texts(u[RECORDED_SETTINGS]) for u in units]
        keys = sorted({k for own in owns for k in own})
        differing = [k for k in keys if len({own.get(k) for own in owns}) > 1]
        if len(units) < 2 or not differing:
            continue
        sources = [str(u.get("source", "?")) for u in units]

        def values(key: str, owns: list[dict[str, str]] = owns, sources: list[str] = sources) -> str:
            by_value: dict[str, list[str]] = {}
            for own, source in zip(owns, sources, strict=True):
                by_value.setdefault(own.get(key, "not recorded"), []).append(Path(source).name)
            return "; ".join(f"{value} in {', '.join(files)}" for value, files in by_value.items())

        of = f"{candidate} ({task})" if task else str(candidate)
        detail = (
            f"{len(units)} exports of {of} record different settings and are audited together, not as one "
            f"measurement: " + ". ".join(f"{key} {values(key)}" for key in differing)
        )
        notes.append({"kind": "settings_pooled", CANDIDATE: candidate, "source": sources[0], "detail": detail,
                      "refusing": False})  # fmt: skip
    return notes
