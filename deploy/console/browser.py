"""Debian's Chromium driven by Playwright for Python, headless: the browser the console's tests
and its screenshot script use (Playwright's own browser download is never used; `make test`
installs the `chromium` package through deploy/install-test-deps.sh).

    with sync_playwright() as p:
        browser = launch(p)
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CHROMIUM = Path(os.environ.get("METCTL_CHROMIUM", "/usr/bin/chromium"))
# --no-sandbox: Chromium refuses to run as root with its sandbox (CI runs as root);
# --disable-gpu: no GPU here, and none needed for a page of text and SVG
FLAGS = ("--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage")


def launch(playwright: Any) -> Any:
    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's chromium "
                           "(deploy/install-test-deps.sh, run by make test)")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                      args=list(FLAGS))
