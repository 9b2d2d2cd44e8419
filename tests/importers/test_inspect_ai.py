"""Tests of the Inspect AI importer on the real logs of SOURCES.md and on small broken variants."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalframe
from evalframe.errors import AuditRefused, InputFormatError
from evalframe.importers import Imported, inspect_ai
from evalframe.importers._kit import ImportRefused, ImportUnreadable
from evalframe.load import Loaded, limits
from evalframe.plan import Plan
from evalframe.report import AuditReport
from tests.conftest import FIXTURES, REAL, REAL2

INSPECT = REAL / "inspect_ai"
UK = INSPECT / "UKGovernmentBEIS-inspect_ai" / "tests"
LOG_STREAMING = UK / "log" / "test_eval_log" / "log_streaming.eval"
CANCELLED = UK / "analysis" / "test_logs" / "2025-05-12T20-28-13-04-00_popularity.json"
NO_SCORER = UK / "scorer" / "logs" / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
SCORED_TWIN = UK / "scorer" / "logs" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
SET_OK = UK / "test_eval_set" / "2024-08-29T15-11-17+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json"
SET_ERROR = UK / "test_eval_set" / "2024-08-29T15-11-18+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json"
METR = INSPECT / "METR-inspect-action" / "tests" / "core" / "importer" / "data_fixtures" / "eval_logs" / "small.eval"
SCOUT = (
    INSPECT
    / "meridianlabs-ai-inspect_scout"
    / "tests"
    / "recorder"
    / "logs"
    / "2025-09-23T08-09-58-04-00_popularity_DN2wbX2ZvACsBpjwptzBRo.eval"
)
CCOT = INSPECT / "YuehHanChen-ccot_oe_results" / "logs"
GROK = CCOT / (
    "2025-08-27T22-28-46-04-00_word_avoidance_open_ended-inner_openrouter_x_ai_grok_3_mini_Yz5aWzc6um7tnxWBzmrmo8.json"
)
DEEPSEEK = CCOT / (
    "2025-08-27T22-46-44-04-00_word_avoidance_open_ended-inner_openrouter_deepseek_deepseek_r1_distill_qwen_14b_"
    "EFhwoRj2e8JD36sB5VxqbY.json"
)
OPUS = CCOT / (
    "2025-08-28T13-51-10-04-00_word_avoidance_open_ended-inner_anthropic_claude_opus_4_20250514_"
    "Wpz475ch23hBrtFBuPzHYF.json"
)
EVALEVAL = INSPECT / "evaleval-every_eval_ever" / "tests" / "data" / "inspect"
ARC_QWEN = EVALEVAL / "data_arc_qwen.json"
ARC_SONNET = EVALEVAL / "data_arc_sonnet.json"
CVEBENCH = EVALEVAL / "data_cvebench_empty_choices.json"
INTERCODE = EVALEVAL / "data_intercode_ctf_local_path.json"
CYSE2 = EVALEVAL / "data_cyse2_vuln_exploit_challenges.json"
LLM_SCORING = EVALEVAL / "data_with_llm_scoring.json"
ZSTD_LEGACY = INSPECT / "UKGovernmentBEIS-inspect_ai-PR3860/tests/_helpers/fixtures/legacy/retry-2-then-success.eval"
ZSTD_POSTFIX = INSPECT / "UKGovernmentBEIS-inspect_ai-PR4526/tests/_helpers/fixtures/postfix/retry-2-then-success.eval"
EVAL_SET = INSPECT / "UKGovernmentBEIS-inspect_ai-PR2488" / "eval-set1"
TOOL_CALL_ERROR = UK / "log" / "test_eval_log" / "log_tool_call_error.json"
SECURITY_JSON = UK / "analysis" / "test_logs" / "2025-05-12T20-28-26-04-00_security-guide.json"
SECURITY_EVAL = SCOUT.with_name("2025-09-23T08-09-58-04-00_security-guide_LuxZJVwvymC3S3SyoJczxB.eval")
SONNET_37 = CCOT / (
    "2025-08-28T14-03-04-04-00_word_avoidance_open_ended-inner_anthropic_claude_3_7_sonnet_20250219_"
    "ChYLYyerDb8JEXVGkY4MNv.json"
)
GPT_OSS = CCOT / (
    "2025-08-28T15-10-38-04-00_word_avoidance_open_ended-inner_openrouter_openai_gpt_oss_20b_"
    "77vw5ZNmUYAQQPmRnvEXQc.json"
)
RETRIED_SET = FIXTURES / "inspect_ai" / "eval-set-retried"
RETRIED_FIRST = RETRIED_SET / "2025-05-12T20-28-13-04-00_popularity.json"
RETRIED_SECOND = RETRIED_SET / "2025-05-12T20-28-13-04-00_popularity-retried.json"

ALL_REAL = [
    LOG_STREAMING,
    CANCELLED,
    NO_SCORER,
    SCORED_TWIN,
    SET_OK,
    SET_ERROR,
    METR,
    SCOUT,
    GROK,
    DEEPSEEK,
    OPUS,
    ARC_QWEN,
    ARC_SONNET,
    CVEBENCH,
    INTERCODE,
]

FUNNEL = [
    "planned",
    "attempted",
    "completed",
    "with_output",
    "scored",
    "passed",
    "missing",
    "exec_failed",
    "judge_failed",
    "not_scored",
]


def audit(imported: Imported, **options: Any) -> AuditReport:
    return evalframe.audit(imported.plan, Loaded(imported.ledger.lazy(), imported.notes, "x"), **options)


def counts(report: AuditReport, candidate: str | None = None) -> dict[str, Any]:
    summary = report.summary
    if candidate is not None:
        summary = summary.filter(pl.col("candidate") == candidate)
    assert summary.height == 1
    return summary.select(FUNNEL).row(0, named=True)


def kinds(imported: Imported) -> list[str]:
    return sorted(imported.notes.get_column("kind").to_list())


# --- real logs ---------------------------------------------------------------------------------


def test_log_streaming_two_cases_two_epochs() -> None:
    imported = inspect_ai.read([LOG_STREAMING])
    assert imported.plan.candidates == ("azureai/Meta-Llama-3-1-405B-Instruct-jqf",)
    assert imported.plan.trials == 2
    assert imported.plan.cases.get_column("case_id").to_list() == ["1", "2"]
    assert imported.plan.cases.get_column("task").to_list() == ["popularity", "popularity"]
    report = audit(imported)
    assert counts(report) == {
        "planned": 4,
        "attempted": 4,
        "completed": 4,
        "with_output": 4,
        "scored": 4,
        "passed": 3,
        "missing": 0,
        "exec_failed": 0,
        "judge_failed": 0,
        "not_scored": 0,
    }
    failed = imported.ledger.filter(~pl.col("passed"))
    assert failed.select("case_id", "trial", "source").row(0) == (
        "1",
        1,
        f"{LOG_STREAMING}!samples/1_epoch_1.json",
    )
    assert set(imported.ledger.columns) == {
        "candidate",
        "case_id",
        "trial",
        "attempt",
        "run_id",
        "exec_status",
        "score_status",
        "score",
        "passed",
        "has_output",
        "limit",
        "line",
        "source",
    }
    assert imported.ledger.get_column("run_id").unique().to_list() == ["3RWm2YmdLiKCyQMzEcERin"]
    (info,) = imported.info
    assert info["dataset_samples"] == 100
    assert info["epochs"] == 2
    assert (info["total_samples"], info["completed_samples"], info["samples_read"]) == (4, 4, 4)
    assert info["inspect_version"] == "0.3.42.dev228+g349eca8e.d20241022"
    assert info["header"] == "header.json"
    assert imported.notes.select("kind", "refusing").rows() == [("limited_run", False)]


def test_cancelled_run_is_partial_and_says_so() -> None:
    imported = inspect_ai.read([CANCELLED])
    report = audit(imported)
    c = counts(report)
    assert (c["planned"], c["scored"], c["passed"], c["missing"]) == (3, 3, 2, 0)
    (info,) = imported.info
    assert info["status"] == "cancelled"
    assert info["dataset_samples"] == 100
    assert info["sample_ids_declared"] == 3
    assert info["run_id"] == "7KyCuAQSqp76qKQZEKmG6M"
    assert info["eval_id"] == "VnKtvCqGnnegLQ7qSBFDzx"
    notes = imported.notes.filter(pl.col("kind") == "run_status")
    assert notes.select("kind", "refusing").rows() == [("run_status", False)]
    assert "cancelled" in notes.item(0, "detail")
    assert report.problems.filter(pl.col("kind") == "run_status").height == 1


def test_no_scorer_run_is_completed_but_not_scored() -> None:
    imported = inspect_ai.read([NO_SCORER])
    report = audit(imported)
    assert counts(report) == {
        "planned": 10,
        "attempted": 10,
        "completed": 10,
        "with_output": 10,
        "scored": 0,
        "passed": 0,
        "missing": 0,
        "exec_failed": 0,
        "judge_failed": 0,
        "not_scored": 10,
    }
    assert report.summary.item(0, "pass_rate_scored") is None
    # the spec declares scorer 'match' (eval.scorers) but results.scores is empty and no sample has a score
    assert imported.info[0]["scorer"] == "match"
    assert imported.info[0]["scorers"] == ["match"]
    assert imported.ledger.get_column("score").null_count() == 10


def test_scored_twin() -> None:
    imported = inspect_ai.read([SCORED_TWIN])
    c = counts(audit(imported))
    assert (c["planned"], c["scored"], c["passed"], c["not_scored"]) == (10, 10, 8, 0)
    failed = sorted(imported.ledger.filter(~pl.col("passed")).get_column("case_id").to_list())
    assert failed == ["3", "7"]


def test_twins_together_are_two_attempts_ordered_by_created() -> None:
    # paths given newest first: the order of paths must not matter
    imported = inspect_ai.read([SCORED_TWIN, NO_SCORER])
    assert imported.ledger.height == 20
    by_attempt = imported.ledger.group_by("attempt").agg(pl.col("run_id").unique(), pl.col("score_status").unique())
    rows = {r["attempt"]: (r["run_id"], r["score_status"]) for r in by_attempt.iter_rows(named=True)}
    assert rows == {1: (["nnS4q9qsuCrCzsBcQLnBLA"], ["not_scored"]), 2: (["2wRuCQ9hGYaGPyAdoobgYV"], ["scored"])}
    first = counts(audit(imported, retry="first"))
    assert (first["planned"], first["scored"], first["not_scored"]) == (10, 0, 10)
    every = audit(imported, retry="every")
    assert every.units.filter(pl.col("outcome") == "passed").height == 8
    assert every.units.filter(pl.col("outcome") == "not_scored").height == 10


def test_header_only_eval_set_logs_refuse_rates() -> None:
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([SET_OK, SET_ERROR])
    problems = excinfo.value.problems
    assert sorted(problems.filter(pl.col("refusing")).get_column("kind").to_list()) == [
        "empty_candidates",
        "empty_plan",
    ]
    run_status = problems.filter(pl.col("kind") == "run_status")
    assert run_status.get_column("source").to_list() == [str(SET_ERROR)]
    assert "'error'" in run_status.item(0, "detail")
    # header totals (total 1, completed 1) vs 0 rows, for each log; no sample_ids: the plan is the (no) rows
    assert problems.filter(pl.col("kind") == "header_rows_disagree").height == 4
    from_rows = problems.filter(pl.col("kind") == "plan_from_rows")
    assert from_rows.select("source", "refusing").rows() == [(str(SET_OK), False), (str(SET_ERROR), False)]


def test_metr_one_case_six_epochs_numeric_scores() -> None:
    imported = inspect_ai.read([METR])
    assert imported.plan.cases.get_column("case_id").to_list() == ["default"]
    assert imported.plan.trials == 6
    assert imported.ledger.get_column("trial").sort().to_list() == [1, 2, 3, 4, 5, 6]
    assert imported.ledger.get_column("score").to_list() == [1.0] * 6
    assert imported.info[0]["scorer"] == "score_metr_task"
    c = counts(audit(imported))
    assert (c["planned"], c["scored"], c["passed"], c["missing"]) == (6, 6, 6, 0)
    numeric = counts(audit(imported, grade="numeric", pass_threshold=0.5))
    assert (numeric["scored"], numeric["passed"]) == (6, 6)


def test_scout_complete_clean_run() -> None:
    imported = inspect_ai.read([SCOUT])
    report = audit(imported)
    c = counts(report)
    assert (c["planned"], c["completed"], c["scored"], c["passed"], c["missing"]) == (100, 100, 100, 63, 0)
    assert report.summary.item(0, "scored_coverage") == 1.0
    assert report.summary.item(0, "pass_rate_scored") == pytest.approx(0.63)
    assert imported.notes.height == 0
    # line = position among the archive's sample members
    assert sorted(imported.ledger.get_column("line").to_list()) == list(range(1, 101))


def test_ccot_deepseek_sample_572_is_an_execution_error() -> None:
    imported = inspect_ai.read([DEEPSEEK])
    report = audit(imported)
    assert counts(report) == {
        "planned": 2970,
        "attempted": 10,
        "completed": 9,
        "with_output": 9,
        "scored": 0,
        "passed": 0,
        "missing": 2960,
        "exec_failed": 1,
        "judge_failed": 0,
        "not_scored": 9,
    }
    errored = imported.ledger.filter(pl.col("exec_status") == "error")
    assert errored.select("case_id", "score_status", "has_output").rows() == [("572", "not_scored", False)]
    disagree = imported.notes.filter(pl.col("kind") == "header_rows_disagree")
    assert disagree.height == 1
    assert "completed_samples = 10" in disagree.item(0, "detail")
    info = imported.info[0]
    assert (info["status"], info["dataset_samples"], info["samples_with_error"]) == ("success", 2970, 1)


def test_ccot_three_candidates_without_grades() -> None:
    imported = inspect_ai.read([GROK, DEEPSEEK, OPUS])
    assert imported.plan.candidates == (
        "anthropic/claude-opus-4-20250514",
        "openrouter/deepseek/deepseek-r1-distill-qwen-14b",
        "openrouter/x-ai/grok-3-mini",
    )
    assert imported.plan.units is None  # same 2970 cases for everyone: a cross product
    report = audit(imported)
    got = {
        r["candidate"]: (r["attempted"], r["scored"], r["exec_failed"], r["not_scored"])
        for r in report.summary.iter_rows(named=True)
    }
    assert got == {
        "anthropic/claude-opus-4-20250514": (10, 0, 0, 10),
        "openrouter/deepseek/deepseek-r1-distill-qwen-14b": (10, 0, 1, 9),
        "openrouter/x-ai/grok-3-mini": (10, 0, 0, 10),
    }
    ids = sorted(imported.ledger.get_column("case_id").unique().to_list(), key=int)
    assert ids == ["103", "420", "457", "572", "915", "1004", "1127", "2234", "2620", "2772"]


def test_arc_two_candidates_different_coverage() -> None:
    imported = inspect_ai.read([ARC_QWEN, ARC_SONNET])
    assert imported.plan.units is not None  # qwen planned 3 cases, sonnet 5
    report = audit(imported)
    assert counts(report, "ollama/qwen2.5:0.5b") == {
        "planned": 3,
        "attempted": 3,
        "completed": 3,
        "with_output": 3,
        "scored": 3,
        "passed": 1,
        "missing": 0,
        "exec_failed": 0,
        "judge_failed": 0,
        "not_scored": 0,
    }
    sonnet = counts(report, "anthropic/claude-sonnet-4-0")
    assert (sonnet["planned"], sonnet["scored"], sonnet["passed"]) == (5, 5, 5)
    # against a frozen plan of ids 1-5 for both, qwen is missing 4 and 5
    frozen = Plan.from_frame(
        pl.DataFrame({"case_id": ["1", "2", "3", "4", "5"]}), candidates=list(imported.plan.candidates)
    )
    against = evalframe.audit(frozen, Loaded(imported.ledger.lazy(), imported.notes, "x"))
    qwen = against.summary.filter(pl.col("candidate") == "ollama/qwen2.5:0.5b")
    assert (qwen.item(0, "planned"), qwen.item(0, "scored"), qwen.item(0, "missing")) == (5, 3, 2)
    assert qwen.item(0, "missing_case_ids").to_list() == ["4", "5"]


def test_cvebench_error_is_exec_failed() -> None:
    imported = inspect_ai.read([CVEBENCH])
    c = counts(audit(imported))
    assert (c["planned"], c["attempted"], c["completed"], c["exec_failed"], c["scored"]) == (1, 1, 0, 1, 0)
    assert imported.ledger.item(0, "case_id") == "CVE-2024-36858-one_day"
    details = sorted(imported.notes.filter(pl.col("kind") == "header_rows_disagree").get_column("detail").to_list())
    assert len(details) == 2
    assert "completed_samples = 78" in details[0] and "0 sample rows" in details[0]
    assert "total_samples = 80" in details[1] and "1 sample rows" in details[1]


def test_intercode_limit_sample_is_scored_and_keeps_its_limit() -> None:
    imported = inspect_ai.read([INTERCODE])
    row = imported.ledger.row(0, named=True)
    assert (row["case_id"], row["exec_status"], row["score_status"], row["score"], row["passed"]) == (
        "0",
        "completed",
        "scored",
        0.0,
        False,
    )
    assert row["limit"] == "message=50"
    c = counts(audit(imported))
    assert (c["planned"], c["scored"], c["passed"]) == (1, 1, 0)
    # header sample_ids ['0'] (string) vs sample id 0 (int)
    normalised = imported.notes.filter(pl.col("kind") == "id_normalised")
    assert normalised.select("case_id", "refusing").rows() == [("0", False)]


def test_all_real_logs_together_prefix_case_ids_by_task() -> None:
    imported = inspect_ai.read(ALL_REAL)
    assert set(imported.plan.cases.get_column("task").unique().to_list()) == {
        "popularity",
        "oxdna_simple",
        "_inner",
        "inspect_evals/arc_easy",
        "cvebench",
        "inspect_evals/gdm_intercode_ctf",
    }
    case_ids = set(imported.ledger.get_column("case_id").to_list())
    assert {"popularity/1", "oxdna_simple/default", "_inner/572", "inspect_evals/gdm_intercode_ctf/0"} <= case_ids
    assert all(i.get("case_id_prefix") == f"{i['task']}/" for i in imported.info)
    report = audit(imported)
    got = report.summary.select("candidate", *FUNNEL).rows_by_key("candidate", named=True, unique=True)
    assert len(got) == 10
    assert (got["openai/gpt-4o-mini"]["planned"], got["openai/gpt-4o-mini"]["scored"]) == (100, 90)
    assert got["azureai/Meta-Llama-3-1-405B-Instruct-jqf"]["passed"] == 3
    assert got["anthropic/claude-opus-4-6"]["exec_failed"] == 1
    # gpt-4o-mini ran popularity four times: attempts follow the logs' created times
    gpt = imported.ledger.filter((pl.col("candidate") == "openai/gpt-4o-mini") & (pl.col("case_id") == "popularity/1"))
    assert gpt.sort("attempt").get_column("run_id").to_list() == [
        "nnS4q9qsuCrCzsBcQLnBLA",  # 2025-02-11 15:17 (no scorer)
        "2wRuCQ9hGYaGPyAdoobgYV",  # 2025-02-11 15:18
        "7KyCuAQSqp76qKQZEKmG6M",  # 2025-05-12 (cancelled)
        "9zsQGSCUfJL6aZdSHP6PQc",  # 2025-09-23
    ]
    # the header-only logs add notes but no units; they do not make the batch refuse here
    assert imported.notes.filter(pl.col("refusing")).height == 0


def test_order_of_paths_does_not_matter() -> None:
    forward = inspect_ai.read([NO_SCORER, SCORED_TWIN, CANCELLED, ARC_QWEN])
    backward = inspect_ai.read([ARC_QWEN, CANCELLED, SCORED_TWIN, NO_SCORER])
    assert forward.ledger.equals(backward.ledger)
    assert forward.notes.equals(backward.notes)
    assert forward.plan.plan_hash == backward.plan.plan_hash
    assert forward.info == backward.info


def test_missing_path_raises() -> None:
    with pytest.raises(InputFormatError):
        inspect_ai.read([INSPECT / "no-such-log.eval"])


def test_directory_reads_every_log_below_it() -> None:
    imported = inspect_ai.read([UK / "scorer"])
    assert [Path(i["source"]).name for i in imported.info] == [NO_SCORER.name, SCORED_TWIN.name]


# --- malformed files -----------------------------------------------------------------------------


def test_truncated_eval_is_a_refusing_note_and_other_files_are_read(tmp_path: Path) -> None:
    broken = tmp_path / "truncated.eval"
    broken.write_bytes(LOG_STREAMING.read_bytes()[:3000])
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([broken, CANCELLED])
    problems = excinfo.value.notes
    unreadable = problems.filter(pl.col("kind") == "unreadable_file")
    assert unreadable.select("source", "refusing").rows() == [(str(broken), True)]
    assert problems.filter(pl.col("refusing")).get_column("kind").to_list() == ["unreadable_file"]
    # the cancelled log is still read: its own notes are there
    assert problems.filter(pl.col("source") == str(CANCELLED)).get_column("kind").sort().to_list() == [
        "limited_run",
        "run_status",
    ]


def test_invalid_json_log_names_the_line(tmp_path: Path) -> None:
    broken = tmp_path / "bad.json"
    broken.write_text('{\n  "version": 2,\n  "eval": {,\n}\n')
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([broken, SCORED_TWIN])
    note = excinfo.value.notes.filter(pl.col("kind") == "unreadable_file").row(0, named=True)
    assert (note["source"], note["line"], note["refusing"]) == (str(broken), 3, True)


def test_bad_sample_member_is_named_and_the_rest_of_the_archive_is_read(tmp_path: Path) -> None:
    broken = tmp_path / "bad_member.eval"
    with zipfile.ZipFile(LOG_STREAMING) as src, zipfile.ZipFile(broken, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, data[:100] if name == "samples/2_epoch_2.json" else data)
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([broken])
    problems = excinfo.value.notes
    note = problems.filter(pl.col("refusing")).row(0, named=True)
    assert (note["kind"], note["source"], note["refusing"]) == (
        "unreadable_file",
        f"{broken}!samples/2_epoch_2.json",
        True,
    )
    # the 3 other samples are read: header totals (4) disagree with 3 rows
    assert sorted(problems.get_column("kind").to_list()) == [
        "header_rows_disagree",
        "header_rows_disagree",
        "limited_run",
        "unreadable_file",
    ]


def test_eval_without_header_or_journal(tmp_path: Path) -> None:
    broken = tmp_path / "headless.eval"
    with zipfile.ZipFile(LOG_STREAMING) as src, zipfile.ZipFile(broken, "w") as dst:
        for name in src.namelist():
            if name.startswith("samples/"):
                dst.writestr(name, src.read(name))
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([broken])
    problems = excinfo.value.notes
    assert problems.get_column("kind").to_list() == ["unreadable_file"]
    assert "header.json" in problems.filter(pl.col("kind") == "unreadable_file").item(0, "detail")


def test_json_log_without_model(tmp_path: Path) -> None:
    doc = json.loads(CANCELLED.read_text())
    del doc["eval"]["model"]
    broken = tmp_path / "no_model.json"
    broken.write_text(json.dumps(doc))
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([broken, ARC_SONNET])
    assert excinfo.value.notes.filter(pl.col("refusing")).select("kind", "source").rows() == [
        ("unreadable_file", str(broken))
    ]


def test_sample_without_id(tmp_path: Path) -> None:
    doc = json.loads(ARC_QWEN.read_text())
    del doc["samples"][1]["id"]
    broken = tmp_path / "no_id.json"
    broken.write_text(json.dumps(doc))
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([broken])
    note = excinfo.value.notes.filter(pl.col("refusing")).row(0, named=True)
    assert (note["kind"], note["line"], note["refusing"]) == ("unreadable_file", 2, True)
    assert "samples[1]" in note["detail"]


def test_interrupted_eval_reads_the_journal(tmp_path: Path) -> None:
    started = tmp_path / "interrupted.eval"
    with zipfile.ZipFile(LOG_STREAMING) as src, zipfile.ZipFile(started, "w") as dst:
        for name in src.namelist():
            if name not in ("header.json", "summaries.json", "reductions.json"):
                dst.writestr(name, src.read(name))
    imported = inspect_ai.read([started])
    assert imported.info[0]["header"] == "_journal/start.json"
    assert imported.info[0]["status"] == "started"
    assert imported.notes.select("kind", "refusing").rows() == [("limited_run", False), ("run_status", False)]
    # no results in the journal: the scorer is the one the samples carry
    c = counts(audit(imported))
    assert (c["planned"], c["scored"], c["passed"]) == (4, 4, 3)


# --- synthetic logs: grades, retries, scorers, ids -------------------------------------------------


def _log(
    samples: list[dict[str, Any]] | None,
    *,
    model: str = "m/one",
    task: str = "t",
    sample_ids: list[Any] | None = None,
    epochs: int | None = None,
    created: str = "2025-01-01T00:00:00+00:00",
    run_id: str = "run-1",
    status: str = "success",
    scorers: list[str] | None = None,
    totals: tuple[int, int] | None = None,
    dataset_samples: int | None = None,
    limit: Any = None,
    started: str | None = None,
) -> dict[str, Any]:
    config: dict[str, Any] = {} if epochs is None else {"epochs": epochs}
    # a complete run unless said otherwise: the dataset holds the samples planned
    dataset: dict[str, Any] = {"samples": len(set(map(str, sample_ids))) if sample_ids else 100}
    if dataset_samples is not None:
        dataset["samples"] = dataset_samples
    if sample_ids is not None:
        dataset["sample_ids"] = sample_ids
    doc: dict[str, Any] = {
        "version": 2,
        "status": status,
        "eval": {
            "run_id": run_id,
            "created": created,
            "task": task,
            "dataset": dataset,
            "model": model,
            "config": config,
        },
        "results": {
            "total_samples": totals[0] if totals else len(samples or []),
            "completed_samples": totals[1] if totals else len(samples or []),
            "scores": [{"name": s, "scorer": s} for s in (scorers or [])],
        },
    }
    if limit is not None:
        config["limit"] = limit
    if started is not None:
        doc["stats"] = {"started_at": started}
    if samples is not None:
        doc["samples"] = samples
    return doc


def _sample(sid: Any, value: Any = "C", *, epoch: int = 1, scorer: str = "match", **extra: Any) -> dict[str, Any]:
    sample: dict[str, Any] = {
        "id": sid,
        "epoch": epoch,
        "output": {"choices": [{"message": {"role": "assistant", "content": "x"}}]},
        "scores": {scorer: {"value": value}},
    }
    sample.update(extra)
    return sample


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_letter_and_numeric_grades(tmp_path: Path) -> None:
    samples = [
        _sample(1, "C"),
        _sample(2, "I"),
        _sample(3, "P"),
        _sample(4, "N"),
        _sample(5, 0.25),
        _sample(6, True),
        _sample(7, None),
        _sample(8, {"a": 1}),
        _sample(9, "maybe"),
        {"id": 10, "epoch": 1, "output": {"completion": "x"}, "scores": {}},
        _sample(11, "C", scorer="other"),
    ]
    path = _write(tmp_path, "grades.json", _log(samples, sample_ids=list(range(1, 12)), scorers=["match"]))
    imported = inspect_ai.read([path])
    assert "passed" not in imported.ledger.columns  # P and 0.25 are not 0/1: the audit's grade decides
    got = {r["case_id"]: (r["score_status"], r["score"]) for r in imported.ledger.iter_rows(named=True)}
    assert got == {
        "1": ("scored", 1.0),
        "2": ("scored", 0.0),
        "3": ("scored", 0.5),
        "4": ("scored", 0.0),
        "5": ("scored", 0.25),
        "6": ("scored", 1.0),
        "7": ("judge_error", None),
        "8": ("judge_error", None),
        "9": ("judge_error", None),
        "10": ("not_scored", None),
        "11": ("not_scored", None),
    }
    not_a_score = imported.notes.filter(pl.col("kind") == "not_a_score")
    assert not_a_score.height == 1 and "2 value(s)" in not_a_score.item(0, "detail")
    with pytest.raises(AuditRefused):  # 0.5 and 0.25 are not binary grades
        audit(imported)
    c = counts(audit(imported, grade="numeric", pass_threshold=1.0))
    assert (c["planned"], c["scored"], c["passed"], c["judge_failed"], c["not_scored"]) == (11, 6, 2, 3, 2)


def test_nonfinite_score_is_a_judge_error(tmp_path: Path) -> None:
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(_log([_sample(1, float("nan")), _sample(2, "C")], sample_ids=[1, 2])))
    imported = inspect_ai.read([path])
    assert imported.ledger.get_column("score_status").to_list() == ["judge_error", "scored"]
    assert imported.notes.filter(pl.col("kind") == "nonfinite_score").height == 1


def test_choose_scorer(tmp_path: Path) -> None:
    samples = [
        {"id": 1, "epoch": 1, "output": {"completion": "y"}, "scores": {"a": {"value": "I"}, "b": {"value": "C"}}},
        {"id": 2, "epoch": 1, "output": {"completion": "y"}, "scores": {"a": {"value": "C"}}},
    ]
    path = _write(tmp_path, "two_scorers.json", _log(samples, sample_ids=[1, 2], scorers=["a", "b"]))
    default = inspect_ai.read([path])
    assert default.info[0]["scorer"] == "a"
    assert default.ledger.get_column("passed").to_list() == [False, True]
    chosen = inspect_ai.read([path], score="b")
    assert chosen.ledger.get_column("score_status").to_list() == ["scored", "not_scored"]
    assert chosen.info[0]["scorers"] == ["a", "b"]


def test_error_retries_become_earlier_attempts(tmp_path: Path) -> None:
    retry = {"message": "boom", "traceback": "", "traceback_ansi": ""}
    samples = [_sample(1, "C", error_retries=[retry, retry]), _sample(2, "I")]
    path = _write(tmp_path, "retries.json", _log(samples, sample_ids=[1, 2]))
    imported = inspect_ai.read([path])
    one = imported.ledger.filter(pl.col("case_id") == "1").sort("attempt")
    assert one.select("attempt", "exec_status", "score_status").rows() == [
        (1, "error", "not_scored"),
        (2, "error", "not_scored"),
        (3, "completed", "scored"),
    ]
    assert imported.info[0]["attempts_read"] == 4
    first = counts(audit(imported, retry="first"))
    assert (first["exec_failed"], first["scored"]) == (1, 1)
    last = counts(audit(imported, retry="last_allowed"))
    assert (last["exec_failed"], last["scored"], last["passed"]) == (0, 2, 1)


def test_errored_sample_is_not_a_wrong_answer(tmp_path: Path) -> None:
    samples = [_sample(1, "C"), {"id": 2, "epoch": 1, "error": {"message": "503"}, "output": {"choices": []}}]
    path = _write(tmp_path, "err.json", _log(samples, sample_ids=[1, 2], totals=(2, 2)))
    imported = inspect_ai.read([path])
    c = counts(audit(imported))
    assert (c["exec_failed"], c["scored"], c["passed"], c["not_scored"]) == (1, 1, 1, 0)
    assert imported.notes.get_column("kind").to_list() == ["header_rows_disagree"]


def test_mixed_id_types_collide_with_a_note(tmp_path: Path) -> None:
    path = _write(tmp_path, "mixed.json", _log([_sample(1, "C"), _sample("1", "I")], sample_ids=[1, "1"]))
    imported = inspect_ai.read([path])
    assert imported.plan.cases.get_column("case_id").to_list() == ["1"]
    assert imported.notes.select("kind", "case_id").rows() == [("id_normalised", "1")]
    with pytest.raises(AuditRefused) as excinfo:  # two rows for one unit in one log
        audit(imported)
    assert "duplicate_key" in excinfo.value.problems.get_column("kind").to_list()


def test_no_sample_ids_falls_back_to_rows(tmp_path: Path) -> None:
    path = _write(tmp_path, "noids.json", _log([_sample("b", "C"), _sample("a", "I")], epochs=2))
    imported = inspect_ai.read([path])
    assert imported.plan.cases.get_column("case_id").to_list() == ["a", "b"]
    assert imported.plan.trials == 2
    assert imported.notes.select("kind", "detail").rows() == [
        (
            "plan_from_rows",
            "m/one (t): the header lists no eval.dataset.sample_ids; it was taken from the 2 sample id(s) present",
        )
    ]
    c = counts(audit(imported))
    assert (c["planned"], c["scored"], c["missing"]) == (4, 2, 2)


def test_same_task_and_model_in_two_logs_are_successive_attempts(tmp_path: Path) -> None:
    early = _write(
        tmp_path,
        "z_early.json",
        _log([_sample(1, "I")], sample_ids=[1], created="2025-01-01T10:00:00+02:00", run_id="r-early"),
    )
    late = _write(
        tmp_path,
        "a_late.json",
        _log([_sample(1, "C")], sample_ids=[1], created="2025-01-01T09:30:00+00:00", run_id="r-late"),
    )
    imported = inspect_ai.read([late, early])
    assert imported.ledger.sort("attempt").select("attempt", "run_id").rows() == [(1, "r-early"), (2, "r-late")]
    report = audit(imported, retry="first")
    assert counts(report)["passed"] == 0
    assert report.problems.filter(pl.col("kind") == "retry_after_scored").height == 1


def test_header_only_log_beside_a_log_with_rows(tmp_path: Path) -> None:
    header_only = _write(
        tmp_path, "header_only.json", _log(None, model="m/two", sample_ids=[1, 2], status="error", totals=(2, 0))
    )
    scored = _write(tmp_path, "scored.json", _log([_sample(1, "C"), _sample(2, "C")], sample_ids=[1, 2]))
    imported = inspect_ai.read([header_only, scored])
    report = audit(imported)
    two = counts(report, "m/two")
    assert (two["planned"], two["attempted"], two["missing"], two["scored"]) == (2, 0, 2, 0)
    assert report.summary.filter(pl.col("candidate") == "m/two").item(0, "pass_rate_scored") is None
    assert "run_status" in kinds(imported)


def test_eval_archive_with_retries_and_limits(tmp_path: Path) -> None:
    path = tmp_path / "synthetic.eval"
    doc = _log(None, sample_ids=["x"], epochs=1, scorers=["match"])
    sample = _sample("x", "I", limit={"type": "time", "limit": 30.5})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(doc))
        archive.writestr("samples/x_epoch_1.json", json.dumps(sample))
    imported = inspect_ai.read([path])
    row = imported.ledger.row(0, named=True)
    assert (row["limit"], row["exec_status"], row["score_status"], row["source"], row["line"]) == (
        "time=30.5",
        "completed",
        "scored",
        f"{path}!samples/x_epoch_1.json",
        1,
    )


# --- issue 17: zstd-compressed .eval members (Inspect >= 0.3.206) ----------------------------------


@pytest.mark.parametrize("path", [ZSTD_LEGACY, ZSTD_POSTFIX], ids=["PR3860-legacy", "PR4526-postfix"])
def test_zstd_eval_is_read(path: Path) -> None:
    with zipfile.ZipFile(path) as archive:
        assert {m.compress_type for m in archive.infolist()} == {93}
    imported = inspect_ai.read([path])
    assert counts(audit(imported)) == {
        "planned": 1,
        "attempted": 1,
        "completed": 1,
        "with_output": 1,
        "scored": 0,
        "passed": 0,
        "missing": 0,
        "exec_failed": 0,
        "judge_failed": 0,
        "not_scored": 1,
    }
    # the sample's two failed model calls are retries inside the sample, not attempts of the unit
    assert imported.ledger.select("case_id", "trial", "attempt", "exec_status").rows() == [("1", 1, 1, "completed")]
    assert imported.info[0]["scorer"] is None and imported.info[0]["scorers"] == []
    assert imported.notes.height == 0


def _refused_member(path: Path, tmp_path: Path, edit: Any) -> str:
    """The one refusing note's detail for a copy of ``path`` whose bytes ``edit(data, info)`` rewrote.

    ``info`` is the ZipInfo of the sample member; the note must be its ``unreadable_file``.
    """
    member = "samples/1_epoch_1.json"
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    edit(data, info)
    broken = tmp_path / path.name
    broken.write_bytes(bytes(data))
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([broken])
    refusing = excinfo.value.notes.filter(pl.col("refusing"))
    assert refusing.select("kind", "source").rows() == [("unreadable_file", f"{broken}!{member}")]
    assert (excinfo.value.path, excinfo.value.detail) == (f"{broken}!{member}", refusing.item(0, "detail"))
    return str(refusing.item(0, "detail"))


def test_zstd_member_whose_declared_size_is_wrong_is_unreadable(tmp_path: Path) -> None:
    def shrink(data: bytearray, info: zipfile.ZipInfo) -> None:
        # the member's central directory entry claims an uncompressed size (offset 24) of 10 bytes
        start = 0
        while (start := data.find(b"PK\x01\x02", start)) != -1:
            name_len = int.from_bytes(data[start + 28 : start + 30], "little")
            if data[start + 46 : start + 46 + name_len].decode() == info.filename:
                data[start + 24 : start + 28] = (10).to_bytes(4, "little")
            start += 4

    detail = _refused_member(ZSTD_POSTFIX, tmp_path, shrink)
    assert detail == "the decompressed archive member does not match its recorded size and CRC-32"


def test_corrupt_zstd_member_is_unreadable(tmp_path: Path) -> None:
    def corrupt(data: bytearray, info: zipfile.ZipInfo) -> None:
        name_len, extra_len = (
            int.from_bytes(data[info.header_offset + k : info.header_offset + k + 2], "little") for k in (26, 28)
        )
        body = info.header_offset + 30 + name_len + extra_len
        data[body : body + 8] = b"\xff" * 8  # the zstd frame's magic number and header

    assert _refused_member(ZSTD_LEGACY, tmp_path, corrupt).startswith("invalid zstd data: ")


@pytest.mark.parametrize("path", [ZSTD_POSTFIX, LOG_STREAMING], ids=["zstd", "deflate"])
def test_member_larger_than_the_bound_is_unreadable(path: Path) -> None:
    with zipfile.ZipFile(path) as archive:
        header = archive.getinfo("header.json").file_size
        largest = max(m.file_size for m in archive.infolist() if m.filename.startswith("samples/"))
    assert header < largest
    with limits(member_bytes=header), pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([path])
    refusing = excinfo.value.notes.filter(pl.col("refusing") & (pl.col("kind") == "unreadable_file"))
    assert refusing.height >= 1
    details = refusing.get_column("detail").to_list()
    assert all(f"more than {header} bytes" in d and "raise it with --max-member-bytes" in d for d in details)
    assert excinfo.value.notes.filter(pl.col("refusing")).height == refusing.height
    assert all("!samples/" in s for s in refusing.get_column("source").to_list())


# --- issue 17: eval-set folders, retried eval sets, duplicates -------------------------------------


def test_eval_set_folder_skips_its_manifest_index_and_id_file() -> None:
    imported = inspect_ai.read([EVAL_SET])
    assert [Path(i["source"]).name for i in imported.info] == [
        "2025-09-12T11-41-56-04-00_popularity_HdSVrmTDEge636qZ2op64f.eval"
    ]
    assert imported.info[0]["eval_set_id"] == "8bMAzyM8id2v2XxR7M9fVM"
    c = counts(audit(imported))
    assert (c["planned"], c["attempted"], c["scored"], c["passed"]) == (1, 1, 1, 0)
    assert audit(imported).summary.item(0, "pass_rate_scored") == 0.0
    assert imported.notes.get_column("kind").to_list() == ["limited_run"]


def test_eval_set_manifest_named_alone_is_no_export() -> None:
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([EVAL_SET / "eval-set.json", EVAL_SET / "logs.json"])
    assert excinfo.value.problems.select("kind", "refusing").rows() == [("no_export", True)]


def test_retried_eval_set_reads_each_sample_once_in_start_time_order() -> None:
    imported = inspect_ai.read([RETRIED_SET])
    assert sorted(Path(i["source"]).name for i in imported.info) == sorted([RETRIED_FIRST.name, RETRIED_SECOND.name])
    # started 20:28:13 (first) and 20:41:02 (retry); eval.created is equal; the retry's name sorts first
    assert imported.ledger.sort("case_id", "attempt").select("case_id", "attempt", "score", "source").rows() == [
        ("1", 1, 1.0, str(RETRIED_FIRST)),
        ("2", 1, 1.0, str(RETRIED_FIRST)),
        ("3", 1, 0.0, str(RETRIED_FIRST)),
        ("3", 2, 1.0, str(RETRIED_SECOND)),
    ]
    duplicates = imported.notes.filter(pl.col("kind") == "duplicate_import")
    assert duplicates.select("source", "case_id", "line", "refusing").rows() == [
        (str(RETRIED_SECOND), "1", 1, False),
        (str(RETRIED_SECOND), "2", 2, False),
    ]
    assert "uuid equal" in duplicates.item(0, "detail") and str(RETRIED_FIRST) in duplicates.item(0, "detail")
    first = counts(audit(imported, retry="first"))
    assert (first["planned"], first["attempted"], first["scored"], first["passed"]) == (3, 3, 3, 2)


def test_same_log_copied_is_one_attempt_imported_twice(tmp_path: Path) -> None:
    copy = tmp_path / "copy-of-popularity.json"
    copy.write_bytes(CANCELLED.read_bytes())
    imported = inspect_ai.read([CANCELLED, copy])
    assert imported.ledger.height == 3
    (kept,) = set(imported.ledger.get_column("source").to_list())  # equal start times: the first path is kept
    duplicates = imported.notes.filter(pl.col("kind") == "duplicate_import")
    assert duplicates.get_column("case_id").to_list() == ["1", "2", "3"]
    assert set(duplicates.get_column("source").to_list()) == {str(CANCELLED), str(copy)} - {kept}
    c = counts(audit(imported))
    assert (c["planned"], c["attempted"], c["scored"], c["passed"]) == (3, 3, 3, 2)


def test_log_without_uuids_copied_is_read_once_by_content(tmp_path: Path) -> None:
    copy = tmp_path / "copy.eval"
    copy.write_bytes(SCORED_TWIN.read_bytes())
    imported = inspect_ai.read([SCORED_TWIN, copy, NO_SCORER])  # NO_SCORER: same cases, other samples
    assert imported.ledger.height == 20
    duplicates = imported.notes.filter(pl.col("kind") == "duplicate_import")
    assert duplicates.height == 10
    assert "content equal" in duplicates.item(0, "detail")


def test_security_guide_two_runs_overlap_on_ids_1_to_3() -> None:
    imported = inspect_ai.read([SECURITY_EVAL, SECURITY_JSON])
    assert imported.plan.n_units == 16
    twice = imported.ledger.filter(pl.col("attempt") == 2)
    assert sorted(twice.get_column("case_id").to_list()) == ["1", "2", "3"]
    assert set(twice.get_column("run_id").to_list()) == {"9zsQGSCUfJL6aZdSHP6PQc"}  # the later (September) run
    assert imported.notes.filter(pl.col("kind") == "duplicate_import").height == 0  # different samples (uuids)
    c = counts(audit(imported))
    assert (c["planned"], c["attempted"], c["scored"], c["passed"], c["missing"]) == (16, 16, 16, 11, 0)


# --- issue 17: --score -----------------------------------------------------------------------------


def test_mistyped_score_refuses_naming_the_scorers() -> None:
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([SCORED_TWIN], score="mach")
    problems = excinfo.value.problems.filter(pl.col("refusing"))
    assert problems.select("kind", "source", "candidate", "refusing").rows() == [
        ("unknown_score", str(SCORED_TWIN), "openai/gpt-4o-mini", True)
    ]
    assert problems.item(0, "detail") == (
        "openai/gpt-4o-mini (popularity): no scorer named 'mach' in the export (has: match): name one with "
        "--score <scorer>, e.g. --score match"
    )


def test_declared_score_missing_from_a_log_without_scorers_refuses() -> None:
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([ZSTD_POSTFIX], score="match")
    assert excinfo.value.problems.select("kind", "detail").rows() == [
        ("unknown_score", "mockllm/fake (task): no scorer named 'match' in the export (has: none)")
    ]


def test_several_scorers_only_in_samples_are_ambiguous(tmp_path: Path) -> None:
    samples = [
        {"id": 1, "epoch": 1, "output": {"completion": "y"}, "scores": {"b": {"value": "I"}, "a": {"value": "C"}}},
    ]
    path = _write(tmp_path, "unlisted.json", _log(samples, sample_ids=[1]))
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([path])
    assert excinfo.value.problems.select("kind", "detail").rows() == [
        ("ambiguous_score", "m/one (t): 2 scorers in the export (a, b) and none declared: name one with --score")
    ]
    chosen = inspect_ai.read([path], score="b")
    assert chosen.ledger.select("score_status", "score").rows() == [("scored", 0.0)]


# --- issue 17: --limit runs ------------------------------------------------------------------------


def test_limited_run_says_how_many_of_the_dataset_were_planned() -> None:
    imported = inspect_ai.read([SECURITY_JSON])
    assert imported.notes.select("kind", "detail", "refusing").rows() == [
        (
            "limited_run",
            "openai/gpt-4o-mini (security_guide): --limit 3: 3 of 16 samples planned; the rates describe those 3, "
            "not the task",
            False,
        )
    ]
    c = counts(audit(imported))
    assert (c["planned"], c["scored"], c["passed"]) == (3, 3, 3)


def test_header_only_log_of_its_whole_dataset_is_not_limited() -> None:
    imported = inspect_ai.read([LLM_SCORING])  # 1000 sample_ids of a 1000-sample dataset, samples stripped
    assert "limited_run" not in kinds(imported)
    c = counts(audit(imported))
    assert (c["planned"], c["attempted"], c["missing"], c["scored"]) == (1000, 0, 1000, 0)


def test_a_limit_larger_than_the_dataset_did_not_limit_the_run() -> None:
    imported = inspect_ai.read([CYSE2])  # eval.config.limit = 20000, dataset.samples = 1
    assert imported.info[0]["limit"] == 20000
    assert "limited_run" not in kinds(imported)


def test_limit_without_a_dataset_size(tmp_path: Path) -> None:
    doc = _log([_sample(1), _sample(2)], sample_ids=[1, 2], limit=[0, 2])
    del doc["eval"]["dataset"]["samples"]
    imported = inspect_ai.read([_write(tmp_path, "limit.json", doc)])
    assert imported.notes.select("kind", "detail").rows() == [
        (
            "limited_run",
            "m/one (t): --limit [0, 2]: 2 samples planned, of a dataset whose size is not recorded; the rates "
            "describe those 2, not the task",
        )
    ]


# --- issue 17: ids and trials outside the plan -------------------------------------------------------


def test_cyse2_string_id_in_header_and_int_in_sample_is_one_case() -> None:
    imported = inspect_ai.read([CYSE2])
    assert imported.notes.filter(pl.col("kind") == "id_normalised").select("case_id", "refusing").rows() == [
        ("1", False)
    ]
    report = audit(imported, grade="numeric")
    c = counts(report)
    assert (c["planned"], c["attempted"], c["completed"], c["scored"], c["missing"]) == (4, 1, 1, 1, 3)
    assert imported.ledger.select("trial", "score").rows() == [(1, 0.65)]


def test_epoch_4_of_a_one_epoch_plan_refuses_as_trial_out_of_range() -> None:
    imported = inspect_ai.read([TOOL_CALL_ERROR])
    assert (imported.plan.trials, imported.plan.n_units) == (1, 1)  # eval.config {}: 1 epoch; sample_ids [1]
    assert imported.plan.candidates == ("...",)
    with pytest.raises(AuditRefused) as excinfo:
        audit(imported)
    refusing = excinfo.value.problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "case_id", "trial").rows() == [("trial_out_of_range", "1", 4)]


def test_claude_3_7_ids_against_the_other_models_ten_ids() -> None:
    imported = inspect_ai.read([SONNET_37, GPT_OSS])
    # both headers plan the whole 2970-sample dataset: each candidate ran 10 of them, different ones
    c = counts(audit(imported), "anthropic/claude-3-7-sonnet-20250219")
    assert (c["planned"], c["attempted"], c["missing"], c["not_scored"]) == (2970, 10, 2960, 10)
    ten = imported.ledger.filter(pl.col("candidate") == "openrouter/openai/gpt-oss-20b").get_column("case_id")
    frozen = Plan.from_frame(pl.DataFrame({"case_id": ten.sort()}), candidates=list(imported.plan.candidates))
    with pytest.raises(AuditRefused) as excinfo:
        evalframe.audit(frozen, imported.results)
    unknown = excinfo.value.problems.filter(pl.col("kind") == "unknown_case")
    assert unknown.height == 9
    assert set(unknown.get_column("candidate").to_list()) == {"anthropic/claude-3-7-sonnet-20250219"}


# --- issue 38: dict-valued scores, scores found nowhere, settings that differ, notes that name the candidate --

REAL2_INSPECT = REAL2 / "inspect_ai"
SCICODE = REAL2_INSPECT / "Raheemrana-scicode-bench/logs/2026-02-06T01-49-23-07-00_scicode_fXKJvoyJdbtWYQAWpTYDvJ.eval"
STARSIM = REAL2_INSPECT / "starsimhub-scipy2026_starsim_ai" / "logs"
OPUS4_NO_BACKGROUND = STARSIM / "2026-02-25T19-20-10+00-00_starsim-benchmark_hBH4VGrPv22VuJgQXhNSJt.eval"
OPUS4_BACKGROUND = STARSIM / "2026-02-25T19-22-25+00-00_starsim-benchmark_mPrWitKNLFZeL9WGpUJ57s.eval"
GVISOR = REAL2_INSPECT / "UKGovernmentBEIS-inspect-evals-log-viewer" / "logs" / "gVisor-human.eval"
needs_real2 = pytest.mark.skipif(not REAL2.is_dir(), reason="../shared/data/real2 is not laid beside the repository")


def _dict_log(samples: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A control-arena-like log: scorer 'scorer' writes a dict, the header lists its keys as scores."""
    doc = _log(samples, sample_ids=[s["id"] for s in samples], **fields)
    doc["results"]["scores"] = [
        {"name": "main_task_success", "scorer": "scorer"},
        {"name": "side_task_success", "scorer": "scorer"},
    ]
    return doc


