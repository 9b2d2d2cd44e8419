"""A batch of several tasks renders as one section per task, each the task's own single-task report.

The mapping task -> report is built from ordinary single-task audits (what ``AuditReport.by_task`` returns
for a multi-task audit, tasks-contract.md item 4). Counts by hand:

- belief: cases q1..q4; A passes q1, q2, fails q3, has no row for q4 (2/3 scored, coverage 3/4);
  B passes q1 and fails q2..q4 (1/4).
- desire: cases d1, d2; A passes d1, fails d2 (1/2); B passes both (2/2).
- intention: case i1; only A, which passes it (1/1).
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from rich.console import Console

import evalframe as ef
from evalframe.cli import main
from evalframe.errors import OptionError
from evalframe.report import (
    AuditReport,
    TasksView,
    View,
    build_task_views,
    build_view,
    print_view,
    render_github,
    render_html,
    render_json,
    render_markdown,
)

LEDGER = {"candidate": pl.String, "case_id": pl.String, "passed": pl.Int64}
BATCH = "3 tasks × 2 candidates: rates are per task; no number pools tasks"
#: The words every ranking note holds (evalframe.report.sentences.ranking_note).
RANKING = "the highest pass_rate_scored"


def audit(cases: list[str], candidates: list[str], rows: list[tuple[str, str, int]]) -> AuditReport:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=candidates)
    return ef.audit(plan, pl.DataFrame(rows, schema=LEDGER, orient="row"))


@pytest.fixture(scope="module")
def reports() -> dict[str, AuditReport]:
    """Given out of natural order: the views put them in order."""
    belief = audit(
        ["q1", "q2", "q3", "q4"],
        ["A", "B"],
        [("A", "q1", 1), ("A", "q2", 1), ("A", "q3", 0)]
        + [("B", "q1", 1), ("B", "q2", 0), ("B", "q3", 0), ("B", "q4", 0)],
    )
    desire = audit(["d1", "d2"], ["A", "B"], [("A", "d1", 1), ("A", "d2", 0), ("B", "d1", 1), ("B", "d2", 1)])
    intention = audit(["i1"], ["A"], [("A", "i1", 1)])
    return {"intention": intention, "desire": desire, "belief": belief}


@pytest.fixture(scope="module")
def views(reports: dict[str, AuditReport]) -> TasksView:
    return build_task_views(reports)


def sections(text: str, heading: str) -> tuple[list[str], dict[str, list[str]]]:
    """The lines before the first task heading, and each task's lines (heading excluded) by its name."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(heading)]
    by_task = {}
    for at, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        name = lines[at].removeprefix(heading).strip().strip("`")
        by_task[name] = lines[at + 1 : end]
    return lines[: starts[0]], by_task


def demoted(single: str) -> list[str]:
    """A single-task Markdown report under its title, each heading one level down (as inside a task section)."""
    return ["#" + line if line.startswith("#") else line for line in single.splitlines()[2:]]


def test_markdown_has_one_section_per_task_in_natural_order_each_the_tasks_own_report(
    reports: dict[str, AuditReport], views: TasksView
) -> None:
    text = render_markdown(views)
    head, by_task = sections(text, "## task ")
    assert head[:6] == ["# evalframe audit: A, B", "", BATCH, "", "## Overview (one row per task and candidate)", ""]
    # one row per (task, candidate), counted by hand (module docstring): planned, scored, rate [CI], range
    rows = [(line.split(" \\[")[0], line.rsplit("| \\[", 1)[1]) for line in head[8:13]]
    assert rows == [
        ("| belief | A | 4 | 3 | 0.667", "0.5, 0.75\\] |"),
        ("| belief | B | 4 | 4 | 0.25", "0.25, 0.25\\] |"),
        ("| desire | A | 2 | 2 | 0.5", "0.5, 0.5\\] |"),
        ("| desire | B | 2 | 2 | 1.0", "1.0, 1.0\\] |"),
        ("| intention | A | 1 | 1 | 1.0", "1.0, 1.0\\] |"),
    ]
    assert head[13:] == [""]
    assert list(by_task) == ["belief", "desire", "intention"]
    for task, lines in by_task.items():
        own = demoted(render_markdown(build_view(reports[task])))
        assert lines[1:] == own + ([""] if task != "intention" else [])
    assert by_task["belief"][5].startswith("- A: pass_rate_scored 0.667 = 2 passed / 3 scored, and only 3 of 4")
    assert by_task["belief"][6].startswith("- B: pass_rate_scored 0.25 = 1 passed / 4 scored;")
    assert by_task["desire"][5].startswith("- A: pass_rate_scored 0.5 = 1 passed / 2 scored;")
    assert by_task["desire"][6].startswith("- B: pass_rate_scored 1.0 = 2 passed / 2 scored;")
    assert by_task["intention"][5].startswith("- A: pass_rate_scored 1.0 = 1 passed / 1 scored;")


