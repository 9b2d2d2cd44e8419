"""The engines of the audit benchmark, each run in its own child process.

Run as a script by ``bench_audit.py``::

    python benchmarks/engines.py ENGINE DATA_DIR LAYOUT OUT_JSON [--partition]

``ENGINE`` is ``evalframe``, ``duckdb``, ``pandas`` or ``floor``; ``LAYOUT`` is
``file`` (``plan.parquet`` + ``results.parquet``) or ``lake`` (``plan_hive/`` +
``results_hive/``). Every engine does the audit's work on the same files and
writes the same *findings* to ``OUT_JSON``:

* ``missing_units``: planned units with no ledger row (anti-join plan → ledger);
* ``unknown_rows`` / ``unknown_keys``: ledger rows (and their distinct attempt
  keys) whose (candidate, case_id, trial) is not planned (anti-join ledger → plan);
* ``dup_rows`` / ``dup_keys`` / ``dup_keys_planned``: rows of attempt keys
  (candidate, case_id, trial, attempt) that occur more than once, those keys,
  and those of them that are planned units;
* ``refused``: whether unknown rows, duplicate keys or invalid values refuse
  the batch (then, as in evalframe, no attempt is selected and no rate exists);
* when not refused: ``retried_units`` (units with more than one attempt
  number), ``ledger_rows`` and ``funnel`` (one dict per candidate: the SPEC §2
  counts and rates, first attempt counted).

Only the imports an engine needs are made, inside the engine, so that import
time and memory belong to that engine alone.

The ``duckdb`` engine is straightforward SQL (temp tables, anti-joins, ``GROUP BY``), written
with the repository and not tuned for DuckDB; the baseline to measure evalframe against is the
expert-written ``../shared/tools/duckdb_audit.py``, run by ``bench_command.py``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

Findings = dict[str, Any]

#: Funnel counts compared between engines (SPEC §2), in funnel order.
COUNTS = (
    "planned",
    "attempted",
    "completed",
    "with_output",
    "scored",
    "passed",
    "missing",
    "exec_failed",
    "judge_failed",
)
#: Funnel rates compared between engines (fractions of the named denominator).
RATES = ("completion_rate", "scored_coverage", "pass_rate_scored", "pass_rate_planned", "pass_rate_upper")
EXEC_STATUSES = ("completed", "timeout", "error", "not_started")
#: ``unscored`` is the generator's spelling of ``not_scored``; evalframe accepts both.
SCORE_STATUSES = ("scored", "judge_error", "not_scored", "unscored")


def paths(data: Path, layout: str) -> tuple[Path, Path]:
    """(plan, results) paths of one dataset in one layout."""
    if layout == "file":
        return data / "plan.parquet", data / "results.parquet"
    return data / "plan_hive", data / "results_hive"


def rates(row: dict[str, Any]) -> dict[str, Any]:
    """Add the SPEC §2 rates to a dict of funnel counts (same float arithmetic as evalframe)."""
    planned, scored, passed = float(row["planned"]), row["scored"], row["passed"]
    return {
        **row,
        "completion_rate": row["completed"] / planned if planned else None,
        "scored_coverage": scored / planned if planned else None,
        "pass_rate_scored": passed / float(scored) if scored else None,
        "pass_rate_planned": passed / planned if planned else None,
        "pass_rate_upper": (passed + planned - scored) / planned if planned else None,
    }


# --- evalframe ------------------------------------------------------------------


def run_evalframe(data: Path, layout: str, *, partition: bool) -> tuple[Findings, dict[str, float]]:
    """Plan load + ``ef.audit``; on refusal, findings come from ``AuditRefused.problems``."""
    t0 = time.perf_counter()
    import polars as pl

    import evalframe as ef

    t1 = time.perf_counter()
    plan_path, results_path = paths(data, layout)
    plan = ef.Plan.from_file(plan_path)
    t2 = time.perf_counter()
    kwargs: dict[str, Any] = {"partition_by": "candidate"} if partition else {}
    report: ef.AuditReport | None = None
    try:
        report = ef.audit(plan, results_path, **kwargs)
        problems = report.problems
    except ef.AuditRefused as refused:
        problems = refused.problems
    t3 = time.perf_counter()

    key = ["candidate", "case_id", "trial", "attempt"]
    unknown_kinds = ["unknown_candidate", "unknown_case", "trial_out_of_range", "unknown_unit"]
    unknown = problems.filter(pl.col("kind").is_in(unknown_kinds))
    dups = problems.filter(pl.col("kind") == "duplicate_key")
    dup_keys = dups.select(key).unique()
    kinds = dict(problems.group_by("kind").len().sort("kind").iter_rows())
    findings: Findings = {
        "missing_units": int(kinds.get("missing_unit", 0)),
        "unknown_rows": unknown.height,
        "unknown_keys": unknown.select(key).n_unique() if unknown.height else 0,
        "dup_rows": dups.height,
        "dup_keys": dup_keys.height,
        "dup_keys_planned": dup_keys.join(unknown.select(key).unique(), on=key, how="anti").height,
        "refused": report is None,
        "problem_kinds": {str(k): int(v) for k, v in kinds.items()},
        "refusing_kinds": sorted(problems.filter(pl.col("refusing")).get_column("kind").unique().to_list()),
    }
    if report is not None:
        summary = report.summary.sort("candidate")
        findings["retried_units"] = report.units.lazy().filter(pl.col("attempts") > 1).select(pl.len()).collect().item()
        findings["ledger_rows"] = int(report.meta["ledger_rows"])
        findings["funnel"] = summary.select("candidate", *COUNTS, *RATES).to_dicts()
    phases = {"import": t1 - t0, "plan": t2 - t1, "audit": t3 - t2, "work": t3 - t1}
    return findings, phases


# --- DuckDB ---------------------------------------------------------------------

_OUTCOME_CODE = """
    CASE
        WHEN exec_status = 'not_started' THEN 1
        WHEN exec_status IN ('timeout', 'error') THEN 2
        WHEN score_status = 'judge_error' THEN 4
        WHEN score_status <> 'scored' THEN 5
        WHEN score = 1 THEN 8
        ELSE 7
    END
