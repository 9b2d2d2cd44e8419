"""The checks a plan must pass: identifiers, column names and types, repeated cases.

Each check returns problems (rows of :mod:`evalframe.problems`);
:func:`checked_cases` raises :class:`~evalframe.errors.PlanError` with all of
them at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT_COLUMNS,
    CANDIDATE,
    CASE_HASH,
    CASE_ID,
    DATASET_VERSION,
    LINE,
    SOURCE,
    TASK,
    TRIAL,
    UNIT_DERIVED_COLUMNS,
)
from evalframe.errors import PlanError
from evalframe.plan.coding import CAND_CODE, CASE_CODE, UID
from evalframe.problems import concat_problems, problems_frame

#: Names a plan column may not have: the ledger's per-attempt columns and those the audit computes per unit
#: (a plan column of that name would stand in for them in the units table), and the audit's code columns.
RESERVED_COLUMNS: Final = (
    *ATTEMPT_COLUMNS,
    *UNIT_DERIVED_COLUMNS,
    CAND_CODE,
    CASE_CODE,
    UID,
    "_trial",
    # A plan's dataset_version / case_hash stand beside the ledger's in the units table, which names those
    # "<name>_right" (as a join does).
    f"{DATASET_VERSION}_right",
    f"{CASE_HASH}_right",
)


def identifier_problems(values: Sequence[str], what: str, source: str) -> list[dict[str, Any]]:
    """Problems of declared identifiers (``what``: e.g. "candidate"): none, empty, padded or repeated."""
    problems: list[dict[str, Any]] = []
    if not values:
        problems.append({"kind": "empty_candidates", "source": source, "detail": f"no {what} declared"})
    seen: set[str] = set()
    for v in values:
        if v == "":
            problems.append({"kind": "empty_identifier", "source": source, "detail": f"empty {what}"})
        elif v.strip() != v:
            problems.append(
                {
                    "kind": "padded_identifier",
                    "source": source,
                    CANDIDATE: v,
                    "detail": f"{what} {v!r} has white space around it",
                }
            )
        if v in seen:
            problems.append(
                {
                    "kind": "repeated_candidate",
                    "source": source,
                    CANDIDATE: v,
                    "detail": f"{what} {v!r} declared more than once",
                }
            )
        seen.add(v)
    return problems


def reserved_column(name: str, source: str) -> dict[str, Any]:
    """The ``unexpected_column`` problem of a plan column named like one evalframe adds (``line``, ``source``)."""
    detail = f"plan column {name!r} is reserved: evalframe adds it to every row (SPEC §3 reserved names); rename it"
    return {"kind": "unexpected_column", "source": source, "detail": detail}


def column_problems(schema: pl.Schema, source: str) -> list[dict[str, Any]]:
    """``unexpected_column`` problems for plan columns with a reserved name or a type a plan cannot hold.

    A plan column is text, a number, a boolean, a date or a time: those are
    compared exactly and written into the plan hash. ``trial`` is a key of a
    units table (which has a ``candidate`` column), not a case column.
    """
    found = []
    reserved = set(RESERVED_COLUMNS) | ({TRIAL} if CANDIDATE not in schema else set())
    for name, dtype in schema.items():
        if name == SOURCE:  # the loader's own is dropped before this (Plan.from_file)
            found.append(reserved_column(name, source))
            continue
        if name in reserved:
            detail = f"plan column {name!r} is a name the ledger or the audit gives per attempt or unit; rename it"
        elif name not in (LINE, SOURCE) and (dtype.is_nested() or dtype in (pl.Binary, pl.Object, pl.Duration)):
            detail = f"plan column {name!r} has type {dtype}; plan columns hold text, numbers, booleans, dates or times"
        else:
            continue
        found.append({"kind": "unexpected_column", "source": source, "detail": detail})
    return found


def case_key(columns: Sequence[str]) -> list[str]:
    """A case's identity in a plan of ``columns``: ``task`` and ``case_id`` with a ``task`` column, else ``case_id``.

    Tasks are keys (SPEC §1): case ids are unique within a task, not across tasks.

    Examples
    --------
    >>> case_key(["case_id", "task"]), case_key(["case_id", "topic"])
    (['task', 'case_id'], ['case_id'])
    """
    return [TASK, CASE_ID] if TASK in columns else [CASE_ID]


def repeated_cases(frame: pl.DataFrame, source: str, detail: str, *, key: Sequence[str] = (CASE_ID,)) -> pl.DataFrame:
    """``duplicate_case`` problems for every row of ``frame`` whose ``key`` (:func:`case_key`) occurs more than once."""
    return frame.filter(pl.len().over(list(key)) > 1).select(
        pl.lit("duplicate_case").alias("kind"),
        pl.lit(source).alias(SOURCE),
        LINE,
        CASE_ID,
        pl.lit(detail).alias("detail"),
    )


def task_problems(frame: pl.DataFrame, source: str) -> pl.DataFrame:
    """Problems of a ``task`` case column: a case without a task (``empty_identifier``) or a padded one.

    A plan's tasks are keys (SPEC §1): a case that names no task would belong to no audit.

    Examples
    --------
    >>> cases = pl.DataFrame({"case_id": ["a", "b", "c"], "task": ["t", None, " t"], "line": [2, 3, 4]})
    >>> task_problems(cases, "plan.csv").select("kind", "line", "case_id").rows()
    [('empty_identifier', 3, 'b'), ('padded_identifier', 4, 'c')]
    """
    task = pl.col(TASK).cast(pl.String)
    line = pl.col(LINE) if LINE in frame.columns else pl.lit(None, pl.Int64)
    empty = task.is_null() | (task.str.strip_chars() == "")
    padded = ~empty & (task.str.strip_chars() != task)
    return frame.filter(empty | padded).select(
        pl.when(empty).then(pl.lit("empty_identifier")).otherwise(pl.lit("padded_identifier")).alias("kind"),
        pl.lit(source).alias(SOURCE),
        line.alias(LINE),
        CASE_ID,
        pl.when(empty)
        .then(pl.format("case {} has no task: a plan's task column names the task of every case", pl.col(CASE_ID)))
        .otherwise(pl.format("task {} of case {} has white space around it", task, pl.col(CASE_ID)))
        .alias("detail"),
    )


def checked_cases(
    frame: pl.DataFrame, source: str, found: list[pl.DataFrame], extra: list[dict[str, Any]]
) -> pl.DataFrame:
    """Validate the cases table (pandera), raise :class:`PlanError` with every problem, else sort it."""
    if frame.height == 0:
        extra.append({"kind": "empty_plan", "source": source, "detail": "the plan has no cases"})
    from evalframe.schemas import PlanCasesModel, failures_as_problems  # imported on use: pandera is slow to import

    plan_failures = failures_as_problems(frame, PlanCasesModel)
    if plan_failures.height:
        found.append(plan_failures.with_columns(pl.lit(source).alias(SOURCE)))
    if TASK in frame.columns:
        found.append(task_problems(frame, source))
    all_problems = concat_problems([*found, problems_frame(extra)])
    if all_problems.height:
        raise PlanError(all_problems)
    return frame.drop(LINE, SOURCE, strict=False).sort(CASE_ID)
