"""The report's SVG charts, parsed as XML: the bars, their sizes and colours, the labels, escaping, growth."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import polars as pl
import pytest

import evalframe as ef
from evalframe.report import build_view
from evalframe.report.charts import LABELLED_CANDIDATES, funnel_chart, headline_chart, missing_rate_chart
from evalframe.report.svgkit import COLOURS, WIDTH
from evalframe.report.view import View

EVIL = "<A&B>"


def _view(candidates: list[str], results: dict[str, list[object]], *, slices: tuple[str, ...] = ()) -> View:
    cases = pl.DataFrame({"case_id": ["q1", "q2", "q3", "q4"], "kind": ["x", "x", "y", "z"]})
    plan = ef.Plan.from_frame(cases, candidates=candidates)
    return build_view(ef.audit(plan, pl.DataFrame(results), slices=list(slices)))


@pytest.fixture(scope="module")
def small() -> View:
    """<A&B>: q1 passed, q2 failed, q3 and q4 missing; B: three passed, one failed."""
    results = {
        "candidate": [EVIL, EVIL, "B", "B", "B", "B"],
        "case_id": ["q1", "q2", "q1", "q2", "q3", "q4"],
        "passed": [1, 0, 1, 1, 1, 0],
    }
    return _view([EVIL, "B"], results, slices=("kind",))


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    assert root.tag == "svg"
    return root


def _texts(element: ET.Element) -> list[str]:
    """Each text element's lines, joined by a newline (tspans are lines)."""
    return ["\n".join(t.itertext()) for t in element.iter("text")]


def _rects(root: ET.Element, cls: str) -> list[ET.Element]:
    return [r for r in root.iter("rect") if r.get("class") == cls]


def _height(svg: str) -> float:
    return float(_parse(svg).attrib["height"])


# --- headline ----------------------------------------------------------------------------------------


def test_headline_is_a_named_scalable_svg(small: View) -> None:
    root = _parse(headline_chart(small.candidates))
    label = "Share of planned units by outcome, and pass rate against its range"
    assert (root.get("role"), root.get("aria-label")) == ("img", label)
    assert root[0].tag == "title" and root[0].text == label
    assert root[1].tag == "desc" and (root[1].text or "").startswith("One row per candidate.")
    assert root.get("viewBox") == f"0 0 {WIDTH} {root.get('height')}" and root.get("width") == str(WIDTH)


def test_headline_has_one_segment_per_outcome_present_with_its_share_as_width(small: View) -> None:
    root = _parse(headline_chart(small.candidates))
    assert [len(_rects(root, o)) for o in ("passed", "failed", "missing")] == [2, 2, 1]
    evil, b = root.findall("g[@class='candidate']")
    # The share axis starts at x=210 and is 360 wide: each segment's width is its share of planned times 360.
    segments = [(r.get("class"), float(r.get("x", "")), float(r.get("width", ""))) for r in evil.iter("rect")]
    assert segments[:3] == [("passed", 210, 90), ("failed", 300, 90), ("missing", 390, 180)]
    assert [(r.get("class"), r.get("width")) for r in b.iter("rect")][:2] == [("passed", "270"), ("failed", "90")]
    assert [r.get("fill") for r in b.iter("rect")][:2] == [COLOURS["passed"], COLOURS["failed"]]
    assert _rects(root, "missing")[0].get("fill") == "url(#headline-hatch)"
    assert root.find("defs/pattern[@id='headline-hatch']") is not None
    assert (
        evil.find("rect/title") is not None
        and evil.findtext("rect/title") == "<A&B>: passed 1 of 4 planned units (25%)"
    )


def test_headline_labels_each_candidate_point_and_range(small: View) -> None:
    root = _parse(headline_chart(small.candidates))
    evil, b = root.findall("g[@class='candidate']")
    assert _texts(evil) == [
        "<A&B>\n2 of 4 scored",
        "1",
        "1",
        "2",
        "over all 4 planned: 25% to 75%",
        "50% = 1/2",
    ]
    assert _texts(b) == ["B\n4 of 4 scored", "3", "1", "over all 4 planned: 75%", "75% = 3/4"]
    # The range of <A&B> runs from its worst case 25% to its best case 75% on the rate axis (x=620, 340 wide).
    band = evil.find("rect[@class='range']")
    assert band is not None and (band.get("x"), band.get("width")) == ("705", "170")
    tick = b.find("line[@class='range']")  # an exact full-plan rate is a tick, not a band
    assert tick is not None and tick.get("x1") == tick.get("x2") == "875"
    point = evil.find("g[@class='point']/circle")
    assert point is not None and point.get("cx") == "790"  # pass_rate_scored 50%
    legends = [_texts(g) for g in root.findall("g[@class='legend']")]
    assert legends == [
        ["passed", "failed", "missing"],
        ["full-plan range: worst to best case", "pass_rate_scored (passed / scored), Wilson CI"],
    ]
    axis = root.find("g[@class='axis']")
    assert axis is not None and _texts(axis) == ["0%", "25%", "50%", "75%", "100%"]


