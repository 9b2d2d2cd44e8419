"""Render an audit report as one self-contained HTML page that people read.

The page leads with what a dashboard hides: each candidate's pass rate next to
its denominator and its coverage of the plan, and the range the full-plan
pass rate could take given the ungraded units. Then the funnel (chart and
table), every rate with its formula, counts and Wilson interval, the missing
and ungraded units, the slices and the independence test, the comparison
verdict and the non-refusing problems. The provenance heads the page.

The file is self-contained: no script, no stylesheet, font or image is
fetched; charts are matplotlib figures inlined as SVG (text drawn as paths,
so the page looks the same everywhere). Output is deterministic: no
timestamp, and SVG ids come from a fixed salt, so two renders of the same
report are byte-identical. Every string that comes from the data (case ids,
candidates, slice values, paths) is escaped.

Tables are plain HTML built with :func:`html.escape`: the report's tables are
small and fixed in shape, and a table library would add a dependency (and its
own HTML) without adding anything a reader sees here.
"""

from __future__ import annotations

import html
import io
import re
import textwrap
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import matplotlib as mpl
import matplotlib.style
import polars as pl
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from evalframe.columns import CANDIDATE, CASE_ID, KIND, OUTCOME, OUTCOMES, TRIAL
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS
from evalframe.problems import PROBLEM_KINDS
from evalframe.report import (
    RATE_FORMULAS,
    AuditReport,
    describe,
    fmt_value,
    interval_text,
    missing_ids_text,
    provenance_lines,
    ranking_note,
)
from evalframe.slices import missingness_shown

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from evalframe.compare import Comparison

#: Ungraded units listed on the page (units.parquet holds all of them).
UNGRADED_ROWS_SHOWN: Final = 100
#: Missing case ids named on a headline card (the missing-units section names up to 20).
CARD_IDS_SHOWN: Final = 5
#: Slice rows shown in the slice table, and slice values per chart.
SLICE_ROWS_SHOWN: Final = 300
SLICE_VALUES_CHARTED: Final = 30

#: The coverage funnel, in order, and what is lost beside it.
FUNNEL_STAGES: Final = ("planned", "attempted", "completed", "with_output", "scored", "passed")
FUNNEL_LOSSES: Final = ("missing", "exec_failed", "judge_failed")
OPTIONAL_LOSSES: Final = ("not_started", "no_output", "not_scored")
#: Where a planned unit ended up, from best evidence to none (the stacked bar of the headline chart).
COMPOSITION: Final = (
    "passed",
    "failed",
    "scored_no_threshold",
    "not_scored",
    "judge_failed",
    "no_output",
    "exec_failed",
    "not_started",
    "missing",
)
_GRADED: Final = ("passed", "failed", "scored_no_threshold")

