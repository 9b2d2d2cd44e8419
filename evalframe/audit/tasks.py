"""Tasks are keys (SPEC §1): a batch of several tasks is audited as one batch per task.

:func:`route` gives each task of the plan its own plan (:meth:`Plan.for_task
<evalframe.plan.Plan.for_task>`) and its own ledger rows: by the ledger's own
``task`` column when it has one, else by the task of the row's case. A row
that belongs to no task is kept apart: its task is not planned, or it has none
and its case id is planned in several tasks (``unknown_task``: case ids are
unique within a task, not across tasks), or its case is in no task (checked
against the whole plan, so it is the one ``unknown_case`` it is in a batch of
one task).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, LINE, SOURCE, TASK
from evalframe.load import Loaded, collect_input
from evalframe.natural import natural_sorted
from evalframe.plan import Plan
from evalframe.problems import problems_frame


@dataclass(frozen=True)
class Routed:
    """A batch split by task.

    Attributes
    ----------
    tasks
        Per task of the plan, in its order: the task's name, plan and ledger rows (without a ``task``
        column).
    unknown_task
        One refusing ``unknown_task`` problem per ledger row whose ``task`` is not planned, or, without a
        ledger ``task`` column, whose case id several tasks plan (see :func:`shared_cases`).
    no_task
        The ledger rows whose case is in no task, when there can be any: None with a ledger ``task``
        column, and with one task (every row is that task's: an unplanned case is its ``unknown_case``).
    """

    tasks: tuple[tuple[str, Plan, Loaded], ...]
    unknown_task: pl.DataFrame
    no_task: pl.LazyFrame | None


#: How :func:`route` splits the rows: ``"one_pass"`` reads them once and partitions them by task in memory (the
#: whole batch is held in memory by its audit anyway); ``"filters"`` gives each task a lazy filter of the input,
#: for an audit by candidate, which reads one candidate's rows at a time (bounded memory, a read per task).
RouteMode = Literal["one_pass", "filters"]

#: The column :func:`route` computes for a row's task (null: the row is of no task), dropped from what it returns.
_ROUTE: Final = "_ef_route"


def route(plan: Plan, task_plans: Mapping[str, Plan], loaded: Loaded, *, mode: RouteMode = "one_pass") -> Routed:
    """Split ``loaded``'s rows among ``plan``'s tasks, whose plans are ``task_plans`` (see the module docstring).

    Each row's task is computed once (the ledger's ``task`` column, else its case's task from the plan) and,
    under ``mode="one_pass"``, the rows are read once and partitioned by it (polars ``partition_by``): a lake
    of 57 tasks is scanned once, not 57 times (``benchmarks/bench_tasks.py``). ``mode="filters"``: each task's
    rows are a lazy filter of the input (see :data:`RouteMode`). Both give the same rows in the same order.

    Raises
    ------
    InputFormatError
        When the input's files cannot be read together (``mode="one_pass"`` reads them here).

    Examples
    --------
    >>> cases = pl.DataFrame({"case_id": ["b/1", "a/1"], "task": ["b", "a"]})
    >>> plan = Plan.from_frame(cases, candidates=["A"])
    >>> rows = pl.LazyFrame({"candidate": ["A", "A", "A"], "case_id": ["a/1", "b/1", "c/1"], "passed": [1, 0, 1],
    ...                      "line": [1, 2, 3], "source": ["results"] * 3})
    >>> routed = route(plan, {t: plan.for_task(t) for t in plan.tasks}, Loaded(rows, source="results"))
    >>> [(t, p.cases.get_column("case_id").to_list(), r.frame.collect().get_column("line").to_list())
    ...  for t, p, r in routed.tasks]
    [('a', ['a/1'], [1]), ('b', ['b/1'], [2])]
    >>> routed.no_task is not None and routed.no_task.collect().get_column("line").to_list()
    [3]
    """
    frame = loaded.frame
    names = frame.collect_schema().names()
    tasks = plan.tasks
    if TASK not in names and len(tasks) == 1:
        return Routed(((tasks[0], task_plans[tasks[0]], loaded),), problems_frame(), None)
    shared = {} if TASK in names else shared_cases(plan)
    keyed = frame.with_columns(_task_of_rows(plan, names, shared).alias(_ROUTE))
    if mode == "one_pass" and (TASK in names or CASE_ID in names):  # else no row has a task: its checks say why
        rows = _partitioned(collect_input(keyed, loaded.source), tasks)
    else:
        rows = {t: keyed.filter(pl.col(_ROUTE).eq_missing(t)).drop(_ROUTE) for t in (*tasks, None)}
    stray = rows.pop(None)
    if TASK in names:
        rows = {t: r.drop(TASK) for t, r in rows.items()}
        unknown, no_task = _unknown_task(stray, tasks, loaded.source), None
    else:
        case = pl.col(CASE_ID).cast(pl.String)
        ambiguous = case.is_in(pl.Series(list(shared), dtype=pl.String).implode())
        no_task = stray.filter(~ambiguous | case.is_null())
        unknown = _unknown_task(stray.filter(ambiguous), tasks, loaded.source, shared)
    split = tuple((t, task_plans[t], replace(loaded, frame=rows[t])) for t in tasks)
    return Routed(split, unknown, no_task)


def _task_of_rows(plan: Plan, names: list[str], shared: Mapping[str, list[str]]) -> pl.Expr:
    """Each row's task: the ledger's own when planned, else (no ``task`` column) its case's unless ``shared``.

    Null for a row of no task: a task not planned, a case in no task, or a case id several tasks plan.
    """
    tasks = pl.Series(list(plan.tasks), dtype=pl.String).implode()
    if TASK in names:
        own = pl.col(TASK).cast(pl.String)
        return pl.when(own.is_in(tasks)).then(own).otherwise(None)
    owners = plan.cases.select(pl.col(CASE_ID).cast(pl.String), pl.col(TASK).cast(pl.String))
    owners = owners.filter(~pl.col(CASE_ID).is_in(list(shared)))
    case = pl.col(CASE_ID).cast(pl.String)
    return case.replace_strict(
        owners.get_column(CASE_ID), owners.get_column(TASK), default=None, return_dtype=pl.String
    )


def _partitioned(rows: pl.DataFrame, tasks: tuple[str, ...]) -> dict[str | None, pl.LazyFrame]:
    """``rows`` split by their :data:`_ROUTE` task (None: of no task), in their order; every task has its frame."""
    parts = rows.partition_by(_ROUTE, as_dict=True, include_key=False, maintain_order=True)
    empty = rows.clear().drop(_ROUTE)
    return {t: parts.get((t,), empty).lazy() for t in (*tasks, None)}


def shared_cases(plan: Plan) -> dict[str, list[str]]:
    """The case ids ``plan`` has in more than one task, each with its tasks (in natural order).

    A ledger row of such a case names its task, or it belongs to no audit (SPEC §1: case ids are unique
    within a task, not across tasks).

    Examples
    --------
    >>> cases = pl.DataFrame({"case_id": ["q1", "q1", "q2"], "task": ["b", "a", "a"]})
    >>> shared_cases(Plan.from_frame(cases, candidates=["A"]))
    {'q1': ['a', 'b']}
    """
    if TASK not in plan.cases.columns:
        return {}
    owners = plan.cases.group_by(CASE_ID).agg(pl.col(TASK).cast(pl.String)).filter(pl.col(TASK).list.len() > 1)
    return {case: natural_sorted(names) for case, names in owners.iter_rows()}


def one_per_case(plan: Plan) -> Plan:
    """``plan`` with each case id once and no ``task`` column: what a row whose case is in no task is checked against.

    Such a row is of no task, so its checks (an unknown case, candidate or trial) are the whole plan's.

    Examples
    --------
    >>> cases = pl.DataFrame({"case_id": ["q1", "q1", "q2"], "task": ["b", "a", "a"]})
    >>> one_per_case(Plan.from_frame(cases, candidates=["A"])).cases.rows()
    [('q1',), ('q2',)]
    """
    if TASK not in plan.cases.columns:
        return plan
    return replace(plan, cases=plan.cases.drop(TASK).unique(CASE_ID, keep="first", maintain_order=True))


def elsewhere(problems: pl.LazyFrame, task: str, plan: Plan) -> pl.LazyFrame:
    """``problems`` of ``task`` whose ``unknown_case`` is a case ``plan`` has in another task, saying where it is.

    A row that names its task and a case of another task is not of a case "not in the plan".

    Examples
    --------
    >>> cases = pl.DataFrame({"case_id": ["q1", "q2"], "task": ["a", "b"]})
    >>> found = pl.LazyFrame({"kind": ["unknown_case", "unknown_case"], "case_id": ["q2", "zz"],
    ...                       "detail": ["case q2 is not in the plan", "case zz is not in the plan"]})
    >>> elsewhere(found, "a", Plan.from_frame(cases, candidates=["A"])).collect().get_column("detail").to_list()
    ['case q2 is not in task a: it is planned in task b', 'case zz is not in the plan']
    """
    others = (
        plan.cases.lazy()
        .filter(pl.col(TASK).cast(pl.String) != task)
        .group_by(CASE_ID)
        .agg(pl.col(TASK).cast(pl.String).sort().str.join(", ").alias("_in"))
    )
    moved = (pl.col("kind") == "unknown_case") & pl.col("_in").is_not_null()
    return (
        problems.join(others, on=CASE_ID, how="left", maintain_order="left")
        .with_columns(
            pl.when(moved)
            .then(pl.format("case {} is not in task {}: it is planned in task {}", pl.col(CASE_ID), pl.lit(task),
                            pl.col("_in")))
            .otherwise(pl.col("detail"))
            .alias("detail")
        )
        .drop("_in")
    )  # fmt: skip


def _unknown_task(
    stray: pl.LazyFrame, tasks: tuple[str, ...], source: str, shared: Mapping[str, list[str]] | None = None
) -> pl.DataFrame:
    """One refusing ``unknown_task`` problem per row of ``stray``, naming its key, task and line.

    A row without a task whose case is one of ``shared`` (see :func:`shared_cases`) names the tasks it may be of.
    """
    names = stray.collect_schema().names()
    text = {
        c: pl.col(c).cast(pl.String, strict=False) if c in names else pl.lit(None, pl.String)
        for c in (CANDIDATE, CASE_ID, TASK)
    }
    found = stray.select(
        pl.col(SOURCE).cast(pl.String) if SOURCE in names else pl.lit(source, pl.String).alias(SOURCE),
        pl.col(LINE).cast(pl.Int64) if LINE in names else pl.lit(None, pl.Int64).alias(LINE),
        *(e.alias(c) for c, e in text.items()),
    ).collect()
    planned = ", ".join(tasks)
    rows = [
        {
            "kind": "unknown_task",
            SOURCE: src,
            LINE: line,
            CANDIDATE: candidate,
            CASE_ID: case,
            "detail": _why_no_task(candidate, case, task, planned, (shared or {}).get(case)),
        }
        for src, line, candidate, case, task in found.iter_rows()
    ]
    return problems_frame(rows)


def _why_no_task(candidate: str, case: str, task: str | None, planned: str, shared: list[str] | None) -> str:
    """The detail of one ``unknown_task`` problem (see :func:`_unknown_task`)."""
    if task is not None:
        return f"the row of ({candidate}, {case}) names the task {task!r}, which is not planned (tasks: {planned})"
    if shared:
        return (
            f"the row of ({candidate}, {case}) has no task, and case {case} is planned in tasks {', '.join(shared)}: "
            "the results must name the task of each row (a task column)"
        )
    return f"the row of ({candidate}, {case}) has no task (tasks: {planned})"
