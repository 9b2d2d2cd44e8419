"""Reconcile the canonical ledger with the plan, on identity, by anti-joins.

Rows are joined on (candidate, case_id, trial[, attempt]) and never by
position: matching row counts prove nothing. Every function here is pure and
returns a (partial) problems frame; :func:`reconcile` gathers them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import polars as pl

from evalframe.attempts import unit_attempt_key
from evalframe.columns import (
    ATTEMPT,
    ATTEMPT_KEY,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    DETAIL,
    KIND,
    LINE,
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

_ROW_COLS = (CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, SOURCE)


def _flag(rows: pl.LazyFrame, kind: str, detail: pl.Expr) -> pl.LazyFrame:
    return rows.select(pl.lit(kind).alias(KIND), *_ROW_COLS, detail.alias(DETAIL))


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


def _listed_units(plan: Plan) -> pl.Series | None:
    """A units-table plan's units as a Boolean Series indexed by unit code (True: planned), when compact.

    Every non-null ``_uid`` lies below the number of possible codes (candidates ×
    cases × trial span), so membership is one gather instead of an anti-join
    on the codes. None when that number
    is far above the planned units (a sparse plan) or the plan is a cross product.
    """
    if plan.unit_codes is None:
        return None
    size = plan.coding.block * len(plan.candidates)
    if size > 16 * plan.n_units + 2**20 or size >= 2**32:
        return None
    return pl.repeat(False, size, dtype=pl.Boolean, eager=True).scatter(plan.unit_codes, True)


def _shown(name: str) -> pl.Expr:
    """A key as a detail shows it: its text, ``null`` when it has none (as the Spark engine words it)."""
    return pl.col(name).cast(pl.String).fill_null("null")


def unknown_rows(coded: pl.LazyFrame, plan: Plan, planned: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Rows whose candidate, case or trial is not in the plan.

    ``coded`` is the ledger after :func:`encode_keys`. Each row gets the most
    specific kind that applies: ``unknown_candidate``, else
    ``unknown_case``, else ``trial_out_of_range`` (trial outside the plan's
    trial range), else ``unknown_unit`` (a units-table plan that does not list
    the unit; ``planned`` holds the plan's unit codes, ``_uid``, when the
    caller has them collected already).

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["quote"]}), candidates=["A"])
    >>> rows = pl.LazyFrame({"candidate": ["A", "C"], "case_id": ["invented", "quote"], "trial": [1, 1],
    ...                      "attempt": [1, 1], "line": [2, 3], "source": ["r.csv", "r.csv"]})
    >>> unknown_rows(encode_keys(rows, plan), plan).select("kind", "case_id", "line").collect().rows()
    [('unknown_candidate', 'quote', 3), ('unknown_case', 'invented', 2)]
    """
    low, high = plan.trial_range
    cand_ok, case_ok = pl.col(CAND_CODE).is_not_null(), pl.col(CASE_CODE).is_not_null()
    parts = [
        _flag(coded.filter(~cand_ok), "unknown_candidate", pl.format("candidate {} is not planned", _shown(CANDIDATE))),
        _flag(
            coded.filter(cand_ok & ~case_ok), "unknown_case", pl.format("case {} is not in the plan", _shown(CASE_ID))
        ),
        _flag(
            coded.filter(cand_ok & case_ok & pl.col(UID).is_null() & pl.col(TRIAL).is_not_null()),
            "trial_out_of_range",
            pl.format("trial {} is outside {}..{}", pl.col(TRIAL), pl.lit(low), pl.lit(high)),
        ),
    ]
    if plan.unit_codes is not None:
        listed, in_range = _listed_units(plan), coded.filter(pl.col(UID).is_not_null())
        if listed is not None:
            not_unit = in_range.filter(~pl.lit(listed).gather(pl.col(UID)))
        else:
            units = planned if planned is not None else plan.planned_codes()
            not_unit = in_range.join(units.select(UID), on=UID, how="anti", maintain_order="left")
        parts.append(_flag(not_unit, "unknown_unit", pl.lit("(candidate, case_id, trial) is not a planned unit")))
    return pl.concat(parts)


def _repeated(known: pl.LazyFrame) -> pl.LazyFrame:
    """The planned rows whose (``_uid``, ``attempt``) pair occurs more than once (collects two columns).

    When both fit in one Int64 (``_uid`` × (largest attempt + 1) + attempt), that integer is sorted once and
    the values equal to their predecessor are the repeated pairs; the rows holding them are then picked by
    membership (quicker than counting the distinct integers and then marking the duplicated pairs).
    Otherwise the pairs are compared directly.
    """
    pairs = known.select(UID, ATTEMPT).collect()
    if pairs.height < 2:
        return known.head(0)
    key = unit_attempt_key(pairs, UID)
    if key is None:
        return known.filter(pl.struct(UID, ATTEMPT).is_duplicated())
    # Lazy queries: polars runs them without the GIL (eager Series methods hold it).
    ordered = pairs.lazy().select(key.sort().alias("_key"))
    twice = ordered.filter(pl.col("_key") == pl.col("_key").shift(1)).unique().collect().to_series()
    return known.filter(key.is_in(twice.implode())) if twice.len() else known.head(0)


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
    return coded if key is None else coded.lazy().sort(key).collect()


