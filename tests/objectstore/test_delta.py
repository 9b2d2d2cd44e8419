"""Delta tables as the ledger (``delta:PATH[@VERSION]``), local and on the S3 server: each version read gives
that version's results, and the version read is named in the report's provenance."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalframe as ef
from tests.cli.support import ORBIT, run
from tests.objectstore.conftest import S3Server, one_error_line, orbit_versions, passed_of_b

deltalake = pytest.importorskip("deltalake", reason="pip install 'evalframe[lakes]'")

#: Orbit Desk's ledger (SPEC §7) is version 0; version 1 overwrites it with B's handoff passed (0 → 1).
V0, V1 = orbit_versions()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local Delta table with the two versions."""
    path = tmp_path_factory.mktemp("delta") / "ledger"
    deltalake.write_deltalake(str(path), V0.to_arrow())
    deltalake.write_deltalake(str(path), V1.to_arrow(), mode="overwrite")
    return path


def plan() -> ef.Plan:
    return ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])


def test_each_version_gives_its_own_results_and_names_itself(table: Path) -> None:
    v0 = ef.audit(plan(), f"delta:{table}@0")
    v1 = ef.audit(plan(), f"delta:{table}@1")
    latest = ef.audit(plan(), f"delta:{table}")
    # Orbit Desk: B passes quote, refund, privacy and fails handoff (3 of 4); version 1 passes handoff too.
    assert (passed_of_b(v0), passed_of_b(v1), passed_of_b(latest)) == (3, 4, 4)
    assert (v0.meta["delta_table"], v0.meta["delta_version"]) == (str(table), 0)
    assert (v1.meta["delta_version"], latest.meta["delta_version"]) == (1, 1)
    assert latest.meta["results_source"] == f"delta:{table}@1"


def test_the_table_on_the_store_is_read_at_each_version(s3: S3Server, table: Path) -> None:
    url = s3.put_tree(table, "delta/ledger")
    v0 = ef.audit(plan(), f"delta:{url}@0", storage_options=s3.options)
    v1 = ef.audit(plan(), f"delta:{url}@1", storage_options=s3.options)
    assert (passed_of_b(v0), passed_of_b(v1)) == (3, 4)
    assert (v0.meta["delta_table"], v0.meta["delta_version"], v1.meta["delta_version"]) == (url, 0, 1)
    assert v1.meta["results_source"] == f"delta:{url}@1"


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ("9", "the table has no version 9: its latest is 1"),
        # before: deltalake probed the log for minutes (2**63 - 1) or said "OverflowError" (beyond 64 bits)
        ("9223372036854775807", "the table has no version 9223372036854775807: its latest is 1"),
        ("99999999999999999999999", "the table has no version 99999999999999999999999: its latest is 1"),
        # before: "²".isdigit() passed and int("²") raised a traceback
        ("²", "the version after @ must be a whole number from 0, not '²'"),
        ("-1", "the version after @ must be a whole number from 0, not '-1'"),
    ],
    ids=["later", "int64-max", "beyond-int64", "superscript", "negative"],
)
def test_a_version_the_table_does_not_have_is_exit_2(table: Path, version: str, said: str) -> None:
    spec = f"delta:{table}@{version}"
    code, out, err = run(["audit", "--plan", str(ORBIT / "plan.csv"), "--results", spec, "--candidates", "A,B"])
    assert one_error_line(code, out, err, spec) == f"error: {spec}: {said}"


def test_the_command_line_names_the_version_in_the_json_report(table: Path) -> None:
    import json

    code, out, err = run(
        [
            "audit",
            "--plan",
            str(ORBIT / "plan.csv"),
            "--results",
            f"delta:{table}@0",
            "--candidates",
            "A,B",
            "--format",
            "json",
        ]
    )
    assert code == 0, err
    meta = json.loads(out)["meta"]
    assert (meta["delta_table"], meta["delta_version"]) == (str(table), 0)
