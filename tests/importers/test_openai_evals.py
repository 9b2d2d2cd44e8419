"""OpenAI Evals record logs → plan + ledger, audited with exact counts from the real log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalframe
from evalframe.importers import Imported, openai_evals
from evalframe.importers._kit import ImportRefused, ImportUnreadable
from evalframe.load import Loaded
from tests.conftest import REAL

SRL = (
    REAL
    / "openai_evals"
    / "openai-evals-PR1471"
    / "tests"
    / "unit"
    / "evals"
    / "biomed2402"
    / "SRL"
    / "log"
    / "gpt-4-cot_semantic_role_recognition.jsonl"
)
ORIPROMPT = REAL / "openai_evals" / "openai-evals" / "evals" / "registry" / "data" / "self_prompting" / "oriprompt.log"
CANDIDATE = "zhishu/gpt-4-cot"
SAMPLE_IDS = [f"semantic_role_recognition.test.{n}" for n in (156, 169, 182, 204, 231, 24, 25, 31, 50)]
COUNTS = ["planned", "attempted", "completed", "with_output", "scored", "passed", "failed", "missing"]
COUNTS += ["exec_failed", "judge_failed", "not_scored"]


def run_audit(imported: Imported, **kwargs: Any) -> evalframe.AuditReport:
    return evalframe.audit(imported.plan, Loaded(imported.ledger.lazy(), imported.notes, "x"), **kwargs)


def counts(report: evalframe.AuditReport) -> dict[str, dict[str, int]]:
    return {row["candidate"]: {k: row[k] for k in COUNTS} for row in report.summary.to_dicts()}


def write_log(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def spec(run_id: str, fns: list[str]) -> dict[str, Any]:
    return {"spec": {"completion_fns": fns, "eval_name": "toy.dev.v0", "split": "dev", "run_id": run_id}}


def event(run_id: str, n: int, sample: str | None, type_: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"run_id": run_id, "event_id": n, "sample_id": sample, "type": type_, "data": data, "created_by": ""}


# --- the real log -------------------------------------------------------------------------


def test_semantic_role_recognition_exact_counts() -> None:
    imported = openai_evals.read([SRL])
    assert imported.plan.candidates == (CANDIDATE,)
    assert sorted(imported.plan.cases.get_column("case_id").to_list()) == sorted(SAMPLE_IDS)
    report = run_audit(imported)
    assert counts(report) == {
        CANDIDATE: {
            "planned": 9,
            "attempted": 9,
            "completed": 9,
            "with_output": 9,
            "scored": 0,
            "passed": 0,
            "failed": 0,
            "missing": 0,
            "exec_failed": 0,
            "judge_failed": 1,
            "not_scored": 8,
        }
    }
    assert report.summary.select("pass_rate_scored", "pass_rate_planned", "pass_rate_upper").row(0) == (None, 0.0, 1.0)
    # The one grade ({"choice": "E", "score": null}) is on line 34, for sample 25.
    judged = imported.ledger.filter(pl.col("score_status") == "judge_error")
    assert judged.select("case_id", "line", "score").rows() == [("semantic_role_recognition.test.25", 34, None)]
    assert imported.ledger.get_column("run_id").unique().to_list() == ["240206062816JZOWUWI3"]
    # No final report and no declared dataset size: two non-refusing notes.
    assert imported.notes.select("kind", "line", "refusing").rows() == [
        ("plan_from_rows", 1, False),
        ("run_status", None, False),
    ]
    [info] = imported.info
    assert info["events"] == 33
    assert info["events_by_type"] == {"metrics": 1, "sampling": 32}
    assert (info["samples"], info["has_final_report"], info["eval_name"]) == (
        9,
        False,
        "semantic_role_recognition.test.v1",
    )


def test_sampling_events_are_grouped_never_counted_as_samples() -> None:
    imported = openai_evals.read([SRL])
    assert imported.ledger.height == 9
    first_lines = dict(imported.ledger.select("case_id", "line").iter_rows())
    assert first_lines["semantic_role_recognition.test.231"] == 2
    assert first_lines["semantic_role_recognition.test.24"] == 30


def test_folder_is_searched_for_logs() -> None:
    imported = openai_evals.read([SRL.parent])
    assert imported.ledger.height == 9


# --- match events, final reports, errors, several candidates --------------------------------


def test_match_events_grade_and_final_report_is_not_evidence(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "a.jsonl",
        [
            spec("r1", ["gpt-x"]),
            event("r1", 0, "toy.dev.0", "sampling", {"prompt": "p", "sampled": ["a"]}),
            event("r1", 1, "toy.dev.0", "match", {"correct": True, "expected": "a", "picked": "a"}),
            event("r1", 2, "toy.dev.1", "sampling", {"prompt": "p", "sampled": ["b"]}),
            event("r1", 3, "toy.dev.1", "match", {"correct": False, "expected": "a", "picked": "b"}),
            {"final_report": {"accuracy": 1.0, "counts": 10}},
            event("r1", 4, "toy.dev.2", "sampling", {"prompt": "p", "sampled": ["c"]}),
            event("r1", 5, "toy.dev.3", "error", {"type": "ValueError", "message": "boom"}),
        ],
    )
    imported = openai_evals.read([log])
    # The report's accuracy is not what its match events give: said in a note, never used.
    assert imported.notes.select("kind", "line").rows() == [("header_rows_disagree", 6), ("plan_from_rows", 1)]
    assert imported.notes.get_column("detail")[0] == (
        "final_report says accuracy = 1; the 2 'correct' grade(s) of the match events give 0.5"
    )
    assert imported.info[0]["final_report"] == {"accuracy": 1.0, "counts": 10}
    report = run_audit(imported)
    assert counts(report) == {
        "gpt-x": {
            "planned": 4,
            "attempted": 4,
            "completed": 3,
            "with_output": 3,
            "scored": 2,
            "passed": 1,
            "failed": 1,
            "missing": 0,
            "exec_failed": 1,
            "judge_failed": 0,
            "not_scored": 1,
        }
    }
    assert report.summary.get_column("pass_rate_scored").to_list() == [0.5]


def test_two_candidates_with_different_samples(tmp_path: Path) -> None:
    a = write_log(
        tmp_path / "a.jsonl",
        [spec("r1", ["gpt-x"]), event("r1", 0, "toy.dev.0", "match", {"correct": True})],
    )
    b = write_log(
        tmp_path / "b.jsonl",
        [
            spec("r2", ["gpt-y", "cot"]),
            event("r2", 0, "toy.dev.0", "match", {"correct": True}),
            event("r2", 1, "toy.dev.1", "match", {"correct": True}),
        ],
    )
    imported = openai_evals.read([b, a])
    assert imported.plan.candidates == ("gpt-x", "gpt-y,cot")
    report = run_audit(imported)
    assert {c: (v["planned"], v["passed"]) for c, v in counts(report).items()} == {"gpt-x": (1, 1), "gpt-y,cot": (2, 2)}


def test_score_key_reads_metrics_events(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "m.jsonl",
        [
            spec("r1", ["gpt-x"]),
            event("r1", 0, "toy.dev.0", "metrics", {"accuracy": 0.25}),
            event("r1", 1, "toy.dev.1", "metrics", {"accuracy": 0.75}),
            event("r1", 2, "toy.dev.2", "metrics", {"other": 1}),
            {"final_report": {"accuracy": 0.5}},
        ],
    )
    imported = openai_evals.read([log], score="accuracy")
    assert "passed" not in imported.ledger.columns
    assert imported.notes.get_column("kind").to_list() == ["plan_from_rows"]  # final_report 0.5 agrees
    assert imported.ledger.select("case_id", "score_status", "score").rows() == [
        ("toy.dev.0", "scored", 0.25),
        ("toy.dev.1", "scored", 0.75),
        ("toy.dev.2", "not_scored", None),
    ]
    report = run_audit(imported, grade="numeric", pass_threshold=0.5)
    assert counts(report)["gpt-x"]["passed"] == 1
    assert counts(report)["gpt-x"]["not_scored"] == 1


def test_nonfinite_and_non_numeric_grades(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "n.jsonl",
        [
            spec("r1", ["gpt-x"]),
            event("r1", 0, "toy.dev.0", "metrics", {"choice": "A", "score": float("nan")}),
            event("r1", 1, "toy.dev.1", "metrics", {"choice": "B", "score": "B"}),
            {"final_report": {}},
        ],
    )
    imported = openai_evals.read([log])
    status = dict(imported.ledger.select("case_id", "score_status").iter_rows())
    # A grade that is not a score (the text "B") is a grader failure, as a NaN is: never "not scored".
    assert status == {"toy.dev.0": "judge_error", "toy.dev.1": "judge_error"}
    assert imported.notes.select("kind", "case_id").rows() == [
        ("nonfinite_score", "toy.dev.0"),
        ("plan_from_rows", None),
    ]


# --- logs with no evidence, score keys ----------------------------------------------------------


def test_log_with_only_a_final_report_refuses() -> None:
    with pytest.raises(ImportRefused) as exc:
        openai_evals.read([ORIPROMPT])
    problems = exc.value.problems
    assert problems.select("kind", "line", "refusing").rows() == [
        ("empty_plan", 1, True),
        ("header_rows_disagree", 2, False),
        ("header_rows_disagree", 2, False),
    ]
    assert problems.get_column("detail").to_list() == [
        "no event names a sample (0 event line(s)): the log holds no per-sample evidence, "
        "only its final_report, which is never evidence",
        "final_report says accuracy = 0.207333, but no match events of the log give a 'correct' grade",
        "final_report says n_samples = 1500; the log's events name 0 sample(s)",
    ]
    assert problems.get_column("candidate").unique().to_list() == ["self_prompting/oriprompt/baseline"]


def test_spec_only_log_refuses_beside_a_good_one(tmp_path: Path) -> None:
    bare = write_log(tmp_path / "bare.jsonl", [spec("r1", ["gpt-x"])])
    with pytest.raises(ImportRefused) as exc:
        openai_evals.read([bare, SRL])
    assert exc.value.problems.filter(pl.col("refusing")).select("kind", "source").rows() == [("empty_plan", str(bare))]


def test_mistyped_score_key_refuses_naming_the_keys() -> None:
    with pytest.raises(ImportRefused) as exc:
        openai_evals.read([SRL], score="scor")
    assert exc.value.problems.select("kind", "refusing", "detail").rows() == [
        (
            "unknown_score",
            True,
            "no grade key named 'scor' in the export (has: choice, score): "
            "name one with --score <grade key>, e.g. --score choice",
        )
    ]
    # A key that exists reads it: "choice" is text, so the one graded sample is a judge error.
    imported = openai_evals.read([SRL], score="choice")
    assert imported.ledger.filter(pl.col("score_status") != "not_scored").select("case_id", "score_status").rows() == [
        ("semantic_role_recognition.test.25", "judge_error")
    ]


def test_folder_without_logs_refuses(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "other.log").write_text("plain text log\n")
    with pytest.raises(ImportRefused) as exc:
        openai_evals.read([tmp_path])
    assert exc.value.problems.select("kind", "refusing").rows() == [("no_export", True)]


def test_record_log_named_dot_log_is_found_in_a_folder() -> None:
    with pytest.raises(ImportRefused) as exc:
        openai_evals.read([ORIPROMPT.parent])
    assert exc.value.problems.filter(pl.col("refusing")).get_column("kind").to_list() == ["empty_plan"]


# --- malformed logs: refusing notes with the line, never a traceback ------------------------------


def refusing(problems: pl.DataFrame) -> list[tuple[Any, ...]]:
    return problems.filter(pl.col("refusing")).select("kind", "source", "line").rows()


def test_truncated_log_is_refused_at_its_line(tmp_path: Path) -> None:
    data = SRL.read_bytes()
    cut = data.rindex(b'{"run_id"') + 40  # inside the last event (line 34)
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_bytes(data[:cut])
    other = write_log(
        tmp_path / "other.jsonl", [spec("r9", ["gpt-x"]), event("r9", 0, "toy.dev.0", "match", {"correct": True})]
    )
    with pytest.raises(ImportUnreadable) as exc:
        openai_evals.read([truncated, other])
    assert refusing(exc.value.notes) == [("unreadable_file", str(truncated), 34)]
    # The other log was read: its notes are there too.
    assert ("plan_from_rows", str(other)) in exc.value.notes.select("kind", "source").rows()


def test_bad_json_line_and_event_missing_keys(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "bad.jsonl",
        [
            spec("r1", ["gpt-x"]),
            "{oops",
            {"run_id": "r1", "event_id": 1, "type": "match", "data": {"correct": True}},
            event("r1", 2, "toy.dev.1", "match", {"correct": True}),
        ],
    )
    with pytest.raises(ImportUnreadable) as exc:
        openai_evals.read([log])
    assert [(k, line) for k, _, line in refusing(exc.value.notes)] == [
        ("unreadable_file", 2),
        ("unreadable_file", 3),
    ]


def test_log_without_spec_header(tmp_path: Path) -> None:
    no_spec = write_log(tmp_path / "x.jsonl", [event("r1", 0, "toy.dev.0", "match", {"correct": True})])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    not_utf8 = tmp_path / "latin.jsonl"
    not_utf8.write_bytes(json.dumps(spec("r1", ["gpt-x"])).encode() + b"\n\xff\xfe\n")
    with pytest.raises(ImportUnreadable) as exc:
        openai_evals.read([no_spec, empty, not_utf8])
    rows = refusing(exc.value.notes)
    assert sorted((k, Path(s).name, line) for k, s, line in rows) == [
        ("unreadable_file", "empty.jsonl", 1),
        ("unreadable_file", "latin.jsonl", 2),
        ("unreadable_file", "x.jsonl", 1),
    ]


def test_path_that_does_not_exist_raises(tmp_path: Path) -> None:
    with pytest.raises(evalframe.InputFormatError):
        openai_evals.read([tmp_path / "nope.jsonl"])


# --- logs of one completion function whose specs record other settings -------------------------------------


def _run(path: Path, run_id: str, command: str, correct: list[bool]) -> Path:
    head = spec(run_id, ["gpt-4"])
    head["spec"]["run_config"] = {"completion_fns": ["gpt-4"], "seed": 1, "command": command}
    lines: list[Any] = [head, {"final_report": {"accuracy": sum(correct) / len(correct)}}]
    lines += [event(run_id, n, f"toy.dev.{n}", "match", {"correct": c}) for n, c in enumerate(correct)]
    return write_log(path, lines)


def test_logs_whose_completion_args_differ_are_different_candidates(tmp_path: Path) -> None:
    cold = _run(tmp_path / "a.jsonl", "r1", "oaieval gpt-4 toy --completion_args temperature=0", [True, False])
    hot = _run(tmp_path / "b.jsonl", "r2", "oaieval gpt-4 toy --completion_args temperature=1", [True, True])
    imported = openai_evals.read([cold, hot])
    a, b = "gpt-4 [completion_args=temperature=0]", "gpt-4 [completion_args=temperature=1]"
    assert imported.plan.candidates == (a, b)
    kinds = imported.notes.filter(pl.col("kind") == "settings_differ").select("candidate", "source").sort("candidate")
    assert kinds.rows() == [(a, str(cold)), (b, str(hot))]
    assert imported.notes.filter(pl.col("kind") == "settings_differ").item(0, "detail") == (
        "runs of gpt-4 recorded different settings, read as 2 candidates, not as retries of one another: "
        f"completion_args = temperature=0 in {cold.name}; temperature=1 in {hot.name}"
    )
    # every note about one log names its renamed candidate
    assert set(imported.notes.filter(pl.col("kind") == "plan_from_rows").get_column("candidate")) == {a, b}
    got = counts(run_audit(imported))
    assert {c: (n["planned"], n["scored"], n["passed"]) for c, n in got.items()} == {a: (2, 2, 1), b: (2, 2, 2)}


def test_logs_whose_settings_agree_keep_one_candidate(tmp_path: Path) -> None:
    # the same run twice (another path in the command only): its units twice, which the audit refuses as duplicates
    one = _run(tmp_path / "a.jsonl", "r1", "/x/oaieval gpt-4 toy", [True, False])
    two = _run(tmp_path / "b.jsonl", "r2", "/y/oaieval gpt-4 toy", [True, False])
    imported = openai_evals.read([one, two])
    assert imported.plan.candidates == ("gpt-4",)
    assert "settings_differ" not in imported.notes.get_column("kind").to_list()


def test_logs_of_two_evals_are_two_tasks_of_one_candidate(tmp_path: Path) -> None:
    """toy.dev.v0 passes 1 of its 2 samples, other.dev.v0 both of its 2: one candidate, two rows, no rename."""
    one = _run(tmp_path / "a.jsonl", "r1", "oaieval gpt-4 toy", [True, False])
    other = _run(tmp_path / "b.jsonl", "r2", "oaieval gpt-4 other", [True, True])
    lines = other.read_text().splitlines()
    head = json.loads(lines[0])
    head["spec"]["eval_name"] = "other.dev.v0"
    other.write_text("\n".join([json.dumps(head), *(x.replace("toy.dev.", "other.dev.") for x in lines[1:])]) + "\n")
    imported = openai_evals.read([one, other])
    assert imported.plan.candidates == ("gpt-4",)
    assert imported.plan.tasks == ("other.dev.v0", "toy.dev.v0")
    assert "settings_differ" not in imported.notes.get_column("kind").to_list()
    by_task = run_audit(imported).by_task()
    got = {t: {c: (n["planned"], n["scored"], n["passed"]) for c, n in counts(r).items()} for t, r in by_task.items()}
    assert got == {"other.dev.v0": {"gpt-4": (2, 2, 2)}, "toy.dev.v0": {"gpt-4": (2, 2, 1)}}
    assert openai_evals.read([one]).plan.cases.columns == ["case_id"]


def test_a_sample_id_read_as_text_names_the_logs_candidate(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "a.jsonl",
        [spec("r1", ["gpt-4"]), {"final_report": {}}, event("r1", 0, 7, "match", {"correct": True})],  # type: ignore[arg-type]
    )
    imported = openai_evals.read([log])
    notes = imported.notes.filter(pl.col("kind") == "id_normalised")
    assert notes.select("candidate", "case_id", "line").rows() == [("gpt-4", "7", 3)]
