"""The audit's row work expressed once in narwhals, for any lazy backend with ordered windows (Spark, polars).

Everything here is lazy and returns narwhals frames; nothing is collected. The caller (an engine such as
:mod:`evalframe.engines.spark`) decides what is written where and collects only small aggregates: problem
counts per kind with their first rows, outcome counts per candidate and the case patterns of
:func:`case_patterns` (how many cases have each set of per-case sums). The statistics stay in
:mod:`evalframe.funnel` and :mod:`evalframe.stats.clustered`, shared with the polars path.

The checks and their problem details are those of :mod:`evalframe.validate`, :mod:`evalframe.reconcile`
and :mod:`evalframe.attempts` (SPEC §3, §4), for ledgers read from typed files (Parquet, tables): the strict
CSV reader with its line numbers stays on polars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import narwhals.stable.v2 as nw

from evalframe.attempts import COUNTS, retry_flag_details
from evalframe.columns import (
    ANSWER,
    ATTEMPT,
    ATTEMPTS,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    CASES,
    COUNTED_ATTEMPT,
    DATASET_VERSION,
    DETAIL,
    EXEC_FAILURES,
    EXEC_STATUS,
    EXEC_STATUSES,
    HAS_OUTPUT,
    KIND,
    LIMIT,
    LINE,
    OUTCOMES,
    PASSED,
    REFUSING,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    TEXT_COLUMNS,
    TRIAL,
    GradeKind,
    RetryPolicyName,
)
from evalframe.funnel import CASE_SUM_COLUMNS

#: A narwhals lazy frame over any backend.
Lazy: TypeAlias = "nw.LazyFrame[Any]"

#: Columns of every problems frame built here, in :data:`evalframe.problems.PROBLEM_SCHEMA` order.
PROBLEM_COLUMNS = (KIND, SOURCE, LINE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT, DETAIL, REFUSING)
#: Canonical ledger columns (:data:`evalframe.validate.CANONICAL_SCHEMA`) and their narwhals types.
CANONICAL: dict[str, Any] = {
    CANDIDATE: nw.String(),
    CASE_ID: nw.String(),
    TRIAL: nw.Int64(),
    ATTEMPT: nw.Int64(),
    RUN_ID: nw.String(),
    EXEC_STATUS: nw.String(),
    SCORE_STATUS: nw.String(),
    SCORE: nw.Float64(),
    PASSED: nw.Boolean(),
    HAS_OUTPUT: nw.Boolean(),
    ANSWER: nw.String(),
    LIMIT: nw.String(),
    DATASET_VERSION: nw.String(),
    CASE_HASH: nw.String(),
    LINE: nw.Int64(),
    SOURCE: nw.String(),
}
_UNIT = [CANDIDATE, CASE_ID, TRIAL]
#: The columns a row problem keeps: the attempt's key and where its row stands.
_ROW_KEYS = (CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, SOURCE)
_INT_TOKEN = r"^[1-9][0-9]*$"
#: A row check: (mask of the failing rows, problem kind, detail).
_Check: TypeAlias = tuple[nw.Expr, str, nw.Expr]


@dataclass(frozen=True)
class Options:
    """The audit options the core reads (see :func:`evalframe.audit.audit`)."""

    retry: RetryPolicyName = "first"
    max_attempts: int | None = None
    retry_on: tuple[str, ...] = EXEC_FAILURES
    strict_retries: bool = False
    missing_refuses: bool = False
    grade: GradeKind = "binary"
    score_range: tuple[float, float] = (0.0, 1.0)
    pass_threshold: float | None = None
    extra_columns: tuple[str, ...] = ()


def _lit(value: Any, dtype: Any = None) -> nw.Expr:
    return nw.lit(value, dtype) if dtype is not None else nw.lit(value)


def problems(rows: Lazy, kind: str, detail: nw.Expr, *, refusing: bool = True, keys: Sequence[str] = ()) -> Lazy:
    """``rows`` as problems of ``kind``: the key columns in ``keys`` are kept, the others null."""
    return rows.select(
        _lit(kind, nw.String()).alias(KIND),
        *_key_exprs(keys, {}),
        detail.cast(nw.String()).alias(DETAIL),
        _lit(refusing, nw.Boolean()).alias(REFUSING),
    )


def _key_exprs(keys: Sequence[str], parsed: Mapping[str, nw.Expr]) -> list[nw.Expr]:
    """The problem key columns (source, line, candidate, case_id, trial, attempt): ``keys``, ``parsed``, else null."""
    kept = set(keys)
    cols = []
    for name, dtype in (
        (SOURCE, nw.String()),
        (LINE, nw.Int64()),
        (CANDIDATE, nw.String()),
        (CASE_ID, nw.String()),
        (TRIAL, nw.Int64()),
        (ATTEMPT, nw.Int64()),
    ):
        value = nw.col(name) if name in kept else parsed.get(name, _lit(None, dtype))
        cols.append(value.cast(dtype).alias(name))
    return cols


def checked(
    rows: Lazy,
    checks: Sequence[_Check],
    *,
    keys: Sequence[str],
    parsed: Mapping[str, nw.Expr] | None = None,
    refusing: bool = True,
) -> list[Lazy]:
    """The problems of several checks of the same rows, from one pass over them (none without checks).

    The key columns are ``keys`` of ``rows`` and the expressions of ``parsed`` (e.g. a raw ledger's parsed
    trial), null otherwise.

    Each check's detail, null where its row passes, is a column; the columns are unpivoted to one row per
    row and check and the passing ones dropped, so the backend reads ``rows`` once rather than once per
    check (as :func:`problems` of each check's filter would). Every check's detail is non-null where it fails.
    """
    if not checks:
        return []
    names = [f"_check_{i}" for i in range(len(checks))]
    wide = rows.select(
        *_key_exprs(keys, parsed or {}),
        *(
            nw.when(mask.fill_null(False)).then(detail.cast(nw.String())).alias(name)
            for name, (mask, _, detail) in zip(names, checks, strict=True)
        ),
    )
    index = [SOURCE, LINE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT]
    long = wide.unpivot(on=names, index=index, variable_name="_check", value_name=DETAIL).filter(
        ~nw.col(DETAIL).is_null()
    )
    which = nw.col("_check")
    kind: Any = None  # when the column is check i's, check i's kind
    for name, (_, check_kind, _) in zip(names, checks, strict=True):
        then = _lit(check_kind, nw.String())
        kind = nw.when(which == name).then(then) if kind is None else kind.when(which == name).then(then)
    return [
        long.select(
            kind.otherwise(_lit(None, nw.String())).alias(KIND),
            *index,
            nw.col(DETAIL),
            _lit(refusing, nw.Boolean()).alias(REFUSING),
        )
    ]


def _text(name: str) -> nw.Expr:
    """A column as text, ``null`` when null (pl.format's spelling of a null)."""
    return nw.col(name).cast(nw.String()).fill_null("null")


def _quoted(name: str) -> nw.Expr:
    """A column's value quoted for a detail message (``'x'``, or ``null``), as :func:`evalframe.validate._repr`."""
    s = nw.col(name).cast(nw.String())
    return nw.when(s.is_null()).then(_lit("null")).otherwise(nw.concat_str([_lit("'"), s, _lit("'")]))


def _grade(name: str, dtype: Any) -> tuple[nw.Expr, nw.Expr | None]:
    """(parsed Boolean, invalid mask) of a binary grade column (see ``validate._grade_token``)."""
    c = nw.col(name)
    if dtype == nw.Boolean:
        return c, None
    if dtype.is_integer():
        return c == 1, ~c.is_null() & ~c.is_in([0, 1])
    if dtype.is_float():
        return c == 1.0, ~c.is_null() & (c.is_nan() | ~c.is_in([0.0, 1.0]))
    s = c.cast(nw.String())
    parsed = nw.when(s == "1").then(_lit(True)).when(s == "0").then(_lit(False)).otherwise(_lit(None, nw.Boolean()))
    return parsed, ~s.is_null() & ~s.is_in(["0", "1"])


def _integer(name: str, dtype: Any, *, allow_zero: bool) -> tuple[nw.Expr, nw.Expr | None]:
    """(parsed Int64, invalid mask) of a trial or attempt column (see ``validate._int_token``)."""
    c = nw.col(name)
    if dtype.is_integer():
        return c.cast(nw.Int64()), None
    s = c.cast(nw.String())
    ok = (s.str.contains(_INT_TOKEN) | ((s == "0") if allow_zero else _lit(False))) & ~_beyond_int64(s)
    return nw.when(ok.fill_null(False)).then(s.cast(nw.Int64())), s.is_null() | ~ok.fill_null(False)


def _beyond_int64(s: nw.Expr) -> nw.Expr:
    """A positive integer token larger than Int64 holds, compared as text: no cast can fail (ANSI mode)."""
    top = str(2**63 - 1)
    length = s.str.len_chars()
    return s.str.contains(_INT_TOKEN) & ((length > len(top)) | ((length == len(top)) & (s > top)))


def _integer_detail(name: str) -> nw.Expr:
    """The detail of a bad trial or attempt token, as :func:`evalframe.validate.validate_ledger` words it."""
    too_large = _beyond_int64(nw.col(name).cast(nw.String()))
    return (
        nw.when(too_large.fill_null(False))
        .then(
            nw.concat_str(
                [_lit(f"{name} = "), _text(name), _lit(f" is beyond the 64-bit integer range (at most {2**63 - 1})")]
            )
        )
        .otherwise(nw.concat_str([_lit(f"{name} = "), _text(name), _lit(" is not a positive integer")]))
    )


@dataclass(frozen=True)
class Canonical:
    """A typed ledger in canonical columns, the row problems found making it and the checks of its typed rows."""

    ledger: Lazy
    problems: list[Lazy]
    #: The checks of the typed ledger's rows (:class:`evalframe.schemas.LedgerModel`'s, the statuses'), for
    #: :func:`identity` to run in its one pass over the ledger's rows.
    checks: list[_Check]


def canonical(
    frame: Lazy, shape: str, options: Options, expected: Lazy | None, only_candidate: str | None
) -> Canonical:
    """The canonical ledger of a typed ledger whose columns passed the structural checks, with its row problems.

    ``shape`` is ``status``, ``grades`` or ``answers`` (from :func:`evalframe.validate.validate_ledger` on the
    ledger's empty schema); ``expected`` holds the plan's ``case_id`` and ``_expected`` for answers;
    ``only_candidate`` names the plan's single candidate when the ledger has no candidate column.
    """
    schema = frame.collect_schema()
    if only_candidate is not None and CANDIDATE not in schema.names():
        frame = frame.with_columns(_lit(only_candidate, nw.String()).alias(CANDIDATE))
        schema = frame.collect_schema()
    exprs, checks = _key_columns(schema)
    score, passed, grade_checks = _grade_columns(schema, shape, options)
    statuses, status_checks = _status_columns(schema, shape, score)
    exprs.update(statuses)
    checks += grade_checks + status_checks
    if shape == "answers":
        answer = nw.col(ANSWER).cast(nw.String())
        checks.append((answer.is_null() | (answer == ""), "empty_value", _lit("empty answer")))
    exprs[SCORE], exprs[PASSED] = score, passed
    exprs[LINE], exprs[SOURCE] = nw.col(LINE).cast(nw.Int64()), nw.col(SOURCE).cast(nw.String())
    found = checked(
        frame, checks, keys=(CANDIDATE, CASE_ID, LINE, SOURCE), parsed={k: exprs[k] for k in (TRIAL, ATTEMPT)}
    )
    ledger = frame.select(
        *(exprs[name].cast(dtype).alias(name) for name, dtype in CANONICAL.items()), *options.extra_columns
    )
    if shape == "answers" and expected is not None:
        ledger = (
            ledger.join(expected, on=CASE_ID, how="left")
            .with_columns((nw.col(ANSWER) == nw.col("_expected")).alias(PASSED))
            .with_columns(nw.col(PASSED).cast(nw.Float64()).alias(SCORE))
            .drop("_expected")
        )
    typed = _schema_checks(found_tokens=bool(checks)) + (_status_checks() if shape == "status" else [])
    return Canonical(ledger, found, typed)


def _key_columns(schema: Any) -> tuple[dict[str, nw.Expr], list[_Check]]:
    """The identity and binding columns as text, ``trial`` and ``attempt`` parsed (1 when absent)."""
    cols = set(schema.names())
    checks: list[_Check] = []
    exprs: dict[str, nw.Expr] = {
        CANDIDATE: nw.col(CANDIDATE).cast(nw.String()),
        CASE_ID: nw.col(CASE_ID).cast(nw.String()),
    }
    for name in (TRIAL, ATTEMPT):
        if name in cols:
            parsed, bad = _integer(name, schema[name], allow_zero=name == TRIAL)
            exprs[name] = parsed
            detail = _integer_detail(name)
            if bad is not None:  # an integer column needs no token check
                checks.append((bad, "invalid_integer", detail))
        else:
            exprs[name] = _lit(1, nw.Int64())
    for name in TEXT_COLUMNS:
        exprs[name] = nw.col(name).cast(nw.String()) if name in cols else _lit(None, nw.String())
    return exprs, checks


def _grade_columns(schema: Any, shape: str, options: Options) -> tuple[nw.Expr, nw.Expr, list[_Check]]:
    """(score, passed, checks) from the ``passed`` and ``score`` columns, as :mod:`evalframe.validate.grades`."""
    cols = set(schema.names())
    checks: list[_Check] = []
    passed: nw.Expr = _lit(None, nw.Boolean())
    score: nw.Expr = _lit(None, nw.Float64())
    if PASSED in cols:
        passed, token_bad = _grade(PASSED, schema[PASSED])
        bad = nw.col(PASSED).is_null() & _lit(False) if token_bad is None else token_bad
        if shape == "grades":
            bad = bad | nw.col(PASSED).is_null()
        elif schema[PASSED] == nw.String:
            empty = nw.col(PASSED) == ""
            passed, bad = nw.when(~empty.fill_null(False)).then(passed), bad & ~empty.fill_null(False)
        checks.append(
            (bad, "invalid_grade", nw.concat_str([_lit("passed = "), _quoted(PASSED), _lit(" is not exactly 0 or 1")]))
        )
        score = passed.cast(nw.Float64())
    if SCORE in cols:
        if not (schema[SCORE].is_numeric() or schema[SCORE] == nw.Boolean):
            msg = "a score read by Spark must be a number column (text scores are parsed on the polars engine)"
            raise ValueError(msg)
        parsed_score = nw.col(SCORE).cast(nw.Float64())
        low, high = options.score_range
        if options.grade == "binary":
            bad = ~parsed_score.is_null() & (parsed_score.is_nan() | ~parsed_score.is_in([0.0, 1.0]))
            if shape == "grades" and PASSED not in cols:
                bad = bad | nw.col(SCORE).is_null()
            detail = nw.concat_str(
                [_lit("score = "), _quoted(SCORE), _lit(" is not exactly 0 or 1 (scores in a range: --grade numeric)")]
            )
            checks.append((bad, "invalid_grade", detail))
            if PASSED not in cols:
                passed = parsed_score == 1.0
        else:
            finite = ~parsed_score.is_nan() & (parsed_score.abs() < float("inf"))
            bad = ~parsed_score.is_null() & (~finite | (parsed_score < low) | (parsed_score > high))
            if shape == "grades" and PASSED not in cols:
                bad = bad | nw.col(SCORE).is_null()
            detail = nw.concat_str(
                [_lit("score = "), _quoted(SCORE), _lit(f" is not a finite number in [{low}, {high}]")]
            )
            checks.append((bad, "invalid_score", detail))
            if options.pass_threshold is not None:
                passed = nw.coalesce(passed, parsed_score >= options.pass_threshold)
        score = parsed_score
    return score, passed, checks


def _status_columns(schema: Any, shape: str, score: nw.Expr) -> tuple[dict[str, nw.Expr], list[_Check]]:
    """``exec_status``, ``score_status`` and ``has_output``: read for a status ledger, implied for the others."""
    if shape != "status":
        implied = {
            EXEC_STATUS: _lit("completed", nw.String()),
            SCORE_STATUS: _lit("scored", nw.String()),
            HAS_OUTPUT: _lit(True, nw.Boolean()),
        }
        return implied, []
    cols = set(schema.names())
    exprs = {EXEC_STATUS: nw.col(EXEC_STATUS).cast(nw.String())}
    if SCORE_STATUS in cols:
        ss = nw.col(SCORE_STATUS).cast(nw.String())
        exprs[SCORE_STATUS] = nw.when(ss == "unscored").then(_lit("not_scored")).otherwise(ss)
    else:
        exprs[SCORE_STATUS] = nw.when(~score.is_null()).then(_lit("scored")).otherwise(_lit("not_scored"))
    completed = nw.col(EXEC_STATUS) == "completed"
    if HAS_OUTPUT in cols:
        if schema[HAS_OUTPUT] != nw.Boolean:
            msg = "has_output read by Spark must be a Boolean column"
            raise ValueError(msg)
        exprs[HAS_OUTPUT] = nw.coalesce(nw.col(HAS_OUTPUT), completed)
    else:
        exprs[HAS_OUTPUT] = completed
    checks: list[_Check] = [
        (nw.col(name) == "", "empty_value", _lit(f"empty {name}"))
        for name in (EXEC_STATUS, SCORE_STATUS)
        if name in cols and schema[name] == nw.String
    ]
    return exprs, checks


def _schema_checks(*, found_tokens: bool) -> list[_Check]:
    """The checks of :class:`evalframe.schemas.LedgerModel` on the canonical ledger, with its kinds and details."""

    def fails(name: str, check: str) -> nw.Expr:
        return nw.concat_str([_lit(f"{name} = "), _text(name), _lit(f" fails check {check}")])

    checks: list[_Check] = []
    for name in (CANDIDATE, CASE_ID, RUN_ID):
        c = nw.col(name)
        checks.append((c == "", "empty_identifier", fails(name, "empty_identifier")))
        padded = c.str.strip_chars().str.len_chars() != c.str.len_chars()
        checks.append((padded, "padded_identifier", fails(name, "padded_identifier")))
    for name, low in ((TRIAL, 0), (ATTEMPT, 1)):
        c = nw.col(name)
        checks.append((c < low, "invalid_integer", fails(name, f"greater_than_or_equal_to({low})")))
        if not found_tokens:
            checks.append((c.is_null(), "empty_value", fails(name, "not_nullable")))
    for name, allowed in ((EXEC_STATUS, EXEC_STATUSES), (SCORE_STATUS, SCORE_STATUSES)):
        c = nw.col(name)
        checks.append((~c.is_null() & ~c.is_in(list(allowed)), "invalid_status", fails(name, f"isin({list(allowed)})")))
    return checks


def _status_checks() -> list[_Check]:
    """Rows whose statuses contradict their score (see ``validate._status_problems``)."""
    scored = nw.col(SCORE_STATUS) == "scored"
    has_score = ~nw.col(SCORE).is_null() | ~nw.col(PASSED).is_null()
    completed = nw.col(EXEC_STATUS) == "completed"
    rules = [
        (has_score & ~scored & ~nw.col(SCORE_STATUS).is_null(), "a score is present but score_status is not 'scored'"),
        (scored & ~has_score, "score_status is 'scored' but there is no score"),
        (scored & ~completed, "score_status is 'scored' but exec_status is not 'completed'"),
        (
            scored & completed & ~nw.col(HAS_OUTPUT).fill_null(True),
            "score_status is 'scored' but the attempt has no output",
        ),
    ]
    valid = nw.col(EXEC_STATUS).is_in(list(EXEC_STATUSES)) & nw.col(SCORE_STATUS).is_in(list(SCORE_STATUSES))
    return [(valid & mask, "status_inconsistent", _lit(text)) for mask, text in rules]


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
    ledger's rows (:attr:`Canonical.checks`), found in the same pass as the unknown candidates, cases, trials,
    units and runs. Adds ``_planned`` (Boolean) to the ledger: the row is one of a planned unit (and keeps the
    ``_``-prefixed columns that found it: the problems are read from the ledger handed back, which an engine
    may cache).
    """
    marked, found = _plan_membership(
        ledger, cases, candidates, trial_range, planned if units_table else None, run_id=run_id, checks=checks
    )
    key = [CANDIDATE, CASE_ID, TRIAL, ATTEMPT]
    counted = marked.with_columns(nw.len().over(*key).alias("_times"))
    found.append(
        problems(
            counted.filter(nw.col("_times") > 1),
            "duplicate_key",
            nw.concat_str([_lit("key appears "), nw.col("_times").cast(nw.String()), _lit(" times")]),
            keys=_ROW_KEYS,
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

    The rows of another run than ``run_id`` are found when it is given (:func:`checked` makes the problems);
    ``units`` holds the planned units when the plan is a units table, else None.
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
    return marked, checked(marked, checks, keys=_ROW_KEYS)


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
                keys=_ROW_KEYS,
            )
        )
    return found


@dataclass(frozen=True)
class Selection:
    """Every attempt of a planned unit with ``attempts`` and ``counts``, and the retry flags."""

    attempts: Lazy
    flags: list[Lazy]


def select_attempts(ledger: Lazy, options: Options) -> Selection:
    """The retry policies of :func:`evalframe.attempts.select_attempts`, as windows ordered by attempt."""
    unit = _UNIT
    prev_exec = nw.col(EXEC_STATUS).shift(1).over(*unit, order_by=ATTEMPT)
    prev_score = nw.col(SCORE_STATUS).shift(1).over(*unit, order_by=ATTEMPT)
    prev_attempt = nw.col(ATTEMPT).shift(1).over(*unit, order_by=ATTEMPT)
    lf = ledger.with_columns(
        prev_exec.alias("_prev_exec"), prev_score.alias("_prev_score"), prev_attempt.alias("_prev_attempt")
    )
    same = ~nw.col("_prev_attempt").is_null()
    prev_eligible = nw.col("_prev_exec").is_in(list(options.retry_on)).fill_null(False)
    prev_scored = (same & (nw.col("_prev_score") == "scored")).fill_null(False)
    within = _lit(True) if options.max_attempts is None else nw.col(ATTEMPT) <= options.max_attempts
    lf = lf.with_columns(
        nw.len().over(*unit).cast(nw.Int64()).alias(ATTEMPTS),
        prev_scored.alias("_prev_scored"),
        (same & ~prev_eligible).alias("_prev_ineligible"),
        (nw.col(ATTEMPT) - nw.col("_prev_attempt").fill_null(0) > 1).alias("_gap"),
        (~(~same | (prev_eligible & within))).cast(nw.Int64()).alias("_disallowed"),
    )
    if options.retry == "first":
        counts: nw.Expr = ~same
    elif options.retry == "every":
        counts = _lit(True)
    elif options.retry == "last_allowed":
        lf = lf.with_columns(nw.col("_disallowed").cum_sum().over(*unit, order_by=ATTEMPT).alias("_seen"))
        allowed = nw.col("_seen") == 0
        lf = lf.with_columns(nw.when(allowed).then(nw.col(ATTEMPT)).max().over(*unit).alias("_last_allowed"))
        counts = allowed & (nw.col(ATTEMPT) == nw.col("_last_allowed"))
    else:
        msg = f"unknown retry policy {options.retry!r}; use first, last_allowed or every"
        raise ValueError(msg)
    lf = lf.with_columns(counts.alias(COUNTS))
    keys = (CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, SOURCE)
    strict = options.strict_retries
    masks = {
        "retry_after_scored": nw.col("_prev_scored"),
        "retry_after_ineligible": ~nw.col("_prev_scored") & nw.col("_prev_ineligible"),
        "attempt_gap": nw.col("_gap"),
    }
    if options.max_attempts is not None:
        masks["attempt_beyond_max"] = nw.col(ATTEMPT) > options.max_attempts
    details = retry_flag_details(options.retry_on, options.max_attempts)
    flags = checked(lf, [(mask, kind, _lit(details[kind])) for kind, mask in masks.items()], keys=keys, refusing=strict)
    helpers = [c for c in lf.collect_schema().names() if c.startswith("_")]
    return Selection(lf.drop(*helpers), flags)


def outcome() -> nw.Expr:
    """One outcome per unit row, as :func:`evalframe.funnel.outcome_expr` (text, not an Enum)."""
    ex, sc = nw.col(EXEC_STATUS), nw.col(SCORE_STATUS)
    return (
        nw.when(ex.is_null())
        .then(_lit("missing"))
        .when(ex == "not_started")
        .then(_lit("not_started"))
        .when(ex.is_in(list(EXEC_FAILURES)))
        .then(_lit("exec_failed"))
        .when(~nw.col(HAS_OUTPUT).fill_null(True))
        .then(_lit("no_output"))
        .when(sc == "judge_error")
        .then(_lit("judge_failed"))
        .when(sc != "scored")
        .then(_lit("not_scored"))
        .when(nw.col(PASSED).is_null())
        .then(_lit("scored_no_threshold"))
        .when(nw.col(PASSED))
        .then(_lit("passed"))
        .otherwise(_lit("failed"))
    )


def unit_outcomes(planned: Lazy, attempts: Lazy, plan_columns: Sequence[str]) -> Lazy:
    """Planned units (with their plan columns) joined to their counted attempt(s), each with its outcome.

    A ledger column named like a plan column becomes ``<name>_right``, as in the polars units table.
    """
    counted = attempts.filter(nw.col(COUNTS)).drop(COUNTS).rename({ATTEMPT: COUNTED_ATTEMPT})
    clash = [c for c in counted.collect_schema().names() if c in plan_columns and c not in _UNIT]
    counted = counted.rename({c: f"{c}_right" for c in clash})
    joined = planned.join(counted, on=_UNIT, how="left")
    return joined.with_columns(nw.col(ATTEMPTS).fill_null(0), outcome().alias("outcome"))


def outcome_counts(units: Lazy) -> Lazy:
    """Units per candidate and outcome (the input of :func:`evalframe.funnel.funnel_from_outcome_counts`)."""
    return units.group_by(CANDIDATE, "outcome").agg(nw.len().alias("n"))


#: :func:`case_sums` with ``outcomes``: the column counting a case's units of each outcome is this prefix and the
#: outcome (``n_passed``, ...).
OUTCOME_COUNT = "n_"


def case_sums(units: Lazy, *, outcomes: bool = False) -> Lazy:
    """Per candidate and case, the sums of :func:`evalframe.funnel.case_sums`, plus its missing units.

    With ``outcomes``, also the case's units of each outcome (Int64 ``n_<outcome>``, see :data:`OUTCOME_COUNT`):
    what the slice funnel adds up by the case's slice values.
    """
    o = nw.col("outcome")
    graded = o.is_in(["passed", "failed", "scored_no_threshold"])
    completed = o.is_in(["no_output", "judge_failed", "not_scored", "scored_no_threshold", "failed", "passed"])
    scored_score = graded & ~nw.col(SCORE).is_null()
    as_float = nw.Float64()
    return units.group_by(CANDIDATE, CASE_ID).agg(
        nw.len().cast(as_float).alias("observations"),
        completed.cast(nw.Int64()).sum().cast(as_float).alias("completed"),
        graded.cast(nw.Int64()).sum().cast(as_float).alias("scored"),
        (o == "passed").cast(nw.Int64()).sum().cast(as_float).alias("passed"),
        nw.when(scored_score).then(nw.col(SCORE)).otherwise(0.0).sum().cast(as_float).alias("_score_sum"),
        scored_score.cast(nw.Int64()).sum().cast(as_float).alias("_score_n"),
        (o == "missing").cast(nw.Int64()).sum().alias("_missing"),
        *(((o == name).cast(nw.Int64()).sum().alias(OUTCOME_COUNT + name)) for name in (OUTCOMES if outcomes else ())),
    )


def case_patterns(per_case: Lazy, by: Sequence[str] = ()) -> Lazy:
    """Per candidate (and ``by``), the number of cases (``cases``) with each set of :func:`case_sums`' sums.

    What :func:`evalframe.funnel.uncertainty_from_case_patterns` finishes on the driver: a few rows per
    candidate with pass/fail grades, however many cases. With ``by`` (a case's slice label), the outcome
    counts ``n_<outcome>`` are added up too, and the missing units counted: what the slice funnel and the
    missingness tests need, per candidate and slice value.
    """
    names = per_case.collect_schema().names()
    counted = [c for c in names if c.startswith(OUTCOME_COUNT)] if by else []
    key = [CANDIDATE, *by, *CASE_SUM_COLUMNS, *(["_missing"] if by else [])]
    return per_case.group_by(*key).agg(nw.len().alias(CASES), *(nw.col(c).sum() for c in counted))
