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

import contextlib
import csv
import glob
import io
import itertools
import json
import os
import re
import stat
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl

from evalframe.columns import LINE, SOURCE
from evalframe.errors import InputFormatError
from evalframe.problems import concat_problems, problems_frame

#: Columns the loader adds to every row (SPEC §3 "reserved names"): an input column of that name is refused
#: (``unexpected_column``), never overwritten.
RESERVED: Final = (LINE, SOURCE)

_BOM = "\ufeff"
_BOM_BYTES = b"\xef\xbb\xbf"

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Limits:
    """What evalframe reads at most (SPEC §6b): memory stays bounded by these, not by what an input claims.

    An input beyond a limit is an input error (exit 2) naming the file, the
    limit and the command-line flag that raises it, never read whole. Set
    them for a block of code with :func:`limits`; the command line sets them
    with ``evalframe --max-line-bytes N ...`` (options of the command group,
    or the environment variables ``EVALFRAME_MAX_LINE_BYTES`` ...). An
    integer beyond :data:`INT64_RANGE` is always refused (columns are
    polars Int64).

    Attributes
    ----------
    line_bytes
        Longest physical line of a CSV or JSON Lines file, in bytes
        (``--max-line-bytes``; LF, CRLF and lone CR end a line). Checked by
        streaming the file before it is read.
    json_depth
        Deepest nesting of arrays and objects in one JSON text
        (``--max-json-depth``). Python's parser itself stops near 1000.
    member_bytes
        Largest decompressed archive member, in bytes (``--max-member-bytes``):
        refused from its recorded size before it is read, and bounded while
        it is decompressed (recorded sizes can lie).
    archive_bytes
        Largest total of the decompressed members of one archive, in bytes
        (``--max-archive-bytes``), checked the same two ways.

    Examples
    --------
    >>> Limits().line_bytes == 64 * 2**20, Limits().json_depth, Limits().archive_bytes == 2 * 2**30
    (True, 512, True)
    """

    line_bytes: int = 64 * 2**20
    json_depth: int = 512
    member_bytes: int = 256 * 2**20
    archive_bytes: int = 2 * 2**30


#: The command-line flag of each limit, named in the errors.
LIMIT_FLAGS: Final = {
    "line_bytes": "--max-line-bytes",
    "json_depth": "--max-json-depth",
    "member_bytes": "--max-member-bytes",
    "archive_bytes": "--max-archive-bytes",
}

_LIMITS: ContextVar[Limits] = ContextVar("evalframe_limits", default=Limits())  # noqa: B039  (frozen, immutable)


def current_limits() -> Limits:
    """The limits in force (see :class:`Limits`; defaults unless :func:`limits` changed them)."""
    return _LIMITS.get()


@contextlib.contextmanager
def limits(**changes: int) -> Iterator[Limits]:
    """Change some :class:`Limits` for the ``with`` block (in this thread and context).

    Raises
    ------
    ValueError
        When a limit is not a positive integer.

    Examples
    --------
    >>> with limits(line_bytes=10) as changed:
    ...     changed.line_bytes, current_limits().line_bytes
    (10, 10)
    >>> current_limits().line_bytes == Limits().line_bytes
    True
    """
    for name, value in changes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            msg = f"{LIMIT_FLAGS.get(name, name)} must be a positive integer, got {value!r}"
            raise ValueError(msg)
    changed = replace(current_limits(), **changes)
    token = _LIMITS.set(changed)
    try:
        yield changed
    finally:
        _LIMITS.reset(token)


def limit_detail(name: str, what: str) -> str:
    """An input error's reason for a limit: ``what`` happened, the limit in force and the flag that raises it."""
    value = getattr(current_limits(), name)
    return f"{what} (limit {value}; raise it with {LIMIT_FLAGS[name]})"


_CHUNK: Final = 1 << 20


