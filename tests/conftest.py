"""Shared test paths."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "fixtures"
#: Real published exports (read-only), laid beside the repository as ../shared.
REAL = ROOT.parent / "shared" / "data" / "real"
