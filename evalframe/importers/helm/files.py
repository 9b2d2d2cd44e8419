"""HELM run folders as read: the file names, run discovery, JSON field checks, case labels."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from evalframe.columns import LINE
from evalframe.importers._kit import Unreadable, find_files, note, read_json
from evalframe.load import PathLike

#: The stat read when ``score`` is None.
DEFAULT_STAT: Final = "exact_match"
#: The split planned when a run holds several and none is declared.
DEFAULT_SPLIT: Final = "test"
#: Separates a stat from a declared split in ``score`` (``exact_match,split=valid``); not ``@``, which
#: HELM stat names use (``exact_match@5``).
SPLIT_MARK: Final = ",split="
#: Plan slice column holding the instance's split (``train``/``valid``/``test``).
SPLIT: Final = "split"
#: Plan column holding the scenario (the run name without its model argument).
SCENARIO: Final = "scenario"

#: The run's spec: its name and ``adapter_spec`` (model, ``num_train_trials``, ``max_eval_instances``).
RUN_SPEC: Final = "run_spec.json"
#: The requests planned: one per instance × train trial (``request_states``).
SCENARIO_STATE: Final = "scenario_state.json"
#: The stats of each instance × perturbation × train trial.
PER_INSTANCE_STATS: Final = "per_instance_stats.json"
#: Run-level stats per metric and split (optional; never evidence).
STATS: Final = "stats.json"
#: Files every run folder must hold.
REQUIRED_FILES: Final = (RUN_SPEC, SCENARIO_STATE, PER_INSTANCE_STATS)
_KNOWN_FILES: Final = (
    *REQUIRED_FILES,
    STATS,
    "scenario.json",
    "instances.json",
    "display_predictions.json",
    "display_requests.json",
)
#: Run-name arguments that name the model, not the scenario.
_MODEL_ARGS: Final = ("model=", "model_deployment=")


# (instance id, perturbation key, train_trial_index): one unit of a run.
_UnitKey = tuple[str, str, int]
# (instance id, perturbation key): one planned instance.
_InstanceKey = tuple[str, str]


class _Malformed(Exception):
    """A run file that cannot be read as HELM wrote it: becomes an ``unreadable_file`` note."""

    def __init__(self, path: Path, place: str, detail: str, *, line: int | None = None) -> None:
        self.path = path
        self.place = place
        self.detail = detail
        self.line = line
        super().__init__(f"{path}: {place}: {detail}")

    def note(self) -> dict[str, Any]:
        where = f" at {self.place}" if self.place else ""
        return note("unreadable_file", str(self.path), f"{self.path.name}{where}: {self.detail}", line=self.line)


def _load_json(path: Path) -> Any:
    """One JSON document read by the kit; an unreadable file becomes :class:`_Malformed`."""
    try:
        return read_json(path)
    except Unreadable as exc:
        raise _Malformed(path, "", exc.note["detail"], line=exc.note.get(LINE)) from None


def _field(
    obj: Any, key: str, types: type | tuple[type, ...], path: Path, place: str, *, optional: bool = False
) -> Any:
    """``obj[key]`` checked against ``types`` (never a bool for an int), or raise :class:`_Malformed`."""
    if not isinstance(obj, dict):
        raise _Malformed(path, place, f"expected a JSON object, found {type(obj).__name__}")
    value = obj.get(key)
    if value is None:
        if optional:
            return None
        raise _Malformed(path, f"{place}.{key}" if place else key, "missing required key")
    wanted = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
        names = "/".join(t.__name__ for t in wanted)
        raise _Malformed(path, f"{place}.{key}" if place else key, f"expected {names}, found {type(value).__name__}")
    return value


def _parse_score(score: str | None) -> tuple[str | None, str | None]:
    """Split a declared score into the stat and the split (``"exact_match,split=valid"``).

    Parameters
    ----------
    score
        ``<stat>``, ``<stat>,split=<split>`` or None (the default stat; the split
        by the rule of the module docstring).

    Returns
    -------
    tuple
        The declared stat (None: :data:`DEFAULT_STAT`) and the declared split
        (None: the rule decides).

    Examples
    --------
    >>> _parse_score("exact_match,split=valid"), _parse_score("f1_score"), _parse_score(None)
    (('exact_match', 'valid'), ('f1_score', None), (None, None))
    """
    if score is None:
        return None, None
    stat, mark, split = score.partition(SPLIT_MARK)
    return stat, (split if mark else None)


def _scenario_of(run_name: str) -> str:
    """The run name without its model arguments: ``mmlu:subject=philosophy,method=…``."""
    head, sep, args = run_name.partition(":")
    if not sep:
        return run_name
    kept = [a for a in args.split(",") if not a.startswith(_MODEL_ARGS)]
    return f"{head}:{','.join(kept)}" if kept else head


def _perturbation_key(pert: Mapping[str, Any] | None) -> str:
    return "" if pert is None else json.dumps(pert, sort_keys=True)


def _labels(perts: Mapping[_InstanceKey, Mapping[str, Any] | None]) -> dict[_InstanceKey, str]:
    """Case labels: the instance id, plus the perturbation name (and its fields when names collide)."""
    variants: dict[tuple[str, str], set[str]] = {}
    for (iid, pkey), pert in perts.items():
        if pert is not None:
            variants.setdefault((iid, str(pert["name"])), set()).add(pkey)
    labels: dict[_InstanceKey, str] = {}
    for (iid, pkey), pert in perts.items():
        if pert is None:
            labels[(iid, pkey)] = iid
            continue
        name = str(pert["name"])
        label = f"{iid}/{name}"
        if len(variants[(iid, name)]) > 1:
            args = ",".join(f"{k}={v}" for k, v in sorted(pert.items()) if k != "name")
            label = f"{label}[{args}]"
        labels[(iid, pkey)] = label
    return labels


def _is_run_file(path: Path) -> bool:
    return path.name in REQUIRED_FILES


def _run_folders(paths: Sequence[PathLike]) -> tuple[list[Path], list[dict[str, Any]]]:
    """The run folders named by ``paths`` (a file names its folder; a folder is searched)."""
    files, notes = find_files(paths, is_export=_is_run_file, what=f"HELM run ({', '.join(REQUIRED_FILES)})")
    folders: dict[Path, Path] = {}
    for path in files:
        if path.name in _KNOWN_FILES:
            folders.setdefault(path.parent.resolve(), path.parent)
        else:
            detail = f"not a HELM run file: expected a run folder or one of {', '.join(_KNOWN_FILES)}"
            notes.append(note("unreadable_file", str(path), detail))
    return sorted(folders.values(), key=str), notes