def test_a_ranking_sentence_only_ever_compares_candidates_within_one_task(views: TasksView) -> None:
    head, by_task = sections(render_markdown(views), "## task ")
    assert not any(RANKING in line for line in head)
    ranked = {task: [line for line in lines if RANKING in line] for task, lines in by_task.items()}
    assert ranked["belief"] == [
        "**A has the highest pass_rate_scored (0.667), computed on only 3 of 4 planned units, and no other "
        "candidate's best case is above its worst case (0.5): missing grades alone cannot reverse the order "
        "(sampling noise still can; see the intervals).**"
    ]
    assert ranked["desire"][0].startswith("**B has the highest pass_rate_scored (1.0), and no other")
    assert ranked["intention"] == []  # one candidate: nothing to rank
    github_head, github = sections(render_github(views), "#### task ")
    assert not any(RANKING in line for line in github_head)
    assert [sum(RANKING in line for line in lines) for lines in github.values()] == [1, 1, 0]


def test_github_summary_gives_each_task_its_own_rows(views: TasksView) -> None:
    head, by_task = sections(render_github(views), "#### task ")
    assert head == ["### evalframe audit: A, B", "", BATCH, ""]
    assert list(by_task) == ["belief", "desire", "intention"]
    rows = {task: [line for line in lines if line.startswith(("| A |", "| B |"))] for task, lines in by_task.items()}
    assert rows == {
        "belief": [
            "| A | 3 / 4 | 75% | 0.667 (2/3) | \\[0.5, 0.75\\] | 1 |",
            "| B | 4 / 4 | 100% | 0.250 (1/4) | \\[0.25, 0.25\\] | 0 |",
        ],
        "desire": [
            "| A | 2 / 2 | 100% | 0.500 (1/2) | \\[0.5, 0.5\\] | 0 |",
            "| B | 2 / 2 | 100% | 1.000 (2/2) | \\[1.0, 1.0\\] | 0 |",
        ],
        "intention": ["| A | 1 / 1 | 100% | 1.000 (1/1) | \\[1.0, 1.0\\] | 0 |"],
    }
    assert by_task["belief"][-2:] == ["Notes: `missing_unit` 1.", ""]


def test_json_holds_each_tasks_own_document_keyed_by_task(reports: dict[str, AuditReport], views: TasksView) -> None:
    doc = json.loads(render_json(views))
    assert list(doc) == ["overview", "tasks"]
    keys = ("task", "candidate", "planned", "scored", "pass_rate_scored", "pass_rate_planned", "pass_rate_upper")
    assert [tuple(r[k] for k in keys) for r in doc["overview"]] == [
        ("belief", "A", 4, 3, 2 / 3, 2 / 4, 3 / 4),
        ("belief", "B", 4, 4, 1 / 4, 1 / 4, 1 / 4),
        ("desire", "A", 2, 2, 1 / 2, 1 / 2, 1 / 2),
        ("desire", "B", 2, 2, 1.0, 1.0, 1.0),
        ("intention", "A", 1, 1, 1.0, 1.0, 1.0),
    ]
    assert list(doc["tasks"]) == ["belief", "desire", "intention"]
    for task, one in doc["tasks"].items():
        assert one == json.loads(render_json(build_view(reports[task])))
    belief = {row["candidate"]: row for row in doc["tasks"]["belief"]["summary"]}
    assert (belief["A"]["passed"], belief["A"]["scored"], belief["A"]["planned"]) == (2, 3, 4)
    assert (belief["B"]["passed"], belief["B"]["scored"], belief["B"]["planned"]) == (1, 4, 4)
    assert [row["candidate"] for row in doc["tasks"]["intention"]["summary"]] == ["A"]


