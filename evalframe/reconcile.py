"""Reconcile the canonical ledger with the plan, on identity, by joins and anti-joins (SPEC §3).

Rows are joined on (candidate, case_id, trial[, attempt]) and never by
position: matching row counts prove nothing. The rules are written once, in
narwhals (:func:`identity`), and every engine runs them: Spark on its text
keys (:mod:`evalframe.engines.driver`), polars on the integer codes of
:func:`encode_keys` (:func:`reconcile`, which gathers the problems).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.attempts import unit_attempt_key
from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    DETAIL,
    KIND,
    REFUSING,
    RUN_ID,
    SOURCE,
    TRIAL,
    UNIT_KEY,
    MissingPolicy,
)
from evalframe.natural import KEPT, natural_sorted
from evalframe.plan import CAND_CODE, CASE_CODE, UID, Plan, case_column
from evalframe.problems import Problems, problems_frame
from evalframe.validate.rows import _UNIT, ROW_KEYS, Lazy, _Check, _lit, _text, checked, problems


@dataclass(frozen=True)
class Keys:
    """The columns the identity checks compare a row's candidate, case and unit on.

    By default the text itself: a row's candidate is tested against the plan's candidates, its case by a
    join with the plan's cases, and a unit is (``candidate``, ``case_id``, ``trial``). A runner that has
    coded its rows against the plan already (the polars runner, :meth:`evalframe.plan.Plan.encode`) names
    its code columns instead, so that every test is on integers: ``candidate`` and ``case`` are non-null
    exactly when the row's candidate / case is planned, and ``unit`` is the unit's code in the ledger and
    in the planned units. Either way the rules, their kinds and their details are the same.

    Examples
    --------
    >>> Keys().unit, Keys(candidate="_cand", case="_case", unit=("_uid",)).unit
    (('candidate', 'case_id', 'trial'), ('_uid',))
    """

    #: A column non-null exactly when the row's candidate is planned (None: tested against the candidates).
    candidate: str | None = None
    #: A column non-null exactly when the row's case is planned (None: joined with the plan's cases).
    case: str | None = None
    #: The columns that name a unit, in the ledger and in the planned units.
    unit: tuple[str, ...] = tuple(_UNIT)
    #: A column naming a planned row's (unit, attempt) as one value (None: ``unit`` and ``attempt``).
    attempt: str | None = None


#: The polars runner's keys: the integer codes of :func:`encode_keys`.
CODED: Final = Keys(candidate=CAND_CODE, case=CASE_CODE, unit=(UID,))


@dataclass(frozen=True)
class Identity:
    """The ledger with its planned-unit marker, and the identity problems (see :func:`identity`)."""

    ledger: Lazy
    problems: list[Lazy]
    #: The planned units with no ledger row, as their :attr:`Keys.unit` columns.
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
    checks: Sequence[_Check] = (),
    keys: Keys = Keys(),  # noqa: B008 (frozen, so one shared default is safe)
) -> Identity:
    """The identity checks of :func:`evalframe.reconcile.reconcile`, by joins and anti-joins.

    ``cases`` holds the plan's ``case_id`` and its ``dataset_version`` / ``case_hash`` when it has them;
    ``planned`` the planned units (``candidate``, ``case_id``, ``trial``); ``checks`` further checks of the
    ledger's rows (:attr:`evalframe.engines.core.Canonical.checks`), found in the same pass as the unknown
    candidates, cases, trials, units and runs. Adds ``_planned`` (Boolean) to the ledger: the row is one of a
    planned unit (and keeps the ``_``-prefixed columns that found it: the problems are read from the ledger
    handed back, which an engine may cache). ``keys`` names the columns compared (:class:`Keys`); with code
    columns, ``planned`` holds the unit's code columns and ``missing`` is of those.
    """
    units = planned if units_table else None
    marked, found = _plan_membership(
        ledger, cases, candidates, trial_range, units, run_id=run_id, checks=checks, keys=keys
    )
    found.append(_duplicates(marked, [keys.attempt] if keys.attempt else [*keys.unit, ATTEMPT]))
    found.extend(_plan_value_problems(marked, cases))
    unit = list(keys.unit)
    present = marked.filter(nw.col("_planned")).select(*unit)
    # Missing units are counted per candidate by the engine (see evalframe.reconcile.missing_problems), not listed.
    gone = planned.select(*unit).join(present, on=unit, how="anti")
    return Identity(marked, found, gone)


def _duplicates(marked: Lazy, planned_key: list[str]) -> Lazy:
    """Every row whose (candidate, case_id, trial, attempt) occurs more than once.

    A planned row's key is compared on ``planned_key`` (its unit columns and attempt, or one column naming
    both), any other row's on the text (a key is planned or not as a whole, so the two kinds of row never
    share a key).
    """
    key = [CANDIDATE, CASE_ID, TRIAL, ATTEMPT]
    # A key with a part that has no value (a token that did not parse) is not known, so repeats no other.
    whole = marked.filter(nw.all_horizontal(*(~nw.col(k).is_null() for k in key), ignore_nulls=False))
    if planned_key == key:
        counted = _repeated(whole, key)
    else:
        counted = nw.concat(
            [
                _repeated(whole.filter(nw.col("_planned")), planned_key),
                _repeated(whole.filter(~nw.col("_planned")), key),
            ]
        )
    return problems(
        counted,
        "duplicate_key",
        nw.concat_str([_lit("key appears "), nw.col("_times").cast(nw.String()), _lit(" times")]),
        keys=ROW_KEYS,
    )


def _repeated(rows: Lazy, key: list[str]) -> Lazy:
    """The rows whose ``key`` occurs more than once, with ``_times``: how often (counted, then joined back)."""
    times = rows.group_by(*key).agg(nw.len().alias("_times")).filter(nw.col("_times") > 1)
    return rows.join(times, on=key, how="inner")


def _plan_membership(
    ledger: Lazy,
    cases: Lazy,
    candidates: Sequence[str],
    trial_range: tuple[int, int],
    units: Lazy | None,
    *,
    run_id: str | None,
    checks: Sequence[_Check],
    keys: Keys,
) -> tuple[Lazy, list[Lazy]]:
    """The ledger with ``_planned``, and its rows of an unknown candidate, case, trial, unit or run, in one pass.

    The rows of another run than ``run_id`` are found when it is given
    (:func:`evalframe.engines.core.checked` makes the problems); ``units`` holds the planned units when the
    plan is a units table, else None.
    """
    low, high = trial_range
    if keys.case is None:
        marked = ledger.join(
            cases.select(CASE_ID, _lit(True, nw.Boolean()).alias("_case_ok")), on=CASE_ID, how="left"
        ).with_columns(nw.col("_case_ok").fill_null(False))
    else:
        marked = ledger.with_columns((~nw.col(keys.case).is_null()).alias("_case_ok"))
    known = nw.col(CANDIDATE).is_in(list(candidates)) if keys.candidate is None else ~nw.col(keys.candidate).is_null()
    marked = marked.with_columns(known.fill_null(False).alias("_cand_ok"))
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
        unit = list(keys.unit)
        marked = marked.join(
            units.select(*unit, _lit(True, nw.Boolean()).alias("_listed")), on=unit, how="left"
        ).with_columns(nw.col("_listed").fill_null(False))
        not_listed = _lit("(candidate, case_id, trial) is not a planned unit")
        checks.append((coded & ~nw.col("_listed"), "unknown_unit", not_listed))
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


def encode_keys(ledger: pl.DataFrame | pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    """Give every ledger row integer codes for its candidate, case and unit, against the plan.

    Identities are compared exactly (case ids by a join on the strings,
    :func:`evalframe.plan.coding.case_codes`); all later steps join, sort and group on integers. Adds ``_cand`` and
    ``_case`` (UInt32, null when the candidate / case is not planned) and
    ``_uid`` (Int64, null unless candidate and case are planned and the trial
    is within the plan's trial range; see :class:`~evalframe.plan.UnitCoding`).
    Codes follow sorted order, so sorting by ``_uid`` sorts by
    (candidate, case_id, trial). Rows keep their order.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["B", "A"])
    >>> rows = pl.LazyFrame({"candidate": ["B", "A", "C"], "case_id": ["q2", "q1", "q1"], "trial": [1, 1, 1]})
    >>> encode_keys(rows, plan).select("candidate", "case_id", "_uid").collect().rows()
    [('B', 'q2', 3), ('A', 'q1', 0), ('C', 'q1', None)]
    """
    return plan.encode(ledger)


def planned_units_coded(plan: Plan) -> pl.LazyFrame:
    """The plan's units with their plan columns and integer codes, sorted by ``_uid``.

    Columns: ``candidate``, ``case_id``, ``trial``, every plan column,
    ``_cand``, ``_case`` (UInt32) and ``_uid`` (Int64).
    """
    units = plan.decode(plan.planned_codes())
    plan_columns = [case_column(plan.cases.get_column(name)) for name in plan.cases.columns if name != CASE_ID]
    return units.select(*UNIT_KEY, *plan_columns, CAND_CODE, CASE_CODE, UID)


#: :func:`reconcile` sorts a ledger of at most this many rows by unit and attempt (see :func:`_in_unit_order`).
SORT_EARLY_ROWS: Final = 1_000_000


def _in_unit_order(coded: pl.DataFrame) -> pl.DataFrame:
    """The rows sorted by ``_uid`` and then ``attempt`` when every row has a unit code (else as given).

    The duplicate-key check then sorts an ordered key, and :func:`~evalframe.attempts.select_attempts` finds
    the rows in order and does not sort them again (two sorts become one). A batch with a row that is not
    planned is refused before any attempt is selected: left unsorted. So is one of more than
    :data:`SORT_EARLY_ROWS` rows: its sorted copy holds the ledger's text a second time (statuses, run ids
    and file names, which select_attempts sorts as Enum and Categorical codes), which costs more memory
    than the one sort saves (figures in ``benchmarks/RESULTS.md``).
    """
    if coded.height < 2 or coded.height > SORT_EARLY_ROWS:
        return coded
    if coded.get_column(UID).null_count() or coded.get_column(ATTEMPT).null_count():
        return coded
    key = unit_attempt_key(coded, UID)
    # The in-memory engine for this one sort: the streaming engine (polars' default) sorts with a larger peak.
    return coded if key is None else coded.lazy().sort(key).collect(engine="in-memory")


#: How many missing case ids a candidate's ``missing_unit`` problem names (the units table marks every one).
MISSING_IDS_SHOWN: Final = 20


def missing_cases(gone: Lazy, order: Lazy, by: str, case: str) -> pl.DataFrame:
    """Per group of missing units: how many units, in how many cases, and the naturally first case ids.

    One implementation for every engine (SPEC §3 "Problems at scale"): the missing units are counted per
    case, each case is ranked within its group by the plan's shape order, :data:`~evalframe.natural.KEPT`
    times :data:`MISSING_IDS_SHOWN` cases per group come back, and those are put in natural order
    (:mod:`evalframe.natural`).

    Parameters
    ----------
    gone
        The missing units, one row each, with the group column ``by`` and the case key ``case``.
    order
        One row per planned case (:func:`case_order_table`): ``case``, ``_order`` (Int64, the case's place
        in shape order, :attr:`~evalframe.plan.Plan.case_order`) and ``case_id`` (String).
    by
        The group column (``candidate`` or ``_cand``).
    case
        The case key of ``gone`` and ``order`` (``_case``, the plan's case code, or ``case_id``).

    Returns
    -------
    polars.DataFrame
        ``by``, ``missing_units`` (Int64), ``missing_cases`` (UInt32, distinct cases) and ``missing_case_ids``
        (List[String], the first :data:`MISSING_IDS_SHOWN` in natural order), one row per group with a
        missing unit, sorted by ``by``.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": [f"q{n}" for n in range(1, 30)]}), candidates=["A"])
    >>> gone = pl.LazyFrame({"candidate": ["A"] * 3, "_case": [0, 1, 1]}, schema_overrides={"_case": pl.UInt32})
    >>> order = nw.from_native(case_order_table(plan, "_case").lazy())  # codes follow sorted ids
    >>> missing_cases(nw.from_native(gone), order, "candidate", "_case").rows()
    [('A', 3, 2, ['q1', 'q10'])]
    """
    ranked = (
        gone.group_by(by, case)
        .agg(nw.len().alias("_units"))
        .join(order, on=case, how="left")
        .with_columns(
            nw.col("_order").cum_count().over(by, order_by="_order").alias("_rank"),
            nw.len().over(by).alias("missing_cases"),
            nw.col("_units").sum().over(by).alias("missing_units"),
        )
    )
    kept = ranked.filter(nw.col("_rank") <= KEPT * MISSING_IDS_SHOWN).select(
        by, "missing_units", "missing_cases", CASE_ID
    )
    grouped: pl.DataFrame = (
        kept.collect("polars")
        .to_native()
        .group_by(by)
        .agg(pl.first("missing_units").cast(pl.Int64), pl.first("missing_cases").cast(pl.UInt32), pl.col(CASE_ID))
        .sort(by)
    )
    first = [natural_sorted(ids)[:MISSING_IDS_SHOWN] for ids in grouped.get_column(CASE_ID).to_list()]
    return grouped.with_columns(pl.Series("missing_case_ids", first, pl.List(pl.String))).drop(CASE_ID)


def with_missing_cases(summary: pl.DataFrame, missing: pl.DataFrame) -> pl.DataFrame:
    """``summary`` with each candidate's ``missing_cases`` (UInt32) and ``missing_case_ids`` (List[String]).

    ``missing`` is :func:`missing_cases` by ``candidate``; a candidate without a missing unit gets 0 and [].
    """
    found = missing.select(CANDIDATE, "missing_cases", "missing_case_ids")
    return summary.join(found, on=CANDIDATE, how="left").with_columns(
        pl.col("missing_cases").fill_null(0),
        pl.col("missing_case_ids").fill_null(pl.lit([], pl.List(pl.String))),
    )


def case_order_table(plan: Plan, case: str) -> pl.DataFrame:
    """The plan's cases, in code order, for :func:`missing_cases`.

    Columns: ``case`` (the ``_case`` code, UInt32; or ``case_id`` alone), ``_order`` (Int64) and ``case_id``
    (String).

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["q2", "q10", "q1"]}), candidates=["A"])
    >>> case_order_table(plan, "_case").rows()
    [(0, 0, 'q1'), (1, 2, 'q10'), (2, 1, 'q2')]
    """
    ids = plan.cases.get_column(CASE_ID).cast(pl.String)
    table = pl.DataFrame([ids, plan.case_order.cast(pl.Int64).alias("_order")])
    if case == CASE_ID:
        return table
    return table.with_row_index(case).with_columns(pl.col(case).cast(pl.UInt32)).select(case, "_order", CASE_ID)


def missing_units(gone: pl.LazyFrame, plan: Plan, *, missing: MissingPolicy = "report") -> pl.LazyFrame:
    """One ``missing_unit`` problem per candidate with planned units that have no ledger row at all.

    Missing units are counted, not listed (SPEC §3 "Problems at scale"): a
    1M-case plan of 100 candidates against a header-only ledger has 100M
    missing units, which the summary counts (``missing``) and the units table
    marks (outcome ``missing``). Each candidate's row gives in ``detail`` the
    number of missing units and cases and the first :data:`MISSING_IDS_SHOWN`
    case ids (in natural order, :func:`missing_cases`); ``case_id``, ``trial`` and ``line`` are null. It is
    refusing only when ``missing="refuse"``; otherwise it is reported for the
    record, so that a batch refused for another reason still says what is
    missing (the funnel counts missing units as ``missing``, never as
    failures). ``gone`` holds the missing units' codes (``_uid``, Int64), as
    :func:`identity` finds them with :data:`CODED` keys.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3"]}), candidates=["A", "B"], trials=2)
    >>> gone = pl.LazyFrame({"_uid": [1, 3, 4, 5, 6, 8, 9, 10, 11]})  # A: 0-5, B: 6-11 (q1 t1, q1 t2, q2 t1, ...)
    >>> for row in missing_units(gone, plan).select("candidate", "detail").collect().rows():
    ...     print(row)
    ('A', '4 planned units have no row, in 3 cases: q1, q2, q3')
    ('B', '5 planned units have no row, in 3 cases: q1, q2, q3')
    """
    coding = plan.coding
    counted = missing_cases(
        nw.from_native(gone.select(UID).with_columns(coding.parts())),
        nw.from_native(case_order_table(plan, CASE_CODE).lazy()),
        CAND_CODE,
        CASE_CODE,
    )
    named = counted.with_columns(pl.Series(CANDIDATE, [coding.candidates[c] for c in counted[CAND_CODE]], pl.String))
    return missing_problems(named, plan.source, refusing=missing == "refuse").lazy()


def missing_problems(counted: pl.DataFrame, source: str, *, refusing: bool) -> pl.DataFrame:
    """The ``missing_unit`` problems of :func:`missing_units`, one per candidate, from what was counted.

    ``counted`` is :func:`missing_cases` by ``candidate`` (``candidate``, ``missing_units``, ``missing_cases``,
    ``missing_case_ids``); any engine that counts missing units (polars here, Spark in
    :mod:`evalframe.engines.spark`) words them this one way.

    Examples
    --------
    >>> counted = pl.DataFrame({"candidate": ["A"], "missing_units": [3], "missing_cases": [2],
    ...                         "missing_case_ids": [["q1", "q2"]]})
    >>> missing_problems(counted, "plan.csv", refusing=False).select("candidate", "detail").row(0)
    ('A', '3 planned units have no row, in 2 cases: q1, q2')
    """
    rows = []
    for candidate, n_units, n_cases, shown_ids in counted.select(
        CANDIDATE, "missing_units", "missing_cases", "missing_case_ids"
    ).iter_rows():
        shown = ", ".join(shown_ids) + (", …" if n_cases > len(shown_ids) else "")
        units_have = "unit has" if n_units == 1 else "units have"
        detail = f"{n_units} planned {units_have} no row, in {n_cases} case{'' if n_cases == 1 else 's'}: {shown}"
        rows.append({KIND: "missing_unit", CANDIDATE: candidate, SOURCE: source, DETAIL: detail})
    return problems_frame(rows).with_columns(pl.lit(refusing).alias(REFUSING))


@dataclass(frozen=True)
class Reconciled:
    """The outcome of :func:`reconcile`.

    Attributes
    ----------
    problems
        The problems found, bounded in memory (see
        :class:`~evalframe.problems.Problems`: counts per kind, the first
        rows of each kind, the rest in temporary files).
    ledger
        The canonical ledger with the integer codes of :func:`encode_keys`;
        sorted by ``_uid`` and ``attempt`` when every row is a planned unit
        and there are at most :data:`SORT_EARLY_ROWS` rows, else in the
        order given.
    planned
        The planned units as codes: ``_uid`` (Int64, sorted), ``_cand``,
        ``_case`` (UInt32) and ``trial`` (Int64); no text (the audit counts
        units on codes and gives names back only to the tables it returns).
    """

    problems: Problems
    ledger: pl.DataFrame
    planned: pl.DataFrame


def reconcile(ledger: pl.DataFrame, plan: Plan, *, missing: MissingPolicy = "report") -> Reconciled:
    """Run every identity check of the ledger against the plan.

    Parameters
    ----------
    ledger
        Canonical ledger (see :data:`evalframe.validate.CANONICAL_SCHEMA`).
    plan
        The frozen plan.
    missing
        ``report`` (default): missing units are listed, not refusing.
        ``refuse``: a missing unit refuses the batch. Either way missing
        units are one problem per candidate (see :func:`missing_units`).

    Returns
    -------
    Reconciled
        Problems with kinds ``unknown_candidate``, ``unknown_case``,
        ``trial_out_of_range``, ``unknown_unit``, ``duplicate_key``,
        ``run_mismatch``, ``version_mismatch``, ``hash_mismatch`` and
        ``missing_unit``; the coded ledger and planned units.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> rows = pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "trial": [1], "attempt": [1],
    ...                      "run_id": [None], "line": [2], "source": ["r.csv"]},
    ...                     schema_overrides={"run_id": pl.String})
    >>> reconcile(rows, plan).problems.shown.select("kind", "case_id", "refusing").to_dicts()
    [{'kind': 'missing_unit', 'case_id': None, 'refusing': False}]
    """
    coded = _in_unit_order(encode_keys(ledger, plan).collect())
    planned = plan.planned_codes().with_columns(plan.coding.parts()).collect()
    cases = plan.cases.select(CASE_ID, *(c for c in (DATASET_VERSION, CASE_HASH) if c in plan.cases.columns))
    # A planned row's (unit, attempt) as one integer when it fits: a group-by on one column, not two.
    pair = unit_attempt_key(coded, UID)
    keys = CODED if pair is None else replace(CODED, attempt="_pair")
    ident = identity(
        nw.from_native(coded.lazy() if pair is None else coded.lazy().with_columns(pair.alias("_pair"))),
        nw.from_native(cases.lazy()),
        nw.from_native(planned.lazy()),
        candidates=plan.candidates,
        trial_range=plan.trial_range,
        units_table=plan.unit_codes is not None,
        run_id=plan.run_id,
        keys=keys,
    )
    found: list[pl.LazyFrame] = [p.to_native() for p in ident.problems]
    problems = Problems.gather([*found, missing_units(ident.missing.to_native(), plan, missing=missing)])
    return Reconciled(problems, coded, planned)
