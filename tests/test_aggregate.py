"""A declared aggregate across tasks (issue 40): macro and micro weights, the stratified variance and interval."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import polars as pl
import pytest
from scipy.stats import t as student_t

import evalframe as ef
from evalframe.compare.aggregate import aggregate_difference
from evalframe.errors import AggregateError, OptionError


def task(passed: dict[str, list[int]], **options: Any) -> ef.AuditReport:
    """One task's audit: one trial per case, each candidate's cases c1.. graded as given."""
    n = max(len(v) for v in passed.values())
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": [f"c{i + 1}" for i in range(n)]}), candidates=list(passed))
    rows = [(name, f"c{i + 1}", g) for name, grades in passed.items() for i, g in enumerate(grades)]
    results = pl.DataFrame(rows, schema=["candidate", "case_id", "passed"], orient="row")
    return ef.audit(plan, results, **options)


def three_tasks(**options: Any) -> dict[str, ef.AuditReport]:
    # A passes 8 of 10, 3 of 4 and 5 of 8 cases; B 6 of 10, 2 of 4, 4 of 8; C is audited on belief only.
    return {
        "intention": task({"A": [1] * 5 + [0] * 3, "B": [1] * 4 + [0] * 4}, **options),
        "belief": task({"A": [1] * 8 + [0] * 2, "B": [1] * 6 + [0] * 4, "C": [1] * 10}, **options),
        "desire": task({"A": [1, 1, 1, 0], "B": [1, 1, 0, 0]}, **options),
    }


def scored_task(scores: dict[str, list[float]]) -> ef.AuditReport:
    """One task's audit of numeric grades on [0, 1] without a pass threshold: its headline is mean_score."""
    n = max(len(v) for v in scores.values())
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": [f"c{i + 1}" for i in range(n)]}), candidates=list(scores))
    rows = [(name, f"c{i + 1}", g) for name, grades in scores.items() for i, g in enumerate(grades)]
    return ef.audit(plan, pl.DataFrame(rows, schema=["candidate", "case_id", "score"], orient="row"), grade="numeric")


def wilson(p: float, n: float, q: float) -> tuple[float, float]:
    """Wilson's score interval, written out."""
    center = (p + q * q / (2 * n)) / (1 + q * q / n)
    half = q / (1 + q * q / n) * math.sqrt(p * (1 - p) / n + q * q / (4 * n * n))
    return center - half, center + half


def test_macro_over_three_tasks_is_the_mean_of_task_rates_with_the_stratified_interval() -> None:
    out = ef.aggregate(three_tasks(), how="macro")
    assert out.get_column("candidate").to_list() == ["A", "B", "C"]
    assert out.get_column("missing_tasks").to_list() == [[], [], ["desire", "intention"]]  # C: belief only
    assert out.row(2, named=True)["estimate"] is None
    a = out.row(0, named=True)
    assert a["tasks"] == ["belief", "desire", "intention"]
    assert a["weights"] == [1 / 3, 1 / 3, 1 / 3]
    assert a["task_rates"] == [0.8, 0.75, 0.625]
    assert a["task_cases"] == [10, 4, 8]
    assert (a["planned"], a["scored"], a["passed"]) == (22, 22, 16)
    assert a["estimate"] == pytest.approx(2.175 / 3, abs=1e-15)
    # One trial per case: each task's variance is p(1 − p)/n; the tasks are strata, weights 1/3 each.
    parts = [0.8 * 0.2 / 10 / 9, 0.75 * 0.25 / 4 / 9, 0.625 * 0.375 / 8 / 9]
    variance = 0.092171875 / 9
    assert math.fsum(parts) == pytest.approx(variance, rel=1e-15)
    assert a["se"] == pytest.approx(math.sqrt(variance), rel=1e-12)
    # Satterthwaite: V² / Σ part²/(G − 1) = 9.6161…, rounded down to 9.
    df = variance**2 / (parts[0] ** 2 / 9 + parts[1] ** 2 / 3 + parts[2] ** 2 / 7)
    assert a["df"] == pytest.approx(df, rel=1e-12)
    assert math.floor(df) == 9
    n_eff = 0.725 * 0.275 / variance  # 19.4677…
    low, high = wilson(0.725, n_eff, float(student_t.ppf(0.975, 9)))
    assert (a["ci_low"], a["ci_high"]) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert (round(a["ci_low"], 4), round(a["ci_high"], 4)) == (0.4691, 0.8872)


