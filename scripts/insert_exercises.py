"""Insert (or refresh) the "Exercises" section of notebooks 01-07, just before each one's Summary.

    python scripts/insert_exercises.py [notebooks/NN_x.ipynb ...]     (default: notebooks/0[1-7]_*.ipynb)

Idempotent: every cell it writes carries the tag ``warplab-exercises``; running it again removes
those cells and writes them anew (so it also refreshes them after helpers/exercises changes).
The section is: a numbered heading with how the cells are checked (collapsed), a ``%load_ext`` cell, then per
exercise a markdown cell with its contract (how it is checked collapsed) and an ``%%exercise NAME`` cell holding the starter
code. Each exercise cell's stored output is what running it prints, the "not solved yet" feedback
and the buttons' plain-text form, so strict nbval passes without re-executing the notebook.

Where the "## Summary" heading shares a markdown cell with text before it, the cell is split in
two at the heading (the text before keeps the cell's id). Run it after merging the notebooks'
branches, and again after ``scripts/execute_notebooks.py`` (which would store widget views).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.exercises import by_notebook, magic  # noqa: E402

TAG = "warplab-exercises"
SUMMARY = re.compile(r"^##\s+Summary\b", re.M)
NUMBERED = re.compile(r"^##\s+(\d+)\.", re.M)

INTRO = """## {n}. Exercises

Now write the code yourself. Each cell below holds the start of a device function in CUDA C. Replace
the TODO and run the cell: you see at once whether it is right. Line numbers in the feedback are the
cell's. Hints come one at a time; the solution is one click away.

<details><summary>How your code is checked, and how to grade a class</summary>

Each cell is compiled by NVRTC and checked on the SIMT machine, lane by lane, and on the GPU as well if
there is one. It runs every edge case the contract names plus random launches, against a NumPy
reference. Meanwhile the machine watches for races, undefined shuffles, out-of-bounds accesses and
barriers that only part of a warp reaches.

*Instructors:* `helpers.exercises.check(name, source)` grades one answer, and
`python -m helpers.exercises grade notebooks/*.ipynb --csv grades.csv` grades a class's notebooks.
</details>"""

# "How it is checked" is evidence, not the task: collapsed, one click away.
CONTRACT = """### {n}.{k} `{name}`: {title}

**Contract.** `{signature}`. {contract}

<details><summary>How it is checked</summary>

{compare}
</details>"""


def _tagged(cell: Any) -> bool:
    return TAG in cell.get("metadata", {}).get("tags", [])


def _meta() -> dict:
    return {"tags": [TAG]}


def _outputs(name: str, source: str) -> list:
    outs = []
    for obj in magic.outputs(name, source):
        data = obj._repr_mimebundle_()
        # A stored widget view has no model until the cell runs again: keep its plain-text form only
        # (nbval does not compare widget views, so a fresh run still matches).
        data = {k: v for k, v in data.items() if k != "application/vnd.jupyter.widget-view+json"}
        outs.append(nbformat.v4.new_output("display_data", data=data))
    return outs


def exercise_cells(notebook: str, section: int, stem: str) -> list:
    """The cells of the Exercises section of notebook ``"NN"`` (numbered ``section``)."""
    cells = [nbformat.v4.new_markdown_cell(INTRO.format(n=section), metadata=_meta(), id=f"{stem}-exercises"),
             nbformat.v4.new_code_cell("%load_ext helpers.exercises", metadata=_meta(), id=f"{stem}-exercises-load")]
    for k, ex in enumerate(by_notebook(notebook), start=1):
        cells.append(nbformat.v4.new_markdown_cell(
            CONTRACT.format(n=section, k=k, name=ex.name, title=ex.title, signature=ex.signature,
                            contract=ex.contract, compare=ex.compare),
            metadata=_meta(), id=f"{stem}-exercise-{ex.name}-contract"))
        code = ex.starter.rstrip("\n")
        cells.append(nbformat.v4.new_code_cell(f"%%exercise {ex.name}\n{code}", metadata=_meta(),
                                               id=f"{stem}-exercise-{ex.name}",
                                               outputs=_outputs(ex.name, code)))
    return cells


def insert(path: Path) -> str:
    """Rewrite ``path`` with its Exercises section; returns a one-line account."""
    nb = nbformat.read(path, as_version=4)
    notebook = path.name[:2]
    if not by_notebook(notebook):
        return f"{path.name}: no exercises for notebook {notebook}, unchanged"
    cells = [c for c in nb.cells if not _tagged(c)]
    at = next((i for i, c in enumerate(cells) if c.cell_type == "markdown" and SUMMARY.search(c.source)), None)
    if at is None:
        raise SystemExit(f"{path}: no markdown heading '## Summary' to insert the exercises before")
    cell = cells[at]
    m = SUMMARY.search(cell.source)
    if cell.source[:m.start()].strip():   # the heading shares its cell with text before it: split
        before, after = cell.source[:m.start()].rstrip("\n"), cell.source[m.start():]
        cell.source = before
        cells.insert(at + 1, nbformat.v4.new_markdown_cell(after, id=f"{cell.get('id', 'c')}-summary"))
        at += 1
    numbers = [int(n) for c in cells[:at] if c.cell_type == "markdown" for n in NUMBERED.findall(c.source)]
    section = max(numbers, default=0) + 1
    new = exercise_cells(notebook, section, path.stem[:2])
    # nbval runs only cells that look executed; count on from the cells before, as a fresh run would.
    count = max((c.get("execution_count") or 0 for c in cells[:at] if c.cell_type == "code"), default=0)
    for c in new:
        if c.cell_type == "code":
            count += 1
            c.execution_count = count
    nb.cells = cells[:at] + new + cells[at:]
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return f"{path.name}: section {section}, {len(by_notebook(notebook))} exercise(s) before the Summary"


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("0[1-7]_*.ipynb"))
    for p in paths:
        print(insert(p))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