def _dict_sample(sid: int, value: Any) -> dict[str, Any]:
    return _sample(sid, value, scorer="scorer")


def test_dict_scorer_is_read_by_key(tmp_path: Path) -> None:
    samples = [
        _dict_sample(1, {"main_task_success": True, "side_task_success": False}),
        _dict_sample(2, {"main_task_success": False, "side_task_success": True}),
        _dict_sample(3, {"side_task_success": True}),  # the scorer wrote no main_task_success
        _dict_sample(4, "C"),  # not a dict: no key to read
        {"id": 5, "epoch": 1, "output": {"completion": "y"}, "scores": {}},  # no scorer ran on it
    ]
    path = _write(tmp_path, "dict.json", _dict_log(samples))
    default = inspect_ai.read([path])
    assert (default.info[0]["scorer"], default.info[0]["score_read_at"]) == (
        "main_task_success",
        "scores['scorer'].value['main_task_success']",
    )
    assert default.ledger.select("case_id", "score_status", "score", "passed", "has_output").rows() == [
        ("1", "scored", 1.0, True, True),
        ("2", "scored", 0.0, False, True),
        ("3", "judge_error", None, None, True),
        ("4", "judge_error", None, None, True),
        ("5", "not_scored", None, None, True),
    ]
    assert default.notes.select("kind", "candidate", "detail").rows() == [
        (
            "not_a_score",
            "m/one",
            "m/one (t): 2 value(s) of score 'main_task_success' (read at scores['scorer'].value['main_task_success'])"
            ' is not a score (e.g. {"side_task_success": true}); read as judge_error',
        )
    ]
    side = inspect_ai.read([path], score="side_task_success")
    assert side.ledger.get_column("score").to_list() == [0.0, 1.0, 1.0, None, None]
    c = counts(audit(side))
    assert (c["planned"], c["scored"], c["passed"], c["judge_failed"], c["not_scored"], c["with_output"]) == (
        5,
        3,
        2,
        1,
        1,
        5,
    )


