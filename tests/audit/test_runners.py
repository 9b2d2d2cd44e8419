"""The whole-batch and by-candidate runners give the same report, on the SPEC fixtures and a generated ledger."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from tests.conftest import FIXTURES, ROOT

RUNNERS = importlib.import_module("evalframe.audit.runners")
GEN = ROOT.parent / "shared" / "tools" / "gen_ledger.py"


def tables(report: ef.AuditReport) -> dict[str, pl.DataFrame]:
    return {name: frame.lazy().collect() for name, frame in report.tables().items()}


def assert_same_report(whole: ef.AuditReport, parts: ef.AuditReport) -> None:
    assert whole.meta["partition_by"] is None and parts.meta["partition_by"] == "candidate"
    assert isinstance(whole.units, pl.DataFrame) and isinstance(parts.units, pl.LazyFrame)
    a, b = tables(whole), tables(parts)
    assert sorted(a) == sorted(b)
    for name in a:
        assert_frame_equal(a[name], b[name], check_exact=True), name
    assert {k: v for k, v in whole.meta.items() if k != "partition_by"} == {
        k: v for k, v in parts.meta.items() if k != "partition_by"
    }


SPEC_CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("orbit_desk", "results.csv", {"candidates": ["A", "B"]}, {"slices": ["case_type"]}),
    ("orbit_desk", "results_header_only.csv", {"candidates": ["A", "B"]}, {}),
    ("ledger", "results.csv", {"candidates": ["agent"]}, {}),
]


@pytest.mark.parametrize(("fixture", "results", "plan_options", "options"), SPEC_CASES)
def test_both_runners_give_the_same_report_on_the_spec_fixtures(
    fixture: str, results: str, plan_options: dict[str, Any], options: dict[str, Any]
) -> None:
    plan = ef.Plan.from_file(FIXTURES / fixture / "plan.csv", **plan_options)
    path = FIXTURES / fixture / results
    assert_same_report(ef.audit(plan, path, **options), ef.audit(plan, path, partition_by="candidate", **options))


def test_both_runners_refuse_the_reversed_answers_fixture_with_the_same_problems() -> None:
    plan = ef.Plan.from_file(FIXTURES / "reversed_answers" / "plan.csv", candidates=["model"], run_id="run-2")
    refused = []
    for partition_by in (None, "candidate"):
        with pytest.raises(ef.AuditRefused) as info:
            ef.audit(plan, FIXTURES / "reversed_answers" / "results.csv", partition_by=partition_by)
        refused.append(info.value.problems)
    assert_frame_equal(refused[0], refused[1], check_exact=True)
    assert refused[0].select("kind", "candidate", "case_id", "line").rows() == [
        ("run_mismatch", "model", "allow-own", 3),
        ("run_mismatch", "model", "deny-other", 2),
    ]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "d"
    command = [sys.executable, str(GEN), str(out), "--rows", "6000", "--candidates", "3", "--seed", "11"]
    subprocess.run([*command, "--unknown", "0", "--dups", "0", "--retries", "0.05"], check=True, capture_output=True)
    return out


@pytest.mark.parametrize("retry", ["first", "last_allowed", "every"])
def test_both_runners_give_the_same_report_on_a_generated_ledger(generated: Path, retry: str) -> None:
    plan = ef.Plan.from_file(generated / "plan.parquet")
    options: dict[str, Any] = {"retry": retry, "slices": ["case_type", "tool_path"]}
    whole = ef.audit(plan, generated / "results.parquet", **options)
    by_candidate = ef.audit(plan, generated / "results_hive", partition_by="candidate", **options)
    assert whole.summary.get_column("planned").to_list() == [plan.n_units // 3] * 3
    # The sources differ (one file against a lake), and with them each row's source and line.
    differ = ("results_source", "partition_by")
    assert {k: v for k, v in whole.meta.items() if k not in differ} == {
        k: v for k, v in by_candidate.meta.items() if k not in differ
    }
    a, b = tables(whole), tables(by_candidate)
    # The generator retries 5% of units (--retries 0.05), so both reports hold the pass rate by attempt number
    # and the retried against never-retried units by slice.
    expected = ["attempt_rates", "attempts", "missingness", "problems", "retried_by_slice",
                "slices", "summary", "units"]  # fmt: skip
    assert sorted(a) == sorted(b) == expected
    for name in a:
        (
            assert_frame_equal(
                a[name].drop("source", "line", strict=False),
                b[name].drop("source", "line", strict=False),
                check_exact=True,
            ),
            name,
        )


def test_the_audit_picks_its_runner_from_partition_by_alone() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1"]}), candidates=["A"])
    run = importlib.import_module("evalframe.audit.run")
    loaded = run._as_loaded(pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]}), plan)
    assert type(run._runner(None, plan, loaded)) is RUNNERS.WholeBatch
    assert type(run._runner("candidate", plan, loaded)) is RUNNERS.ByCandidate
    assert type(run._runner("auto", plan, loaded)) is RUNNERS.WholeBatch
    with pytest.raises(ValueError, match="partition_by must be None, 'candidate' or 'auto', got 'case'"):
        run._runner("case", plan, loaded)
