"""Iceberg tables as the ledger (``iceberg:METADATA_JSON[@SNAPSHOT_ID]``): each snapshot read gives its own
results, named in the report's provenance. The table is written by pyiceberg's SQLite catalog in a temporary
folder (no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalframe as ef
from tests.cli.support import ORBIT, run
from tests.objectstore.conftest import one_error_line, orbit_versions, passed_of_b

pytest.importorskip("pyiceberg.catalog.sql", reason="pip install 'evalframe[test]' (pyiceberg[sql-sqlite])")
pytest.importorskip("sqlalchemy", reason="pip install 'evalframe[test]' (pyiceberg[sql-sqlite])")

#: Orbit Desk's ledger (SPEC §7) is the first snapshot; the second overwrites it with B's handoff passed.
V0, V1 = orbit_versions()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int, int]:
    """The metadata file of a two-snapshot table, and the two snapshot ids."""
    from pyiceberg.catalog.sql import SqlCatalog

    folder: Path = tmp_path_factory.mktemp("iceberg")
    catalog = SqlCatalog("tests", uri=f"sqlite:///{folder}/catalog.db", warehouse=f"file://{folder}/warehouse")
    catalog.create_namespace("evals")
    created = catalog.create_table("evals.ledger", schema=V0.to_arrow().schema)
    created.append(V0.to_arrow())
    first = created.current_snapshot().snapshot_id
    created.overwrite(V1.to_arrow())
    return created.metadata_location.removeprefix("file://"), first, created.current_snapshot().snapshot_id


def test_each_snapshot_gives_its_own_results_and_names_itself(table: tuple[str, int, int]) -> None:
    metadata, first, second = table
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    old = ef.audit(plan, f"iceberg:{metadata}@{first}")
    new = ef.audit(plan, f"iceberg:{metadata}")
    # Orbit Desk: B passes 3 of 4; the second snapshot passes handoff too.
    assert (passed_of_b(old), passed_of_b(new)) == (3, 4)
    assert (old.meta["iceberg_metadata"], old.meta["iceberg_snapshot"]) == (metadata, first)
    assert new.meta["iceberg_snapshot"] == second
    assert new.meta["results_source"] == f"iceberg:{metadata}@{second}"


def test_a_snapshot_the_table_does_not_have_is_exit_2(table: tuple[str, int, int]) -> None:
    metadata = table[0]
    args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", f"iceberg:{metadata}@12345"]
    code, out, err = run([*args, "--candidates", "A,B"])
    assert "no such snapshot" in one_error_line(code, out, err, metadata)
