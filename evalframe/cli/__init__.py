"""Command-line interface: a thin click layer over the library, and all of evalframe's process state.

The click group is :func:`~evalframe.cli.app.main`; the console script is :func:`~evalframe.cli.app.run`,
which also installs the stop-signal handlers and freezes the garbage collector (:mod:`evalframe.cli.signals`).
One module per command family (:mod:`~evalframe.cli.auditing`, :mod:`~evalframe.cli.importing`,
:mod:`~evalframe.cli.power`); shared options in :mod:`~evalframe.cli.options`; the exit-code mapping in
:mod:`~evalframe.cli.exits`. Nothing in the library imports this package.
"""

from evalframe.cli.app import main, run

__all__ = ["main", "run"]
