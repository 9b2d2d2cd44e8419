"""The ranking note's overlap flag is decided where the ranges are compared, never read back out of its words."""

from __future__ import annotations

from html import escape

import polars as pl

import evalframe as ef
from evalframe.report.sentences import Ranking, ranking_note

NAME = "model touches v2"


def clean_lead_report() -> ef.AuditReport:
    """``model touches v2`` passes both cases, B one of two; nothing is missing, so the order stands."""
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=[NAME, "B"])
    ledger = pl.DataFrame(
        {"candidate": [NAME, NAME, "B", "B"], "case_id": ["q1", "q2", "q1", "q2"], "passed": [1, 1, 1, 0]}
    )
    return ef.audit(plan, ledger)


def test_a_candidate_named_with_touches_leading_cleanly_is_not_flagged() -> None:
    report = clean_lead_report()
    expected = Ranking(
        "model touches v2 has the highest pass_rate_scored (1.0), and no other candidate's best case is above "
        "its worst case (1.0): missing grades alone cannot reverse the order (sampling noise still can; see the "
        "intervals).",
        overlap=False,
    )
    assert ranking_note(report.summary) == expected
    assert report.view().ranking == expected
    html = report.to_html()
    assert f'<p class="callout ok">{escape(expected.text)}</p>' in html
    assert '<p class="callout">' not in html


def test_the_same_name_behind_an_overlapping_lead_is_flagged() -> None:
    # B leads on 1 scored of 2 planned: its range [0.5, 1.0] overlaps the named candidate's [0.25, 0.75].
    summary = pl.DataFrame(
        {
            "candidate": ["B", NAME],
            "planned": [2, 2],
            "scored": [1, 1],
            "pass_rate_scored": [1.0, 0.5],
            "pass_rate_planned": [0.5, 0.25],
            "pass_rate_upper": [1.0, 0.75],
        }
    )
    assert ranking_note(summary) == Ranking(
        "B has the highest pass_rate_scored (1.0), computed on only 1 of 2 planned units, but its full-plan range "
        "[0.5, 1.0] overlaps model touches v2 [0.25, 0.75]: the missing grades alone could reverse the order, so "
        "pass_rate_scored does not rank these candidates.",
        overlap=True,
    )
