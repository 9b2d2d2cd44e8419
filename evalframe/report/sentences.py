"""The sentences of a report: each candidate's headline, the ranking note and the provenance lines.

Each sentence reads numbers of the summary with their denominators; the view
model (:mod:`evalframe.report.view`) makes them once, and every renderer
shows the same text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from evalframe.columns import CANDIDATE, FUNNEL_OUTCOMES, MISSING, OUTCOMES, SCORED
from evalframe.report.format import fmt_value, markdown_code
from evalframe.slices import edge_text

#: Overlapping ranges a ranking note names; beyond, it counts them.
RANGES_NAMED = 3
#: The funnel's ungraded outcomes other than missing, in outcome order: as the headline and the cards name them.
UNGRADED_OUTCOMES: Final = tuple(o for o in OUTCOMES if o not in (MISSING, *FUNNEL_OUTCOMES[SCORED]))


def missing_ids_text(record: Mapping[str, Any]) -> str:
    """The summary's missing case ids as text, with how many more the units table holds.

    Examples
    --------
    >>> missing_ids_text({"missing_cases": 23, "missing_case_ids": ["a", "b"]})
    'a, b … (+21 more)'
    >>> missing_ids_text({"missing_cases": 0, "missing_case_ids": []})
    '—'
    """
    ids = [str(v) for v in record.get("missing_case_ids") or []]
    more = int(record.get("missing_cases") or 0) - len(ids)
    return (", ".join(ids) or "—") + (f" … (+{more} more)" if more > 0 else "")


def plan_size(meta: Mapping[str, Any]) -> str:
    """The plan's size in words: cases × candidates × trials and the planned units they make.

    A units table need not plan every case for every candidate (two logs of one task, each limited to
    its own samples): then the product is not the number of planned units, and the text says so.

    Examples
    --------
    >>> plan_size({"n_cases": 4, "candidates": ["A", "B"], "trials": 1, "planned_units": 8})
    '4 cases × 2 candidates × 1 trial(s) = 8 planned units'
    >>> plan_size({"n_cases": 5, "candidates": ["A", "B"], "trials": 1, "planned_units": 8})
    '8 planned units of 5 cases × 2 candidates × 1 trial(s): not every candidate plans every case and trial'
    """
    cases, candidates, trials = meta.get("n_cases"), list(meta.get("candidates") or []), meta.get("trials")
    units = meta.get("planned_units")
    grid = f"{cases} cases × {len(candidates)} candidates × {trials} trial(s)"
    if isinstance(cases, int) and isinstance(trials, int) and cases * len(candidates) * trials != units:
        return f"{units} planned units of {grid}: not every candidate plans every case and trial"
    return f"{grid} = {units} planned units"


def _bounds(record: Mapping[str, Any]) -> tuple[float, float] | None:
    low, high = record.get("pass_rate_planned"), record.get("pass_rate_upper")
    return None if low is None or high is None else (float(low), float(high))


def rate_base(record: Mapping[str, Any]) -> str:
    """What a summary row's rates are over: ``planned``, or ``observations`` when they differ (retry ``every``)."""
    observations = record.get("observations")
    return "observations" if observations is not None and observations != record.get("planned") else "planned"


def rated_units(base: str) -> str:
    """The words for what rates over ``base`` are over: ``planned units``, or ``observations`` (retry every)."""
    return "observations" if base == "observations" else "planned units"


def range_name(base: str) -> str:
    """The name of the worst-to-best-case range over ``base``: ``full-plan range`` or ``range over observations``."""
    return "range over observations" if base == "observations" else "full-plan range"


