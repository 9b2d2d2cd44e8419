"""A by-candidate report owns its files: they stay until the report is closed (or the interpreter exits)."""

from __future__ import annotations

import gc
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef

RUN = importlib.import_module("evalframe.audit.run")
PLAN = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A", "B"])
LEDGER = pl.DataFrame({"candidate": ["A", "A", "B"], "case_id": ["q1", "q2", "q1"], "passed": [1, 0, 1]})
ROWS = [("A", "q1", "passed"), ("A", "q2", "failed"), ("B", "q1", "passed"), ("B", "q2", "missing")]


@pytest.fixture
def temp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Report folders go under ``tmp_path``."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def folders(temp: Path) -> list[Path]:
    return sorted(temp.glob("evalframe-report-*"))


def test_a_table_taken_from_a_report_stays_readable_after_the_report_is_collected(temp: Path) -> None:
    report = ef.audit(PLAN, LEDGER, partition_by="candidate")
    units = report.units
    del report
    gc.collect()
    assert isinstance(units, pl.LazyFrame)
    assert units.select("candidate", "case_id", "outcome").collect().rows() == ROWS


def test_close_removes_the_folder_and_the_context_manager_closes(temp: Path) -> None:
    report = ef.audit(PLAN, LEDGER, partition_by="candidate")
    (folder,) = folders(temp)
    assert sorted(p.name for p in folder.iterdir()) == [
        "attempts-00000.parquet",
        "attempts-00001.parquet",
        "units-00000.parquet",
        "units-00001.parquet",
    ]
    assert not report.closed
    report.close()
    report.close()  # a second call does nothing
    assert report.closed and folders(temp) == []
    for read in (report.tables, report.outcome_counts, report.view, lambda: report.write(temp / "out")):
        with pytest.raises(ef.ReportClosed) as info:
            read()
        assert info.value.folder == str(folder)
    assert not (temp / "out").exists()
    with ef.audit(PLAN, LEDGER, partition_by="candidate") as report:
        assert report.units.select("candidate", "case_id", "outcome").collect().rows() == ROWS
        assert len(folders(temp)) == 1
    assert report.closed and folders(temp) == []


def test_a_report_in_memory_has_nothing_to_close() -> None:
    with ef.audit(PLAN, LEDGER) as report:
        assert isinstance(report.units, pl.DataFrame)
    assert not report.closed and report.store is None


def test_the_folder_goes_at_interpreter_exit(tmp_path: Path) -> None:
    code = (
        f"import tempfile, polars as pl, evalframe as ef; tempfile.tempdir = r'{tmp_path}'; "
        "plan = ef.Plan.from_frame(pl.DataFrame({'case_id': ['q1']}), candidates=['A']); "
        "r = ef.audit(plan, pl.DataFrame({'candidate': ['A'], 'case_id': ['q1'], 'passed': [1]}), "
        f"partition_by='candidate'); print(len(list(__import__('pathlib').Path(r'{tmp_path}').iterdir())))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1"  # the folder existed while the process ran
    assert folders(tmp_path) == []


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
