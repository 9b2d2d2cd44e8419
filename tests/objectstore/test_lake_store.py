"""A 20-candidate hive lake of ../shared/tools/gen_ledger.py on the S3 server: the audit from the store is the
local audit, and one candidate's partition is read without a GET to any other partition's files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.support import run
from tests.conftest import ROOT
from tests.objectstore.conftest import S3Server, assert_same_outputs

GEN = ROOT.parent / "shared" / "tools" / "gen_ledger.py"
CANDIDATES = 20
PREFIX = "lakes/gen"


@pytest.fixture(scope="module")
def lake(s3: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded 20-candidate ledger (hive lakes of plan and results), locally and at s3://evals/lakes/gen/."""
    if not GEN.exists():
        pytest.skip("needs ../shared/tools/gen_ledger.py, which is not laid beside the repository (CI has it)")
    out = tmp_path_factory.mktemp("lake") / "g"
    args = [str(GEN), str(out), "--rows", "20000", "--candidates", str(CANDIDATES), "--layout", "hive"]
    subprocess.run([sys.executable, *args, "--seed", "7"], check=True, capture_output=True)
    s3.put_tree(out, PREFIX)
    return out


def store_args(s3: S3Server) -> list[str]:
    return [f"--storage-option={k}={v}" for k, v in s3.options.items()]


def test_the_whole_lake_from_the_store_is_the_local_audit(s3: S3Server, lake: Path, tmp_path: Path) -> None:
    url = f"s3://evals/{PREFIX}"
    local = ["audit", "--plan", str(lake / "plan_hive"), "--results", str(lake / "results_hive")]
    remote = ["audit", "--plan", f"{url}/plan_hive", "--results", f"{url}/results_hive", *store_args(s3)]
    code_l, _, err_l = run([*local, "--slice", "case_type", "--out", str(tmp_path / "l")])
    code_r, _, err_r = run([*remote, "--slice", "case_type", "--out", str(tmp_path / "r")])
    assert (code_l, code_r) == (1, 1), (err_l, err_r)  # the generator injects unknown and duplicate rows
    assert_same_outputs(tmp_path / "l", tmp_path / "r", {url: str(lake)})


def test_one_candidates_partition_is_read_without_touching_the_others(s3: S3Server, lake: Path, tmp_path: Path) -> None:
    # A wildcard in the partition's own folder keeps its key a column (the files hold no candidate column);
    # the LIST is of that prefix, and only the matching partition's files are read.
    one = "candidate=model_07"
    url = f"s3://evals/{PREFIX}"
    plan, results = f"{url}/plan_hive/{one}*/*.parquet", f"{url}/results_hive/{one}*/*.parquet"
    s3.requests.clear()
    code, _, err = run(["audit", "--plan", plan, "--results", results, *store_args(s3), "--out", str(tmp_path / "r")])
    data_gets = [k for k in s3.gets(PREFIX) if k.endswith(".parquet")]
    assert data_gets, "the partition's own files were read"
    assert {k.split("/")[-2] for k in data_gets} == {one}
    others = [k for m, k in s3.requests if k.startswith(PREFIX) and one not in k]
    assert others == []
    local = [
        "audit",
        "--plan",
        f"{lake}/plan_hive/{one}*/*.parquet",
        "--results",
        f"{lake}/results_hive/{one}*/*.parquet",
    ]
    code_l, _, _ = run([*local, "--out", str(tmp_path / "l")])
    assert code == code_l == 1, err  # the generator's unknown and duplicate rows refuse the batch
    assert_same_outputs(tmp_path / "l", tmp_path / "r", {url: str(lake)})
