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


class EvalframeError(Exception):
    """Base class of every error evalframe raises on purpose."""


class AuditRefused(EvalframeError):
    """The batch was refused: no rate was computed.

    Attributes
    ----------
    problems
        Every problem found, refusing or not (see :mod:`evalframe.problems`
        for the columns). ``problems.filter(pl.col("refusing"))`` are the
        reasons for the refusal.
    """

    def __init__(self, problems: pl.DataFrame) -> None:
        self.problems = problems
        refusing = problems.filter(pl.col(REFUSING))
        counts = refusing.group_by(KIND).len().sort(KIND)
        summary = ", ".join(f"{k} ×{n}" for k, n in counts.iter_rows())
        msg = f"batch refused: {refusing.height} refusing problem(s): {summary}"
        super().__init__(msg)


class PlanError(AuditRefused):
    """The plan itself is invalid (empty, duplicate or malformed case ids, bad candidates)."""


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
