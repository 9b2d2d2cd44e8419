"""Writing an audit as every_eval_ever records: one aggregate record and one instance file per candidate."""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalframe.columns import (
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    OUTCOME,
    PASSED,
    SCORE,
    SCORE_STATUS,
    TRIAL,
    UNITS,
)
from evalframe.errors import EvalframeError
from evalframe.importers.every_eval_ever.schema import (
    DATASTORE,
    DETAIL_LEFT_OUT,
    DETAIL_ROWS,
    DETAIL_TRIALS,
    DETAIL_UNGRADED,
    META_EXEC,
    META_OUTPUT,
    META_SCORE,
    META_TRIAL,
    MODEL_DETAILS,
    SCHEMA_VERSION,
    UNGRADED,
)
from evalframe.load import PathLike
from evalframe.report import ExchangeGuard, write_output
from evalframe.stats import DEFAULT_CONFIDENCE

if TYPE_CHECKING:
    from evalframe.report import AuditReport


class ExportError(EvalframeError):
    """An audit cannot be written as every_eval_ever records without misstating it.

    Attributes
    ----------
    candidate
        The candidate whose units cannot be written (None: the whole audit).
    detail
        Why, for a person.
    """

    def __init__(self, detail: str, *, candidate: str | None = None) -> None:
        self.candidate = candidate
        self.detail = detail
        super().__init__(f"cannot export to every-eval-ever{f' ({candidate})' if candidate else ''}: {detail}")


def _part(name: str, *, empty: str) -> str:
    """``name`` as one folder name of the datastore path (no ``/``); ``empty`` when nothing is left."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or empty


def _paths(dataset: str, candidate: str, evaluation_id: str) -> tuple[str, str]:
    """The record's and its instance file's paths in the datastore layout schema 0.3.0 requires.

    ``data/<benchmark>/<developer>/<model>/<uuid>.json`` and ``…/<uuid>_samples.jsonl``: the developer is
    the candidate's prefix before ``/`` (``unknown`` for a flat name), the model the rest; the uuid (version
    4 form) is derived from the evaluation id, so the same audit writes the same paths.

    Examples
    --------
    >>> _paths("orbit_desk", "openai/gpt-4o-mini", "orbit_desk/openai/gpt-4o-mini/0f3a")[0]
    'data/orbit_desk/openai/gpt-4o-mini/63ab2c60-3b1a-43d1-995e-7c6bf282ea6a.json'
    """
    developer, model = candidate.split("/", 1) if "/" in candidate else ("unknown", candidate)
    stable = uuid.UUID(bytes=hashlib.sha256(evaluation_id.encode("utf-8")).digest()[:16], version=4)
    folder = "/".join(
        (DATASTORE, _part(dataset, empty="evalframe"), _part(developer, empty="unknown"), _part(model, empty="model"))
    )
    return f"{folder}/{stable}.json", f"{folder}/{stable}_samples.jsonl"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _result(
    name: str, dataset: str, rate: str, record: Mapping[str, Any], *, confidence: float, ids: list[str], trials: int
) -> dict[str, Any] | None:
    """One ``evaluation_results`` entry for the summary's ``rate``; None when the rate is undefined (null)."""
    value = _number(record[rate])
    if value is None:
        return None
    denominator = {"pass_rate_scored": "scored", "pass_rate_planned": "planned", "scored_coverage": "planned"}[rate]
    numerator = "passed" if rate.startswith("pass_rate") else "scored"
    uncertainty: dict[str, Any] = {"num_samples": int(record[denominator])}
    low, high = _number(record.get(f"{rate}_ci_low")), _number(record.get(f"{rate}_ci_high"))
    if low is not None and high is not None:
        uncertainty["confidence_interval"] = {
            "lower": low,
            "upper": high,
            "confidence_level": confidence,
            "method": "Wilson on the effective sample size scored / design effect, t(G-1), cases as clusters "
            "(Korn & Graubard 1998); Wilson (1927) with one unit per case",
        }
    se = _number(record.get("pass_rate_scored_se_clustered")) if rate == "pass_rate_scored" else None
    if se is not None:
        uncertainty["standard_error"] = {"value": se, "method": "CR1 cluster-robust by case (Cameron & Miller 2015)"}
    counts = ("planned", "attempted", "completed", "with_output", "scored", "passed", *UNGRADED, "cases_planned")
    details = {c: str(record[c]) for c in counts if record.get(c) is not None}
    for extra in ("design_effect", "effective_n"):
        if _number(record.get(extra)) is not None:
            details[extra] = repr(float(record[extra]))
    if rate == "pass_rate_scored" and record.get("pass_rate_scored_ci_withheld"):
        details["pass_rate_scored_ci_withheld"] = str(record["pass_rate_scored_ci_withheld"])
    return {
        "evaluation_name": name,
        "source_data": {
            "dataset_name": dataset,
            "source_type": "other",
            "sample_ids": ids,
            "samples_number": len(ids),
            "additional_details": {DETAIL_TRIALS: str(trials)},
        },
        "metric_config": {
            "evaluation_description": f"{rate} = {numerator} / {denominator} (evalframe audit)",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
        },
        "score_details": {"score": value, "details": details, "uncertainty": uncertainty},
    }


