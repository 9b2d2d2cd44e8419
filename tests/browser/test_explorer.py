"""report.html's explorer in headless Chromium: every count and rate opens exactly its units; filters live in the URL.

Expected units are derived here from the input files and frames, with the SPEC's meaning of each count
(SPEC §2: scored = passed + failed for a pass/fail ledger; attempted, completed and with_output hold every
unit with a row when the ledger gives no statuses; planned holds every unit), never from evalframe's output.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import polars as pl
import pytest

import evalframe as ef
from evalframe.compare import compare
from tests.conftest import FIXTURES

ORBIT = FIXTURES / "orbit_desk"
#: Units: (task, candidate, case_id, trial) -> outcome (passed, failed or missing).
Units = dict[tuple[str, str, str, int], str]

#: SPEC §2 for a ledger of pass/fail rows without statuses: each count's outcomes.
SPEC_COUNTS = {
    "planned": {"passed", "failed", "missing"},
    "attempted": {"passed", "failed"},
    "completed": {"passed", "failed"},
    "with_output": {"passed", "failed"},
    "scored": {"passed", "failed"},
    "passed": {"passed"},
    "failed": {"failed"},
    "missing": {"missing"},
    "passed_or_ungraded": {"passed", "missing"},  # pass_rate_upper's numerator: passed + planned - scored
}
#: orbit_desk's plan.csv: each case's case_type (the slice of the slice table's links).
ORBIT_TYPES = {"quote": "sales", "refund": "billing", "privacy": "policy", "handoff": "escalation"}


def outcomes_of(cases: list[tuple[str, str]], candidates: list[str], rows: list[dict[str, Any]], trials: int) -> Units:
    """Every planned unit's outcome from the plan's (task, case) list and the ledger's rows."""
    units = {(t, c, case, n): "missing" for t, case in cases for c in candidates for n in range(1, trials + 1)}
    for row in rows:
        key = (row.get("task", ""), row["candidate"], row["case_id"], int(row.get("trial", 1)))
        units[key] = "passed" if int(row["passed"]) == 1 else "failed"
    return units


def listed_units(page: Any) -> set[tuple[str, str, str, int]]:
    """The units the explorer's table lists, on every page."""
    found: set[tuple[str, str, str, int]] = set()
    while True:
        header = page.eval_on_selector_all("#ef-units thead th", "cells => cells.map(c => c.textContent)")
        rows = page.eval_on_selector_all(
            "#ef-units tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
        )
        for row in rows:
            cells = dict(zip(header, row, strict=True))
            found.add((cells.get("task", ""), cells["candidate"], cells["case_id"], int(cells["trial"])))
        next_button = page.locator("[data-pager=page-next]")
        if next_button.is_disabled():
            return found
        next_button.click()


def shown(page: Any, fragment: str) -> None:
    """Wait until the explorer shows ``fragment`` (it renders on the hashchange event, after the click)."""
    page.wait_for_function("f => document.getElementById('ef-explorer').dataset.fragment === f", arg=fragment)


def check_every_link(page: Any, units: Units, links: str = "a.units", case_type: dict[str, str] | None = None) -> int:
    """Click every count and rate link (or bar: ``links="svg a"``); each lists exactly its candidate's units of its
    outcomes (and task, and ``slice.case_type`` value, read off ``case_type``: case id -> plan.csv's case_type)."""
    hrefs = page.eval_on_selector_all(links, "links => links.map(a => [a.getAttribute('href'), a.textContent])")
    assert hrefs
    for href, text in hrefs:
        fields = dict(part.split("=", 1) for part in href[1:].split("&"))
        task, candidate, outcome = (unquote(fields.get(k, "")) for k in ("task", "candidate", "outcome"))
        kind = unquote(fields.get("slice.case_type", ""))
        assert set(fields) <= {"task", "candidate", "outcome", "slice.case_type"}, href
        expected = {
            key
            for key, seen in units.items()
            if key[1] == candidate
            and (not task or key[0] == task)
            and seen in SPEC_COUNTS.get(outcome, set())
            and (not kind or (case_type or {}).get(key[2]) == kind)
        }
        page.locator(f'{links}[href="{href}"]').first.click()
        shown(page, href)
        assert int(page.text_content("#ef-count") or "") == len(expected), href
        assert listed_units(page) == expected, href
        if text.isdigit():  # a count in a table: the same number of units
            assert int(text) == len(expected), href
    return len(hrefs)


def orbit_page() -> str:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    report = ef.audit(plan, ORBIT / "results.csv", slices=["case_type"])
    return report.to_html(compare(report, baseline="B", candidate="A"))


