"""How values are written for people: rounding, natural order of ids, and escaping for Markdown.

Only formatting lives here: the view model (:mod:`evalframe.report.view`)
holds every number, and renderers pass them through these helpers. Numbers
are rounded for people to three significant digits; the Parquet and JSON
outputs keep full precision.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl

from evalframe.natural import natural_key
from evalframe.slices import interval_labels

#: Significant digits of a number shown to people (Parquet and JSON keep full precision).
DIGITS: Final = 3


def fmt_value(value: Any, *, digits: int = DIGITS) -> str:
    """Format a table value for people: ``digits`` significant digits, floats keep a decimal point.

    A float of ``10**digits`` or more is written whole, in plain digits (``1190``), never in scientific
    notation; a count is :func:`fmt_count`.

    Examples
    --------
    >>> [fmt_value(v) for v in (1.0, 0.5, 2 / 3, 3, None, ["privacy", "handoff"], [])]
    ['1.0', '0.5', '0.667', '3', 'null', 'privacy, handoff', '—']
    >>> fmt_value(0.34238, digits=4), fmt_value(True), fmt_value(1190.4), fmt_value(4.2e10)
    ('0.3424', 'True', '1190', '42000000000')
    """
    if value is None:
        return "null"
    if isinstance(value, float) and abs(value) >= 10**digits:  # written whole: never an exponent (1.19e+03)
        return f"{value:.0f}"
    if isinstance(value, float):
        text = f"{value:.{digits}g}"
        return f"{text}.0" if math.isfinite(value) and text.lstrip("-").isdigit() else text
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "—"
    return str(value)


def fmt_count(value: float | None) -> str:
    """A count for people (units, cases, or a sum of case pass fractions): plain digits, never an exponent.

    Counts are written as integers in plain digits without a thousands separator (``1190``, as CSV,
    Parquet and JSON hold them), in every renderer; a sum of fractions of a case (the ``mean``
    reducer's passed cases) keeps at most two decimals. ``—`` when there is none.

    Examples
    --------
    >>> [fmt_count(v) for v in (1190, 1190.0, 10**10, 628.3333, 0.5, 0, None)]
    ['1190', '1190', '10000000000', '628.33', '0.5', '0', '—']
    """
    if value is None:
        return "—"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


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


def natural_sort_frame(
    frame: pl.DataFrame, by: list[str], bins: Mapping[str, Sequence[float]] | None = None
) -> pl.DataFrame:
    """Rows of ``frame`` in natural order of the String columns ``by`` (then as they were).

    With ``bins`` (slice column → edges, as ``report.meta["bins"]`` declares them), a ``slice_value`` of a
    binned ``slice_column`` sorts by its bin, lowest first, before the values of no bin.

    Examples
    --------
    >>> natural_sort_frame(pl.DataFrame({"case_id": ["q10", "q9"], "n": [1, 2]}), ["case_id"]).rows()
    [('q9', 2), ('q10', 1)]
    >>> rows = pl.DataFrame({"slice_column": ["len"] * 3, "slice_value": ["(40, inf]", None, "(-inf, 40]"]})
    >>> natural_sort_frame(rows, ["slice_column", "slice_value"], {"len": [40.0]}).get_column("slice_value").to_list()
    ['(-inf, 40]', '(40, inf]', None]
    """
    if frame.is_empty() or not by:
        return frame
    positions = {
        name: {label: i for i, label in enumerate(interval_labels(edges))} for name, edges in (bins or {}).items()
    }

    def key(row: Mapping[str, Any]) -> tuple[Any, ...]:
        keys = []
        for c in by:
            position = positions.get(str(row.get("slice_column")), {}).get(row[c]) if c == "slice_value" else None
            keys.append(natural_key(row[c]) if position is None else ((-1, position),))
        return tuple(keys)

    read = [*by, "slice_column"] if positions and "slice_column" in frame.columns and "slice_column" not in by else by
    keys = [key(row) for row in frame.select(read).iter_rows(named=True)]
    order = sorted(range(frame.height), key=keys.__getitem__)
    return frame[order]


#: Characters that change what a line shows rather than show themselves: the C0 and C1 controls; the
#: bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E/F, U+202A–E, U+2066–9), which
#: reorder a terminal line (an id spoofed to read backwards); the line and paragraph separators (U+2028/9).
_HIDDEN: Final = (
    *range(0x20),
    *range(0x7F, 0xA0),
    0x61C,
    0x200E,
    0x200F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0x2028,
    0x2029,
)
#: Each of :data:`_HIDDEN` written as a Python escape (a newline as ``\n``, U+202E as ``\u202e``): a cell stays
#: on its row and reads in the order it was written.
CONTROL: Final = {i: repr(chr(i))[1:-1] if i <= 0xFF else f"\\u{i:04x}" for i in _HIDDEN}
#: An underscore that can open or close emphasis: one not between two letters or digits (CommonMark's
#: intraword ``_`` never does, so ``scored_coverage`` stays as written and ``_x_`` is escaped).
_EMPHASIS_UNDERSCORE: Final = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
#: Markdown text escapes: backslash escapes for the characters that make code, links, emphasis, strikethrough,
#: headings and table cells; entities for those that make HTML and entities. Applied before :data:`CONTROL`.
_MARKDOWN: Final = str.maketrans({**{c: f"\\{c}" for c in "\\`*[]|~#!"}, "&": "&amp;", "<": "&lt;", ">": "&gt;"})

#: What makes GitHub link bare text (its autolink extension): the ``:`` of ``scheme://`` and the ``.`` of ``www.``,
#: each escaped with a backslash (rendered as written, no link). An e-mail address is still linked.
_AUTOLINK: Final = re.compile(r":(?=//)|(?<=[wW]{3})\.")


def visible(text: str) -> str:
    r"""``text`` with its control characters written as escapes (a newline as ``\n``), else as it is.

    Examples
    --------
    >>> print(visible("line\nbreak\x1b[31m"))
    line\nbreak\x1b[31m
    >>> print(visible("model\u202egnp.exe"))
    model\u202egnp.exe
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
    >>> print(markdown_text("_x_ __y__ scored_coverage"))
    \_x\_ \_\_y\_\_ scored_coverage
    >>> print(markdown_text("https://evil.example/q1 www.evil.example"))
    https\://evil.example/q1 www\.evil.example
    """
    text = _EMPHASIS_UNDERSCORE.sub(r"\\_", fmt_value(value).translate(_MARKDOWN))
    return _AUTOLINK.sub(r"\\\g<0>", text).translate(CONTROL)


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
