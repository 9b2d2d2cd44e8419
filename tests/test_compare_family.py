"""`compare_each`: one baseline against every other candidate, Holm across the family (Holm 1979)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe.compare.family import compare_by_task, compare_each

CASES = [f"q{i}" for i in range(40)]


def _report(passes: dict[str, range]) -> ef.AuditReport:
    """One trial per case; each candidate passes exactly the cases whose index is in its range."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": CASES}), candidates=list(passes))
    rows = [
        {"candidate": c, "case_id": q, "passed": int(i in r)} for c, r in passes.items() for i, q in enumerate(CASES)
    ]
    return ef.audit(plan, pl.DataFrame(rows))


def test_three_winners_alone_are_no_winner_once_the_family_is_counted() -> None:
    # Each of B, C, D passes the baseline's 10 cases and 6 more: 6 discordant pairs, all one way.
    # Exact McNemar: p = 2 · (1/2)^6 = 0.03125 < 0.05, a winner alone. Holm over three equal p-values:
    # 3 · 0.03125 = 0.09375 for the smallest, and the running maximum keeps it for the others: ≥ 0.05.
    report = _report({"base": range(10), "B": range(16), "C": range(16), "D": range(16)})
    family = compare_each(report, baseline="base")
    rows = family.table.select("candidate", "verdict", "mcnemar_p_value", "holm_p_value", "family_verdict").rows()
    assert rows == [
        ("B", "candidate_better", 0.03125, pytest.approx(0.09375), "no_supported_winner"),
        ("C", "candidate_better", 0.03125, pytest.approx(0.09375), "no_supported_winner"),
        ("D", "candidate_better", 0.03125, pytest.approx(0.09375), "no_supported_winner"),
    ]
    assert not family.every_candidate_better
    assert family.multiplicity.startswith("3 comparisons against one baseline: Holm's step-down adjustment")


def test_a_strong_winner_stands_in_the_family() -> None:
    # B: 20 discordant pairs one way, p = 2 · 2^-20, the smaller: Holm × 2 = 2^-18, far below 0.05.
    # C: 2 pairs one way, p = 2 · 2^-2 = 0.5, the larger: Holm × 1 = 0.5.
    family = compare_each(_report({"base": range(10), "B": range(30), "C": range(12)}), baseline="base")
    rows = family.table.select("candidate", "holm_p_value", "family_verdict").rows()
    assert rows == [
        ("B", pytest.approx(2**-18), "candidate_better"),
        ("C", pytest.approx(0.5), "no_supported_winner"),
    ]


def test_a_report_of_the_baseline_alone_is_no_family() -> None:
    # One planned candidate: no other candidate to compare, so no family (not an empty table that breaks its text).
    with pytest.raises(ValueError, match="no candidate other than the baseline 'base'"):
        compare_each(_report({"base": range(10)}), baseline="base")


def test_compare_by_task_compares_within_each_task_and_names_a_task_one_side_was_not_run_on() -> None:
    # belief: A passes q1..q6 of 6, B q1..q2; desire: only A was run. The command's per-task rule, in the library.
    rows = [("A", "belief", f"q{i}", 1) for i in range(1, 7)] + [
        ("B", "belief", f"q{i}", int(i < 3)) for i in range(1, 7)
    ]
    rows += [("A", "desire", "q1", 1)]
    ledger = pl.DataFrame(rows, schema=["candidate", "task", "case_id", "passed"], orient="row")
    report = ef.audit(ef.Plan.from_frame(ledger.drop("passed")), ledger)
    by_task = compare_by_task(report, baseline="B", candidate="A", confidence=0.9)
    assert list(by_task) == ["belief", "desire"]
    belief = by_task["belief"]
    assert not isinstance(belief, str)
    assert belief.table.equals(ef.compare(report, baseline="B", candidate="A", task="belief", confidence=0.9).table)
    assert (belief.table.item(0, "pairs_used"), belief.table.item(0, "quality_difference")) == (
        6,
        pytest.approx(4 / 6, abs=1e-15),
    )
    assert by_task["desire"] == "baseline 'B' is not a candidate of task desire (candidates: A)"
    with pytest.raises(ValueError, match=r"^candidate 'Z' is not a candidate of the report \(candidates: A, B\)$"):
        compare_by_task(report, baseline="B", candidate="Z")


