"""Natural order of ids: digit runs compared as numbers, so ``case/9`` comes before ``case/10``.

People read case ids in this order; the audit lists a candidate's first missing cases in it and the
report lays out candidates, slices and pairs in it. To find the naturally first of many ids without
ordering each in Python, keep the :data:`KEPT` times as many smallest by :func:`shape_order` (a polars
sort) and order those with :func:`natural_sorted`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import polars as pl

#: How many times as many ids as needed to keep by :func:`shape_order` before :func:`natural_sorted`.
KEPT: Final = 4

_DIGIT_RUNS: Final = re.compile(r"(\d+)")


def natural_key(value: Any) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the digit runs of an id by number: ``case/100`` before ``case/1000``.

    Examples
    --------
    >>> sorted(["case/10000", "case/100", "case/1000", "case/99", "b"], key=natural_key)
    ['b', 'case/99', 'case/100', 'case/1000', 'case/10000']
    >>> sorted(["7", "q7a", "007", "q7"], key=natural_key)
    ['007', '7', 'q7', 'q7a']
    """
    if value is None:
        return ((2, ""),)  # nulls last
    text = str(value)
    runs = tuple((0, int(p)) if p.isdigit() else (1, p) for p in _DIGIT_RUNS.split(text) if p)
    # Ids whose runs are equal (``007`` and ``7``) are ordered by their text, whatever order they came in;
    # (-1, text) sorts before any run, so ``q7`` still comes before ``q7a``.
    return (*runs, (-1, text)) if runs else ()


def natural_sorted(values: Iterable[Any]) -> list[Any]:
    """Values in :func:`natural_key` order.

    Examples
    --------
    >>> natural_sorted(["q10", "q9", "q100"])
    ['q9', 'q10', 'q100']
    """
    return sorted(values, key=natural_key)


def shape_keys(ids: pl.Expr) -> list[pl.Expr]:
    """The sort keys of :func:`shape_order` for a String expression: digit-free shape, length, text.

    Examples
    --------
    >>> pl.DataFrame({"id": ["q10", "q9", "a1"]}).sort(shape_keys(pl.col("id"))).get_column("id").to_list()
    ['a1', 'q9', 'q10']
    """
    return [ids.str.replace_all(r"\d", ""), ids.str.len_chars(), ids]


def shape_order(ids: pl.Series) -> pl.Series:
    """Each id's position (UInt32) when the ids are ordered by digit-free shape, then length, then text.

    Computed by polars, and close to natural order: exact for ids of one shape with one digit run and
    no leading zeros (``case-9``, ``case-10``). Callers keep a few times as many of the first as they
    need (:data:`KEPT`) and order those with :func:`natural_sorted`.

    Examples
    --------
    >>> shape_order(pl.Series(["q10", "q9", "a1"])).to_list()
    [2, 1, 0]
    """
    frame = ids.cast(pl.String).alias("id").to_frame().with_row_index("_row")
    order = frame.sort(shape_keys(pl.col("id"))).get_column("_row")
    return pl.Series(ids.name, order.arg_sort(), pl.UInt32)
