"""The command line and the Python API give the same summary on every real export (issue 39).

Each real-export case of :mod:`tests.importers.test_every_real_export` is audited twice: by
``evalframe audit --from FORMAT PATHS --format json`` and by ``ef.read`` + ``ef.Plan.from_frame`` +
``ef.audit`` with the same declarations. The summaries (rendered by the same JSON renderer) must be
equal, value for value; a batch the command refuses must be refused by the library with the same kinds.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest

import evalframe as ef
from evalframe.columns import KIND, REFUSING
from evalframe.report import render_json
from tests.conftest import real
from tests.importers.real_table import Case, run
from tests.importers.test_every_real_export import ABSENT, CASES

#: Skips case by case when ../shared is absent (see the root conftest.py).
HANDLES_ABSENT_SHARED = True


def python_kwargs(args: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any], float | None]:
    """The ``ef.read`` and ``ef.audit`` keyword arguments (and the view's min_coverage) of a case's flags."""
    read: dict[str, Any] = {}
    audit: dict[str, Any] = {}
    min_coverage = None
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag == "--score":
            read["score"] = rest.pop(0)
        elif flag == "--grade":
            read["grade"] = audit["grade"] = rest.pop(0)
        elif flag == "--pass-threshold":
            audit["pass_threshold"] = float(rest.pop(0))
        elif flag == "--score-range":
            audit["score_range"] = (float(rest.pop(0)), float(rest.pop(0)))
        elif flag == "--min-coverage":
            min_coverage = float(rest.pop(0))
        else:  # a flag this table does not use yet: say so rather than audit something else
            raise AssertionError(f"no Python spelling for {flag}")
    return read, audit, min_coverage


def summary_of(out: dict[str, Any]) -> Any:
    """The JSON output's summary rows; with several tasks, per task (``{"tasks": {name: report}}``)."""
    if "tasks" in out:
        return {task: report["summary"] for task, report in out["tasks"].items()}
    return out["summary"]


def python_route(case: Case) -> tuple[str, Any]:
    """``("audited", summary rows)``, or ``("refused", refusing kinds)``, through the Python API."""
    paths = [str(real(p, case.collection)) for p in case.paths]
    read, audit, min_coverage = python_kwargs(case.args)
    try:
        frames = ef.read(case.fmt, paths, **read)
        report = ef.audit(ef.Plan.from_frame(frames.plan), frames.ledger, **audit)
    except ef.AuditRefused as exc:  # the audit's refusal, or the import's (ImportRefused is one)
        return "refused", set(exc.problem_counts.filter(pl.col(REFUSING)).get_column(KIND))
    return "audited", summary_of(json.loads(render_json(report.view(min_coverage=min_coverage))))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_and_python_give_the_same_summary(case: Case) -> None:
    if not all(real(p, case.collection).exists() for p in case.paths):
        pytest.skip(ABSENT)
    code, out, err = run(case)
    outcome, got = python_route(case)
    if code == 1:
        assert outcome == "refused", got
        assert got == set(out["refusing_problems_by_kind"])
        return
    assert code == 0, err[-3000:]
    assert outcome == "audited", got
    assert got == summary_of(out)


def test_the_issue_39_repro_reads_the_weighted_scores_on_both_routes() -> None:
    """promptfoo's sample export under numeric grades, no score named: each result's weighted ``score``.

    The file's scores: gpt-5 0.5 and 2/3, gpt-5-mini 0.75 and 2/3 (``results.results[].score``), so the mean
    scores are 7/12 and 17/24 on the command line and in Python alike (the library once gave 0.0 / 0.0).
    """
    sample = "promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"
    case = Case("promptfoo", (sample,), 0, args=("--grade", "numeric"))
    if not real(case.paths[0]).exists():
        pytest.skip(ABSENT)
    code, out, err = run(case)
    outcome, summary = python_route(case)
    assert (code, outcome) == (0, "audited"), err
    expected = {"openai:gpt-5": 7 / 12, "openai:gpt-5-mini": 17 / 24}
    for rows in (out["summary"], summary):
        assert {row["candidate"]: row["mean_score"] for row in rows} == pytest.approx(expected, abs=1e-12)
