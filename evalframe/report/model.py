"""The frozen audit report: the data object every step above the audit reads.

A report is immutable: its tables are polars DataFrames sorted by key, so the
same plan and ledger always give byte-identical tables whatever the row order
of the inputs. It renders and writes itself with the view builder and the
renderers, imported inside the methods that render (the one place the core
reaches them: the exemptions of the import contract in pyproject.toml), so
importing the audit and the comparison, which build on this module, loads no
renderer.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalframe.attempts import attempt_rates, has_retries, retried_by_slice
from evalframe.columns import CANDIDATE, CASE_ID, FUNNEL_OUTCOMES, KIND, OUTCOME, OUTCOMES, REFUSING, TASK
from evalframe.errors import OptionError, ReportClosed
from evalframe.funnel.counts import outcome_in
from evalframe.funnel.reported import no_reconciliation
from evalframe.problems import COUNT, Problems
from evalframe.progress import Progress
from evalframe.report.output import ExchangeGuard, write_output
from evalframe.slices import interval_of
from evalframe.store import TableStore

if TYPE_CHECKING:
    from evalframe.compare import Comparison
    from evalframe.report.view import TasksView, View


@dataclass(frozen=True, repr=False)
class AuditReport:
    """The result of an audit. Immutable; every table is sorted by key.

    Attributes
    ----------
    summary
        One row per candidate: the funnel counts (UInt32), rates (Float64
        fractions named by their denominators, see :mod:`evalframe.funnel`)
        with intervals ``<rate>_ci_low``/``_high`` that treat cases as the
        independent units (see :func:`evalframe.funnel.with_uncertainty`),
        clustered standard errors, the design effect, ``missing_cases`` (UInt32, distinct cases with a
        missing unit) and ``missing_case_ids`` (List[String], the first 20
        of them in natural order, see :mod:`evalframe.natural`).
    units
        One row per planned unit (per counted attempt under policy
        ``every``): plan columns, the counted attempt's ledger columns,
        ``counted_attempt``, ``attempts`` and ``outcome``. A
        ``polars.LazyFrame`` over temporary Parquet files after
        ``audit(..., partition_by="candidate")`` or on Spark (the files
        are the report's: they stay, even when the report itself is gone,
        until :meth:`close` or interpreter exit); a DataFrame otherwise.
    attempts
        Every ledger row of a planned unit with ``attempts`` and ``counts``
        (lazy like ``units``).
    problems
        Non-refusing problems (missing units, retry flags); see
        :mod:`evalframe.problems`. Bounded (SPEC §3 "Problems at scale"):
        the first :data:`~evalframe.problems.PROBLEM_ROWS_KEPT` rows of each
        kind, sorted, hence every problem when no kind has more;
        :attr:`problem_counts` counts them all, :meth:`all_problems` reads
        every row and ``problems.parquet`` holds every row.
    slices
        One row per (candidate, slice column, slice value): the funnel,
        ``missing_rate`` and ``missing_ratio`` (see :mod:`evalframe.slices`);
        empty when no slice was declared.
    missingness
        One row per (candidate, slice column): the test of independence
        between slice and missingness; empty when no slice was declared.
    meta
        Provenance: evalframe version, plan hash and source, results
        source, candidates, trials, run ids, policies.
    found
        The bounded problems table behind ``problems``
        (:class:`~evalframe.problems.Problems`: counts, first rows, the rest
        in temporary files removed by :meth:`close`, as ``store`` is); None
        when ``problems`` holds every problem.
    store
        The temporary folder of the lazy tables' files
        (:class:`~evalframe.store.TableStore`), removed by
        :meth:`close`; None when every table is in memory.
    task_reports
        With two or more tasks (SPEC §1: tasks are keys), each task's own
        report, in the order of ``meta["tasks"]`` (see :meth:`by_task`);
        every table above is then theirs concatenated with a first ``task``
        column (String), sorted by task; empty otherwise.
    task
        The task this report is of, when its plan is one task of a plan
        with tasks (each of ``task_reports``, or the audit of a one-task
        plan): only that task's reported headlines are reconciled with it
        (:attr:`reconciliation`); None otherwise.
    retry_bias
        When a unit was retried, the headline under ``first`` beside the declared policy's, one row per
        ([task,] candidate) (:func:`evalframe.attempts.retry_bias`); no rows when none was. Computed once
        by the audit (:func:`evalframe.attempts.retry_bias_if_retried`): its ``retry_bias`` notes and the
        renderers' retry table both read it.
    reconciliation
        Each headline the exports reported beside the audited rates, its gap decomposed: the table of
        :func:`evalframe.funnel.reported.reconciliation` over :attr:`summary`, ``meta["exports"]`` and
        :attr:`attempts` (one row per reported headline: ``reported``, ``implied_denominator``,
        ``pass_rate_scored``, ``pass_rate_planned``, ``pass_rate_upper``, ``gap`` and the ``points_*``
        columns that sum to it, Float64; ``sentence``, String); no rows when no export reported one (a
        ledger, or an export without a header). Computed once by the audit, per batch: its
        ``headline_reconciled`` notes and the renderers' table both read it; with tasks, each task's
        report holds its own and this one theirs concatenated
        (:func:`evalframe.funnel.reported.reconciliation_of_tasks`).

    Examples
    --------
    A report used as a context manager removes its files on leaving the block:

    >>> import evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
    >>> ledger = pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]})
    >>> with ef.audit(plan, ledger, partition_by="candidate") as report:
    ...     report.units.select("case_id", "outcome").collect().rows()
    [('quote', 'passed'), ('refund', 'missing')]
    >>> report.closed
    True
    >>> report.outcome_counts()  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    evalframe.errors.ReportClosed: the report is closed (its folder's name differs on every run)
    """

    summary: pl.DataFrame
    units: pl.DataFrame | pl.LazyFrame
    attempts: pl.DataFrame | pl.LazyFrame
    problems: pl.DataFrame
    slices: pl.DataFrame = field(default_factory=pl.DataFrame)
    missingness: pl.DataFrame = field(default_factory=pl.DataFrame)
    meta: Mapping[str, Any] = field(default_factory=dict)
    found: Problems | None = field(default=None, repr=False, compare=False)
    store: TableStore | None = field(default=None, repr=False, compare=False)
    task_reports: tuple[AuditReport, ...] = field(default=(), repr=False, compare=False)
    task: str | None = field(default=None, repr=False, compare=False)
    retry_bias: pl.DataFrame = field(default_factory=pl.DataFrame, repr=False, compare=False)
    reconciliation: pl.DataFrame = field(default_factory=no_reconciliation, repr=False, compare=False)

    def _stores(self) -> list[TableStore]:
        """The stores of the lazy tables' files and of the problems beyond the first rows of each kind.

        With tasks, those of every task's report too.
        """
        own = [*([self.store] if self.store is not None else []), *(self.found.stores if self.found else ())]
        return [*own, *(s for r in self.task_reports for s in r._stores())]

    def by_task(self) -> dict[str, AuditReport]:
        """Each task's own report, by task name, in the plan's task order: the audit of that task alone.

        A report of one batch without tasks (no ``task`` column, or one task) is its one unnamed task:
        ``{"": report}``. A task's report shares its files with this one: :meth:`close` closes them all.

        Examples
        --------
        >>> import evalframe as ef
        >>> cases = pl.DataFrame({"case_id": ["b/1", "d/1"], "task": ["belief", "desire"]})
        >>> plan = ef.Plan.from_frame(cases, candidates=["A"])
        >>> ledger = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["b/1", "d/1"], "passed": [1, 0]})
        >>> report = ef.audit(plan, ledger)
        >>> report.summary.select("task", "candidate", "passed").rows()
        [('belief', 'A', 1), ('desire', 'A', 0)]
        >>> {task: r.summary.get_column("passed").to_list() for task, r in report.by_task().items()}
        {'belief': [1], 'desire': [0]}
        >>> list(ef.audit(plan.for_task("belief"), ledger.head(1)).by_task())
        ['']
        """
        if not self.task_reports:
            return {"": self}
        return dict(zip(self.meta["tasks"], self.task_reports, strict=True))

    @cached_property
    def attempt_rates(self) -> pl.DataFrame:
        """Pass rate by attempt number when a unit was retried (computed once); no rows when none was.

        The table of :func:`evalframe.attempts.attempt_rates` over :attr:`attempts`: one row per
        ([task,] candidate, attempt number) with ``attempted``, ``scored``, ``passed``, ``cases``
        (UInt32), ``pass_rate_scored`` and its case-clustered interval (Float64).

        Raises
        ------
        ReportClosed
            When :meth:`close` removed the files the lazy attempts read.

        Examples
        --------
        >>> import evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
        >>> ledger = pl.DataFrame({"candidate": ["A"] * 3, "case_id": ["quote", "quote", "refund"],
        ...     "attempt": [1, 2, 1], "exec_status": ["error", "completed", "completed"], "passed": [None, 1, 0]})
        >>> report = ef.audit(plan, ledger, retry="last_allowed")
        >>> report.attempt_rates.select("attempt", "attempted", "scored", "passed").rows()
        [(1, 2, 1, 0), (2, 1, 1, 1)]
        """
        self._check_open()
        retried = has_retries(self.attempts)
        return attempt_rates(self.attempts.lazy().collect() if retried else self.attempts.lazy().head(0).collect())

    @cached_property
    def retried_by_slice(self) -> pl.DataFrame:
        """Retried units' pass rate beside never-retried units', per slice value (computed once); none without retries.

        The table of :func:`evalframe.attempts.retried_by_slice` over :attr:`units` and the plan's slice
        columns: one row per (slice, value, [task,] candidate) holding a retried unit, the whole candidate
        first (``slice`` null), with units, scored and passed units of each group (UInt32) and their
        rates (Float64).

        Raises
        ------
        ReportClosed
            When :meth:`close` removed the files the lazy units read.

        Examples
        --------
        >>> import evalframe as ef
        >>> cases = pl.DataFrame({"case_id": ["a", "b", "c"], "lang": ["en", "en", "fr"]})
        >>> ledger = pl.DataFrame({"candidate": "A", "case_id": ["a", "a", "b", "c"], "attempt": [1, 2, 1, 1],
        ...     "exec_status": ["timeout", "completed", "completed", "completed"], "passed": [None, 0, 1, 1]})
        >>> plan = ef.Plan.from_frame(cases, candidates=["A"])
        >>> report = ef.audit(plan, ledger, retry="last_allowed", slices=["lang"])
        >>> report.retried_by_slice.select("value", "retried_passed", "retried_scored", "never_passed").rows()
        [(None, 0, 1, 2), ('en', 0, 1, 1)]
        """
        self._check_open()
        slices = [str(s) for s in self.meta.get("slices", [])]
        return retried_by_slice(self.units, [s for s in slices if s in self.units.collect_schema().names()])

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` removed the files the lazy tables read (False when there are none)."""
        return any(store.closed for store in self._stores())

    def close(self) -> None:
        """Remove the temporary files the lazy ``units``, ``attempts`` and :meth:`all_problems` read.

        Those of :attr:`store` and of :attr:`found`. Nothing to do when every table is in memory; a second
        call does nothing. Without it the files stay until the interpreter exits, and tables taken from
        the report stay readable until then. After it, :meth:`tables`, :meth:`all_problems`,
        :meth:`outcome_counts`, :meth:`view` and :meth:`write` raise
        :class:`~evalframe.errors.ReportClosed` (a lazy table taken before raises polars' own error).
        """
        for store in self._stores():
            store.close()

    def _check_open(self) -> None:
        """Raise :class:`~evalframe.errors.ReportClosed` when :meth:`close` removed the tables' files."""
        for store in self._stores():
            if store.closed:
                raise ReportClosed(str(store.folder))

    def __enter__(self) -> AuditReport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def problem_counts(self) -> pl.DataFrame:
        """Every problem counted, shown or not: ``kind`` (String), ``refusing`` (Boolean), ``count`` (Int64), sorted.

        Examples
        --------
        >>> import evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
        >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
        >>> report.problem_counts.rows()
        [('missing_unit', False, 1)]
        """
        if self.found is not None:
            return self.found.counts
        counted = self.problems.group_by(KIND, REFUSING).agg(pl.len().cast(pl.Int64).alias(COUNT))
        return counted.sort(KIND, REFUSING, nulls_last=False)

    def all_problems(self) -> pl.LazyFrame:
        """Every problem, sorted (lazy: collecting millions of rows takes their memory; ``write`` streams them).

        The frame stays readable after the report is gone, until :meth:`close` (or interpreter exit).

        Raises
        ------
        ReportClosed
            When :meth:`close` removed the files the rows beyond the first of each kind are read from.
        """
        self._check_open()
        return self.found.every() if self.found is not None else self.problems.lazy()

    def tables(self) -> dict[str, pl.DataFrame | pl.LazyFrame]:
        """The report's tables by file stem (``units``, ``attempts`` and ``problems`` may be lazy: streamed).

        ``reconciliation``, ``attempt_rates`` and ``retried_by_slice`` (:attr:`reconciliation`,
        :attr:`attempt_rates`, :attr:`retried_by_slice`) are among them only when they have rows: an
        export reported a headline; a unit was retried.

        Raises
        ------
        ReportClosed
            When :meth:`close` removed the files the lazy tables read.
        """
        self._check_open()
        every = self.all_problems() if self.found is not None and not self.found.complete else self.problems
        tables = {"summary": self.summary, "units": self.units, "attempts": self.attempts, "problems": every}
        if self.slices.width:
            tables |= {"slices": self.slices, "missingness": self.missingness}
        derived = {
            "reconciliation": self.reconciliation,
            "attempt_rates": self.attempt_rates,
            "retried_by_slice": self.retried_by_slice,
        }
        return tables | {name: table for name, table in derived.items() if table.height}

    def outcome_counts(self) -> pl.DataFrame:
        """Units per (candidate, outcome), every outcome present in the units table, sorted.

        Returns
        -------
        polars.DataFrame
            Columns ``candidate``, ``outcome`` (String) and ``units``
            (UInt32); outcomes with no unit are absent.

        Examples
        --------
        >>> import evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
        >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
        >>> report.outcome_counts().rows()
        [('A', 'missing', 1), ('A', 'passed', 1)]
        """
        self._check_open()
        return (
            self.units.lazy()
            .group_by(CANDIDATE, pl.col(OUTCOME).cast(pl.String))
            .len("units")
            .with_columns(pl.col("units").cast(pl.UInt32))
            .sort(CANDIDATE, OUTCOME)
            .collect()
        )

    def units_of(
        self,
        *,
        candidate: str | None = None,
        outcome: str | None = None,
        task: str | None = None,
        slice: str | None = None,
        value: Any = None,
        case_id: str | None = None,
    ) -> pl.DataFrame:
        """The units behind a number: the rows of :attr:`units` that match every filter given, in its order.

        Parameters
        ----------
        candidate, task, case_id
            Keep the units of this candidate, task, case.
        outcome
            An outcome of the units table (:data:`~evalframe.columns.OUTCOMES`: ``passed``, ``failed``,
            ``missing``, ``exec_failed``, ``judge_failed``, ``not_scored`` ...) or a funnel count that adds
            several up (``completed``, ``with_output``, ``scored``; see :func:`evalframe.funnel.funnel`):
            the units counted in the summary's column of that name.
        slice, value
            A declared slice column and one of its values, as the slice tables show it (compared as
            text; a binned slice's value is its bin, ``"(40, 135]"``, while its units keep their raw value).

        Returns
        -------
        polars.DataFrame
            The matching rows of :attr:`units`, every column (collected when ``units`` is lazy).

        Raises
        ------
        OptionError
            A candidate, task, outcome or slice the report does not hold (the error names it and
            lists the valid ones), or ``value`` without ``slice``.
        ReportClosed
            When :meth:`close` removed the files the lazy tables read.

        Examples
        --------
        >>> import evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
        >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
        >>> report.units_of(candidate="A", outcome="missing").select("case_id", "outcome").rows()
        [('refund', 'missing')]
        >>> report.units_of(outcome="lost")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        evalframe.errors.OptionError: outcome 'lost' is not one of ...
        """
        self._check_open()
        units = self.units.lazy()
        filters = [pl.lit(True)]
        for name, given, valid in (
            (CANDIDATE, candidate, [str(c) for c in self.meta.get("candidates") or []]),
            (TASK, task, [str(t) for t in self.meta.get("tasks") or []]),
            ("slice", slice, [str(s) for s in self.meta.get("slices") or []]),
            (
                OUTCOME,
                outcome,
                list(dict.fromkeys([*OUTCOMES, *(k for k in FUNNEL_OUTCOMES if not k.startswith("_"))])),
            ),
        ):
            if given is not None and given not in valid:
                listed = ", ".join(map(repr, valid)) or "none"
                raise OptionError(name, f"{name} {given!r} is not one of the report's: {listed}")
        if value is not None and slice is None:
            raise OptionError("value", f"value {value!r} needs the slice column it is a value of (slice=...)")
        if candidate is not None:
            filters.append(pl.col(CANDIDATE) == candidate)
        if task is not None:
            filters.append(pl.col(TASK) == task)
        if case_id is not None:
            filters.append(pl.col(CASE_ID) == case_id)
        if slice is not None and value is not None:
            edges = (self.meta.get("bins") or {}).get(slice)
            shown = pl.col(slice).cast(pl.String) if edges is None else interval_of(pl.col(slice), edges)
            filters.append(shown == str(value))
        if outcome is not None:
            filters.append(outcome_in(units.collect_schema(), *FUNNEL_OUTCOMES.get(outcome, (outcome,))))
        return units.filter(*filters).collect()

    def view(
        self, comparison: Comparison | None = None, *, min_coverage: float | None = None
    ) -> View | TasksView:
        """The one view of the report every renderer lays out.

        A report whose ``meta["tasks"]`` lists two or more tasks gives a
        :class:`~evalframe.report.view.TasksView`: one view per task of
        :meth:`by_task` (see :func:`~evalframe.report.view.build_task_views`),
        never a number pooled over tasks; any other report gives its
        :class:`~evalframe.report.view.View` (see :func:`~evalframe.report.view.build_view`).

        Raises
        ------
        OptionError
            ``comparison`` with a report of several tasks: a comparison is of one task's candidates
            (compare and render that task's report, ``report.by_task()[task]``).
        ReportClosed
            When :meth:`close` removed the files the lazy tables read.
        """
        from evalframe.report.view import build_task_views, build_view, task_names

        self._check_open()
        tasks = task_names(self)
        if len(tasks) >= 2:
            if comparison is not None:
                raise OptionError(
                    "comparison",
                    f"the report holds {len(tasks)} tasks ({', '.join(tasks)}): a comparison is of one task's "
                    "candidates; render that task's report (report.by_task()[task]) with it",
                )
            of_no_task = self.problems.filter(pl.col(TASK).is_null()) if TASK in self.problems.columns else None
            return build_task_views(self.by_task(), min_coverage=min_coverage, batch_problems=of_no_task)
        return build_view(self, comparison, min_coverage=min_coverage)

    def to_markdown(self, comparison: Comparison | None = None, *, min_coverage: float | None = None) -> str:
        """Render the report as Markdown: verdict, headline, funnel, rates, missing units, slices, notes, provenance.

        Parameters
        ----------
        comparison
            A paired comparison of two of the report's candidates: its verdict
            heads the page and its numbers and flipped pairs follow the audit.
        min_coverage
            A declared release gate, reported as passed or failed.
        """
        from evalframe.report.markdown import render_markdown

        return render_markdown(self.view(comparison, min_coverage=min_coverage))

    def to_dict(self, comparison: Comparison | None = None, *, min_coverage: float | None = None) -> dict[str, Any]:
        """A JSON-ready dictionary of the report (see :func:`evalframe.report.jsondoc.view_dict`).

        Keys: ``meta`` (provenance), ``summary`` (one dict per candidate),
        ``outcomes`` (units per candidate and outcome), ``problems_by_kind``,
        ``notes``, ``slices`` and ``missingness`` (only when slices were
        declared), ``comparison`` (only when given: the comparison row, its
        pairs dropped by slice and its flipped pairs) and ``gate`` (only with
        ``min_coverage``). A report of several tasks gives ``tasks``: task
        name -> that task's dictionary with those keys.
        """
        from evalframe.report.jsondoc import view_dict

        return view_dict(self.view(comparison, min_coverage=min_coverage))

    def to_json(self, comparison: Comparison | None = None, *, min_coverage: float | None = None) -> str:
        """The :meth:`to_dict` content as indented JSON at full precision (non-finite floats as null)."""
        from evalframe.report.jsondoc import render_json

        return render_json(self.view(comparison, min_coverage=min_coverage))

    def to_html(self, comparison: Comparison | None = None, *, min_coverage: float | None = None) -> str:
        """The report as one self-contained HTML page (see :func:`evalframe.report.html.render_html`)."""
        from evalframe.report.html import render_html

        return render_html(self.view(comparison, min_coverage=min_coverage))

    def _repr_html_(self) -> str:
        """HTML for Jupyter: headline with its chart, rates with denominators, the slice table and every note.

        See :func:`evalframe.report.notebook.report_html`.
        """
        from evalframe.report.notebook import report_html

        return report_html(self)

    def __repr__(self) -> str:
        """A few lines: plan size, planned and scored units per candidate, problems, where the tables are.

        See :func:`evalframe.report.notebook.report_text`; :meth:`to_markdown` gives the whole report.
        """
        from evalframe.report.notebook import report_text

        return report_text(self)

    def write(
        self,
        out: str | os.PathLike[str],
        *,
        comparison: Comparison | None = None,
        inputs: Iterable[str | os.PathLike[str]] | None = None,
        command: str = "python",
        min_coverage: float | None = None,
        progress: Progress | None = None,
        guard: ExchangeGuard = nullcontext,
        view: View | TasksView | None = None,
    ) -> list[Path]:
        """Write every table as Parquet plus ``report.md``, ``report.json`` and ``report.html``, all or nothing.

        The folder is evalframe's own (see :func:`write_output`): new, empty
        or an earlier evalframe output, which this one replaces as a whole;
        ``evalframe-manifest.json`` lists every file with its SHA-256. A
        report of several tasks writes its tables whole and its text reports
        with one section per task (see :meth:`view`).

        Parameters
        ----------
        out
            Destination folder (created if needed).
        comparison
            When given, also write ``comparison.parquet``, ``pairs.parquet``
            (and ``dropped_pairs.parquet`` when pairs were dropped by slice,
            ``flips.parquet`` with the trial-aware flips of each case when
            outcomes are pass/fail), and include the verdict in the text reports.
        inputs
            Paths and globs the audit read, refused inside ``out``; by
            default the plan and results sources in :attr:`meta` that name
            a file or folder.
        command
            What wrote the folder, recorded in its manifest.
        min_coverage
            A declared release gate, reported in the text reports.
        progress
            Called after each file is written (see
            :func:`~evalframe.report.output.write_output`).
        guard
            Entered around the exchange of the folder with its new version
            (see :func:`~evalframe.report.output.write_output`).
        view
            The report's view (:meth:`view`) with this ``comparison`` and ``min_coverage``, when the caller
            has built it already (the command line prints it too); built here otherwise.

        Returns
        -------
        list of pathlib.Path
            What :func:`~evalframe.report.output.write_output` returns: the files but the manifest, by name.

        Raises
        ------
        OutputFolderError
            ``out`` holds files evalframe did not write or an input, or could
            not be written; it was left as it was.

        Examples
        --------
        >>> import tempfile, evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote", "refund"]}), candidates=["A"])
        >>> report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [1]}))
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     names = [p.name for p in report.write(folder)]
        >>> names
        ['attempts.parquet', 'problems.parquet', 'report.html', 'report.json', 'report.md',
         'summary.parquet', 'units.parquet']
        """
        tables = self.tables()
        if comparison is not None:
            tables |= {"comparison": comparison.table, "pairs": comparison.pairs}
            if comparison.dropped_by_slice.height:
                tables["dropped_pairs"] = comparison.dropped_by_slice
            if comparison.case_flips.height:
                tables["flips"] = comparison.case_flips
        from evalframe.report.html import render_html
        from evalframe.report.jsondoc import render_json
        from evalframe.report.markdown import render_markdown

        if view is None:
            view = self.view(comparison, min_coverage=min_coverage)
        texts = {
            "report.md": render_markdown(view),
            "report.json": render_json(view) + "\n",
            "report.html": render_html(view),
        }
        if inputs is None:
            sources = (self.meta.get("plan_source"), self.meta.get("results_source"))
            inputs = [s for s in sources if isinstance(s, str) and s and os.path.exists(s)]
        outcome = "audited" if comparison is None else "compared"
        return write_output(
            out,
            tables,
            texts,
            meta=self.meta,
            command=command,
            outcome=outcome,
            inputs=inputs,
            progress=progress,
            guard=guard,
        )
