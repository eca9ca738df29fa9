"""A real browser: JupyterLab in headless Chromium runs notebooks 02-05 and a learner moves a control
of each explorer (02's offset slider, and one toggle of 03's, 04's and 05's explorers); 04's
animation must show its first frame after Run All, before any of its buttons is pressed.

One JupyterLab server, one Chromium page: a JupyterLab workspace opens the four notebooks as tabs,
and they run at the same time (Run All in each tab), so the kernels compute while the page renders.
The server serves copies of the notebooks in a temporary folder, with autosave off, so a test run
never writes into notebooks/. Chromium as ``tests/chromium.py`` starts it: Debian's ``chromium``
through Playwright; without it the test skips on a learner's machine and fails in CI.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

import chromium
import jupyter_lab

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = {
    "02": "notebooks/02_shfl_down_offset_width.ipynb",
    "03": "notebooks/03_warp_reduce_trees.ipynb",
    "04": "notebooks/04_block_reduce_shared_memory.ipynb",
    "05": "notebooks/05_reduce_v0_to_v4.ipynb",
}
# The code cell that builds each explorer (the cell is found by this text).
EXPLORER_CELLS = {"03": "warp_tree_explorer(", "04": "block_explorer(", "05": "ladder_explorer("}
WORKSPACE = "warplab-browser-test"
RUN_TIMEOUT_MS = 150_000     # Run All of one notebook, while the three others run too, on 2 CPU cores
# slow: the tests are quick, the JupyterLab that runs the notebooks for them is not (about 30 s on one core)
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _workspace() -> dict[str, Any]:
    """A JupyterLab workspace with the four notebooks open as tabs of the main area."""
    ids = [f"notebook:{path}" for path in NOTEBOOKS.values()]
    return {"data": {"layout-restorer:data": {"main": {"dock": {"type": "tab-area", "currentIndex": 0, "widgets": ids},
                                                       "current": ids[0]},
                                              "left": {"collapsed": True, "visible": True, "widgets": ["filebrowser"]}},
                     **{i: {"data": {"path": path, "factory": "Notebook"}} for i, path in zip(ids, NOTEBOOKS.values())}},
            "metadata": {"id": WORKSPACE}}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server on copies of the notebooks, with the test workspace: its workspace URL."""
    chromium.executable()  # before JupyterLab starts: without Chromium, skip (or fail in CI) at once
    config_dir, root = tmp_path_factory.mktemp("jcfg"), tmp_path_factory.mktemp("lab")
    (root / "notebooks").mkdir()
    for path in NOTEBOOKS.values():
        shutil.copy(ROOT / path, root / path)
    with jupyter_lab.serve(root, config_dir) as (base, token):
        put = urllib.request.Request(f"{base}/lab/api/workspaces/{WORKSPACE}?token={token}", method="PUT",
                                     data=json.dumps(_workspace()).encode(), headers={"Content-Type": "application/json"})
        urllib.request.urlopen(put, timeout=10)
        yield f"{base}/lab/workspaces/{WORKSPACE}?token={token}"


