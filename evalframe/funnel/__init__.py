"""Per-unit outcomes, the funnel of counts and rates, and their case-level intervals (SPEC §2).

``planned ≥ attempted ≥ completed ≥ with_output ≥ scored ≥ passed``; every
rate is named by its denominator and sits next to its counts. A missing unit
is ``missing``: never a failure, never a pass, never dropped from ``planned``.

``evalframe.funnel`` names the function :func:`evalframe.funnel.counts.funnel`,
re-exported here. The package holds :mod:`~evalframe.funnel.counts` (outcomes, counts, rates) and
:mod:`~evalframe.funnel.uncertainty` (intervals over cases, case reducers).
"""

from evalframe.funnel.counts import (
    COUNT_COLUMNS,
    RATE_COLUMNS,
    funnel,
    funnel_from_outcome_counts,
    funnel_rates,
    outcome,
    outcome_in,
    unit_outcomes,
)
from evalframe.funnel.uncertainty import (
    CASE_SUM_COLUMNS,
    OUTCOME_COUNT,
    REDUCERS,
    case_patterns,
    case_sums,
    check_reducer,
    collected_patterns,
    is_pass_fail,
    reduce_case,
    reducer_count,
    reducer_meaning,
    uncertainty_from_case_patterns,
    with_uncertainty,
)

__all__ = [
    "CASE_SUM_COLUMNS",
    "OUTCOME_COUNT",
    "COUNT_COLUMNS",
    "RATE_COLUMNS",
    "REDUCERS",
    "case_patterns",
    "case_sums",
    "check_reducer",
    "collected_patterns",
    "funnel",
    "funnel_from_outcome_counts",
    "funnel_rates",
    "outcome",
    "is_pass_fail",
    "outcome_in",
    "reduce_case",
    "reducer_count",
    "reducer_meaning",
    "uncertainty_from_case_patterns",
    "unit_outcomes",
    "with_uncertainty",
]
