"""Statuses of a status ledger: ``exec_status``, ``score_status``, ``has_output``, and their consistency (SPEC §3)."""

from __future__ import annotations

from typing import Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    DETAIL,
    EXEC_STATUS,
    EXEC_STATUSES,
    HAS_OUTPUT,
    KIND,
    LINE,
    PASSED,
    SCORE,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    TRIAL,
)
from evalframe.validate.tokens import Check, bool_token, check, empty_is_null, quoted

#: Legacy spelling accepted for ``score_status`` (used by some generators).
_SCORE_STATUS_ALIASES: Final = {"unscored": "not_scored"}


def status_columns(schema: pl.Schema, score: pl.Expr, *, status_ledger: bool) -> tuple[dict[str, pl.Expr], list[Check]]:
    """The canonical ``exec_status``, ``score_status`` (String) and ``has_output`` (Boolean), and their checks.

    ``score`` is the parsed score: without a ``score_status`` column an
    attempt is ``scored`` when it has one. A ledger of another shape than
    the status ledger (``status_ledger`` false) is completed, scored and
    with output on every row.
    """
    if not status_ledger:
        return {EXEC_STATUS: pl.lit("completed"), SCORE_STATUS: pl.lit("scored"), HAS_OUTPUT: pl.lit(True)}, []
    checks: list[Check] = []
    exprs = {EXEC_STATUS: pl.col(EXEC_STATUS).cast(pl.String)}
    if SCORE_STATUS in schema:
        exprs[SCORE_STATUS] = pl.col(SCORE_STATUS).cast(pl.String).replace(_SCORE_STATUS_ALIASES)
    else:
        exprs[SCORE_STATUS] = pl.when(score.is_not_null()).then(pl.lit("scored")).otherwise(pl.lit("not_scored"))
    if HAS_OUTPUT in schema:
        parsed, bad = empty_is_null(HAS_OUTPUT, schema, *bool_token(HAS_OUTPUT, schema[HAS_OUTPUT]))
        exprs[HAS_OUTPUT] = parsed.fill_null(pl.col(EXEC_STATUS) == "completed")
        checks.append(
            check(bad, "invalid_grade", pl.format("has_output = {} is not true/false/1/0", quoted(HAS_OUTPUT)))
        )
    else:
        exprs[HAS_OUTPUT] = pl.col(EXEC_STATUS) == "completed"
    for name in (EXEC_STATUS, SCORE_STATUS):
        if name in schema and schema[name] == pl.String:
            checks.append(check(pl.col(name) == "", "empty_value", pl.lit(f"empty {name}")))
    return exprs, checks


def status_problems(ledger: pl.DataFrame) -> pl.DataFrame:
    """Rows whose statuses contradict their score (SPEC §3 status consistency)."""
    scored = pl.col(SCORE_STATUS) == "scored"
    has_score = pl.col(SCORE).is_not_null() | pl.col(PASSED).is_not_null()
    rules = [
        (
            has_score & ~scored & pl.col(SCORE_STATUS).is_not_null(),
            "a score is present but score_status is not 'scored'",
        ),
        (scored & ~has_score, "score_status is 'scored' but there is no score"),
        (scored & (pl.col(EXEC_STATUS) != "completed"), "score_status is 'scored' but exec_status is not 'completed'"),
        (
            scored & (pl.col(EXEC_STATUS) == "completed") & ~pl.col(HAS_OUTPUT).fill_null(True),
            "score_status is 'scored' but the attempt has no output",
        ),
    ]
    valid = pl.col(EXEC_STATUS).is_in(EXEC_STATUSES) & pl.col(SCORE_STATUS).is_in(SCORE_STATUSES)
    # Rows that break a rule are taken out first (few), not the valid ones (a copy of the whole ledger).
    broken = ledger.filter(valid & pl.any_horizontal([mask.fill_null(False) for mask, _ in rules]))
    parts = [
        broken.filter(mask.fill_null(False)).select(
            pl.lit("status_inconsistent").alias(KIND),
            CANDIDATE,
            CASE_ID,
            TRIAL,
            ATTEMPT,
            LINE,
            SOURCE,
            pl.lit(text).alias(DETAIL),
        )
        for mask, text in rules
    ]
    return pl.concat(parts)