_COLOURS: Final[Mapping[str, str]] = {
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

_CSS: Final = """
.ef{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#212529;
  line-height:1.45;max-width:1180px;margin:0 auto;padding:0 18px 40px}
.ef h1{font-size:1.7em;margin:.6em 0 .1em}.ef h2{font-size:1.3em;margin:1.6em 0 .4em;border-bottom:2px solid #e9ecef;
  padding-bottom:.2em}.ef h3{margin:.2em 0 .3em;font-size:1.15em}
.ef .sub{color:#495057;margin:0 0 .8em}.ef code,.ef .mono{font-family:ui-monospace,Menlo,Consolas,monospace;
  font-size:.92em}
.ef .prov{background:#f8f9fa;border:1px solid #dee2e6;border-radius:6px;padding:8px 14px;font-size:.9em;
  display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
.ef .prov dt{font-weight:600;color:#495057}.ef .prov dd{margin:0;overflow-wrap:anywhere}
.ef nav{font-size:.9em;margin:.8em 0}.ef nav a{margin-right:12px;color:#1864ab}
.ef .callout{border-left:6px solid #f08c00;background:#fff4e6;padding:10px 14px;font-size:1.08em;margin:.6em 0}
.ef .callout.ok{border-color:#2b8a3e;background:#ebfbee}
.ef .verdict{border-radius:6px;padding:10px 16px;margin:.8em 0;font-size:1.05em;border:2px solid}
.ef .verdict.none{background:#fff9db;border-color:#f08c00}.ef .verdict.win{background:#ebfbee;border-color:#2b8a3e}
.ef .verdict b{font-size:1.15em}
.ef .cards{display:flex;flex-wrap:wrap;gap:14px;margin:.6em 0}
.ef .card{border:1px solid #ced4da;border-radius:8px;padding:12px 16px;min-width:260px;flex:1 1 300px;
  max-width:560px;background:#fff}
.ef .card.warn{border-top:6px solid #f08c00}.ef .card.ok{border-top:6px solid #2b8a3e}
.ef .card .big{font-size:2.3em;font-weight:700;line-height:1.1}.ef .card .big small{font-size:.38em;
  font-weight:400;color:#495057;margin-left:6px}
.ef .card p{margin:.35em 0}.ef .card .cov{font-weight:600}.ef .card.warn .cov{color:#d9480f}
.ef .card.ok .cov{color:#2b8a3e}.ef .muted{color:#6c757d;font-size:.9em}
.ef table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}
.ef th,.ef td{border:1px solid #dee2e6;padding:4px 8px;vertical-align:top;text-align:left}
.ef th{background:#f1f3f5}.ef td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ef th small,.ef td small{display:block;color:#6c757d;font-weight:400}
.ef .chart svg{max-width:100%;height:auto}.ef figure{margin:.5em 0}
.ef figcaption{color:#495057;font-size:.9em}.ef .yes{color:#c92a2a;font-weight:700}
.ef .card p small{display:block}.ef .card .big.na{font-size:1.6em}.ef .scroll{overflow-x:auto;max-width:100%}
.ef details{margin:.3em 0}.ef ul.reasons li{margin:.2em 0}
"""


class Html(str):
    """Text that is already HTML: never escaped again."""

    __slots__ = ()


def esc(value: Any) -> Html:
    """Escape a value for HTML text or a quoted attribute (non-strings are formatted first).

    Examples
    --------
    >>> esc('<img src=x onerror="alert(1)">&')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;'
    >>> esc(0.5), esc(None), esc(Html("<b>kept</b>"))
    ('0.5', 'null', '<b>kept</b>')
    """
    if isinstance(value, Html):
        return value
    return Html(html.escape(value if isinstance(value, str) else fmt_value(value), quote=True))


def _el(name: str, *children: Any, cls: str | None = None, **attrs: str | None) -> Html:
    attributes = "".join(
        f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"' for k, v in ({"class": cls} | attrs).items() if v is not None
    )
    return Html(f"<{name}{attributes}>" + "".join(esc(c) for c in children) + f"</{name}>")


def _join(parts: Iterable[Any], sep: str = "") -> Html:
    return Html(sep.join(esc(p) for p in parts))


def pct(value: float | None) -> str:
    """A fraction as a percentage for the headline (``—`` when undefined).

    Examples
    --------
    >>> [pct(v) for v in (1.0, 0.5, 0.325, 0.001241, 0.0, None)]
    ['100%', '50%', '32.5%', '0.12%', '0%', '—']
    """
    if value is None:
        return "—"
    p = 100 * value
    if p == 0 or p >= 1:
        text = f"{p:.1f}".removesuffix(".0")
    else:
        text = f"{p:.2g}"
    return f"{text}%"


def _num_cell(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _table(header: Sequence[Any], rows: Iterable[Sequence[Any]], *, cls: str | None = None) -> Html:
    head = _el("tr", *[_el("th", h) for h in header])
    body = [_el("tr", *[_el("td", v, cls="num" if _num_cell(v) else None) for v in row]) for row in rows]
    return _el("div", _el("table", _el("thead", head), _el("tbody", *body), cls=cls), cls="scroll")


def _frame_table(frame: pl.DataFrame, table: str | None = None) -> Html:
    """A frame as an HTML table; with ``table``, each header carries its description as a tooltip."""
    header = [_el("th", c, title=describe(table, c)) if table else _el("th", c) for c in frame.columns]
    rows = [[_list_cell(v) for v in row] for row in frame.iter_rows()]
    body = [_el("tr", *[_el("td", v, cls="num" if _num_cell(v) else None) for v in row]) for row in rows]
    return _el("div", _el("table", _el("thead", _el("tr", *header)), _el("tbody", *body)), cls="scroll")


def _list_cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


def _small(text: Any) -> Html:
    return _el("small", text)


# --- charts ------------------------------------------------------------------------------


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


def _svg(fig: Figure, *, scope: str, label: str) -> Html:
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
    text = text.replace("<svg ", f'<svg role="img" aria-label="{esc(label)}" ', 1)
    return Html(text)


def _wrap(text: str, width: int = 28) -> str:
    """Wrap each line of a chart label (data strings can be long)."""
    return "\n".join("\n".join(textwrap.wrap(line, width, break_on_hyphens=False)) or line for line in text.split("\n"))


def _percent_axis(ax: Axes) -> None:
    ax.set_xlim(0, 1)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    ax.grid(axis="x", color="#e9ecef", linewidth=0.8)
    ax.set_axisbelow(True)


def headline_chart(summary: pl.DataFrame) -> Html:
    """Inline SVG: where each candidate's planned units went, and its pass rate against its full-plan range.

    Left, one stacked bar per candidate: the share of planned units that
    passed, failed, were not graded, or are missing. Right, the
    ``pass_rate_scored`` point with its Wilson interval, over the band from
    ``pass_rate_planned`` (worst case) to ``pass_rate_upper`` (best case).

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["A"], "planned": [4], "scored": [2], "passed": [2], "failed": [0],
    ...     "missing": [2], "pass_rate_scored": [1.0], "pass_rate_planned": [0.5], "pass_rate_upper": [1.0],
    ...     "pass_rate_scored_ci_low": [0.34], "pass_rate_scored_ci_high": [1.0]})
    >>> headline_chart(summary).startswith("<svg")
    True
    """
    records = list(summary.iter_rows(named=True))
    k = len(records)
    with _chart_settings():
        fig = Figure(figsize=(10.5, 1.9 + 0.55 * k), layout="constrained")
        share, rate = fig.subplots(1, 2, sharey=True, width_ratios=[1.15, 1])
        ys = list(range(k))
        left = [0.0] * k
        handles = []
        for outcome in COMPOSITION:
            counts = [_composition_count(r, outcome) for r in records]
            if not any(counts):
                continue
            widths = [c / r["planned"] if r["planned"] else 0.0 for c, r in zip(counts, records, strict=True)]
            style = _bar_style(outcome)
            share.barh(ys, widths, left=left, height=0.6, **style)
            for y, x0, w, c in zip(ys, left, widths, counts, strict=True):
                if w >= 0.07:
                    colour = "#212529" if outcome in ("missing", "scored_no_threshold", "not_scored") else "white"
                    share.text(x0 + w / 2, y, str(c), ha="center", va="center", color=colour, fontsize=8.5)
            left = [x + w for x, w in zip(left, widths, strict=True)]
            handles.append(Patch(label=outcome.replace("_", " "), **style))
        _percent_axis(share)
        share.set_yticks(ys, [_wrap(f"{r[CANDIDATE]}\n{r['scored']} of {r['planned']} scored") for r in records])
        share.invert_yaxis()
        share.set_title("Where the planned units went (share of planned)", loc="left")
        share.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=min(5, len(handles)))

        for y, r in zip(ys, records, strict=True):
            low, high, value = r.get("pass_rate_planned"), r.get("pass_rate_upper"), r.get("pass_rate_scored")
            if low is not None and high is not None:
                if high - low > 1e-9:
                    rate.barh(y, high - low, left=low, height=0.5, color="#ffe8cc", edgecolor="#f08c00", hatch="")
                else:
                    rate.plot([low, low], [y - 0.25, y + 0.25], color="#f08c00", linewidth=3)
                span = pct(low) if high - low <= 1e-9 else f"{pct(low)} to {pct(high)}"
                rate.text(
                    (low + high) / 2,
                    y + 0.27,
                    f"over all {r['planned']} planned: {span}",
                    ha="center",
                    va="top",
                    fontsize=8,
                    color="#d9480f",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.85},
                )
            if value is not None:
                lo_ci, hi_ci = r.get("pass_rate_scored_ci_low"), r.get("pass_rate_scored_ci_high")
                if lo_ci is not None and hi_ci is not None:
                    rate.errorbar(
                        value,
                        y,
                        xerr=[[max(0.0, value - lo_ci)], [max(0.0, hi_ci - value)]],
                        fmt="o",
                        color="#1864ab",
                        capsize=4,
                        markersize=7,
                    )
                else:
                    rate.plot([value], [y], "o", color="#1864ab", markersize=7)
                rate.annotate(
                    f"{pct(value)} = {r['passed']}/{r['scored']}",
                    (value, y),
                    xytext=(0, 9),
                    textcoords="offset points",
                    ha="center",
                    fontsize=8.5,
                    color="#1864ab",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.85},
                )
            else:
                rate.text(0.5, y, "no pass rate (nothing scored)", ha="center", va="center", color="#868e96")
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
        return _svg(fig, scope="headline", label="Share of planned units by outcome, and pass rate against its range")


