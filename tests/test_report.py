"""The report's writers: Markdown snapshot, JSON content, Parquet column descriptions, files written.

Snapshots live in tests/snapshots/. After an intended change to the Markdown,
regenerate them with ``EVALFRAME_UPDATE_SNAPSHOTS=1 pytest tests/test_report.py``
and review the diff.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import evalframe as ef
from evalframe.compare import Comparison, compare
from evalframe.report import CARRIED, DESCRIPTIONS, RATE_FORMULAS, AuditReport, build_view, describe, ranking_note
from evalframe.report.sentences import Ranking
from tests.conftest import FIXTURES, ROOT
from tests.reducer_support import repro_report

SNAPSHOTS = Path(__file__).parent / "snapshots"
ORBIT = "data/fixtures/orbit_desk"


def orbit_report(*, slices: tuple[str, ...] = ()) -> AuditReport:
    """The README's Orbit Desk audit, with relative paths (the report records them) and a fixed version."""
    plan = ef.Plan.from_file(f"{ORBIT}/plan.csv", candidates=["A", "B"])
    report = ef.audit(plan, f"{ORBIT}/results.csv", slices=list(slices))
    return dataclasses.replace(report, meta={**report.meta, "evalframe_version": "VERSION"})


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("EVALFRAME_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


# --- Markdown ------------------------------------------------------------------------------


@pytest.mark.usefixtures("at_root")
def test_orbit_desk_markdown_snapshot() -> None:
    check_snapshot("orbit_desk_report.md", orbit_report().to_markdown())


@pytest.mark.usefixtures("at_root")
def test_orbit_desk_markdown_snapshot_with_slices_and_comparison() -> None:
    report = orbit_report(slices=("case_type",))
    text = report.to_markdown(compare(report, baseline="B", candidate="A"))
    check_snapshot("orbit_desk_sliced_compare_report.md", text)


def test_snapshot_holds_the_exact_spec_numbers() -> None:
    text = (SNAPSHOTS / "orbit_desk_report.md").read_text(encoding="utf-8")
    # SPEC §7: candidate, planned, scored, passed, missing, scored_coverage, pass_rate_scored, pass_rate_planned.
    counts = "| candidate | planned | attempted | completed | with_output | scored | passed | failed | missing |"
    assert counts in text
    assert "| A | 4 | 2 | 2 | 2 | 2 | 2 | 0 | 2 |" in text
    assert "| B | 4 | 4 | 4 | 4 | 4 | 3 | 1 | 0 |" in text
    rates = "| candidate | completion_rate | scored_coverage | pass_rate_scored | pass_rate_planned | pass_rate_upper |"
    assert rates in text
    assert "| A | 0.5 | 0.5 | 1.0 | 0.5 | 1.0 |" in text
    assert "| B | 1.0 | 1.0 | 0.75 | 0.75 | 0.75 |" in text
    assert "| A | 2 | 2 | handoff, privacy |" in text
    assert "| B | 0 | 0 | — |" in text
    for rate, formula in RATE_FORMULAS.items():
        assert f"`{rate}` = {formula}" in text


def test_markdown_headline_names_denominators_and_the_overlap() -> None:
    text = orbit_report().to_markdown()
    assert "A: pass_rate_scored 1.0 = 2 passed / 2 scored, and only 2 of 4 planned units were scored" in text
    assert "lies between 0.5 (pass_rate_planned = passed / planned" in text
    overlap = "but its full-plan range \\[0.5, 1.0\\] overlaps B \\[0.75, 0.75\\]"  # Markdown-escaped brackets
    assert f"computed on only 2 of 4 planned units, {overlap}" in text


def test_ranking_note_when_the_leader_survives_missing_grades() -> None:
    summary = pl.DataFrame(
        {
            "candidate": ["A", "B"],
            "pass_rate_scored": [0.9, 0.2],
            "pass_rate_planned": [0.85, 0.2],
            "pass_rate_upper": [0.9, 0.25],
        }
    )
    assert ranking_note(summary) == Ranking(
        "A has the highest pass_rate_scored (0.9), and no other candidate's best case is above its worst case "
        "(0.85): missing grades alone cannot reverse the order (sampling noise still can; see the intervals).",
        overlap=False,
    )
    assert ranking_note(summary.head(1)) is None


def test_ranking_note_names_a_tie_and_does_not_blame_missing_grades_that_do_not_exist() -> None:
    # Nothing missing and every candidate at 0.0: a tie, not an order missing grades could reverse.
    summary = pl.DataFrame(
        {
            "candidate": ["A", "B", "C"],
            "pass_rate_scored": [0.0, 0.0, 0.0],
            "pass_rate_planned": [0.0, 0.0, 0.0],
            "pass_rate_upper": [0.0, 0.0, 0.0],
        }
    )
    assert ranking_note(summary) == Ranking(
        "A, B and C share the highest pass_rate_scored (0.0), and no other candidate's best case is above their "
        "worst case (0.0): missing grades alone cannot reverse the order (sampling noise still can; see the "
        "intervals).",
        overlap=False,
    )


def test_ranking_note_ranges_that_touch_can_tie_and_tied_leaders_with_missing_grades_can_reverse() -> None:
    touching = pl.DataFrame(
        {
            "candidate": ["A", "B"],
            "pass_rate_scored": [0.8, 0.4],
            "pass_rate_planned": [0.6, 0.4],
            "pass_rate_upper": [0.8, 0.6],
        }
    )  # B's best case equals A's worst: at most a tie, which compare's bounds check counts as an overlap too
    assert ranking_note(touching) == Ranking(
        "A has the highest pass_rate_scored (0.8), but its full-plan range [0.6, 0.8] touches B [0.4, 0.6] at 0.6: "
        "the missing grades alone could make them equal (not reverse the order), so pass_rate_scored does not "
        "separate these candidates.",
        overlap=True,
    )
    tied = pl.DataFrame(
        {
            "candidate": ["A", "B"],
            "pass_rate_scored": [0.5, 0.5],
            "pass_rate_planned": [0.25, 0.5],
            "pass_rate_upper": [0.75, 0.5],
        }
    )
    assert ranking_note(tied) == Ranking(
        "A and B share the highest pass_rate_scored (0.5), but A's full-plan range [0.25, 0.75] overlaps "
        "B [0.5, 0.5]: the missing grades alone could reverse the order, so pass_rate_scored does not rank "
        "these candidates.",
        overlap=True,
    )


def test_markdown_escapes_table_breaking_identifiers() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a|b", "c\nd", "e"]}), candidates=["A"])
    text = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["e"], "passed": [1]})).to_markdown()
    assert "| A | 2 | 2 | a\\|b, c\\nd |" in text  # a newline is written \\n: the cell stays on its row


