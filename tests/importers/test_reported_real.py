"""Every real export that records its own headline: the reconciliation's points sum to its gap (issue 43).

The headline values are read back from each file here (Inspect's ``results.scores`` in the log header)
and compared with what the importer recorded; the decomposition must sum to ``reported −
pass_rate_planned`` within 1e-9 for every one.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

import pytest
import zstandard

import evalframe
from evalframe.errors import AuditRefused, InputFormatError
from evalframe.funnel.reported import POINTS_COLUMNS, reconciliation
from evalframe.importers import evalscope, every_eval_ever, helm, inspect_ai, lm_eval, openai_evals
from evalframe.importers._kit import ImportRefused, ImportUnreadable
from tests.importers.test_every_real_export import ABSENT, COLLECTIONS, export_units

#: Skips when ../shared is absent (see the root conftest.py).
HANDLES_ABSENT_SHARED = True

#: The zip compression method number of zstd (APPNOTE.TXT 4.4.5).
ZSTD = 93
#: The formats whose importer records the export's headline, by folder of ../shared/data/real.
RECORDING = {
    "inspect_ai": inspect_ai.read,
    "lm_eval": lm_eval.read,
    "every_eval_ever": every_eval_ever.read,
    "helm": helm.read,
    "evalscope": evalscope.read,
    "openai_evals": openai_evals.read,
}


#: The exports reconciled: those whose headline file lists the metric read (Inspect: an accuracy or mean),
#: whose audit is not refused and holds a scored unit (each checked by opening the file; the others record
#: no such metric, are refused, or have no scored unit or no pass threshold).
RECONCILED = {
    "real": [
        "evalscope: gsm8k_main.jsonl",
        "evalscope: gsm8k_main.jsonl",
        "evalscope: ifeval_default.jsonl",
        "evalscope: ifeval_default.jsonl",
        "every_eval_ever: 0479dd23-e008-47f5-a790-15e7cbb08fc7.json",
        "every_eval_ever: 5917cc37-8805-4453-bf5f-13411ea66ccf.json",
        "every_eval_ever: 75e7b3c4-5d2f-4526-aef0-9ccd88690f5a.json",
        "every_eval_ever: f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json",
        "helm: commonsense-dataset=hellaswag,method=multiple_choice_joint,model=eleutherai_pythia-1b-v0",
        "helm: mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2",
        "helm: narrative_qa-model=openai_gpt2",
        "inspect_ai: 2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
        "inspect_ai: 2025-05-12T20-28-13-04-00_popularity.json",
        "inspect_ai: 2025-05-12T20-28-26-04-00_security-guide.json",
        "inspect_ai: 2025-09-12T11-41-56-04-00_popularity_HdSVrmTDEge636qZ2op64f.eval",
        "inspect_ai: 2025-09-23T08-09-58-04-00_popularity_DN2wbX2ZvACsBpjwptzBRo.eval",
        "inspect_ai: 2025-09-23T08-09-58-04-00_security-guide_LuxZJVwvymC3S3SyoJczxB.eval",
        "inspect_ai: 2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval",
        "inspect_ai: data_arc_qwen.json",
        "inspect_ai: data_arc_sonnet.json",
        "inspect_ai: data_intercode_ctf_local_path.json",
        "inspect_ai: data_pubmedqa_gpt4o_mini.json",
        "inspect_ai: log_streaming.eval",
        "inspect_ai: small.eval",
        "lm_eval: samples_asdiv_2024-08-21T03-40-10.802679.jsonl",
        "lm_eval: samples_asdiv_2024-08-21T03-41-15.831724.jsonl",
        "lm_eval: samples_bias_classification_2024-06-17T15-44-37.867068.json",
        "lm_eval: samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",
        "lm_eval: samples_negotiationtom_belief_2026-07-08T16-04-34.219874.jsonl",
        "lm_eval: samples_negotiationtom_belief_2026-07-08T18-15-33.115417.jsonl",
        "lm_eval: samples_negotiationtom_desire_2026-07-08T16-04-34.219874.jsonl",
        "lm_eval: samples_negotiationtom_desire_2026-07-08T18-15-33.115417.jsonl",
        "lm_eval: samples_negotiationtom_intention_2026-07-08T16-04-34.219874.jsonl",
        "lm_eval: samples_negotiationtom_intention_2026-07-08T17-52-34.622576.jsonl",
        "lm_eval: samples_negotiationtom_intention_2026-07-08T18-15-33.115417.jsonl",
        "lm_eval: samples_stereotype_classification_2024-06-17T16-12-47.023639.json",
    ],
    "real2": [
        "evalscope: gpqa_diamond_default.jsonl",
        "evalscope: gpqa_diamond_default.jsonl",
        "evalscope: gsm8k_main.jsonl",
        "evalscope: gsm8k_main.jsonl",
        "evalscope: gsm8k_main.jsonl",
        "evalscope: humaneval_openai_humaneval.jsonl",
        "evalscope: humaneval_openai_humaneval.jsonl",
        "evalscope: ifeval_default.jsonl",
        "evalscope: ifeval_default.jsonl",
        "evalscope: iquiz_EQ.jsonl",
        "evalscope: iquiz_EQ.jsonl",
        "evalscope: iquiz_IQ.jsonl",
        "evalscope: iquiz_IQ.jsonl",
        "every_eval_ever: 497ca8f5-8e80-436b-9abd-297501f18497.json",
        "helm: bbq:subject=all,method=multiple_choice_joint,model=meta_llama-3-8b",
        "helm: bbq:subject=all,method=multiple_choice_joint,model=meta_llama-3-8b",
        "helm: bbq:subject=all,method=multiple_choice_joint,model=openai_gpt-4-turbo-2024-04-09",
        "inspect_ai: 2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval",
        "inspect_ai: 2025-09-15T15-04-34-04-00_popularity_J5EskSJVsBD9iRd47twk8x.eval",
        "inspect_ai: 2025-09-15T15-04-34-04-00_popularity_jKN69eAYYpZFAZhRgMAztp.eval",
        "inspect_ai: 2025-09-15T15-06-47-04-00_popularity_A2Ld8PcXe79grUc5trBXEb.eval",
        "inspect_ai: 2025-09-15T15-07-04-04-00_popularity_CzDPvkooKpp4d24wMPkx5d.eval",
        "inspect_ai: 2025-09-15T15-07-21-04-00_popularity_TrR56PVX4fHPUViCDMPg8g.eval",
        "inspect_ai: 2026-02-20T05-22-33+00-00_starsim-benchmark_24AbBSr25iP6DbfTNwbAUU.eval",
        "inspect_ai: 2026-02-20T05-28-38+00-00_starsim-benchmark_ZLCP7ftbVUCYkyJGemYV6a.eval",
        "inspect_ai: 2026-02-25T19-20-10+00-00_starsim-benchmark_hBH4VGrPv22VuJgQXhNSJt.eval",
        "inspect_ai: 2026-02-25T19-22-25+00-00_starsim-benchmark_mPrWitKNLFZeL9WGpUJ57s.eval",
        "inspect_ai: baseline.eval",
        "inspect_ai: gVisor-human.eval",
        "inspect_ai: kube_eval_MT=PrometheusSetup_ST=K8sNetworkVulnerability_protocol=tm_mode=attack.eval",
        "inspect_ai: log_message_deduplication.eval",
        "inspect_ai: mmlu-no-summary-choices.eval",
        "inspect_ai: test_bash.eval",
        "lm_eval: samples_mmlu_pro_plus_chemistry_2025-10-14T14-44-39.372006.jsonl",
        "lm_eval: samples_mmlu_pro_plus_chemistry_2025-10-14T15-11-56.507865.jsonl",
        "lm_eval: samples_mmlu_pro_plus_health_2025-10-14T14-44-39.372006.jsonl",
        "lm_eval: samples_mmlu_pro_plus_health_2025-10-14T15-11-56.507865.jsonl",
        "lm_eval: samples_mmlu_pro_plus_psychology_2025-10-14T14-44-39.372006.jsonl",
        "lm_eval: samples_mmlu_pro_plus_psychology_2025-10-14T15-11-56.507865.jsonl",
        "openai_evals: 230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl",
    ],
}


def inspect_header(path: Path) -> dict[str, Any]:
    """The log's header as the file holds it (``header.json`` of an ``.eval`` archive, else the JSON log)."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            if "header.json" not in archive.namelist():
                return {}
            info = archive.getinfo("header.json")
            if info.compress_type != ZSTD:
                return dict(json.loads(archive.read(info)))
            with path.open("rb") as raw:  # zipfile cannot inflate zstd: read the member's bytes past its local header
                raw.seek(info.header_offset + 26)
                name_length, extra_length = int.from_bytes(raw.read(2), "little"), int.from_bytes(raw.read(2), "little")
                raw.seek(name_length + extra_length, 1)
                data = zstandard.ZstdDecompressor().decompress(raw.read(info.compress_size), info.file_size)
            return dict(json.loads(data))
    return dict(json.loads(path.read_text()))


