"""Shared test paths."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "fixtures"
#: Real published exports (read-only), laid beside the repository as ../shared.
REAL = ROOT.parent / "shared" / "data" / "real"
#: The licensed ones among them, copied into the repository (same layout; see its README.md).
REAL_FIXTURES = FIXTURES / "real"


def real(relative: str) -> Path:
    """A real export by its path under ``data/real``: the repository's copy when it has one, else ../shared's."""
    copy = REAL_FIXTURES / relative
    return copy if copy.exists() else REAL / relative
