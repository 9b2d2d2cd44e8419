"""Import HELM run folders into an evalframe plan and status ledger.

A HELM run folder (``benchmark_output/runs/<suite>/<run name>/``) holds
``run_spec.json`` (the run's name and ``adapter_spec``: model,
``max_eval_instances``, ``num_train_trials``), ``scenario_state.json``
(``request_states``: one request per instance × train trial, more for the
``multiple_choice_separate_*`` methods), ``per_instance_stats.json`` (one
entry per instance × perturbation × train trial — or several, one per metric
class — with its list of stats) and ``stats.json`` (run-level stats per
metric name and split). The schema is the set of dataclasses of
stanford-crfm/helm: ``PerInstanceStats``
(``src/helm/benchmark/metrics/metric.py``), ``Stat`` / ``MetricName``
(``src/helm/benchmark/metrics/statistic.py``, ``metric_name.py``),
``ScenarioState`` / ``RequestState`` (``src/helm/benchmark/adaptation/``) and
``RequestResult`` (``src/helm/common/request.py``).

How the export maps onto evalframe:

* **candidate**: ``run_spec.adapter_spec.model`` (e.g. ``openai/gpt2``);
* **case_id**: the instance id, plus ``/<perturbation name>`` for a perturbed
  instance (``id11/typos``); when one instance carries two different
  perturbations with the same name, their other fields are appended
  (``id11/typos[prob=0.1]``). When one call reads runs of several scenarios,
  every case id is prefixed with the scenario (the run name without its
  ``model=`` argument) so that instance ids of different scenarios never meet;
* **trial**: ``train_trial_index + 1``;
* **run_id**: the run name (``run_spec.name``);
* **plan**: the instances of ``scenario_state.request_states`` × trials
  ``1..num_train_trials``, with plan columns ``split`` (the instance's split,
  a slice) and ``scenario``;
* **split**: one audit never pools two splits (HELM reports each split on its
  own, so a pooled rate matches none of its numbers). A run whose instances
  are all in one split is planned whole. A run holding several splits plans
  only its ``test`` instances (the split HELM's leaderboards report) and a
  ``limited_run`` note names how many instances of each other split were left
  out (of the plan and of the ledger). Another split is declared with
  ``score="<stat>,split=<split>"`` (``--score exact_match,split=valid``;
  not ``@``, which HELM stat names use: ``exact_match@5``); a declared split
  the run does not have refuses (``unknown_score``), and several splits none
  of which is ``test`` refuse (``ambiguous_score``) until one is declared;
* **grade**: the ``mean`` of the chosen stat (default ``exact_match``) in the
  unit's per-instance stats, graded by :func:`~evalframe.importers._kit.grade`:
  a stat entry without a value (HELM writes ``count`` 0 and a null ``mean``
  when its metric could not compute one) or with a non-finite value is a
  ``judge_error``; a unit with no entry of that stat is ``not_scored``. A stat
  name the run does not have — the default ``exact_match`` included, e.g. in
  the safety suites — refuses naming the stats it has (``unknown_score``).
  ``passed`` is set when every score read in the call is exactly 0 or 1;
  otherwise the ledger has no ``passed`` column and the audit needs
  ``grade="numeric"`` and a pass threshold;
* **execution**: a request whose ``result.success`` is false (e.g. "Content
  blocked") is an execution ``error`` and a request without a result is
  ``not_started``, even when HELM's metrics (LLM judges included) recorded a
  value for it: that value is never a grade (a ``run_status`` note names it).

``stats.json`` and the run spec's ``max_eval_instances`` are reported in
``info`` and are never evidence: coverage comes from the per-instance rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
)
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    Unreadable,
    build_plan,
    choose_score,
    find_files,
    finish,
    grade,
    note,
    planned_size,
    read_json,
)
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

RUN_SPEC: Final = "run_spec.json"
SCENARIO_STATE: Final = "scenario_state.json"
PER_INSTANCE_STATS: Final = "per_instance_stats.json"
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


class _Refused(Exception):
    """A run that cannot be graded as asked (unknown stat or split): carries its refusing note."""

    def __init__(self, note_row: dict[str, Any]) -> None:
        self.note = note_row
        super().__init__(note_row["detail"])


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


@dataclass
class _Stat:
    """The chosen stat's value(s) for one unit: each with the 1-based entry it came from and its split."""

    values: list[tuple[int, Any]] = field(default_factory=list)
    splits: list[str | None] = field(default_factory=list)


@dataclass
class _RunRead:
    scenario: str
    plan_rows: list[dict[str, Any]]
    ledger_rows: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    info: dict[str, Any]


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


