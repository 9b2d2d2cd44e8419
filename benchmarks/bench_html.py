"""report.html's weight and open time in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright).

Usage::

    python ../shared/tools/gen_ledger.py /tmp/l1m --rows 1_000_000 --layout single
    evalframe audit --plan /tmp/l1m/plan.parquet --results /tmp/l1m/results.parquet --slice case_type --out /tmp/l1m/out
    python benchmarks/bench_html.py /tmp/l1m/out/report.html --repeat 5

Prints the file's size, then per run: the time from navigation to the ``load`` event, to the explorer's
first render (its ``data-fragment`` attribute set), and for one click on a count link to its units shown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for the browser tests' flags
from tests.browser.conftest import CHROMIUM_ARGS  # noqa: E402  (the one list of launch flags)


def main() -> None:
    """Measure one report.html (see the module's docstring)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("page", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    size = args.page.stat().st_size
    print(f"{args.page}: {size:,} bytes ({size / 2**20:.2f} MiB)")
    loads, renders, clicks = [], [], []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        for _ in range(args.repeat):
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            start = time.perf_counter()
            page.goto(args.page.resolve().as_uri(), wait_until="load")
            loads.append(time.perf_counter() - start)
            page.wait_for_selector("#ef-explorer[data-fragment]", state="attached")
            renders.append(time.perf_counter() - start)
            href = page.eval_on_selector("a.units", "a => a.getAttribute('href')")
            start = time.perf_counter()
            page.locator("a.units").first.click()
            page.wait_for_function("f => document.getElementById('ef-explorer').dataset.fragment === f", arg=href)
            clicks.append(time.perf_counter() - start)
            page.close()
        browser.close()
    for name, times in (("load event", loads), ("explorer rendered", renders), ("click to units", clicks)):
        print(f"{name}: median {statistics.median(times):.3f} s, min {min(times):.3f} s, max {max(times):.3f} s")


if __name__ == "__main__":
    main()
