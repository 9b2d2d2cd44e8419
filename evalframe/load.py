"""Read plans and ledgers from files into raw polars frames, with their problems.

Loading is the only step that touches files. It never modifies its input and
never stops at the first problem: every structural problem of a CSV (header,
field counts, blank lines, quoting, bytes) is collected with its line number,
and the records that could be read are returned beside them so later checks
can still report on them.

Every returned frame carries two extra columns: ``line`` (Int64; CSV and JSON
Lines physical line, the CSV header being line 1; Parquet 1-based row number
within its file) and ``source`` (String; the file the row came from).
"""

from __future__ import annotations

import csv
import glob
import io
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.columns import LINE, SOURCE
from evalframe.errors import InputFormatError
from evalframe.problems import problems_frame

_BOM = "\ufeff"
_BOM_BYTES = b"\xef\xbb\xbf"

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Loaded:
    """A raw frame read from a file together with the problems found reading it.

    Attributes
    ----------
    frame
        The records that could be read, columns as in the file (CSV: all
        String) plus ``line`` (Int64) and ``source`` (String).
    problems
        Structural problems (see :mod:`evalframe.problems`); empty when the
        file is well formed.
    source
        The path (or paths) the frame was read from.
    """

    frame: pl.LazyFrame
    problems: pl.DataFrame = field(default_factory=problems_frame)
    source: str = ""


