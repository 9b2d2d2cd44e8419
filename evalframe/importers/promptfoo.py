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
  list sits in ``table.head.prompts``. Old rows may lack ``testIdx``,
  ``promptIdx`` and ``failureReason``.

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
* **candidate**: the provider's ``label`` when it has one, else its ``id``
  (promptfoo's own provider key, the ``provider`` of a ``prompts[]`` column).
  When the export holds more than one distinct prompt, the prompt is part of
  the candidate: ``"<provider> | <prompt label>"`` (white space inside the
  label collapsed to single spaces; a prompt without a label is named by its
  ``promptId``, else ``prompt <promptIdx>``).
* **case_id**: ``testIdx`` as a string when every row has it (``testCaseIdx``
  in some old versions); else the first 12 hex digits of the SHA-256 of the
  row's ``vars`` as canonical JSON (keys sorted, no spaces, UTF-8; the
  ``_conversation`` variable promptfoo injects is left out). promptfoo gives a
  new ``testIdx`` to every repetition of ``--repeat``; when the config
  declares ``evaluateOptions.repeat = R`` and its tests can be expanded, the
  R repetitions of a test become trials 1..R of one case, whose id is the
  ``testIdx`` of its first repetition. Otherwise every row is trial 1 (and
  repeated runs of one test without ``testIdx`` share a key, which the audit
  refuses as a duplicate). ``testIdx`` numbers the tests of one eval, so
  several files are combined on the assumption that they share one test list.
* **status**: ``failureReason`` 2 is an execution failure (``exec_status``
  ``timeout`` when promptfoo's error says the test timed out or the eval
  exceeded its maximum duration, else ``error``); the ``error`` text alone
  never is, because promptfoo also writes an assertion's failure reason there.
  Otherwise the row completed; it is ``scored`` when it has a
  ``gradingResult`` (``failureReason`` 1 is a scored fail) and ``not_scored``
  when it has none (no assertions ran, e.g. ``No output`` rows, or the grading
  result was stripped). Rows without ``failureReason`` (version 2) count as an
  execution error when they carry an ``error`` and no grading result, except
  promptfoo's ``No output`` row, which completed without output.
* **score**: the row's ``score`` (promptfoo's weighted assertion score,
  normally in [0, 1], so audit with ``grade="numeric"``) and ``passed`` from
  ``success`` (``gradingResult.pass`` when ``success`` is absent). With
  ``score="<name>"`` the named score ``namedScores[<name>]`` is used instead,
  and ``passed`` comes from the component results whose assertion has
  ``metric: <name>`` (the column is left out when some scored row has none).
  A non-finite score is a grader failure (``judge_error``, note
  ``nonfinite_score``); a score that is not a number is one too (note
  ``not_a_score``).

