"""The canonical ledger: its schema, and :func:`validate_ledger`, which turns a raw ledger into it.

The steps are in the modules beside this one: which shape the ledger has
and which columns are wrong (:mod:`~evalframe.validate.shape`), the canonical
columns, their token checks and the status consistency
(:mod:`~evalframe.validate.canonical`, shared with the Spark engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import narwhals.stable.v2 as nw
import polars as pl

from evalframe.columns import (
    CASE_ID,
    EXPECTED,
    KIND,
    LINE,
    SOURCE,
    GradeKind,
)
from evalframe.load import collect_input
from evalframe.plan import Plan
from evalframe.problems import concat_problems, problems_frame
from evalframe.validate.canonical import AT_TOKEN, canonical, status_checks
from evalframe.validate.rows import ROW_KEYS, Options, checked
from evalframe.validate.shape import only_value, read_shape, stray_columns

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
    options = Options(grade=grade, score_range=score_range, pass_threshold=pass_threshold, extra_columns=tuple(extras))
    expected = None
    if shape == "answers":
        answers = plan.cases.select(CASE_ID, pl.col(EXPECTED).cast(pl.String).alias("_expected"))
        expected = nw.from_native(answers.lazy())
    made = canonical(nw.from_native(frame.lazy()), shape, options, expected, None)
    ledger = made.ledger.collect("polars").to_native()
    at_token = ledger.get_column(AT_TOKEN)
    canonical_ledger = ledger.drop(AT_TOKEN)
    # The token problems are read again from the raw rows only when a token did not parse (a refused batch).
    token_problems = [p.collect("polars").to_native() for p in made.problems] if at_token.any() else []
    from evalframe.schemas import LedgerModel, failures_as_problems  # imported on use: pandera is slow to import

    schema_problems = failures_as_problems(canonical_ledger, LedgerModel)
    if token_problems:
        # A token that did not parse is null in the canonical frame: its row's "empty value" is that one problem.
        at_rows = ledger.filter(AT_TOKEN).select(pl.struct(LINE, SOURCE)).to_series().implode()
        schema_problems = schema_problems.filter(
            (pl.col(KIND) != "empty_value") | ~pl.struct(LINE, SOURCE).is_in(at_rows)
        )
    consistency = []
    if shape == "status":
        consistency = [
            p.collect("polars").to_native()
            for p in checked(nw.from_native(ledger.lazy()), status_checks(), keys=ROW_KEYS)
        ]
    found = [problems_frame(kept), *token_problems, schema_problems, *consistency]
    return Validated(canonical_ledger, concat_problems(found), shape)
