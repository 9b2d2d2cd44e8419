"""The frozen plan: which (candidate, case_id, trial) units were meant to be evaluated.

* :mod:`~evalframe.plan.model`: the :class:`Plan` and what it answers (its units, codes, hash);
* :mod:`~evalframe.plan.build`: building one from a cases frame, a units table or a file;
* :mod:`~evalframe.plan.checks`: the checks a plan must pass, and :data:`RESERVED_COLUMNS`;
* :mod:`~evalframe.plan.coding`: the integer codes of units and cases (:class:`UnitCoding`).
"""

from evalframe.plan.checks import RESERVED_COLUMNS
from evalframe.plan.coding import CAND_CODE, CASE_CODE, UID, UnitCoding, case_column
from evalframe.plan.model import Plan

__all__ = ["CAND_CODE", "CASE_CODE", "RESERVED_COLUMNS", "UID", "Plan", "UnitCoding", "case_column"]
