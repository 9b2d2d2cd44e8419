"""Lake tables: a Delta or Iceberg table's files at one version, read as the Parquet files they are.

``delta:PATH`` reads the table's latest version, ``delta:PATH@VERSION`` the version named (time travel).
The table's log (``_delta_log``) is read by ``deltalake``; the data files it lists at that version are then
scanned by :func:`~evalframe.load.scan_parquet`, so a Delta ledger is validated and numbered exactly as a
Parquet one (one rule, one place), and ``PATH`` may be local or an object-storage URL
(:mod:`evalframe.load.remote`). The version read is the load's provenance (``delta_table``,
``delta_version``), recorded in the report's meta so that the audit can be run again on the same rows.

``iceberg:METADATA_JSON`` reads an Iceberg table's current snapshot from its metadata file (no catalog),
``iceberg:METADATA_JSON@SNAPSHOT_ID`` the snapshot named; pyiceberg plans the files, the same Parquet reader
reads them, and ``iceberg_metadata`` / ``iceberg_snapshot`` are the provenance. Local metadata files only:
pyiceberg reads object storage with its own options, not polars'.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from evalframe.errors import InputFormatError, MissingExtra
from evalframe.load.loaded import Loaded
from evalframe.load.parquet import scan_parquet
from evalframe.load.remote import check_url, current_storage_options, is_url, scrubbed, store_error

#: The prefixes naming a Delta or an Iceberg table where a path is accepted.
DELTA: Final = "delta:"
ICEBERG: Final = "iceberg:"
#: Reader features whose rows the data files alone do not give (rows deleted by a vector, renamed columns).
_UNREAD_FEATURES: Final = ("deletionVectors", "columnMapping")


def is_lake_table(path: object) -> bool:
    """Whether ``path`` names a lake table (``delta:PATH[@VERSION]``, ``iceberg:PATH[@SNAPSHOT]``), not files.

    Examples
    --------
    >>> is_lake_table("delta:s3://evals/ledger@3"), is_lake_table("iceberg:m.json"), is_lake_table("r.parquet")
    (True, True, False)
    """
    return isinstance(path, str) and path.startswith((DELTA, ICEBERG))


def read_lake_table(spec: str) -> Loaded:
    """Load the lake table ``spec`` names: :func:`read_delta` or :func:`read_iceberg`."""
    return read_delta(spec) if spec.startswith(DELTA) else read_iceberg(spec)


def delta_spec(spec: str) -> tuple[str, int | None]:
    """The table path and version (None: the latest) of ``delta:PATH[@VERSION]`` (or ``iceberg:``).

    Raises
    ------
    InputFormatError
        When ``VERSION`` is not a whole number from 0.

    Examples
    --------
    >>> delta_spec("delta:s3://evals/ledger@3"), delta_spec("delta:/data/ledger")
    (('s3://evals/ledger', 3), ('/data/ledger', None))
    """
    body = spec.removeprefix(DELTA).removeprefix(ICEBERG)
    path, sep, version = body.rpartition("@")
    if not sep:
        return body, None
    if not (version.isascii() and version.isdigit()):
        raise InputFormatError(spec, f"the version after @ must be a whole number from 0, not {version!r}")
    return path, int(version)


def read_delta(spec: str) -> Loaded:
    """Load a Delta table at a version (``delta:PATH[@VERSION]``) as the Parquet files of that version.

    Returns
    -------
    Loaded
        As :func:`~evalframe.load.scan_parquet` of the version's data files; ``source`` is
        ``delta:PATH@VERSION`` (the version read, also when none was named) and ``provenance`` holds
        ``delta_table`` (PATH) and ``delta_version`` (int).

    Raises
    ------
    InputFormatError
        When the table cannot be opened (no ``_delta_log``, a version it does not have, a store that is
        missing, denied or unreachable), is partitioned, or needs a reader feature evalframe does not apply
        (deletion vectors, column mapping).
    MissingExtra
        Without ``pip install 'evalframe[lakes]'``.
    """
    path, version = delta_spec(spec)
    if is_url(path):
        check_url(path)
    try:
        from deltalake import DeltaTable
    except ModuleNotFoundError as exc:
        raise MissingExtra.of("lakes", exc) from None
    options = {k: str(v) for k, v in current_storage_options().items()} if is_url(path) else None
    try:
        table: Any = DeltaTable(path, storage_options=options)  # the latest first: a later version is refused
        latest = int(table.version())
        if version is not None and version < latest:
            table.load_as_version(version)
    except (OSError, ValueError, RuntimeError) as exc:
        if isinstance(exc, OSError) and is_url(path):
            raise store_error(spec, exc) from None
        first = scrubbed((str(exc).strip().splitlines() or [""])[0])
        raise InputFormatError(spec, f"cannot open the Delta table ({type(exc).__name__}: {first})") from None
    except Exception as exc:  # deltalake's own errors (TableNotFoundError, DeltaError, ...)
        first = scrubbed((str(exc).strip().splitlines() or [""])[0])
        raise InputFormatError(spec, f"cannot open the Delta table ({type(exc).__name__}: {first})") from None
    if version is not None and version > latest:  # deltalake would probe the log up to it (minutes at 2**63)
        raise InputFormatError(spec, f"the table has no version {version}: its latest is {latest}")
    read = int(table.version())
    named = f"{DELTA}{path}@{read}"
    features = set(table.protocol().reader_features or ())
    unread = sorted(features & set(_UNREAD_FEATURES))
    if unread:
        raise InputFormatError(named, f"the table uses {', '.join(unread)}, which evalframe does not apply yet")
    if table.metadata().partition_columns:
        keys = ", ".join(table.metadata().partition_columns)
        raise InputFormatError(named, f"a partitioned Delta table ({keys}) is not read yet: write it unpartitioned")
    files = sorted(table.file_uris())
    if not files:
        raise InputFormatError(named, "the table has no data files at this version")
    loaded = scan_parquet(files)
    return replace(loaded, source=named, provenance={"delta_table": path, "delta_version": read})


def read_iceberg(spec: str) -> Loaded:
    """Load an Iceberg table's snapshot (``iceberg:METADATA_JSON[@SNAPSHOT_ID]``) as its Parquet data files.

    Returns
    -------
    Loaded
        As :func:`~evalframe.load.scan_parquet` of the snapshot's data files; ``source`` is
        ``iceberg:METADATA_JSON@SNAPSHOT_ID`` and ``provenance`` holds ``iceberg_metadata`` and
        ``iceberg_snapshot`` (int).

    Raises
    ------
    InputFormatError
        When the metadata file is a URL or cannot be read, names no such snapshot, the table has no
        snapshot, delete files apply to the snapshot, or its schema has changed (columns are matched by name).
    MissingExtra
        Without pyiceberg (``pip install 'pyiceberg[pyarrow]'``).
    """
    path, snapshot = delta_spec(spec)
    if is_url(path):
        raise InputFormatError(spec, "an Iceberg table is read from a local metadata file (object storage: not yet)")
    try:
        from pyiceberg.table import StaticTable
    except ModuleNotFoundError as exc:
        raise MissingExtra.of("lakes", exc) from None
    try:
        table: Any = StaticTable.from_metadata(path)
    except Exception as exc:  # a missing or unreadable metadata file (pyiceberg's errors vary by FileIO)
        first = (str(exc).strip().splitlines() or [""])[0]
        raise InputFormatError(spec, f"cannot read the Iceberg metadata ({type(exc).__name__}: {first})") from None
    current = table.current_snapshot()
    chosen = current if snapshot is None else table.snapshot_by_id(snapshot)
    if chosen is None:
        raise InputFormatError(spec, "the table has no such snapshot" if snapshot is not None else "no snapshot")
    named = f"{ICEBERG}{path}@{chosen.snapshot_id}"
    if len(table.metadata.schemas) > 1:
        raise InputFormatError(named, "the table's schema has changed since it was created: not read yet")
    tasks = list(table.scan(snapshot_id=chosen.snapshot_id).plan_files())
    if any(task.delete_files for task in tasks):
        raise InputFormatError(named, "delete files apply to this snapshot, which evalframe does not apply yet")
    files = sorted(str(task.file.file_path).removeprefix("file://") for task in tasks)
    if not files:
        raise InputFormatError(named, "the snapshot has no data files")
    provenance = {"iceberg_metadata": path, "iceberg_snapshot": int(chosen.snapshot_id)}
    return replace(scan_parquet(files), source=named, provenance=provenance)
