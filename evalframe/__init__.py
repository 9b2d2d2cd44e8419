"""evalframe: audit AI evaluation results against a frozen plan before anyone believes a score.

The public API is re-exported here; everything else is private to its module.
``audit``, ``compare`` and ``funnel`` are modules that can be called (see
:mod:`evalframe._callable`): ``ef.audit(plan, ledger)`` calls the function and
``import evalframe.audit as m`` gives the module. Type checkers see the
functions.
"""

from typing import TYPE_CHECKING

from evalframe.attempts import select_attempts
from evalframe.compare import Comparison
from evalframe.errors import AuditRefused, EvalframeError, InputFormatError, PlanError
from evalframe.load import load
from evalframe.plan import Plan
from evalframe.power import achieved_power, cases_needed, detectable_difference, power
from evalframe.read import read
from evalframe.report import AuditReport

if TYPE_CHECKING:
    from evalframe.audit import audit
    from evalframe.compare import compare
    from evalframe.funnel import funnel
else:
    from evalframe import audit, compare, funnel

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