def check_line_lengths(path: PathLike) -> None:
    """Refuse a text file with a physical line longer than ``Limits.line_bytes``, without reading it whole.

    The file is streamed in 1 MiB chunks; a file no larger than the limit is
    not read at all. LF, CRLF and a lone CR end a line.

    Raises
    ------
    InputFormatError
        Naming the line, the limit and ``--max-line-bytes``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_bytes(b'{"a": 1}\\n' + b" " * 40 + b"\\n")
    >>> with limits(line_bytes=16):
    ...     try:
    ...         check_line_lengths(p)
    ...     except InputFormatError as exc:
    ...         print(exc.line, exc.detail)
    2 a line longer than 16 bytes (limit 16; raise it with --max-line-bytes)
    """
    limit = current_limits().line_bytes
    try:
        if os.stat(path).st_size <= limit:
            return
        file = open(path, "rb")  # noqa: SIM115  (closed below)
    except OSError:
        return  # the reader names what cannot be read
    run, line = 0, 1  # bytes of the current line so far, and its number
    with file:
        while chunk := file.read(_CHUNK):
            if chunk.endswith(b"\r"):  # a CRLF split between chunks is one line end
                chunk += file.read(1)
            pieces = _LINE_END.split(chunk)
            run += len(pieces[0])
            if run <= limit and len(pieces) > 1:
                if max(map(len, pieces[1:-1]), default=0) > limit:
                    line += next(i for i in range(1, len(pieces) - 1) if len(pieces[i]) > limit)
                    run = limit + 1
                else:
                    line, run = line + len(pieces) - 1, len(pieces[-1])
            if run > limit:
                detail = limit_detail("line_bytes", f"a line longer than {limit} bytes")
                raise InputFormatError(str(path), detail, line=line)


