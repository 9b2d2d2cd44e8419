"""Which files a path names (a file, a folder, a glob), and the reader's errors as input errors."""

from __future__ import annotations

import glob
import os
import stat
from pathlib import Path
from typing import Final

import polars as pl

from evalframe.errors import InputFormatError, RowsUnreadable
from evalframe.load.loaded import PathLike
from evalframe.load.remote import is_url, list_url, scrubbed

#: The reader of each file suffix.
READERS_BY_SUFFIX = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


#: What the reader raises when the files of one input disagree on columns or dtypes.
_SCHEMA_ERRORS = (
    pl.exceptions.SchemaError,
    pl.exceptions.SchemaFieldNotFoundError,
    pl.exceptions.ColumnNotFoundError,
    pl.exceptions.ShapeError,
)
#: What the reader raises on a damaged file (a bad page, bad compression, bad metadata) or a failing disk. A
#: panic of the reader (``PanicException`` derives from ``BaseException``, not ``Exception``) is one too.
_DAMAGE_ERRORS = (
    pl.exceptions.ComputeError,
    pl.exceptions.InvalidOperationError,
    pl.exceptions.PanicException,
    OSError,
)
READ_ERRORS = (*_SCHEMA_ERRORS, *_DAMAGE_ERRORS)


def collect_input(frame: pl.LazyFrame, source: str) -> pl.DataFrame:
    """Collect a frame scanned from input files; what the reader cannot read is an :class:`InputFormatError`.

    A lake whose files disagree on columns or dtypes, or a damaged data page,
    surfaces only when the rows are read; this names the input instead of
    showing the reader's traceback.

    Raises
    ------
    InputFormatError
        With ``source`` and the reader's message (first line): a
        :class:`~evalframe.errors.RowsUnreadable` when the reader failed on
        the rows themselves (see :func:`~evalframe.load.naming_the_damaged_file`).
    """
    try:
        return frame.collect()
    except _SCHEMA_ERRORS as exc:
        hint = "files of one input need one schema"
        raise reader_error(source, exc, "cannot read its files together", hint) from exc
    except _DAMAGE_ERRORS as exc:
        raise rows_unreadable(source, exc) from exc


def rows_unreadable(source: str, exc: BaseException) -> RowsUnreadable:
    """The :class:`RowsUnreadable` of ``source`` whose rows the reader failed on with ``exc``."""
    detail = reader_error(source, exc, "cannot read its rows", "a file is damaged or cannot be read: write it again")
    return RowsUnreadable(source, detail.detail)


def reader_error(source: str, exc: BaseException, what: str, hint: str) -> InputFormatError:
    """An :class:`InputFormatError` for ``source`` that quotes the reader's error (its first line)."""
    first = scrubbed(str(exc).strip().splitlines()[0]) if str(exc).strip() else ""
    return InputFormatError(source, f"{what} ({type(exc).__name__}: {first}); {hint}")


#: What a path that exists but is neither a file nor a folder is, by its ``stat`` mode.
_SPECIAL_FILES: Final = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _not_a_file(path: str) -> str:
    """Why ``path`` cannot be read as input: it does not exist, cannot be looked at, or is not a regular file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file or directory"
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"
    what = next((name for test, name in _SPECIAL_FILES if test(mode)), "not a regular file")
    return f"{what}, not a regular file: evalframe reads files (write the data to one first)"


def is_glob(path: PathLike) -> bool:
    """Whether a path is read as a glob pattern: it holds a wildcard and names nothing that exists.

    A path that exists (a file, a folder, a link) is read as itself, whatever
    characters it holds; only one that does not is a pattern (``*``, ``?``,
    ``[...]``). The loaders and the output folder's check of the inputs
    (:func:`evalframe.report.check_output_folder`) both decide by this.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "plan [1].csv").write_text("case_id\\nquote\\n")
    >>> is_glob(d / "plan [1].csv"), is_glob(d / "plan [2].csv"), is_glob(d / "plan.csv")
    (False, True, False)
    """
    text = os.fspath(path)
    return glob.has_magic(text) and (is_url(text) or not os.path.lexists(text))


def glob_files(pattern: str) -> list[str]:
    """The files a glob pattern reads: every regular file it matches, sorted; ``**`` spans folders.

    A folder it matches is not read (nor its files), and a name starting with
    a dot is matched only by a pattern that spells the dot, as in the shell.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("res1.csv", "res2.csv", "sub/res3.csv", "res.d/x.csv"):
    ...     (d / name).parent.mkdir(exist_ok=True)
    ...     _ = (d / name).write_text("")
    >>> [pathlib.Path(p).relative_to(d).as_posix() for p in glob_files(f"{d}/**/res*")]
    ['res1.csv', 'res2.csv', 'sub/res3.csv']
    """
    return sorted(f for f in glob.glob(pattern, recursive=True) if Path(f).is_file())


def expand_path(path: PathLike) -> list[str]:
    """The files a path names: itself, a directory's files (recursively, sorted), or a glob's matches.

    A path that exists is read as itself even when it holds ``*``, ``?`` or
    ``[`` (see :func:`is_glob`).
    """
    text = str(path)
    if is_url(text):
        files = list_url(text)
        if files == [text]:
            return files
    elif is_glob(text):
        files = glob_files(text)
    elif Path(text).is_dir():
        files = sorted(str(p) for p in Path(text).rglob("*") if p.is_file() and not p.name.startswith((".", "_")))
    elif Path(text).is_file():
        return [text]
    else:
        raise InputFormatError(text, _not_a_file(text))
    known = [f for f in files if Path(f).suffix.lower() in READERS_BY_SUFFIX]
    if not known:
        raise InputFormatError(text, "no .parquet, .csv or .jsonl files found")
    kinds = {READERS_BY_SUFFIX[Path(f).suffix.lower()] for f in known}
    if "parquet" in kinds and len(kinds) > 1:
        raise InputFormatError(text, "holds both Parquet and CSV/JSON Lines files; name one kind (e.g. a glob)")
    return known
