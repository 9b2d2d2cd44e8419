"""Import promptfoo eval exports (``promptfoo eval --output x.json``, ``promptfoo export``).

Format
------
The JSON written by ``promptfoo eval --output x.json`` and by ``promptfoo
export`` is one document ``{evalId, results, config, shareableUrl,
metadata}`` whose ``results`` is an evaluate summary:

* **version 3** ``{version: 3, timestamp, prompts[], results[], stats}``:
  ``prompts`` lists every (provider × prompt) column the evaluator set up
  (``provider`` is the provider's label, or its id when it has no label);
* **version 2** ``{version: 2, timestamp, results[], table, stats}``: the same
  list sits in ``table.head.prompts`` (without ``provider``). Old rows lack
  ``testIdx``, ``promptIdx`` and ``failureReason``.

A bare summary (``results`` is the list of rows, with ``table``/``stats``
beside it, as very old versions wrote) is read the same way, and a ``.jsonl``
file (``--output x.jsonl``) is read as one result row per line. Each row of
``results[]`` is one (prompt × provider × test case) execution: promptfoo's
``EvaluateResult`` with ``GradingResult`` and ``ResultFailureReason`` (0 none,
1 an assertion failed, 2 an execution error), defined in ``src/types/index.ts``
of promptfoo/promptfoo; user documentation:
https://www.promptfoo.dev/docs/configuration/outputs/.

How rows are read
-----------------
* **candidate**: the provider's ``label`` when it is not empty, else its
  ``id`` (promptfoo's own provider key, the ``provider`` of a ``prompts[]``
  column). When the export holds more than one distinct prompt, the prompt is
  part of the candidate: ``"<provider> | <prompt label>"`` (white space in the
  label collapsed to single spaces, cut to 60 characters and an ellipsis; a
  prompt without a label is named by its ``promptId``, else ``prompt
  <promptIdx>``; names that still clash get ``#1``, ``#2``). A version 2
  export of one provider and two prompts thus has two candidates, one per
  prompt.
* **case_id**: ``testIdx`` as a string when every row has it (``testCaseIdx``
  in some old versions); else the first 12 hex digits of the SHA-256 of the
  row's ``vars`` as canonical JSON (see :func:`vars_case_id`). promptfoo
  gives a new ``testIdx`` to every repetition of ``--repeat``; when the config
  declares ``evaluateOptions.repeat = R`` and its tests can be expanded, the
  R repetitions of a test become trials 1..R of one case, whose id is the
  ``testIdx`` of its first repetition. Otherwise every row is trial 1 (and
  repeated runs of one test without ``testIdx`` share a key, which the audit
  refuses as a duplicate). ``testIdx`` numbers the tests of one eval, so
  several files are combined on the assumption that they share one test list.
* **status**: ``failureReason`` 2 is an execution failure (``exec_status``
  ``timeout`` when promptfoo's error says the test timed out or the eval
  exceeded its maximum duration, else ``error``); ``failureReason`` 1 is a
  completed, scored fail. The ``error`` text alone never is an execution
  failure, because promptfoo also writes an assertion's failure reason there.
  A completed row is ``scored`` when it has a ``gradingResult`` and
  ``not_scored`` when it has none (no assertions ran, e.g. ``No output``
  rows, or the grading result was stripped). Rows without ``failureReason``
  (version 2) count as an execution error when they carry an ``error`` and
  no grading result, except promptfoo's ``No output`` row, which completed
  without output.

The grade (``--score``)
-----------------------
The ledger's ``passed`` is promptfoo's own verdict and ``score`` is what
``score`` chose (:func:`~evalframe.importers._kit.choose_score`; a name the
export does not have refuses as ``unknown_score``, naming those it has):

* ``success`` (the default): the binary grade from the row's ``success``
  (``gradingResult.pass`` when ``success`` is absent): ``passed`` is the
  verdict and ``score`` is 1 or 0, so the audit's default ``--grade binary``
  reads it (under ``--grade numeric`` the mean score is then the pass rate).
* ``score``: promptfoo's weighted assertion score (the row's ``score``, else
  ``gradingResult.score``, normally a fraction in [0, 1]) with ``passed``
  still from ``success``: audit with ``--grade numeric``, where the mean is
  the weighted score and ``passed`` (not a threshold) counts the passes.
* any other name: the named assertion metric ``namedScores[<name>]`` (the
  ``metric`` of an assertion; promptfoo sums the component scores of a
  metric into it), with ``passed`` from the component results whose
  assertion has that ``metric`` (the column is left out when some scored row
  has none). A row without the metric is ``not_scored``.

A value that is not a score is a grader failure (``judge_error``) with the
flag ``nonfinite_score`` (NaN, Infinity) or ``not_a_score``
(:func:`~evalframe.importers._kit.grade`).

The plan
--------
Planned units are the declared (provider × prompt) columns (``prompts[]``)
× the declared test runs. The test runs are expanded from ``config``
(``tests``, ``scenarios``, ``defaultTest.vars``, array-valued variables,
``evaluateOptions.repeat``) exactly as promptfoo numbers them; this is only
possible when the tests are written inline. If they are not (a file
reference, a ``file://`` variable), or if the rows contradict the expansion
(a ``testIdx`` beyond it, or variables that differ), the plan is the cases
seen in any row × the declared columns, with a ``plan_from_rows`` flag: a
test that no candidate ran cannot be detected as missing then. An export
with no row and no declared column has no plan and refuses
(``empty_plan``, ``empty_candidates``). Header totals (``stats``,
``prompts[].metrics``) are never evidence; when they disagree with the rows
a ``header_rows_disagree`` flag says so.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    LIMIT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
)
from evalframe.errors import InputFormatError
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.importers._kit import (
    ScoreChoiceError,
    Unreadable,
    build_plan,
    choose_score,
    find_files,
    finish,
    grade,
    note,
    read_json,
    read_json_lines,
)
from evalframe.load import PathLike

__all__ = ["LEDGER_SCHEMA", "SUCCESS", "WEIGHTED", "read", "vars_case_id"]

#: ``ResultFailureReason`` values (promptfoo ``src/types/index.ts``).
FAILURE_NONE: Final = 0
FAILURE_ASSERT: Final = 1
FAILURE_ERROR: Final = 2

#: ``--score`` of the binary grade from ``success`` (the default).
SUCCESS: Final = "success"
#: ``--score`` of promptfoo's weighted assertion score (for ``--grade numeric``).
WEIGHTED: Final = "score"

_NO_OUTPUT: Final = "No output"
_CONVERSATION_VAR: Final = "_conversation"
_NAME_WIDTH: Final = 60


@dataclass
class _Row:
    """One result row as read, before candidates and cases are named."""

    line: int
    provider: str
    prompt_key: str
    prompt_label: str
    test_idx: int | None
    vars: dict[str, Any]
    exec_status: str
    score_status: str
    score: float | None
    passed: bool | None
    has_output: bool
    limit: str | None
    success: bool
    failure: int  # FAILURE_* as read or derived


@dataclass
class _Export:
    """One file as loaded: its result rows (numbered) and header parts."""

    source: str
    layout: str
    numbered: list[tuple[int, Any]]
    columns: list[dict[str, Any]]
    config: dict[str, Any]
    stats: dict[str, Any]
    info: dict[str, Any]
    #: Lines of a ``.jsonl`` file that could not be read.
    notes: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _FileRead:
    """Everything read from one file."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    units: list[tuple[str, str, int]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    named_pass_complete: bool = True