def _instance(
    unit: Mapping[str, Any], *, evaluation_id: str, candidate: str, dataset: str, slices: Sequence[str]
) -> dict[str, Any]:
    """The instance row of one scored unit (units without a valid grade have none: see the module docstring)."""
    meta = {META_TRIAL: str(unit[TRIAL]), META_EXEC: str(unit[EXEC_STATUS]), META_SCORE: str(unit[SCORE_STATUS])}
    if unit.get(HAS_OUTPUT) is not None:
        meta[META_OUTPUT] = "true" if unit[HAS_OUTPUT] else "false"
    meta |= {s: str(unit[s]) for s in slices if unit.get(s) is not None}
    answer = unit.get("answer")
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": candidate,
        "evaluation_name": dataset,
        "sample_id": str(unit[CASE_ID]),
        "sample_hash": unit.get(CASE_HASH),
        "interaction_type": "single_turn",
        "input": {"raw": "", "reference": [str(unit["expected"])] if unit.get("expected") is not None else []},
        "output": {"raw": [str(answer)] if answer is not None else []},
        "answer_attribution": [],
        "evaluation": {
            "score": float(unit[SCORE] if unit[SCORE] is not None else unit[PASSED]),
            "is_correct": bool(unit[PASSED]),
        },
        "error": None,
        "metadata": meta,
    }


def _ungraded(unit: Mapping[str, Any]) -> dict[str, Any]:
    """One entry of :data:`DETAIL_UNGRADED`: a unit that ran or was skipped and has no valid grade."""
    return {
        "sample_id": str(unit[CASE_ID]),
        "trial": int(unit[TRIAL]),
        "outcome": str(unit[OUTCOME]),
        EXEC_STATUS: str(unit[EXEC_STATUS]),
        SCORE_STATUS: str(unit[SCORE_STATUS]),
        HAS_OUTPUT: unit.get(HAS_OUTPUT),
    }


def left_out(report: AuditReport) -> pl.DataFrame:
    """The units :func:`write` leaves out of the instance rows, counted per candidate and outcome.

    A unit without a valid grade (outcome ``missing``, ``not_started``,
    ``exec_failed``, ``no_output``, ``judge_failed`` or ``not_scored``) has
    no instance row: the schema makes every row carry a score and an
    ``is_correct``, so any row would be read as a wrong answer.

    Parameters
    ----------
    report
        The audit.

    Returns
    -------
    polars.DataFrame
        One row per (candidate, outcome) of :data:`UNGRADED`, in the
        report's candidate order and that outcome order, zero counts
        included: ``candidate`` (String), ``outcome`` (String), ``units``
        (Int64, the number of planned units left out).

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund", "privacy"]}), candidates=["A"])
    >>> ledger = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["quote", "refund"],
    ...                        "exec_status": ["completed", "timeout"], "score_status": ["scored", "not_scored"],
    ...                        "passed": [1, None]})
    >>> left_out(ef.audit(plan, ledger)).filter(pl.col("units") > 0)
    shape: (2, 3)
    ┌───────────┬─────────────┬───────┐
    │ candidate ┆ outcome     ┆ units │
    │ ---       ┆ ---         ┆ ---   │
    │ str       ┆ str         ┆ i64   │
    ╞═══════════╪═════════════╪═══════╡
    │ A         ┆ missing     ┆ 1     │
    │ A         ┆ exec_failed ┆ 1     │
    └───────────┴─────────────┴───────┘
    """
    # The summary counts each of these outcomes per candidate (one unit per row: write refuses retry every),
    # so the units table is not scanned again.
    rows = [(str(r[CANDIDATE]), o, int(r[o])) for r in report.summary.iter_rows(named=True) for o in UNGRADED]
    return pl.DataFrame(rows, schema={CANDIDATE: pl.String, OUTCOME: pl.String, UNITS: pl.Int64}, orient="row")


