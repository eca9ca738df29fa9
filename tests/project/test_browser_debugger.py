"""A real browser: the lane debugger (``%%simt``) in JupyterLab. A learner moves the step slider and
sees the highlighted source line and the lanes change.

The setup is tests/project/test_browser.py's (its settings, its :class:`Notebook` tab driver, Chromium as
``tests/chromium.py`` starts it), on one small notebook written for this test in a temporary folder.
With ``WARPLAB_SCREENSHOT=PATH`` the test also saves the debugger's picture there (how
``docs/debugger.png`` was made).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

import chromium
import jupyter_lab
from test_browser import Notebook

# slow: its JupyterLab starts for this one test (about 14 s on one core)
pytestmark = [pytest.mark.browser, pytest.mark.slow]

KERNEL = r'''__global__ void k(const int* in, int* out) {
    int t = threadIdx.x, lane = t % 32;
    if (lane >= 20) return;                          // lanes 20-31 exit
    int v = in[t];
    if (lane < 8) { v += in[t + 1]; } else { v *= 2; }
    v += __shfl_down_sync(0xFFFFF, v, 4);            // lanes 16-19 read lanes 20-23: not calling
    __shared__ int s[64];
    s[2 * t % 64] = v;                               // a race between the two warps, and a 2-way conflict
    __syncthreads();
    out[t] = s[(t + 1) % 64];
}'''
PATH = "debugger.ipynb"


def _notebook() -> dict[str, Any]:
    cell = lambda src: {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],  # noqa: E731
                        "source": src}
    return {"nbformat": 4, "nbformat_minor": 5, "cells": [
        cell("%load_ext helpers.widgets"),
        cell("%%simt k grid=1 block=64 args=arange(65),zeros(64)\n" + KERNEL)],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """JupyterLab on the test notebook, open in a Chromium page."""
    chromium.executable()
    config_dir, root = tmp_path_factory.mktemp("jcfg"), tmp_path_factory.mktemp("lab")
    (root / PATH).write_text(json.dumps(_notebook()))
    with jupyter_lab.serve(root, config_dir) as (base, token), chromium.sync_playwright() as p:
        browser = chromium.launch(p)
        pg = browser.new_page(viewport={"width": 1500, "height": 1100})
        pg.goto(f"{base}/lab/tree/{PATH}?token={token}")
        pg.wait_for_selector(".jp-Notebook", timeout=60_000)
        yield pg
        browser.close()


def _state(page: Any) -> dict[str, str]:
    text = page.locator(".warplab-debug-state").first.get_attribute("data-state")
    return dict(kv.split("=") for kv in text.split())


def test_the_step_slider_moves_the_line_and_the_lanes(page: Any) -> None:
    nb = Notebook(page, PATH)
    nb.run_all()
    nb.wait_until_run()
    page.locator(".warplab-debug-state").first.wait_for(timeout=90_000)
    first = _state(page)
    assert first["kind"] == "shared_store" and first["line"] == "8"     # it opens at the race
    line0 = page.locator(".warplab-current").first.text_content()
    lanes0 = page.locator(".warplab-lanes").first.inner_html()
    handle = page.locator(".widget-slider .noUi-handle, .widget-slider [role='slider']").first
    handle.scroll_into_view_if_needed()
    seen = first
    for _ in range(25):             # step back, one key press at a time, to the shuffle
        before = page.locator(".warplab-debug-state").first.get_attribute("data-state")
        handle.focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("old => document.querySelector('.warplab-debug-state').dataset.state !== old",
                               arg=before, timeout=30_000)
        seen = _state(page)
        assert int(seen["step"]) == int(first["step"]) - 1 - _
        if seen["kind"] == "shuffle":
            break
    assert seen["kind"] == "shuffle" and seen["line"] == "6"
    assert page.locator(".warplab-current").first.text_content() != line0
    assert "__shfl_down_sync" in page.locator(".warplab-current").first.text_content()
    lanes = page.locator(".warplab-lanes").first.inner_html()
    assert lanes != lanes0 and "marker-end" in lanes and "warplab-undef" in lanes
    shot = os.environ.get("WARPLAB_SCREENSHOT")
    if shot:
        out = page.locator(".jp-CodeCell").nth(1).locator(".jp-OutputArea").first
        out.scroll_into_view_if_needed()
        out.screenshot(path=shot)
        assert Path(shot).stat().st_size > 10_000
