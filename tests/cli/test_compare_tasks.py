"""``evalframe compare`` on inputs of several tasks: each task in turn, or ``--task NAME`` (issue 40).

The library decides (``ef.compare(report, task=...)``); the command only lays the tasks out. The
multi-task report is built from two single-task audits, as the task contract says: ``meta["tasks"]``
names them and ``by_task()`` returns them (the audit of several tasks is another helper's).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe.cli import auditing
from tests.cli.support import ORBIT, run

ARGS = ["compare", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv"), "--candidates", "A,B"]


def one_task(grades: dict[str, list[int]]) -> ef.AuditReport:
    n = len(next(iter(grades.values())))
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": [f"c{i + 1}" for i in range(n)]}), candidates=list(grades))
    rows = [(name, f"c{i + 1}", g) for name, got in grades.items() for i, g in enumerate(got)]
    return ef.audit(plan, pl.DataFrame(rows, schema=["candidate", "case_id", "passed"], orient="row"))


@pytest.fixture(autouse=True)
def two_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    # arc: A passes 10 of 10, B none; gaia: only B was run.
    parts = {"arc": one_task({"A": [1] * 10, "B": [0] * 10}), "gaia": one_task({"B": [1, 0, 1]})}
    combined = replace(parts["arc"], meta={**parts["arc"].meta, "tasks": ["arc", "gaia"]})
    monkeypatch.setattr(ef.AuditReport, "by_task", lambda self: parts if self is combined else {"": self})
    monkeypatch.setattr(auditing, "build_report", lambda **_: combined)


def test_each_task_is_compared_on_its_own_and_a_task_one_side_lacks_is_not_comparable() -> None:
    code, out, _ = run([*ARGS, "--baseline", "B", "--candidate", "A", "--format", "json"])
    assert code == 0
    doc = json.loads(out)["tasks"]  # task -> its document, as the audit's json (README "Output")
    assert list(doc) == ["arc", "gaia"]
    assert doc["arc"]["comparison"]["verdict"] == "candidate_better"
    assert doc["arc"]["comparison"]["task"] == "arc"
    assert doc["gaia"] == {"not_comparable": "candidate 'A' is not a candidate of task gaia (candidates: B)"}


def test_markdown_puts_each_task_under_its_heading() -> None:
    code, out, _ = run([*ARGS, "--baseline", "B", "--candidate", "A", "--format", "markdown"])
    assert code == 0
    assert out.index("## Task `arc`") < out.index("candidate_better") < out.index("## Task `gaia`")
    assert "Not comparable: candidate 'A' is not a candidate of task gaia (candidates: B)" in out


def test_require_winner_fails_on_a_task_not_compared() -> None:
    code, _, err = run([*ARGS, "--baseline", "B", "--candidate", "A", "--format", "json", "--require-winner"])
    assert code == 3
    assert " ".join(err.split()) == "gate failed: task gaia: not comparable"


def test_task_names_the_one_task_compared(tmp_path: Path) -> None:
    code, out, _ = run([*ARGS, "--baseline", "B", "--candidate", "A", "--format", "json", "--task", "arc"])
    assert code == 0
    assert json.loads(out)["comparison"]["task"] == "arc"
    code, _, err = run([*ARGS, "--baseline", "B", "--candidate", "A", "--task", "intention"])
    assert code == 2
    assert "task 'intention' is not one of them" in " ".join(err.split())


def test_out_with_several_tasks_needs_task(tmp_path: Path) -> None:
    code, _, err = run([*ARGS, "--baseline", "B", "--candidate", "A", "--out", str(tmp_path / "out")])
    assert code == 2
    assert " ".join(err.split()) == (
        "error: --out holds one comparison and the inputs hold 2 tasks (arc, gaia): give --task NAME"
    )
    code, _, _ = run([*ARGS, "--baseline", "B", "--candidate", "A", "--task", "arc", "--out", str(tmp_path / "out")])
    assert code == 0
    table = pl.read_parquet(tmp_path / "out" / "comparison.parquet")
    assert table.select("task", "verdict").row(0) == ("arc", "candidate_better")
    assert pl.read_parquet(tmp_path / "out" / "summary.parquet").get_column("passed").to_list() == [10, 0]