The plan
--------
Planned units are the declared (provider × prompt) columns (``prompts[]``)
× the declared test runs. The test runs are expanded from ``config``
(``tests``, ``scenarios``, ``defaultTest.vars``, array-valued variables,
``evaluateOptions.repeat``) exactly as promptfoo numbers them; this is only
possible when the tests are written inline. If they are not (a file
reference, a ``file://`` variable), or if the rows contradict the expansion
(a ``testIdx`` beyond it, or variables that differ), the plan is the cases
seen in any row × the declared columns, with a ``plan_from_rows`` note: a
test that no candidate ran cannot be detected as missing then. Header totals
(``stats``, ``prompts[].metrics``) are never evidence; when they disagree
with the rows a ``header_rows_disagree`` note says so.
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
from evalframe.errors import InputFormatError, PlanError
from evalframe.importers import LEDGER_SCHEMA, Imported
from evalframe.load import PathLike
from evalframe.plan import Plan
from evalframe.problems import concat_problems, problems_frame

__all__ = ["LEDGER_SCHEMA", "PLAN_FROM_ROWS", "read", "vars_case_id"]

#: ``ResultFailureReason`` values (promptfoo ``src/types/index.ts``).
FAILURE_NONE: Final = 0
FAILURE_ASSERT: Final = 1
FAILURE_ERROR: Final = 2

#: Note kind: the export declares no usable test list, so the plan is the cases seen.
#: (Listed in :data:`evalframe.problems.PROBLEM_KINDS`; non-refusing.)
PLAN_FROM_ROWS: Final = "plan_from_rows"


_NO_OUTPUT: Final = "No output"
_CONVERSATION_VAR: Final = "_conversation"


class _Unreadable(Exception):
    """A file (or one row of it) cannot be read; carries the place and the reason."""

    def __init__(self, detail: str, *, line: int | None = None) -> None:
        self.detail = detail
        self.line = line
        super().__init__(detail)


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
class _FileRead:
    """Everything read from one file."""

    source: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    units: list[tuple[str, str, int]] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
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
        label = _str(value.get("label"))
        if label:
            return label
        ident = _str(value.get("id"))
        return ident or None
    return None


def _prompt_key(prompt: Mapping[str, Any], prompt_id: str | None) -> str:
    """Identity of a prompt: its label (or legacy ``display``), else its id."""
    label = _str(prompt.get("label")) or _str(prompt.get("display"))
    if label:
        return label
    return prompt_id or _str(prompt.get("id")) or ""


def _display(label: str) -> str:
    return " ".join(label.split())


# --- one result row ------------------------------------------------------------


def _read_row(
    obj: Any, line: int, *, score_name: str | None, declared: Sequence[Mapping[str, Any]]
) -> tuple[_Row, list[dict[str, Any]], bool]:
    """Read one ``EvaluateResult``; return the row, its notes and whether a named pass verdict exists."""
    if not isinstance(obj, dict):
        raise _Unreadable(f"result {line} is a {type(obj).__name__}, not an object", line=line)
    provider = _provider_key(obj.get("provider"))
    prompt_idx = _int(obj.get("promptIdx"))
    column = declared[prompt_idx] if prompt_idx is not None and 0 <= prompt_idx < len(declared) else {}
    if provider is None:
        provider = _str(column.get("provider")) or None
    if provider is None:
        raise _Unreadable(f"result {line} has no provider id or label", line=line)
    prompt = _dict(obj.get("prompt"))
    prompt_id = _str(obj.get("promptId"))
    key = _str(prompt.get("label")) or _str(prompt.get("display")) or ""
    if not key and _str(column.get("provider")) == provider:
        key = _prompt_key(column, None)
    key = key or prompt_id or ""
    label = key or (f"prompt {prompt_idx}" if prompt_idx is not None else "prompt")
    test_idx = _int(obj.get("testIdx"))
    if test_idx is None:
        test_idx = _int(obj.get("testCaseIdx"))
    variables = obj.get("vars")
    if not isinstance(variables, dict):
        variables = _dict(_dict(obj.get("testCase")).get("vars"))
    notes: list[dict[str, Any]] = []
    response = obj.get("response")
    has_output = isinstance(response, dict) and response.get("output") is not None
    error = _str(obj.get("error"))
    grading = obj.get("gradingResult")
    graded = isinstance(grading, dict)
    success = obj.get("success") is True
    failure = _int(obj.get("failureReason"))
    if failure not in (FAILURE_NONE, FAILURE_ASSERT, FAILURE_ERROR):
        # version 2 (or an unknown value): derive it from the row
        if success:
            failure = FAILURE_NONE
        elif graded:
            failure = FAILURE_ASSERT
        elif error is not None and not (error == _NO_OUTPUT and not has_output):
            failure = FAILURE_ERROR
        else:
            failure = FAILURE_NONE
    limit: str | None = None
    score: float | None = None
    passed: bool | None = None
    named_pass = True
    if failure == FAILURE_ERROR:
        text = (error or "").lower()
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
        grading_d = _dict(grading)
        if score_name is None:
            raw: Any = obj.get("score", grading_d.get("score"))
            verdict: Any = obj.get("success") if isinstance(obj.get("success"), bool) else grading_d.get("pass")
            passed = verdict if isinstance(verdict, bool) else None
            what = "score"
        else:
            named = _dict(obj.get("namedScores")) or _dict(grading_d.get("namedScores"))
            raw = named.get(score_name)
            components = [
                c
                for c in grading_d.get("componentResults") or []
                if isinstance(c, dict) and _dict(c.get("assertion")).get("metric") == score_name
            ]
            verdicts = [c.get("pass") for c in components]
            if verdicts and all(isinstance(v, bool) for v in verdicts):
                passed = all(verdicts)
            what = f"namedScores[{score_name!r}]"
        if raw is None and score_name is not None:
            score_status = "not_scored"
            passed = None
        elif score_name is None and passed is None:
            score_status = "judge_error"
            notes.append(
                {
                    "kind": "not_a_score",
                    "line": line,
                    "detail": "the grading result has no pass verdict (neither success nor gradingResult.pass)",
                    "refusing": False,
                }
            )
        elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
            if math.isfinite(raw):
                score, score_status = float(raw), "scored"
                if score_name is not None and passed is None:
                    named_pass = False
            else:
                score_status, passed = "judge_error", None
                notes.append(
                    {
                        "kind": "nonfinite_score",
                        "line": line,
                        "detail": f"{what} = {raw!r} is not finite; read as a grader failure",
                        "refusing": False,
                    }
                )
        elif raw is None and passed is not None:
            score_status = "scored"  # a verdict without a number
        else:
            score_status, passed = "judge_error", None
            notes.append(
                {
                    "kind": "not_a_score",
                    "line": line,
                    "detail": f"{what} = {json.dumps(raw)[:80]} is not a number; read as a grader failure",
                    "refusing": False,
                }
            )
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
        passed=passed if score_status == "scored" else None,
        has_output=has_output,
        limit=limit,
        success=success,
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


def _load_document(path: Path) -> tuple[dict[str, Any], list[Any], list[dict[str, Any]], str]:
    """Return (wrapper, result rows, declared prompt columns, layout) of a JSON export."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"bytes that are not UTF-8 at byte {exc.start}") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Unreadable(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", line=exc.lineno) from exc
    if not isinstance(doc, dict):
        raise _Unreadable(f"expected a JSON object, found {type(doc).__name__}")
    summary = doc.get("results")
    if isinstance(summary, list):
        summary, doc = doc, {}
    if not isinstance(summary, dict):
        raise _Unreadable("no 'results' object: not a promptfoo eval export")
    rows = summary.get("results")
    if not isinstance(rows, list):
        raise _Unreadable("'results.results' is missing or not a list")
    prompts = summary.get("prompts")
    layout = "v3"
    if not isinstance(prompts, list):
        prompts = _dict(_dict(summary.get("table")).get("head")).get("prompts")
        layout = "v2" if doc else "legacy"
    columns = [p for p in prompts if isinstance(p, dict)] if isinstance(prompts, list) else []
    wrapper = {**doc, "_summary": summary}
    return wrapper, rows, columns, layout


def _load_jsonl(path: Path) -> tuple[list[tuple[int, Any]], list[dict[str, Any]]]:
    """Rows of a ``.jsonl`` export with their physical lines, and the bad lines as notes."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"bytes that are not UTF-8 at byte {exc.start}") from exc
    rows: list[tuple[int, Any]] = []
    bad: list[dict[str, Any]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            bad.append({"kind": "unreadable_file", "line": number, "detail": f"invalid JSON: {exc.msg}"})
    return rows, bad


def _read_file(path: Path, *, score_name: str | None) -> _FileRead:
    source = str(path)
    out = _FileRead(source=source, info={"source": source, "format": "promptfoo"})
    is_jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    try:
        if is_jsonl:
            numbered, bad = _load_jsonl(path)
            out.notes.extend(bad)
            wrapper: dict[str, Any] = {"_summary": {}}
            columns: list[dict[str, Any]] = []
            layout = "jsonl"
        else:
            wrapper, raw_rows, columns, layout = _load_document(path)
            numbered = list(enumerate(raw_rows, start=1))
    except _Unreadable as exc:
        out.notes.append({"kind": "unreadable_file", "line": exc.line, "detail": exc.detail})
        out.info.update({"layout": None, "rows_read": 0, "error": exc.detail})
        return out
    summary = _dict(wrapper.get("_summary"))
    config = _dict(wrapper.get("config"))
    stats = _dict(summary.get("stats"))
    run_id = _str(wrapper.get("evalId")) or None
    out.info.update(
        {
            "layout": layout,
            "version": summary.get("version"),
            "eval_id": run_id,
            "timestamp": _str(summary.get("timestamp")),
            "promptfoo_version": _str(_dict(wrapper.get("metadata")).get("promptfooVersion")),
            "description": _str(config.get("description")),
            "stats": {k: stats.get(k) for k in ("successes", "failures", "errors") if k in stats},
        }
    )

    rows: list[_Row] = []
    for line, obj in numbered:
        try:
            row, notes, named_pass = _read_row(obj, line, score_name=score_name, declared=columns)
        except _Unreadable as exc:
            out.notes.append({"kind": "unreadable_file", "line": exc.line, "detail": exc.detail})
            continue
        out.named_pass_complete &= named_pass
        out.notes.extend(notes)
        rows.append(row)
    with_idx = [r for r in rows if r.test_idx is not None]
    by_index = bool(rows) and len(with_idx) == len(rows)
    if with_idx and not by_index:
        for r in rows:
            if r.test_idx is None:
                msg = "result has no testIdx while other results of the file do: its case cannot be identified"
                out.notes.append({"kind": "unreadable_file", "line": r.line, "detail": msg})
        rows = with_idx
        by_index = bool(rows)

    # --- candidates ------------------------------------------------------------------
    declared_pairs = [(p, _prompt_key(c, None)) for c in columns if (p := _str(c.get("provider")) or None) is not None]
    prompt_labels: dict[str, str] = {}
    for _, key in declared_pairs:
        prompt_labels.setdefault(key, key)
    for r in rows:
        prompt_labels.setdefault(r.prompt_key, r.prompt_label)
    several = len(prompt_labels) > 1
    shown = _prompt_names(prompt_labels)

    def candidate(provider: str, prompt_key: str) -> str:
        return f"{provider} | {shown[prompt_key]}" if several else provider

    declared = list(dict.fromkeys(candidate(p, k) for p, k in declared_pairs))
    seen = list(dict.fromkeys(candidate(r.provider, r.prompt_key) for r in rows))
    undeclared = [c for c in seen if c not in declared]
    if declared and undeclared:
        out.notes.append(
            {
                "kind": "header_rows_disagree",
                "detail": f"rows name candidate(s) {undeclared} that the export's prompt columns do not declare",
                "refusing": False,
            }
        )
    candidates = declared + undeclared if declared else seen
    out.candidates = candidates

    # --- cases and trials -------------------------------------------------------------
    repeat = _repeat(config)
    expanded, why = _declared_tests(config) if config else (None, "the export has no config")
    case_of: dict[int, tuple[str, int]] = {}
    planned_cases: list[tuple[str, int]] | None = None
    declared_runs: int | None = None
    if expanded is not None:
        if by_index:
            table = _run_table(expanded, repeat)
            bad_rows = [r for r in rows if r.test_idx is None or not 0 <= r.test_idx < len(table)]
            mismatch = [
                r
                for r in rows
                if r.test_idx is not None
                and 0 <= r.test_idx < len(table)
                and not _vars_agree(table[r.test_idx][2], r.vars)
            ]
            if bad_rows or mismatch:
                first = (bad_rows or mismatch)[0]
                why = (
                    f"the config expands to {len(table)} test run(s) but the result at line {first.line} has "
                    f"testIdx {first.test_idx}"
                    + ("" if bad_rows else " with variables that differ from the declared test")
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
            out.notes.append(
                {
                    "kind": "header_rows_disagree",
                    "detail": f"config tests disagree with the rows: {why}",
                    "refusing": False,
                }
            )
    if planned_cases is None:
        planned_cases = sorted({_case(r, case_of, by_index) for r in rows})
        if rows or columns:
            out.notes.append(
                {
                    "kind": PLAN_FROM_ROWS,
                    "detail": f"plan = cases seen in the rows × declared candidates ({why}); "
                    "a test that no candidate ran cannot be counted as missing",
                    "refusing": False,
                }
            )
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
                RUN_ID: run_id,
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
    counted = {
        "successes": sum(r.success for r in rows),
        "errors": sum(not r.success and r.failure == FAILURE_ERROR for r in rows),
        "failures": sum(not r.success and r.failure != FAILURE_ERROR for r in rows),
    }
    for key, n in counted.items():
        claimed = _int(stats.get(key))
        if claimed is not None and claimed != n:
            out.notes.append(
                {
                    "kind": "header_rows_disagree",
                    "detail": f"header stats.{key} = {claimed} but the rows hold {n}",
                    "refusing": False,
                }
            )
    metric_keys = {"testPassCount": "successes", "testFailCount": "failures", "testErrorCount": "errors"}
    for col in columns:
        provider = _str(col.get("provider"))
        metrics = _dict(col.get("metrics"))
        if not provider or not metrics:
            continue
        name = candidate(provider, _prompt_key(col, None))
        mine = [r for r in rows if candidate(r.provider, r.prompt_key) == name]
        per = {
            "successes": sum(r.success for r in mine),
            "errors": sum(not r.success and r.failure == FAILURE_ERROR for r in mine),
            "failures": sum(not r.success and r.failure != FAILURE_ERROR for r in mine),
        }
        for metric, key in metric_keys.items():
            claimed = _int(metrics.get(metric))
            if claimed is not None and claimed != per[key]:
                out.notes.append(
                    {
                        "kind": "header_rows_disagree",
                        "candidate": name,
                        "detail": f"header prompts[].metrics.{metric} = {claimed} but the rows hold {per[key]}",
                        "refusing": False,
                    }
                )

    named = sorted(
        {
            k
            for _, obj in numbered
            if isinstance(obj, dict)
            for k in _dict(obj.get("namedScores")) or _dict(_dict(obj.get("gradingResult")).get("namedScores"))
        }
    )
    out.info.update(
        {
            "rows_read": len(out.rows),
            "candidates": candidates,
            "declared_test_runs": declared_runs,
            "repeat": repeat,
            "plan_basis": "config" if expanded is not None else "rows",
            "case_id_basis": "testIdx" if by_index else "vars_sha256",
            "named_scores": named,
            "rows_counted": counted,
        }
    )
    return out


def _case(row: _Row, case_of: Mapping[int, tuple[str, int]], by_index: bool) -> tuple[str, int]:
    if by_index and row.test_idx is not None:
        return case_of.get(row.test_idx, (str(row.test_idx), 1))
    return vars_case_id(row.vars), 1


def _prompt_names(labels: Mapping[str, str]) -> dict[str, str]:
    """Printable, unique names for prompt keys (white space collapsed; clashes get a suffix)."""
    names = {k: _display(v) or "prompt" for k, v in labels.items()}
    counts: dict[str, int] = {}
    for v in names.values():
        counts[v] = counts.get(v, 0) + 1
    clash = {v for v, n in counts.items() if n > 1}
    if clash:
        order: dict[str, int] = {}
        for k in sorted(names):
            if names[k] in clash:
                order[names[k]] = order.get(names[k], 0) + 1
                names[k] = f"{names[k]} #{order[names[k]]}"
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
        None: the row's overall ``score`` with ``passed`` from ``success``.
        A name: the named score ``namedScores[score]`` (see the module
        documentation for how ``passed`` is found then).

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
        (Boolean, null unless scored; absent for a named score without
        pass verdicts), ``has_output`` (Boolean: the response has an
        ``output``), ``limit`` (String: ``time`` or ``max_eval_time`` for
        timeouts), ``line`` (Int64: 1-based position in ``results.results``,
        or the physical line of a ``.jsonl`` file) and ``source`` (String).
        promptfoo scores are fractions, so audit this ledger with
        ``grade="numeric"`` (the default binary grade refuses them).
        ``notes``: problems table; ``unreadable_file`` (refusing) for a file
        or a result that cannot be read, and the non-refusing
        ``header_rows_disagree``, ``nonfinite_score``, ``not_a_score`` and
        ``plan_from_rows``. ``info``: one dict per file (layout, version,
        eval id, timestamp, promptfoo version, header ``stats``, rows read,
        candidates, plan basis, case id basis, named scores).

    Raises
    ------
    InputFormatError
        When a path does not exist. A file that exists but cannot be read
        is reported as an ``unreadable_file`` note and the other files are
        still read.

    Examples
    --------
    >>> imp = read(["../shared/data/real/promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"])
    >>> imp.plan.candidates, imp.plan.cases.get_column("case_id").to_list()
    (('openai:gpt-5', 'openai:gpt-5-mini'), ['0', '1'])
    >>> imp.ledger.sort("candidate", "case_id").select("candidate", "case_id", "exec_status", "score", "passed")
    shape: (4, 5)
    ┌───────────────────┬─────────┬─────────────┬──────────┬────────┐
    │ candidate         ┆ case_id ┆ exec_status ┆ score    ┆ passed │
    │ ---               ┆ ---     ┆ ---         ┆ ---      ┆ ---    │
    │ str               ┆ str     ┆ str         ┆ f64      ┆ bool   │
    ╞═══════════════════╪═════════╪═════════════╪══════════╪════════╡
    │ openai:gpt-5      ┆ 0       ┆ completed   ┆ 0.5      ┆ false  │
    │ openai:gpt-5      ┆ 1       ┆ completed   ┆ 0.666667 ┆ false  │
    │ openai:gpt-5-mini ┆ 0       ┆ completed   ┆ 0.75     ┆ false  │
    │ openai:gpt-5-mini ┆ 1       ┆ completed   ┆ 0.666667 ┆ false  │
    └───────────────────┴─────────┴─────────────┴──────────┴────────┘
    >>> imp.notes.height
    0
    """
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise InputFormatError(str(p), "no such file or directory")
        if path.is_dir():  # a folder of exports: its .json / .jsonl files, recursively
            found = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix.lower() in (".json", ".jsonl"))
            if not found:
                raise InputFormatError(str(p), "no .json or .jsonl promptfoo export in this folder")
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise InputFormatError("", "no input files given")
    reads = [_read_file(f, score_name=score) for f in files]

    notes: list[dict[str, Any]] = [{**n, "source": r.source} for r in reads for n in r.notes]
    rows = [row for r in reads for row in r.rows]
    ledger = pl.DataFrame(rows, schema=LEDGER_SCHEMA, orient="row") if rows else pl.DataFrame(schema=LEDGER_SCHEMA)
    if score is not None and not all(r.named_pass_complete for r in reads):
        ledger = ledger.drop(PASSED)
    candidates = list(dict.fromkeys(c for r in reads for c in r.candidates))
    units = sorted({u for r in reads for u in r.units})
    source = "promptfoo:" + ",".join(r.source for r in reads)
    if not units:
        notes.append(
            {
                "kind": "empty_plan",
                "source": source,
                "detail": "no planned unit could be read from the export(s)",
            }
        )
        plan = Plan(cases=pl.DataFrame(schema={CASE_ID: pl.String}), candidates=tuple(candidates), source=source)
    else:
        try:
            plan = _plan(units, candidates, source)
        except PlanError as exc:
            notes.extend(exc.problems.to_dicts())
            plan = Plan(cases=pl.DataFrame(schema={CASE_ID: pl.String}), candidates=tuple(candidates), source=source)
    return Imported(
        plan=plan, ledger=ledger, notes=concat_problems([problems_frame(notes)]), info=[r.info for r in reads]
    )


def _plan(units: list[tuple[str, str, int]], candidates: list[str], source: str) -> Plan:
    """A cases-and-candidates plan when the units are a full cross product, else a units table."""
    cases = sorted({u[1] for u in units})
    trials = max(u[2] for u in units)
    used = [c for c in candidates if any(u[0] == c for u in units)]
    full = {(c, k, t) for c in used for k in cases for t in range(1, trials + 1)}
    if set(units) == full:
        return Plan.from_frame(
            pl.DataFrame({CASE_ID: cases}, schema={CASE_ID: pl.String}), candidates=used, trials=trials, source=source
        )
    frame = pl.DataFrame(
        {CANDIDATE: [u[0] for u in units], CASE_ID: [u[1] for u in units], TRIAL: [u[2] for u in units]},
        schema={CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64},
    )
    return Plan.from_frame(frame, source=source)
