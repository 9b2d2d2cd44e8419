"""HELM stats: per-instance stat entries, their values, and the run-level ``stats.json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalframe.importers.helm.files import (
    _field,
    _InstanceKey,
    _load_json,
    _Malformed,
    _perturbation_key,
    _UnitKey,
)


@dataclass
class _Stat:
    """The chosen stat's value(s) for one unit: each with the 1-based entry it came from and its split."""

    values: list[tuple[int, Any]] = field(default_factory=list)
    splits: list[str | None] = field(default_factory=list)


def _stats_json(path: Path, stat: str | None) -> dict[str, dict[str, float | None]]:
    """Run-level values of ``stat`` and ``num_instances`` per split (unperturbed, no sub-split)."""
    doc = _load_json(path)
    if not isinstance(doc, list):
        raise _Malformed(path, "", f"expected a JSON list of stats, found {type(doc).__name__}")
    out: dict[str, dict[str, float | None]] = {}
    for i, entry in enumerate(doc):
        name = _field(entry, "name", dict, path, f"[{i}]")
        metric = _field(name, "name", str, path, f"[{i}].name")
        if metric not in (stat, "num_instances") or name.get("perturbation") or name.get("sub_split"):
            continue
        split = str(name.get("split"))
        mean = entry.get("mean")
        out.setdefault(split, {})[metric] = float(mean) if isinstance(mean, (int, float)) else None
    return dict(sorted(out.items()))


def _stat_value(s: Mapping[str, Any]) -> Any:
    """A stat's value: its ``mean``, else ``sum / count`` when HELM left the mean out; None when it has none."""
    value = s.get("mean")
    count, total = s.get("count"), s.get("sum")
    if value is None and isinstance(count, int) and count > 0 and isinstance(total, (int, float)):
        return total / count
    return value


#: A per-instance entry's stats: (metric name, the ``MetricName`` object, the stat object).
_Named = list[tuple[str, dict[str, Any], dict[str, Any]]]


@dataclass
class _InstanceStats:
    """``per_instance_stats.json`` as read: each entry's unit and named stats, every stat name seen."""

    path: Path
    entries: list[tuple[_UnitKey, _Named]] = field(default_factory=list)
    available: list[str] = field(default_factory=list)


def _read_instance_stats(path: Path, perts: dict[_InstanceKey, dict[str, Any] | None]) -> _InstanceStats:
    """Read ``per_instance_stats.json``; perturbations not seen in the requests are added to ``perts``."""
    pis = _load_json(path)
    if not isinstance(pis, list):
        raise _Malformed(path, "", f"expected a JSON list, found {type(pis).__name__}")
    read = _InstanceStats(path)
    for j, entry in enumerate(pis):
        place = f"[{j}]"
        iid = _field(entry, "instance_id", str, path, place)
        pert = _field(entry, "perturbation", dict, path, place, optional=True)
        if pert is not None:
            _field(pert, "name", str, path, f"{place}.perturbation")
        tti = _field(entry, "train_trial_index", int, path, place)
        stats = _field(entry, "stats", list, path, place)
        ikey = (iid, _perturbation_key(pert))
        perts.setdefault(ikey, pert)
        named: _Named = []
        for k, s in enumerate(stats):
            name = _field(s, "name", dict, path, f"{place}.stats[{k}]")
            metric = _field(name, "name", str, path, f"{place}.stats[{k}].name")
            named.append((metric, name, s))
            read.available.append(metric)
        read.entries.append(((*ikey, tti), named))
    return read


def _stat_by_unit(read: _InstanceStats, stat: str | None) -> dict[_UnitKey, _Stat]:
    """The chosen stat's values per unit, each with its 1-based entry and the split it is filed under."""
    found: dict[_UnitKey, _Stat] = {}
    for j, (key, named) in enumerate(read.entries):
        for metric, name, s in named:
            if metric != stat:
                continue
            got = found.setdefault(key, _Stat())
            got.values.append((j + 1, _stat_value(s)))
            got.splits.append(name.get("split") if isinstance(name.get("split"), str) else None)
    return found