"""
"""One integer per attempt (0 would be missing): not_started 1, exec_failed 2,
judge_failed 4, not_scored 5, failed 7, passed 8. The ledger has no
``has_output`` column, so a completed attempt has output (no_output 3 never occurs)."""


def _duckdb_source(path: Path) -> str:
    if path.is_dir():
        return f"read_parquet('{path}/**/*.parquet', hive_partitioning = true)"
    return f"read_parquet('{path}')"


def run_duckdb(data: Path, layout: str) -> tuple[Findings, dict[str, float]]:
    """Hand-written SQL: anti-joins, GROUP BY … HAVING, first attempt by arg_min, funnel by FILTER."""
    t0 = time.perf_counter()
    import duckdb

    t1 = time.perf_counter()
    plan_path, results_path = paths(data, layout)
    con = duckdb.connect()
    con.execute(f"CREATE TEMP TABLE plan AS SELECT candidate, case_id, trial FROM {_duckdb_source(plan_path)}")
    con.execute(
        "CREATE TEMP TABLE ledger AS SELECT candidate, case_id, trial, attempt, run_id, exec_status, score_status,"
        f" score FROM {_duckdb_source(results_path)}"
    )
    t2 = time.perf_counter()

    def one(sql: str) -> Any:
        row = con.execute(sql).fetchone()
        assert row is not None
        return row[0] if len(row) == 1 else row

    execs, scores = ", ".join(f"'{s}'" for s in EXEC_STATUSES), ", ".join(f"'{s}'" for s in SCORE_STATUSES)
    invalid = one(
        f"""SELECT count(*) FROM ledger WHERE
        candidate IS NULL OR case_id IS NULL OR trim(case_id) <> case_id OR case_id = '' OR trial IS NULL
        OR attempt IS NULL OR attempt < 1 OR exec_status NOT IN ({execs}) OR score_status NOT IN ({scores})
        OR score NOT IN (0, 1) OR (score_status = 'scored') <> (score IS NOT NULL)
        OR (score_status = 'scored' AND exec_status <> 'completed')"""
    )
    # Problem rows are materialised, as evalframe's problems table is.
    con.execute(
        "CREATE TEMP TABLE unknown AS SELECT l.* FROM ledger l ANTI JOIN plan p USING (candidate, case_id, trial)"
    )
    con.execute(
        "CREATE TEMP TABLE dup AS SELECT candidate, case_id, trial, attempt, count(*) AS n FROM ledger"
        " GROUP BY candidate, case_id, trial, attempt HAVING count(*) > 1"
    )
    con.execute(
        "CREATE TEMP TABLE missing AS SELECT p.* FROM plan p ANTI JOIN ledger l USING (candidate, case_id, trial)"
    )
    unknown_rows, unknown_keys = one(
        "SELECT count(*), count(DISTINCT (candidate, case_id, trial, attempt)) FROM unknown"
    )
    dup_rows, dup_keys = one("SELECT coalesce(sum(n), 0), count(*) FROM dup")
    dup_keys_planned = one("SELECT count(*) FROM dup SEMI JOIN plan USING (candidate, case_id, trial)")
    findings: Findings = {
        "missing_units": one("SELECT count(*) FROM missing"),
        "unknown_rows": unknown_rows,
        "unknown_keys": unknown_keys,
        "dup_rows": int(dup_rows),
        "dup_keys": dup_keys,
        "dup_keys_planned": dup_keys_planned,
        "invalid_rows": invalid,
        "refused": bool(unknown_rows or dup_keys or invalid),
    }
    t3 = time.perf_counter()
    if not findings["refused"]:
        con.execute(
            f"""CREATE TEMP TABLE units AS
            SELECT candidate, case_id, trial, arg_min({_OUTCOME_CODE}, attempt) AS code,
                   min(attempt) <> max(attempt) AS retried
            FROM ledger GROUP BY candidate, case_id, trial"""
        )
        funnel = con.execute(
            """SELECT p.candidate,
                count(*) AS planned,
                count(*) FILTER (u.code >= 2) AS attempted,
                count(*) FILTER (u.code >= 3) AS completed,
                count(*) FILTER (u.code >= 4) AS with_output,
                count(*) FILTER (u.code >= 7) AS scored,
                count(*) FILTER (u.code = 8) AS passed,
                count(*) FILTER (u.code IS NULL) AS missing,
                count(*) FILTER (u.code = 2) AS exec_failed,
                count(*) FILTER (u.code = 4) AS judge_failed
            FROM plan p LEFT JOIN units u USING (candidate, case_id, trial)
            GROUP BY p.candidate ORDER BY p.candidate"""
        ).fetchall()
        names = ["candidate", *COUNTS]
        findings["funnel"] = [rates(dict(zip(names, row, strict=True))) for row in funnel]
        findings["retried_units"] = one("SELECT count(*) FROM units WHERE retried")
        findings["ledger_rows"] = one("SELECT count(*) FROM ledger")
    t4 = time.perf_counter()
    con.close()
    phases = {"import": t1 - t0, "load": t2 - t1, "checks": t3 - t2, "funnel": t4 - t3, "work": t4 - t1}
    return findings, phases


# --- pandas ---------------------------------------------------------------------


def run_pandas(data: Path, layout: str) -> tuple[Findings, dict[str, float]]:
    """The same work with pandas merges (indicator) and groupby."""
    t0 = time.perf_counter()
    import numpy as np
    import pandas as pd

    t1 = time.perf_counter()
    plan_path, results_path = paths(data, layout)
    unit, akey = ["candidate", "case_id", "trial"], ["candidate", "case_id", "trial", "attempt"]
    plan = pd.read_parquet(plan_path, columns=unit)
    ledger = pd.read_parquet(results_path)
    for frame in (plan, ledger):
        if not pd.api.types.is_string_dtype(frame["candidate"]):  # a hive partition column is categorical
            frame["candidate"] = frame["candidate"].astype(str)
    t2 = time.perf_counter()

    invalid = int(
        (
            ledger["case_id"].isna()
            | ~ledger["exec_status"].isin(EXEC_STATUSES)
            | ~ledger["score_status"].isin(SCORE_STATUSES)
            | (ledger["score"].notna() & ~ledger["score"].isin([0, 1]))
            | ((ledger["score_status"] == "scored") != ledger["score"].notna())
            | ((ledger["score_status"] == "scored") & (ledger["exec_status"] != "completed"))
        ).sum()
    )
    in_plan = ledger[unit].merge(plan.assign(_planned=True), on=unit, how="left")["_planned"].notna().to_numpy()
    unknown = ledger.loc[~in_plan]
    dup_mask = ledger.duplicated(subset=akey, keep=False)
    dups = ledger.loc[dup_mask, akey]
    dup_keys = dups.drop_duplicates()
    dup_planned = dup_keys.merge(plan, on=unit, how="inner")
    seen = ledger[unit].drop_duplicates()
    missing = plan.merge(seen, on=unit, how="left", indicator=True)
    missing = missing.loc[missing["_merge"] == "left_only", unit]
    findings: Findings = {
        "missing_units": len(missing),
        "unknown_rows": len(unknown),
        "unknown_keys": len(unknown[akey].drop_duplicates()),
        "dup_rows": len(dups),
        "dup_keys": len(dup_keys),
        "dup_keys_planned": len(dup_planned),
        "invalid_rows": invalid,
    }
    findings["refused"] = bool(findings["unknown_rows"] or findings["dup_keys"] or invalid)
    t3 = time.perf_counter()
    if not findings["refused"]:
        ex, sc = ledger["exec_status"], ledger["score_status"]
        ledger["code"] = np.select(
            [
                ex == "not_started",
                ex.isin(["timeout", "error"]),
                sc == "judge_error",
                sc != "scored",
                ledger["score"] == 1,
            ],
            [1, 2, 4, 5, 8],
            default=7,
        )
        # One groupby gives the first attempt (by its row label) and whether the unit has several attempt numbers.
        span = ledger.groupby(unit, sort=False)["attempt"].agg(["min", "max", "idxmin"])
        retried = int((span["min"] != span["max"]).sum())
        first = ledger.loc[span["idxmin"].to_numpy(), [*unit, "code"]]
        units = plan.merge(first, on=unit, how="left")
        code = units["code"]
        flags = pd.DataFrame(
            {
                "candidate": units["candidate"],
                "planned": 1,
                "attempted": code >= 2,
                "completed": code >= 3,
                "with_output": code >= 4,
                "scored": code >= 7,
                "passed": code == 8,
                "missing": code.isna(),
                "exec_failed": code == 2,
                "judge_failed": code == 4,
            }
        )
        table = flags.groupby("candidate", sort=True).sum()
        findings["funnel"] = [
            rates({"candidate": str(c), **{k: int(v) for k, v in row.items()}}) for c, row in table.iterrows()
        ]
        findings["retried_units"] = retried
        findings["ledger_rows"] = len(ledger)
    t4 = time.perf_counter()
    phases = {"import": t1 - t0, "load": t2 - t1, "checks": t3 - t2, "funnel": t4 - t3, "work": t4 - t1}
    return findings, phases


# --- the floor --------------------------------------------------------------------


def run_floor(data: Path, layout: str) -> tuple[Findings, dict[str, float]]:
    """Read every column of plan and ledger with pyarrow, and nothing else."""
    t0 = time.perf_counter()
    import pyarrow.parquet as pq

    t1 = time.perf_counter()
    plan_path, results_path = paths(data, layout)
    plan = pq.read_table(plan_path)
    ledger = pq.read_table(results_path)
    t2 = time.perf_counter()
    findings: Findings = {"plan_rows": plan.num_rows, "ledger_rows": ledger.num_rows}
    return findings, {"import": t1 - t0, "read": t2 - t1, "work": t2 - t1}


def main() -> None:
    """Run one engine on one dataset and write its findings and phase times as JSON."""
    t_start = time.perf_counter()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine", choices=["evalframe", "duckdb", "pandas", "floor"])
    ap.add_argument("data", type=Path)
    ap.add_argument("layout", choices=["file", "lake"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--partition", action="store_true", help="evalframe: partition_by='candidate'")
    a = ap.parse_args()
    if a.engine == "evalframe":
        findings, phases = run_evalframe(a.data, a.layout, partition=a.partition)
    elif a.engine == "duckdb":
        findings, phases = run_duckdb(a.data, a.layout)
    elif a.engine == "pandas":
        findings, phases = run_pandas(a.data, a.layout)
    else:
        findings, phases = run_floor(a.data, a.layout)
    phases["child_total"] = time.perf_counter() - t_start
    a.out.write_text(json.dumps({"findings": findings, "phases": phases}, default=str))


if __name__ == "__main__":
    main()
