"""The shape of a raw ledger (grades, status or answers) and the problems of its columns.

Three ledger shapes are one canonical ledger (SPEC §1); which one a ledger
has follows from its columns. :data:`CANONICAL_SCHEMA` is what every shape
becomes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ANSWER,
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    EXEC_STATUS,
    EXPECTED,
    HAS_OUTPUT,
    LIMIT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TASK,
    TRIAL,
)
from evalframe.plan import RESERVED_COLUMNS, Plan

#: Columns (and dtypes) of the canonical ledger: one row per attempt.
CANONICAL_SCHEMA: Final = pl.Schema(
    {
        CANDIDATE: pl.String,
        CASE_ID: pl.String,
        TRIAL: pl.Int64,
        ATTEMPT: pl.Int64,
        RUN_ID: pl.String,
        EXEC_STATUS: pl.String,
        SCORE_STATUS: pl.String,
        SCORE: pl.Float64,
        PASSED: pl.Boolean,
        HAS_OUTPUT: pl.Boolean,
        ANSWER: pl.String,
        LIMIT: pl.String,
        DATASET_VERSION: pl.String,
        CASE_HASH: pl.String,
        LINE: pl.Int64,
        SOURCE: pl.String,
    }
)

#: Problem kinds about a ledger file as a whole (its columns), not about a row.
FILE_PROBLEMS: Final = ("unexpected_column", "missing_column", "missing_expected")

#: Columns a ledger file may have.
KNOWN_COLUMNS: Final = frozenset(CANONICAL_SCHEMA.names())
#: Names an extra column may not have besides the ledger's own: the columns the audit adds per unit.
RESERVED_EXTRA: Final = frozenset(RESERVED_COLUMNS)


def read_shape(
    frame: pl.DataFrame, plan: Plan, extras: Sequence[str], where: str
) -> tuple[pl.DataFrame, str, list[dict[str, Any]]]:
    """The ledger's shape (``grades``, ``status``, ``answers`` or ``unknown``) and the problems of its columns.

    ``frame`` is returned with a ``candidate`` column added when it has none
    and the plan has one candidate. The problems (``missing_column``,
    ``unexpected_column``, ``missing_expected``, see :data:`FILE_PROBLEMS`)
    are about the file, named ``where``; any of them stops the validation.
    """
    structural = _column_problems(frame.columns, extras, where) + _type_problems(frame.schema, extras, where)
    cols = set(frame.columns)
    if CANDIDATE not in cols:
        if len(plan.candidates) == 1:
            frame = frame.with_columns(pl.lit(plan.candidates[0], pl.String).alias(CANDIDATE))
        else:
            detail = "no candidate column and the plan has several candidates"
            structural.append({"kind": "missing_column", "source": where, "detail": detail})
    if CASE_ID not in cols:
        structural.append({"kind": "missing_column", "source": where, "detail": "no case_id column"})
    if EXEC_STATUS in cols:
        shape = "status"
    elif ANSWER in cols:
        shape = "answers"
    elif PASSED in cols or SCORE in cols:
        shape = "grades"
    else:
        shape = "unknown"
        detail = "no grade column: need one of passed, score, answer, exec_status"
        structural.append({"kind": "missing_column", "source": where, "detail": detail})
    if shape == "answers" and (plan.cases.get_column(EXPECTED, default=None) is None):
        detail = "answers given but the plan has no expected column"
        structural.append({"kind": "missing_expected", "source": where, "detail": detail})
    return frame, shape, structural


def stray_columns(schema: pl.Schema, extras: Sequence[str]) -> list[str]:
    """The columns that are neither a ledger column nor declared extra: one ``unexpected_column`` each.

    Each is one problem of :func:`read_shape`; leaving them out, the other columns' rows can still be
    checked (see :func:`~evalframe.validate.validate_ledger`).
    """
    return [name for name in schema if name not in KNOWN_COLUMNS and name not in extras]


#: Column types that hold no text, number or boolean.
_NOT_TEXT: Final = (pl.Binary, pl.Object, pl.Duration)


def _column_problems(columns: Sequence[str], extras: Sequence[str], where: str) -> list[dict[str, Any]]:
    """Problems of declared extra columns (reserved or absent) and of columns that are neither known nor extra."""
    found: list[dict[str, Any]] = []
    for name in extras:
        if name in KNOWN_COLUMNS or name in RESERVED_EXTRA:
            detail = f"{name!r} is a column evalframe reads or writes itself: it cannot be an extra column"
            found.append({"kind": "unexpected_column", "source": where, "detail": detail})
        elif name not in columns:
            detail = f"declared extra column {name!r} is absent"
            found.append({"kind": "missing_column", "source": where, "detail": detail})
    for name in columns:
        if name not in KNOWN_COLUMNS and name not in extras:
            found.append(
                {
                    "kind": "unexpected_column",
                    "source": where,
                    "line": 1 if where.endswith(".csv") else None,
                    "detail": f"column {name!r} names tasks, but the plan has no task column (SPEC §1): give the "
                    "plan one, or leave it out of the ledger"
                    if name == TASK
                    else f"column {name!r} is not a ledger column (declare it as an extra column to carry it)",
                }
            )
    return found


def _type_problems(schema: pl.Schema, extras: Sequence[str], where: str) -> list[dict[str, Any]]:
    """``unexpected_column`` for a ledger column of a type that holds no text, number or boolean (bytes, lists, ...).

    The same rule as a plan's (:func:`evalframe.plan.checks.column_problems`): text is compared as written, so
    bytes (Parquet's BYTE_ARRAY without a string type) are not read as text, valid UTF-8 or not. Extra columns
    are carried untouched, whatever their type.
    """
    return [
        {
            "kind": "unexpected_column",
            "source": where,
            "detail": f"ledger column {name!r} has type {dtype}; ledger columns hold text, numbers or booleans",
        }
        for name, dtype in schema.items()
        if name in KNOWN_COLUMNS and name not in extras and (dtype.is_nested() or dtype in _NOT_TEXT)
    ]


def only_value(frame: pl.DataFrame, name: str) -> Any:
    """The value every row of ``frame`` has in column ``name``, or None (no rows, a null, or two values).

    Each row is compared with the first, in one query (no value is hashed, as a ``unique`` would).
    """
    col = pl.col(name)
    no_null, same, first = (
        frame.lazy()
        .select((col.null_count() == 0).alias("_no_null"), (col == col.first()).all().alias("_same"), col.first())
        .collect()
        .row(0)
    )
    return first if frame.height and no_null and same else None