def _decode(data: bytes, source: str) -> tuple[str, list[dict[str, Any]]]:
    """Decode UTF-8, accepting a BOM only at the very start; report bad lines."""
    problems: list[dict[str, Any]] = []
    if data.startswith(_BOM_BYTES):
        data = data[len(_BOM_BYTES) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for number, raw_line in enumerate(data.split(b"\n"), start=1):
            try:
                raw_line.decode("utf-8")
            except UnicodeDecodeError as exc:
                msg = (
                    f"bytes that are not UTF-8 at byte {exc.start} of the line: {raw_line[exc.start : exc.start + 4]!r}"
                )
                problems.append({"kind": "undecodable_bytes", "source": source, "line": number, "detail": msg})
        text = data.decode("utf-8", errors="replace")
    for number, text_line in enumerate(text.split("\n"), start=1):
        if _BOM in text_line:
            msg = "a byte-order mark (U+FEFF) is only accepted at the very start of the file"
            problems.append({"kind": "misplaced_bom", "source": source, "line": number, "detail": msg})
    return text, problems


def _read_text(path: PathLike) -> tuple[str, list[dict[str, Any]]]:
    """Read a file's bytes and decode them (see :func:`_decode`); an unreadable file is an input error."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputFormatError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    return _decode(data, str(path))


def read_csv_strict(path: PathLike) -> Loaded:
    """Read a CSV file strictly, collecting every structural problem with its line.

    The header is the first record; names are taken exactly (no trimming).
    Every data record must have as many fields as the header; a blank line
    between data records is a record with zero fields (blank lines after the
    last record are ignored). Quoting follows RFC 4180: a quoted field may
    hold commas, quotes (doubled) and newlines. The file must be UTF-8; a BOM
    is accepted only at the very start.

    Parameters
    ----------
    path
        The CSV file.

    Returns
    -------
    Loaded
        All header columns as String (the first of a repeated name wins), plus
        ``line`` (Int64, physical line where the record starts) and ``source``.
        Records with a structural problem are left out of the frame and
        reported in ``problems`` with kinds ``repeated_column``,
        ``field_count``, ``blank_line``, ``malformed_quoting``,
        ``undecodable_bytes`` or ``misplaced_bom``.

    Raises
    ------
    InputFormatError
        When the file cannot be opened or holds no header at all.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = p.write_text('candidate,case_id,passed\\nA,"quote, revised",1\\nA,refund\\n')
    >>> loaded = read_csv_strict(p)
    >>> loaded.frame.drop("source").collect()
    shape: (1, 4)
    ┌───────────┬────────────────┬────────┬──────┐
    │ candidate ┆ case_id        ┆ passed ┆ line │
    │ ---       ┆ ---            ┆ ---    ┆ ---  │
    │ str       ┆ str            ┆ str    ┆ i64  │
    ╞═══════════╪════════════════╪════════╪══════╡
    │ A         ┆ quote, revised ┆ 1      ┆ 2    │
    └───────────┴────────────────┴────────┴──────┘
    >>> loaded.problems.select("kind", "line").to_dicts()
    [{'kind': 'field_count', 'line': 3}]
    """
    source = str(path)
    text, problems = _read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[tuple[int, list[str]]] = []
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            msg = f"malformed quoting: {exc}"
            problems.append({"kind": "malformed_quoting", "source": source, "line": start, "detail": msg})
            break
        records.append((start, [v.replace(_BOM, "") if _BOM in v else v for v in record]))
    if not records:
        raise InputFormatError(source, "empty file: no header line")
    header_line, header = records[0]
    seen: set[str] = set()
    keep: list[int] = []
    for i, name in enumerate(header):
        if name in seen:
            msg = f"header name {name!r} is repeated"
            problems.append({"kind": "repeated_column", "source": source, "line": header_line, "detail": msg})
        else:
            seen.add(name)
            keep.append(i)
    body = records[1:]
    while body and body[-1][1] == []:
        body.pop()  # blank lines after the last record
    columns: dict[str, list[str]] = {header[i]: [] for i in keep}
    lines: list[int] = []
    for start, record in body:
        if not record:
            msg = "blank line inside the data (a record with zero fields)"
            problems.append({"kind": "blank_line", "source": source, "line": start, "detail": msg})
            continue
        if len(record) != len(header):
            msg = f"{len(record)} field(s) where the header has {len(header)}"
            problems.append({"kind": "field_count", "source": source, "line": start, "detail": msg})
            continue
        for i in keep:
            columns[header[i]].append(record[i])
        lines.append(start)
    frame = pl.DataFrame(
        {
            **{k: pl.Series(k, v, dtype=pl.String) for k, v in columns.items()},
            LINE: pl.Series(LINE, lines, dtype=pl.Int64),
        }
    ).with_columns(pl.lit(source, pl.String).alias(SOURCE))
    return Loaded(frame.lazy(), problems_frame(problems), source)


def _json_column(values: list[Any]) -> pl.Series:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pl.Series(values, dtype=pl.Boolean)
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pl.Series(values, dtype=pl.Int64)
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pl.Series([None if v is None else float(v) for v in values], dtype=pl.Float64)
    return pl.Series(
        [None if v is None else v if isinstance(v, str) else json.dumps(v) for v in values], dtype=pl.String
    )


def read_jsonl(path: PathLike) -> Loaded:
    """Read a JSON Lines file (one JSON object per line), reporting bad lines.

    Bare ``NaN`` / ``Infinity`` tokens are read as non-finite floats (and
    refused later as grades). A column whose values are all booleans becomes
    Boolean, all integers Int64, all numbers Float64; any other mix becomes
    String (non-string values JSON-encoded).

    Parameters
    ----------
    path
        The JSON Lines file.

    Returns
    -------
    Loaded
        One row per object plus ``line`` (Int64) and ``source``. Lines that
        are not a JSON object are reported as ``unreadable_file`` problems;
        blank lines are skipped.

    Raises
    ------
    InputFormatError
        When the file cannot be opened.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text('{"candidate": "A", "case_id": "quote", "passed": 1}\\n{oops\\n')
    >>> loaded = read_jsonl(p)
    >>> loaded.frame.drop("source").collect().to_dicts()
    [{'candidate': 'A', 'case_id': 'quote', 'passed': 1, 'line': 1}]
    >>> loaded.problems.select("kind", "line").to_dicts()
    [{'kind': 'unreadable_file', 'line': 2}]
    """
    source = str(path)
    text, problems = _read_text(path)
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for number, text_line in enumerate(text.split("\n"), start=1):
        if not text_line.strip():
            continue
        try:
            obj = json.loads(text_line)
        except json.JSONDecodeError as exc:
            msg = f"invalid JSON: {exc.msg} at column {exc.colno}"
            problems.append({"kind": "unreadable_file", "source": source, "line": number, "detail": msg})
            continue
        if not isinstance(obj, dict):
            msg = f"expected a JSON object, found {type(obj).__name__}"
            problems.append({"kind": "unreadable_file", "source": source, "line": number, "detail": msg})
            continue
        rows.append(obj)
        lines.append(number)
    names: list[str] = []
    for row in rows:
        names.extend(k for k in row if k not in names)
    series = {k: _json_column([row.get(k) for row in rows]).alias(k) for k in names}
    frame = pl.DataFrame({**series, LINE: pl.Series(lines, dtype=pl.Int64)}).with_columns(
        pl.lit(source, pl.String).alias(SOURCE)
    )
    return Loaded(frame.lazy(), problems_frame(problems), source)


def _parquet_files(path: PathLike) -> list[str]:
    text = str(path)
    if any(ch in text for ch in "*?["):
        files = sorted(glob.glob(text, recursive=True))
    elif Path(text).is_dir():
        files = sorted(str(p) for p in Path(text).rglob("*.parquet"))
    elif Path(text).is_file():
        files = [text]
    else:
        raise InputFormatError(text, "no such file or directory")
    if not files:
        raise InputFormatError(text, "no Parquet files found")
    return files


def scan_parquet(path: PathLike) -> Loaded:
    """Scan a Parquet file, a directory of Parquet files (hive partitions allowed) or a glob.

    The scan is lazy: nothing is read until the frame is collected, and
    column selection and filters are pushed down into the reader.

    Parameters
    ----------
    path
        A ``.parquet`` file, a directory (searched recursively; ``key=value``
        directory names become columns) or a glob pattern.

    Returns
    -------
    Loaded
        The columns as stored plus ``source`` (the file of each row) and
        ``line`` (Int64, 1-based row number within its file).

    Raises
    ------
    InputFormatError
        When nothing matches, or a file is not Parquet.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pl.DataFrame({"case_id": ["b", "a"]}).write_parquet(d / "r.parquet")
    >>> scan_parquet(d / "r.parquet").frame.drop("source").collect().to_dicts()
    [{'case_id': 'b', 'line': 1}, {'case_id': 'a', 'line': 2}]
    """
    files = _parquet_files(path)
    for f in files:
        try:
            with open(f, "rb") as fh:
                head = fh.read(4)
        except OSError as exc:
            raise InputFormatError(f, f"cannot read file: {exc.strerror or exc}") from exc
        if head != b"PAR1":
            raise InputFormatError(f, "not a Parquet file (no PAR1 magic bytes)")
    is_dir = Path(str(path)).is_dir()
    lf = pl.scan_parquet(
        str(path) if is_dir else files,
        hive_partitioning=is_dir,
        include_file_paths=SOURCE,
    )
    if len(files) == 1:  # one file: the row number is the row index (no window over the path column)
        lf = lf.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
        lf = lf.select(*[c for c in lf.collect_schema().names() if c != LINE], LINE)
    else:
        lf = lf.with_columns((pl.int_range(pl.len(), dtype=pl.Int64).over(SOURCE) + 1).alias(LINE))
    return Loaded(lf, problems_frame(), str(path))


def load(path: PathLike | Sequence[PathLike]) -> Loaded:
    """Load a CSV, JSON Lines or Parquet input by its name.

    ``.csv`` → :func:`read_csv_strict`; ``.jsonl``/``.ndjson`` →
    :func:`read_jsonl`; anything else (``.parquet``, a directory, a glob) →
    :func:`scan_parquet`. A sequence of paths loads each and stacks them
    (columns unioned, missing ones null).

    Raises
    ------
    InputFormatError
        When a file is missing, empty or in no readable format.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "plan.csv"
    >>> _ = p.write_text("case_id\\nquote\\n")
    >>> load(p).frame.select("case_id", "line").collect().to_dicts()
    [{'case_id': 'quote', 'line': 2}]
    """
    if not isinstance(path, (str, os.PathLike)):
        parts = [load(p) for p in path]
        if not parts:
            raise InputFormatError("", "no input files given")
        frames = [p.frame for p in parts]
        return Loaded(
            pl.concat(frames, how="diagonal_relaxed"),
            pl.concat([p.problems for p in parts]),
            ",".join(p.source for p in parts),
        )
    suffix = Path(str(path)).suffix.lower()
    if suffix == ".csv":
        return read_csv_strict(path)
    if suffix in (".jsonl", ".ndjson"):
        return read_jsonl(path)
    return scan_parquet(path)


def is_nonfinite(value: object) -> bool:
    """Return True for float NaN or ±Infinity (helper shared by importers)."""
    return isinstance(value, float) and not math.isfinite(value)
