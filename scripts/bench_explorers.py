#!/usr/bin/env python3
"""How fast every explorer refreshes (issue 15): drives the real ipywidgets explorers and times each refresh.

Each explorer is built once (on the emulator, as a learner without a GPU has it); then, round after
round, one control at a time is set to another value programmatically, exactly as a learner's click
does: ``control.value = x`` runs the explorer's observer, which computes the view, draws the figure,
renders the PNG and fills the HTML, before the assignment returns. That assignment is what is timed,
with the wall clock (what the learner waits) and the process's CPU time (what the refresh costs;
on a quiet machine the two agree, on a shared one the wall clock also counts waiting for a core).

Explorers keep the settings they rendered last (``helpers.widgets.base.MEMO_SIZE``) and show a setting
seen before again from memory; "new p95" is the 95th percentile over the settings not shown
before in the round (their count is "new"), the honest figure for exploring.

The target (issue 15) is p95 <= 200 ms per explorer on a two-core machine. The machine's load
average is printed beside every round, because other people's work on a shared machine slows
every refresh; compare rounds taken at a low load.

The verdict uses the quietest round, and also says the CPU-time p95 (what a refresh costs when the
machine is not shared): on a loaded machine the wall clock can fail the target while the work passes.

    python scripts/bench_explorers.py                 # 3 rounds of 40 changes per explorer
    python scripts/bench_explorers.py --rounds 5 --changes 60 --json out.json
    python scripts/bench_explorers.py --only shuffle ladder
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_MS = 200.0


def _explorers() -> dict[str, Callable[[], Any]]:
    import numpy as np

    from helpers import data
    from helpers.engine import kernels
    from helpers.widgets import debug
    from helpers.widgets import intrinsics as widgets
    from helpers.widgets import allreduce as widgets_allreduce
    from helpers.widgets import reduce as widgets_reduce

    ladder = data.load("bench_ladder")
    return {
        "shuffle": lambda: widgets.shuffle_explorer(backend="emulator"),
        "ballot": lambda: widgets.ballot_explorer(backend="emulator"),
        "warp_tree": lambda: widgets_reduce.warp_tree_explorer(backend="emulator"),
        "block": lambda: widgets_reduce.block_explorer(backend="emulator"),
        "ladder": lambda: widgets_reduce.ladder_explorer(ladder, live=False),
        "allreduce": lambda: widgets_allreduce.allreduce_explorer(),
        # the lane debugger on two of the series' kernels (the build includes compiling them)
        "debugger": lambda: debug.debug(kernels.source("block_reduce"), "block_reduce_kernel<float, warplab::ops::Sum<float>>",
                                        2, 256, (np.ones(512, np.float32), np.zeros(512, np.float32))),
        "debug_v4": lambda: debug.debug(kernels.source("reduce_v4"), "reduce_v4<256>", 8, 256,
                                        (np.ones(1 << 14, np.float32), np.zeros(8, np.float32), np.int64(1 << 14))),
    }


def _choices(widget: Any, rng: random.Random) -> Any:
    """Another value this control could take, as a learner would pick it."""
    if hasattr(widget, "options") and widget.options:
        options = [o[1] if isinstance(o, tuple) else o for o in widget.options]
        others = [o for o in options if o != widget.value] or options
        return rng.choice(others)
    if hasattr(widget, "min") and hasattr(widget, "max"):
        lo, hi = int(widget.min), int(widget.max)
        others = [v for v in range(lo, hi + 1) if v != widget.value] or [lo]
        return rng.choice(others)
    if isinstance(widget.value, bool):
        return not widget.value
    # text boxes: the mask and the ballot's expression
    if "0x" in str(widget.value).lower() or widget.description.startswith("mask"):
        return rng.choice(["0xFFFFFFFF", "0x0000FFFF", "0xF0F0F0F0", "0xAAAAAAAA", "0x000000FF"])
    return rng.choice(["lane % 3 == 0 and value > 5", "value > 4", "lane < n", "lane & 1", "value % 2 == 0"])


def _settable(box: Any) -> list[str]:
    return [k for k, c in box.controls.items() if not getattr(c, "disabled", False)]


def time_explorer(name: str, build: Callable[[], Any], changes: int, seed: int) -> dict[str, Any]:
    """Build the explorer, then time ``changes`` single-control changes."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    box = build()
    build_ms = 1e3 * (time.perf_counter() - t0)
    wall, cpu, what, first = [], [], [], []
    seen = {tuple(c.value for c in box.controls.values())}
    for _ in range(changes):
        key = rng.choice(_settable(box))
        control = box.controls[key]
        value = _choices(control, rng)
        w0, c0 = time.perf_counter(), time.process_time()
        control.value = value
        wall.append(1e3 * (time.perf_counter() - w0))
        cpu.append(1e3 * (time.process_time() - c0))
        what.append(f"{key}={value!r}")
        state = tuple(c.value for c in box.controls.values())
        first.append(state not in seen)     # a setting shown before comes from the explorer's memory
        seen.add(state)
    slowest = max(range(changes), key=wall.__getitem__)
    new = [w for w, f in zip(wall, first) if f] or wall
    return {"explorer": name, "build_ms": build_ms, "wall_ms": wall, "cpu_ms": cpu, "first_visit": first,
            "slowest": what[slowest], **_stats("wall", wall), **_stats("cpu", cpu), **_stats("new", new)}