def write(
    report: AuditReport,
    out: PathLike,
    *,
    inputs: Sequence[PathLike] = (),
    command: str = "python",
    guard: ExchangeGuard = nullcontext,
) -> list[Path]:
    """Write an audit as every_eval_ever records: one aggregate record and one instance file per candidate.

    Parameters
    ----------
    report
        The audit (one counted attempt per unit: retry policy ``first`` or
        ``last_allowed``; binary grades, or numeric ones with a pass
        threshold, since every instance row must say ``is_correct``).
    out
        The folder, evalframe's own (see :func:`evalframe.report.write_output`):
        new, empty or an earlier evalframe output; written whole or not at all.
    inputs
        The audit's input paths, refused inside ``out``.
    command
        What wrote the folder, recorded in its manifest.
    guard
        Entered around the exchange of the folder with its new version
        (see :func:`evalframe.report.write_output`).

    Returns
    -------
    list of pathlib.Path
        The files written (the manifest aside), sorted: per candidate its
        record ``data/<benchmark>/<developer>/<model>/<uuid>.json`` and
        instance file ``…/<uuid>_samples.jsonl`` (the layout schema 0.3.0
        requires of ``file_path``; the benchmark is the task the exports record, when they record one,
        else the plan's file stem). The
        instance file holds one row per scored unit only; the units left out
        (:func:`left_out`) are counted per outcome, and those that ran or
        were skipped listed, in the record's
        ``detailed_evaluation_results.additional_details``.

    Raises
    ------
    ExportError
        When the audit counts several attempts per unit (``every``), has no
        pass verdict (numeric grades without a threshold), or a candidate's
        planned units are not its cases × trials.
    OutputFolderError
        When ``out`` is not evalframe's own or cannot be written.

    Examples
    --------
    >>> import tempfile, evalframe as ef
    >>> from evalframe.importers.every_eval_ever import read
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     names = [p.relative_to(folder).as_posix() for p in write(report, folder)]
    ...     back = read([folder])
    >>> [name.rsplit("/", 1)[0] for name in names], [name.rsplit("/", 1)[1][36:] for name in names]
    (['data/plan/unknown/A', 'data/plan/unknown/A'], ['.json', '_samples.jsonl'])
    >>> back.plan.n_units, back.ledger.select("case_id", "passed").rows()
    (2, [('quote', True)])
    """
    meta = report.meta
    units = _exportable_units(report)
    dataset = _benchmark(meta)
    export = _Export(
        dataset=dataset,
        confidence=float(meta.get("confidence", DEFAULT_CONFIDENCE)),
        slices=[str(s) for s in meta.get("slices") or []],
        stamp=repr(time.time()),
        plan_hash=meta.get("plan_hash", "")[:16],
    )
    texts: dict[str, str] = {}
    for record in report.summary.iter_rows(named=True):
        candidate = str(record[CANDIDATE])
        own = units.filter(pl.col(CANDIDATE) == candidate).sort(CASE_ID, TRIAL)
        evaluation_id = f"{export.dataset}/{candidate}/{export.plan_hash}"
        record_path, instance_path = _paths(export.dataset, candidate, evaluation_id)
        texts[record_path], texts[instance_path] = _candidate_files(
            export, record, own, candidate, evaluation_id=evaluation_id, instance_path=instance_path
        )
    return write_output(out, {}, texts, command=command, outcome="exported", inputs=inputs, guard=guard)


