"""every_eval_ever records → plan + ledger, and audits → every_eval_ever records, with exact values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest
from click.testing import CliRunner, Result

import evalframe as ef
from evalframe.cli import main
from evalframe.importers import every_eval_ever, inspect_ai
from evalframe.importers._kit import ImportRefused
from tests.conftest import FIXTURES, real

FIX = FIXTURES / "every_eval_ever"
SCHEMAS = FIX / "schemas" / "0.3.0"
ORBIT = [
    "--plan",
    str(FIXTURES / "orbit_desk" / "plan.csv"),
    "--results",
    str(FIXTURES / "orbit_desk" / "results.csv"),
    "--candidates",
    "A,B",
]
MULTI = [
    "--plan",
    str(FIX / "multi_trial" / "plan.csv"),
    "--results",
    str(FIX / "multi_trial" / "results.csv"),
    "--candidates",
    "X,Y",
    "--trials",
    "3",
]
PR30 = "every_eval_ever/evaleval-every_eval_ever-PR30"
SONNET = f"{PR30}/data/ai2_arc/anthropic/claude-sonnet-4-0/0479dd23-e008-47f5-a790-15e7cbb08fc7.json"
GAIA = f"{PR30}/data/GAIA/openai/gpt-4.1-mini-2025-04-14/5917cc37-8805-4453-bf5f-13411ea66ccf.json"
COUNTS = ("planned", "attempted", "completed", "with_output", "scored", "passed", "missing")
COUNTS += ("exec_failed", "judge_failed", "not_scored")

#: SPEC §7 Orbit Desk: A passed quote and refund, privacy and handoff missing; B 3 of 4.
ORBIT_COUNTS = {
    "A": dict(zip(COUNTS, (4, 2, 2, 2, 2, 2, 2, 0, 0, 0), strict=True)),
    "B": dict(zip(COUNTS, (4, 4, 4, 4, 4, 3, 0, 0, 0, 0), strict=True)),
}
#: data/fixtures/every_eval_ever/README.md, counted from the rows of multi_trial/results.csv.
MULTI_COUNTS = {
    "X": dict(zip(COUNTS, (9, 8, 7, 7, 6, 4, 1, 1, 1, 0), strict=True)),
    "Y": dict(zip(COUNTS, (9, 6, 5, 5, 5, 3, 3, 1, 0, 0), strict=True)),
}


def cli(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def summary(result: Result) -> dict[str, dict[str, Any]]:
    return {row["candidate"]: row for row in json.loads(result.stdout)["summary"]}


def counts(result: Result) -> dict[str, dict[str, int]]:
    return {c: {k: row[k] for k in COUNTS} for c, row in summary(result).items()}


def export(tmp_path: Path, source: list[str], *more: str) -> tuple[Path, Result]:
    out = tmp_path / "published"
    result = cli("audit", *source, *more, "--export", "every-eval-ever", str(out), "--format", "json")
    return out, result


@pytest.mark.parametrize(("source", "expected"), [(ORBIT, ORBIT_COUNTS), (MULTI, MULTI_COUNTS)], ids=["orbit", "multi"])
def test_round_trip_preserves_planned_scored_and_passed(tmp_path: Path, source: list[str], expected: Any) -> None:
    out, first = export(tmp_path, source)
    assert first.exit_code == 0, first.stderr
    assert counts(first) == expected
    back = cli("audit", "--from", "every-eval-ever", str(out), "--format", "json")
    assert back.exit_code == 0, back.stderr
    assert counts(back) == expected
    again = summary(back)
    for candidate, row in summary(first).items():  # the same units give the same clustered intervals
        for name in ("pass_rate_scored_ci_low", "pass_rate_scored_ci_high", "design_effect"):
            assert again[candidate][name] == row[name]
    assert json.loads(back.stdout)["meta"]["trials"] == (3 if source is MULTI else 1)


def test_records_carry_the_counts_and_the_clustered_uncertainty(tmp_path: Path) -> None:
    out, first = export(tmp_path, MULTI)
    row = summary(first)["Y"]
    record = json.loads(written(out, "Y").read_text())
    primary, planned, coverage = record["evaluation_results"]
    assert [r["evaluation_name"] for r in record["evaluation_results"]] == [
        "plan",
        "plan pass_rate_planned",
        "plan scored_coverage",
    ]
    assert primary["score_details"]["score"] == 3 / 5
    uncertainty = primary["score_details"]["uncertainty"]
    assert uncertainty["num_samples"] == 5
    # Few cases of several trials: the summary withholds the clustered interval (the skewness rule), and so
    # does the record, which carries the summary's reason instead.
    assert row["pass_rate_scored_ci_low"] is None
    assert "confidence_interval" not in uncertainty
    assert uncertainty["standard_error"]["value"] == row["pass_rate_scored_se_clustered"]
    details = primary["score_details"]["details"]
    assert details["pass_rate_scored_ci_withheld"] == row["pass_rate_scored_ci_withheld"]
    assert details["pass_rate_scored_ci_withheld"].startswith("no interval: Cochran's rule as refined by Sugden")
    assert {k: details[k] for k in ("planned", "scored", "passed", "missing", "exec_failed", "judge_failed")} == {
        "planned": "9",
        "scored": "5",
        "passed": "3",
        "missing": "3",
        "exec_failed": "1",
        "judge_failed": "0",
    }
    assert float(details["design_effect"]) == row["design_effect"] == pytest.approx(4.8)
    assert (planned["score_details"]["score"], planned["score_details"]["uncertainty"]["num_samples"]) == (3 / 9, 9)
    assert (coverage["score_details"]["score"], coverage["score_details"]["uncertainty"]["num_samples"]) == (5 / 9, 9)
    assert primary["source_data"]["sample_ids"] == ["c1", "c2", "c3"]
    assert primary["source_data"]["additional_details"] == {"evalframe.trials": "3"}
    assert record["detailed_evaluation_results"]["total_rows"] == 5  # Y's scored units only
    assert {k: details[k] for k in ("with_output", "not_started", "no_output", "not_scored")} == {
        "with_output": "5",
        "not_started": "0",
        "no_output": "0",
        "not_scored": "0",
    }


LEFT_OUT_NOTE = (
    "one row per scored unit; a unit without a valid grade has no row (counted per outcome in "
    "evalframe.left_out.<outcome>; those that ran or were skipped listed in evalframe.ungraded_units; "
    "missing ones are the planned units with neither)"
)


def left_out_details(total: int, **by_outcome: int) -> dict[str, str]:
    outcomes = ("missing", "not_started", "exec_failed", "no_output", "judge_failed", "not_scored")
    return {
        "evalframe.rows": LEFT_OUT_NOTE,
        "evalframe.left_out": str(total),
        **{f"evalframe.left_out.{o}": str(by_outcome.get(o, 0)) for o in outcomes},
    }


def test_units_without_a_valid_grade_are_never_written_as_rows(tmp_path: Path) -> None:
    out, _ = export(tmp_path, MULTI, "--slice", "topic")
    rows = {c: instance_rows(out, c) for c in "XY"}
    keys = {c: [(r["sample_id"], r["metadata"]["evalframe.trial"]) for r in rows[c]] for c in "XY"}
    # X: c2 trial 1 timed out, c3 trial 1 had a judge error, c2 trial 3 is missing: no row for any of them.
    assert keys["X"] == [("c1", "1"), ("c1", "2"), ("c1", "3"), ("c2", "2"), ("c3", "2"), ("c3", "3")]
    # Y: c2 trial 2 errored, c3 is missing.
    assert keys["Y"] == [("c1", "1"), ("c1", "2"), ("c1", "3"), ("c2", "1"), ("c2", "3")]
    assert {(r["error"], r["metadata"]["evalframe.score_status"]) for c in "XY" for r in rows[c]} == {(None, "scored")}
    assert [r["evaluation"]["is_correct"] for r in rows["X"]] == [True, False, True, True, False, True]
    assert rows["X"][0]["metadata"]["topic"] == "billing"  # a declared slice travels as metadata
    detail = json.loads(written(out, "X").read_text())["detailed_evaluation_results"]["additional_details"]
    listed = json.loads(detail.pop("evalframe.ungraded_units"))
    assert detail == left_out_details(3, missing=1, exec_failed=1, judge_failed=1)
    assert listed == [
        {"sample_id": "c2", "trial": 1, "outcome": "exec_failed", "exec_status": "timeout"}
        | {"score_status": "not_scored", "has_output": False},
        {"sample_id": "c3", "trial": 1, "outcome": "judge_failed", "exec_status": "completed"}
        | {"score_status": "judge_error", "has_output": True},
    ]


UNGRADED = [
    "--plan",
    str(FIX / "ungraded" / "plan.csv"),
    "--results",
    str(FIX / "ungraded" / "results.csv"),
    "--candidates",
    "A,B",
    "--trials",
    "2",
    "--retry",
    "last_allowed",
    "--max-attempts",
    "3",
]
FUNNEL = (*COUNTS, "failed", "not_started", "no_output")


def test_not_started_and_judge_failed_units_are_not_wrong_answers(tmp_path: Path) -> None:
    out, first = export(tmp_path, UNGRADED)
    assert first.exit_code == 0, first.stderr
    assert first.stderr == (
        f"exported every-eval-ever → {out}: instance rows for scored units only; left out (no valid grade, "
        "counted in each record): A 4 (2 missing, 1 not_started, 1 judge_failed); B 0\n"
    )
    rows = instance_rows(out, "A")
    assert [(r["sample_id"], r["metadata"]["evalframe.trial"], r["evaluation"]["is_correct"]) for r in rows] == [
        ("privacy", "1", True),
        ("quote", "1", True),
        ("quote", "2", False),
        ("refund", "2", True),
    ]
    # Another tool averaging is_correct gets pass_rate_scored (3/4), not 3/6 with the ungraded units as failures.
    assert sum(r["evaluation"]["is_correct"] for r in rows) / len(rows) == summary(first)["A"]["pass_rate_scored"]
    record = json.loads(written(out, "A").read_text())
    detail = record["detailed_evaluation_results"]
    assert detail["total_rows"] == 4
    listed = json.loads(detail["additional_details"].pop("evalframe.ungraded_units"))
    assert detail["additional_details"] == left_out_details(4, missing=2, not_started=1, judge_failed=1)
    assert [(u["sample_id"], u["trial"], u["outcome"]) for u in listed] == [
        ("handoff", 1, "not_started"),
        ("refund", 1, "judge_failed"),
    ]
    b = json.loads(written(out, "B").read_text())["detailed_evaluation_results"]
    assert (b["total_rows"], b["additional_details"]["evalframe.left_out"]) == (8, "0")
    assert b["additional_details"]["evalframe.ungraded_units"] == "[]"
    # Read back, the listed units are restored from the record: every funnel count is the same.
    back = cli("audit", "--from", "every-eval-ever", str(out), "--format", "json")
    assert back.exit_code == 0, back.stderr
    expected = {
        "A": dict(zip(FUNNEL, (8, 5, 5, 5, 4, 3, 2, 0, 1, 0, 1, 1, 0), strict=True)),
        "B": dict(zip(FUNNEL, (8, 8, 8, 8, 8, 6, 0, 0, 0, 0, 2, 0, 0), strict=True)),
    }
    for result in (first, back):
        assert {c: {k: r[k] for k in FUNNEL} for c, r in summary(result).items()} == expected


def test_left_out_counts_every_ungraded_outcome_per_candidate() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d", "e", "f", "g"]}), candidates=["A"])
    ledger = pl.DataFrame(
        {
            "candidate": ["A"] * 6,
            "case_id": ["a", "b", "c", "d", "e", "f"],
            "exec_status": ["completed", "not_started", "timeout", "completed", "completed", "completed"],
            "score_status": ["scored", "not_scored", "not_scored", "not_scored", "judge_error", "not_scored"],
            "has_output": [True, False, False, False, True, True],
            "passed": [0, None, None, None, None, None],
        }
    )
    table = every_eval_ever.left_out(ef.audit(plan, ledger))
    assert table.rows() == [
        ("A", "missing", 1),
        ("A", "not_started", 1),
        ("A", "exec_failed", 1),
        ("A", "no_output", 1),
        ("A", "judge_failed", 1),
        ("A", "not_scored", 1),
    ]
    assert every_eval_ever.UNGRADED == tuple(table.get_column("outcome"))


def test_written_records_validate_against_the_published_schema(tmp_path: Path) -> None:
    aggregate = jsonschema.Draft7Validator(json.loads((SCHEMAS / "eval.schema.json").read_text()))
    instance = jsonschema.Draft7Validator(json.loads((SCHEMAS / "instance_level_eval.schema.json").read_text()))
    out, _ = export(tmp_path, MULTI)
    assert aggregate.schema["version"] == instance.schema["version"] == "0.3.0"
    records = [written(out, c) for c in "XY"]
    for path in records:
        record = json.loads(path.read_text())
        assert record["schema_version"] == "0.3.0"
        assert [e.message for e in aggregate.iter_errors(record)] == []
        # file_path is rooted at data/ (0.3.0) and names the instance file beside the record
        assert out / record["detailed_evaluation_results"]["file_path"] == written(
            out, path.parent.name, "_samples.jsonl"
        )
    rows = [r for c in "XY" for r in instance_rows(out, c)]
    assert [[e.message for e in instance.iter_errors(r)] for r in rows] == [[]] * (6 + 5)  # X's and Y's scored units
    assert {r["schema_version"] for r in rows} == {"0.3.0"}
    # The schema is a real check: a row with a null score (what a missing unit would need) is refused, and so
    # is a record as 0.2.1 was written (no model_info.additional_details, a file_path beside the record).
    assert not instance.is_valid({**rows[0], "evaluation": {"score": None, "is_correct": False}})
    record = json.loads(records[0].read_text())
    old_model = {**record, "model_info": {"name": "X", "id": "X"}}
    assert [e.validator for e in aggregate.iter_errors(old_model)] == ["required"]
    old_path = {
        **record,
        "detailed_evaluation_results": {**record["detailed_evaluation_results"], "file_path": "X_samples.jsonl"},
    }
    assert [e.validator for e in aggregate.iter_errors(old_path)] == ["pattern"]


def test_numeric_grades_export_with_a_threshold_only(tmp_path: Path) -> None:
    numeric = [*MULTI, "--grade", "numeric"]
    out, refused = export(tmp_path, numeric)
    assert refused.exit_code == 2
    assert "every instance row needs is_correct (--pass-threshold)" in refused.stderr
    assert not out.exists()
    _, done = export(tmp_path, numeric, "--pass-threshold", "0.5")
    assert done.exit_code == 0, done.stderr
    back = cli("audit", "--from", "every-eval-ever", str(out), "--format", "json")
    assert {c: (r["scored"], r["passed"]) for c, r in summary(back).items()} == {"X": (6, 4), "Y": (5, 3)}


def test_policy_every_is_not_exported(tmp_path: Path) -> None:
    out, result = export(tmp_path, MULTI, "--retry", "every")
    assert result.exit_code == 2
    assert "retry policy 'every' counts several attempts per unit" in result.stderr
    assert not out.exists()


def test_export_folder_is_evalframe_own(tmp_path: Path) -> None:
    (tmp_path / "published").mkdir()
    (tmp_path / "published" / "notes.txt").write_text("mine")
    out, result = export(tmp_path, ORBIT)
    assert result.exit_code == 2
    assert (tmp_path / "published" / "notes.txt").read_text() == "mine"
    assert result.stderr == (  # the folder is named by the option that gave it
        f"{out / 'notes.txt'}\nerror: --export {out}: holds 1 file(s) evalframe did not write (not in its "
        "evalframe-manifest.json, or changed since): it never overwrites, moves or deletes them; move them away "
        "or choose a new or empty folder\n"
    )
    same = cli("audit", *ORBIT, "--out", str(tmp_path / "o"), "--export", "every-eval-ever", str(tmp_path / "o"))
    assert same.exit_code == 2
    assert "DIR must not be the --out folder" in same.stderr


def test_the_record_agrees_with_the_inspect_import_of_the_same_run() -> None:
    eee = every_eval_ever.read([real(SONNET)])
    log = inspect_ai.read([real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_arc_sonnet.json")])
    for imported in (eee, log):
        scored = imported.ledger.filter(pl.col("score_status") == "scored")
        assert (imported.plan.n_units, scored.height, scored.get_column("passed").sum()) == (5, 5, 5)
    assert sorted(eee.ledger.get_column("case_id")) == sorted(log.ledger.get_column("case_id"))


def test_a_folder_of_two_tasks_prefixes_case_ids_and_marks_the_message_limit() -> None:
    imported = every_eval_ever.read([real(PR30)])
    ledger = imported.ledger
    assert imported.plan.n_units == 5 + 3 + 2
    qwen = ledger.filter(pl.col("candidate") == "ollama/qwen2.5-0.5b").get_column("case_id").to_list()
    assert qwen == ["ai2_arc/1", "ai2_arc/2", "ai2_arc/3"]
    gaia = ledger.filter(pl.col("candidate") == "openai/gpt-4.1-mini-2025-04-14").sort("case_id")
    assert gaia.select("case_id", "limit").rows() == [
        ("GAIA/17b5a6a3-bc87-42e8-b0fb-6ab0781ef2cc", None),
        ("GAIA/c61d22de-5f6c-4958-a7f6-5e9707bd3466", "message=100"),
    ]
    assert gaia.get_column("case_hash").null_count() == 0


def written(out: Path, candidate: str, suffix: str = ".json") -> Path:
    """The one record (``.json``) or instance file (``_samples.jsonl``) written for ``candidate`` under ``out``."""
    found = [
        p
        for p in out.glob(f"data/*/*/{candidate}/*{suffix}")
        if p.name.endswith(suffix) and (suffix != ".json" or not p.name.endswith("_samples.json"))
    ]
    assert len(found) == 1, found
    return found[0]


def instance_rows(out: Path, candidate: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in written(out, candidate, "_samples.jsonl").read_text().splitlines()]


def write_record(folder: Path, rows: list[dict[str, Any]], *, model: str = "m", total: int | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{model}_rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    record = {
        "schema_version": "0.2.1",
        "evaluation_id": f"e/{model}",
        "model_info": {"name": model, "id": model},
        "evaluation_results": [
            {
                "evaluation_name": "t",
                "source_data": {"dataset_name": "t", "source_type": "other", "sample_ids": ["a", "b", "c", "d"]},
                "score_details": {"score": 0.5},
            }
        ],
        "detailed_evaluation_results": {"file_path": f"{model}_rows.jsonl", "total_rows": total or len(rows)},
    }
    path = folder / f"{model}.json"
    path.write_text(json.dumps(record))
    return path


def row(sample: str, **fields: Any) -> dict[str, Any]:
    base = {"evaluation_id": "e/m", "sample_id": sample, "sample_hash": f"h-{sample}", "output": {"raw": ["x"]}}
    return base | fields


def test_error_rows_are_execution_failures_and_a_null_grade_is_a_grader_failure(tmp_path: Path) -> None:
    rows = [
        row("a", evaluation={"score": 1.0, "is_correct": True}),
        row("b", evaluation={"score": 0.0, "is_correct": False}, error="RuntimeError: sandbox did not start"),
        row("c", evaluation={"score": 0.0, "is_correct": None}),
    ]
    imported = every_eval_ever.read([write_record(tmp_path, rows, total=5)])
    assert imported.ledger.select("case_id", "exec_status", "score_status", "passed", "case_hash").rows() == [
        ("a", "completed", "scored", True, "h-a"),
        ("b", "error", "not_scored", None, "h-b"),
        ("c", "completed", "judge_error", None, "h-c"),
    ]
    assert imported.plan.n_units == 4
    notes = imported.notes.select("kind", "detail").rows()
    assert ("not_a_score", "evaluation.is_correct = None is not a grade") in notes
    total = "detailed_evaluation_results.total_rows = 5; the instance file has 3 row(s)"
    assert ("header_rows_disagree", total) in notes
    assert ("header_rows_disagree", "'t' claims score 0.5; the 1 graded row(s) give 1") in notes
    result = cli("audit", "--from", "every-eval-ever", str(tmp_path / "m.json"), "--format", "json")
    assert counts(result) == {"m": dict(zip(COUNTS, (4, 3, 2, 2, 1, 1, 1, 1, 1, 0), strict=True))}


def test_one_sample_id_with_other_content_refuses(tmp_path: Path) -> None:
    write_record(tmp_path, [row("a", evaluation={"score": 1.0, "is_correct": True})], model="m")
    other = row("a", evaluation={"score": 1.0, "is_correct": True}, sample_hash="h-other")
    write_record(tmp_path, [other], model="n")
    result = cli("audit", "--from", "every-eval-ever", str(tmp_path), "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["refusing_problems_by_kind"] == {"hash_mismatch": 1}


def test_a_folder_without_records_refuses(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    with pytest.raises(ImportRefused) as exc:
        every_eval_ever.read([tmp_path])
    assert exc.value.problems.get_column("kind").to_list() == ["no_export"]


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("r.json", '{"evaluation_results": [', "r.json:1: invalid JSON"),
        ("r.json", "[]", "r.json: not an every_eval_ever aggregate record (no evaluation_results list)"),
        ("r.json", '{"evaluation_results": []}', "r.json: model_info has no id (nor name): the candidate is unknown"),
        ("i.jsonl", '{"sample_id": "a", "model_id": "m"}\n{"sample_id": ', "i.jsonl:2: invalid JSON"),
        ("i.jsonl", '{"model_id": "m"}\n', "i.jsonl:1: an instance row without a string or integer sample_id"),
        ("i.jsonl", '{"sample_id": "a"}\n', "i.jsonl:1: an instance row without a model_id"),
        (
            "r.json",
            '{"model_info": {"id": "m"}, "evaluation_results": [], "detailed_evaluation_results": '
            '{"file_path": "x.jsonl", "additional_details": '
            '{"evalframe.ungraded_units": "[{\\"sample_id\\": \\"a\\"}]"}}}',
            "r.json: detailed_evaluation_results.additional_details['evalframe.ungraded_units'] is not a list of "
            'units: {"sample_id": "a"}',
        ),
        (
            "r.json",
            '{"model_info": {"id": "m"}, "evaluation_results": [{"source_data": {"sample_ids": ["a", "b"], '
            '"additional_details": {"evalframe.trials": "100000000"}}}]}',
            "r.json: 2 sample_ids × evalframe.trials declares 200000000 planned units"
            " (limit 100000000; raise it with --max-planned-units)",
        ),
    ],
)
def test_a_malformed_file_is_an_input_error_naming_file_and_reason(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    (tmp_path / name).write_text(text)
    result = cli("audit", "--from", "every-eval-ever", str(tmp_path / name))
    assert result.exit_code == 2
    assert reason in result.stderr


def test_a_second_export_replaces_the_first_and_a_foreign_file_in_its_folders_is_refused(tmp_path: Path) -> None:
    out, first = export(tmp_path, ORBIT)
    assert first.exit_code == 0, first.stderr
    _, again = export(tmp_path, ORBIT)  # the data/ folders are evalframe's own: every file in them is listed
    assert again.exit_code == 0, again.stderr
    files = [p for p in out.rglob("*") if p.is_file() and p.name != "evalframe-manifest.json"]
    assert sorted(p.relative_to(out).parts[:4] for p in files) == [
        ("data", "plan", "unknown", c) for c in ("A", "A", "B", "B")
    ]
    (written(out, "A").parent / "mine.txt").write_text("mine")
    _, refused = export(tmp_path, ORBIT)
    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"{out / 'data'}/\n")
    assert (written(out, "A").parent / "mine.txt").read_text() == "mine"


def test_an_export_is_filed_under_the_task_its_exports_record(tmp_path: Path) -> None:
    # An Inspect eval set of three models on `popularity` (../shared/data/real2, SOURCES.md): every record was
    # filed under the file name of one of its logs; the benchmark is the task the logs record.
    from tests.cli.support import run
    from tests.conftest import REAL2

    logs = REAL2 / "inspect_ai/UKGovernmentBEIS-inspect_ai-PR2488/log-sets/set2"
    if not logs.is_dir():
        pytest.skip("../shared/data/real2 is not laid beside the repository")
    code, _, err = run(["audit", "--from", "inspect", str(logs), "--export", "every-eval-ever", str(tmp_path / "e")])
    assert code == 0, err
    records = sorted(p.relative_to(tmp_path / "e").parent.as_posix() for p in (tmp_path / "e/data").rglob("*.json"))
    assert records == [
        "data/popularity/anthropic/claude-sonnet-4-20250514",
        "data/popularity/google/gemini-2.5-pro",
        "data/popularity/openai/gpt-5",
    ]
