"""Column names, status vocabularies and option aliases, defined once.

Every module refers to columns through these constants so that a column's
name lives in exactly one place. The vocabulary follows SPEC.md §1: a *trial*
is one planned repetition of a case (Inspect AI's *epoch*), an *attempt* is one
execution of a planned unit.
"""

from __future__ import annotations

from typing import Final, Literal

# --- identity -------------------------------------------------------------
CANDIDATE: Final = "candidate"
CASE_ID: Final = "case_id"
TRIAL: Final = "trial"
ATTEMPT: Final = "attempt"
RUN_ID: Final = "run_id"
#: The task a case belongs to (SPEC §1): part of a unit's identity; every number is per (task, candidate).
TASK: Final = "task"

#: The key of a planned unit.
UNIT_KEY: Final = (CANDIDATE, CASE_ID, TRIAL)
#: The key of one ledger row (one attempt of a planned unit).
ATTEMPT_KEY: Final = (CANDIDATE, CASE_ID, TRIAL, ATTEMPT)

# --- plan columns ---------------------------------------------------------
EXPECTED: Final = "expected"
DATASET_VERSION: Final = "dataset_version"
CASE_HASH: Final = "case_hash"

# --- ledger columns -------------------------------------------------------
EXEC_STATUS: Final = "exec_status"
SCORE_STATUS: Final = "score_status"
SCORE: Final = "score"
PASSED: Final = "passed"
HAS_OUTPUT: Final = "has_output"
ANSWER: Final = "answer"
LIMIT: Final = "limit"
#: Where a ledger row came from: 1-based physical line for CSV/JSON Lines
#: (the header is line 1 of a CSV), 1-based row number for Parquet.
LINE: Final = "line"
#: The file (or importer source) a row came from.
SOURCE: Final = "source"
#: The ledger's optional text columns, carried as written (null where the ledger has none).
TEXT_COLUMNS: Final = (RUN_ID, DATASET_VERSION, CASE_HASH, LIMIT, ANSWER)
#: The ledger's columns that differ from one attempt of a unit to the next.
ATTEMPT_COLUMNS: Final = (ATTEMPT, RUN_ID, EXEC_STATUS, SCORE_STATUS, SCORE, PASSED, HAS_OUTPUT, ANSWER, LIMIT)

# --- derived columns ------------------------------------------------------
OUTCOME: Final = "outcome"
ATTEMPTS: Final = "attempts"
COUNTED_ATTEMPT: Final = "counted_attempt"
#: The columns the audit computes per unit.
UNIT_DERIVED_COLUMNS: Final = (COUNTED_ATTEMPT, ATTEMPTS, OUTCOME)

# --- problems table -------------------------------------------------------
KIND: Final = "kind"
DETAIL: Final = "detail"
REFUSING: Final = "refusing"

# --- status vocabularies ----------------------------------------------------
EXEC_STATUSES: Final = ("completed", "timeout", "error", "not_started")
SCORE_STATUSES: Final = ("scored", "judge_error", "not_scored")
#: Execution statuses that count as an execution failure.
EXEC_FAILURES: Final = ("timeout", "error")

#: Per-unit outcomes, from least to most evidence.
OUTCOMES: Final = (
    "missing",
    "not_started",
    "exec_failed",
    "no_output",
    "judge_failed",
    "not_scored",
    "scored_no_threshold",
    "failed",
    "passed",
)

# --- options ------------------------------------------------------------------
RetryPolicyName = Literal["first", "last_allowed", "every"]
MissingPolicy = Literal["report", "refuse"]
GradeKind = Literal["binary", "numeric"]

