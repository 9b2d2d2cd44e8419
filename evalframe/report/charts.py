"""Charts of a report as inline SVG (matplotlib): where the planned units went, the funnel, missing by slice.

Text is drawn as paths (no font needed where the page is opened) and SVG ids
come from a fixed salt, so two renders are byte-identical. Every value drawn
is read from the view (:mod:`evalframe.report.view`).
"""

from __future__ import annotations

import html
import io
import re
import textwrap
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import matplotlib as mpl
import matplotlib.style
import polars as pl
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from evalframe.columns import CANDIDATE
from evalframe.natural import natural_key
from evalframe.report.format import pct
from evalframe.report.view import COMPOSITION, Candidate, Slices

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Slice values per chart panel (those with the highest missing rate).
SLICE_VALUES_CHARTED: Final = 30
#: Up to this many candidates the pass-rate panel labels each point and range.
LABELLED_CANDIDATES: Final = 8
#: The coverage funnel, in order, and what is lost beside it.
FUNNEL_STAGES: Final = ("planned", "attempted", "completed", "with_output", "scored", "passed")
FUNNEL_LOSSES: Final = ("missing", "exec_failed", "judge_failed")
OPTIONAL_LOSSES: Final = ("not_started", "no_output", "not_scored")

COLOURS: Final[Mapping[str, str]] = {
    "planned": "#495057",
    "attempted": "#1864ab",
    "completed": "#1971c2",
    "with_output": "#1c7ed6",
    "scored": "#339af0",
    "passed": "#2b8a3e",
    "failed": "#e03131",
    "scored_no_threshold": "#74c0fc",
    "not_scored": "#adb5bd",
    "judge_failed": "#9c36b5",
    "no_output": "#f59f00",
    "exec_failed": "#e8590c",
    "not_started": "#868e96",
    "missing": "#dee2e6",
}
_CANDIDATE_COLOURS: Final = ("#1c7ed6", "#e8590c", "#2b8a3e", "#9c36b5", "#f08c00", "#0c8599", "#c2255c", "#5c940d")
_SVG_METADATA: Final = {"Date": None, "Creator": None, "Format": None, "Type": None}


@contextmanager
def _chart_settings() -> Iterator[None]:
    """Matplotlib defaults plus the settings below, restored afterwards (a notebook's own settings are untouched)."""
    settings = mpl.rc_context(
        {
            "svg.hashsalt": "evalframe",  # fixed salt: ids are the same on every render
            "svg.fonttype": "path",  # text as glyph paths: no font needed where the page is opened
            "text.parse_math": False,  # a "$" in a candidate name is text, not mathtext
            "font.family": "DejaVu Sans",  # bundled with matplotlib
            "font.size": 9,
            "axes.titlesize": 10,
            "axes.titleweight": "bold",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
        }
    )
    with matplotlib.style.context("default"), settings, warnings.catch_warnings():
        # A data string with a character the bundled font lacks is drawn as a box, not an error.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        yield


