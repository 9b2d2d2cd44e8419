"""`evalframe import`: an export converted, then audited."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe.errors import InputFormatError
from evalframe.report import render_json
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
    # 2 header_rows_disagree + 9 limited_run (3 results files x 3 tasks); each task has one metric, so no
    # pooled_metrics note (acc and exact_match are in different tasks)
    assert err == f"imported 10 file(s): 60 planned units, 140 ledger rows, 11 note(s) → {tmp_path / 'lm'}\n"


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


def _audit_json(args: list[str]) -> dict[str, object]:
    code, out, err = run(["audit", *args, "--format", "json"])
    assert code == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc


def test_an_audit_of_an_import_folder_carries_the_imports_notes_and_exports(tmp_path: Path) -> None:
    # Five Inspect logs, one of whose headers disagrees with its rows (completed_samples 10, 9 rows without an
    # error): the audit of the import's plan and ledger says so, as the audit --from the logs does.
    from tests.conftest import real

    logs = real("inspect_ai/YuehHanChen-ccot_oe_results/logs")
    assert run(["import", "inspect", str(logs), "--out", str(tmp_path / "imp")])[0] == 0
    assert sorted(p.name for p in (tmp_path / "imp").iterdir()) == [
        "evalframe-manifest.json",
        "exports.json",
        "ledger.parquet",
        "notes.parquet",
        "plan.parquet",
    ]
    files = ["--plan", str(tmp_path / "imp/plan.parquet"), "--results", str(tmp_path / "imp/ledger.parquet")]
    audited, direct = _audit_json(files), _audit_json(["--from", "inspect", str(logs)])
    assert audited["problems_by_kind"] == direct["problems_by_kind"] == {"header_rows_disagree": 1, "missing_unit": 5}
    assert audited["summary"] == direct["summary"]
    meta = audited["meta"]
    assert isinstance(meta, dict)
    assert (meta["imported_from"], len(meta["exports"]), meta["import_folder"]) == ("inspect", 5, str(tmp_path / "imp"))
    # The Python route is the same audit: ef.audit reads the import's notes and exports itself.
    report = ef.audit(ef.Plan.from_file(tmp_path / "imp/plan.parquet"), str(tmp_path / "imp/ledger.parquet"))
    assert json.loads(render_json(report.view())) == audited


def test_notes_are_read_back_only_from_the_import_that_wrote_them(tmp_path: Path) -> None:
    from tests.conftest import real

    logs = real("inspect_ai/YuehHanChen-ccot_oe_results/logs")
    assert run(["import", "inspect", str(logs), "--out", str(tmp_path / "imp")])[0] == 0
    # The same plan with a copy of the ledger elsewhere: not the import's ledger, so no notes of the import.
    (tmp_path / "elsewhere").mkdir()
    copy = tmp_path / "elsewhere/ledger.parquet"
    copy.write_bytes((tmp_path / "imp/ledger.parquet").read_bytes())
    other = _audit_json(["--plan", str(tmp_path / "imp/plan.parquet"), "--results", str(copy)])
    assert other["problems_by_kind"] == {"missing_unit": 5}
    assert "imported_from" not in other["meta"]  # type: ignore[operator]
    # notes.parquet changed since the import wrote it: the manifest no longer vouches for it, and the audit says
    # so (what the notes flagged, a cancelled run say, is not lost without a word); the same when it is deleted.
    pl.DataFrame({"kind": ["run_status"]}).write_parquet(tmp_path / "imp/notes.parquet")
    files = ["--plan", str(tmp_path / "imp/plan.parquet"), "--results", str(tmp_path / "imp/ledger.parquet")]
    altered = _audit_json(files)
    assert altered["problems_by_kind"] == {"import_altered": 1, "missing_unit": 5}
    note = next(n for n in altered["notes"] if n["kind"] == "import_altered")  # type: ignore[union-attr]
    assert note["texts"] == [
        "notes.parquet changed or missing since evalframe import wrote them: its notes are not read"
    ]
    (tmp_path / "imp/notes.parquet").unlink()
    assert _audit_json(files)["problems_by_kind"] == {"import_altered": 1, "missing_unit": 5}


def test_an_import_folder_is_recognised_however_its_paths_are_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plan absolute and the ledger relative, a '..' in a path, or the folder through a link: the same folder,
    # so the same notes (a cancelled run's run_status among them); before, each spelling lost them silently.
    export = "data/fixtures/inspect_ai/eval-set-retried/2025-05-12T20-28-13-04-00_popularity.json"
    assert run(["import", "inspect", str(Path(export).resolve()), "--out", str(tmp_path / "imp")])[0] == 0
    (tmp_path / "link").symlink_to(tmp_path / "imp")
    monkeypatch.chdir(tmp_path)
    spellings = [
        (tmp_path / "imp/plan.parquet", "imp/ledger.parquet"),
        ("imp/../imp/plan.parquet", str(tmp_path / "imp/ledger.parquet")),
        ("link/plan.parquet", "link/ledger.parquet"),
    ]
    for plan, ledger in spellings:
        report = ef.audit(ef.Plan.from_file(plan), ledger)
        kinds = report.problems.get_column("kind").to_list()
        assert sorted(set(kinds) & {"limited_run", "run_status"}) == ["limited_run", "run_status"], (plan, ledger)
        assert report.meta["import_folder"] == str(tmp_path / "imp")


@pytest.mark.parametrize(("name", "text"), [("notes.parquet", "not parquet"), ("exports.json", "[" * 100_000)])
def test_an_import_file_the_manifest_vouches_for_but_does_not_read_is_named(
    tmp_path: Path, name: str, text: str
) -> None:
    # Hand-edited with its manifest entry updated to match: a clear error naming the file, never a traceback.
    import hashlib

    export = "data/fixtures/inspect_ai/eval-set-retried/2025-05-12T20-28-13-04-00_popularity.json"
    assert run(["import", "inspect", export, "--out", str(tmp_path / "imp")])[0] == 0
    edited = tmp_path / "imp" / name
    edited.write_text(text, encoding="utf-8")
    manifest = json.loads((tmp_path / "imp/evalframe-manifest.json").read_text(encoding="utf-8"))
    manifest["files"][name] = {"sha256": hashlib.sha256(edited.read_bytes()).hexdigest(), "size": len(text)}
    (tmp_path / "imp/evalframe-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(InputFormatError) as info:
        ef.audit(ef.Plan.from_file(tmp_path / "imp/plan.parquet"), str(tmp_path / "imp/ledger.parquet"))
    assert (info.value.path, info.value.detail.split(" (")[0]) == (str(edited), "not as evalframe import wrote it")
    code, _, err = run(
        ["audit", "--plan", str(tmp_path / "imp/plan.parquet"), "--results", str(tmp_path / "imp/ledger.parquet")]
    )
    assert (code, err.splitlines()[0].startswith(f"error: {edited}")) == (2, True)
