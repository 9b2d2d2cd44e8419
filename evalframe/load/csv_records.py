"""CSV records of any field length, without changing the ``csv`` module's process-wide field size limit.

Python's ``csv`` reader refuses a field longer than ``csv.field_size_limit()`` (128 Ki characters unless a
program raised it), and that limit belongs to the whole process. A long field (a model's answer) is data, so
the one record that holds it is parsed again here, by the same rules as ``csv.reader(..., strict=True)`` with
the default (excel) dialect; every other record is the ``csv`` module's.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterable, Iterator
from typing import Final, NamedTuple

#: The start of the ``csv`` module's message for a field over its limit (CPython's ``_csv.c``).
_OVER_LIMIT: Final = "field larger than field limit"
_QUOTE: Final = '"'
_DELIMITER: Final = ","
_BREAKS: Final = ("\r", "\n")


class CsvRecord(NamedTuple):
    """One record and where it lies: ``start`` and ``end`` are its first and last physical lines (1-based)."""

    start: int
    end: int
    fields: list[str]
    last_line: str
    """The record's last physical line, with its line break (none on a last line without one)."""


class MalformedRecord(csv.Error):
    """A record whose quoting is malformed: ``start`` is the physical line it starts on, ``end`` where it stops."""

    def __init__(self, message: str, *, start: int, end: int) -> None:
        super().__init__(message)
        self.start = start
        self.end = end


class _Counted:
    """The physical lines, counted, with the lines of the record being read kept for a second parse."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = iter(lines)
        self.count = 0
        self.held: list[str] = []

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.count += 1
        self.held.append(line)
        return line


def csv_records(lines: Iterable[str]) -> Iterator[CsvRecord]:
    """Every record of the physical ``lines`` (each with its line break), as ``csv.reader(lines, strict=True)``.

    Fields of any length are read (the ``csv`` module's field size limit is neither raised nor needed); a
    blank line is a record with no fields.

    Raises
    ------
    MalformedRecord
        At the first record with malformed quoting (the ``csv`` module's message, the record's lines).

    Examples
    --------
    >>> import csv
    >>> lines = ["a,b\\n", '"' + "x" * 200_000 + '",2\\n', '"q\\n', 'r",3\\n']
    >>> [(r.start, r.end, [len(f) for f in r.fields]) for r in csv_records(lines)]
    [(1, 1, [1, 1]), (2, 2, [200000, 1]), (3, 4, [3, 1])]
    >>> csv.field_size_limit()
    131072
    """
    counted = _Counted(lines)
    reader = csv.reader(counted, strict=True)
    while True:
        start = counted.count + 1
        counted.held = []
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if not str(exc).startswith(_OVER_LIMIT):
                raise MalformedRecord(str(exc), start=start, end=counted.count) from None
            fields = _parse_record(iter([*counted.held]), counted, start)
        yield CsvRecord(start, counted.count, fields, counted.held[-1] if counted.held else "")


def _parse_record(held: Iterator[str], more: _Counted, start: int) -> list[str]:
    """One record from its first line on (the lines already read, then more), by the strict excel dialect."""
    fields: list[str] = []
    field: list[str] = []
    quoted = after_quote = False
    for line in itertools.chain(held, more):
        for char in line:
            if quoted:
                if char == _QUOTE:
                    quoted, after_quote = False, True
                else:
                    field.append(char)
                continue
            if after_quote and char == _QUOTE:  # a doubled quote inside a quoted field
                field.append(char)
                quoted, after_quote = True, False
                continue
            if after_quote and char not in (_DELIMITER, *_BREAKS):
                raise MalformedRecord(f"'{_DELIMITER}' expected after '{_QUOTE}'", start=start, end=more.count)
            if char in _BREAKS:
                fields.append("".join(field))
                return fields
            if char == _DELIMITER:
                fields.append("".join(field))
                field, after_quote = [], False
            elif char == _QUOTE and not field and not after_quote:
                quoted = True
            else:
                field.append(char)
        if not quoted and not line.endswith(_BREAKS):  # the last line, without a break
            fields.append("".join(field))
            return fields
    if quoted:
        raise MalformedRecord("unexpected end of data", start=start, end=more.count)
    fields.append("".join(field))
    return fields