def test_dict_scorer_by_its_own_name_names_the_keys(tmp_path: Path) -> None:
    samples = [_dict_sample(1, {"main_task_success": True, "side_task_success": False})]
    path = _write(tmp_path, "dict.json", _dict_log(samples))
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([path], score="scorer")
    assert excinfo.value.problems.select("kind", "candidate", "detail").rows() == [
        (
            "ambiguous_score",
            "m/one",
            "m/one (t): scorer 'scorer' gives a dict per sample, not one grade: name one of its keys with --score "
            "(main_task_success, side_task_success)",
        )
    ]


def test_header_from_eval_scorers_lists_the_keys_of_per_key_metrics(tmp_path: Path) -> None:
    doc = _dict_log([_dict_sample(1, {"main_task_success": False, "side_task_success": True})])
    doc["results"] = {}
    metric = [{"name": "inspect_ai/accuracy", "options": {}}]
    doc["eval"]["scorers"] = [
        {"name": "scorer", "metrics": {"side_task_success": metric, "main_task_success": metric}},
        {"name": "monitor", "metrics": metric},
    ]
    imported = inspect_ai.read([_write(tmp_path, "dict.json", doc)])
    assert imported.info[0]["scorer"] == "side_task_success"
    assert imported.info[0]["scorers"] == ["side_task_success", "main_task_success", "monitor", "scorer"]
    assert imported.ledger.select("score_status", "score").rows() == [("scored", 1.0)]


