"""The shape of one row of the real-export outcome table (see test_every_real_export.py).

Each format's rows live in ``real_<format>.py`` beside this file as a list
``CASES`` of :class:`Case`; the numbers are the ones SOURCES.md gives for the
file (recounted from the raw rows), never read back from evalframe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from click.testing import CliRunner

from evalframe.cli import main
from tests.conftest import real

#: The funnel counts a row may assert, as named in the audit's summary.
COUNT_NAMES = (
    "planned",
    "attempted",
    "completed",
    "scored",
    "passed",
    "missing",
    "exec_failed",
    "judge_failed",
    "not_scored",
)


@dataclass(frozen=True)
class Case:
    """One audit of real exports and its exact expected outcome.

    Attributes
    ----------
    fmt
        The ``--from`` format.
    paths
        Export paths relative to ``../shared/data/real``.
    args
        Further audit options (e.g. ``("--score", "sst_score")``).
    exit_code
        0 audited, 1 refused, 2 input error.
    counts
        Per candidate (per ``(task, candidate)`` when the export holds two or
        more tasks: tasks are keys, never pooled), the summary counts that
        must hold exactly (any subset of :data:`COUNT_NAMES`; every audited
        candidate must be listed).
    refusal_kinds
        For exit 1: exactly the kinds of the refusing problems.
    notes
        Note kinds (refusing or not) that must be among the problems.
    why
        What the row checks, in words (shown as the test id's reason).
    collection
        ``real`` (paths under ``../shared/data/real``) or ``real2`` (the second collection).
    """

    fmt: str
    paths: tuple[str, ...]
    exit_code: int
    counts: Mapping[str | tuple[str, str], Mapping[str, int | None]] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    refusal_kinds: frozenset[str] = frozenset()
    notes: frozenset[str] = frozenset()
    why: str = ""
    collection: str = "real"

    @property
    def id(self) -> str:
        """A readable test id: the last path parts and the options."""
        shown = ";".join("/".join(p.split("/")[-2:]) for p in self.paths)
        return f"{self.collection}:{self.fmt}:{shown}{' ' + ' '.join(self.args) if self.args else ''}"


def run(case: Case) -> tuple[int, dict[str, Any], str]:
    """Audit the case through the CLI; return the exit code, the JSON output and stderr."""
    paths = (str(real(p, case.collection)) for p in case.paths)
    args = ["audit", "--from", case.fmt, *paths, "--format", "json", *case.args]
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    try:
        out = json.loads(result.stdout) if result.stdout.strip() else {}
    except json.JSONDecodeError:
        out = {}
    return result.exit_code, out, result.stderr


def check(case: Case) -> None:
    """Assert the case's exact outcome."""
    code, out, err = run(case)
    assert code == case.exit_code, f"exit {code}, expected {case.exit_code}\n{err[-3000:]}"
    if code == 1:
        assert out.get("refused") is True, out
        assert set(out["refusing_problems_by_kind"]) == set(case.refusal_kinds), out
        return
    if code != 0:
        return
    # Several tasks: the JSON output holds one single-task report per task, under "tasks" (name -> report).
    tasks = out["tasks"] if "tasks" in out else {None: out}
    summary = {
        row["candidate"] if task is None else (task, row["candidate"]): row
        for task, report in tasks.items()
        for row in report["summary"]
    }
    assert set(summary) == set(case.counts), sorted(summary, key=str)
    for candidate, expected in case.counts.items():
        got = {name: summary[candidate][name] for name in expected}
        assert got == expected, candidate
    kinds = {kind for report in tasks.values() for kind in report.get("problems_by_kind", {})}
    kinds |= {note["kind"] for note in out.get("notes", [])}  # several tasks: the notes of no task, listed once
    assert case.notes <= kinds, sorted(kinds)


def funnel(
    planned: int, passed: int | None, *, ran: int | None = None, scored: int | None = None, **more: int | None
) -> dict[str, int | None]:
    """The counts of a candidate of which ``ran`` planned units (default: all) completed, ``scored`` of them
    (default: all that ran) got a grade, and ``passed`` passed; the units that did not run are missing.

    ``more`` adds or overrides counts (``judge_failed=2``, ``not_scored=0``).
    """
    ran = planned if ran is None else ran
    return {
        "planned": planned,
        "attempted": ran,
        "completed": ran,
        "scored": ran if scored is None else scored,
        "passed": passed,
        "missing": planned - ran,
        "exec_failed": 0,
        "judge_failed": 0,
        **more,
    }