def file_headlines(folder: str, path: Path) -> set[tuple[str, float]]:
    """(metric, value) the export's own headline file lists.

    Inspect: every accuracy / mean metric of the header's ``results.scores``. lm-eval: every
    ``"<metric>,<filter>"`` number of every task of the results files in the samples file's folder.
    HELM: every unperturbed stat mean of the run folder's ``stats.json``, named ``"<stat> (<split>)"``.
    EvalScope: every subset score of every metric of the reports of the review's model.
    OpenAI Evals: every number of the log's ``final_report`` lines.
    every_eval_ever: each ``evaluation_results`` entry's ``score_details.score`` by its ``evaluation_name``.
    """
    if folder == "lm_eval":
        return {
            (key, float(value))
            for results in path.parent.glob("results_*.json")
            for entry in (json.loads(results.read_text()).get("results") or {}).values()
            for key, value in entry.items()
            if "," in key and isinstance(value, int | float) and not isinstance(value, bool)
        }
    if folder == "helm":
        stats = path / "stats.json"
        entries = json.loads(stats.read_text()) if stats.is_file() else []
        return {
            (f"{e['name']['name']} ({e['name'].get('split')})", float(e["mean"]))
            for e in entries
            if isinstance(e.get("mean"), int | float) and not e["name"].get("perturbation")
        }
    if folder == "evalscope":
        reports = path.parent.parent.parent / "reports" / path.parent.name
        return {
            (str(metric["name"]), float(part["score"]))
            for report in reports.glob("*.json")
            for metric in json.loads(report.read_text()).get("metrics") or []
            for category in metric.get("categories") or []
            for part in category.get("subsets") or []
            if isinstance(part.get("score"), int | float)
        }
    if folder == "openai_evals":
        lines = path.read_text().splitlines()
        reports = [json.loads(line)["final_report"] for line in lines if '"final_report"' in line]
        return {(k, float(v)) for r in reports for k, v in r.items() if isinstance(v, int | float)}
    if folder == "every_eval_ever":
        results = json.loads(path.read_text()).get("evaluation_results") or []
        return {
            (str(r.get("evaluation_name")), float(r["score_details"]["score"]))
            for r in results
            if isinstance((r.get("score_details") or {}).get("score"), int | float)
        }
    scores = (inspect_header(path).get("results") or {}).get("scores") or []
    return {
        (name, float(metric["value"]))
        for entry in scores
        for name, metric in (entry.get("metrics") or {}).items()
        if name in ("accuracy", "mean") and isinstance(metric.get("value"), int | float)
    }


