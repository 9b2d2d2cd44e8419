"""The explorer of report.html: the units embedded as JSON, and the links from a number to its units.

The page carries the units (up to :data:`MAX_UNITS`) in a ``<script type="application/json">`` block and
a small hand-written script (``explore.js``, package data) that filters them by task, candidate, outcome,
slice value and case id, pages them, and sets its filters from the URL fragment. A count, rate or bar
links to a fragment such as ``#candidate=A&outcome=scored``: following it shows exactly the units behind
that number. Without the script the page's static content still reads; the links then do nothing.

The outcome filter takes a funnel count's name (``scored``, ``completed``...) or an outcome's; each count
stands for the outcomes :data:`evalframe.columns.FUNNEL_OUTCOMES` gives it, so a count and its
units are one definition.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import polars as pl

from evalframe.columns import (
    ATTEMPTED,
    CANDIDATE,
    CASE_ID,
    FUNNEL_OUTCOMES,
    OUTCOME,
    OUTCOMES,
    PLANNED,
    TASK,
    TRIAL,
)
from evalframe.natural import natural_sorted, shape_keys
from evalframe.report.htmlkit import Html, el

if TYPE_CHECKING:
    from evalframe.report.view import TasksView, View

#: The outcome filter's name for the numerator of ``pass_rate_upper`` (passed + every ungraded unit).
PASSED_OR_UNGRADED: Final = "passed_or_ungraded"

#: Units embedded in report.html at most: with more, the page embeds the first ones in order of (task, case,
#: candidate, trial), so each embedded case has every candidate's trials, and says how many it left out
#: (units.parquet holds them all). 20,000 units keep the page near 1 MB and quick to open.
MAX_UNITS: Final = 20_000

#: What each ungraded or graded outcome means, shown as a symbol's title in the explorer.
OUTCOME_MEANING: Final = {
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

#: The explorer's symbol of each outcome: ungraded ones are their own symbols, never a fail's.
OUTCOME_SYMBOL: Final = {
    "missing": "○",
    "not_started": "·",
    "exec_failed": "⚠",
    "no_output": "∅",
    "judge_failed": "⚖",
    "not_scored": "?",
    "scored_no_threshold": "#",
    "failed": "✗",
    "passed": "✓",
}


def outcome_groups() -> dict[str, list[str]]:
    """Each name the outcome filter takes, with the outcomes it stands for.

    A funnel count's outcomes (``planned`` is every outcome, ``attempted`` every one but ``missing`` and
    ``not_started``), then each outcome alone, then ``ungraded`` (every outcome without a grade) and
    ``passed_or_ungraded`` (the numerator of ``pass_rate_upper``: passed + planned − scored).

    Examples
    --------
    >>> groups = outcome_groups()
    >>> groups["scored"], groups["missing"], groups["ungraded"][:2]
    (['scored_no_threshold', 'failed', 'passed'], ['missing'], ['missing', 'not_started'])
    """
    not_attempted = FUNNEL_OUTCOMES["_not_attempted"]
    groups = {PLANNED: list(OUTCOMES), ATTEMPTED: [o for o in OUTCOMES if o not in not_attempted]}
    groups |= {name: list(values) for name, values in FUNNEL_OUTCOMES.items() if not name.startswith("_")}
    groups |= {o: [o] for o in OUTCOMES if o not in groups}
    ungraded = [o for o in OUTCOMES if o not in FUNNEL_OUTCOMES["scored"]]
    return groups | {"ungraded": ungraded, PASSED_OR_UNGRADED: [*ungraded, "passed"]}


def units_fragment(
    candidate: str, outcome: str, task: str | None = None, where: Mapping[str, str] | None = None
) -> str:
    """The URL fragment that sets the explorer's filters to ``candidate``'s units of ``outcome`` (and ``task``).

    ``where``: slice column → value, each a ``slice.COLUMN=VALUE`` filter (a row of the slice table).

    Examples
    --------
    >>> units_fragment("A&B", "scored", "t 1")
    '#task=t%201&candidate=A%26B&outcome=scored'
    >>> units_fragment("A", "missing", where={"case_type": "long context"})
    '#candidate=A&outcome=missing&slice.case_type=long%20context'
    """
    fields = [("task", task), ("candidate", candidate), ("outcome", outcome)]
    fields += [(f"slice.{column}", value) for column, value in (where or {}).items()]
    return "#" + "&".join(
        f"{quote(key, safe='.')}={quote(value, safe='')}" for key, value in fields if value is not None
    )


def units_link(
    text: Any,
    *,
    candidate: str,
    outcome: str,
    task: str | None = None,
    title: str = "",
    where: Mapping[str, str] | None = None,
) -> Html:
    """``text`` as a link to the explorer filtered to ``candidate``'s units of ``outcome`` (a count or an outcome).

    ``where`` adds slice filters (see :func:`units_fragment`).

    Examples
    --------
    >>> units_link(2, candidate="A&B", outcome="scored", task="t1")
    '<a class="units" href="#task=t1&amp;candidate=A%26B&amp;outcome=scored" title="show these units">2</a>'
    """
    href = units_fragment(candidate, outcome, task, where)
    return el("a", text, href=href, cls="units", title=title or "show these units")


def _units_of(units: pl.DataFrame | pl.LazyFrame, task: str | None, slices: list[str]) -> pl.LazyFrame:
    frame = units.lazy()
    names = frame.collect_schema().names()
    keep = [pl.col(c).cast(pl.String) for c in (CANDIDATE, CASE_ID, OUTCOME)]
    keep.append(pl.col(TRIAL).cast(pl.Int64) if TRIAL in names else pl.lit(None, pl.Int64).alias(TRIAL))
    keep += [pl.col(s).cast(pl.String) for s in slices if s in names]
    if task is not None:
        keep.insert(0, pl.lit(task, pl.String).alias(TASK))
    elif TASK in names:
        keep.insert(0, pl.col(TASK).cast(pl.String))
    return frame.select(keep)


def explorer_units(view: View | TasksView) -> tuple[pl.DataFrame, int]:
    """The units the page embeds (at most :data:`MAX_UNITS`) and how many units the audit has.

    Columns (String unless said): ``task`` (a batch of several tasks, or a ledger's task column),
    ``candidate``, ``case_id``, ``outcome``, ``trial`` (Int64), then each declared slice column. Ordered
    by task, case (digit-free shape, length, text: close to natural order), candidate and trial.
    """
    parts: list[tuple[str | None, View]] = [*view.tasks] if hasattr(view, "tasks") else [(None, view)]
    frames = [
        _units_of(one.units, task, [str(s) for s in one.data.get("meta", {}).get("slices") or []])
        for task, one in parts
        if one.units is not None
    ]
    if not frames:
        return pl.DataFrame(), 0
    units = pl.concat(frames, how="diagonal_relaxed")
    total = int(units.select(pl.len()).collect().item())
    keys = [c for c in (TASK,) if c in units.collect_schema().names()]
    ordered = units.sort(*keys, *shape_keys(pl.col(CASE_ID)), CANDIDATE, TRIAL, nulls_last=True)
    return ordered.head(MAX_UNITS).collect(), total


def _columnar(frame: pl.DataFrame) -> dict[str, Any]:
    """Each column as a list; a String column as ``{"values": [...], "codes": [...]}`` (a dictionary)."""
    columns: dict[str, Any] = {}
    for name in frame.columns:
        series = frame.get_column(name)
        if series.dtype == pl.String:
            values = natural_sorted(v for v in series.unique().to_list() if v is not None)
            codes = series.cast(pl.Enum(values)).to_physical().to_list()
            columns[name] = {"values": values, "codes": codes}
        else:
            columns[name] = series.to_list()
    return columns


def explorer_json(units: pl.DataFrame, total: int) -> str:
    """The explorer's data as JSON safe inside a ``<script>`` element (``<``, ``>``, ``&`` as ``\\u`` escapes).

    ``units`` and ``total`` are what :func:`explorer_units` returns. Keys: ``columns`` (each column as a
    list; a String column as ``{"values": [...], "codes": [...]}``), ``rows``, ``total`` (units in the
    audit), ``max`` (:data:`MAX_UNITS`), ``slices`` (slice column names), ``groups``
    (:func:`outcome_groups`), ``meaning`` and ``symbol`` (per outcome).

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["</script>"], "case_id": ["q1"], "outcome": ["missing"], "trial": [0]})
    >>> text = explorer_json(units, 3)
    >>> "</" in text, json.loads(text)["columns"]["candidate"], json.loads(text)["total"]
    (False, {'values': ['</script>'], 'codes': [0]}, 3)
    """
    slices = [c for c in units.columns if c not in (TASK, CANDIDATE, CASE_ID, OUTCOME, TRIAL)]
    doc = {
        "columns": _columnar(units),
        "rows": units.height,
        "total": total,
        "max": MAX_UNITS,
        "slices": slices,
        "groups": outcome_groups(),
        "meaning": OUTCOME_MEANING,
        "symbol": OUTCOME_SYMBOL,
    }
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def explorer_section(view: View | TasksView) -> Html:
    """The explorer: its static note (what it holds, what was left out), its data and its script.

    Without JavaScript the note still says how many units the page holds and that units.parquet holds all.
    """
    units, total = explorer_units(view)
    left = total - units.height
    said = f"This page holds {units.height} of the audit's {total} units" + (
        f"; {left} were left out (at most {MAX_UNITS} are embedded): units.parquet holds them all." if left else "."
    )
    legend = ", ".join(f"{OUTCOME_SYMBOL[o]} {o}" for o in OUTCOMES)
    script = files("evalframe.report").joinpath("explore.js").read_text(encoding="utf-8")
    section = el(
        "section",
        el("h2", "Explore the units"),
        el("p", said, id="ef-held", cls="muted"),
        el("p", f"Symbols: {legend}. Ungraded units are never a fail.", cls="muted"),
        el("noscript", "The explorer needs JavaScript; every table above reads without it."),
        el("div", id="ef-explorer"),
        id="explore",
    )
    data = explorer_json(units, total)
    return Html(
        f'{section}<script type="application/json" id="ef-data">{data}</script><script id="ef-code">{script}</script>'
    )
