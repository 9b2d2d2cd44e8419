"""Charts of a report as inline SVG: where the planned units went, the funnel, missing by slice.

The SVG is written directly as text with the helpers of :mod:`~evalframe.report.svgkit`, with no
plotting library: a chart is a few hundred rectangles, lines and labels,
and building their markup costs milliseconds where a plotting library
costs seconds. Every chart is ``WIDTH`` user units wide with a ``viewBox``
(the page scales it to its width) and grows in height with the number of
candidates and slice values. Text is SVG text in the page's own fonts;
every string from the data is XML-escaped, the one id a chart defines (its
hatch pattern) is prefixed with the chart's name so that several charts
share a page, and two renders are byte-identical. Every value drawn is
read from the view (:mod:`evalframe.report.view`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

import polars as pl

from evalframe.columns import CANDIDATE
from evalframe.natural import natural_key
from evalframe.report import svgkit as svg
from evalframe.report.candidate import COMPOSITION, Candidate
from evalframe.report.format import pct
from evalframe.report.sentences import rated_units
from evalframe.report.view import Slices

#: Slice values per chart panel (those with the highest missing rate).
SLICE_VALUES_CHARTED: Final = 30
#: Up to this many candidates the pass-rate panel labels each point and range.
LABELLED_CANDIDATES: Final = 8
#: The coverage funnel, in order, and what is lost beside it.
FUNNEL_STAGES: Final = ("planned", "attempted", "completed", "with_output", "scored", "passed")
FUNNEL_LOSSES: Final = ("missing", "exec_failed", "judge_failed")
OPTIONAL_LOSSES: Final = ("not_started", "no_output", "not_scored")
#: Candidates side by side in the funnel chart.
FUNNEL_COLUMNS: Final = 3

_CANDIDATE_COLOURS: Final = ("#1c7ed6", "#e8590c", "#2b8a3e", "#9c36b5", "#f08c00", "#0c8599", "#c2255c", "#5c940d")
#: Outcomes light enough that a count drawn on them is dark.
_LIGHT: Final = ("missing", "scored_no_threshold", "not_scored")
_POINT: Final = "#1864ab"
_BAND_FILL: Final = "#ffe8cc"
_BAND_EDGE: Final = "#f08c00"
_BAND_TEXT: Final = "#d9480f"
#: Line height of the labels (12-unit text).
_LINE: Final = 14

# --- headline --------------------------------------------------------------------------------------

#: Headline layout: candidate labels right-aligned at _LABEL_X; the share axis, then the pass-rate axis.
_LABEL_X: Final = 200
_SHARE_X: Final = 210
_SHARE_W: Final = 360
_RATE_X: Final = 620
_RATE_W: Final = 340


def headline_chart(
    candidates: Sequence[Candidate], *, prefix: str = "", href: Callable[[str, str], str] | None = None
) -> str:
    """Inline SVG: where each candidate's planned units went, and its pass rate against its full-plan range.

    Left, one stacked bar per candidate: the share of planned units that
    passed, failed, were not graded, or are missing (hatched). Right, the
    ``pass_rate_scored`` point with its Wilson interval, over the band from
    ``pass_rate_planned`` (worst case) to ``pass_rate_upper`` (best case).
    Up to :data:`LABELLED_CANDIDATES` candidates each point and band is
    labelled; every bar segment has its count as a tooltip. One row per
    candidate: the chart grows in height with their number. ``prefix`` leads
    the chart's one id (its hatch pattern), for a page with one chart per task.
    With ``href`` (candidate, outcome -> a link), each bar segment links there (report.html: to its units).

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> svg = headline_chart(ef.report.build_view(report).candidates)
    >>> svg.startswith('<svg role="img" aria-label="Share of planned units by outcome'), svg.count('class="passed"')
    (True, 1)
    """
    records = list(candidates)
    labelled = len(records) <= LABELLED_CANDIDATES  # beyond, the labels would overlap: the headline table gives them
    labels = [svg.wrap(f"{r.name}\n{r.counts['scored']} of {r.observed} scored") for r in records]
    # Under retry every the shares are of observations (each counted attempt), not of planned units.
    of = "observations" if any(r.base == "observations" for r in records) else "planned"
    went = rated_units(of)
    heights = [max(60 if labelled else 30, _LINE * len(lines) + 8) for lines in labels]
    top = 30 if labelled else 48  # long charts repeat the axis labels above the rows
    bottom = top + sum(heights)
    parts = [
        svg.text(_SHARE_X, 14, f"Where the {went} went (share of {of})", size=13, font_weight="bold"),
        svg.text(_RATE_X, 14, "pass_rate_scored vs. the full-plan range", size=13, font_weight="bold"),
    ]
    ticks = [bottom + 14] if labelled else [36, bottom + 14]
    parts += svg.percent_axis(_SHARE_X, _SHARE_W, top, bottom, labels_at=ticks)
    parts += svg.percent_axis(_RATE_X, _RATE_W, top, bottom, labels_at=ticks)
    y = top
    for r, lines, height in zip(records, labels, heights, strict=True):
        middle = y + height / 2
        row = [svg.text(_LABEL_X, middle, lines, text_anchor="end")]
        row += _share_bar(r, middle, f"{prefix}headline", href)
        row += _rate_marks(r, middle, labelled=labelled)
        parts.append(svg.tag("g", "".join(row), class_="candidate"))
        y += height
    shown = [o for o in COMPOSITION if any(r.outcomes.get(o, 0) for r in records)]
    share_items = [
        (
            svg.swatch(f"url(#{prefix}headline-hatch)", stroke=svg.AXIS)
            if o == "missing"
            else svg.swatch(svg.COLOURS[o]),
            o.replace("_", " "),
        )
        for o in shown
    ]
    share_legend, share_height = svg.legend(share_items, 20, bottom + 36, _RATE_X - 60)
    point = svg.tag("line", x1=0, y1=6, x2=14, y2=6, stroke=_POINT, stroke_width=1.5) + svg.tag(
        "circle", cx=7, cy=6, r=4, fill=_POINT
    )
    rate_items = [
        (svg.swatch(_BAND_FILL, stroke=_BAND_EDGE), "full-plan range: worst to best case"),
        (point, "pass_rate_scored (passed / scored), Wilson CI"),
    ]
    rate_legend, rate_height = svg.legend(rate_items, _RATE_X, bottom + 36, 1)  # width 1: one entry per row
    parts += [share_legend, rate_legend]
    return svg.chart(
        parts,
        scope=f"{prefix}headline",
        label="Share of planned units by outcome, and pass rate against its range",
        desc="One row per candidate. Left: a stacked bar of the share of its planned units in each outcome, "
        "hatched where units are missing. Right: pass_rate_scored with its Wilson interval, over the band from "
        "the worst to the best case of the pass rate over every planned unit.",
        height=bottom + 36 + max(share_height, rate_height) + 6,
    )


def _share_bar(r: Candidate, middle: float, scope: str, href: Callable[[str, str], str] | None) -> list[str]:
    """One stacked bar: the share of the candidate's planned units in each outcome, counts inside wide segments.

    With ``href``, each segment (and its count) is a link to ``href(candidate, outcome)``.
    """
    parts: list[str] = []
    left = 0.0
    for outcome, units, share in r.composition:
        x, width = _SHARE_X + left * _SHARE_W, share * _SHARE_W
        title = f"{r.name}: {outcome.replace('_', ' ')} {units} of {r.observed} {r.units} ({pct(share)})"
        segment = [svg.bar(x, middle - 10, width, 20, outcome, scope=scope, title=title)]
        if share >= 0.07:
            colour = svg.TEXT if outcome in _LIGHT else "white"
            segment.append(svg.text(x + width / 2, middle, str(units), size=11, text_anchor="middle", fill=colour))
        parts.append(svg.tag("a", "".join(segment), href=href(r.name, outcome)) if href else "".join(segment))
        left += share
    return parts


def _rate_x(value: float) -> float:
    return _RATE_X + max(0.0, min(1.0, value)) * _RATE_W


def _label(x: float, y: float, text: str, colour: str) -> str:
    """A label centred on ``x`` but kept inside the chart, with a white halo so it reads over bars and lines."""
    half = svg.text_width(text, 11) / 2
    x = max(_RATE_X - 40 + half, min(svg.WIDTH - 2 - half, x))
    return svg.text(
        x, y, text, size=11, text_anchor="middle", fill=colour, stroke="white", stroke_width=3, paint_order="stroke"
    )


def _rate_marks(r: Candidate, middle: float, *, labelled: bool) -> list[str]:
    """The band of the full-plan pass rate (a tick when exact) and ``pass_rate_scored`` with its interval."""
    parts = []
    low, high = r.rates["pass_rate_planned"].value, r.rates["pass_rate_upper"].value
    if low is not None and high is not None:
        exact = high - low <= 1e-9
        span = pct(low) if exact else f"{pct(low)} to {pct(high)}"
        title = f"{r.name}: pass rate over all {r.observed} {r.units}, worst to best case: {span}"
        x, y = _rate_x(low), middle - 8
        if exact:
            shape: dict[str, str | float] = {"x1": x, "y1": y, "x2": x, "y2": middle + 8, "stroke": _BAND_EDGE}
        else:
            shape = {"x": x, "y": y, "width": _rate_x(high) - x, "height": 16, "fill": _BAND_FILL, "stroke": _BAND_EDGE}
        shape["stroke_width"] = 3 if exact else 1
        parts.append(svg.tag("line" if exact else "rect", svg.tooltip(title), class_="range", **shape))
        if labelled:
            label = f"over all {r.observed} {r.base}: {span}"
            parts.append(_label((_rate_x(low) + _rate_x(high)) / 2, middle + 18, label, _BAND_TEXT))
    scored = r.rates["pass_rate_scored"]
    value = scored.value
    if value is None:
        reason = f"no pass rate ({r.no_pass_rate})"
        parts.append(svg.text(_rate_x(0.5), middle, reason, text_anchor="middle", fill=svg.AXIS))
        return parts
    marks = []
    if scored.ci_low is not None and scored.ci_high is not None:
        x1, x2 = _rate_x(scored.ci_low), _rate_x(scored.ci_high)
        marks += [
            svg.tag("line", x1=x1, y1=middle, x2=x2, y2=middle, stroke=_POINT, stroke_width=1.5),
            svg.tag("line", x1=x1, y1=middle - 4, x2=x1, y2=middle + 4, stroke=_POINT, stroke_width=1.5),
            svg.tag("line", x1=x2, y1=middle - 4, x2=x2, y2=middle + 4, stroke=_POINT, stroke_width=1.5),
        ]
    text = f"{pct(value)} = {r.counts['passed']}/{r.counts['scored']}"
    marks.append(
        svg.tag("circle", svg.tooltip(f"{r.name}: pass_rate_scored {text}"), cx=_rate_x(value), cy=middle, r=5)
    )
    parts.append(svg.tag("g", "".join(marks), class_="point", fill=_POINT))
    if labelled:
        parts.append(_label(_rate_x(value), middle - 17, text, _POINT))
    return parts


# --- funnel ----------------------------------------------------------------------------------------

#: Funnel layout: stage names right-aligned at _STAGE_X, then FUNNEL_COLUMNS panels from _PANELS_X.
_STAGE_X: Final = 92
_PANELS_X: Final = 100
_STEP: Final = 18
_GAP: Final = 10


def funnel_chart(candidates: Sequence[Candidate], *, prefix: str = "") -> str:
    """Inline SVG: the coverage funnel of each candidate, one small chart per candidate.

    Bars ``planned → attempted → completed → with_output → scored → passed``,
    then the losses ``missing``, ``exec_failed``, ``judge_failed`` (and
    ``not_started``, ``no_output``, ``not_scored`` when any candidate has
    one), each labelled with its count and its share of planned. Bars share
    one scale (the largest plan); :data:`FUNNEL_COLUMNS` candidates side by
    side, the stage names once per row: the chart grows in height with the
    number of candidates. ``prefix`` leads the chart's one id, as in :func:`headline_chart`.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> svg = funnel_chart(ef.report.build_view(report).candidates)
    >>> svg.count('class="candidate"'), "1 (50%)" in svg
    (1, True)
    """
    records = list(candidates)
    losses = [*FUNNEL_LOSSES, *[c for c in OPTIONAL_LOSSES if any(r.counts.get(c) for r in records)]]
    bars = [*FUNNEL_STAGES, *losses]
    offsets = [i * _STEP + (_GAP if i >= len(FUNNEL_STAGES) else 0) for i in range(len(bars))]
    bars_height = offsets[-1] + _STEP
    ncols = min(len(records), FUNNEL_COLUMNS) or 1
    panel = (svg.WIDTH - _PANELS_X) / ncols
    scale = (panel - 16) / 1.45 / max([max(r.planned, r.observed) for r in records] + [1])  # room beside the bars
    titles = [svg.wrap(r.name, int((panel - 12) / svg.text_width("m", 13))) for r in records]  # bold names fit
    parts: list[str] = []
    y = 4.0
    for start in range(0, len(records), ncols):
        row = range(start, min(start + ncols, len(records)))
        title_height = max(len(titles[i]) for i in row) * (_LINE + 1) + 6
        top = y + title_height
        stage_names = [
            svg.text(_STAGE_X, top + o + _STEP / 2, b.replace("_", " "), text_anchor="end")
            for b, o in zip(bars, offsets, strict=True)
        ]
        parts.append(svg.tag("g", "".join(stage_names), class_="stages"))
        for column, i in enumerate(row):
            x0 = _PANELS_X + column * panel
            panel_svg = _funnel_panel(
                records[i], titles[i], bars, offsets, x0=x0, top=top, width=panel, scale=scale, scope=f"{prefix}funnel"
            )
            parts.append(panel_svg)
        y = top + bars_height + 16
    return svg.chart(
        parts,
        scope=f"{prefix}funnel",
        label="Coverage funnel per candidate",
        desc="One small chart per candidate: bars for planned, attempted, completed, with output, scored and "
        "passed units, then the losses, each labelled with its count and its share of planned (of observations "
        "under retry every).",
        height=y,
    )


def _funnel_panel(
    r: Candidate,
    title: Sequence[str],
    bars: Sequence[str],
    offsets: Sequence[float],
    *,
    x0: float,
    top: float,
    width: float,
    scale: float,
    scope: str,
) -> str:
    """One candidate's funnel: its name above, a bar per stage and loss with count and share, a dashed rule between."""
    name_y = top - 6 - (len(title) - 1) * (_LINE + 1) / 2 - _LINE / 2
    parts = [svg.text(x0 + 4, name_y, title, size=13, font_weight="bold")]
    rule = top + len(FUNNEL_STAGES) * _STEP + _GAP / 2
    parts.append(
        svg.tag(
            "line",
            x1=x0,
            y1=rule,
            x2=x0 + width - 8,
            y2=rule,
            stroke="#adb5bd",
            stroke_width=0.8,
            stroke_dasharray="4 3",
        )
    )
    parts.append(
        svg.tag("line", x1=x0 + 4, y1=top, x2=x0 + 4, y2=top + offsets[-1] + _STEP, stroke=svg.AXIS, stroke_width=1)
    )
    for stage, offset in zip(bars, offsets, strict=True):
        units = r.counts.get(stage, 0)
        share = f" ({pct(r.shares[stage])})" if r.observed and stage != "planned" else ""
        length = units * scale
        middle = top + offset + _STEP / 2
        if units:
            title_text = f"{r.name}: {stage.replace('_', ' ')} {units}{share}"
            parts.append(svg.bar(x0 + 4, middle - 6.5, length, 13, stage, scope=scope, title=title_text))
        parts.append(svg.text(x0 + 8 + length, middle, f"{units}{share}", size=11))
    return svg.tag("g", "".join(parts), class_="candidate")


