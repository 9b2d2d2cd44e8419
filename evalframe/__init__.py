"""evalframe: audit AI evaluation results against a frozen plan before anyone believes a score.

The public API is re-exported here; everything else is private to its module.
``audit``, ``compare``, ``funnel`` and ``load`` are modules that can be called (see
:mod:`evalframe._callable`): ``ef.audit(plan, ledger)`` calls the function and
``import evalframe.audit as m`` gives the module. Type checkers see the
functions.
"""

from typing import TYPE_CHECKING

from evalframe.attempts import select_attempts
from evalframe.compare import Comparison
from evalframe.errors import (
    AuditRefused,
    EvalframeError,
    ImportUnreadable,
    InputFormatError,
    LimitExceeded,
    MissingExtra,
    PlanError,
)
from evalframe.load.limit import Limits, limits
from evalframe.plan import Plan
from evalframe.read import read
from evalframe.report import AuditReport
from evalframe.stats import achieved_power, cases_needed, detectable_difference
from evalframe.stats.power import power

if TYPE_CHECKING:
    from evalframe.audit import audit
    from evalframe.compare import compare
    from evalframe.funnel import funnel
    from evalframe.load import load
else:
    from evalframe import audit, compare, funnel, load

__all__ = [
    "AuditRefused",
    "AuditReport",
    "Comparison",
    "EvalframeError",
    "ImportUnreadable",
    "InputFormatError",
    "LimitExceeded",
    "MissingExtra",
    "Limits",
    "Plan",
    "PlanError",
    "achieved_power",
    "audit",
    "cases_needed",
    "compare",
    "detectable_difference",
    "funnel",
    "limits",
    "load",
    "power",
    "read",
    "select_attempts",
]
