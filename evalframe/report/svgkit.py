"""SVG building blocks for the report's charts: escaped elements, text, bars, axes, legends and the chart shell.

Markup is written as text: :func:`tag` builds one element, escaping every
attribute value; :func:`esc` escapes data strings (and replaces characters
XML 1.0 does not allow) before they become content. Coordinates are
written with at most two decimals, so two renders are byte-identical.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final

from evalframe.report.htmlkit import esc as html_esc

#: Width of every chart in SVG user units (its viewBox; the page scales the chart to fit).
WIDTH: Final = 1000
#: The colour of each outcome and funnel stage (missing is hatched on its colour).
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
#: The page's own fonts, for every text of a chart.
FONT: Final = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, Arial, sans-serif"
TEXT: Final = "#212529"
GRID: Final = "#e9ecef"
AXIS: Final = "#868e96"
#: Where a percent axis has its grid lines and labels (shares of the axis width).
TICKS: Final = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Characters XML 1.0 does not allow (they are drawn as U+FFFD).
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def num(value: float) -> str:
    """A coordinate with at most two decimals, trailing zeros dropped: ``12.5``, ``3``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def esc(value: str) -> str:
    r"""Text or a double-quoted attribute value, escaped for XML (and so for HTML).

    Controls are written as escapes, as in the page's HTML text (:data:`~evalframe.report.htmlkit.esc`): a
    bidi override in a label or tooltip would show a name, and the counts after it, reversed.

    Examples
    --------
    >>> print(esc("<b>\u202ert&"))
    &lt;b&gt;\u202ert&amp;
    """
    return _NOT_XML.sub("\ufffd", html_esc(value))


def tag(name: str, content: str | None = None, **attrs: str | float | None) -> str:
    """One element; ``class_`` is ``class``, ``stroke_width`` is ``stroke-width``; ``None`` attributes are left out.

    ``content`` is markup (escape text first); without it the element is empty (``<rect .../>``).
    """
    parts = [name]
    for key, value in attrs.items():
        if value is None:
            continue
        text = num(value) if isinstance(value, int | float) else esc(value)
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{text}"')
    start = " ".join(parts)
    return f"<{start}/>" if content is None else f"<{start}>{content}</{name}>"


def tooltip(text: str) -> str:
    """A tooltip and accessible name for the element it is the first child of."""
    return tag("title", esc(text))


def text(x: float, y: float, lines: str | Sequence[str], *, size: float = 12, **attrs: str | float | None) -> str:
    """Text whose lines are centred vertically on ``y`` (one ``tspan`` per line)."""
    rows = [lines] if isinstance(lines, str) else list(lines)
    first = y + 0.35 * size - (len(rows) - 1) * (size + 2) / 2
    if len(rows) == 1:
        return tag("text", esc(rows[0]), x=x, y=first, font_size=size, **attrs)
    spans = "".join(tag("tspan", esc(row), x=x, y=first + i * (size + 2)) for i, row in enumerate(rows))
    return tag("text", spans, x=x, y=first, font_size=size, **attrs)


def text_width(text: str, size: float = 12) -> float:
    """Estimated width of one line of text (wide East Asian characters count a full em)."""
    return sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.6 for ch in text) * size


def wrap(text: str, width: int = 28) -> list[str]:
    """The lines of a chart label: each line of ``text`` wrapped at ``width`` characters (data strings can be long)."""
    return [
        part for line in text.split("\n") for part in (textwrap.wrap(line, width, break_on_hyphens=False) or [line])
    ]


def chart(parts: Sequence[str], *, scope: str, label: str, desc: str, height: float) -> str:
    """The chart: ``WIDTH`` by ``height`` with a viewBox, named by ``label`` (title and aria-label)."""
    pattern = tag(
        "pattern",
        tag("rect", width=6, height=6, fill=COLOURS["missing"])
        + tag("path", d="M0 6L6 0M-1 1L1 -1M5 7L7 5", stroke=AXIS, stroke_width=0.8),
        id=f"{scope}-hatch",
        width=6,
        height=6,
        patternUnits="userSpaceOnUse",
    )
    body = tooltip(label) + tag("desc", esc(desc)) + tag("defs", pattern) + "".join(parts)
    return tag(
        "svg",
        body,
        role="img",
        aria_label=label,
        viewBox=f"0 0 {WIDTH} {num(height)}",
        width=WIDTH,
        height=height,
        font_family=FONT,
        fill=TEXT,
    )


def bar(x: float, y: float, width: float, height: float, outcome: str, *, scope: str, title: str) -> str:
    """One bar of an outcome or stage in its colour (missing: hatched), with its tooltip."""
    missing = outcome == "missing"
    return tag(
        "rect",
        tooltip(title),
        class_=outcome,
        x=x,
        y=y,
        width=width,
        height=height,
        fill=f"url(#{scope}-hatch)" if missing else COLOURS[outcome],
        stroke=AXIS if missing else "white",
        stroke_width=0.6,
    )


def percent_axis(x0: float, width: float, top: float, bottom: float, *, labels_at: Sequence[float]) -> list[str]:
    """Grid lines at 0, 25, 50, 75 and 100% of ``width`` from ``x0``, labelled at each y of ``labels_at``."""
    parts = [
        tag("line", x1=x0 + t * width, y1=top, x2=x0 + t * width, y2=bottom, stroke=GRID, stroke_width=1) for t in TICKS
    ]
    parts.append(tag("line", x1=x0, y1=top, x2=x0, y2=bottom, stroke=AXIS, stroke_width=1))
    for y in labels_at:
        parts += [text(x0 + t * width, y, f"{t:.0%}", size=11, text_anchor="middle") for t in TICKS]
    return [tag("g", "".join(parts), class_="axis")]


def legend(items: Sequence[tuple[str, str]], x0: float, y0: float, width: float) -> tuple[str, float]:
    """Legend entries (swatch markup drawn in a 14 by 12 box at the origin, label) flowing in rows; its height."""
    x, y, parts = x0, y0, []
    for mark, label in items:
        size = 20 + text_width(label, 11.5)
        if x > x0 and x + size > x0 + width:
            x, y = x0, y + 18
        parts.append(tag("g", mark, transform=f"translate({num(x)},{num(y)})"))
        parts.append(text(x + 18, y + 6, label, size=11.5))
        x += size + 14
    return tag("g", "".join(parts), class_="legend"), y + 18 - y0


def swatch(fill: str, *, stroke: str = "none") -> str:
    """A legend swatch: a 14 by 12 box at the origin in ``fill``."""
    return tag("rect", width=14, height=12, fill=fill, stroke=stroke, stroke_width=1)
