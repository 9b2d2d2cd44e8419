"""Limits (SPEC §6b): what evalframe reads at most, set for a block of code, and the line-length check."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import BinaryIO, Final

from evalframe.errors import InputFormatError, LimitExceeded
from evalframe.load.loaded import PathLike

_LINE_END: Final = re.compile(rb"\r\n|\r|\n")

#: The default of ``Limits.planned_units`` without an address-space limit, and the bound of every count flag
#: (``--trials``, ``power --n-cases``): a plan larger than this is refused before its units are built (a
#: 10**9-epoch header took 14 GB).
MAX_PLANNED_UNITS: Final = 100_000_000

#: Address space one planned unit may take at an audit's peak, in bytes: under an address-space limit
#: (``ulimit -v``, ``prlimit --as``) the default ``Limits.planned_units`` is that limit over this. Measured
#: under 4 GiB (benchmarks/RESULTS.md): a 4-case plan × 6M trials (24M units) and a units table of 20M rows
#: audit; 4 GiB / 320 is 13,421,772 units, a margin for machines with more threads.
BYTES_PER_PLANNED_UNIT: Final = 320


def default_planned_units(address_space: int | None = None) -> int:
    """The default planned-units limit: :data:`MAX_PLANNED_UNITS`, or fewer under an address-space limit.

    Parameters
    ----------
    address_space
        The process's address-space limit in bytes; None: the soft ``RLIMIT_AS`` in force (none: no limit).

    Examples
    --------
    >>> default_planned_units(4 * 2**30), default_planned_units(64 * 2**30)
    (13421772, 100000000)
    """
    if address_space is None:
        try:
            import resource  # POSIX only
        except ImportError:  # pragma: no cover  (Windows: no address-space limit to respect)
            return MAX_PLANNED_UNITS
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return MAX_PLANNED_UNITS
        address_space = soft
    return max(1, min(MAX_PLANNED_UNITS, address_space // BYTES_PER_PLANNED_UNIT))


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
    planned_units
        Most planned units (candidate × case × trial) of one plan
        (``--max-planned-units``): a plan file with its ``--trials``, or an
        export's declared sizes (epochs, documents, trials), is refused from
        its counts before its units are built. Default 100,000,000, or under
        an address-space limit that limit over :data:`BYTES_PER_PLANNED_UNIT`
        (:func:`default_planned_units`), so that an audit the limit lets in
        fits in memory.

    Examples
    --------
    >>> Limits().line_bytes == 64 * 2**20, Limits().json_depth, Limits().archive_bytes == 2 * 2**30
    (True, 512, True)
    >>> Limits().planned_units == default_planned_units()
    True
    """

    line_bytes: int = 64 * 2**20
    json_depth: int = 512
    member_bytes: int = 256 * 2**20
    archive_bytes: int = 2 * 2**30
    planned_units: int = field(default_factory=default_planned_units)


#: The command-line flag of each limit, named in the errors.
LIMIT_FLAGS: Final = {
    "line_bytes": "--max-line-bytes",
    "json_depth": "--max-json-depth",
    "member_bytes": "--max-member-bytes",
    "archive_bytes": "--max-archive-bytes",
    "planned_units": "--max-planned-units",
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


def check_planned_units(count: int, source: str, what: str) -> None:
    """Refuse a plan of more than ``Limits.planned_units`` units, from its counts, before its units are built.

    Parameters
    ----------
    count
        The plan's planned units.
    source
        The plan's file (or label), named in the error.
    what
        How ``count`` was reached, for a person (e.g. ``"4 cases × 1 candidate × 100000000 trials"``).

    Raises
    ------
    LimitExceeded
        With ``limit="planned_units"``, ``allowed``, ``found=count`` and ``flag="--max-planned-units"``.

    Examples
    --------
    >>> check_planned_units(100, "p.csv", "100 cases × 1 candidate × 1 trial")
    >>> with limits(planned_units=100):
    ...     try:
    ...         check_planned_units(101, "p.csv", "101 cases × 1 candidate × 1 trial")
    ...     except LimitExceeded as exc:
    ...         print(exc.found, exc.allowed, exc.flag)
    ...         print(exc)
    101 100 --max-planned-units
    p.csv: 101 cases × 1 candidate × 1 trial: 101 planned units (limit 100; raise it with --max-planned-units)
    """
    allowed = current_limits().planned_units
    if count > allowed:
        detail = limit_detail("planned_units", f"{what}: {count} planned units")
        flag = LIMIT_FLAGS["planned_units"]
        raise LimitExceeded(source, detail, limit="planned_units", allowed=allowed, found=count, flag=flag)


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
    with file:
        check_stream_line_lengths(file, str(path))


def check_stream_line_lengths(file: BinaryIO, source: str) -> None:
    """:func:`check_line_lengths` of an open binary stream (an object fetched from a store, a file)."""
    limit = current_limits().line_bytes
    run, line = 0, 1  # bytes of the current line so far, and its number
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
            raise InputFormatError(source, detail, line=line)
