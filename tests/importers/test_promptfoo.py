"""The promptfoo importer against the real export and broken / reshaped variants of it."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe
from evalframe.errors import AuditRefused, InputFormatError
from evalframe.importers import Imported, promptfoo
from evalframe.importers._kit import ImportRefused, ImportUnreadable
from evalframe.report import AuditReport
from tests.conftest import REAL, real

PROMPTFOO = REAL / "promptfoo"
SAMPLE = PROMPTFOO / "promptfoo-promptfoo" / "test" / "__fixtures__" / "sample-export.json"
DIALOGUE = PROMPTFOO / "reDreamAI-measure-ai-drift" / "promptfoo-dialogue-results.json"
DRIFT = PROMPTFOO / "reDreamAI-measure-ai-drift" / "promptfoo-results.json"
EMPTY = PROMPTFOO / "AlekseyF7-LLM_Security_Range" / "promptfoo-results.json"
SMOKE = PROMPTFOO / "michaelheckmann-promptfoo-nextjs-viewer" / "experiments" / "results" / "smoke.json"
WORKBENCH = PROMPTFOO / "krystianbergmann-prompt-eval-workbench" / "promptfoo-results.json"
GPT5, MINI = "openai:gpt-5", "openai:gpt-5-mini"
COUNTS = ["planned", "attempted", "completed", "with_output", "scored", "passed", "failed"]
COUNTS += ["missing", "exec_failed", "no_output", "judge_failed", "not_scored"]


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SAMPLE.read_text(encoding="utf-8"))
    return doc


def _write(tmp_path: Path, doc: Any, name: str = "x.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _audit(imp: Imported, **kw: Any) -> AuditReport:
    return evalframe.audit(imp.plan, imp.results, **kw)


def _refused(paths: list[Path], **kw: Any) -> pl.DataFrame:
    """The problems of an import that must refuse."""
    with pytest.raises(ImportRefused) as exc:
        promptfoo.read(paths, **kw)
    return exc.value.problems


def _unreadable(paths: list[Path], **kw: Any) -> pl.DataFrame:
    """The notes of an import that must fail as unreadable (an input error), with the first place on the error."""
    with pytest.raises(ImportUnreadable) as exc:
        promptfoo.read(paths, **kw)
    first = exc.value.notes.filter(pl.col("kind") == "unreadable_file").sort("source", "line").row(0, named=True)
    assert (exc.value.path, exc.value.line, exc.value.detail) == (first["source"], first["line"], first["detail"])
    return exc.value.notes


def _counts(report: AuditReport) -> dict[Any, dict[str, int]]:
    """Counts per candidate, or per (task, candidate) when the report has tasks (several prompts)."""
    if "task" in report.summary.columns:
        rows = report.summary.sort("task", "candidate").select("task", "candidate", *COUNTS).to_dicts()
        return {(r.pop("task"), r.pop("candidate")): r for r in rows}
    rows = report.summary.sort("candidate").select("candidate", *COUNTS).to_dicts()
    return {r.pop("candidate"): r for r in rows}


def _row(doc: dict[str, Any], provider: str, test_idx: int) -> dict[str, Any]:
    return next(r for r in doc["results"]["results"] if r["provider"]["id"] == provider and r["testIdx"] == test_idx)


def _c(**kw: int) -> dict[str, int]:
    base = dict.fromkeys(COUNTS, 0)
    base.update(kw)
    return base


# --- the real export ------------------------------------------------------------------


def test_real_sample_export_counts_under_the_default_binary_grade() -> None:
    # issue 17: the default --grade binary refused this export (invalid_grade x4) although every row has `success`
    imp = promptfoo.read([SAMPLE])
    assert imp.plan.candidates == (GPT5, MINI)
    assert imp.plan.cases.get_column("case_id").to_list() == ["0", "1"]
    assert imp.plan.trials == 1
    assert imp.plan.n_units == 4
    assert imp.notes.height == 0
    report = _audit(imp)
    # all four results failed an assertion (latency > 3000 ms): scored fails, not execution errors
    done = _c(planned=2, attempted=2, completed=2, with_output=2, scored=2, failed=2)
    assert _counts(report) == {GPT5: done, MINI: done}
    summary = report.summary.sort("candidate")
    assert summary.get_column("scored_coverage").to_list() == [1.0, 1.0]
    assert summary.get_column("pass_rate_scored").to_list() == [0.0, 0.0]
    assert summary.get_column("pass_rate_upper").to_list() == [0.0, 0.0]


def test_real_sample_export_rows() -> None:
    imp = promptfoo.read([SAMPLE])
    assert imp.ledger.schema == promptfoo.LEDGER_SCHEMA
    got = imp.ledger.sort("line").select("line", "candidate", "case_id", "score", "passed").rows()
    assert got == [
        (1, MINI, "0", 0.0, False),
        (2, GPT5, "0", 0.0, False),
        (3, MINI, "1", 0.0, False),
        (4, GPT5, "1", 0.0, False),
    ]
    # the `error` field holds the latency assertion's message on every row; it is not an exec failure
    assert set(imp.ledger.get_column("exec_status")) == {"completed"}
    assert set(imp.ledger.get_column("score_status")) == {"scored"}
    assert set(imp.ledger.get_column("run_id")) == {"eval-WJi-2025-10-01T20:08:11"}
    assert set(imp.ledger.get_column("source")) == {str(SAMPLE)}
    assert imp.ledger.get_column("attempt").to_list() == [1, 1, 1, 1]
    assert imp.ledger.get_column("limit").null_count() == 4


def test_weighted_score_under_the_numeric_grade() -> None:
    imp = promptfoo.read([SAMPLE], score="score")
    got = imp.ledger.sort("line").select("line", "candidate", "score", "passed").rows()
    assert got == [
        (1, MINI, 0.75, False),
        (2, GPT5, 0.5, False),
        (3, MINI, 0.6666666666666666, False),
        (4, GPT5, 0.6666666666666666, False),
    ]
    report = _audit(imp, grade="numeric")
    done = _c(planned=2, attempted=2, completed=2, with_output=2, scored=2, failed=2)
    assert _counts(report) == {GPT5: done, MINI: done}  # passed comes from `success`, not from a threshold
    summary = report.summary.sort("candidate")
    assert summary.get_column("mean_score").to_list() == [pytest.approx(7 / 12), pytest.approx(17 / 24)]
    assert summary.get_column("pass_rate_scored").to_list() == [0.0, 0.0]


def test_weighted_score_refuses_under_the_binary_grade() -> None:
    imp = promptfoo.read([SAMPLE], score="score")
    with pytest.raises(AuditRefused) as err:
        _audit(imp)
    kinds = err.value.problems.filter(pl.col("refusing")).get_column("kind").to_list()
    assert kinds == ["invalid_grade"] * 4


def test_real_sample_export_info() -> None:
    (info,) = promptfoo.read([SAMPLE]).info
    assert info["layout"] == "v3"
    assert info["version"] == 3
    assert info["eval_id"] == info["run_id"] == "eval-WJi-2025-10-01T20:08:11"
    assert info["timestamp"] == "2025-10-01T20:08:11.168Z"
    assert info["promptfoo_version"] == "0.118.10"
    assert info["stats"] == {"successes": 0, "failures": 4, "errors": 0}
    assert info["rows_read"] == 4
    assert info["declared_test_runs"] == 2
    assert info["plan_basis"] == "config"
    assert info["case_id_basis"] == "testIdx"
    assert info["score"] == "success"


def test_dialogue_export_plans_the_config_tests_and_grades_from_success() -> None:
    # 6 declared tests, 1 ran: success false although 10 of 11 assertions passed (weighted score 0.909)
    imp = promptfoo.read([DIALOGUE])
    report = _audit(imp)
    provider = "python:prompts/dialogue_provider.py"
    assert _counts(report) == {
        provider: _c(planned=6, attempted=1, completed=1, with_output=1, scored=1, failed=1, missing=5)
    }
    weighted = _audit(promptfoo.read([DIALOGUE], score="score"), grade="numeric")
    assert weighted.summary.get_column("mean_score").to_list() == [pytest.approx(10 / 11)]
    assert _counts(weighted)[provider]["passed"] == 0


def test_all_error_run_is_not_a_zero_pass_rate() -> None:
    # failureReason 2 on all 16 rows: execution errors, never graded. Each prompt is a task (its KB-long
    # label cut to 60 characters), the provider alone the candidate
    rows = json.loads(DRIFT.read_text(encoding="utf-8"))["results"]["results"]
    assert {r["failureReason"] for r in rows} == {2}
    per = Counter((r["prompt"]["label"][:40], r["provider"]["id"]) for r in rows)
    provider = "openai:chat:arcee-ai/trinity-large-preview:free"
    first = "prompts/patient_test_prompt.txt: The therapist has just said…"
    second = "prompts/patient_test_prompt.txt: You are a therapy patient i…"
    assert per == {(first[:40], provider): 8, (second[:40], provider): 8}
    report = _audit(promptfoo.read([DRIFT]))
    errors = _c(planned=8, attempted=8, exec_failed=8)
    assert _counts(report) == {(first, provider): errors, (second, provider): errors}
    assert report.summary.get_column("pass_rate_scored").to_list() == [None, None]


def test_assertion_message_in_error_is_a_graded_fail() -> None:
    # failureReason 1 with the assertion's message in `error`: completed and scored, not an execution error
    imp = promptfoo.read([WORKBENCH])
    failing = imp.ledger.filter(pl.col("score_status") == "scored", ~pl.col("passed"))
    assert failing.select("case_id", "exec_status").rows() == [("1", "completed")]
    assert _counts(_audit(imp)) == {
        "openai:chat:gpt-4o-mini": _c(planned=3, attempted=3, completed=3, with_output=3, scored=3, passed=2, failed=1)
    }


def test_mistyped_score_refuses_naming_the_metrics() -> None:
    # issue 17: a mistyped --score silently unscored every row
    problems = _refused([DIALOGUE], score="NoRoleConfuson")
    assert problems.filter(pl.col("refusing")).select("kind", "detail").rows() == [
        (
            "unknown_score",
            "no score named 'NoRoleConfuson' in the export (has: AllResponsesReasonableLength, MixOfShortAndLonger, "
            "NoAIVocabulary, NoConsecutiveRepeats, NoExcessiveRepetition, NoFantasyImagery, NoRoleConfusion, "
            "ReachesRewriting, RecordingNotTooLong, ResponseLengthVariety, TherapistNoRepeats, score, success): "
            "name one with --score <score>, e.g. --score success",
        )
    ]
    assert set(_refused([SAMPLE], score="latency").get_column("kind")) == {"unknown_score"}


def test_named_metric_of_the_dialogue_export() -> None:
    imp = promptfoo.read([DIALOGUE], score="MixOfShortAndLonger")
    assert imp.ledger.select("score", "passed").rows() == [(0.0, False)]
    assert promptfoo.read([DIALOGUE], score="NoRoleConfusion").ledger.select("score", "passed").rows() == [(1.0, True)]


def test_empty_results_file_refuses_as_an_empty_plan() -> None:
    # issue 17: { "results": { "results": [], "timestamp": null } } has nothing planned
    problems = _refused([EMPTY])
    assert problems.select("kind", "refusing").rows() == [("empty_candidates", True), ("empty_plan", True)]


def test_version_2_prompts_are_tasks_and_cases_come_from_vars() -> None:
    imp = promptfoo.read([SMOKE])
    doc = json.loads(SMOKE.read_text(encoding="utf-8"))
    say, translate = "Say {{ var1 }} in German", "Translate {{ var1 }} to German"
    assert [p["display"] for p in doc["results"]["table"]["head"]["prompts"]] == [say, translate]
    ids = sorted(promptfoo.vars_case_id(t["vars"]) for t in doc["config"]["tests"])
    # one case per (task, test): the test's id prefixed by its task
    cases = sorted((f"{t}/{i}", t) for t in (say, translate) for i in ids)
    assert imp.plan.cases.select("case_id", "task").rows() == cases
    provider = "openai:gpt-3.5-turbo"
    assert imp.plan.candidates == (provider,)
    assert imp.info[0]["layout"] == "v2"
    assert imp.info[0]["case_id_basis"] == "vars_sha256"
    assert imp.notes.height == 0
    half = _c(planned=2, attempted=2, completed=2, with_output=2, scored=2, passed=1, failed=1)
    assert _counts(_audit(imp)) == {(say, provider): half, (translate, provider): half}


def test_row_order_does_not_matter(tmp_path: Path) -> None:
    doc = _doc()
    random.Random(7).shuffle(doc["results"]["results"])
    shuffled = promptfoo.read([_write(tmp_path, doc)])
    original = promptfoo.read([SAMPLE])
    assert_frame_equal(_audit(shuffled).summary, _audit(original).summary)
    key = ["candidate", "case_id"]
    cols = ["candidate", "case_id", "exec_status", "score_status", "score", "passed"]
    assert_frame_equal(shuffled.ledger.select(cols).sort(key), original.ledger.select(cols).sort(key))


# --- header totals vs rows ------------------------------------------------------------------


def test_trimmed_export_is_missing_not_failed(tmp_path: Path) -> None:
    doc = _doc()
    doc["results"]["results"].remove(_row(doc, GPT5, 1))
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.plan.n_units == 4  # the plan comes from config.tests × prompts[], not from the rows
    report = _audit(imp)
    assert _counts(report) == {
        GPT5: _c(planned=2, attempted=1, completed=1, with_output=1, scored=1, failed=1, missing=1),
        MINI: _c(planned=2, attempted=2, completed=2, with_output=2, scored=2, failed=2),
    }
    assert report.summary.sort("candidate").get_column("missing_case_ids").to_list() == [["1"], []]
    notes = imp.notes.select("kind", "candidate", "detail", "refusing").rows()
    assert notes == [
        ("header_rows_disagree", None, "header stats.failures = 4 but the rows hold 3", False),
        (
            "header_rows_disagree",
            GPT5,
            "header prompts[].metrics.testFailCount = 2 but the rows hold 1",
            False,
        ),
    ]


def test_header_stats_are_not_evidence(tmp_path: Path) -> None:
    doc = _doc()
    doc["results"]["stats"].update({"successes": 4, "failures": 0})
    imp = promptfoo.read([_write(tmp_path, doc)])
    details = imp.notes.filter(pl.col("kind") == "header_rows_disagree").get_column("detail").to_list()
    assert details == [
        "header stats.failures = 0 but the rows hold 4",
        "header stats.successes = 4 but the rows hold 0",
    ]
    assert not imp.notes.get_column("refusing").any()
    assert _counts(_audit(imp))[GPT5]["passed"] == 0


def test_header_only_export_is_all_missing(tmp_path: Path) -> None:
    doc = _doc()
    doc["results"]["results"] = []
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.ledger.height == 0
    report = _audit(imp)
    assert _counts(report) == {GPT5: _c(planned=2, missing=2), MINI: _c(planned=2, missing=2)}
    assert report.summary.get_column("pass_rate_scored").to_list() == [None, None]
    assert report.summary.get_column("scored_coverage").to_list() == [0.0, 0.0]
    kinds = imp.notes.select("kind", "candidate").rows()
    assert kinds == [("header_rows_disagree", None), ("header_rows_disagree", GPT5), ("header_rows_disagree", MINI)]


def test_same_export_twice_is_a_duplicate_not_a_retry(tmp_path: Path) -> None:
    assert promptfoo.read([SAMPLE, SAMPLE]).ledger.height == 4  # one file named twice is read once
    imp = promptfoo.read([SAMPLE, _write(tmp_path, _doc(), "copy.json")])
    assert imp.ledger.height == 8
    with pytest.raises(AuditRefused) as err:
        _audit(imp)
    assert set(err.value.problems.filter(pl.col("refusing")).get_column("kind")) == {"duplicate_key"}


# --- statuses ---------------------------------------------------------------------------


def test_execution_error_timeout_and_no_output(tmp_path: Path) -> None:
    doc = _doc()
    err = _row(doc, GPT5, 0)
    err.update(failureReason=2, error="Error: 503 Service Unavailable", score=0, success=False)
    del err["gradingResult"]
    timeout = _row(doc, GPT5, 1)
    timeout.update(failureReason=2, error="Evaluation timed out after 1000ms: Error", score=0, success=False)
    del timeout["gradingResult"], timeout["response"]
    empty = _row(doc, MINI, 0)
    empty.update(failureReason=0, error="No output", score=0, success=False)
    empty["response"]["output"] = None
    del empty["gradingResult"]
    imp = promptfoo.read([_write(tmp_path, doc)])
    by_key = {(r["candidate"], r["case_id"]): r for r in imp.ledger.to_dicts()}
    assert by_key[(GPT5, "0")]["exec_status"] == "error"
    assert by_key[(GPT5, "1")]["exec_status"] == "timeout"
    assert by_key[(GPT5, "1")]["limit"] == "time"
    assert by_key[(MINI, "0")]["exec_status"] == "completed"
    assert by_key[(MINI, "0")]["has_output"] is False
    assert [by_key[k]["score"] for k in [(GPT5, "0"), (GPT5, "1"), (MINI, "0")]] == [None, None, None]
    report = _audit(imp)
    assert _counts(report) == {
        GPT5: _c(planned=2, attempted=2, exec_failed=2),
        MINI: _c(planned=2, attempted=2, completed=2, with_output=1, scored=1, failed=1, no_output=1),
    }
    assert imp.notes.select("kind", "detail").rows() == [
        ("header_rows_disagree", "header stats.errors = 0 but the rows hold 2"),
        ("header_rows_disagree", "header stats.failures = 4 but the rows hold 2"),
        ("header_rows_disagree", "header prompts[].metrics.testErrorCount = 0 but the rows hold 2"),
        ("header_rows_disagree", "header prompts[].metrics.testFailCount = 2 but the rows hold 0"),
    ]


def test_success_and_missing_grading_result(tmp_path: Path) -> None:
    doc = _doc()
    win = _row(doc, MINI, 1)
    win.update(success=True, failureReason=0, score=1, error=None)
    win["gradingResult"].update({"pass": True, "score": 1})
    ungraded = _row(doc, GPT5, 1)
    ungraded.update(success=True, failureReason=0, score=1)
    del ungraded["gradingResult"]
    report = _audit(promptfoo.read([_write(tmp_path, doc)]))
    assert _counts(report) == {
        GPT5: _c(planned=2, attempted=2, completed=2, with_output=2, scored=1, failed=1, not_scored=1),
        MINI: _c(planned=2, attempted=2, completed=2, with_output=2, scored=2, passed=1, failed=1),
    }


def test_grading_without_a_verdict_is_a_grader_failure(tmp_path: Path) -> None:
    doc = _as_v2(_doc())
    row = next(r for r in doc["results"]["results"] if r["provider"]["id"] == MINI)
    del row["success"], row["gradingResult"]["pass"]
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.notes.select("kind", "refusing", "candidate").rows() == [("not_a_score", False, MINI)]
    assert _counts(_audit(imp))[MINI]["judge_failed"] == 1


def test_nonfinite_and_non_numeric_scores_are_grader_failures(tmp_path: Path) -> None:
    doc = _doc()
    _row(doc, GPT5, 0)["score"] = float("nan")
    _row(doc, MINI, 0)["score"] = "0.75"
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc), encoding="utf-8")  # json.dumps writes the bare token NaN
    imp = promptfoo.read([path], score="score")
    assert imp.notes.select("kind", "line", "refusing", "candidate").sort("line").rows() == [
        ("not_a_score", 1, False, MINI),
        ("nonfinite_score", 2, False, GPT5),
    ]
    report = _audit(imp, grade="numeric")
    assert _counts(report) == {
        GPT5: _c(planned=2, attempted=2, completed=2, with_output=2, scored=1, failed=1, judge_failed=1),
        MINI: _c(planned=2, attempted=2, completed=2, with_output=2, scored=1, failed=1, judge_failed=1),
    }


def test_named_score(tmp_path: Path) -> None:
    doc = _doc()
    for r in doc["results"]["results"]:
        r["namedScores"] = {"latency_ok": 0.0}
        r["gradingResult"]["componentResults"][1]["assertion"]["metric"] = "latency_ok"
    del _row(doc, MINI, 1)["namedScores"]
    imp = promptfoo.read([_write(tmp_path, doc)], score="latency_ok")
    assert imp.info[0]["named_scores"] == ["latency_ok"]
    report = _audit(imp)
    assert _counts(report) == {
        GPT5: _c(planned=2, attempted=2, completed=2, with_output=2, scored=2, failed=2),
        MINI: _c(planned=2, attempted=2, completed=2, with_output=2, scored=1, failed=1, not_scored=1),
    }


# --- layouts ---------------------------------------------------------------------------------


def _as_v2(doc: dict[str, Any]) -> dict[str, Any]:
    summary = doc["results"]
    summary["version"] = 2
    summary["table"] = {"head": {"prompts": summary.pop("prompts"), "vars": ["riddle"]}, "body": []}
    for r in summary["results"]:
        for key in ("testIdx", "promptIdx", "failureReason"):
            del r[key]
    return doc


def test_v2_layout_uses_vars_hash(tmp_path: Path) -> None:
    imp = promptfoo.read([_write(tmp_path, _as_v2(_doc()))])
    cases = ["7da7b4bc01ae", "a13ed0707ccc"]  # sha256 of the canonical JSON of each test's vars, first 12 hex
    assert imp.plan.cases.get_column("case_id").to_list() == cases
    assert imp.plan.candidates == (GPT5, MINI)
    assert imp.info[0]["layout"] == "v2"
    assert imp.info[0]["case_id_basis"] == "vars_sha256"
    assert imp.info[0]["plan_basis"] == "config"
    assert imp.notes.height == 0
    done = _c(planned=2, attempted=2, completed=2, with_output=2, scored=2, failed=2)
    assert _counts(_audit(imp)) == {GPT5: done, MINI: done}
    assert promptfoo.vars_case_id(_doc()["config"]["tests"][0]["vars"]) == "a13ed0707ccc"


def test_v2_error_without_failure_reason(tmp_path: Path) -> None:
    doc = _as_v2(_doc())
    row = next(r for r in doc["results"]["results"] if r["provider"]["id"] == GPT5)
    row.update(error="Error: connect ECONNREFUSED", success=False, score=0)
    del row["gradingResult"]
    report = _audit(promptfoo.read([_write(tmp_path, doc)]))
    assert _counts(report)[GPT5] == _c(
        planned=2, attempted=2, completed=1, with_output=1, scored=1, failed=1, exec_failed=1
    )


def test_legacy_bare_summary(tmp_path: Path) -> None:
    doc = _as_v2(_doc())
    bare = doc["results"]  # no wrapper: no config, so the plan comes from the rows
    imp = promptfoo.read([_write(tmp_path, bare)])
    assert imp.info[0]["layout"] == "legacy"
    assert imp.info[0]["plan_basis"] == "rows"
    assert imp.notes.get_column("kind").to_list() == ["plan_from_rows"]
    assert imp.plan.n_units == 4


def test_jsonl_output(tmp_path: Path) -> None:
    rows = _doc()["results"]["results"]
    del rows[3]
    text = "\n".join(json.dumps(r) for r in rows) + "\n{not json\n"
    path = tmp_path / "out.jsonl"
    path.write_text(text, encoding="utf-8")
    problems = _unreadable([path])
    assert problems.select("kind", "line", "refusing").rows() == [
        ("plan_from_rows", None, False),
        ("unreadable_file", 4, True),
    ]
    path.write_text(text.replace("{not json\n", ""), encoding="utf-8")
    imp = promptfoo.read([path])
    assert imp.ledger.get_column("line").to_list() == [1, 2, 3]
    # cases seen (0, 1) × candidates seen: gpt-5's test 1 is missing
    assert imp.plan.n_units == 4
    assert _counts(_audit(imp))[GPT5]["missing"] == 1


def test_several_prompts_are_tasks_of_the_same_candidates(tmp_path: Path) -> None:
    doc = _doc()
    summary = doc["results"]
    extra = copy.deepcopy(summary["prompts"][0])
    extra.update(label="Riddle v2:\n {{riddle}}", raw="Riddle v2: {{riddle}}", id="f" * 64)
    summary["prompts"].insert(1, extra)
    summary["prompts"][2]["metrics"] = {}  # keep the header out of this test
    row = copy.deepcopy(_row(doc, GPT5, 0))
    row.update(promptIdx=1, promptId="f" * 64)
    row["prompt"]["label"] = extra["label"]
    summary["results"].append(row)
    summary["stats"] = {}
    imp = promptfoo.read([_write(tmp_path, doc)])
    label = "Solve this riddle: {{riddle}}"
    v2 = "Riddle v2: {{riddle}}"
    assert sorted(imp.plan.candidates) == [GPT5, MINI]
    counts = _counts(_audit(imp))
    # the new prompt is a task of its own: the one provider it ran on, test 0 answered, test 1 missing
    assert set(counts) == {(label, GPT5), (label, MINI), (v2, GPT5)}
    assert counts[(v2, GPT5)] == _c(planned=2, attempted=1, completed=1, with_output=1, scored=1, failed=1, missing=1)
    assert counts[(label, MINI)]["scored"] == 2


def test_repeat_maps_to_trials(tmp_path: Path) -> None:
    doc = _doc()
    doc["config"]["evaluateOptions"] = {"repeat": 2}
    summary = doc["results"]
    # promptfoo numbers test runs test-major: test 0 → testIdx 0, 1 (repeats); test 1 → 2, 3
    new_idx = {0: 0, 1: 2}
    repeated = []
    for r in summary["results"]:
        first = copy.deepcopy(r)
        first["testIdx"] = new_idx[r["testIdx"]]
        repeated.append(first)
        if r["testIdx"] == 0:
            second = copy.deepcopy(r)
            second["testIdx"] = 1
            repeated.append(second)
    summary["results"] = repeated
    summary["stats"] = {}
    for p in summary["prompts"]:
        p["metrics"] = {}
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.notes.height == 0
    assert imp.plan.trials == 2
    assert imp.plan.cases.get_column("case_id").to_list() == ["0", "2"]
    keys = imp.ledger.filter(pl.col("candidate") == GPT5).sort("case_id", "trial").select("case_id", "trial").rows()
    assert keys == [("0", 1), ("0", 2), ("2", 1)]
    done = _c(planned=4, attempted=3, completed=3, with_output=3, scored=3, failed=3, missing=1)
    assert _counts(_audit(imp)) == {GPT5: done, MINI: done}


def test_array_variables_expand_like_promptfoo(tmp_path: Path) -> None:
    doc = _doc()
    first = doc["config"]["tests"][0]["vars"]
    first["riddle"] = [first["riddle"], "What has keys but cannot open locks?"]
    for r in doc["results"]["results"]:
        if r["testIdx"] == 1:
            r["testIdx"] = 2  # test 0 now expands to testIdx 0 and 1
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.info[0]["plan_basis"] == "config"
    assert imp.info[0]["declared_test_runs"] == 3
    assert imp.plan.cases.get_column("case_id").to_list() == ["0", "1", "2"]
    done = _c(planned=3, attempted=2, completed=2, with_output=2, scored=2, failed=2, missing=1)
    assert _counts(_audit(imp)) == {GPT5: done, MINI: done}


def test_scenarios_expand_like_promptfoo(tmp_path: Path) -> None:
    doc = _doc()
    tests = doc["config"].pop("tests")
    doc["config"]["scenarios"] = [{"config": [{"vars": t["vars"]} for t in tests], "tests": [{"assert": []}]}]
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.info[0]["plan_basis"] == "config"
    assert imp.notes.height == 0
    assert imp.plan.n_units == 4


def test_variables_that_differ_from_the_config_fall_back_to_rows(tmp_path: Path) -> None:
    doc = _doc()
    doc["config"]["tests"].reverse()
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.info[0]["plan_basis"] == "rows"
    assert imp.notes.get_column("kind").to_list() == ["header_rows_disagree", "plan_from_rows"]
    assert "variables that differ" in imp.notes.get_column("detail")[0]


def test_external_tests_fall_back_to_rows(tmp_path: Path) -> None:
    doc = _doc()
    doc["config"]["tests"] = "file://tests.csv"
    doc["results"]["results"].remove(_row(doc, GPT5, 1))
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.info[0]["plan_basis"] == "rows"
    plan_notes = imp.notes.filter(pl.col("kind") == "plan_from_rows")
    assert plan_notes.height == 1
    assert not plan_notes.get_column("refusing").any()
    # cases seen by any candidate × declared candidates: gpt-5 still misses test 1
    assert _counts(_audit(imp))[GPT5]["missing"] == 1


def test_rows_beyond_the_config_fall_back_to_rows(tmp_path: Path) -> None:
    doc = _doc()
    _row(doc, GPT5, 1)["testIdx"] = 5
    imp = promptfoo.read([_write(tmp_path, doc)])
    kinds = imp.notes.get_column("kind").to_list()
    assert kinds == ["header_rows_disagree", "plan_from_rows"]
    assert "testIdx 5" in imp.notes.get_column("detail")[0]
    assert imp.plan.cases.get_column("case_id").to_list() == ["0", "1", "5"]


# --- malformed files ---------------------------------------------------------------------


def test_missing_path_raises(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError):
        promptfoo.read([tmp_path / "nope.json"])


def test_truncated_file_is_reported_and_others_still_read(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    broken = tmp_path / "broken.json"
    broken.write_bytes(data[: len(data) // 2])
    # the good file is still read (its notes come too), and the import refuses for the broken one
    (note,) = _unreadable([broken, SAMPLE]).to_dicts()
    assert note["kind"] == "unreadable_file"
    assert note["source"] == str(broken)
    assert note["refusing"] is True
    assert note["line"] is not None and note["detail"].startswith("invalid JSON")


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b"[1, 2]", "expected a JSON object, found list"),
        (b'{"evalId": "e"}', "no 'results' object: not a promptfoo eval export"),
        (b'{"results": {"version": 3}}', "'results.results' is missing or not a list"),
        (b"\xff\xfe{}", "not UTF-8 text (invalid start byte at byte 0)"),
        (b"", "invalid JSON (Expecting value, column 1)"),
        (b"[" * 100_000, "JSON nested too deeply to read (limit 512; raise it with --max-json-depth)"),
    ],
    ids=["list", "no-results", "no-rows", "not-utf8", "empty", "deep"],
)
def test_unreadable_variants(tmp_path: Path, content: bytes, detail: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    problems = _unreadable([path])
    assert problems.filter(pl.col("kind") == "unreadable_file").select("detail", "refusing").rows() == [(detail, True)]
    # Nothing was read: the unreadable file says why, an empty plan would only repeat it (kit.plan_from_units).
    assert set(problems.get_column("kind")) == {"unreadable_file"}


def test_bad_result_row_is_reported_with_its_line(tmp_path: Path) -> None:
    doc = _doc()
    doc["results"]["results"][2] = "oops"
    del doc["results"]["results"][0]["provider"]
    doc["results"]["results"][0]["promptIdx"] = 99  # and no prompt column to take the provider from
    problems = _unreadable([_write(tmp_path, doc)])
    bad = problems.filter(pl.col("refusing")).select("kind", "line", "detail").rows()
    assert bad == [
        ("unreadable_file", 1, "result 1 has no provider id or label"),
        ("unreadable_file", 3, "result 3 is a str, not an object"),
    ]


def test_bad_candidate_name_refuses(tmp_path: Path) -> None:
    doc = _doc()
    for r in doc["results"]["results"]:
        r["provider"]["label"] = "gpt-5 " if r["provider"]["id"] == GPT5 else "mini"
    for p in doc["results"]["prompts"]:
        p["provider"] = "gpt-5 " if p["provider"] == GPT5 else "mini"
    refusing = _refused([_write(tmp_path, doc)]).filter(pl.col("refusing")).select("kind", "candidate").rows()
    assert refusing == [("padded_identifier", "gpt-5 ")]


def test_a_folder_without_an_export_refuses(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an export", encoding="utf-8")
    problems = _refused([tmp_path])
    assert problems.filter(pl.col("kind") == "no_export").select("source", "detail", "refusing").rows() == [
        (str(tmp_path), "no .json or .jsonl promptfoo export file found in this folder", True)
    ]


def test_a_folder_of_exports_reads_like_its_files(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    copy = _write(folder, _doc(), "sample-export.json")
    from_folder, from_file = promptfoo.read([tmp_path]), promptfoo.read([copy])
    assert_frame_equal(from_folder.ledger, from_file.ledger)
    assert from_folder.plan.plan_hash == from_file.plan.plan_hash


def test_grade_numeric_alone_reads_the_weighted_score() -> None:
    # Issue 17: "--grade numeric takes the weighted score" without naming it; recomputed from the file.
    import json as _json

    from click.testing import CliRunner

    from evalframe.cli import main

    path = real("promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json")
    rows = _json.loads(path.read_text())["results"]["results"]
    expected: dict[str, list[float]] = {}
    for row in rows:
        expected.setdefault(row["provider"]["id"], []).append(row["score"])
    result = CliRunner().invoke(
        main, ["audit", "--from", "promptfoo", str(path), "--grade", "numeric", "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    summary = {r["candidate"]: r for r in _json.loads(result.stdout)["summary"]}
    assert {c: (r["scored"], r["mean_score"]) for c, r in summary.items()} == {
        c: (2, pytest.approx(sum(v) / len(v))) for c, v in expected.items()
    }


# --- tests scoped to prompts or providers (test-level `prompts` / `providers`) ----------------------------------

NICHE = real("promptfoo/tthatcher95-nicheIQ/promptfoo/results.json", "real2")
#: Config prompts (id, label) and providers (id, label) of the scoped exports built below.
_PROMPTS = (("short", "Short"), ("long", "Long"))
_PROVIDERS = (("openai:a", "P1"), ("openai:b", "P2"))


def _scoped_doc(tests: list[dict[str, Any]], ran: list[tuple[int, str, str]], **config: Any) -> dict[str, Any]:
    """A version 3 export of 2 providers × 2 prompts; its rows are the (test, provider, prompt label) in ``ran``."""
    columns = [
        {"id": f"{pid}-hash", "raw": f"{label}: {{{{q}}}}", "label": label, "provider": prov}
        for _, prov in _PROVIDERS
        for pid, label in _PROMPTS
    ]
    index = {(c["provider"], c["label"]): i for i, c in enumerate(columns)}
    ids = dict((label, pid) for pid, label in _PROVIDERS)
    rows = [
        {
            "provider": {"id": ids[prov], "label": prov},
            "prompt": {"raw": f"{label}: q{t}", "label": label},
            "promptIdx": index[(prov, label)],
            "promptId": f"{dict((lab, i) for i, lab in _PROMPTS)[label]}-hash",
            "testIdx": t,
            "testCase": tests[t] if t < len(tests) else {},
            "vars": {"q": f"q{t}"},
            "response": {"output": "x"},
            "success": True,
            "score": 1,
            "gradingResult": {"pass": True, "score": 1, "reason": "ok"},
            "failureReason": 0,
        }
        for t, prov, label in ran
    ]
    cfg = {
        "prompts": [{"id": pid, "label": label} for pid, label in _PROMPTS],
        "providers": [{"id": pid, "label": label} for pid, label in _PROVIDERS],
        "tests": tests,
        **config,
    }
    return {"evalId": "e", "config": cfg, "results": {"version": 3, "prompts": columns, "results": rows, "stats": {}}}


def _planned(imp: Imported) -> dict[tuple[str, str], int]:
    """Planned units per (task, candidate): each prompt is a task."""
    return {who: n["planned"] for who, n in _counts(_audit(imp)).items()}


def test_tests_scoped_to_prompts_plan_only_those_prompts(tmp_path: Path) -> None:
    tests = [
        {"vars": {"q": "q0"}, "prompts": ["short"]},  # by the config prompt's id
        {"vars": {"q": "q1"}, "prompts": ["Long", "short"]},  # by label and by id
        {"vars": {"q": "q2"}},  # no filter: every prompt
        {"vars": {"q": "q3"}, "prompts": ["sh*"]},  # a wildcard
    ]
    plan = {"Short": [0, 1, 2, 3], "Long": [1, 2]}
    ran = [(t, prov, label) for _, prov in _PROVIDERS for label, ts in plan.items() for t in ts]
    ran.remove((2, "P2", "Long"))
    imp = promptfoo.read([_write(tmp_path, _scoped_doc(tests, ran))])
    assert _planned(imp) == {("Long", "P1"): 2, ("Short", "P1"): 4, ("Long", "P2"): 2, ("Short", "P2"): 4}
    assert imp.plan.n_units == 12  # not 2 providers × 2 prompts × 4 tests = 16
    assert imp.notes.height == 0
    counts = _counts(_audit(imp))
    assert {c: (n["planned"], n["scored"], n["missing"]) for c, n in counts.items()} == {
        ("Long", "P1"): (2, 2, 0),
        ("Short", "P1"): (4, 4, 0),
        ("Long", "P2"): (2, 1, 1),
        ("Short", "P2"): (4, 4, 0),
    }
    assert imp.info[0]["scoped_tests"] == ["0", "1", "3"]


def test_tests_scoped_to_providers_and_default_test_filters(tmp_path: Path) -> None:
    tests = [
        {"vars": {"q": "q0"}, "providers": ["P1"]},  # the default's prompts filter applies: Long only
        {"vars": {"q": "q1"}, "prompts": ["short"], "providers": ["openai:*"]},  # its own filter wins
        {"vars": {"q": "q2"}, "prompts": []},  # an empty list names nothing: the test runs on no column
    ]
    ran = [(0, "P1", "Long"), (1, "P1", "Short"), (1, "P2", "Short")]
    doc = _scoped_doc(tests, ran, defaultTest={"prompts": ["long"]})
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert _planned(imp) == {("Long", "P1"): 1, ("Short", "P1"): 1, ("Short", "P2"): 1}
    counts = _counts(_audit(imp))
    # P2 | Long is a declared column no test runs on: nothing is planned for it, so it is no candidate
    assert {c: (n["planned"], n["missing"]) for c, n in counts.items()} == {
        ("Long", "P1"): (1, 0),
        ("Short", "P1"): (1, 0),
        ("Short", "P2"): (1, 0),
    }


def test_a_filter_naming_no_column_leaves_its_test_on_every_column(tmp_path: Path) -> None:
    tests = [{"vars": {"q": "q0"}, "prompts": ["shrot"]}, {"vars": {"q": "q1"}, "prompts": ["long"]}]
    ran = [(0, "P1", "Short"), (1, "P1", "Long"), (1, "P2", "Long")]
    imp = promptfoo.read([_write(tmp_path, _scoped_doc(tests, ran))])
    assert _planned(imp) == {("Long", "P1"): 2, ("Short", "P1"): 1, ("Long", "P2"): 2, ("Short", "P2"): 1}
    assert imp.notes.select("kind", "detail").rows() == [
        (
            "header_rows_disagree",
            "test 0's filter (prompts ['shrot']) names ['shrot'], which no prompt column of the export answers to: "
            "the test is planned on every column",
        )
    ]
    counts = _counts(_audit(imp))
    assert sum(n["missing"] for n in counts.values()) == 3  # test 0 on P1|Long, P2|Short, P2|Long


def test_a_row_outside_its_tests_filter_plans_every_test_on_every_column(tmp_path: Path) -> None:
    # promptfoo versions before test-level filters ran every test on every prompt: the rows say so
    tests = [{"vars": {"q": "q0"}, "prompts": ["short"]}, {"vars": {"q": "q1"}}]
    ran = [(0, "P1", "Short"), (0, "P1", "Long"), (1, "P1", "Short"), (1, "P1", "Long")]
    imp = promptfoo.read([_write(tmp_path, _scoped_doc(tests, ran))])
    assert imp.plan.n_units == 8
    assert imp.notes.select("kind", "line").rows() == [("header_rows_disagree", 2)]
    assert "a column its test's prompts/providers filter leaves out" in imp.notes.item(0, "detail")


def test_without_inline_tests_the_rows_record_their_filters(tmp_path: Path) -> None:
    tests = [{"vars": {"q": "q0"}, "prompts": ["short"]}, {"vars": {"q": "q1"}}]
    ran = [(0, "P1", "Short"), (0, "P2", "Short"), (1, "P1", "Short"), (1, "P1", "Long")]
    doc = _scoped_doc(tests, ran)
    doc["config"]["tests"] = "file://tests.yaml"
    imp = promptfoo.read([_write(tmp_path, doc)])
    # cases seen (0, 1); test 0 on the two Short columns only (its rows' testCase.prompts), test 1 on all four
    assert _planned(imp) == {("Long", "P1"): 1, ("Short", "P1"): 2, ("Long", "P2"): 1, ("Short", "P2"): 2}
    assert imp.notes.get_column("kind").to_list() == ["plan_from_rows"]
    missing = {c: n["missing"] for c, n in _counts(_audit(imp)).items()}
    assert missing == {("Long", "P1"): 0, ("Short", "P1"): 0, ("Long", "P2"): 1, ("Short", "P2"): 1}


def test_real_scoped_export_plans_what_it_ran() -> None:
    # nicheIQ: tests 0-3 name pain_v1/pain_v2, 4-6 ideas_v1/ideas_v2, 7 ideas_v2 (the config prompts' ids;
    # the export's columns carry their labels and a hash): 2 providers x (4 + 4 + 3 + 4) = 30 planned units
    imp = promptfoo.read([NICHE])
    per_prompt = {"Pain Scorer v1": 4, "Pain Scorer v2": 4, "Product Ideas v1": 3, "Product Ideas v2": 4}
    planned = _planned(imp)
    for provider in ("gpt-4o", "gpt-4o-mini"):
        for prefix, n in per_prompt.items():
            (name,) = [(t, c) for t, c in planned if c == provider and t.startswith(prefix)]
            assert planned[name] == n
    assert imp.plan.n_units == 30 and imp.ledger.height == 30
    assert sum(n["missing"] for n in _counts(_audit(imp)).values()) == 0


# --- an assertion that threw, or whose grader failed, gave no judgment -----------------------------------------


def _threw(reason: str = "Custom function threw error: Unexpected token 'return'\nStack Trace: ...") -> dict[str, Any]:
    return {"pass": False, "score": 0, "reason": reason, "assertion": {"type": "javascript", "value": "x"}}


def test_an_assertion_that_threw_beside_a_valid_fail_is_a_wrong_answer(tmp_path: Path) -> None:
    # GPT5's test 0 fails its latency assertion (a valid judgment) and a javascript assertion threw: a test
    # passes only when every assertion passes, so the fail stands whatever the javascript would have said
    doc = _doc()
    _row(doc, GPT5, 0)["gradingResult"]["componentResults"].append(_threw())
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.notes.height == 0
    assert _counts(_audit(imp))[GPT5]["scored"] == 2


def test_an_assertion_that_threw_alone_leaves_no_verdict(tmp_path: Path) -> None:
    doc = _doc()
    row = _row(doc, GPT5, 0)
    row["gradingResult"]["componentResults"] = [
        {"pass": True, "score": 1, "reason": "Assertion passed", "assertion": {"type": "contains", "value": "e"}},
        _threw(),
    ]
    graded = _row(doc, MINI, 1)
    graded["gradingResult"]["componentResults"] = [
        {
            "pass": False,
            "score": 0,
            "reason": "API error",
            "metadata": {"graderError": True},
            "assertion": {"type": "llm-rubric"},
        }
    ]
    imp = promptfoo.read([_write(tmp_path, doc)])
    assert imp.notes.select("kind", "candidate", "line").sort("line").rows() == [
        ("grader_error", GPT5, 2),
        ("grader_error", MINI, 3),
    ]
    assert imp.notes.sort("line").item(0, "detail") == (
        "the javascript assertion threw (Custom function threw error: Unexpected token 'return' Stack Trace: ...), "
        "and no other assertion failed: the test has no valid verdict; a grader failure"
    )
    counts = _counts(_audit(imp))
    assert (counts[GPT5]["scored"], counts[GPT5]["judge_failed"]) == (1, 1)
    assert (counts[MINI]["scored"], counts[MINI]["judge_failed"]) == (1, 1)


def test_an_assertion_that_threw_makes_the_weighted_score_no_score(tmp_path: Path) -> None:
    doc = _doc()
    _row(doc, GPT5, 0)["gradingResult"]["componentResults"].append(_threw())
    imp = promptfoo.read([_write(tmp_path, doc)], score="score")
    assert imp.notes.select("kind", "candidate").rows() == [("grader_error", GPT5)]
    counts = _counts(_audit(imp, grade="numeric"))
    assert (counts[GPT5]["scored"], counts[GPT5]["judge_failed"]) == (1, 1)


def test_real_javascript_that_threw_beside_valid_fails_is_scored() -> None:
    # nicheIQ: 18 rows hold a javascript assertion that threw (16 name it as the row's error); every one of
    # them also has an assertion that validly failed (regex, is-json or llm-rubric), so all 30 are scored fails
    imp = promptfoo.read([NICHE])
    assert imp.notes.height == 0
    assert imp.ledger.group_by("score_status", "passed").len().rows() == [("scored", False, 30)]
    weighted = promptfoo.read([NICHE], score="score")
    assert weighted.notes.get_column("kind").to_list() == ["grader_error"] * 18
    assert weighted.ledger.group_by("score_status").len().sort("score_status").rows() == [
        ("judge_error", 18),
        ("scored", 12),
    ]


# --- files of the same providers with other settings ----------------------------------------------------------


def test_files_whose_provider_settings_differ_are_different_candidates(tmp_path: Path) -> None:
    cold, hot = _doc(), _doc()
    cold["config"]["providers"] = [{"id": GPT5, "config": {"temperature": 0}}, MINI]
    hot["config"]["providers"] = [{"id": GPT5, "config": {"temperature": 0.9}}, MINI]
    hot["evalId"] = "hot"
    a, b = _write(tmp_path, cold, "a.json"), _write(tmp_path, hot, "b.json")
    imp = promptfoo.read([a, b])
    with pytest.raises(AuditRefused) as refused:  # MINI's settings agree: the two files hold its units twice
        _audit(imp)
    duplicated = refused.value.problems.filter(pl.col("kind") == "duplicate_key")
    assert set(duplicated.get_column("candidate")) == {MINI}
    assert set(imp.plan.candidates) == {f"{GPT5} [config.temperature=0]", f"{GPT5} [config.temperature=0.9]", MINI}
    assert imp.notes.select("kind", "candidate", "source").sort("candidate").rows() == [
        ("settings_differ", f"{GPT5} [config.temperature=0.9]", str(b)),
        ("settings_differ", f"{GPT5} [config.temperature=0]", str(a)),
    ]
    assert imp.notes.item(0, "detail") == (
        f"runs of {GPT5} recorded different settings, read as 2 candidates, not as retries of one another: "
        f"config.temperature = 0 in {a.name}; 0.9 in {b.name}"
    )
    gpt5 = imp.ledger.filter(pl.col("candidate").str.starts_with(f"{GPT5} ["))
    assert gpt5.group_by("candidate").len().sort("candidate").rows() == [
        (f"{GPT5} [config.temperature=0.9]", 2),
        (f"{GPT5} [config.temperature=0]", 2),
    ]


def test_a_setting_only_one_file_records_is_unknown_never_equal(tmp_path: Path) -> None:
    plain, tuned = _doc(), _doc()
    tuned["config"]["providers"] = [{"id": GPT5, "config": {"max_tokens": 50}}, MINI]
    tuned["evalId"] = "tuned"
    a, b = _write(tmp_path, plain, "a.json"), _write(tmp_path, tuned, "b.json")
    imp = promptfoo.read([a, b])
    assert {c for c in imp.plan.candidates if c.startswith(f"{GPT5} ")} == {
        f"{GPT5} [config.max_tokens=unknown]",
        f"{GPT5} [config.max_tokens=50]",
    }
    assert imp.notes.get_column("kind").to_list() == ["settings_differ", "settings_differ"]


# --- prompts are tasks: counts per (task, candidate) recounted from the real files with plain json -------------

_QA_DEMO = real("promptfoo/Wadys-ai-qa-demo/promptfoo/results.json", "real2")


def _recounted(path: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(rows, rows with success true) per (prompt label's first 40 characters, provider label else id)."""
    rows = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for r in rows:
        who = (" ".join(r["prompt"]["label"].split())[:40], r["provider"].get("label") or r["provider"]["id"])
        n, passed = out.get(who, (0, 0))
        out[who] = (n + 1, passed + bool(r["success"]))
    return out