def duplicate_keys(coded: pl.LazyFrame) -> pl.LazyFrame:
    """Every row whose (candidate, case_id, trial, attempt) occurs more than once.

    Planned units are compared on their integer code, other rows on the
    strings; either way the comparison is exact.

    Examples
    --------
    >>> rows = pl.LazyFrame({"candidate": ["A", "A"], "case_id": ["quote", "quote"], "trial": [1, 1],
    ...                      "attempt": [1, 1], "line": [2, 3], "source": ["r.csv", "r.csv"], "_uid": [0, 0]})
    >>> duplicate_keys(rows).select("kind", "line").collect().to_dicts()
    [{'kind': 'duplicate_key', 'line': 2}, {'kind': 'duplicate_key', 'line': 3}]
    """
    # A key with a part that has no value (a token that did not parse) is not known, so repeats no other.
    whole = coded.filter(pl.all_horizontal(pl.col(ATTEMPT_KEY).is_not_null()))
    known = whole.filter(pl.col(UID).is_not_null())
    other = whole.filter(pl.col(UID).is_null())
    # Planned rows are counted on their integer codes (a window over the text keys of 10M repeated rows held
    # a hash table of their strings).
    times = "key appears {} times"
    return pl.concat(
        [
            _flag(_repeated(known), "duplicate_key", pl.format(times, pl.len().over(UID, ATTEMPT))),
            _flag(
                other.filter(pl.struct(*ATTEMPT_KEY).is_duplicated()),
                "duplicate_key",
                pl.format(times, pl.len().over(ATTEMPT_KEY)),
            ),
        ]
    )


