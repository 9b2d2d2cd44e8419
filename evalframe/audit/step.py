"""One batch (or one candidate's part of it) through the steps: validate, reconcile, select attempts, summarise.

:func:`check_and_select` is the audit's one per-batch step: every runner (see
:mod:`evalframe.audit.runners`) runs it on the whole batch or on each
candidate's rows and gets a :class:`Part`. Nothing is computed until the part has
been checked: a refusing problem stops it before any attempt is selected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, TypeVar

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.attempts import RETRY_FLAGS, select_attempts
from evalframe.columns import (
    ANSWER,
    CANDIDATE,
    CASE_HASH,
    COUNTED_ATTEMPT,
    DATASET_VERSION,
    EXEC_STATUS,
    EXEC_STATUSES,
    KIND,
    LIMIT,
    LINE,
    OUTCOMES,
    RUN_ID,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    TASK,
    GradeKind,
    MissingPolicy,
    RetryPolicyName,
)
from evalframe.funnel import funnel, outcome_in, unit_outcomes, with_uncertainty
from evalframe.plan import CAND_CODE, CASE_CODE, UID, Plan, case_column
from evalframe.problems import Problems
from evalframe.reconcile import case_order_table, missing_cases, planned_units_coded, reconcile, with_missing_cases
from evalframe.slices import Bins, case_slices, slice_funnel
from evalframe.stats import DEFAULT_CONFIDENCE, Target
from evalframe.validate import FILE_PROBLEMS, validate_ledger

#: A frame, eager or lazy (helpers that keep the kind they are given).
FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

#: Internal integer-code columns, dropped from every report table.
CODES = [CAND_CODE, CASE_CODE, UID]

#: Units carry the candidate as an Enum while they are counted (cheap to group by); tables give it as text.
AS_TEXT = pl.col(CANDIDATE).cast(pl.String)


@dataclass(frozen=True)
class Options:
    """The audit's declared options, as one step reads them."""

    retry: RetryPolicyName
    max_attempts: int | None
    retry_on: tuple[str, ...]
    strict_retries: bool
    missing: MissingPolicy
    grade: GradeKind
    score_range: tuple[float, float]
    pass_threshold: float | None
    slices: tuple[str, ...] = ()
    bins: Bins | None = None
    confidence: float = DEFAULT_CONFIDENCE
    extra_columns: tuple[str, ...] = ()
    reducer: str = "mean"
    cases: Target = "sample"

    @property
    def pass_fail(self) -> bool:
        """Whether the grading gives every scored unit a pass or a fail: binary, or a declared threshold."""
        return self.grade == "binary" or self.pass_threshold is not None


@dataclass(frozen=True)
class Part:
    """What one (partition of a) batch gave: its problems and, when clean, its tables."""

    problems: Problems
    rows: int
    run_ids: frozenset[str]
    shape: str
    summary: pl.DataFrame | None = None
    slices: pl.DataFrame | None = None
    #: Cases counted by their planned, ungraded and missing units per slice value (the missingness test's input).
    case_slices: pl.DataFrame | None = None
    #: Units counted on codes: ``candidate`` (Enum), ``_case`` and the outcome columns, without the plan's text
    #: and all-null payload columns, which :func:`table` gives back (see ``unit_schema``).
    units: pl.DataFrame | None = None
    attempts: pl.DataFrame | None = None
    #: The units table's columns and types, in order.
    unit_schema: pl.Schema | None = None
    #: Validation or reconciliation refused: no attempt is selected anywhere in the batch.
    checks_refused: bool = False


