"""evalframe: audit AI evaluation results against a frozen plan before anyone believes a score.

The public API is re-exported here; everything else is private to its module.
"""

import gc as _gc

# Importing pandera (and with it pandas) makes about 70k objects that live as long as the process; the
# collections their allocations trigger meanwhile find nothing to free. They are held off during the
# import and the collector is left as it was: `import evalframe` after polars, 0.63 -> 0.57 s (median of 6).
_collecting = _gc.isenabled()
_gc.disable()
try:
    from evalframe.attempts import select_attempts
    from evalframe.audit import audit
    from evalframe.compare import Comparison, compare
    from evalframe.errors import AuditRefused, EvalframeError, InputFormatError, PlanError
    from evalframe.funnel import funnel
    from evalframe.load import load
    from evalframe.plan import Plan
    from evalframe.read import read
    from evalframe.report import AuditReport
    from evalframe.stats import achieved_power, cases_needed, detectable_difference
    from evalframe.stats.power import power
finally:
    if _collecting:
        _gc.enable()

__all__ = [
    "AuditRefused",
    "AuditReport",
    "Comparison",
    "EvalframeError",
    "InputFormatError",
    "Plan",
    "PlanError",
    "achieved_power",
    "audit",
    "cases_needed",
    "compare",
    "detectable_difference",
    "funnel",
    "load",
    "power",
    "read",
    "select_attempts",
]
