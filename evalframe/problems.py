"""The problems table: one row per thing found wrong with a batch.

Every check in evalframe reports into the same tidy frame, so a notebook user
can filter problems like any other data and the CLI can print them as a table.
Columns and dtypes:

========== ======= ==========================================================
column     dtype   meaning
========== ======= ==========================================================
kind       String  what is wrong (one of :data:`PROBLEM_KINDS`)
source     String  ``plan``, ``results`` or the file the row came from
line       Int64   CSV/JSON Lines physical line (header = line 1 of a CSV),
                   Parquet row number (1-based); null when not file-bound
candidate  String  offending candidate, when the problem has one
case_id    String  offending case, when the problem has one
trial      Int64   offending trial, when the problem has one
attempt    Int64   offending attempt, when the problem has one
detail     String  a sentence for a person
refusing   Boolean whether the problem refuses the batch
========== ======= ==========================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    DETAIL,
    KIND,
    LINE,
    REFUSING,
    SOURCE,
    TRIAL,
)

PROBLEM_SCHEMA: Final = pl.Schema(
    {
        KIND: pl.String,
        SOURCE: pl.String,
        LINE: pl.Int64,
        CANDIDATE: pl.String,
        CASE_ID: pl.String,
        TRIAL: pl.Int64,
        ATTEMPT: pl.Int64,
        DETAIL: pl.String,
        REFUSING: pl.Boolean,
    }
)

#: Every problem kind with a one-line description. Kinds whose description
#: starts with "(flag)" are reported but do not refuse the batch by default.
PROBLEM_KINDS: Final[Mapping[str, str]] = {
    # input structure
    "missing_column": "a required column is absent",
    "unexpected_column": "a column evalframe does not know",
    "repeated_column": "a header name appears more than once",
    "field_count": "a CSV record has a different number of fields than the header",
    "blank_line": "a blank line inside the data (a record with zero fields)",
    "malformed_quoting": "a CSV quote is unterminated or misplaced",
    "undecodable_bytes": "bytes that are not valid UTF-8",
    "misplaced_bom": "a byte-order mark anywhere but the very start of the file",
    "mixed_line_endings": "a CSV file whose records end in more than one way (LF, CRLF, lone CR)",
    "unreadable_file": "a file that could not be read or parsed at all",
    "partition_mismatch": "a row's own value differs from the key=value folder (hive partition) it is stored in",
    # identifiers
    "empty_identifier": "an empty case_id, candidate or run_id",
    "padded_identifier": "an identifier with leading or trailing white space",
    # plan
    "empty_plan": "the plan has no cases",
    "duplicate_case": "a case_id appears more than once in the plan",
    "empty_candidates": "no candidate was declared",
    "repeated_candidate": "a candidate is declared more than once",
    "invalid_trials": "the number of trials is not a positive integer",
    # identity against the plan
    "unknown_candidate": "a row names a candidate that is not planned",
    "unknown_case": "a row names a case that is not planned",
    "trial_out_of_range": "a row's trial is outside 1..N",
    "unknown_unit": "a row's (candidate, case_id, trial) is not a planned unit",
    "duplicate_key": "(candidate, case_id, trial, attempt) appears more than once",
    "missing_unit": "a planned unit has no row (refusing only under missing='refuse')",
    # values
    "invalid_grade": "a binary grade that is not exactly 0 or 1",
    "invalid_score": "a score that is not a finite number in the declared range",
    "invalid_integer": "a trial or attempt that is not a positive integer",
    "invalid_status": "an exec_status or score_status outside the vocabulary",
    "empty_value": "an empty answer or status",
    "missing_expected": "answers were given but the plan has no expected answer",
    # consistency and binding
    "status_inconsistent": "score and statuses contradict each other",
    "run_mismatch": "a row's run_id differs from the run the plan requires",
    "version_mismatch": "a row's dataset_version differs from the plan's",
    "hash_mismatch": "a row's case_hash differs from the plan's",
    # importers (notes)
    "no_export": "a folder given as an export holds no file of that format",
    "unknown_score": "the declared (or default) scorer, metric or stat is not in the export",
    "ambiguous_score": "the export has several scorers, metrics or stats and none was declared",
    "unknown_run": "the declared run_id is not in the export",
    "ambiguous_rows": "an export holds several rows for one unit that differ by a key the plan does not declare",
    "duplicate_import": "(flag) the same attempt was found twice (one sample in two files) and is read once",
    "reducer_differs": "(flag) the export's header records another case reducer than the one the audit applies",
    "limited_run": "(flag) the run was limited to fewer units than its dataset holds",
    "header_rows_disagree": "(flag) an export's header totals disagree with its rows (rows are the evidence)",
    "id_normalised": '(flag) identifiers of different types (1 and "1") were read as the same case',
    "plan_from_rows": "(flag) the export declares no plan; the plan was taken from the rows present",
    "run_status": "(flag) the export says its run did not finish successfully",
    "not_a_score": "(flag) a grader value that is not a score (text, a list, a pair) was read as no grade",
    "nonfinite_score": "(flag) a non-finite metric value (NaN, Infinity) was read as a grader failure",
    "grader_error": "(flag) the grader (a judge, a metric) reported an error for a unit: a grader failure, not a fail",
    # retries (flags)
    "retry_after_scored": "(flag) a retry follows an attempt that was already scored",
    "retry_after_ineligible": "(flag) a retry follows a failure the policy does not retry",
    "attempt_beyond_max": "(flag) an attempt number above max_attempts",
    "attempt_gap": "(flag) attempt numbers of a unit are not 1..k without gaps",
}


def problems_frame(rows: Iterable[Mapping[str, Any]] = ()) -> pl.DataFrame:
    """Build a problems table from dictionaries.

    Parameters
    ----------
    rows
        Mappings with any subset of the columns of :data:`PROBLEM_SCHEMA`;
        ``refusing`` defaults to True.

    Returns
    -------
    polars.DataFrame
        One row per problem with the columns of :data:`PROBLEM_SCHEMA`.

    Examples
    --------
    >>> problems_frame([{"kind": "unknown_case", "case_id": "invented", "line": 3}]).select(
    ...     "kind", "case_id", "line", "refusing"
    ... )
    shape: (1, 4)
    ┌──────────────┬──────────┬──────┬──────────┐
    │ kind         ┆ case_id  ┆ line ┆ refusing │
    │ ---          ┆ ---      ┆ ---  ┆ ---      │
    │ str          ┆ str      ┆ i64  ┆ bool     │
    ╞══════════════╪══════════╪══════╪══════════╡
    │ unknown_case ┆ invented ┆ 3    ┆ true     │
    └──────────────┴──────────┴──────┴──────────┘
    """
    filled = [{c: r.get(c, True if c == REFUSING else None) for c in PROBLEM_SCHEMA} for r in rows]
    return pl.DataFrame(filled, schema=PROBLEM_SCHEMA)


def conform(frame: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Give a partial problems frame every column of :data:`PROBLEM_SCHEMA`, in order."""
    lf = frame.lazy()
    names = lf.collect_schema().names()
    return lf.select(
        [
            (pl.col(c).cast(t) if c in names else pl.lit(True if c == REFUSING else None, t).alias(c))
            for c, t in PROBLEM_SCHEMA.items()
        ]
    )


def sort_problems(frame: pl.DataFrame) -> pl.DataFrame:
    """Sort a problems table by kind then key, nulls first, so output never depends on row order."""
    return frame.sort([KIND, SOURCE, CANDIDATE, CASE_ID, TRIAL, ATTEMPT, LINE, DETAIL], nulls_last=False)


def concat_problems(frames: Iterable[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame:
    """Concatenate problem frames (any partial columns) into one sorted table.

    Its text columns hold their own bytes: rows taken from a large ledger would otherwise keep all of
    that ledger's text alive (polars shares string buffers between a frame and the rows filtered from
    it; 50M rows audited per candidate, the problems of 20 candidates held 0.8 GiB).
    """
    parts = [conform(f) for f in frames]
    if not parts:
        return problems_frame()
    table = sort_problems(pl.concat(parts, how="vertical").collect())
    return table.with_columns(
        pl.concat_str([pl.col(c), pl.lit("")]) for c, t in PROBLEM_SCHEMA.items() if t == pl.String
    )