class Notebook:
    """One notebook's tab in the page: its tab, its panel (every locator is scoped to it)."""

    def __init__(self, page: Any, path: str) -> None:
        self.page, self.path = page, path
        self.tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=Path(path).name).first
        self.tab.wait_for(timeout=60_000)
        self.panel = page.locator(f"#{self.tab.get_attribute('data-id')}")

    def show(self) -> None:
        self.tab.click()
        self.panel.wait_for(state="visible", timeout=30_000)

    def run_all(self) -> None:
        """Show the tab, wait for its kernel to be idle, click Run > Run All Cells until the cells are
        queued (a click that lands before the command is enabled does nothing)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        self.show()
        self.page.get_by_text(re.compile(r"\|\s*Idle")).first.wait_for(timeout=90_000)
        for attempt in range(4):
            self.page.get_by_role("menuitem", name="Run", exact=True).click()
            self.page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
            try:
                self.panel.locator(".jp-InputPrompt", has_text="*").first.wait_for(state="attached", timeout=5_000)
                return
            except PlaywrightTimeout:
                if attempt == 3:
                    raise
                self.page.wait_for_timeout(1_000)

    def wait_until_run(self) -> None:
        """Every code cell has run: no prompt is queued or running ("[*]"), the last one has a number."""
        self.page.wait_for_function(
            """panel => {
                const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
                return prompts.length > 0 && prompts.every(p => !p.textContent.includes('*'))
                    && /\\[\\d+\\]/.test(prompts[prompts.length - 1].textContent);
            }""", arg=self.panel.element_handle(), timeout=RUN_TIMEOUT_MS, polling=500)


@pytest.fixture(scope="module")
def notebooks(lab: str) -> Iterator[dict[str, Notebook]]:
    """Notebooks 02-05 open in one Chromium page, each in its tab, all run (Run All)."""
    chromium.executable()
    with chromium.sync_playwright() as p:
        browser = chromium.launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        t0 = time.perf_counter()
        stamp = lambda what: print(f"browser test: {what} after {time.perf_counter() - t0:.1f} s", file=sys.stderr)  # noqa: E731
        page.goto(lab)
        page.wait_for_selector(".jp-Notebook", timeout=60_000)
        opened = {key: Notebook(page, path) for key, path in NOTEBOOKS.items()}
        stamp("notebooks open")
        for nb in opened.values():
            nb.run_all()
        stamp("Run All clicked in every tab")
        for key, nb in opened.items():
            nb.wait_until_run()
            stamp(f"{key} has run")
        yield opened
        browser.close()


def _sources(text: str) -> list[int]:
    """The source lanes listed in the mapping line ``src: 3 4 5 ...``."""
    m = re.search(r"src:\s*([-\d\s]+)", text)
    assert m, f"no 'src:' mapping in {text!r}"
    return [int(x) for x in m.group(1).split()]


def test_02_offset_slider_moves_the_lanes(notebooks: dict[str, Notebook]) -> None:
    nb = notebooks["02"]
    nb.show()
    page, panel = nb.page, nb.panel
    assert panel.get_by_text("trace == H200 trace").count() >= 1   # the last code cell's output
    panel.locator(".jp-Cell", has_text="widgets.shuffle_explorer()").first.scroll_into_view_if_needed()
    mapping = panel.locator(".warplab-mapping").first
    mapping.wait_for(timeout=60_000)
    # the element can be attached before the widget writes its text (seen in CI, on a loaded machine);
    # textContent, not innerText, which is empty while JupyterLab's windowing skips rendering the cell
    page.wait_for_function("panel => /src:/.test(panel.querySelector('.warplab-mapping').textContent)",
                           arg=panel.element_handle(), timeout=60_000)
    slider = panel.locator(".widget-slider", has=page.locator(".widget-label", has_text="offset")).first
    handle = slider.locator(".noUi-handle, [role='slider']").first
    handle.scroll_into_view_if_needed()
    before_text = mapping.text_content()
    before = _sources(before_text)
    start = int(slider.locator(".widget-readout").inner_text())
    handle.focus()
    page.keyboard.press("ArrowRight")
    offset = start + 1
    # the HTML widget replaces its .warplab-mapping element on update: query it afresh each time
    page.wait_for_function("([panel, old]) => panel.querySelector('.warplab-mapping').textContent !== old",
                           arg=[panel.element_handle(), before_text], timeout=30_000)
    after = _sources(mapping.text_content())
    assert int(slider.locator(".widget-readout").inner_text()) == offset
    assert after != before
    # __shfl_down_sync over the full warp: lane l reads l + offset while that stays in the warp
    assert after[:32 - offset] == [l + offset for l in range(32 - offset)]
    assert after[32 - offset:] == list(range(32 - offset, 32))


@pytest.mark.parametrize("key", ["03", "04", "05"])
def test_explorer_toggle_changes_the_view(notebooks: dict[str, Notebook], key: str) -> None:
    """Click an unselected option of the explorer's first toggle group: its text and its figure change."""
    nb = notebooks[key]
    nb.show()
    cell = nb.panel.locator(".jp-CodeCell", has_text=EXPLORER_CELLS[key]).first
    cell.scroll_into_view_if_needed()
    out = cell.locator(".jp-OutputArea").first
    group = out.locator(".widget-toggle-buttons").first
    group.wait_for(timeout=60_000)
    image = out.locator("img").first
    image.wait_for(timeout=30_000)
    before_text, before_src = out.inner_text(), image.get_attribute("src")
    buttons = group.locator("button")
    pick = next(i for i in range(buttons.count()) if "mod-active" not in (buttons.nth(i).get_attribute("class") or ""))
    buttons.nth(pick).click()
    nb.page.wait_for_function("([el, old]) => el.innerText !== old", arg=[out.element_handle(), before_text],
                              timeout=30_000)
    nb.page.wait_for_function("([el, old]) => el.getAttribute('src') !== old",
                              arg=[image.element_handle(), before_src], timeout=30_000)
    assert "mod-active" in (buttons.nth(pick).get_attribute("class") or "")
    assert "Could not draw this" not in out.inner_text()


def test_04_animation_shows_a_frame_without_a_click(notebooks: dict[str, Notebook]) -> None:
    """After Run All, with no button pressed, 04's BlockReduce animation shows an image of its size."""
    nb = notebooks["04"]
    nb.show()
    img = nb.panel.locator("img[id^='_anim_img']").first
    img.wait_for(state="attached", timeout=30_000)
    img.scroll_into_view_if_needed()
    nb.page.wait_for_function("el => el.complete && el.naturalWidth > 0", arg=img.element_handle(), timeout=30_000)
    box = img.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100, box
    natural = img.evaluate("el => [el.naturalWidth, el.naturalHeight]")
    assert abs(box["width"] / box["height"] - natural[0] / natural[1]) < 0.05, (box, natural)