def test_html_has_a_task_index_and_one_anchored_section_per_task(views: TasksView) -> None:
    text = render_html(views)
    index = re.search(r'<nav class="tasks">(.*?)</nav>', text)
    assert index is not None
    assert re.findall(r'href="#([^"]+)">([^<]+)</a>', index.group(1)) == [
        ("task-1-belief", "belief"),
        ("task-2-desire", "desire"),
        ("task-3-intention", "intention"),
    ]
    tasks = re.findall(r'<section id="(task-\d-[a-z]+)"><h2>task ([a-z]+)</h2>', text)
    assert tasks == [("task-1-belief", "belief"), ("task-2-desire", "desire"), ("task-3-intention", "intention")]
    ids = re.findall(r' id="([^"]+)"', text)
    assert len(ids) == len(set(ids))  # every anchor is unique in the page
    parts = ("headline", "headline-hatch", "funnel", "funnel-hatch", "rates", "missing", "slices", "notes")
    assert [i for i in ids if i.startswith("task-2-")] == [
        "task-2-desire",
        *(f"task-2-desire-{part}" for part in (*parts, "provenance")),
    ]
    starts = [text.index(f'id="{anchor}"') for anchor in ("task-1-belief", "task-2-desire", "task-3-intention")]
    assert text.index(BATCH) < starts[0] < starts[1] < starts[2]
    assert RANKING not in text[: starts[0]]
    belief = re.sub(r"<[^>]+>", "", text[starts[0] : starts[1]])  # the words, without the counts' links
    assert "passed / scored = 2 / 3" in belief and "passed / scored = 1 / 4" in belief


def test_terminal_gives_a_rule_per_task_then_its_headline_and_tables(views: TasksView) -> None:
    console = Console(width=120, record=True, file=io.StringIO())
    print_view(views, console)
    lines = console.export_text().splitlines()
    assert lines[:2] == ["evalframe audit: A, B", BATCH]
    rules = [i for i, line in enumerate(lines) if re.match(r"task \w+ ─+$", line)]
    assert [lines[i].split()[1] for i in rules] == ["belief", "desire", "intention"]
    assert not any(RANKING in line for line in lines[: rules[0]])
    belief = "\n".join(lines[rules[0] : rules[1]])
    assert "0.667 (2/3 scored)" in belief and "0.250 (1/4 scored)" in belief and "missing_unit" in belief
    intention = "\n".join(lines[rules[2] :])
    assert "1.000 (1/1 scored)" in intention and RANKING not in intention
    plan = "4 cases × 2 candidates × 1 trial(s) = 8 planned units · retry policy first · evalframe "
    assert lines[rules[0] + 1] == plan + str(reports_meta_version(views))


def reports_meta_version(views: TasksView) -> object:
    """The evalframe version the first task's report records."""
    return views.tasks[0][1].data["meta"]["evalframe_version"]


def test_task_names_are_escaped_in_every_format(reports: dict[str, AuditReport]) -> None:
    hostile = ["_x*y_", "<script>alert(1)</script>", "evil\u202egnp"]
    views = build_task_views(dict(zip(hostile, reports.values(), strict=True)))
    markdown = render_markdown(views)
    assert [line for line in markdown.splitlines() if line.startswith("## task ")] == [
        "## task `<script>alert(1)</script>`",  # a code span: shown as written, never run
        "## task `_x*y_`",  # no emphasis inside a code span
        "## task `evil\\u202egnp`",  # the override written as its escape: the line reads as written
    ]
    assert "\u202e" not in markdown and "\u202e" not in render_github(views)
    html = render_html(views)
    assert "<script>" not in html and "<h2>task &lt;script&gt;alert(1)&lt;/script&gt;</h2>" in html
    assert 'id="task-1-script-alert-1-script"' in html
    console = Console(width=120, record=True, file=io.StringIO())
    print_view(views, console)
    shown = console.export_text()
    assert "\u202e" not in shown and "task evil\\u202egnp ─" in shown
    backtick = render_markdown(build_task_views({"a`b": reports["desire"], "c": reports["intention"]}))
    assert "## task ``a`b``" in backtick.splitlines()