def binding_mismatches(ledger: pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    """Rows whose run_id, dataset_version or case_hash differ from what the plan requires.

    ``run_mismatch`` when the plan requires a run and the row's ``run_id``
    differs (a null run_id differs too); ``version_mismatch`` /
    ``hash_mismatch`` when the plan and the row both carry the value for a
    case and they differ (compared exactly).
    """
    parts: list[pl.LazyFrame] = []
    if plan.run_id is not None:
        wrong = ledger.filter(pl.col(RUN_ID).is_null() | (pl.col(RUN_ID) != plan.run_id))
        parts.append(
            _flag(
                wrong,
                "run_mismatch",
                pl.format(
                    "run_id {} is not the required run {}", pl.col(RUN_ID).fill_null("null"), pl.lit(plan.run_id)
                ),
            )
        )
    for col, kind in ((DATASET_VERSION, "version_mismatch"), (CASE_HASH, "hash_mismatch")):
        if col not in plan.cases.columns:
            continue
        planned = plan.cases.lazy().select(CASE_ID, pl.col(col).cast(pl.String).alias("_planned"))
        joined = ledger.join(planned, on=CASE_ID, how="inner", maintain_order="left").filter(
            pl.col(col).is_not_null() & pl.col("_planned").is_not_null() & (pl.col(col) != pl.col("_planned"))
        )
        parts.append(
            _flag(
                joined,
                kind,
                pl.format("{} {} differs from the plan's {}", pl.lit(col), pl.col(col), pl.col("_planned")),
            )
        )
    if not parts:
        return _flag(ledger.head(0), "run_mismatch", pl.lit(""))
    return pl.concat(parts)


#: How many missing case ids a candidate's ``missing_unit`` problem names (the units table marks every one).
MISSING_IDS_SHOWN: Final = 20


def first_missing_cases(missing: pl.LazyFrame, plan: Plan, by: str, *extra: pl.Expr) -> pl.DataFrame:
    """Per group of ``missing`` (rows with a ``_case`` code): its distinct cases and the naturally first ids.

    Parameters
    ----------
    missing
        Missing units (or any rows) with the group column ``by`` and ``_case`` (UInt32, the plan's case code).
    plan
        The plan whose cases the codes number.
    by
        The group column (``candidate`` or ``_cand``).
    *extra
        More aggregations of each group, as columns of the result.

    Returns
    -------
    polars.DataFrame
        ``by``, ``missing_cases`` (UInt32, distinct cases), ``missing_case_ids`` (List[String], the first
        :data:`MISSING_IDS_SHOWN` in natural order, :mod:`evalframe.natural`) and the ``extra`` columns; in
        no particular order.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": [f"q{n}" for n in range(1, 30)]}), candidates=["A"])
    >>> rows = pl.LazyFrame({"candidate": ["A"] * 3, "_case": [0, 1, 1]}, schema_overrides={"_case": pl.UInt32})
    >>> first_missing_cases(rows, plan, "candidate", pl.len().alias("units")).rows()  # codes follow sorted ids
    [('A', 2, ['q1', 'q10'], 3)]
    """
    # KEPT times as many of each group's cases by the plan's shape order, as integers (order << 32 | code),
    # then ordered exactly in Python.
    ranked = (pl.lit(plan.case_order).gather(pl.col(CASE_CODE)).cast(pl.Int64) * 2**32 + pl.col(CASE_CODE)).alias("_o")
    counted = (
        missing.with_columns(ranked)
        .group_by(by)
        .agg(
            pl.col("_o").n_unique().cast(pl.UInt32).alias("missing_cases"),
            pl.col("_o").unique().bottom_k(KEPT * MISSING_IDS_SHOWN),
            *extra,
        )
        .collect()
    )
    codes = counted.select(by, "_o").explode("_o").select(by, (pl.col("_o") % 2**32).cast(pl.UInt32).alias(CASE_CODE))
    kept = codes.select(by, case_column(plan.cases.get_column(CASE_ID).cast(pl.String)))
    first = {key: natural_sorted(ids)[:MISSING_IDS_SHOWN] for key, ids in kept.group_by(by).agg(CASE_ID).rows()}
    shown = pl.Series("missing_case_ids", [first[key] for key in counted.get_column(by)], pl.List(pl.String))
    return counted.drop("_o").insert_column(2, shown)


def missing_units(
    coded: pl.LazyFrame, plan: Plan, planned: pl.LazyFrame | None = None, *, missing: MissingPolicy = "report"
) -> pl.LazyFrame:
    """One ``missing_unit`` problem per candidate with planned units that have no ledger row at all.

    Missing units are counted, not listed (SPEC §3 "Problems at scale"): a
    1M-case plan of 100 candidates against a header-only ledger has 100M
    missing units, which the summary counts (``missing``) and the units table
    marks (outcome ``missing``). Each candidate's row gives in ``detail`` the
    number of missing units and cases and the first :data:`MISSING_IDS_SHOWN`
    case ids (in natural order, :func:`first_missing_cases`); ``case_id``, ``trial`` and ``line`` are null. It is
    refusing only when ``missing="refuse"``; otherwise it is reported for the
    record, so that a batch refused for another reason still says what is
    missing (the funnel counts missing units as ``missing``, never as
    failures). Membership is tested on the unit code (collects ``coded``);
    ``planned`` holds the plan's unit codes (``_uid``; default
    :meth:`~evalframe.plan.Plan.planned_codes`).

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2", "q3"]}), candidates=["A", "B"], trials=2)
    >>> rows = pl.LazyFrame({"candidate": ["A", "A", "B"], "case_id": ["q1", "q2", "q1"], "trial": [1, 1, 1]})
    >>> for row in missing_units(encode_keys(rows, plan), plan).select("candidate", "detail").collect().rows():
    ...     print(row)
    ('A', '4 planned units have no row, in 3 cases: q1, q2, q3')
    ('B', '5 planned units have no row, in 3 cases: q1, q2, q3')
    """
    present = coded.select(pl.col(UID).drop_nulls()).collect().to_series()
    units = planned if planned is not None else plan.planned_codes()
    coding = plan.coding
    gone = first_missing_cases(
        units.select(UID).filter(~pl.col(UID).is_in(present.implode())).with_columns(coding.parts()),
        plan,
        CAND_CODE,
        pl.len().alias("_units"),
    ).sort(CAND_CODE)
    found = [(coding.candidates[cand], n_units, n_cases, ids) for cand, n_cases, ids, n_units in gone.iter_rows()]
    return missing_problems(found, plan.source, refusing=missing == "refuse").lazy()


def missing_problems(
    found: Sequence[tuple[str, int, int, Sequence[str]]], source: str, *, refusing: bool
) -> pl.DataFrame:
    """The ``missing_unit`` problems of :func:`missing_units`, one per candidate, from what was counted.

    ``found`` holds, per candidate, (candidate, missing units, missing cases, the first
    :data:`MISSING_IDS_SHOWN` missing case ids in order); any engine that counts missing units (polars here,
    Spark in :mod:`evalframe.engines.spark`) words them this one way.

    Examples
    --------
    >>> missing_problems([("A", 3, 2, ["q1", "q2"])], "plan.csv", refusing=False).select("candidate", "detail").row(0)
    ('A', '3 planned units have no row, in 2 cases: q1, q2')
    """
    rows = []
    for candidate, n_units, n_cases, shown_ids in found:
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
    lf = coded.lazy()
    problems = Problems.gather(
        [
            unknown_rows(lf, plan, planned.lazy()),
            duplicate_keys(lf),
            binding_mismatches(lf, plan),
            missing_units(lf, plan, planned.lazy(), missing=missing),
        ]
    )
    return Reconciled(problems, coded, planned)