@pytest.mark.parametrize("path", [NICHE, _QA_DEMO, DRIFT], ids=["nicheIQ", "qa-demo", "drift"])
def test_each_prompt_of_a_real_export_is_a_task(path: Path) -> None:
    # promptfoo runs every prompt × provider: the prompt is what is asked (the task), the provider the candidate
    expected = _recounted(path)
    imp = promptfoo.read([path])
    assert set(imp.plan.candidates) == {c for _, c in expected}
    assert imp.plan.cases.get_column("task").n_unique() == len({t for t, _ in expected}) > 1
    summary = _audit(imp).summary
    got = {(t[:40], c): (a, p) for t, c, a, p in summary.select("task", "candidate", "attempted", "passed").rows()}
    assert got == expected
    # each row's case id names its task: <task>/<test>
    tasks = dict(imp.plan.cases.select("case_id", "task").rows())
    assert all(case.startswith(tasks[case] + "/") for case in imp.ledger.get_column("case_id"))


def test_one_prompt_has_no_task_column() -> None:
    # the workbench export has one prompt column: the batch is one task, as before
    (label,) = {r["prompt"]["label"] for r in json.loads(WORKBENCH.read_text(encoding="utf-8"))["results"]["results"]}
    assert label
    imp = promptfoo.read([WORKBENCH])
    assert imp.plan.cases.columns == ["case_id"]
    assert "task" not in _audit(imp).summary.columns


