"""Import DeepEval test runs (``.deepeval/.temp_test_run_data.json``, saved test runs, CSVs) into a plan and ledger.

Format
------
``deepeval test run`` and ``evaluate(...)`` keep the current test run in
``.deepeval/.temp_test_run_data.json`` (and save it as
``test_run_<timestamp>.json`` under ``DEEPEVAL_RESULTS_FOLDER``): one JSON
object, DeepEval's ``TestRun`` model, whose ``testCases`` (and
``conversationalTestCases``) each hold ``name``, ``input``, ``success``,
``order`` and ``metricsData``: one entry per metric with ``name``,
``threshold``, ``success``, ``score``, ``reason``, ``evaluationModel`` and,
when the metric could not be evaluated (the judge timed out, its output did
not parse), ``error`` and no ``score``. DeepEval documents the test run at
https://deepeval.com/docs/evaluation-introduction. A results **CSV** (one row
per question, one numeric column per metric, as users summarise DeepEval
results) is read like a ragas CSV (:mod:`evalframe.importers.ragas`).

How a test run is read
----------------------
* **candidate**: the run's ``hyperparameters.model`` when it is a string,
  else the file's stem without leading dots (``temp_test_run_data``): a test
  run names no model of its own.
* **case_id**: the test case's ``name`` (``test_case_<order>`` when it has
  none; ``<name>/<order>`` when several test cases of the file share a name,
  as a test function run on several goldens writes them: they are different
  cases, never merged); trial and attempt 1. ``line`` is the test case's 1-based position
  in ``testCases`` (conversational cases follow).
* **grade** (``--score``): ``success`` (the default) is the test case's
  verdict over all its metrics, as DeepEval's all-metrics-must-pass rule
  gives it: a metric that ran and failed fails the case (score 0); otherwise
  a metric with an ``error`` (or without a score) makes the case a grader
  failure (``judge_error``), **not a failed test**; every metric passing
  passes it (score 1). DeepEval's own case ``success`` is false for a case
  whose judges all errored and is therefore not read. Any other name is one
  metric (``Faithfulness``, ``Answer Relevancy``, …): ``score`` is its
  score, ``passed`` its ``success`` (DeepEval's threshold); an ``error``, a
  null or non-finite score is ``judge_error``; a case without that metric is
  ``not_scored``. A name no test case has refuses (``unknown_score``),
  naming the metrics there are. Metric scores are fractions: audit them with
  ``--grade numeric``, where, as in every importer, the metric's own
  ``success`` is not read and only ``--pass-threshold`` makes a score a pass
  (:func:`~evalframe.importers._kit.as_numeric_scores`; without one,
  ``passed`` and the pass rates are null).
* **several runs of one candidate** (two ``.temp_test_run_data.json`` of
  different folders): runs whose ``hyperparameters`` differ are different
  candidates ``<candidate> [key=value, ...]`` (a ``settings_differ`` flag;
  a key one run lacks is ``unknown``); runs whose settings agree are
  successive attempts of the same test cases, in file order.
* **plan**: the test cases of the file (``plan_from_rows``: the file
  declares no dataset size); a test run with no test case refuses
  (``empty_plan``: nothing ran).

A file that is not a test run (invalid JSON, no ``testCases`` list, a test
case without a ``metricsData`` list) is an input error naming the file and
the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from evalframe.columns import ATTEMPT, CANDIDATE
from evalframe.errors import InputFormatError
from evalframe.importers import Imported
from evalframe.importers._kit import ScoreChoiceError, Unreadable, choose_score, find_files, ledger_row, note, read_json
from evalframe.importers._per_case import MetricTable, assemble_tables, graded, input_error, read_metric_csv
from evalframe.importers._settings import RunSettings, split_by_settings
from evalframe.load import PathLike

__all__ = ["SUCCESS", "read"]

_PLAN_NOTE: Final = (
    "the file declares no dataset: the plan is its {n} test case(s), so a test case "
    "DeepEval never wrote cannot be counted as missing"
)

#: ``--score`` of the test case's verdict over all its metrics (the default).
SUCCESS: Final = "success"
#: The lists of test cases in a test run, in the order they are numbered.
CASE_LISTS: Final = ("testCases", "conversationalTestCases")


def _is_export(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith(".csv") or (
        name.endswith(".json") and name.lstrip(".").startswith(("temp_test_run", "test_run"))
    )


def _candidate(path: Path, run: dict[str, Any]) -> str:
    hyper = run.get("hyperparameters")
    model = hyper.get("model") if isinstance(hyper, dict) else None
    return model if isinstance(model, str) and model else path.stem.lstrip(".") or path.stem


def _verdict(metrics: list[dict[str, Any]]) -> tuple[str, float | None, bool | None]:
    """The test case's grade over all its metrics: any failure fails, else any error is a grader failure."""
    if not metrics:
        return "not_scored", None, None
    failed = errored = False
    for metric in metrics:
        status, _, _ = graded(metric.get("score"))
        if metric.get("error") is not None or status != "scored" or not isinstance(metric.get("success"), bool):
            errored = True
        elif metric["success"] is False:
            failed = True
    if failed:
        return "scored", 0.0, False
    if errored:
        return "judge_error", None, None
    return "scored", 1.0, True


