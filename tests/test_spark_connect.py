"""The audit on Spark Connect: a local Connect server (the pyspark wheel's sbin/start-connect-server.sh,
``local[2]`` on 127.0.0.1) started for the module; the tables (slices too) equal the polars audit's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalframe as ef
from tests.spark_support import GEN, LEDGER, ORBIT, assert_same_audit, frame_of, generated, needs_spark

pytestmark = [
    needs_spark,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import pyspark
    from pyspark.sql import SparkSession

    home = Path(pyspark.__file__).parent
    state = tmp_path_factory.mktemp("connect-server")
    port = _free_port()
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_PID_DIR": str(state),
        "SPARK_LOG_DIR": str(state),
        "SPARK_IDENT_STRING": f"evalframe-{port}",
    }
    conf = [
        "--master", "local[2]",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=2",
    ]  # fmt: skip
    subprocess.run([str(home / "sbin" / "start-connect-server.sh"), *conf], env=env, check=True, capture_output=True)
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in state.glob("*.out"))
                    pytest.fail(f"the Spark Connect server did not listen on {port}:\n{logs}")
                time.sleep(1)
        session = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
        yield session
        session.stop()
    finally:
        subprocess.run([str(home / "sbin" / "stop-connect-server.sh")], env=env, capture_output=True)


def test_connect_is_a_remote_session(connect: Any) -> None:
    assert type(connect).__module__.startswith("pyspark.sql.connect")


def test_orbit_desk_on_spark_connect(connect: Any, tmp_path: Path) -> None:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    kind, report = assert_same_audit(connect, plan, frame_of(ORBIT / "results.csv"), tmp_path)
    assert isinstance(report, ef.AuditReport)
    assert report.summary.select("candidate", "scored", "passed").rows() == [("A", 2, 2), ("B", 4, 3)]


def test_status_ledger_on_spark_connect(connect: Any, tmp_path: Path) -> None:
    plan = ef.Plan.from_file(LEDGER / "plan.csv", candidates=["agent"])
    frame = frame_of(LEDGER / "results.csv").with_columns(
        pl.col("score").replace("", None).cast(pl.Float64), pl.col("has_output") == "true"
    )
    kind, report = assert_same_audit(connect, plan, frame, tmp_path)
    assert isinstance(report, ef.AuditReport)
    assert report.summary.select("scored", "passed", "judge_failed").row(0) == (2, 1, 1)


@pytest.mark.parametrize("retry", ["last_allowed"])
def test_generated_ledger_on_spark_connect(
    connect: Any, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, retry: str
) -> None:
    if not GEN.exists():
        pytest.skip("needs ../shared/tools/gen_ledger.py beside the repository (CI has it)")
    plan, frame, manifest = generated(tmp_path_factory.mktemp("g"), 20_000, 5, unknown=0, dups=0, retries=0.1)
    kind, report = assert_same_audit(connect, plan, frame, tmp_path, retry=retry, slices=["case_type"])
    assert isinstance(report, ef.AuditReport)
    assert int(report.summary.get_column("missing").sum()) == manifest["truth"]["missing_pairs"]
    by_type = report.slices.group_by("slice_value").agg(pl.sum("missing"))
    assert dict(by_type.iter_rows()) == manifest["truth"]["missing_by_case_type"]