def test_every_task_is_gated_and_the_failures_named_by_task(reports: dict[str, AuditReport]) -> None:
    views = build_task_views(reports, min_coverage=0.9)
    gate = views.gate
    assert gate is not None and not gate.passed
    assert gate.below == (("belief/A", 0.75),)
    assert gate.checks() == ["scored_coverage below 0.9: belief/A (0.75)"]
    doc = json.loads(render_json(views))
    assert [doc["tasks"][t]["gate"]["passed"] for t in ("belief", "desire", "intention")] == [False, True, True]
    assert build_task_views(reports).gate is None


def combined(reports: dict[str, AuditReport], monkeypatch: pytest.MonkeyPatch) -> AuditReport:
    """A report whose meta lists the tasks, and whose by_task gives the mapping (as the multi-task audit will)."""
    monkeypatch.setattr(AuditReport, "by_task", lambda self: reports)
    first = reports["belief"]
    return dataclasses.replace(first, meta={**first.meta, "tasks": ["belief", "desire", "intention"]})


def test_a_report_listing_several_tasks_renders_and_writes_per_task(
    reports: dict[str, AuditReport], views: TasksView, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = combined(reports, monkeypatch)
    assert isinstance(report.view(), TasksView)
    assert report.to_markdown() == render_markdown(views)
    assert list(report.to_dict()["tasks"]) == ["belief", "desire", "intention"]
    assert report.to_html() == render_html(views)
    assert "<h3>task desire</h3>" in report._repr_html_()
    report.write(tmp_path / "out")
    written = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert list(written["tasks"]) == ["belief", "desire", "intention"]
    assert (tmp_path / "out" / "report.md").read_text(encoding="utf-8") == render_markdown(views)
    comparison = ef.compare(reports["belief"], baseline="B", candidate="A", min_coverage=0.5)
    with pytest.raises(OptionError) as refused:
        report.view(comparison)
    assert refused.value.option == "comparison"


def test_one_task_renders_as_today_without_asking_for_tasks(reports: dict[str, AuditReport]) -> None:
    one = reports["desire"]
    named = dataclasses.replace(one, meta={**one.meta, "tasks": ["desire"]})
    view = named.view()  # the by_task stub would raise if it were asked
    assert isinstance(view, View)
    assert render_markdown(view) == render_markdown(build_view(named))


def test_the_command_prints_a_multi_task_report_per_task_and_gates_every_task(
    reports: dict[str, AuditReport], views: TasksView, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = combined(reports, monkeypatch)

    def built(**_: Any) -> AuditReport:
        return report

    monkeypatch.setattr("evalframe.cli.auditing.build_report", built)
    plan, results = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("case_id\nq1\n", encoding="utf-8")
    results.write_text("candidate,case_id,passed\nA,q1,1\n", encoding="utf-8")
    args = ["audit", "--plan", str(plan), "--results", str(results)]
    result = CliRunner().invoke(main, [*args, "--format", "markdown"])
    assert result.exit_code == 0 and result.stdout == render_markdown(views)
    result = CliRunner().invoke(main, [*args, "--format", "github", "--min-coverage", "0.9"])
    assert result.exit_code == 3
    assert result.stderr.startswith("gate failed: scored_coverage below 0.9: belief/A (0.75)")
    assert result.stdout == render_github(build_task_views(reports, min_coverage=0.9))


def test_the_terminal_overview_writes_a_rate_of_nothing_scored_as_its_one_null_symbol() -> None:
    # desire: B has no row (0 of 2 scored): pass_rate_scored is undefined, its range [0, 1] (SPEC §4).
    belief = audit(["q1", "q2"], ["A", "B"], [("A", "q1", 1), ("A", "q2", 0), ("B", "q1", 1), ("B", "q2", 1)])
    desire = audit(["d1", "d2"], ["A", "B"], [("A", "d1", 1), ("A", "d2", 1)])
    console = Console(width=120, record=True, file=io.StringIO())
    print_view(build_task_views({"belief": belief, "desire": desire}), console)
    row = next(line for line in console.export_text().splitlines() if line.startswith("│ desire │ B "))
    assert [cell.strip() for cell in row.strip("│").split("│")] == ["desire", "B", "2", "0", "—", "[0.0, 1.0]"]
