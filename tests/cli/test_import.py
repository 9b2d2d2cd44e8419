"""`evalframe import`: an export converted, then audited."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.cli.support import run


def test_import_then_audit_round_trip(tmp_path: Path) -> None:
    from tests.conftest import real

    export = real("inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/log_streaming.eval")
    code, _, _ = run(["import", "inspect", str(export), "--out", str(tmp_path / "imp")])
    assert code == 0
    code, out, _ = run(
        [
            "audit",
            "--plan",
            str(tmp_path / "imp/plan.parquet"),
            "--results",
            str(tmp_path / "imp/ledger.parquet"),
            "--format",
            "json",
        ]
    )
    assert code == 0
    (row,) = json.loads(out)["summary"]
    assert (row["planned"], row["scored"], row["passed"]) == (4, 4, 3)
    # Provenance columns of the ledger still name the original export.
    units = pl.read_parquet(tmp_path / "imp/ledger.parquet")
    assert units.get_column("source").str.contains("log_streaming.eval").all()


def test_import_counts_the_files_read_not_the_paths_given(tmp_path: Path) -> None:
    from tests.conftest import real

    logs = real("inspect_ai/YuehHanChen-ccot_oe_results/logs")  # one folder of 5 Inspect logs
    code, _, err = run(["import", "inspect", str(logs), "--out", str(tmp_path / "inspect")])
    assert code == 0
    assert err == f"imported 5 file(s): 14850 planned units, 50 ledger rows, 1 note(s) → {tmp_path / 'inspect'}\n"
    outputs = real("lm_eval/EleutherAI-lm-evaluation-harness-PR3936/outputs")  # 7 samples + 3 results files
    code, _, err = run(["import", "lm-eval", str(outputs), "--out", str(tmp_path / "lm")])
    assert code == 0
    assert err == f"imported 10 file(s): 32242 planned units, 140 ledger rows, 12 note(s) → {tmp_path / 'lm'}\n"


def test_files_read_include_the_files_an_export_names() -> None:
    from evalframe.importers import every_eval_ever, helm
    from tests.conftest import real

    record = real("every_eval_ever/evaleval-every_eval_ever-PR30/data/ai2_arc/ollama/qwen2.5-0.5b")
    assert [Path(f).name for f in every_eval_ever.read([record]).files] == [
        "75e7b3c4-5d2f-4526-aef0-9ccd88690f5a.json",  # the record given (its folder) ...
        "ai2_arc_ollama_qwen2.5:0.5b_2e4e64ca-5622-42d3-9ef1-0f4e4475cdf7.Format.jsonl",  # ... and the rows it names
    ]
    run_folder = real(
        "helm/evaleval-every_eval_ever/tests/data/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
    )
    assert [Path(f).name for f in helm.read([run_folder]).files] == [
        "per_instance_stats.json",
        "run_spec.json",
        "scenario_state.json",
        "stats.json",
    ]
