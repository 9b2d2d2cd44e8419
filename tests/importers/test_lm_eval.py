"""lm-evaluation-harness importer: real exports (SOURCES.md, lm-eval table) and malformed variants."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalframe import audit
from evalframe.errors import AuditRefused, InputFormatError
from evalframe.importers import Imported
from evalframe.importers._kit import ImportRefused, ImportUnreadable
from evalframe.importers.lm_eval import LEDGER_SCHEMA, UNKNOWN_MODEL, read
from evalframe.report import AuditReport
from evalframe.validate import validate_ledger
from tests.conftest import FIXTURES, REAL

#: The real exports are MIT-licensed but stay in ../shared (CI always lays it beside the repository).
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/data/real is not laid beside the repository")

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
FLOR = LM / "EleutherAI-lm-evaluation-harness-PR3168/results/FLOR-760M"
FLOR_TS = "2025-07-21T14-41-47.889425"
FLOR_RESULTS = FLOR / f"results_FLOR-760M:2025-07-21T1441-16_{FLOR_TS}.json"
FLOR_CA = FLOR / f"samples_eqbench_ca_{FLOR_TS}.jsonl"
FLOR_MODEL = "/gpfs/projects/bsc88/hf-models/FLOR-760M"
ASDIV = LM / "EleutherAI-lm-evaluation-harness-PR2236/results/asdiv_cot/meta-llama__Meta-Llama-3-8B-Instruct"
TRUTHFULQA = (
    LM / "EleutherAI-lm-evaluation-harness-PR3032/results/samples_truthfulqa_gen_2025-05-31T14-30-51.983293.jsonl"
)
NER = LM / "EleutherAI-lm-evaluation-harness-PR3506/african_nlp_benchmarks/google__gemma-2b"
TWO_FILTERS = FIXTURES / "lm_eval" / "two_filters"


def run_audit(imported: Imported, **options: Any) -> AuditReport:
    return audit(imported.plan, imported.results, **options)


def refusal(paths: list[Path], score: str | None = None) -> pl.DataFrame:
    """The refusing notes of an import that must refuse."""
    with pytest.raises(ImportRefused) as caught:
        read(paths, score=score)
    return caught.value.problems.filter(pl.col("refusing"))


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
    assert samples_info["metrics"] == ["acc", "f1", "acc_norm"]  # file order; acc is the preferred default
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
    # a metric that is never a per-row score: one note for the file, not a grader failure per row
    assert kinds(imported) == {("not_a_score", False): 1}
    assert "never a per-row score" in imported.notes.get_column("detail")[0]
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


def test_a_mistyped_metric_refuses_naming_the_metrics_present() -> None:
    refusing = refusal([BIAS_SAMPLES], score="bleu")
    assert refusing.select("kind", "source").rows() == [("unknown_score", str(BIAS_SAMPLES))]
    assert refusing.get_column("detail")[0] == (
        "no metric named 'bleu' in the export (has: acc, acc_norm, f1): "
        "name one with --score <metric>, e.g. --score acc"
    )


# --- negotiationtom: --limit 20, two re-runs, list-valued f1 metrics ------------------------------------


def test_negotiationtom_belief_limit_run_plans_what_it_ran_and_says_it_was_limited() -> None:
    # issue 38: --limit 20 planned the whole task (13812 units, coverage 0.0014) where Inspect plans what a
    # limited run selected. The plan is what the run was set to run: lm-eval's --limit N takes the first N
    # documents, n-samples.effective = 20, so doc ids 0..19; the note names the limit and the task's size.
    imported = read([BELIEF1])
    assert imported.plan.candidates == ("Qwen/Qwen3-8B",)
    assert imported.plan.n_units == 20
    assert set(imported.plan.cases.get_column("case_id")) == {f"negotiationtom_belief/{i}" for i in range(20)}
    # effective 20 = 20 rows: no disagreement; the --limit is said
    assert imported.notes.select("kind", "source", "candidate", "refusing", "detail").rows() == [
        (
            "limited_run",
            str(NEGO / f"results_{RUN1}.json"),
            "Qwen/Qwen3-8B",
            False,
            "task 'negotiationtom_belief': --limit 20: 20 of 13812 documents planned (doc ids 0-19, the first 20, "
            "as lm-eval takes them); the rates describe those 20, not the task",
        )
    ]
    report = run_audit(imported)
    assert counts(report, *FUNNEL) == {
        "planned": 20,
        "attempted": 20,
        "scored": 20,
        "passed": 9,
        "failed": 11,
        "missing": 0,
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
        "planned": 20,
        "attempted": 20,
        "scored": 20,
        "passed": 9,
        "missing": 0,
    }
    flags = report.problems.filter(pl.col("kind") == "retry_after_scored")
    assert flags.height == 20
    assert not flags.get_column("refusing").any()


def test_negotiationtom_intention_scores_exact_match_not_the_f1_lists() -> None:
    imported = read([INTENTION1])
    assert kinds(imported) == {("limited_run", False): 1}
    assert imported.info[0]["metric"] == "exact_match"
    assert imported.info[0]["metrics"] == ["micro_f1", "macro_f1", "exact_match"]
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "passed", "missing") == {
        "planned": 20,
        "scored": 20,
        "passed": 4,
        "missing": 0,
    }


def test_negotiationtom_micro_f1_chosen_is_not_a_score() -> None:
    imported = read([INTENTION1], score="micro_f1")
    assert kinds(imported) == {("not_a_score", False): 1, ("limited_run", False): 1}
    first = imported.notes.filter(pl.col("kind") == "not_a_score").row(0, named=True)
    assert (first["source"], first["candidate"]) == (str(INTENTION1), "Qwen/Qwen3-8B")
    assert first["detail"].startswith(
        "metric 'micro_f1' of task 'negotiationtom_intention' is never a per-row score: each row holds a list"
    )
    report = run_audit(imported)
    assert counts(report, "planned", "attempted", "scored", "not_scored") == {
        "planned": 20,
        "attempted": 20,
        "scored": 0,
        "not_scored": 20,
    }


def test_negotiationtom_folder_plans_every_task_of_the_results_files() -> None:
    imported = read([NEGO])
    assert imported.plan.n_units == 20 + 20 + 20  # n-samples.effective of each task (--limit 20)
    assert sorted(imported.plan.cases.get_column("task").unique().to_list()) == [
        "negotiationtom_belief",
        "negotiationtom_desire",
        "negotiationtom_intention",
    ]
    assert imported.ledger.height == 7 * 20  # seven samples files of 20 rows
    per_run = imported.ledger.group_by("run_id", "attempt").len().sort("run_id", "attempt")
    assert per_run.rows() == [(RUN1, 1, 60), ("2026-07-08T17-52-34.622576", 2, 20), (RUN2, 2, 40), (RUN2, 3, 20)]
    # the 17-52 run wrote only intention; 3 results files x 3 tasks were each limited to 20 docs
    # belief and desire are graded by acc, intention by exact_match: each task is its own rate (tasks are keys),
    # so no rate pools two metrics and no pooled_metrics note is due
    assert kinds(imported) == {
        ("header_rows_disagree", False): 2,
        ("limited_run", False): 9,
    }
    disagree = imported.notes.filter(pl.col("kind") == "header_rows_disagree")
    assert disagree.get_column("source").unique().to_list() == [str(NEGO / "results_2026-07-08T17-52-34.622576.json")]
    report = run_audit(imported)  # retry policy "first": the 16-04 run counts
    assert by_task(report) == {
        ("negotiationtom_belief", "passed"): 9,
        ("negotiationtom_belief", "failed"): 11,
        ("negotiationtom_desire", "passed"): 12,
        ("negotiationtom_desire", "failed"): 8,
        ("negotiationtom_intention", "passed"): 4,
        ("negotiationtom_intention", "failed"): 16,
    }
    assert report.summary.select("task", "candidate", "planned", "scored", "passed").rows() == [
        ("negotiationtom_belief", "Qwen/Qwen3-8B", 20, 20, 9),
        ("negotiationtom_desire", "Qwen/Qwen3-8B", 20, 20, 12),
        ("negotiationtom_intention", "Qwen/Qwen3-8B", 20, 20, 4),
    ]
    results_info = [i for i in imported.info if i["format"] == "lm-eval results"]
    assert [i["n_samples"]["negotiationtom_intention"] for i in results_info] == [
        {"original": 4618, "effective": 20}
    ] * 3
    # the runs' aggregate micro_f1 differ; recorded, never used
    assert [i["aggregates"]["negotiationtom_intention"]["micro_f1,none"] for i in results_info] == [
        0.30188679245283023,
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
        "passed": None,  # no pass or fail for an error magnitude: no count of passes either
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
    report = run_audit(imported)  # two tasks of 5000 effective documents each, one summary row each
    names = ("task", "planned", "scored", "missing", "scored_coverage", "pass_rate_scored")
    assert report.summary.select(names).rows() == [
        ("math_perturbed_full", 5000, 0, 5000, 0.0, None),
        ("math_rephrased_full", 5000, 0, 5000, 0.0, None),
    ]


def test_math_folder_plans_the_task_without_samples_as_missing() -> None:
    report = run_audit(read([MATH]))
    assert by_task(report) == {
        ("math_perturbed_full", "failed"): 10,
        ("math_perturbed_full", "missing"): 4990,
        ("math_rephrased_full", "missing"): 5000,
    }


def test_all_real_files_together_refuse_only_for_truthfulqa_whose_metric_must_be_named() -> None:
    refusing = refusal([LM])
    assert refusing.select("kind", "source").rows() == [("ambiguous_score", str(TRUTHFULQA))]


# --- bullet 1: filters (fixture written for evalframe: 3 docs x 2 filters) -----------------------------


def test_two_filters_and_none_declared_refuse_naming_filter_and_the_filters() -> None:
    # before: 6 units planned, 6 scored / 3 passed for 3 documents
    for score in (None, "exact_match"):
        refusing = refusal([TWO_FILTERS], score=score)
        assert refusing.get_column("kind").to_list() == ["ambiguous_rows"]
        detail = refusing.get_column("detail")[0]
        assert detail == (
            "task 'gsm8k' is graded under 2 filters (flexible-extract, strict-match; lm-eval writes one row per "
            "document for each) and none was declared; name one with --score <metric>,<filter>, "
            "e.g. --score exact_match,flexible-extract"
        )


@pytest.mark.parametrize(("flt", "passed"), [("strict-match", 1), ("flexible-extract", 2)])
def test_a_declared_filter_selects_its_rows(flt: str, passed: int) -> None:
    imported = read([TWO_FILTERS], score=f"exact_match,{flt}")
    assert imported.plan.cases.rows() == [(f"gsm8k/{i}", "gsm8k", flt) for i in range(3)]
    assert imported.plan.candidates == ("example-org/tiny-model",)
    assert imported.ledger.get_column("line").to_list() == ([1, 2, 3] if flt == "strict-match" else [4, 5, 6])
    assert imported.notes.height == 0
    report = run_audit(imported)
    assert counts(report, "planned", "attempted", "scored", "passed", "missing") == {
        "planned": 3,
        "attempted": 3,
        "scored": 3,
        "passed": passed,
        "missing": 0,
    }
    assert report.summary.get_column("pass_rate_scored")[0] == next(
        v for k, v in imported.info[0]["aggregates"].items() if k == f"exact_match,{flt}"
    )


def test_a_filter_that_is_not_in_the_rows_refuses_naming_those_that_are() -> None:
    refusing = refusal([TWO_FILTERS], score="exact_match,strict")
    assert refusing.select("kind", "detail").rows() == [
        (
            "unknown_score",
            "no filter named 'strict' in the export (has: flexible-extract, strict-match): name one with "
            "--score exact_match,<filter>, e.g. --score exact_match,flexible-extract",
        )
    ]


@needs_real
def test_a_task_with_one_named_filter_needs_no_declaration() -> None:
    imported = read([NER])
    assert imported.plan.cases.get_column("filter").unique().to_list() == ["flexible-extract"]
    assert imported.info[0]["filter"] == "flexible-extract"
    assert read([NER], score="f1,flexible-extract").plan.n_units == 185
    assert refusal([NER], score="f1,none").get_column("kind").to_list() == ["unknown_score"]


# --- bullet 2: the model comes from the content, never from the folder ---------------------------------


@needs_real
def test_flor_model_is_the_pretrained_path_as_lm_eval_wrote_it() -> None:
    imported = read([FLOR])
    assert imported.plan.candidates == (FLOR_MODEL,)
    assert {i["candidate_from"] for i in imported.info} == {"config.model_args.pretrained"}


@needs_real
def test_the_candidate_does_not_change_with_the_folder_name_or_how_the_path_is_typed(tmp_path: Path) -> None:
    renamed = copy_run(NEGO, tmp_path / "someorg__othermodel", BELIEF1.name, f"results_{RUN1}.json")
    (tmp_path / "link").symlink_to(renamed)
    typed = [renamed, tmp_path / "link", tmp_path / "link" / ".." / "someorg__othermodel" / BELIEF1.name]
    for path in typed:
        assert read([path]).plan.candidates == ("Qwen/Qwen3-8B",), path


@needs_real
def test_samples_without_a_results_file_are_the_documented_unknown_model_with_a_note() -> None:
    # before: the candidate was the folder name "results"
    imported = read([TRUTHFULQA], score="bleu_acc")
    assert imported.plan.candidates == (UNKNOWN_MODEL,) == ("unknown-model",)
    assert imported.notes.select("kind", "source", "refusing").rows() == [("plan_from_rows", str(TRUTHFULQA), False)]
    assert "the candidate is 'unknown-model'" in imported.notes.get_column("detail")[0]
    assert imported.info[0]["candidate_from"] == "no results file"
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "passed") == {"planned": 20, "scored": 20, "passed": 10}


# --- bullet 3: <stem>_<date>.json results files and unparseable answers ---------------------------------


@needs_real
def test_flor_results_file_named_stem_date_is_linked_by_its_timestamp() -> None:
    imported = read([FLOR])
    report = run_audit(imported)
    # --limit 10 of 167 (eqbench_ca) and of 168 (eqbench_es) documents: one row per task, never pooled
    assert report.summary.select("task", *FUNNEL).rows() == [
        ("eqbench_ca", 10, 10, 0, 0, 0, 0, 10, 0, 0),
        ("eqbench_es", 10, 10, 0, 0, 0, 0, 10, 0, 0),
    ]
    samples_info = [i for i in imported.info if i["format"] == "lm-eval samples"]
    assert {i["results_file"] for i in samples_info} == {str(FLOR_RESULTS)}
    alone = read([FLOR_CA])  # the samples file alone still finds its results file
    assert alone.plan.n_units == 10


@needs_real
def test_flor_eqbench_zeros_of_unparseable_answers_are_grader_failures() -> None:
    imported = read([FLOR])
    assert kinds(imported) == {("not_a_score", False): 20, ("limited_run", False): 2}
    unparsed = imported.notes.filter(pl.col("kind") == "not_a_score").sort("source", "line")
    assert unparsed.get_column("line").to_list() == list(range(1, 11)) * 2
    assert unparsed.get_column("detail")[0] == (
        "eqbench = 0 on a row whose percent_parseable is 0: lm-eval could not parse the answer, "
        "so the value is not a judgment; read as a grader failure"
    )
    assert imported.ledger.get_column("score_status").unique().to_list() == ["judge_error"]
    # percent_parseable itself, named, is a real value: 0 parseable answers
    named = read([FLOR], score="percent_parseable")
    assert named.ledger.get_column("score").to_list() == [0.0] * 20


# --- bullet 4: --limit runs say how many docs they ran ------------------------------------------------


@needs_real
def test_asdiv_limit_runs_plan_50_and_each_results_file_says_limited_to_50_of_2305() -> None:
    imported = read([ASDIV])
    limited = imported.notes.filter(pl.col("kind") == "limited_run")
    assert limited.get_column("source").to_list() == [
        str(ASDIV / "results_2024-08-21T03-40-10.802679.json"),
        str(ASDIV / "results_2024-08-21T03-41-15.831724.json"),
    ]
    assert all("--limit 50: 50 of 2305 documents planned" in d for d in limited.get_column("detail").to_list())
    report = run_audit(imported)
    assert counts(report, "planned", "attempted", "scored", "passed", "missing") == {
        "planned": 50,
        "attempted": 50,
        "scored": 50,
        "passed": 46,
        "missing": 0,
    }
    assert imported.ledger.group_by("attempt").len().sort("attempt").rows() == [(1, 50), (2, 50)]


@needs_real
@pytest.mark.parametrize("path", [BIAS, TG], ids=["609-of-609", "limit-200-on-24"])
def test_a_run_that_covered_its_task_is_not_limited(path: Path) -> None:
    assert ("limited_run", False) not in kinds(read([path]))


# --- bullet 5: score choice and what is not a score -----------------------------------------------------


@needs_real
def test_truthfulqa_has_several_per_row_scores_and_none_declared_refuses() -> None:
    refusing = refusal([TRUTHFULQA])
    assert refusing.get_column("kind").to_list() == ["ambiguous_score"]
    assert refusing.get_column("detail")[0].startswith("12 metrics in the export (bleu_acc, bleu_diff, bleu_max, ")
    assert counts(run_audit(read([TRUTHFULQA], score="rougeL_acc")), "scored", "passed") == {"scored": 20, "passed": 9}


@needs_real
def test_masakhaner_f1_pairs_are_not_a_grade_all_rows_not_scored() -> None:
    imported = read([NER])
    assert kinds(imported) == {("not_a_score", False): 1}
    assert imported.ledger.get_column("score_status").unique().to_list() == ["not_scored"]
    report = run_audit(imported)
    assert counts(report, "planned", "attempted", "completed", "scored", "not_scored", "judge_failed") == {
        "planned": 185,
        "attempted": 185,
        "completed": 185,
        "scored": 0,
        "not_scored": 185,
        "judge_failed": 0,
    }


def test_a_value_that_is_not_a_score_on_a_scoring_metric_is_a_grader_failure(tmp_path: Path) -> None:
    path = tmp_path / "samples_t_2025-01-01T00-00-00.000001.jsonl"
    path.write_text('{"doc_id": 0, "acc": 1.0}\n{"doc_id": 1, "acc": "N/A"}\n{"doc_id": 2, "acc": null}\n')
    imported = read([path])
    assert imported.ledger.select("case_id", "score_status", "score").rows() == [
        ("t/0", "scored", 1.0),
        ("t/1", "judge_error", None),
        ("t/2", "judge_error", None),
    ]
    assert imported.notes.select("kind", "line").sort("kind", "line", nulls_last=True).rows() == [
        ("not_a_score", 2),
        ("not_a_score", 3),
        ("plan_from_rows", None),
    ]


# --- malformed and partial input ---------------------------------------------------------------------


def copy_run(src: Path, dst: Path, *names: str) -> Path:
    dst.mkdir(parents=True)
    for name in names:
        shutil.copyfile(src / name, dst / name)
    return dst


def refused(paths: list[Path]) -> pl.DataFrame:
    """Every note of an import that must refuse."""
    with pytest.raises(ImportRefused) as caught:
        read(paths)
    return caught.value.problems


def unreadable(paths: list[Path]) -> pl.DataFrame:
    """Every note of an import that must fail as unreadable (an input error), with the first place on the error."""
    with pytest.raises(ImportUnreadable) as caught:
        read(paths)
    first = caught.value.notes.filter(pl.col("kind") == "unreadable_file").sort("source", "line").row(0, named=True)
    assert (caught.value.path, caught.value.line, caught.value.detail) == (
        first["source"],
        first["line"],
        first["detail"],
    )
    return caught.value.notes


@needs_real
def test_bad_json_lines_are_refusing_notes_and_other_files_still_read(tmp_path: Path) -> None:
    folder = copy_run(NEGO, tmp_path / "Qwen__Qwen3-8B", BELIEF1.name, f"results_{RUN1}.json")
    broken = folder / BELIEF1.name
    lines = broken.read_bytes().split(b"\n")
    lines[4] = b'{"doc_id": 4, "acc": '  # line 5: invalid JSON
    data = b"\n".join(lines).rstrip(b"\n")
    broken.write_bytes(data[: len(data) - 40])  # line 20 truncated mid-object
    problems = unreadable([folder, TG_SAMPLES])
    refusing = problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "source", "line").rows() == [
        ("unreadable_file", str(broken), 5),
        ("unreadable_file", str(broken), 20),
    ]
    # 18 rows against n-samples.effective = 20, plus desire and intention without samples files
    disagree = problems.filter(pl.col("kind") == "header_rows_disagree").sort("source")
    assert disagree.get_column("source").to_list() == [str(folder / f"results_{RUN1}.json")] * 2 + [str(broken)]
    assert "holds 18 row(s)" in disagree.get_column("detail")[2]
    assert problems.filter(pl.col("kind") == "nonfinite_score").height == 17  # the other file is still read


@needs_real
def test_a_truncated_results_file_refuses(tmp_path: Path) -> None:
    folder = copy_run(NEGO, tmp_path / "Qwen__Qwen3-8B", BELIEF1.name)
    text = (NEGO / f"results_{RUN1}.json").read_bytes()
    (folder / f"results_{RUN1}.json").write_bytes(text[:500])
    problems = unreadable([folder / BELIEF1.name])
    refusing = problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "source").rows() == [("unreadable_file", str(folder / f"results_{RUN1}.json"))]
    assert refusing.get_column("line")[0] is not None
    # the folder name is never the model: an unreadable results file records none
    assert set(problems.filter(pl.col("kind") == "plan_from_rows").get_column("candidate").to_list()) == {UNKNOWN_MODEL}


@needs_real
def test_a_samples_file_without_results_plans_the_doc_ids_present(tmp_path: Path) -> None:
    folder = copy_run(MATH, tmp_path / "someorg__somemodel", MATH_SAMPLES.name)
    imported = read([folder])
    assert imported.plan.candidates == (UNKNOWN_MODEL,)  # before: "someorg/somemodel", from the folder
    assert kinds(imported) == {("plan_from_rows", False): 1}
    assert "the plan is the 10 doc ids present" in imported.notes.get_column("detail")[0]
    assert imported.info[0]["results_file"] is None
    report = run_audit(imported)
    assert counts(report, "planned", "scored", "passed", "missing") == {
        "planned": 10,
        "scored": 10,
        "passed": 0,
        "missing": 0,
    }


@needs_real
def test_undecodable_bytes_and_an_unknown_file_name_are_refusing_notes(tmp_path: Path) -> None:
    folder = copy_run(TG, tmp_path / "gpt-4o-mini", TG_SAMPLES.name)
    bad = folder / "samples_other_2025-06-30T19-40-09.461247.jsonl"
    bad.write_bytes(b'{"doc_id": 0, "acc": 1.0}\n\xff\xfe\n')
    stray = tmp_path / "notes.json"
    stray.write_text("{}")
    places = unreadable([folder, stray]).filter(pl.col("kind") == "unreadable_file").sort("source")
    assert places.select("source", "line", "refusing").rows() == [(str(bad), 2, True), (str(stray), None, True)]
    assert places.get_column("detail")[0].startswith("not UTF-8")


def test_rows_that_are_not_objects_or_lack_doc_id_are_refusing_notes(tmp_path: Path) -> None:
    path = tmp_path / "samples_t_2025-01-01T00-00-00.000001.jsonl"
    path.write_text('[1, 2]\n{"acc": 1.0}\n{"doc_id": "3", "acc": 1.0}\n\n{"doc_id": 4, "acc": 0.0}\n')
    notes = unreadable([path]).sort("kind", "line", nulls_last=False)
    assert notes.select("kind", "line", "refusing").rows() == [
        ("id_normalised", None, False),
        ("plan_from_rows", None, False),
        ("unreadable_file", 1, True),
        ("unreadable_file", 2, True),
    ]


def test_a_folder_with_no_lm_eval_file_refuses_no_export(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("nothing here")
    refusing = refused([empty]).filter(pl.col("refusing"))
    assert refusing.select("kind", "source").rows() == [("no_export", str(empty))]


def test_a_path_that_does_not_exist_raises(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError):
        read([tmp_path / "nope"])


# --- issue 38: the plan is what the run was set to run; runs whose settings differ are other candidates ------


def write_run(
    folder: Path,
    ts: str,
    doc_ids: list[int],
    *,
    original: int = 12,
    effective: int | None = None,
    limit: float | None = None,
    model: str = "org/m",
    n_shot: int = 0,
    seed: int = 0,
) -> None:
    """One lm-eval run of task ``t`` (results + samples) in ``folder``, one exact_match row per doc id (all 1)."""
    folder.mkdir(parents=True, exist_ok=True)
    results = {
        "results": {"t": {"alias": "t", "exact_match,none": 1.0}},
        "n-samples": {"t": {"original": original, "effective": original if effective is None else effective}},
        "n-shot": {"t": n_shot},
        "config": {"model": "hf", "model_args": f"pretrained={model}", "limit": limit, "random_seed": seed},
    }
    (folder / f"results_{ts}.json").write_text(json.dumps(results))
    row = {"filter": "none", "metrics": ["exact_match"], "exact_match": 1.0, "resps": [["4"]]}
    lines = [json.dumps({"doc_id": i, **row}) for i in doc_ids]
    (folder / f"samples_t_{ts}.jsonl").write_text("\n".join(lines) + "\n")


TS1, TS2 = "2025-01-01T00-00-00.000001", "2025-01-02T00-00-00.000002"


def test_a_limit_run_plans_the_first_effective_documents_and_names_the_limit(tmp_path: Path) -> None:
    # lm-eval's --limit 3 runs documents 0, 1, 2 (n-samples.effective 3 of original 12)
    write_run(tmp_path, TS1, [0, 1], effective=3, limit=3.0)
    imported = read([tmp_path])
    assert sorted(imported.plan.cases.get_column("case_id").to_list()) == ["t/0", "t/1", "t/2"]
    assert imported.notes.sort("kind", descending=True).select("kind", "candidate", "detail").rows() == [
        (
            "limited_run",
            "org/m",
            "task 't': --limit 3: 3 of 12 documents planned (doc ids 0-2, the first 3, as lm-eval takes them); "
            "the rates describe those 3, not the task",
        ),
        (
            "header_rows_disagree",
            "org/m",
            "results file says 3 document(s) of task 't' were run (n-samples.effective); the samples file "
            "holds 2 row(s) for filter 'none'",
        ),
    ]
    # the document the run was set to run and wrote no row for is missing; the other 9 were never planned
    assert counts(run_audit(imported), "planned", "scored", "missing") == {"planned": 3, "scored": 2, "missing": 1}


def test_a_fractional_limit_is_named_as_written(tmp_path: Path) -> None:
    # --limit 0.25 of 12 documents: lm-eval runs ceil(12 * 0.25) = 3, recorded as effective 3
    write_run(tmp_path, TS1, [0, 1, 2], effective=3, limit=0.25)
    [detail] = read([tmp_path]).notes.filter(pl.col("kind") == "limited_run").get_column("detail").to_list()
    assert detail.startswith("task 't': --limit 0.25: 3 of 12 documents planned (doc ids 0-2")


def test_a_row_outside_the_limited_plan_is_an_unknown_case(tmp_path: Path) -> None:
    # doc 7 cannot come from a run that took the first 3 documents: an unknown unit, refused as anywhere else
    write_run(tmp_path, TS1, [0, 7], effective=3, limit=3.0)
    imported = read([tmp_path])
    with pytest.raises(AuditRefused) as exc:
        run_audit(imported)
    assert set(exc.value.problems.filter(pl.col("refusing")).get_column("kind")) == {"unknown_case"}


def test_a_samples_style_run_without_a_limit_plans_the_whole_task(tmp_path: Path) -> None:
    # lm-eval's --samples picks doc ids itself and leaves the limit unset, so n-samples.effective = original:
    # the results file does not record which documents were picked, so the run's plan is the whole task
    write_run(tmp_path, TS1, [5, 9])
    imported = read([tmp_path])
    assert imported.plan.n_units == 12
    assert "limited_run" not in set(imported.notes.get_column("kind"))
    assert counts(run_audit(imported), "planned", "scored", "missing") == {"planned": 12, "scored": 2, "missing": 10}


def test_runs_whose_settings_differ_are_different_candidates(tmp_path: Path) -> None:
    write_run(tmp_path, TS1, [0, 1, 2], n_shot=0)
    write_run(tmp_path, TS2, [0, 1, 2], n_shot=5)
    imported = read([tmp_path])
    assert imported.plan.candidates == ("org/m [num_fewshot=0]", "org/m [num_fewshot=5]")
    assert imported.ledger.get_column("attempt").to_list() == [1] * 6  # never retries of one another
    differ = imported.notes.filter(pl.col("kind") == "settings_differ").sort("candidate")
    assert differ.get_column("candidate").to_list() == ["org/m [num_fewshot=0]", "org/m [num_fewshot=5]"]
    assert differ.get_column("detail")[0] == (
        "runs of org/m (t) recorded different settings, read as 2 candidates, not as retries of one another: "
        f"num_fewshot = 0 in results_{TS1}.json; 5 in results_{TS2}.json"
    )
    report = run_audit(imported)
    assert report.summary.select("candidate", "planned", "scored").rows() == [
        ("org/m [num_fewshot=0]", 12, 3),
        ("org/m [num_fewshot=5]", 12, 3),
    ]


def test_runs_whose_settings_agree_stay_attempts_even_with_another_limit(tmp_path: Path) -> None:
    # --limit chooses which documents run, not what each one measures: 0..1 then 0..3 are attempts of docs 0, 1
    write_run(tmp_path, TS1, [0, 1], effective=2, limit=2.0)
    write_run(tmp_path, TS2, [0, 1, 2, 3], effective=4, limit=4.0)
    imported = read([tmp_path])
    assert imported.plan.candidates == ("org/m",)
    assert imported.plan.n_units == 4  # the union of what the runs were set to run
    assert "settings_differ" not in set(imported.notes.get_column("kind"))
    assert imported.ledger.group_by("attempt").len().sort("attempt").rows() == [(1, 4), (2, 2)]


def test_a_setting_one_run_does_not_record_is_unknown_not_equal(tmp_path: Path) -> None:
    write_run(tmp_path, TS1, [0], seed=1)
    write_run(tmp_path, TS2, [0], seed=1)
    data = json.loads((tmp_path / f"results_{TS2}.json").read_text())
    del data["n-shot"]
    (tmp_path / f"results_{TS2}.json").write_text(json.dumps(data))
    assert read([tmp_path]).plan.candidates == ("org/m [num_fewshot=0]", "org/m [num_fewshot=unknown]")
