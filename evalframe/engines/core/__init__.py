"""The audit's row work expressed once in narwhals, for any lazy backend with ordered windows (Spark, polars).

Everything here is lazy and returns narwhals frames; nothing is collected. The caller (an engine such as
:mod:`evalframe.engines.spark`) decides what is written where and collects only small aggregates: problem
counts per kind with their first rows, outcome counts per candidate and the case patterns of
:func:`case_patterns` (how many cases have each set of per-case sums). The statistics stay in
:mod:`evalframe.funnel` and :mod:`evalframe.stats.clustered`, shared with the polars path.

The row checks and the canonical columns are :mod:`evalframe.validate`'s own (:mod:`evalframe.validate.canonical`,
which the polars engine runs too); so are the retry policies (:func:`evalframe.attempts.marked_attempts`), the
units' outcomes and the per-case sums (:func:`evalframe.funnel.unit_outcomes`, :func:`~evalframe.funnel.case_sums`,
:func:`~evalframe.funnel.case_patterns`), re-exported here; the identity checks word their problems as
:mod:`evalframe.reconcile` does (SPEC §3). The strict CSV reader with its line numbers stays on polars.

One module a step: :mod:`~evalframe.validate.rows` (the options, problem frames and the one-pass
:func:`checked`), :mod:`~evalframe.validate.canonical` (:func:`canonical`: the canonical ledger and its row
checks), :mod:`~evalframe.reconcile` (:func:`identity`: the ledger against the plan) and
:mod:`~evalframe.engines.core.outcomes` (:func:`select_attempts` over windows per unit, the outcome counts).
"""

from __future__ import annotations

from evalframe.attempts import Selection
from evalframe.engines.core.outcomes import outcome_counts, select_attempts
from evalframe.funnel import OUTCOME_COUNT, case_patterns, case_sums, outcome, unit_outcomes
from evalframe.reconcile import Identity, Keys, identity
from evalframe.validate.canonical import CANONICAL, Canonical, canonical
from evalframe.validate.rows import PROBLEM_COLUMNS, Lazy, Options, checked, problems

__all__ = [
    "CANONICAL",
    "OUTCOME_COUNT",
    "PROBLEM_COLUMNS",
    "Canonical",
    "Identity",
    "Keys",
    "Lazy",
    "Options",
    "Selection",
    "canonical",
    "case_patterns",
    "case_sums",
    "checked",
    "identity",
    "outcome",
    "outcome_counts",
    "problems",
    "select_attempts",
    "unit_outcomes",
]
