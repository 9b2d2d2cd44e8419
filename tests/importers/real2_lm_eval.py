"""Real lm_eval exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md).
"""

from tests.importers.real_table import Case

CASES: list[Case] = []
