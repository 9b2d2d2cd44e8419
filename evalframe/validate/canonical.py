"""The canonical ledger of a raw ledger and its row checks, written once in narwhals for every engine.

The columns are parsed strictly from their tokens (text as a CSV gives it, or typed values as Parquet or a
table gives them).

:func:`evalframe.validate.validate_ledger` runs it on polars, :mod:`evalframe.engines` on Spark. The checks of
the typed rows are those :class:`evalframe.schemas.LedgerModel` declares (pandera runs that model on polars;
:func:`_schema_checks` words its failures the same way for the lazy engines).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import (
    ANSWER,
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUS,
    EXEC_STATUSES,
    HAS_OUTPUT,
    LINE,
    PASSED,
    SCORE,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    TEXT_COLUMNS,
    TRIAL,
)
from evalframe.validate.rows import Lazy, Options, _Check, _lit, _text, checked
from evalframe.validate.shape import CANONICAL_SCHEMA

#: Canonical ledger columns (:data:`evalframe.validate.CANONICAL_SCHEMA`) and their narwhals types.
CANONICAL: dict[str, Any] = dict(nw.from_native(pl.DataFrame(schema=CANONICAL_SCHEMA), eager_only=True).schema)

_INT_TOKEN = r"^[1-9][0-9]*$"

#: The white space an identifier may not start or end with: Unicode's, which polars strips by default (narwhals
#: strips only ASCII white space on Spark unless told).
WHITESPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"

#: A helper column of the canonical ledger: the row has a token problem (a value that did not parse).
AT_TOKEN = "_at_token"


def _quoted(name: str, dtype: Any) -> nw.Expr:
    """A column's value quoted for a detail message (``'x'``, or ``null``), as :func:`evalframe.validate._repr`.

    Infinities are spelled as polars spells them (``inf``, ``-inf``; Spark's text is ``Infinity``).
    """
    c = nw.col(name)
    s = c.cast(nw.String())
    if dtype.is_float():
        s = nw.when(c == float("inf")).then(_lit("inf")).when(c == float("-inf")).then(_lit("-inf")).otherwise(s)
    return nw.when(s.is_null()).then(_lit("null")).otherwise(nw.concat_str([_lit("'"), s, _lit("'")]))


def _flag(
    name: str, dtype: Any, trues: list[str], falses: list[str], *, floats: bool
) -> tuple[nw.Expr, nw.Expr | None]:
    """(parsed Boolean, invalid mask) of a 0/1 column (None: no value can be invalid).

    Integers must be 0 or 1, floats too when ``floats`` (else a float is read as its text), texts one of
    ``trues`` or ``falses``: ``passed`` is ``_flag(PASSED, dtype, ["1"], ["0"], floats=True)``, ``has_output``
    also takes ``true``/``false`` and no float.
    """
    c = nw.col(name)
    if dtype == nw.Boolean:
        return c, None
    if dtype.is_integer():
        return c == 1, ~c.is_null() & ~c.is_in([0, 1])
    if floats and dtype.is_float():
        return c == 1.0, ~c.is_null() & (c.is_nan() | ~c.is_in([0.0, 1.0]))
    s = c.cast(nw.String())
    parsed = nw.when(s.is_in(trues)).then(_lit(True)).when(s.is_in(falses)).then(_lit(False))
    return parsed.otherwise(_lit(None, nw.Boolean())), ~s.is_null() & ~s.is_in([*trues, *falses])


#: A score token: a plain number (no padding, not ``nan``/``inf`` spelled out).
_NUMBER_TOKEN = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _score(name: str, dtype: Any) -> tuple[nw.Expr, nw.Expr | None]:
    """(parsed Float64, unparseable mask) of a score column; a number or Boolean column needs no token check."""
    c = nw.col(name)
    if dtype.is_numeric() or dtype == nw.Boolean:
        return c.cast(nw.Float64()), None
    s = c.cast(nw.String())
    plain = s.str.contains(_NUMBER_TOKEN).fill_null(False)
    return nw.when(plain).then(s).cast(nw.Float64()), ~s.is_null() & ~plain


def _empty_is_null(name: str, dtype: Any, parsed: nw.Expr, bad: nw.Expr | None) -> tuple[nw.Expr, nw.Expr | None]:
    """An empty text field read as null ("no value"), not as a bad token."""
    if dtype != nw.String:
        return parsed, bad
    empty = (nw.col(name) == "").fill_null(False)
    return nw.when(~empty).then(parsed), None if bad is None else bad & ~empty


def _integer(name: str, dtype: Any, *, allow_zero: bool) -> tuple[nw.Expr, nw.Expr | None]:
    """(parsed Int64, invalid mask) of a trial or attempt column: a positive integer (``0`` too when ``allow_zero``).

    Digits beyond Int64 (text, or an unsigned 64-bit value) are not a number evalframe reads.
    """
    c = nw.col(name)
    if dtype == nw.UInt64:
        fits = c <= 2**63 - 1
        return nw.when(fits).then(c).cast(nw.Int64()), ~c.is_null() & ~fits.fill_null(True)
    if dtype.is_integer():
        return c.cast(nw.Int64()), None
    s = c.cast(nw.String())
    ok = (s.str.contains(_INT_TOKEN) | ((s == "0") if allow_zero else _lit(False))) & ~_beyond_int64(s)
    return nw.when(ok.fill_null(False)).then(s).cast(nw.Int64()), s.is_null() | ~ok.fill_null(False)


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
    """A ledger in canonical columns, the row problems found making it and the checks of its typed rows."""

    ledger: Lazy
    problems: list[Lazy]
    #: The checks of the typed ledger's rows (:class:`evalframe.schemas.LedgerModel`'s, the statuses'), for
    #: :func:`evalframe.engines.core.identity` to run in its one pass over the ledger's rows.
    checks: list[_Check]


def canonical(
    frame: Lazy, shape: str, options: Options, expected: Lazy | None, only_candidate: str | None
) -> Canonical:
    """The canonical ledger of a ledger whose columns passed the structural checks, with its row problems.

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
    statuses, token_status_checks = _status_columns(schema, shape, score)
    exprs.update(statuses)
    checks += grade_checks + token_status_checks
    if shape == "answers":
        answer = nw.col(ANSWER).cast(nw.String())
        checks.append((answer.is_null() | (answer == ""), "empty_value", _lit("empty answer")))
    exprs[SCORE], exprs[PASSED] = score, passed
    exprs[LINE], exprs[SOURCE] = nw.col(LINE).cast(nw.Int64()), nw.col(SOURCE).cast(nw.String())
    found = checked(
        frame, checks, keys=(CANDIDATE, CASE_ID, LINE, SOURCE), parsed={k: exprs[k] for k in (TRIAL, ATTEMPT)}
    )
    # A token that did not parse is null in the canonical ledger: its row's "empty value" and status
    # contradictions are that one problem, reported once (as evalframe.validate.validate_ledger does).
    at_token = nw.any_horizontal(*(mask.fill_null(False) for mask, _, _ in checks), ignore_nulls=False)
    ledger = frame.select(
        *(exprs[name].cast(dtype).alias(name) for name, dtype in CANONICAL.items()),
        *options.extra_columns,
        (at_token if checks else _lit(False, nw.Boolean())).alias(AT_TOKEN),
    )
    if shape == "answers" and expected is not None:
        ledger = (
            ledger.join(expected, on=CASE_ID, how="left")
            .with_columns((nw.col(ANSWER) == nw.col("_expected")).alias(PASSED))
            .with_columns(nw.col(PASSED).cast(nw.Float64()).alias(SCORE))
            .drop("_expected")
        )
    typed = _schema_checks() + (status_checks() if shape == "status" else [])
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
    """(score, passed, checks) of the ``passed`` and ``score`` columns: the canonical grade and its token checks.

    In a grades ledger every row must carry a grade; in a status or answers ledger an empty field means
    "no grade" (null). A binary grade is exactly 0 or 1; a numeric score is a finite number in
    ``options.score_range``, and passes when it reaches ``options.pass_threshold`` where the export gave no
    pass/fail of its own.
    """
    cols = set(schema.names())
    required = shape == "grades"
    checks: list[_Check] = []
    passed: nw.Expr = _lit(None, nw.Boolean())
    score: nw.Expr = _lit(None, nw.Float64())
    if PASSED in cols:
        passed, token_bad = _flag(PASSED, schema[PASSED], ["1"], ["0"], floats=True)
        if not required:
            passed, token_bad = _empty_is_null(PASSED, schema[PASSED], passed, token_bad)
        bad = _or(token_bad, nw.col(PASSED).is_null() if required else None)
        if bad is not None:
            detail = nw.concat_str([_lit("passed = "), _quoted(PASSED, schema[PASSED]), _lit(" is not exactly 0 or 1")])
            checks.append((bad, "invalid_grade", detail))
        score = passed.cast(nw.Float64())
    if SCORE not in cols:
        return score, passed, checks
    parsed, unparseable = _score(SCORE, schema[SCORE])
    if not required:
        parsed, unparseable = _empty_is_null(SCORE, schema[SCORE], parsed, unparseable)
    missing = nw.col(SCORE).is_null() if required and PASSED not in cols else None
    quoted = _quoted(SCORE, schema[SCORE])
    if options.grade == "binary":
        out = ~parsed.is_null() & (parsed.is_nan() | ~parsed.is_in([0.0, 1.0]))
        detail = nw.concat_str(
            [_lit("score = "), quoted, _lit(" is not exactly 0 or 1 (scores in a range: --grade numeric)")]
        )
        checks.append((_or(_or(unparseable, out), missing), "invalid_grade", detail))
        if PASSED not in cols:
            passed = parsed == 1.0
    else:
        low, high = options.score_range
        finite = ~parsed.is_nan() & (parsed.abs() < float("inf"))
        out = ~parsed.is_null() & (~finite | (parsed < low) | (parsed > high))
        detail = nw.concat_str([_lit("score = "), quoted, _lit(f" is not a finite number in [{low}, {high}]")])
        checks.append((_or(_or(unparseable, out), missing), "invalid_score", detail))
        if options.pass_threshold is not None:
            # A declared threshold decides where the export gave no pass/fail of its own.
            passed = nw.coalesce(passed, parsed >= options.pass_threshold)
    return parsed, passed, checks


def _or(a: nw.Expr | None, b: nw.Expr | None) -> Any:
    """``a | b``, either left out when None (a mask that never fires)."""
    return b if a is None else a if b is None else a | b


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
    checks: list[_Check] = [
        (nw.col(name) == "", "empty_value", _lit(f"empty {name}"))
        for name in (EXEC_STATUS, SCORE_STATUS)
        if name in cols and schema[name] == nw.String
    ]
    if HAS_OUTPUT in cols:
        dtype = schema[HAS_OUTPUT]
        parsed, bad = _empty_is_null(
            HAS_OUTPUT, dtype, *_flag(HAS_OUTPUT, dtype, ["true", "1"], ["false", "0"], floats=False)
        )
        exprs[HAS_OUTPUT] = nw.coalesce(parsed, completed)
        if bad is not None:
            detail = nw.concat_str([_lit("has_output = "), _quoted(HAS_OUTPUT, dtype), _lit(" is not true/false/1/0")])
            checks.append((bad, "invalid_grade", detail))
    else:
        exprs[HAS_OUTPUT] = completed
    return exprs, checks


def _schema_checks() -> list[_Check]:
    """The checks :class:`evalframe.schemas.LedgerModel` declares, on the canonical ledger, for the lazy engines.

    The columns, their nullability, bounds and vocabularies are read from the model (pandera validates it on
    polars); each check is worded as :func:`evalframe.schemas.failures_as_problems` words a pandera failure:
    ``<column> = <value> fails check <check>``, of the kind :data:`evalframe.schemas.KIND_OF_CHECK` names.
    """
    from evalframe.schemas import KIND_OF_CHECK, LedgerModel  # imported on use: pandera is slow to import

    def fails(name: str, check: str) -> nw.Expr:
        return nw.concat_str([_lit(f"{name} = "), _text(name), _lit(f" fails check {check}")])

    checks: list[_Check] = []
    for name, column in LedgerModel.to_schema().columns.items():
        c = nw.col(name)
        if not column.nullable:
            checks.append((c.is_null() & ~nw.col(AT_TOKEN), KIND_OF_CHECK["not_nullable"], fails(name, "not_nullable")))
        for declared in column.checks:
            if declared.name == "empty_identifier":
                mask = c == ""
            elif declared.name == "padded_identifier":
                mask = c.str.strip_chars(WHITESPACE).str.len_chars() != c.str.len_chars()
            elif declared.name == "greater_than_or_equal_to":
                mask = c < declared.statistics["min_value"]
            elif declared.name == "isin":
                mask = ~c.is_null() & ~c.is_in(list(declared.statistics["allowed_values"]))
            else:  # a check added to the model must be given its lazy form here
                msg = f"LedgerModel check {declared.name!r} has no narwhals form"
                raise NotImplementedError(msg)
            checks.append((mask, KIND_OF_CHECK[declared.name], fails(name, declared.error or declared.name)))
    return checks


def status_checks() -> list[_Check]:
    """Rows whose statuses contradict their score (SPEC §3 status consistency), a token problem's row left out."""
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
    return [(valid & mask & ~nw.col(AT_TOKEN), "status_inconsistent", _lit(text)) for mask, text in rules]
