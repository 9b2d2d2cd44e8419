"""``evalframe audit --aggregate macro|micro``: the declared aggregate across tasks, after the audit (issue 40).

The multi-task report is built from single-task audits (the task contract): ``meta["tasks"]`` names them
and ``by_task()`` returns them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import evalframe as ef
from evalframe.cli import auditing
from evalframe.compare.aggregate import aggregate_difference
from tests.cli.support import ORBIT_ARGS, run
from tests.test_aggregate import scored_task, three_tasks


@pytest.fixture
def tasks(monkeypatch: pytest.MonkeyPatch) -> dict[str, ef.AuditReport]:
    parts = three_tasks()
    combined = replace(parts["belief"], meta={**parts["belief"].meta, "tasks": ["belief", "desire", "intention"]})
    monkeypatch.setattr(ef.AuditReport, "by_task", lambda self: parts if self is combined else {"": self})
    monkeypatch.setattr(auditing, "build_report", lambda **_: combined)
    return parts


def test_json_holds_the_report_and_the_declared_aggregate(tasks: dict[str, ef.AuditReport]) -> None:
    code, out, _ = run([*ORBIT_ARGS, "--aggregate", "macro", "--format", "json"])
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"report", "aggregate"}
    assert doc["aggregate"] == json.loads(json.dumps(ef.aggregate(tasks).to_dicts()))
    # C is audited on belief only: named with the tasks it lacks, and no number
    assert [(r["candidate"], r["missing_tasks"], r["estimate"]) for r in doc["aggregate"]][2] == (
        "C",
        ["desire", "intention"],
        None,
    )
    assert [r["missing_tasks"] for r in doc["aggregate"]][:2] == [[], []]
    assert doc["aggregate"][0]["weights"] == [1 / 3, 1 / 3, 1 / 3]


def test_markdown_states_the_weights_beside_each_estimate(tasks: dict[str, ef.AuditReport]) -> None:
    code, out, _ = run([*ORBIT_ARGS, "--aggregate", "micro", "--format", "markdown"])
    assert code == 0
    section = out[out.index("## declared aggregate (micro of pass_rate_scored across tasks)") :]
    # B: 12 passed of 22 scored; weights by scored units 10, 4 and 8 of 22.
    assert "| B | 0.545 \\[" in section  # Markdown escapes the bracket
    assert "| belief 0.455, desire 0.182, intention 0.364 | 12/22 |" in section


def test_one_task_has_no_aggregate() -> None:
    code, _, err = run([*ORBIT_ARGS, "--aggregate", "macro"])
    assert code == 2
    assert "an aggregate is across two or more tasks, got 1" in " ".join(err.split())


def test_compare_prints_each_task_then_the_declared_difference(tasks: dict[str, ef.AuditReport]) -> None:
    args = ["compare", *ORBIT_ARGS[1:], "--baseline", "B", "--candidate", "A", "--aggregate", "macro"]
    code, out, _ = run([*args, "--format", "json"])
    assert code == 0
    doc = json.loads(out)
    assert list(doc["tasks"]) == ["belief", "desire", "intention"]
    expected = aggregate_difference(tasks, baseline="B", candidate="A")
    assert doc["aggregate"] == json.loads(json.dumps(expected.to_dicts()))
    code, out, _ = run([*args, "--format", "markdown"])
    assert code == 0
    section = out[out.index("## declared aggregate (macro of the paired difference across tasks)") :]
    assert "| A − B | 0.192 \\[" in section  # (0.2 + 0.25 + 0.125)/3
    assert section.rstrip().endswith("| belief 0.333, desire 0.333, intention 0.333 | 22 pairs |")


def test_compare_aggregate_refuses_a_side_missing_from_a_task(tasks: dict[str, ef.AuditReport]) -> None:
    args = ["compare", *ORBIT_ARGS[1:], "--baseline", "C", "--candidate", "A", "--aggregate", "macro"]
    code, _, err = run(args)
    assert code == 2
    assert (
        "error: baseline 'C' was not audited in task desire, intention: the paired difference is aggregated only "
        "across tasks that hold both sides"
    ) in " ".join(err.split())
    assert "--aggregate" not in err


def test_the_terminal_writes_an_aggregate_of_a_task_with_nothing_scored_as_its_one_null_symbol(tmp_path: Path) -> None:
    # B has no row in t2: its t2 rate is undefined, so its macro estimate, interval and se are too (not 0).
    plan, ledger = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("task,case_id\nt1,c1\nt1,c2\nt1,c3\nt2,c1\nt2,c2\n")
    ledger.write_text(
        "task,candidate,case_id,passed\nt1,A,c1,1\nt1,A,c2,0\nt1,A,c3,1\nt2,A,c1,1\nt2,A,c2,1\n"
        "t1,B,c1,1\nt1,B,c2,1\nt1,B,c3,1\n"
    )
    args = ["audit", "--plan", str(plan), "--results", str(ledger), "--candidates", "A,B", "--aggregate", "macro"]
    code, out, _ = run(args)
    assert code == 0
    rows = out[out.index("declared aggregate (macro of pass_rate_scored across tasks)") :].splitlines()
    b = next(line for line in rows if line.startswith("│ B "))
    assert [cell.strip() for cell in b.strip("│").split("│")] == ["B", "—", "—", "t1 0.5, t2 0.5", "3/3"]
    a = next(line for line in rows if line.startswith("│ A "))
    assert a.split("│")[2].strip().startswith("0.833 [")  # (2/3 + 2/2) / 2


def test_numeric_grades_print_their_mean_score_aggregate_with_scored_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    # The aggregate of numeric grades without a threshold was a TypeError (no passed count to sum); the command
    # now prints the mean_score the headline reads, over the units scored, as ef.aggregate gives it.
    parts = {"t1": scored_task({"A": [0.2, 0.9, 0.5]}), "t2": scored_task({"A": [0.4, 0.6]})}
    combined = replace(parts["t1"], meta={**parts["t1"].meta, "tasks": ["t1", "t2"]})
    monkeypatch.setattr(ef.AuditReport, "by_task", lambda self: parts if self is combined else {"": self})
    monkeypatch.setattr(auditing, "build_report", lambda **_: combined)
    code, out, err = run([*ORBIT_ARGS, "--aggregate", "macro", "--format", "markdown"])
    assert code == 0, err
    section = out[out.index("## declared aggregate (macro of mean_score across tasks)") :]
    assert section.splitlines()[2] == "| candidate | estimate \\[95% CI\\] | se | weights | scored summed over tasks |"
    assert section.splitlines()[4].endswith("| t1 0.5, t2 0.5 | 5 |")
    code, out, _ = run([*ORBIT_ARGS, "--aggregate", "macro", "--format", "json"])
    assert json.loads(out)["aggregate"] == json.loads(json.dumps(ef.aggregate(parts).to_dicts()))