def vars_case_id(variables: Mapping[str, Any]) -> str:
    """Case id of a test from its variables: SHA-256 of canonical JSON, first 12 hex digits.

    Canonical JSON: keys sorted, separators ``,`` and ``:`` without spaces,
    non-ASCII kept, UTF-8 encoded. The ``_conversation`` variable (injected
    by promptfoo for multi-turn prompts) is left out.

    Parameters
    ----------
    variables
        The test's ``vars``.

    Returns
    -------
    str
        12 lowercase hex digits.

    Examples
    --------
    >>> vars_case_id({"riddle": "What am I?"})
    'b4412ba35de3'
    >>> vars_case_id({"b": 1, "a": 2}) == vars_case_id({"a": 2, "b": 1})
    True
    """
    kept = {k: v for k, v in variables.items() if k != _CONVERSATION_VAR}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# --- small readers ---------------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _provider_key(value: Any) -> str | None:
    """Return promptfoo's provider key: the label when non-empty, else the id (or the bare string)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        return _str(value.get("label")) or _str(value.get("id")) or None
    return None


def _prompt_key(prompt: Mapping[str, Any]) -> str:
    """Identity of a prompt: its label (or legacy ``display``), else its id."""
    return _str(prompt.get("label")) or _str(prompt.get("display")) or _str(prompt.get("id")) or ""


def _named_scores(obj: Mapping[str, Any]) -> dict[str, Any]:
    return _dict(obj.get("namedScores")) or _dict(_dict(obj.get("gradingResult")).get("namedScores"))


# --- one result row ------------------------------------------------------------


def _failure(obj: Mapping[str, Any], *, graded: bool, has_output: bool) -> int:
    """``failureReason`` as written (version 3), else derived from the row (version 2)."""
    failure = _int(obj.get("failureReason"))
    if failure in (FAILURE_NONE, FAILURE_ASSERT, FAILURE_ERROR):
        return failure
    error = _str(obj.get("error"))
    if obj.get("success") is True:
        return FAILURE_NONE
    if graded:
        return FAILURE_ASSERT
    if error is not None and not (error == _NO_OUTPUT and not has_output):
        return FAILURE_ERROR
    return FAILURE_NONE


def _grade(
    obj: Mapping[str, Any], choice: str, line: int, source: str
) -> tuple[str, float | None, bool | None, bool, list[dict[str, Any]]]:
    """Score status, score, passed, whether a pass verdict exists, and notes of one graded row."""
    grading = _dict(obj.get("gradingResult"))
    success = obj.get("success")
    verdict = success if isinstance(success, bool) else grading.get("pass")
    passed = verdict if isinstance(verdict, bool) else None
    if choice == SUCCESS:
        if passed is None:
            detail = "the grading result has no pass verdict (neither success nor gradingResult.pass)"
            return "judge_error", None, None, True, [note("not_a_score", source, detail, line=line)]
        return "scored", float(passed), passed, True, []
    if choice == WEIGHTED:
        raw: Any = obj.get("score", grading.get("score"))
        what = "score"
    else:
        named = _named_scores(obj)
        if choice not in named:
            return "not_scored", None, None, True, []
        raw, what = named[choice], f"namedScores[{choice!r}]"
        verdicts = [
            c.get("pass")
            for c in grading.get("componentResults") or []
            if isinstance(c, dict) and _dict(c.get("assertion")).get("metric") == choice
        ]
        passed = all(verdicts) if verdicts and all(isinstance(v, bool) for v in verdicts) else None
    status, value = grade(raw)
    if status == "scored":
        return status, value, passed, passed is not None or choice == WEIGHTED, []
    if isinstance(raw, float) and not math.isfinite(raw):
        flag = note("nonfinite_score", source, f"{what} = {raw!r} is not finite; read as a grader failure", line=line)
    else:
        shown = json.dumps(raw)[:80]
        flag = note("not_a_score", source, f"{what} = {shown} is not a number; read as a grader failure", line=line)
    return status, None, None, True, [flag]


def _read_row(
    obj: Any, line: int, *, source: str, choice: str, declared: Sequence[Mapping[str, Any]]
) -> tuple[_Row, list[dict[str, Any]], bool]:
    """Read one ``EvaluateResult``; return the row, its notes and whether a named pass verdict exists."""
    if not isinstance(obj, dict):
        raise Unreadable(source, f"result {line} is a {type(obj).__name__}, not an object", line=line)
    prompt_idx = _int(obj.get("promptIdx"))
    column = declared[prompt_idx] if prompt_idx is not None and 0 <= prompt_idx < len(declared) else {}
    provider = _provider_key(obj.get("provider")) or _str(column.get("provider")) or None
    if provider is None:
        raise Unreadable(source, f"result {line} has no provider id or label", line=line)
    prompt = _dict(obj.get("prompt"))
    key = _str(prompt.get("label")) or _str(prompt.get("display")) or ""
    if not key and _str(column.get("provider")) == provider:
        key = _prompt_key(column)
    key = key or _str(obj.get("promptId")) or ""
    label = key or (f"prompt {prompt_idx}" if prompt_idx is not None else "prompt")
    test_idx = _int(obj.get("testIdx"))
    if test_idx is None:
        test_idx = _int(obj.get("testCaseIdx"))
    variables = obj.get("vars")
    if not isinstance(variables, dict):
        variables = _dict(_dict(obj.get("testCase")).get("vars"))
    response = obj.get("response")
    has_output = isinstance(response, dict) and response.get("output") is not None
    graded = isinstance(obj.get("gradingResult"), dict)
    failure = _failure(obj, graded=graded, has_output=has_output)
    limit: str | None = None
    score: float | None = None
    passed: bool | None = None
    named_pass = True
    notes: list[dict[str, Any]] = []
    if failure == FAILURE_ERROR:
        text = (_str(obj.get("error")) or "").lower()
        if "exceeded max duration" in text:
            exec_status, limit = "timeout", "max_eval_time"
        elif "timed out" in text:
            exec_status, limit = "timeout", "time"
        else:
            exec_status = "error"
        score_status = "not_scored"
    elif not graded:
        exec_status, score_status = "completed", "not_scored"
    else:
        exec_status = "completed"
        score_status, score, passed, named_pass, notes = _grade(obj, choice, line, source)
    row = _Row(
        line=line,
        provider=provider,
        prompt_key=key,
        prompt_label=label,
        test_idx=test_idx,
        vars=variables,
        exec_status=exec_status,
        score_status=score_status,
        score=score,
        passed=passed,
        has_output=has_output,
        limit=limit,
        success=obj.get("success") is True,
        failure=failure,
    )
    return row, notes, named_pass


# --- the declared tests -------------------------------------------------------------


def _combinations(variables: Mapping[str, Any], *, expand: bool) -> list[dict[str, Any]] | None:
    """Expand array-valued variables like promptfoo's ``generateVarCombinations`` (None: not computable)."""
    combos: list[dict[str, Any]] = [{}]
    for key, value in variables.items():
        if isinstance(value, str) and value.startswith("file://"):
            return None  # a glob over files: its expansion depends on the disk
        values: list[Any] = [value]
        if expand and isinstance(value, list) and value and isinstance(value[0], str):
            values = list(value)
        combos = [{**c, key: v} for c in combos for v in values]
    return combos


