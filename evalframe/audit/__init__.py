"""The audit of a ledger against a frozen plan: ``evalframe.audit(plan, results, ...)``.

``evalframe.audit`` names the function :func:`evalframe.audit.run.audit`, re-exported here
(``from evalframe.audit import audit``). The package holds:

* :mod:`~evalframe.audit.run`: the audit (meta, assembling the report);
* :mod:`~evalframe.audit.arguments`: the checks of its options, shared with the command line;
* :mod:`~evalframe.audit.step`: the per-batch step (validate, reconcile, select attempts, summarise);
* :mod:`~evalframe.audit.runners`: the whole-batch and by-candidate runners behind one interface.
"""

from evalframe.audit.run import AUTO_PARTITION_ROWS, Results, audit, with_ledger_problems

__all__ = ["AUTO_PARTITION_ROWS", "Results", "audit", "with_ledger_problems"]
