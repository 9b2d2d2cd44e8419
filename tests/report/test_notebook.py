"""What a notebook shows: every note in a report's rich display, short reprs, and the units behind a number."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe.compare import compare
from evalframe.errors import OptionError
from evalframe.importers import registry
from tests.conftest import FIXTURES, real
from tests.reducer_support import repro_report

ORBIT = FIXTURES / "orbit_desk"
#: The README's real export (the repository's licensed copy, see tests/conftest.py): lm-eval's Qwen3-8B on
#: negotiationtom_belief, run with --limit 20.
BELIEF = real(
    "lm_eval/EleutherAI-lm-evaluation-harness-PR3936/outputs/qwen3-8b/negotiationtom/Qwen__Qwen3-8B/"
    "samples_negotiationtom_belief_2026-07-08T16-04-34.219874.jsonl"
)
#: The walkthrough's real export: the same run's three negotiationtom tasks, each limited to 20 documents.
NEGOTIATION = BELIEF.parent
#: The outcomes the summary has a count column of (scored_no_threshold is counted inside ``scored``).
COUNTED = ("missing", "not_started", "exec_failed", "no_output", "judge_failed", "not_scored", "failed", "passed")


def orbit(**options: object) -> ef.AuditReport:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])
    return ef.audit(plan, ORBIT / "results.csv", **options)  # type: ignore[arg-type]


def belief() -> ef.AuditReport:
    imported = registry()["lm-eval"]([BELIEF])
    return ef.audit(imported.plan, imported.results)


# --- the rich display carries every note --------------------------------------------------------


def test_repr_html_has_the_limited_run_note_of_a_real_export_once() -> None:
    # The export says --limit 20 of the task's 13812 documents (its results file; the README quotes it).
    fragment = belief()._repr_html_()
    assert fragment.count("limited_run") == 1
    assert fragment.count("--limit 20: 20 of 13812 documents planned") == 1


def test_repr_html_of_three_tasks_has_each_limited_run_text_once() -> None:
    # The results files say 13812 (belief, desire) and 4618 (intention) documents; each run took 20.
    imported = registry()["lm-eval"](sorted(NEGOTIATION.glob("*2026-07-08T16-04-34.219874*")))
    fragment = ef.audit(imported.plan, imported.results)._repr_html_()
    for task, documents in (("belief", 13812), ("desire", 13812), ("intention", 4618)):
        text = f"task &#x27;negotiationtom_{task}&#x27;: --limit 20: 20 of {documents} documents planned"
        assert fragment.count(text) == 1
    # Each note names its task, so it sits in that task's section (one per task), none under "every task".
    assert fragment.count("<b>limited_run</b>") == 3 and "<b>every task</b>" not in fragment


def test_repr_html_has_a_withheld_interval_in_words() -> None:
    report = repro_report("any")
    withheld = [(r["candidate"], r["pass_rate_scored_ci_withheld"]) for r in report.summary.iter_rows(named=True)]
    said = [(name, text) for name, text in withheld if text is not None]
    assert said  # the fixture withholds an interval (tests/test_html.py: 2 cases, skewness rule)
    fragment = report._repr_html_()
    for name, text in said:
        assert fragment.count(str(ef.report.htmlkit.esc(f"{name}'s pass_rate_scored has {text}."))) == 1


def test_repr_html_has_each_note_text_once() -> None:
    report = orbit(slices=["case_type"])
    view = report.view()
    assert isinstance(view, ef.report.View) and view.notes
    fragment = report._repr_html_()
    for note in view.notes:
        assert fragment.count(f"<b>{note.kind}</b>") == 1
        for text in note.texts:
            assert fragment.count(str(ef.report.htmlkit.esc(text))) == 1


def test_repr_html_escapes_user_strings() -> None:
    cases = pl.DataFrame({"case_id": ["<i>q</i>", "r"]})
    plan = ef.Plan.from_frame(cases, candidates=["<b>x</b>"])
    fragment = ef.audit(plan, pl.DataFrame({"candidate": ["<b>x</b>"], "case_id": ["r"], "passed": [1]}))._repr_html_()
    assert "<b>x</b>" not in fragment and "<i>q</i>" not in fragment
    assert "&lt;b&gt;x&lt;/b&gt;" in fragment


# --- short reprs -------------------------------------------------------------------------------


def test_repr_of_a_report_is_a_short_summary_with_the_spec_numbers() -> None:
    # SPEC §7, Orbit Desk: A scored 2 of 4 planned units (2 missing), B 4 of 4, pass_rate_scored 1.0 and 0.75.
    text = repr(orbit(slices=["case_type"]))
    lines = text.splitlines()
    assert len(lines) <= 15
    assert lines[0] == "AuditReport: 4 cases × 2 candidates × 1 trial(s) = 8 planned units"
    assert "  A: 2 of 4 planned units scored (scored_coverage 0.5), 2 missing; pass_rate_scored 1.0" in lines
    assert "  B: 4 of 4 planned units scored (scored_coverage 1.0), 0 missing; pass_rate_scored 0.75" in lines
    assert "units_of(candidate=..., outcome=...)" in text


def test_repr_of_a_report_of_many_candidates_stays_short() -> None:
    names = [f"c{i:02d}" for i in range(20)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q"]}), candidates=names)
    report = ef.audit(plan, pl.DataFrame({"candidate": names, "case_id": ["q"] * 20, "passed": [1] * 20}))
    lines = repr(report).splitlines()
    assert len(lines) <= 15
    assert "  … and 12 more rows in report.summary" in lines


def test_repr_of_a_comparison_names_verdict_difference_and_cases() -> None:
    # Orbit Desk under complete_pairs: A and B pass both of the 2 cases A has (quote, refund): difference 0.
    comparison = compare(orbit(), baseline="B", candidate="A")
    lines = repr(comparison).splitlines()
    assert lines[0] == "Comparison no_supported_winner: A vs baseline B (pairs complete_pairs)"
    assert lines[1].startswith("  difference A − B = +0 [")
    assert lines[1].endswith("over 2 cases, 2 of 4 planned pairs used")
    assert [line[4:] for line in lines[2:]] == comparison.reasons
    fragment = comparison._repr_html_()
    assert "Verdict: no_supported_winner" in fragment and fragment.count("<li>") == len(comparison.reasons)


def test_reprs_write_a_bidi_override_in_a_name_as_its_escape() -> None:
    # "x\u202eB" would print reversed after the override; repr writes the escape, as the terminal does.
    name = "x\u202eB"
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q", "r"]}), candidates=[name, "A"])
    ledger = pl.DataFrame({"candidate": [name, name, "A", "A"], "case_id": ["q", "r"] * 2, "passed": [1, 1, 1, 0]})
    report = ef.audit(plan, ledger)
    text, compared = repr(report), repr(compare(report, baseline="A", candidate=name))
    assert "\u202e" not in text and "\u202e" not in compared
    assert "  x\\u202eB: 2 of 2 planned units scored (scored_coverage 1.0), 0 missing; pass_rate_scored 1.0" in text
    assert compared.splitlines()[0] == "Comparison no_supported_winner: x\\u202eB vs baseline A (pairs complete_pairs)"


def test_repr_of_power_objects() -> None:
    # README (SPEC §6a): 200 cases × 1 trial at a rate of 0.5 detect 14.3 points either way.
    plan = ef.power(200, 1, rate=0.5, target_difference=0.1)
    shown = "Detectable(rise 14.3 points, drop 14.3 points; 200 cases × 1 trial(s), exact_mcnemar)"
    assert repr(plan.detectable) == shown
    lines = repr(plan).splitlines()
    assert lines[0] == f"PowerPlan: {plan.sentence()}" and "14.3 points" in lines[0]
    assert lines[1] == "  cases needed for a difference of 0.1: 408 cases"  # README: cases_needed(0.10, 1) == 408
    fragment = plan._repr_html_()
    assert f"<b>{plan.sentence()}</b>" in fragment and "<table" in fragment


# --- the units behind a number ------------------------------------------------------------------


@pytest.mark.parametrize("make", [orbit, belief], ids=["orbit_desk", "lm_eval_belief"])
def test_units_of_counts_equal_the_summary_counts(make: object) -> None:
    report = make()  # type: ignore[operator]
    for row in report.summary.iter_rows(named=True):
        for outcome in (*COUNTED, "scored", "completed", "with_output"):
            units = report.units_of(candidate=row["candidate"], outcome=outcome)
            assert units.height == row[outcome], (row["candidate"], outcome)
            assert units.get_column("candidate").unique().to_list() in ([], [row["candidate"]])


def test_units_of_the_real_export_are_its_rows() -> None:
    # The samples file holds 20 documents; acc is 1.0 on 9 of them (README: 9 passed / 20 scored).
    rows = [json.loads(line) for line in Path(BELIEF).read_text(encoding="utf-8").splitlines()]
    passed = sorted(f"negotiationtom_belief/{r['doc_id']}" for r in rows if r["acc"] == 1.0)
    report = belief()
    got = report.units_of(outcome="passed").get_column("case_id").to_list()
    assert sorted(got) == passed and len(got) == 9
    assert report.units_of(outcome="missing").height == 0


def test_units_of_orbit_desk_by_slice_and_case() -> None:
    # SPEC §7: A has no row for handoff (escalation) and privacy (policy).
    report = orbit(slices=["case_type"])
    missing = report.units_of(candidate="A", outcome="missing")
    assert sorted(missing.get_column("case_id").to_list()) == ["handoff", "privacy"]
    policy = report.units_of(slice="case_type", value="policy")
    assert sorted(policy.select("candidate", "case_id", "outcome").rows()) == [
        ("A", "privacy", "missing"),
        ("B", "privacy", "passed"),
    ]
    assert report.units_of(case_id="handoff", candidate="B").get_column("outcome").to_list() == ["failed"]


@pytest.mark.parametrize(
    ("arguments", "option", "named"),
    [
        ({"candidate": "C"}, "candidate", "'C'"),
        ({"outcome": "lost"}, "outcome", "'lost'"),
        ({"slice": "topic", "value": "x"}, "slice", "'topic'"),
        ({"task": "belief"}, "task", "'belief'"),
        ({"value": "policy"}, "value", "'policy'"),
    ],
)
def test_units_of_refuses_what_the_report_does_not_hold(arguments: dict[str, str], option: str, named: str) -> None:
    with pytest.raises(OptionError) as raised:
        orbit(slices=["case_type"]).units_of(**arguments)  # type: ignore[arg-type]
    assert raised.value.option == option and named in raised.value.reason
    if option == "candidate":
        assert raised.value.reason.endswith("'A', 'B'")
    if option == "outcome":
        assert "'judge_failed'" in raised.value.reason and "'scored'" in raised.value.reason
        assert raised.value.reason.count("'passed'") == 1 and raised.value.reason.count("'missing'") == 1


def test_units_of_under_retry_every_counts_each_attempt() -> None:
    # Retry every: a's two attempts (fail, then pass) both count, b passes once, c has no row.
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a", "b", "c"]}), candidates=["A"])
    rows = {"candidate": ["A"] * 3, "case_id": ["a", "a", "b"], "attempt": [1, 2, 1], "passed": [0, 1, 1]}
    ledger = pl.DataFrame(rows)
    report = ef.audit(plan, ledger, retry="every")
    heights = {o: report.units_of(outcome=o).height for o in ("passed", "failed", "missing", "scored")}
    assert heights == {"passed": 2, "failed": 1, "missing": 1, "scored": 3}
    assert report.units_of(outcome="failed", case_id="a").height == 1
