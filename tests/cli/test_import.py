"""`evalframe import`: an export converted, then audited."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.cli.support import run


def test_import_then_audit_round_trip(tmp_path: Path) -> None:
    from tests.conftest import real

    export = real("inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/log_streaming.eval")
    code, _, _ = run(["import", "inspect", str(export), "--out", str(tmp_path / "imp")])
    assert code == 0
    code, out, _ = run(
        [
            "audit",
            "--plan",
            str(tmp_path / "imp/plan.parquet"),
            "--results",
            str(tmp_path / "imp/ledger.parquet"),
            "--format",
            "json",
        ]
    )
    assert code == 0
    (row,) = json.loads(out)["summary"]
    assert (row["planned"], row["scored"], row["passed"]) == (4, 4, 3)
    # Provenance columns of the ledger still name the original export.
    units = pl.read_parquet(tmp_path / "imp/ledger.parquet")
    assert units.get_column("source").str.contains("log_streaming.eval").all()
