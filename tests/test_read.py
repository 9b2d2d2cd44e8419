"""The library's route from export files (``ef.read``, ``import_exports``) is the command line's: same numbers."""

from __future__ import annotations

import json

import pytest

import evalframe as ef
from evalframe.read import import_exports
from tests.cli.support import run
from tests.conftest import real

SAMPLE = real("promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json")


def _mean_score_by_provider() -> list[float]:
    """From the file: each provider's mean of its rows' weighted ``score``."""
    rows = json.loads(SAMPLE.read_text(encoding="utf-8"))["results"]["results"]
    by: dict[str, list[float]] = {}
    for row in rows:
        by.setdefault(row["provider"]["id"], []).append(row["score"])
    return sorted(sum(v) / len(v) for v in by.values())  # gpt-5 (0.5 + 2/3) / 2, gpt-5-mini (0.75 + 2/3) / 2


def test_numeric_promptfoo_reads_the_weighted_score_in_python_as_on_the_command_line() -> None:
    # The command line read promptfoo's weighted `score` under --grade numeric (0.583 and 0.708); ef.read and
    # ef.audit read the pass/fail verdict as a score (0.0 and 0.0): the default lived in the CLI only.
    code, out, err = run(["audit", "--from", "promptfoo", str(SAMPLE), "--grade", "numeric", "--format", "json"])
    assert code == 0, err
    cli = {row["candidate"]: row["mean_score"] for row in json.loads(out)["summary"]}
    frames = ef.read("promptfoo", SAMPLE, grade="numeric")
    plan = ef.Plan.from_frame(frames.plan)
    python = dict(ef.audit(plan, frames.ledger, grade="numeric").summary.select("candidate", "mean_score").rows())
    imported = import_exports("promptfoo", SAMPLE, grade="numeric")
    audited = ef.audit(imported.plan, imported.results, grade="numeric")
    direct = dict(audited.summary.select("candidate", "mean_score").rows())
    assert cli == python == direct
    assert sorted(cli.values()) == pytest.approx(_mean_score_by_provider())
    assert sorted(cli.values()) == pytest.approx([(0.5 + 2 / 3) / 2, (0.75 + 2 / 3) / 2])


def test_an_id_column_for_a_format_without_one_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^id_column names the case column of ragas or deepeval exports only$"):
        import_exports("promptfoo", SAMPLE, id_column="question")


def test_a_planned_units_frame_given_as_the_plan_says_how_to_build_one() -> None:
    # ef.read gives the planned units as a frame; ef.audit(frames.plan, ...) failed deep in the reconcile step
    # with "'DataFrame' object has no attribute 'encode'".
    frames = ef.read("promptfoo", SAMPLE)
    with pytest.raises(TypeError, match=r"^plan must be an evalframe Plan, got DataFrame: build one with ef\.Plan"):
        ef.audit(frames.plan, frames.ledger)  # type: ignore[arg-type]
