"""One promptfoo result row read: provider and prompt, test index, execution status and the chosen grade."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from evalframe.importers._kit import Unreadable, grade, json_object, note

#: ``ResultFailureReason`` values (promptfoo ``src/types/index.ts``).
FAILURE_NONE: Final = 0
FAILURE_ASSERT: Final = 1
FAILURE_ERROR: Final = 2

#: ``--score`` of the binary grade from ``success`` (the default).
SUCCESS: Final = "success"
#: ``--score`` of promptfoo's weighted assertion score (for ``--grade numeric``).
WEIGHTED: Final = "score"

_NO_OUTPUT: Final = "No output"
#: How promptfoo's reason begins when a ``javascript`` (or other custom code) assertion threw instead of judging.
THREW: Final = "Custom function threw error"


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
    #: The labels and ids of the row's prompt and provider (what a test's filters may name).
    prompt_names: frozenset[str] = frozenset()
    provider_names: frozenset[str] = frozenset()
    #: The row's test's ``prompts`` and ``providers`` filters as the row records them (``testCase``).
    test_case: Mapping[str, Any] | None = None
    #: Notes about the row's grade (its candidate is named once candidates are).
    notes: tuple[dict[str, Any], ...] = ()


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


def _provider_key(value: Any) -> str | None:
    """Return promptfoo's provider key: the label when non-empty, else the id (or the bare string)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        return _str(value.get("label")) or _str(value.get("id")) or None
    return None


def _provider_names(value: Any) -> tuple[str, ...]:
    """Every name a row's provider answers to: its label and its id."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, dict):
        return tuple(n for n in (_str(value.get("label")), _str(value.get("id"))) if n)
    return ()


def _prompt_key(prompt: Mapping[str, Any]) -> str:
    """Identity of a prompt: its label (or legacy ``display``), else its id."""
    return _str(prompt.get("label")) or _str(prompt.get("display")) or _str(prompt.get("id")) or ""


def _named_scores(obj: Mapping[str, Any]) -> dict[str, Any]:
    return json_object(obj.get("namedScores")) or json_object(json_object(obj.get("gradingResult")).get("namedScores"))


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


def _no_judgment(component: Mapping[str, Any]) -> str | None:
    """Why an assertion's result is no judgment (its code threw, or its grader failed), else None."""
    reason = _str(component.get("reason")) or ""
    if reason.startswith(THREW):
        kind = _str(json_object(component.get("assertion")).get("type")) or "an"
        return f"the {kind} assertion threw ({' '.join(reason.split())[:100]})"
    if json_object(component.get("metadata")).get("graderError") is True:
        return f"the grader of the {_str(json_object(component.get('assertion')).get('type')) or ''} assertion failed"
    return None


def _unjudged(grading: Mapping[str, Any], choice: str, passed: bool | None) -> str | None:
    """Why the row's grade rests on an assertion that gave no judgment, else None.

    promptfoo records an assertion whose code threw (``Custom function threw error``) or whose grader failed
    (``metadata.graderError``) as a failed assertion with score 0. That is no judgment of the output: the
    verdict (``success``) still stands when another assertion of the row gave a valid fail, since a test
    passes only when every assertion passes; otherwise the row has no valid verdict. The weighted ``score``
    averages the 0 in, so it is no valid score whenever an assertion gave no judgment; a named metric, when
    an assertion of that metric gave none.
    """
    listed = grading.get("componentResults")
    components = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) and listed else [grading]
    if choice not in (SUCCESS, WEIGHTED):
        components = [c for c in components if json_object(c.get("assertion")).get("metric") == choice]
    why = [w for c in components if (w := _no_judgment(c)) is not None]
    if not why:
        return None
    if choice == SUCCESS:
        if passed is not False or any(c.get("pass") is False and _no_judgment(c) is None for c in components):
            return None
        return f"{why[0]}, and no other assertion failed: the test has no valid verdict"
    return f"{why[0]}: its 0 is in the score"


def _grade(
    obj: Mapping[str, Any], choice: str, line: int, source: str
) -> tuple[str, float | None, bool | None, bool, list[dict[str, Any]]]:
    """Score status, score, passed, whether a pass verdict exists, and notes of one graded row."""
    grading = json_object(obj.get("gradingResult"))
    success = obj.get("success")
    verdict = success if isinstance(success, bool) else grading.get("pass")
    passed = verdict if isinstance(verdict, bool) else None
    if choice == SUCCESS and passed is None:
        detail = "the grading result has no pass verdict (neither success nor gradingResult.pass)"
        return "judge_error", None, None, True, [note("not_a_score", source, detail, line=line)]
    if (choice in (SUCCESS, WEIGHTED) or choice in _named_scores(obj)) and (
        why := _unjudged(grading, choice, passed)
    ) is not None:
        return "judge_error", None, None, True, [note("grader_error", source, f"{why}; a grader failure", line=line)]
    if choice == SUCCESS:
        return "scored", float(passed is True), passed, True, []
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
            if isinstance(c, dict) and json_object(c.get("assertion")).get("metric") == choice
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
    prompt = json_object(obj.get("prompt"))
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
        variables = json_object(json_object(obj.get("testCase")).get("vars"))
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
        prompt_names=frozenset(
            n for n in (key, _str(prompt.get("id")), _str(obj.get("promptId")), _str(column.get("id"))) if n
        ),
        provider_names=frozenset(n for n in (provider, *_provider_names(obj.get("provider"))) if n),
        test_case=json_object(obj.get("testCase")),
        notes=tuple(notes),
    )
    return row, notes, named_pass
