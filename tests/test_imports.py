"""The core never imports pandas itself (I/O edges and third-party schema code aside)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def test_evalframe_source_never_imports_pandas() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "evalframe").rglob("*.py"))
        if re.search(r"^\s*(import pandas|from pandas)\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert offenders == []


def test_library_code_registers_no_process_wide_hooks() -> None:
    # Only cli/ may touch process state: no atexit hooks, signal handlers or gc switches in the library.
    hook = re.compile(r"^\s*(import atexit|from atexit|import signal|from signal)\b|\bgc\.(disable|enable)\(", re.M)
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "evalframe").rglob("*.py"))
        if "cli" not in path.relative_to(ROOT).parts and hook.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_public_api_is_explicit() -> None:
    import evalframe

    assert sorted(evalframe.__all__) == [
        "AuditRefused",
        "AuditReport",
        "Comparison",
        "EvalframeError",
        "ImportUnreadable",
        "InputFormatError",
        "Limits",
        "Plan",
        "PlanError",
        "achieved_power",
        "audit",
        "cases_needed",
        "compare",
        "detectable_difference",
        "funnel",
        "limits",
        "load",
        "power",
        "read",
        "select_attempts",
    ]
    for name in evalframe.__all__:
        assert getattr(evalframe, name).__doc__, name


@pytest.mark.parametrize("before", [True, False])
def test_importing_evalframe_leaves_the_garbage_collector_as_it_was(before: bool) -> None:
    # A library leaves process-wide state alone: the import neither switches the collector off nor on.
    code = (
        "import gc, sys; gc.enable() if sys.argv[1] == 'on' else gc.disable(); import evalframe; "
        "assert 'pandera' in sys.modules; print(gc.isenabled())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "on" if before else "off"], check=True, capture_output=True, text=True
    )
    assert done.stdout.strip() == str(before)