def _svg(fig: Figure, *, scope: str, label: str) -> str:
    """Inline SVG of a figure: no prolog, namespaces or comments; ids prefixed by ``scope``."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=_SVG_METADATA)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<!--.*?-->\n?", "", text, flags=re.DOTALL)
    text = text.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "").replace(
        ' xmlns="http://www.w3.org/2000/svg"', ""
    )
    # Several figures share one page: make every id (and reference to it) unique to this figure.
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{scope}-{m[1]}"', text)
    text = re.sub(r'(href="#|url\(#)([^")]+)', lambda m: f"{m[1]}{scope}-{m[2]}", text)
    text = text.replace("<svg ", f'<svg role="img" aria-label="{html.escape(label, quote=True)}" ', 1)
    return text


def _wrap(text: str, width: int = 28) -> str:
    """Wrap each line of a chart label (data strings can be long)."""
    return "\n".join("\n".join(textwrap.wrap(line, width, break_on_hyphens=False)) or line for line in text.split("\n"))


def _percent_axis(ax: Axes) -> None:
    ax.set_xlim(0, 1)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    ax.grid(axis="x", color="#e9ecef", linewidth=0.8)
    ax.set_axisbelow(True)


def headline_chart(candidates: Sequence[Candidate]) -> str:
    """Inline SVG: where each candidate's planned units went, and its pass rate against its full-plan range.

    Left, one stacked bar per candidate: the share of planned units that
    passed, failed, were not graded, or are missing. Right, the
    ``pass_rate_scored`` point with its Wilson interval, over the band from
    ``pass_rate_planned`` (worst case) to ``pass_rate_upper`` (best case).

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> headline_chart(ef.report.build_view(report).candidates).startswith("<svg")
    True
    """
    records = list(candidates)
    k = len(records)
    with _chart_settings():
        fig = Figure(figsize=(10.5, 1.9 + 0.55 * k), layout="constrained")
        share, rate = fig.subplots(1, 2, sharey=True, width_ratios=[1.15, 1])
        _share_panel(share, records)
        _rate_panel(rate, records)
        return _svg(fig, scope="headline", label="Share of planned units by outcome, and pass rate against its range")


def _share_panel(share: Axes, records: Sequence[Candidate]) -> None:
    """One stacked bar per candidate: the share of its planned units in each outcome, counts inside."""
    ys = list(range(len(records)))
    left = [0.0] * len(records)
    handles = []
    for outcome in COMPOSITION:
        counts = [r.outcomes.get(outcome, 0) for r in records]
        if not any(counts):
            continue
        widths = [dict((o, w) for o, _, w in r.composition).get(outcome, 0.0) for r in records]
        style = _bar_style(outcome)
        share.barh(ys, widths, left=left, height=0.6, **style)
        for y, x0, w, c in zip(ys, left, widths, counts, strict=True):
            if w >= 0.07:
                colour = "#212529" if outcome in ("missing", "scored_no_threshold", "not_scored") else "white"
                share.text(x0 + w / 2, y, str(c), ha="center", va="center", color=colour, fontsize=8.5)
        left = [x + w for x, w in zip(left, widths, strict=True)]
        handles.append(Patch(label=outcome.replace("_", " "), **style))
    _percent_axis(share)
    share.set_yticks(ys, [_wrap(f"{r.name}\n{r.counts['scored']} of {r.planned} scored") for r in records])
    share.invert_yaxis()
    share.set_title("Where the planned units went (share of planned)", loc="left")
    share.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=min(5, len(handles)))


#: The white box behind a label drawn over bars.
_LABEL_BOX: Final = {"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.85}


def _rate_panel(rate: Axes, records: Sequence[Candidate]) -> None:
    """Per candidate, ``pass_rate_scored`` with its interval over the band of the full-plan pass rate."""
    labelled = len(records) <= LABELLED_CANDIDATES  # beyond, the labels would overlap: the headline table gives them
    for y, r in enumerate(records):
        _range_band(rate, y, r, labelled=labelled)
        _rate_point(rate, y, r, labelled=labelled)
    _percent_axis(rate)
    rate.set_xlim(-0.02, 1.04)
    rate.set_title("pass_rate_scored vs. the full-plan range", loc="left")
    rate.legend(
        handles=[
            Patch(facecolor="#ffe8cc", edgecolor="#f08c00", label="full-plan range: worst to best case"),
            Line2D([], [], marker="o", color="#1864ab", label="pass_rate_scored (passed / scored), Wilson CI"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16),
        ncols=1,
    )


def _range_band(rate: Axes, y: int, r: Candidate, *, labelled: bool) -> None:
    """The band from ``pass_rate_planned`` (worst case) to ``pass_rate_upper`` (best case); a tick when equal."""
    low, high = r.rates["pass_rate_planned"].value, r.rates["pass_rate_upper"].value
    if low is None or high is None:
        return
    if high - low > 1e-9:
        rate.barh(y, high - low, left=low, height=0.5, color="#ffe8cc", edgecolor="#f08c00", hatch="")
    else:
        rate.plot([low, low], [y - 0.25, y + 0.25], color="#f08c00", linewidth=3)
    span = pct(low) if high - low <= 1e-9 else f"{pct(low)} to {pct(high)}"
    if labelled:
        rate.text(
            (low + high) / 2,
            y + 0.27,
            f"over all {r.planned} planned: {span}",
            ha="center",
            va="top",
            fontsize=8,
            color="#d9480f",
            bbox={**_LABEL_BOX},
        )


def _rate_point(rate: Axes, y: int, r: Candidate, *, labelled: bool) -> None:
    """The ``pass_rate_scored`` point with its interval (when there is one), or a note that nothing was scored."""
    scored = r.rates["pass_rate_scored"]
    value = scored.value
    if value is None:
        rate.text(0.5, y, "no pass rate (nothing scored)", ha="center", va="center", color="#868e96")
        return
    if scored.ci_low is not None and scored.ci_high is not None:
        rate.errorbar(
            value,
            y,
            xerr=[[max(0.0, value - scored.ci_low)], [max(0.0, scored.ci_high - value)]],
            fmt="o",
            color="#1864ab",
            capsize=4,
            markersize=7,
        )
    else:
        rate.plot([value], [y], "o", color="#1864ab", markersize=7)
    if labelled:
        rate.annotate(
            f"{pct(value)} = {r.counts['passed']}/{r.counts['scored']}",
            (value, y),
            xytext=(0, 9),
            textcoords="offset points",
            ha="center",
            fontsize=8.5,
            color="#1864ab",
            bbox={**_LABEL_BOX},
        )


def _bar_style(outcome: str) -> dict[str, Any]:
    if outcome == "missing":
        return {"facecolor": COLOURS["missing"], "edgecolor": "#868e96", "hatch": "///", "linewidth": 0.6}
    return {"facecolor": COLOURS[outcome], "edgecolor": "white", "linewidth": 0.6}


def funnel_chart(candidates: Sequence[Candidate]) -> str:
    """Inline SVG: the coverage funnel of each candidate, one small chart per candidate.

    Bars ``planned → attempted → completed → with_output → scored → passed``,
    then the losses ``missing``, ``exec_failed``, ``judge_failed`` (and
    ``not_started``, ``no_output``, ``not_scored`` when any candidate has
    one), each labelled with its count and its share of planned.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
    >>> "<svg" in funnel_chart(ef.report.build_view(report).candidates)
    True
    """
    records = list(candidates)
    losses = [*FUNNEL_LOSSES, *[c for c in OPTIONAL_LOSSES if any(r.counts.get(c) for r in records)]]
    bars = [*FUNNEL_STAGES, *losses]
    ys = [*range(len(FUNNEL_STAGES)), *[len(FUNNEL_STAGES) + 0.5 + i for i in range(len(losses))]]
    ncols = min(len(records), 3) or 1
    nrows = -(-len(records) // ncols) or 1
    top = max([r.planned for r in records] + [1])
    with _chart_settings():
        fig = Figure(figsize=(3.6 * ncols + 0.9, (0.24 * len(bars) + 0.7) * nrows), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for i, (ax, r) in enumerate(zip(axes.flat, records, strict=False)):
            values = [r.counts.get(b, 0) for b in bars]
            styles = [_bar_style(b) if b in COLOURS else {} for b in bars]
            for y, v, style in zip(ys, values, styles, strict=True):
                ax.barh(y, v, height=0.75, **style)
            for y, v, b in zip(ys, values, bars, strict=True):
                share = f" ({pct(r.shares[b])})" if r.planned and b != "planned" else ""
                ax.text(v + top * 0.02, y, f"{v}{share}", va="center", fontsize=8)
            ax.axhline(len(FUNNEL_STAGES) - 0.25, color="#adb5bd", linewidth=0.8, linestyle="--")
            ax.set_title(_wrap(r.name, 40), loc="left")
            ax.set_xlim(0, top * 1.45)
            ax.set_ylim(ys[-1] + 0.6, -0.6)  # planned on top
            # Every bar is labelled with its count: no unit axis. Ticks are most of a panel's drawing time,
            # so a panel has none but the stage names, once per row.
            ax.xaxis.set_visible(False)
            ax.spines["bottom"].set_visible(False)
            if i % ncols == 0:
                ax.set_yticks(ys, [b.replace("_", " ") for b in bars])
            else:
                ax.yaxis.set_visible(False)
                ax.spines["left"].set_visible(False)
        for ax in list(axes.flat)[len(records) :]:
            ax.set_visible(False)
        return _svg(fig, scope="funnel", label="Coverage funnel per candidate")


def missing_rate_chart(view: Slices) -> str:
    """Inline SVG: missing rate by slice value, one panel per slice column, one bar per candidate.

    Bars are labelled missing / planned; the legend gives each candidate's
    test of independence and p-value, and says when it is selective. At
    most :data:`SLICE_VALUES_CHARTED` values per column are drawn (those
    with the highest missing rate), in natural order.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"], "kind": ["x", "y"]}), candidates=["A"])
    >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]}), slices=["kind"])
    >>> "<svg" in missing_rate_chart(ef.report.build_view(report).slices)
    True
    """
    slices, missingness = view.table, view.missingness
    columns = list(dict.fromkeys(slices.get_column("slice_column").to_list()))
    candidates = list(dict.fromkeys(slices.get_column(CANDIDATE).to_list()))
    tests = {(r[CANDIDATE], r["slice_column"]): r for r in missingness.iter_rows(named=True)}
    panels = []
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
        panels.append((column, part, values))
    k = len(candidates)
    heights = [max(1.6, 0.7 + len(values) * (0.16 * k + 0.12)) for _, _, values in panels]
    with _chart_settings():
        fig = Figure(figsize=(9.5, sum(heights) + 0.3), layout="constrained")
        axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=heights)
        for ax, (column, part, values) in zip(axes[:, 0], panels, strict=True):
            band = 0.8 / k
            index = {v: i for i, v in enumerate(values)}
            for j, cand in enumerate(candidates):
                mine = part.filter(pl.col(CANDIDATE) == cand)
                rows = [r for r in mine.iter_rows(named=True) if r["slice_value"] in index]
                ys = [index[r["slice_value"]] - 0.4 + band * (j + 0.5) for r in rows]
                rates = [r["missing_rate"] or 0.0 for r in rows]
                test = tests.get((cand, column), {})
                p = test.get("p_adjusted", test.get("p_value"))
                label = f"{cand}: {test.get('test', 'none')}" + (f", p={p:.2g}" if p is not None else ", no test")
                if test.get("selective"):
                    label += " — SELECTIVE"
                colour = _CANDIDATE_COLOURS[j % len(_CANDIDATE_COLOURS)]
                ax.barh(ys, rates, height=band * 0.92, color=colour, label=_wrap(label, 60))
                for y, x, r in zip(ys, rates, rows, strict=True):
                    ax.text(x + 0.01, y, f"{r['missing']}/{r['planned']}", va="center", fontsize=7.5)
            ax.set_yticks(range(len(values)), [_wrap("null" if v is None else str(v), 30) for v in values])
            ax.invert_yaxis()
            _percent_axis(ax)
            ax.set_xlim(0, 1.12)
            ax.set_title(f"missing rate by {column} (missing / planned)", loc="left")
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        return _svg(fig, scope="slices", label="Missing rate by slice value per candidate")
