"""One HELM run folder read: the request states planned, the stat graded, the split audited, the rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evalframe.columns import CANDIDATE, CASE_ID, LINE, REPORTED_HEADLINES, SCORE, SCORE_STATUS, SOURCE, TRIAL
from evalframe.importers._kit import Refusal, choose_score, grade, ledger_row, note, planned_size
from evalframe.importers._reported import headline
from evalframe.importers._settings import flatten
from evalframe.importers.helm.files import (
    DEFAULT_SPLIT,
    DEFAULT_STAT,
    REQUIRED_FILES,
    SCENARIO,
    SPLIT,
    SPLIT_MARK,
    STATS,
    _InstanceKey,
    _labels,
    _Malformed,
    _UnitKey,
)
from evalframe.importers.helm.state import _read_spec, _read_state, _Spec, _State
from evalframe.importers.helm.stats import _read_instance_stats, _Stat, _stat_by_unit, _stats_json

#: ``adapter_spec`` keys that choose how many instances run (the plan), or name the candidate, not what one
#: instance's grade measures.
_NOT_SETTINGS: Final = frozenset({"max_eval_instances", "model"})


@dataclass
class _RunRead:
    scenario: str
    plan_rows: list[dict[str, Any]]
    ledger_rows: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    info: dict[str, Any]
    #: What the run's ``adapter_spec`` records (but the model and ``max_eval_instances``), flat.
    settings: dict[str, Any] = field(default_factory=dict)

    def rename(self, candidate: str) -> None:
        """Give every row and note of this run another candidate name (runs whose settings differ)."""
        for row in (*self.plan_rows, *self.ledger_rows, *self.notes):
            if row.get(CANDIDATE) is not None:
                row[CANDIDATE] = candidate
        self.info["candidate"] = candidate


def _choose_split(
    splits: Mapping[_InstanceKey, str | None], declared: str | None, stat: str | None, source: str
) -> str | None:
    """The one split a run is audited on (see the module docstring); raises :class:`Refusal`."""
    present = sorted({s for s in splits.values() if s is not None})
    if declared is not None:
        if declared not in present:
            have = ", ".join(present) or "none"
            detail = f"no split {declared!r} in this run (has: {have})"
            if present:
                detail += f": name one with --score {stat or DEFAULT_STAT}{SPLIT_MARK}<split>, e.g. --score " + (
                    f"{stat or DEFAULT_STAT}{SPLIT_MARK}{present[0]}"
                )
            raise Refusal(note("unknown_score", source, detail))
        return declared
    if len(present) <= 1:
        return None  # one split (or none recorded): nothing is pooled
    if DEFAULT_SPLIT in present:
        return DEFAULT_SPLIT
    detail = (
        f"instances of {len(present)} splits ({', '.join(present)}) and no {DEFAULT_SPLIT!r} split: "
        f"declare one, e.g. --score {stat or DEFAULT_STAT}{SPLIT_MARK}{present[0]}"
    )
    raise Refusal(note("ambiguous_score", source, detail))


@dataclass
class _Grading:
    """A run's graded stat and its notes: every finding is flagged against the unit it is about."""

    model: str
    stat: str | None
    labels: dict[_InstanceKey, str]
    source: str
    notes: list[dict[str, Any]] = field(default_factory=list)

    def flag(
        self, kind: str, key: _UnitKey | None, detail: str, *, source: str | None = None, line: int | None = None
    ) -> None:
        case = self.labels[(key[0], key[1])] if key else None
        trial = key[2] + 1 if key else None
        where = self.source if source is None else source
        self.notes.append(note(kind, where, detail, line=line, candidate=self.model, case_id=case, trial=trial))

    def graded(self, key: _UnitKey, got: _Stat) -> tuple[str, float | None, int]:
        """Score status, score and entry line of one unit from its stat values."""
        line = got.values[0][0]
        numbers: list[float] = []
        for entry_line, value in got.values:
            status, number = grade(value)
            if status != "scored" or number is None:
                if isinstance(value, float):
                    detail = f"stat {self.stat!r} = {value!r} read as a grader failure"
                    self.flag("nonfinite_score", key, detail, line=entry_line)
                return "judge_error", None, entry_line
            numbers.append(number)
        if len(set(numbers)) > 1:
            detail = (
                f"stat {self.stat!r} appears {len(numbers)} times with different means "
                f"{sorted(set(numbers))}; read as a grader failure"
            )
            self.flag("not_a_score", key, detail, line=line)
            return "judge_error", None, line
        return "scored", numbers[0], line


@dataclass(frozen=True)
class _Audited:
    """The split a run is audited on (None: the run has one split, nothing is left out)."""

    chosen: str | None
    splits: Mapping[_InstanceKey, str | None]

    def kept(self, ikey: _InstanceKey, got: _Stat | None = None) -> bool:
        """Whether an instance (or a stat-only unit, by the splits of its stat) is of the audited split."""
        if self.chosen is None:
            return True
        if ikey in self.splits:
            return self.splits[ikey] == self.chosen
        return got is not None and self.chosen in got.splits


