"""``ef.audit``, ``ef.compare``, ``ef.funnel`` and ``ef.load`` are the functions, not their packages."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types

import polars as pl
import pytest

import evalframe as ef

FUNCTIONS = [
    ("audit", "evalframe.audit.run"),
    ("compare", "evalframe.compare"),
    ("funnel", "evalframe.funnel.counts"),
    ("load", "evalframe.load.dispatch"),
]


@pytest.mark.parametrize(("name", "defined_in"), FUNCTIONS)
def test_each_name_is_the_function_its_package_re_exports(name: str, defined_in: str) -> None:
    function = getattr(ef, name)
    assert isinstance(function, types.FunctionType)
    assert function.__module__ == defined_in
    package = importlib.import_module(f"evalframe.{name}")
    assert isinstance(package, types.ModuleType) and not callable(package)
    assert getattr(package, name) is function is getattr(sys.modules[defined_in], name)


def test_a_package_s_other_names_are_imported_from_it() -> None:
    code = (
        "import evalframe as ef, evalframe.audit as a\n"
        "from evalframe.audit import with_ledger_problems\n"
        "from evalframe.funnel import RATE_COLUMNS\n"
        "print(a is ef.audit, with_ledger_problems.__module__, RATE_COLUMNS[0])"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert done.stdout.split() == ["True", "evalframe.audit.run", "completion_rate"]


def test_ef_audit_calls_the_audit() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]}))
    assert report.summary.select("candidate", "planned", "passed", "missing").rows() == [("A", 2, 1, 1)]
    assert list(inspect.signature(ef.audit).parameters)[:3] == ["plan", "results", "retry"]
    assert ef.audit.__doc__ is not None and ef.audit.__doc__.startswith("Audit a ledger against a frozen plan.\n")
