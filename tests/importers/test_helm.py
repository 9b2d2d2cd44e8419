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
from evalframe.importers import Imported, helm
from evalframe.importers._kit import ImportRefused, ImportUnreadable
from evalframe.load import Loaded
from tests.conftest import REAL, real

HELM = REAL / "helm" / "evaleval-every_eval_ever" / "tests" / "data" / "helm"
HELLASWAG = HELM / "commonsense-dataset=hellaswag,method=multiple_choice_joint,model=eleutherai_pythia-1b-v0"
MMLU = HELM / "mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
NARRATIVE_QA = HELM / "narrative_qa-model=openai_gpt2"
SAFETY = REAL / "helm" / "stanford-crfm-helm-PR2828" / "benchmark_output_TRUE_latest" / "runs" / "v3"
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


def test_mmlu_gpt2_plans_only_the_test_split() -> None:
    imported = helm.read([MMLU])
    # 9 test instances planned; the one valid instance (id11) is left out, never pooled.
    assert sorted(imported.plan.cases.get_column("split").to_list()) == ["test"] * 9
    assert "id11" not in imported.ledger.get_column("case_id").to_list()
    assert imported.notes.select("kind", "refusing").rows() == [("limited_run", False)]
    assert "1 instance(s) of split 'valid' left out" in imported.notes.get_column("detail")[0]
    report = run_audit(imported)
    assert counts(report) == {GPT2: funnel_row(9, 9, 1)}
    assert report.summary.get_column("pass_rate_scored").to_list() == [pytest.approx(1 / 9)]
    assert imported.ledger.filter(pl.col("passed")).get_column("case_id").to_list() == ["id222"]
    [info] = imported.info
    assert (info["split"], info["split_left_out"], info["run_id"]) == ("test", {"valid": 1}, info["run_name"])
    # stats.json reports each split on its own; it is information, never evidence.
    assert info["stats_json"] == {
        "test": {"exact_match": pytest.approx(1 / 9), "num_instances": 9.0},
        "valid": {"exact_match": 0.0, "num_instances": 1.0},
    }


def test_mmlu_gpt2_declared_valid_split() -> None:
    imported = helm.read([MMLU], score="exact_match,split=valid")
    assert imported.plan.cases.select("case_id", "split").rows() == [("id11", "valid")]
    assert "9 instance(s) of split 'test' left out" in imported.notes.get_column("detail")[0]
    assert counts(run_audit(imported)) == {GPT2: funnel_row(1, 1, 0)}


def test_narrative_qa_splits_kept_apart() -> None:
    test = helm.read([NARRATIVE_QA])
    assert sorted(test.plan.cases.get_column("case_id").to_list()) == ["id1332", "id1340", "id1413", "id1514"]
    assert counts(run_audit(test)) == {GPT2: funnel_row(4, 4, 0)}
    valid = helm.read([NARRATIVE_QA], score="exact_match,split=valid")
    assert valid.plan.cases.get_column("case_id").to_list() == ["id1123"]
    assert counts(run_audit(valid)) == {GPT2: funnel_row(1, 1, 0)}
    # A numeric stat keeps the same split rule.
    f1 = helm.read([NARRATIVE_QA], score="f1_score")
    assert "passed" not in f1.ledger.columns and f1.ledger.height == 4


def test_declared_split_the_run_lacks_refuses() -> None:
    with pytest.raises(ImportRefused) as exc:
        helm.read([HELLASWAG], score="exact_match,split=test")
    assert exc.value.problems.select("kind", "refusing").rows() == [("unknown_score", True)]
    assert exc.value.problems.get_column("detail").to_list() == [
        "no split 'test' in this run (has: valid): name one with --score exact_match,split=<split>, "
        "e.g. --score exact_match,split=valid"
    ]


