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


#: Seed of the 64-bit case-id hashes :class:`CaseIndex` joins on (any fixed value; hashes never leave a process).
_HASH_SEED: Final = 20_251_201
_HASH: Final = "_hash"
_SLOT: Final = "_slot"
#: :class:`CaseIndex`: a slot that several ids share, and the most slots (2**24 UInt32: 64 MiB).
_SHARED: Final = 2**32 - 1
_MAX_SLOT_BITS: Final = 24


class CaseIndex:
    """Exact lookup of case ids in a table of unique ids: each id's row number (``_case``, UInt32).

    Each id is looked up by its 64-bit hash (polars' ``hash`` with a fixed
    seed): the hash's top bits address a table of slots, at least 16 per id
    of the table (2**24 at most), that holds the row of the one id whose hash
    falls there. Ids whose slot another id shares are found by a join on the
    whole hash, over those ids only. Every id found is then compared with the
    id of the row found, so two ids that share a hash can never be taken for
    one another: the result is exactly that of a join on the strings. When
    two ids of the table share a whole hash, the lookup joins on the strings.

    Measured on a 0.5M-row candidate of the 10M benchmark (245k cases, 5.6%
    of them in shared slots): 40 ms (56 ms of CPU) for a join on all the
    hashes, 16 ms (27 ms of CPU) with the slot table; at 50M rows, 2.5M ids
    against 1.2M cases, the join on the strings took 190 ms, on the hashes
    105 ms.

    Parameters
    ----------
    ids
        The table's ids (String), each once; ``_case`` is the position.
    slot_bits
        The table has ``2**slot_bits`` slots (default: as above). Tests use
        few slots so that ids share them.

    Examples
    --------
    >>> CaseIndex(pl.Series(["q1", "q2", "q3"])).codes(pl.Series(["q3", "zz", None, "q1"])).to_list()
    [2, None, None, 0]
    """

    def __init__(self, ids: pl.Series, *, slot_bits: int | None = None) -> None:
        self.ids = ids.cast(pl.String).alias(CASE_ID)
        n = self.ids.len()
        hashes = self.ids.hash(_HASH_SEED).alias(_HASH)
        #: The row in each slot (null: none; _SHARED: several, see ``shared``); None: join on the strings.
        self.slots: pl.Series | None = None
        #: ``_hash`` and ``_case`` of the ids in shared slots.
        self.shared = pl.DataFrame(schema={_HASH: pl.UInt64, CASE_CODE: pl.UInt32})
        if not hashes.is_unique().all():
            return
        bits = slot_bits if slot_bits is not None else min(_MAX_SLOT_BITS, max(1, (16 * n - 1).bit_length()))
        self._per_slot = 2 ** (64 - bits)  # hashes per slot: a hash's slot is hash // _per_slot
        rows = pl.DataFrame([hashes, pl.Series(CASE_CODE, range(n), dtype=pl.UInt32)]).with_columns(
            (pl.col(_HASH) // self._per_slot).alias(_SLOT)
        )
        alone = pl.len().over(_SLOT) == 1
        single, shared = rows.filter(alone), rows.filter(~alone)
        slots = pl.select(pl.repeat(None, 2**bits, dtype=pl.UInt32)).to_series().alias(CASE_CODE)
        slots = slots.scatter(single.get_column(_SLOT), single.get_column(CASE_CODE))
        if shared.height:
            slots = slots.scatter(shared.get_column(_SLOT).unique(), _SHARED)
        self.slots, self.shared = slots, shared.select(_HASH, CASE_CODE)

    def codes(self, case_id: pl.Series) -> pl.Series:
        """``_case`` (UInt32) of each id, in order; null when the id is not in the table (or is null)."""
        case_id = case_id.cast(pl.String).alias(CASE_ID)
        if self.slots is None:
            by_id = self.ids.to_frame().with_row_index(CASE_CODE)
            joined = case_id.to_frame().join(by_id, on=CASE_ID, how="left", maintain_order="left")
            return joined.get_column(CASE_CODE)
        # Lazy queries: polars runs them without the GIL (eager Series methods hold it).
        hashed = (
            case_id.to_frame()
            .lazy()
            .select(pl.col(CASE_ID).hash(_HASH_SEED).alias(_HASH))
            .with_columns(pl.lit(self.slots).gather(pl.col(_HASH) // self._per_slot))
            .collect()
        )
        found = hashed.get_column(CASE_CODE)
        rows = hashed.lazy().select(pl.arg_where(pl.col(CASE_CODE) == _SHARED)).collect().to_series()
        if rows.len():
            in_shared = hashed.lazy().select(pl.col(_HASH).gather(rows))
            resolved = in_shared.join(self.shared.lazy(), on=_HASH, how="left", maintain_order="left").collect()
            found = found.scatter(rows, resolved.get_column(CASE_CODE))
        same = pl.col(CASE_ID) == pl.lit(self.ids).gather(pl.col(CASE_CODE))
        return pl.LazyFrame([case_id, found]).select(pl.when(same).then(pl.col(CASE_CODE))).collect().to_series()
