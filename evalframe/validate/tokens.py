"""Token parsers: a raw column's values read strictly into typed values, with the mask of bad tokens.

Each parser returns ``(parsed, bad)``: the parsed expression (null where the
token does not parse) and a Boolean mask of the rows whose token is not
valid. A :data:`Check` pairs such a mask with a problem kind and a detail.
"""

from __future__ import annotations

from typing import Final, TypeAlias

import polars as pl

#: A token check: rows where the mask is true have a problem of the kind, described by the detail.
Check: TypeAlias = tuple[pl.Expr, str, pl.Expr]

#: A positive integer token, and the tokens of a Boolean.
_INT_TOKEN: Final = r"^[1-9][0-9]*$"
_BOOL_TOKENS: Final = {"true": True, "false": False, "1": True, "0": False}


def check(mask: pl.Expr, kind: str, detail: pl.Expr) -> Check:
    """A token check: rows where ``mask`` is true have a problem of ``kind`` described by ``detail``."""
    return mask.fill_null(False), kind, detail


def grade_token(col: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """Return (parsed Boolean, invalid mask) for a binary grade column."""
    c = pl.col(col)
    if dtype == pl.Boolean:
        return c, pl.lit(False)
    if dtype.is_integer():
        return (c == 1), c.is_not_null() & ~c.is_in([0, 1])
    if dtype.is_float():
        return (c == 1.0), c.is_not_null() & (c.is_nan() | ~c.is_in([0.0, 1.0]))
    s = c.cast(pl.String)
    return s.replace_strict({"1": True, "0": False}, default=None, return_dtype=pl.Boolean), s.is_not_null() & ~s.is_in(
        ["0", "1"]
    )


def score_token(col: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """Return (parsed Float64, unparseable mask) for a numeric score column."""
    c = pl.col(col)
    if dtype == pl.Boolean:
        return c.cast(pl.Float64), pl.lit(False)
    if dtype.is_numeric():
        f = c.cast(pl.Float64)
        return f, pl.lit(False)
    s = c.cast(pl.String)
    f = s.cast(pl.Float64, strict=False)
    # A token must be a plain number: no padding, not 'nan'/'inf' spelled out.
    plain = s.str.contains(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
    return f, s.is_not_null() & (f.is_null() | ~plain)


def int_token(col: str, dtype: pl.DataType, *, allow_zero: bool = False) -> tuple[pl.Expr, pl.Expr]:
    """Return (parsed Int64, invalid mask) for a positive integer column (``0`` too when ``allow_zero``)."""
    c = pl.col(col)
    if dtype.is_integer():  # an unsigned value beyond Int64 (a UInt64 of 2**64 - 1) is not one evalframe reads
        parsed_int = c.cast(pl.Int64, strict=False)
        return parsed_int, c.is_not_null() & parsed_int.is_null()
    s = c.cast(pl.String)
    parsed = s.cast(pl.Int64, strict=False)
    # Digits beyond Int64 are not a number evalframe reads (a null there would be reported as an empty value).
    ok = (s.str.contains(_INT_TOKEN) | ((s == "0") if allow_zero else pl.lit(False))) & parsed.is_not_null()
    return pl.when(ok).then(parsed), s.is_null() | ~ok


def bool_token(col: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """Return (parsed Boolean, invalid mask) for a ``true``/``false``/``1``/``0`` column."""
    c = pl.col(col)
    if dtype == pl.Boolean:
        return c, pl.lit(False)
    if dtype.is_integer():
        return c == 1, c.is_not_null() & ~c.is_in([0, 1])
    s = c.cast(pl.String)
    return s.replace_strict(_BOOL_TOKENS, default=None, return_dtype=pl.Boolean), s.is_not_null() & ~s.is_in(
        list(_BOOL_TOKENS)
    )


def empty_is_null(name: str, schema: pl.Schema, parsed: pl.Expr, bad: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Read an empty String field as null (not as a bad token)."""
    if schema[name] != pl.String:
        return parsed, bad
    empty = pl.col(name) == ""
    return pl.when(empty).then(None).otherwise(parsed), bad & ~empty


def quoted(name: str) -> pl.Expr:
    """A column's value quoted for a detail message (``'x'``, or ``null``)."""
    s = pl.col(name).cast(pl.String)
    return pl.when(s.is_null()).then(pl.lit("null")).otherwise(pl.concat_str([pl.lit("'"), s, pl.lit("'")]))
