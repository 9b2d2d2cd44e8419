"""The audit: check the arguments, run the per-batch step through a runner, assemble the report.

Nothing is computed until the whole batch has been checked: if any refusing
problem exists, :func:`audit` raises :class:`~evalframe.errors.AuditRefused`
with all of them and no rate exists anywhere. How the batch is run (whole,
candidate by candidate, or on Spark) is the runner's business
(:mod:`evalframe.audit.runners`); this module only picks one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, cast

import polars as pl

from evalframe.attempts import retry_bias_if_retried, retry_bias_notes
from evalframe.audit.arguments import check_options, check_slices
from evalframe.audit.imported import import_folder
from evalframe.audit.meta import audit_meta
from evalframe.audit.runners import ByCandidate, OnSpark, Runner, WholeBatch, layout_meta
from evalframe.audit.step import Options, Part, batch_problems, check_and_select
from evalframe.audit.tasks import elsewhere, one_per_case, route
from evalframe.columns import (
    CANDIDATE,
    EXEC_FAILURES,
    KIND,
    LINE,
    REFUSING,
    TASK,
    GradeKind,
    MissingPolicy,
    RetryPolicyName,
)
from evalframe.compare.settings import pooled_settings_notes
from evalframe.errors import AuditRefused, OptionError, PlanError
from evalframe.funnel import check_reducer, reducer_count, reducer_meaning
from evalframe.funnel.reported import (
    no_reconciliation,
    reconciliation,
    reconciliation_notes,
    reconciliation_of_tasks,
)
from evalframe.load import (
    Loaded,
    PathLike,
    collect_input,
    is_spark_frame,
    is_url,
    load,
    naming_the_damaged_file,
)
from evalframe.load import storage_options as remote_options
from evalframe.plan import Plan
from evalframe.problems import Problems, of_task, problems_frame, with_task
from evalframe.progress import Progress
from evalframe.report.model import AuditReport
from evalframe.slices import Bins, bin_edges, missingness_tests, selective_flag
from evalframe.stats import DEFAULT_CONFIDENCE, Target
from evalframe.validate import KNOWN_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame

#: ``partition_by="auto"`` audits candidate by candidate from this many ledger rows or planned units on (the
#: whole batch's work grows with both); below it the whole batch is the faster and takes under 1 GiB. The
#: calibration is in ``benchmarks/RESULTS.md``.
AUTO_PARTITION_ROWS: Final = 2_000_000

#: What :func:`audit` takes as results.
Results = pl.DataFrame | pl.LazyFrame | Loaded | PathLike | Sequence[PathLike]


def _as_loaded(results: Results, plan: Plan) -> Loaded:
    """The ledger as loaded: an ``evalframe import`` folder's with the import's notes and provenance.

    A plan read from an import's ``plan.parquet`` and that folder's ``ledger.parquet`` are audited with what
    the import noticed (:func:`~evalframe.audit.imported.import_folder`), as an audit of the exports is.
    """
    if isinstance(results, Loaded):
        return results
    if isinstance(results, (pl.DataFrame, pl.LazyFrame)):
        frame = results.lazy()
        if LINE not in frame.collect_schema().names():  # numbered before any partition filter: row n is line n
            frame = frame.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
        return Loaded(frame, source="results")
    found = None if is_url(plan.source) else import_folder(plan.source, results)
    loaded = load(results)
    if found is None:
        return loaded
    problems = pl.concat([loaded.problems, found.notes], how="diagonal_relaxed")
    return replace(loaded, problems=problems, provenance=found.provenance)


def _spark_reads_locally(results: object) -> None:
    """Refuse an object-storage URL on a local Spark session: pyspark ships no ``hadoop-aws`` (GCS, Azure) jars.

    Raises
    ------
    OptionError
        ``option="engine"``, naming the URL and the reason.
    """
    paths = [results] if isinstance(results, str) else results if isinstance(results, list | tuple) else []
    found = next((p for p in paths if is_url(p)), None)
    if found is not None:
        reason = (
            f"{found}: Spark reads object storage only with the hadoop-aws / GCS / Azure connector jars, which "
            "pyspark does not ship; audit it with --engine polars, give --spark-remote of a cluster that has "
            "them, or pass a DataFrame read by your own Spark session"
        )
        raise OptionError("engine", reason)


def _one_task_on_spark(plan: Plan, results: object, spark_remote: str | None) -> Plan:
    """The plan a Spark audit runs: that of its one task, if any (an audit by task routes polars rows).

    Raises
    ------
    OptionError
        ``option="engine"``: a plan with two or more tasks, or an object-storage URL on a local session
        (see :func:`_spark_reads_locally`).
    """
    if spark_remote is None:  # a Spark Connect server reads URLs with its own connectors and credentials
        _spark_reads_locally(results)
    tasks = plan.tasks
    if len(tasks) > 1:
        reason = (
            f"the plan has {len(tasks)} tasks ({', '.join(tasks)}): an audit by task runs on polars only "
            "(engine='polars'), or audit one task at a time (plan.for_task(name))"
        )
        raise OptionError("engine", reason)
    return plan.for_task(tasks[0]) if tasks else plan


def _resolved_bins(plan: Plan, slices: Sequence[str], bins: Bins | None) -> Bins | None:
    """The bins of numeric slice columns as checked edges, before any file is read.

    Quantile bins (``"q<k>"``) are cut over the plan's cases (each once, not per unit).
    """
    if not bins:
        return bins
    resolved = dict(bins)
    for name, spec in bins.items():
        if name in slices and plan.cases.schema[name].is_numeric():
            resolved[name] = bin_edges(plan.cases.select(name), name, spec)
    return resolved


def audit(
    plan: Plan,
    results: Results | SparkDataFrame,
    *,
    retry: RetryPolicyName = "first",
    max_attempts: int | None = None,
    retry_on: Sequence[str] = EXEC_FAILURES,
    strict_retries: bool = False,
    missing: MissingPolicy = "report",
    grade: GradeKind = "binary",
    score_range: tuple[float, float] = (0.0, 1.0),
    pass_threshold: float | None = None,
    slices: Sequence[str] = (),
    bins: Bins | None = None,
    alpha: float = 0.05,
    confidence: float = DEFAULT_CONFIDENCE,
    cases: Target = "sample",
    partition_by: Literal["candidate", "auto"] | None = None,
    provenance: Mapping[str, Any] | None = None,
    extra_columns: Sequence[str] = (),
    reducer: str = "mean",
    engine: Literal["polars", "spark"] = "polars",
    spark_tables: str | Path | None = None,
    spark_remote: str | None = None,
    progress: Progress | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> AuditReport:
    """Audit a ledger against a frozen plan.

    Parameters
    ----------
    plan
        The frozen plan (:class:`~evalframe.plan.Plan`).
    results
        The ledger: a polars frame, a :class:`~evalframe.load.Loaded`, or a
        path (CSV, JSON Lines, Parquet file/directory/glob) or list of paths,
        local or an object-storage URL (``s3://``, ``gs://``, ``az://``, ``https://``; see
        :mod:`evalframe.load.remote`); with ``engine="spark"``, Parquet paths, a table name or a PySpark / Spark
        Connect DataFrame. One row per attempt; see :mod:`evalframe.validate`
        for the shapes.
    retry
        Declared retry policy: ``first``, ``last_allowed`` or ``every``.
    max_attempts
        Highest allowed attempt number (None: unlimited).
    retry_on
        Execution statuses after which a retry is allowed.
    strict_retries
        Make retry flags refusing.
    missing
        ``report`` (missing units are counted as missing) or ``refuse``
        (any missing unit refuses the batch).
    grade, score_range, pass_threshold
        How grades are read; see :func:`~evalframe.validate.validate_ledger`.
    slices
        Plan columns to break the funnel down by (SPEC §5).
    bins
        Bins for numeric slice columns: edges or ``"q<k>"`` (see
        :func:`~evalframe.slices.binned`).
    alpha
        Significance level of the selective-missingness test.
    confidence
        Two-sided coverage of every interval in the summary.
    cases
        What the intervals are about (recorded as ``report.meta["cases"]``): ``sample``, the cases as a
        sample of a larger population of tasks; ``fixed``, these cases as the whole population — the rates'
        intervals cover trial noise within them only (see :func:`evalframe.funnel.with_uncertainty`). Pass
        the same ``cases`` to :func:`evalframe.compare`.
    partition_by
        ``"candidate"``: audit candidate by candidate
        (:class:`~evalframe.audit.runners.ByCandidate`). A candidate's rows
        are read with the candidate filter pushed into the reader (a hive
        lake is read one partition at a time), validated, reconciled,
        counted and summarised; its units and attempts are written as
        Parquet to a temporary folder the report owns, and
        ``report.units`` / ``report.attempts`` are lazy scans of those
        files. The folder stays until :meth:`AuditReport.close
        <evalframe.report.model.AuditReport.close>` (or the end of a
        ``with report:`` block), or until the interpreter exits: a table
        taken from the report stays readable after the report is gone.
        Exact, because every key and every summary number is per
        candidate; peak memory is that of one candidate's rows and the
        plan. None
        (default): the whole batch at once, tables in memory. ``"auto"``:
        ``"candidate"`` from :data:`AUTO_PARTITION_ROWS` ledger rows or
        planned units on, else None (what the CLI does);
        ``report.meta["partition_by"]`` says which ran.
    provenance
        Extra facts recorded in ``report.meta`` (e.g. what an importer read).
    extra_columns
        Ledger columns carried through untouched to ``report.attempts`` (every
        attempt) and ``report.units`` (the counted attempt's values): model
        output, prompt, latency, tokens, cost (SPEC §3). Any other column
        the ledger does not define refuses the batch as ``unexpected_column``.
    reducer
        How trials of a case reduce to a case outcome for the case-level
        rate beside the trial-level one (SPEC §4): ``mean``, ``any``,
        ``all``, ``majority`` or ``at_least:k`` (see
        :func:`evalframe.funnel.reduce_case`). ``at_least:k`` with k above
        every case's planned trials is refused (no case could pass); cases
        that plan fewer than k trials while others plan k or more are
        counted in a ``reducer_unreachable`` note per candidate.
    engine
        ``polars`` (default) or ``spark``: the step runs on Spark
        (:class:`~evalframe.audit.runners.OnSpark`; ``results`` a
        Parquet path or a table name); the report is assembled as on polars. A PySpark or Spark Connect DataFrame
        as ``results`` selects ``spark`` by itself. Needs
        ``pip install 'evalframe[spark]'``. Slices and the missingness tests
        are counted per case on Spark and finished as on polars.
    spark_tables
        Folder Spark writes the full units, attempts and problems tables to
        (Parquet); default a new temporary folder.
    spark_remote
        Spark Connect address (``sc://HOST:PORT``); default a local
        ``local[2]`` session.
    progress
        Called as ``progress(stage, done, total)`` once the inputs are read
        (``"inputs read"``) and as candidates are audited (``"candidates
        audited"``: one step per candidate when auditing candidate by
        candidate, else all at once); see :mod:`evalframe.progress`.
    storage_options
        Options of the object store ``results`` is read from (polars' ``storage_options`` keys, e.g.
        ``aws_endpoint_url``, ``aws_region``), over the credentials of the environment. Never recorded.

    Returns
    -------
    AuditReport
        Tasks are keys (SPEC §1): a plan whose cases carry a ``task`` column
        with two or more values is audited task by task, each task as its
        own batch (:meth:`Plan.for_task <evalframe.plan.Plan.for_task>`;
        ledger rows go to a task by the ledger's own ``task`` column when it
        has one, else by their case), and every check of every task runs
        before any attempt is selected. Every table then has a first
        ``task`` column (String), sorted by task in natural order,
        ``meta["tasks"]`` lists the tasks and :meth:`AuditReport.by_task`
        gives each task's own report. With one task, the report is that of
        the plan without the column.

    Raises
    ------
    AuditRefused
        When any refusing problem exists; ``.problems`` holds every problem
        found (kind, source, line, candidate, case_id, trial, attempt,
        detail, refusing; with two or more tasks a first ``task`` column,
        null for a problem of no task: ``unknown_task``, a row whose case
        is in no task, a problem of the input itself).
    InputFormatError
        When a results file cannot be opened at all (on Spark: one that is not Parquet).
    MissingExtra
        ``engine="spark"`` without ``pip install 'evalframe[spark]'``.
    TypeError
        When ``plan`` is not a :class:`Plan` (a polars frame: build it with :meth:`Plan.from_frame`).
    evalframe.errors.OptionError
        ``engine="spark"`` with two or more tasks (``option="engine"``: an
        audit by task runs on polars); ``slices`` naming ``task`` when the plan
        has tasks. Before any file is read (:func:`~evalframe.audit.arguments.check_options`,
        the same checks and words as the command line's flags): ``retry``,
        ``missing`` or ``grade`` not one of its values, ``max_attempts``
        below 1, ``score_range`` not finite with low < high,
        ``pass_threshold`` given for binary grades or outside
        ``score_range``, a slice that is ``case_id``, repeated or not a plan
        column, bins for a column that is not a slice. ``option`` names the
        argument at fault; a ``ValueError`` too.
    ValueError
        When a bins spec is malformed, ``reducer`` is not one of its values,
        or ``reducer`` is ``at_least:k`` with k above the plan's largest
        number of trials per case.

    Examples
    --------
    >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund", "privacy", "handoff"]}),
    ...                        candidates=["A", "B"])
    >>> results = pl.DataFrame({"candidate": ["A", "A", "B", "B", "B", "B"],
    ...     "case_id": ["quote", "refund", "quote", "refund", "privacy", "handoff"],
    ...     "passed": [1, 1, 1, 1, 1, 0]})
    >>> audit(plan, results).summary.select("candidate", "planned", "scored", "passed",
    ...     "scored_coverage", "pass_rate_scored", "pass_rate_planned")
    shape: (2, 7)
    ┌───────────┬─────────┬────────┬────────┬─────────────────┬──────────────────┬───────────────────┐
    │ candidate ┆ planned ┆ scored ┆ passed ┆ scored_coverage ┆ pass_rate_scored ┆ pass_rate_planned │
    │ ---       ┆ ---     ┆ ---    ┆ ---    ┆ ---             ┆ ---              ┆ ---               │
    │ str       ┆ u32     ┆ u32    ┆ u32    ┆ f64             ┆ f64              ┆ f64               │
    ╞═══════════╪═════════╪════════╪════════╪═════════════════╪══════════════════╪═══════════════════╡
    │ A         ┆ 4       ┆ 2      ┆ 2      ┆ 0.5             ┆ 1.0              ┆ 0.5               │
    │ B         ┆ 4       ┆ 4      ┆ 3      ┆ 1.0             ┆ 0.75             ┆ 0.75              │
    └───────────┴─────────┴────────┴────────┴─────────────────┴──────────────────┴───────────────────┘
    """
    options = Options(
        retry,
        max_attempts,
        tuple(retry_on),
        strict_retries,
        missing,
        grade,
        score_range,
        pass_threshold,
        tuple(slices),
        bins,
        confidence,
        tuple(extra_columns),
        reducer,
        cases,
    )
    plan, options = _checked(plan, options, alpha)
    tasks = plan.tasks
    spark = engine == "spark" or is_spark_frame(results)
    if spark:
        plan = _one_task_on_spark(plan, results, spark_remote)
        tasks = ()
    task_plans = {t: plan.for_task(t) for t in tasks} if tasks else {"": plan}
    # Raises, before any file is read, when no case of a task could reach at_least:k.
    unreachable_by_task = {t: _unreachable_cases(p, options.reducer) for t, p in task_plans.items()}
    on_spark = OnSpark(results, spark_tables, spark_remote) if spark else None
    if on_spark is not None:  # Spark reads the ledger itself, in the runner
        loaded = on_spark.loaded()
    else:
        with remote_options(storage_options):
            loaded = _as_loaded(cast(Results, results), plan)  # not a Spark frame: that selects Spark
    if progress is not None:
        progress("inputs read", 1, 1)
    # Folder keys such as date=2024-01-01 organise a lake; only those naming a ledger column are data.
    layout_only = [k for k in loaded.partitions if k not in KNOWN_COLUMNS]
    loaded = replace(loaded, frame=loaded.frame.drop(layout_only))
    recorded = provenance if provenance is not None else loaded.provenance
    how = _How(options, partition_by, layout_only, alpha, recorded, progress, on_spark)
    with naming_the_damaged_file(loaded):  # a query over a lake that fails names the damaged file
        if not tasks:
            return _audit_batch(plan, loaded, how, unreachable_by_task[""])
        return _audit_tasks(plan, task_plans, loaded, how, unreachable_by_task)


@dataclass(frozen=True)
class _How:
    """What every batch of an audit is audited under: its options and how it runs."""

    options: Options
    partition_by: str | None
    layout_only: Sequence[str]
    alpha: float
    provenance: Mapping[str, Any] | None
    progress: Progress | None
    #: The runner given (Spark's), else one picked by ``partition_by``.
    runner: Runner | None = None


@dataclass
class _Batch:
    """One batch (a plan of one task, or without tasks) run through its runner: its parts, not yet reported."""

    plan: Plan
    loaded: Loaded
    runner: Runner
    parts: list[Part]
    unreachable: pl.DataFrame
    #: The task whose plan this is (its headlines alone are reconciled); None for a batch without tasks.
    task: str | None = None

    @classmethod
    def run(
        cls,
        plan: Plan,
        loaded: Loaded,
        how: _How,
        unreachable: pl.DataFrame,
        *,
        compute: bool = True,
        task: str | None = None,
    ) -> _Batch:
        runner = how.runner or _runner(how.partition_by, plan, loaded)
        try:
            parts = runner.run(plan, loaded, how.options, how.progress, compute=compute)
        except BaseException:
            if runner.store is not None:
                runner.store.close()
            raise
        return cls(plan, loaded, runner, parts, unreachable, task)

    def close(self) -> None:
        if self.runner.store is not None:
            self.runner.store.close()

    def report(self, problems: Problems, how: _How, meta_plan: Plan | None = None) -> AuditReport:
        """The batch's report once nothing refuses; ``meta_plan`` (default its own) is the plan ``meta`` records."""
        computed = [p for p in self.parts if p.summary is not None]
        units, attempts = self.runner.tables(self.plan, computed)
        meta = _meta(
            meta_plan or self.plan,
            self.loaded,
            how.options,
            self.parts,
            self.runner.meta(how.layout_only),
            how.alpha,
            how.provenance,
        )
        summary, slices, missingness = _summary_and_slices(computed, how.alpha, sliced=bool(how.options.slices))
        noted = _with_export_notes(problems, meta, how.options.reducer)
        # Each computed once: the notes and the renderers' tables read the same rows.
        reconciled = _reconciled(summary, attempts, meta, self.task)
        bias = retry_bias_if_retried(attempts, confidence=how.options.confidence)
        found = Problems.gather([noted, self.unreachable, reconciliation_notes(reconciled), retry_bias_notes(bias)])
        return AuditReport(
            summary=summary,
            units=units,
            attempts=attempts,
            # Bounded (SPEC §3 "Problems at scale"): the first rows of each kind; the rest stay in files.
            problems=found.shown,
            slices=slices,
            missingness=missingness,
            found=found,
            meta=meta,
            store=self.runner.store,
            task=self.task,
            retry_bias=bias,
            reconciliation=reconciled,
        )


def _audit_batch(plan: Plan, loaded: Loaded, how: _How, unreachable: pl.DataFrame) -> AuditReport:
    """The audit of one batch (no tasks): every check, then, when nothing refuses, the report."""
    loaded = replace(loaded, problems=of_task(loaded.problems, None))
    batch = _Batch.run(plan, loaded, how, unreachable)
    try:
        problems = batch_problems(loaded.problems, batch.parts, loaded.source)
        if problems.refusing:
            raise AuditRefused(problems)
        return batch.report(problems, how)
    except BaseException:
        batch.close()
        raise


def _of_task(how: _How, task: str) -> _How:
    """``how`` with the provenance of ``task`` alone: the exports (files an importer read) naming another task dropped.

    A task's report records the files it was read from, and what they say (a metric, a scorer) describes that
    task's grades only; an export that names no task is kept in every task.
    """
    exports = (how.provenance or {}).get("exports")
    if not isinstance(exports, list):
        return how
    own = [e for e in exports if not isinstance(e, Mapping) or e.get(TASK) in (None, task)]
    return replace(how, provenance={**(how.provenance or {}), "exports": own})


def _audit_tasks(
    plan: Plan, task_plans: Mapping[str, Plan], loaded: Loaded, how: _How, unreachable: Mapping[str, pl.DataFrame]
) -> AuditReport:
    """The audit of a plan with tasks: each task audited as its own batch, every check of every task first.

    Once a task's checks refused, no later task's attempts are selected; one
    :class:`~evalframe.errors.AuditRefused` then holds every task's problems (with two or more tasks, each
    labelled with its ``task``; rows in no task with none). With one task, that task's report is the
    audit's (no ``task`` column anywhere, the meta of the plan given); with more, the report of every
    task in one (see :func:`_combined`).
    """
    # An audit by candidate (or "auto", which may be one) reads one candidate's rows at a time: no task's rows
    # are held whole. Otherwise the rows are read once and split by task in memory.
    routed = route(plan, task_plans, loaded, mode="one_pass" if how.partition_by is None else "filters")
    several = len(routed.tasks) > 1
    batches: list[_Batch] = []
    try:
        refused = bool(routed.unknown_task.height)
        for name, task_plan, task_loaded in routed.tasks:
            batch = _Batch.run(task_plan, task_loaded, how, unreachable[name], compute=not refused, task=name)
            batches.append(batch)
            refused = refused or any(p.checks_refused for p in batch.parts)
        # A row whose case is in no task is checked against the whole plan: its unknown_case, once.
        stray_problems = problems_frame() if routed.no_task is None else _no_task_problems(plan, routed.no_task, how)
        labelled = [
            replace(p, problems=_labelled(p.problems, name if several else None, several, plan))
            for (name, _, _), batch in zip(routed.tasks, batches, strict=True)
            for p in batch.parts
        ]
        notes = loaded.problems if several else of_task(loaded.problems, None)
        read = _labelled(Problems.gather([notes, routed.unknown_task, stray_problems]), None, several)
        problems = batch_problems(read, labelled, loaded.source)
        if problems.refusing:
            raise AuditRefused(problems)
        if not several:
            only = batches[0]
            mine = of_task(loaded.problems, None)
            return only.report(batch_problems(mine, only.parts, loaded.source), how, meta_plan=plan)
        # A task's report holds the input's notes of no task and those of its own task.
        reports = [
            batch.report(
                batch_problems(of_task(loaded.problems, name), batch.parts, loaded.source), _of_task(how, name)
            )
            for (name, _, _), batch in zip(routed.tasks, batches, strict=True)
        ]
        by_candidate = CANDIDATE if any(b.runner.partition_by == CANDIDATE for b in batches) else None
        meta = {**_meta(plan, loaded, how.options, [p for b in batches for p in b.parts],
                        layout_meta(by_candidate, how.layout_only), how.alpha, how.provenance),
                "tasks": [name for name, _, _ in routed.tasks]}  # fmt: skip
        # The input's own problems (the loader's, an importer's notes) are listed once: with the task an
        # importer's note is about, else of no task.
        read_notes = with_task(
            _with_export_notes(Problems.gather([loaded.problems]), meta, how.options.reducer).every(), None
        )
        own = [
            with_task(
                Problems.gather(
                    [
                        batch_problems(problems_frame(), b.parts, loaded.source),
                        b.unreachable,
                        r.found.of_kinds(OWN_NOTES) if r.found is not None else problems_frame(),  # not found again
                    ]  # fmt: skip
                ).every(),
                n,
            )
            for (n, _, _), b, r in zip(routed.tasks, batches, reports, strict=True)
        ]
        return _combined(reports, meta, Problems.gather([read_notes, *own]), how.options.confidence)
    except BaseException:
        for batch in batches:
            batch.close()
        raise


def _no_task_problems(plan: Plan, rows: pl.LazyFrame, how: _How) -> Problems:
    """The problems of rows whose case is in no task: checked against the whole plan, each is one unknown_case.

    Its other problems (a bad grade, an unknown candidate) are found as in any batch; the planned units
    those rows leave without a row are not theirs to report (every task reports its own).
    """
    return check_and_select(one_per_case(plan), rows, how.options, compute=False).problems.without(["missing_unit"])


def _labelled(problems: Problems, task: str | None, several: bool, plan: Plan | None = None) -> Problems:
    """``problems`` labelled with their ``task`` (see :func:`~evalframe.problems.with_task`) when there are several.

    With the whole ``plan``, a task's unknown case that another task plans says so (see :func:`elsewhere`).
    """
    if not several:
        return problems
    every = problems.every() if task is None or plan is None else elsewhere(problems.every(), task, plan)
    return Problems.gather([with_task(every, task)], kept=problems.kept)


def _combined(reports: Sequence[AuditReport], meta: dict[str, Any], found: Problems, confidence: float) -> AuditReport:
    """One report of every task's (same order): each table with a first ``task`` column, concatenated.

    ``found`` are the problems, labelled with their task (see :func:`~evalframe.problems.with_task`). The
    task reports stay the report's (:meth:`AuditReport.by_task`); closing it closes them. Its ``retry_bias``
    is its own (every task's rows once any unit of any task was retried, as its ``attempt_rates``); its
    ``reconciliation`` is the tasks' (each task reconciles its own headlines once, its notes read the same rows).
    """
    names: list[str] = meta["tasks"]

    def joined(tables: Sequence[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame | pl.LazyFrame:
        tagged = [
            t.lazy().select(pl.lit(name, pl.String).alias(TASK), pl.all())
            for name, t in zip(names, tables, strict=True)
            if t.lazy().collect_schema().len()
        ]
        if not tagged:
            return pl.DataFrame()
        frame = pl.concat(tagged, how="diagonal_relaxed")
        return frame if any(isinstance(t, pl.LazyFrame) for t in tables) else frame.collect()

    attempts = joined([r.attempts for r in reports])
    return AuditReport(
        summary=joined([r.summary for r in reports]),  # type: ignore[arg-type]
        units=joined([r.units for r in reports]),
        attempts=attempts,
        problems=found.shown,
        slices=joined([r.slices for r in reports]),  # type: ignore[arg-type]
        missingness=joined([r.missingness for r in reports]),  # type: ignore[arg-type]
        meta=meta,
        found=found,
        task_reports=tuple(reports),
        retry_bias=retry_bias_if_retried(attempts, confidence=confidence),
        reconciliation=reconciliation_of_tasks([r.reconciliation for r in reports]),
    )


def _checked(plan: Plan, o: Options, alpha: float) -> tuple[Plan, Options]:
    """The plan (bins' columns numeric) and options of an audit once checked, quantile bins resolved.

    Raises :class:`~evalframe.errors.OptionError` as :func:`~evalframe.audit.arguments.check_options` does; a
    plan that is not a :class:`Plan` (``ef.read``'s planned-units frame, say) is a TypeError naming the way.
    """
    if not isinstance(plan, Plan):
        msg = (
            f"plan must be an evalframe Plan, got {type(plan).__name__}: build one with "
            "ef.Plan.from_frame(frame) (a units table with candidate, case_id[, trial] plans exactly its rows)"
        )
        raise TypeError(msg)
    check_options(
        retry=o.retry,
        missing=o.missing,
        grade=o.grade,
        max_attempts=o.max_attempts,
        score_range=o.score_range,
        pass_threshold=o.pass_threshold,
        slices=o.slices,
        bins=o.bins or (),
        cases=o.cases,
        confidence=o.confidence,
        alpha=alpha,
    )
    check_slices(o.slices, plan.cases.columns)
    if o.bins:
        plan = plan.with_numeric([name for name in o.bins if name in plan.cases.columns])
    return plan, replace(o, bins=_resolved_bins(plan, o.slices, o.bins), reducer=check_reducer(o.reducer))


def _runner(partition_by: str | None, plan: Plan, loaded: Loaded) -> Runner:
    """The runner ``partition_by`` names.

    ``"auto"`` decides by the ledger's rows (Parquet: from the footers) or the plan's size (see
    :data:`AUTO_PARTITION_ROWS`).
    """
    if partition_by == "auto":
        rows = collect_input(loaded.frame.select(pl.len()), loaded.source).item()
        partition_by = CANDIDATE if max(rows, plan.n_units) >= AUTO_PARTITION_ROWS else None
    if partition_by is None:
        return WholeBatch()
    if partition_by == CANDIDATE:
        return ByCandidate()
    msg = f"partition_by must be None, 'candidate' or 'auto', got {partition_by!r}"
    raise ValueError(msg)


def _summary_and_slices(
    computed: Sequence[Part], alpha: float, *, sliced: bool
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The report's summary, slices and missingness tables from the computed parts.

    Parts come in candidate order, each sorted by its unit code: their concatenations are sorted by key. One
    test family spans the whole audit (every candidate and slice column): Holm's correction spans them all.
    """
    summary = pl.concat([p.summary for p in computed if p.summary is not None], how="diagonal_relaxed")
    if not sliced:
        return summary, pl.DataFrame(), pl.DataFrame()
    slice_table = pl.concat([p.slices for p in computed if p.slices is not None], how="diagonal_relaxed")
    case_tables = [p.case_slices for p in computed if p.case_slices is not None]
    tests = missingness_tests(pl.concat(case_tables), alpha=alpha) if case_tables else pl.DataFrame()
    summary = summary.join(selective_flag(tests), on=CANDIDATE, how="left")
    return summary, slice_table, tests


def _meta(
    plan: Plan,
    loaded: Loaded,
    o: Options,
    parts: Sequence[Part],
    engine: Mapping[str, Any],
    alpha: float,
    provenance: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """``report.meta`` of an audit (see :func:`evalframe.audit.meta.audit_meta`); ``engine``: the runner's facts."""
    shape = next((p.shape for p in parts if p.shape != "unknown"), parts[0].shape if parts else "unknown")
    return audit_meta(
        plan,
        o,
        source=loaded.source,
        shape=shape,
        rows=sum(p.rows for p in parts),
        run_ids={r for p in parts for r in p.run_ids},
        alpha=alpha,
        provenance=provenance,
        **engine,
    )


def _with_export_notes(problems: Problems, meta: Mapping[str, Any], reducer: str) -> Problems:
    """``problems`` plus the notes of what the exports' headers record against the audit's own reading.

    A ``reducer_differs`` note when an export's header records another case reducer (the plan's declared
    reducer applies, SPEC §4); a ``settings_pooled`` note per (task, candidate) whose exports, audited
    together, record different settings (:func:`evalframe.compare.settings.pooled_settings_notes`).
    """
    exports = meta.get("exports", [])
    exports = exports if isinstance(exports, list) else []
    recorded = sorted({str(e["case_reducer"]) for e in exports if isinstance(e, Mapping) and e.get("case_reducer")})
    differs = [r for r in recorded if _meaning_or_name(r) != reducer_meaning(reducer)]
    rows = pooled_settings_notes(exports)
    if differs:
        detail = f"the export records the case reducer {', '.join(differs)}; the audit applies the declared {reducer!r}"
        rows.append({"kind": "reducer_differs", "detail": detail, "refusing": False})
    return Problems.gather([problems, problems_frame(rows)]) if rows else problems


#: The notes a batch's report adds of its own, once its tables exist (see :meth:`_Batch.report`).
OWN_NOTES: Final = ("headline_reconciled", "retry_bias")


def _reconciled(
    summary: pl.DataFrame, attempts: pl.DataFrame | pl.LazyFrame, meta: Mapping[str, Any], task: str | None
) -> pl.DataFrame:
    """Each headline the exports reported, reconciled with this batch's summary (:attr:`AuditReport.reconciliation`).

    ``task``: the batch's one task (headlines of another are left out); None for a batch without tasks.
    """
    exports = meta.get("exports")
    if not isinstance(exports, list) or not exports:
        return no_reconciliation()
    return reconciliation(summary, exports, attempts=attempts, task=task)


def _meaning_or_name(recorded: str) -> str:
    """What a reducer an export records does, in evalframe's names; a name evalframe does not know, as it is."""
    try:
        return reducer_meaning(recorded)
    except ValueError:
        return recorded


def _unreachable_cases(plan: Plan, reducer: str) -> pl.DataFrame:
    """Refuse a counted reducer no planned case can reach; a note of the cases that cannot reach it.

    A case passes ``at_least:k`` only with k passed trials, so a case planning fewer than k trials counts
    as failing whatever its grades (SPEC §4: a number the plan fixed before any result was read). When that
    is every case, the case-level rate is 0 by construction: the audit refuses before reading the ledger.
    ``pass_at:k`` estimates the chance that k of a case's trials hold a pass, which needs k trials in
    every case: a plan with a case of fewer is refused.

    Returns
    -------
    polars.DataFrame
        A problems table: one non-refusing ``reducer_unreachable`` row per candidate some of whose planned
        cases plan fewer than k trials (empty for the other reducers, and when every case plans k or more).

    Raises
    ------
    ValueError
        When k exceeds the largest number of trials any (candidate, case) of the plan plans, or, for
        ``pass_at:k``, the smallest.
    """
    k = reducer_count(reducer)
    if k is None:
        return problems_frame()
    coding = plan.coding
    if plan.unit_codes is None:  # the cross product: every case of every candidate plans plan.trials trials
        n = len(coding.candidates)
        per_case = pl.DataFrame(
            {"_cand": range(n), "_trials": [plan.trials] * n, "_cases": [coding.n_cases] * n},
            schema={"_cand": pl.Int64, "_trials": pl.Int64, "_cases": pl.Int64},
        )
    else:  # a units table: count the trials of each (candidate, case) from the unit codes, never decoding them
        pair = plan.unit_codes // coding.span
        per_pair = pair.value_counts(name="_trials").with_columns((pl.col(pair.name) // coding.n_cases).alias("_cand"))
        per_case = per_pair.group_by("_cand", "_trials").agg(pl.len().alias("_cases"))
    fewest = int(per_case.get_column("_trials").min() or 0)  # type: ignore[arg-type]
    if per_case.height and reducer_meaning(reducer).startswith("pass_at") and k > fewest:
        msg = (
            f"reducer {reducer!r} estimates pass@{k} from {k} trials of each case, but a planned case has "
            f"{fewest} trial(s) (use k <= {fewest})"
        )
        raise ValueError(msg)
    largest = int(per_case.get_column("_trials").max() or 0)  # type: ignore[arg-type]
    if per_case.height and k > largest:
        msg = (
            f"reducer {reducer!r} needs {k} passed trials in a case, but the plan has at most {largest} "
            f"trial(s) per case: no case could ever pass (use k <= {largest}, or 'all')"
        )
        raise ValueError(msg)
    short = (
        per_case.group_by("_cand")
        .agg(
            pl.col("_cases").filter(pl.col("_trials") < k).sum().alias("short"),
            pl.col("_cases").sum().alias("cases"),
            pl.col("_trials").filter(pl.col("_trials") < k).min().alias("fewest"),
        )
        .filter(pl.col("short") > 0)
        .sort("_cand")
    )
    rows = []
    for cand, n, cases, fewest in short.select("_cand", "short", "cases", "fewest").iter_rows():
        name = coding.candidates[cand]
        which = f"every one of the {cases}" if n == cases else f"{n} of {cases}"
        detail = (
            f"{which} planned cases of {name} plan fewer than {k} trials (fewest {fewest}): they can never pass "
            f"{reducer!r}, so case_pass_rate counts them as failing"
        )
        rows.append({"kind": "reducer_unreachable", CANDIDATE: name, "detail": detail, "refusing": False})
    return problems_frame(rows)


def with_ledger_problems(
    refused: PlanError,
    results: Results,
    *,
    missing: MissingPolicy = "report",
    grade: GradeKind = "binary",
    score_range: tuple[float, float] = (0.0, 1.0),
    pass_threshold: float | None = None,
    extra_columns: Sequence[str] = (),
) -> PlanError:
    """A plan's refusal together with every ledger problem that does not depend on what the plan got wrong.

    SPEC §3 asks for every problem in one run: a plan that repeats a case still names its cases, so a
    ledger's bad grades, unknown cases or candidates and missing columns are found against the plan's
    :attr:`~evalframe.errors.PlanError.checkable` part (its distinct cases, its valid candidates) and
    listed beside the plan's own problems. Only the checks run (no attempt is selected, no rate computed);
    a plan with nothing left to check against (no case id column, no case, no valid candidate) is
    ``refused`` as it is. Options as in :func:`audit`.

    Examples
    --------
    >>> try:
    ...     Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q1"]}), candidates=["A"])
    ... except PlanError as exc:
    ...     refused = exc
    >>> ledger = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["q1", "zz"], "passed": ["2", "1"]})
    >>> sorted(with_ledger_problems(refused, ledger).problems.get_column("kind").to_list())
    ['duplicate_case', 'duplicate_case', 'invalid_grade', 'unknown_case']
    """
    plan = refused.checkable
    if not isinstance(plan, Plan):
        return refused
    loaded = _as_loaded(results, plan)
    layout_only = [k for k in loaded.partitions if k not in KNOWN_COLUMNS]
    if TASK in plan.cases.columns:  # the plan names tasks: the ledger's own task column is not checked here
        layout_only = [*layout_only, *(c for c in loaded.frame.collect_schema().names() if c == TASK)]
    options = Options(
        "first", None, EXEC_FAILURES, False, missing, grade, score_range, pass_threshold, (), None, DEFAULT_CONFIDENCE,
        tuple(extra_columns),
    )  # fmt: skip
    with naming_the_damaged_file(loaded):
        part = check_and_select(one_per_case(plan), loaded.frame.drop(layout_only), options, compute=False)
    ledger = batch_problems(of_task(loaded.problems, None), [part], loaded.source)
    if not ledger.refusing:
        return refused
    notes = ledger.counts.filter(~pl.col(REFUSING)).get_column(KIND).to_list()  # e.g. missing units: not problems
    return PlanError(Problems.gather([refused.found, ledger.without(notes)]))