_LINE_END: Final = re.compile(rb"\r\n|\r|\n")


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
    partitions
        Columns that came from hive ``key=value`` folders, not from the files.
    stored
        Of ``line`` and ``source``, those the files hold themselves (Parquet
        only, e.g. a ledger written by ``evalframe import``: they name the
        original export). A CSV or JSON Lines column of either name is
        refused instead.
    """

    frame: pl.LazyFrame
    problems: pl.DataFrame = field(default_factory=problems_frame)
    source: str = ""
    partitions: tuple[str, ...] = ()
    stored: tuple[str, ...] = ()


def _reserved(name: str, source: str, line: int | None) -> dict[str, Any]:
    """The ``unexpected_column`` problem of an input column named like one the loader adds."""
    what = "the row's line number" if name == LINE else "the file the row came from"
    msg = f"column {name!r} is reserved: evalframe adds it ({what}); rename it"
    return {"kind": "unexpected_column", "source": source, "line": line, "detail": msg}


def _digits(value: int) -> str:
    """An integer for a message: itself, or its first digits and how many there are."""
    text = str(value)
    digits = text.lstrip("-")
    return text if len(digits) <= 30 else f"{text[: len(text) - len(digits)]}{digits[:20]}… ({len(digits)} digits)"


#: Line breaks of a CSV file (LF, CRLF or a lone CR each end a physical line) and of a JSON Lines file (LF).
_CSV_BREAKS: Final = re.compile(r"\r\n|\r|\n")
_CSV_BREAKS_BYTES: Final = re.compile(rb"\r\n|\r|\n")


def _decode(data: bytes, source: str, *, csv_lines: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """Decode UTF-8, accepting a BOM only at the very start; report bad lines.

    Lines are counted as the file's reader counts them: with ``csv_lines``, a lone CR ends a line too (as
    it ends a CSV record), else only LF does (JSON Lines).
    """
    problems: list[dict[str, Any]] = []
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputFormatError(source, "UTF-16 text: save the file as UTF-8", line=1)
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise InputFormatError(source, "binary data (a NUL byte): not a text file", line=line)
    if data.startswith(_BOM_BYTES):
        data = data[len(_BOM_BYTES) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for number, raw_line in enumerate(_CSV_BREAKS_BYTES.split(data) if csv_lines else data.split(b"\n"), start=1):
            try:
                raw_line.decode("utf-8")
            except UnicodeDecodeError as exc:
                msg = (
                    f"bytes that are not UTF-8 at byte {exc.start} of the line: {raw_line[exc.start : exc.start + 4]!r}"
                )
                problems.append({"kind": "undecodable_bytes", "source": source, "line": number, "detail": msg})
        text = data.decode("utf-8", errors="replace")
    for number, text_line in enumerate(_CSV_BREAKS.split(text) if csv_lines else text.split("\n"), start=1):
        if _BOM in text_line:
            msg = "a byte-order mark (U+FEFF) is only accepted at the very start of the file"
            problems.append({"kind": "misplaced_bom", "source": source, "line": number, "detail": msg})
    return text, problems


def _read_text(path: PathLike, *, csv_lines: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """Read a file's bytes and decode them (see :func:`_decode`); an unreadable file is an input error.

    A line longer than ``Limits.line_bytes`` is refused first (:func:`check_line_lengths`).
    """
    check_line_lengths(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputFormatError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    return _decode(data, str(path), csv_lines=csv_lines)


def _mixed_line_ending(text: str) -> tuple[int, str] | None:
    """The first line whose record ends otherwise than the first record does, and how each ends (SPEC §3).

    A line break inside a quoted field is data (a spreadsheet writes LF inside cells of a CRLF file), so
    only the break that ends a record counts. Counting the three kinds of break first keeps the usual
    file, which uses one kind, to three scans of its text.
    """
    crlf = text.count("\r\n")
    if (crlf > 0) + (text.count("\n") > crlf) + (text.count("\r") > crlf) < 2:
        return None
    last = [""]

    def physical_lines() -> Iterator[str]:
        for line in io.StringIO(text, newline=""):
            last[0] = line
            yield line

    names = {"\n": "LF", "\r\n": "CRLF", "\r": "CR"}
    reader = csv.reader(physical_lines(), strict=True)
    first: str | None = None
    try:
        for _ in reader:
            end = last[0]
            ending = "\r\n" if end.endswith("\r\n") else end[-1:] if end[-1:] in ("\r", "\n") else ""
            if not ending:
                continue
            if first is None:
                first = ending
            elif ending != first:
                return reader.line_num, f"this line ends with {names[ending]}, the first record with {names[first]}"
    except csv.Error:  # reported as malformed_quoting by the reader
        return None
    return None


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
        A header name the loader adds itself (``line``, ``source``) is left
        out and reported as ``unexpected_column``. Records with a structural
        problem are left out of the frame and reported in ``problems`` with
        kinds ``repeated_column``,
        ``field_count``, ``blank_line``, ``malformed_quoting``,
        ``undecodable_bytes``, ``misplaced_bom`` or ``mixed_line_endings``
        (once, at the first line whose record ends with another line break
        than the first record's; a break inside a quoted field is data).

    Raises
    ------
    InputFormatError
        When the file cannot be opened, holds no header at all, is UTF-16
        or binary.

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
    text, problems = _read_text(path, csv_lines=True)
    mixed = _mixed_line_ending(text)
    if mixed is not None:
        msg = f"line endings are mixed (LF, CRLF, CR): {mixed[1]}; save the file with one kind"
        problems.append({"kind": "mixed_line_endings", "source": source, "line": mixed[0], "detail": msg})
    csv.field_size_limit(sys.maxsize)  # a long field is data, not a quoting problem
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
        if name in RESERVED:
            problems.append(_reserved(name, source, header_line))
        elif name in seen:
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


#: The range of a JSON integer evalframe reads: polars' Int64 (a larger one is refused, never wrapped or rounded).
INT64_RANGE: Final = (-(2**63), 2**63 - 1)


class JSONLimitError(ValueError):
    """A JSON text that is well formed but beyond what is read: nested too deeply, a number Python cannot convert.

    Attributes
    ----------
    detail
        What is wrong, for a person.
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


