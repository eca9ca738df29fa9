"""Headless Chromium for the browser tests (tests/project/test_browser.py, tests/project/test_site.py): Debian's
``chromium`` driven by Playwright for Python through ``executable_path`` (no browser download).

Without Chromium (or Playwright) a browser test skips with the reason on a learner's machine; in CI
(the ``CI`` environment variable set) it fails instead, never skips.
"""
from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

# No first-run pages, background fetches, component updates or sync: the page under test is the
# only thing that may make a request.
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def missing(what: str) -> None:
    """Skip (a learner's machine) or fail (CI) because ``what`` is not installed."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI (.ci/run installs it)")
    pytest.skip(f"{what} is not installed; install it to run the browser test (apt-get install chromium)")


def executable() -> str:
    """The path of Debian's ``chromium`` (or Ubuntu's ``chromium-browser``); skips or fails without it."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    missing("Debian's chromium")
    raise AssertionError  # unreachable


def launch(playwright: Any) -> Any:
    """A headless Chromium browser from ``playwright`` (a started ``sync_playwright()``)."""
    return playwright.chromium.launch(executable_path=executable(), headless=True, args=LAUNCH_ARGS)


def sync_playwright() -> Any:
    """``playwright.sync_api.sync_playwright``; skips or fails where Playwright is missing."""
    try:
        from playwright.sync_api import sync_playwright as start
    except ImportError:
        missing("Playwright for Python")
    return start()
