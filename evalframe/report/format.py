"""How values are written for people: rounding, natural order of ids, and escaping for Markdown.

Only formatting lives here: the view model (:mod:`evalframe.report.view`)
holds every number, and renderers pass them through these helpers. Numbers
are rounded for people to three significant digits; the Parquet and JSON
outputs keep full precision.
"""

from __future__ import annotations

import math
from typing import Any, Final

import polars as pl

from evalframe.natural import natural_key

#: Significant digits of a number shown to people (Parquet and JSON keep full precision).
DIGITS: Final = 3


def fmt_value(value: Any, *, digits: int = DIGITS) -> str:
    """Format a table value for people: ``digits`` significant digits, floats keep a decimal point.

    Examples
    --------
    >>> [fmt_value(v) for v in (1.0, 0.5, 2 / 3, 3, None, ["privacy", "handoff"], [])]
    ['1.0', '0.5', '0.667', '3', 'null', 'privacy, handoff', '—']
    >>> fmt_value(0.34238, digits=4), fmt_value(True)
    ('0.3424', 'True')
    """
    if value is None:
        return "null"
    if isinstance(value, float):
        text = f"{value:.{digits}g}"
        return f"{text}.0" if math.isfinite(value) and text.lstrip("-").isdigit() else text
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "—"
    return str(value)


def fmt_rate(value: float | None) -> str:
    """A rate (a fraction in [0, 1]) with three decimals, ``null`` when undefined.

    Examples
    --------
    >>> fmt_rate(0.75), fmt_rate(1.0), fmt_rate(None)
    ('0.750', '1.000', 'null')
    """
    return "null" if value is None else f"{value:.3f}"


def fmt_signed(value: float | None) -> str:
    """A difference with its sign, three significant digits (``null`` when undefined).

    Examples
    --------
    >>> fmt_signed(0.12345), fmt_signed(-0.5), fmt_signed(None)
    ('+0.123', '-0.5', 'null')
    """
    return "null" if value is None else f"{value:+.{DIGITS}g}"


def pct(value: float | None) -> str:
    """A fraction as a percentage for a headline (``—`` when undefined).

    Examples
    --------
    >>> [pct(v) for v in (1.0, 0.5, 0.325, 0.001241, 0.0, None)]
    ['100%', '50%', '32.5%', '0.12%', '0%', '—']
    """
    if value is None:
        return "—"
    p = 100 * value
    text = f"{p:.1f}".removesuffix(".0") if p == 0 or p >= 1 else f"{p:.2g}"
    return f"{text}%"


def interval(low: float | None, high: float | None) -> str:
    """An interval as ``[low, high]`` with three significant digits (``null`` when either end is undefined).

    Examples
    --------
    >>> interval(0.15004, 0.85), interval(0.34238, 1.0), interval(None, 1.0)
    ('[0.15, 0.85]', '[0.342, 1.0]', 'null')
    """
    if low is None or high is None:
        return "null"
    return f"[{fmt_value(low)}, {fmt_value(high)}]"


def natural_sort_frame(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Rows of ``frame`` in natural order of the String columns ``by`` (then as they were).

    Examples
    --------
    >>> natural_sort_frame(pl.DataFrame({"case_id": ["q10", "q9"], "n": [1, 2]}), ["case_id"]).rows()
    [('q9', 2), ('q10', 1)]
    """
    if frame.is_empty() or not by:
        return frame
    keys = [tuple(natural_key(row[c]) for c in by) for row in frame.select(by).iter_rows(named=True)]
    order = sorted(range(frame.height), key=keys.__getitem__)
    return frame[order]


#: Control characters (C0, DEL, C1) written as Python escapes (a newline as ``\n``): a cell stays on its row.
CONTROL: Final = {i: repr(chr(i))[1:-1] for i in (*range(0x20), *range(0x7F, 0xA0))}
#: Markdown text escapes: backslash escapes for the characters that make code, links, emphasis, strikethrough,
#: headings and table cells; entities for those that make HTML and entities. Applied before :data:`CONTROL`.
_MARKDOWN: Final = str.maketrans({**{c: f"\\{c}" for c in "\\`*[]|~#!"}, "&": "&amp;", "<": "&lt;", ">": "&gt;"})


def visible(text: str) -> str:
    r"""``text`` with its control characters written as escapes (a newline as ``\n``), else as it is.

    Examples
    --------
    >>> print(visible("line\nbreak\x1b[31m"))
    line\nbreak\x1b[31m
    """
    return text.translate(CONTROL)


def markdown_text(value: Any) -> str:
    r"""A value as Markdown text that renders as written: no code, link, HTML, emphasis or table break.

    Text from the input (ids, candidate names, paths, reasons quoting them)
    goes through this before it is placed in Markdown: ``|`` cannot end a
    table cell, ``<script>`` is shown rather than run, ``[x](url)`` is not a
    link, and a newline is written ``\n`` so the cell stays on its row.

    Examples
    --------
    >>> print(markdown_text("<script>alert(1)</script> a|b [x](y) `c`"))
    &lt;script&gt;alert(1)&lt;/script&gt; a\|b \[x\](y) \`c\`
    >>> print(markdown_text("line\nbreak"))
    line\nbreak
    """
    return fmt_value(value).translate(_MARKDOWN).translate(CONTROL)


def markdown_code(value: Any) -> str:
    r"""A value as a Markdown code span that shows it as written, whatever backticks it holds.

    The fence is one backtick longer than the longest run inside (CommonMark);
    a newline is written ``\n`` so the span stays on its line.

    Examples
    --------
    >>> print(markdown_code("plan.csv"), markdown_code("a`b"), markdown_code("`x"))
    `plan.csv` ``a`b`` `` `x ``
    """
    text = str(value).translate(CONTROL)
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_table(frame: pl.DataFrame) -> str:
    """Render a frame as a GitHub Markdown table (nulls as ``null``); every name and cell is :func:`markdown_text`.

    Examples
    --------
    >>> print(markdown_table(pl.DataFrame({"candidate": ["A|B"], "scored_coverage": [0.5]})))
    | candidate | scored_coverage |
    |---|---|
    | A\\|B | 0.5 |
    """
    head = "| " + " | ".join(markdown_text(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(markdown_text(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join([head, rule, *body])