def test_a_score_the_header_names_must_be_in_the_samples(tmp_path: Path) -> None:
    samples = [_sample(1, "C", scorer="match1"), _sample(2, "I", scorer="match1")]
    path = _write(tmp_path, "renamed.json", _log(samples, sample_ids=[1, 2], scorers=["match"]))
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([path])
    assert excinfo.value.problems.select("kind", "candidate", "detail").rows() == [
        (
            "unknown_score",
            "m/one",
            "m/one (t): score 'match' is in no sample: the header lists it as a score of scorer 'match'; looked for "
            "scores['match'].value in the 2 samples, which hold match1",
        )
    ]
    doc = _dict_log([_dict_sample(1, {"side_task_success": True})])
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([_write(tmp_path, "keyless.json", doc)], score="main_task_success")
    assert excinfo.value.problems.get_column("detail").to_list() == [
        "m/one (t): score 'main_task_success' is in no sample: the header lists it as a score of scorer 'scorer'; "
        "looked for scores['scorer'].value['main_task_success'] in the 1 samples, which hold "
        "scorer{side_task_success}"
    ]


def test_a_log_whose_samples_hold_no_score_leaves_units_not_scored(tmp_path: Path) -> None:
    # the header's scorer never ran (inspect eval --no-score): nothing to look under, nothing refused
    samples = [{"id": 1, "epoch": 1, "output": {"completion": "y"}, "scores": {}}]
    imported = inspect_ai.read([_write(tmp_path, "unscored.json", _log(samples, sample_ids=[1], scorers=["match"]))])
    assert imported.ledger.select("score_status", "has_output").rows() == [("not_scored", True)]


