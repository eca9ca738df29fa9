"""Execute notebooks in place so their stored outputs are what nbval compares against.

    python scripts/execute_notebooks.py [notebooks/NN_x.ipynb ...]   (default: every notebook)

Runs each notebook top to bottom in a fresh kernel (with the emulator unless WARPLAB_BACKEND says
otherwise), then keeps the files lean: outputs of cells marked ``# NBVAL_IGNORE_OUTPUT`` (animations,
timings) are dropped, since nbval does not compare them; widget state and execution timestamps are
not stored. The backend line is stored as :func:`helpers.engine.backend.stored_report` says, not as this
machine saw it: a learner who opens the notebook has set nothing, and their machine is not this one
(nbval normalises the line either way).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from helpers.engine.backend import stored_report  # noqa: E402  (the project's own package, by path)


def _store_backend_line(outputs: list) -> None:
    for out in outputs:
        if out.output_type == "stream" and out.text.startswith("Backend: "):
            first, _, rest = out.text.partition("\n")
            out.text = stored_report(first) + "\n" + rest


def _merge_streams(outputs: list) -> list:
    """Join consecutive stdout (or stderr) chunks: how the kernel splits a stream is timing, not content."""
    merged: list = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if out.output_type == "stream" and prev is not None and prev.output_type == "stream" and prev.name == out.name:
            prev.text += out.text
        else:
            merged.append(out)
    return merged


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    t = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    elapsed = time.perf_counter() - t
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timestamps: noise in every diff
        if cell.cell_type == "code" and "NBVAL_IGNORE_OUTPUT" in cell.source:
            cell.outputs = []
        if cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.outputs)
            _store_backend_line(cell.outputs)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    os.environ.setdefault("WARPLAB_BACKEND", "emulator")
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for p in paths:
        print(f"{p.name}: executed in {execute(p):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
