"""Parquet: a file, a list of files, a folder or glob, hive ``key=value`` lakes; scanned lazily."""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import LINE, SOURCE
from evalframe.errors import InputFormatError, RowsUnreadable
from evalframe.load.files import READ_ERRORS, expand_path, is_glob, reader_error, rows_unreadable
from evalframe.load.loaded import RESERVED, Loaded, PathLike
from evalframe.load.remote import is_url, read_bytes, scan_options, store_error
from evalframe.problems import concat_problems, problems_frame


def _hive_keys(path: PathLike | Sequence[str], files: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ``key=value`` folder keys below the scanned folder (or glob prefix), and those above it.

    Only folders inside the folder or glob the user named are partitions; a
    single file or a list of files has none. The reader parses every
    ``key=value`` folder of a path, so the keys above the root are named too,
    to be dropped.
    """
    if not isinstance(path, (str, os.PathLike)):
        return [], sorted({p.split("=")[0] for f in files for p in Path(f).parent.parts if "=" in p})
    text = str(path)
    wild = [i for i, part in enumerate(Path(text).parts) if glob.has_magic(part)] if is_glob(text) else []
    root = Path(*Path(text).parts[: wild[0]]) if wild else Path(text)
    below: list[str] = []
    above: set[str] = set()
    for f in files:
        parent = Path(f).parent
        inside = parent.is_relative_to(root) and (wild or Path(text).is_dir() or (is_url(text) and [f] != [text]))
        rel = parent.relative_to(root).parts if inside else ()
        below += [p.split("=")[0] for p in rel if "=" in p and p.split("=")[0] not in below]
        above |= {p.split("=")[0] for p in parent.parts[: len(parent.parts) - len(rel)] if "=" in p}
    return below, sorted(above - set(below))


def _partition_mismatches(files: Sequence[str], keys: Sequence[str], starts: dict[str, int]) -> pl.DataFrame:
    """``partition_mismatch`` problems: rows whose own ``key`` column differs from their ``key=value`` folder.

    The reader gives a hive key's column the folder's value and drops the
    file's own, so a row stored under ``candidate=A`` that says ``B`` would
    silently become A's. Only the key columns are read (without hive
    partitioning) and compared as text; a null in the file differs too.
    """
    scan = pl.scan_parquet(
        list(files),
        hive_partitioning=False,
        include_file_paths="_file",
        row_index_name="_row",
        glob=False,
        **scan_options(files[0]),
    )
    folder = {
        k: {f: next(p.split("=", 1)[1] for p in reversed(Path(f).parent.parts) if p.startswith(f"{k}=")) for f in files}
        for k in keys
    }
    parts = []
    for k in keys:
        expected = pl.col("_file").replace_strict(folder[k], return_dtype=pl.String)
        stored = pl.col(k).cast(pl.String)
        differ = scan.select(k, "_file", "_row").filter(stored.ne_missing(expected))
        parts.append(
            differ.select(
                pl.lit("partition_mismatch").alias("kind"),
                pl.col("_file").alias(SOURCE),
                (
                    pl.col("_row").cast(pl.Int64) - pl.col("_file").replace_strict(starts, return_dtype=pl.Int64) + 1
                ).alias(LINE),
                pl.format(
                    "{} {} in the file differs from its folder {}={}",
                    pl.lit(k),
                    pl.when(stored.is_null()).then(pl.lit("null")).otherwise(pl.format("'{}'", stored)),
                    pl.lit(k),
                    expected,
                ).alias("detail"),
            )
        )
    return concat_problems([pl.concat(parts)])


#: Up to this many files, :func:`_file_start` sums steps over the row index; beyond, it looks up each row's path.
FILE_STEPS_UP_TO = 64


def _file_start(starts: dict[str, int], path_col: str) -> pl.Expr:
    """The lake-wide row index (0-based, Int64) of the first row of each row's file.

    ``starts`` maps each file, in scan order, to the lake-wide index of its first row; the scan's row index
    (``line``, from 1) runs on across files. Up to :data:`FILE_STEPS_UP_TO` files, the start is a sum of
    steps over the row index (each file's start minus the one before, where the row is past it): no text is
    read. Beyond, each row's file path is looked up (a hash of the path per row). Either is elementwise, so a
    filter on the scan is still pushed into the reader.
    """
    bounds = sorted(set(starts.values()))
    if len(bounds) == 1:
        return pl.lit(bounds[0] if bounds else 0, pl.Int64)
    if len(starts) > FILE_STEPS_UP_TO:
        return pl.col(path_col).replace_strict(starts, return_dtype=pl.Int64)
    row = pl.col(LINE).cast(pl.Int64) - 1
    zero = pl.lit(0, pl.Int64)
    steps = (pl.when(row >= b).then(pl.lit(b - a, pl.Int64)).otherwise(zero) for a, b in itertools.pairwise(bounds))
    return pl.sum_horizontal(zero, *steps)


def scan_parquet(path: PathLike | Sequence[str]) -> Loaded:
    """Scan Parquet: a file, a directory (hive partitions allowed), a glob, or a list of files.

    The scan is lazy: nothing is read until the frame is collected, and
    column selection and filters are pushed down into the reader. Every file's
    footer is checked first, so a truncated file is one clear error, not a
    failure half-way through the audit.

    Parameters
    ----------
    path
        A ``.parquet`` file, a directory (searched recursively;
        ``key=value`` folder names become columns), a glob pattern, or a list
        of files.

    Returns
    -------
    Loaded
        The columns as stored plus ``source`` (the file of each row) and
        ``line`` (Int64, 1-based row number within its file). A file that
        already has ``source``/``line`` columns (e.g. a ledger written by
        ``evalframe import``) keeps its own: they name the original export.
        Its problems list every row whose own column for a ``key=value``
        folder key differs from the folder (``partition_mismatch``,
        refusing): the reader would otherwise give it the folder's value.

    Raises
    ------
    InputFormatError
        When nothing matches, a file is not (valid) Parquet, a file's
        columns or dtypes differ from the first file's (naming the file), or
        the files cannot be read as one lake (e.g. a ``key=value`` folder
        whose value holds ``=``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pl.DataFrame({"case_id": ["b", "a"]}).write_parquet(d / "r.parquet")
    >>> scan_parquet(d / "r.parquet").frame.drop("source").collect().to_dicts()
    [{'case_id': 'b', 'line': 1}, {'case_id': 'a', 'line': 2}]
    """
    files = list(path) if not isinstance(path, (str, os.PathLike)) else expand_path(path)
    label = ",".join(files) if not isinstance(path, (str, os.PathLike)) else str(path)
    rows: list[int] = []
    first: pl.Schema | None = None
    for f in files:
        store = scan_options(f)
        if Path(f).suffix.lower() != ".parquet" and not isinstance(path, (str, os.PathLike)):
            raise InputFormatError(f, "not a .parquet file")
        try:  # the footer's row count and schema (polars reads the footer only; pyarrow.parquet is not imported)
            rows.append(pl.scan_parquet(f, glob=False, **store).select(pl.len()).collect(engine="in-memory").item())
            schema = pl.scan_parquet(f, glob=False, hive_partitioning=False, **store).collect_schema()
        except OSError as exc:
            if store:
                raise store_error(f, exc) from None
            raise InputFormatError(f, f"cannot read file: {exc.strerror or exc}") from exc
        except (Exception, pl.exceptions.PanicException) as exc:  # a damaged footer
            raise reader_error(f, exc, "not a valid Parquet file", "write it again") from exc
        if WRITTEN_BY_EVALFRAME in footer_metadata(f):
            verify_page_checksums(f)
        first = schema if first is None else first
        if schema != first:
            raise InputFormatError(f, _schema_difference(schema, first, files[0]))
    names = set(first or ())
    hive_keys, above = _hive_keys(path, files)
    hive = bool(hive_keys)
    above = above if hive else []
    # the files are named, never patterns
    options: dict[str, Any] = {"hive_partitioning": hive, "glob": False, **scan_options(files[0] if files else "")}
    if hive:  # every key=value folder is text (candidate=007 stays '007')
        options["hive_schema"] = dict.fromkeys([*hive_keys, *above], pl.String)
    # The reader's row index runs on across files; each file's first row index (from the footers) turns it
    # into the row number within the file. Unlike a window over the path column, it keeps filters pushed down.
    starts = dict(zip(files, itertools.accumulate(rows[:-1], initial=0), strict=True))
    stored_keys = [k for k in hive_keys if k in names]
    problems = _partition_mismatches(files, stored_keys, starts) if stored_keys else problems_frame()
    stored = tuple(c for c in RESERVED if c in names)
    if LINE in names:
        lf = pl.scan_parquet(files, include_file_paths=None if SOURCE in names else SOURCE, **options)
        _schema(lf, label)
        return Loaded(lf.drop(above), problems, label, tuple(hive_keys), stored, tuple(files))
    path_col = "_file" if SOURCE in names else SOURCE
    lf = pl.scan_parquet(files, include_file_paths=path_col, row_index_name=LINE, row_index_offset=1, **options).drop(
        above
    )
    lf = lf.with_columns((pl.col(LINE).cast(pl.Int64) - _file_start(starts, path_col)).alias(LINE))
    lf = lf.select(*[c for c in _schema(lf, label).names() if c not in (LINE, "_file")], LINE)
    return Loaded(lf, problems, label, tuple(hive_keys), stored, tuple(files))


def _schema(frame: pl.LazyFrame, source: str) -> pl.Schema:
    """The scan's schema; what the reader cannot resolve (e.g. a hive folder value holding ``=``) is an input error.

    The :class:`InputFormatError` names ``source`` and the reader's message, as :func:`collect_input`'s do.
    """
    try:
        return frame.collect_schema()
    except READ_ERRORS as exc:
        hint = "check its key=value folder names"
        raise reader_error(source, exc, "cannot read its files as one lake", hint) from exc


#: The key-value metadata key of every Parquet table evalframe writes (its pages carry checksums).
WRITTEN_BY_EVALFRAME: Final = "evalframe.table"


def footer_metadata(path: str) -> dict[str, str]:
    """A Parquet file's key-value metadata (read from the footer; an unreadable footer has none here)."""
    try:
        return pl.read_parquet_metadata(path, **scan_options(path))
    except (Exception, pl.exceptions.PanicException):  # the footer was checked before: nothing to add
        return {}


def verify_page_checksums(path: str) -> None:
    """Read every page of a Parquet file evalframe wrote, checking its CRC-32 (pyarrow; polars checks none).

    evalframe writes a checksum on every page (:func:`evalframe.report.output.write_parquet`), so a bit
    flipped since is an input error naming the file, never another grade. Only files whose footer says
    evalframe wrote them (:data:`WRITTEN_BY_EVALFRAME`) are read this second time; they are read in batches.

    Raises
    ------
    InputFormatError
        When a page's checksum does not match or a page cannot be read.
    """
    import pyarrow as pa  # imported on use: `import evalframe` does not need it
    import pyarrow.parquet as pq

    source = pa.BufferReader(read_bytes(path)) if is_url(path) else path  # a stored object is fetched whole
    try:
        with pq.ParquetFile(source, page_checksum_verification=True) as pages:
            for _ in pages.iter_batches(batch_size=1 << 16):
                pass
    except (OSError, pa.ArrowException) as exc:
        what = "a page does not match its checksum or cannot be read"
        raise reader_error(path, exc, what, "the file changed after evalframe wrote it: write it again") from exc


def _schema_difference(schema: pl.Schema, first: pl.Schema, first_file: str) -> str:
    """Why a file's schema is not the first file's: its extra and missing columns, and dtypes that differ."""
    extra = [n for n in schema if n not in first]
    lacks = [n for n in first if n not in schema]
    dtypes = [f"{n!r} is {schema[n]}, not {first[n]}" for n in schema if n in first and schema[n] != first[n]]
    what = [
        *([f"extra column(s) {', '.join(map(repr, extra))}"] if extra else []),
        *([f"no column(s) {', '.join(map(repr, lacks))}"] if lacks else []),
        *dtypes,
    ] or ["its columns are in another order"]
    return f"its columns differ from those of {first_file} ({'; '.join(what)}); files of one input need one schema"


def damaged_file(files: Sequence[str], error: RowsUnreadable) -> RowsUnreadable:
    """The error of ``error``'s query, naming the file of ``files`` whose rows cannot be read.

    A query over several files fails with the reader's message only; on this (error) path each file is
    read again, whole and alone, and the first that fails is named. One file is named as it is. When none
    fails alone (the disk recovered), ``error`` is returned unchanged.
    """
    if len(files) == 1:
        return RowsUnreadable(files[0], error.detail)
    for f in files:
        try:
            pl.scan_parquet(f, glob=False, hive_partitioning=False, **scan_options(f)).collect()
        except READ_ERRORS as exc:
            return rows_unreadable(f, exc)
    return error


@contextmanager
def naming_the_damaged_file(loaded: Loaded) -> Iterator[None]:
    """Run a block that reads ``loaded``; a :class:`RowsUnreadable` from it names the damaged Parquet file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pl.DataFrame({"case_id": ["q1"]}).write_parquet(d / "r.parquet")
    >>> loaded = scan_parquet(d / "r.parquet")
    >>> with naming_the_damaged_file(loaded):
    ...     raise RowsUnreadable("results", "cannot read its rows")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    evalframe.errors.RowsUnreadable: .../r.parquet: cannot read its rows
    """
    try:
        yield
    except RowsUnreadable as exc:
        if not loaded.files:
            raise
        raise damaged_file(loaded.files, exc) from exc
