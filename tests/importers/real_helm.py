"""Real helm exports and their exact outcomes (numbers from SOURCES.md)."""

from tests.importers.real_table import Case

CASES: list[Case] = []
