"""EvalScope reviews + reports -> plan + ledger: subsets as slices, the report never evidence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from evalframe.cli import main
from evalframe.importers import evalscope
from evalframe.importers._kit import ImportRefused
from tests.conftest import real

VIZ = "evalscope/modelscope-evalscope/examples/viz"
GSM8K = real(f"{VIZ}/qwen3-max/reviews/qwen3-max/gsm8k_main.jsonl")
GSM8K_REPORT = real(f"{VIZ}/qwen3-max/reports/qwen3-max/gsm8k.json")


def review(index: int, values: dict[str, Any], *, group: int | None = None, sample: int | None = None) -> str:
    score = {"value": values, "main_score_name": None}
    sample_score = {"score": score, "sample_id": index if sample is None else sample, "group_id": group}
    return json.dumps({"index": index, "target": "t", "messages": [], "sample_score": sample_score})


def run_folder(tmp_path: Path, lines: list[str], *, report: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "out" / "reviews" / "m" / "general_qa_mine.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if report is not None:
        reports = tmp_path / "out" / "reports" / "m"
        reports.mkdir(parents=True)
        (reports / "general_qa.json").write_text(json.dumps(report), encoding="utf-8")
    return path


def report_of(num: int, score: float) -> dict[str, Any]:
    subset = {"name": "mine", "num": num, "score": score}
    metric = {
        "name": "mean_acc",
        "num": num,
        "score": score,
        "categories": [{"name": ["default"], "subsets": [subset]}],
    }
    return {"name": "m@general_qa", "dataset_name": "general_qa", "model_name": "m", "metrics": [metric], "num": num}


def audit(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--from", "evalscope", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_report_beside_the_reviews_names_dataset_and_subset(tmp_path: Path) -> None:
    path = run_folder(tmp_path, [review(0, {"acc": 1.0}), review(1, {"acc": 0.0})], report=report_of(2, 0.5))
    imported = evalscope.read([path])
    assert imported.plan.cases.rows() == [
        ("general_qa_mine/0", "general_qa", "mine"),
        ("general_qa_mine/1", "general_qa", "mine"),
    ]
    assert imported.notes.get_column("kind").to_list() == ["plan_from_rows"]
    assert imported.info[0]["report"] == str(tmp_path / "out" / "reports" / "m" / "general_qa.json")


def test_without_a_report_the_stem_is_dataset_and_subset(tmp_path: Path) -> None:
    path = run_folder(tmp_path, [review(0, {"acc": 1.0})])
    assert evalscope.read([path]).plan.cases.rows() == [("general_qa_mine/0", "general_qa_mine", "general_qa_mine")]


def test_a_report_num_or_score_unlike_the_rows_is_flagged(tmp_path: Path) -> None:
    path = run_folder(tmp_path, [review(0, {"acc": 1.0}), review(1, {"acc": 0.0})], report=report_of(5, 0.8))
    imported = evalscope.read([path])
    report = tmp_path / "out" / "reports" / "m" / "general_qa.json"
    flags = imported.notes.filter(imported.notes["kind"] == "header_rows_disagree").get_column("detail").to_list()
    assert sorted(flags) == [
        f"report {report} says mean_acc 0.8 for subset 'mine', the 2 scored row(s) average 0.5000",
        f"report {report} says mean_acc num 5 for subset 'mine', the review file has 2 row(s)",
    ]
    assert imported.plan.n_units == 2  # the report is never evidence: rows are


def test_repeats_of_one_sample_are_trials_of_one_case(tmp_path: Path) -> None:
    lines = [review(0, {"acc": 1.0}, group=0, sample=0), review(1, {"acc": 0.0}, group=0, sample=1)]
    lines.append(review(2, {"acc": 1.0}, group=2, sample=2))
    imported = evalscope.read([run_folder(tmp_path, lines)])
    assert imported.ledger.select("case_id", "trial", "score").rows() == [
        ("general_qa_mine/0", 1, 1.0),
        ("general_qa_mine/0", 2, 0.0),
        ("general_qa_mine/2", 1, 1.0),
    ]


def test_a_null_metric_value_is_a_grader_failure_and_an_absent_one_not_scored(tmp_path: Path) -> None:
    path = run_folder(tmp_path, [review(0, {"acc": None}), review(1, {"other": 1.0}), review(2, {"acc": 1.0})])
    imported = evalscope.read([path], score="acc")
    assert imported.ledger.get_column("score_status").to_list() == ["judge_error", "not_scored", "scored"]
    assert "nonfinite_score" in imported.notes.get_column("kind").to_list()


def test_several_metrics_without_a_main_one_refuse(tmp_path: Path) -> None:
    path = run_folder(tmp_path, [review(0, {"acc": 1.0, "f1": 0.5})])
    with pytest.raises(ImportRefused) as exc:
        evalscope.read([path])
    assert exc.value.problems.get_column("kind").to_list() == ["ambiguous_score"]


def test_a_report_alone_is_no_evidence(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "qwen3-max" / "gsm8k.json"
    target.parent.mkdir(parents=True)
    shutil.copy(GSM8K_REPORT, target)
    code, _, err = audit(str(target), "--format", "json")
    assert code == 1
    assert "no review file: a report's totals are no per-sample evidence" in " ".join(err.split())


def test_two_datasets_read_together_are_two_tasks_each_audited_apart() -> None:
    """gsm8k_main.jsonl: acc 1.0 on its 10 rows; ifeval_default.jsonl: prompt_level_strict 1 on 8 of 10."""
    ifeval = real(f"{VIZ}/qwen3-max/reviews/qwen3-max/ifeval_default.jsonl")
    imported = evalscope.read([GSM8K, ifeval], score=None)
    assert sorted((i["task"], i["metric"]) for i in imported.info) == [
        ("gsm8k", "acc"),
        ("ifeval", "prompt_level_strict"),
    ]
    assert imported.plan.tasks == ("gsm8k", "ifeval")
    code, out, err = audit(str(GSM8K), str(ifeval), "--format", "json")
    assert code == 0, err
    tasks = json.loads(out)["tasks"]
    by_task = {t: [(r["candidate"], r["planned"], r["passed"]) for r in tasks[t]["summary"]] for t in tasks}
    assert by_task == {"gsm8k": [("qwen3-max", 10, 10)], "ifeval": [("qwen3-max", 10, 8)]}


def test_subsets_of_one_dataset_read_together_are_tasks_and_one_subset_has_no_task_column(tmp_path: Path) -> None:
    one = run_folder(tmp_path, [review(0, {"acc": 1.0})], report=report_of(1, 1.0))
    assert evalscope.read([one]).plan.cases.columns == ["case_id", "dataset", "subset"]
    other = one.with_name("general_qa_yours.jsonl")
    other.write_text(review(0, {"acc": 0.0}) + "\n", encoding="utf-8")
    plan = evalscope.read([one, other]).plan
    assert plan.cases.rows() == [
        ("general_qa_mine/0", "general_qa", "mine", "general_qa/mine"),
        ("general_qa_yours/0", "general_qa", "yours", "general_qa/yours"),
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{oops", ":1: invalid JSON (Expecting property name enclosed in double quotes, column 2)"),
        (
            '{"index": 0}',
            ":1: not an EvalScope review row: expected an integer index and a sample_score.score.value dict",
        ),
        (
            '{"index": "0", "sample_score": {"score": {"value": {}}}}',
            ":1: not an EvalScope review row: expected an integer index and a sample_score.score.value dict",
        ),
    ],
)
def test_a_malformed_review_is_an_input_error_naming_file_line_and_reason(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = run_folder(tmp_path, [line])
    code, out, err = audit(str(path))
    assert (code, out) == (2, "")
    assert " ".join(err.split()) == f"error: {path}{reason}"


def test_a_malformed_report_is_an_input_error(tmp_path: Path) -> None:
    path = run_folder(tmp_path, [review(0, {"acc": 1.0})])
    report = tmp_path / "out" / "reports" / "m" / "general_qa.json"
    report.parent.mkdir(parents=True)
    report.write_text('{"dataset_name": "general_qa"}', encoding="utf-8")
    code, _, err = audit(str(path), str(report))
    assert (code, " ".join(err.split())) == (
        2,
        f'error: {report}: not an EvalScope report: expected "dataset_name" and a "metrics" list',
    )


def test_metrics_of_different_datasets_pool_nothing() -> None:
    """The viz folder grades gsm8k by acc and ifeval by prompt_level_strict: two tasks, so no rate pools them."""
    imported = evalscope.read([real(VIZ)])
    assert imported.notes.filter(pl.col("kind") == "pooled_metrics").height == 0
    assert sorted({(i["task"], i["metric"]) for i in imported.info}) == [
        ("gsm8k", "acc"),
        ("ifeval", "prompt_level_strict"),
    ]


def two_runs(tmp_path: Path, temperatures: tuple[str, str]) -> list[Path]:
    """Two output folders of model m, gsm8k_main with the same 2 samples, configs differing only as given."""
    roots = []
    for name, temperature, grades in (("run1", temperatures[0], (1.0, 0.0)), ("run2", temperatures[1], (1.0, 1.0))):
        root = tmp_path / name
        (root / "reviews" / "m").mkdir(parents=True)
        (root / "reviews" / "m" / "gsm8k_main.jsonl").write_text(
            "".join(review(i, {"acc": g}) + "\n" for i, g in enumerate(grades)), encoding="utf-8"
        )
        (root / "configs").mkdir()
        config = f"limit: 2\nmodel: m\nwork_dir: {name}\ngeneration_config:\n  temperature: {temperature}\nseed: 42\n"
        (root / "configs" / "task_config_abc.yaml").write_text(config, encoding="utf-8")
        roots.append(root)
    return roots


def test_runs_of_one_model_with_different_settings_are_different_candidates(tmp_path: Path) -> None:
    roots = two_runs(tmp_path, ("0.7", "0.0"))
    imported = evalscope.read(roots)
    names = ["m [generation_config=temperature: 0.0]", "m [generation_config=temperature: 0.7]"]
    assert sorted(imported.plan.candidates) == names
    assert imported.ledger.select("candidate", "case_id", "attempt", "score").sort("candidate", "case_id").rows() == [
        (names[0], "gsm8k_main/0", 1, 1.0),
        (names[0], "gsm8k_main/1", 1, 1.0),
        (names[1], "gsm8k_main/0", 1, 1.0),
        (names[1], "gsm8k_main/1", 1, 0.0),
    ]
    differ = imported.notes.filter(pl.col("kind") == "settings_differ")
    assert sorted(differ.get_column("candidate").to_list()) == names
    assert differ.filter(pl.col("candidate") == names[1]).get_column("detail").item() == (
        "runs of m recorded different settings, read as 2 candidates, not as retries of one another: "
        "generation_config = temperature: 0.7 in run1; temperature: 0.0 in run2"
    )
    limited = imported.notes.filter(pl.col("kind") == "limited_run")
    assert sorted(limited.get_column("candidate").to_list()) == names


def test_runs_of_one_model_with_the_same_settings_are_successive_attempts(tmp_path: Path) -> None:
    roots = two_runs(tmp_path, ("0.7", "0.7"))  # work_dir differs: where a run was written is not a setting
    imported = evalscope.read(roots)
    assert imported.plan.candidates == ("m",)
    assert imported.ledger.select("case_id", "attempt", "score").sort("case_id", "attempt").rows() == [
        ("gsm8k_main/0", 1, 1.0),
        ("gsm8k_main/0", 2, 1.0),
        ("gsm8k_main/1", 1, 0.0),
        ("gsm8k_main/1", 2, 1.0),
    ]
    assert "settings_differ" not in imported.notes.get_column("kind").to_list()
    code, out, err = audit(*map(str, roots), "--format", "json")
    assert code == 0, err
    row = json.loads(out)["summary"][0]
    assert {k: row[k] for k in ("planned", "attempted", "scored", "passed")} == {
        "planned": 2,
        "attempted": 2,
        "scored": 2,
        "passed": 1,  # retry policy first: attempt 1 counts (1.0, 0.0)
    }


def test_a_setting_one_run_records_and_another_does_not_is_unknown(tmp_path: Path) -> None:
    roots = two_runs(tmp_path, ("0.7", "0.7"))
    config = roots[1] / "configs" / "task_config_abc.yaml"
    config.write_text(config.read_text().replace("seed: 42\n", ""), encoding="utf-8")
    assert sorted(evalscope.read(roots).plan.candidates) == ["m [seed=42]", "m [seed=unknown]"]