def test_data_strings_are_escaped_in_every_chart(small: View) -> None:
    assert small.slices is not None
    for svg in (headline_chart(small.candidates), funnel_chart(small.candidates), missing_rate_chart(small.slices)):
        assert EVIL not in svg and "&lt;A&amp;B&gt;" in svg
        assert any(EVIL in text for text in _texts(_parse(svg)))


def test_long_names_are_wrapped() -> None:
    name = "a-rather-long-candidate-name-from-a-sweep-over-temperatures"
    view = _view([name], {"candidate": [name], "case_id": ["q1"], "passed": [1]})
    root = _parse(headline_chart(view.candidates))
    assert _texts(root.find("g[@class='candidate']"))[0] == (  # type: ignore[arg-type]
        "a-rather-long-candidate-name\n-from-a-sweep-over-temperatu\nres\n1 of 4 scored"
    )


# --- funnel ------------------------------------------------------------------------------------------


def test_funnel_has_one_group_per_candidate_with_a_bar_per_stage(small: View) -> None:
    root = _parse(funnel_chart(small.candidates))
    assert root.get("aria-label") == "Coverage funnel per candidate"
    evil, b = root.findall("g[@class='candidate']")
    assert _texts(evil) == [
        "<A&B>",
        "4",
        "2 (50%)",
        "2 (50%)",
        "2 (50%)",
        "2 (50%)",
        "1 (25%)",
        "2 (50%)",
        "0 (0%)",
        "0 (0%)",
    ]
    stages = ["planned", "attempted", "completed", "with_output", "scored", "passed", "missing"]
    assert [r.get("class") for r in evil.iter("rect")] == stages  # no bar for a zero count
    # Two panels of (1000 - 100) / 2 = 450 each; the largest plan (4 units) is (450 - 16) / 1.45 long.
    unit = (450 - 16) / 1.45 / 4
    assert [float(r.get("width", "")) for r in evil.iter("rect")] == [round(n * unit, 2) for n in (4, 2, 2, 2, 2, 1, 2)]
    assert [r.get("x") for r in b.iter("rect")][:1] == ["554"]  # the second panel starts at 100 + 450
    stage_names = root.find("g[@class='stages']")
    assert stage_names is not None and _texts(stage_names) == [
        "planned",
        "attempted",
        "completed",
        "with output",
        "scored",
        "passed",
        "missing",
        "exec failed",
        "judge failed",
    ]


# --- missing rate by slice ---------------------------------------------------------------------------


def test_missing_rate_chart_has_a_bar_per_candidate_and_value(small: View) -> None:
    assert small.slices is not None
    root = _parse(missing_rate_chart(small.slices))
    panel = root.find("g[@class='panel']")
    assert panel is not None and _texts(panel)[0] == "missing rate by kind (missing / planned)"
    groups = panel.findall("g[@class='value']")
    assert [_texts(g) for g in groups] == [["x", "0/2", "0/2"], ["y", "1/1", "0/1"], ["z", "1/1", "0/1"]]
    # 100% is 400 / 1.12 units long (the axis runs to 112% to leave room for the labels).
    assert [r.get("width") for r in groups[1].iter("rect")] == [str(round(400 / 1.12, 2)), "0"]
    assert [r.get("fill") for r in groups[1].iter("rect")] == ["#1c7ed6", "#e8590c"]
    legend = panel.find("g[@class='legend']")
    assert legend is not None and [t.split(":")[0] for t in _texts(legend)] == [EVIL, "B"]


# --- many candidates ---------------------------------------------------------------------------------


def _many(n: int) -> View:
    names = [f"m{i:03d}" for i in range(n)]
    return _view(names, {"candidate": names, "case_id": ["q1"] * n, "passed": [1] * n})


def test_charts_grow_by_a_row_per_candidate() -> None:
    views = {n: _many(n) for n in (LABELLED_CANDIDATES + 1, 12, 100)}
    headline = {n: _height(headline_chart(v.candidates)) for n, v in views.items()}
    # Beyond LABELLED_CANDIDATES a row is the two label lines (14 each) plus 8.
    assert headline[100] - headline[12] == 88 * 36 and headline[12] - headline[9] == 3 * 36
    funnel = {n: _height(funnel_chart(v.candidates)) for n, v in views.items()}
    assert (funnel[100] - funnel[12]) / (funnel[12] - funnel[9]) == 30  # 34 rows of three panels against 4
    root = _parse(headline_chart(views[100].candidates))
    assert len(root.findall("g[@class='candidate']")) == 100 and len(_rects(root, "passed")) == 100
    assert [t for t in _texts(root) if "=" in t] == []  # too many to label each point: the table gives them
    assert len(_parse(funnel_chart(views[100].candidates)).findall("g[@class='candidate']")) == 100


def test_bidi_overrides_in_names_are_written_as_escapes_in_every_chart() -> None:
    name = "bidi\u202eevil"
    view = _view([name], {"candidate": [name], "case_id": ["q1"], "passed": [1]}, slices=("kind",))
    assert view.slices is not None
    for svg in (headline_chart(view.candidates), funnel_chart(view.candidates), missing_rate_chart(view.slices)):
        assert "\u202e" not in svg and "bidi\\u202eevil" in svg