def test_files_of_other_prompts_read_together_are_other_tasks() -> None:
    # the drift folder: one file of 2 prompts (16 rows), one of 1 prompt (1 row): 3 prompts, so 3 tasks, and the
    # one-prompt file's cases are its task's, never the other file's tests of the same index
    per = {**_recounted(DRIFT), **_recounted(DIALOGUE)}
    assert len({t for t, _ in per}) == 3
    imp = promptfoo.read([DRIFT.parent])
    summary = _audit(imp).summary
    got = {(t[:40], c): (a, p) for t, c, a, p in summary.select("task", "candidate", "attempted", "passed").rows()}
    assert got == per


def test_two_prompts_sharing_a_label_but_not_their_text_refuse_saying_so(tmp_path: Path) -> None:
    # The sample's one prompt, and a second of another text under the same label, each run on both providers.
    doc = _doc()
    results = doc["results"]
    other = "Answer this riddle briefly: {{riddle}}"
    second = [{**copy.deepcopy(p), "raw": other, "id": "other-id"} for p in results["prompts"]]
    rows = [{**copy.deepcopy(r), "promptId": "other-id", "id": f"{r['id']}-2"} for r in results["results"]]
    results["prompts"] += second
    results["results"] += rows
    problems = _refused([_write(tmp_path, doc)])
    assert problems.filter(pl.col("refusing")).select("kind", "detail").rows() == [
        (
            "ambiguous_rows",
            "2 prompts share the label 'Solve this riddle: {{riddle}}' but not their text ('Solve this riddle: "
            "{{riddle}}'; 'Answer this riddle briefly: {{riddle}}'): their rows are the same units twice and cannot "
            "be told apart; give each prompt its own label",
        )
    ]