def check_and_select(plan: Plan, frame: pl.LazyFrame, o: Options, *, compute: bool = True) -> Part:
    """Validate and reconcile one batch; only when nothing refuses, select attempts and summarise.

    ``compute=False`` stops after the checks (a candidate audited after another refused). Each
    intermediate frame is let go as soon as the next one exists (``del``), so a part's peak memory holds
    about two copies of its rows, not every stage's (measured in ``benchmarks/RESULTS.md``).
    """
    validated = validate_ledger(
        frame,
        plan,
        grade=o.grade,
        score_range=o.score_range,
        pass_threshold=o.pass_threshold,
        extra_columns=o.extra_columns,
    )
    ledger, checked, shape = validated.ledger, validated.problems, validated.shape
    del validated
    found = Part(Problems.gather([checked]), ledger.height, frozenset(), shape)
    if not ledger.width:
        return replace(found, checks_refused=bool(found.problems.refusing))
    rec = reconcile(ledger, plan, missing=o.missing)
    del ledger
    problems = Problems.gather([found.problems, rec.problems])
    refusing = bool(problems.refusing)
    if refusing or not compute:
        return replace(found, problems=problems, checks_refused=refusing)
    planned, compact = rec.planned, compacted(rec.ledger)
    del rec
    # Read from the Categorical (its codes are hashed, not the text); only a batch that is not refused needs them.
    run_ids = compact.lazy().select(pl.col(RUN_ID).drop_nulls().unique().cast(pl.String)).collect().to_series()
    found = replace(found, run_ids=frozenset(run_ids.to_list()))
    # Columns that only ride along to the tables are left out while attempts are sorted and joined when they
    # are all null (the usual case for most of them), and given back as typed nulls in their places.
    empty = {c: compact.schema[c] for c in PAYLOAD if compact.get_column(c).null_count() == compact.height}
    order = compact.columns
    selected = select_attempts(
        compact.drop(list(empty)),
        policy=o.retry,
        max_attempts=o.max_attempts,
        retry_on=o.retry_on,
        strict=o.strict_retries,
        key=[UID],
    )
    del compact
    problems = Problems.gather([problems, selected.flags])
    if problems.refusing:
        return replace(found, problems=problems)
    attempts = selected.attempts
    del selected
    # Units are counted on codes; their text (case_id, the plan's columns) is given back only to the table.
    units = coded_outcomes(planned.lazy(), attempts.lazy(), plan).collect()
    # Both sides are sorted by unit code and the join keeps that order; were it not kept, it is restored.
    if o.retry == "every" or not units.get_column(UID).is_sorted():
        units = units.sort(UID, COUNTED_ATTEMPT, maintain_order=True)
    if empty:
        attempts = given_back(attempts, [*order, *attempts.columns], nulls(empty))
    units = units.with_columns(plan.candidate_name())
    named = coded_outcomes(planned_units_coded(plan).head(0), attempts.lazy().head(0), plan).collect_schema()
    del planned
    summary, slice_table, case_table = summarize(units, o, plan)
    return replace(
        found,
        problems=problems,
        summary=summary,
        slices=slice_table,
        case_slices=case_table,
        # Each keeps its case code: a file stores it instead of the case's text columns (see runners.ByCandidate).
        units=units.drop(CAND_CODE, UID),
        attempts=attempts.drop(CAND_CODE, UID),
        unit_schema=pl.Schema({c: pl.String() if c == CANDIDATE else t for c, t in named.items() if c not in CODES}),
    )


def coded_outcomes(planned: pl.LazyFrame, attempts: pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    """:func:`evalframe.funnel.unit_outcomes` joined on the unit code, the outcome an Enum of :data:`OUTCOMES`.

    The rule picks an outcome's position, which gathers the Enum value (instead of a text column cast).
    Both sides are flagged sorted by the unit code (they are), so the join merges them in order.
    """
    flag = pl.col(UID).set_sorted()
    units: pl.LazyFrame = unit_outcomes(
        nw.from_native(planned.with_columns(flag)),
        nw.from_native(attempts.with_columns(flag)),
        plan.cases.columns,
        [UID],
        value=lambda text: nw.lit(OUTCOMES.index(text), nw.UInt32()),
    ).to_native()
    enum = pl.lit(pl.Series(OUTCOMES, dtype=pl.Enum(list(OUTCOMES))))
    return units.with_columns(enum.gather(pl.col("outcome")).alias("outcome"))


def table(
    frame: FrameT, schema: pl.Schema, cases: pl.DataFrame, from_plan: Sequence[str], candidate: str | None = None
) -> FrameT:
    """A units or attempts table with ``schema``'s columns, in order, from what a part (or its file) holds.

    A column ``frame`` lacks is given back: one of ``from_plan`` by gathering the cases at ``_case``, the
    candidate as ``candidate`` when a file has one, any other (an all-null payload column) as a typed null.
    A candidate held as an Enum becomes text.
    """
    present = frame.collect_schema()
    if CANDIDATE in present and present[CANDIDATE] != pl.String:
        frame = frame.with_columns(AS_TEXT)
    given = {c: case_column(cases.get_column(c)) for c in from_plan if c not in present}
    given[CANDIDATE] = pl.lit(candidate, pl.String)
    return given_back(frame, schema.names(), {**nulls(schema), **given})


def summarize(
    units: pl.DataFrame, o: Options, plan: Plan
) -> tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None]:
    """The per-candidate summary (funnel, intervals, missing case ids), slice funnel and case slices of units.

    ``units`` are counted on codes (``candidate`` an Enum, ``_cand``, ``_case``); the case ids listed and the
    slice columns are taken from ``plan``'s cases. Every number is per candidate, so summaries of candidate
    partitions concatenate exactly.
    """
    # Units are sorted by unit code, hence by (candidate, case): one integer names each cluster, in order.
    cases = units.with_columns((pl.col(CAND_CODE).cast(pl.Int64) * 2**32 + pl.col(CASE_CODE)).alias("_cluster"))
    # Under ``every`` a unit has a row per counted attempt: planned counts the unit codes, not the rows.
    unit = UID if o.retry == "every" else None
    summary = with_uncertainty(
        funnel(units.lazy(), unit=unit, pass_fail=o.pass_fail).collect(),
        cases,
        confidence=o.confidence,
        # A pass/fail grade's score is 0 or 1 whatever score_range says (it bounds numeric scores only).
        score_range=o.score_range if o.grade == "numeric" else (0.0, 1.0),
        cluster="_cluster",
        reducer=o.reducer,
        cases=o.cases,
    )
    missing = units.lazy().filter(outcome_in(units.schema, "missing")).select(CANDIDATE, CASE_CODE)
    order = case_order_table(plan, CASE_CODE).lazy()
    summary = with_missing_cases(
        summary, missing_cases(nw.from_native(missing), nw.from_native(order), CANDIDATE, CASE_CODE)
    )
    slice_table = case_table = None
    if o.slices:
        labelled = units.select(
            CANDIDATE, CASE_CODE, UID, "outcome", *(case_column(plan.cases.get_column(c)) for c in o.slices)
        )
        slice_table = slice_funnel(
            labelled.drop(CASE_CODE), o.slices, o.bins, unit=unit, pass_fail=o.pass_fail
        ).with_columns(AS_TEXT)
        case_table = case_slices(labelled, o.slices, o.bins, case=CASE_CODE)
    return summary.with_columns(AS_TEXT), slice_table, case_table


