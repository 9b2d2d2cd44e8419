"""Every real export in ../shared/data/real imports and audits through the CLI without a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from evalframe.cli import main
from tests.conftest import REAL

FORMATS = {
    "inspect_ai": "inspect",
    "lm_eval": "lm-eval",
    "helm": "helm",
    "promptfoo": "promptfoo",
    "openai_evals": "openai-evals",
}
# Extra audit options a file needs (numeric scores), keyed by a fragment of its path.
NUMERIC = ("promptfoo", "polymer_tg", "small.eval")


def real_files() -> list[tuple[str, Path]]:
    found = []
    for folder, fmt in FORMATS.items():
        for path in sorted((REAL / folder).rglob("*")):
            if not path.is_file():
                continue
            if fmt == "helm":
                if path.name != "run_spec.json":
                    continue
                path = path.parent  # a HELM run is a folder
            found.append((fmt, path))
    return found


FILES = real_files()


def test_every_real_file_is_covered() -> None:
    assert len(FILES) == 31  # 15 Inspect, 12 lm-eval, 2 HELM runs, 1 promptfoo, 1 OpenAI Evals


@pytest.mark.parametrize(("fmt", "path"), FILES, ids=[str(p.relative_to(REAL)) for _, p in FILES])
def test_real_export_audits_without_traceback(fmt: str, path: Path) -> None:
    args = ["audit", "--from", fmt, str(path), "--format", "json"]
    if any(k in str(path) for k in NUMERIC):
        args += ["--grade", "numeric", "--score-range", "0", "1000"]
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    # 0: audited; 1: refused with a problems table (e.g. a header-only log plans nothing).
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        assert "batch refused" in result.stderr


def test_every_note_kind_is_documented() -> None:
    from evalframe.importers import registry
    from evalframe.problems import PROBLEM_KINDS

    readers = registry()
    kinds: set[str] = set()
    for fmt, path in FILES:
        kinds |= set(readers[fmt]([path]).notes.get_column("kind").to_list())
    assert kinds - set(PROBLEM_KINDS) == set()
    assert {"header_rows_disagree", "run_status"} <= kinds
