"""DeepEval test runs -> plan + ledger: a metric error is a grader failure, success is the verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

import evalframe as ef
from evalframe.cli import main
from evalframe.importers import deepeval
from evalframe.importers._kit import ImportRefused

TIMEOUT = "Timed out/cancelled while evaluating metric."


def metric(name: str, score: float | None, success: bool, error: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "threshold": 0.7, "success": success, "evaluationModel": "judge"}
    if error is None:
        entry["score"] = score
    else:
        entry["error"] = error
    return entry


def write_run(tmp_path: Path, cases: list[list[dict[str, Any]]], **top: Any) -> Path:
    path = tmp_path / ".deepeval" / ".temp_test_run_data.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    test_cases = [
        {"name": f"test_case_{i}", "input": f"q{i}", "success": False, "metricsData": m, "order": i}
        for i, m in enumerate(cases)
    ]
    path.write_text(json.dumps({"testCases": test_cases, "conversationalTestCases": [], **top}), encoding="utf-8")
    return path


def audit(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--from", "deepeval", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_verdict_is_all_metrics_pass_and_an_error_is_no_verdict_unless_a_metric_failed(tmp_path: Path) -> None:
    path = write_run(
        tmp_path,
        [
            [metric("A", 0.9, True), metric("B", 0.8, True)],  # passes
            [metric("A", 0.9, True), metric("B", 0.2, False)],  # fails
            [metric("A", None, False, TIMEOUT), metric("B", 0.2, False)],  # fails whatever A would have said
            [metric("A", None, False, TIMEOUT), metric("B", 0.9, True)],  # no verdict: a grader failure
            [],  # no metric ran
        ],
    )
    imported = deepeval.read([path])
    assert imported.ledger.select("case_id", "score_status", "score", "passed").rows() == [
        ("test_case_0", "scored", 1.0, True),
        ("test_case_1", "scored", 0.0, False),
        ("test_case_2", "scored", 0.0, False),
        ("test_case_3", "judge_error", None, None),
        ("test_case_4", "not_scored", None, None),
    ]
    assert imported.notes.filter(imported.notes["kind"] == "grader_error").get_column("detail").to_list() == [
        f"success: no grade for 1 test case(s) (test_case_3): {TIMEOUT}"
    ]


def test_one_metric_reads_its_score_and_its_success(tmp_path: Path) -> None:
    path = write_run(
        tmp_path,
        [
            [metric("A", 0.9, True)],
            [metric("A", 0.5, False)],
            [metric("A", None, False, TIMEOUT)],
            [metric("B", 1, True)],
        ],
    )
    imported = deepeval.read([path], score="A")
    assert imported.ledger.select("score_status", "score", "passed").rows() == [
        ("scored", 0.9, True),
        ("scored", 0.5, False),
        ("judge_error", None, None),
        ("not_scored", None, None),
    ]
    code, out, err = audit(str(path), "--score", "A", "--grade", "numeric", "--format", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"][0]
    assert {k: summary[k] for k in ("planned", "scored", "passed", "judge_failed", "not_scored")} == {
        "planned": 4,
        "scored": 2,
        "passed": None,  # numbers without --pass-threshold: DeepEval's own success is not read under numeric
        "judge_failed": 1,
        "not_scored": 1,
    }


def test_the_candidate_is_the_runs_model_when_it_names_one(tmp_path: Path) -> None:
    path = write_run(tmp_path, [[metric("A", 1.0, True)]], hyperparameters={"model": "gpt-4o"})
    assert deepeval.read([path]).ledger.get_column("candidate").to_list() == ["gpt-4o"]


def test_a_folder_is_searched_for_the_hidden_test_run_file(tmp_path: Path) -> None:
    write_run(tmp_path, [[metric("A", 1.0, True)]])
    (tmp_path / "notes.json").write_text("{}", encoding="utf-8")
    imported = deepeval.read([tmp_path])
    assert imported.ledger.select("candidate", "case_id").rows() == [("temp_test_run_data", "test_case_0")]


def test_an_unknown_metric_refuses_naming_the_metrics(tmp_path: Path) -> None:
    path = write_run(tmp_path, [[metric("Faithfulness", 1.0, True), metric("Answer Relevancy", 1.0, True)]])
    with pytest.raises(ImportRefused) as exc:
        deepeval.read([path], score="Relevancy")
    assert exc.value.problems.get_column("detail").to_list() == [
        "no metric named 'Relevancy' in testCases[].metricsData[].name (has: Answer Relevancy, Faithfulness, "
        "success): name one with --score <metric>, e.g. --score success"
    ]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", ": invalid JSON (Expecting property name enclosed in double quotes, column 2)"),
        ('{"testRuns": []}', ': not a DeepEval test run: expected a JSON object with a "testCases" list'),
        ('{"testCases": [{"name": "x", "metricsData": {}}]}', ": test case 1 is not an object with a metricsData list"),
        (
            '{"testCases": [{"name": "x", "metricsData": [{"score": 1}]}]}',
            ": test case 1 has a metric without a string name",
        ),
    ],
)
def test_a_malformed_test_run_is_an_input_error_naming_file_and_reason(
    tmp_path: Path, content: str, reason: str
) -> None:
    path = tmp_path / "test_run_1.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = audit(str(path))
    assert (code, out) == (2, "")
    prefix = f"error: {path}:1" if reason.startswith(": invalid JSON") else f"error: {path}"
    assert " ".join(err.split()) == prefix + reason


def test_a_numeric_metric_has_no_verdict_without_a_declared_threshold(tmp_path: Path) -> None:
    # DeepEval writes each metric's own success (its threshold 0.7): read as --grade numeric, the number alone
    # is the grade, and only --pass-threshold makes it a pass or a fail, as in every importer.
    path = write_run(tmp_path, [[metric("Faithfulness", 0.8, True)], [metric("Faithfulness", 0.6, False)]])
    counted = ("scored", "passed", "pass_rate_scored")
    runs = {
        "none": audit(str(path), "--score", "Faithfulness", "--grade", "numeric", "--format", "json"),
        "0.5": audit(
            str(path), "--score", "Faithfulness", "--grade", "numeric", "--pass-threshold", "0.5", "--format", "json"
        ),
        "0.9": audit(
            str(path), "--score", "Faithfulness", "--grade", "numeric", "--pass-threshold", "0.9", "--format", "json"
        ),
    }
    got = {
        k: tuple(json.loads(out)["summary"][0][c] for c in counted) for k, (code, out, _) in runs.items() if code == 0
    }
    assert got == {"none": (2, None, None), "0.5": (2, 2, 1.0), "0.9": (2, 0, 0.0)}
    numeric = ef.read("deepeval", path, score="Faithfulness", grade="numeric")
    assert "passed" not in numeric.ledger.columns
    assert ef.read("deepeval", path, score="Faithfulness").ledger.get_column("passed").to_list() == [True, False]


def test_two_test_runs_are_two_candidates_when_their_hyperparameters_differ(tmp_path: Path) -> None:
    cases = [[metric("A", 0.9, True)], [metric("A", 0.2, False)]]
    first = write_run(tmp_path / "one", cases, hyperparameters={"prompt": "v1"})
    second = write_run(tmp_path / "two", [cases[1], cases[0]], hyperparameters={"prompt": "v2"})
    imported = deepeval.read([first, second])
    names = ["temp_test_run_data [prompt=v1]", "temp_test_run_data [prompt=v2]"]
    assert sorted(imported.plan.candidates) == names
    assert imported.ledger.select("candidate", "case_id", "attempt", "passed").sort("candidate", "case_id").rows() == [
        (names[0], "test_case_0", 1, True),
        (names[0], "test_case_1", 1, False),
        (names[1], "test_case_0", 1, False),
        (names[1], "test_case_1", 1, True),
    ]
    differ = imported.notes.filter(pl.col("kind") == "settings_differ")
    assert sorted(differ.get_column("candidate").to_list()) == names


def test_two_test_runs_with_the_same_settings_are_successive_attempts(tmp_path: Path) -> None:
    cases = [[metric("A", 0.9, True)], [metric("A", 0.2, False)]]
    first = write_run(tmp_path / "one", cases)
    second = write_run(tmp_path / "two", [cases[1], cases[0]])
    imported = deepeval.read([first, second])
    assert imported.plan.candidates == ("temp_test_run_data",)
    assert imported.ledger.select("case_id", "attempt", "passed").sort("case_id", "attempt").rows() == [
        ("test_case_0", 1, True),
        ("test_case_0", 2, False),
        ("test_case_1", 1, False),
        ("test_case_1", 2, True),
    ]
    assert "settings_differ" not in imported.notes.get_column("kind").to_list()
