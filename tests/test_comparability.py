"""The settings two runs record, side by side, and the keys that make them not comparable (SPEC §6c, issue 43).

Synthetic Inspect logs are the real arc_easy log (its header: epochs 1, limit 3, no task_args) with one
setting changed; the starsim pair is the real2 collection's, whose two claude-opus-4 runs differ in the
``with_background`` task argument (false / true, and the solver step that carries it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalframe.compare.settings import not_comparable_keys, settings_side_by_side
from evalframe.importers import inspect_ai
from tests.conftest import REAL2, readme_example, real

TEMPLATE = real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_arc_qwen.json")
STARSIM = REAL2 / "inspect_ai" / "starsimhub-scipy2026_starsim_ai"
OPUS = "anthropic/claude-opus-4-20250514"


def log(
    tmp_path: Path, model: str, *, config: dict[str, Any] | None = None, task_args: dict[str, Any] | None = None
) -> Path:
    doc = json.loads(TEMPLATE.read_text())
    doc["eval"]["model"] = model
    doc["eval"]["config"].update(config or {})
    doc["eval"]["task_args"] = task_args or {}
    path = tmp_path / f"{model}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("changed", "key", "values"),
    [
        ({"config": {"epochs": 2}}, "epochs", ("1", "2")),
        ({"config": {"limit": 2}}, "limit", ("3", "2")),
        ({"task_args": {"shots": 5}}, "shots", ("0", "5")),
    ],
)
def test_two_logs_differing_in_one_setting_are_not_comparable_naming_it(
    tmp_path: Path, changed: dict[str, Any], key: str, values: tuple[str, str]
) -> None:
    base_args = {"task_args": {"shots": 0}} if key == "shots" else {}
    paths = [log(tmp_path, "a", **base_args), log(tmp_path, "b", **changed)]
    imported = inspect_ai.read(paths)
    table = settings_side_by_side(imported.info, "a", "b")
    row = table.filter(table["setting"] == key).row(0, named=True)
    assert (row["baseline"], row["candidate"], row["equal"], row["decides"]) == (*values, False, True)
    assert not_comparable_keys(table) == [key]
    # Declared not to matter, it no longer decides; declared to be all that matters, it alone decides.
    assert not_comparable_keys(settings_side_by_side(imported.info, "a", "b", ignore=[key])) == []
    only = settings_side_by_side(imported.info, "a", "b", comparable_on=[key])
    assert only.filter(only["decides"])["setting"].to_list() == [key]


def test_equal_settings_are_comparable_and_an_unrecorded_key_is_unknown(tmp_path: Path) -> None:
    paths = [log(tmp_path, "a", task_args={"judge": "x"}), log(tmp_path, "b")]
    imported = inspect_ai.read(paths)
    table = settings_side_by_side(imported.info, "a", "b")
    judge = table.filter(table["setting"] == "judge").row(0, named=True)
    assert (judge["baseline"], judge["candidate"], judge["equal"]) == ("x", None, None)  # unknown, never equal
    assert not_comparable_keys(table) == []  # an unknown key alone does not decide ...
    declared = settings_side_by_side(imported.info, "a", "b", comparable_on=["judge", "epochs"])
    assert not_comparable_keys(declared, declared=True) == ["judge"]  # ... unless declared to matter
    assert table.filter(table["setting"] == "epochs")["equal"].to_list() == [True]


def test_the_starsim_pair_is_told_apart_by_with_background() -> None:
    if not STARSIM.is_dir():
        pytest.skip("../shared/data/real2 is not laid beside the repository")
    imported = inspect_ai.read([STARSIM])
    base, cand = f"{OPUS} [with_background=false]", f"{OPUS} [with_background=true]"
    table = settings_side_by_side(imported.info, base, cand)
    row = table.filter(table["setting"] == "with_background").row(0, named=True)
    assert (row["baseline"], row["candidate"], row["equal"]) == ("false", "true", False)
    # The solver plan carries the argument too (its step's params); every other recorded key agrees.
    assert not_comparable_keys(table) == ["solver", "with_background"]
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    shown = (
        '>>> not_comparable_keys(settings_side_by_side(imported.info, f"{OPUS} [with_background=false]", '
        'f"{OPUS} [with_background=true]"))\n'
        f"{not_comparable_keys(table)!r}\n"
    )
    assert shown in readme


ASDIV = "lm_eval/EleutherAI-lm-evaluation-harness-PR2236/results/asdiv_cot/meta-llama__Meta-Llama-3-8B-Instruct"
ASDIV_RUN = "2024-08-21T03-40-10.802679"
LLAMA = "meta-llama/Meta-Llama-3-8B-Instruct"


def lm_eval_run(tmp_path: Path, model: str, *, limit: float = 50.0) -> Path:
    """The real asdiv run (results + samples), its model renamed and its ``config.limit`` set."""
    folder = real(ASDIV)
    out = tmp_path / model.replace("/", "__")
    out.mkdir()
    results = json.loads((folder / f"results_{ASDIV_RUN}.json").read_text().replace(LLAMA, model))
    results["config"]["limit"] = limit
    (out / f"results_{ASDIV_RUN}.json").write_text(json.dumps(results))
    samples = f"samples_asdiv_{ASDIV_RUN}.jsonl"
    (out / samples).write_text((folder / samples).read_text())
    return out


def test_two_lm_eval_runs_with_equal_config_are_comparable(tmp_path: Path) -> None:
    from evalframe.importers import lm_eval

    imported = lm_eval.read([lm_eval_run(tmp_path, LLAMA), lm_eval_run(tmp_path, "other/Model-8B")])
    assert imported.plan.candidates == (LLAMA, "other/Model-8B")
    table = settings_side_by_side(imported.info, LLAMA, "other/Model-8B", task="asdiv")
    assert table.height > 0
    assert table["equal"].to_list() == [True] * table.height
    assert not_comparable_keys(table) == []
    # The model's own name and weights differ by design and are not among the settings compared.
    assert "model_args.pretrained" not in table["setting"].to_list()


def test_two_lm_eval_runs_with_another_limit_are_not_comparable(tmp_path: Path) -> None:
    from evalframe.importers import lm_eval

    imported = lm_eval.read([lm_eval_run(tmp_path, LLAMA), lm_eval_run(tmp_path, "other/Model-8B", limit=40.0)])
    table = settings_side_by_side(imported.info, LLAMA, "other/Model-8B", task="asdiv")
    assert table.filter(table["setting"] == "limit").rows() == [("limit", "50.0", "40.0", False, True)]
    assert not_comparable_keys(table) == ["limit"]


def test_compare_says_not_comparable_naming_the_key_first(tmp_path: Path) -> None:
    import evalframe

    imported = inspect_ai.read([log(tmp_path, "a"), log(tmp_path, "b", config={"epochs": 2})])
    report = evalframe.audit(imported.plan, imported.results)
    got = evalframe.compare(report, baseline="a", candidate="b")
    assert got.verdict == "not_comparable"
    assert got.reasons[0] == "not comparable: the runs record different settings: epochs 1 (baseline) vs 2 (candidate)"
    # Declared not to matter, the comparison is the usual one (3 cases cannot support a winner).
    assert evalframe.compare(report, baseline="a", candidate="b", ignore_settings=["epochs"]).verdict == (
        "no_supported_winner"
    )


def test_compare_of_lm_eval_runs_with_equal_config_is_the_usual_one(tmp_path: Path) -> None:
    import evalframe
    from evalframe.importers import lm_eval

    imported = lm_eval.read([lm_eval_run(tmp_path, LLAMA), lm_eval_run(tmp_path, "other/Model-8B")])
    report = evalframe.audit(imported.plan, imported.results)
    got = evalframe.compare(report, baseline=LLAMA, candidate="other/Model-8B")
    # The same rows on both sides: no difference, so no winner, and no settings reason.
    assert got.verdict == "no_supported_winner"
    assert not any(r.startswith("not comparable") for r in got.reasons)


def test_the_command_gates_a_not_comparable_pair_with_exit_3(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    paths = [str(log(tmp_path, "a")), str(log(tmp_path, "b", config={"epochs": 2}))]
    args = ["compare", "--from", "inspect", *paths, "--baseline", "a", "--candidate", "b", "--require-winner"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3
    assert "verdict: not_comparable" in result.stdout
    assert "not comparable: the runs record different settings: epochs 1 (baseline) vs 2 (candidate)" in result.stdout


def test_the_command_ignores_the_declared_settings_of_the_starsim_pair() -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    if not STARSIM.is_dir():
        pytest.skip("../shared/data/real2 is not laid beside the repository")
    args = ["compare", "--from", "inspect", str(STARSIM), "--baseline", f"{OPUS} [with_background=false]"]
    args += ["--candidate", f"{OPUS} [with_background=true]"]
    told_apart = CliRunner().invoke(main, args)
    assert told_apart.exit_code == 0
    assert "verdict: not_comparable" in told_apart.stdout
    # Both differing keys (test above) declared not to matter: the usual comparison, 23 cases, no winner.
    ignored = ["--ignore-setting", "with_background", "--ignore-setting", "solver"]
    usual = CliRunner().invoke(main, [*args, *ignored])
    assert usual.exit_code == 0
    assert "verdict: no_supported_winner" in usual.stdout
    assert "not comparable" not in usual.stdout
    # Only one of the two ignored: still not comparable, now naming the other.
    half = CliRunner().invoke(main, [*args, "--ignore-setting", "with_background", "--require-winner"])
    assert half.exit_code == 3
    assert "verdict: not_comparable" in half.stdout
    # Declared to matter: epochs only, which both record alike.
    assert "verdict: no_supported_winner" in CliRunner().invoke(main, [*args, "--comparable-on", "epochs"]).stdout


def test_the_settings_flags_apply_to_every_pair_of_the_family(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    paths = [str(log(tmp_path, "a")), str(log(tmp_path, "b", config={"epochs": 2}))]
    args = ["compare", "--from", "inspect", *paths, "--baseline", "a", "--candidate", "all", "--format", "json"]
    told_apart, ignored = (CliRunner().invoke(main, [*args, *extra]) for extra in ([], ["--ignore-setting", "epochs"]))
    assert (told_apart.exit_code, ignored.exit_code) == (0, 0)
    assert '"verdict": "not_comparable"' in told_apart.stdout
    assert "not_comparable" not in ignored.stdout


# --- an audit of several runs of one task and candidate (issue 43 item 3, "an audit of several runs") ----------


def two_runs(tmp_path: Path, changed: dict[str, Any]) -> list[Path]:
    """Two runs of model ``a`` on the arc_easy task: the real log as it is (run1.json) and with ``changed``."""
    paths = []
    for name, config in (("run1.json", {}), ("run2.json", changed)):
        path = log(tmp_path, "a", config=config).rename(tmp_path / name)
        paths.append(path)
    return paths


@pytest.mark.parametrize(("changed", "said"), [({"epochs": 2}, "epochs 1 in run1.json; 2 in run2.json"),
                                               ({"limit": 2}, "limit 3 in run1.json; 2 in run2.json")])  # fmt: skip
def test_an_audit_pooling_runs_whose_settings_differ_says_so_naming_the_key(
    tmp_path: Path, changed: dict[str, Any], said: str
) -> None:
    import evalframe

    imported = inspect_ai.read(two_runs(tmp_path, changed))
    report = evalframe.audit(imported.plan, imported.results)
    notes = report.problems.filter(report.problems["kind"] == "settings_pooled")
    # The template's eval.task is inspect_evals/arc_easy; its config records epochs 1 and limit 3.
    assert notes.select("candidate", "detail", "refusing").rows() == [
        ("a", "2 exports of a (inspect_evals/arc_easy) record different settings and are audited together, not as one "
         f"measurement: {said}", False)  # fmt: skip
    ]


def test_an_audit_of_runs_with_equal_settings_adds_no_note(tmp_path: Path) -> None:
    import evalframe

    imported = inspect_ai.read(two_runs(tmp_path, {}))
    report = evalframe.audit(imported.plan, imported.results)
    assert "settings_pooled" not in report.problems["kind"].to_list()


def test_the_audit_command_prints_and_writes_the_pooled_settings_note(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    paths = [str(p) for p in two_runs(tmp_path, {"epochs": 2})]
    result = CliRunner().invoke(main, ["audit", "--from", "inspect", *paths, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "settings_pooled" in result.stdout
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["problems_by_kind"]["settings_pooled"] == 1


def test_the_readme_pooled_example_prints_what_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    code, shown = readme_example("pooled-example")
    exec(code, {})
    assert capsys.readouterr().out == shown
    assert "epochs 1 in run1.json; 2 in run2.json" in shown and "limit" not in shown  # limit 3 in both
