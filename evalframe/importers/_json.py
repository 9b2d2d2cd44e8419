"""Reading export JSON safely: documents, JSON Lines with line numbers, optional objects and integers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalframe.importers._notes import Unreadable
from evalframe.load import JSONLimitError, check_line_lengths, parse_json_text


def parse_json(data: bytes | str, source: str, *, line: int | None = None) -> Any:
    """Parse one JSON document; anything that is not readable JSON raises :class:`Unreadable`.

    ``NaN``, ``Infinity`` and ``-Infinity`` tokens are read as floats (lm-eval
    writes them); :func:`grade` then calls them grader failures.

    Examples
    --------
    >>> parse_json(b'{"acc": Infinity}', "s.jsonl")
    {'acc': inf}
    >>> try:
    ...     parse_json(b"[" * 100_000, "deep.json")
    ... except Unreadable as exc:
    ...     print(exc.note["kind"], exc.note["detail"])
    unreadable_file JSON nested too deeply to read (limit 512; raise it with --max-json-depth)
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return parse_json_text(text)
    except UnicodeDecodeError as exc:
        raise Unreadable(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=line) from None
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise Unreadable(source, f"invalid JSON ({exc.msg}, column {exc.colno})", line=where) from None
    except JSONLimitError as exc:  # nested too deeply, an integer literal longer than Python converts
        raise Unreadable(source, exc.detail, line=line) from None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes without a UTF-8 byte order mark; a file that cannot be read raises :class:`Unreadable`."""
    try:
        return path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except OSError as exc:
        raise Unreadable(str(path), f"cannot read the file ({exc.strerror or exc})") from None


def read_json(path: Path) -> Any:
    """Read a JSON file (see :func:`parse_json`); an unreadable file raises :class:`Unreadable`."""
    return parse_json(_read_bytes(path), str(path))


def read_json_lines(path: Path) -> tuple[list[tuple[int, Any]], list[dict[str, Any]]]:
    """Read a JSON Lines file: ``(line number, value)`` per non-blank line, and a note per unreadable line.

    Line numbers are physical lines (1-based, as an editor shows them). A line longer than
    ``Limits.line_bytes`` is an input error, found before the file is read (see
    :func:`~evalframe.load.check_line_lengths`).
    """
    check_line_lengths(path)
    rows: list[tuple[int, Any]] = []
    notes: list[dict[str, Any]] = []
    for number, raw in enumerate(_read_bytes(path).splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rows.append((number, parse_json(raw, str(path), line=number)))
        except Unreadable as exc:
            notes.append(exc.note)
    return rows, notes


def json_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (an export's optional part, read the same way everywhere).

    Examples
    --------
    >>> json_object({"a": 1}), json_object([1]), json_object(None)
    ({'a': 1}, {}, {})
    """
    return value if isinstance(value, dict) else {}


def json_int(value: Any) -> int | None:
    """``value`` when it is a JSON integer (never a boolean), else None.

    Examples
    --------
    >>> json_int(3), json_int(True), json_int(3.0)
    (3, None, None)
    """
    return value if isinstance(value, int) and not isinstance(value, bool) else None