def _audited_split(state: _State, found: Mapping[_UnitKey, _Stat], g: _Grading, declared: str | None) -> _Audited:
    """Each instance's split (the request's, else its stat's; a disagreement flagged) and the split audited."""
    splits = state.splits
    for key, got in found.items():
        ikey = (key[0], key[1])
        stat_splits = sorted({s for s in got.splits if s is not None})
        if ikey in splits and splits[ikey] is None and stat_splits:
            splits[ikey] = stat_splits[0]  # the request's instance has no split: take the stat's
        elif ikey in splits and stat_splits and stat_splits != [splits[ikey]]:
            detail = (
                f"the instance's split is {splits[ikey]!r} in scenario_state.json but stat {g.stat!r} "
                f"is filed under split(s) {stat_splits}; the plan keeps the instance's split"
            )
            g.flag("header_rows_disagree", key, detail, line=got.values[0][0])
    planned_splits = {ikey: splits[ikey] for ikey in state.planned}
    return _Audited(_choose_split(planned_splits, declared, g.stat, str(state.path)), splits)


def _left_out(state: _State, audited: _Audited, g: _Grading) -> dict[str, int]:
    """Instances left out per split not audited, flagged ``limited_run``."""
    left_out: dict[str, int] = {}
    for ikey in state.planned:
        if not audited.kept(ikey):
            label = str(audited.splits[ikey])
            left_out[label] = left_out.get(label, 0) + 1
    if left_out:
        others = ", ".join(f"{n} instance(s) of split {s!r}" for s, n in sorted(left_out.items()))
        detail = (
            f"the run holds several splits and splits are never pooled: only split {audited.chosen!r} is audited; "
            f"{others} left out (declare another with --score {g.stat or DEFAULT_STAT}{SPLIT_MARK}<name>)"
        )
        g.flag("limited_run", None, detail, source=str(state.path))
    return dict(sorted(left_out.items()))


def _request_row(
    key: _UnitKey,
    reqs: Sequence[tuple[int, dict[str, Any] | None]],
    got: _Stat | None,
    g: _Grading,
    run_id: str,
    source: str,
) -> dict[str, Any]:
    """The ledger row of a unit with requests: how they ran, and the stat graded only when they completed."""
    results = [r for _, r in reqs]
    failed = [r for r in results if r is not None and r["success"] is False]
    if failed:
        exec_status, has_output = "error", False
        error = failed[0].get("error")
        detail = f"request failed (result.success = false{f': {error}' if error else ''})"
    elif any(r is None for r in results):
        exec_status, has_output = "not_started", False
        detail = "request has no result (never executed)"
    else:
        exec_status = "completed"
        has_output = all(bool(r and r.get("completions")) for r in results)
        detail = "request returned no completion"
    case_id = g.labels[(key[0], key[1])]
    row = ledger_row(
        g.model,
        case_id,
        score_status="not_scored",
        trial=key[2] + 1,
        run_id=run_id,
        exec_status=exec_status,
        has_output=has_output,
        line=reqs[0][0],
        source=source,
    )
    if got is None:
        return row
    status, value, line = g.graded(key, got)
    if exec_status == "completed" and has_output:
        return {**row, SCORE_STATUS: status, SCORE: value, LINE: line, SOURCE: g.source}
    if status == "scored":
        detail = f"{detail}, yet HELM recorded {g.stat} = {value}; that value was not used as a grade"
        g.flag("run_status", key, detail, line=line)
    return row


def _ledger_rows(
    state: _State, found: Mapping[_UnitKey, _Stat], audited: _Audited, g: _Grading, run_id: str
) -> list[dict[str, Any]]:
    """A row per unit of the audited split with requests, then per unit only the stats have (flagged)."""
    rows = [
        _request_row(key, reqs, found.get(key), g, run_id, str(state.path))
        for key, reqs in state.requests.items()
        if audited.kept((key[0], key[1]))
    ]
    for key, got in found.items():
        if key in state.requests or not audited.kept((key[0], key[1]), got):
            continue
        status, value, line = g.graded(key, got)
        case_id = g.labels[(key[0], key[1])]
        rows.append(
            ledger_row(
                g.model,
                case_id,
                score_status=status,
                score=value,
                trial=key[2] + 1,
                run_id=run_id,
                has_output=True,
                line=line,
                source=g.source,
            )
        )
        detail = (
            "per_instance_stats.json has this unit but scenario_state.json has no request for it "
            "(kept as a row: the plan does not list it)"
        )
        g.flag("header_rows_disagree", key, detail, line=line)
    return rows


