"""Draw the README's pictures with the same code the notebooks use (never a hand-pasted screenshot).

    python scripts/readme_figures.py [OUT_DIR]     (default: docs/img)

Writes ``shuffle.png`` (__shfl_down_sync, delta 2, width 16) and ``warp_reduce_frame.png`` (one
frame of the WarpReduceSum animation, after the first shuffle), both on the emulator.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.widgets import intrinsics as widgets  # noqa: E402
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.topics.warp_reduce import warp_reduce_sum_trace  # noqa: E402


def main(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    shuffle = widgets.shuffle_view("down", offset=2, width=16, backend="emulator").figure
    frame = figures.trace_figure(warp_reduce_sum_trace(np.arange(32, dtype=np.int32), backend="emulator"), 1)
    written = []
    for name, fig in (("shuffle.png", shuffle), ("warp_reduce_frame.png", frame)):
        path = out_dir / name
        path.write_bytes(render.figure_png(fig, dpi=110))
        written.append(path)
    return written


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img"):
        print(f"wrote {p}")
