"""Shared test paths and the Spark local session fixture."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "fixtures"
#: Real published exports (read-only), laid beside the repository as ../shared.
REAL = ROOT.parent / "shared" / "data" / "real"
#: The licensed ones among them, copied into the repository (same layout; see its README.md).
REAL_FIXTURES = FIXTURES / "real"
#: The second collection of real exports (read-only; tests read it at this path, none is copied).
REAL2 = ROOT.parent / "shared" / "data" / "real2"


def real(relative: str, collection: str = "real") -> Path:
    """A real export by its path under ``data/real`` (or ``data/real2``).

    For the first collection the repository's copy when it has one, else ../shared's.
    """
    if collection == "real2":
        return REAL2 / relative
    copy = REAL_FIXTURES / relative
    return copy if copy.exists() else REAL / relative


def readme_example(marker: str) -> tuple[str, str]:
    """The README's worked example after ``<!-- marker -->``: its ``python`` block and the ``text`` it prints."""
    after = (ROOT / "README.md").read_text(encoding="utf-8").split(f"<!-- {marker} -->", 1)[1]
    code = after.split("```python\n", 1)[1].split("```", 1)[0]
    shown = after.split("```text\n", 1)[1].split("```", 1)[0]
    return code, shown


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """A Spark local session with two shuffle partitions, stopped after the module (spark extra only)."""
    from evalframe.engines.spark import spark_session

    os.environ.setdefault("EVALFRAME_SPARK_PARTITIONS", "2")
    session = spark_session()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
