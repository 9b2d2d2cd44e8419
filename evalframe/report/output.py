"""Writers: an output folder of Parquet tables and text files, replaced all or nothing.

An output folder is evalframe's own (its manifest lists every file it wrote,
with its hash) and is replaced all or nothing: the new output is written
complete beside it, then exchanged with the old (see :func:`write_output`).
Every Parquet file carries a description of each of its columns and the
report's provenance in its key-value metadata. Nothing here renders: the
text files arrive as strings.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import functools
import hashlib
import json
import os
import shutil
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe._version import evalframe_version
from evalframe.errors import OutputFolderError
from evalframe.load import glob_files, is_glob
from evalframe.progress import Progress
from evalframe.report.descriptions import describe

#: the command, outcome and run that wrote them, evalframe's version and the time (see :func:`write_output`).
MANIFEST: Final = "evalframe-manifest.json"
#: The ``format`` field of a manifest this version writes and recognises.
MANIFEST_FORMAT: Final = "evalframe-output/1"
#: A larger ``evalframe-manifest.json`` is not one evalframe wrote (it is never read whole).
MANIFEST_MAX_BYTES: Final = 16 * 2**20
#: Name prefix of the temporary folder a write makes beside its output folder (same file system).
TEMPORARY_PREFIX: Final = ".evalframe-tmp-"
#: The marker file of a temporary folder: its writer holds it locked (``flock``) while it runs, so an
#: unlocked marker means the writer is gone and the next write removes the folder.
TEMPORARY_MARKER: Final = ".evalframe-temporary"

#: Why a mount point (or another folder that cannot be renamed, ``EBUSY``) is refused as an output folder.
_NOT_MOVABLE: Final = (
    "is a mount point or otherwise busy, and evalframe replaces its output folder as a whole: "
    "give a new folder inside it (e.g. out/)"
)

#: What a write holds around the exchange of the folder with its new version (see :func:`write_output`):
#: a context manager factory such as the command's signal guard; the library itself holds nothing.
ExchangeGuard = Callable[[], AbstractContextManager[object]]


def _step(name: str) -> None:
    """Mark the end of one step of :func:`write_output` (the tests stop the process here, step by step)."""


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on a folder: writes beside each other check, clean and exchange in turn."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@functools.lru_cache(maxsize=256)
def _sha256(path: str, inode: int, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file, remembered while the file is unchanged (inode, size and modification time)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _digest(path: Path) -> tuple[str, int]:
    """SHA-256 (hex) and size in bytes of a regular file."""
    st = path.lstat()
    return _sha256(str(path), st.st_ino, st.st_size, st.st_mtime_ns), st.st_size


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest evalframe wrote in an output folder, or None when there is none it recognises.

    Returns
    -------
    dict or None
        ``format``, ``evalframe_version``, ``command``, ``outcome``
        (``audited``, ``refused``, ``imported``, ...), ``run_id``,
        ``written_at`` (UTC, ISO 8601) and ``files``: for each file name its
        ``sha256`` (hex) and ``size`` (bytes). None when the manifest is
        absent, unreadable, larger than :data:`MANIFEST_MAX_BYTES` or not in
        :data:`MANIFEST_FORMAT`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = write_output(f"{folder}/out", {"summary": pl.DataFrame({"scored": [2]})})
    ...     manifest = read_manifest(f"{folder}/out")
    >>> manifest["outcome"], sorted(manifest["files"]), manifest["files"]["summary.parquet"]["size"] > 0
    ('written', ['summary.parquet'], True)
    """
    path = Path(folder) / MANIFEST
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > MANIFEST_MAX_BYTES:
            return None
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT or not isinstance(doc.get("files"), dict):
        return None
    return doc


def _owned(path: Path, record: Any) -> bool:
    """Whether a folder entry is the regular file the manifest lists, with the same size and SHA-256."""
    if not isinstance(record, dict):
        return False
    try:
        if not stat.S_ISREG(path.lstat().st_mode) or path.lstat().st_size != record.get("size"):
            return False
        return _digest(path)[0] == record.get("sha256")
    except OSError:
        return False


def listed_unchanged(folder: str | os.PathLike[str], manifest: dict[str, Any], name: str) -> bool:
    """Whether ``name`` in ``folder`` is a file its manifest (see :func:`read_manifest`) lists, unchanged since.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = write_output(f"{folder}/out", {"summary": pl.DataFrame({"scored": [2]})})
    ...     manifest = read_manifest(f"{folder}/out")
    ...     listed_unchanged(f"{folder}/out", manifest, "summary.parquet"), listed_unchanged(
    ...         f"{folder}/out", manifest, "units.parquet")
    (True, False)
    """
    return _owned(Path(folder) / name, manifest.get("files", {}).get(name))