def _benchmark(meta: Mapping[str, Any]) -> str:
    """The benchmark a record is filed under: the one task or scenario the exports record, else the plan's stem.

    Inspect and lm-eval record a task, HELM a scenario; an eval set of three models had been filed under one
    of its logs' file names.
    """
    exports = [e for e in meta.get("exports") or [] if isinstance(e, Mapping)]
    tasks = {str(e.get("task") or e.get("scenario")) for e in exports if e.get("task") or e.get("scenario")}
    if len(tasks) == 1:
        return tasks.pop()
    return Path(str(meta.get("plan_source") or "evalframe")).stem or "evalframe"


def _exportable_units(report: AuditReport) -> pl.DataFrame:
    """The audit's units, when they can be written as one instance row per unit with a verdict; else ``ExportError``."""
    if report.meta.get("retry") == "every":
        raise ExportError(
            "retry policy 'every' counts several attempts per unit; every_eval_ever rows are one per unit"
        )
    units = report.units.lazy().collect()
    if (
        PASSED not in units.columns
        or units.filter(
            (pl.col(SCORE_STATUS) == "scored") & (pl.col(EXEC_STATUS) == "completed") & pl.col(PASSED).is_null()
        ).height
    ):
        raise ExportError("scored units without a pass verdict: every instance row needs is_correct (--pass-threshold)")
    return units


@dataclass(frozen=True)
class _Export:
    """What every record of one export shares."""

    dataset: str
    confidence: float
    slices: list[str]
    stamp: str
    plan_hash: str


def _library_version() -> str:
    try:
        return version("evalframe")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout that was never installed
        return "unknown"


def _candidate_files(
    export: _Export,
    record: Mapping[str, Any],
    own: pl.DataFrame,
    candidate: str,
    *,
    evaluation_id: str,
    instance_path: str,
) -> tuple[str, str]:
    """The aggregate record (JSON text) and instance file (JSON Lines text) of one candidate."""
    ids = own.get_column(CASE_ID).unique(maintain_order=True).to_list()
    trials = int(own.get_column(TRIAL).max() or 1)  # type: ignore[arg-type]
    if own.height != len(ids) * trials:
        raise ExportError(
            f"{own.height} planned units are not its {len(ids)} cases × {trials} trials", candidate=candidate
        )
    dataset = export.dataset
    outcome = own.get_column(OUTCOME).cast(pl.String)
    graded = own.filter(~outcome.is_in(UNGRADED))
    lines = [
        json.dumps(
            _instance(u, evaluation_id=evaluation_id, candidate=candidate, dataset=dataset, slices=export.slices),
            ensure_ascii=False,
        )
        for u in graded.iter_rows(named=True)
    ]
    body = "".join(line + "\n" for line in lines)
    ran = own.filter(outcome.is_in(UNGRADED) & (outcome != "missing"))
    left = {o: int(record[o]) for o in UNGRADED}  # the summary's counts of the units left out
    rows_detail = {
        DETAIL_ROWS: "one row per scored unit; a unit without a valid grade has no row "
        f"(counted per outcome in {DETAIL_LEFT_OUT}.<outcome>; those that ran or were skipped "
        f"listed in {DETAIL_UNGRADED}; missing ones are the planned units with neither)",
        DETAIL_LEFT_OUT: str(sum(left.values())),
        **{f"{DETAIL_LEFT_OUT}.{o}": str(n) for o, n in left.items()},
        DETAIL_UNGRADED: json.dumps([_ungraded(u) for u in ran.iter_rows(named=True)], ensure_ascii=False),
    }
    results = [
        r
        for rate, name in (
            ("pass_rate_scored", dataset),
            ("pass_rate_planned", f"{dataset} pass_rate_planned"),
            ("scored_coverage", f"{dataset} scored_coverage"),
        )
        if (r := _result(name, dataset, rate, record, confidence=export.confidence, ids=ids, trials=trials)) is not None
    ]
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": export.stamp,
        "source_metadata": {
            "source_name": "evalframe audit",
            "source_type": "evaluation_run",
            "source_organization_name": "unknown",
            "evaluator_relationship": "other",
        },
        "eval_library": {"name": "evalframe", "version": _library_version()},
        "model_info": {"name": candidate, "id": candidate, "additional_details": dict(MODEL_DETAILS)},
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": instance_path,
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(body.encode("utf-8")).hexdigest(),
            "total_rows": len(lines),
            "additional_details": rows_detail,
        },
    }
    return json.dumps(aggregate, indent=2, ensure_ascii=False) + "\n", body
