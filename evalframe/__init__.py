"""evalframe: audit AI evaluation results against a frozen plan before anyone believes a score.

The public API is re-exported here; everything else is private to its module.
``ef.audit``, ``ef.compare``, ``ef.funnel`` and ``ef.load`` are the functions,
each named after the package that defines it: the packages' other names are
imported from them (``from evalframe.audit import with_ledger_problems``), and
``importlib.import_module("evalframe.audit")`` gives a package itself.
"""

from evalframe._launch import stop_quietly_while_the_command_starts

stop_quietly_while_the_command_starts()  # first: the imports below take a moment, and Ctrl-C may come

# ruff: noqa: E402
from evalframe.attempts import select_attempts
from evalframe.audit import audit
from evalframe.compare import Comparison, compare
from evalframe.compare.aggregate import aggregate
from evalframe.errors import (
    AuditRefused,
    EvalframeError,
    ImportUnreadable,
    InputFormatError,
    LimitExceeded,
    MissingExtra,
    PlanError,
    ReportClosed,
)
from evalframe.funnel import funnel
from evalframe.load import load
from evalframe.load.limit import Limits, limits
from evalframe.plan import Plan
from evalframe.read import read
from evalframe.report import AuditReport
from evalframe.stats import achieved_power, cases_needed, detectable_difference
from evalframe.stats.power import power

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
    "ReportClosed",
    "achieved_power",
    "aggregate",
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
