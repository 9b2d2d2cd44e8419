"""Lakes and per-partition execution give exactly the reports of single files and whole frames."""

from __future__ import annotations

import gc
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from tests.conftest import ROOT

GEN = ROOT.parent / "shared" / "tools" / "gen_ledger.py"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two small seeded datasets from the shared generator: with defects, and clean."""
    out = {}
    for name, extra in (("defects", []), ("clean", ["--unknown", "0", "--dups", "0"])):
        d = tmp_path_factory.mktemp(name)
        subprocess.run(
            [sys.executable, str(GEN), str(d / "g"), "--rows", "6000", "--candidates", "3", *extra],
            check=True,
            capture_output=True,
        )
        out[name] = d / "g"
    return out


def comparable(report: ef.AuditReport) -> dict[str, pl.DataFrame]:
    # Row provenance (file, row number) legitimately differs between a lake and a single file.
    return {k: v.lazy().drop("source", "line", strict=False).collect() for k, v in report.tables().items()}


def assert_same(a: ef.AuditReport, b: ef.AuditReport) -> None:
    ta, tb = comparable(a), comparable(b)
    assert ta.keys() == tb.keys()
    for name in ta:
        assert_frame_equal(ta[name], tb[name], check_column_order=False, check_dtypes=False), name


def test_lake_single_file_and_partitions_agree_on_a_clean_batch(generated: dict[str, Path]) -> None:
    d = generated["clean"]
    plan = ef.Plan.from_file(d / "plan.parquet")
    single = ef.audit(plan, d / "results.parquet", slices=["case_type"])
    lake = ef.audit(plan, d / "results_hive", slices=["case_type"])
    parts = ef.audit(plan, d / "results_hive", slices=["case_type"], partition_by="candidate")
    assert_same(single, lake)
    assert_same(single, parts)
    lake_plan = ef.audit(ef.Plan.from_file(d / "plan_hive"), d / "results_hive", slices=["case_type"])
    assert_same(single, lake_plan)
    manifest = pl.read_json(d / "manifest.json").unnest("truth")
    assert single.summary.get_column("planned").sum() == manifest.item(0, "planned_pairs")
    assert single.summary.get_column("missing").sum() == manifest.item(0, "missing_pairs")


def test_refusals_agree_and_match_the_generator_manifest(generated: dict[str, Path]) -> None:
    d = generated["defects"]
    plan = ef.Plan.from_file(d / "plan.parquet")
    found = []
    for results, partition in ((d / "results.parquet", None), (d / "results_hive", "candidate")):
        with pytest.raises(ef.AuditRefused) as info:
            ef.audit(plan, results, partition_by=partition)  # type: ignore[arg-type]
        found.append(info.value.problems.drop("source", "line"))
    assert_frame_equal(found[0], found[1])
    problems = found[0]
    truth = pl.read_json(d / "manifest.json").unnest("truth").row(0, named=True)
    by_kind = dict(problems.group_by("kind").len().iter_rows())
    assert by_kind["unknown_case"] == truth["unknown_rows"]
    assert by_kind["missing_unit"] == truth["missing_pairs"]
    dup_keys = problems.filter(pl.col("kind") == "duplicate_key").select("candidate", "case_id", "trial", "attempt")
    assert dup_keys.unique().height == truth["duplicate_rows"]


def test_partitioned_refusal_with_an_unplanned_candidate() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    ledger = pl.DataFrame({"candidate": ["A", "Z", "A"], "case_id": ["q1", "q1", "q2"], "passed": [1, 0, 1]})
    with pytest.raises(ef.AuditRefused) as info:
        ef.audit(plan, ledger, partition_by="candidate")
    refusing = info.value.problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "candidate").rows() == [("unknown_candidate", "Z")]


def spill_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("evalframe-audit-*"))


def test_a_partitioned_report_writes_the_same_files_and_cleans_up(generated: dict[str, Path], tmp_path: Path) -> None:
    d = generated["clean"]
    plan = ef.Plan.from_file(d / "plan_hive")
    before = spill_folders()
    whole = ef.audit(plan, d / "results.parquet", slices=["case_type"])
    parts = ef.audit(plan, d / "results_hive", slices=["case_type"], partition_by="candidate")
    assert isinstance(parts.units, pl.LazyFrame) and isinstance(whole.units, pl.DataFrame)
    assert len(spill_folders() - before) == 1
    whole.write(tmp_path / "whole")
    parts.write(tmp_path / "parts")
    for name in ("summary", "units", "attempts", "problems", "slices", "missingness"):
        a = pl.read_parquet(tmp_path / "whole" / f"{name}.parquet").drop("source", "line", strict=False)
        b = pl.read_parquet(tmp_path / "parts" / f"{name}.parquet").drop("source", "line", strict=False)
        assert_frame_equal(a, b, check_dtypes=False), name
    units = pl.read_parquet(tmp_path / "parts" / "units.parquet")
    assert units.height == plan.n_units == whole.summary.get_column("planned").sum()
    del parts
    gc.collect()
    assert spill_folders() == before


def test_a_partitioned_refusal_leaves_no_spilled_files(generated: dict[str, Path]) -> None:
    d = generated["defects"]
    before = spill_folders()
    with pytest.raises(ef.AuditRefused):
        ef.audit(ef.Plan.from_file(d / "plan.parquet"), d / "results_hive", partition_by="candidate")
    assert spill_folders() == before