def _case_ids(cases: Sequence[dict[str, Any]]) -> list[str]:
    """Each test case's id: its ``name``, or ``<name>/<order>`` when several test cases of the file share it.

    A test function run on several goldens writes one test case per golden under the function's name; they
    are different cases (``order`` numbers them), never one case read several times. A test case without a
    name is ``test_case_<order>``.

    Examples
    --------
    >>> _case_ids([{"name": "t", "order": 1}, {"name": "t", "order": 0}, {"name": "u"}, {"order": 3}])
    ['t/1', 't/0', 'u', 'test_case_3']
    """
    names = [c.get("name") if isinstance(c.get("name"), str) and c.get("name") else None for c in cases]
    ids = []
    for position, (case, name) in enumerate(zip(cases, names, strict=True)):
        order = case.get("order")
        order = order if isinstance(order, int) and not isinstance(order, bool) else position
        if name is None:
            ids.append(f"test_case_{order}")
        else:
            ids.append(f"{name}/{order}" if names.count(name) > 1 else name)
    return ids


def _read_run(path: Path, score: str | None) -> MetricTable:
    source = str(path)
    try:
        run = read_json(path)
    except Unreadable as exc:
        raise input_error(exc) from None
    if not isinstance(run, dict) or not isinstance(run.get("testCases"), list):
        raise InputFormatError(source, 'not a DeepEval test run: expected a JSON object with a "testCases" list')
    cases: list[dict[str, Any]] = []
    for key in CASE_LISTS:
        listed = run.get(key) or []
        if not isinstance(listed, list):
            raise InputFormatError(source, f'"{key}" is not a list')
        for case in listed:
            position = len(cases) + 1
            if not isinstance(case, dict) or not isinstance(case.get("metricsData", []), (list, type(None))):
                raise InputFormatError(source, f"test case {position} is not an object with a metricsData list")
            if not all(isinstance(m, dict) and isinstance(m.get("name"), str) for m in case.get("metricsData") or []):
                raise InputFormatError(source, f"test case {position} has a metric without a string name")
            cases.append(case)
    candidate = _candidate(path, run)
    names = [m["name"] for case in cases for m in case.get("metricsData") or []]
    table = MetricTable(info={"format": "deepeval", "source": source, "candidate": candidate, "metrics": names})
    table.info.update(test_cases=len(cases), metrics=sorted(set(names)), metrics_scores=run.get("metricsScores"))
    hyper = run.get("hyperparameters")
    table.info["hyperparameters"] = hyper if isinstance(hyper, dict) else {}
    try:
        chosen = choose_score(
            score,
            [SUCCESS, *names],
            default=SUCCESS,
            what="metric",
            source=source,
            where="testCases[].metricsData[].name",
        )
    except ScoreChoiceError as exc:
        table.notes.append({**exc.note, CANDIDATE: candidate})
        return table
    table.info["metric"] = chosen
    if not cases:
        detail = "the test run holds no test case (testCases and conversationalTestCases are empty): nothing ran"
        table.notes.append(note("empty_plan", source, detail, candidate=candidate))
        return table
    errors: dict[str, list[str]] = {"judge_error": []}
    for position, (case, case_id) in enumerate(zip(cases, _case_ids(cases), strict=True), start=1):
        metrics: list[dict[str, Any]] = case.get("metricsData") or []
        passed: bool | None
        if chosen == SUCCESS:
            status, value, passed = _verdict(metrics)
        else:
            entry = next((m for m in metrics if m["name"] == chosen), None)
            if entry is None:
                status, value, passed = "not_scored", None, None
            else:
                status, value, _ = graded(entry.get("score"))
                if entry.get("error") is not None:
                    status, value = "judge_error", None
                success = entry.get("success")
                passed = success if status == "scored" and isinstance(success, bool) else None
        if status == "judge_error":
            errors["judge_error"].append(case_id)
        row = ledger_row(
            candidate, case_id, score_status=status, score=value, passed=passed, line=position, source=source
        )
        table.rows.append(row)
    if errors["judge_error"]:
        reasons = sorted({str(m["error"]) for c in cases for m in c.get("metricsData") or [] if m.get("error")})
        shown = ", ".join(errors["judge_error"][:5])
        detail = f"{chosen}: no grade for {len(errors['judge_error'])} test case(s) ({shown}): " + (
            "; ".join(r[:120] for r in reasons[:3]) or "a metric without a score"
        )
        table.notes.append(note("grader_error", source, detail, candidate=candidate))
    return table