def _composition_count(record: Mapping[str, Any], outcome: str) -> int:
    if outcome == "scored_no_threshold":
        return int(record.get("scored", 0)) - int(record.get("passed", 0)) - int(record.get("failed", 0))
    return int(record.get(outcome) or 0)


def _bar_style(outcome: str) -> dict[str, Any]:
    if outcome == "missing":
        return {"facecolor": _COLOURS["missing"], "edgecolor": "#868e96", "hatch": "///", "linewidth": 0.6}
    return {"facecolor": _COLOURS[outcome], "edgecolor": "white", "linewidth": 0.6}


def funnel_chart(summary: pl.DataFrame) -> Html:
    """Inline SVG: the coverage funnel of each candidate, one small chart per candidate.

    Bars ``planned → attempted → completed → with_output → scored → passed``,
    then the losses ``missing``, ``exec_failed``, ``judge_failed`` (and
    ``not_started``, ``no_output``, ``not_scored`` when any candidate has
    one), each labelled with its count and its share of planned.

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["A"], "planned": [4], "attempted": [2], "completed": [2],
    ...     "with_output": [2], "scored": [2], "passed": [2], "missing": [2], "exec_failed": [0],
    ...     "judge_failed": [0], "not_started": [0], "no_output": [0], "not_scored": [0]})
    >>> "<svg" in funnel_chart(summary)
    True
    """
    records = list(summary.iter_rows(named=True))
    losses = [*FUNNEL_LOSSES, *[c for c in OPTIONAL_LOSSES if any(r.get(c) for r in records)]]
    bars = [*FUNNEL_STAGES, *losses]
    ys = [*range(len(FUNNEL_STAGES)), *[len(FUNNEL_STAGES) + 0.5 + i for i in range(len(losses))]]
    ncols = min(len(records), 3) or 1
    nrows = -(-len(records) // ncols) or 1
    top = max([int(r["planned"]) for r in records] + [1])
    with _chart_settings():
        fig = Figure(figsize=(3.6 * ncols + 0.9, (0.24 * len(bars) + 0.9) * nrows), layout="constrained")
        axes = fig.subplots(nrows, ncols, sharey=True, sharex=True, squeeze=False)
        for ax, r in zip(axes.flat, records, strict=False):
            planned = int(r["planned"])
            values = [int(r.get(b) or 0) for b in bars]
            styles = [_bar_style(b) if b in _COLOURS else {} for b in bars]
            for y, v, style in zip(ys, values, styles, strict=True):
                ax.barh(y, v, height=0.75, **style)
            for y, v, b in zip(ys, values, bars, strict=True):
                share = f" ({pct(v / planned)})" if planned and b != "planned" else ""
                ax.text(v + top * 0.02, y, f"{v}{share}", va="center", fontsize=8)
            ax.axhline(len(FUNNEL_STAGES) - 0.25, color="#adb5bd", linewidth=0.8, linestyle="--")
            ax.set_title(_wrap(str(r[CANDIDATE]), 40), loc="left")
            ax.set_xlim(0, top * 1.45)
            ax.set_xlabel("units")
        for ax in list(axes.flat)[len(records) :]:
            ax.set_visible(False)
        axes[0][0].set_yticks(ys, [b.replace("_", " ") for b in bars])
        axes[0][0].invert_yaxis()
        return _svg(fig, scope="funnel", label="Coverage funnel per candidate")


def missing_rate_chart(slices: pl.DataFrame, missingness: pl.DataFrame) -> Html:
    """Inline SVG: missing rate by slice value, one panel per slice column, one bar per candidate.

    Bars are labelled missing / planned; the legend gives each candidate's
    test of independence and p-value, and says when it is selective. At
    most :data:`SLICE_VALUES_CHARTED` values per column are drawn (those
    with the highest missing rate).

    Examples
    --------
    >>> slices = pl.DataFrame({"candidate": ["A", "A"], "slice_column": ["case_type"] * 2,
    ...     "slice_value": ["x", "y"], "planned": [2, 2], "missing": [2, 0], "missing_rate": [1.0, 0.0]})
    >>> tests = pl.DataFrame({"candidate": ["A"], "slice_column": ["case_type"], "test": ["fisher_exact"],
    ...     "p_value": [0.33], "selective": [False]})
    >>> "<svg" in missing_rate_chart(slices, tests)
    True
    """
    columns = list(dict.fromkeys(slices.get_column("slice_column").to_list()))
    candidates = list(dict.fromkeys(slices.get_column(CANDIDATE).to_list()))
    tests = {(r[CANDIDATE], r["slice_column"]): r for r in missingness.iter_rows(named=True)}
    panels = []
    for column in columns:
        part = slices.filter(pl.col("slice_column") == column)
        values = list(dict.fromkeys(part.get_column("slice_value").to_list()))
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


# --- sections ----------------------------------------------------------------------------


def _provenance(report: AuditReport, comparison: Comparison | None) -> Html:
    items: list[Html] = []
    lines = provenance_lines(report.meta)
    if comparison is not None:
        row = comparison.table.row(0, named=True)
        lines.append(
            (
                "pair policy",
                f"{row['pair_policy']} ({row['candidate']} vs baseline {row['baseline']}, "
                f"min_coverage {fmt_value(row['min_coverage'])})",
            )
        )
    for label, text in lines:
        value: Any = text
        if len(text) > 240:
            value = _el("details", _el("summary", text[:120] + " …"), _el("div", text, cls="mono"))
        items += [_el("dt", label), _el("dd", value)]
    return _el("dl", *items, cls="prov")


def _title(report: AuditReport) -> tuple[str, str]:
    m = report.meta
    candidates = [str(c) for c in (m.get("candidates") or report.summary.get_column(CANDIDATE).to_list())]
    names = ", ".join(candidates)
    title = "evalframe audit: " + (names if len(names) <= 90 else names[:88] + " …")
    sub = (
        f"{m.get('n_cases')} cases × {len(candidates)} candidates × {m.get('trials')} trial(s) = "
        f"{m.get('planned_units')} planned units · retry policy {m.get('retry')} · evalframe "
        f"{m.get('evalframe_version')}"
    )
    return title, sub


def _verdict(comparison: Comparison) -> Html:
    row = comparison.table.row(0, named=True)
    verdict = str(row["verdict"])
    cls = "verdict none" if verdict == "no_supported_winner" else "verdict win"
    return _el(
        "div",
        _el("b", f"Verdict: {verdict}"),
        f" — {row['candidate']} vs baseline {row['baseline']} (pair policy {row['pair_policy']})",
        _el("ul", *[_el("li", r) for r in row["reasons"]], cls="reasons"),
        cls=cls,
    )


def _card(record: Mapping[str, Any]) -> Html:
    name = record[CANDIDATE]
    planned, scored, passed = int(record["planned"]), int(record["scored"]), int(record["passed"])
    rate, coverage = record.get("pass_rate_scored"), record.get("scored_coverage")
    complete = planned > 0 and scored == planned
    parts: list[Any] = [_el("h3", name)]
    if rate is None:
        reason = "nothing scored" if scored == 0 else "no pass threshold declared"
        parts.append(_el("div", "no pass rate", _small(f"pass_rate_scored is null: {reason}"), cls="big na"))
    else:
        parts.append(
            _el("div", pct(rate), _small(f"pass_rate_scored = passed / scored = {passed} / {scored}"), cls="big")
        )
    if complete:
        parts.append(
            _el(
                "p",
                f"all {planned} planned units scored: scored_coverage {pct(coverage)} (scored / planned)",
                cls="cov",
            )
        )
    else:
        parts.append(
            _el(
                "p",
                f"{f'only {scored}' if scored else 'none'} of {planned} planned units scored: "
                f"scored_coverage {pct(coverage)} (scored / planned)",
                cls="cov",
            )
        )
        low, high = record.get("pass_rate_planned"), record.get("pass_rate_upper")
        if low is not None and high is not None:
            parts.append(
                _el(
                    "p",
                    "over the whole plan the pass rate could be anywhere from ",
                    _el("b", pct(low)),
                    " to ",
                    _el("b", pct(high)),
                    _small(
                        f"worst case pass_rate_planned = passed / planned = {passed} / {planned}; best case "
                        "pass_rate_upper = (passed + planned − scored) / planned = "
                        f"{passed + planned - scored} / {planned}"
                    ),
                )
            )
    ungraded = []
    if record.get("missing"):
        shown = {**record, "missing_case_ids": list(record.get("missing_case_ids") or [])[:CARD_IDS_SHOWN]}
        ungraded.append(f"{record['missing']} missing (no row at all): {missing_ids_text(shown)}")
    for name_ in ("not_started", "exec_failed", "no_output", "judge_failed", "not_scored"):
        if record.get(name_):
            ungraded.append(f"{record[name_]} {name_.replace('_', ' ')}")
    if ungraded:
        parts.append(_el("p", "ungraded: " + "; ".join(ungraded)))
    if record.get("selective_missingness"):
        parts.append(_el("p", f"selective missingness: {record['selective_missingness']}", cls="cov"))
    return _el("div", *parts, cls="card ok" if complete else "card warn")


def _ranking(summary: pl.DataFrame) -> Html:
    note = ranking_note(summary)
    if note is None:
        return Html("")
    overlap = "overlaps" in note
    return _el("p", note, cls="callout" if overlap else "callout ok")


def _cards(summary: pl.DataFrame) -> Html:
    return _el("div", *[_card(r) for r in summary.iter_rows(named=True)], cls="cards")


def _rate_cell(record: Mapping[str, Any], rate: str) -> Html:
    value = record.get(rate)
    planned, scored, passed = int(record["planned"]), int(record["scored"]), int(record["passed"])
    numerators = {
        "completion_rate": (int(record["completed"]), planned),
        "scored_coverage": (scored, planned),
        "pass_rate_scored": (passed, scored),
        "pass_rate_planned": (passed, planned),
        "pass_rate_upper": (passed + planned - scored, planned),
    }
    num, den = numerators[rate]
    return _join([esc(value), _small(f"{num} / {den}"), _small(interval_text(record, rate))])


def _rates_table(summary: pl.DataFrame, meta: Mapping[str, Any]) -> Html:
    confidence = meta.get("confidence")
    level = f"{confidence:.0%} " if isinstance(confidence, float) else ""
    header = [
        "candidate",
        *[_join([rate, _small(RATE_FORMULAS[rate])]) for rate in RATE_COLUMNS],
    ]
    rows = [[r[CANDIDATE], *[_rate_cell(r, rate) for rate in RATE_COLUMNS]] for r in summary.iter_rows(named=True)]
    note = _el(
        "p",
        f"Each cell: the rate, numerator / denominator, and its {level}interval with cases as the independent "
        "units (Wilson 1927; with several trials per case on the effective sample size, Korn & Graubard 1998). "
        "pass_rate_planned is the worst case and pass_rate_upper the best case of the pass rate over every "
        "planned unit.",
        cls="muted",
    )
    return _join([_table(header, rows), note])


def _uncertainty_table(summary: pl.DataFrame, meta: Mapping[str, Any]) -> Html:
    header = [
        "candidate",
        _join(["cases fully scored", _small("cases_fully_scored / cases_planned")]),
        _join(["SE naive", _small("pass_rate_scored_se_naive")]),
        _join(["SE clustered by case", _small("pass_rate_scored_se_clustered")]),
        _join(["design effect", _small("design_effect (icc)")]),
        _join(["effective n", _small("effective_n of scored units")]),
        _join(["mean score", _small("mean_score (clustered SE)")]),
    ]
    rows = []
    for r in summary.iter_rows(named=True):
        deff, icc = r.get("design_effect"), r.get("icc")
        se = r.get("mean_score_se_clustered")
        rows.append(
            [
                r[CANDIDATE],
                f"{r.get('cases_fully_scored')} / {r.get('cases_planned')}",
                r.get("pass_rate_scored_se_naive"),
                r.get("pass_rate_scored_se_clustered"),
                "null"
                if deff is None
                else fmt_value(deff, digits=3) + ("" if icc is None else f" ({fmt_value(icc, digits=2)})"),
                r.get("effective_n"),
                fmt_value(r.get("mean_score")) + ("" if se is None else f" (SE {fmt_value(se, digits=3)})"),
            ]
        )
    return _join(
        [
            _table(header, rows),
            _el(
                "p",
                "Repeated trials of one case are not independent: the CR1 standard error clustered by case "
                "(Cameron & Miller 2015; Miller 2024, arXiv:2411.00640) and the design effect say how many "
                "independent units the trials are worth; every interval treats cases as the units, with t(cases − 1) "
                f"critical values at {fmt_value(meta.get('confidence'))}.",
                cls="muted",
            ),
        ]
    )


def _funnel_table(summary: pl.DataFrame) -> Html:
    records = list(summary.iter_rows(named=True))
    header = ["count", "meaning", *[r[CANDIDATE] for r in records]]
    rows = []
    for c in COUNT_COLUMNS:
        cells: list[Any] = [c, describe("summary", c)]
        for r in records:
            v, planned = int(r.get(c) or 0), int(r["planned"])
            share = f" <small>{pct(v / planned)} of planned</small>" if planned and c != "planned" else ""
            cells.append(Html(f"{v}{share}"))
        rows.append(cells)
    return _table(header, rows)


def _missing_section(report: AuditReport) -> Html:
    summary = report.summary
    parts: list[Any] = []
    rows = [
        [r[CANDIDATE], r["planned"], r["missing"], r.get("missing_cases", 0), missing_ids_text(r)]
        for r in summary.iter_rows(named=True)
    ]
    parts.append(_table(["candidate", "planned", "missing units", "missing cases", "missing case ids"], rows))
    counts = report.outcome_counts()
    outcomes = [o for o in OUTCOMES if o in set(counts.get_column(OUTCOME))]
    by = {(c, o): n for c, o, n in counts.iter_rows()}
    header = ["candidate", *[_el("span", o, title=_OUTCOME_MEANING.get(o, "")) for o in outcomes], "planned"]
    table_rows = [
        [r[CANDIDATE], *[by.get((r[CANDIDATE], o), 0) for o in outcomes], r["planned"]]
        for r in summary.iter_rows(named=True)
    ]
    parts += [_el("h3", "Units by outcome"), _table(header, table_rows)]
    parts.append(
        _el(
            "p",
            "A missing unit has no row at all: it is neither a failure nor a pass. exec_failed: the run timed out or "
            "errored; judge_failed: the grader could not produce a valid judgment; failed: a wrong answer.",
            cls="muted",
        )
    )
    # Counted, and only the rows shown collected: 100M missing units would not fit in memory.
    ungraded_units = report.units.lazy().filter(~pl.col(OUTCOME).cast(pl.String).is_in(list(_GRADED)))
    n_ungraded = ungraded_units.select(pl.len()).collect().item()
    if n_ungraded:
        ungraded = ungraded_units.head(UNGRADED_ROWS_SHOWN).collect()
        slices = [str(s) for s in report.meta.get("slices", []) if s in ungraded.columns]
        extra = [c for c in ("exec_status", "score_status", "line", "source") if c in ungraded.columns]
        shown = ungraded.head(UNGRADED_ROWS_SHOWN).select(
            CANDIDATE, CASE_ID, TRIAL, pl.col(OUTCOME).cast(pl.String), *slices, *extra
        )
        shown = shown.select([c for c in shown.columns if shown.get_column(c).null_count() < shown.height])
        parts += [
            _el("h3", "Ungraded units"),
            _el(
                "details",
                _el("summary", f"first {shown.height} of {n_ungraded} (units.parquet lists every unit)"),
                _frame_table(shown, "units"),
                open="open" if n_ungraded <= 20 else None,
            ),
        ]
    return _join(parts)


_OUTCOME_MEANING: Final[Mapping[str, str]] = {
    "missing": "no row at all (not a failure)",
    "not_started": "skipped or cancelled before running",
    "exec_failed": "timed out or errored",
    "no_output": "completed without an output",
    "judge_failed": "the grader could not produce a valid judgment",
    "not_scored": "completed but not graded",
    "scored_no_threshold": "scored, but no pass threshold was declared",
    "failed": "graded as a fail (wrong answer)",
    "passed": "graded as a pass",
}


def _problems_section(problems: pl.DataFrame) -> Html:
    if not problems.height:
        return _el("p", "No problems were flagged.")
    grouped = (
        problems.group_by(KIND)
        .agg(
            pl.len().alias("count"),
            pl.col(CANDIDATE).drop_nulls().unique().sort().alias("candidates"),
            pl.col("detail").drop_nulls().first().alias("example"),
            pl.col("refusing").any().alias("refusing"),
        )
        .sort(KIND)
    )
    rows = [
        [
            _join([r[KIND], _small(PROBLEM_KINDS.get(r[KIND], ""))]),
            r["count"],
            ", ".join(r["candidates"][:10]) + (" …" if len(r["candidates"]) > 10 else "") or "—",
            r["example"] or "",
        ]
        for r in grouped.iter_rows(named=True)
    ]
    return _join(
        [
            _table(["kind", "count", "candidates", "example"], rows),
            _el("p", "These were flagged but do not refuse the batch; problems.parquet lists every one.", cls="muted"),
        ]
    )


def _slices_section(report: AuditReport) -> Html:
    if not report.slices.width or report.slices.is_empty():
        return _el("p", "No slice column was declared (audit with slices=[...] or --slice COLUMN).")
    shown = missingness_shown(report.missingness, joined=True)
    tests = shown.insert_column(2, report.missingness.get_column("n_slices"))
    flags = ("selective_ungraded", "stands_out_ungraded", "selective", "stands_out")
    rows = []
    for r in tests.iter_rows(named=True):
        cells = {c: _el("span", "yes", cls="yes") if r[c] else "no" for c in flags if c.startswith("selective")}
        cells |= {c: r[c] or "—" for c in flags if c.startswith("stands_out")}
        rows.append([cells.get(c, r[c]) for c in tests.columns])
    alpha = report.meta.get("alpha")
    parts: list[Any] = [
        _el("h3", "Does missingness depend on the slice?"),
        _table([_el("span", c, title=describe("missingness", c)) for c in tests.columns], rows),
        _el(
            "p",
            "Cases are the test's units: a seeded permutation test of each case's ungraded fraction (no row, "
            "execution or grader failure) and, separately, of its missing fraction (no row), across slice values; "
            "p-values are Holm-adjusted over every test of the audit (Holm 1979). "
            f"selective = p_adjusted ≤ alpha ({fmt_value(alpha)}); stands_out = when selective, slice values whose "
            "rate is at least twice the candidate's overall rate (else those with the highest rate).",
            cls="muted",
        ),
        _el("figure", missing_rate_chart(report.slices, report.missingness), cls="chart"),
    ]
    table = report.slices.select(
        CANDIDATE,
        "slice_column",
        "slice_value",
        "planned",
        "missing",
        "missing_rate",
        "scored",
        "passed",
        "scored_coverage",
        "pass_rate_scored",
    )
    parts += [
        _el("h3", f"Funnel by slice ({min(table.height, SLICE_ROWS_SHOWN)} of {table.height} rows)"),
        _frame_table(table.head(SLICE_ROWS_SHOWN), "slices"),
    ]
    return _join(parts)


def _comparison_section(comparison: Comparison) -> Html:
    row = comparison.table.row(0, named=True)
    rows = [[_el("code", c), row[c], describe("comparison", c)] for c in comparison.table.columns if c != "reasons"]
    parts: list[Any] = [_verdict(comparison), _table(["measure", "value", "meaning"], rows)]
    if comparison.dropped_by_slice.height:
        parts += [_el("h3", "Dropped pairs by slice"), _frame_table(comparison.dropped_by_slice, "dropped_pairs")]
    return _join(parts)


def _section(anchor: str, title: str, *body: Any) -> Html:
    return _el("section", _el("h2", title), *body, id=anchor)


# --- pages -------------------------------------------------------------------------------


def render_html(report: AuditReport, comparison: Comparison | None = None) -> str:
    """Render a report (and optionally a comparison) as one self-contained HTML page.

    Parameters
    ----------
    report
        The audit report.
    comparison
        A paired comparison of two of the report's candidates; its verdict
        and reasons head the page and get their own section.

    Returns
    -------
    str
        A complete HTML document (UTF-8 text) that loads nothing from the
        network: CSS inline, charts inline SVG. Sections: provenance,
        headline (each pass rate with its denominator and coverage, chart),
        funnel (chart and table), rates with formulas, counts and Wilson
        intervals, missing and ungraded units, slices and the missingness
        test, comparison, problems. Two calls with the same inputs return
        the same string.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund", "privacy", "handoff"]}),
    ...                           candidates=["A", "B"])
    >>> results = pl.DataFrame({"candidate": ["A", "A", "B", "B", "B", "B"],
    ...     "case_id": ["quote", "refund", "quote", "refund", "privacy", "handoff"], "passed": [1, 1, 1, 1, 1, 0]})
    >>> page = render_html(ef.audit(plan, results))
    >>> page.startswith("<!DOCTYPE html>"), "passed / scored = 2 / 2" in page, "http://" in page
    (True, True, False)
    """
    title, sub = _title(report)
    summary = report.summary
    nav = _el(
        "nav",
        *[
            _el("a", label, href=f"#{anchor}")
            for anchor, label in (
                ("headline", "headline"),
                ("funnel", "funnel"),
                ("rates", "rates"),
                ("missing", "missing units"),
                ("slices", "slices"),
                *((("comparison", "comparison"),) if comparison is not None else ()),
                ("problems", "problems"),
            )
        ],
    )
    body: list[Any] = [
        _el("header", _el("h1", title), _el("p", sub, cls="sub"), _provenance(report, comparison)),
        nav,
    ]
    if comparison is not None:
        body.append(_verdict(comparison))
    body += [
        _section(
            "headline",
            "Headline: each pass rate with its denominator",
            _ranking(summary),
            _cards(summary),
            _el(
                "figure",
                headline_chart(summary),
                _el(
                    "figcaption",
                    "Left: what happened to each candidate's planned units (hatched = missing, no row at all). "
                    "Right: pass_rate_scored (dot, with its Wilson interval) is computed over scored units only; "
                    "the orange band is where the pass rate over all planned units could lie.",
                ),
                cls="chart",
            ),
        ),
        _section(
            "funnel",
            "Coverage funnel",
            _el("figure", funnel_chart(summary), cls="chart"),
            _funnel_table(summary),
        ),
        _section(
            "rates",
            "Rates, each named by its denominator",
            _rates_table(summary, report.meta),
            _el("h3", "Uncertainty of pass_rate_scored (repeated trials clustered by case)"),
            _uncertainty_table(summary, report.meta),
        ),
        _section("missing", "Missing and ungraded units", _missing_section(report)),
        _section("slices", "Slices and selective missingness", _slices_section(report)),
    ]
    if comparison is not None:
        body.append(_section("comparison", "Paired comparison", _comparison_section(comparison)))
    body.append(_section("problems", "Problems (not refusing), by kind", _problems_section(report.problems)))
    page = _join(
        [
            Html("<!DOCTYPE html>\n"),
            Html('<html lang="en"><head><meta charset="utf-8">'),
            Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
            _el("title", title),
            Html(f"<style>{_CSS}</style></head><body>"),
            _el("main", *body, cls="ef"),
            Html("</body></html>\n"),
        ]
    )
    return str(page)


def render_summary_html(report: AuditReport) -> str:
    """A compact HTML summary (no charts): what a notebook shows for a report.

    Examples
    --------
    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> results = pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]})
    >>> "only 1 of 2 planned units scored" in render_summary_html(ef.audit(plan, results))
    True
    """
    title, sub = _title(report)
    parts = [
        Html(f"<style>{_CSS}</style>"),
        _el(
            "div",
            _el("h3", title),
            _el("p", sub, cls="sub"),
            _ranking(report.summary),
            _cards(report.summary),
            _rates_table(report.summary, report.meta),
            _el(
                "p",
                "Tables: report.summary, report.units, report.problems, report.slices; "
                "report.write(folder) adds report.html with charts.",
                cls="muted",
            ),
            cls="ef",
        ),
    ]
    return str(_join(parts))
