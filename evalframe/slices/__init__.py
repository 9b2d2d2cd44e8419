"""Break the funnel down by slice and test whether missingness depends on the slice (SPEC §5).

A headline rate whose missing units concentrate in one slice must say so: a
candidate that skipped every ``long_context`` case has a better-looking
``pass_rate_scored`` for a reason that has nothing to do with quality.

:mod:`~evalframe.slices.breakdown` counts (the slice funnel, bins, case
counts per slice value); :mod:`~evalframe.slices.missingness` tests (the
case-level permutation test, Holm's correction, the summary's flag). Every
name is re-exported here.
"""

from evalframe.columns import CASES
from evalframe.slices.breakdown import (
    GRADED_OUTCOMES,
    MISSING_RATE,
    MISSING_RATIO,
    SLICE_COLUMN,
    SLICE_VALUE,
    UNGRADED,
    Bins,
    bin_edges,
    binned,
    case_slices,
    cases_by_slice,
    edge_text,
    interval_labels,
    interval_of,
    missing_in_one_slice,
    slice_funnel,
    slice_rates,
)
from evalframe.slices.missingness import (
    CORRECTION,
    MISSINGNESS_SHOWN,
    MONTE_CARLO_RESAMPLES,
    TIE_TOLERANCE,
    WELCH_TEST,
    IndependenceTest,
    case_permutation_test,
    detectable_shift,
    detectable_words,
    holm,
    independence_test,
    missingness_shown,
    missingness_tests,
    selective_flag,
)

__all__ = [
    "Bins",
    "CASES",
    "CORRECTION",
    "GRADED_OUTCOMES",
    "IndependenceTest",
    "MISSINGNESS_SHOWN",
    "MISSING_RATE",
    "MISSING_RATIO",
    "MONTE_CARLO_RESAMPLES",
    "SLICE_COLUMN",
    "SLICE_VALUE",
    "TIE_TOLERANCE",
    "UNGRADED",
    "bin_edges",
    "binned",
    "WELCH_TEST",
    "case_permutation_test",
    "detectable_shift",
    "detectable_words",
    "case_slices",
    "cases_by_slice",
    "holm",
    "independence_test",
    "edge_text",
    "interval_labels",
    "interval_of",
    "missing_in_one_slice",
    "missingness_shown",
    "missingness_tests",
    "selective_flag",
    "slice_funnel",
    "slice_rates",
]
