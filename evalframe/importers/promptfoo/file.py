"""One promptfoo file read: its candidates, planned cases and trials, ledger rows and header checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from evalframe.columns import CANDIDATE, TASK
from evalframe.importers._kit import Unreadable, json_object, ledger_row, note
from evalframe.importers._settings import flatten
from evalframe.importers.promptfoo.declared import _declared_tests, _repeat, _run_table, _vars_agree, vars_case_id
from evalframe.importers.promptfoo.export import _Export, _export_named_scores
from evalframe.importers.promptfoo.rows import FAILURE_ERROR, _int, _prompt_key, _read_row, _Row, _str
from evalframe.importers.promptfoo.scope import Column, Scope, config_prompt_ids, config_provider_ids, scope_of

_NAME_WIDTH: Final = 60

#: A (provider × prompt) column of an export: (task, candidate) = (the prompt's printable name, the provider).
Who = tuple[str, str]


@dataclass
class _FileRead:
    """Everything read from one file."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    #: Planned (column, case, trial); each ledger row and note holds its column's ``task`` and ``candidate``.
    units: list[tuple[Who, str, int]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    named_pass_complete: bool = True
    #: Candidate (provider) → the settings the file's config records for it (flat keys).
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)


def _tally(rows: Sequence[_Row]) -> dict[str, int]:
    """Successes, errors and failures as promptfoo's header counts them."""
    errors = sum(not r.success and r.failure == FAILURE_ERROR for r in rows)
    successes = sum(r.success for r in rows)
    return {"successes": successes, "errors": errors, "failures": len(rows) - successes - errors}


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


def _read_rows(export: _Export, choice: str, out: _FileRead) -> tuple[list[_Row], bool]:
    """The file's readable rows, and whether cases are named by ``testIdx``.

    A row without ``testIdx`` among rows with one is unreadable (its case cannot be named).
    """
    rows: list[_Row] = []
    for line, obj in export.numbered:
        try:
            row, _, named_pass = _read_row(obj, line, source=export.source, choice=choice, declared=export.columns)
        except Unreadable as exc:
            out.notes.append(exc.note)
            continue
        out.named_pass_complete &= named_pass
        rows.append(row)
    with_idx = [r for r in rows if r.test_idx is not None]
    if with_idx and len(with_idx) < len(rows):
        msg = "result has no testIdx while other results of the file do: its case cannot be identified"
        out.notes.extend(note("unreadable_file", export.source, msg, line=r.line) for r in rows if r.test_idx is None)
        rows = with_idx
    return rows, bool(with_idx)


@dataclass(frozen=True)
class _Naming:
    """A column's (task, candidate): the prompt's printable name (what is asked) and the provider (who answers)."""

    shown: Mapping[str, str]

    def __call__(self, provider: str, prompt_key: str) -> Who:
        return self.shown[prompt_key], provider


def _said(who: Who) -> str:
    """A column as a note names it: ``'<provider>' on prompt '<prompt>'``."""
    return f"{who[1]!r} on prompt {who[0]!r}"


def _whose(who: Who) -> dict[str, str]:
    """The ``task`` and ``candidate`` fields of a note about one column."""
    return {TASK: who[0], CANDIDATE: who[1]}


def _shared_labels(columns: Sequence[Mapping[str, Any]], out: _FileRead, source: str) -> None:
    """A refusing ``ambiguous_rows`` note per label that prompts of different text share.

    A prompt is known by its label (:func:`_prompt_key`), so the rows of two prompts that share one are the
    same units twice; the note says so rather than leave the audit to find duplicate keys.
    """
    texts: dict[str, dict[str, None]] = {}
    for column in columns:
        text = _str(column.get("raw")) or _str(column.get("id")) or ""
        texts.setdefault(_prompt_key(column), {})[text] = None
    for label, found in texts.items():
        if len(found) > 1:
            shown = "; ".join(repr(t) for t in found)
            detail = (
                f"{len(found)} prompts share the label {label!r} but not their text ({shown}): their rows are "
                "the same units twice and cannot be told apart; give each prompt its own label"
            )
            out.notes.append(note("ambiguous_rows", source, detail))


def _candidates(
    columns: Sequence[Mapping[str, Any]], rows: Sequence[_Row], out: _FileRead, source: str
) -> tuple[_Naming, list[Who]]:
    """How candidates are named, and the candidates: the declared columns', then any only the rows name (flagged)."""
    _shared_labels(columns, out, source)
    declared_pairs = [(p, _prompt_key(c)) for c in columns if (p := _str(c.get("provider")) or None) is not None]
    prompt_labels = {key: key for _, key in declared_pairs}
    for r in rows:
        prompt_labels.setdefault(r.prompt_key, r.prompt_label)
    name = _Naming(_prompt_names(prompt_labels))
    declared = list(dict.fromkeys(name(p, k) for p, k in declared_pairs))
    seen = list(dict.fromkeys(name(r.provider, r.prompt_key) for r in rows))
    undeclared = [c for c in seen if c not in declared]
    if declared and undeclared:
        named = ", ".join(_said(w) for w in undeclared)
        detail = f"rows name column(s) {named} that the export's prompt columns do not declare"
        out.notes.append(note("header_rows_disagree", source, detail))
    return name, declared + undeclared