def orbit_units() -> Units:
    with (ORBIT / "plan.csv").open(encoding="utf-8") as f:
        cases = [("", row["case_id"]) for row in csv.DictReader(f)]
    with (ORBIT / "results.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return outcomes_of(cases, ["A", "B"], rows, trials=1)


#: A batch of two tasks, two candidates, two trials per case.
TASK_CASES = [("belief", "q1"), ("belief", "q2"), ("belief", "q3"), ("desire", "d1"), ("desire", "d2")]
TASK_ROWS = [
    ("A", "q1", 1, 1), ("A", "q1", 2, 1), ("B", "q1", 1, 1), ("B", "q1", 2, 1),
    ("A", "q2", 1, 1), ("A", "q2", 2, 0), ("B", "q2", 1, 0), ("B", "q2", 2, 1),
    ("A", "q3", 1, 0), ("B", "q3", 1, 0), ("B", "q3", 2, 0),
    ("A", "d1", 1, 1), ("A", "d1", 2, 1), ("B", "d1", 1, 1), ("B", "d1", 2, 1),
    ("B", "d2", 1, 0), ("B", "d2", 2, 0),
]  # fmt: skip


def tasks_page() -> str:
    cases = pl.DataFrame({"task": [t for t, _ in TASK_CASES], "case_id": [c for _, c in TASK_CASES]})
    plan = ef.Plan.from_frame(cases, candidates=["A", "B"], trials=2)
    ledger = pl.DataFrame(TASK_ROWS, schema=["candidate", "case_id", "trial", "passed"], orient="row")
    return ef.audit(plan, ledger).to_html()


def tasks_units() -> Units:
    task_of = {case: task for task, case in TASK_CASES}
    rows = [{"task": task_of[c], "candidate": a, "case_id": c, "trial": t, "passed": p} for a, c, t, p in TASK_ROWS]
    return outcomes_of(TASK_CASES, ["A", "B"], rows, trials=2)


def shot(page: Any, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.locator("#explore").screenshot(path=str(path))
    assert path.stat().st_size > 1000
    return path


# --- one click from a number to its units ---------------------------------------------------------


def test_every_count_and_rate_of_orbit_desk_opens_exactly_its_units(
    open_page: Callable[..., Any], tmp_path: Path
) -> None:
    page = open_page(orbit_page())
    assert int(page.text_content("#ef-count") or "") == 8  # 4 cases x 2 candidates, nothing filtered
    # funnel: 13 counts x 2; outcomes table: 3 outcomes + planned, x 2; rates: 5 x 2; cards: A (2 of 4 scored,
    # 2 missing: range, pass_rate_scored and its passed / scored, scored / planned, coverage, the two bounds with
    # their numerators and denominators, missing) 14, B (complete: rate, passed / scored, planned, coverage) 5;
    # slice table: 4 case_types x 2 candidates x (5 counts + 3 rates)
    linked = check_every_link(page, orbit_units(), case_type=ORBIT_TYPES)
    # (A's pass_rate_scored of policy and escalation is null: no units scored, no link)
    assert linked == 13 * 2 + 4 * 2 + 5 * 2 + 14 + 5 + 4 * 2 * 8 - 2
    # the headline chart's bars: A passed, missing; B passed, failed (results.csv)
    assert check_every_link(page, orbit_units(), links="svg a") == 4
    page.locator('a.units[href="#candidate=A&outcome=missing"]').first.click()
    shown(page, "#candidate=A&outcome=missing")
    assert listed_units(page) == {("", "A", "handoff", 1), ("", "A", "privacy", 1)}
    shot(page, tmp_path, "orbit_missing_of_A")


def test_every_count_of_a_batch_of_tasks_opens_exactly_its_units(open_page: Callable[..., Any], tmp_path: Path) -> None:
    page = open_page(tasks_page())
    units = tasks_units()
    assert int(page.text_content("#ef-count") or "") == len(units) == 20
    # 2 tasks x 2 candidates: 13 funnel counts, 4 outcome columns, 5 rates; per task A's card is incomplete
    # (belief: q3 trial 2 missing; desire: d2 missing) with 14 links, B's complete with 5 (see the orbit test)
    assert check_every_link(page, units) == 2 * 2 * (13 + 4 + 5) + 2 * (14 + 5)
    # bar segments, one per outcome present: belief A passed, failed, missing; B passed, failed; desire A passed,
    # missing; B passed, failed (TASK_ROWS)
    assert check_every_link(page, units, links="svg a") == 9
    shot(page, tmp_path, "tasks_after_clicks")


# --- the URL fragment -----------------------------------------------------------------------------------


def test_filters_set_by_hand_survive_a_reload(open_page: Callable[..., Any], tmp_path: Path) -> None:
    page = open_page(orbit_page())
    page.select_option("#ef-candidate", "B")
    page.select_option("#ef-outcome", "scored")
    page.select_option("#ef-slice-case_type", "escalation")
    assert listed_units(page) == {("", "B", "handoff", 1)}
    page.fill("#ef-q", "priv")
    page.press("#ef-q", "Enter")
    assert int(page.text_content("#ef-count") or "") == 0  # privacy is a policy case, not escalation
    page.select_option("#ef-slice-case_type", "")
    assert listed_units(page) == {("", "B", "privacy", 1)}
    assert page.evaluate("location.hash") == "#candidate=B&outcome=scored&q=priv"
    page.reload()
    values = [page.input_value(s) for s in ("#ef-candidate", "#ef-outcome", "#ef-slice-case_type", "#ef-q")]
    assert values == ["B", "scored", "", "priv"]
    assert listed_units(page) == {("", "B", "privacy", 1)}
    shot(page, tmp_path, "orbit_after_reload")


def test_a_shared_link_opens_its_view(open_page: Callable[..., Any]) -> None:
    page = open_page(tasks_page(), fragment="#task=desire&outcome=missing")
    assert listed_units(page) == {k for k, seen in tasks_units().items() if k[0] == "desire" and seen == "missing"}
    assert page.input_value("#ef-task") == "desire"


# --- side by side: different only ------------------------------------------------------------------------


def side_by_side(page: Any) -> dict[tuple[str, str], tuple[str, str]]:
    header = page.eval_on_selector_all("#ef-pairs thead th", "cells => cells.map(c => c.textContent)")
    rows = page.eval_on_selector_all(
        "#ef-pairs tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    out = {}
    for row in rows:
        cells = dict(zip(header, row, strict=True))
        out[(cells.get("task", ""), cells["case_id"])] = (cells["A"], cells["B"])
    return out


def test_different_only_lists_exactly_the_cases_whose_trials_differ(
    open_page: Callable[..., Any], tmp_path: Path
) -> None:
    units = tasks_units()

    def trials(task: str, candidate: str, case: str) -> list[str]:
        return [units[(task, candidate, case, n)] for n in (1, 2)]

    differing = {(t, c) for t, c in TASK_CASES if trials(t, "A", c) != trials(t, "B", c)}
    assert differing == {("belief", "q2"), ("belief", "q3"), ("desire", "d2")}  # read off TASK_ROWS by hand
    page = open_page(tasks_page())
    assert set(side_by_side(page)) == set(TASK_CASES)
    page.check("#ef-diff")
    shown = side_by_side(page)
    assert set(shown) == differing
    assert int(page.text_content("#ef-pairs-count") or "") == 3
    # k/n per side (passed trials / trials), then one symbol per trial: missing is ○, never a fail's ✗
    assert shown[("belief", "q2")] == ("1/2 ✓✗", "1/2 ✗✓")
    assert shown[("belief", "q3")] == ("0/2 ✗○", "0/2 ✗✗")
    assert shown[("desire", "d2")] == ("0/2 ○○", "0/2 ✗✗")
    assert page.evaluate("location.hash") == "#diff=1"
    page.reload()
    assert set(side_by_side(page)) == differing
    shot(page, tmp_path, "tasks_different_only")


def test_ungraded_units_show_their_reason_never_a_fail(open_page: Callable[..., Any]) -> None:
    plan = ef.Plan.from_file(FIXTURES / "ledger" / "plan.csv", candidates=["agent"])
    page = open_page(ef.audit(plan, FIXTURES / "ledger" / "results.csv").to_html(), fragment="#outcome=ungraded")
    cells = page.eval_on_selector_all("#ef-units tbody tr td:nth-child(4)", "cells => cells.map(c => c.textContent)")
    assert sorted(cells) == ["⚖ judge_failed", "⚠ exec_failed"]
    titles = page.eval_on_selector_all("#ef-units .sym", "s => s.map(e => e.getAttribute('title'))")
    assert sorted(titles) == [
        "exec_failed: timed out or errored",
        "judge_failed: the grader could not produce a valid judgment",
    ]


@pytest.mark.parametrize("fragment", ["#headline", "#funnel"])
def test_a_section_link_leaves_the_filters_alone(open_page: Callable[..., Any], fragment: str) -> None:
    page = open_page(orbit_page(), fragment="#candidate=A")
    page.locator(f'nav a[href="{fragment}"]').first.click()
    assert page.input_value("#ef-candidate") == "A"
    assert int(page.text_content("#ef-count") or "") == 4