def _stats(prefix: str, ms: list[float]) -> dict[str, float]:
    q = statistics.quantiles(ms, n=20, method="inclusive")
    return {f"{prefix}_p50": statistics.median(ms), f"{prefix}_p95": q[18], f"{prefix}_max": max(ms)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--changes", type=int, default=40, help="control changes per explorer per round")
    ap.add_argument("--only", nargs="*", help="explorers to time (default: all)")
    ap.add_argument("--json", type=Path, help="write every timing here")
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    builders = _explorers()
    names = args.only or list(builders)
    # warm-up: imports, fonts and caches, so the first round is not charged for them
    for name in names:
        res = time_explorer(name, builders[name], 3, seed=999)
        if name.startswith("debug"):   # the first build compiles with NVRTC; later ones find it cached
            print(f"{name}: first build {res['build_ms']:.0f} ms (NVRTC included; target 3000 ms)")

    rounds = []
    print(f"target: p95 <= {TARGET_MS:.0f} ms per refresh; {os.cpu_count()} CPU(s)")
    for r in range(args.rounds):
        load = os.getloadavg()[0]
        print(f"\nround {r + 1}: load average {load:.2f} (1 min)")
        print(f"  {'explorer':<10} {'wall p50':>9} {'wall p95':>9} {'wall max':>9}   {'cpu p50':>8} {'cpu p95':>8}   "
              f"{'new p95':>8} {'new':>4}   slowest change")
        results = []
        for name in names:
            res = time_explorer(name, builders[name], args.changes, seed=r)
            if name.startswith("debug"):
                print(f"  {name:<10} build {res['build_ms']:.0f} ms (target 3000 ms: compile, run, trace)")
            res["load"] = load
            results.append(res)
            flag = "" if res["wall_p95"] <= TARGET_MS else "  > target"
            print(f"  {name:<10} {res['wall_p50']:>7.0f}ms {res['wall_p95']:>7.0f}ms {res['wall_max']:>7.0f}ms   "
                  f"{res['cpu_p50']:>6.0f}ms {res['cpu_p95']:>6.0f}ms   {res['new_p95']:>6.0f}ms {sum(res['first_visit']):>4}"
                  f"   {res['slowest']}{flag}")
        rounds.append({"load_before": load, "load_after": os.getloadavg()[0], "results": results})
    quiet = min(rounds, key=lambda rd: rd["load_before"])
    print(f"\nquietest round (load {quiet['load_before']:.2f}):")
    ok = True
    for res in quiet["results"]:
        passed = res["wall_p95"] <= TARGET_MS
        ok &= passed
        print(f"  {res['explorer']:<10} p50 {res['wall_p50']:.0f} ms, p95 {res['wall_p95']:.0f} ms "
              f"(cpu p95 {res['cpu_p95']:.0f} ms; settings not shown before: p95 {res['new_p95']:.0f} ms)  "
              f"wall {'pass' if passed else 'FAIL'}, cpu {'pass' if res['cpu_p95'] <= TARGET_MS else 'FAIL'}")
    if args.json:
        args.json.write_text(json.dumps({"target_ms": TARGET_MS, "cpus": os.cpu_count(), "rounds": rounds}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
