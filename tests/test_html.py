"""The HTML report, read back with the stdlib parser: content, denominators, self-containment, escaping, determinism."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

import evalframe as ef
from evalframe.cli import main
from evalframe.compare import compare
from evalframe.report import RATE_FORMULAS, AuditReport, build_view, explore
from evalframe.report import render_html as render_view
from tests.conftest import FIXTURES
from tests.reducer_support import repro_report

ORBIT = FIXTURES / "orbit_desk"


class Page(HTMLParser):
    """Everything a test needs from a page: tags with attributes, visible text, tables as rows of cell text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None
        self._skip = 0
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("style", "svg", "script"):
            self._skip += 1
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "svg", "script"):
            self._skip -= 1
        elif tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data + " ")

    @property
    def all_text(self) -> str:
        return " ".join(" ".join(self.text).split())

    def table_with(self, header: str) -> list[list[str]]:
        for table in self.tables:
            if table and any(cell.startswith(header) for cell in table[0]):
                return table
        raise AssertionError(f"no table with a {header!r} column")


def render_html(report: AuditReport, comparison: object = None) -> str:
    return render_view(build_view(report, comparison))  # type: ignore[arg-type]


def orbit(*, slices: tuple[str, ...] = ("case_type",)) -> AuditReport:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    return ef.audit(plan, ORBIT / "results.csv", slices=list(slices))


@pytest.fixture(scope="module")
def page_text() -> str:
    report = orbit()
    return render_html(report, compare(report, baseline="B", candidate="A"))


@pytest.fixture(scope="module")
def page(page_text: str) -> Page:
    return Page(page_text)


# --- content -------------------------------------------------------------------------------


def test_every_candidate_and_denominator_is_on_the_page(page: Page) -> None:
    text = page.all_text
    for candidate in ("A", "B"):
        assert any(cells[0] == candidate for table in page.tables for cells in table[1:])
    funnel = {row[0]: row[2:] for row in page.table_with("count")[1:]}
    assert funnel["planned"] == ["4", "4"]
    assert [c.split()[0] for c in funnel["scored"]] == ["2", "4"]
    assert [c.split()[0] for c in funnel["passed"]] == ["2", "3"]
    assert [c.split()[0] for c in funnel["missing"]] == ["2", "0"]
    rates = page.table_with("completion_rate")
    header = rates[0]
    for rate, formula in RATE_FORMULAS.items():
        assert f"{rate} {formula}" in header
        assert rate in text and formula in text
    cells = {row[0]: dict(zip(header, row, strict=True)) for row in rates[1:]}
    a, b = cells["A"], cells["B"]
    assert a["pass_rate_scored passed / scored"].startswith("1.0 2 / 2 [0.342, 1.0]")
    assert a["scored_coverage scored / planned"].startswith("0.5 2 / 4")
    assert a["pass_rate_planned passed / planned"].startswith("0.5 2 / 4")
    assert a["pass_rate_upper (passed + planned − scored) / planned"].startswith("1.0 4 / 4")
    assert b["pass_rate_scored passed / scored"].startswith("0.75 3 / 4 [0.301, 0.954]")
    assert b["scored_coverage scored / planned"].startswith("1.0 4 / 4")


def test_headline_says_why_a_100_percent_is_not_a_win(page: Page) -> None:
    text = page.all_text
    assert "100% pass_rate_scored = passed / scored = 2 / 2" in text
    assert "only 2 of 4 planned units scored: scored_coverage 50% (scored / planned)" in text
    assert "over the whole plan the pass rate could be anywhere from 50% to 100%" in text
    assert "75% pass_rate_scored = passed / scored = 3 / 4" in text
    assert "all 4 planned units scored" in text
    assert "computed on only 2 of 4 planned units, but its full-plan range [0.5, 1.0] overlaps B [0.75, 0.75]" in text
    assert "2 missing (no row at all): handoff, privacy" in text


def test_provenance_is_in_the_header(page: Page) -> None:
    report = orbit()
    text = page.all_text
    for fact in (report.meta["plan_hash"], str(ORBIT / "plan.csv"), "retry policy first", "pair policy complete_pairs"):
        assert fact in text
    assert f"evalframe version {report.meta['evalframe_version']}" in text
    assert "dataset versions none recorded" in text and "run ids none recorded" in text


