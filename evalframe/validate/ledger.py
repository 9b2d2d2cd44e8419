"""The canonical ledger: its schema, and :func:`validate_ledger`, which turns a raw ledger into it.

The steps are in the modules beside this one: which shape the ledger has
and which columns are wrong (:mod:`~evalframe.validate.shape`), grade tokens
(:mod:`~evalframe.validate.grades`), statuses and their consistency
(:mod:`~evalframe.validate.status`).
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
    CASE_ID,
    DETAIL,
    EXPECTED,
    KIND,
    LINE,
    PASSED,
    SCORE,
    SOURCE,
    TEXT_COLUMNS,
    TRIAL,
    GradeKind,
)
from evalframe.load import collect_input
from evalframe.plan import Plan
from evalframe.problems import concat_problems, problems_frame
from evalframe.validate.grades import grade_columns
from evalframe.validate.shape import CANONICAL_SCHEMA, only_value, read_shape, stray_columns
from evalframe.validate.status import status_columns, status_problems
from evalframe.validate.tokens import Check, check, int_token

#: Where a ledger's rows come from when it names no file of its own.
_RESULTS: Final = "results"


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
    frame = collect_input(raw, _RESULTS) if isinstance(raw, pl.LazyFrame) else raw
    if LINE not in frame.columns:
        frame = frame.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
    if SOURCE not in frame.columns:
        frame = frame.with_columns(pl.lit(_RESULTS, pl.String).alias(SOURCE))
    only = only_value(frame, SOURCE)
    extras = list(dict.fromkeys(extra_columns))
    where = only if only is not None else _RESULTS
    frame, shape, structural = read_shape(frame, plan, extras, where)
    stray = stray_columns(frame.schema, extras)
    kept: list[dict[str, Any]] = []
    if structural and len(structural) == len(stray):
        # Only columns that are not the ledger's (a typo, an undeclared extra): without them, every other
        # column's rows are still checked, so one run reports every independent problem (SPEC §3).
        kept = structural
        frame, shape, structural = read_shape(frame.drop(stray), plan, extras, where)
    if structural:
        return Validated(frame.select([]), concat_problems([problems_frame([*kept, *structural])]), shape)
    exprs, checks = _canonical_columns(frame.schema, shape, grade, score_range, pass_threshold)
    canonical = frame.select(
        *(exprs[name].cast(dtype).alias(name) for name, dtype in CANONICAL_SCHEMA.items()), *map(pl.col, extras)
    )
    if shape == "answers":
        canonical = _graded_answers(canonical, plan)
    token_problems = _token_problems(frame, checks, trial=exprs[TRIAL], attempt=exprs[ATTEMPT])
    from evalframe.schemas import LedgerModel, failures_as_problems  # imported on use: pandera is slow to import

    schema_problems = failures_as_problems(canonical, LedgerModel)
    consistency = [status_problems(canonical)] if shape == "status" else []
    if token_problems.height:
        # A token that did not parse is null in the canonical frame: its row's "empty value" and "scored but
        # there is no score" are that one problem, reported once.
        at_token = pl.struct(LINE, SOURCE).is_in(token_problems.select(pl.struct(LINE, SOURCE)).to_series().implode())
        schema_problems = schema_problems.filter((pl.col(KIND) != "empty_value") | ~at_token)
        consistency = [found.filter(~at_token) for found in consistency]
    found = [problems_frame(kept), token_problems, schema_problems, *consistency]
    return Validated(canonical, concat_problems(found), shape)


def _canonical_columns(
    schema: pl.Schema,
    shape: str,
    grade: GradeKind,
    score_range: tuple[float, float],
    pass_threshold: float | None,
) -> tuple[dict[str, pl.Expr], list[Check]]:
    """The expression of every canonical column over the raw ledger, and the token checks of the raw values."""
    checks: list[Check] = []
    exprs: dict[str, pl.Expr] = {CANDIDATE: pl.col(CANDIDATE).cast(pl.String), CASE_ID: pl.col(CASE_ID).cast(pl.String)}
    for name in (TRIAL, ATTEMPT):
        if name not in schema:
            exprs[name] = pl.lit(1, pl.Int64)
            continue
        # A trial is an identity checked against the plan (0-based plans exist); an attempt counts from 1.
        parsed, bad = int_token(name, schema[name], allow_zero=name == TRIAL)
        exprs[name] = parsed
        value = pl.col(name).cast(pl.String).fill_null("null")
        # Digits that Int64 cannot hold are a positive integer all the same: say which limit they pass.
        text = pl.col(name).cast(pl.String)
        too_large = text.str.contains(r"^[1-9][0-9]*$") & text.cast(pl.Int64, strict=False).is_null()
        detail = (
            pl.when(too_large)
            .then(
                pl.format(
                    "{} = {} is beyond the 64-bit integer range (at most {})", pl.lit(name), value, pl.lit(2**63 - 1)
                )
            )
            .otherwise(pl.format("{} = {} is not a positive integer", pl.lit(name), value))
        )
        checks.append(check(bad, "invalid_integer", detail))
    for name in TEXT_COLUMNS:
        exprs[name] = pl.col(name).cast(pl.String) if name in schema else pl.lit(None, pl.String)
    score, passed, grade_checks = grade_columns(
        schema, shape=shape, grade=grade, score_range=score_range, pass_threshold=pass_threshold
    )
    statuses, status_checks = status_columns(schema, score, status_ledger=shape == "status")
    checks += [*grade_checks, *status_checks]
    if shape == "answers":
        empty = pl.col(ANSWER).is_null() | (pl.col(ANSWER).cast(pl.String) == "")
        checks.append(check(empty, "empty_value", pl.lit("empty answer")))
    exprs.update(statuses)
    exprs.update({SCORE: score, PASSED: passed, LINE: pl.col(LINE), SOURCE: pl.col(SOURCE)})
    return exprs, checks


def _token_problems(frame: pl.DataFrame, checks: list[Check], *, trial: pl.Expr, attempt: pl.Expr) -> pl.DataFrame:
    """One problem per (row, failed check); masks run over every row, details only over the flagged rows.

    ``trial`` and ``attempt`` are the parsed keys (null where they do not parse), so a row's problem names its
    unit as fully as the schema's problems do.
    """
    flagged = frame.filter(pl.any_horizontal([m for m, _, _ in checks])) if checks else frame.head(0)
    return pl.concat(
        [
            flagged.filter(mask).select(
                pl.lit(kind).alias(KIND),
                pl.col(CANDIDATE).cast(pl.String),
                pl.col(CASE_ID).cast(pl.String),
                trial.cast(pl.Int64).alias(TRIAL),
                attempt.cast(pl.Int64).alias(ATTEMPT),
                LINE,
                SOURCE,
                detail.alias(DETAIL),
            )
            for mask, kind, detail in checks
        ]
        or [pl.DataFrame(schema={KIND: pl.String, DETAIL: pl.String})],
        how="diagonal",
    )


def _graded_answers(canonical: pl.DataFrame, plan: Plan) -> pl.DataFrame:
    """An answers ledger graded by exact match against the plan's ``expected``: ``passed``, and ``score`` 0 or 1."""
    expected = plan.cases.select(CASE_ID, pl.col(EXPECTED).cast(pl.String).alias("_expected"))
    return (
        canonical.join(expected, on=CASE_ID, how="left", maintain_order="left")
        .with_columns((pl.col(ANSWER) == pl.col("_expected")).alias(PASSED))
        .with_columns(pl.col(PASSED).cast(pl.Float64).alias(SCORE))
        .drop("_expected")
    )
