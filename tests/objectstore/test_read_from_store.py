"""Plans and ledgers read from an S3 server on 127.0.0.1 (``ef.Plan.from_file`` / ``ef.audit`` with
``storage_options``) audit exactly as the same files read locally: the SPEC §7 fixtures as CSV, as Parquet
and as a glob."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe.errors import InputFormatError
from evalframe.load import limits
from tests.conftest import FIXTURES
from tests.objectstore.conftest import S3Server

ORBIT = FIXTURES / "orbit_desk"
LEDGER = FIXTURES / "ledger"
REVERSED = FIXTURES / "reversed_answers"


def tables(report: ef.AuditReport, names: dict[str, str]) -> dict[str, pl.DataFrame]:
    """The report's tables with each URL written as its local path (row provenance names the input)."""
    out = {}
    for name, frame in report.tables().items():
        got = frame.lazy().collect()
        text = [c for c, t in got.schema.items() if t in (pl.String, pl.Categorical)]
        for url, path in names.items():
            got = got.with_columns(
                pl.col(c).cast(pl.String).str.replace_all(url, path, literal=True).cast(got.schema[c]) for c in text
            )
        out[name] = got
    return out


def assert_same(remote: ef.AuditReport, local: ef.AuditReport, names: dict[str, str]) -> None:
    got, want = tables(remote, names), tables(local, {})
    assert got.keys() == want.keys()
    for name in want:
        assert_frame_equal(got[name], want[name], check_exact=True)


@pytest.mark.parametrize(
    ("folder", "candidates", "run_id"),
    [(ORBIT, ["A", "B"], None), (LEDGER, None, None), (REVERSED, ["model"], "run-1")],
    ids=["orbit_desk", "ledger", "reversed_answers"],
)
def test_the_spec_fixtures_from_the_store_are_the_local_audit(
    s3: S3Server, folder: Path, candidates: list[str] | None, run_id: str | None
) -> None:
    prefix = f"spec/{folder.name}"
    plan_url = s3.put(f"{prefix}/plan.csv", (folder / "plan.csv").read_bytes())
    results_url = s3.put(f"{prefix}/results.csv", (folder / "results.csv").read_bytes())
    if candidates is None:  # the plans of these fixtures name no candidates: the ledger's are declared
        candidates = sorted(set(pl.read_csv(folder / "results.csv", infer_schema=False).get_column("candidate")))
    local_plan = ef.Plan.from_file(folder / "plan.csv", candidates=candidates, run_id=run_id)
    local = ef.audit(local_plan, folder / "results.csv")
    plan = ef.Plan.from_file(plan_url, candidates=candidates, run_id=run_id, storage_options=s3.options)
    remote = ef.audit(plan, results_url, storage_options=s3.options)
    assert_same(remote, local, {f"s3://evals/{prefix}": str(folder)})


def test_parquet_files_and_a_glob_from_the_store_are_the_local_audit(s3: S3Server, tmp_path: Path) -> None:
    rows = pl.read_csv(ORBIT / "results.csv", infer_schema=False)
    for candidate in ("A", "B"):
        rows.filter(pl.col("candidate") == candidate).write_parquet(tmp_path / f"results-{candidate}.parquet")
    s3.put_tree(tmp_path, "glob/orbit")
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    local = ef.audit(plan, str(tmp_path / "results-*.parquet"))
    remote = ef.audit(plan, "s3://evals/glob/orbit/results-*.parquet", storage_options=s3.options)
    assert_same(remote, local, {"s3://evals/glob/orbit": str(tmp_path)})
    # Orbit Desk (SPEC §7): A scored 2 of 4 planned, B 4 of 4 with 3 passed.
    assert remote.summary.select("candidate", "scored", "passed").rows() == [("A", 2, 2), ("B", 4, 3)]


def test_a_line_over_the_limit_in_a_fetched_object_is_refused_as_locally(s3: S3Server) -> None:
    url = s3.put("limits/results.jsonl", b'{"a": 1}\n' + b'{"b": "' + b"x" * 40 + b'"}\n')
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A"])
    with limits(line_bytes=16), pytest.raises(InputFormatError) as info:
        ef.audit(plan, url, storage_options=s3.options)
    assert (info.value.path, info.value.line) == (url, 2)


def test_a_single_file_over_http_is_the_local_audit(s3: S3Server, tmp_path: Path) -> None:
    pl.read_csv(ORBIT / "results.csv", infer_schema=False).write_parquet(tmp_path / "results.parquet")
    s3.put("http/orbit/results.parquet", (tmp_path / "results.parquet").read_bytes(), public=True)
    s3.put("http/orbit/results.csv", (ORBIT / "results.csv").read_bytes(), public=True)
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    for name, local_path in (("results.parquet", tmp_path / "results.parquet"), ("results.csv", ORBIT / "results.csv")):
        url = f"{s3.endpoint}/evals/http/orbit/{name}"
        assert_same(ef.audit(plan, url), ef.audit(plan, local_path), {url: str(local_path)})