def headline(record: Mapping[str, Any]) -> list[str]:
    """Sentences that read one candidate's summary row with its denominators.

    Parameters
    ----------
    record
        One row of :attr:`AuditReport.summary` as a dict; with ``cases`` ``"fixed"`` (the audit's
        ``report.meta["cases"]``) a sentence says the intervals are about these cases only.

    Returns
    -------
    list of str
        The pass rate with passed / scored, the coverage with scored /
        planned, the full-plan range (worst and best case) when some unit is
        ungraded, and what happened to the ungraded units.

    Examples
    --------
    >>> row = {"candidate": "A", "planned": 4, "scored": 2, "passed": 2, "missing": 2,
    ...     "pass_rate_scored": 1.0, "scored_coverage": 0.5, "pass_rate_planned": 0.5, "pass_rate_upper": 1.0,
    ...     "missing_cases": 2, "missing_case_ids": ["handoff", "privacy"]}
    >>> for line in headline(row):
    ...     print(line)
    A: pass_rate_scored 1.0 = 2 passed / 2 scored, and only 2 of 4 planned units were scored
    (scored_coverage 0.5).
    Over all 4 planned units A's pass rate lies between 0.5 (pass_rate_planned = passed / planned,
    every ungraded unit failed) and 1.0 (pass_rate_upper, every ungraded unit passed).
    Ungraded: 2 missing (no row at all): handoff, privacy.
    """
    name = record[CANDIDATE]
    # Under retry policy every the rates are over observations (attempts), not planned units (SPEC §4).
    base = rate_base(record)
    units = rated_units(base)
    planned = int(record[base])
    # passed is null when the grading gives no pass/fail (then so is the rate, and passed is not shown).
    scored, passed = int(record["scored"]), record["passed"]
    coverage = fmt_value(record.get("scored_coverage"))
    rate = record.get("pass_rate_scored")
    lines = []
    if rate is None and scored == 0:
        lines.append(f"{name}: no pass rate — 0 of {planned} {units} were scored (pass_rate_scored is null).")
    elif rate is None:
        lines.append(
            f"{name}: {scored} of {planned} {units} were scored, but no pass threshold was declared: no pass rate."
        )
    elif scored == planned:
        lines.append(
            f"{name}: pass_rate_scored {fmt_value(rate)} = {passed} passed / {scored} scored; "
            f"every one of the {planned} {units} was scored (scored_coverage {coverage})."
        )
    else:
        lines.append(
            f"{name}: pass_rate_scored {fmt_value(rate)} = {passed} passed / {scored} scored, and only {scored} of "
            f"{planned} {units} were scored (scored_coverage {coverage})."
        )
    if record.get("pass_rate_scored_ci_withheld"):
        lines.append(f"{name}'s pass_rate_scored has {record['pass_rate_scored_ci_withheld']}.")
    elif rate is not None and record.get("cases") == "fixed" and record.get("cases_planned") is not None:
        lines.append(
            f"{name}'s intervals are about these {record['cases_planned']} cases only (cases fixed: they cover "
            "the trials' variation within these cases, not other tasks)."
        )
    bounds = _bounds(record)
    if bounds is not None and scored < planned:
        lines.append(
            f"Over all {planned} {units} {name}'s pass rate lies between {fmt_value(bounds[0])} "
            f"(pass_rate_planned = passed / {base}, every ungraded unit failed) and "
            f"{fmt_value(bounds[1])} (pass_rate_upper, every ungraded unit passed)."
        )
    ungraded = []
    if record.get("missing"):
        ungraded.append(f"{record['missing']} missing (no row at all): {missing_ids_text(record)}")
    ungraded += [f"{record[name_]} {name_}" for name_ in UNGRADED_OUTCOMES if record.get(name_)]
    if ungraded:
        lines.append("Ungraded: " + "; ".join(ungraded) + ".")
    if record.get("selective_missingness"):
        lines.append(f"Selective missingness: {record['selective_missingness']}.")
    return lines


@dataclass(frozen=True)
class Ranking:
    """The ranking note: its sentence, and whether the missing grades leave the highest rate unsettled.

    Attributes
    ----------
    text
        The sentence (:func:`ranking_note`).
    overlap
        The leader's range overlaps or touches another candidate's: ``pass_rate_scored`` does not rank
        (or separate) them. False when the order survives the missing grades.
    """

    text: str
    overlap: bool


