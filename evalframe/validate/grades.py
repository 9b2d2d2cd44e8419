"""Grades: ``passed`` and ``score`` parsed as a binary grade or a numeric score in a declared range."""

from __future__ import annotations

import polars as pl

from evalframe.columns import PASSED, SCORE, GradeKind
from evalframe.validate.tokens import Check, check, empty_is_null, grade_token, quoted, score_token


def grade_columns(
    schema: pl.Schema,
    *,
    shape: str,
    grade: GradeKind,
    score_range: tuple[float, float],
    pass_threshold: float | None,
) -> tuple[pl.Expr, pl.Expr, list[Check]]:
    """The canonical ``score`` (Float64) and ``passed`` (Boolean) of a ledger, and their token checks.

    In a grades ledger every row must carry a grade; in a status or
    answers ledger an empty field means "no grade" (null). A binary grade
    is exactly 0 or 1; a numeric score is a finite number in
    ``score_range``, and passes when it reaches ``pass_threshold`` where the
    export gave no pass/fail of its own (see
    :func:`~evalframe.validate.validate_ledger`).
    """
    checks: list[Check] = []
    passed: pl.Expr = pl.lit(None, pl.Boolean)
    score: pl.Expr = pl.lit(None, pl.Float64)
    required = shape == "grades"
    if PASSED in schema:
        passed, bad = grade_token(PASSED, schema[PASSED])
        if not required:
            passed, bad = empty_is_null(PASSED, schema, passed, bad)
        null_bad = pl.col(PASSED).is_null() if required else pl.lit(False)
        detail = pl.format("passed = {} is not exactly 0 or 1", quoted(PASSED))
        checks.append(check(bad | null_bad, "invalid_grade", detail))
        score = passed.cast(pl.Float64)
    if SCORE not in schema:
        return score, passed, checks
    parsed, unparseable = score_token(SCORE, schema[SCORE])
    if not required:
        parsed, unparseable = empty_is_null(SCORE, schema, parsed, unparseable)
    missing = pl.col(SCORE).is_null() if required and PASSED not in schema else pl.lit(False)
    if grade == "binary":
        bad = unparseable | (parsed.is_not_null() & (parsed.is_nan() | ~parsed.is_in([0.0, 1.0])))
        detail = pl.format("score = {} is not exactly 0 or 1 (scores in a range: --grade numeric)", quoted(SCORE))
        checks.append(check(bad | missing, "invalid_grade", detail))
        if PASSED not in schema:
            passed = parsed == 1.0
    else:
        low, high = score_range
        out = parsed.is_nan() | parsed.is_infinite() | (parsed < low) | (parsed > high)
        bad = unparseable | (parsed.is_not_null() & out)
        detail = pl.format("score = {} is not a finite number in [{}, {}]", quoted(SCORE), pl.lit(low), pl.lit(high))
        checks.append(check(bad | missing, "invalid_score", detail))
        if pass_threshold is not None:
            # A declared threshold decides where the export gave no pass/fail of its own.
            passed = pl.coalesce(passed, parsed >= pass_threshold)
    return parsed, passed, checks
