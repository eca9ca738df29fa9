"""Exploration on the H200 (not a recording): device time (CUDA graph replay) and host-inclusive
time of one-launch reduction variants, cupy.sum, copy and an empty kernel, interleaved, per size.

    python3 scripts/gpu/reduce_probe.py time OUT.json      # prints a table, writes the numbers
    ncu ... python3 scripts/gpu/reduce_probe.py profile OUT.json   # one launch of each size's best

What the two runs on the H200 (2026-12-01, scripts/gpu/probe.sh) showed, and what went into
kernels/reduce_v9.cu (device time, median of 3 interleaved repetitions; cupy.sum in the same run):
  * round 1 (probe_onepass): one atom.acq_rel ticket instead of fence + atomic + fence is 0.1-0.6 us
    faster; the floor of last-block-done was ~2.4 us even for 2^10 (empty kernel 0.72 us), where a
    single-block v8 took 1.6 us: the chain after the partial sums, not the launch, was the cost.
  * round 2 (probe_poll): the ticket drawn at block start and {tag, value} 64-bit slots polled by
    the last-started block: 2^20 2.98 us (cupy.sum 3.23), 2^28 x1.005, 2^30 x1.003 (5 waves);
    a warp polling many slots serially was slow for large grids (fixed in v9: the whole last block
    collects beyond 128 slots); evict-first loads helped from 2^24 on.
Not a recording: the numbers that notebooks print come from data/ (scripts/gpu/reduce.sh).
"""
from __future__ import annotations

import itertools
import json
import math
import sys
import time
from pathlib import Path

import cupy
import numpy as np

from helpers import bench
from helpers.engine import kernels
from helpers.topics import reduce as R

SRC = (Path(__file__).with_name("reduce_probe.cu")).read_text()
SMALL = [(256, 4), (512, 2), (512, 4), (1024, 1), (1024, 2), (1024, 4)]
LARGE = [(256, 4, lm, c, k) for lm in (0, 1) for c in (0, 1) for k in (1, 2, 5)] + \
        [(1024, u, lm, c, k) for u in (4, 8) for lm in (0, 1) for c in (0, 1) for k in (1, 2, 5)]


def name(b, u, lm, t, tail):
    return f"probe_onepass<{b}, {u}, {lm}, {t}, {tail}>"


def pname(b, u, lm, c):
    return f"probe_poll<{b}, {u}, {lm}, {c}>"


EXPRS = sorted({name(b, u, 0, 1, 1) for b, u in SMALL} | {name(1024, 4, 1, 1, 1)}
               | {pname(b, u, 0, 0) for b, u in SMALL} | {pname(b, u, lm, c) for b, u, lm, c, _ in LARGE})


def module():
    opts = ("-std=c++17", f"-I{kernels.KERNELS_DIR}")
    return cupy.RawModule(code=SRC, options=opts, name_expressions=EXPRS)


class OnePass:
    def __init__(self, mod, expr, b, grid, x):
        self.k = mod.get_function(expr)
        self.b, self.grid = b, grid
        poll = expr.startswith("probe_poll")
        self.partials = cupy.zeros(grid, dtype=cupy.uint64 if poll else cupy.float32)
        self.done = cupy.zeros(2 if poll else 1, dtype=cupy.uint32)
        self.out = cupy.empty(1, dtype=cupy.float32)
        self.args = (x, self.partials, self.done, self.out, np.int64(x.size))

    def __call__(self):
        self.k((self.grid,), (self.b,), self.args)


def resident(kern, b):
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, b, 0)
    return per_sm * cupy.cuda.Device().attributes["MultiProcessorCount"]


