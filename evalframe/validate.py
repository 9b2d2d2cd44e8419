"""Turn a raw ledger (any of the three shapes) into the canonical ledger, with problems.

Three ledger shapes are one canonical ledger (SPEC §1):

* **grades**: ``candidate, case_id, passed`` (or ``score``) — every row is a
  completed, scored attempt;
* **status ledger**: ``exec_status`` plus ``score_status`` and
  ``score``/``passed`` (optional ``has_output``);
* **answers**: ``answer``, exact-matched against the plan's ``expected``.

Any shape may carry ``trial``, ``attempt`` (default 1), ``run_id``,
``dataset_version``, ``case_hash`` and ``limit``. Values are parsed strictly
from their tokens (a binary grade is exactly ``0`` or ``1``), then the canonical
frame is validated with pandera (see :mod:`evalframe.schemas`).

The canonical ledger has the columns of :data:`CANONICAL_SCHEMA`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ANSWER,
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    DETAIL,
    EXEC_STATUS,
    EXEC_STATUSES,
    HAS_OUTPUT,
    KIND,
    LIMIT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    TRIAL,
    GradeKind,
)
from evalframe.load import collect_input
from evalframe.plan import RESERVED_COLUMNS, Plan
from evalframe.problems import concat_problems, problems_frame
from evalframe.schemas import LedgerModel, failures_as_problems

#: Columns (and dtypes) of the canonical ledger: one row per attempt.
CANONICAL_SCHEMA: Final = pl.Schema(
    {
        CANDIDATE: pl.String,
        CASE_ID: pl.String,
        TRIAL: pl.Int64,
        ATTEMPT: pl.Int64,
        RUN_ID: pl.String,
        EXEC_STATUS: pl.String,
        SCORE_STATUS: pl.String,
        SCORE: pl.Float64,
        PASSED: pl.Boolean,
        HAS_OUTPUT: pl.Boolean,
        ANSWER: pl.String,
        LIMIT: pl.String,
        DATASET_VERSION: pl.String,
        CASE_HASH: pl.String,
        LINE: pl.Int64,
        SOURCE: pl.String,
    }
)

#: Problem kinds about a ledger file as a whole (its columns), not about a row.
FILE_PROBLEMS: Final = ("unexpected_column", "missing_column", "missing_expected")

#: Columns a ledger file may have.
KNOWN_COLUMNS: Final = frozenset(CANONICAL_SCHEMA.names())
#: Names an extra column may not have besides the ledger's own: the columns the audit adds per unit.
RESERVED_EXTRA: Final = frozenset(RESERVED_COLUMNS)

_INT_TOKEN = r"^[1-9][0-9]*$"
_BOOL_TOKENS: Final = {"true": True, "false": False, "1": True, "0": False}
#: Legacy spelling accepted for ``score_status`` (used by some generators).
_SCORE_STATUS_ALIASES: Final = {"unscored": "not_scored"}


@dataclass(frozen=True)
class Validated:
    """The canonical ledger and every problem found producing it.

    Attributes
    ----------
    ledger
        Rows whose values could be parsed, with the columns of
        :data:`CANONICAL_SCHEMA` (rows with problems are kept; the problems
        decide whether the batch is refused).
    problems
        Problems table (see :mod:`evalframe.problems`).
    shape
        ``grades``, ``status`` or ``answers``.
    """

    ledger: pl.DataFrame
    problems: pl.DataFrame
    shape: str


def _bad(mask: pl.Expr, kind: str, detail: pl.Expr) -> tuple[pl.Expr, str, pl.Expr]:
    """A token check: rows where ``mask`` is true have a problem of ``kind`` described by ``detail``."""
    return mask.fill_null(False), kind, detail


def _grade_token(col: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """Return (parsed Boolean, invalid mask) for a binary grade column."""
    c = pl.col(col)
    if dtype == pl.Boolean:
        return c, pl.lit(False)
    if dtype.is_integer():
        return (c == 1), c.is_not_null() & ~c.is_in([0, 1])
    if dtype.is_float():
        return (c == 1.0), c.is_not_null() & (c.is_nan() | ~c.is_in([0.0, 1.0]))
    s = c.cast(pl.String)
    return s.replace_strict({"1": True, "0": False}, default=None, return_dtype=pl.Boolean), s.is_not_null() & ~s.is_in(
        ["0", "1"]
    )


def _score_token(col: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """Return (parsed Float64, unparseable mask) for a numeric score column."""
    c = pl.col(col)
    if dtype == pl.Boolean:
        return c.cast(pl.Float64), pl.lit(False)
    if dtype.is_numeric():
        f = c.cast(pl.Float64)
        return f, pl.lit(False)
    s = c.cast(pl.String)
    f = s.cast(pl.Float64, strict=False)
    # A token must be a plain number: no padding, not 'nan'/'inf' spelled out.
    plain = s.str.contains(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
    return f, s.is_not_null() & (f.is_null() | ~plain)


def _int_token(col: str, dtype: pl.DataType, *, allow_zero: bool = False) -> tuple[pl.Expr, pl.Expr]:
    c = pl.col(col)
    if dtype.is_integer():
        return c.cast(pl.Int64), pl.lit(False)
    s = c.cast(pl.String)
    parsed = s.cast(pl.Int64, strict=False)
    # Digits beyond Int64 are not a number evalframe reads (a null there would be reported as an empty value).
    ok = (s.str.contains(_INT_TOKEN) | ((s == "0") if allow_zero else pl.lit(False))) & parsed.is_not_null()
    return pl.when(ok).then(parsed), s.is_null() | ~ok


def _bool_token(col: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    c = pl.col(col)
    if dtype == pl.Boolean:
        return c, pl.lit(False)
    if dtype.is_integer():
        return c == 1, c.is_not_null() & ~c.is_in([0, 1])
    s = c.cast(pl.String)
    return s.replace_strict(_BOOL_TOKENS, default=None, return_dtype=pl.Boolean), s.is_not_null() & ~s.is_in(
        list(_BOOL_TOKENS)
    )


def validate_ledger(
    raw: pl.DataFrame | pl.LazyFrame,
    plan: Plan,
    *,
    grade: GradeKind = "binary",
    score_range: tuple[float, float] = (0.0, 1.0),
    pass_threshold: float | None = None,
    extra_columns: Sequence[str] = (),
) -> Validated:
    """Parse and validate a raw ledger into the canonical ledger.

    Parameters
    ----------
    raw
        The ledger as loaded (see :mod:`evalframe.load`): one row per
        attempt; ``line`` and ``source`` columns are used when present.
    plan
        The plan (for ``expected`` answers and a single implicit candidate).
    grade
        ``binary``: ``passed``/``score`` must be exactly 0 or 1.
        ``numeric``: ``score`` is a finite number in ``score_range``; a unit
        passes when ``score >= pass_threshold`` (null when no threshold).
    score_range
        Inclusive (low, high) bounds of a numeric score.
    pass_threshold
        Declared pass threshold for numeric scores.
    extra_columns
        Ledger columns declared as extra (SPEC §3: model output, prompt,
        latency, tokens, cost): carried after the canonical columns with
        their values and types untouched, never checked or parsed. Any other
        column is ``unexpected_column``; a declared name that is a ledger
        column or an evalframe column refuses as ``unexpected_column`` too.
        A declared column the ledger lacks is a ``missing_column``.

    Returns
    -------
    Validated
        The canonical ledger (with ``extra_columns`` after its own) and the problems found (kinds
        ``missing_column``, ``unexpected_column``, ``invalid_grade``,
        ``invalid_score``, ``invalid_integer``, ``invalid_status``,
        ``empty_value``, ``empty_identifier``, ``padded_identifier``,
        ``status_inconsistent``, ``missing_expected``).

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["quote"]}), candidates=["A"])
    >>> raw = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["quote", "quote"], "passed": ["1", "true"]})
    >>> v = validate_ledger(raw, plan)
    >>> v.problems.select("kind", "line", "detail").to_dicts()
    [{'kind': 'invalid_grade', 'line': 2, 'detail': "passed = 'true' is not exactly 0 or 1"}]
    """
    frame = collect_input(raw, "results") if isinstance(raw, pl.LazyFrame) else raw
    source_name = "results"
    if LINE not in frame.columns:
        frame = frame.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
    if SOURCE not in frame.columns:
        frame = frame.with_columns(pl.lit(source_name, pl.String).alias(SOURCE))
    only = only_value(frame, SOURCE)
    where = only if only is not None else source_name
    structural: list[dict[str, object]] = []
    extras = list(dict.fromkeys(extra_columns))
    for name in extras:
        if name in KNOWN_COLUMNS or name in RESERVED_EXTRA:
            structural.append(
                {
                    "kind": "unexpected_column",
                    "source": where,
                    "detail": f"{name!r} is a column evalframe reads or writes itself: it cannot be an extra column",
                }
            )
        elif name not in frame.columns:
            structural.append(
                {"kind": "missing_column", "source": where, "detail": f"declared extra column {name!r} is absent"}
            )
    for name in frame.columns:
        if name not in KNOWN_COLUMNS and name not in extras:
            structural.append(
                {
                    "kind": "unexpected_column",
                    "source": where,
                    "line": 1 if where.endswith(".csv") else None,
                    "detail": f"column {name!r} is not a ledger column (declare it as an extra column to carry it)",
                }
            )
    cols = set(frame.columns)
    if CANDIDATE not in cols:
        if len(plan.candidates) == 1:
            frame = frame.with_columns(pl.lit(plan.candidates[0], pl.String).alias(CANDIDATE))
        else:
            structural.append(
                {
                    "kind": "missing_column",
                    "source": where,
                    "detail": "no candidate column and the plan has several candidates",
                }
            )
    if CASE_ID not in cols:
        structural.append({"kind": "missing_column", "source": where, "detail": "no case_id column"})
    if EXEC_STATUS in cols:
        shape = "status"
    elif ANSWER in cols:
        shape = "answers"
    elif PASSED in cols or SCORE in cols:
        shape = "grades"
    else:
        shape = "unknown"
        structural.append(
            {
                "kind": "missing_column",
                "source": where,
                "detail": "no grade column: need one of passed, score, answer, exec_status",
            }
        )
    if shape == "answers" and (plan.cases.get_column("expected", default=None) is None):
        structural.append(
            {"kind": "missing_expected", "source": where, "detail": "answers given but the plan has no expected column"}
        )
    if structural:
        return Validated(frame.select([]), concat_problems([problems_frame(structural)]), shape)

    schema = frame.schema
    checks: list[tuple[pl.Expr, str, pl.Expr]] = []
    exprs: dict[str, pl.Expr] = {}
    exprs[CANDIDATE] = pl.col(CANDIDATE).cast(pl.String)
    exprs[CASE_ID] = pl.col(CASE_ID).cast(pl.String)
    for name in (TRIAL, ATTEMPT):
        if name in cols:
            # A trial is an identity checked against the plan (0-based plans exist); an attempt counts from 1.
            parsed, bad = _int_token(name, schema[name], allow_zero=name == TRIAL)
            exprs[name] = parsed
            checks.append(
                _bad(
                    bad,
                    "invalid_integer",
                    pl.format(
                        "{} = {} is not a positive integer",
                        pl.lit(name),
                        pl.col(name).cast(pl.String).fill_null("null"),
                    ),
                )
            )
        else:
            exprs[name] = pl.lit(1, pl.Int64)
    for name in (RUN_ID, DATASET_VERSION, CASE_HASH, LIMIT, ANSWER):
        exprs[name] = pl.col(name).cast(pl.String) if name in cols else pl.lit(None, pl.String)

    passed_expr: pl.Expr = pl.lit(None, pl.Boolean)
    score_expr: pl.Expr = pl.lit(None, pl.Float64)
    if PASSED in cols:
        passed_expr, bad = _grade_token(PASSED, schema[PASSED])
        nullbad = pl.col(PASSED).is_null() if shape == "grades" else pl.lit(False)
        if shape != "grades":  # in a status ledger an empty field means 'no grade'
            passed_expr, bad = _empty_is_null(PASSED, schema, passed_expr, bad)
        checks.append(
            _bad(bad | nullbad, "invalid_grade", pl.format("passed = {} is not exactly 0 or 1", _repr(PASSED)))
        )
        score_expr = passed_expr.cast(pl.Float64)
    if SCORE in cols:
        parsed, unparseable = _score_token(SCORE, schema[SCORE])
        if shape != "grades":
            parsed, unparseable = _empty_is_null(SCORE, schema, parsed, unparseable)
        low, high = score_range
        if grade == "binary":
            bad = unparseable | (parsed.is_not_null() & (parsed.is_nan() | ~parsed.is_in([0.0, 1.0])))
            if shape == "grades" and PASSED not in cols:
                bad = bad | pl.col(SCORE).is_null()
            checks.append(
                _bad(
                    bad,
                    "invalid_grade",
                    pl.format("score = {} is not exactly 0 or 1 (scores in a range: --grade numeric)", _repr(SCORE)),
                )
            )
            if PASSED not in cols:
                passed_expr = parsed == 1.0
        else:
            bad = unparseable | (
                parsed.is_not_null() & (parsed.is_nan() | parsed.is_infinite() | (parsed < low) | (parsed > high))
            )
            if shape == "grades" and PASSED not in cols:
                bad = bad | pl.col(SCORE).is_null()
            checks.append(
                _bad(
                    bad,
                    "invalid_score",
                    pl.format("score = {} is not a finite number in [{}, {}]", _repr(SCORE), pl.lit(low), pl.lit(high)),
                )
            )
            if pass_threshold is not None:
                # A declared threshold decides where the export gave no pass/fail of its own.
                passed_expr = pl.coalesce(passed_expr, parsed >= pass_threshold)
        score_expr = parsed

    if shape == "status":
        exprs[EXEC_STATUS] = pl.col(EXEC_STATUS).cast(pl.String)
        if SCORE_STATUS in cols:
            exprs[SCORE_STATUS] = pl.col(SCORE_STATUS).cast(pl.String).replace(_SCORE_STATUS_ALIASES)
        else:
            exprs[SCORE_STATUS] = (
                pl.when(score_expr.is_not_null()).then(pl.lit("scored")).otherwise(pl.lit("not_scored"))
            )
        if HAS_OUTPUT in cols:
            parsed, bad = _empty_is_null(HAS_OUTPUT, schema, *_bool_token(HAS_OUTPUT, schema[HAS_OUTPUT]))
            exprs[HAS_OUTPUT] = parsed.fill_null(pl.col(EXEC_STATUS) == "completed")
            checks.append(
                _bad(bad, "invalid_grade", pl.format("has_output = {} is not true/false/1/0", _repr(HAS_OUTPUT)))
            )
        else:
            exprs[HAS_OUTPUT] = pl.col(EXEC_STATUS) == "completed"
        for name in (EXEC_STATUS, SCORE_STATUS):
            if name in cols and schema[name] == pl.String:
                checks.append(_bad(pl.col(name) == "", "empty_value", pl.lit(f"empty {name}")))
    else:
        exprs[EXEC_STATUS] = pl.lit("completed")
        exprs[SCORE_STATUS] = pl.lit("scored")
        exprs[HAS_OUTPUT] = pl.lit(True)
    if shape == "answers":
        checks.append(
            _bad(
                pl.col(ANSWER).is_null() | (pl.col(ANSWER).cast(pl.String) == ""), "empty_value", pl.lit("empty answer")
            )
        )
    exprs[SCORE] = score_expr
    exprs[PASSED] = passed_expr
    exprs[LINE] = pl.col(LINE)
    exprs[SOURCE] = pl.col(SOURCE)

    # Masks run over every row; details are formatted only for the (few) flagged rows.
    flagged = frame.filter(pl.any_horizontal([m for m, _, _ in checks])) if checks else frame.head(0)
    token_problems = pl.concat(
        [
            flagged.filter(mask).select(
                pl.lit(kind).alias(KIND),
                pl.col(CANDIDATE).cast(pl.String),
                pl.col(CASE_ID).cast(pl.String),
                LINE,
                SOURCE,
                detail.alias(DETAIL),
            )
            for mask, kind, detail in checks
        ]
        or [pl.DataFrame(schema={KIND: pl.String, DETAIL: pl.String})],
        how="diagonal",
    )
    canonical = frame.select(
        *(exprs[name].cast(dtype).alias(name) for name, dtype in CANONICAL_SCHEMA.items()), *map(pl.col, extras)
    )
    if shape == "answers":
        expected = plan.cases.select(CASE_ID, pl.col("expected").cast(pl.String).alias("_expected"))
        canonical = (
            canonical.join(expected, on=CASE_ID, how="left", maintain_order="left")
            .with_columns(
                (pl.col(ANSWER) == pl.col("_expected")).alias(PASSED),
            )
            .with_columns(pl.col(PASSED).cast(pl.Float64).alias(SCORE))
            .drop("_expected")
        )
    schema_problems = failures_as_problems(canonical, LedgerModel)
    if schema_problems.height and token_problems.height:
        # A token that did not parse is null in the canonical frame; don't report it twice.
        schema_problems = schema_problems.filter(
            (pl.col(KIND) != "empty_value")
            | ~pl.struct(LINE, SOURCE).is_in(token_problems.select(pl.struct(LINE, SOURCE)).to_series().implode())
        )
    consistency = _status_problems(canonical) if shape == "status" else None
    problems = concat_problems([token_problems, schema_problems] + ([consistency] if consistency is not None else []))
    return Validated(canonical, problems, shape)


def only_value(frame: pl.DataFrame, name: str) -> Any:
    """The value every row of ``frame`` has in column ``name``, or None (no rows, a null, or two values).

    Each row is compared with the first, in one query run without the GIL: no value is hashed (a
    ``unique`` of a text column hashes every row; 500k rows of one file name, about 10 ms).
    """
    col = pl.col(name)
    no_null, same, first = (
        frame.lazy()
        .select((col.null_count() == 0).alias("_no_null"), (col == col.first()).all().alias("_same"), col.first())
        .collect()
        .row(0)
    )
    return first if frame.height and no_null and same else None


def _empty_is_null(name: str, schema: pl.Schema, parsed: pl.Expr, bad: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Read an empty String field as null (not as a bad token)."""
    if schema[name] != pl.String:
        return parsed, bad
    empty = pl.col(name) == ""
    return pl.when(empty).then(None).otherwise(parsed), bad & ~empty


def _repr(name: str) -> pl.Expr:
    """A column's value quoted for a detail message (``'x'``, or ``null``)."""
    s = pl.col(name).cast(pl.String)
    return pl.when(s.is_null()).then(pl.lit("null")).otherwise(pl.concat_str([pl.lit("'"), s, pl.lit("'")]))


def _status_problems(ledger: pl.DataFrame) -> pl.DataFrame:
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
