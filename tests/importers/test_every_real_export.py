"""Every real export in ../shared/data/real and real2 that evalframe reads, audited through the CLI, exactly.

The rows are in ``real_<format>.py`` and ``real2_<format>.py`` (one list
``CASES`` per format and collection); the numbers are the ones each
collection's ``SOURCES.md`` gives for each file, recounted from the file.
The licensed ones are read from their copies under ``data/fixtures/real/``,
so they run wherever the repository sits; a case that needs a file without a
licence reads it from ``../shared`` (CI always lays it beside the repository)
and skips, saying so, when it is absent.
"""

from __future__ import annotations

import importlib

import pytest

from tests.conftest import REAL, REAL2, real
from tests.importers.real_table import Case, check

#: Skips case by case when ../shared is absent (see the root conftest.py).
HANDLES_ABSENT_SHARED = True

ABSENT = "../shared/data/real is not laid beside the repository, and this export has no licence to copy it here"

#: Folders of ../shared/data/real that evalframe reads (each has its rows in real_<folder>.py).
FORMATS = (
    "inspect_ai",
    "lm_eval",
    "helm",
    "promptfoo",
    "openai_evals",
    "evalscope",
    "deepeval_ragas",
    "every_eval_ever",
)
#: Files that are part of an export but never an export on their own (read with their folder or sibling).
COMPANIONS = ("eval-set.json", "logs.json", ".eval-set-id")


#: Each collection's folder under ../shared/data.
COLLECTIONS = {"real": REAL, "real2": REAL2}


def cases() -> list[Case]:
    found: list[Case] = []
    for collection in COLLECTIONS:
        for module in FORMATS:
            found.extend(importlib.import_module(f"tests.importers.{collection}_{module}").CASES)
    return found


CASES = cases()


def export_units(collection: str) -> list[tuple[str, str]]:
    """(folder, path) of every export a test must name: files, HELM run folders, Inspect eval-set folders."""
    root = COLLECTIONS[collection]
    units = []
    for folder in FORMATS:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or path.name in COMPANIONS:
                continue
            if folder == "helm":
                if path.name != "run_spec.json":
                    continue
                path = path.parent
            units.append((folder, str(path.relative_to(root))))
    return units


@pytest.mark.parametrize("collection", sorted(COLLECTIONS))
def test_every_real_export_has_an_exact_outcome(collection: str) -> None:
    if not COLLECTIONS[collection].is_dir():
        pytest.skip(ABSENT)
    named = {p for case in CASES if case.collection == collection for p in case.paths}
    units = export_units(collection)
    covered = {path for _, path in units if path in named or any(path.startswith(n.rstrip("/") + "/") for n in named)}
    uncovered = [path for _, path in units if path not in covered]
    assert uncovered == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_real_export_outcome(case: Case) -> None:
    if not all(real(p, case.collection).exists() for p in case.paths):
        pytest.skip(ABSENT)
    check(case)


def test_every_note_kind_is_documented() -> None:
    from evalframe.problems import PROBLEM_KINDS

    kinds = {kind for case in CASES for kind in case.notes | case.refusal_kinds}
    assert kinds - set(PROBLEM_KINDS) == set()