def _choose_split(
    splits: Mapping[_InstanceKey, str | None], declared: str | None, stat: str | None, source: str
) -> str | None:
    """The one split a run is audited on (see the module docstring); raises :class:`_Refused`."""
    present = sorted({s for s in splits.values() if s is not None})
    if declared is not None:
        if declared not in present:
            have = ", ".join(present) or "none"
            raise _Refused(note("unknown_score", source, f"no split {declared!r} in this run (has: {have})"))
        return declared
    if len(present) <= 1:
        return None  # one split (or none recorded): nothing is pooled
    if DEFAULT_SPLIT in present:
        return DEFAULT_SPLIT
    detail = (
        f"instances of {len(present)} splits ({', '.join(present)}) and no {DEFAULT_SPLIT!r} split: "
        f"declare one, e.g. --score {stat or DEFAULT_STAT}{SPLIT_MARK}{present[0]}"
    )
    raise _Refused(note("ambiguous_score", source, detail))


def _read_run(folder: Path, declared_stat: str | None, declared_split: str | None) -> _RunRead:
    """Read one run folder (raises :class:`_Malformed` or :class:`_Refused`)."""
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        also = f" (also missing: {', '.join(missing[1:])})" if len(missing) > 1 else ""
        raise _Malformed(folder / missing[0], "", f"required file missing from the run folder{also}")
    spec_path, state_path, pis_path = (folder / name for name in REQUIRED_FILES)

    spec = _load_json(spec_path)
    run_name = _field(spec, "name", str, spec_path, "")
    adapter = _field(spec, "adapter_spec", dict, spec_path, "")
    model = _field(adapter, "model", str, spec_path, "adapter_spec")
    declared_trials = _field(adapter, "num_train_trials", int, spec_path, "adapter_spec", optional=True)
    scenario = _scenario_of(run_name)

    state = _load_json(state_path)
    request_states = _field(state, "request_states", list, state_path, "")
    perts: dict[_InstanceKey, dict[str, Any] | None] = {}
    splits: dict[_InstanceKey, str | None] = {}
    planned: list[_InstanceKey] = []
    requests: dict[_UnitKey, list[tuple[int, dict[str, Any] | None]]] = {}
    max_trial_index = -1
    for i, rs in enumerate(request_states):
        place = f"request_states[{i}]"
        instance = _field(rs, "instance", dict, state_path, place)
        iid = _field(instance, "id", str, state_path, f"{place}.instance")
        pert = _field(instance, "perturbation", dict, state_path, f"{place}.instance", optional=True)
        if pert is not None:
            _field(pert, "name", str, state_path, f"{place}.instance.perturbation")
        split = _field(instance, "split", str, state_path, f"{place}.instance", optional=True)
        tti = _field(rs, "train_trial_index", int, state_path, place)
        result = _field(rs, "result", dict, state_path, place, optional=True)
        if result is not None:
            _field(result, "success", bool, state_path, f"{place}.result")
            _field(result, "completions", list, state_path, f"{place}.result", optional=True)
        ikey = (iid, _perturbation_key(pert))
        if ikey not in perts:
            perts[ikey] = pert
            splits[ikey] = split
            planned.append(ikey)
        requests.setdefault((*ikey, tti), []).append((i + 1, result))
        max_trial_index = max(max_trial_index, tti)
    n_trials = declared_trials if declared_trials is not None else max(max_trial_index + 1, 1)
    too_many = planned_size(len(planned) * n_trials, str(spec_path), "instances × adapter_spec.num_train_trials")
    if too_many is not None:
        raise _Refused(too_many)

    pis = _load_json(pis_path)
    if not isinstance(pis, list):
        raise _Malformed(pis_path, "", f"expected a JSON list, found {type(pis).__name__}")
    entries: list[tuple[_UnitKey, list[tuple[str, dict[str, Any], dict[str, Any]]]]] = []
    available: list[str] = []
    for j, entry in enumerate(pis):
        place = f"[{j}]"
        iid = _field(entry, "instance_id", str, pis_path, place)
        pert = _field(entry, "perturbation", dict, pis_path, place, optional=True)
        if pert is not None:
            _field(pert, "name", str, pis_path, f"{place}.perturbation")
        tti = _field(entry, "train_trial_index", int, pis_path, place)
        stats = _field(entry, "stats", list, pis_path, place)
        ikey = (iid, _perturbation_key(pert))
        perts.setdefault(ikey, pert)
        named: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        for k, s in enumerate(stats):
            name = _field(s, "name", dict, pis_path, f"{place}.stats[{k}]")
            metric = _field(name, "name", str, pis_path, f"{place}.stats[{k}].name")
            named.append((metric, name, s))
            available.append(metric)
        entries.append(((*ikey, tti), named))
    try:
        stat = choose_score(declared_stat, available, default=DEFAULT_STAT, what="stat", source=str(pis_path))
    except ScoreChoiceError as exc:
        raise _Refused(exc.note) from None
    found: dict[_UnitKey, _Stat] = {}
    for j, (key, named) in enumerate(entries):
        for metric, name, s in named:
            if metric != stat:
                continue
            got = found.setdefault(key, _Stat())
            got.values.append((j + 1, _stat_value(s)))
            got.splits.append(name.get("split") if isinstance(name.get("split"), str) else None)

    labels = _labels(perts)
    source_state, source_pis = str(state_path), str(pis_path)
    notes: list[dict[str, Any]] = []
    ledger_rows: list[dict[str, Any]] = []
    plan_rows: list[dict[str, Any]] = []

    def flag(
        kind: str, key: _UnitKey | None, detail: str, *, source: str = source_pis, line: int | None = None
    ) -> None:
        case = labels[(key[0], key[1])] if key else None
        trial = key[2] + 1 if key else None
        notes.append(note(kind, source, detail, line=line, candidate=model, case_id=case, trial=trial))

    def graded(key: _UnitKey, got: _Stat) -> tuple[str, float | None, int]:
        """Score status, score and entry line of one unit from its stat values."""
        line = got.values[0][0]
        numbers: list[float] = []
        for entry_line, value in got.values:
            status, number = grade(value)
            if status != "scored" or number is None:
                if isinstance(value, float):
                    flag("nonfinite_score", key, f"stat {stat!r} = {value!r} read as a grader failure", line=entry_line)
                return "judge_error", None, entry_line
            numbers.append(number)
        if len(set(numbers)) > 1:
            flag(
                "not_a_score",
                key,
                f"stat {stat!r} appears {len(numbers)} times with different means "
                f"{sorted(set(numbers))}; read as a grader failure",
                line=line,
            )
            return "judge_error", None, line
        return "scored", numbers[0], line

    for key, got in found.items():
        ikey = (key[0], key[1])
        stat_splits = sorted({s for s in got.splits if s is not None})
        if ikey in splits and splits[ikey] is None and stat_splits:
            splits[ikey] = stat_splits[0]  # the request's instance has no split: take the stat's
        elif ikey in splits and stat_splits and stat_splits != [splits[ikey]]:
            flag(
                "header_rows_disagree",
                key,
                f"the instance's split is {splits[ikey]!r} in scenario_state.json but stat {stat!r} "
                f"is filed under split(s) {stat_splits}; the plan keeps the instance's split",
                line=got.values[0][0],
            )
    planned_splits = {ikey: splits[ikey] for ikey in planned}
    chosen = _choose_split(planned_splits, declared_split, stat, source_state)

    def kept(ikey: _InstanceKey, got: _Stat | None = None) -> bool:
        if chosen is None:
            return True
        if ikey in splits:
            return splits[ikey] == chosen
        return got is not None and chosen in got.splits

    left_out: dict[str, int] = {}
    for ikey in planned:
        if not kept(ikey):
            label = str(splits[ikey])
            left_out[label] = left_out.get(label, 0) + 1
    if left_out:
        others = ", ".join(f"{n} instance(s) of split {s!r}" for s, n in sorted(left_out.items()))
        flag(
            "limited_run",
            None,
            f"the run holds several splits and splits are never pooled: only split {chosen!r} is audited; "
            f"{others} left out (declare another with --score {stat or DEFAULT_STAT}{SPLIT_MARK}<name>)",
            source=source_state,
        )

    for ikey in planned:
        if not kept(ikey):
            continue
        for trial in range(1, n_trials + 1):
            plan_rows.append(
                {CANDIDATE: model, CASE_ID: labels[ikey], TRIAL: trial, SPLIT: splits[ikey], SCENARIO: scenario}
            )
    for key, reqs in requests.items():
        if not kept((key[0], key[1])):
            continue
        stat_of = found.get(key)
        results = [r for _, r in reqs]
        row: dict[str, Any] = {
            CANDIDATE: model,
            CASE_ID: labels[(key[0], key[1])],
            TRIAL: key[2] + 1,
            ATTEMPT: 1,
            RUN_ID: run_name,
            SCORE: None,
            LINE: reqs[0][0],
            SOURCE: source_state,
        }
        failed = [r for r in results if r is not None and r["success"] is False]
        if failed:
            row[EXEC_STATUS], row[HAS_OUTPUT] = "error", False
            error = failed[0].get("error")
            detail = f"request failed (result.success = false{f': {error}' if error else ''})"
        elif any(r is None for r in results):
            row[EXEC_STATUS], row[HAS_OUTPUT] = "not_started", False
            detail = "request has no result (never executed)"
        else:
            row[EXEC_STATUS] = "completed"
            row[HAS_OUTPUT] = all(bool(r and r.get("completions")) for r in results)
            detail = "request returned no completion"
        row[SCORE_STATUS] = "not_scored"
        if stat_of is not None:
            status, value, line = graded(key, stat_of)
            if row[EXEC_STATUS] == "completed" and row[HAS_OUTPUT]:
                row[SCORE_STATUS], row[SCORE] = status, value
                row[LINE], row[SOURCE] = line, source_pis
            elif status == "scored":
                flag(
                    "run_status",
                    key,
                    f"{detail}, yet HELM recorded {stat} = {value}; that value was not used as a grade",
                    line=line,
                )
        ledger_rows.append(row)
    for key, got in found.items():
        if key in requests or not kept((key[0], key[1]), got):
            continue
        status, value, line = graded(key, got)
        ledger_rows.append(
            {
                CANDIDATE: model,
                CASE_ID: labels[(key[0], key[1])],
                TRIAL: key[2] + 1,
                ATTEMPT: 1,
                RUN_ID: run_name,
                EXEC_STATUS: "completed",
                SCORE_STATUS: status,
                SCORE: value,
                HAS_OUTPUT: True,
                LINE: line,
                SOURCE: source_pis,
            }
        )
        flag(
            "header_rows_disagree",
            key,
            "per_instance_stats.json has this unit but scenario_state.json has no request for it "
            "(kept as a row: the plan does not list it)",
            line=line,
        )

    instances_by_split: dict[str, int] = {}
    for ikey in planned:
        if ikey[1] == "":
            label = str(splits[ikey])
            instances_by_split[label] = instances_by_split.get(label, 0) + 1
    stats_path = folder / STATS
    header: dict[str, dict[str, float | None]] | None = None
    if stats_path.is_file():
        try:
            header = _stats_json(stats_path, stat)
        except _Malformed as exc:  # info only: the run's rows are still read, the note refuses the batch
            notes.append({**exc.note(), CANDIDATE: model})
            header = {}
        for split_name, values in header.items():
            declared = values.get("num_instances")
            rows = instances_by_split.get(split_name, 0)
            if declared is not None and declared != rows:
                detail = (
                    f"stats.json says num_instances = {declared:g} in split {split_name!r}; "
                    f"scenario_state.json has {rows} unperturbed instance(s) there"
                )
                notes.append(note("header_rows_disagree", str(stats_path), detail, candidate=model))
    info = {
        "format": "helm",
        "source": str(folder),
        "run_id": run_name,
        "run_name": run_name,
        "scenario": scenario,
        "model": model,
        "model_deployment": adapter.get("model_deployment"),
        "method": adapter.get("method"),
        "max_eval_instances": adapter.get("max_eval_instances"),
        "num_train_trials": declared_trials,
        "num_trials": adapter.get("num_trials"),
        "score_stat": stat,
        "split": chosen,
        "split_left_out": dict(sorted(left_out.items())),
        "request_states": len(request_states),
        "instances": len(planned),
        "instances_by_split": dict(sorted(instances_by_split.items())),
        "per_instance_stats_rows": len(pis),
        "stats_json": header,
    }
    return _RunRead(scenario, plan_rows, ledger_rows, notes, info)


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read HELM run folders into a plan, a status ledger, notes and run facts.

    Parameters
    ----------
    paths
        Run folders (each holding ``run_spec.json``, ``scenario_state.json``
        and ``per_instance_stats.json``; ``stats.json`` is optional), files
        inside a run folder (their folder is read), or parent folders (every
        run folder below is read, e.g. ``benchmark_output/runs/<suite>``).
    score
        Name of the per-instance stat to grade with (``MetricName.name``, e.g.
        ``quasi_exact_match``, ``f1_score``, ``sst_score``), optionally with
        the split to audit (``exact_match,split=valid``); None reads
        ``exact_match`` on the split the module docstring's rule gives.

    Returns
    -------
    Imported
        ``plan``: one row per (candidate, case_id, trial) request planned in
        ``scenario_state.json`` (instances of the audited split ×
        ``num_train_trials``), with case columns ``split`` (String) and
        ``scenario`` (String). ``ledger``: one row per unit with at least one
        request (or a stat), columns ``candidate``, ``case_id``, ``run_id``
        (String), ``trial``, ``attempt`` (Int64, always 1), ``exec_status``
        (``completed``; ``error`` when a request's ``result.success`` is
        false; ``not_started`` when it has no result), ``score_status``
        (``scored``; ``judge_error`` for a stat with no value, a non-finite
        or an ambiguous one; ``not_scored`` when the unit has no such stat or
        its request did not complete), ``score`` (Float64, the stat's
        ``mean``), ``passed`` (Boolean, only when every score is 0 or 1),
        ``has_output`` (Boolean), ``line`` (Int64: 1-based position of the
        unit's entry in ``per_instance_stats.json``, or of its first request
        in ``scenario_state.json``) and ``source`` (String: that file).
        ``notes``: problems table of flags (``limited_run`` for the splits
        left out, ``header_rows_disagree``, ``not_a_score``,
        ``nonfinite_score``, ``run_status``). ``info``: one dict per run
        folder (run id, scenario, model, stat and split audited, splits left
        out, ``max_eval_instances``, ``num_train_trials``, instances per
        split, ``stats_json`` values per split — never evidence).

    Raises
    ------
    InputFormatError
        When a path does not exist.
    ImportRefused
        When any note refuses: a missing or malformed run file
        (``unreadable_file``), a folder with no run (``no_export``), a stat
        or split the run does not have (``unknown_score``), several splits
        and none of them ``test`` (``ambiguous_score``). ``problems`` holds
        every note, of the other runs too.

    Examples
    --------
    >>> imported = read(["../shared/data/real/helm/evaleval-every_eval_ever/tests/data/helm/"
    ...                  "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"])
    >>> imported.ledger.group_by("candidate", "score_status", "passed").len().sort("passed")
    shape: (2, 4)
    ┌─────────────┬──────────────┬────────┬─────┐
    │ candidate   ┆ score_status ┆ passed ┆ len │
    │ ---         ┆ ---          ┆ ---    ┆ --- │
    │ str         ┆ str          ┆ bool   ┆ u32 │
    ╞═════════════╪══════════════╪════════╪═════╡
    │ openai/gpt2 ┆ scored       ┆ false  ┆ 8   │
    │ openai/gpt2 ┆ scored       ┆ true   ┆ 1   │
    └─────────────┴──────────────┴────────┴─────┘
    >>> imported.notes.select("kind", "refusing").rows()
    [('limited_run', False)]
    >>> read(["../shared/data/real/helm/evaleval-every_eval_ever/tests/data/helm/"
    ...       "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"],
    ...      score="exact_match,split=valid").plan.cases.select("case_id", "split").rows()
    [('id11', 'valid')]
    """
    declared_stat, declared_split = _parse_score(score)
    folders, raw_notes = _run_folders(paths)
    runs: list[_RunRead] = []
    for folder in folders:
        try:
            runs.append(_read_run(folder, declared_stat, declared_split))
        except _Malformed as exc:
            raw_notes.append(exc.note())
        except _Refused as exc:
            raw_notes.append(exc.note)
    if len({run.scenario for run in runs}) > 1:
        for run in runs:
            for row in (*run.plan_rows, *run.ledger_rows, *run.notes):
                if row.get(CASE_ID) is not None:
                    row[CASE_ID] = f"{run.scenario}/{row[CASE_ID]}"
    plan_rows = [row for run in runs for row in run.plan_rows]
    ledger_rows = [row for run in runs for row in run.ledger_rows]
    raw_notes.extend(n for run in runs for n in run.notes)
    source = ";".join(str(p) for p in paths)

    ledger = pl.DataFrame(ledger_rows, schema=LEDGER_SCHEMA)
    scores = ledger.get_column(SCORE).drop_nulls()
    if scores.is_in([0.0, 1.0]).all():
        ledger = ledger.with_columns(pl.when(pl.col(SCORE_STATUS) == "scored").then(pl.col(SCORE) == 1.0).alias(PASSED))
    else:
        ledger = ledger.drop(PASSED)
    ledger = ledger.sort([CANDIDATE, CASE_ID, TRIAL, ATTEMPT, SOURCE, LINE])

    schema = {CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, SPLIT: pl.String, SCENARIO: pl.String}
    plan, plan_problems = build_plan(pl.DataFrame(plan_rows, schema=schema), source=source)
    if not plan_rows and any(n["refusing"] for n in raw_notes):  # nothing was read: the notes say why
        plan_problems = plan_problems.clear()
    return finish(plan, ledger, [raw_notes, plan_problems], [run.info for run in runs])
