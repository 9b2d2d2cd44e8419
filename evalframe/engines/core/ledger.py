"""The canonical ledger of a typed ledger: its columns parsed from their tokens, and its row checks.

The checks and their details are those of :mod:`evalframe.validate` and :class:`evalframe.schemas.LedgerModel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw

from evalframe.columns import (
    ANSWER,
    ATTEMPT,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    EXEC_STATUS,
    EXEC_STATUSES,
    HAS_OUTPUT,
    LIMIT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SCORE_STATUSES,
    SOURCE,
    TEXT_COLUMNS,
    TRIAL,
)
from evalframe.engines.core.rows import Lazy, Options, _Check, _lit, _text, checked

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
    #: :func:`evalframe.engines.core.identity` to run in its one pass over the ledger's rows.
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
    typed = _schema_checks() + (_status_checks() if shape == "status" else [])
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
            (
                bad,
                "invalid_grade",
                nw.concat_str([_lit("passed = "), _quoted(PASSED, schema[PASSED]), _lit(" is not exactly 0 or 1")]),
            )
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
                [
                    _lit("score = "),
                    _quoted(SCORE, schema[SCORE]),
                    _lit(" is not exactly 0 or 1 (scores in a range: --grade numeric)"),
                ]
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
                [_lit("score = "), _quoted(SCORE, schema[SCORE]), _lit(f" is not a finite number in [{low}, {high}]")]
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


def _schema_checks() -> list[_Check]:
    """The checks of :class:`evalframe.schemas.LedgerModel` on the canonical ledger, with its kinds and details."""

    def fails(name: str, check: str) -> nw.Expr:
        return nw.concat_str([_lit(f"{name} = "), _text(name), _lit(f" fails check {check}")])

    checks: list[_Check] = []
    for name in (CANDIDATE, CASE_ID, TRIAL, ATTEMPT, EXEC_STATUS, SCORE_STATUS):
        checks.append((nw.col(name).is_null() & ~nw.col(AT_TOKEN), "empty_value", fails(name, "not_nullable")))
    for name in (CANDIDATE, CASE_ID, RUN_ID):
        c = nw.col(name)
        checks.append((c == "", "empty_identifier", fails(name, "empty_identifier")))
        padded = c.str.strip_chars(WHITESPACE).str.len_chars() != c.str.len_chars()
        checks.append((padded, "padded_identifier", fails(name, "padded_identifier")))
    for name, low in ((TRIAL, 0), (ATTEMPT, 1)):
        c = nw.col(name)
        checks.append((c < low, "invalid_integer", fails(name, f"greater_than_or_equal_to({low})")))
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
    return [(valid & mask & ~nw.col(AT_TOKEN), "status_inconsistent", _lit(text)) for mask, text in rules]