def grids(n, b, u, res, policy):
    m = max(1, n // 4)
    blocks_iters = -(-m // (b * u))          # block-iterations of U float4 each
    if policy == "resident":
        return max(1, min(blocks_iters, res))
    iters = -(-blocks_iters // res)           # balanced: every block the same number of iterations
    return max(1, -(-blocks_iters // iters))


def configs(mod, n, x):
    out = {}
    if n <= 2**22:
        for b, u in SMALL:
            for e, tag in ((name(b, u, 0, 1, 1), "t"), (pname(b, u, 0, 0), "P")):
                g = grids(n, b, u, resident(mod.get_function(e), b), "resident")
                out[f"{tag} b{b} u{u} g{g}"] = (e, b, g)
    if n >= 2**22:
        e = name(1024, 4, 1, 1, 1)
        g = grids(n, 1024, 4, resident(mod.get_function(e), 1024), "resident")
        out[f"t b1024 u4 L1 g{g}"] = (e, 1024, g)
        for b, u, lm, c, k in LARGE:
            e = pname(b, u, lm, c)
            res = resident(mod.get_function(e), b)
            g = max(1, min(k * res, -(-max(1, n // 4) // b)))
            out[f"P b{b} u{u} L{lm} {'chunk' if c else 'strid'} x{k} g{g}"] = (e, b, g)
    return out


def main_time(path):
    mod = module()
    sizes = [2**k for k in (10, 14, 16, 18, 20, 22, 24, 26, 28, 30)]
    results = {"sizes": sizes, "rows": [], "best": {}}
    empty = bench.empty_launcher()
    for n in sizes:
        t0 = time.time()
        x = cupy.random.RandomState(n).random_sample(n, dtype=cupy.float32)
        ref = float(cupy.sum(x, dtype=cupy.float64))
        fns = {"empty": empty, "cupy.sum": lambda: cupy.sum(x)}
        dst = cupy.empty_like(x)
        fns["copy"] = lambda: dst.data.copy_from_device_async(x.data, x.nbytes)
        op = R.make_plan("onepass", n, 256)
        f1, _ = op.launchers(x)
        fns["onepass<256>u4"] = f1
        v8 = R.make_plan("v8", n, 256)
        a, b2 = v8.launchers(x)
        fns["v8<256>u4"] = lambda: (a(), b2())
        checks = {}
        for key, (e, b, g) in configs(mod, n, x).items():
            p = OnePass(mod, e, b, g, x)
            vals = []
            for _ in range(5):
                p.out.fill(cupy.nan)
                p()
                vals.append(cupy.asnumpy(p.out)[0])
            bound = R.error_bound(ref, n, "onepass", b, g) 
            ok = all(np.float32(v).tobytes() == np.float32(vals[0]).tobytes() for v in vals) and abs(vals[0] - ref) <= bound
            checks[key] = {"ok": bool(ok), "value": float(vals[0]), "err": float(abs(vals[0] - ref))}
            fns[key] = p
        res = bench.time_interleaved(fns, calls=bench.graph_calls(n), reps=3, replays=5,
                                     host_repeats=20, host=n <= 2**24)
        for key, r in res.items():
            results["rows"].append({"n": n, "name": key, **r, **checks.get(key, {})})
        cs = res["cupy.sum"]["device_us"]
        ranked = sorted((k for k in res if k[:2] in ("t ", "P ")), key=lambda k: res[k]["device_us"])
        best = ranked[0]
        results["best"][n] = {"key": best, "expr": configs(mod, n, x)[best]}
        print(f"\n== n=2^{int(math.log2(n))}  ({time.time() - t0:.1f} s)  cupy.sum {cs:.2f} us  "
              f"empty {res['empty']['device_us']:.2f} us  copy {res['copy']['device_us']:.2f} us  "
              f"onepass {res['onepass<256>u4']['device_us']:.2f}  v8 {res['v8<256>u4']['device_us']:.2f}", flush=True)
        if "host_us" in res["empty"]:
            print(f"   host: empty {res['empty']['host_us']:.1f}  cupy.sum {res['cupy.sum']['host_us']:.1f}  "
                  f"onepass {res['onepass<256>u4']['host_us']:.1f}  best {res[best]['host_us']:.1f} us")
        for k in ranked[:10] + ranked[-2:]:
            r = res[k]
            spread = f"{min(r['device_us_reps']):.2f}-{max(r['device_us_reps']):.2f}"
            gbps = 4 * n / r["device_us"] / 1e3
            print(f"   {k:<34} {r['device_us']:9.2f} us ({spread}) {gbps:7.0f} GB/s  x{cs / r['device_us']:.3f} cupy.sum"
                  f"  {'ok' if checks[k]['ok'] else 'WRONG'}")
        del x, dst, fns, op, v8
        cupy.get_default_memory_pool().free_all_blocks()
    Path(path).write_text(json.dumps(results, indent=1))


def main_profile(path):
    """One launch of each size's best variant, onepass and cupy.sum (for ncu)."""
    best = json.loads(Path(path).read_text())["best"]
    mod = module()
    for n_s, entry in best.items():
        n = int(n_s)
        if n < 2**20:
            continue
        e, b, g = entry["expr"]
        x = cupy.random.RandomState(n).random_sample(n, dtype=cupy.float32)
        p = OnePass(mod, e, b, g, x)
        p(); cupy.cuda.runtime.deviceSynchronize()
        cupy.sum(x); cupy.cuda.runtime.deviceSynchronize()
        print(f"profiled n={n}: {e} grid {g}; cupy.sum", flush=True)
        del x
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    {"time": main_time, "profile": main_profile}[sys.argv[1]](sys.argv[2])
