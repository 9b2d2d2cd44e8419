"""Tasks are keys (SPEC §1): a batch of several tasks is audited as one batch per task.

:func:`route` gives each task of the plan its own plan (:meth:`Plan.for_task
<evalframe.plan.Plan.for_task>`) and its own ledger rows: by the ledger's own
``task`` column when it has one, else by the task of the row's case. A row
that belongs to no task is kept apart: its task is not planned
(``unknown_task``), or its case is in no task (checked against the whole plan,
so it is the one ``unknown_case`` it is in a batch of one task).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, LINE, SOURCE, TASK
from evalframe.load import Loaded
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
        One refusing ``unknown_task`` problem per ledger row whose ``task`` is not planned (empty without
        a ledger ``task`` column).
    no_task
        The ledger rows whose case is in no task, when there can be any: None with a ledger ``task``
        column, and with one task (every row is that task's: an unplanned case is its ``unknown_case``).
    """

    tasks: tuple[tuple[str, Plan, Loaded], ...]
    unknown_task: pl.DataFrame
    no_task: pl.LazyFrame | None


def route(plan: Plan, task_plans: Mapping[str, Plan], loaded: Loaded) -> Routed:
    """Split ``loaded``'s rows among ``plan``'s tasks, whose plans are ``task_plans`` (see the module docstring).

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
    if TASK in names:
        own = pl.col(TASK).cast(pl.String)
        rows = {t: frame.filter(own == t).drop(TASK) for t in tasks}
        stray = frame.filter(own.is_null() | ~own.is_in(list(tasks)))
        unknown = _unknown_task(stray, tasks, loaded.source)
        no_task = None
    elif len(tasks) == 1:
        rows, unknown, no_task = {tasks[0]: frame}, problems_frame(), None
    else:
        case = pl.col(CASE_ID).cast(pl.String)
        rows = {t: frame.filter(case.is_in(task_plans[t].cases.get_column(CASE_ID).implode())) for t in tasks}
        no_task = frame.filter(case.is_null() | ~case.is_in(plan.cases.get_column(CASE_ID).implode()))
        unknown = problems_frame()
    split = tuple((t, task_plans[t], replace(loaded, frame=rows[t])) for t in tasks)
    return Routed(split, unknown, no_task)


def _unknown_task(stray: pl.LazyFrame, tasks: tuple[str, ...], source: str) -> pl.DataFrame:
    """One refusing ``unknown_task`` problem per row of ``stray``, naming its key, task and line."""
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
            "detail": (
                f"the row of ({candidate}, {case}) names the task {task!r}, which is not planned (tasks: {planned})"
                if task is not None
                else f"the row of ({candidate}, {case}) has no task (tasks: {planned})"
            ),
        }
        for src, line, candidate, case, task in found.iter_rows()
    ]
    return problems_frame(rows)