def test_missing_units_problems_slices_and_verdict(page: Page) -> None:
    text = page.all_text
    outcomes = {row[0]: row[1:] for row in page.table_with("candidate")[1:] if row[0] in ("A", "B")}
    assert outcomes
    ungraded = page.table_with("case_id")
    assert sorted(row[1] for row in ungraded[1:]) == ["handoff", "privacy"]
    problems = page.table_with("kind")
    description = "planned units with no row: one problem per candidate, counted in its detail"
    assert problems[1][:2] == [f"missing_unit {description} (refusing only under missing='refuse')", "1"]
    tests = page.table_with("slice_column")
    # candidate, slice_column, n_slices, cases, planned, ungraded, p_adjusted_ungraded, selective_ungraded, ...
    assert tests[1][:8] == ["A", "case_type", "4", "4", "4", "2", "1.0", "no"]
    # p = 1: no slice is named. detectable: 4 slices of one case, shares 1, 1, 0, 0: v = 4·0.25/3 = 1/3, so
    # w = 3 per slice and the shift is √(λ·(1/3 + 1/9)) with λ = 10.9 (χ²(3), 80% power at 0.05): 2.2.
    assert tests[1][8:] == ["—", "2.2", "2", "1.0", "no", "—", "2.2"]
    assert "Verdict: no_supported_winner" in text
    assert "coverage: A scored_coverage 0.5 is below the default minimum (none declared) 0.95" in text
    assert "missing rate by case_type" not in text  # chart text is SVG text, not page text
    assert sum(1 for tag, _ in page.tags if tag == "svg") == 3
    assert [attrs["aria-label"] for tag, attrs in page.tags if tag == "svg"] == [
        "Share of planned units by outcome, and pass rate against its range",
        "Coverage funnel per candidate",
        "Missing rate by slice value per candidate",
    ]


def test_ledger_statuses_appear_in_the_funnel() -> None:
    plan = ef.Plan.from_file(FIXTURES / "ledger" / "plan.csv", candidates=["agent"])
    page = Page(render_html(ef.audit(plan, FIXTURES / "ledger" / "results.csv")))
    funnel = {row[0]: row[2].split()[0] for row in page.table_with("count")[1:]}
    assert (funnel["planned"], funnel["attempted"], funnel["completed"], funnel["scored"], funnel["passed"]) == (
        "4",
        "4",
        "3",
        "2",
        "1",
    )
    assert (funnel["exec_failed"], funnel["judge_failed"]) == ("1", "1")
    assert "ungraded: 1 exec failed; 1 judge failed" in page.all_text
    assert sum(1 for tag, _ in page.tags if tag == "svg") == 2  # no slice declared: no slice chart


def test_header_only_results_render_without_a_pass_rate() -> None:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    page = Page(render_html(ef.audit(plan, ORBIT / "results_header_only.csv")))
    assert page.all_text.count("no pass rate pass_rate_scored is null: nothing scored") == 2
    assert "none of 4 planned units scored" in page.all_text


# --- self-contained ---------------------------------------------------------------------------


def test_page_loads_nothing_from_the_network(page_text: str, page: Page) -> None:
    assert "http://" not in page_text and "https://" not in page_text
    assert "//" not in " ".join(str(v) for _, attrs in page.tags for v in attrs.values())
    tags = Counter(tag for tag, _ in page.tags)
    assert tags["link"] == 0 and tags["img"] == 0 and tags["iframe"] == 0
    # Two inline scripts, neither with a source: the explorer's data (JSON) and its code.
    assert [attrs for tag, attrs in page.tags if tag == "script"] == [
        {"type": "application/json", "id": "ef-data"},
        {"id": "ef-code"},
    ]
    for call in ("fetch(", "XMLHttpRequest", "import(", "WebSocket", "sendBeacon", ".src", "innerHTML", "eval("):
        assert call not in page_text, call
    assert "@import" not in page_text and "url(http" not in page_text
    for _, attrs in page.tags:
        for name in ("src", "href", "xlink:href"):
            value = attrs.get(name)
            assert value is None or value.startswith("#"), (name, value)


