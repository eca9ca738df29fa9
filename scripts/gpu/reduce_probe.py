"""Exploration on the H200 (not a recording): device time (CUDA graph replay) of kernels/reduce_v9.cu
itself at many (block, REDUCE_UNROLL, grid, REDUCE_STREAM) settings, with cupy.sum
and the empty kernel interleaved in the same repetitions, per size. It chooses the dispatcher's
rules in helpers/topics/reduce.py (v9_config); the numbers notebooks print come from data/
(scripts/gpu/reduce.sh), never from here.

    python3 scripts/gpu/reduce_probe.py OUT.json [--sizes 10,12,20] [--reps 3]

Earlier rounds (2026-12-01, a probe kernel file since folded into kernels/):
  * round 1: one atom.acq_rel ticket instead of fence + atomic + fence is 0.1-0.6 us faster; the
    floor of last-block-done was ~2.4 us even for 2^10 (empty kernel 0.72 us), where a single-block
    v8 took 1.6 us: the chain after the partial sums, not the launch, was the cost.
  * round 2: the ticket drawn at block start and {tag, value} 64-bit slots polled by the
    last-started block: 2^20 2.98 us (cupy.sum 3.23), 2^28 x1.005, 2^30 x1.003 (5 waves).
Round 3 (this script, 2026-12-04) measures v9 as shipped at every setting. Its first run also
tried issuing the last, partial round of loads together (predicated): slower almost everywhere
(2^12 one block of 256: 2.15 us against 1.59), so it was dropped; v9's loads became explicit
ld.global.nc (__ldg) after the PTX showed plain ld.global (the slots' asm blocks the compiler's
read-only inference).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import cupy
import numpy as np

from helpers import bench
from helpers.engine import kernels
from helpers.topics import reduce as R

BLOCKS = (128, 256, 512, 1024)


def exprs() -> tuple[str, ...]:
    return tuple(f"reduce_v9<{b}>" for b in BLOCKS)


_MODS: dict = {}


def kernel(block: int, unroll: int, stream: int):
    key = (unroll, stream)
    if key not in _MODS:
        _MODS[key] = kernels.module("reduce_v9", name_expressions=exprs(),
                                    defines=(f"REDUCE_UNROLL={unroll}", f"REDUCE_STREAM={stream}"))
    return _MODS[key].get_function(f"reduce_v9<{block}>")


class V9:
    """One v9 launch at a forced (block, unroll, grid, stream) on x."""

    def __init__(self, x, block: int, unroll: int, grid: int, stream: int):
        self.k = kernel(block, unroll, stream)
        self.block, self.grid = block, grid
        self.slots = cupy.zeros(grid, dtype=cupy.uint64)
        self.state = cupy.zeros(1, dtype=cupy.uint64)
        self.out = cupy.empty(1, dtype=cupy.float32)
        self.args = (x, self.slots, self.state, self.out, np.int64(x.size))

    def __call__(self) -> None:
        self.k((self.grid,), (self.block,), self.args)


def candidates(n: int, sm: int) -> list[tuple[int, int, int, int]]:
    """(block, unroll, grid, stream) settings worth timing at n."""
    m = max(1, n // 4)
    out = set()
    if n <= 2**23:
        for b in BLOCKS:
            for u in (1, 2, 4, 8):
                need = -(-m // (b * u))                     # blocks for one round of loads
                for g in {1, 2, 4, 8, 16, 32, 64, 96, 128, sm, 2 * sm, need, -(-need // 2), -(-need // 4)}:
                    if 1 <= g <= need and g <= 4 * sm:
                        out.add((b, u, g, 0))
    if n >= 2**22:
        for b in (256, 512, 1024):
            per_sm = 2048 // b
            for u in (2, 4, 8):
                for k in (1, 2, 3, 4, 5, 8):
                    for s in (0, 1):
                        g = k * per_sm * sm
                        if g * b * u <= 2 * m:
                            out.add((b, u, g, s))
    return sorted(out)


def check(p: V9, ref: float, n: int) -> dict:
    vals = []
    for _ in range(5):
        p.out.fill(cupy.nan)
        p()
        vals.append(cupy.asnumpy(p.out).tobytes())
    got = float(np.frombuffer(vals[0], np.float32)[0])
    bound = R.error_bound(ref, n, "v9", p.block, p.grid)
    return {"ok": len(set(vals)) == 1 and abs(got - ref) <= bound, "value": got, "err": abs(got - ref)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sizes", default=",".join(str(k) for k in range(10, 31)))
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    sm = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
    results: dict = {"sm_count": sm, "rows": [], "best": {}}
    empty = bench.empty_launcher()
    t_all = time.time()
    for k in (int(s) for s in args.sizes.split(",")):
        n = 2**k
        t0 = time.time()
        x = cupy.random.RandomState(n).random_sample(n, dtype=cupy.float32)
        ref = float(cupy.sum(x, dtype=cupy.float64))
        fns = {"empty": empty, "cupy.sum": lambda: cupy.sum(x)}
        plan = R.make_plan("v9", n)
        f1, _ = plan.launchers(x)
        fns["v9 dispatched"] = f1
        checks, keys = {}, {}
        for b, u, g, s in candidates(n, sm):
            key = f"b{b} u{u} g{g} s{s}"
            p = V9(x, b, u, g, s)
            checks[key] = check(p, ref, n)
            keys[key] = (b, u, g, s)
            fns[key] = p
        res = bench.time_interleaved(fns, calls=bench.graph_calls(n), reps=args.reps, replays=5, host_repeats=10,
                                     host_keys=["empty", "cupy.sum", "v9 dispatched"])
        for key, r in res.items():
            results["rows"].append({"n": n, "name": key, "config": keys.get(key), **r, **checks.get(key, {})})
        cs = res["cupy.sum"]["device_us"]
        ranked = sorted(keys, key=lambda q: res[q]["device_us"])
        results["best"][n] = {"key": ranked[0], "config": keys[ranked[0]], "us": res[ranked[0]]["device_us"],
                              "cupy_sum_us": cs}
        d = res["v9 dispatched"]
        print(f"\n== n=2^{k} ({time.time() - t0:.1f} s, {len(keys)} settings)  cupy.sum {cs:.2f} us  "
              f"empty {res['empty']['device_us']:.2f}  v9 dispatched (b{plan.block} g{plan.grids[0]} "
              f"s{int(plan.stream_loads)}) {d['device_us']:.2f} us  host: empty {res['empty']['host_us']:.1f} "
              f"cupy.sum {res['cupy.sum']['host_us']:.1f} v9 {d['host_us']:.1f}", flush=True)
        for q in ranked[:8]:
            r = res[q]
            spread = f"{min(r['device_us_reps']):.2f}-{max(r['device_us_reps']):.2f}"
            print(f"   {q:<26} {r['device_us']:8.2f} us ({spread}) {4 * n / r['device_us'] / 1e3:6.0f} GB/s "
                  f"x{cs / r['device_us']:.3f}  {'ok' if checks[q]['ok'] else 'WRONG'}", flush=True)
        bad = [q for q in keys if not checks[q]["ok"]]
        if bad:
            print(f"   WRONG: {bad[:6]}")
        del x, fns, plan
        cupy.get_default_memory_pool().free_all_blocks()
        Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"\nprobe took {time.time() - t_all:.0f} s")


if __name__ == "__main__":
    main()
