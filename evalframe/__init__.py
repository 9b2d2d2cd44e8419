"""evalframe: audit AI evaluation results against a frozen plan before anyone believes a score.

The public API is re-exported here; everything else is private to its module.
"""

from evalframe.attempts import select_attempts
from evalframe.audit import audit
from evalframe.compare import Comparison, compare
from evalframe.errors import AuditRefused, EvalframeError, InputFormatError, PlanError
from evalframe.funnel import funnel
from evalframe.load import load
from evalframe.plan import Plan
from evalframe.report import AuditReport

__all__ = [
    "AuditRefused",
    "AuditReport",
    "Comparison",
    "EvalframeError",
    "InputFormatError",
    "Plan",
    "PlanError",
    "audit",
    "compare",
    "funnel",
    "load",
    "select_attempts",
]
