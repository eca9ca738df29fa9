"""The series as a static site: every notebook of ``notebooks/`` as an HTML page, and an index.

    python scripts/build_site.py [--out DIR] [--only NN ...] [--jobs N]      (``./warplab site`` runs this)

Each page shows the notebook's stored outputs as they are. The outputs the stored files leave out
(cells marked ``# NBVAL_IGNORE_OUTPUT``: animations, explorers, timings; ``execute_notebooks.py``
drops them) come from a fresh run of the notebook on the SIMT machine (nbclient, no GPU needed,
``WARPLAB_BACKEND=emulator``). An explorer (an ipywidgets view) needs a kernel to move, so it is
shown as it first drew: its picture, text and control values at the default settings, read from
the widget state nbclient recorded, with a note that the controls work in JupyterLab. Exercise
cells keep their stored "not solved yet" output and gain a link to the index's "Run it locally"
section (the README's own "Start" instructions).

The pages are made by nbconvert's HTML exporter with the ``warplab`` template beside this script
(``site_template/``), which extends nbconvert's ``lab`` template: it adds the previous/next links
and the exercise note, and leaves out every script the lab template loads from a CDN (require.js,
MathJax, Mermaid, the widget manager). None of the notebooks needs them: their animations are
matplotlib's self-contained jshtml players (``helpers.viz.lanes.animation_html``), their markdown
has no TeX, and the explorers are drawn here as static HTML. So a page makes no request outside
the site: images are inline (``data:`` URLs) and the CSS is inlined by the exporter.

The page list is ``notebooks/NN_*.ipynb`` as it is on disk; the index's table is the README's
"The series" table, each row linked to its page (a notebook without a row is listed by its title).
"""
from __future__ import annotations

import argparse
import base64
import copy
import html
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import nbformat
from nbconvert import HTMLExporter
from nbconvert.preprocessors import Preprocessor

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
README = ROOT / "README.md"
TEMPLATES = Path(__file__).resolve().parent / "site_template"
DEFAULT_OUT = ROOT / "build" / "site"
MARKER = ".warplab-site"   # written into every folder this builds: only such a folder is emptied
IGNORE_MARK = "NBVAL_IGNORE_OUTPUT"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
RUN_LOCALLY = "index.html#run-it-locally"
EXPLORER_NOTE = ("A picture of this explorer at its default settings. Its controls move in JupyterLab: "
                 f'<a href="{RUN_LOCALLY}">run the notebook locally</a>.')


@dataclass(frozen=True)
class Page:
    """One notebook's page: ``name`` is the notebook's file stem (``02_shfl_down_offset_width``)."""

    notebook: Path
    title: str
    description: str

    @property
    def name(self) -> str:
        return self.notebook.stem

    @property
    def href(self) -> str:
        return f"{self.name}.html"


def notebook_paths(folder: Path = NOTEBOOKS) -> list[Path]:
    """The series' notebooks, ``NN_*.ipynb`` in ``folder``, in their order."""
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def readme_series(readme: str) -> dict[str, str]:
    """The README's "The series" table as {notebook stem: what you will be able to do}."""
    section = re.search(r"^## The series\s*$(.*?)(?=^## |\Z)", readme, re.M | re.S)
    rows: dict[str, str] = {}
    for line in (section.group(1) if section else "").splitlines():
        m = re.match(r"\|\s*`([0-9]{2}_[^`]+)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = m.group(2).strip()
    return rows


def readme_start(readme: str) -> str:
    """The README's "Start" section (how to run the notebooks), without its heading."""
    m = re.search(r"^## Start\s*$(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if not m:
        raise ValueError("README.md has no '## Start' section; the site's 'Run it locally' section copies it")
    return m.group(1).strip()


def notebook_title(nb: Any, fallback: str) -> str:
    """The text of the notebook's first ``#`` heading, else ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    return fallback


def pages(paths: Sequence[Path], readme: str) -> list[Page]:
    """A page for each notebook in ``paths``, described by its row of the README's series table."""
    rows = readme_series(readme)
    out = []
    for p in paths:
        title = notebook_title(nbformat.read(p, as_version=4), p.stem)
        out.append(Page(p, title, rows.get(p.stem, "")))
    return out


# ---------------------------------------------------------------- outputs


def run_notebook(path: Path) -> tuple[Any, float]:
    """``path`` executed top to bottom in a fresh kernel on the SIMT machine, with the widget state
    recorded; and the seconds it took."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    t = time.perf_counter()
    # the SIMT machine even where there is a GPU: the pages are the same wherever they are built
    NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute(
        env={**os.environ, "WARPLAB_BACKEND": "emulator"})
    return nb, time.perf_counter() - t


def with_ignored_outputs(stored: Any, executed: Any) -> Any:
    """A copy of ``stored`` whose ``NBVAL_IGNORE_OUTPUT`` cells have ``executed``'s outputs (the two
    are the same notebook, cell for cell), with ``executed``'s widget state. The other cells keep
    their stored outputs, as they are."""
    if [c.source for c in stored.cells] != [c.source for c in executed.cells]:
        raise ValueError("the executed notebook's cells differ from the stored one's")
    nb = copy.deepcopy(stored)
    for cell, ran in zip(nb.cells, executed.cells):
        if cell.cell_type == "code" and IGNORE_MARK in cell.source:
            cell.outputs = ran.outputs
    if "widgets" in executed.metadata:
        nb.metadata["widgets"] = executed.metadata["widgets"]
    return nb


class SiteLinks(Preprocessor):
    """Markdown links to another notebook of the site (``02_x.ipynb``, ``02_x.ipynb#part``) lead to
    its page (``02_x.html``); links to notebooks not in this build stay as they are."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        names = set(resources.get("warplab_pages", ()))

        def page(m: re.Match) -> str:
            return f"]({m.group(1)}.html" if m.group(1) in names else m.group(0)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = re.sub(r"\]\(([0-9]{2}_[\w-]+)\.ipynb", page, cell.source)
        return nb, resources


class StaticWidgets(Preprocessor):
    """Each widget view becomes HTML drawn from the recorded widget state: boxes as rows and
    columns, HTML widgets' HTML, images inline, each control as its label and value; then the note
    that the controls work in JupyterLab. The widget state is dropped from the page afterwards."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        models = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for out in cell.outputs:
                view = out.get("data", {}).get(WIDGET_VIEW)
                if view is None:
                    continue
                body = widget_html(models, view["model_id"])
                out.data = {"text/html": f'<div class="warplab-static-widget">{body}'
                                         f'<p class="warplab-widget-note">{EXPLORER_NOTE}</p></div>'}
        nb.metadata.pop("widgets", None)
        return nb, resources


def _model(models: dict, ref: Any) -> Optional[dict]:
    key = ref[len("IPY_MODEL_"):] if isinstance(ref, str) and ref.startswith("IPY_MODEL_") else ref
    return models.get(key)


def widget_html(models: dict, model_id: str) -> str:
    """The static HTML of widget ``model_id`` and its children, from the recorded ``models``."""
    m = _model(models, model_id)
    if m is None:
        return '<p class="warplab-widget-missing">(this view was not recorded)</p>'
    state = m["state"]
    layout = (_model(models, state.get("layout")) or {}).get("state", {})
    if layout.get("display") == "none" or layout.get("visibility") == "hidden":
        return ""
    name = m["model_name"]
    label = html.escape(state.get("description") or "")
    if name in ("VBoxModel", "HBoxModel", "BoxModel", "GridBoxModel"):
        direction = "row" if name == "HBoxModel" else "column"
        kids = "".join(widget_html(models, c) for c in state.get("children", []))
        return f'<div style="display:flex;flex-direction:{direction};gap:4px 16px;flex-wrap:wrap">{kids}</div>'
    if name in ("HTMLModel", "HTMLMathModel"):
        return f"<div>{state.get('value', '')}</div>"
    if name == "LabelModel":
        return f"<div>{html.escape(state.get('value', ''))}</div>"
    if name == "ImageModel":
        buf = next((b for b in m.get("buffers", []) if b.get("path") == ["value"]), None)
        if buf is None:
            return ""
        data = buf["data"] if buf.get("encoding") == "base64" else base64.b64encode(buf["data"].encode()).decode()
        return (f'<img src="data:image/{html.escape(state.get("format", "png"))};base64,{data}" '
                'alt="the explorer\'s figure" style="max-width:100%">')
    if "_options_labels" in state:
        labels, index = state["_options_labels"], state.get("index")
        value = labels[index] if isinstance(index, int) and 0 <= index < len(labels) else ""
    elif isinstance(state.get("value"), bool):   # a checkbox or toggle: shown as a checkbox, as ticked
        checked = " checked" if state["value"] else ""
        return (f'<span class="warplab-control"><input type="checkbox" disabled{checked}> '
                f'<span class="warplab-control-label">{label}</span></span>')
    elif "value" in state:
        value = state["value"]
    else:
        return ""
    return (f'<span class="warplab-control"><span class="warplab-control-label">{label}</span> '
            f"<b>{html.escape(str(value))}</b></span>")


# ---------------------------------------------------------------- pages


def exporter() -> HTMLExporter:
    """nbconvert's HTML exporter with the warplab template (lab, less every CDN script)."""
    ex = HTMLExporter(template_name="warplab", extra_template_basedirs=[str(TEMPLATES)])
    ex.register_preprocessor(SiteLinks, enabled=True)
    ex.register_preprocessor(StaticWidgets, enabled=True)
    return ex


def nav(pages_: Sequence[Page], i: Optional[int]) -> dict[str, Any]:
    """The links around page ``i`` (None: the index): previous, index, next (each href and title)."""
    def link(p: Page) -> dict[str, str]:
        return {"href": p.href, "title": p.title}
    if i is None:
        return {"prev": None, "next": link(pages_[0]) if pages_ else None}
    return {"prev": link(pages_[i - 1]) if i > 0 else {"href": "index.html", "title": "Warp Lab: the series"},
            "next": link(pages_[i + 1]) if i + 1 < len(pages_) else None}


def index_notebook(pages_: Sequence[Page], readme: str) -> Any:
    """The index as a notebook of markdown cells (so it goes through the same exporter): the
    README's opening paragraph, the series table with links, and the README's "Start" section."""
    # up to the README's pictures, which live in docs/, not in the site
    intro = re.split(r"^!\[", readme.split("\n## ", 1)[0], maxsplit=1, flags=re.M)[0]
    rows = "\n".join(f"| [`{p.name}`]({p.href}) | {p.description or html.escape(p.title)} |" for p in pages_)
    table = f"## The series\n\n| notebook | what you will be able to do |\n| --- | --- |\n{rows}"
    start = ('## Run it locally\n\n<a id="run-it-locally"></a>These pages show each notebook as it ran; the '
             "explorers, the exercises and your own changes need a running notebook. From the README:\n\n"
             + readme_start(readme))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(s) for s in (intro.strip(), table, start)])
    nb.metadata["title"] = "Warp Lab"
    return nb


def write_page(nb: Any, out: Path, title: str, links: dict[str, Any], name: str, names: Sequence[str]) -> Path:
    """``nb`` as ``out/name``, titled ``title``, with ``links`` around it; ``names`` are the
    notebooks this build has pages for (links to them are made links to their pages)."""
    body, _ = exporter().from_notebook_node(
        nb, resources={"metadata": {"name": title}, "warplab_nav": links, "warplab_pages": list(names)})
    path = out / name
    path.write_text(body, encoding="utf-8")
    return path


def build_one(page: Page, out: Path, links: dict[str, Any], names: Sequence[str], execute: bool) -> float:
    """Write ``page``'s HTML into ``out``; the seconds its run took (0 without ``execute``)."""
    stored = nbformat.read(page.notebook, as_version=4)
    seconds = 0.0
    if execute:
        executed, seconds = run_notebook(page.notebook)
        stored = with_ignored_outputs(stored, executed)
    write_page(stored, out, page.title, links, page.href, names)
    return seconds


class SiteError(Exception):
    """A problem with the command's arguments; the message says what to do."""


def build(out: Path, paths: Sequence[Path], *, execute: bool = True, jobs: int = 1) -> list[Path]:
    """The site in ``out``: index.html and one page per notebook in ``paths``; the paths written.

    ``out`` must be new, empty, or a site this built before (which is emptied first); anything
    else raises :class:`SiteError`. ``jobs`` notebooks run at once (1: in this process)."""
    readme = README.read_text(encoding="utf-8")
    pages_ = pages(paths, readme)
    if out.exists():
        if not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file()):
            raise SiteError(f"--out {out} is not an empty folder or a site built by ./warplab site; "
                            "name a new or empty folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("built by ./warplab site (scripts/build_site.py); rebuilding empties this folder\n")
    names = [p.name for p in pages_]
    write_page(index_notebook(pages_, readme), out, "Warp Lab", nav(pages_, None), "index.html", names)
    def report(p: Page, seconds: float) -> None:
        print(f"site: {p.href}" + (f" (notebook ran in {seconds:.1f} s)" if execute else ""), flush=True)
    if jobs <= 1:
        for i, p in enumerate(pages_):
            report(p, build_one(p, out, nav(pages_, i), names, execute))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {p: pool.submit(build_one, p, out, nav(pages_, i), names, execute) for i, p in enumerate(pages_)}
            for p, f in futures.items():
                report(p, f.result())
    return [out / "index.html", *(out / p.href for p in pages_)]


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="./warplab site", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the site's folder (default: build/site)")
    ap.add_argument("--only", nargs="+", metavar="NN", default=None,
                    help="only these notebooks, by number (e.g. --only 00 02): a quicker partial site")
    ap.add_argument("--stored", action="store_true",
                    help="run nothing: the stored outputs only (no animations, explorers or timings)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="notebooks run at once")
    args = ap.parse_args(argv)
    paths = notebook_paths()
    if args.only:
        known = {p.name[:2] for p in paths}
        bad = sorted(set(args.only) - known)
        if bad:
            ap.error(f"--only takes notebook numbers among {', '.join(sorted(known))}; got {', '.join(bad)}")
        paths = [p for p in paths if p.name[:2] in args.only]
    t = time.perf_counter()
    try:
        written = build(args.out.resolve(), paths, execute=not args.stored, jobs=args.jobs)
    except SiteError as exc:
        ap.error(str(exc))
    print(f"site: {len(written)} pages in {args.out} in {time.perf_counter() - t:.0f} s; "
          f"open {args.out / 'index.html'} in a browser", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
