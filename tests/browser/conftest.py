"""Headless Chromium for the browser tests: Debian's package (/usr/bin/chromium), driven by Playwright.

Without the browser (or Playwright) the tests skip with the reason, except under CI (``CI=true``), where
they fail: .ci/run installs Chromium, so a missing browser there is a broken build, not a skip.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: Debian's Chromium; Playwright's own browser download is never used.
CHROMIUM = os.environ.get("EVALFRAME_CHROMIUM", "/usr/bin/chromium")
#: Flags for a headless run as root in a container, with no network chatter of the browser's own.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _absent(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: .ci/run installs it, so this is a failure, not a skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _absent("playwright is not installed (pip install -e '.[test]')")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _absent(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def open_page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """``open_page(html, name)``: the page written to ``tmp_path/name`` and opened from disk (file://).

    Every page error or console error fails the test.
    """
    pages: list[Any] = []
    errors: list[str] = []

    def opener(html: str, name: str = "report.html", fragment: str = "") -> Any:
        path = tmp_path / name
        path.write_text(html, encoding="utf-8")
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(path.as_uri() + fragment)
        pages.append(page)
        return page

    yield opener
    for page in pages:
        page.close()
    assert errors == []
