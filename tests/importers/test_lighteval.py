"""lighteval details Parquet -> plan + ledger (built from the documented schema; fixtures written by evalframe)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from evalframe.cli import main
from evalframe.importers import lighteval
from evalframe.importers._kit import ImportRefused
from tests.conftest import FIXTURES

HERE = FIXTURES / "lighteval"
DOC_LAYOUT = HERE / "details"
FLAT = HERE / "flat"


def audit(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--from", "lighteval", *args])
    return result.exit_code, result.stdout, result.stderr


def test_two_models_on_the_same_documents_with_a_nan_as_a_grader_failure() -> None:
    code, out, err = audit(str(DOC_LAYOUT), "--format", "json")
    assert code == 0, err
    summary = {r["candidate"]: r for r in json.loads(out)["summary"]}
    names = ("planned", "scored", "passed", "judge_failed", "missing")
    assert {c: tuple(r[k] for k in names) for c, r in summary.items()} == {
        "toy-org/model-a": (4, 3, 2, 1, 0),
        "toy-org/model-b": (4, 4, 3, 0, 0),
    }


def test_case_ids_are_task_and_document_id_and_the_task_is_a_slice() -> None:
    imported = lighteval.read([DOC_LAYOUT])
    assert imported.plan.cases.rows() == [(f"lighteval|gsm8k|0/{i}", "lighteval|gsm8k|0") for i in range(4)]
    assert [i["date_id"] for i in imported.info] == ["2025-06-01T10-00-00.000000", "2025-06-01T11-00-00.000000"]
    assert {i["layout"] for i in imported.info} == {"doc/metric"}


def test_the_older_flat_layout_hashes_the_query_and_needs_a_metric_choice() -> None:
    with pytest.raises(ImportRefused) as exc:
        lighteval.read([FLAT])
    assert exc.value.problems.get_column("detail").to_list() == [
        "2 metrics in the export (acc, acc_norm) and none declared: name one with --score"
    ]
    imported = lighteval.read([FLAT], score="acc_norm")
    assert imported.info[0]["layout"] == "flat"
    assert imported.ledger.select("case_id", "score").sort("score").get_column("score").to_list() == [0.0, 1.0, 1.0]
    assert all(
        c.startswith("leaderboard|arc:challenge|25/") and len(c) == 29 + 12
        for c in imported.plan.cases.get_column("case_id")
    )


def test_a_file_that_is_not_parquet_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "details_x_2025-01-01T00-00-00.parquet"
    path.write_text("not parquet", encoding="utf-8")
    code, out, err = audit(str(path))
    assert (code, out) == (2, "")
    assert " ".join(err.split()).startswith(f"error: {path}: not a readable Parquet file (")


def test_a_parquet_file_without_metrics_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "details_x_2025-01-01T00-00-00.parquet"
    pl.DataFrame({"example": ["q"], "predictions": [["a"]]}).write_parquet(path)
    code, _, err = audit(str(path))
    assert (code, " ".join(err.split())) == (
        2,
        f"error: {path}: not a lighteval details file: no doc and metric columns (lighteval >= 0.10) nor a "
        "metrics column",
    )
    pl.DataFrame({"example": ["q"], "metrics": [0.5]}).write_parquet(path)
    code, _, err = audit(str(path))
    assert (code, " ".join(err.split())) == (2, f"error: {path}: the metrics column is not a struct of metric values")