def _declared_tests(config: Mapping[str, Any]) -> tuple[list[list[dict[str, Any]]] | None, str]:
    """Return the variable combinations of every declared test, in promptfoo's order, or None and why."""
    default = config.get("defaultTest")
    if default is not None and not isinstance(default, dict):
        return None, "defaultTest is a file reference"
    default_d = _dict(default)
    default_vars = default_d.get("vars") or {}
    if not isinstance(default_vars, dict):
        return None, "defaultTest.vars is not inline"
    tests = config.get("tests")
    scenarios = config.get("scenarios") or []
    if tests is None or tests == []:
        if not scenarios:
            return None, "the config lists no tests"
        tests = []
    if not isinstance(tests, list) or not isinstance(scenarios, list):
        return None, "config.tests is a file reference, not an inline list"
    entries: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for test in tests:
        if not isinstance(test, dict):
            return None, "config.tests holds a file reference"
        test_vars = test.get("vars") or {}
        if not isinstance(test_vars, dict):
            return None, "a test's vars are a file reference"
        entries.append((test, {**default_vars, **test_vars}))
    for scenario in scenarios:
        if not isinstance(scenario, dict) or not isinstance(scenario.get("config"), list):
            return None, "a scenario is not inline"
        inner = scenario.get("tests") or [{}]
        if not isinstance(inner, list):
            return None, "a scenario's tests are a file reference"
        for data in scenario["config"]:
            for test in inner:
                if not isinstance(data, dict) or not isinstance(test, dict):
                    return None, "a scenario is not inline"
                data_vars, test_vars = data.get("vars") or {}, test.get("vars") or {}
                if not isinstance(data_vars, dict) or not isinstance(test_vars, dict):
                    return None, "a scenario's vars are not inline"
                merged = {**data, **test, "options": {**_dict(default_d.get("options")), **_dict(test.get("options"))}}
                entries.append((merged, {**default_vars, **data_vars, **test_vars}))
    expanded: list[list[dict[str, Any]]] = []
    for test, variables in entries:
        options = {**_dict(default_d.get("options")), **_dict(test.get("options"))}
        if options.get("transformVars"):
            return None, "a transformVars option rewrites the variables"
        combos = _combinations(variables, expand=not options.get("disableVarExpansion"))
        if combos is None:
            return None, "a variable is a file:// glob"
        expanded.append(combos)
    return expanded, ""