def test_several_splits_without_test_refuse(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")

    def to_train(doc: dict[str, Any]) -> None:
        for rs in doc["request_states"]:
            if rs["instance"]["split"] == "test":
                rs["instance"]["split"] = "train"

    edit_json(run / "scenario_state.json", to_train)
    with pytest.raises(ImportRefused) as exc:
        helm.read([run])
    refusing = exc.value.problems.filter(pl.col("refusing"))
    assert refusing.get_column("kind").to_list() == ["ambiguous_score"]
    assert "--score exact_match,split=train" in refusing.get_column("detail")[0]
    assert counts(run_audit(helm.read([run], score="exact_match,split=train"))) == {GPT2: funnel_row(9, 9, 1)}


def test_parent_folder_reads_every_run_with_scenario_prefixed_ids_one_task_per_scenario() -> None:
    imported = helm.read([HELM])
    assert imported.notes.select("kind").to_series().to_list() == ["limited_run", "limited_run"]
    assert [i["model"] for i in imported.info] == [PYTHIA, GPT2, GPT2]
    assert imported.plan.candidates == (PYTHIA, GPT2)
    assert imported.plan.units is not None and imported.plan.units.height == 10 + 9 + 4
    assert f"{MMLU_SCENARIO}/id222" in imported.plan.cases.get_column("case_id").to_list()
    # Each scenario is a task, audited apart: exact_match in per_instance_stats.json is 1.0 on 3 of hellaswag's
    # 10 instances, 1 of mmlu's 9 test instances and none of narrative_qa's 4 (GPT-2's 13 units never pooled).
    assert imported.plan.tasks == (HELLASWAG_SCENARIO, MMLU_SCENARIO, "narrative_qa")
    by_task = {task: counts(report) for task, report in run_audit(imported).by_task().items()}
    assert by_task == {
        HELLASWAG_SCENARIO: {PYTHIA: funnel_row(10, 10, 3)},
        MMLU_SCENARIO: {GPT2: funnel_row(9, 9, 1)},
        "narrative_qa": {GPT2: funnel_row(4, 4, 0)},
    }
    # one scenario alone: no task column, the import as before
    assert helm.read([MMLU]).plan.cases.columns == ["case_id", "split", "scenario"]


def test_file_inside_a_run_folder_reads_that_run() -> None:
    imported = helm.read([MMLU / "per_instance_stats.json"])
    assert counts(run_audit(imported)) == {GPT2: funnel_row(9, 9, 1)}


def test_score_picks_another_binary_stat() -> None:
    report = run_audit(helm.read([HELLASWAG], score="quasi_exact_match"))
    assert counts(report) == {PYTHIA: funnel_row(10, 10, 3)}
    # HELM stat names may hold "@" (exact_match@5): read as the stat's name, never as a split.
    assert counts(run_audit(helm.read([MMLU], score="exact_match@5")))[GPT2]["scored"] == 9


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


def test_mistyped_stat_refuses_naming_the_stats() -> None:
    with pytest.raises(ImportRefused) as exc:
        helm.read([MMLU], score="exact_mach")
    [(kind, refusing, detail)] = exc.value.problems.select("kind", "refusing", "detail").rows()
    assert (kind, refusing) == ("unknown_score", True)
    assert detail.startswith("no stat named 'exact_mach' in the export (has: batch_size, exact_match, exact_match@5, ")


def test_safety_run_without_exact_match_refuses_naming_its_stats() -> None:
    with pytest.raises(ImportRefused) as exc:
        helm.read([SAFETY / "simple_safety_tests:model=google_gemini-1.5-pro-001"])
    [(kind, detail)] = exc.value.problems.select("kind", "detail").rows()
    assert kind == "unknown_score"
    assert detail.startswith("no default stat (exact_match) in the export (has: batch_size, ")
    assert "sst_claude_score, sst_gpt_score, sst_score" in detail
    assert detail.endswith("): name one with --score <stat>, e.g. --score sst_score")


#: HarmBench in the second collection: LLM-judge stats only, string instance ids, no exact_match.
HARM_BENCH = real(
    "helm/stanford-crfm-helm-PR2828/benchmark_output_TRUE_latest/runs/v3/harm_bench:model=meta_llama-3-8b", "real2"
)


def test_a_run_without_the_default_stat_names_its_stats_and_the_flag() -> None:
    # issue 38: the refusal said which stats there were but not how to choose one.
    with pytest.raises(ImportRefused) as exc:
        helm.read([HARM_BENCH])
    [(kind, refusing, candidate, detail)] = exc.value.problems.select("kind", "refusing", "candidate", "detail").rows()
    assert (kind, refusing, candidate) == ("unknown_score", True, "meta/llama-3-8b")  # the run's model is named
    assert detail == (
        "no default stat (exact_match) in the export (has: batch_size, finish_reason_endoftext, "
        "finish_reason_length, finish_reason_stop, finish_reason_unknown, harm_bench_claude_score, "
        "harm_bench_gpt_score, harm_bench_score, inference_runtime, num_completion_tokens, num_output_tokens, "
        "num_prompt_tokens, num_references, num_train_instances, num_train_trials, prompt_truncated, "
        "training_co2_cost, training_energy_cost): name one with --score <stat>, e.g. --score harm_bench_score"
    )


def test_blocked_request_is_an_execution_failure_though_judged() -> None:
    imported = helm.read([SAFETY / "simple_safety_tests:model=google_gemini-1.5-pro-001"], score="sst_score")
    status = {r["case_id"]: (r["exec_status"], r["score_status"], r["score"]) for r in imported.ledger.to_dicts()}
    assert status == {"id26": ("completed", "scored", 1.0), "id86": ("error", "not_scored", None)}
    [(kind, case, detail)] = imported.notes.select("kind", "case_id", "detail").rows()
    assert (kind, case) == ("run_status", "id86")
    assert detail == (
        "request failed (result.success = false: Content blocked: Prompt blocked with reason: 4), "
        "yet HELM recorded sst_score = 0.75; that value was not used as a grade"
    )
    report = run_audit(imported, grade="numeric")
    row = counts(report)["google/gemini-1.5-pro-001"]
    assert (row["planned"], row["completed"], row["exec_failed"], row["scored"]) == (2, 1, 1, 1)
    assert report.summary.get_column("mean_score").to_list() == [1.0]


def test_three_safety_candidates_on_the_same_cases() -> None:
    imported = helm.read([SAFETY], score="sst_score")
    assert imported.plan.candidates == (
        "anthropic/claude-3-5-sonnet-20240620",
        "google/gemini-1.5-pro-001",
        "meta/llama-3-8b",
    )
    report = run_audit(imported, grade="numeric", pass_threshold=1.0)
    means = dict(report.summary.select("candidate", "mean_score").iter_rows())
    assert means == {
        "anthropic/claude-3-5-sonnet-20240620": 1.0,
        "google/gemini-1.5-pro-001": 1.0,
        "meta/llama-3-8b": 0.375,
    }
    passed = {c: (v["scored"], v["passed"]) for c, v in counts(report).items()}
    assert passed == {
        "anthropic/claude-3-5-sonnet-20240620": (2, 2),
        "google/gemini-1.5-pro-001": (1, 1),
        "meta/llama-3-8b": (2, 0),
    }


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
        perturbed = json.loads(json.dumps(by_id["id147"]))
        perturbed["instance"]["perturbation"] = robustness
        states.append(perturbed)

    def stats(doc: list[dict[str, Any]]) -> None:
        doc[:] = [e for e in doc if e["instance_id"] != "id344"]  # a request with no stat
        entry = json.loads(json.dumps(next(e for e in doc if e["instance_id"] == "id147")))
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
    assert status["id147/robustness"] == ("completed", "scored", True)
    split_of = imported.plan.cases.filter(pl.col("case_id") == "id147/robustness").get_column("split")
    assert split_of.to_list() == ["test"]
    # HELM kept a 0 for the failed and the never-run request: reported, not used as a grade.
    assert imported.notes.select("kind", "case_id").rows() == [
        ("limited_run", None),
        ("run_status", "id59"),
        ("run_status", "id65"),
    ]
    report = run_audit(imported)
    assert counts(report) == {
        GPT2: {
            "planned": 10,
            "attempted": 9,
            "completed": 8,
            "with_output": 8,
            "scored": 7,
            "passed": 2,
            "missing": 0,
            "exec_failed": 1,
            "judge_failed": 0,
            "not_scored": 1,
        }
    }
    assert report.summary.get_column("not_started").to_list() == [1]


def set_exact_match(run: Path, instance: str, **values: Any) -> None:
    """Overwrite fields of one instance's exact_match stat in a copied run."""

    def change(doc: list[dict[str, Any]]) -> None:
        for entry in doc:
            if entry["instance_id"] == instance:
                for s in entry["stats"]:
                    if s["name"]["name"] == "exact_match":
                        s.update(values)

    edit_json(run / "per_instance_stats.json", change)


def test_nonfinite_stat_is_a_judge_failure(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    set_exact_match(run, "id147", mean=math.nan)  # json.dumps writes the bare token NaN
    imported = helm.read([run])
    assert imported.notes.select("kind", "case_id", "line", "refusing").rows() == [
        ("limited_run", None, None, False),
        ("nonfinite_score", "id147", 1, False),
    ]
    assert counts(run_audit(imported)) == {GPT2: funnel_row(9, 8, 1, judge_failed=1)}


def test_stat_with_count_zero_is_a_judge_failure(tmp_path: Path) -> None:
    # HELM writes a stat it could not compute for an instance as count 0 with null mean/sum.
    run = copy_run(MMLU, tmp_path / "run")
    set_exact_match(run, "id222", count=0, sum=0, sum_squared=0, min=None, max=None, mean=None)
    imported = helm.read([run])
    row = imported.ledger.filter(pl.col("case_id") == "id222").row(0, named=True)
    assert (row["exec_status"], row["score_status"], row["score"], row["line"]) == ("completed", "judge_error", None, 8)
    assert counts(run_audit(imported)) == {GPT2: funnel_row(9, 8, 0, judge_failed=1)}


def test_missing_request_for_a_planned_trial_is_missing(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    edit_json(run / "run_spec.json", lambda d: d["adapter_spec"].update(num_train_trials=2))
    imported = helm.read([run])
    report = run_audit(imported)
    assert counts(report)[GPT2]["planned"] == 18
    assert counts(report)[GPT2]["missing"] == 9
    assert counts(report)[GPT2]["scored"] == 9


def test_stats_json_header_disagreeing_with_rows_is_a_note(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")

    def header(doc: list[dict[str, Any]]) -> None:
        for s in doc:
            if s["name"] == {"name": "num_instances", "split": "test"}:
                s["mean"] = 90.0

    edit_json(run / "stats.json", header)
    imported = helm.read([run])
    assert imported.notes.select("kind", "refusing").rows() == [
        ("header_rows_disagree", False),
        ("limited_run", False),
    ]
    assert counts(run_audit(imported)) == {GPT2: funnel_row(9, 9, 1)}


# --- malformed exports: refusing notes, never a traceback, other runs' notes kept -------------


def refusing_notes(problems: pl.DataFrame) -> list[tuple[str, str, int | None]]:
    rows = problems.filter(pl.col("refusing")).select("kind", "source", "line").rows()
    return [(kind, Path(source).name, line) for kind, source, line in rows]


def test_truncated_stats_file_is_refused(tmp_path: Path) -> None:
    broken = copy_run(MMLU, tmp_path / "broken")
    good = copy_run(HELLASWAG, tmp_path / "good")
    data = (broken / "per_instance_stats.json").read_bytes()
    (broken / "per_instance_stats.json").write_bytes(data[: len(data) // 2])
    with pytest.raises(ImportUnreadable) as exc:
        helm.read([tmp_path])
    [(kind, name, line)] = refusing_notes(exc.value.notes)
    assert (kind, name) == ("unreadable_file", "per_instance_stats.json")
    assert line is not None and line > 1
    assert (Path(exc.value.path).name, exc.value.line, exc.value.other_files) == ("per_instance_stats.json", line, [])
    assert helm.read([good]).notes.height == 0


def test_missing_file_and_bad_structure_are_refusing_notes(tmp_path: Path) -> None:
    no_state = copy_run(MMLU, tmp_path / "no_state")
    (no_state / "scenario_state.json").unlink()
    bad_id = copy_run(HELLASWAG, tmp_path / "bad_id")
    edit_json(bad_id / "scenario_state.json", lambda d: d["request_states"][4]["instance"].pop("id"))
    with pytest.raises(ImportUnreadable) as exc:
        helm.read([no_state, bad_id])
    problems = exc.value.notes
    assert Path(exc.value.path).parent.name == "bad_id"
    assert [Path(f).parent.name for f in exc.value.other_files] == ["no_state"]
    assert sorted(refusing_notes(problems)) == [
        ("unreadable_file", "scenario_state.json", None),
        ("unreadable_file", "scenario_state.json", None),
    ]
    assert sorted(problems.get_column("detail").to_list()) == [
        "scenario_state.json at request_states[4].instance.id: missing required key",
        "scenario_state.json: required file missing from the run folder",
    ]


def test_broken_stats_json_refuses(tmp_path: Path) -> None:
    run = copy_run(MMLU, tmp_path / "run")
    (run / "stats.json").write_text('[{"name": ')
    with pytest.raises(ImportUnreadable) as exc:
        helm.read([run])
    assert refusing_notes(exc.value.notes) == [("unreadable_file", "stats.json", 1)]


def test_folder_without_runs_and_foreign_file(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(ImportUnreadable) as exc:
        helm.read([tmp_path / "empty", other, MMLU])
    assert sorted(refusing_notes(exc.value.notes)) == [
        ("no_export", "empty", None),
        ("unreadable_file", "notes.txt", None),
    ]
    with pytest.raises(ImportRefused) as exc:
        helm.read([tmp_path / "empty"])
    assert exc.value.problems.select("kind", "refusing").rows() == [("no_export", True)]


def test_path_that_does_not_exist_raises(tmp_path: Path) -> None:
    with pytest.raises(evalframe.InputFormatError):
        helm.read([tmp_path / "nope"])


def test_read_as_numeric_leaves_out_the_pass_derived_from_score_as_the_command_does() -> None:
    """read(..., grade="numeric"): gemini alone (sst_score 1.0) has no pass without a threshold, as in the CLI."""
    gemini = SAFETY / "simple_safety_tests:model=google_gemini-1.5-pro-001"
    assert "passed" in evalframe.read("helm", gemini, score="sst_score").ledger.columns  # 0/1 scores read as pass/fail
    frames = evalframe.read("helm", gemini, score="sst_score", grade="numeric")
    assert "passed" not in frames.ledger.columns
    plan = evalframe.Plan.from_frame(frames.plan)
    row = evalframe.audit(plan, frames.ledger, grade="numeric").summary.row(0, named=True)
    assert (row["scored"], row["passed"], row["pass_rate_scored"], row["mean_score"]) == (1, None, None, 1.0)
    at_one = evalframe.audit(plan, frames.ledger, grade="numeric", pass_threshold=1.0).summary.row(0, named=True)
    assert (at_one["scored"], at_one["passed"], at_one["pass_rate_scored"]) == (1, 1, 1.0)


def test_one_run_spec_in_two_suites_with_other_settings_is_two_candidates() -> None:
    # issue 38: bbq for llama in suite v1 (5-shot) and v3 (0-shot) were read as one candidate and refused as
    # duplicate units; runs whose settings differ are different candidates, named by the differing setting.
    base = "helm/stanford-crfm-helm-PR2828"
    bbq = "bbq:subject=all,method=multiple_choice_joint,model=meta_llama-3-8b"
    v1 = real(f"{base}/benchmark_output_bbq/runs/v1/{bbq}", "real2")
    v3 = real(f"{base}/benchmark_output_TRUE_latest/runs/v3/{bbq}", "real2")
    imported = helm.read([v1, v3])
    names = ("meta/llama-3-8b [max_train_instances=0]", "meta/llama-3-8b [max_train_instances=5]")
    assert tuple(sorted(imported.plan.candidates)) == names
    differ = imported.notes.filter(pl.col("kind") == "settings_differ").sort("candidate")
    assert differ.get_column("candidate").to_list() == list(names)
    assert differ.get_column("detail")[0] == (
        "runs of meta/llama-3-8b (bbq:subject=all,method=multiple_choice_joint) recorded different settings, "
        f"read as 2 candidates, not as retries of one another: max_train_instances = 0 in v3/{bbq}; 5 in v1/{bbq}"
    )
    per = imported.ledger.group_by("candidate").len().sort("candidate").rows()
    assert per == [(names[0], 2), (names[1], 50)]
