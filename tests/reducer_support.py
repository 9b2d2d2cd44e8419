"""The user's case-reducer repro (plan2.csv, red2.csv): 2 cases × 2 trials; q1 passes both trials, q2 one of two."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import evalframe as ef

PLAN_CSV = "case_id\nq1\nq2\n"
RESULTS_CSV = "candidate,case_id,trial,passed\nA,q1,1,1\nA,q1,2,1\nA,q2,1,1\nA,q2,2,0\n"


def repro_report(reducer: str = "mean", *, trials: int = 2) -> ef.AuditReport:
    """The repro audited with ``reducer``; ``trials=1`` keeps only trial 1 (both cases pass)."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"], trials=trials)
    ledger = pl.read_csv(RESULTS_CSV.encode()).filter(pl.col("trial") <= trials)
    return ef.audit(plan, ledger, reducer=reducer)


def repro_args(folder: Path) -> list[str]:
    """``evalframe audit`` over the repro's files written into ``folder`` (``--trials 2``)."""
    (folder / "plan2.csv").write_text(PLAN_CSV)
    (folder / "red2.csv").write_text(RESULTS_CSV)
    plan, results = str(folder / "plan2.csv"), str(folder / "red2.csv")
    return ["audit", "--plan", plan, "--results", results, "--candidates", "A", "--trials", "2"]
