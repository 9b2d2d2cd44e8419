"""HELM run folders → plan + ledger, audited with exact counts from the real exports."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalframe
from evalframe.funnel import funnel
from evalframe.importers import Imported, helm
from evalframe.load import Loaded
from tests.conftest import REAL

HELM = REAL / "helm" / "evaleval-every_eval_ever" / "tests" / "data" / "helm"
HELLASWAG = HELM / "commonsense-dataset=hellaswag,method=multiple_choice_joint,model=eleutherai_pythia-1b-v0"
MMLU = HELM / "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
PYTHIA = "eleutherai/pythia-1b-v0"
GPT2 = "openai/gpt2"
HELLASWAG_SCENARIO = "commonsense:dataset=hellaswag,method=multiple_choice_joint"
MMLU_SCENARIO = "mmlu:subject=philosophy,method=multiple_choice_joint"
COUNTS = ["planned", "attempted", "completed", "with_output", "scored", "passed", "missing", "exec_failed"]
COUNTS += ["judge_failed", "not_scored"]


def run_audit(imported: Imported, **kwargs: Any) -> evalframe.AuditReport:
    return evalframe.audit(imported.plan, Loaded(imported.ledger.lazy(), imported.notes, "x"), **kwargs)


def counts(report: evalframe.AuditReport) -> dict[str, dict[str, int]]:
    return {row["candidate"]: {k: row[k] for k in COUNTS} for row in report.summary.to_dicts()}


def funnel_row(planned: int, scored: int, passed: int, **other: int) -> dict[str, int]:
    row = dict.fromkeys(COUNTS, 0)
    row.update(planned=planned, attempted=planned, completed=planned, with_output=planned)
    row.update(scored=scored, passed=passed, **other)
    return row


def copy_run(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    for f in dest.iterdir():
        f.chmod(0o644)
    return dest


def edit_json(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


# --- real exports ------------------------------------------------------------------------


def test_hellaswag_pythia_exact_counts() -> None:
    imported = helm.read([HELLASWAG])
    assert imported.notes.height == 0
    assert imported.plan.candidates == (PYTHIA,)
    assert imported.plan.trials == 1
    assert imported.plan.cases.height == 10
    assert imported.plan.cases.get_column("split").unique().to_list() == ["valid"]
    assert imported.plan.cases.get_column("case_id").to_list() == sorted(
        ["id44874", "id47299", "id45277", "id41992", "id49438", "id42841", "id46128", "id47975", "id41468", "id44284"]
    )
    report = run_audit(imported)
    assert counts(report) == {PYTHIA: funnel_row(10, 10, 3)}
    passed = imported.ledger.filter(pl.col("passed")).get_column("case_id").to_list()
    assert passed == ["id41992", "id44284", "id45277"]
    assert imported.ledger.get_column("run_id").unique().to_list() == [
        "commonsense:dataset=hellaswag,method=multiple_choice_joint,model=eleutherai_pythia-1b-v0"
    ]
    # Scored rows point at their entry in per_instance_stats.json (1-based position).
    row = imported.ledger.filter(pl.col("case_id") == "id45277").row(0, named=True)
    assert (row["line"], Path(row["source"]).name, row["score"]) == (3, "per_instance_stats.json", 1.0)
    [info] = imported.info
    assert info["model"] == PYTHIA
    assert info["scenario"] == HELLASWAG_SCENARIO
    assert (info["max_eval_instances"], info["num_train_trials"], info["request_states"]) == (10, 1, 10)
    assert info["instances_by_split"] == {"valid": 10}
    assert info["stats_json"] == {"valid": {"exact_match": 0.3, "num_instances": 10.0}}


def test_mmlu_gpt2_split_slices() -> None:
    imported = helm.read([MMLU])
    assert imported.notes.height == 0
    split_of = dict(imported.plan.cases.select("case_id", "split").iter_rows())
    assert split_of["id11"] == "valid"
    assert sorted(split_of.values()).count("test") == 9
    report = run_audit(imported)
    assert counts(report) == {GPT2: funnel_row(10, 10, 1)}
    by_split = funnel(report.units.lazy(), by=("candidate", "split")).collect()
    assert by_split.select("split", "planned", "scored", "passed", "pass_rate_scored").rows() == [
        ("test", 9, 9, 1, pytest.approx(1 / 9)),
        ("valid", 1, 1, 0, 0.0),
    ]
    assert imported.ledger.filter(pl.col("passed")).get_column("case_id").to_list() == ["id222"]
    # stats.json reports each split on its own; it is information, never evidence.
    assert imported.info[0]["stats_json"] == {
        "test": {"exact_match": pytest.approx(1 / 9), "num_instances": 9.0},
        "valid": {"exact_match": 0.0, "num_instances": 1.0},
    }


def test_parent_folder_reads_both_runs_with_scenario_prefixed_ids() -> None:
    imported = helm.read([HELM])
    assert imported.notes.height == 0
    assert [i["model"] for i in imported.info] == [PYTHIA, GPT2]
    assert imported.plan.candidates == (PYTHIA, GPT2)
    assert imported.plan.units is not None and imported.plan.units.height == 20
    assert f"{MMLU_SCENARIO}/id11" in imported.plan.cases.get_column("case_id").to_list()
    report = run_audit(imported)
    assert counts(report) == {PYTHIA: funnel_row(10, 10, 3), GPT2: funnel_row(10, 10, 1)}


def test_file_inside_a_run_folder_reads_that_run() -> None:
    imported = helm.read([MMLU / "per_instance_stats.json"])
    assert counts(run_audit(imported)) == {GPT2: funnel_row(10, 10, 1)}


def test_score_picks_another_binary_stat() -> None:
    report = run_audit(helm.read([HELLASWAG], score="quasi_exact_match"))
    assert counts(report) == {PYTHIA: funnel_row(10, 10, 3)}


def test_numeric_stat_has_no_passed_column() -> None:
    imported = helm.read([HELLASWAG], score="num_prompt_tokens")
    assert "passed" not in imported.ledger.columns
    assert sorted(imported.ledger.get_column("score").to_list()) == [
        496.0,
        523.0,
        534.0,
        636.0,
        664.0,
        678.0,
        681.0,
        684.0,
        700.0,
        718.0,
    ]
    report = run_audit(imported, grade="numeric", score_range=(0.0, 1000.0), pass_threshold=700.0)
    assert counts(report) == {PYTHIA: funnel_row(10, 10, 2)}


def test_unknown_stat_is_not_scored_never_failed() -> None:
    imported = helm.read([MMLU], score="no_such_stat")
    assert imported.notes.select("kind", "refusing").rows() == [("not_a_score", False)]
    assert imported.info[0]["stat_found"] is False
    report = run_audit(imported)
    assert counts(report) == {GPT2: funnel_row(10, 0, 0, not_scored=10)}
    assert report.summary.get_column("pass_rate_scored").to_list() == [None]


def test_row_order_does_not_change_the_report(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    rng = random.Random(7)
    edit_json(run / "scenario_state.json", lambda d: rng.shuffle(d["request_states"]))
    edit_json(run / "per_instance_stats.json", lambda d: rng.shuffle(d))
    shuffled = run_audit(helm.read([run]))
    original = run_audit(helm.read([MMLU]))
    assert shuffled.summary.equals(original.summary)
    assert shuffled.units.drop("line", "source").equals(original.units.drop("line", "source"))


# --- statuses built from variants of the real run ---------------------------------------


def test_request_without_stat_failed_request_and_perturbation(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    robustness = {"name": "robustness", "robustness": True, "fairness": False, "computed_on": "perturbed"}

    def state(doc: dict[str, Any]) -> None:
        states = doc["request_states"]
        by_id = {rs["instance"]["id"]: rs for rs in states}
        by_id["id65"]["result"]["success"] = False
        by_id["id65"]["result"]["error"] = "content filter"
        by_id["id59"]["result"] = None
        perturbed = json.loads(json.dumps(by_id["id11"]))
        perturbed["instance"]["perturbation"] = robustness
        states.append(perturbed)

    def stats(doc: list[dict[str, Any]]) -> None:
        doc[:] = [e for e in doc if e["instance_id"] != "id344"]  # a request with no stat
        entry = json.loads(json.dumps(next(e for e in doc if e["instance_id"] == "id11")))
        entry["perturbation"] = robustness
        for s in entry["stats"]:
            s["name"]["perturbation"] = robustness
            if s["name"]["name"] == "exact_match":
                s["mean"] = 1.0
        doc.append(entry)

    edit_json(run / "scenario_state.json", state)
    edit_json(run / "per_instance_stats.json", stats)
    imported = helm.read([run])
    status = {r["case_id"]: (r["exec_status"], r["score_status"], r["passed"]) for r in imported.ledger.to_dicts()}
    assert status["id65"] == ("error", "not_scored", None)
    assert status["id59"] == ("not_started", "not_scored", None)
    assert status["id344"] == ("completed", "not_scored", None)
    assert status["id11/robustness"] == ("completed", "scored", True)
    assert imported.plan.cases.filter(pl.col("case_id") == "id11/robustness").get_column("split").to_list() == ["valid"]
    # HELM kept a 0 for the failed and the never-run request: reported, not used as a grade.
    assert imported.notes.select("kind", "case_id").rows() == [("run_status", "id59"), ("run_status", "id65")]
    report = run_audit(imported)
    assert counts(report) == {
        GPT2: {
            "planned": 11,
            "attempted": 10,
            "completed": 9,
            "with_output": 9,
            "scored": 8,
            "passed": 2,
            "missing": 0,
            "exec_failed": 1,
            "judge_failed": 0,
            "not_scored": 1,
        }
    }
    assert report.summary.get_column("not_started").to_list() == [1]


def test_nonfinite_stat_is_a_judge_failure(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    text = (run / "per_instance_stats.json").read_text()
    doc = json.loads(text)
    for s in doc[0]["stats"]:
        if s["name"]["name"] == "exact_match":
            s["mean"] = math.nan
    (run / "per_instance_stats.json").write_text(json.dumps(doc))  # writes the bare token NaN
    imported = helm.read([run])
    assert imported.notes.select("kind", "case_id", "line", "refusing").rows() == [
        ("nonfinite_score", "id147", 1, False)
    ]
    assert counts(run_audit(imported)) == {GPT2: funnel_row(10, 9, 1, judge_failed=1)}


def test_missing_request_for_a_planned_trial_is_missing(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    edit_json(run / "run_spec.json", lambda d: d["adapter_spec"].update(num_train_trials=2))
    imported = helm.read([run])
    report = run_audit(imported)
    assert counts(report)[GPT2]["planned"] == 20
    assert counts(report)[GPT2]["missing"] == 10
    assert counts(report)[GPT2]["scored"] == 10


def test_stats_json_header_disagreeing_with_rows_is_a_note(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")

    def header(doc: list[dict[str, Any]]) -> None:
        for s in doc:
            if s["name"] == {"name": "num_instances", "split": "test"}:
                s["mean"] = 90.0

    edit_json(run / "stats.json", header)
    imported = helm.read([run])
    assert imported.notes.select("kind", "refusing").rows() == [("header_rows_disagree", False)]
    assert counts(run_audit(imported)) == {GPT2: funnel_row(10, 10, 1)}


# --- malformed exports: refusing notes, never a traceback, other runs still read -------------


def refusing_notes(imported: Imported) -> list[tuple[str, str, int | None]]:
    rows = imported.notes.filter(pl.col("refusing")).select("kind", "source", "line").rows()
    return [(kind, Path(source).name, line) for kind, source, line in rows]


def test_truncated_stats_file_is_refused_and_other_run_is_read(tmp_path: Path) -> None:
    broken = copy_run(MMLU, tmp_path / "broken")
    good = copy_run(HELLASWAG, tmp_path / "good")
    data = (broken / "per_instance_stats.json").read_bytes()
    (broken / "per_instance_stats.json").write_bytes(data[: len(data) // 2])
    imported = helm.read([tmp_path])
    [(kind, name, line)] = refusing_notes(imported)
    assert (kind, name) == ("unreadable_file", "per_instance_stats.json")
    assert line is not None and line > 1
    assert imported.plan.candidates == (PYTHIA,)
    assert imported.ledger.height == 10
    with pytest.raises(evalframe.AuditRefused) as info:
        run_audit(imported)
    assert info.value.problems.filter(pl.col("refusing")).get_column("kind").to_list() == ["unreadable_file"]
    assert helm.read([good]).notes.height == 0


def test_missing_file_and_bad_structure_are_refusing_notes(tmp_path: Path) -> None:
    no_state = copy_run(MMLU, tmp_path / "no_state")
    (no_state / "scenario_state.json").unlink()
    bad_id = copy_run(HELLASWAG, tmp_path / "bad_id")
    edit_json(bad_id / "scenario_state.json", lambda d: d["request_states"][4]["instance"].pop("id"))
    imported = helm.read([no_state, bad_id])
    assert sorted(refusing_notes(imported)) == [
        ("unreadable_file", "scenario_state.json", None),
        ("unreadable_file", "scenario_state.json", None),
    ]
    details = sorted(imported.notes.get_column("detail").to_list())
    assert details == [
        "scenario_state.json at request_states[4].instance.id: missing required key",
        "scenario_state.json: required file missing from the run folder",
    ]
    assert imported.ledger.height == 0
    assert imported.plan.candidates == ()
    with pytest.raises(evalframe.AuditRefused):
        run_audit(imported)


def test_broken_stats_json_keeps_rows_but_refuses(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    (run / "stats.json").write_text('[{"name": ')
    imported = helm.read([run])
    assert refusing_notes(imported) == [("unreadable_file", "stats.json", 1)]
    assert imported.ledger.height == 10


def test_folder_without_runs_and_foreign_file(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    imported = helm.read([tmp_path / "empty", other, MMLU])
    assert sorted(refusing_notes(imported)) == [
        ("unreadable_file", "empty", None),
        ("unreadable_file", "notes.txt", None),
    ]
    assert imported.plan.candidates == (GPT2,)


def test_path_that_does_not_exist_raises(tmp_path: Path) -> None:
    with pytest.raises(evalframe.InputFormatError):
        helm.read([tmp_path / "nope"])
