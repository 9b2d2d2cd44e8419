"""Exceptions raised by evalframe.

Errors are data: :class:`AuditRefused` carries a polars frame with every
problem found (see :mod:`evalframe.problems`), so a notebook user can filter
them and the CLI can print them as a table. Messages are built first and then
raised.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe.columns import KIND, REFUSING
from evalframe.problems import COUNT, Problems


class EvalframeError(Exception):
    """Base class of every error evalframe raises on purpose."""


class AuditRefused(EvalframeError):
    """The batch was refused: no rate was computed.

    A batch can hold millions of problems (SPEC §3 "Problems at scale"), so
    the refusal keeps in memory every kind's count and the first
    :data:`~evalframe.problems.PROBLEM_ROWS_KEPT` rows of each kind; the
    rest wait in temporary files until :meth:`close` (or the end of the process).

    Attributes
    ----------
    problems
        The first rows of each kind (at most
        :data:`~evalframe.problems.PROBLEM_ROWS_KEPT` per kind), refusing or
        not, sorted (see :mod:`evalframe.problems` for the columns): every
        problem when no kind has more. ``problems.filter(pl.col("refusing"))``
        are (the first of) the reasons for the refusal.
    problem_counts
        Every problem counted, whether shown or not: ``kind`` (String),
        ``refusing`` (Boolean), ``count`` (Int64), one row per (kind,
        refusing), sorted.
    found
        The bounded table itself (:class:`~evalframe.problems.Problems`);
        :meth:`all_problems` reads every row.
    """

    def __init__(self, problems: pl.DataFrame | Problems) -> None:
        self.found = problems if isinstance(problems, Problems) else Problems.gather([problems])
        self.problems = self.found.shown
        self.problem_counts = self.found.counts
        refusing = self.problem_counts.filter(pl.col(REFUSING)).group_by(KIND).agg(pl.col(COUNT).sum()).sort(KIND)
        summary = ", ".join(f"{k} ×{n}" for k, n in refusing.iter_rows())
        msg = f"batch refused: {self.found.refusing} refusing problem(s): {summary}"
        super().__init__(msg)

    def all_problems(self) -> pl.LazyFrame:
        """Every problem, refusing or not, sorted (lazy: collecting millions of rows takes their memory).

        The frame stays readable after the refusal is gone, until :meth:`close` (or the end of the process).
        """
        return self.found.every()

    def close(self) -> None:
        """Remove the temporary files holding the problems beyond the first rows of each kind (see :attr:`found`).

        Nothing to do when every problem is in :attr:`problems`; a second call does nothing. Without it
        the files stay until the process ends (never removed by the garbage collector), so a frame taken
        from :meth:`all_problems` stays readable after the refusal is gone; after it, that frame fails.

        Examples
        --------
        >>> import evalframe as ef
        >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote"]}), candidates=["A"])
        >>> try:
        ...     ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [2]}))
        ... except ef.AuditRefused as refused:
        ...     refused.close()
        ...     counts = refused.problem_counts.rows()
        >>> counts
        [('invalid_grade', True, 1)]
        """
        self.found.close()


class PlanError(AuditRefused):
    """The plan itself is invalid (empty, duplicate or malformed case ids, bad candidates).

    Attributes
    ----------
    checkable
        When the plan's problems still leave a set of case ids and candidates (a repeated case, a bad
        name among good ones), the :class:`~evalframe.plan.Plan` of its distinct cases (each case's first
        row) and valid candidates, against which a ledger's independent problems can be found in the same
        run (:func:`evalframe.audit.with_ledger_problems`); None when nothing is left to check against.
    """

    def __init__(self, problems: pl.DataFrame | Problems, *, checkable: object | None = None) -> None:
        super().__init__(problems)
        self.checkable = checkable


class InputFormatError(EvalframeError):
    """A file could not be opened or is not in a format evalframe reads.

    Attributes
    ----------
    path
        The file.
    line
        1-based line or row where the problem is, when known.
    detail
        What is wrong, for a person.
    """

    def __init__(self, path: str, detail: str, *, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = detail
        where = f"{path}:{line}" if line is not None else path
        msg = f"{where}: {detail}"
        super().__init__(msg)


class LimitExceeded(InputFormatError):
    """An input beyond one of the declared limits (:class:`~evalframe.load.Limits`): an input error (exit 2).

    Attributes
    ----------
    path, line, detail
        As for :class:`InputFormatError`; ``detail`` names the limit and the flag that raises it.
    limit
        The limit's name (a field of :class:`~evalframe.load.Limits`, e.g. ``"planned_units"``).
    allowed
        The limit in force.
    found
        What the input holds or asks for (e.g. its count of planned units).
    flag
        The command-line flag that raises the limit (e.g. ``"--max-planned-units"``).
    """

    def __init__(
        self, path: str, detail: str, *, limit: str, allowed: int, found: int, flag: str, line: int | None = None
    ) -> None:
        self.limit = limit
        self.allowed = allowed
        self.found = found
        self.flag = flag
        super().__init__(path, detail, line=line)


class RowsUnreadable(InputFormatError):
    """The reader failed on an input's rows (a damaged data page, a failing disk): an input error (exit 2).

    Raised by :func:`~evalframe.load.collect_input` when a query over input
    files fails while reading them, after their footers and schemas were
    checked. Where the query read several Parquet files, the audit reads each
    of them again to name the one that fails (``path``); the query itself
    only knows the input's label.
    """


class ImportUnreadable(InputFormatError):
    """An export file could not be read at all: an input error (exit 2), not a refused batch.

    Raised by every importer's ``read`` (and so by ``evalframe import`` and
    ``evalframe audit --from``) when a note is ``unreadable_file``: the file
    is not JSON, its bytes are not UTF-8, its nesting or numbers or archive
    members exceed the declared limits (:class:`~evalframe.limits.Limits`).
    Nothing is imported or written: an export read in part would look
    complete (SPEC §6b).

    Attributes
    ----------
    path
        The first unreadable file (sorted by file, then line).
    line
        Its 1-based line, when known.
    detail
        Why it could not be read, for a person.
    other_files
        The other files with an unreadable place, as the notes name them
        (an archive member as ``archive!member``), sorted, each once; empty
        when only ``path`` is unreadable.
    notes
        Every note of the import (the problems-table columns of
        :mod:`evalframe.problems`), refusing or not, including every
        ``unreadable_file`` place.
    """

    def __init__(
        self,
        path: str,
        detail: str,
        *,
        line: int | None = None,
        other_files: Sequence[str] = (),
        notes: pl.DataFrame | None = None,
    ) -> None:
        self.other_files = list(other_files)
        self.notes = notes if notes is not None else pl.DataFrame()
        places = self.notes.filter(pl.col(KIND) == "unreadable_file").height if KIND in self.notes.columns else 1
        more = f" (and {places - 1} more unreadable place(s))" if places > 1 else ""
        super().__init__(path, detail + more, line=line)
        self.detail = detail


class MissingExtra(EvalframeError):
    """An optional part of evalframe was asked for without its dependencies installed.

    Attributes
    ----------
    extra
        The ``pip install 'evalframe[EXTRA]'`` extra that provides it (e.g. ``spark``).
    module
        The module that could not be imported.

    Examples
    --------
    >>> print(MissingExtra("spark", "pyspark"))
    the spark engine needs pip install 'evalframe[spark]' (no module named 'pyspark')
    """

    def __init__(self, extra: str, module: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(f"the {extra} engine needs pip install 'evalframe[{extra}]' (no module named {module!r})")

    @classmethod
    def of(cls, extra: str, error: ModuleNotFoundError) -> MissingExtra:
        """The error for ``extra`` whose import failed with ``error`` (naming its top-level module)."""
        return cls(extra, (error.name or "?").split(".")[0])


class ReportClosed(EvalframeError):
    """A report's tables were read after :meth:`~evalframe.report.model.AuditReport.close` removed their files.

    Attributes
    ----------
    folder
        The folder the closed report's lazy tables read, now removed.
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder
        msg = f"the report is closed: its tables' files in {folder} were removed (read or write it before close())"
        super().__init__(msg)


