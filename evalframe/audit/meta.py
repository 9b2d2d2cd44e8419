"""``report.meta``: what was audited, against what, under which declared options, for every engine."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from evalframe._version import evalframe_version
from evalframe.audit.step import Options
from evalframe.plan import Plan


def audit_meta(
    plan: Plan,
    o: Options,
    *,
    source: str,
    shape: str,
    rows: int,
    run_ids: Iterable[str],
    alpha: float,
    provenance: Mapping[str, Any] | None,
    **engine: Any,
) -> dict[str, Any]:
    """The report's meta (see :class:`~evalframe.report.model.AuditReport`), the same keys whichever engine ran.

    Parameters
    ----------
    plan, o
        The plan and the audit's declared options.
    source
        What the results were read from (a path, or ``"results"`` for a frame).
    shape
        The ledger's shape (``status``, ``grades``, ``answers`` or ``unknown``).
    rows
        Ledger rows read.
    run_ids
        The run ids the ledger's rows name.
    alpha
        Significance level of the selective-missingness test.
    provenance
        Extra facts recorded last (e.g. what an importer read).
    **engine
        What the engine adds, after ``run_ids``: on polars ``partition_by`` and
        ``partition_folders_ignored``, on Spark ``engine``, ``tables`` and ``problem_counts``.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["q"]}), candidates=["A"])
    >>> o = Options("first", None, ("timeout", "error"), False, "report", "binary", (0.0, 1.0), None)
    >>> meta = audit_meta(plan, o, source="results", shape="grades", rows=1, run_ids=[], alpha=0.05,
    ...                   provenance=None, partition_by=None)
    >>> (meta["planned_units"], meta["ledger_rows"], meta["partition_by"], meta["retry"])
    (1, 1, None, 'first')
    """
    versions = plan.cases.get_column("dataset_version", default=pl.Series([], dtype=pl.String))
    return {
        "evalframe_version": evalframe_version(),
        "plan_source": plan.source,
        "plan_hash": plan.plan_hash,
        "n_cases": plan.cases.height,
        "candidates": list(plan.candidates),
        "trials": plan.trials,
        "planned_units": plan.n_units,
        "required_run_id": plan.run_id,
        "dataset_versions": sorted(str(v) for v in versions.unique().drop_nulls()),
        "results_source": source,
        "ledger_shape": shape,
        "ledger_rows": rows,
        "run_ids": sorted(set(run_ids)),
        **engine,
        "retry": o.retry,
        "case_reducer": o.reducer,
        "max_attempts": o.max_attempts,
        "retry_on": list(o.retry_on),
        "missing": o.missing,
        "grade": o.grade,
        "score_range": list(o.score_range),
        "pass_threshold": o.pass_threshold,
        "slices": list(o.slices),
        "bins": {name: [float(edge) for edge in edges] for name, edges in (o.bins or {}).items()},
        "alpha": alpha,
        "confidence": o.confidence,
        "cases": o.cases,
        **(provenance or {}),
    }
