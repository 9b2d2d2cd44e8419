"""The by-candidate spill's folder lives as long as the report that reads it, and no longer."""

from __future__ import annotations

import gc
import importlib
import tempfile
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef

SPILL = importlib.import_module("evalframe.audit.spill")
RUN = importlib.import_module("evalframe.audit.run")
PLAN = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
LEDGER = pl.DataFrame({"candidate": ["A", "A", "B"], "case_id": ["q1", "q2", "q1"], "passed": [1, 0, 1]})


@pytest.fixture
def temp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Spill folders go under ``tmp_path``, and every part is written."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(SPILL, "TABLES_IN_MEMORY", 0)
    return tmp_path


def folders(temp: Path) -> list[Path]:
    return sorted(temp.glob("evalframe-audit-*"))


def test_the_folder_goes_when_the_report_is_collected(temp: Path) -> None:
    report = ef.audit(PLAN, LEDGER, partition_by="candidate")
    (folder,) = folders(temp)
    assert sorted(p.name for p in folder.iterdir()) == [
        "attempts-00000.arrow",
        "attempts-00001.arrow",
        "units-00000.arrow",
        "units-00001.arrow",
    ]
    units = report.units
    assert isinstance(units, pl.LazyFrame)
    gc.collect()  # the executor and its spill are gone; the report keeps the folder
    assert units.select("candidate", "case_id", "outcome").collect().rows() == [
        ("A", "q1", "passed"),
        ("A", "q2", "failed"),
        ("B", "q1", "passed"),
        ("B", "q2", "missing"),
    ]
    del report
    gc.collect()
    assert folders(temp) == []


def test_a_refused_audit_removes_its_folder_at_once(temp: Path) -> None:
    unknown = LEDGER.vstack(pl.DataFrame({"candidate": ["B"], "case_id": ["q9"], "passed": [1]}))
    with pytest.raises(ef.AuditRefused):
        ef.audit(PLAN, unknown, partition_by="candidate")
    assert folders(temp) == []


def test_an_error_while_the_report_is_assembled_removes_the_folder(monkeypatch: pytest.MonkeyPatch, temp: Path) -> None:
    def broken(*args: object) -> dict[str, object]:
        raise RuntimeError("meta failed")

    monkeypatch.setattr(RUN, "_meta", broken)
    with pytest.raises(RuntimeError, match="meta failed"):
        ef.audit(PLAN, LEDGER, partition_by="candidate")
    assert folders(temp) == []


def test_a_spill_no_report_took_removes_its_folder_when_it_goes(temp: Path) -> None:
    executors = importlib.import_module("evalframe.audit.executors")
    loaded = RUN._as_loaded(LEDGER)
    options = RUN.Options("first", None, ("timeout", "error"), False, "report", "binary", (0.0, 1.0), None)
    executor = executors.ByCandidate(PLAN)
    parts = executor.run(PLAN, loaded, options, None)
    assert [p.summary.get_column("passed").item() for p in parts] == [1, 1]
    assert len(folders(temp)) == 1
    del executor
    gc.collect()
    assert folders(temp) == []