@dataclass
class _Cases:
    """The planned (case, trial) pairs and how rows map onto them."""

    #: ``testIdx`` → (case id, trial), when the config's expansion matched the rows.
    case_of: dict[int, tuple[str, int]] = field(default_factory=dict)
    planned: list[tuple[str, int]] | None = None
    declared_runs: int | None = None
    why: str = ""
    #: Case id → the filters of the tests it stands for (a case runs on a column when one of them allows it).
    scopes: dict[str, list[Scope]] = field(default_factory=dict)


def _from_config(
    expanded: list[tuple[list[dict[str, Any]], Scope]], repeat: int, rows: Sequence[_Row], by_index: bool
) -> _Cases:
    """The cases of the config's expanded tests, or (``planned`` None) why the rows contradict them."""
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
            return _Cases(why=why)
        case_of = {i: (str(t[0]), t[1]) for i, t in enumerate(table)}
        scopes = {str(t[0]): [t[3]] for t in table}
        return _Cases(case_of, sorted(set(case_of.values())), len(table), scopes=scopes)
    scopes = {}
    for combos, scope in expanded:
        for v in combos:
            scopes.setdefault(vars_case_id(v), []).append(scope)
    unknown = [r for r in rows if vars_case_id(r.vars) not in scopes]
    if unknown:
        return _Cases(why=f"the variables of the result at line {unknown[0].line} match no declared test")
    runs = sum(len(combos) for combos, _ in expanded) * repeat
    return _Cases(planned=[(i, 1) for i in scopes], declared_runs=runs, scopes=scopes)


def _planned_cases(export: _Export, rows: Sequence[_Row], by_index: bool, repeat: int, out: _FileRead) -> _Cases:
    """The declared test runs when the config can be expanded and the rows agree, else the cases in the rows."""
    expanded, why = _declared_tests(export.config) if export.config else (None, "the export has no config")
    cases = _Cases(why=why)
    if expanded is not None:
        cases = _from_config(expanded, repeat, rows, by_index)
        if cases.planned is None:
            detail = f"config tests disagree with the rows: {cases.why}"
            out.notes.append(note("header_rows_disagree", export.source, detail))
    if cases.planned is None:
        cases.planned = sorted({_case(r, cases.case_of, by_index) for r in rows})
        cases.scopes = {}
        for r in rows:  # each row records its test's filters (testCase.prompts, testCase.providers)
            scope = scope_of(r.test_case or {}, {})
            cases.scopes.setdefault(_case(r, cases.case_of, by_index)[0], []).append(
                scope if isinstance(scope, Scope) else Scope()
            )
        if rows or export.columns:
            detail = (
                f"plan = cases seen in the rows × declared candidates ({cases.why}); "
                "a test that no candidate ran cannot be counted as missing"
            )
            out.notes.append(note("plan_from_rows", export.source, detail))
        cases.declared_runs = None
    return cases


def _columns(export: _Export, rows: Sequence[_Row], name: _Naming) -> dict[Who, Column]:
    """The names each candidate's column answers to (what a test's ``prompts`` and ``providers`` may name).

    A declared column answers to its prompt's label and id, the id the config gave the prompt of that label,
    its provider's key, the id the config gave that provider and the provider ids its rows record; a column
    only the rows name, to the labels and ids its rows record.
    """
    prompt_ids, provider_ids = config_prompt_ids(export.config), config_provider_ids(export.config)
    prompts: dict[Who, set[str]] = {}
    providers: dict[Who, set[str]] = {}
    for col in export.columns:
        provider = _str(col.get("provider"))
        if not provider:
            continue
        candidate, label = name(provider, _prompt_key(col)), _str(col.get("label")) or ""
        own = {n for n in (label, _str(col.get("id")), _prompt_key(col)) if n} | prompt_ids.get(label, set())
        prompts.setdefault(candidate, set()).update(own)
        providers.setdefault(candidate, set()).update({provider} | provider_ids.get(provider, set()))
    for r in rows:
        candidate = name(r.provider, r.prompt_key)
        prompts.setdefault(candidate, set()).update(r.prompt_names | prompt_ids.get(r.prompt_label, set()))
        providers.setdefault(candidate, set()).update(r.provider_names)
    return {c: Column(frozenset(prompts[c]), frozenset(providers.get(c, ()))) for c in prompts}


