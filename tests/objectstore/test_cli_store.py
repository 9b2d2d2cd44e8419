"""``evalframe audit`` with URLs: the same report as the local files; a missing, denied or unreachable store is
exit 2 with one line naming the URL and no secret."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.cli.support import ORBIT, run
from tests.objectstore.conftest import SECRET, S3Server, assert_same_outputs, closed_port


def store_args(s3: S3Server) -> list[str]:
    return [f"--storage-option={k}={v}" for k, v in s3.options.items()]


def test_the_json_report_from_the_store_is_the_local_one(s3: S3Server, tmp_path: Path) -> None:
    plan = s3.put("cli/orbit/plan.csv", (ORBIT / "plan.csv").read_bytes())
    results = s3.put("cli/orbit/results.csv", (ORBIT / "results.csv").read_bytes())
    local_args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv")]
    code, local, _ = run([*local_args, "--candidates", "A,B", "--format", "json", "--out", str(tmp_path / "l")])
    assert code == 0
    args = ["audit", "--plan", plan, "--results", results, "--candidates", "A,B", *store_args(s3)]
    code, remote, err = run([*args, "--format", "json", "--out", str(tmp_path / "r")])
    assert code == 0, err
    assert SECRET not in remote
    names = {"s3://evals/cli/orbit/": f"{ORBIT}/"}
    assert json.loads(remote.replace(*next(iter(names.items())))) == json.loads(local)
    assert_same_outputs(tmp_path / "l", tmp_path / "r", names)
