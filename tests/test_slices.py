"""Slices and selective missingness (SPEC §5)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps

import evalframe as ef
from evalframe.slices import binned, independence_test, missingness_tests, slice_funnel


def plan_and_ledger(missing_cases: set[str]) -> tuple[ef.Plan, pl.DataFrame]:
    """40 cases, 4 case types × 10; every case present except ``missing_cases``."""
    types = ["qa", "math", "code", "long_context"]
    cases = pl.DataFrame(
        {
            "case_id": [f"c{i:02d}" for i in range(40)],
            "case_type": [types[i // 10] for i in range(40)],
            "input_length": [100 * i for i in range(40)],
        }
    )
    plan = ef.Plan.from_frame(cases, candidates=["A"])
    present = cases.filter(~pl.col("case_id").is_in(sorted(missing_cases)))
    ledger = present.select(pl.lit("A").alias("candidate"), "case_id", (pl.int_range(pl.len()) % 2).alias("passed"))
    return plan, ledger


def test_missing_units_concentrated_in_one_slice_are_flagged() -> None:
    # Every missing unit sits in long_context (cases 30..37): 8 of 10 long_context cases missing.
    plan, ledger = plan_and_ledger({f"c{i}" for i in range(30, 38)})
    report = ef.audit(plan, ledger, slices=["case_type"])
    test = report.missingness.row(0, named=True)
    assert (test["planned"], test["missing"], test["n_slices"]) == (40, 8, 4)
    # Expected counts 2 and 8 per slice (< 5): the Monte Carlo Fisher–Freeman–Halton test is used.
    assert test["test"] == "fisher_freeman_halton_mc"
    assert test["p_value"] < 0.001
    assert test["selective"] is True
    assert test["stands_out"] == ["long_context"]
    flag = report.summary.get_column("selective_missingness").item()
    assert flag.startswith("case_type (p=") and flag.endswith("): long_context")
    lc = report.slices.filter(pl.col("slice_value") == "long_context").row(0, named=True)
    assert (lc["planned"], lc["missing"], lc["missing_rate"], lc["missing_ratio"]) == (10, 8, 0.8, 4.0)


def test_evenly_spread_missingness_is_not_flagged() -> None:
    # Two missing per case type.
    plan, ledger = plan_and_ledger({"c00", "c01", "c10", "c11", "c20", "c21", "c30", "c31"})
    report = ef.audit(plan, ledger, slices=["case_type"])
    test = report.missingness.row(0, named=True)
    assert test["selective"] is False
    assert test["p_value"] == pytest.approx(1.0)
    assert test["stands_out"] == []
    assert report.summary.get_column("selective_missingness").item() is None
    assert report.slices.get_column("missing_rate").to_list() == [0.2, 0.2, 0.2, 0.2]


def test_numeric_slice_binned_by_edges_and_quantiles() -> None:
    plan, ledger = plan_and_ledger({f"c{i}" for i in range(30, 38)})
    report = ef.audit(plan, ledger, slices=["input_length"], bins={"input_length": [0, 1000, 2999]})
    got = report.slices.select("slice_value", "planned", "missing").rows()
    # input_length = 100·i: (-inf,0] holds c00; (0,1000] c01..c10; (1000,2999] c11..c29; (2999,inf] c30..c39.
    assert got == [("(-inf, 0]", 1, 0), ("(0, 1000]", 10, 0), ("(1000, 2999]", 19, 0), ("(2999, inf]", 10, 8)]
    quart = ef.audit(plan, ledger, slices=["input_length"], bins={"input_length": "q4"}).slices
    assert quart.get_column("planned").to_list() == [10, 10, 10, 10]
    assert quart.get_column("missing").to_list() == [0, 0, 0, 8]


def test_chi_square_when_expected_counts_are_large() -> None:
    table = np.array([[10, 90], [30, 70]])
    three = np.vstack([table, [[20, 80]]])
    r = independence_test(three)
    expected = sps.chi2_contingency(three, correction=False)
    assert (r.test, r.statistic, r.p_value) == ("chi_square", expected.statistic, expected.pvalue)
    two = independence_test(table)
    assert (two.test, two.p_value) == ("fisher_exact", sps.fisher_exact(table).pvalue)


def test_no_test_without_variation() -> None:
    assert independence_test(np.array([[0, 5], [0, 5]])).test == "none"
    assert independence_test(np.array([[3, 2]])).p_value is None


def test_bad_slice_and_bins_are_value_errors() -> None:
    units = pl.DataFrame({"candidate": ["A"], "x": [1], "outcome": ["passed"]})
    with pytest.raises(ValueError, match="not a plan column"):
        binned(units, ["nope"])
    with pytest.raises(ValueError, match="strictly increasing"):
        binned(units, ["x"], {"x": [5, 1]})
    with pytest.raises(ValueError, match="q<k>"):
        binned(units, ["x"], {"x": "deciles"})


def test_missingness_tests_empty_without_slices() -> None:
    assert missingness_tests(slice_funnel(pl.DataFrame({"candidate": [], "outcome": []}), [])).is_empty()