def parse_json_text(text: str, *, repeated: list[str] | None = None) -> Any:
    """Parse one JSON text: the one place evalframe turns JSON text into values (loaders and importers).

    ``NaN``, ``Infinity`` and ``-Infinity`` are read as floats. With
    ``repeated`` (a list), it is set to the keys that the outermost object
    holds more than once (Python keeps the last value silently; the object
    is parsed last, after the values nested in it).

    Raises
    ------
    json.JSONDecodeError
        When the text is not JSON.
    JSONLimitError
        When it is nested deeper than ``Limits.json_depth`` or too deeply for
        the parser (a ``RecursionError``), or holds a number literal Python
        does not convert (over 4300 digits).

    Examples
    --------
    >>> repeated = []
    >>> parse_json_text('{"a": 1, "a": 2, "b": NaN}', repeated=repeated), repeated
    ({'a': 2, 'b': nan}, ['a'])
    >>> try:
    ...     parse_json_text("[" * 100_000)
    ... except JSONLimitError as exc:
    ...     print(exc.detail)
    JSON nested too deeply to read (limit 512; raise it with --max-json-depth)
    """
    hook = None
    if repeated is not None:

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(pairs)
            repeated[:] = [k for k, n in Counter(k for k, _ in pairs).items() if n > 1] if len(obj) < len(pairs) else []
            return obj

    depth = current_limits().json_depth
    if text.count("[") + text.count("{") > depth and json_depth(text) > depth:
        raise JSONLimitError(limit_detail("json_depth", "JSON nested too deeply to read"))
    try:
        return json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise JSONLimitError("JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python converts
        raise JSONLimitError(f"unreadable JSON value ({exc})") from None


_JSON_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in a JSON text (brackets inside strings do not count).

    Examples
    --------
    >>> json_depth('{"a": [1, [2]], "b": "[[[["}'), json_depth("3")
    (3, 0)
    """
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    steps = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    if not steps.size:
        return 0
    return int(np.cumsum(np.where((steps == ord("[")) | (steps == ord("{")), 1, -1)).max(initial=0))


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


def _out_of_range(obj: dict[str, Any]) -> str | None:
    """The first key of ``obj`` whose value is an integer outside :data:`INT64_RANGE`, if any."""
    low, high = INT64_RANGE
    return next(
        (k for k, v in obj.items() if isinstance(v, int) and not isinstance(v, bool) and not low <= v <= high), None
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
        a key repeated in an object as ``repeated_column``; a key named like
        a column the loader adds (``line``, ``source``) as
        ``unexpected_column``; blank lines are skipped.

    Raises
    ------
    InputFormatError
        When the file cannot be opened, a line is nested too deeply to parse,
        or holds an integer outside :data:`INT64_RANGE` (naming the line).

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
    reserved_seen: set[str] = set()
    for number, text_line in enumerate(text.split("\n"), start=1):
        if not text_line.strip():
            continue
        repeated: list[str] = []
        try:
            obj = parse_json_text(text_line, repeated=repeated)
        except json.JSONDecodeError as exc:
            msg = f"invalid JSON ({exc.msg}, column {exc.colno})"
            problems.append({"kind": "unreadable_file", "source": source, "line": number, "detail": msg})
            continue
        except JSONLimitError as exc:
            raise InputFormatError(source, exc.detail, line=number) from None
        if not isinstance(obj, dict):
            msg = f"expected a JSON object, found {type(obj).__name__}"
            problems.append({"kind": "unreadable_file", "source": source, "line": number, "detail": msg})
            continue
        for name in repeated:
            msg = f"key {name!r} is repeated in the object (a JSON object names each column once)"
            problems.append({"kind": "repeated_column", "source": source, "line": number, "detail": msg})
        huge = _out_of_range(obj)
        if huge is not None:
            low, high = INT64_RANGE
            msg = f"integer {_digits(obj[huge])} of key {huge!r} is outside the 64-bit range {low}..{high}"
            raise InputFormatError(source, msg, line=number)
        for name in RESERVED:
            if name in obj:
                if name not in reserved_seen:  # one problem per file, at the first line that has it
                    reserved_seen.add(name)
                    problems.append(_reserved(name, source, number))
                del obj[name]
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


_READERS_BY_SUFFIX = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


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
_READ_ERRORS = (*_SCHEMA_ERRORS, *_DAMAGE_ERRORS)


def collect_input(frame: pl.LazyFrame, source: str) -> pl.DataFrame:
    """Collect a frame scanned from input files; what the reader cannot read is an :class:`InputFormatError`.

    A lake whose files disagree on columns or dtypes, or a damaged data page,
    surfaces only when the rows are read; this names the input instead of
    showing the reader's traceback.

    Raises
    ------
    InputFormatError
        With ``source`` and the reader's message (first line).
    """
    try:
        return frame.collect()
    except _SCHEMA_ERRORS as exc:
        hint = "files of one input need one schema"
        raise _reader_error(source, exc, "cannot read its files together", hint) from exc
    except _DAMAGE_ERRORS as exc:
        hint = "a file is damaged or cannot be read: write it again"
        raise _reader_error(source, exc, "cannot read its rows", hint) from exc


def _reader_error(source: str, exc: BaseException, what: str, hint: str) -> InputFormatError:
    """An :class:`InputFormatError` for ``source`` that quotes the reader's error (its first line)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
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


def _expand(path: PathLike) -> list[str]:
    """The files a path names: itself, a directory's files (recursively, sorted), or a glob's matches."""
    text = str(path)
    if any(ch in text for ch in "*?["):
        files = sorted(f for f in glob.glob(text, recursive=True) if Path(f).is_file())
    elif Path(text).is_dir():
        files = sorted(str(p) for p in Path(text).rglob("*") if p.is_file() and not p.name.startswith((".", "_")))
    elif Path(text).is_file():
        return [text]
    else:
        raise InputFormatError(text, _not_a_file(text))
    known = [f for f in files if Path(f).suffix.lower() in _READERS_BY_SUFFIX]
    if not known:
        raise InputFormatError(text, "no .parquet, .csv or .jsonl files found")
    kinds = {_READERS_BY_SUFFIX[Path(f).suffix.lower()] for f in known}
    if "parquet" in kinds and len(kinds) > 1:
        raise InputFormatError(text, "holds both Parquet and CSV/JSON Lines files; name one kind (e.g. a glob)")
    return known


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
    wild = [i for i, part in enumerate(Path(text).parts) if any(ch in part for ch in "*?[")]
    root = Path(*Path(text).parts[: wild[0]]) if wild else Path(text)
    below: list[str] = []
    above: set[str] = set()
    for f in files:
        parent = Path(f).parent
        inside = parent.is_relative_to(root) and (wild or Path(text).is_dir())
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
    scan = pl.scan_parquet(list(files), hive_partitioning=False, include_file_paths="_file", row_index_name="_row")
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
    read. Beyond, each row's file path is looked up (hashing a path per row: 20 files, 0.5M rows read from
    one of them, 16 ms; the steps cost about nothing). Either is elementwise, so a filter on the scan is
    still pushed into the reader.
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
        When nothing matches, a file is not (valid) Parquet, or the files
        cannot be read as one lake (e.g. a ``key=value`` folder whose value
        holds ``=``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pl.DataFrame({"case_id": ["b", "a"]}).write_parquet(d / "r.parquet")
    >>> scan_parquet(d / "r.parquet").frame.drop("source").collect().to_dicts()
    [{'case_id': 'b', 'line': 1}, {'case_id': 'a', 'line': 2}]
    """
    files = list(path) if not isinstance(path, (str, os.PathLike)) else _expand(path)
    label = ",".join(files) if not isinstance(path, (str, os.PathLike)) else str(path)
    rows: list[int] = []
    for f in files:
        if Path(f).suffix.lower() != ".parquet" and not isinstance(path, (str, os.PathLike)):
            raise InputFormatError(f, "not a .parquet file")
        try:  # the footer's row count (polars reads the footer only; pyarrow.parquet took 0.1 s to import)
            rows.append(pl.scan_parquet(f).select(pl.len()).collect(engine="in-memory").item())
        except OSError as exc:
            raise InputFormatError(f, f"cannot read file: {exc.strerror or exc}") from exc
        except (Exception, pl.exceptions.PanicException) as exc:  # a damaged footer
            raise _reader_error(f, exc, "not a valid Parquet file", "write it again") from exc
    names = set(pl.read_parquet_schema(files[0]))
    hive_keys, above = _hive_keys(path, files)
    hive = bool(hive_keys)
    above = above if hive else []
    options: dict[str, Any] = {"hive_partitioning": hive}
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
        return Loaded(lf.drop(above), problems, label, tuple(hive_keys), stored)
    path_col = "_file" if SOURCE in names else SOURCE
    lf = pl.scan_parquet(files, include_file_paths=path_col, row_index_name=LINE, row_index_offset=1, **options).drop(
        above
    )
    lf = lf.with_columns((pl.col(LINE).cast(pl.Int64) - _file_start(starts, path_col)).alias(LINE))
    lf = lf.select(*[c for c in _schema(lf, label).names() if c not in (LINE, "_file")], LINE)
    return Loaded(lf, problems, label, tuple(hive_keys), stored)


def _schema(frame: pl.LazyFrame, source: str) -> pl.Schema:
    """The scan's schema; what the reader cannot resolve (e.g. a hive folder value holding ``=``) is an input error.

    Raises
    ------
    InputFormatError
        With ``source`` and the reader's message (first line).
    """
    try:
        return frame.collect_schema()
    except _READ_ERRORS as exc:
        hint = "check its key=value folder names"
        raise _reader_error(source, exc, "cannot read its files as one lake", hint) from exc


def load(path: PathLike | Sequence[PathLike]) -> Loaded:
    """Load CSV, JSON Lines or Parquet input by its name.

    ``.csv`` → :func:`read_csv_strict`; ``.jsonl``/``.ndjson`` →
    :func:`read_jsonl`; ``.parquet`` → :func:`scan_parquet`. A directory or
    a glob loads the files it holds: Parquet ones as one lazy scan (hive
    ``key=value`` folders become columns), CSV / JSON Lines ones each
    strictly, stacked. A sequence of paths loads each and stacks them
    (columns unioned, missing ones null).

    Raises
    ------
    InputFormatError
        When a file is missing, empty, mixed Parquet and text in one folder,
        or in no readable format.

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
        return Loaded(
            pl.concat([p.frame for p in parts], how="diagonal_relaxed"),
            pl.concat([p.problems for p in parts]),
            ",".join(p.source for p in parts),
            tuple(dict.fromkeys(k for p in parts for k in p.partitions)),
            tuple(dict.fromkeys(k for p in parts for k in p.stored)),
        )
    files = _expand(path)
    kind = _READERS_BY_SUFFIX.get(Path(files[0]).suffix.lower(), "parquet")
    if kind == "parquet":
        return scan_parquet(path if len(files) > 1 or files[0] != str(path) else files[0])
    if len(files) > 1 or files[0] != str(path):
        loaded = load(files)
        return Loaded(loaded.frame, loaded.problems, str(path), stored=loaded.stored)
    return read_csv_strict(path) if kind == "csv" else read_jsonl(path)


def is_spark_frame(obj: object) -> bool:
    """A PySpark or Spark Connect DataFrame, told by its class (pyspark is never imported here)."""
    return any(k.__module__.startswith("pyspark.") and k.__name__ == "DataFrame" for k in type(obj).__mro__)