#: Ledger columns that only ride along to the report tables (no count, rate or retry rule reads them).
PAYLOAD: Final = (RUN_ID, ANSWER, LIMIT, DATASET_VERSION, CASE_HASH)


def given_back(frame: FrameT, order: Sequence[str], given: Mapping[str, pl.Expr]) -> FrameT:
    """``frame``'s columns in ``order``, each one it lacks given by its expression in ``given``."""
    present = set(frame.collect_schema().names())
    return frame.select(pl.col(c) if c in present else given[c].alias(c) for c in dict.fromkeys(order))


def nulls(dtypes: Mapping[str, pl.DataType]) -> dict[str, pl.Expr]:
    """A typed null literal for each column."""
    return {c: pl.lit(None, dtype) for c, dtype in dtypes.items()}


def compacted(ledger: pl.DataFrame) -> pl.DataFrame:
    """Store the few-valued text columns of a validated ledger as Enum/Categorical (cheap to sort and join).

    Only called once the batch passed every check, so every status is in the vocabulary.
    """
    return ledger.with_columns(
        pl.col(EXEC_STATUS).cast(pl.Enum(list(EXEC_STATUSES))),
        pl.col(SCORE_STATUS).cast(pl.Enum(list(SCORE_STATUSES))),
        pl.col(SOURCE).cast(pl.Categorical()),
        pl.col(RUN_ID).cast(pl.Categorical()),
    )


def batch_problems(read: pl.DataFrame | Problems, parts: Sequence[Part], source: str) -> Problems:
    """The problems of the whole batch from those of its parts, as one whole-batch run finds them.

    A problem of the input itself (an unexpected or missing column) names the
    input ``source`` (an unexpected column at line 1, the header, when that is
    one CSV file; at the line the loader found it on when that is one JSON
    Lines file) and is kept once: each part finds it, naming its own file,
    or no file when it has no rows. When a check refused anywhere, retry flags
    found in the parts that were computed before it are dropped (a
    whole-batch run selects no attempt then). Bounded like every part's (see
    :class:`~evalframe.problems.Problems`): the parts' first rows of each kind
    are merged, their counts added.
    """
    problems = Problems.gather([read, *(p.problems for p in parts)])
    if problems.has(FILE_PROBLEMS):
        one_file = Path(source).is_file()
        header = 1 if Path(source).suffix.lower() == ".csv" and one_file else None
        # One per part and column at most: few rows, read whole.
        file_level = problems.of_kinds(FILE_PROBLEMS)
        # A CSV's unexpected column is on its header; a JSON Lines key (a reserved name) keeps the line the
        # loader found it on when the input is that one file.
        at_header = (pl.col(KIND) == "unexpected_column") & (pl.lit(header is not None or not one_file))
        named = file_level.with_columns(
            pl.lit(source, pl.String).alias(SOURCE),
            pl.when(at_header).then(pl.lit(header, pl.Int64)).otherwise(pl.col(LINE)).alias(LINE),
        )
        if TASK in named.columns:  # a problem of the input is of no one task: kept once, without one
            named = named.with_columns(pl.lit(None, pl.String).alias(TASK))
        problems = Problems.gather([problems.without(FILE_PROBLEMS), named.unique(maintain_order=True)])
    return problems.without(RETRY_FLAGS) if any(p.checks_refused for p in parts) else problems