# --- JSON ----------------------------------------------------------------------------------


def strict_json(text: str) -> dict[str, object]:
    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON constant {token}")

    doc = json.loads(text, parse_constant=refuse)
    assert isinstance(doc, dict)
    return doc


@pytest.mark.usefixtures("at_root")
def test_json_carries_provenance_summary_and_problems() -> None:
    report = orbit_report()
    doc = strict_json(report.to_json())
    meta = doc["meta"]
    assert isinstance(meta, dict)
    for key in ("plan_source", "plan_hash", "dataset_versions", "run_ids", "retry", "evalframe_version"):
        assert key in meta
    assert meta["plan_source"] == f"{ORBIT}/plan.csv" and len(meta["plan_hash"]) == 64
    rows = {r["candidate"]: r for r in doc["summary"]}  # type: ignore[attr-defined]
    assert (rows["A"]["planned"], rows["A"]["scored"], rows["A"]["passed"]) == (4, 2, 2)
    assert (rows["A"]["scored_coverage"], rows["A"]["pass_rate_scored"], rows["A"]["pass_rate_planned"]) == (
        0.5,
        1.0,
        0.5,
    )
    assert rows["A"]["missing_case_ids"] == ["handoff", "privacy"]
    assert rows["B"]["pass_rate_scored_ci_low"] == pytest.approx(0.3006, abs=1e-4)
    assert doc["problems_by_kind"] == {"missing_unit": 1}  # one per candidate with missing units: A
    assert {(o["candidate"], o["outcome"]): o["units"] for o in doc["outcomes"]} == {  # type: ignore[attr-defined]
        ("A", "missing"): 2,
        ("A", "passed"): 2,
        ("B", "failed"): 1,
        ("B", "passed"): 3,
    }
    assert "slices" not in doc and "missingness" not in doc and "comparison" not in doc


