"""The core never imports pandas itself (I/O edges and third-party schema code aside), and
``import evalframe`` leaves out what only some commands need (pandera, rich), and nothing imports a plotting
library (the HTML report's charts are SVG written by evalframe.report.charts)."""

from __future__ import annotations

import json
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
    # evalframe/_launch.py is the one exception: the command's stop signals while its modules are imported,
    # which must run before any of cli/ can be imported; it acts only in the command's process
    # (tests/cli/test_signals.py).
    hook = re.compile(r"^\s*(import atexit|from atexit|import signal|from signal)\b|\bgc\.(disable|enable)\(", re.M)
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "evalframe").rglob("*.py"))
        if "cli" not in path.relative_to(ROOT).parts
        and path != ROOT / "evalframe" / "_launch.py"
        and hook.search(path.read_text(encoding="utf-8"))
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
        "LimitExceeded",
        "Limits",
        "MissingExtra",
        "Plan",
        "PlanError",
        "ReportClosed",
        "achieved_power",
        "aggregate",
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
        "import evalframe.schemas; assert 'pandera' in sys.modules; print(gc.isenabled())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "on" if before else "off"], check=True, capture_output=True, text=True
    )
    assert done.stdout.strip() == str(before)


#: Imported by some commands only: pandera where a schema is validated, rich where a terminal is written to,
#: numpy and scipy for statistics; pandas and pyspark only through pandera. matplotlib is imported by nothing: it
#: is listed so that a plotting library coming back into the report is seen (it may be installed for other uses).
IMPORTED_ON_USE = ("matplotlib", "numpy", "pandas", "pandera", "pyspark", "rich", "scipy")


def _imported_on_use_after(code: str) -> list[str]:
    """Which of IMPORTED_ON_USE a fresh interpreter has imported after running ``code``."""
    probe = f"import json, sys; {code}; print(json.dumps(sorted({{m.partition('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT)
    return [m for m in json.loads(done.stdout) if m in IMPORTED_ON_USE]


def test_import_evalframe_leaves_out_what_only_some_commands_need() -> None:
    assert _imported_on_use_after("import evalframe") == []


def test_what_the_import_leaves_out_is_imported_where_it_is_used() -> None:
    audit = (
        "import polars as pl, evalframe as ef; "
        "plan = ef.Plan.from_frame(pl.DataFrame({'case_id': ['q1', 'q2']}), candidates=['A']); "
        "report = ef.audit(plan, pl.DataFrame({'candidate': ['A'], 'case_id': ['q1'], 'passed': [1]}))"
    )
    # Validating imports pandera and whatever pandera itself imports (pandas and pyspark when installed).
    pandera = _imported_on_use_after("import pandera.polars")
    assert "pandera" in pandera
    assert _imported_on_use_after(audit) == pandera
    assert _imported_on_use_after(f"{audit}; report.to_html()") == pandera  # charts and all: no plotting library
    assert _imported_on_use_after("from evalframe.report import print_view") == ["rich"]