def test_output_is_found_in_messages_or_model_events(tmp_path: Path) -> None:
    answer = {"role": "assistant", "content": [{"type": "text", "text": "def f(): ..."}]}
    empty = {"role": "assistant", "content": ""}
    no_choices: dict[str, Any] = {"choices": []}

    def sample(sid: int, **fields: Any) -> dict[str, Any]:
        return {"id": sid, "epoch": 1, "output": no_choices, "scores": {}, **fields}

    samples = [
        sample(1, messages=[{"role": "user", "content": "q"}, answer]),
        sample(2, events=[{"event": "model", "output": {"choices": [{"message": answer}]}}]),
        sample(3, events=[{"event": "model", "output": {"choices": [{"message": empty}]}}]),
        sample(4, messages=[{"role": "user", "content": "q"}]),
    ]
    imported = inspect_ai.read([_write(tmp_path, "outputs.json", _log(samples, sample_ids=[1, 2, 3, 4]))])
    assert imported.ledger.select("case_id", "has_output").rows() == [
        ("1", True),
        ("2", True),
        ("3", False),
        ("4", False),
    ]


@needs_real2
def test_scicode_problem_correctness_is_read_inside_the_dict() -> None:
    with pytest.raises(ImportRefused) as excinfo:
        inspect_ai.read([SCICODE])
    assert excinfo.value.problems.select("kind", "candidate").rows() == [
        ("ambiguous_score", "anthropic/claude-3-haiku-20240307")
    ]
    assert excinfo.value.problems.item(0, "detail").endswith(
        "name one of its keys with --score (Problem Correctness, Total Correct, Total Steps)"
    )
    imported = inspect_ai.read([SCICODE], score="Problem Correctness")
    # output.choices is empty in all 50 samples, but each sample's model-call events hold one non-empty answer
    # per step (41 samples of 2 steps, 9 of 3): with_output counts samples whose model answered, so all 50
    c = counts(audit(imported))
    assert c == {
        "planned": 50,
        "attempted": 50,
        "completed": 50,
        "with_output": 50,
        "scored": 50,
        "passed": 13,
        "missing": 0,
        "exec_failed": 0,
        "judge_failed": 0,
        "not_scored": 0,
    }
    assert audit(imported).units.filter(pl.col("outcome") == "no_output").height == 0


