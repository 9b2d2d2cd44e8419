"""Statistics of the audit and the comparison: every formula cites its source.

- :mod:`~evalframe.stats.intervals` — the Wilson interval, the exact McNemar test, worst/best-case bounds;
- :mod:`~evalframe.stats.clustered` — rates and bounded means over units clustered in cases (small-sample
  corrected: t with G − 1 degrees of freedom);
- :mod:`~evalframe.stats.paired` — paired differences of two candidates on the same units;
- :mod:`~evalframe.stats.detectable` — the power and minimum detectable difference of compare's test;
- :mod:`~evalframe.stats.power` — a design's power analysis (the ``evalframe power`` command).

The names other modules use are re-exported here, except :func:`evalframe.stats.power.power`, which would
hide its module (``evalframe.power``, the public function, is it).
"""

from evalframe.stats.clustered import (
    MIN_CASES,
    RateEstimate,
    SkewCheck,
    Target,
    bounded_mean_interval,
    critical_value,
    rare_case_limit,
    rate_interval,
    skew_check,
)
from evalframe.stats.detectable import Detectable, achieved_power, cases_needed, detectable_difference
from evalframe.stats.intervals import (
    DEFAULT_CONFIDENCE,
    bounds,
    check_confidence,
    mcnemar_exact,
    normal_quantile,
    real_number,
    wilson_bounds,
    wilson_interval,
)
from evalframe.stats.paired import PairedTest, paired_mean_difference, paired_rate_difference
from evalframe.stats.power import PowerPlan, pair_correlation_at, pair_correlation_limit

__all__ = [
    "DEFAULT_CONFIDENCE",
    "MIN_CASES",
    "Detectable",
    "PairedTest",
    "PowerPlan",
    "RateEstimate",
    "SkewCheck",
    "Target",
    "achieved_power",
    "bounded_mean_interval",
    "bounds",
    "check_confidence",
    "cases_needed",
    "critical_value",
    "detectable_difference",
    "mcnemar_exact",
    "normal_quantile",
    "pair_correlation_at",
    "pair_correlation_limit",
    "paired_mean_difference",
    "paired_rate_difference",
    "rare_case_limit",
    "rate_interval",
    "real_number",
    "skew_check",
    "wilson_bounds",
    "wilson_interval",
]