def read(paths: Sequence[PathLike], *, score: str | None = None, id_column: str | None = None) -> Imported:
    """Read DeepEval test runs (and results CSVs) into a plan, a status ledger, notes and file facts.

    Parameters
    ----------
    paths
        Test-run JSON files (``.temp_test_run_data.json``,
        ``test_run_*.json``) and results CSVs, or folders searched for them.
    score
        ``success`` (the default for test runs: the verdict over all
        metrics) or a metric name (``Faithfulness``); for a CSV the metric
        column (None: the only one).
    id_column
        For a CSV: the column naming the cases (None: the question text).

    Returns
    -------
    Imported
        ``plan``: per file, its test cases, one trial. ``ledger``: one row
        per test case, columns ``candidate``, ``case_id``, ``run_id``
        (String, null), ``trial``, ``attempt`` (Int64, 1), ``exec_status``
        (``completed``), ``score_status`` (``scored``, ``judge_error``,
        ``not_scored``), ``score`` (Float64), ``passed`` (Boolean, DeepEval's
        verdict; absent when some scored row has none), ``has_output``,
        ``limit`` (null), ``line`` (Int64) and ``source``. ``notes``:
        ``plan_from_rows`` per file; ``grader_error`` naming the cases
        whose metric errored. ``info``: per file the metrics, the chosen one,
        the number of test cases and DeepEval's ``metricsScores`` (never
        evidence).

    Raises
    ------
    InputFormatError
        A path that does not exist, or a file that is not a test run / CSV.
    ImportRefused
        ``unknown_score`` / ``ambiguous_score``, ``no_export``.

    Examples
    --------
    >>> imported = read(["../shared/data/real/deepeval_ragas/ciire-RAG_Project/.deepeval/.temp_test_run_data.json"])
    >>> imported.ledger.select("candidate", "case_id", "score_status", "score", "passed")
    shape: (2, 5)
    ┌────────────────────┬─────────────┬──────────────┬───────┬────────┐
    │ candidate          ┆ case_id     ┆ score_status ┆ score ┆ passed │
    │ ---                ┆ ---         ┆ ---          ┆ ---   ┆ ---    │
    │ str                ┆ str         ┆ str          ┆ f64   ┆ bool   │
    ╞════════════════════╪═════════════╪══════════════╪═══════╪════════╡
    │ temp_test_run_data ┆ test_case_0 ┆ scored       ┆ 1.0   ┆ true   │
    │ temp_test_run_data ┆ test_case_1 ┆ judge_error  ┆ null  ┆ null   │
    └────────────────────┴─────────────┴──────────────┴───────┴────────┘
    """
    files, notes = find_files(
        paths, is_export=_is_export, what="DeepEval test run (.json) or results CSV", required=True
    )
    tables = [
        read_metric_csv(path, score=score, id_column=id_column, candidate=path.stem, fmt="deepeval")
        if path.suffix.lower() == ".csv"
        else _read_run(path, score)
        for path in files
    ]
    _tell_runs_apart(tables, notes)
    return assemble_tables(tables, notes, paths=paths, files=files, plan_note=_PLAN_NOTE)


def _tell_runs_apart(tables: Sequence[MetricTable], notes: list[dict[str, Any]]) -> None:
    """Name the files of one candidate by their ``hyperparameters`` (the kit's rule), else number them as attempts."""
    runs = [
        RunSettings(str(t.info["source"]), str(t.info["candidate"]), t.info.get("hyperparameters") or {})
        for t in tables
    ]
    names, found = split_by_settings(runs)
    notes.extend(found)
    attempts: dict[str, int] = {}
    for table, run in zip(tables, runs, strict=True):
        name = names.get((run.source, run.candidate), run.candidate)
        attempts[name] = attempt = attempts.get(name, 0) + 1
        table.info["candidate"] = name
        for row in table.rows:
            row[CANDIDATE] = name
            row[ATTEMPT] = attempt
