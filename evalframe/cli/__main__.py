"""``python -m evalframe.cli``: the ``evalframe`` command."""

from evalframe.cli.app import run

run()
