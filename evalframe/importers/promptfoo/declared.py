"""The tests a promptfoo config declares, expanded as promptfoo numbers them, and the case id of a test's variables."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from evalframe.importers._kit import json_object
from evalframe.importers.promptfoo.rows import _int
from evalframe.importers.promptfoo.scope import Scope, scope_of

_CONVERSATION_VAR: Final = "_conversation"


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


def _declared_tests(config: Mapping[str, Any]) -> tuple[list[tuple[list[dict[str, Any]], Scope]] | None, str]:
    """Return the variable combinations and the filters of every declared test, in promptfoo's order, or None and why.

    A test's filters (its ``prompts`` and ``providers``, else ``defaultTest``'s) say which columns it runs on
    (:mod:`~evalframe.importers.promptfoo.scope`).
    """
    default = config.get("defaultTest")
    if default is not None and not isinstance(default, dict):
        return None, "defaultTest is a file reference"
    default_d = json_object(default)
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
                merged = {
                    **data,
                    **test,
                    "options": {**json_object(default_d.get("options")), **json_object(test.get("options"))},
                }
                entries.append((merged, {**default_vars, **data_vars, **test_vars}))
    expanded: list[tuple[list[dict[str, Any]], Scope]] = []
    for number, (test, variables) in enumerate(entries):
        options = {**json_object(default_d.get("options")), **json_object(test.get("options"))}
        if options.get("transformVars"):
            return None, "a transformVars option rewrites the variables"
        combos = _combinations(variables, expand=not options.get("disableVarExpansion"))
        if combos is None:
            return None, "a variable is a file:// glob"
        scope = scope_of(test, default_d)
        if isinstance(scope, str):
            return None, f"declared test {number}: {scope}"
        expanded.append((combos, scope))
    return expanded, ""


def _repeat(config: Mapping[str, Any]) -> int:
    value = _int(json_object(config.get("evaluateOptions")).get("repeat"))
    return value if value is not None and value >= 1 else 1


def _run_table(
    expanded: list[tuple[list[dict[str, Any]], Scope]], repeat: int
) -> list[tuple[int, int, dict[str, Any], Scope]]:
    """One entry per ``testIdx`` promptfoo assigns: (case testIdx = first repetition's, trial, vars, filters)."""
    table: list[tuple[int, int, dict[str, Any], Scope]] = []
    for combos, scope in expanded:
        start = len(table)
        for r in range(repeat):
            for c, variables in enumerate(combos):
                table.append((start + c, r + 1, variables, scope))
    return table


def _vars_agree(declared: Mapping[str, Any], seen: Mapping[str, Any]) -> bool:
    return all(k in seen and seen[k] == v for k, v in declared.items())
