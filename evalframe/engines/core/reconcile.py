"""The identity checks of :func:`evalframe.reconcile.reconcile`, by joins and anti-joins of the ledger and the plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import narwhals.stable.v2 as nw

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    RUN_ID,
    TRIAL,
)
from evalframe.validate.rows import _UNIT, ROW_KEYS, Lazy, _Check, _lit, _text, checked, problems


@dataclass(frozen=True)
class Identity:
    """The ledger with its planned-unit marker, and the identity problems (see :func:`identity`)."""

    ledger: Lazy
    problems: list[Lazy]
    #: The planned units (``candidate``, ``case_id``, ``trial``) with no ledger row.
    missing: Lazy


def identity(
    ledger: Lazy,
    cases: Lazy,
    planned: Lazy,
    *,
    candidates: Sequence[str],
    trial_range: tuple[int, int],
    units_table: bool,
    run_id: str | None,
    plan_source: str,
    missing_refuses: bool,
    checks: Sequence[_Check] = (),
) -> Identity:
    """The identity checks of :func:`evalframe.reconcile.reconcile`, by joins and anti-joins.

    ``cases`` holds the plan's ``case_id`` and its ``dataset_version`` / ``case_hash`` when it has them;
    ``planned`` the planned units (``candidate``, ``case_id``, ``trial``); ``checks`` further checks of the
    ledger's rows (:attr:`evalframe.engines.core.Canonical.checks`), found in the same pass as the unknown
    candidates, cases, trials, units and runs. Adds ``_planned`` (Boolean) to the ledger: the row is one of a
    planned unit (and keeps the ``_``-prefixed columns that found it: the problems are read from the ledger
    handed back, which an engine may cache).
    """
    marked, found = _plan_membership(
        ledger, cases, candidates, trial_range, planned if units_table else None, run_id=run_id, checks=checks
    )
    key = [CANDIDATE, CASE_ID, TRIAL, ATTEMPT]
    # A key with a part that has no value (a token that did not parse) is not known, so repeats no other.
    whole = marked.filter(nw.all_horizontal(*(~nw.col(k).is_null() for k in key), ignore_nulls=False))
    counted = whole.with_columns(nw.len().over(*key).alias("_times"))
    found.append(
        problems(
            counted.filter(nw.col("_times") > 1),
            "duplicate_key",
            nw.concat_str([_lit("key appears "), nw.col("_times").cast(nw.String()), _lit(" times")]),
            keys=ROW_KEYS,
        )
    )
    found.extend(_plan_value_problems(marked, cases))
    present = marked.filter(nw.col("_planned")).select(*_UNIT).unique()
    # Missing units are counted per candidate by the engine (see evalframe.reconcile.missing_problems), not listed.
    gone = planned.select(*_UNIT).join(present, on=_UNIT, how="anti")
    return Identity(marked, found, gone)


def _plan_membership(
    ledger: Lazy,
    cases: Lazy,
    candidates: Sequence[str],
    trial_range: tuple[int, int],
    units: Lazy | None,
    *,
    run_id: str | None,
    checks: Sequence[_Check],
) -> tuple[Lazy, list[Lazy]]:
    """The ledger with ``_planned``, and its rows of an unknown candidate, case, trial, unit or run, in one pass.

    The rows of another run than ``run_id`` are found when it is given
    (:func:`evalframe.engines.core.checked` makes the problems); ``units`` holds the planned units when the
    plan is a units table, else None.
    """
    low, high = trial_range
    marked = ledger.join(
        cases.select(CASE_ID, _lit(True, nw.Boolean()).alias("_case_ok")), on=CASE_ID, how="left"
    ).with_columns(
        nw.col("_case_ok").fill_null(False),
        nw.col(CANDIDATE).is_in(list(candidates)).fill_null(False).alias("_cand_ok"),
    )
    in_range = (nw.col(TRIAL) >= low) & (nw.col(TRIAL) <= high)
    cand, case = nw.col("_cand_ok"), nw.col("_case_ok")
    checks = [
        *checks,
        (~cand, "unknown_candidate", nw.concat_str([_lit("candidate "), _text(CANDIDATE), _lit(" is not planned")])),
        (cand & ~case, "unknown_case", nw.concat_str([_lit("case "), _text(CASE_ID), _lit(" is not in the plan")])),
        (
            cand & case & ~nw.col(TRIAL).is_null() & ~in_range.fill_null(False),
            "trial_out_of_range",
            nw.concat_str([_lit("trial "), _text(TRIAL), _lit(f" is outside {low}..{high}")]),
        ),
    ]
    if run_id is not None:
        wrong = (nw.col(RUN_ID).is_null() | (nw.col(RUN_ID) != run_id)).fill_null(True)
        detail = nw.concat_str([_lit("run_id "), _text(RUN_ID), _lit(f" is not the required run {run_id}")])
        checks.append((wrong, "run_mismatch", detail))
    coded = cand & case & in_range.fill_null(False)
    if units is not None:
        marked = marked.join(
            units.select(*_UNIT, _lit(True, nw.Boolean()).alias("_listed")), on=_UNIT, how="left"
        ).with_columns(nw.col("_listed").fill_null(False))
        unit = _lit("(candidate, case_id, trial) is not a planned unit")
        checks.append((coded & ~nw.col("_listed"), "unknown_unit", unit))
        coded = coded & nw.col("_listed")
    marked = marked.with_columns(coded.alias("_planned"))
    return marked, checked(marked, checks, keys=ROW_KEYS)


def _plan_value_problems(marked: Lazy, cases: Lazy) -> list[Lazy]:
    """Rows whose ``dataset_version`` or ``case_hash`` differs from the plan's for their case."""
    names = cases.collect_schema().names()
    found = []
    for col, kind in ((DATASET_VERSION, "version_mismatch"), (CASE_HASH, "hash_mismatch")):
        if col not in names:
            continue
        joined = marked.join(
            cases.select(CASE_ID, nw.col(col).cast(nw.String()).alias("_plan_value")), on=CASE_ID, how="inner"
        )
        differ = ~nw.col(col).is_null() & ~nw.col("_plan_value").is_null() & (nw.col(col) != nw.col("_plan_value"))
        found.append(
            problems(
                joined.filter(differ),
                kind,
                nw.concat_str([_lit(f"{col} "), nw.col(col), _lit(" differs from the plan's "), nw.col("_plan_value")]),
                keys=ROW_KEYS,
            )
        )
    return found
