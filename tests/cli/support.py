"""What the command-line tests share: the orbit_desk fixture's audit arguments and a runner."""

from __future__ import annotations

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


def run(args: list[str]) -> tuple[int, str, str]:
    """Invoke ``evalframe ARGS`` in this process: exit code, stdout, stderr."""
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr
