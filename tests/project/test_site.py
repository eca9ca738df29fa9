"""The series as a site (scripts/build_site.py, ``./warplab site``): the builder's parts on small
inputs, and the built site in headless Chromium (marked ``browser``).

The browser tests build the whole site into a temporary folder (every notebook run on the SIMT
machine, a few minutes on a 2-core machine) unless ``WARPLAB_SITE`` names a site already built
(``./warplab site --out DIR``), then serve it on 127.0.0.1 and open every page: it loads with no
console error and makes no request outside the site (every other request is refused and
recorded), its previous/next links follow the notebooks' order, the index links every page and
has the "Run it locally" section; each page has an animation player showing a frame for each cell
that draws one, an explorer's picture for each explorer cell, and a link to "Run it locally" under
each exercise; an animation's frame changes when it plays; an explorer is shown with its picture,
its control values and the note.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import nbformat
import pytest

import chromium

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("warplab_build_site", ROOT / "scripts" / "build_site.py")
site = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = site
_spec.loader.exec_module(site)

README = (ROOT / "README.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the builder's parts


def test_every_notebook_has_a_page_in_order() -> None:
    paths = site.notebook_paths()
    assert paths and [p.name for p in paths] == sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    pages = site.pages(paths, README)
    assert [p.href for p in pages] == [f"{p.stem}.html" for p in paths]
    assert all(p.title for p in pages)


def test_the_index_table_is_the_readmes() -> None:
    rows = site.readme_series(README)
    assert rows, "README.md's 'The series' table was not found"
    pages = site.pages(site.notebook_paths(), README)
    table = site.index_notebook(pages, README).cells[1].source
    for p in pages:
        assert f"[`{p.name}`]({p.href})" in table
        if p.name in rows:
            assert rows[p.name] in table


def test_a_notebook_without_a_readme_row_is_listed_by_its_title(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 99 · A new one\n\ntext")])
    path = tmp_path / "99_new_one.ipynb"
    nbformat.write(nb, path)
    (page,) = site.pages([path], README)
    assert (page.title, page.description, page.href) == ("99 · A new one", "", "99_new_one.html")


def test_only_ignored_cells_take_the_fresh_run(tmp_path: Path) -> None:
    stored = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)"),
                                             nbformat.v4.new_code_cell("# NBVAL_IGNORE_OUTPUT\nanim()")])
    ran = nbformat.from_dict(nbformat.v4.new_notebook(cells=[c.copy() for c in stored.cells]))
    stored.cells[0].outputs = [nbformat.v4.new_output("stream", text="stored\n")]
    ran.cells[0].outputs = [nbformat.v4.new_output("stream", text="fresh\n")]
    ran.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<img>"})]
    ran.metadata["widgets"] = {"x": 1}
    nb = site.with_ignored_outputs(stored, ran)
    assert nb.cells[0].outputs[0].text == "stored\n"
    assert nb.cells[1].outputs[0].data == {"text/html": "<img>"}
    assert nb.metadata["widgets"] == {"x": 1} and "widgets" not in stored.metadata
    ran.cells[0].source = "print(2)"
    with pytest.raises(ValueError, match="differ"):
        site.with_ignored_outputs(stored, ran)


def _model(name: str, layout: str = "L", **state: Any) -> dict:
    return {"model_name": name, "state": {"layout": f"IPY_MODEL_{layout}", **state}}


def test_a_widget_view_is_drawn_from_its_state() -> None:
    models = {
        "L": {"model_name": "LayoutModel", "state": {"display": None}},
        "H": {"model_name": "LayoutModel", "state": {"display": "none"}},
        "box": _model("VBoxModel", children=["IPY_MODEL_title", "IPY_MODEL_row", "IPY_MODEL_img", "IPY_MODEL_gone"]),
        "row": _model("HBoxModel", children=["IPY_MODEL_s", "IPY_MODEL_t", "IPY_MODEL_c"]),
        "title": _model("HTMLModel", value="<b>Shuffle explorer</b>"),
        "s": _model("IntSliderModel", description="offset", value=3),
        "t": _model("ToggleButtonsModel", description="mode", _options_labels=["down", "up"], index=1),
        "c": _model("CheckboxModel", description="time it", value=False),
        "img": {**_model("ImageModel", format="png"), "buffers": [{"path": ["value"], "data": "iVBO", "encoding": "base64"}]},
        "gone": _model("HTMLModel", layout="H", value="hidden"),
    }
    out = site.widget_html(models, "box")
    assert "<b>Shuffle explorer</b>" in out and "data:image/png;base64,iVBO" in out
    assert "offset</span> <b>3</b>" in out and "mode</span> <b>up</b>" in out
    assert '<input type="checkbox" disabled> <span class="warplab-control-label">time it' in out
    assert "hidden" not in out
    assert "not recorded" in site.widget_html(models, "nope")


def test_links_to_notebooks_lead_to_their_pages() -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "See [02](02_shfl_down_offset_width.ipynb#part) and [09](09_not_built.ipynb).")])
    nb, _ = site.SiteLinks().preprocess(nb, {"warplab_pages": ["02_shfl_down_offset_width"]})
    assert nb.cells[0].source == "See [02](02_shfl_down_offset_width.html#part) and [09](09_not_built.ipynb)."


def test_a_folder_that_is_not_a_site_is_never_emptied(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(site.SiteError, match="not an empty folder"):
        site.build(tmp_path, site.notebook_paths()[:1], execute=False)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    out = tmp_path / "site"
    site.build(out, site.notebook_paths()[:1], execute=False)
    written = site.build(out, site.notebook_paths()[:1], execute=False)   # a site built before: rebuilt
    assert sorted(p.name for p in out.iterdir()) == sorted([site.MARKER, *(p.name for p in written)])


def test_the_launcher_builds_a_site(tmp_path: Path) -> None:
    """``./warplab site`` as the README gives it (here the quick form: one page, nothing run)."""
    out = tmp_path / "site"
    done = subprocess.run([sys.executable, str(ROOT / "warplab.py"), "site", "--stored", "--only", "00", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in out.glob("*.html")) == ["00_start_here.html", "index.html"]
    assert "open " in done.stdout and "index.html" in done.stdout
    bad = subprocess.run([sys.executable, str(ROOT / "warplab.py"), "site", "--only", "0x", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--only takes notebook numbers among 00" in bad.stderr


# ---------------------------------------------------------------- the built site in Chromium


# The browser tests are marked slow for this build: every notebook run again (about 45 s on one core).
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site's folder: ``$WARPLAB_SITE`` if it holds a built site, else the whole site built now."""
    chromium.executable()   # before the build: without Chromium, skip (or fail in CI) at once
    given = os.environ.get("WARPLAB_SITE")
    if given:
        folder = Path(given)
        assert (folder / "index.html").is_file(), f"WARPLAB_SITE={given} holds no built site (index.html)"
        return folder
    folder = tmp_path_factory.mktemp("site")
    site.build(folder, site.notebook_paths(), execute=True, jobs=1)
    return folder


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(built: Path) -> Iterator[str]:
    """The site served on 127.0.0.1 (a static file server, as any host of the site would be): its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(built)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class Visit:
    """One page opened: what it logged as errors and what it asked for outside the site."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.outside: list[str] = []


@pytest.fixture(scope="module")
def browser(served: str) -> Iterator[Any]:
    with chromium.sync_playwright() as p:
        b = chromium.launch(p)
        yield b
        b.close()


def _open(browser: Any, base: str, name: str) -> Visit:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    visit = Visit(page)
    page.on("console", lambda m: visit.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: visit.errors.append(str(e)))

    def route(r: Any) -> None:
        if r.request.url.startswith(base):
            r.continue_()
        else:
            visit.outside.append(r.request.url)
            r.abort()
    context.route("**/*", route)
    page.on("request", lambda req: visit.outside.append(req.url)
            if not req.url.startswith((base, "data:", "blob:", "about:")) and req.url not in visit.outside else None)
    response = page.goto(base + name, wait_until="load")
    assert response is not None and response.ok, f"{name}: {response.status if response else 'no response'}"
    page.wait_for_timeout(300)   # scripts that run after load (the animation players) report here
    return visit


def _names() -> list[str]:
    return ["index.html", *(f"{p.stem}.html" for p in site.notebook_paths())]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("name", _names())
def test_every_page_loads_cleanly_and_stays_in_the_site(browser: Any, served: str, name: str) -> None:
    visit = _open(browser, served, name)
    try:
        assert visit.errors == [], f"{name}: console errors {visit.errors}"
        assert visit.outside == [], f"{name}: requests outside the site {visit.outside}"
        names = _names()
        i = names.index(name)
        nav = visit.page.locator("nav.warplab-nav").first
        prev, nxt = nav.locator("a[rel=prev]"), nav.locator("a[rel=next]")
        assert nxt.count() == (1 if i + 1 < len(names) else 0)
        if i + 1 < len(names):
            assert nxt.get_attribute("href") == names[i + 1]
        assert prev.count() == (1 if i > 0 else 0)
        if i > 0:
            assert prev.get_attribute("href") == names[i - 1]
        if name == "index.html":
            for other in names[1:]:
                assert visit.page.locator(f"table a[href='{other}']").count() == 1, other
            assert visit.page.locator("#run-it-locally").count() == 1
            assert "./warplab lab" in visit.page.inner_text("body")
        else:
            _check_filled(visit.page, nbformat.read(ROOT / "notebooks" / name.replace(".html", ".ipynb"), as_version=4))
    finally:
        visit.page.context.close()


def _check_filled(page: Any, nb: Any) -> None:
    """The page has what its notebook's cells make: an animation player (showing its first frame)
    for each cell that draws one, an explorer's picture for each explorer cell, a "run it locally"
    link under each exercise."""
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    animations = page.locator("img[id^='_anim_img']")
    assert animations.count() == sum("animation_html(" in c for c in code)
    for i in range(animations.count()):
        page.wait_for_function("el => el.complete && el.naturalWidth > 0", arg=animations.nth(i).element_handle(),
                               timeout=10_000)
    explorers = sum(site.IGNORE_MARK in c and re.search(r"\w_explorer\(", c) is not None for c in code)
    assert page.locator(".warplab-static-widget img").count() >= explorers
    assert page.locator(".warplab-widget-missing").count() == 0
    exercises = page.locator(".warplab-run-locally a[href='index.html#run-it-locally']").count()
    assert exercises == sum(c.startswith("%%exercise") for c in code)


@pytest.mark.browser
@pytest.mark.slow
def test_an_animation_plays(browser: Any, served: str) -> None:
    """02's WarpReduceSum animation: pressing play changes the frame shown."""
    visit = _open(browser, served, "02_shfl_down_offset_width.html")
    try:
        img = visit.page.locator("img[id^='_anim_img']").first
        img.scroll_into_view_if_needed()
        before = img.get_attribute("src")
        assert before and before.startswith("data:image/png")
        visit.page.locator("button[onclick*='play_animation']").first.click()
        visit.page.wait_for_function("([el, old]) => el.getAttribute('src') !== old",
                                     arg=[img.element_handle(), before], timeout=10_000)
        assert visit.errors == [] and visit.outside == []
    finally:
        visit.page.context.close()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("name", ["index.html", "02_shfl_down_offset_width.html"])
def test_pages_opened_as_files_work_too(browser: Any, built: Path, name: str) -> None:
    """The README's other way to open the site: the file itself, no server."""
    visit = _open(browser, built.resolve().as_uri() + "/", name)
    try:
        assert visit.errors == [] and visit.outside == []
        href = visit.page.locator("nav.warplab-nav a[rel=next]").first.get_attribute("href")
        visit.page.locator("nav.warplab-nav a[rel=next]").first.click()
        visit.page.wait_for_url(f"**/{href}")
        assert visit.errors == [] and visit.outside == []
    finally:
        visit.page.context.close()


@pytest.mark.browser
@pytest.mark.slow
def test_an_explorer_is_its_picture_with_the_note(browser: Any, served: str) -> None:
    visit = _open(browser, served, "02_shfl_down_offset_width.html")
    try:
        view = visit.page.locator(".warplab-static-widget").first
        view.scroll_into_view_if_needed()
        assert "Shuffle explorer" in view.inner_text()
        controls = view.locator(".warplab-control").all_inner_texts()
        assert "offset (delta) 1" in controls and "mode down" in controls, controls
        img = view.locator("img").first
        visit.page.wait_for_function("el => el.complete && el.naturalWidth > 300", arg=img.element_handle())
        assert "JupyterLab" in view.locator(".warplab-widget-note").inner_text()
    finally:
        visit.page.context.close()