def test_micro_weighs_tasks_by_their_scored_units_and_is_the_pooled_rate() -> None:
    b = ef.aggregate(three_tasks(), how="micro").row(1, named=True)
    assert b["candidate"] == "B"
    assert b["weights"] == pytest.approx([10 / 22, 4 / 22, 8 / 22], rel=1e-15)
    assert b["estimate"] == pytest.approx(12 / 22, rel=1e-15)
    parts = [(10 / 22) ** 2 * 0.024, (4 / 22) ** 2 * 0.0625, (8 / 22) ** 2 * 0.03125]
    assert b["se"] == pytest.approx(math.sqrt(math.fsum(parts)), rel=1e-12)
    assert (b["planned"], b["scored"], b["passed"]) == (22, 22, 12)


def test_micro_refuses_tasks_graded_differently_and_names_each_grading() -> None:
    reports = three_tasks()
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["c1", "c2"]}), candidates=["A", "B"])
    scores = pl.DataFrame({"candidate": ["A", "A", "B", "B"], "case_id": ["c1", "c2"] * 2, "score": [0.9, 0.2] * 2})
    reports["desire"] = ef.audit(plan, scores, grade="numeric", pass_threshold=0.5)
    with pytest.raises(OptionError) as caught:
        ef.aggregate(reports, how="micro")
    assert caught.value.option == "how"
    assert "desire: grade=numeric, pass_threshold=0.5" in caught.value.reason
    assert "belief: grade=binary, pass_threshold=None" in caught.value.reason
    macro = ef.aggregate(reports, how="macro")  # a mean of task rates is still declared: A and B (C: belief only)
    assert macro.filter(pl.col("estimate").is_not_null()).get_column("candidate").to_list() == ["A", "B"]


def test_a_task_with_one_case_gives_an_estimate_without_interval() -> None:
    reports = three_tasks()
    reports["desire"] = task({"A": [1], "B": [0]})
    a = ef.aggregate(reports).row(0, named=True)
    assert a["estimate"] == pytest.approx((0.8 + 1.0 + 0.625) / 3, rel=1e-15)
    assert (a["se"], a["df"], a["ci_low"], a["ci_high"]) == (None, None, None, None)


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [({"how": "pooled"}, "how"), ({"rate": "completion_rate"}, "rate")],
)
def test_options_outside_their_values_are_refused(kwargs: dict[str, Any], option: str) -> None:
    with pytest.raises(OptionError) as caught:
        ef.aggregate(three_tasks(), **kwargs)
    assert caught.value.option == option


def test_one_task_is_no_aggregate() -> None:
    with pytest.raises(OptionError) as caught:
        ef.aggregate({"belief": three_tasks()["belief"]})
    assert caught.value.option == "reports"


def test_task_order_of_the_mapping_does_not_change_the_table() -> None:
    reports = three_tasks()
    backwards = dict(reversed(list(reports.items())))
    assert ef.aggregate(backwards, how="micro").equals(ef.aggregate(reports, how="micro"))


def test_a_task_of_repeated_trials_adds_its_case_clustered_variance() -> None:
    reports = three_tasks()
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["c1", "c2", "c3", "c4"]}), candidates=["A", "B"], trials=2)
    grades = {"A": [1, 1, 1, 0, 0, 0, 1, 1], "B": [1, 0, 0, 0, 1, 1, 0, 0]}
    rows = [(n, f"c{i // 2 + 1}", i % 2 + 1, g) for n, got in grades.items() for i, g in enumerate(got)]
    reports["desire"] = ef.audit(
        plan, pl.DataFrame(rows, schema=["candidate", "case_id", "trial", "passed"], orient="row")
    )
    a = ef.aggregate(reports).row(0, named=True)
    # A on desire: 5 of 8; case residuals s − p·m = 0.75, −0.25, −1.25, 0.75; CR1 = 4/3 · 2.75 / 8² = 11/192.
    assert a["task_rates"][1] == 0.625
    assert a["task_se"][1] ** 2 == pytest.approx(11 / 192, rel=1e-12)
    assert a["task_cases"] == [10, 4, 8]
    variance = (0.016 + 11 / 192 + 0.029296875) / 9
    assert a["se"] == pytest.approx(math.sqrt(variance), rel=1e-12)
    assert a["estimate"] == pytest.approx((0.8 + 0.625 + 0.625) / 3, rel=1e-15)
    micro = ef.aggregate(reports, how="micro").row(0, named=True)
    assert micro["weights"] == pytest.approx([10 / 26, 8 / 26, 8 / 26], rel=1e-15)
    assert micro["estimate"] == pytest.approx(18 / 26, rel=1e-15)


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_the_stratified_interval_covers_the_true_aggregate_about_95_percent_of_the_time(how: str) -> None:
    # Seeded simulation of three one-trial tasks (rates 0.8, 0.75, 0.6 over 40, 30, 50 cases): each task's
    # rate and binomial variance as its audit gives them; 2000 draws, so ±0.015 is three standard errors.
    import numpy as np

    from evalframe.compare.aggregate import _combined, _Stratum, _weights

    rng = np.random.default_rng(20261206)
    rates, cases = np.array([0.8, 0.75, 0.6]), np.array([40, 30, 50])
    weights = np.full(3, 1 / 3) if how == "macro" else cases / cases.sum()
    truth = float(weights @ rates)
    covered = 0
    for passed in rng.binomial(cases, rates, size=(2000, 3)):
        strata = [_Stratum(k / n, k / n * (1 - k / n) / n, int(n), int(n)) for k, n in zip(passed, cases, strict=True)]
        got = _combined(strata, _weights(strata, how), (0.0, 1.0), 0.95)  # type: ignore[arg-type]
        covered += got["ci_low"] <= truth <= got["ci_high"]
    assert 0.935 <= covered / 2000 <= 0.965