class OutputFolderError(EvalframeError):
    """An output folder was not written: it is not evalframe's own, it holds an input, or it cannot be written.

    Nothing in the folder was changed: evalframe never overwrites, moves or
    deletes a file it did not write.

    Attributes
    ----------
    folder
        The output folder, as given.
    foreign
        Every path in the way, one per entry: files in the folder that
        evalframe did not write (not in its ``evalframe-manifest.json``, or
        changed since), or inputs of the run that lie inside it. Empty when the
        folder could not be written for another reason (full disk, no
        permission).
    reason
        Why the folder was refused, in one line for a person.
    """

    def __init__(self, folder: str, reason: str, *, foreign: Sequence[str] = ()) -> None:
        self.folder = folder
        self.foreign = list(foreign)
        self.reason = reason
        msg = f"--out {folder}: {reason}"
        super().__init__(msg)


class OptionError(EvalframeError, ValueError):
    """An option outside its values, or options that contradict each other, found before any file is read.

    ``ef.audit`` and the power functions (:func:`evalframe.power`, :func:`evalframe.detectable_difference`,
    ...) raise it (a ``ValueError`` too, as an argument error is in Python); the command line reports it as
    a usage error (exit 2) against the flag of the same name, with the same words, and picks its hint by
    ``option``.

    Attributes
    ----------
    option
        The keyword argument at fault (``"score_range"``, ``"slices"``, ``"icc"``, ...).
    reason
        What is wrong with it, as the message says.
    """

    def __init__(self, option: str, reason: str) -> None:
        self.option = option
        self.reason = reason
        super().__init__(reason)


class AggregateError(OptionError):
    """A declared aggregate across tasks with no candidate (or side) audited in every task: nothing to combine.

    Raised by :func:`evalframe.aggregate` when every candidate lacks a task, and by
    :func:`evalframe.compare.aggregate.aggregate_difference` when a compared side does; ``option`` is
    ``"reports"``.

    Attributes
    ----------
    missing_tasks
        Each candidate at fault → the tasks it was not audited in (natural order).
    """

    def __init__(self, reason: str, *, missing_tasks: dict[str, list[str]]) -> None:
        self.missing_tasks = missing_tasks
        super().__init__("reports", reason)
