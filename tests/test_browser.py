"""A real browser: JupyterLab in headless Chromium runs notebook 02 and a learner moves a slider.

Debian's ``chromium`` is driven by Playwright for Python through ``executable_path`` (no browser
download). Without Chromium this test skips with the reason on a learner's machine; in CI (the ``CI``
environment variable set) a missing Chromium is a failure, never a skip.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "notebooks/02_shfl_down_offset_width.ipynb"
pytestmark = pytest.mark.browser


def _missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI (.ci/run installs it)")
    pytest.skip(f"{what} is not installed; install it to run the browser test (apt-get install chromium)")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    _missing("Debian's chromium")
    raise AssertionError  # unreachable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory: pytest.TempPathFactory):
    _chromium()  # before JupyterLab starts: without Chromium, skip (or fail in CI) at once
    port, token = _free_port(), "warplab-test"
    env = {**os.environ, "WARPLAB_BACKEND": "emulator", "JUPYTER_CONFIG_DIR": str(tmp_path_factory.mktemp("jcfg"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("JupyterLab did not come up within 60 s")
    yield f"{base}/lab/tree/{NOTEBOOK}?token={token}"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _sources(text: str) -> list[int]:
    """The source lanes listed in the mapping line ``src: 3 4 5 ...``."""
    m = re.search(r"src:\s*([-\d\s]+)", text)
    assert m, f"no 'src:' mapping in {text!r}"
    return [int(x) for x in m.group(1).split()]


def test_offset_slider_moves_the_lanes(lab_url: str) -> None:
    executable = _chromium()
    try:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=executable, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(lab_url)
        page.wait_for_selector(".jp-Notebook", timeout=60_000)
        # the kernel must be connected and idle before "Run All Cells" can run anything; right after
        # the page turns idle the command is sometimes still disabled, hence the short pause
        page.get_by_text(re.compile(r"\|\s*Idle")).first.wait_for(timeout=90_000)
        for attempt in range(3):  # a click that lands before the command is enabled does nothing: retry
            page.wait_for_timeout(3_000)
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
            try:  # the last code cell's output: every cell has run
                page.get_by_text("emulator trace == H200 trace").first.wait_for(state="attached", timeout=60_000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
        # JupyterLab renders only the cells near the viewport: bring the explorer's cell into view
        page.locator(".jp-Cell", has_text="widgets.shuffle_explorer()").first.scroll_into_view_if_needed()
        mapping = page.locator(".warplab-mapping").first
        mapping.wait_for(timeout=60_000)
        slider = page.locator(".widget-slider", has=page.locator(".widget-label", has_text="offset")).first
        handle = slider.locator(".noUi-handle, [role='slider']").first
        handle.scroll_into_view_if_needed()
        before_text = mapping.inner_text()
        before = _sources(before_text)
        start = int(slider.locator(".widget-readout").inner_text())
        handle.focus()
        page.keyboard.press("ArrowRight")
        offset = start + 1
        # the HTML widget replaces its .warplab-mapping element on update: query it afresh each time
        page.wait_for_function("old => document.querySelector('.warplab-mapping').innerText !== old",
                               arg=before_text, timeout=30_000)
        after = _sources(mapping.inner_text())
        assert int(slider.locator(".widget-readout").inner_text()) == offset
        assert after != before
        # __shfl_down_sync over the full warp: lane l reads l + offset while that stays in the warp
        assert after[:32 - offset] == [l + offset for l in range(32 - offset)]
        assert after[32 - offset:] == list(range(32 - offset, 32))
        browser.close()
