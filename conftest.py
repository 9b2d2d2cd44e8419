"""Pytest configuration shared by the tests and the doctests."""

from pathlib import Path

import polars as pl
import pytest

#: The real exports laid beside the repository (CI always has them).
SHARED_REAL = Path(__file__).resolve().parent.parent / "shared" / "data" / "real"
ABSENT = (
    "reads ../shared/data/real, which is not laid beside the repository (CI always has it; "
    "tests/importers/test_every_real_export.py still runs the licensed exports from data/fixtures/real)"
)


@pytest.fixture(autouse=True)
def _wide_tables(doctest_namespace: dict[str, object]) -> None:
    """Make printed frames independent of the terminal width."""
    pl.Config.set_tbl_width_chars(200)
    pl.Config.set_fmt_str_lengths(80)
    doctest_namespace["pl"] = pl


def _reads_shared(item: pytest.Item) -> bool:
    """Whether a test, doctest or notebook reads ../shared/data/real by its path."""
    dtest = getattr(item, "dtest", None)
    if dtest is not None:
        return any("../shared/data/real" in example.source for example in dtest.examples)
    if item.path.suffix == ".ipynb":
        return "../shared" in item.path.read_text(encoding="utf-8")
    module = getattr(item, "module", None)
    return module is not None and hasattr(module, "REAL") and not getattr(module, "HANDLES_ABSENT_SHARED", False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ../shared beside the repository, skip (saying why) what reads it; nothing else changes."""
    if SHARED_REAL.is_dir():
        return
    for item in items:
        if _reads_shared(item):
            item.add_marker(pytest.mark.skip(reason=ABSENT))
