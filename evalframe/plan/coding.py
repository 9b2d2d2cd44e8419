"""How a plan numbers its units and cases: the integer codes the audit joins and sorts on.

A planned unit (candidate, case_id, trial) is one Int64 (``_uid``); a case is
its row among the plan's cases sorted by ``case_id`` (``_case``); a candidate
its position among the sorted candidates (``_cand``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, TRIAL

#: Dense integer codes of identities, given against the plan (internal columns, dropped from reports).
CAND_CODE: Final = "_cand"
CASE_CODE: Final = "_case"
#: One Int64 per planned unit; ordering by it is ordering by (candidate, case_id, trial).
UID: Final = "_uid"


@dataclass(frozen=True)
class UnitCoding:
    """How a plan numbers its units: one Int64 per (candidate, case_id, trial).

    ``code = (candidate_index * n_cases + case_index) * span + (trial - low)``
    where ``candidate_index`` is the candidate's position among the sorted
    candidates, ``case_index`` the case's row in the plan's cases (sorted by
    ``case_id``) and ``low .. low + span - 1`` the plan's trial range. Codes
    are dense, and sorting by code sorts by (candidate, case_id, trial).
    """

    candidates: tuple[str, ...]
    n_cases: int
    low: int
    span: int

    @property
    def block(self) -> int:
        """Codes per candidate."""
        return self.n_cases * self.span

    def code(self) -> pl.Expr:
        """The unit code from ``_cand``, ``_case`` (integer codes) and ``trial``."""
        return (pl.col(CAND_CODE).cast(pl.Int64) * self.n_cases + pl.col(CASE_CODE).cast(pl.Int64)) * self.span + (
            pl.col(TRIAL).cast(pl.Int64) - self.low
        )

    def candidate_code(self) -> pl.Expr:
        """``candidate`` (String) → its index among the sorted candidates (UInt32; null when not planned)."""
        index = {c: i for i, c in enumerate(self.candidates)}
        return pl.col(CANDIDATE).replace_strict(index, default=None, return_dtype=pl.UInt32)

    def parts(self) -> list[pl.Expr]:
        """``_cand``, ``_case`` (UInt32) and ``trial`` (Int64) back from ``_uid``."""
        uid = pl.col(UID)
        return [
            (uid // self.block).cast(pl.UInt32).alias(CAND_CODE),
            ((uid // self.span) % self.n_cases).cast(pl.UInt32).alias(CASE_CODE),
            (uid % self.span + self.low).alias(TRIAL),
        ]


def case_column(column: pl.Series, code: str = CASE_CODE) -> pl.Expr:
    """A column of the cases gathered at each row's case code (``code``), with the column's name and type.

    An all-null column is a typed null literal instead: in one query, polars
    2.1's in-memory engine gives gathers from two all-null literal Series of
    different types one and the same type (a cast after the gather does not
    help), so one column would get the other's type.
    """
    if column.null_count() == column.len():
        return pl.lit(None, column.dtype).alias(column.name)
    return pl.lit(column).gather(pl.col(code)).alias(column.name)


def id_codes(ids: pl.Series) -> pl.DataFrame:
    """The lookup table of unique case ids: ``case_id`` (String) and ``_case`` (UInt32, the id's row).

    Examples
    --------
    >>> id_codes(pl.Series(["q1", "q2"])).rows()
    [(0, 'q1'), (1, 'q2')]
    """
    return ids.cast(pl.String).alias(CASE_ID).to_frame().with_row_index(CASE_CODE)


def case_codes(table: pl.DataFrame, ids: pl.Series) -> pl.Series:
    """``_case`` (UInt32) of each id, in order: its row in ``table`` (see :func:`id_codes`); null when absent or null.

    A left join on the strings, so ids are matched exactly.

    Examples
    --------
    >>> case_codes(id_codes(pl.Series(["q1", "q2", "q3"])), pl.Series(["q3", "zz", None, "q1"])).to_list()
    [2, None, None, 0]
    """
    probe = ids.cast(pl.String).alias(CASE_ID).to_frame().lazy()
    return probe.join(table.lazy(), on=CASE_ID, how="left", maintain_order="left").collect().get_column(CASE_CODE)
