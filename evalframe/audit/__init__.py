"""The audit of a ledger against a frozen plan: ``evalframe.audit(plan, results, ...)``.

This package is a module that can be called: ``evalframe.audit(...)`` calls
:func:`evalframe.audit.run.audit` (see :mod:`evalframe._callable`), and
``import evalframe.audit`` gives the module. It holds:

* :mod:`~evalframe.audit.run`: the audit (argument checks, meta, assembling the report);
* :mod:`~evalframe.audit.step`: the per-batch step (validate, reconcile, select attempts, summarise);
* :mod:`~evalframe.audit.runners`: the whole-batch and by-candidate runners behind one interface.
"""

from evalframe._callable import make_callable
from evalframe.audit.run import AUTO_PARTITION_ROWS, Results, audit, with_ledger_problems

__all__ = ["AUTO_PARTITION_ROWS", "Results", "audit", "with_ledger_problems"]

make_callable(__name__, "audit")