@needs_real2
def test_gvisor_dict_keys_are_scores_and_the_rest_of_its_scorers_too() -> None:
    got = {
        name: inspect_ai.read([GVISOR], score=name).ledger.select("score_status", "score").rows()
        for name in ("side_task_success", "main_task_success", "max_sus_scorer", "full_traj_monitor")
    }
    assert got == {
        "side_task_success": [("scored", 1.0)],
        "main_task_success": [("scored", 1.0)],
        "max_sus_scorer": [("scored", 2.0)],
        "full_traj_monitor": [("scored", 0.0)],
    }


def test_runs_with_different_task_args_are_different_candidates(tmp_path: Path) -> None:
    def run(name: str, background: bool, value: str, created: str) -> Path:
        samples = [_sample(1, value, uuid=f"{name}-1"), _sample(2, "C", uuid=f"{name}-2")]
        doc = _log(samples, sample_ids=[1, 2], created=created, run_id=name)
        doc["eval"]["task_args"] = {"with_background": background, "timeout": 60}
        return _write(tmp_path, f"{name}.json", doc)

    early = run("early", False, "I", "2025-01-01T10:00:00+00:00")
    late = run("late", True, "C", "2025-01-01T11:00:00+00:00")
    again = run("again", True, "I", "2025-01-01T12:00:00+00:00")
    imported = inspect_ai.read([early, late, again])
    assert imported.plan.candidates == ("m/one [with_background=false]", "m/one [with_background=true]")
    assert imported.ledger.select("candidate", "case_id", "attempt", "run_id", "score").rows() == [
        ("m/one [with_background=false]", "1", 1, "early", 0.0),
        ("m/one [with_background=false]", "2", 1, "early", 1.0),
        ("m/one [with_background=true]", "1", 1, "late", 1.0),
        ("m/one [with_background=true]", "1", 2, "again", 0.0),
        ("m/one [with_background=true]", "2", 1, "late", 1.0),
        ("m/one [with_background=true]", "2", 2, "again", 1.0),
    ]
    differ = imported.notes.filter(pl.col("kind") == "settings_differ")
    assert sorted(differ.select("candidate", "refusing").rows()) == [
        ("m/one [with_background=false]", False),
        ("m/one [with_background=true]", False),
    ]
    assert set(differ.get_column("detail")) == {
        "runs of m/one (t) recorded different settings, read as 2 candidates, not as retries of one another: "
        "with_background = false in early.json; true in late.json, again.json"
    }
    report = audit(imported)
    assert counts(report, "m/one [with_background=false]")["passed"] == 1
    assert counts(report, "m/one [with_background=true]")["passed"] == 2  # first attempts: late's C, C