def _repeat(config: Mapping[str, Any]) -> int:
    value = _int(_dict(config.get("evaluateOptions")).get("repeat"))
    return value if value is not None and value >= 1 else 1


def _run_table(expanded: list[list[dict[str, Any]]], repeat: int) -> list[tuple[int, int, dict[str, Any]]]:
    """One entry per ``testIdx`` promptfoo assigns: (case testIdx = first repetition's, trial, vars)."""
    table: list[tuple[int, int, dict[str, Any]]] = []
    for combos in expanded:
        start = len(table)
        for r in range(repeat):
            for c, variables in enumerate(combos):
                table.append((start + c, r + 1, variables))
    return table


def _vars_agree(declared: Mapping[str, Any], seen: Mapping[str, Any]) -> bool:
    return all(k in seen and seen[k] == v for k, v in declared.items())


# --- one file -------------------------------------------------------------------------


def _is_export(path: Path) -> bool:
    return path.suffix.lower() in (".json", ".jsonl")


def _load(path: Path) -> _Export:
    """Load one export file; a file that is not a promptfoo export raises :class:`Unreadable`."""
    source = str(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        numbered, bad = read_json_lines(path)
        jsonl = {"source": source, "format": "promptfoo", "layout": "jsonl"}
        return _Export(source, "jsonl", numbered, [], {}, {}, jsonl, notes=bad)
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Unreadable(source, f"expected a JSON object, found {type(doc).__name__}")
    summary = doc.get("results")
    if isinstance(summary, list):  # a bare (legacy) summary: no wrapper
        summary, doc = doc, {}
    if not isinstance(summary, dict):
        raise Unreadable(source, "no 'results' object: not a promptfoo eval export")
    rows = summary.get("results")
    if not isinstance(rows, list):
        raise Unreadable(source, "'results.results' is missing or not a list")
    prompts = summary.get("prompts")
    layout = "v3"
    if not isinstance(prompts, list):
        prompts = _dict(_dict(summary.get("table")).get("head")).get("prompts")
        layout = "v2" if doc else "legacy"
    columns = [p for p in prompts if isinstance(p, dict)] if isinstance(prompts, list) else []
    config, stats = _dict(doc.get("config")), _dict(summary.get("stats"))
    run_id = _str(doc.get("evalId")) or None
    info: dict[str, Any] = {
        "source": source,
        "format": "promptfoo",
        "layout": layout,
        "version": summary.get("version"),
        "eval_id": run_id,
        "run_id": run_id,
        "timestamp": _str(summary.get("timestamp")),
        "promptfoo_version": _str(_dict(doc.get("metadata")).get("promptfooVersion")),
        "description": _str(config.get("description")),
        "stats": {k: stats.get(k) for k in ("successes", "failures", "errors") if k in stats},
    }
    return _Export(source, layout, list(enumerate(rows, start=1)), columns, config, stats, info)


def _tally(rows: Sequence[_Row]) -> dict[str, int]:
    """Successes, errors and failures as promptfoo's header counts them."""
    errors = sum(not r.success and r.failure == FAILURE_ERROR for r in rows)
    successes = sum(r.success for r in rows)
    return {"successes": successes, "errors": errors, "failures": len(rows) - successes - errors}


def _read_export(export: _Export, *, choice: str) -> _FileRead:
    source, columns, config = export.source, export.columns, export.config
    out = _FileRead(notes=list(export.notes))
    rows: list[_Row] = []
    for line, obj in export.numbered:
        try:
            row, notes, named_pass = _read_row(obj, line, source=source, choice=choice, declared=columns)
        except Unreadable as exc:
            out.notes.append(exc.note)
            continue
        out.named_pass_complete &= named_pass
        out.notes.extend(notes)
        rows.append(row)
    with_idx = [r for r in rows if r.test_idx is not None]
    if with_idx and len(with_idx) < len(rows):
        msg = "result has no testIdx while other results of the file do: its case cannot be identified"
        out.notes.extend(note("unreadable_file", source, msg, line=r.line) for r in rows if r.test_idx is None)
        rows = with_idx
    by_index = bool(with_idx)

    # --- candidates ------------------------------------------------------------------
    declared_pairs = [(p, _prompt_key(c)) for c in columns if (p := _str(c.get("provider")) or None) is not None]
    prompt_labels = {key: key for _, key in declared_pairs}
    for r in rows:
        prompt_labels.setdefault(r.prompt_key, r.prompt_label)
    shown = _prompt_names(prompt_labels)

    def candidate(provider: str, prompt_key: str) -> str:
        return f"{provider} | {shown[prompt_key]}" if len(shown) > 1 else provider

    declared = list(dict.fromkeys(candidate(p, k) for p, k in declared_pairs))
    seen = list(dict.fromkeys(candidate(r.provider, r.prompt_key) for r in rows))
    undeclared = [c for c in seen if c not in declared]
    if declared and undeclared:
        detail = f"rows name candidate(s) {undeclared} that the export's prompt columns do not declare"
        out.notes.append(note("header_rows_disagree", source, detail))
    candidates = declared + undeclared

    # --- cases and trials -------------------------------------------------------------
    repeat = _repeat(config)
    expanded, why = _declared_tests(config) if config else (None, "the export has no config")
    case_of: dict[int, tuple[str, int]] = {}
    planned_cases: list[tuple[str, int]] | None = None
    declared_runs: int | None = None
    if expanded is not None:
        if by_index:
            table = _run_table(expanded, repeat)
            outside = [r for r in rows if r.test_idx is None or not 0 <= r.test_idx < len(table)]
            differ = [r for r in rows if r not in outside and not _vars_agree(table[r.test_idx or 0][2], r.vars)]
            if outside or differ:
                first = (outside or differ)[0]
                why = f"the config expands to {len(table)} test run(s) but the result at line {first.line} has "
                why += f"testIdx {first.test_idx}" + (
                    "" if outside else " with variables that differ from the declared test"
                )
                expanded = None
            else:
                case_of = {i: (str(t[0]), t[1]) for i, t in enumerate(table)}
                planned_cases = sorted(set(case_of.values()))
                declared_runs = len(table)
        else:
            ids = list(dict.fromkeys(vars_case_id(v) for combos in expanded for v in combos))
            unknown = [r for r in rows if vars_case_id(r.vars) not in set(ids)]
            if unknown:
                why = f"the variables of the result at line {unknown[0].line} match no declared test"
                expanded = None
            else:
                planned_cases = [(i, 1) for i in ids]
                declared_runs = sum(len(combos) for combos in expanded) * repeat
        if expanded is None:
            out.notes.append(note("header_rows_disagree", source, f"config tests disagree with the rows: {why}"))
    if planned_cases is None:
        planned_cases = sorted({_case(r, case_of, by_index) for r in rows})
        if rows or columns:
            detail = (
                f"plan = cases seen in the rows × declared candidates ({why}); "
                "a test that no candidate ran cannot be counted as missing"
            )
            out.notes.append(note("plan_from_rows", source, detail))
    out.units = [(c, case, trial) for c in candidates for case, trial in planned_cases]

    # --- ledger rows ------------------------------------------------------------------
    for r in rows:
        case, trial = _case(r, case_of, by_index)
        out.rows.append(
            {
                CANDIDATE: candidate(r.provider, r.prompt_key),
                CASE_ID: case,
                TRIAL: trial,
                ATTEMPT: 1,
                RUN_ID: export.info.get("run_id"),
                EXEC_STATUS: r.exec_status,
                SCORE_STATUS: r.score_status,
                SCORE: r.score,
                PASSED: r.passed,
                HAS_OUTPUT: r.has_output,
                LIMIT: r.limit,
                LINE: r.line,
                SOURCE: source,
            }
        )

    # --- header totals vs rows (never evidence) ----------------------------------------
    counted = _tally(rows)
    for key, n in counted.items():
        claimed = _int(export.stats.get(key))
        if claimed is not None and claimed != n:
            out.notes.append(
                note("header_rows_disagree", source, f"header stats.{key} = {claimed} but the rows hold {n}")
            )
    metric_keys = {"testPassCount": "successes", "testFailCount": "failures", "testErrorCount": "errors"}
    for col in columns:
        provider, metrics = _str(col.get("provider")), _dict(col.get("metrics"))
        if not provider or not metrics:
            continue
        name = candidate(provider, _prompt_key(col))
        per = _tally([r for r in rows if candidate(r.provider, r.prompt_key) == name])
        for metric, key in metric_keys.items():
            claimed = _int(metrics.get(metric))
            if claimed is not None and claimed != per[key]:
                detail = f"header prompts[].metrics.{metric} = {claimed} but the rows hold {per[key]}"
                out.notes.append(note("header_rows_disagree", source, detail, candidate=name))

    export.info.update(
        {
            "rows_read": len(out.rows),
            "candidates": candidates,
            "declared_test_runs": declared_runs,
            "repeat": repeat,
            "plan_basis": "config" if expanded is not None else "rows",
            "case_id_basis": "testIdx" if by_index else "vars_sha256",
            "score": choice,
            "named_scores": _export_named_scores(export),
            "rows_counted": counted,
        }
    )
    return out


def _export_named_scores(export: _Export) -> list[str]:
    return sorted({k for _, obj in export.numbered if isinstance(obj, dict) for k in _named_scores(obj)})


def _case(row: _Row, case_of: Mapping[int, tuple[str, int]], by_index: bool) -> tuple[str, int]:
    if by_index and row.test_idx is not None:
        return case_of.get(row.test_idx, (str(row.test_idx), 1))
    return vars_case_id(row.vars), 1


def _prompt_names(labels: Mapping[str, str]) -> dict[str, str]:
    """Printable, unique names for prompt keys (white space collapsed, long labels cut; clashes get a suffix)."""
    names: dict[str, str] = {}
    for key, label in labels.items():
        text = " ".join(label.split()) or "prompt"
        names[key] = text if len(text) <= _NAME_WIDTH else text[:_NAME_WIDTH].rstrip() + "…"
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name] = counts.get(name, 0) + 1
    order: dict[str, int] = {}
    for key in sorted(names):
        if counts[names[key]] > 1:
            base = names[key]
            order[base] = order.get(base, 0) + 1
            names[key] = f"{base} #{order[base]}"
    return names


