"""The terminal rendering, through rich's recording console: snapshots at 80 and 120 columns, and 20 long names.

Snapshots live in tests/snapshots/terminal/. After an intended change, regenerate them with
``EVALFRAME_UPDATE_SNAPSHOTS=1 pytest tests/report/test_terminal.py`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console

import evalframe as ef
from evalframe.report import AuditReport, build_view, print_view
from evalframe.report.terminal import TerminalLayout
from tests.conftest import ROOT
from tests.reducer_support import repro_report

SNAPSHOTS = Path(__file__).parent.parent / "snapshots" / "terminal"
ORBIT = "data/fixtures/orbit_desk"
#: Twenty candidate names as model hubs spell them.
NAMES = [
    "anthropic/claude-sonnet-4-0",
    "anthropic/claude-opus-4-1",
    "anthropic/claude-3-5-haiku",
    "openai/gpt-4o-2024-08-06",
    "openai/gpt-4.1-mini",
    "openai/o3-mini-high",
    "google/gemini-2.5-pro",
    "google/gemini-2.0-flash",
    "meta-llama/Llama-3.3-70B",
    "meta-llama/Llama-3.1-8B",
    "mistralai/Mistral-Large-2411",
    "mistralai/Ministral-8B",
    "qwen/Qwen2.5-72B-Instruct",
    "qwen/Qwen3-235B-A22B",
    "deepseek/deepseek-r1-0528",
    "deepseek/deepseek-v3-0324",
    "xai/grok-3-beta",
    "cohere/command-r-plus-08",
    "microsoft/phi-4-reasoning",
    "ibm-granite/granite-3.3-8b",
]


def render(
    report: AuditReport, width: int, comparison: ef.Comparison | None = None, layout: TerminalLayout = "auto"
) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    print_view(build_view(report, comparison), console, layout=layout)
    return console.export_text()


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("EVALFRAME_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.fixture
def orbit(monkeypatch: pytest.MonkeyPatch) -> AuditReport:
    monkeypatch.chdir(ROOT)  # relative paths: the report records them
    plan = ef.Plan.from_file(f"{ORBIT}/plan.csv", candidates=["A", "B"])
    report = ef.audit(plan, f"{ORBIT}/results.csv", slices=["case_type"])
    return dataclasses.replace(report, meta={**report.meta, "evalframe_version": "VERSION"})


@pytest.mark.parametrize("width", [80, 120])
def test_orbit_desk_terminal_snapshot(orbit: AuditReport, width: int) -> None:
    text = render(orbit, width)
    check_snapshot(f"orbit_desk_{width}.txt", text)
    assert max(len(line) for line in text.splitlines()) <= width
    lines = text.splitlines()
    assert lines[0] == "evalframe audit: A, B"
    table = next(i for i, line in enumerate(lines) if line.startswith("candidates: funnel and rates"))
    assert lines.index("headline") < table


@pytest.mark.parametrize("width", [80, 120])
def test_orbit_desk_comparison_terminal_snapshot(orbit: AuditReport, width: int) -> None:
    comparison = ef.compare(orbit, baseline="B", candidate="A")
    text = render(orbit, width, comparison)
    check_snapshot(f"orbit_desk_compare_{width}.txt", text)
    lines = text.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    assert lines[verdict] == "verdict: no_supported_winner  (A vs baseline B, complete_pairs)"
    assert "headline" not in lines and "candidates: funnel and rates" not in text  # the comparison, not the audit
    # One line of the audit's counts: A has rows for 2 of its 4 planned cases, B for all 4 (results.csv).
    (audit,) = [i for i, line in enumerate(lines) if line.startswith("audit (scored/planned): A 2/4; B 4/4 ")]
    assert verdict < audit and lines[audit + 1].strip() == "comparison"
    assert "graded for the baseline only" in text and "escalation" in text


def twenty_candidates() -> AuditReport:
    """20 candidates × 600 cases; candidate k misses its first 20·k cases and fails every third case."""
    # One task (no task column): a plan column "topic" labels the cases.
    cases = pl.DataFrame({"case_id": [f"task/{i}" for i in range(600)], "topic": [f"t{i % 4}" for i in range(600)]})
    rows = [
        {"candidate": name, "case_id": f"task/{i}", "passed": int(i % 3 != 0)}
        for k, name in enumerate(NAMES)
        for i in range(20 * k, 600)
    ]
    plan = ef.Plan.from_frame(cases, candidates=NAMES)
    return ef.audit(plan, pl.DataFrame(rows))


def test_twenty_candidates_at_120_columns_show_full_names_and_counts() -> None:
    text = render(twenty_candidates(), 120, layout="full")
    assert max(len(line) for line in text.splitlines()) <= 120
    table = text.split("candidates: funnel and rates")[1].split("missing units")[0]
    rows = {line.split("│")[1].strip(): line for line in table.splitlines() if line.startswith("│")}
    for k, name in enumerate(NAMES):
        scored = 600 - 20 * k
        assert name in rows, name  # whole, on one line
        assert f"{scored / 600:.3f} ({scored}/600)" in rows[name], name
        passed = sum(1 for i in range(20 * k, 600) if i % 3 != 0)
        assert f"{passed / scored:.3f} ({passed}/{scored} scored)" in rows[name], name
    assert "…" not in text.split("candidates: funnel and rates")[1].split("missing units")[0]


def test_twenty_candidates_at_80_columns_wrap_but_never_cut() -> None:
    text = render(twenty_candidates(), 80, layout="full")
    assert max(len(line) for line in text.splitlines()) <= 80
    table = text.split("candidates: funnel and rates")[1].split("missing units")[0]
    assert "…" not in table
    for k in range(20):
        scored = 600 - 20 * k
        assert f"({scored}/600)" in table


@pytest.mark.parametrize("width", [80, 120])
def test_twenty_candidates_are_one_line_each_by_default_and_no_number_is_split(width: int) -> None:
    # issue 42: at 20 candidates the full layout took 786 lines at 120 columns; numbers split at 80.
    text = render(twenty_candidates(), width)
    assert max(len(line) for line in text.splitlines()) <= width
    table = text.split("candidates (one line each)")[1].split("missing units")[0].splitlines()
    assert len(table) <= 60
    for k, name in enumerate(NAMES):  # candidate k: 600 planned, misses its first 20·k cases, fails every third
        scored, passed = 600 - 20 * k, sum(1 for i in range(20 * k, 600) if i % 3 != 0)
        low, high = passed / 600, (passed + 20 * k) / 600  # pass_rate_planned, pass_rate_upper
        counts = rf" {scored}/600 +{passed / scored:.3f} \[0\.[0-9]+, 0\.[0-9]+\] +{low:.3f}–{high:.3f}\b"
        (row,) = [line for line in table if re.search(counts, line)]  # every number whole, on one line
        assert row.split()[0] == name, name  # and the whole name on that line: one line per candidate
    header = [line.split()[-1] for line in table[:9] if line.strip()]  # the range column's header, line by line
    assert header[:6] == ["full-plan", "range", "(pass_rate_", "planned–", "pass_rate_", "of"], header
    assert "20 candidates: one row each below." in text and text.count("has the highest pass_rate_scored") == 1
    missing = text.split("missing units")[1].splitlines()
    for k, name in enumerate(NAMES[1:], start=1):  # one line each, its counts whole
        assert any(re.fullmatch(rf" *{re.escape(name)} +{20 * k} +{20 * k} +task/0, .*", line) for line in missing)


def test_compact_is_forced_for_two_candidates_and_full_for_twenty(orbit: AuditReport) -> None:
    compact = render(orbit, 80, layout="compact")
    assert "candidates (one line each)" in compact and "candidates: funnel and rates" not in compact
    full = render(twenty_candidates(), 120, layout="full")
    assert "candidates: funnel and rates" in full and "candidates (one line each)" not in full


def test_the_case_level_rate_stands_beside_the_trial_level_one_with_its_reducer_and_cases() -> None:
    # The repro under pass@k (any): both cases pass (q1 2/2, q2 1/2); Wilson over 2 cases gives [0.342, 1.0].
    # pass_rate_scored's clustered interval is withheld: 2 cases are not more than 28 + 25·g1² (g1 = 0).
    lines = render(repro_report("any"), 120).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("candidates: funnel and rates"))
    assert [line.rstrip() for line in lines[start + 1 : start + 13]] == [
        "┏━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━┓",
        "┃           ┃                  ┃                    ┃                   ┃ full-plan   ┃          ┃",
        "┃           ┃                  ┃                    ┃                   ┃ range       ┃          ┃",
        "┃           ┃                  ┃                    ┃ case_pass_rate    ┃ (pass_rate_ ┃          ┃",
        "┃           ┃                  ┃                    ┃ (any)             ┃ planned–    ┃          ┃",
        "┃           ┃                  ┃ pass_rate_scored   ┃ (cases passed/    ┃ pass_rate_  ┃          ┃",
        "┃           ┃ scored_coverage  ┃ (passed/scored)    ┃ cases scored)     ┃ upper, of   ┃  missing ┃",
        "┃ candidate ┃ (scored/planned) ┃ [95% CI]           ┃ [95% CI]          ┃ planned)    ┃ (no row) ┃",
        "┡━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━┩",
        "│ A         │ 1.000 (4/4)      │ 0.750 (3/4 scored) │ 1.000 (2/2 cases) │ 0.750–0.750 │        0 │",
        "│           │                  │ —                  │ [0.342, 1.0]      │             │          │",
        "└───────────┴──────────────────┴────────────────────┴───────────────────┴─────────────┴──────────┘",
    ]


def test_the_case_level_rate_is_shown_for_several_trials_or_a_declared_reducer_only() -> None:
    # Several trials under the default mean: each case's pass fraction (1 and 1/2) summed over 2 cases.
    assert "0.750 (1.5/2 cases)" in render(repro_report("mean"), 120)
    # One trial per case: shown only when a reducer other than mean is declared (trial 1 of both cases passed).
    assert "1.000 (2/2 cases)" in render(repro_report("any", trials=1), 120)
    assert "case_pass_rate" not in render(repro_report("mean", trials=1), 120)


def test_a_note_about_one_candidate_names_it() -> None:
    # One missing_unit note per candidate with the same sentence read as one anonymous text; each now leads with
    # its candidate. Whether it does is the row's candidate column, not the text: a detail that happened to
    # start with the name (candidate "1", "1 planned unit has no row") was once taken as naming it already.
    from evalframe.report.view import notes_of

    problems = pl.DataFrame(
        {
            "kind": ["missing_unit", "missing_unit", "missing_unit", "run_status"],
            "candidate": ["m/a", "m/b", "1", None],
            "detail": ["2 planned units have no row"] * 2 + ["1 planned unit has no row", "status: cancelled"],
            "refusing": [False] * 4,
        }
    )
    texts = {note.kind: note.texts for note in notes_of(problems)}
    assert texts == {
        "missing_unit": (
            "m/a: 2 planned units have no row",
            "m/b: 2 planned units have no row",
            "1: 1 planned unit has no row",
        ),
        "run_status": ("status: cancelled",),
    }


def test_the_terminal_names_the_metric_the_import_graded_by(orbit: AuditReport) -> None:
    # An import records each export's metric (lm-eval: "acc") or scorer (Inspect); a --results ledger none.
    assert "graded by" not in render(orbit, 120)
    imported = dataclasses.replace(orbit, meta={**orbit.meta, "exports": [{"metric": "acc"}, {"metric": "acc"}]})
    assert render(imported, 120).splitlines()[2] == "graded by: metric acc"
