"""Swapping baseline and candidate flips the verdict and negates the difference."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe.compare import compare

FLIP = {
    "candidate_better": "baseline_better",
    "baseline_better": "candidate_better",
    "no_supported_winner": "no_supported_winner",
}
OUTCOME = st.sampled_from([None, 0, 1])  # None: no row (missing)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(OUTCOME, OUTCOME), min_size=1, max_size=30),
    st.sampled_from(["complete_pairs", "missing_as_fail"]),
    st.sampled_from([0.0, 0.5, 0.95]),
)
def test_swap_flips_verdict_and_negates_difference(
    pairs: list[tuple[int | None, int | None]], policy: str, min_coverage: float
) -> None:
    cases = [f"c{i}" for i in range(len(pairs))]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["X", "Y"])
    rows = [
        {"candidate": name, "case_id": case, "passed": v}
        for case, (x, y) in zip(cases, pairs, strict=True)
        for name, v in (("X", x), ("Y", y))
        if v is not None
    ]
    ledger = pl.DataFrame(rows, schema={"candidate": pl.String, "case_id": pl.String, "passed": pl.Int64})
    report = ef.audit(plan, ledger)
    one = compare(report, baseline="X", candidate="Y", pairs=policy, min_coverage=min_coverage)  # type: ignore[arg-type]
    two = compare(report, baseline="Y", candidate="X", pairs=policy, min_coverage=min_coverage)  # type: ignore[arg-type]
    assert two.verdict == FLIP[one.verdict]
    d1, d2 = one.table.item(0, "quality_difference"), two.table.item(0, "quality_difference")
    if d1 is None:
        assert d2 is None
    else:
        assert d2 == pytest.approx(-d1)
        high = one.table.item(0, "ci_high")
        if high is None:  # one case: no interval either way (SPEC §4)
            assert (two.table.item(0, "ci_low"), one.table.item(0, "ci_low")) == (None, None)
        else:
            assert two.table.item(0, "ci_low") == pytest.approx(-high)
    assert two.table.item(0, "coverage_difference") == pytest.approx(-one.table.item(0, "coverage_difference"))