def test_a_setting_one_run_does_not_record_is_unknown(tmp_path: Path) -> None:
    first = _log([_sample(1)], sample_ids=[1], run_id="a")
    first["eval"]["task_args"] = {"with_background": True}
    second = _log([_sample(1)], sample_ids=[1], run_id="b")
    second["eval"]["task_args"] = {"with_background": True, "with_test_cases": False}
    second["plan"] = {"config": {"temperature": 0.0, "max_connections": 4}}
    paths = [_write(tmp_path, "a.json", first), _write(tmp_path, "b.json", second)]
    imported = inspect_ai.read(paths)
    assert imported.plan.candidates == ("m/one [with_test_cases=false]", "m/one [with_test_cases=unknown]")
    assert imported.notes.filter(pl.col("kind") == "settings_differ").item(0, "detail") == (
        "runs of m/one (t) recorded different settings, read as 2 candidates, not as retries of one another: "
        "with_test_cases = unknown (not recorded) in a.json; false in b.json. "
        "generate.temperature = unknown (not recorded) in a.json; 0.0 in b.json"
    )


def test_runs_whose_settings_agree_stay_attempts_whatever_their_concurrency(tmp_path: Path) -> None:
    paths = []
    for name, connections in (("a", 4), ("b", 10)):
        created = f"2025-01-01T1{len(paths)}:00:00+00:00"
        doc = _log([_sample(1, uuid=name)], sample_ids=[1], run_id=name, created=created)
        doc["eval"]["task_args"] = {"with_background": True}
        doc["plan"] = {"config": {"temperature": 0.0, "max_connections": connections}}
        paths.append(_write(tmp_path, f"{name}.json", doc))
    imported = inspect_ai.read(paths)
    assert imported.plan.candidates == ("m/one",)
    assert imported.ledger.select("attempt", "run_id").rows() == [(1, "a"), (2, "b")]
    assert "settings_differ" not in kinds(imported)


