"""Reconciling an export's own headline with the audit (SPEC §6c; issue 43 item 1).

Inspect issue 3707's numbers: 100 planned samples, 10 errored, 80 correct. Inspect reports accuracy over
its 90 scored samples (80/90 = 0.889); over the 100 planned the audited rate lies in 0.80–0.90, and the 10
errored samples account for the whole gap, 80/90 − 80/100 = 8/90 (+8.9 points).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalframe
from evalframe.funnel.reported import POINTS_COLUMNS, decompose, reconciliation
from evalframe.importers import inspect_ai
from evalframe.report import AuditReport
from tests.conftest import real

#: A real Inspect log (licensed, copied into the repository) whose shape the synthetic logs keep.
TEMPLATE = real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_arc_qwen.json")

#: Funnel counts with every step at zero, to be overridden.
ZERO = dict.fromkeys(("missing", "not_started", "exec_failed", "no_output", "judge_failed", "not_scored"), 0)


def inspect_log(tmp_path: Path, *, planned: int, errored: int, correct: int, reported: float) -> Path:
    """An Inspect JSON log (shaped as the real arc_easy log) whose first ``errored`` samples errored, then
    ``correct`` scored C and the rest I; its header reports ``reported`` over the scored samples."""
    doc: dict[str, Any] = json.loads(TEMPLATE.read_text())
    sample = doc["samples"][0]
    doc["eval"]["dataset"].update(samples=planned, sample_ids=list(range(1, planned + 1)))
    doc["eval"]["config"]["limit"] = None
    samples = []
    for i in range(1, planned + 1):
        s = copy.deepcopy(sample)
        s.update(id=i, epoch=1, uuid=f"u{i}")
        if i <= errored:
            s["scores"] = {}
            s["error"] = {"message": "RuntimeError: sandbox died", "traceback": "", "traceback_ansi": ""}
        else:
            s["scores"] = {"choice": {"value": "C" if i <= errored + correct else "I"}}
        samples.append(s)
    doc["samples"] = samples
    scored = planned - errored
    doc["results"].update(total_samples=planned, completed_samples=scored)
    entry = doc["results"]["scores"][0]
    entry.update(scored_samples=scored, unscored_samples=0)
    entry["metrics"]["accuracy"]["value"] = reported
    path = tmp_path / "issue3707.json"
    path.write_text(json.dumps(doc))
    return path


def audited(path: Path) -> AuditReport:
    imported = inspect_ai.read([path])
    return evalframe.audit(imported.plan, imported.results)


def test_issue_3707_numbers_reproduce_and_the_errored_samples_account_for_the_gap(tmp_path: Path) -> None:
    report = audited(inspect_log(tmp_path, planned=100, errored=10, correct=80, reported=80 / 90))
    table = reconciliation(report.summary, report.meta["exports"], attempts=report.attempts)
    assert table.height == 1
    row = table.row(0, named=True)
    assert (row["tool"], row["metric"], row["implied_denominator"], row["denominator_of"]) == (
        "Inspect",
        "accuracy",
        90,
        "scored samples",
    )
    assert (row["planned"], row["scored"], row["passed"]) == (100, 90, 80)
    assert row["reported"] == 80 / 90
    assert row["pass_rate_scored"] == pytest.approx(80 / 90, abs=1e-15)
    assert row["pass_rate_planned"] == 0.8
    assert row["pass_rate_upper"] == 0.9
    assert row["gap"] == pytest.approx(80 / 90 - 0.8, abs=1e-15)
    assert row["points_exec_failed"] == pytest.approx(8 / 90, abs=1e-15)
    assert [row[c] for c in POINTS_COLUMNS if c != "points_exec_failed"] == pytest.approx([0.0] * 7, abs=1e-15)
    assert math.fsum(row[c] for c in POINTS_COLUMNS) == pytest.approx(row["gap"], abs=1e-15)
    expected = (
        "Inspect reported accuracy 0.889 over 90 scored samples; over 100 planned the rate lies in 0.800–0.900; "
        "10 errored or timed-out units account for +8.9 points."
    )
    assert row["sentence"] == expected
    # The sentence is a note of the report, so every renderer shows it.
    notes = report.problems.filter(pl.col("kind") == "headline_reconciled")
    assert notes.select("detail", "refusing").rows() == [(expected, False)]
    assert expected in report.to_markdown()
    # The README's worked example is this sentence.
    assert f"```\n{expected}\n```" in (Path(__file__).parent.parent / "README.md").read_text()


def test_a_header_that_agrees_with_its_rows_says_gap_0(tmp_path: Path) -> None:
    report = audited(inspect_log(tmp_path, planned=20, errored=0, correct=15, reported=0.75))
    (row,) = reconciliation(report.summary, report.meta["exports"]).iter_rows(named=True)
    assert row["gap"] == 0.0
    assert (
        row["sentence"]
        == "Inspect reported accuracy 0.750 over 20 scored samples; it agrees with the audit over 20 planned (gap 0)."
    )


def test_a_reported_value_the_rows_do_not_explain_is_named(tmp_path: Path) -> None:
    # Rounded to 3 decimals in the header: 0.889 − 80/90 = 0.000111… is not explained by the rows.
    report = audited(inspect_log(tmp_path, planned=100, errored=10, correct=80, reported=0.889))
    (row,) = reconciliation(report.summary, report.meta["exports"]).iter_rows(named=True)
    assert row["points_unexplained"] == pytest.approx(0.889 - 80 / 90, abs=1e-15)
    assert math.fsum(row[c] for c in POINTS_COLUMNS) == pytest.approx(0.889 - 0.8, abs=1e-15)
    assert row["sentence"].endswith(
        "10 errored or timed-out units account for +8.9 points; +0.0 points are not explained by the rows."
    )


def test_decomposition_steps_follow_the_funnel_order_and_sum_exactly() -> None:
    # 40 planned: 4 missing, 2 not started, 6 errored, 3 without output, 5 grader failures, 0 not scored,
    # 20 scored, 10 passed. Each step removes its units from the denominator in that order.
    row = {"planned": 40, "passed": 10, "scored": 20, **ZERO, "missing": 4, "not_started": 2, "exec_failed": 6,
           "no_output": 3, "judge_failed": 5}  # fmt: skip
    parts = decompose(row, 0.5)
    assert parts["points_missing"] == pytest.approx(10 / 36 - 10 / 40, abs=1e-15)
    assert parts["points_not_started"] == pytest.approx(10 / 34 - 10 / 36, abs=1e-15)
    assert parts["points_exec_failed"] == pytest.approx(10 / 28 - 10 / 34, abs=1e-15)
    assert parts["points_no_output"] == pytest.approx(10 / 25 - 10 / 28, abs=1e-15)
    assert parts["points_judge_failed"] == pytest.approx(10 / 20 - 10 / 25, abs=1e-15)
    assert parts["points_not_scored"] == 0.0
    assert parts["points_duplicates"] == 0.0
    assert parts["points_unexplained"] == pytest.approx(0.0, abs=1e-15)
    assert parts["gap"] == 0.25


def test_duplicates_count_only_when_the_stated_denominator_is_every_scored_attempt() -> None:
    # 10 planned, all scored, 5 passed; 2 retried units add 2 scored attempts, both passes: 12 attempts, 7 passed.
    row = {"planned": 10, "passed": 5, "scored": 10, **ZERO}
    counted = decompose(row, 7 / 12, implied=12, every_attempt=(12, 7))
    assert counted["points_duplicates"] == pytest.approx(7 / 12 - 0.5, abs=1e-15)
    assert counted["points_unexplained"] == pytest.approx(0.0, abs=1e-15)
    stated_units = decompose(row, 7 / 12, implied=10, every_attempt=(12, 7))
    assert stated_units["points_duplicates"] == 0.0
    assert stated_units["points_unexplained"] == pytest.approx(7 / 12 - 0.5, abs=1e-15)


def test_nothing_scored_or_no_pass_rate_gives_no_decomposition() -> None:
    assert set(decompose({"planned": 3, "passed": 0, "scored": 0, **ZERO, "not_scored": 3}, 0.5).values()) == {None}
    assert set(decompose({"planned": 3, "passed": None, "scored": 3, **ZERO}, 0.5).values()) == {None}


NEGOTIATIONTOM = "lm_eval/EleutherAI-lm-evaluation-harness-PR3936/outputs/qwen3-8b/negotiationtom"


def test_each_task_of_an_lm_eval_folder_reconciles_its_own_headlines() -> None:
    # Three results files, each reporting the three subtasks over n-samples.effective = 20 documents:
    # belief acc,none 0.45, desire acc,none 0.6, intention exact_match,none 0.2 (read from the files).
    folder = real(NEGOTIATIONTOM)
    if not folder.is_dir():
        pytest.skip("../shared/data/real is not laid beside the repository")
    from evalframe.importers import lm_eval

    imported = lm_eval.read([folder])
    report = evalframe.audit(imported.plan, imported.results)
    notes = report.problems.filter(pl.col("kind") == "headline_reconciled")
    by_task = {t: sorted(set(g.get_column("detail"))) for (t,), g in notes.group_by("task")}
    expected = {
        "negotiationtom_belief": "lm-eval reported acc,none 0.450 over 20 documents run",
        "negotiationtom_desire": "lm-eval reported acc,none 0.600 over 20 documents run",
        "negotiationtom_intention": "lm-eval reported exact_match,none 0.200 over 20 documents run",
    }
    assert sorted(by_task) == sorted(expected)
    for task, start in expected.items():
        assert all(d.startswith(start + "; ") for d in by_task[task]), by_task[task]
    assert notes.height == 9  # 3 results files × 3 tasks
    # Each task's own report (its section of every output) reconciles that task's headlines alone, each
    # with the rate its 20 documents give: gap 0, in its notes as in its table.
    rates = {"negotiationtom_belief": 0.45, "negotiationtom_desire": 0.6, "negotiationtom_intention": 0.2}
    for task, one in report.by_task().items():
        own = one.problems.filter(pl.col("kind") == "headline_reconciled").get_column("detail").to_list()
        assert len(own) == 3 and all(d.startswith(expected[task] + "; it agrees") for d in own), own
        table = one.reconciliation.select("task", "reported", "pass_rate_planned", "gap").rows()
        assert table == [(task, rates[task], rates[task], 0.0)] * 3


def test_the_report_of_every_task_holds_each_tasks_reconciliation_and_its_notes_are_those_rows() -> None:
    # The negotiationtom folder: 3 results files × 3 tasks, one headline each (see the test above).
    folder = real(NEGOTIATIONTOM)
    if not folder.is_dir():
        pytest.skip("../shared/data/real is not laid beside the repository")
    from evalframe.importers import lm_eval

    imported = lm_eval.read([folder])
    report = evalframe.audit(imported.plan, imported.results)
    tasks = ["negotiationtom_belief", "negotiationtom_desire", "negotiationtom_intention"]
    table = report.reconciliation
    assert table.get_column("task").to_list() == [t for t in tasks for _ in range(3)]
    assert table.equals(pl.concat([report.by_task()[t].reconciliation for t in tasks]))
    notes = report.problems.filter(pl.col("kind") == "headline_reconciled")
    assert sorted(notes.select("task", "detail").rows()) == sorted(table.select("task", "sentence").rows())


def test_the_audit_reconciles_once_per_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every reconciliation reads the exports' headlines first: one read per reconciliation computed.
    from evalframe.funnel import reported

    calls: list[int] = []

    def counted(exports: Any) -> list[dict[str, Any]]:
        calls.append(1)
        return read(exports)

    read = reported.reported_headlines
    monkeypatch.setattr(reported, "reported_headlines", counted)
    report = audited(inspect_log(tmp_path, planned=100, errored=10, correct=80, reported=80 / 90))
    (note,) = report.problems.filter(pl.col("kind") == "headline_reconciled").get_column("detail")
    (sentence,) = report.reconciliation.get_column("sentence")
    assert note == sentence and sentence.endswith("10 errored or timed-out units account for +8.9 points.")
    report.write(tmp_path / "out")  # every output reads the report's table
    assert "+8.9 points" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert len(calls) == 1


def test_no_decomposition_is_said_so() -> None:
    # A numeric grade without a pass threshold: passed and the pass rates are null.
    counts = {"candidate": "m", "planned": 2, "passed": None, "scored": 2, **ZERO}
    rates = dict.fromkeys(("pass_rate_scored", "pass_rate_planned", "pass_rate_upper"))
    schema = {"candidate": pl.String, **dict.fromkeys([*counts][1:], pl.UInt32), **dict.fromkeys(rates, pl.Float64)}
    summary = pl.DataFrame([{**counts, **rates}], schema=schema)
    export = {"candidate": "m", "reported": [{"tool": "X", "metric": "mean", "reported": 0.4}]}
    (row,) = reconciliation(summary, [export]).iter_rows(named=True)
    assert row["gap"] is None
    assert row["sentence"] == (
        "X reported mean 0.400; the audit gives no decomposition of it (nothing scored, no pass threshold, "
        "or counts that do not partition the plan)."
    )


def test_the_report_holds_the_reconciliation_and_writes_it(tmp_path: Path) -> None:
    report = audited(inspect_log(tmp_path, planned=100, errored=10, correct=80, reported=80 / 90))
    table = report.reconciliation
    assert report.reconciliation is table  # computed once
    row = table.row(0, named=True)
    assert (table.height, row["reported"], row["implied_denominator"]) == (1, 80 / 90, 90)
    assert row["pass_rate_planned"] == 0.8
    assert row["points_exec_failed"] == pytest.approx(8 / 90, abs=1e-15)
    out = tmp_path / "out"
    names = [p.name for p in report.write(out)]
    assert "reconciliation.parquet" in names
    written = pl.read_parquet(out / "reconciliation.parquet")
    assert written.select("reported", "implied_denominator", "planned", "scored", "passed").rows() == [
        (80 / 90, 90, 100, 90, 80)
    ]
    (entry,) = json.loads((out / "report.json").read_text())["reconciliation"]
    assert (entry["reported"], entry["pass_rate_planned"], entry["pass_rate_upper"]) == (80 / 90, 0.8, 0.9)
    assert entry["sentence"].endswith("10 errored or timed-out units account for +8.9 points.")


def test_a_ledger_reports_no_headline_and_writes_no_reconciliation(tmp_path: Path) -> None:
    plan = evalframe.Plan.from_frame(pl.DataFrame({"case_id": ["q", "r"]}), candidates=["A"])
    report = evalframe.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["q"], "passed": [1]}))
    assert report.reconciliation.height == 0
    names = [p.name for p in report.write(tmp_path / "out")]
    assert "reconciliation.parquet" not in names
    assert "reconciliation" not in json.loads((tmp_path / "out" / "report.json").read_text())
