"""A refused batch, for people and CI: counts by kind, then the first rows of each kind (kind, line, key).

No rate exists for a refused batch; what it gets is its problems: the
Markdown, JSON and HTML reports of its output folder, and the table the
command prints on stderr (:func:`evalframe.report.terminal.print_refusal`).
Each lists the counts by (kind, refusing) and, for every refusing kind, its
first rows with their line and key columns;
``problems.parquet`` holds every problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.columns import KIND, REFUSING
from evalframe.progress import Progress
from evalframe.report.format import markdown_table
from evalframe.report.htmlkit import el, frame_table, page
from evalframe.report.jsondoc import note_dict
from evalframe.report.output import ExchangeGuard, write_output
from evalframe.report.view import REFUSAL_ROWS_SHOWN, Note, counts_by_kind, notes_of


@dataclass(frozen=True)
class Refusal:
    """What a refused batch shows: how many refusing problems, counts by kind, the first rows of each kind."""

    refusing: int
    #: kind, refusing, count: every problem.
    counts: pl.DataFrame
    #: One note per refusing kind, with its first rows.
    kinds: tuple[Note, ...]
    #: Whether problems.parquet is written beside it (an output folder); else the lead says how to get it.
    written: bool = True

    @property
    def first_rows(self) -> pl.DataFrame:
        """The first rows of every refusing kind, kinds in name order."""
        frames = [n.rows for n in self.kinds]
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()

    @property
    def lead(self) -> str:
        """The sentence that opens every rendering; it names problems.parquet as written only when it is.

        Examples
        --------
        >>> from dataclasses import replace
        >>> refusal = build_refusal(pl.DataFrame({"kind": ["unknown_case"], "detail": ["x"], "refusing": [True]}))
        >>> print(replace(refusal, written=False).lead)
        No rate was computed: 1 refusing problem(s); --out DIR writes every problem to problems.parquet.
        """
        where = (
            "every problem is in problems.parquet"
            if self.written
            else "--out DIR writes every problem to problems.parquet"
        )
        return f"No rate was computed: {self.refusing} refusing problem(s); {where}."

    @property
    def title(self) -> str:
        """The heading of the first rows."""
        return f"refusing problems (first {self.first_rows.height} of {self.refusing})"


def build_refusal(problems: pl.DataFrame, *, counts: pl.DataFrame | None = None) -> Refusal:
    """The refusal of a batch from its problems table (see :mod:`evalframe.problems`).

    ``counts`` (``kind``, ``refusing``, ``count``) counts every problem when ``problems`` holds only the
    first rows of each kind (``AuditRefused.problem_counts``); by default the rows are counted.

    Examples
    --------
    >>> problems = pl.DataFrame({"kind": ["duplicate_key"] * 30 + ["unknown_case"], "line": [*range(2, 32), 9],
    ...     "detail": ["twice"] * 30 + ["not planned"], "refusing": [True] * 31})
    >>> refusal = build_refusal(problems)
    >>> refusal.refusing, refusal.title, refusal.first_rows.get_column("line").to_list()[-3:]
    (31, 'refusing problems (first 21 of 31)', [20, 21, 9])
    """
    refusing = problems.filter(pl.col(KIND).is_not_null() & pl.col(REFUSING))
    if counts is None:
        counts = problems.group_by(KIND, REFUSING).len("count").sort(KIND, REFUSING)
    counts = counts.filter(pl.col(KIND).is_not_null()).sort(KIND, REFUSING)
    by_kind = dict(counts.filter(pl.col(REFUSING)).group_by(KIND).agg(pl.col("count").sum()).iter_rows())
    # Each kind's count is of every problem, not of the first rows kept (AuditRefused.problems is bounded).
    kinds = notes_of(refusing, shown=REFUSAL_ROWS_SHOWN, counts=by_kind)
    return Refusal(refusing=int(sum(by_kind.values())), counts=counts, kinds=kinds)


def refusal_dict(refusal: Refusal) -> dict[str, Any]:
    """The refusal as a JSON-ready dict: counts, then each refusing kind with texts and rows (``refusing_kinds``)."""
    return {
        "refused": True,
        "refusing_problems": refusal.refusing,
        "refusing_problems_by_kind": {n.kind: n.count for n in refusal.kinds},
        # Every problem by kind, as an audited report.json has it; with each kind's refusing flag beside.
        "problems_by_kind": counts_by_kind(refusal.counts),
        "problem_counts": refusal.counts.to_dicts(),
        "first_refusing_problems": refusal.first_rows.to_dicts(),
        "refusing_kinds": [note_dict(n) for n in refusal.kinds],
    }


def refusal_json(refusal: Refusal) -> str:
    """:func:`refusal_dict` as indented JSON."""
    return json.dumps(refusal_dict(refusal), indent=2, ensure_ascii=False, default=str)


def refusal_markdown(refusal: Refusal, *, level: int = 1) -> str:
    """The refusal as Markdown: title, lead, the counts by kind, the first rows (kind, key, line, detail).

    ``report.md`` of a refused batch (``level=1``), and what ``--format markdown`` (``level=1``) and
    ``--format github`` (``level=3``, a job summary's heading) print on stdout, so a CI summary is
    never empty exactly when the batch is refused. ``level`` is the title's heading level; sections are
    one below.

    Examples
    --------
    >>> problems = pl.DataFrame({"kind": ["duplicate_key", "duplicate_key", "unknown_case"], "line": [2, 3, 4],
    ...     "detail": ["twice", "twice", "not planned"], "refusing": [True] * 3})
    >>> print(refusal_markdown(build_refusal(problems), level=3))
    ### evalframe: batch refused
    <BLANKLINE>
    No rate was computed: 3 refusing problem(s); every problem is in problems.parquet.
    <BLANKLINE>
    #### problems by kind
    <BLANKLINE>
    | kind | refusing | count |
    |---|---|---|
    | duplicate_key | True | 2 |
    | unknown_case | True | 1 |
    <BLANKLINE>
    #### refusing problems (first 3 of 3)
    <BLANKLINE>
    | kind | line | detail |
    |---|---|---|
    | duplicate_key | 2 | twice |
    | duplicate_key | 3 | twice |
    | unknown_case | 4 | not planned |
    """
    head, section = "#" * level, "#" * (level + 1)
    return "\n\n".join(
        [
            f"{head} evalframe: batch refused",
            refusal.lead,
            f"{section} problems by kind",
            markdown_table(refusal.counts),
            f"{section} {refusal.title}",
            markdown_table(refusal.first_rows),
        ]
    )


def refusal_texts(problems: pl.DataFrame, *, counts: pl.DataFrame | None = None) -> dict[str, str]:
    """``report.md``, ``report.json`` and ``report.html`` of a refused batch.

    Examples
    --------
    >>> problems = pl.DataFrame({"kind": ["duplicate_key"], "line": [3], "detail": ["<b>x</b>"], "refusing": [True]})
    >>> texts = refusal_texts(problems)
    >>> json.loads(texts["report.json"])["refusing_problems_by_kind"]
    {'duplicate_key': 1}
    >>> "&lt;b&gt;x&lt;/b&gt;" in texts["report.html"], texts["report.md"].splitlines()[0]
    (True, '# evalframe: batch refused')
    """
    r = build_refusal(problems, counts=counts)
    markdown = refusal_markdown(r)
    html = page(
        "evalframe: batch refused",
        el("h1", "evalframe: batch refused"),
        el("p", r.lead, cls="refused"),
        el("h2", "problems by kind"),
        frame_table(r.counts),
        el("h2", r.title),
        frame_table(r.first_rows, "problems"),
    )
    return {"report.md": markdown + "\n", "report.json": refusal_json(r) + "\n", "report.html": html}


def write_refusal(
    problems: pl.DataFrame,
    out: str | os.PathLike[str],
    *,
    command: str = "python",
    inputs: Iterable[str | os.PathLike[str]] = (),
    progress: Progress | None = None,
    counts: pl.DataFrame | None = None,
    every: pl.LazyFrame | None = None,
    guard: ExchangeGuard = nullcontext,
) -> list[Path]:
    """Write a refused batch as evalframe's output folder: ``problems.parquet`` and the refusal's reports.

    The folder follows the rules of :func:`~evalframe.report.output.write_output`: an earlier
    output's rates are replaced as a whole, so a refusal never sits beside
    them. The texts are :func:`refusal_texts`. When ``problems`` holds only
    the first rows of each kind (``AuditRefused.problems``), ``counts``
    counts them all (``AuditRefused.problem_counts``) and ``every`` is the
    whole list (``AuditRefused.all_problems()``), streamed to
    ``problems.parquet``. ``guard`` is entered around the exchange of the
    folder (see :func:`~evalframe.report.output.write_output`).

    Examples
    --------
    >>> import tempfile, evalframe as ef
    >>> plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["quote"]}), candidates=["A"])
    >>> try:
    ...     ef.audit(plan, pl.DataFrame({"candidate": ["A"], "case_id": ["quote"], "passed": [2]}))
    ... except ef.AuditRefused as refused:
    ...     with tempfile.TemporaryDirectory() as folder:
    ...         names = [p.name for p in write_refusal(refused.problems, folder + "/out")]
    >>> names
    ['problems.parquet', 'report.html', 'report.json', 'report.md']
    """
    texts = refusal_texts(problems, counts=counts)
    return write_output(
        out,
        {"problems": problems if every is None else every},
        texts,
        command=command,
        outcome="refused",
        inputs=inputs,
        progress=progress,
        guard=guard,
    )