def test_the_paired_difference_across_tasks_combines_each_task_comparison_as_a_stratum() -> None:
    out = aggregate_difference(three_tasks(), baseline="B", candidate="A")
    row = out.row(0, named=True)
    # Per case A − B: belief 0 ×8, 1 ×2 of 10; desire 0, 0, 1, 0; intention one 1 among 8.
    assert row["task_differences"] == pytest.approx([0.2, 0.25, 0.125], rel=1e-15)
    # CR1 with one pair per case: G/(G − 1) · Σ (d_i − d)² / N².
    task_variance = [10 / 9 * 1.6 / 100, 4 / 3 * 0.75 / 16, 8 / 7 * 0.875 / 64]
    assert [se**2 for se in row["task_se"]] == pytest.approx(task_variance, rel=1e-12)
    assert row["difference"] == pytest.approx(0.575 / 3, rel=1e-15)
    variance = math.fsum(task_variance) / 9
    assert row["se"] == pytest.approx(math.sqrt(variance), rel=1e-12)
    parts = [v / 9 for v in task_variance]
    df = variance**2 / (parts[0] ** 2 / 9 + parts[1] ** 2 / 3 + parts[2] ** 2 / 7)
    assert row["df"] == pytest.approx(df, rel=1e-12)
    # On [−1, 1] mapped to [0, 1]: w = (d + 1)/2 with variance V/4, Wilson on n* = w(1 − w)/(V/4).
    w = (0.575 / 3 + 1) / 2
    low, high = wilson(w, w * (1 - w) / (variance / 4), float(student_t.ppf(0.975, math.floor(df))))
    assert (row["ci_low"], row["ci_high"]) == (
        pytest.approx(2 * low - 1, rel=1e-12),
        pytest.approx(2 * high - 1, rel=1e-12),
    )
    assert (row["pairs_used"], row["task_cases"]) == (22, [10, 4, 8])


