"""The least work an audit of a clean status ledger can do in polars: the floor evalframe's audit stands on.

It does only what ``../shared/tools/duckdb_audit.py fast`` does on a clean batch, on integer codes from the
first step, and nothing evalframe adds: the status and grade values are checked (a count, not a list),
rows are coded against the plan (case ids cast to an Enum of the plan's ids), unknown rows and duplicate
keys are counted, the first attempt of each unit counts, and each planned unit gets its outcome and the
funnel counts per candidate. No pandera, no line numbers, no problem rows, no intervals, no per-case sums,
no slices, no missing case ids, no units or attempts table. Candidates run four at a time on threads (as
evalframe's by-candidate audit does), each read with the candidate filter pushed into the Parquet reader.

    python benchmarks/polars_floor_audit.py PLAN RESULTS [--out DIR]

``--out DIR`` writes ``summary.parquet`` (the counts ``bench_command.py`` compares with DuckDB's). A
benchmark, not a tool: it assumes a units-table plan of ``candidate, case_id, trial`` as the generator
writes it, and exits 1 when the batch is not clean (a check failed), since what a refused batch costs is
not what it measures.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

EXEC = ["completed", "timeout", "error", "not_started"]
SCORE = ["scored", "judge_error", "not_scored", "unscored"]
#: Outcome codes, in the order of DuckDB's ``OCODE`` (0: no row).
OUTCOMES = [
    "missing",
    "not_started",
    "exec_failed",
    "no_output",
    "judge_failed",
    "not_scored",
    "scored_no_threshold",
    "passed",
    "failed",
]
#: Bits of the trial in a unit code (case code << TRIAL_BITS | trial).
TRIAL_BITS = 16


def outcome() -> pl.Expr:
    """A unit's outcome code from its counted attempt's statuses and score (null statuses: no row)."""
    ex, ss, sc = pl.col("exec_status"), pl.col("score_status"), pl.col("score")
    return (
        pl.when(ex.is_null())
        .then(0)
        .when(ex == "not_started")
        .then(1)
        .when(ex.is_in(["timeout", "error"]))
        .then(2)
        .when(ex != "completed")
        .then(3)
        .when(ss == "judge_error")
        .then(4)
        .when(ss != "scored")
        .then(5)
        .when(sc.is_null())
        .then(6)
        .when(sc == 1)
        .then(7)
        .otherwise(8)
        .cast(pl.UInt8)
        .alias("o")
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plan")
    ap.add_argument("results")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    plan = pl.read_parquet(a.plan, columns=["candidate", "case_id", "trial"])
    cases = pl.Enum(plan.get_column("case_id").unique().sort())
    if plan.get_column("trial").max() >= 2**TRIAL_BITS:  # type: ignore[operator]
        raise SystemExit("trial numbers too large for this benchmark's unit code")

    def unit(rows: pl.LazyFrame | pl.DataFrame) -> pl.Expr:
        code = pl.col("case_id").cast(cases, strict=False).to_physical().cast(pl.Int64)
        return (code * 2**TRIAL_BITS + pl.col("trial")).alias("_u")

    planned = plan.select("candidate", unit(plan))
    names = sorted(planned.get_column("candidate").unique().to_list())

    def one(name: str) -> tuple[str, int, pl.DataFrame]:
        rows = pl.scan_parquet(a.results).filter(pl.col("candidate") == name).collect()
        bad = rows.select(
            (
                ~pl.col("exec_status").is_in(EXEC)
                | ~pl.col("score_status").is_in(SCORE)
                | (pl.col("score").is_not_null() & ~pl.col("score").is_in([0, 1]))
                | pl.col("case_id").is_null()
                | pl.col("trial").is_null()
                | pl.col("attempt").is_null()
            ).sum()
        ).item()
        coded = (
            rows.lazy()
            .select(unit(rows), "attempt", pl.col("exec_status").cast(pl.Enum(EXEC)), pl.col("score_status"), "score")
            .sort("_u", "attempt")
            .collect()
        )
        mine = planned.lazy().filter(pl.col("candidate") == name).select("_u")
        unknown = coded.lazy().join(mine, on="_u", how="anti").select(pl.len()).collect().item()
        repeated = coded.select(
            ((pl.col("_u") == pl.col("_u").shift(1)) & (pl.col("attempt") == pl.col("attempt").shift(1))).sum()
        ).item()
        first = coded.filter(pl.col("_u") != pl.col("_u").shift(1).fill_null(-1))
        counts = mine.join(first.lazy(), on="_u", how="left").select(outcome()).group_by("o").len().collect()
        return name, bad + unknown + repeated, counts

    with ThreadPoolExecutor(4) as pool:
        parts = list(pool.map(one, names))
    refused = sum(n for _, n, _ in parts)
    if refused:
        print(f"not a clean batch: {refused} rows fail a check", file=sys.stderr)
        return 1
    rows = []
    for name, _, counts in parts:
        n = dict(counts.iter_rows())
        k = {o: n.get(i, 0) for i, o in enumerate(OUTCOMES)}
        planned_n = sum(k.values())
        graded = k["scored_no_threshold"] + k["passed"] + k["failed"]
        output = graded + k["judge_failed"] + k["not_scored"]
        rows.append(
            {
                "candidate": name,
                "planned": planned_n,
                "attempted": planned_n - k["missing"] - k["not_started"],
                "completed": output + k["no_output"],
                "with_output": output,
                "scored": graded,
                "passed": k["passed"],
                "missing": k["missing"],
                "exec_failed": k["exec_failed"],
            }
        )
    summary = pl.DataFrame(rows)
    if a.out is not None:
        a.out.mkdir(parents=True, exist_ok=True)
        summary.write_parquet(a.out / "summary.parquet")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