@pytest.mark.parametrize(
    ("options", "option", "reason"),
    [
        # a text was split into one-letter setting names: "d not recorded…; e…; g…"
        ({"comparable_on": "judge"}, "comparable_on", "comparable_on is a list of setting names, got the text 'judge'"),
        ({"ignore_settings": "judge"}, "ignore_settings", "ignore_settings is a list of setting names, got the text"),
        ({"alpha": "x"}, "alpha", "alpha must be in (0.0, 1.0), got 'x'"),  # was a TypeError
        ({"min_coverage": 2}, "min_coverage", "min_coverage must be in [0.0, 1.0], got 2"),  # was accepted
        ({"confidence": "x"}, "confidence", "confidence must be strictly between 0 and 1, got 'x'"),
        ({"pairs": "bogus"}, "pairs", "pairs must be one of 'complete_pairs', 'missing_as_fail', got 'bogus'"),
    ],
)
def test_compare_options_are_checked_even_where_no_task_compares(options: dict, option: str, reason: str) -> None:
    # Only A was run on desire: no task holds both sides, and the options were never checked before.
    ledger = pl.DataFrame({"candidate": ["A", "B"], "task": ["belief", "desire"], "case_id": ["q1", "q1"], "passed": 1})
    report = ef.audit(ef.Plan.from_frame(ledger.drop("passed")), ledger)
    for call in (
        lambda: compare_by_task(report, baseline="A", candidate="B", **options),
        lambda: ef.compare(report, baseline="A", candidate="B", task="belief", **options),
    ):
        with pytest.raises(ef.errors.OptionError) as caught:
            call()
        assert caught.value.option == option
        assert caught.value.reason.startswith(reason)


def test_a_comparison_by_slice_counts_the_bins_the_audit_declared() -> None:
    # len of q1..q8: 10, 200, 50, 500, 1000, 70, 300, 5; quartiles of the 8 cases: 40, 135, 350. A graded q1..q6,
    # B all but q4. The dropped pairs and flips by slice once listed raw values ("5.0", "300.0", "500.0")
    # beside the audit's bins; now the bins, lowest first.
    lengths = [10, 200, 50, 500, 1000, 70, 300, 5]
    cases = pl.DataFrame({"case_id": [f"q{i}" for i in range(1, 9)], "len": lengths})
    a = {"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q5": 0, "q6": 1}
    b = {"q1": 1, "q2": 1, "q3": 0, "q5": 1, "q6": 1, "q7": 0, "q8": 1}
    rows = [("A", c, p) for c, p in a.items()] + [("B", c, p) for c, p in b.items()]
    ledger = pl.DataFrame(rows, schema=["candidate", "case_id", "passed"], orient="row")
    report = ef.audit(ef.Plan.from_frame(cases, candidates=["A", "B"]), ledger, slices=["len"], bins={"len": "q4"})
    comparison = ef.compare(report, baseline="A", candidate="B")
    assert comparison.bins == {"len": [40.0, 135.0, 350.0]}
    view = report.view(comparison).comparison
    assert view is not None
    # dropped (one side ungraded): q8 (len 5), q7 (300), q4 (500)
    assert view.dropped_by_slice.select("slice_value", "pairs_dropped").rows() == [
        ("(-inf, 40]", 1),
        ("(135, 350]", 1),
        ("(350, inf]", 1),
    ]
    # q3 (50) pass→fail; q2 (200) and q5 (1000) fail→pass; q4 (500) baseline only; q7 (300), q8 (5) candidate only
    assert view.flips.by_slice.drop("slice_column").rows() == [
        ("(-inf, 40]", 0, 0, 0, 1),
        ("(40, 135]", 1, 0, 0, 0),
        ("(135, 350]", 0, 1, 0, 1),
        ("(350, inf]", 0, 1, 1, 0),
    ]