def test_a_report_of_several_tasks_is_read_through_by_task(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = three_tasks()
    combined = replace(parts["belief"], meta={**parts["belief"].meta, "tasks": sorted(parts)})
    monkeypatch.setattr(ef.AuditReport, "by_task", lambda self: parts if self is combined else {"": self})
    assert ef.aggregate(combined, how="micro").equals(ef.aggregate(parts, how="micro"))
    assert aggregate_difference(combined, baseline="B", candidate="A").equals(
        aggregate_difference(parts, baseline="B", candidate="A")
    )
    with pytest.raises(OptionError, match="got 1$"):
        ef.aggregate(parts["belief"])  # one task, however many candidates


def test_micro_refuses_tasks_whose_exports_name_different_metrics() -> None:
    # lm-eval's negotiationtom: belief and desire graded by acc, intention by exact_match.
    reports = {
        name: replace(r, meta={**r.meta, "exports": [{"file": f"{name}.jsonl", "metric": metric}]})
        for (name, r), metric in zip(sorted(three_tasks().items()), ["acc", "acc", "exact_match"], strict=True)
    }
    with pytest.raises(OptionError) as caught:
        ef.aggregate(reports, how="micro")
    assert caught.value.reason.endswith(
        "intention: grade=binary, pass_threshold=None, score_range=[0.0, 1.0], metrics=['exact_match']"
    )
    del reports["intention"]
    assert ef.aggregate(reports, how="micro").get_column("weights").to_list()[0] == [10 / 14, 4 / 14]


def test_the_aggregate_leaves_out_a_candidate_lacking_a_task_by_name_and_refuses_when_every_one_does() -> None:
    reports = three_tasks()
    c = ef.aggregate(reports, how="macro").row(2, named=True)
    # C (belief only) keeps its name, the tasks and what it lacks; no number over part of the tasks
    assert (c["candidate"], c["how"], c["tasks"], c["missing_tasks"]) == (
        "C",
        "macro",
        ["belief", "desire", "intention"],
        ["desire", "intention"],
    )
    assert all(c[k] is None for k in ("weights", "task_rates", "estimate", "se", "ci_low", "planned", "scored"))
    only = {"belief": task({"C": [1, 0]}), "desire": task({"A": [1, 1]})}
    with pytest.raises(AggregateError) as caught:
        ef.aggregate(only)
    assert caught.value.option == "reports"
    assert caught.value.missing_tasks == {"A": ["belief"], "C": ["desire"]}
    assert caught.value.reason == (
        "no candidate was audited in every task (A lacks belief; C lacks desire): nothing to aggregate"
    )


def test_a_difference_across_tasks_needs_both_candidates_in_every_task_and_names_what_a_side_lacks() -> None:
    with pytest.raises(AggregateError) as caught:
        aggregate_difference(three_tasks(), baseline="C", candidate="A")
    assert caught.value.missing_tasks == {"C": ["desire", "intention"]}
    assert caught.value.reason.startswith("baseline 'C' was not audited in task desire, intention")


def test_the_defaults_are_the_rate_the_headline_reads_and_the_confidence_the_audits_declared() -> None:
    # Audited at 90%: the aggregates and each task's comparison have 90% intervals unless told otherwise, as
    # `--confidence 0.9` gives the audit, compare and --aggregate alike on the command line.
    declared = three_tasks(confidence=0.9)
    assert ef.aggregate(declared).equals(ef.aggregate(declared, rate="pass_rate_scored", confidence=0.9))
    assert ef.aggregate(declared).get_column("confidence").to_list() == [0.9, 0.9, None]  # C lacks two tasks
    assert not ef.aggregate(declared).equals(ef.aggregate(declared, confidence=0.95))
    difference = aggregate_difference(declared, baseline="B", candidate="A")
    assert difference.equals(aggregate_difference(declared, baseline="B", candidate="A", confidence=0.9))
    assert ef.compare(declared["belief"], baseline="B", candidate="A").table.item(0, "confidence") == 0.9
    mixed = {**declared, "desire": three_tasks()["desire"]}
    with pytest.raises(OptionError) as info:
        ef.aggregate(mixed)
    assert (info.value.option, info.value.reason) == (
        "confidence",
        "the audits declared different confidences (0.9, 0.95): give confidence",
    )
    assert ef.aggregate(mixed, confidence=0.9).equals(ef.aggregate(declared))
    for bad in (0, 1.5, float("nan"), "0.9"):  # as ef.audit and ef.compare refuse them
        with pytest.raises(OptionError) as info:
            ef.aggregate(declared, confidence=bad)  # type: ignore[arg-type]
        assert info.value.reason == f"confidence must be strictly between 0 and 1, got {bad!r}"


def test_numeric_grades_aggregate_their_mean_score_and_count_no_passes() -> None:
    # Mean scores 0.2, 0.9, 0.5 → 8/15 and 0.4, 0.6 → 1/2: macro (8/15 + 1/2)/2 = 31/60 over 5 scored units.
    numeric = {"t1": scored_task({"A": [0.2, 0.9, 0.5]}), "t2": scored_task({"A": [0.4, 0.6]})}
    row = ef.aggregate(numeric).row(0, named=True)
    assert (row["rate"], row["planned"], row["scored"], row["passed"]) == ("mean_score", 5, 5, None)
    assert row["estimate"] == pytest.approx(31 / 60, rel=1e-15)
    assert ef.aggregate(numeric).equals(ef.aggregate(numeric, rate="mean_score"))
    with pytest.raises(OptionError) as info:
        ef.aggregate({"t1": numeric["t1"], "t2": three_tasks()["desire"]})
    assert (info.value.option, info.value.reason) == (
        "rate",
        "the tasks' headlines read different rates (t1 mean_score; t2 pass_rate_scored): give rate",
    )


def test_compare_refuses_a_pair_policy_it_does_not_have() -> None:
    report = three_tasks()["belief"]
    with pytest.raises(OptionError) as info:
        ef.compare(report, baseline="B", candidate="A", pairs="x")  # type: ignore[arg-type]
    assert (info.value.option, info.value.reason) == (
        "pairs",
        "pairs must be one of 'complete_pairs', 'missing_as_fail', got 'x'",
    )