# --- missing rate by slice -------------------------------------------------------------------------

#: Slice chart layout: value labels right-aligned at _VALUE_X; the axis (0 to 112%), then the legend.
_VALUE_X: Final = 202
_MISSING_X: Final = 210
_MISSING_W: Final = 400
_MISSING_DOMAIN: Final = 1.12
_LEGEND_X: Final = 640
_SLOT: Final = 14


def missing_rate_chart(view: Slices, *, prefix: str = "") -> str:
    """Inline SVG: missing rate by slice value, one panel per slice column, one bar per candidate.

    Bars are labelled missing / planned; the legend gives each candidate's
    test of independence and p-value, and says when it is selective. At
    most :data:`SLICE_VALUES_CHARTED` values per column are drawn (those
    with the highest missing rate), in natural order. Each value has a bar
    per candidate: the chart grows in height with values and candidates.
    ``prefix`` leads the chart's one id, as in :func:`headline_chart`.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"], "kind": ["x", "y"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]}), slices=["kind"])
    >>> svg = missing_rate_chart(ef.report.build_view(report).slices)
    >>> "missing rate by kind (missing / planned)" in svg, svg.count('class="bar"')
    (True, 2)
    """
    slices, missingness = view.table, view.missingness
    columns = list(dict.fromkeys(slices.get_column("slice_column").to_list()))
    candidates = list(dict.fromkeys(slices.get_column(CANDIDATE).to_list()))
    tests = {(r[CANDIDATE], r["slice_column"]): r for r in missingness.iter_rows(named=True)}
    parts: list[str] = []
    y = 4.0
    for column in columns:
        part = slices.filter(pl.col("slice_column") == column)
        values = sorted(dict.fromkeys(part.get_column("slice_value").to_list()), key=natural_key)
        if len(values) > SLICE_VALUES_CHARTED:
            worst = (
                part.group_by("slice_value")
                .agg(pl.col("missing_rate").max())
                .sort("missing_rate", "slice_value", descending=[True, False], nulls_last=True)
                .head(SLICE_VALUES_CHARTED)
                .get_column("slice_value")
                .to_list()
            )
            values = [v for v in values if v in set(worst)]
        panel, y = _missing_panel(column, part, values, candidates, tests, top=y)
        parts.append(panel)
    return svg.chart(
        parts,
        scope=f"{prefix}slices",
        label="Missing rate by slice value per candidate",
        desc="One panel per slice column: for each slice value a bar per candidate, its missing rate (missing / "
        "planned). The legend gives each candidate's test of independence, its p-value and whether missingness "
        "is selective.",
        height=y,
    )


