"""Ledger rows built in one place: the row shape, verdicts kept only when complete, case ids of several tasks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from evalframe.columns import ATTEMPT, CANDIDATE, CASE_ID, LINE, PASSED, SCORE_STATUS, SOURCE, TRIAL
from evalframe.importers import LEDGER_SCHEMA

#: The ledger's column names, in :data:`~evalframe.importers.LEDGER_SCHEMA` order.
_COLUMNS: Final = tuple(LEDGER_SCHEMA.names())


@dataclass(frozen=True)
class CaseNames:
    """How a sample id of a task becomes a case id: ``<task>/<id>`` when several tasks are read together.

    Sample 1 of one task is then never sample 1 of another; with one task the id is the case id.

    Examples
    --------
    >>> names = CaseNames.of(["arc", "gsm8k"])
    >>> names("arc", 3), names.prefix("arc"), CaseNames.of(["arc"])("arc", 3)
    ('arc/3', 'arc/', '3')
    """

    prefixed: bool

    @classmethod
    def of(cls, tasks: Iterable[str]) -> CaseNames:
        """The naming of an import that reads ``tasks``."""
        return cls(len(set(tasks)) > 1)

    def __call__(self, task: str, raw: int | str) -> str:
        return f"{task}/{raw}" if self.prefixed else str(raw)

    def prefix(self, task: str) -> str | None:
        """What precedes the sample ids of ``task`` in case ids (None: nothing)."""
        return f"{task}/" if self.prefixed else None


def ledger_row(
    candidate: str,
    case_id: str,
    *,
    score_status: str,
    line: int,
    source: str,
    score: float | None = None,
    passed: bool | None = None,
    has_output: bool | None = None,
    trial: int = 1,
    attempt: int = 1,
    run_id: str | None = None,
    exec_status: str = "completed",
    limit: str | None = None,
) -> dict[str, Any]:
    """One ledger row (one attempt, see :data:`~evalframe.importers.LEDGER_SCHEMA`).

    Trial and attempt are 1 and ``exec_status`` is ``completed`` unless the
    format says otherwise.

    Examples
    --------
    >>> row = ledger_row("m", "q1", score_status="scored", score=0.5, line=2, source="r.csv")
    >>> row["exec_status"], row["score_status"], row["trial"], row["attempt"], row["limit"]
    ('completed', 'scored', 1, 1, None)
    """
    # The values in the order of LEDGER_SCHEMA's columns, the one statement of the row shape.
    values = (candidate, case_id, trial, attempt, run_id, exec_status, score_status, score, passed, has_output)
    return dict(zip(_COLUMNS, (*values, limit, line, source), strict=True))


def ledger_frame(rows: Iterable[Mapping[str, Any]], *, schema: pl.Schema = LEDGER_SCHEMA) -> pl.DataFrame:
    """The ledger of ``rows`` (:func:`ledger_row` dicts) in every import's order: unit, attempt, file, line."""
    return pl.DataFrame(list(rows), schema=schema).sort(CANDIDATE, CASE_ID, TRIAL, ATTEMPT, SOURCE, LINE)


def passed_if_complete(ledger: pl.DataFrame) -> pl.DataFrame:
    """The ledger without ``passed`` when a scored row has no verdict of the export's own.

    The audit then derives every verdict from the score (``--grade binary``: a score of 1;
    ``--grade numeric``: ``--pass-threshold``), never some from the export and some from the score.

    Examples
    --------
    >>> rows = pl.DataFrame({"score_status": ["scored", "scored"], "score": [1.0, 0.5], "passed": [True, None]})
    >>> passed_if_complete(rows).columns
    ['score_status', 'score']
    """
    if ledger.filter(pl.col(SCORE_STATUS) == "scored").get_column(PASSED).null_count():
        return ledger.drop(PASSED)
    return ledger
