"""compare works within one task (issue 40): a multi-task report needs ``task=``; no shared case, no ranking.

The multi-task report is built from two ordinary single-task audits, as the task contract says: its
``meta["tasks"]`` names them and ``by_task()`` returns them.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest

import evalframe as ef
from evalframe.errors import OptionError


def one_task(grades: dict[str, list[int]]) -> ef.AuditReport:
    n = len(next(iter(grades.values())))
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": [f"c{i + 1}" for i in range(n)]}), candidates=list(grades))
    rows = [(name, f"c{i + 1}", g) for name, got in grades.items() for i, g in enumerate(got)]
    return ef.audit(plan, pl.DataFrame(rows, schema=["candidate", "case_id", "passed"], orient="row"))


@pytest.fixture
def two_tasks(monkeypatch: pytest.MonkeyPatch) -> tuple[ef.AuditReport, dict[str, ef.AuditReport]]:
    parts = {
        "belief": one_task({"A": [1] * 10, "B": [0] * 10}),
        "desire": one_task({"A": [1, 0, 1, 0], "B": [1, 0, 1, 1], "C": [0, 0, 0, 0]}),
    }
    combined = replace(parts["belief"], meta={**parts["belief"].meta, "tasks": ["belief", "desire"]})
    monkeypatch.setattr(ef.AuditReport, "by_task", lambda self: parts if self is combined else {"": self})
    return combined, parts


def test_a_report_of_several_tasks_needs_the_task_and_lists_them(two_tasks) -> None:
    combined, _ = two_tasks
    with pytest.raises(OptionError) as caught:
        ef.compare(combined, baseline="B", candidate="A")
    assert caught.value.option == "task"
    assert caught.value.reason == (
        "the report holds 2 tasks (belief, desire): candidates are compared within one; compare needs task="
    )
    with pytest.raises(OptionError, match="task 'intention' is not one of them"):
        ef.compare(combined, baseline="B", candidate="A", task="intention")


def test_the_task_named_is_compared_alone_and_its_table_names_it(two_tasks) -> None:
    combined, parts = two_tasks
    belief = ef.compare(combined, baseline="B", candidate="A", task="belief")
    alone = ef.compare(parts["belief"], baseline="B", candidate="A")
    assert belief.table.columns[0] == "task"
    assert belief.table.item(0, "task") == "belief"
    assert belief.table.drop("task").equals(alone.table)
    assert belief.verdict == "candidate_better"  # 10 of 10 against 0 of 10: exact McNemar p = 2 · 0.5^10
    desire = ef.compare(combined, baseline="B", candidate="A", task="desire")
    assert (desire.verdict, desire.table.item(0, "pairs_planned")) == ("no_supported_winner", 4)


def test_a_candidate_absent_from_the_task_is_refused_naming_the_task(two_tasks) -> None:
    combined, _ = two_tasks
    with pytest.raises(ValueError, match=r"^candidate 'C' is not a candidate of task belief \(candidates: A, B\)$"):
        ef.compare(combined, baseline="A", candidate="C", task="belief")


def test_a_report_of_one_task_needs_no_task_and_refuses_another() -> None:
    report = one_task({"A": [1, 1], "B": [0, 1]})
    assert "task" not in ef.compare(report, baseline="B", candidate="A").table.columns
    with pytest.raises(OptionError) as caught:
        ef.compare(report, baseline="B", candidate="A", task="belief")
    assert caught.value.reason == "task 'belief' is not a task of the report (it holds one unnamed task)"


def test_candidates_sharing_no_case_are_not_comparable_and_never_ranked() -> None:
    # Each candidate planned on its own cases (every_eval_ever: one model's ARC against another's GAIA).
    plan = ef.Plan.from_frame(pl.DataFrame({"candidate": ["A", "A", "B", "B"], "case_id": ["a1", "a2", "g1", "g2"]}))
    results = pl.DataFrame(
        {"candidate": ["A", "A", "B", "B"], "case_id": ["a1", "a2", "g1", "g2"], "passed": [1, 1, 0, 0]}
    )
    c = ef.compare(ef.audit(plan, results), baseline="B", candidate="A")
    assert c.verdict == "no_supported_winner"
    assert c.reasons == ["not comparable: A and B share no planned case; no pair, hence no difference and no ranking"]
    assert c.table.select("pairs_planned", "quality_difference").row(0) == (0, None)
