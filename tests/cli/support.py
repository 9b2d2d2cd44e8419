"""What the command-line tests share: the orbit_desk fixture's audit arguments and a runner."""

from __future__ import annotations

from typing import Final

from click.testing import CliRunner

from evalframe.cli import main
from tests.conftest import FIXTURES

ORBIT = FIXTURES / "orbit_desk"
ORBIT_ARGS = [
    "audit",
    "--plan",
    str(ORBIT / "plan.csv"),
    "--results",
    str(ORBIT / "results.csv"),
    "--candidates",
    "A,B",
]


#: What a refused batch leaves in --out.
REFUSAL_FILES = ["evalframe-manifest.json", "problems.parquet", "report.html", "report.json", "report.md"]


#: The commands that print progress on stderr (a plain line every 10 s when stderr is not a terminal).
PROGRESSING: Final = ("audit", "compare")


def run(args: list[str]) -> tuple[int, str, str]:
    """Invoke ``evalframe ARGS`` in this process: exit code, stdout, stderr (audit, compare: ``--no-progress``).

    Tests compare stderr exactly; on a loaded machine a run past 10 s would add a progress line to it.
    """
    command = next((i for i, arg in enumerate(args) if arg in PROGRESSING), None)  # after the group's own flags
    if command is not None:
        args = [*args[: command + 1], "--no-progress", *args[command + 1 :]]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr
