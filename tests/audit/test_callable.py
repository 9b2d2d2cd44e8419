"""``evalframe.audit``, ``.compare`` and ``.funnel`` are modules that can be called as their functions."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types

import polars as pl
import pytest

import evalframe as ef


def test_importing_evalframe_audit_as_a_name_gives_the_module() -> None:
    code = "import types, evalframe, evalframe.audit as m; print(type(m).__name__, isinstance(m, types.ModuleType))"
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert done.stdout.split() == ["CallableModule", "True"]


CALLABLE = [("audit", "evalframe.audit.run"), ("compare", "evalframe.compare"), ("funnel", "evalframe.funnel.counts")]


@pytest.mark.parametrize(("name", "function"), CALLABLE)
def test_each_callable_module_is_its_module_and_calls_its_function(name: str, function: str) -> None:
    module = importlib.import_module(f"evalframe.{name}")
    assert isinstance(module, types.ModuleType) and callable(module)
    assert getattr(ef, name) is module is sys.modules[f"evalframe.{name}"]
    target = getattr(module, name)
    assert isinstance(target, types.FunctionType)
    assert target.__module__ == function
    assert inspect.signature(module) == inspect.signature(target)
    assert module.__doc__ and target.__doc__


def test_ef_audit_calls_the_audit() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    report = ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["q1"], "passed": [1]}))
    assert report.summary.select("candidate", "planned", "passed", "missing").rows() == [("A", 2, 1, 1)]
    assert list(inspect.signature(ef.audit).parameters)[:3] == ["plan", "results", "retry"]
    assert ef.audit.__doc__.startswith("The audit of a ledger against a frozen plan")


def test_a_patched_function_is_the_one_a_call_reaches(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("evalframe.funnel")
    monkeypatch.setattr(module, "funnel", lambda *args, **kwargs: ("patched", args, kwargs))
    assert ef.funnel(1, by=2) == ("patched", (1,), {"by": 2})


def test_documented_imports_still_give_the_functions() -> None:
    from evalframe.audit import audit
    from evalframe.compare import compare
    from evalframe.funnel import funnel

    assert [f.__name__ for f in (audit, compare, funnel)] == ["audit", "compare", "funnel"]
    assert all(isinstance(f, types.FunctionType) for f in (audit, compare, funnel))
