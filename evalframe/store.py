"""Where evalframe keeps the tables it does not hold in memory: a temporary folder the report owns.

A :class:`TableStore` holds a report's lazy units and attempts (an audit by
candidate, Spark) and the problems beyond the first rows of each kind
(:mod:`evalframe.problems`). It is a folder that lives until
:meth:`TableStore.close` (``AuditReport.close`` or leaving ``with report:``,
``AuditRefused.close``), or until the interpreter exits at the latest; never
until the garbage collector takes the report. So a lazy table taken from a
report (``units = report.units``, ``report.all_problems()``) stays readable
after the report itself is gone.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path


def _remove(folder: Path, _store: TableStore) -> None:
    """Remove ``folder`` (the store is an argument only so that the finalizer keeps it alive)."""
    shutil.rmtree(folder, ignore_errors=True)


class TableStore:
    """A temporary folder of table files, removed by :meth:`close` or at interpreter exit.

    Parameters
    ----------
    folder
        A folder to own (e.g. the one Spark wrote its tables to); a new temporary folder when None.

    Notes
    -----
    The removal is a :func:`weakref.finalize` on the store whose arguments hold the store itself: the
    garbage collector never runs it, :meth:`close` runs it once, and the interpreter runs it at exit if
    nothing closed the store before. A store costs a few hundred bytes in memory until then.

    Examples
    --------
    >>> import polars as pl
    >>> store = TableStore()
    >>> path = store.path("units", 0)
    >>> pl.DataFrame({"x": [1, 2]}).write_parquet(path)
    >>> units = pl.scan_parquet(path)
    >>> del store
    >>> import gc; _ = gc.collect()
    >>> units.collect().height
    2
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="evalframe-report-")) if folder is None else folder
        self._removal = weakref.finalize(self, _remove, self.folder, self)

    @property
    def closed(self) -> bool:
        """Whether the folder has been removed."""
        return not self._removal.alive

    def path(self, table: str, part: int, suffix: str = "parquet") -> Path:
        """Where part ``part`` of ``table`` is written (a file in the folder: Parquet, or ``arrow`` for IPC)."""
        return self.folder / f"{table}-{part:05d}.{suffix}"

    def close(self) -> None:
        """Remove the folder and every file in it now (once; a second call does nothing)."""
        self._removal()
