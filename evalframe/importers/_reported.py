"""The headline values an export reported itself, recorded as data for the audit's reconciliation.

Every importer that reads an export's own headline (Inspect's ``results.scores``, lm-eval's results JSON,
promptfoo's stats, …) records it the same way, in its per-file info under
:data:`~evalframe.columns.REPORTED_HEADLINES`; :func:`evalframe.funnel.reported.reconciliation` reads it.
Only metrics that estimate the pass rate (a mean of 0/1 grades: ``accuracy``, ``mean``, ``acc``) are
recorded: a standard error or a count is no rate to reconcile.
"""

from __future__ import annotations

import math
from typing import Any

from evalframe.columns import DENOMINATOR_OF, IMPLIED_DENOMINATOR, METRIC, REPORTED, TOOL


def headline(
    tool: str, metric: str, value: Any, *, denominator: Any = None, of: str | None = None
) -> dict[str, Any] | None:
    """One reported headline, or None when ``value`` is not a finite number.

    ``denominator`` is kept only when it is a non-negative integer (a count the export states); ``of`` says
    what it counts (``"scored samples"``).

    Examples
    --------
    >>> headline("Inspect", "accuracy", 0.75, denominator=4, of="scored samples")["implied_denominator"]
    4
    >>> headline("Inspect", "accuracy", "NaN") is None, headline("Inspect", "accuracy", float("nan")) is None
    (True, True)
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    counted = isinstance(denominator, int) and not isinstance(denominator, bool) and denominator >= 0
    return {
        TOOL: tool,
        METRIC: metric,
        REPORTED: float(value),
        IMPLIED_DENOMINATOR: denominator if counted else None,
        DENOMINATOR_OF: of if counted else None,
    }
