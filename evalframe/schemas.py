"""pandera schemas of the canonical plan and ledger, and their failures as problems.

pandera checks only the schema of a LazyFrame unless the validation depth is
raised; evalframe always validates a collected DataFrame with ``lazy=True``
so every value check runs and every failure is reported, not just the first.
Each failure case is turned into a row of the problems table with its line.
"""

from __future__ import annotations

from typing import Final

import pandera.polars as pa
import polars as pl
from pandera.api.polars.types import PolarsData

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    DETAIL,
    EXEC_STATUSES,
    KIND,
    LINE,
    RUN_ID,
    SCORE_STATUSES,
    SOURCE,
    TRIAL,
)


def _not_empty(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key).str.len_bytes() > 0)


def _not_padded(data: PolarsData) -> pl.LazyFrame:
    col = pl.col(data.key)
    # Stripping only removes characters: equal byte lengths mean nothing was stripped (no string compare).
    return data.lazyframe.select(col.str.strip_chars().str.len_bytes() == col.str.len_bytes())


class PlanCasesModel(pa.DataFrameModel):
    """The plan's cases: one row per ``case_id`` (String, non-empty, not padded)."""

    case_id: str = pa.Field(nullable=False)

    @pa.check(CASE_ID, name="empty_identifier")
    def _case_not_empty(cls, data: PolarsData) -> pl.LazyFrame:
        return _not_empty(data)

    @pa.check(CASE_ID, name="padded_identifier")
    def _case_not_padded(cls, data: PolarsData) -> pl.LazyFrame:
        return _not_padded(data)

    class Config:
        strict = False


class LedgerModel(pa.DataFrameModel):
    """The canonical ledger: one row per attempt.

    ``candidate``, ``case_id`` (String, non-empty, not padded), ``trial``
    (Int64, ≥ 0; whether it is planned is checked against the plan),
    ``attempt`` (Int64, ≥ 1), ``run_id`` (String, nullable, non-empty and not
    padded when present), ``exec_status`` and ``score_status`` (String, in
    the SPEC vocabulary).
    """

    candidate: str = pa.Field(nullable=False)
    case_id: str = pa.Field(nullable=False)
    trial: int = pa.Field(ge=0, nullable=False)
    attempt: int = pa.Field(ge=1, nullable=False)
    run_id: str = pa.Field(nullable=True)
    exec_status: str = pa.Field(isin=list(EXEC_STATUSES), nullable=False)
    score_status: str = pa.Field(isin=list(SCORE_STATUSES), nullable=False)

    @pa.check(CANDIDATE, CASE_ID, RUN_ID, name="empty_identifier")
    def _id_not_empty(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col(data.key).is_null() | (pl.col(data.key).str.len_bytes() > 0))

    @pa.check(CANDIDATE, CASE_ID, RUN_ID, name="padded_identifier")
    def _id_not_padded(cls, data: PolarsData) -> pl.LazyFrame:
        return _not_padded(data)

    class Config:
        strict = False


#: pandera check name (prefix) → problem kind.
KIND_OF_CHECK: Final = {
    "empty_identifier": "empty_identifier",
    "padded_identifier": "padded_identifier",
    "greater_than_or_equal_to": "invalid_integer",
    "isin": "invalid_status",
    "not_nullable": "empty_value",
}


def failures_as_problems(frame: pl.DataFrame, model: type[pa.DataFrameModel]) -> pl.DataFrame:
    """Validate ``frame`` against ``model`` and return the failures as problems.

    The frame is a collected DataFrame, so value checks always run (see the
    module note). ``line`` and ``source`` of each failing row are carried
    over when the frame has them.

    Parameters
    ----------
    frame
        The frame to validate.
    model
        A pandera DataFrameModel.

    Returns
    -------
    polars.DataFrame
        Partial problems frame: ``kind``, the key columns present in
        ``frame`` (``line``, ``source`` among them), and ``detail``; no rows
        when valid.

    Examples
    --------
    >>> bad = pl.DataFrame({"case_id": ["quote", " x"], "line": [2, 3]})
    >>> failures_as_problems(bad, PlanCasesModel).select("kind", "case_id", "line").to_dicts()
    [{'kind': 'padded_identifier', 'case_id': ' x', 'line': 3}]
    """
    try:
        model.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        cases: pl.DataFrame = exc.failure_cases
    else:
        cases = pl.DataFrame(
            schema={"index": pl.Int32, "column": pl.String, "check": pl.String, "failure_case": pl.String}
        )
    cases = cases.filter(pl.col("index").is_not_null())
    keys = [c for c in (CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, SOURCE) if c in frame.columns]
    indexed = frame.select(keys).with_row_index("index")
    check_kind = pl.col("check").str.extract(r"^([a-z_]+)")
    return (
        cases.with_columns(pl.col("index").cast(pl.UInt32))
        .join(indexed, on="index", how="left")
        .with_columns(
            check_kind.replace_strict(KIND_OF_CHECK, default="invalid_value").alias(KIND),
            pl.concat_str(
                [
                    pl.col("column"),
                    pl.lit(" = "),
                    pl.col("failure_case").fill_null("null"),
                    pl.lit(" fails check "),
                    pl.col("check"),
                ]
            ).alias(DETAIL),
        )
        .select(KIND, *keys, DETAIL)
    )
