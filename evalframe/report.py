"""The frozen audit report and its writers (Parquet, Markdown, JSON).

A report is immutable: its tables are polars DataFrames sorted by key, so the
same plan and ledger always give byte-identical tables whatever the row order
of the inputs. Writing is atomic: files are written into a temporary folder
beside the destination and moved into place only when all were written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.columns import CANDIDATE, KIND, REFUSING
from evalframe.funnel import COUNT_COLUMNS, RATE_COLUMNS

#: Column descriptions, stored in Parquet metadata and shown in docs.
DESCRIPTIONS: Mapping[str, str] = {
    "planned": "planned units (candidate × case × trial)",
    "attempted": "units with a row whose execution started",
    "completed": "units whose counted attempt completed",
    "with_output": "completed units that produced an output",
    "scored": "units with a valid grade",
    "passed": "scored units that passed",
    "failed": "scored units that did not pass (wrong answers)",
    "missing": "planned units with no row at all (not failures)",
    "not_started": "units skipped or cancelled before running",
    "exec_failed": "units whose execution timed out or errored",
    "no_output": "completed units without an output",
    "judge_failed": "units whose grader could not produce a valid judgment",
    "not_scored": "completed units that were not graded",
    "completion_rate": "completed / planned",
    "scored_coverage": "scored / planned",
    "pass_rate_scored": "passed / scored: quality given a valid grade; null when scored = 0",
    "pass_rate_planned": "passed / planned: worst case of the full-plan pass rate",
    "pass_rate_upper": "(passed + planned − scored) / planned: best case if every ungraded unit passed",
    "missing_cases": "distinct cases with at least one missing unit",
    "missing_case_ids": "the first 20 such case ids, sorted (units.parquet lists every missing unit)",
}


def _fmt(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    return str(value)


def markdown_table(frame: pl.DataFrame) -> str:
    """Render a frame as a GitHub Markdown table (nulls as ``null``).

    Examples
    --------
    >>> print(markdown_table(pl.DataFrame({"candidate": ["A"], "scored_coverage": [0.5]})))
    | candidate | scored_coverage |
    |---|---|
    | A | 0.5 |
    """
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(_fmt(v).replace("|", "\\|") for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join([head, rule, *body])


def write_parquet_atomic(
    tables: Mapping[str, pl.DataFrame], out: str | os.PathLike[str], texts: Mapping[str, str] | None = None
) -> list[Path]:
    """Write tables as ``<name>.parquet`` (and text files) into ``out`` atomically.

    Everything is written to a temporary folder inside ``out``'s parent, then
    each file is moved into place with :func:`os.replace`; on any error
    nothing half-written is left in ``out``.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    dest = Path(out)
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".evalframe-", dir=dest))
    written: list[Path] = []
    try:
        for name, frame in tables.items():
            meta = {c: DESCRIPTIONS[c] for c in frame.columns if c in DESCRIPTIONS}
            frame.write_parquet(tmp / f"{name}.parquet", metadata={"evalframe.descriptions": json.dumps(meta)})
        for name, text in (texts or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
        for f in sorted(tmp.iterdir()):
            target = dest / f.name
            os.replace(f, target)
            written.append(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return written


@dataclass(frozen=True)
class AuditReport:
    """The result of an audit. Immutable; every table is sorted by key.

    Attributes
    ----------
    summary
        One row per candidate: the funnel counts (UInt32), rates (Float64
        fractions named by their denominators, see :mod:`evalframe.funnel`)
        ``missing_cases`` (UInt32, distinct cases with a missing unit) and
        ``missing_case_ids`` (List[String], the first 20 of them, sorted).
    units
        One row per planned unit (per counted attempt under policy
        ``every``): plan columns, the counted attempt's ledger columns,
        ``counted_attempt``, ``attempts`` and ``outcome``.
    attempts
        Every ledger row of a planned unit with ``attempts`` and ``counts``.
    problems
        Non-refusing problems (missing units, retry flags); see
        :mod:`evalframe.problems`.
    slices
        One row per (candidate, slice column, slice value): the funnel,
        ``missing_rate`` and ``missing_ratio`` (see :mod:`evalframe.slices`);
        empty when no slice was declared.
    missingness
        One row per (candidate, slice column): the test of independence
        between slice and missingness; empty when no slice was declared.
    meta
        Provenance: evalframe version, plan hash and source, results
        source, candidates, trials, run ids, policies.
    """

    summary: pl.DataFrame
    units: pl.DataFrame
    attempts: pl.DataFrame
    problems: pl.DataFrame
    slices: pl.DataFrame = field(default_factory=pl.DataFrame)
    missingness: pl.DataFrame = field(default_factory=pl.DataFrame)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, pl.DataFrame]:
        """The report's tables by file stem."""
        tables = {"summary": self.summary, "units": self.units, "attempts": self.attempts, "problems": self.problems}
        if self.slices.width:
            tables |= {"slices": self.slices, "missingness": self.missingness}
        return tables

    def to_markdown(self) -> str:
        """Render the report as Markdown: provenance, funnel, rates, missing units, problems."""
        m = self.meta
        counts = self.summary.select(CANDIDATE, *COUNT_COLUMNS)
        rates = self.summary.select(CANDIDATE, *RATE_COLUMNS)
        lines = [
            "# evalframe audit",
            "",
            f"- plan: `{m.get('plan_source')}` (hash `{str(m.get('plan_hash', ''))[:12]}`), "
            f"{m.get('n_cases')} cases × {len(m.get('candidates', []))} candidates × {m.get('trials')} trial(s) "
            f"= {m.get('planned_units')} planned units",
            f"- results: `{m.get('results_source')}`; run ids: {', '.join(m.get('run_ids') or []) or 'none recorded'}",
            f"- retry policy: `{m.get('retry')}`; missing policy: `{m.get('missing')}`; grade: `{m.get('grade')}`",
            f"- evalframe {m.get('evalframe_version')}",
            "",
            "## Funnel (counts)",
            "",
            markdown_table(counts),
            "",
            "## Rates (each named by its denominator)",
            "",
            markdown_table(rates),
            "",
            "`pass_rate_scored` = passed / scored, `pass_rate_planned` = passed / planned (worst case), "
            "`pass_rate_upper` = (passed + planned − scored) / planned (best case).",
            "",
            "## Missing units",
            "",
        ]
        missing = self.summary.select(CANDIDATE, "missing", "missing_cases", "missing_case_ids")
        lines.append(markdown_table(missing))
        if self.missingness.width:
            lines += ["", "## Missingness by slice", ""]
            tests = self.missingness.select(
                CANDIDATE, "slice_column", "planned", "missing", "test", "p_value", "selective", "stands_out"
            )
            lines.append(markdown_table(tests))
            lines += [
                "",
                markdown_table(
                    self.slices.select(
                        CANDIDATE,
                        "slice_column",
                        "slice_value",
                        "planned",
                        "missing",
                        "missing_rate",
                        "scored",
                        "pass_rate_scored",
                    )
                ),
            ]
        lines += ["", "## Problems (not refusing)", ""]
        if self.problems.height:
            lines.append(markdown_table(self.problems.group_by(KIND).len("count").sort(KIND)))
        else:
            lines.append("none")
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary: meta, summary rows, problem counts by kind."""
        return {
            "meta": dict(self.meta),
            "summary": self.summary.to_dicts(),
            "problems_by_kind": dict(self.problems.group_by(KIND).len().sort(KIND).iter_rows()),
        }

    def to_json(self) -> str:
        """The :meth:`to_dict` content as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, default=str)

    def write(self, out: str | os.PathLike[str]) -> list[Path]:
        """Write every table as Parquet plus ``report.md`` and ``report.json`` into ``out``, atomically."""
        return write_parquet_atomic(
            self.tables(), out, {"report.md": self.to_markdown(), "report.json": self.to_json() + "\n"}
        )


def refusing(problems: pl.DataFrame) -> pl.DataFrame:
    """The refusing rows of a problems table."""
    return problems.filter(pl.col(REFUSING))