def ranking_note(summary: pl.DataFrame) -> Ranking | None:
    """Whether the highest ``pass_rate_scored`` survives the missing grades, in one sentence and a flag.

    Each candidate's full-plan pass rate lies in [``pass_rate_planned``,
    ``pass_rate_upper``]. When another candidate's best case is above the
    leader's worst case, missing grades alone could reverse the order (ranges
    that only touch can at most tie). Candidates tied at the highest rate are
    named together. Returns None with fewer than two candidates with a pass
    rate.

    Returns
    -------
    Ranking or None
        The sentence, and whether the leader's range overlaps or touches another's (``overlap``), so that no
        reader has to find it in the words (a candidate may be named ``model touches v2``).

    Examples
    --------
    >>> summary = pl.DataFrame({"candidate": ["A", "B"], "planned": [4, 4], "scored": [2, 4],
    ...     "pass_rate_scored": [1.0, 0.75], "pass_rate_planned": [0.5, 0.75], "pass_rate_upper": [1.0, 0.75]})
    >>> ranking_note(summary).overlap
    True
    >>> print(ranking_note(summary).text)
    A has the highest pass_rate_scored (1.0), computed on only 2 of 4 planned units, but its full-plan range
    [0.5, 1.0] overlaps B [0.75, 0.75]: the missing grades alone could reverse the order, so pass_rate_scored
    does not rank these candidates.
    >>> tied = pl.DataFrame({"candidate": ["A", "B"], "planned": [2, 2], "scored": [2, 2],
    ...     "pass_rate_scored": [0.5, 0.5], "pass_rate_planned": [0.5, 0.5], "pass_rate_upper": [0.5, 0.5]})
    >>> print(ranking_note(tied).text)
    A and B share the highest pass_rate_scored (0.5), and no other candidate's best case is above their worst
    case (0.5): missing grades alone cannot reverse the order (sampling noise still can; see the intervals).
    """
    rows = [r for r in summary.iter_rows(named=True) if r.get("pass_rate_scored") is not None and _bounds(r)]
    if len(rows) < 2:
        return None
    best = max(r["pass_rate_scored"] for r in rows)
    leaders = [r for r in rows if r["pass_rate_scored"] == best]
    top = leaders[0]
    top_low, top_high = _bounds(top) or (0.0, 0.0)
    if len(leaders) == 1:
        lead, its, their = f"{top[CANDIDATE]} has the highest", "its", "its"
    else:
        names = ", ".join(r[CANDIDATE] for r in leaders[:-1]) + f" and {leaders[-1][CANDIDATE]}"
        lead, its, their = f"{names} share the highest", f"{top[CANDIDATE]}'s", "their"
    lead += f" pass_rate_scored ({fmt_value(best)})"
    # Under retry every the rates and their ranges are over observations, not planned units (SPEC §4).
    base = rate_base(top)
    scored, total = top.get("scored"), top.get(base)
    units, span = rated_units(base), range_name(base)
    if scored is not None and total is not None and scored != total:
        lead += f", computed on only {scored} of {total} {units}"
    overlapping, touching = [], []
    for r in rows:
        low, high = _bounds(r) or (0.0, 0.0)
        named = f"{r[CANDIDATE]} [{fmt_value(low)}, {fmt_value(high)}]"
        if r is not top and high > top_low and low <= top_high:
            overlapping.append(named)
        elif r is not top and r not in leaders and high == top_low:
            touching.append(named)
    if overlapping:
        others = ", ".join(overlapping)
        if len(overlapping) > RANGES_NAMED:
            others = f"{len(overlapping)} other candidates' ranges (e.g. {', '.join(overlapping[:RANGES_NAMED])})"
        return Ranking(
            f"{lead}, but {its} {span} [{fmt_value(top_low)}, {fmt_value(top_high)}] overlaps "
            f"{others}: the missing grades alone could reverse the order, so pass_rate_scored "
            "does not rank these candidates.",
            overlap=True,
        )
    if touching:
        others = ", ".join(touching[:RANGES_NAMED]) + (
            f" and {len(touching) - RANGES_NAMED} more" if len(touching) > RANGES_NAMED else ""
        )
        return Ranking(
            f"{lead}, but {its} {span} [{fmt_value(top_low)}, {fmt_value(top_high)}] touches {others} at "
            f"{fmt_value(top_low)}: the missing grades alone could make them equal (not reverse the order), so "
            "pass_rate_scored does not separate these candidates.",
            overlap=True,
        )
    return Ranking(
        f"{lead}, and no other candidate's best case is above {their} worst case ({fmt_value(top_low)}): missing "
        "grades alone cannot reverse the order (sampling noise still can; see the intervals).",
        overlap=False,
    )


#: The keys of :attr:`AuditReport.meta` that :func:`provenance_lines` writes under a label of its own;
#: any other key follows them by name.
PROVENANCE_KEYS: Final = (
    "plan_source",
    "plan_hash",
    "n_cases",
    "candidates",
    "trials",
    "planned_units",
    "dataset_versions",
    "results_source",
    "ledger_shape",
    "ledger_rows",
    "run_ids",
    "required_run_id",
    "retry",
    "max_attempts",
    "retry_on",
    "missing",
    "grade",
    "slices",
    "bins",
    "confidence",
    "alpha",
    "evalframe_version",
)


#: The keys under which the importers record what each export's grades were read from (``meta["exports"]``).
_GRADED_BY: Final = ("scorer", "metric", "stat")


