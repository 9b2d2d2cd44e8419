"""Turn a raw ledger (any of the three shapes) into the canonical ledger, with problems.

Three ledger shapes are one canonical ledger (SPEC §1):

* **grades**: ``candidate, case_id, passed`` (or ``score``) — every row is a
  completed, scored attempt;
* **status ledger**: ``exec_status`` plus ``score_status`` and
  ``score``/``passed`` (optional ``has_output``);
* **answers**: ``answer``, exact-matched against the plan's ``expected``.

Any shape may carry ``trial``, ``attempt`` (default 1), ``run_id``,
``dataset_version``, ``case_hash`` and ``limit``. Values are parsed strictly
from their tokens (a binary grade is exactly ``0`` or ``1``), then the canonical
frame is validated with pandera (see :mod:`evalframe.schemas`).

The canonical ledger has the columns of :data:`CANONICAL_SCHEMA`. The parsing and row checks
(:mod:`~evalframe.validate.canonical`) are narwhals: the one implementation every engine runs.
"""

from evalframe.validate.ledger import Validated, validate_ledger
from evalframe.validate.shape import CANONICAL_SCHEMA, FILE_PROBLEMS, KNOWN_COLUMNS, RESERVED_EXTRA, only_value

__all__ = [
    "CANONICAL_SCHEMA",
    "FILE_PROBLEMS",
    "KNOWN_COLUMNS",
    "RESERVED_EXTRA",
    "Validated",
    "only_value",
    "validate_ledger",
]
