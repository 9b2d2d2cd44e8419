"""Importers: turn other tools' result exports into an evalframe plan and ledger.

Every importer is a function ``read(paths) -> Imported``. The plan comes from
what the export says was *planned* (dataset sample ids × epochs, the eval
split size, …) and the ledger from the rows actually present, so coverage is
always measured from rows, never from header totals. Where an export's header
and its rows disagree, the importer records that in ``notes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl

from evalframe.load import Loaded, PathLike
from evalframe.plan import Plan
from evalframe.problems import problems_frame
from evalframe.validate import CANONICAL_SCHEMA

#: Columns (and dtypes) of the ledger every importer returns (status-ledger shape,
#: see :mod:`evalframe.validate`): one row per attempt. An importer may drop
#: ``passed`` when its grades are not 0/1.
LEDGER_SCHEMA = pl.Schema(
    {
        name: CANONICAL_SCHEMA[name]
        for name in (
            "candidate",
            "case_id",
            "trial",
            "attempt",
            "run_id",
            "exec_status",
            "score_status",
            "score",
            "passed",
            "has_output",
            "limit",
            "line",
            "source",
        )
    }
)


@dataclass(frozen=True)
class Imported:
    """A plan and a canonical-shaped raw ledger read from another tool's export.

    Attributes
    ----------
    plan
        The frozen plan the export describes (cases, candidates, trials).
    ledger
        One row per attempt in the status-ledger shape (see
        :mod:`evalframe.validate`): ``candidate``, ``case_id``, ``trial``,
        ``attempt``, ``run_id``, ``exec_status``, ``score_status``,
        ``score``, optional ``passed``, ``has_output``, ``limit``, plus
        ``line`` and ``source`` (the file and place each row came from).
    notes
        Non-refusing findings of the import, as a problems table (e.g.
        ``header_rows_disagree``, ``id_normalised``), with ``refusing`` False
        unless the file itself is malformed.
    info
        Export-level facts for the report: run status, dataset size, task,
        model, run ids, per source file.
    files
        The export files read, sorted, each once (a folder given stands for
        the files found in it; a file another one names, such as an
        every_eval_ever instance file or an lm-eval results file beside its
        samples, is among them).
    """

    plan: Plan
    ledger: pl.DataFrame
    notes: pl.DataFrame = field(default_factory=problems_frame)
    info: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def results(self) -> Loaded:
        """The ledger with the import's notes, as :func:`evalframe.audit` takes results.

        ``ef.audit(imported.plan, imported.results)`` reports the notes among
        the audit's problems and records the exports' headers (so a header's
        case reducer is compared with the declared one, as on the command
        line); ``ef.audit(imported.plan, imported.ledger)`` audits the same
        rows without them. An import with a refusing note
        never gets here: ``read`` raises
        :class:`~evalframe.errors.ImportUnreadable` (a file it cannot read)
        or :class:`~evalframe.importers._kit.ImportRefused`.
        """
        return Loaded(self.ledger.lazy(), self.notes, self.plan.source, provenance={"exports": self.info})


class Reader(Protocol):
    """The signature every importer's ``read`` has."""

    def __call__(self, paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
        """Read the export files; ``score`` names the scorer/metric/stat to use (None: the importer's default)."""
        ...


def registry() -> dict[str, Reader]:
    """Importers by format name (imported lazily so a missing one never breaks the others)."""
    from evalframe.importers import (
        deepeval,
        evalscope,
        every_eval_ever,
        helm,
        inspect_ai,
        lighteval,
        lm_eval,
        openai_evals,
        promptfoo,
        ragas,
    )

    return {
        "inspect": inspect_ai.read,
        "lm-eval": lm_eval.read,
        "helm": helm.read,
        "promptfoo": promptfoo.read,
        "openai-evals": openai_evals.read,
        "evalscope": evalscope.read,
        "ragas": ragas.read,
        "deepeval": deepeval.read,
        "lighteval": lighteval.read,
        "every-eval-ever": every_eval_ever.read,
    }
