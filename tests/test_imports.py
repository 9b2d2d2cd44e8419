"""The core never imports pandas itself (I/O edges and third-party schema code aside)."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_evalframe_source_never_imports_pandas() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "evalframe").rglob("*.py"))
        if re.search(r"^\s*(import pandas|from pandas)\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert offenders == []


def test_public_api_is_explicit() -> None:
    import evalframe

    assert sorted(evalframe.__all__) == [
        "AuditRefused",
        "AuditReport",
        "Comparison",
        "EvalframeError",
        "InputFormatError",
        "Plan",
        "PlanError",
        "audit",
        "compare",
        "funnel",
        "load",
        "select_attempts",
    ]
    for name in evalframe.__all__:
        assert getattr(evalframe, name).__doc__, name