def test_ids_are_unique_across_charts(page: Page) -> None:
    ids = Counter(attrs["id"] for _, attrs in page.tags if attrs.get("id"))
    assert ids and max(ids.values()) == 1
    referenced = {  # a fragment with "=" is the explorer's filter (candidate=A&outcome=scored), not an id
        value[1:]
        for _, attrs in page.tags
        for name, value in attrs.items()
        if name.endswith("href") and value and "=" not in value
    }
    assert referenced <= set(ids)


# --- escaping ---------------------------------------------------------------------------------

EVIL_CASE = "<script>alert('x')</script>&\"quote\""
EVIL_CANDIDATE = '<img src=x onerror="alert(1)">$\\frac{1}{0}$'


def test_data_strings_are_escaped() -> None:
    plan = ef.Plan.from_frame(
        pl.DataFrame({"case_id": [EVIL_CASE, "ok"], "case_type": ["</td><marquee>", "plain"]}),
        candidates=[EVIL_CANDIDATE, "B"],
    )
    results = pl.DataFrame(
        {"candidate": [EVIL_CANDIDATE, "B", "B"], "case_id": ["ok", "ok", EVIL_CASE], "passed": [1, 0, 1]}
    )
    report = ef.audit(plan, results, slices=["case_type"])
    text = render_html(report, compare(report, baseline="B", candidate=EVIL_CANDIDATE))
    page = Page(text)
    tags = Counter(tag for tag, _ in page.tags)
    assert tags["script"] == 2 and tags["img"] == 0 and tags["marquee"] == 0  # the explorer's data and code
    for raw in (EVIL_CASE, EVIL_CANDIDATE, "</td><marquee>"):
        assert raw not in text
        assert raw in page.all_text  # shown to the reader as text
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;&quot;quote&quot;" in text
    assert all(not name.startswith("on") for _, attrs in page.tags for name in attrs)
    for table in page.tables:  # a "</td>" in the data never splits a cell
        assert {len(row) for row in table} == {len(table[0])}