def _owned_entry(path: Path, name: str, files: Mapping[str, Any]) -> bool:
    """Whether a folder entry is evalframe's: a file the manifest lists, or a real folder whose every file it lists.

    ``name`` is the entry's path relative to the output folder (``/``-separated), as the manifest names files.
    """
    try:
        is_folder = stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False
    if not is_folder:
        return _owned(path, files.get(name))
    entries = list(os.scandir(path))
    return bool(entries) and all(_owned_entry(Path(e.path), f"{name}/{e.name}", files) for e in entries)


def _input_roots(inputs: Iterable[str | os.PathLike[str]]) -> list[tuple[str, list[Path]]]:
    """Each input as given with the real paths it reads: itself, or every file a glob matches.

    A path is a glob only when it names nothing that exists (:func:`~evalframe.load.is_glob`, as the
    loaders decide); a glob that matches nothing reads nothing.
    """
    roots = []
    for item in inputs:
        text = os.fspath(item)
        paths = glob_files(text) if is_glob(text) else [text]
        roots.append((text, [Path(os.path.realpath(path)) for path in paths]))
    return roots


def check_output_folder(out: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Refuse an output folder that is not evalframe's own to replace; change nothing.

    A folder is evalframe's own when it is new, empty, or holds only files
    its manifest (:data:`MANIFEST`) lists with their size and SHA-256: an
    earlier output. :func:`write_output` checks the same, under its lock,
    just before it exchanges the folder; a caller with a long run ahead
    (the ``evalframe`` command) calls this first, to refuse before it.

    Parameters
    ----------
    out
        The output folder.
    inputs
        The files, folders and globs the run reads: none may lie inside the
        output folder, nor the folder inside one of them. A glob stands for
        the files it matches now; a path that exists is itself, wildcards or
        not (both as the loaders read them).

    Raises
    ------
    OutputFolderError
        With ``foreign`` listing every input inside the folder, or else
        every entry evalframe did not write (a changed file, a subfolder,
        a symbolic link); also when ``out`` is a file, a mount point, or the
        current folder or one holding it (the folder is replaced as a whole).

    Notes
    -----
    The check holds the lock that writes beside the folder exchange under, so
    it never sees a folder half exchanged by another run.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = Path(folder, "notes.txt").write_text("mine")
    ...     try:
    ...         check_output_folder(folder)
    ...     except OutputFolderError as exc:
    ...         print([Path(p).name for p in exc.foreign], exc.reason.split(":")[0])
    ['notes.txt'] holds 1 file(s) evalframe did not write (not in its evalframe-manifest.json, or changed since)
    """
    parent = Path(os.path.realpath(out)).parent
    if not parent.is_dir():
        _check(out, inputs)
        return
    with _locked(parent):
        _check(out, inputs)


def _check(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """:func:`check_output_folder` without the lock (for a caller that holds it)."""
    shown = os.fspath(out)
    dest = Path(os.path.realpath(out))
    inside = [
        text
        for text, roots in _input_roots(inputs)
        if any(root.is_relative_to(dest) or dest.is_relative_to(root) for root in roots)
    ]
    if inside:
        msg = "holds an input of this run, or lies inside one: evalframe never writes where it reads; choose another"
        raise OutputFolderError(shown, f"{msg} output folder", foreign=inside)
    if os.path.lexists(dest) and not dest.is_dir():
        raise OutputFolderError(shown, "is a file, not a folder", foreign=[shown])
    if dest.is_dir():
        manifest = read_manifest(dest)
        files = {} if manifest is None else manifest["files"]
        foreign = []
        for entry in sorted(os.scandir(dest), key=lambda e: e.name):
            if entry.name == MANIFEST and manifest is not None:
                continue
            if not _owned_entry(Path(entry.path), entry.name, files):
                slash = "/" if entry.is_dir(follow_symlinks=False) else ""
                foreign.append(os.path.join(shown, entry.name) + slash)
        if foreign:
            msg = (
                f"holds {len(foreign)} file(s) evalframe did not write (not in its {MANIFEST}, or changed since): "
                "it never overwrites, moves or deletes them; move them away or choose a new or empty folder"
            )
            raise OutputFolderError(shown, msg, foreign=foreign)
    if dest.is_dir() and os.path.ismount(dest):  # it cannot be renamed: the exchange would fail with EBUSY
        raise OutputFolderError(shown, _NOT_MOVABLE)
    if Path.cwd().resolve().is_relative_to(dest):
        msg = "is the current folder or holds it: evalframe replaces its output folder as a whole; give a new folder"
        raise OutputFolderError(shown, f"{msg} inside it (e.g. out/)")


def _remove_temporary(folder: Path) -> None:
    """Remove a temporary folder, its marker last: stopped midway, the next write still knows it as its own."""
    for entry in os.scandir(folder):
        if entry.name == TEMPORARY_MARKER:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
        _step(f"removed {entry.name}")
    (folder / TEMPORARY_MARKER).unlink(missing_ok=True)
    folder.rmdir()


def _clean_stale(parent: Path) -> list[Path]:
    """Remove the temporary folders that stopped writes left in ``parent``; return them.

    Only folders named :data:`TEMPORARY_PREFIX`… whose marker file is not held locked by a running write
    (or that are empty) are removed: a folder that merely looks like one is left alone.
    """
    removed = []
    for entry in os.scandir(parent):
        if not entry.name.startswith(TEMPORARY_PREFIX) or not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        try:
            fd = os.open(folder / TEMPORARY_MARKER, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()  # empty: stopped before its marker was made, or after it was removed
                removed.append(folder)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a write in progress
        finally:
            os.close(fd)
        _remove_temporary(folder)
        removed.append(folder)
    return removed


def write_output(
    out: str | os.PathLike[str],
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    texts: Mapping[str, str] | None = None,
    *,
    meta: Mapping[str, Any] | None = None,
    command: str = "python",
    outcome: str = "written",
    inputs: Iterable[str | os.PathLike[str]] = (),
    progress: Progress | None = None,
    guard: ExchangeGuard = nullcontext,
) -> list[Path]:
    """Write tables as ``<name>.parquet`` plus text files as evalframe's own output folder, all or nothing.

    The folder must be new, empty, or an earlier evalframe output (see
    :func:`check_output_folder`); the new output replaces the old one as a
    whole. It is written complete, with its manifest (:data:`MANIFEST`), into
    a temporary folder beside ``out`` (:data:`TEMPORARY_PREFIX`…, same file
    system); then, under a lock on the parent folder and inside ``guard``,
    the folder is checked (a refusal removes the temporary folder), the old one is moved into
    the temporary folder, the new one takes its name, and the temporary
    folder is removed. After any interruption (a signal, ``kill -9``, a full
    disk) ``out`` is the whole earlier output, the whole new one, or absent,
    and its manifest says which; the temporary folder a killed write leaves
    is removed by the next write in the same parent folder.

    Each Parquet file's key-value metadata holds ``evalframe.table`` (the
    table name), ``evalframe.descriptions`` (JSON: a description of every
    column, see :func:`describe`) and, when given, ``evalframe.meta`` (JSON
    provenance).

    Parameters
    ----------
    out
        The output folder (its parents are created if needed).
    tables
        Tables by file stem; a LazyFrame is streamed to its file.
    texts
        Text files by name (UTF-8).
    meta
        Provenance stored in every Parquet file.
    command, outcome
        What wrote the folder and how it ended, recorded in the manifest.
    inputs
        The run's input paths and globs: refused inside ``out``.
    progress
        Called as ``progress("outputs written", done, total)`` after each
        file is written (the command draws a progress bar with it).
    guard
        Entered around the exchange: the ``evalframe`` command passes its
        signal guard (:func:`evalframe.cli.signals.hold_stop_signals`), so a
        stop signal takes effect after the exchange; the default holds
        nothing and changes no process state.

    Returns
    -------
    list of pathlib.Path
        The files written (the manifest aside), sorted by name.

    Raises
    ------
    OutputFolderError
        ``out`` is not evalframe's own to replace (checked once the files are
        written, under the lock), it is a mount point (it cannot be
        exchanged: write to a folder inside it), or the output could not be
        written; nothing in ``out`` was changed.

    Examples
    --------
    >>> import tempfile, pyarrow.parquet as pq
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = write_output(folder + "/out", {"summary": pl.DataFrame({"scored_coverage": [0.5]})})
    ...     kv = pq.read_metadata(written[0]).metadata
    ...     names = sorted(p.name for p in Path(folder, "out").iterdir())
    >>> [p.name for p in written], names
    (['summary.parquet'], ['evalframe-manifest.json', 'summary.parquet'])
    >>> json.loads(kv[b"evalframe.descriptions"])
    {'scored_coverage': 'scored / planned'}
    """
    inputs = list(inputs)
    dest = Path(os.path.realpath(out))
    parent = dest.parent
    parent.mkdir(parents=True, exist_ok=True)
    with _locked(parent):  # a cleaning write never sees the temporary folder before its marker is held
        tmp = Path(tempfile.mkdtemp(prefix=f"{TEMPORARY_PREFIX}{dest.name[:64]}-", dir=parent))
        marker = os.open(tmp / TEMPORARY_MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        fcntl.flock(marker, fcntl.LOCK_EX)
    try:
        _step("temporary folder made")
        new = tmp / "new"
        new.mkdir()
        names = _write_files(new, tables, texts or {}, meta, shown=os.fspath(out), progress=progress)
        files = {}
        for name in names:
            with open(new / name, "rb") as f:
                os.fsync(f.fileno())
            sha, size = _digest(new / name)
            files[name] = {"sha256": sha, "size": size}
        manifest = {
            "format": MANIFEST_FORMAT,
            "evalframe_version": evalframe_version(),
            "command": command,
            "outcome": outcome,
            "run_id": uuid.uuid4().hex,
            "written_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds"),
            "files": files,
        }
        (new / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _step("manifest written")
        with guard(), _locked(parent):
            _clean_stale(parent)
            _check(out, inputs)  # a person or another run may have written there meanwhile
            old = tmp / "old"
            if os.path.lexists(dest):
                _move_aside(dest, old, shown=os.fspath(out))
                _step("earlier output moved aside")
            try:
                os.rename(new, dest)
            except BaseException:
                if os.path.lexists(old):
                    os.rename(old, dest)
                raise
            _step("new output in place")
            _remove_temporary(tmp)
            _step("temporary folder removed")
    except BaseException:
        if tmp.exists():
            with contextlib.suppress(OSError):
                _remove_temporary(tmp)
        raise
    finally:
        os.close(marker)
    return sorted(dest / name for name in names)


def _move_aside(dest: Path, old: Path, *, shown: str) -> None:
    """Move the earlier output folder into the temporary folder; a folder that cannot move is an OutputFolderError.

    A mount point is refused by the check before (:func:`check_output_folder`); another folder the
    system will not rename (``EBUSY``) is refused here, in the same words.
    """
    try:
        os.rename(dest, old)
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
        raise OutputFolderError(shown, _NOT_MOVABLE) from exc


def _write_files(
    folder: Path,
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    texts: Mapping[str, str],
    meta: Mapping[str, Any] | None,
    *,
    shown: str,
    progress: Progress | None = None,
) -> list[str]:
    """Write each table and text into ``folder``; return the file names. A failed write is an OutputFolderError."""
    provenance = {} if meta is None else {"evalframe.meta": json.dumps(dict(meta), default=str)}
    names: list[str] = []
    total = len(tables) + len(texts)

    def done(name: str) -> None:
        names.append(name)
        _step(f"wrote {name}")
        if progress is not None:
            progress("outputs written", len(names), total)

    try:
        for name, frame in tables.items():
            descriptions = {c: describe(name, c) for c in frame.collect_schema().names()}
            metadata = {
                "evalframe.table": name,
                "evalframe.descriptions": json.dumps(descriptions, ensure_ascii=False),
                **provenance,
            }
            write_parquet(frame, folder / f"{name}.parquet", metadata=metadata)
            done(f"{name}.parquet")
        for name, text in texts.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)  # a name may hold folders: ``data/x.json``
            (folder / name).write_text(text, encoding="utf-8")
            done(name)
    except OSError as exc:
        raise OutputFolderError(shown, f"cannot write the output: {exc.strerror or exc}") from exc
    except pl.exceptions.PolarsError as exc:  # polars reports a full disk as a ComputeError
        raise OutputFolderError(shown, f"cannot write the output: {str(exc).splitlines()[0]}") from exc
    return sorted(names)


def write_parquet(frame: pl.DataFrame | pl.LazyFrame, path: Path, *, metadata: Mapping[str, str]) -> None:
    """Write one table as Parquet with a CRC-32 checksum on every page: every Parquet file evalframe writes.

    A bit flipped on disk or in transit then fails the page's checksum where the reader verifies it (pyarrow;
    evalframe's loader checks the files it wrote, :func:`evalframe.load.scan_parquet`) instead of reading as
    another grade. polars' writer sets no page checksum, so pyarrow writes: a LazyFrame (a spilled table)
    batch by batch, never held whole. zstd compression and the key-value ``metadata`` as polars would.

    Examples
    --------
    >>> import tempfile, pyarrow.parquet as pq
    >>> path = Path(tempfile.mkdtemp()) / "t.parquet"
    >>> write_parquet(pl.DataFrame({"a": [1, 2]}), path, metadata={"evalframe.table": "t"})
    >>> pq.ParquetFile(path, page_checksum_verification=True).read().to_pydict(), pl.read_parquet(path).height
    ({'a': [1, 2]}, 2)
    """
    import pyarrow.parquet as pq  # imported on use: `import evalframe` does not need it

    options: dict[str, Any] = {"compression": "zstd", "write_page_checksum": True}
    if isinstance(frame, pl.DataFrame):
        table = frame.rechunk().to_arrow()  # one chunk per column: the same rows give the same pages and bytes
        pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata}), path, **options)
        return
    schema = frame.clear().collect().to_arrow().schema
    schema = schema.with_metadata({**(schema.metadata or {}), **metadata})
    with pq.ParquetWriter(path, schema, **options) as writer:
        for batch in frame.collect_batches():
            writer.write_table(batch.to_arrow().cast(schema))
