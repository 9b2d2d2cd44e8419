"""Problem frames of rows: the options the core reads, and the checks of many rows found in one pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import narwhals.stable.v2 as nw

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    DETAIL,
    EXEC_FAILURES,
    KIND,
    LINE,
    REFUSING,
    SOURCE,
    TRIAL,
    GradeKind,
    RetryPolicyName,
)

#: A narwhals lazy frame over any backend.
Lazy: TypeAlias = "nw.LazyFrame[Any]"

#: Columns of every problems frame built here, in :data:`evalframe.problems.PROBLEM_SCHEMA` order.
PROBLEM_COLUMNS = (KIND, SOURCE, LINE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT, DETAIL, REFUSING)

#: The key columns of a unit.
_UNIT = [CANDIDATE, CASE_ID, TRIAL]

#: The columns a row problem keeps: the attempt's key and where its row stands.
ROW_KEYS = (CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, SOURCE)

#: A row check: (mask of the failing rows, problem kind, detail).
_Check: TypeAlias = tuple[nw.Expr, str, nw.Expr]


@dataclass(frozen=True)
class Options:
    """The audit options the core reads (see :func:`evalframe.audit.audit`)."""

    retry: RetryPolicyName = "first"
    max_attempts: int | None = None
    retry_on: tuple[str, ...] = EXEC_FAILURES
    strict_retries: bool = False
    missing_refuses: bool = False
    grade: GradeKind = "binary"
    score_range: tuple[float, float] = (0.0, 1.0)
    pass_threshold: float | None = None
    extra_columns: tuple[str, ...] = ()


def _lit(value: Any, dtype: Any = None) -> nw.Expr:
    return nw.lit(value, dtype) if dtype is not None else nw.lit(value)


def problems(rows: Lazy, kind: str, detail: nw.Expr, *, refusing: bool = True, keys: Sequence[str] = ()) -> Lazy:
    """``rows`` as problems of ``kind``: the key columns in ``keys`` are kept, the others null."""
    return rows.select(
        _lit(kind, nw.String()).alias(KIND),
        *_key_exprs(keys, {}),
        detail.cast(nw.String()).alias(DETAIL),
        _lit(refusing, nw.Boolean()).alias(REFUSING),
    )


def _key_exprs(keys: Sequence[str], parsed: Mapping[str, nw.Expr]) -> list[nw.Expr]:
    """The problem key columns (source, line, candidate, case_id, trial, attempt): ``keys``, ``parsed``, else null."""
    kept = set(keys)
    cols = []
    for name, dtype in (
        (SOURCE, nw.String()),
        (LINE, nw.Int64()),
        (CANDIDATE, nw.String()),
        (CASE_ID, nw.String()),
        (TRIAL, nw.Int64()),
        (ATTEMPT, nw.Int64()),
    ):
        value = nw.col(name) if name in kept else parsed.get(name, _lit(None, dtype))
        cols.append(value.cast(dtype).alias(name))
    return cols


def checked(
    rows: Lazy,
    checks: Sequence[_Check],
    *,
    keys: Sequence[str],
    parsed: Mapping[str, nw.Expr] | None = None,
    refusing: bool = True,
) -> list[Lazy]:
    """The problems of several checks of the same rows, from one pass over them (none without checks).

    The key columns are ``keys`` of ``rows`` and the expressions of ``parsed`` (e.g. a raw ledger's parsed
    trial), null otherwise.

    Each check's detail, null where its row passes, is a column; the columns are unpivoted to one row per
    row and check and the passing ones dropped, so the backend reads ``rows`` once rather than once per
    check (as :func:`problems` of each check's filter would); only the rows failing some check are widened.
    Every check's detail is non-null where it fails.
    """
    if not checks:
        return []
    names = [f"_check_{i}" for i in range(len(checks))]
    # The masks are computed together (an expression several share is computed once), and only the rows
    # that fail a check are widened (few, in a batch worth auditing).
    masked = rows.with_columns(
        mask.fill_null(False).alias(name) for name, (mask, _, _) in zip(names, checks, strict=True)
    )
    failing = masked.filter(nw.any_horizontal(*map(nw.col, names), ignore_nulls=False))
    wide = failing.select(
        *_key_exprs(keys, parsed or {}),
        *(
            nw.when(nw.col(name)).then(detail.cast(nw.String())).alias(name)
            for name, (_, _, detail) in zip(names, checks, strict=True)
        ),
    )
    index = [SOURCE, LINE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT]
    long = wide.unpivot(on=names, index=index, variable_name="_check", value_name=DETAIL).filter(
        ~nw.col(DETAIL).is_null()
    )
    which = nw.col("_check")
    kind: Any = None  # when the column is check i's, check i's kind
    for name, (_, check_kind, _) in zip(names, checks, strict=True):
        then = _lit(check_kind, nw.String())
        kind = nw.when(which == name).then(then) if kind is None else kind.when(which == name).then(then)
    return [
        long.select(
            kind.otherwise(_lit(None, nw.String())).alias(KIND),
            *index,
            nw.col(DETAIL),
            _lit(refusing, nw.Boolean()).alias(REFUSING),
        )
    ]


def _text(name: str) -> nw.Expr:
    """A column as text, ``null`` when null (pl.format's spelling of a null)."""
    return nw.col(name).cast(nw.String()).fill_null("null")
