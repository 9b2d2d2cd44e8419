"""HTML building blocks: escaped elements, tables and the page shell with its inline stylesheet.

Every string that comes from the data (case ids, candidates, slice values,
paths) is escaped by :func:`esc`; :class:`Html` marks text that already is
HTML. Tables are plain HTML: the report's tables are small and fixed in
shape, and a table library would add a dependency without adding anything
a reader sees.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any, Final

import polars as pl

from evalframe.report.descriptions import describe
from evalframe.report.format import CONTROL, fmt_value

#: The page's one stylesheet, inline (nothing is fetched).
CSS: Final = """
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
.ef .card .big small{display:block;margin:0 0 .2em}
.ef .card p.cond{font-size:1.05em;margin:.1em 0 .4em}.ef .card p.cond b{font-size:1.3em}
.ef details{margin:.3em 0}.ef ul.reasons li{margin:.2em 0}
.ef .gate{border-radius:6px;padding:8px 14px;margin:.6em 0;border:2px solid}
.ef .gate.fail{background:#fff5f5;border-color:#c92a2a}.ef .gate.pass{background:#ebfbee;border-color:#2b8a3e}
.ef .refused{border-left:6px solid #c92a2a;background:#fff5f5;padding:10px 14px;font-size:1.08em;margin:.6em 0}
.ef a.units{color:#1864ab;text-decoration:underline dotted}.ef .filters{display:flex;flex-wrap:wrap;gap:8px 16px;
  margin:.5em 0;font-size:.92em}.ef .pager{margin:.3em 0;font-size:.9em}
.ef .sym{display:inline-block;min-width:1.1em;text-align:center;font-weight:700}.ef .o-passed{color:#2b8a3e}
.ef .o-failed{color:#c92a2a}.ef .o-missing,.ef .o-not_started{color:#868e96}.ef .o-exec_failed,.ef .o-judge_failed,
.ef .o-no_output,.ef .o-not_scored{color:#e67700}.ef tr.differs td{background:#fff9db}
"""


class Html(str):
    """Text that is already HTML: never escaped again."""

    __slots__ = ()


#: The controls written as escapes in HTML text (:data:`~evalframe.report.format.CONTROL`: bidi overrides that
#: would show an id reversed, C0/C1 controls), except the white space a page lays out as space.
_SHOWN_CONTROLS: Final = {i: e for i, e in CONTROL.items() if chr(i) not in "\t\n\r"}


def esc(value: Any) -> Html:
    r"""Escape a value for HTML text or a quoted attribute (non-strings are formatted first).

    Examples
    --------
    >>> esc('<img src=x onerror="alert(1)">&')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;'
    >>> esc(0.5), esc(None), esc(Html("<b>kept</b>"))
    ('0.5', 'null', '<b>kept</b>')
    >>> print(esc("model\u202egnp.exe"))
    model\u202egnp.exe
    """
    if isinstance(value, Html):
        return value
    text = value if isinstance(value, str) else fmt_value(value)
    return Html(html.escape(text.translate(_SHOWN_CONTROLS), quote=True))


def el(name: str, *children: Any, cls: str | None = None, **attrs: str | None) -> Html:
    """An element: children escaped (unless :class:`Html`), attributes quoted; ``cls`` is its class."""
    attributes = "".join(
        f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"' for k, v in ({"class": cls} | attrs).items() if v is not None
    )
    return Html(f"<{name}{attributes}>" + "".join(esc(c) for c in children) + f"</{name}>")


def join(parts: Iterable[Any], sep: str = "") -> Html:
    """Parts side by side, each escaped unless it is :class:`Html`."""
    return Html(sep.join(esc(p) for p in parts))


def num_cell(value: Any) -> bool:
    """Whether a cell holds a number (right-aligned, tabular figures)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def verdict_box(verdict: str, detail: Any, reasons: Sequence[str], passed: Sequence[str], *, winner: bool) -> Html:
    """A verdict in bold, ``detail``, its reasons as a list, then the checks that passed under their own heading.

    Examples
    --------
    >>> verdict_box("none", "", ["sample: 3 cases"], ["tipping point: holds"], winner=False).count("<li>")
    2
    """
    lists = [el("ul", *[el("li", r) for r in reasons], cls="reasons")]
    if passed:
        lists += [el("p", "Checks passed:", cls="muted"), el("ul", *[el("li", r) for r in passed], cls="reasons")]
    return el("div", el("b", f"Verdict: {verdict}"), detail, *lists, cls="verdict win" if winner else "verdict none")


def fragment(*body: Any) -> str:
    """``body`` in a ``<div class="ef">`` after the inline stylesheet: what a notebook displays."""
    return str(join([Html(f"<style>{CSS}</style>"), el("div", *body, cls="ef")]))


def small(text: Any) -> Html:
    """A secondary line inside a cell or card."""
    return el("small", text)


def table(header: Sequence[Any], rows: Iterable[Sequence[Any]], *, titles: Sequence[str | None] = ()) -> Html:
    """A plain table in a horizontally scrolling box; numbers right-aligned; ``titles``: the headers' tooltips."""
    tips = titles or [None] * len(header)
    head = el("tr", *[el("th", h, title=t) for h, t in zip(header, tips, strict=True)])
    body = [el("tr", *[el("td", v, cls="num" if num_cell(v) else None) for v in row]) for row in rows]
    return el("div", el("table", el("thead", head), el("tbody", *body)), cls="scroll")


def frame_table(frame: pl.DataFrame, name: str | None = None) -> Html:
    """A frame as a table; with ``name`` (a report table), each header carries its column's description."""
    rows = [["yes" if v is True else "no" if v is False else v for v in row] for row in frame.iter_rows()]
    return table(frame.columns, rows, titles=[describe(name, c) for c in frame.columns] if name else ())


def page(title: str, *body: Any) -> str:
    """A complete HTML document: UTF-8, the inline stylesheet, ``body`` inside ``<main class="ef">``."""
    return str(
        join(
            [
                Html("<!DOCTYPE html>\n"),
                Html('<html lang="en"><head><meta charset="utf-8">'),
                Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                el("title", title),
                Html(f"<style>{CSS}</style></head><body>"),
                el("main", *body, cls="ef"),
                Html("</body></html>\n"),
            ]
        )
    )