def test_non_latin_data_strings_render_without_a_warning() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a"], "lang": ["日本語"]}), candidates=["模型🙂"])
    report = ef.audit(plan, pl.DataFrame({"candidate": ["模型🙂"], "case_id": ["a"], "passed": [1]}), slices=["lang"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = render_html(report)
    assert "模型🙂" in Page(text).all_text
    assert 'font-weight="bold">模型🙂</text>' in text and ">日本語</text>" in text  # the funnel's title, a slice value


# --- determinism --------------------------------------------------------------------------------


def test_two_renders_are_identical(page_text: str) -> None:
    report = orbit()
    assert render_html(report, compare(report, baseline="B", candidate="A")) == page_text
    assert render_html(orbit(slices=())) == render_html(orbit(slices=()))


# --- CLI ----------------------------------------------------------------------------------------


def test_compare_out_writes_html_with_the_verdict(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["compare", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv")]
    args += ["--candidates", "A,B", "--baseline", "B", "--candidate", "A", "--slice", "case_type", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert {"report.html", "report.md", "report.json", "comparison.parquet", "pairs.parquet"} <= set(names)
    page = Page((out / "report.html").read_text(encoding="utf-8"))
    assert "Verdict: no_supported_winner — A vs baseline B (pair policy complete_pairs)" in page.all_text
    assert '"verdict": "no_supported_winner"' in (out / "report.json").read_text(encoding="utf-8")


def test_the_case_level_rate_stands_beside_the_trial_level_one_on_the_page() -> None:
    page = Page(render_view(build_view(repro_report("any"))))
    rates = page.table_with("completion_rate")
    assert rates[0] == [
        "candidate",
        "completion_rate completed / planned",
        "scored_coverage scored / planned",
        "pass_rate_scored passed / scored",
        "case_pass_rate (any) cases passed / cases scored",
        "pass_rate_planned passed / planned",
        "pass_rate_upper (passed + planned − scored) / planned",
    ]
    # pass_rate_scored's clustered interval is withheld: 2 cases are not more than 28 + 25·g1² (g1 = 0).
    assert rates[1][3:5] == ["0.75 3 / 4 null", "1.0 2 / 2 [0.342, 1.0]"]
    text = page.all_text
    assert "75% pass_rate_scored = passed / scored = 3 / 4" in text  # the headline card, then the case-level rate
    assert "100% case_pass_rate (any) = cases passed / cases scored = 2 / 2" in text
    assert "case_pass_rate" not in render_view(build_view(repro_report("mean", trials=1)))


def test_ranges_that_touch_are_a_warning_callout_not_an_ok_one() -> None:
    """A [0.5, 0.75] leads, B [0.5, 0.5]: they could tie, so the ranking callout warns (it was the green 'ok')."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c", "d"]}), candidates=["A", "B"])
    rows = [("A", "a", 1), ("A", "b", 1), ("A", "c", 0), ("B", "a", 1), ("B", "b", 0), ("B", "c", 1), ("B", "d", 0)]
    ledger = pl.DataFrame(rows, schema=["candidate", "case_id", "passed"], orient="row")
    html = ef.audit(plan, ledger).to_html()
    assert '<p class="callout">A has the highest pass_rate_scored (0.667)' in html
    assert "touches B [0.5, 0.5] at 0.5" in html


# --- the explorer's data ----------------------------------------------------------------------------


def explorer_data(text: str) -> dict[str, Any]:
    start = text.index('<script type="application/json" id="ef-data">')
    body = text[text.index(">", start) + 1 : text.index("</script>", start)]
    return dict(json.loads(body))


def test_the_page_embeds_every_unit_with_its_outcome(page_text: str) -> None:
    """Orbit Desk: 4 cases x A, B; A has no row for handoff and privacy, B fails handoff (results.csv)."""
    data = explorer_data(page_text)
    cols = data["columns"]

    def column(name: str) -> list[Any]:
        return [cols[name]["values"][code] for code in cols[name]["codes"]]

    units = set(zip(column("candidate"), column("case_id"), column("outcome"), column("case_type"), strict=True))
    assert units == {
        ("A", "quote", "passed", "sales"),
        ("A", "refund", "passed", "billing"),
        ("A", "privacy", "missing", "policy"),
        ("A", "handoff", "missing", "escalation"),
        ("B", "quote", "passed", "sales"),
        ("B", "refund", "passed", "billing"),
        ("B", "privacy", "passed", "policy"),
        ("B", "handoff", "failed", "escalation"),
    }
    assert (data["rows"], data["total"], data["slices"]) == (8, 8, ["case_type"])
    assert "This page holds 8 of the audit's 8 units." in Page(page_text).all_text


def test_a_large_audit_embeds_at_most_the_maximum_and_says_how_many_it_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(explore, "MAX_UNITS", 3)
    text = render_html(orbit())
    data = explorer_data(text)
    assert (data["rows"], data["total"], data["max"]) == (3, 8, 3)
    # the first units in order of case (digit-free ids: by text), then candidate: every candidate of a case
    cols = data["columns"]
    cases = [cols["case_id"]["values"][c] for c in cols["case_id"]["codes"]]
    candidates = [cols["candidate"]["values"][c] for c in cols["candidate"]["codes"]]
    assert list(zip(cases, candidates, strict=True)) == [("handoff", "A"), ("handoff", "B"), ("privacy", "A")]
    said = (
        "This page holds 3 of the audit's 8 units; 5 were left out (at most 3 are embedded): "
        "units.parquet holds them all."
    )
    assert said in Page(text).all_text


def test_the_embedded_data_cannot_close_its_script() -> None:
    plan = ef.Plan.from_frame(
        pl.DataFrame({"case_id": ["</script><script>alert(1)</script>", "a&b"]}), candidates=["A"]
    )
    text = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["a&b"], "passed": [1]})).to_html()
    start = text.index('id="ef-data">')
    body = text[start : text.index("</script>", start)]
    assert "<" not in body and "&" not in body.replace("&quot;", "")  # every <, > and & is a \u escape
    values = explorer_data(text)["columns"]["case_id"]["values"]
    assert sorted(values) == ["</script><script>alert(1)</script>", "a&b"]
