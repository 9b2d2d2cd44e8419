"""Text input: reading a file's bytes as UTF-8, with a BOM at the very start only, bad lines reported."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any, Final

from evalframe.errors import InputFormatError
from evalframe.load.limit import check_line_lengths, check_stream_line_lengths
from evalframe.load.loaded import PathLike
from evalframe.load.remote import is_url, read_bytes

BOM: Final = "\ufeff"
BOM_BYTES: Final = b"\xef\xbb\xbf"

#: Line breaks of a CSV file (LF, CRLF or a lone CR each end a physical line) and of a JSON Lines file (LF).
_CSV_BREAKS: Final = re.compile(r"\r\n|\r|\n")
_CSV_BREAKS_BYTES: Final = re.compile(rb"\r\n|\r|\n")


def _decode(data: bytes, source: str, *, csv_lines: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """Decode UTF-8, accepting a BOM only at the very start; report bad lines.

    Lines are counted as the file's reader counts them: with ``csv_lines``, a lone CR ends a line too (as
    it ends a CSV record), else only LF does (JSON Lines); so is the line of a NUL byte.

    Examples
    --------
    >>> try:
    ...     _decode(b"candidate,case_id\\rA,q1\\rA,\\x00\\r", "r.csv", csv_lines=True)
    ... except InputFormatError as exc:
    ...     print(exc)
    r.csv:3: binary data (a NUL byte): not a text file
    >>> try:
    ...     _decode("case_id\\n".encode("utf-32"), "p.csv")
    ... except InputFormatError as exc:
    ...     print(exc)
    p.csv:1: UTF-32 text: save the file as UTF-8
    """
    problems: list[dict[str, Any]] = []
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # before UTF-16's: FF FE starts both
        raise InputFormatError(source, "UTF-32 text: save the file as UTF-8", line=1)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputFormatError(source, "UTF-16 text: save the file as UTF-8", line=1)
    if b"\x00" in data:
        before = data[: data.index(b"\x00")]
        line = (len(_CSV_BREAKS_BYTES.findall(before)) if csv_lines else before.count(b"\n")) + 1
        raise InputFormatError(source, "binary data (a NUL byte): not a text file", line=line)
    if data.startswith(BOM_BYTES):
        data = data[len(BOM_BYTES) :]
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
        if BOM in text_line:
            msg = "a byte-order mark (U+FEFF) is only accepted at the very start of the file"
            problems.append({"kind": "misplaced_bom", "source": source, "line": number, "detail": msg})
    return text, problems


def read_text(path: PathLike, *, csv_lines: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """Read a file's bytes and decode them (see :func:`_decode`); an unreadable file is an input error.

    A line longer than ``Limits.line_bytes`` is refused first (:func:`check_line_lengths`).
    """
    if is_url(path):  # fetched whole (the strict readers parse every byte), then checked as a local file is
        data = read_bytes(str(path))
        check_stream_line_lengths(io.BytesIO(data), str(path))
        return _decode(data, str(path), csv_lines=csv_lines)
    check_line_lengths(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputFormatError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    return _decode(data, str(path), csv_lines=csv_lines)
