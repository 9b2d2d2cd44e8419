"""The importer toolkit: one meaning per fact, and the declarations the CLI binds an import with."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import evalframe as ef
from evalframe.cli import main
from evalframe.importers import _kit, inspect_ai
from evalframe.importers._kit import ImportRefused, ImportUnreadable, ScoreChoiceError, Unreadable
from tests.conftest import real

ARC_QWEN = real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_arc_qwen.json")


def test_note_refuses_as_its_kind_says() -> None:
    assert _kit.note("unknown_score", "x", "d")["refusing"] is True
    assert _kit.note("limited_run", "x", "d")["refusing"] is False
    assert _kit.note("limited_run", "x", "d", refusing=True)["refusing"] is True
    with pytest.raises(KeyError):
        _kit.note("no_such_kind", "x", "d")


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (b"\xff\xfe{}", "not UTF-8 text (invalid start byte at byte 0)"),
        (b'{"a": }', "invalid JSON (Expecting value, column 7)"),
        (b"[" * 200_000 + b"]" * 200_000, "JSON nested too deeply to read"),
        (b"1" * 5000, "unreadable JSON value"),
    ],
)
def test_unreadable_json_is_one_note_never_a_traceback(data: bytes, detail: str) -> None:
    with pytest.raises(Unreadable) as exc:
        _kit.parse_json(data, "f.json", line=3)
    assert exc.value.note["kind"] == "unreadable_file"
    assert exc.value.note["line"] == 3
    assert exc.value.note["detail"].startswith(detail)
    assert exc.value.note["refusing"] is True


def test_json_lines_number_physical_lines_and_keep_reading(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"a": NaN}\n{broken\n{"a": Infinity}\n')
    rows, notes = _kit.read_json_lines(path)
    assert [(n, v["a"]) for n, v in rows][0] == (1, 1)
    assert [n for n, _ in rows] == [1, 3, 5]
    assert [(n["kind"], n["line"]) for n in notes] == [("unreadable_file", 4)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, ("scored", 1.0)),
        (False, ("scored", 0.0)),
        (1, ("scored", 1.0)),
        (0.65, ("scored", 0.65)),
        (10**400, ("judge_error", None)),
        (float("nan"), ("judge_error", None)),
        (float("-inf"), ("judge_error", None)),
        (None, ("judge_error", None)),
        ("C", ("judge_error", None)),
        ([1, 0], ("judge_error", None)),
        ({"score": 1}, ("judge_error", None)),
    ],
)
def test_grade_has_one_meaning(value: object, expected: tuple[str, float | None]) -> None:
    assert _kit.grade(value) == expected


def test_letter_grades_only_where_the_format_has_them() -> None:
    assert [_kit.grade(v, letters=_kit.LETTER_GRADES) for v in ("C", "I", "P", "N", "X")] == [
        ("scored", 1.0),
        ("scored", 0.0),
        ("scored", 0.5),
        ("scored", 0.0),
        ("judge_error", None),
    ]


def test_score_choice_refuses_a_mistyped_name_naming_what_exists() -> None:
    with pytest.raises(ScoreChoiceError) as exc:
        _kit.choose_score("mach", ["match", "includes"], default="match", what="scorer", source="a.eval")
    assert exc.value.note["kind"] == "unknown_score"
    assert exc.value.note["detail"] == (
        "no scorer named 'mach' in the export (has: includes, match): "
        "name one with --score <scorer>, e.g. --score match"
    )
    assert _kit.choose_score(None, ["includes", "match"], default="match", what="scorer", source="a") == "match"
    assert _kit.choose_score(None, ["only"], default=None, what="scorer", source="a") == "only"
    assert _kit.choose_score(None, [], default=None, what="scorer", source="a") is None
    with pytest.raises(ScoreChoiceError) as exc:
        _kit.choose_score(None, ["b", "a"], default=None, what="metric", source="s")
    assert exc.value.note["kind"] == "ambiguous_score"


def test_a_folder_without_exports_refuses(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("no logs here")
    files, notes = _kit.find_files([tmp_path], is_export=lambda p: p.suffix == ".eval", what="Inspect log")
    assert files == []
    assert [(n["kind"], n["refusing"]) for n in notes] == [("no_export", True)]
    with pytest.raises(ef.InputFormatError):
        _kit.find_files([tmp_path / "absent"], is_export=lambda p: True, what="x")


def test_finish_raises_on_a_refusing_note() -> None:
    plan, problems = _kit.build_plan(pl.DataFrame({"candidate": ["m"], "case_id": ["1"], "trial": [1]}), source="x")
    assert problems.height == 0
    ledger = pl.DataFrame()
    kept = _kit.finish(plan, ledger, [[_kit.note("limited_run", "x", "limited to 1 of 5")]], [], files=["b", "a", "b"])
    assert kept.notes.get_column("kind").to_list() == ["limited_run"]
    assert kept.files == ["a", "b"]  # sorted, each once
    with pytest.raises(ImportRefused) as exc:
        _kit.finish(plan, ledger, [[_kit.note("unknown_score", "x", "no scorer")]], [], files=["x"])
    assert exc.value.problems.get_column("kind").to_list() == ["unknown_score"]
    assert isinstance(exc.value, ef.AuditRefused)


def test_build_plan_gives_a_units_table_when_candidates_differ() -> None:
    units = pl.DataFrame({"candidate": ["a", "a", "b"], "case_id": ["1", "2", "1"], "trial": [1, 1, 1]})
    plan, _ = _kit.build_plan(units, source="x")
    assert plan.units is not None
    assert plan.units.rows() == [("a", "1", 1), ("a", "2", 1), ("b", "1", 1)]


def audit_json(args: list[str]) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(main, ["audit", "--from", "inspect", str(ARC_QWEN), "--format", "json", *args])
    out = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    return result.exit_code, out, result.stderr


def counts(out: dict[str, object]) -> dict[str, tuple[int, int, int]]:
    rows = out["summary"]
    assert isinstance(rows, list)
    return {r["candidate"]: (r["planned"], r["scored"], r["missing"]) for r in rows}


def test_from_export_with_no_declaration_plans_what_the_export_says() -> None:
    code, out, _ = audit_json([])
    assert code == 0
    assert counts(out) == {"ollama/qwen2.5:0.5b": (3, 3, 0)}


def test_declared_trials_bind_an_import() -> None:
    code, out, _ = audit_json(["--trials", "2"])
    assert code == 0
    assert counts(out) == {"ollama/qwen2.5:0.5b": (6, 3, 3)}  # trial 2 of each case has no row: missing


def test_declared_candidates_bind_an_import() -> None:
    code, out, _ = audit_json(["--candidates", "ollama/qwen2.5:0.5b,other"])
    assert code == 0
    assert counts(out) == {"ollama/qwen2.5:0.5b": (3, 3, 0), "other": (3, 0, 3)}
    code, out, _ = audit_json(["--candidates", "other"])  # the export's rows are of an undeclared candidate
    assert code == 1
    assert out["refusing_problems_by_kind"] == {"unknown_candidate": 3}


def test_declared_run_id_binds_an_import() -> None:
    run_id = inspect_ai.read([ARC_QWEN]).ledger.get_column("run_id").unique().item()
    code, out, _ = audit_json(["--run-id", run_id])
    assert code == 0
    assert counts(out) == {"ollama/qwen2.5:0.5b": (3, 3, 0)}
    code, out, err = audit_json(["--run-id", "no-such-run"])
    assert code == 1
    assert out["refusing_problems_by_kind"] == {"unknown_run": 1}
    assert "no run 'no-such-run' in the export" in err


def test_score_without_from_is_a_usage_error() -> None:
    orbit = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "orbit_desk"
    result = CliRunner().invoke(
        main,
        [
            "audit",
            "--plan",
            str(orbit / "plan.csv"),
            "--results",
            str(orbit / "results.csv"),
            "--candidates",
            "A,B",
            "--score",
            "match",
        ],
    )
    assert result.exit_code == 2
    assert "--score names the scorer of an export: it needs --from FORMAT" in result.stderr


def test_imported_results_carry_the_notes_into_the_audit() -> None:
    path = real(
        "inspect_ai/UKGovernmentBEIS-inspect_ai/tests/analysis/test_logs/2025-05-12T20-28-13-04-00_no-samples.json"
    )
    imported = inspect_ai.read([path])
    report = ef.audit(imported.plan, imported.results)
    assert report.summary.select("planned", "attempted", "scored").row(0) == (3, 0, 0)
    assert {"run_status", "header_rows_disagree"} <= set(report.problems.get_column("kind").to_list())


def test_a_reducer_other_than_the_exports_is_applied_and_noted() -> None:
    # The log's header records epochs_reducer ["mean"]; an audit declaring pass@k (any) applies it and says so.
    path = real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_cyse2_vuln_exploit_challenges.json")
    imported = inspect_ai.read([path])
    assert [i["case_reducer"] for i in imported.info] == ["mean"]
    provenance = {"exports": imported.info}
    kept = ef.audit(imported.plan, imported.results, grade="numeric", provenance=provenance)
    assert "reducer_differs" not in kept.problems.get_column("kind").to_list()
    other = ef.audit(imported.plan, imported.results, grade="numeric", reducer="any", provenance=provenance)
    noted = other.problems.filter(pl.col("kind") == "reducer_differs")
    assert noted.select("detail", "refusing").rows() == [
        ("the export records the case reducer mean; the audit applies the declared 'any'", False)
    ]


def test_an_inspect_reducer_name_means_what_it_does() -> None:
    # The header records ["mean"]; Inspect's `max` is `any` over pass/fail epochs and differs from it, while
    # an audit reading Inspect's name for what the header records ("mean") is not told they differ.
    path = real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_cyse2_vuln_exploit_challenges.json")
    imported = inspect_ai.read([path])
    provenance = {"exports": [{**imported.info[0], "case_reducer": "max"}]}
    same = ef.audit(imported.plan, imported.results, grade="numeric", reducer="any", provenance=provenance)
    assert "reducer_differs" not in same.problems.get_column("kind").to_list()
    assert same.summary.get_column("case_reducer").to_list() == ["any"]
    other = ef.audit(imported.plan, imported.results, grade="numeric", reducer="mode", provenance=provenance)
    assert other.problems.filter(pl.col("kind") == "reducer_differs").get_column("detail").to_list() == [
        "the export records the case reducer max; the audit applies the declared 'mode'"
    ]


def _copy(relative: str, to: Path) -> Path:
    import shutil

    source = real(relative)
    target = to / source.name
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)
    return target


def test_declared_sizes_beyond_the_limit_refuse_before_anything_is_allocated(tmp_path: Path) -> None:
    from evalframe.importers import helm, lm_eval

    big = _kit.MAX_PLANNED_UNITS * 10
    log = _copy("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_arc_sonnet.json", tmp_path)
    doc = json.loads(log.read_text())
    doc["eval"]["config"]["epochs"] = big
    log.write_text(json.dumps(doc))
    with pytest.raises(ImportUnreadable) as exc:
        inspect_ai.read([log])
    details = exc.value.notes.filter(pl.col("kind") == "unreadable_file").get_column("detail").to_list()
    assert details == [
        f"eval.config.epochs × sample ids declares {5 * big} planned units"
        " (limit 100000000; raise it with --max-planned-units)"
    ]
    doc["eval"]["config"]["epochs"] = 1
    doc["samples"][0]["epoch"] = 10**30
    log.write_text(json.dumps(doc))
    with pytest.raises(ImportUnreadable) as exc:
        inspect_ai.read([log])
    refusing = exc.value.notes.filter(pl.col("refusing")).get_column("detail").to_list()
    assert refusing == [f"samples[0] has no valid epoch (got {10**30})"]

    folder = _copy(
        "lm_eval/EleutherAI-lm-evaluation-harness-PR1974/lm_eval/tasks/bias_classification/results/"
        "meta-llama__Meta-Llama-3-8B",
        tmp_path,
    )
    results = next(folder.glob("results_*.json"))
    doc = json.loads(results.read_text())
    for task in doc["n-samples"]:  # the documents a run was set to run (effective) are what it plans
        doc["n-samples"][task]["original"] = doc["n-samples"][task]["effective"] = big
    results.write_text(json.dumps(doc))
    with pytest.raises(ImportUnreadable) as exc:
        lm_eval.read([folder])
    assert any(
        d.endswith(
            f"n-samples.effective declares {big} planned units (limit 100000000; raise it with --max-planned-units)"
        )
        for d in exc.value.notes.get_column("detail").to_list()
    )

    run = _copy(
        "helm/evaleval-every_eval_ever/tests/data/helm/"
        "commonsense-dataset=hellaswag,method=multiple_choice_joint,model=eleutherai_pythia-1b-v0",
        tmp_path,
    )
    spec = json.loads((run / "run_spec.json").read_text())
    spec["adapter_spec"]["num_train_trials"] = big
    (run / "run_spec.json").write_text(json.dumps(spec))
    with pytest.raises(ImportUnreadable) as exc:
        helm.read([run])
    assert exc.value.notes.get_column("detail").to_list() == [
        f"instances × adapter_spec.num_train_trials declares {10 * big} planned units "
        "(limit 100000000; raise it with --max-planned-units)"
    ]


def test_imported_results_carry_the_exports_headers_into_the_audit() -> None:
    # The header records epochs_reducer ["mean"]: ef.audit(imported.plan, imported.results, reducer="any") says
    # so, as the command line does, with no provenance passed by hand (it was left out of the Python route).
    path = real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_cyse2_vuln_exploit_challenges.json")
    imported = inspect_ai.read([path])
    report = ef.audit(imported.plan, imported.results, grade="numeric", reducer="any")
    assert report.problems.filter(pl.col("kind") == "reducer_differs").get_column("detail").to_list() == [
        "the export records the case reducer mean; the audit applies the declared 'any'"
    ]
    assert [e["case_reducer"] for e in report.meta["exports"]] == ["mean"]


@pytest.mark.parametrize("seed", range(40))
def test_a_plan_of_trial_counts_is_the_plan_of_the_units_they_stand_for(seed: int) -> None:
    """build_plan_of_trials(rows) equals build_plan of the units the rows spell out (trials 1..count, unioned)."""
    import random

    rng = random.Random(seed)
    rows = []  # a case id names one task (an importer prefixes ids with their task when several are read)
    for _ in range(rng.randint(0, 8)):
        case = rng.choice(["q1", "q2", "q3", " q4"])
        rows.append((rng.choice(["A", "B"]), case, "u" if case == "q3" else "t", rng.randint(1, 3)))
    cases = pl.DataFrame(
        rows, schema={"candidate": pl.String, "case_id": pl.String, "task": pl.String, "trials": pl.Int64}, orient="row"
    )
    units = pl.DataFrame(
        [(c, i, t, n) for c, i, t, k in rows for n in range(1, k + 1)],
        schema={"candidate": pl.String, "case_id": pl.String, "task": pl.String, "trial": pl.Int64},
        orient="row",
    ).select("candidate", "case_id", "trial", "task")
    plan, problems = _kit.build_plan_of_trials(cases, source="s")
    want, want_problems = _kit.build_plan(units, source="s")
    assert sorted(problems.get_column("kind").to_list()) == sorted(want_problems.get_column("kind").to_list())
    if want_problems.height == 0:
        assert (plan.candidates, plan.trials, plan.n_units) == (
            tuple(sorted(want.candidates)),
            want.trials,
            want.n_units,
        )
        assert plan.cases.equals(want.cases)
        assert plan.planned_units().collect().rows() == want.planned_units().collect().rows()
        assert len({(c, i, n) for c, i, t, k in rows for n in range(1, k + 1)}) == plan.n_units