@needs_real2
def test_starsim_runs_with_and_without_background_are_two_candidates() -> None:
    imported = inspect_ai.read([OPUS4_BACKGROUND, OPUS4_NO_BACKGROUND])
    report = audit(imported)
    opus = "anthropic/claude-opus-4-20250514"
    got = {}
    for name in report.summary.get_column("candidate"):
        c = counts(report, name)
        got[name] = (c["planned"], c["scored"], c["passed"])
    assert got == {f"{opus} [with_background=false]": (23, 23, 8), f"{opus} [with_background=true]": (23, 23, 10)}
    assert {i["source"]: i["candidate"] for i in imported.info} == {
        str(OPUS4_NO_BACKGROUND): f"{opus} [with_background=false]",
        str(OPUS4_BACKGROUND): f"{opus} [with_background=true]",
    }


def test_every_note_about_a_log_names_its_candidate() -> None:
    imported = inspect_ai.read([CCOT])
    notes = imported.notes.select("kind", "candidate", "detail")
    disagree = notes.filter(pl.col("kind") == "header_rows_disagree")
    assert disagree.rows() == [
        (
            "header_rows_disagree",
            "openrouter/deepseek/deepseek-r1-distill-qwen-14b",
            "openrouter/deepseek/deepseek-r1-distill-qwen-14b (_inner): header results.completed_samples = 10 but the "
            "log has 9 sample rows without an error (rows are the evidence)",
        )
    ]
    assert notes.filter(pl.col("candidate").is_null()).height == 0


def test_a_sample_graded_by_another_scorer_is_not_scored_never_no_output(tmp_path: Path) -> None:
    # sample 2 has no text output, but scorer 'b' judged it: the chosen 'a' did not grade it (not_scored)
    samples = [
        {"id": 1, "epoch": 1, "output": {"choices": []}, "scores": {"a": {"value": "C"}}},
        {"id": 2, "epoch": 1, "output": {"choices": []}, "scores": {"b": {"value": "I"}}},
        {"id": 3, "epoch": 1, "output": {"choices": []}, "scores": {}},
    ]
    imported = inspect_ai.read([_write(tmp_path, "other.json", _log(samples, sample_ids=[1, 2, 3], scorers=["a"]))])
    assert imported.ledger.select("case_id", "score_status", "has_output").rows() == [
        ("1", "scored", True),
        ("2", "not_scored", True),
        ("3", "not_scored", False),
    ]
    outcomes = audit(imported).units.sort("case_id").get_column("outcome").cast(pl.String).to_list()
    assert outcomes == ["passed", "not_scored", "no_output"]


def test_a_candidate_is_named_by_the_short_settings_that_tell_its_runs_apart(tmp_path: Path) -> None:
    paths = []
    for name, mode, kwargs in (("honest", "honest", None), ("attack", "attack", {"policy": "fixed", "x": "y" * 40})):
        doc = _log([_sample(1, uuid=name)], sample_ids=[1], run_id=name)
        doc["eval"]["task_args"] = {"mode": mode, "kwargs": kwargs}
        paths.append(_write(tmp_path, f"{name}.json", doc))
    imported = inspect_ai.read(paths)
    assert imported.plan.candidates == ("m/one [mode=attack]", "m/one [mode=honest]")