def _stats_json_header(
    folder: Path, state: _State, g: _Grading
) -> tuple[dict[str, int], dict[str, dict[str, float | None]] | None]:
    """Unperturbed instances per split, and ``stats.json``'s values (never evidence: disagreements flagged)."""
    instances_by_split: dict[str, int] = {}
    for ikey in state.planned:
        if ikey[1] == "":
            label = str(state.splits[ikey])
            instances_by_split[label] = instances_by_split.get(label, 0) + 1
    stats_path = folder / STATS
    if not stats_path.is_file():
        return dict(sorted(instances_by_split.items())), None
    try:
        header = _stats_json(stats_path, g.stat)
    except _Malformed as exc:  # info only: the run's rows are still read, the note refuses the batch
        g.notes.append({**exc.note(), CANDIDATE: g.model})
        header = {}
    for split_name, values in header.items():
        declared = values.get("num_instances")
        rows = instances_by_split.get(split_name, 0)
        if declared is not None and declared != rows:
            detail = (
                f"stats.json says num_instances = {declared:g} in split {split_name!r}; "
                f"scenario_state.json has {rows} unperturbed instance(s) there"
            )
            g.notes.append(note("header_rows_disagree", str(stats_path), detail, candidate=g.model))
    return dict(sorted(instances_by_split.items())), header


def _reported(
    header: Mapping[str, Mapping[str, float | None]] | None,
    stat: str | None,
    chosen: str | None,
    instances_by_split: Mapping[str, int],
) -> list[dict[str, Any]]:
    """``stats.json``'s run-level mean of the stat on the audited split, over its ``num_instances``."""
    split = chosen
    if split is None and len(instances_by_split) == 1:  # a run of one split audits that split
        split = next(iter(instances_by_split))
    values = (header or {}).get(str(split)) if split is not None else None
    if values is None or stat is None:
        return []
    count = values.get("num_instances")
    n = int(count) if isinstance(count, float) and count.is_integer() else None
    got = headline("HELM", f"{stat} ({split})", values.get(stat), denominator=n, of="instances")
    return [] if got is None else [got]


def _read_run(folder: Path, declared_stat: str | None, declared_split: str | None) -> _RunRead:
    """Read one run folder (raises :class:`_Malformed` or :class:`Refusal`)."""
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        also = f" (also missing: {', '.join(missing[1:])})" if len(missing) > 1 else ""
        raise _Malformed(folder / missing[0], "", f"required file missing from the run folder{also}")
    spec_path, state_path, pis_path = (folder / name for name in REQUIRED_FILES)
    spec = _read_spec(spec_path)
    try:
        return _graded_run(folder, spec, state_path, pis_path, declared_stat, declared_split)
    except Refusal as exc:  # a refusal of one run (a stat or split it lacks) is about its model
        exc.note.setdefault(CANDIDATE, spec.model)
        raise


def _graded_run(
    folder: Path, spec: _Spec, state_path: Path, pis_path: Path, declared_stat: str | None, declared_split: str | None
) -> _RunRead:
    """The rest of :func:`_read_run`, once the run's model is known."""
    spec_path = spec.path
    state = _read_state(state_path)
    n_trials = state.trials(spec.declared_trials)
    too_many = planned_size(len(state.planned) * n_trials, str(spec_path), "instances × adapter_spec.num_train_trials")
    if too_many is not None:
        raise Refusal(too_many)
    pis = _read_instance_stats(pis_path, state.perts)
    stat = choose_score(declared_stat, pis.available, default=DEFAULT_STAT, what="stat", source=str(pis.path))
    found = _stat_by_unit(pis, stat)
    g = _Grading(spec.model, stat, _labels(state.perts), str(pis_path))
    audited = _audited_split(state, found, g, declared_split)
    left_out = _left_out(state, audited, g)
    plan_rows = [
        {
            CANDIDATE: spec.model,
            CASE_ID: g.labels[ikey],
            TRIAL: trial,
            SPLIT: state.splits[ikey],
            SCENARIO: spec.scenario,
        }
        for ikey in state.planned
        if audited.kept(ikey)
        for trial in range(1, n_trials + 1)
    ]
    ledger_rows = _ledger_rows(state, found, audited, g, spec.run_name)
    instances_by_split, header = _stats_json_header(folder, state, g)
    info = {
        "format": "helm",
        "source": str(folder),
        "run_id": spec.run_name,
        "run_name": spec.run_name,
        "scenario": spec.scenario,
        "model": spec.model,
        "model_deployment": spec.adapter.get("model_deployment"),
        "method": spec.adapter.get("method"),
        "max_eval_instances": spec.adapter.get("max_eval_instances"),
        "num_train_trials": spec.declared_trials,
        "num_trials": spec.adapter.get("num_trials"),
        "score_stat": stat,
        "split": audited.chosen,
        "split_left_out": left_out,
        "request_states": state.request_states,
        "instances": len(state.planned),
        "instances_by_split": instances_by_split,
        "per_instance_stats_rows": len(pis.entries),
        "stats_json": header,
        "candidate": spec.model,
        REPORTED_HEADLINES: _reported(header, stat, audited.chosen, instances_by_split),
    }
    settings = flatten({k: v for k, v in spec.adapter.items() if k not in _NOT_SETTINGS})
    return _RunRead(spec.scenario, plan_rows, ledger_rows, g.notes, info, settings)
