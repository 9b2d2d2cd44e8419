"""The retry policies of :mod:`evalframe.attempts` over windows per unit, and the outcome counts the driver collects."""

from __future__ import annotations

from collections.abc import Sequence

import narwhals.stable.v2 as nw

from evalframe.attempts import Selection, marked_attempts, selection
from evalframe.columns import (
    CANDIDATE,
)
from evalframe.validate.rows import _UNIT, Lazy, Options


def select_attempts(ledger: Lazy, options: Options, unit: Sequence[str] = _UNIT) -> Selection:
    """The retry policies of SPEC §4 over windows per unit: :func:`evalframe.attempts.marked_attempts`.

    The attempts leave out the ledger's helper columns (named ``_...``: the identity step's marks).
    """
    chosen = selection(marked_attempts(ledger, options, unit), options)
    helpers = [c for c in chosen.attempts.collect_schema().names() if c.startswith("_")]
    return Selection(chosen.attempts.drop(*helpers), chosen.flags)


def outcome_counts(units: Lazy) -> Lazy:
    """Units per candidate and outcome (the input of :func:`evalframe.funnel.funnel_from_outcome_counts`)."""
    return units.group_by(CANDIDATE, "outcome").agg(nw.len().alias("n"))