# --- funnel / summary columns (SPEC §2) -----------------------------------------
PLANNED: Final = "planned"
OBSERVATIONS: Final = "observations"
ATTEMPTED: Final = "attempted"
COMPLETED: Final = "completed"
WITH_OUTPUT: Final = "with_output"
SCORED: Final = "scored"
MISSING: Final = "missing"
#: A number of cases: those a row of counted cases stands for (case patterns, cases by slice).
CASES: Final = "cases"
#: A number of planned units: those a row of counted units stands for (units left out of an export).
UNITS: Final = "units"
EXEC_FAILED: Final = "exec_failed"
JUDGE_FAILED: Final = "judge_failed"
NOT_STARTED: Final = "not_started"
NO_OUTPUT: Final = "no_output"
NOT_SCORED: Final = "not_scored"
FAILED: Final = "failed"
COMPLETION_RATE: Final = "completion_rate"
SCORED_COVERAGE: Final = "scored_coverage"
PASS_RATE_SCORED: Final = "pass_rate_scored"
PASS_RATE_PLANNED: Final = "pass_rate_planned"
PASS_RATE_UPPER: Final = "pass_rate_upper"

#: Each count of the funnel (after ``planned``) and the outcomes (:data:`OUTCOMES`) it adds up: the one
#: definition of which outcomes are scored, passed, ... (SPEC §2). ``scored`` holds ``scored_no_threshold``
#: (a numeric score without a declared pass threshold: scored, neither a pass nor a fail); the keys with a
#: leading ``_`` are sums the funnel's arithmetic needs, not columns.
FUNNEL_OUTCOMES: Final = {
    "_not_attempted": ("missing", "not_started"),
    COMPLETED: ("no_output", "judge_failed", "not_scored", "scored_no_threshold", "failed", "passed"),
    WITH_OUTPUT: ("judge_failed", "not_scored", "scored_no_threshold", "failed", "passed"),
    SCORED: ("scored_no_threshold", "failed", "passed"),
    "_no_threshold": ("scored_no_threshold",),
    PASSED: ("passed",),
    FAILED: ("failed",),
    MISSING: ("missing",),
    NOT_STARTED: ("not_started",),
    EXEC_FAILED: ("exec_failed",),
    NO_OUTPUT: ("no_output",),
    JUDGE_FAILED: ("judge_failed",),
    NOT_SCORED: ("not_scored",),
}

# --- trial-aware flips between two candidates (SPEC §6c) ------------------------
#: A case's class in a comparison: what its trials show changed between baseline and candidate.
FLIP_CLASS: Final = "flip_class"
#: The classes of :data:`FLIP_CLASS`, in the order they are reported.
FLIP_CLASSES: Final = ("stable_pass", "stable_fail", "fixed", "regressed", "flaky", "incomparable")

# --- reconciliation of an export's own headline (SPEC §6c) ------------------------
#: Key of an importer's per-file info (``Imported.info``) listing the headline values the export reported.
REPORTED_HEADLINES: Final = "reported"
#: Keys of one reported headline: the tool that reported it, its metric, value and the denominator it states.
TOOL: Final = "tool"
METRIC: Final = "metric"
REPORTED: Final = "reported"
IMPLIED_DENOMINATOR: Final = "implied_denominator"
DENOMINATOR_OF: Final = "denominator_of"
#: Reported minus ``pass_rate_planned``, and the points each step of the decomposition accounts for.
GAP: Final = "gap"
POINTS_MISSING: Final = "points_missing"
POINTS_NOT_STARTED: Final = "points_not_started"
POINTS_EXEC_FAILED: Final = "points_exec_failed"
POINTS_NO_OUTPUT: Final = "points_no_output"
POINTS_JUDGE_FAILED: Final = "points_judge_failed"
POINTS_NOT_SCORED: Final = "points_not_scored"
POINTS_DUPLICATES: Final = "points_duplicates"
POINTS_UNEXPLAINED: Final = "points_unexplained"

# --- comparability of two runs (SPEC §6c) --------------------------------------------
#: Key of an importer's per-file info holding the settings the export records (``{key: value text}``).
RECORDED_SETTINGS: Final = "settings"
#: Columns of the settings side by side: the setting, each side's value (null: not recorded), whether they agree
#: (null: unknown, a side does not record it) and whether the key decides comparability.
SETTING: Final = "setting"
BASELINE: Final = "baseline"
EQUAL: Final = "equal"
DECIDES: Final = "decides"
#: Key of a per-file info whose file holds several tasks: a list of ``{task, candidate, settings}``.
SETTINGS_BY_TASK: Final = "settings_by_task"