def _scoped_units(
    cases: _Cases, candidates: Sequence[Who], columns: Mapping[Who, Column], out: _FileRead, source: str
) -> list[tuple[Who, str, int]]:
    """The planned units: each planned (case, trial) on the candidates its test's filters allow.

    A filter naming a prompt or provider that no column answers to leaves its test on every column, with a
    ``header_rows_disagree`` flag (promptfoo refuses such a reference; an export that holds one was run by a
    promptfoo that did not apply it).
    """
    allowed: dict[str, list[Who]] = {}
    known = list(columns.values())
    for case, _ in cases.planned or ():
        if case in allowed:
            continue
        scopes = cases.scopes.get(case) or [Scope()]
        kept = []
        for scope in scopes:
            unmatched = scope.unmatched(known)
            if unmatched:
                detail = (
                    f"test {case}'s filter ({scope.describe()}) names {unmatched}, which no prompt column of the "
                    "export answers to: the test is planned on every column"
                )
                out.notes.append(note("header_rows_disagree", source, detail))
                scope = Scope()
            kept.append(scope)
        allowed[case] = [c for c in candidates if c not in columns or any(s.allows(columns[c]) for s in kept)]
    return [(c, case, trial) for case, trial in cases.planned or () for c in allowed[case]]


def _settings(export: _Export, candidates: Sequence[Who]) -> dict[str, Any]:
    """Per candidate (provider), what the config records for it: the entry's keys but id and label, flattened.

    A provider's settings are the same on every prompt (task) it answers.
    """
    listed = export.config.get("providers")
    entries = [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
    out: dict[str, Any] = {}
    for _, provider in candidates:
        entry = next((p for p in entries if provider in (_str(p.get("label")), _str(p.get("id")))), {})
        out[provider] = flatten({k: v for k, v in entry.items() if k not in ("id", "label")})
    return out


def _header_notes(export: _Export, rows: Sequence[_Row], name: _Naming, out: _FileRead) -> dict[str, int]:
    """The rows' tally, with a ``header_rows_disagree`` per header total (``stats``, column metrics) it contradicts."""
    counted = _tally(rows)
    for key, n in counted.items():
        claimed = _int(export.stats.get(key))
        if claimed is not None and claimed != n:
            detail = f"header stats.{key} = {claimed} but the rows hold {n}"
            out.notes.append(note("header_rows_disagree", export.source, detail))
    metric_keys = {"testPassCount": "successes", "testFailCount": "failures", "testErrorCount": "errors"}
    for col in export.columns:
        provider, metrics = _str(col.get("provider")), json_object(col.get("metrics"))
        if not provider or not metrics:
            continue
        who = name(provider, _prompt_key(col))
        per = _tally([r for r in rows if name(r.provider, r.prompt_key) == who])
        for metric, key in metric_keys.items():
            claimed = _int(metrics.get(metric))
            if claimed is not None and claimed != per[key]:
                detail = f"header prompts[].metrics.{metric} = {claimed} but the rows hold {per[key]}"
                out.notes.append({**note("header_rows_disagree", export.source, detail), **_whose(who)})
    return counted


def _read_export(export: _Export, *, choice: str) -> _FileRead:
    """One file's ledger rows, planned units and notes; its facts are added to ``export.info``."""
    out = _FileRead(notes=list(export.notes))
    rows, by_index = _read_rows(export, choice, out)
    name, candidates = _candidates(export.columns, rows, out, export.source)
    repeat = _repeat(export.config)
    cases = _planned_cases(export, rows, by_index, repeat, out)
    out.units = _scoped_units(cases, candidates, _columns(export, rows, name), out, export.source)
    planned = set(out.units)
    full = len(candidates) * len(cases.planned or ())
    for r in rows:
        case, trial = _case(r, cases.case_of, by_index)
        who = name(r.provider, r.prompt_key)
        if len(planned) < full and (who, case, trial) not in planned:
            detail = (
                f"the result at line {r.line} ran test {case} on {_said(who)}, a column its "
                "test's prompts/providers filter leaves out: the filters are not applied (every test is planned "
                "on every column)"
            )
            out.notes.append({**note("header_rows_disagree", export.source, detail, line=r.line), **_whose(who)})
            out.units = [(c, case, trial) for case, trial in cases.planned or () for c in candidates]
            planned = set(out.units)
    for r in rows:
        case, trial = _case(r, cases.case_of, by_index)
        who = name(r.provider, r.prompt_key)
        out.notes.extend({**n, **_whose(who)} for n in r.notes)
        out.rows.append(
            ledger_row(
                r.provider,
                case,
                trial=trial,
                run_id=export.info.get("run_id"),
                exec_status=r.exec_status,
                score_status=r.score_status,
                score=r.score,
                passed=r.passed,
                has_output=r.has_output,
                limit=r.limit,
                line=r.line,
                source=export.source,
            )
            | {TASK: who[0]}
        )
    out.settings = _settings(export, candidates)
    counted = _header_notes(export, rows, name, out)
    export.info.update(
        {
            "rows_read": len(out.rows),
            "candidates": list(dict.fromkeys(p for _, p in candidates)),
            "prompts": list(dict.fromkeys(t for t, _ in candidates)),
            "declared_test_runs": cases.declared_runs,
            "planned_units": len(out.units),
            "scoped_tests": sorted({c for c, scopes in cases.scopes.items() if any(s.scoped for s in scopes)}),
            "repeat": repeat,
            "plan_basis": "rows" if cases.declared_runs is None else "config",
            "case_id_basis": "testIdx" if by_index else "vars_sha256",
            "score": choice,
            "named_scores": _export_named_scores(export),
            "rows_counted": counted,
        }
    )
    return out
