"""Pytest configuration shared by the tests and the doctests."""

import polars as pl
import pytest


@pytest.fixture(autouse=True)
def _wide_tables(doctest_namespace: dict[str, object]) -> None:
    """Make printed frames independent of the terminal width."""
    pl.Config.set_tbl_width_chars(200)
    pl.Config.set_fmt_str_lengths(80)
    doctest_namespace["pl"] = pl
