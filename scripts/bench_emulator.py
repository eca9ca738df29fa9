"""Speed of the emulator and of ``import helpers`` (a benchmark, not a test).

    python scripts/bench_emulator.py

Targets: one emulated shuffle on 1 warp < 1 ms, on 1024 warps < 20 ms; ``import helpers`` < 1 s on
a machine without a GPU; a widget update (the pure view function, figure and PNG included) < 200 ms
on the emulator. Prints medians of repeated runs.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.widgets import reduce as widgets_reduce  # noqa: E402
from helpers.viz import render
from helpers.engine import warp
from helpers.widgets import intrinsics as widgets


def median_ms(fn, repeat: int = 50) -> float:
    """The median wall time of ``fn`` in ms, over ``repeat`` calls after a warm-up call."""
    return statistics.median(timeit.repeat(fn, timer=time.perf_counter, number=1, repeat=repeat + 1)[1:]) * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    for n_warps, target in ((1, 1.0), (1024, 20.0)):
        v = rng.random((n_warps, 32)).astype(np.float32)
        active = rng.random((n_warps, 32)) < 0.9
        for name, fn in (("shfl_down", lambda: warp.shfl_down(v, 3, 16, backend="emulator", exited=~active)),
                         ("shfl_idx", lambda: warp.shfl_idx(v, 5, backend="emulator")),
                         ("ballot", lambda: warp.ballot(v > 0.5, backend="emulator"))):
            ms = median_ms(fn)
            print(f"{name:10s} {n_warps:5d} warp(s): {ms:7.3f} ms  (target < {target} ms) {'ok' if ms < target else 'SLOW'}")
    views = {
        "shuffle_view": lambda: widgets.shuffle_view("down", offset=5, width=8, backend="emulator"),
        "ballot_view": lambda: widgets.ballot_view("custom expression", backend="emulator"),
        "warp_tree_view": lambda: widgets_reduce.warp_tree_view("max", 16, n_valid=12, backend="emulator"),
        "block_view": lambda: widgets_reduce.block_view(96, 2, backend="emulator"),
    }
    for name, fn in views.items():
        def update(fn=fn) -> None:  # what a slider move costs: the view, then its PNG
            view = fn()
            render.figure_png(view.figure)
        ms = median_ms(update, repeat=10)
        print(f"{name:14s} widget update: {ms:6.1f} ms  (target < 200 ms) {'ok' if ms < 200 else 'SLOW'}")
    code = "import time; t = time.perf_counter(); import helpers.engine.warp, helpers.engine.trace; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True).stdout)
            for _ in range(5)]
    print(f"import helpers: {statistics.median(runs) * 1e3:.0f} ms  (target < 1000 ms)")


if __name__ == "__main__":
    main()
