"""A setting of the whole process that evalframe holds only while it needs it.

Some settings belong to the process, not to a call: polars' engine affinity,
the ``csv`` module's field size limit. Where the library must change one, it
changes it for the duration of its own work only, and calls may nest or
overlap on several threads; :class:`ProcessSetting` applies the setting when
the first holder enters and restores what it found when the last one leaves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack


class ProcessSetting:
    """A process-wide setting held while any ``with`` block of this object runs, the caller's restored after.

    Parameters
    ----------
    change
        Makes a context manager that applies the setting on entering and restores what it found on leaving
        (e.g. ``lambda: pl.Config(engine_affinity="in-memory")``). Entered by the first holder, left by the
        last.

    Examples
    --------
    >>> import csv, sys
    >>> from contextlib import contextmanager
    >>> @contextmanager
    ... def unlimited():
    ...     saved = csv.field_size_limit(sys.maxsize)
    ...     try:
    ...         yield
    ...     finally:
    ...         csv.field_size_limit(saved)
    >>> setting, before = ProcessSetting(unlimited), csv.field_size_limit()
    >>> with setting:
    ...     with setting:  # nested: still set
    ...         pass
    ...     print(csv.field_size_limit() == sys.maxsize)
    True
    >>> csv.field_size_limit() == before
    True
    """

    def __init__(self, change: Callable[[], AbstractContextManager[object]]) -> None:
        self._change = change
        self._lock = threading.Lock()
        self._holders = 0
        self._held = ExitStack()

    def __enter__(self) -> None:
        with self._lock:
            if not self._holders:
                self._held.enter_context(self._change())
            self._holders += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._holders -= 1
            if not self._holders:
                self._held.close()
