"""The README's examples are real runs: each ```$ evalframe ...``` block is run and compared with its output.

A block opens with the command (``$ evalframe ...``, continued by lines ending in ``\\``); the lines after
it are what the command prints on stdout, as the command line prints when stdout is not a terminal (200
columns), trailing spaces aside. A line ``…`` stands for any number of lines left out; a line opening
with ``(excerpt`` says so to the reader and is not output. Without ``…`` the block is the whole output.
Whoever changes what a command prints updates the README with it: that is the point of this test.
The README's ``>>>`` Python blocks run as doctests.
"""

from __future__ import annotations

import doctest
import re
import shlex

import pytest
from click.testing import CliRunner

from evalframe.cli import main
from tests.conftest import ROOT

README = ROOT / "README.md"
#: Does not read ../shared by itself: an example that does skips, saying so, when it is absent.
HANDLES_ABSENT_SHARED = True
SHARED = ROOT.parent / "shared" / "data" / "real"
GAP = "…"

Example = tuple[list[str], list[str]]


def blocks(fence_info: str) -> list[str]:
    """The bodies of the README's fenced blocks opened by ```` ```fence_info ````, in order."""
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{re.escape(fence_info)}\n(.*?)^```$", text, flags=re.M | re.S)


def examples() -> list[Example]:
    """Each command example: its arguments after ``evalframe`` and the output lines shown."""
    found = []
    for body in blocks(""):
        if not body.startswith("$ evalframe "):
            continue
        lines = body.rstrip("\n").split("\n")
        command = [lines.pop(0)[2:]]
        while command[-1].endswith("\\"):
            command[-1] = command[-1][:-1]
            command.append(lines.pop(0))
        shown = [line.rstrip() for line in lines if not line.startswith("(excerpt")]
        found.append((shlex.split(" ".join(command))[1:], shown))
    return found


def matches(shown: list[str], output: list[str]) -> bool:
    """Whether the output holds the shown runs of lines in order (each run contiguous), whole when no gap."""
    if GAP not in shown:
        return shown == output
    runs: list[list[str]] = [[]]
    for line in shown:
        if line == GAP:
            runs.append([])
        else:
            runs[-1].append(line)
    start = 0
    for n, run in enumerate(runs):
        if not run:
            continue
        at = next((i for i in range(start, len(output) - len(run) + 1) if output[i : i + len(run)] == run), None)
        if at is None or (n == 0 and at != 0):
            return False
        start = at + len(run)
    return not runs[-1] or start == len(output)


def test_the_readme_has_command_examples() -> None:
    assert [args[0] for args, _ in examples()] == ["compare", "audit"]


@pytest.mark.parametrize(("args", "shown"), examples(), ids=[args[0] for args, _ in examples()])
def test_each_command_example_prints_what_the_readme_shows(
    args: list[str], shown: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if any("../shared/" in a for a in args) and not SHARED.is_dir():
        pytest.skip("reads ../shared/data/real, which is not laid beside the repository (CI always has it)")
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    output = [line.rstrip() for line in result.stdout.rstrip("\n").split("\n")]
    assert matches(shown, output), "\n".join(output)


def test_matches_reads_gaps_and_runs() -> None:
    output = ["a", "b", "c", "d"]
    assert matches(["a", "b", "c", "d"], output) and not matches(["a", "b", "c"], output)
    assert matches(["a", GAP, "c", "d"], output) and matches(["a", GAP, "c", GAP], output)
    assert not matches(["b", GAP], output)  # the first run opens the output
    assert not matches(["a", GAP, "c"], output)  # the last run closes it unless a gap follows
    assert not matches(["a", GAP, "d", "c"], output)


def test_python_examples_run_as_doctests() -> None:
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    texts = [body for body in blocks("python") if body.startswith(">>>")]
    assert texts
    for n, text in enumerate(texts):
        runner.run(parser.get_doctest(text, {}, f"README-{n}", str(README), 0))
    assert runner.summarize(verbose=False).failed == 0