# --- the public reader ----------------------------------------------------------------


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read promptfoo eval exports into a plan and a status ledger.

    Parameters
    ----------
    paths
        One or more files written by ``promptfoo eval --output x.json`` or
        ``promptfoo export`` (summary version 2 or 3, or a bare legacy
        summary), or ``--output x.jsonl`` files (one result row per line), or
        folders holding them (searched recursively for ``.json``/``.jsonl``).
    score
        What ``score`` holds (see the module documentation): None or
        ``"success"``, the binary grade from ``success``; ``"score"``,
        promptfoo's weighted score (audit with ``grade="numeric"``); any
        other name, the named assertion metric ``namedScores[score]``.

    Returns
    -------
    Imported
        ``plan``: the declared (provider × prompt) candidates × the declared
        test runs (see the module documentation), ``trials`` = the config's
        ``evaluateOptions.repeat`` when the repetitions could be matched.
        ``ledger``: one row per result with the columns of
        :data:`LEDGER_SCHEMA` — ``candidate``, ``case_id`` (String),
        ``trial``, ``attempt`` (Int64; attempt is always 1), ``run_id``
        (String, the ``evalId``), ``exec_status`` and ``score_status``
        (String), ``score`` (Float64, null unless scored), ``passed``
        (Boolean, promptfoo's verdict, null unless scored; absent for a named
        score without pass verdicts), ``has_output`` (Boolean: the response
        has an ``output``), ``limit`` (String: ``time`` or ``max_eval_time``
        for timeouts), ``line`` (Int64: 1-based position in
        ``results.results``, or the physical line of a ``.jsonl`` file) and
        ``source`` (String). ``notes``: the flags ``header_rows_disagree``,
        ``nonfinite_score``, ``not_a_score`` and ``plan_from_rows``.
        ``info``: one dict per file (layout, version, ``run_id`` = eval id,
        timestamp, promptfoo version, header ``stats``, rows read,
        candidates, plan basis, case id basis, score read, named scores).

    Raises
    ------
    InputFormatError
        When a path does not exist.
    ImportRefused
        When an import note refuses: ``unreadable_file`` (a file or a result
        that cannot be read), ``no_export`` (a folder without an export),
        ``unknown_score`` (``score`` names no score of the export),
        ``empty_plan``/``empty_candidates`` (nothing planned), or a plan
        problem such as ``padded_identifier``.

    Examples
    --------
    >>> imp = read(["../shared/data/real/promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"])
    >>> imp.plan.candidates, imp.plan.cases.get_column("case_id").to_list()
    (('openai:gpt-5', 'openai:gpt-5-mini'), ['0', '1'])
    >>> imp.ledger.sort("candidate", "case_id").select("candidate", "case_id", "exec_status", "score", "passed")
    shape: (4, 5)
    ┌───────────────────┬─────────┬─────────────┬───────┬────────┐
    │ candidate         ┆ case_id ┆ exec_status ┆ score ┆ passed │
    │ ---               ┆ ---     ┆ ---         ┆ ---   ┆ ---    │
    │ str               ┆ str     ┆ str         ┆ f64   ┆ bool   │
    ╞═══════════════════╪═════════╪═════════════╪═══════╪════════╡
    │ openai:gpt-5      ┆ 0       ┆ completed   ┆ 0.0   ┆ false  │
    │ openai:gpt-5      ┆ 1       ┆ completed   ┆ 0.0   ┆ false  │
    │ openai:gpt-5-mini ┆ 0       ┆ completed   ┆ 0.0   ┆ false  │
    │ openai:gpt-5-mini ┆ 1       ┆ completed   ┆ 0.0   ┆ false  │
    └───────────────────┴─────────┴─────────────┴───────┴────────┘
    >>> read(["../shared/data/real/promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"],
    ...      score="score").ledger.sort("candidate", "case_id").get_column("score").round(3).to_list()
    [0.5, 0.667, 0.75, 0.667]
    """
    files, notes = find_files(paths, is_export=_is_export, what=".json or .jsonl promptfoo export")
    if not files and not notes:
        raise InputFormatError("", "no input files given")
    exports: list[_Export] = []
    info: list[dict[str, Any]] = []
    for path in files:
        try:
            exports.append(_load(path))
            info.append(exports[-1].info)
        except Unreadable as exc:
            notes.append(exc.note)
            info.append({"source": str(path), "format": "promptfoo", "layout": None, "rows_read": 0})
    source = "promptfoo:" + ",".join(str(f) for f in files)
    named = [name for e in exports for name in _export_named_scores(e)]
    try:
        choice = choose_score(score, [SUCCESS, WEIGHTED, *named], default=SUCCESS, what="score", source=source)
    except ScoreChoiceError as exc:
        notes.append(exc.note)
        choice = SUCCESS
    reads = [_read_export(e, choice=choice or SUCCESS) for e in exports]
    rows = [row for r in reads for row in r.rows]
    ledger = pl.DataFrame(rows, schema=LEDGER_SCHEMA, orient="row") if rows else pl.DataFrame(schema=LEDGER_SCHEMA)
    if not all(r.named_pass_complete for r in reads):
        ledger = ledger.drop(PASSED)
    units = list(dict.fromkeys(u for r in reads for u in r.units))
    frame = pl.DataFrame(units, schema={CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64}, orient="row")
    plan, plan_problems = build_plan(frame, source=source)
    return finish(plan, ledger, [notes, *(r.notes for r in reads), plan_problems], info)
