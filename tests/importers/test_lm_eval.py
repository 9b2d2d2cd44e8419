"""lm-evaluation-harness importer: real exports (SOURCES.md, lm-eval table) and malformed variants."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalframe import audit
from evalframe.errors import AuditRefused, InputFormatError
from evalframe.importers import Imported
from evalframe.importers.lm_eval import LEDGER_SCHEMA, read
from evalframe.load import Loaded
from evalframe.report import AuditReport
from evalframe.validate import validate_ledger
from tests.conftest import REAL

LM = REAL / "lm_eval"
BIAS = (
    LM
    / "EleutherAI-lm-evaluation-harness-PR1974/lm_eval/tasks/bias_classification/results"
    / "meta-llama__Meta-Llama-3-8B"
)
BIAS_SAMPLES = BIAS / "samples_bias_classification_2024-06-17T15-44-37.867068.json"
BIAS_RESULTS = BIAS / "results_2024-06-17T15-44-37.867068.json"
NEGO = LM / "EleutherAI-lm-evaluation-harness-PR3936/outputs/qwen3-8b/negotiationtom/Qwen__Qwen3-8B"
RUN1, RUN2 = "2026-07-08T16-04-34.219874", "2026-07-08T18-15-33.115417"
BELIEF1 = NEGO / f"samples_negotiationtom_belief_{RUN1}.jsonl"
BELIEF2 = NEGO / f"samples_negotiationtom_belief_{RUN2}.jsonl"
INTENTION1 = NEGO / f"samples_negotiationtom_intention_{RUN1}.jsonl"
TG = LM / "EleutherAI-lm-evaluation-harness-PR3144/results/tgpred.json/gpt-4o-mini"
TG_SAMPLES = TG / "samples_polymer_tg_prediction_2025-06-30T19-40-09.461247.jsonl"
MATH = LM / "evaleval-every_eval_ever/tests/data/lm_eval"
MATH_SAMPLES = MATH / "samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl"
MATH_RESULTS = MATH / "results_2026-01-21T03-44-18.458309.json"
MATH_MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"


def run_audit(imported: Imported, **options: Any) -> AuditReport:
    return audit(imported.plan, Loaded(imported.ledger.lazy(), imported.notes, "x"), **options)


def counts(report: AuditReport, *names: str) -> dict[str, Any]:
    assert report.summary.height == 1
    row = report.summary.row(0, named=True)
    return {n: row[n] for n in names}


FUNNEL = ("planned", "attempted", "scored", "passed", "failed", "missing", "judge_failed", "exec_failed", "not_scored")


def by_task(report: AuditReport) -> dict[tuple[str, str], int]:
    frame = report.units.group_by("task", pl.col("outcome").cast(pl.String)).len()
    return {(t, o): n for t, o, n in frame.iter_rows()}


def kinds(imported: Imported) -> dict[tuple[str, bool], int]:
    return {(k, r): n for k, r, n in imported.notes.group_by("kind", "refusing").len().iter_rows()}


# --- the ledger shape ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [BIAS, NEGO, TG, MATH], ids=["bias", "negotiationtom", "polymer", "math"])
def test_ledger_has_exactly_the_status_ledger_columns(path: Path) -> None:
    imported = read([path])
    assert imported.ledger.schema == LEDGER_SCHEMA
    assert imported.ledger.filter(pl.struct("candidate", "case_id", "trial", "attempt").is_duplicated()).height == 0
    validated = validate_ledger(imported.ledger, imported.plan, grade="numeric", score_range=(0.0, 1e6))
    assert validated.problems.height == 0
    assert validated.shape == "status"


# --- bias_classification: older layout, JSON Lines named .json ---------------------------------------


def test_bias_classification_reproduces_acc_311_of_609_from_rows() -> None:
    imported = read([BIAS])
    assert imported.plan.candidates == ("meta-llama/Meta-Llama-3-8B",)
    assert imported.plan.n_units == 609
    assert imported.notes.height == 0
    ledger = imported.ledger
    assert ledger.height == 609
    assert ledger.get_column("line").to_list() == list(range(1, 610))
    assert ledger.get_column("case_id").sort().to_list() == sorted(f"bias_classification/{i}" for i in range(609))
    assert ledger.get_column("run_id").unique().to_list() == ["2024-06-17T15-44-37.867068"]
    report = run_audit(imported)
    assert counts(report, *FUNNEL) == {
        "planned": 609,
        "attempted": 609,
        "scored": 609,
        "passed": 311,
        "failed": 298,
        "missing": 0,
        "judge_failed": 0,
        "exec_failed": 0,
        "not_scored": 0,
    }
    rate = report.summary.get_column("pass_rate_scored")[0]
    samples_info = next(i for i in imported.info if i["format"] == "lm-eval samples")
    assert rate == 311 / 609 == samples_info["aggregates"]["acc,none"]  # header value only recorded, not used
    assert samples_info["layout"] == "older (no metrics list)"
    assert samples_info["metric"] == "acc"
    assert samples_info["metric_kind"] == "binary"
    assert samples_info["metrics"] == ["acc", "acc_norm", "f1"]
    assert samples_info["candidate_from"] == "config.model_args.pretrained"
    assert (samples_info["n_samples_original"], samples_info["n_samples_effective"]) == (609, 609)
    assert samples_info["limit"] is None
    assert samples_info["task_version"] == 0
    assert samples_info["git_hash"] == "793469e"


def test_bias_classification_samples_file_alone_gives_the_same_counts() -> None:
    imported = read([BIAS_SAMPLES])
    assert counts(run_audit(imported), "planned", "scored", "passed") == {"planned": 609, "scored": 609, "passed": 311}
    assert [i["format"] for i in imported.info] == ["lm-eval samples", "lm-eval results"]
    assert imported.info[1]["plans_all_tasks"] is False


def test_bias_classification_acc_norm_gives_the_same_passes() -> None:
    imported = read([BIAS_SAMPLES], score="acc_norm")
    assert counts(run_audit(imported), "scored", "passed") == {"scored": 609, "passed": 311}


def test_bias_classification_f1_pairs_are_not_scores() -> None:
    imported = read([BIAS_SAMPLES], score="f1")
    assert kinds(imported) == {("not_a_score", False): 609}
    assert imported.notes.get_column("line").sort().to_list() == list(range(1, 610))
    assert imported.ledger.get_column("score_status").unique().to_list() == ["not_scored"]
    assert imported.ledger.get_column("score").null_count() == 609
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "not_scored", "pass_rate_scored") == {
        "planned": 609,
        "scored": 0,
        "not_scored": 609,
        "pass_rate_scored": None,
    }


def test_bias_classification_results_file_with_its_samples_file_plans_once() -> None:
    imported = read([BIAS_RESULTS, BIAS_SAMPLES, BIAS])  # the same two files named three ways
    assert imported.plan.n_units == 609
    assert imported.ledger.height == 609
    assert imported.notes.height == 0
    assert [i["source"] for i in imported.info] == [str(BIAS_SAMPLES), str(BIAS_RESULTS)]


def test_a_metric_that_is_not_in_the_rows_refuses() -> None:
    imported = read([BIAS_SAMPLES], score="bleu")
    assert kinds(imported) == {("missing_column", True): 1}
    with pytest.raises(AuditRefused) as caught:
        run_audit(imported)
    assert caught.value.problems.filter(pl.col("refusing")).get_column("kind").to_list() == ["missing_column"]


# --- negotiationtom: --limit 20, two re-runs, list-valued f1 metrics ------------------------------------


def test_negotiationtom_belief_limit_run_shows_true_coverage() -> None:
    imported = read([BELIEF1])
    assert imported.plan.candidates == ("Qwen/Qwen3-8B",)
    assert imported.plan.n_units == 13812
    assert imported.notes.height == 0  # effective 20 = 20 rows: no disagreement
    report = run_audit(imported)
    assert counts(report, *FUNNEL) == {
        "planned": 13812,
        "attempted": 20,
        "scored": 20,
        "passed": 9,
        "failed": 11,
        "missing": 13792,
        "judge_failed": 0,
        "exec_failed": 0,
        "not_scored": 0,
    }
    assert report.summary.get_column("pass_rate_scored")[0] == 0.45
    info = imported.info[0]
    assert (info["n_samples_original"], info["n_samples_effective"], info["limit"]) == (13812, 20, 20.0)
    assert info["aggregates"] == {"acc,none": 0.45, "acc_stderr,none": 0.11413288653790232}
    assert info["run_id"] == RUN1
    assert info["lm_eval_version"] == "0.4.13.dev0"


def test_negotiationtom_reruns_are_attempts_1_and_2_in_timestamp_order() -> None:
    forward = read([BELIEF1, BELIEF2])
    backward = read([BELIEF2, BELIEF1])
    assert forward.ledger.equals(backward.ledger)
    ledger = forward.ledger
    assert ledger.height == 40
    assert ledger.filter(pl.struct("candidate", "case_id", "trial", "attempt").is_duplicated()).height == 0
    per_run = ledger.group_by("run_id", "attempt").len().sort("run_id")
    assert per_run.rows() == [(RUN1, 1, 20), (RUN2, 2, 20)]
    report = run_audit(forward)  # retry policy "first": the 16-04 run counts
    assert counts(report, "planned", "attempted", "scored", "passed", "missing") == {
        "planned": 13812,
        "attempted": 13812 - 13792,
        "scored": 20,
        "passed": 9,
        "missing": 13792,
    }
    flags = report.problems.filter(pl.col("kind") == "retry_after_scored")
    assert flags.height == 20
    assert not flags.get_column("refusing").any()


def test_negotiationtom_intention_scores_exact_match_not_the_f1_lists() -> None:
    imported = read([INTENTION1])
    assert imported.notes.height == 0
    assert imported.info[0]["metric"] == "exact_match"
    assert imported.info[0]["metrics"] == ["micro_f1", "macro_f1", "exact_match"]
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "passed", "missing") == {
        "planned": 4618,
        "scored": 20,
        "passed": 4,
        "missing": 4598,
    }


def test_negotiationtom_micro_f1_chosen_is_not_a_score() -> None:
    imported = read([INTENTION1], score="micro_f1")
    assert kinds(imported) == {("not_a_score", False): 20}
    first = imported.notes.sort("line").row(0, named=True)
    assert (first["line"], first["case_id"], first["candidate"]) == (1, "negotiationtom_intention/0", "Qwen/Qwen3-8B")
    assert "is a list, not a score" in first["detail"]
    report = run_audit(imported)
    assert counts(report, "planned", "attempted", "scored", "not_scored") == {
        "planned": 4618,
        "attempted": 20,
        "scored": 0,
        "not_scored": 20,
    }


def test_negotiationtom_folder_plans_every_task_of_the_results_files() -> None:
    imported = read([NEGO])
    assert imported.plan.n_units == 13812 + 13812 + 4618
    assert sorted(imported.plan.cases.get_column("task").unique().to_list()) == [
        "negotiationtom_belief",
        "negotiationtom_desire",
        "negotiationtom_intention",
    ]
    assert imported.ledger.height == 80
    assert sorted(imported.ledger.get_column("run_id").unique().to_list()) == [RUN1, RUN2]
    # desire has no samples file in either run: a header/rows disagreement per results file
    notes = imported.notes
    assert kinds(imported) == {("header_rows_disagree", False): 2}
    assert all("negotiationtom_desire" in d for d in notes.get_column("detail").to_list())
    assert sorted(notes.get_column("source").to_list()) == [
        str(NEGO / f"results_{RUN1}.json"),
        str(NEGO / f"results_{RUN2}.json"),
    ]
    report = run_audit(imported)
    assert by_task(report) == {
        ("negotiationtom_belief", "passed"): 9,
        ("negotiationtom_belief", "failed"): 11,
        ("negotiationtom_belief", "missing"): 13792,
        ("negotiationtom_desire", "missing"): 13812,
        ("negotiationtom_intention", "passed"): 4,
        ("negotiationtom_intention", "failed"): 16,
        ("negotiationtom_intention", "missing"): 4598,
    }
    assert counts(report, "planned", "scored", "passed") == {"planned": 32242, "scored": 40, "passed": 13}
    results_info = [i for i in imported.info if i["format"] == "lm-eval results"]
    assert [i["n_samples"]["negotiationtom_intention"] for i in results_info] == [
        {"original": 4618, "effective": 20},
        {"original": 4618, "effective": 20},
    ]
    # the two runs' aggregate micro_f1 differ; recorded, never used
    assert [i["aggregates"]["negotiationtom_intention"]["micro_f1,none"] for i in results_info] == [
        0.30188679245283023,
        0.2857142857142857,
    ]


# --- polymer_tg_prediction: bare Infinity per-row values -----------------------------------------------

INFINITE_LINES = [1, 3, 4, 5, 6, 7, 8, 10, 13, 16, 17, 19, 20, 21, 22, 23, 24]


def test_polymer_infinity_is_a_grader_failure_never_a_score() -> None:
    imported = read([TG])
    assert imported.plan.candidates == ("gpt-4o-mini",)
    assert kinds(imported) == {("nonfinite_score", False): 17}
    assert imported.notes.get_column("line").sort().to_list() == INFINITE_LINES
    ledger = imported.ledger
    judged = ledger.filter(pl.col("score_status") == "judge_error")
    assert judged.get_column("line").sort().to_list() == INFINITE_LINES
    assert judged.get_column("score").null_count() == 17
    scored = ledger.filter(pl.col("score_status") == "scored").sort("line")
    assert scored.get_column("line").to_list() == [2, 9, 11, 12, 14, 15, 18]
    assert scored.get_column("score").to_list() == [
        259.6069226,
        238.413054,
        140.4411622,
        175.526682925,
        144.0828985,
        103.42511779,
        246.8012872,
    ]
    assert ledger.get_column("passed").null_count() == 24  # mae is a magnitude, never pass/fail
    report = run_audit(imported, grade="numeric", score_range=(0.0, 1000.0))
    assert counts(report, "planned", "attempted", "scored", "passed", "judge_failed", "missing", "exec_failed") == {
        "planned": 24,
        "attempted": 24,
        "scored": 7,
        "passed": 0,
        "judge_failed": 17,
        "missing": 0,
        "exec_failed": 0,
    }
    assert report.summary.get_column("pass_rate_scored")[0] is None  # no pass/fail for an error magnitude
    info = next(i for i in imported.info if i["format"] == "lm-eval samples")
    assert info["metric"] == "mae"
    assert info["metric_kind"] == "numeric"
    assert info["candidate_from"] == "config.model_args.model"
    assert info["limit"] == 200.0
    aggregates = info["aggregates"]
    assert math.isinf(aggregates["mae,none"])
    assert math.isnan(aggregates["mae_stderr,none"])


def test_polymer_mae_read_as_a_binary_grade_refuses() -> None:
    with pytest.raises(AuditRefused) as caught:
        run_audit(read([TG_SAMPLES]))
    refusing = caught.value.problems.filter(pl.col("refusing"))
    assert refusing.get_column("kind").unique().to_list() == ["invalid_grade"]
    assert refusing.height == 7


# --- math_perturbed_full: trimmed 10 rows against a header of 5000 -------------------------------------


def test_trimmed_math_file_plans_5000_and_scores_10() -> None:
    imported = read([MATH_SAMPLES])
    assert imported.plan.candidates == (MATH_MODEL,)
    assert kinds(imported) == {("header_rows_disagree", False): 1}
    note = imported.notes.row(0, named=True)
    assert note["source"] == str(MATH_SAMPLES)
    assert "5000" in note["detail"] and "holds 10 row(s)" in note["detail"]
    report = run_audit(imported)
    assert counts(report, *FUNNEL) == {
        "planned": 5000,
        "attempted": 10,
        "scored": 10,
        "passed": 0,
        "failed": 10,
        "missing": 4990,
        "judge_failed": 0,
        "exec_failed": 0,
        "not_scored": 0,
    }
    assert report.summary.get_column("pass_rate_upper")[0] == 4990 / 5000


def test_math_results_file_alone_is_a_header_only_export() -> None:
    imported = read([MATH_RESULTS])
    assert imported.ledger.height == 0
    assert imported.ledger.schema == LEDGER_SCHEMA
    assert imported.plan.n_units == 10000
    assert kinds(imported) == {("header_rows_disagree", False): 2}
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "missing", "scored_coverage", "pass_rate_scored") == {
        "planned": 10000,
        "scored": 0,
        "missing": 10000,
        "scored_coverage": 0.0,
        "pass_rate_scored": None,
    }


def test_math_folder_plans_the_task_without_samples_as_missing() -> None:
    report = run_audit(read([MATH]))
    assert by_task(report) == {
        ("math_perturbed_full", "failed"): 10,
        ("math_perturbed_full", "missing"): 4990,
        ("math_rephrased_full", "missing"): 5000,
    }


def test_all_real_files_together() -> None:
    imported = read([LM])
    report = run_audit(imported, grade="numeric", score_range=(0.0, 1000.0))
    summary = {r["candidate"]: (r["planned"], r["scored"], r["judge_failed"]) for r in report.summary.to_dicts()}
    assert summary == {
        "Qwen/Qwen3-8B": (32242, 40, 0),
        "gpt-4o-mini": (24, 7, 17),
        "meta-llama/Meta-Llama-3-8B": (609, 609, 0),
        MATH_MODEL: (10000, 10, 0),
    }
    assert len(imported.info) == 7 + 5  # seven samples files, five results files


# --- multiple filters -------------------------------------------------------------------------------


def test_a_task_with_two_filters_keys_cases_by_filter(tmp_path: Path) -> None:
    folder = tmp_path / "org__model"
    folder.mkdir()
    ts = "2025-01-02T03-04-05.000006"
    rows = [
        '{"doc_id": 0, "filter": "strict-match", "metrics": ["exact_match"], "resps": [["4"]], "exact_match": 1.0}',
        '{"doc_id": 0, "filter": "flexible-extract", "metrics": ["exact_match"], "resps": [["4"]], "exact_match": 0.0}',
        '{"doc_id": 1, "filter": "strict-match", "metrics": ["exact_match"], "resps": [[""]], "exact_match": 0.0}',
    ]
    (folder / f"samples_gsm8k_{ts}.jsonl").write_text("\n".join(rows) + "\n")
    results = (
        '{"results": {"gsm8k": {"exact_match,strict-match": 0.5, "exact_match,flexible-extract": 0.0}},'
        ' "n-samples": {"gsm8k": {"original": 3, "effective": 2}}, "config": {"model_args": "pretrained=org/model"}}'
    )
    (folder / f"results_{ts}.json").write_text(results)
    imported = read([folder])
    assert imported.plan.n_units == 6
    assert imported.plan.cases.get_column("case_id").to_list() == [
        "gsm8k/flexible-extract/0",
        "gsm8k/flexible-extract/1",
        "gsm8k/flexible-extract/2",
        "gsm8k/strict-match/0",
        "gsm8k/strict-match/1",
        "gsm8k/strict-match/2",
    ]
    # flexible-extract has 1 row against effective 2
    assert kinds(imported) == {("header_rows_disagree", False): 1}
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "passed", "missing") == {
        "planned": 6,
        "scored": 3,
        "passed": 1,
        "missing": 3,
    }


# --- malformed and partial input ---------------------------------------------------------------------


def copy_run(src: Path, dst: Path, *names: str) -> Path:
    dst.mkdir(parents=True)
    for name in names:
        shutil.copyfile(src / name, dst / name)
    return dst


def test_bad_json_lines_are_refusing_notes_and_other_files_still_read(tmp_path: Path) -> None:
    folder = copy_run(NEGO, tmp_path / "Qwen__Qwen3-8B", BELIEF1.name, f"results_{RUN1}.json")
    broken = folder / BELIEF1.name
    lines = broken.read_bytes().split(b"\n")
    lines[4] = b'{"doc_id": 4, "acc": '  # line 5: invalid JSON
    data = b"\n".join(lines).rstrip(b"\n")
    broken.write_bytes(data[: len(data) - 40])  # line 20 truncated mid-object
    imported = read([folder, TG_SAMPLES])
    unreadable = imported.notes.filter(pl.col("kind") == "unreadable_file")
    assert unreadable.select("source", "line", "refusing").rows() == [(str(broken), 5, True), (str(broken), 20, True)]
    ledger = imported.ledger
    assert ledger.filter(pl.col("source") == str(broken)).height == 18
    assert ledger.filter(pl.col("source") == str(TG_SAMPLES)).height == 24  # the other file is still read
    # 18 rows against n-samples.effective = 20, plus desire and intention without samples files
    disagree = imported.notes.filter(pl.col("kind") == "header_rows_disagree").sort("source")
    assert disagree.get_column("source").to_list() == [str(folder / f"results_{RUN1}.json")] * 2 + [str(broken)]
    assert "holds 18 row(s)" in disagree.get_column("detail")[2]
    with pytest.raises(AuditRefused) as caught:
        run_audit(imported, grade="numeric", score_range=(0.0, 1000.0))
    refusing = caught.value.problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "line").rows() == [("unreadable_file", 5), ("unreadable_file", 20)]


def test_a_truncated_results_file_falls_back_to_the_folder_and_the_rows(tmp_path: Path) -> None:
    folder = copy_run(NEGO, tmp_path / "Qwen__Qwen3-8B", BELIEF1.name)
    text = (NEGO / f"results_{RUN1}.json").read_bytes()
    (folder / f"results_{RUN1}.json").write_bytes(text[:500])
    imported = read([folder / BELIEF1.name])
    assert imported.plan.candidates == ("Qwen/Qwen3-8B",)  # from the folder name Qwen__Qwen3-8B
    assert imported.plan.n_units == 20  # no n-samples: only the doc ids present
    found = kinds(imported)
    assert found == {("unreadable_file", True): 1, ("header_rows_disagree", False): 1}
    unreadable = imported.notes.filter(pl.col("kind") == "unreadable_file").row(0, named=True)
    assert unreadable["source"] == str(folder / f"results_{RUN1}.json")
    assert unreadable["line"] is not None
    assert imported.info[0]["candidate_from"] == "folder name"
    with pytest.raises(AuditRefused):
        run_audit(imported)


def test_a_samples_file_without_results_plans_the_doc_ids_present(tmp_path: Path) -> None:
    folder = copy_run(MATH, tmp_path / "someorg__somemodel", MATH_SAMPLES.name)
    imported = read([folder])
    assert imported.plan.candidates == ("someorg/somemodel",)
    assert kinds(imported) == {("header_rows_disagree", False): 1}
    assert "only the doc ids present (10)" in imported.notes.get_column("detail")[0]
    assert imported.info[0]["results_file"] is None
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "passed", "missing") == {
        "planned": 10,
        "scored": 10,
        "passed": 0,
        "missing": 0,
    }


def test_undecodable_bytes_and_an_unknown_file_name_are_refusing_notes(tmp_path: Path) -> None:
    folder = copy_run(TG, tmp_path / "gpt-4o-mini", TG_SAMPLES.name)
    bad = folder / "samples_other_2025-06-30T19-40-09.461247.jsonl"
    bad.write_bytes(b'{"doc_id": 0, "acc": 1.0}\n\xff\xfe\n')
    stray = tmp_path / "notes.json"
    stray.write_text("{}")
    imported = read([folder, stray])
    unreadable = imported.notes.filter(pl.col("kind") == "unreadable_file").sort("source")
    assert unreadable.select("source", "line").rows() == [(str(bad), 2), (str(stray), None)]
    assert "not UTF-8" in unreadable.get_column("detail")[0]
    assert imported.ledger.filter(pl.col("source") == str(bad)).select("case_id", "line").rows() == [("other/0", 1)]
    assert unreadable.get_column("refusing").all()
    assert imported.ledger.filter(pl.col("source") == str(folder / TG_SAMPLES.name)).height == 24


def test_rows_that_are_not_objects_or_lack_doc_id_are_refusing_notes(tmp_path: Path) -> None:
    folder = tmp_path / "org__m"
    folder.mkdir()
    path = folder / "samples_t_2025-01-01T00-00-00.000001.jsonl"
    path.write_text('[1, 2]\n{"acc": 1.0}\n{"doc_id": "3", "acc": 1.0}\n\n{"doc_id": 4, "acc": 0.0}\n')
    imported = read([path])
    notes = imported.notes.sort("kind", "line")
    assert notes.select("kind", "line", "refusing").rows() == [
        ("header_rows_disagree", None, False),
        ("id_normalised", None, False),
        ("unreadable_file", 1, True),
        ("unreadable_file", 2, True),
    ]
    assert imported.ledger.select("case_id", "line").rows() == [("t/3", 3), ("t/4", 5)]


def test_nothing_readable_refuses_with_an_empty_plan(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    imported = read([empty])
    assert imported.ledger.height == 0
    assert imported.plan.n_units == 0
    assert ("empty_plan", True) in kinds(imported)
    with pytest.raises(AuditRefused):
        run_audit(imported)


def test_a_path_that_does_not_exist_raises(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError):
        read([tmp_path / "nope"])