def test_numeric_scores_without_a_threshold_count_no_passes_in_any_output(tmp_path: Path) -> None:
    """No threshold: nothing passed or failed, so every output gives no count of either (not 0 passed)."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c"]}), candidates=["M"])
    report = ef.audit(plan, pl.DataFrame({"case_id": ["a", "b"], "score": [0.5, 1.0]}), grade="numeric")
    report.write(tmp_path / "out")
    funnel = ("planned", "scored", "passed", "failed", "missing")
    assert pl.read_parquet(tmp_path / "out" / "summary.parquet").select(funnel).row(0) == (3, 2, None, None, 1)
    row = strict_json(report.to_json())["summary"][0]  # type: ignore[index]
    assert tuple(row[c] for c in funnel) == (3, 2, None, None, 1)
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| M | 3 | 2 | 2 | 2 | 2 | null | null | 1 | 0 | 0 | 0 | 0 | 0 |" in md
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<td>passed</td><td>" in html and "</td><td>—</td></tr><tr><td>failed</td>" in html


@pytest.mark.usefixtures("at_root")
def test_json_carries_slices_missingness_and_comparison_when_present() -> None:
    report = orbit_report(slices=("case_type",))
    comparison = compare(report, baseline="B", candidate="A")
    doc = strict_json(report.to_json(comparison))
    slices = doc["slices"]
    assert isinstance(slices, list) and len(slices) == 8
    assert {(r["candidate"], r["slice_value"]): r["missing_rate"] for r in slices}[("A", "policy")] == 1.0
    tests = {r["candidate"]: r for r in doc["missingness"]}  # type: ignore[attr-defined]
    assert tests["A"]["selective"] is False and tests["A"]["stands_out"] == []  # p = 1: nothing is named
    assert doc["comparison"]["verdict"] == "no_supported_winner"  # type: ignore[index]
    assert doc["comparison"]["dropped_by_slice"] == [  # type: ignore[index]
        {"slice_column": "case_type", "slice_value": "escalation", "pairs_dropped": 1},
        {"slice_column": "case_type", "slice_value": "policy", "pairs_dropped": 1},
    ]


def test_json_has_no_nan() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b"]}), candidates=["A"])
    report = ef.audit(plan, pl.DataFrame(schema={"candidate": pl.String, "case_id": pl.String, "passed": pl.Int64}))
    doc = strict_json(report.to_json())
    row = doc["summary"][0]  # type: ignore[index]
    assert row["pass_rate_scored"] is None and row["scored_coverage"] == 0.0
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in row.values())


# --- files and Parquet metadata -------------------------------------------------------------


def with_comparison() -> tuple[AuditReport, Comparison]:
    plan = ef.Plan.from_file(FIXTURES / "orbit_desk" / "plan.csv", candidates=["A", "B"])
    report = ef.audit(plan, FIXTURES / "orbit_desk" / "results.csv", slices=["case_type"])
    return report, compare(report, baseline="B", candidate="A")


def test_write_adds_html_and_comparison_tables(tmp_path: Path) -> None:
    report, comparison = with_comparison()
    written = report.write(tmp_path / "out", comparison=comparison)
    assert [p.name for p in written] == [
        "attempts.parquet",
        "comparison.parquet",
        "dropped_pairs.parquet",
        "flips.parquet",
        "missingness.parquet",
        "pairs.parquet",
        "problems.parquet",
        "report.html",
        "report.json",
        "report.md",
        "slices.parquet",
        "summary.parquet",
        "units.parquet",
    ]
    assert (tmp_path / "out" / "report.html").read_text(encoding="utf-8") == report.to_html(comparison)
    assert "Verdict: `no_supported_winner`" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    plain = [p.name for p in report.write(tmp_path / "plain")]
    assert "report.html" in plain and "comparison.parquet" not in plain


def test_every_parquet_column_is_described(tmp_path: Path) -> None:
    report, comparison = with_comparison()
    report.write(tmp_path, comparison=comparison)
    plan_columns = {"case_type"}
    for path in sorted(tmp_path.glob("*.parquet")):
        kv = pq.read_metadata(path).metadata
        assert kv[b"evalframe.table"].decode() == path.stem
        descriptions = json.loads(kv[b"evalframe.descriptions"])
        columns = pq.read_schema(path).names
        assert list(descriptions) == columns, path.name
        for column in columns:
            text = descriptions[column]
            assert text and (text != CARRIED or column in plan_columns), (path.name, column)
        meta = json.loads(kv[b"evalframe.meta"])
        assert meta["plan_hash"] == report.meta["plan_hash"]


def test_summary_interval_columns_are_described() -> None:
    report, _ = with_comparison()
    undescribed = [c for c in report.summary.columns if describe("summary", c) == CARRIED]
    assert undescribed == []
    assert DESCRIPTIONS["pass_rate_upper_ci_high"].startswith("upper end of the interval of pass_rate_upper")
    assert describe("units", "passed") != describe("summary", "passed")


# --- Jupyter -----------------------------------------------------------------------------------


def test_repr_html_has_the_headline_chart_and_the_slice_table() -> None:
    report, _ = with_comparison()
    fragment = report._repr_html_()
    assert "<script" not in fragment and "<html" not in fragment
    assert fragment.count("<svg") == 1 and 'aria-label="Share of planned units by outcome' in fragment
    assert "pass_rate_scored = passed / scored = 2 / 2" in fragment
    assert "only 2 of 4 planned units scored" in fragment
    assert "overlaps B [0.75, 0.75]" in fragment
    assert "Funnel by slice (8 of 8 rows)" in fragment and "Does missingness depend on the slice?" in fragment


def test_reports_do_not_depend_on_row_order() -> None:
    cases = pl.DataFrame({"case_id": ["quote", "refund", "privacy", "handoff"], "case_type": ["s", "b", "p", "e"]})
    results = pl.read_csv(FIXTURES / "orbit_desk" / "results.csv")

    def render(plan_rows: pl.DataFrame, rows: pl.DataFrame) -> tuple[str, str, str]:
        plan = ef.Plan.from_frame(plan_rows, candidates=["A", "B"])
        report = ef.audit(plan, rows, slices=["case_type"])
        return report.to_markdown(), report.to_json(), report.to_html()

    assert render(cases, results) == render(cases.reverse(), results.sample(fraction=1.0, shuffle=True, seed=7))


def test_markdown_puts_the_case_level_rate_beside_the_trial_level_one() -> None:
    text = ef.report.render_markdown(build_view(repro_report("any")))
    lines = text.splitlines()
    start = lines.index("### Case-level rate (trials of a case reduced by `any`)")
    assert lines[start : start + 10] == [
        "### Case-level rate (trials of a case reduced by `any`)",
        "",
        "`case_pass_rate (any)` = cases passed / cases scored, over the cases all of whose planned trials were "
        "scored, beside the trial-level `pass_rate_scored` = passed / scored trials; cases are independent: "
        "Wilson over cases.",
        "",
        "| candidate | pass_rate_scored | passed / scored (trials) | case_pass_rate (any) | "
        "cases passed / cases scored | 95% interval |",
        "|---|---|---|---|---|---|",
        "| A | 0.75 | 3 / 4 | 1.0 | 2 / 2 | \\[0.342, 1.0\\] |",
        "",
        "- A: case_pass_rate (any) = cases passed / cases scored = 2 / 2 = 1.0",
        "",
    ]
    # Right after the trial-level intervals (cases as units, t(1) with 2 cases); pass_rate_scored's is withheld:
    # 2 cases (q1 2/2, q2 1/2: residuals ±0.5, g1 = 0) are not more than 28 + 25·0² (Sugden, Smith & Jones 2000).
    cells = ["\\[0.0122, 1.0\\]"] * 2 + ["null"] + ["\\[0.0103, 0.999\\]"] * 2
    assert lines[start - 2] == "| A | " + " | ".join(cells) + " |"
    assert (
        "A's pass_rate_scored has no interval: Cochran's rule as refined by Sugden, Smith and Jones (2000) needs more "
        "than 28 + 25·g1² = 28 cases for the per-case pass rates (skewness g1 = 0); there are 2: with 2 cases the "
        "sample target (cases standing for a larger population of tasks) cannot support an interval for this skew; "
        "--cases fixed gives inference about these 2 cases only; with 2 cases, a kind of case that fails every time "
        "and makes up most of the population could be absent from this sample." in text
    )
    assert "case_pass_rate" not in ef.report.render_markdown(build_view(repro_report("mean", trials=1)))


def test_binned_slices_are_shown_in_bin_order() -> None:
    """Quartile bins of a numeric slice read from the lowest up, the open-ended first bin first (was last)."""
    cases = pl.DataFrame({"case_id": [f"q{n}" for n in range(1, 9)], "len": [10, 200, 50, 500, 1000, 70, 300, 5]})
    plan = ef.Plan.from_frame(cases, candidates=["A"])
    ledger = pl.DataFrame(
        {"candidate": "A", "case_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "passed": [1, 0, 1, 1, 0, 1]}
    )
    report = ef.audit(plan, ledger, slices=["len"], bins={"len": "q4"})
    bins = ["(-inf, 40]", "(40, 135]", "(135, 350]", "(350, inf]"]
    assert report.view().slices.funnel.get_column("slice_value").to_list() == bins  # type: ignore[union-attr]
    rows = [line.split(" | ")[2] for line in report.to_markdown().splitlines() if line.startswith("| A | len | (")]
    assert rows == [b.replace("[", "\\[").replace("]", "\\]") for b in bins]
    assert report.meta["bins"] == {"len": [40.0, 135.0, 350.0]}  # the quartiles of the 8 planned cases' lengths
    assert report.view().slices.binned == {"len"}  # type: ignore[union-attr]
    # the units behind a bin's row: its value as the table shows it (once no unit matched a bin's label)
    lowest = report.units_of(slice="len", value="(-inf, 40]").select("case_id", "len", "outcome").rows()
    assert lowest == [("q1", 10, "passed"), ("q8", 5, "missing")]


def test_a_text_slice_spelled_like_an_interval_is_not_a_bin() -> None:
    """Which slices are bins is the audit's declaration, not a guess from the value's text.

    The view once read "(a, b]" values as bins: a text slice spelled so was sorted by its lower end and left
    without links to its units in report.html.
    """
    cases = pl.DataFrame({"case_id": ["q1", "q2", "q3"], "band": ["(-1, 2]", "(-inf, 3]", "(-1, 2]"]})
    plan = ef.Plan.from_frame(cases, candidates=["A"])
    ledger = pl.DataFrame({"candidate": "A", "case_id": ["q1", "q2"], "passed": [1, 0]})
    report = ef.audit(plan, ledger, slices=["band"])
    view = report.view()
    assert report.meta["bins"] == {}
    assert view.slices.binned == frozenset()  # type: ignore[union-attr]
    # natural order: "-1" before "-inf" (a number before letters); by lower end "(-inf, 3]" came first
    assert view.slices.funnel.get_column("slice_value").to_list() == ["(-1, 2]", "(-inf, 3]"]  # type: ignore[union-attr]
    html = ef.report.render_html(view)
    # planned 2, missing 1 for "(-1, 2]": each count links to the units of that slice value
    assert 'href="#candidate=A&amp;outcome=planned&amp;slice.band=%28-1%2C%202%5D"' in html
    assert 'href="#candidate=A&amp;outcome=missing&amp;slice.band=%28-1%2C%202%5D"' in html