def _missing_panel(
    column: str,
    part: pl.DataFrame,
    values: Sequence[object],
    candidates: Sequence[str],
    tests: Mapping[tuple[str, str], Mapping[str, object]],
    *,
    top: float,
) -> tuple[str, float]:
    """One slice column's panel and the y below it."""
    k = len(candidates)
    rows = {(r[CANDIDATE], r["slice_value"]): r for r in part.iter_rows(named=True)}
    labels = [svg.wrap("null" if v is None else str(v), 30) for v in values]
    heights = [max(k * _SLOT, _LINE * len(lines)) + 10 for lines in labels]
    legend = []
    for j, cand in enumerate(candidates):
        test = tests.get((cand, column), {})
        p = test.get("p_adjusted", test.get("p_value"))
        text = f"{cand}: {test.get('test', 'none')}" + (f", p={p:.2g}" if isinstance(p, float) else ", no test")
        if test.get("selective"):
            text += " — SELECTIVE"
        legend.append((_CANDIDATE_COLOURS[j % len(_CANDIDATE_COLOURS)], svg.wrap(text, 56)))
    legend_height = sum(len(lines) * _LINE + 4 for _, lines in legend)
    bars_height = max(sum(heights), legend_height)
    tall = bars_height > 400  # a tall panel repeats the axis labels above its bars
    axis_top = top + (40 if tall else 24)
    axis_bottom = axis_top + bars_height
    ticks = [axis_top - 10, axis_bottom + 14] if tall else [axis_bottom + 14]
    width = _MISSING_W / _MISSING_DOMAIN  # 100%
    parts = [
        svg.text(_MISSING_X, top + 10, f"missing rate by {column} (missing / planned)", size=13, font_weight="bold")
    ]
    parts += svg.percent_axis(_MISSING_X, width, axis_top, axis_bottom, labels_at=ticks)
    y = axis_top
    for value, lines, height in zip(values, labels, heights, strict=True):
        group = [svg.text(_VALUE_X, y + height / 2, lines, text_anchor="end")]
        first = y + (height - k * _SLOT) / 2
        for j, cand in enumerate(candidates):
            r = rows.get((cand, value))
            if r is None:
                continue
            rate = r["missing_rate"] or 0.0
            middle = first + j * _SLOT + _SLOT / 2
            shown = "null" if value is None else str(value)
            title = f"{cand}, {column} = {shown}: {r['missing']} of {r['planned']} planned missing ({pct(rate)})"
            group.append(
                svg.tag(
                    "rect",
                    svg.tooltip(title),
                    class_="bar",
                    x=_MISSING_X,
                    y=middle - 6,
                    width=rate * width,
                    height=12,
                    fill=_CANDIDATE_COLOURS[j % len(_CANDIDATE_COLOURS)],
                )
            )
            group.append(svg.text(_MISSING_X + rate * width + 4, middle, f"{r['missing']}/{r['planned']}", size=10.5))
        parts.append(svg.tag("g", "".join(group), class_="value"))
        y += height
        if y < axis_top + sum(heights):  # a rule between two values' bars
            parts.append(svg.tag("line", x1=10, y1=y, x2=_LEGEND_X - 20, y2=y, stroke=svg.GRID, stroke_width=1))
    entries = []
    ly = axis_top
    for colour, lines in legend:
        entries.append(svg.tag("rect", x=_LEGEND_X, y=ly + 1, width=14, height=11, fill=colour))
        entries.append(svg.text(_LEGEND_X + 20, ly + len(lines) * _LINE / 2, lines, size=11.5))
        ly += len(lines) * _LINE + 4
    parts.append(svg.tag("g", "".join(entries), class_="legend"))
    return svg.tag("g", "".join(parts), class_="panel"), axis_bottom + 36