def graded_by(meta: Mapping[str, Any]) -> str | None:
    """What the grades were read from, as the importers recorded it (``metric acc``); None when not recorded.

    Read from the ``scorer`` (Inspect), ``metric`` (lm-eval, DeepEval, …) or ``stat`` of each entry of
    ``meta["exports"]``, each name once in the order met; a ledger given with ``--results`` records none.

    Examples
    --------
    >>> graded_by({"exports": [{"metric": "acc"}, {"metric": "acc"}, {"format": "lm-eval results"}]})
    'metric acc'
    >>> graded_by({"exports": [{"scorer": "match"}, {"scorer": "includes"}]}), graded_by({})
    ('scorer match, includes', None)
    """
    seen: dict[str, list[str]] = {}
    for export in meta.get("exports") or []:
        key = next((k for k in _GRADED_BY if isinstance(export, Mapping) and export.get(k) is not None), None)
        if key is not None and str(export[key]) not in seen.setdefault(key, []):
            seen[key].append(str(export[key]))
    return "; ".join(f"{key} {', '.join(names)}" for key, names in seen.items()) or None


def _slices_line(meta: Mapping[str, Any], code: Callable[[Any], str]) -> str:
    """The slice columns, each binned one with its edges: ``len (bins cut at 40, 135)``."""
    bins = meta.get("bins") or {}
    cut = {name: f" (bins cut at {', '.join(edge_text(edge) for edge in edges)})" for name, edges in bins.items()}
    return ", ".join(code(name) + cut.get(name, "") for name in meta.get("slices") or []) or "none"


def provenance_lines(meta: Mapping[str, Any], *, markdown: bool = False) -> list[tuple[str, str]]:
    """What produced a report, as (label, text) pairs: plan, data, runs, policies, version.

    Every key of ``meta`` appears: the known ones in a fixed order under
    readable labels, any other (e.g. an importer's) after them by name.

    Parameters
    ----------
    meta
        :attr:`AuditReport.meta`.
    markdown
        Put identifiers (paths, hashes, policies) in code spans (:func:`markdown_code`) and write every
        other value as :func:`markdown_text`.

    Examples
    --------
    >>> meta = {"plan_source": "plan.csv", "plan_hash": "9b706404a107adbac3bd", "n_cases": 4,
    ...     "candidates": ["A", "B"], "trials": 1, "planned_units": 8, "retry": "first"}
    >>> for label, text in provenance_lines(meta)[:3]:
    ...     print(f"{label}: {text}")
    plan: plan.csv (hash 9b706404a107), 4 cases × 2 candidates × 1 trial(s) = 8 planned units
    plan hash: 9b706404a107adbac3bd
    candidates: A, B
    """

    def code(value: Any) -> str:
        return markdown_code(value) if markdown else str(value)

    def listed(value: Any, empty: str = "none recorded") -> str:
        items = [str(v) for v in (value or [])]
        return ", ".join(code(v) for v in items) if items else empty

    m = meta
    candidates = list(m.get("candidates") or [])
    retry = f"{code(m.get('retry'))}"
    if m.get("max_attempts") is not None:
        retry += f", max_attempts {m['max_attempts']}"
    if m.get("retry_on"):
        retry += f", retries allowed after {listed(m['retry_on'])}"
    lines = [
        (
            "plan",
            f"{code(m.get('plan_source'))} (hash {code(str(m.get('plan_hash', ''))[:12])}), {plan_size(m)}",
        ),
        ("plan hash", code(m.get("plan_hash"))),
        ("candidates", listed(candidates)),
        ("dataset versions", listed(m.get("dataset_versions"))),
        (
            "results",
            f"{code(m.get('results_source'))} ({m.get('ledger_shape')} ledger, {m.get('ledger_rows')} rows)",
        ),
        ("run ids", listed(m.get("run_ids"))),
        ("required run id", code(m["required_run_id"]) if m.get("required_run_id") else "none"),
        ("retry policy", retry),
        ("missing policy", code(m.get("missing"))),
        ("grade", code(m.get("grade"))),
        ("slices", _slices_line(m, code)),
        ("confidence, alpha", f"{m.get('confidence')}, {m.get('alpha')}"),
        ("evalframe version", str(m.get("evalframe_version"))),
    ]
    for key in sorted(k for k in m if k not in PROVENANCE_KEYS):
        value = m[key]
        if value is None:
            lines.append((key, "none"))
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
        lines.append((key, code(text) if markdown else text))
    return lines
