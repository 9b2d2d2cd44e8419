"""Reading ``.eval`` archives (zip, deflate or zstd members) within the member and archive limits."""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Final

import zstandard

from evalframe.errors import InputFormatError
from evalframe.importers._kit import Unreadable, note, parse_json
from evalframe.importers.inspect_ai.log import _check_header, _Log, _read_json_log, _read_sample
from evalframe.load import Limits, current_limits, limit_detail

#: The default of ``Limits.member_bytes``: the most bytes one ``.eval`` archive member is decompressed to (or
#: read compressed); a larger member is an ``unreadable_file``, whatever size the archive declares for it.
MAX_MEMBER_BYTES: Final = Limits().member_bytes

_SAMPLE_MEMBER: Final = re.compile(r"^samples/.+_epoch_\d+\.json$")
_HEADER: Final = "header.json"
_JOURNAL_START: Final = "_journal/start.json"
#: Zip compression method number of zstd (APPNOTE 4.4.5), which Python's zipfile reads only from 3.14.
_ZSTD: Final = 93
_LOCAL_HEADER: Final = struct.Struct("<4s5H3L2H")


def _member_bytes(archive: zipfile.ZipFile, path: str, member: zipfile.ZipInfo) -> bytes:
    """The decompressed bytes of one archive member, at most ``Limits.member_bytes``; raises :class:`Unreadable`.

    A member whose recorded size is larger is refused before it is read; one whose bytes outgrow the bound
    while it is decompressed (recorded sizes can lie) is refused there.
    """
    source = f"{path}!{member.filename}"
    bound = current_limits().member_bytes
    if member.flag_bits & 0x1:
        raise Unreadable(source, "the archive member is encrypted")
    if member.file_size > bound:
        what = f"the archive member records {member.file_size} bytes decompressed, more than {bound} bytes"
        raise Unreadable(source, limit_detail("member_bytes", what))
    try:
        if member.compress_type == _ZSTD:
            data = _zstd_member(path, member, source)
        else:
            with archive.open(member) as stream:
                data = stream.read(bound + 1)
    except Unreadable:
        raise
    except Exception as exc:  # zlib.error, BadZipFile, EOFError, OSError, NotImplementedError: "cannot read"
        raise Unreadable(source, f"cannot read the archive member: {exc}") from None
    if len(data) > bound:
        what = f"the archive member decompresses to more than {bound} bytes"
        raise Unreadable(source, limit_detail("member_bytes", what))
    if len(data) != member.file_size:  # zipfile checks the CRC-32 only: a recorded size can lie upwards
        detail = f"the archive member records {member.file_size} bytes decompressed but holds {len(data)}"
        raise Unreadable(source, detail)
    return data


def _zstd_member(path: str, member: zipfile.ZipInfo, source: str) -> bytes:
    """Decompress a zstd (method 93) member from its local entry, bounded and checked against CRC and size."""
    bound = current_limits().member_bytes
    if member.compress_size > bound:
        what = f"the archive member holds more than {bound} bytes (compressed)"
        raise Unreadable(source, limit_detail("member_bytes", what))
    with open(path, "rb") as file:
        file.seek(member.header_offset)
        local = file.read(_LOCAL_HEADER.size)
        if len(local) != _LOCAL_HEADER.size or local[:4] != b"PK\x03\x04":
            raise Unreadable(source, "the archive member's local header is missing or damaged")
        fields = _LOCAL_HEADER.unpack(local)
        file.seek(member.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10])
        raw = file.read(member.compress_size)
    if len(raw) != member.compress_size:
        raise Unreadable(source, "the archive member is truncated")
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        chunks: list[bytes] = []
        size = 0
        while size <= bound:
            chunk = reader.read(1024 * 1024)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except zstandard.ZstdError as exc:
        raise Unreadable(source, f"invalid zstd data: {exc}") from None
    data = b"".join(chunks)
    if len(data) <= bound and (len(data) != member.file_size or zlib.crc32(data) != member.CRC):
        raise Unreadable(source, "the decompressed archive member does not match its recorded size and CRC-32")
    return data


def _read_eval(path: str) -> tuple[_Log | None, list[dict[str, Any]]]:
    """Read a ``.eval`` zip archive: the log and a note per unreadable sample member."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        return None, [note("unreadable_file", path, f"not a readable .eval (zip) archive: {exc}")]
    notes: list[dict[str, Any]] = []
    with archive:
        members = {m.filename: m for m in archive.infolist()}
        repeated = sorted(n for n, k in Counter(m.filename for m in archive.infolist()).items() if k > 1)
        if repeated:  # which copy is the log is not defined: never let the last one silently win
            detail = (
                f"the archive holds {len(repeated)} member name(s) more than once ({', '.join(repeated[:3])}"
                f"{', …' if len(repeated) > 3 else ''}): which copy is the log's is not defined"
            )
            return None, [note("unreadable_file", path, detail)]
        name = _HEADER if _HEADER in members else _JOURNAL_START if _JOURNAL_START in members else None
        if name is None:
            return None, [note("unreadable_file", path, f"the archive has neither {_HEADER} nor {_JOURNAL_START}")]
        try:
            source = f"{path}!{name}"
            top = _check_header(parse_json(_member_bytes(archive, path, members[name]), source), source)
        except Unreadable as exc:
            return None, [exc.note]
        status = top.get("status") if name == _HEADER else "started"
        log = _Log(path, "eval", name, top, status if isinstance(status, str) else "started")
        sample_names = [n for n in members if _SAMPLE_MEMBER.match(n)]
        # The whole archive is bounded too: by the sizes its directory records, before any sample is read, and
        # by the bytes decompressed, as they are (a member's recorded size can lie).
        bound = current_limits().archive_bytes
        recorded = members[name].file_size + sum(members[n].file_size for n in sample_names)
        if recorded > bound:
            what = f"the archive's members record {recorded} bytes decompressed, more than {bound} bytes"
            raise InputFormatError(path, limit_detail("archive_bytes", what))
        read = 0
        for line, member in enumerate(sample_names, start=1):
            source = f"{path}!{member}"
            try:
                data = _member_bytes(archive, path, members[member])
                read += len(data)
                if read > bound:
                    what = f"the archive's members decompress to more than {bound} bytes"
                    raise InputFormatError(path, limit_detail("archive_bytes", what))
                value = parse_json(data, source)
                log.samples.append(_read_sample(value, line, source, member))
            except Unreadable as exc:
                notes.append(exc.note)
    return log, notes


def _read_log(path: Path) -> tuple[_Log | None, list[dict[str, Any]]]:
    if path.suffix == ".eval" or (path.suffix != ".json" and zipfile.is_zipfile(path)):
        return _read_eval(str(path))
    return _read_json_log(str(path))
