"""Strict CSV (RFC 4180): every structural problem with its line number, the readable records beside them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import polars as pl

from evalframe.columns import LINE, SOURCE
from evalframe.errors import InputFormatError
from evalframe.load.csv_records import MalformedRecord, csv_records
from evalframe.load.loaded import RESERVED, Loaded, PathLike, reserved_problem
from evalframe.load.text import BOM, read_text
from evalframe.problems import problems_frame

#: A physical line of a CSV file with its line break (LF, CRLF or a lone CR), or the last line without one.
_PHYSICAL_LINE: Final = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _physical_lines(text: str) -> Iterator[str]:
    """The physical lines of ``text`` one at a time, each with its break: the CSV reader's input.

    They are what ``io.StringIO(text, newline="")`` gives, without its copy of the whole text; a break inside a
    quoted field is the field's (the reader joins its lines).
    """
    return (match.group() for match in _PHYSICAL_LINE.finditer(text))


def _mixed_line_ending(text: str) -> tuple[int, str] | None:
    """The first line whose record ends otherwise than the first record does, and how each ends (SPEC §3).

    A line break inside a quoted field is data (a spreadsheet writes LF inside cells of a CRLF file), so
    only the break that ends a record counts. Counting the three kinds of break first keeps the usual
    file, which uses one kind, to three scans of its text.
    """
    crlf = text.count("\r\n")
    if (crlf > 0) + (text.count("\n") > crlf) + (text.count("\r") > crlf) < 2:
        return None
    names = {"\n": "LF", "\r\n": "CRLF", "\r": "CR"}
    first: str | None = None
    try:
        for record in csv_records(_physical_lines(text)):
            end = record.last_line
            ending = "\r\n" if end.endswith("\r\n") else end[-1:] if end[-1:] in ("\r", "\n") else ""
            if not ending:
                continue
            if first is None:
                first = ending
            elif ending != first:
                return record.end, f"this line ends with {names[ending]}, the first record with {names[first]}"
    except MalformedRecord:  # reported as malformed_quoting by the reader
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
    text, problems = read_text(path, csv_lines=True)
    mixed = _mixed_line_ending(text)
    if mixed is not None:
        msg = f"line endings are mixed (LF, CRLF, CR): {mixed[1]}; save the file with one kind"
        problems.append({"kind": "mixed_line_endings", "source": source, "line": mixed[0], "detail": msg})
    records = _records(text, source, problems)
    first = next(records, None)
    if first is None:
        raise InputFormatError(source, "empty file: no header line")
    header_line, header = first
    keep = _kept_columns(header, header_line, source, problems)
    batches = list(_batches(records, header, keep, source, problems))
    del text
    names = [header[i] for i in keep]
    frame = pl.concat(batches) if batches else _batch({k: [] for k in names}, [])
    return Loaded(frame.with_columns(pl.lit(source, pl.String).alias(SOURCE)).lazy(), problems_frame(problems), source)


#: Records turned into polars columns at a time: the Python objects of one batch are all that is held beside the
#: file's text and the columns read so far, whatever the number of rows.
BATCH_RECORDS: Final = 65_536


def _records(text: str, source: str, problems: list[dict[str, Any]]) -> Iterator[tuple[int, list[str]]]:
    """Every record the reader parses, with the physical line it starts on, up to malformed quoting (reported)."""
    try:
        for record in csv_records(_physical_lines(text)):
            yield record.start, [v.replace(BOM, "") if BOM in v else v for v in record.fields]
    except MalformedRecord as exc:
        msg = f"malformed quoting: {exc}"
        problems.append({"kind": "malformed_quoting", "source": source, "line": exc.start, "detail": msg})


def _kept_columns(header: list[str], header_line: int, source: str, problems: list[dict[str, Any]]) -> list[int]:
    """The header positions read as columns: the first of a repeated name; reserved names reported, left out."""
    seen: set[str] = set()
    keep: list[int] = []
    for i, name in enumerate(header):
        if name in RESERVED:
            problems.append(reserved_problem(name, source, header_line))
        elif name in seen:
            msg = f"header name {name!r} is repeated"
            problems.append({"kind": "repeated_column", "source": source, "line": header_line, "detail": msg})
        else:
            seen.add(name)
            keep.append(i)
    return keep


def _batches(
    body: Iterator[tuple[int, list[str]]],
    header: list[str],
    keep: list[int],
    source: str,
    problems: list[dict[str, Any]],
) -> Iterator[pl.DataFrame]:
    """The kept columns and ``line`` of the well-formed data records, :data:`BATCH_RECORDS` records a frame.

    Blank lines after the last record are ignored (held until a record follows them); a blank line between
    records and a record whose field count differs from the header's are reported and left out.
    """
    columns: dict[str, list[str]] = {header[i]: [] for i in keep}
    lines: list[int] = []
    blanks: list[int] = []  # blank lines not yet followed by a record
    for start, record in body:
        if not record:
            blanks.append(start)
            continue
        for blank in blanks:
            msg = "blank line inside the data (a record with zero fields)"
            problems.append({"kind": "blank_line", "source": source, "line": blank, "detail": msg})
        blanks.clear()
        if len(record) != len(header):
            msg = f"{len(record)} field(s) where the header has {len(header)}"
            problems.append({"kind": "field_count", "source": source, "line": start, "detail": msg})
            continue
        for i in keep:
            columns[header[i]].append(record[i])
        lines.append(start)
        if len(lines) == BATCH_RECORDS:
            yield _batch(columns, lines)
            columns, lines = {name: [] for name in columns}, []
    if lines:
        yield _batch(columns, lines)


def _batch(columns: dict[str, list[str]], lines: list[int]) -> pl.DataFrame:
    """One frame of String columns and ``line`` (Int64)."""
    return pl.DataFrame(
        {
            **{k: pl.Series(k, v, dtype=pl.String) for k, v in columns.items()},
            LINE: pl.Series(LINE, lines, dtype=pl.Int64),
        }
    )