@pytest.mark.parametrize("collection", sorted(COLLECTIONS))
def test_every_recorded_headline_decomposes_exactly(collection: str) -> None:
    root = COLLECTIONS[collection]
    if not root.is_dir():
        pytest.skip(ABSENT)
    reconciled: list[str] = []
    for folder, relative in export_units(collection):
        if folder not in RECORDING:
            continue
        path = root / relative
        try:
            imported = RECORDING[folder]([path])
            report = evalframe.audit(imported.plan, imported.results)
        except (ImportRefused, ImportUnreadable, InputFormatError, AuditRefused):
            continue  # refused exports have no rate to reconcile
        table = reconciliation(report.summary, report.meta["exports"], attempts=report.attempts)
        for row in table.iter_rows(named=True):
            assert (row["metric"], row["reported"]) in file_headlines(folder, path), relative
            if row["gap"] is None:
                assert row["scored"] == 0 or row["passed"] is None, relative
                continue
            assert row["gap"] == pytest.approx(row["reported"] - row["pass_rate_planned"], abs=1e-12)
            assert abs(math.fsum(row[c] for c in POINTS_COLUMNS) - row["gap"]) <= 1e-9, relative
            reconciled.append(f"{folder}: {path.name}")
    # The logs whose header lists an accuracy or mean and whose samples hold a scored grade.
    assert sorted(reconciled) == sorted(RECONCILED[collection])
