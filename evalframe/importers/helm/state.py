"""What a HELM run plans: ``run_spec.json`` (model, trials) and ``scenario_state.json`` (instances, requests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalframe.importers.helm.files import _field, _InstanceKey, _load_json, _perturbation_key, _scenario_of, _UnitKey


@dataclass(frozen=True)
class _Spec:
    """What ``run_spec.json`` says of a run."""

    path: Path
    run_name: str
    adapter: dict[str, Any]
    model: str
    declared_trials: int | None

    @property
    def scenario(self) -> str:
        """The run name without its model arguments."""
        return _scenario_of(self.run_name)


def _read_spec(path: Path) -> _Spec:
    """``run_spec.json``: the run's name, adapter spec, model and declared train trials; raises ``_Malformed``."""
    spec = _load_json(path)
    run_name = _field(spec, "name", str, path, "")
    adapter = _field(spec, "adapter_spec", dict, path, "")
    model = _field(adapter, "model", str, path, "adapter_spec")
    declared_trials = _field(adapter, "num_train_trials", int, path, "adapter_spec", optional=True)
    return _Spec(path, run_name, adapter, model, declared_trials)


@dataclass
class _State:
    """The instances ``scenario_state.json`` plans (in order), their perturbations, splits and requests."""

    path: Path
    request_states: int = 0
    perts: dict[_InstanceKey, dict[str, Any] | None] = field(default_factory=dict)
    splits: dict[_InstanceKey, str | None] = field(default_factory=dict)
    planned: list[_InstanceKey] = field(default_factory=list)
    #: Per unit, its requests: (1-based position in ``request_states``, the request's result or None).
    requests: dict[_UnitKey, list[tuple[int, dict[str, Any] | None]]] = field(default_factory=dict)
    max_trial_index: int = -1

    def trials(self, declared: int | None) -> int:
        """Train trials planned: as declared, else as many as the requests show (at least 1)."""
        return declared if declared is not None else max(self.max_trial_index + 1, 1)


def _read_state(path: Path) -> _State:
    """``scenario_state.json``, every request state checked; raises ``_Malformed``."""
    request_states = _field(_load_json(path), "request_states", list, path, "")
    state = _State(path, len(request_states))
    for i, rs in enumerate(request_states):
        place = f"request_states[{i}]"
        instance = _field(rs, "instance", dict, path, place)
        iid = _field(instance, "id", str, path, f"{place}.instance")
        pert = _field(instance, "perturbation", dict, path, f"{place}.instance", optional=True)
        if pert is not None:
            _field(pert, "name", str, path, f"{place}.instance.perturbation")
        split = _field(instance, "split", str, path, f"{place}.instance", optional=True)
        tti = _field(rs, "train_trial_index", int, path, place)
        result = _field(rs, "result", dict, path, place, optional=True)
        if result is not None:
            _field(result, "success", bool, path, f"{place}.result")
            _field(result, "completions", list, path, f"{place}.result", optional=True)
        ikey = (iid, _perturbation_key(pert))
        if ikey not in state.perts:
            state.perts[ikey] = pert
            state.splits[ikey] = split
            state.planned.append(ikey)
        state.requests.setdefault((*ikey, tti), []).append((i + 1, result))
        state.max_trial_index = max(state.max_trial_index, tti)
    return state
