"""Exploration on the H200 (not a recording): the floor under a one-launch sum
(scripts/gpu/floor_probe.cu). At each size it times, interleaved, by CUDA-graph replay:
the empty kernel (one block of 32) and an empty kernel of each launch shape; the loads alone
(MODE 0) with five load instructions; the loads and the block tree with no combine across blocks
(MODE 1, v9 without its slots); the same read by bulk copies (TMA) into shared memory; v9 at the
same shapes and as dispatched; the parts of v9's combine across blocks (floor_v9's variants); v9's logic with other
combines, load loops and launch bounds, each with several workspace placements (kinds k, e, c, h, t, q, m: V9K, V9E,
V9C, V9H, V9T, V9Q, V9M, V9A); and cupy.sum. What it showed: docs/probes/ (v9_round4.md, v9_round5.md; kinds q, m
and the V9A rows have not run yet).

    python3 scripts/gpu/floor_probe.py OUT.json [--sizes 19,20,21,24] [--reps 5]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from helpers import bench
from helpers.engine import kernels
from helpers.topics import reduce as R

SRC = (Path(__file__).with_name("floor_probe.cu")).read_text()
# Config kinds that launch a floor_probe.cu instantiation (v9, v9s and v9m launch reduce_v9 itself).
COMPILED_KINDS = ("empty", "load", "tma", "combine", "k", "e", "c", "h", "t", "q", "m")
LOAD_NAMES = ("nc", "cs", "nc.na.256B", "nc.128B", "nc.na")


def configs(n: int, sm: int) -> list[tuple]:
    """("load", B, U, G, LOADS, MODE), ("empty", B, G) and ("tma", B, BYTES, COPIES, MODE) to time at n."""
    m = n // 4
    out: list[tuple] = []
    if n <= 2**22:
        shapes = [(512, 4, 1), (256, 4, 1), (1024, 2, 1), (512, 2, 1), (128, 4, 1), (512, 4, 2), (1024, 4, 1)]
        for b, u, rounds in shapes:
            g = m // (b * u * rounds)
            if g < 1:
                continue
            out.append(("empty", b, g))
            for loads in range(5):
                out.append(("load", b, u, g, loads, 0))
            out.append(("load", b, u, g, 0, 1))
            out.append(("v9", b, u, g))
        for b, nbytes, copies in [(512, 32768, 1), (512, 32768, 4), (256, 16384, 1), (256, 16384, 2),
                                  (1024, 32768, 4), (256, 8192, 1)]:
            if 4 * n >= nbytes:
                out += [("tma", b, nbytes, copies, 0), ("tma", b, nbytes, copies, 1)]
        for b, u in ((512, 4), (1024, 2), (256, 4), (512, 2), (128, 4)):
            g = m // (b * u)
            if 1 < g <= 128:
                out += [("combine", b, u, g, 0, v) for v in (0, 2, 3, 6, 7)]
            for v, most in ((7, 128), (8, 256), (9, 512)):
                if most // 2 < g <= most or (v == 7 and 1 < g <= 128):
                    out.append(("combine", b, u, g, 0, v))
    else:
        out.append(("empty", 1024, 128))
        out += [("load", 1024, 4, 128, 1, 0), ("load", 1024, 4, 128, 1, 1)]
        out += [("combine", 1024, 4, 128, 1, v) for v in (0, 1, 2, 3, 6, 7)]
        out += [("combine", 1024, 2, 256, 1, 8), ("combine", 1024, 4, 256, 1, 8), ("combine", 1024, 2, 264, 1, 9),
                ("combine", 1024, 4, 512, 1, 9)]
        for b, u, g in [(1024, 2, 2 * sm), (1024, 4, 2 * sm), (1024, 4, 4 * sm), (1024, 4, 8 * sm),
                        (512, 4, 4 * sm), (1024, 2, 4 * sm)]:
            out.append(("empty", b, g))
            for loads in (0, 1, 2, 4):
                out.append(("load", b, u, g, loads, 0))
            out.append(("load", b, u, g, 1, 1))
            out.append(("v9s", b, u, g))
        for b, nbytes, copies in [(512, 32768, 1), (256, 32768, 1), (512, 32768, 4), (1024, 32768, 4),
                                  (512, 16384, 1)]:
            out += [("tma", b, nbytes, copies, 0), ("tma", b, nbytes, copies, 1)]
    out += [("k", *k) for k in V9K.get(n, [])]
    out += [("e", *k) for k in V9E.get(n, [])]
    out += [("c", *k, coop) for k in V9C.get(n, []) for coop in (0, 1, 2)]
    out += [("h", *k) for k in V9H.get(n, [])]
    out += [("t", *k) for k in V9T.get(n, [])]
    out += [("k", *k[:4], 1, k[4]) for k in V9T.get(n, [])]
    out += [("q", *k) for k in V9Q.get(n, [])]
    out += [("m", *k) for k in V9M.get(n, [])]
    out += [("k", *k[:4], 1, k[4]) for k in V9M.get(n, [])]
    out += [(kind, *k[:3]) for k in V9M.get(n, []) if k[3] for kind in ("v9s", "v9m")]
    out += [("k", *k[:4], packed, k[4]) for k in V9A.get(n, []) for packed in (1, 2)]
    if n in ONE_BLOCK:
        b, u = ONE_BLOCK[n]
        out.append(("load", b, u, 1, 0, 1))
    return out


# v9 with warp 0 collecting up to 32 * K slots: (B, U, G, STREAM, PACKED, K) per size, each timed with
# PLACEMENTS separately allocated workspaces (where the ticket and the slots sit in the L2 moves with them).
V9K = {
    2**19: [(256, 4, 128, 0, 0, 4), (256, 4, 128, 0, 1, 4), (512, 4, 64, 0, 0, 4), (512, 4, 64, 0, 1, 4)],
    2**20: [(512, 4, 128, 0, 0, 4), (512, 4, 128, 0, 1, 4), (256, 4, 256, 0, 0, 8), (256, 4, 256, 0, 1, 8),
            (512, 2, 256, 0, 0, 8), (128, 4, 512, 0, 0, 16), (1024, 2, 128, 0, 0, 4)],
    2**21: [(512, 4, 256, 0, 0, 8), (512, 4, 256, 0, 1, 8), (256, 4, 512, 0, 0, 16), (512, 4, 128, 0, 0, 4)],
    2**22: [(1024, 4, 256, 0, 0, 8), (512, 4, 512, 0, 0, 16), (1024, 4, 128, 0, 0, 4)],
    2**23: [(1024, 4, 128, 0, 0, 4), (1024, 4, 128, 1, 0, 4), (1024, 4, 256, 0, 0, 8), (1024, 4, 256, 1, 0, 8)],
    2**24: [(1024, 4, 128, 1, 0, 4), (1024, 4, 128, 1, 1, 4), (1024, 4, 256, 1, 0, 8), (1024, 2, 256, 1, 0, 8),
            (1024, 4, 132, 1, 0, 8), (1024, 4, 256, 1, 1, 8)],
    2**25: [(1024, 4, 128, 1, 0, 4), (1024, 4, 256, 1, 0, 8), (1024, 4, 264, 1, 0, 16)],
    2**26: [(1024, 4, 256, 1, 0, 8), (1024, 4, 264, 1, 0, 16), (1024, 4, 128, 1, 0, 4)],
}
PLACEMENTS = int(os.environ.get("PLACEMENTS", "3"))
# v9 with the ticket drawn at the end (floor_v9e): (B, U, G, STREAM, K, SPEC) per size.
V9E = {
    2**20: [(256, 4, 256, 0, 8, 0), (256, 4, 256, 0, 8, 1)],
    2**24: [(1024, 4, 128, 1, 4, 0), (1024, 4, 128, 1, 4, 1)],
    2**25: [(1024, 4, 128, 1, 4, 0), (1024, 4, 128, 1, 4, 1)],
    2**26: [(1024, 4, 128, 1, 4, 1)],
}
# No atomic, a collector chosen in advance (floor_v9c): (B, U, G, STREAM, K, WHO), each launched plainly (0),
# cooperatively from a module built with CuPy's enable_cooperative_groups (1), and cooperatively from the plain
# module (2) (the kind's last field); two-level tickets (floor_v9h): (B, U, G, STREAM, K, GROUP).
V9C = {
    2**19: [(256, 4, 128, 0, 4, 0), (512, 4, 64, 0, 4, 0)],
    2**20: [(256, 4, 256, 0, 8, 0), (256, 4, 256, 0, 8, 1), (512, 4, 128, 0, 4, 0), (1024, 2, 128, 0, 4, 0)],
    2**21: [(512, 4, 256, 0, 8, 0), (1024, 4, 128, 0, 4, 0)],
    2**24: [(1024, 4, 128, 1, 4, 0), (1024, 4, 128, 1, 4, 1)],
}
V9H = {
    2**20: [(256, 4, 256, 0, 8, 8), (256, 4, 256, 0, 8, 16), (256, 4, 256, 0, 8, 32), (512, 4, 128, 0, 4, 16)],
    2**24: [(1024, 4, 128, 1, 4, 16), (1024, 4, 128, 1, 4, 8)],
}
# The last partial round issued whole (floor_v9t<..., false>, kind t), each beside v9k with the same shape
# (PACKED 1): (B, U, G, STREAM, K). The union of what round 5's runs C and D timed.
V9T = {
    2**20: [(256, 4, 264, 0, 8), (512, 4, 132, 0, 8), (256, 2, 264, 0, 8)],
    2**21: [(512, 4, 264, 0, 16), (512, 4, 132, 0, 8), (1024, 4, 132, 0, 8)],
    2**23: [(1024, 8, 132, 1, 8), (1024, 4, 128, 1, 4), (1024, 8, 128, 1, 4)],
    2**24: [(1024, 8, 132, 1, 8), (1024, 4, 128, 1, 4), (1024, 8, 128, 1, 4), (1024, 4, 132, 1, 8),
            (1024, 16, 132, 1, 8), (1024, 6, 132, 1, 8), (512, 8, 264, 1, 16), (512, 4, 264, 1, 16)],
    2**25: [(1024, 8, 132, 1, 8), (1024, 4, 128, 1, 4), (1024, 8, 128, 1, 4), (1024, 4, 132, 1, 8),
            (1024, 16, 132, 1, 8)],
    2**26: [(1024, 8, 132, 1, 8), (1024, 4, 128, 1, 4), (1024, 4, 132, 1, 8), (1024, 8, 264, 1, 16)],
    2**27: [(1024, 8, 132, 1, 8), (1024, 4, 264, 1, 16), (1024, 8, 264, 1, 16)],
}
# One loop for whole and partial rounds (floor_v9t<..., true>, kind q; not run yet): (B, U, G, STREAM, K).
V9Q = {
    2**20: [(256, 4, 256, 0, 8), (512, 4, 132, 0, 8)],
    2**21: [(512, 4, 256, 0, 8), (512, 4, 264, 0, 16)],
    2**24: [(1024, 8, 132, 1, 8), (1024, 4, 128, 1, 4), (1024, 4, 132, 1, 8), (512, 8, 264, 1, 16), (512, 4, 264, 1, 16)],
    2**25: [(1024, 8, 132, 1, 8), (1024, 4, 132, 1, 8)],
    2**26: [(1024, 8, 132, 1, 8), (1024, 4, 132, 1, 8)],
}
# v9's code under __launch_bounds__(BLOCK, MINB) (floor_v9m, kind m; not run yet), each beside v9k with the
# same shape (PACKED 1), and, for the evict-first (HBM) rows, reduce_v9 itself at the same shape with and
# without __launch_bounds__(BLOCK, 1) (kinds v9s, v9m): (B, U, G, STREAM, K, MINB). Whole rounds at powers
# of two (no one-at-a-time tail); 16 a round in one wave at its 86 registers (1 block of 512, 2 of 256 per SM).
# In ptxas 13.0's SASS the MINB kernels keep U float4 loads in flight (tests/engine/test_sass.py); without it
# reduce_v9 keeps 4 to 6 of 8 and v9k 3 to 8 (scripts/sass_loads.py).
_V9M_HBM = [(1024, 8, 128, 1, 4, 1), (512, 8, 256, 1, 8, 1), (256, 8, 512, 1, 16, 1), (1024, 4, 128, 1, 4, 1)]
V9M = {
    2**20: [(256, 4, 256, 0, 8, 1), (512, 4, 128, 0, 4, 1)],
    2**21: [(512, 4, 256, 0, 8, 1), (512, 8, 128, 0, 4, 1)],
    2**23: _V9M_HBM,
    2**24: _V9M_HBM + [(512, 16, 128, 1, 4, 1), (256, 16, 256, 1, 8, 1)],
    2**25: _V9M_HBM + [(512, 16, 128, 1, 4, 1)],
    2**26: _V9M_HBM,
    2**27: _V9M_HBM,
}
# v9's ticket drawn so that warp 0 issues its loads before the reply arrives (floor_v9k PACKED 2; not run
# yet), each beside v9's own draw (PACKED 1): (B, U, G, STREAM, K). In ptxas 13.0's SASS of v9 the warp that
# draws waits for the atomic's reply (the SHFL of ptxas's warp aggregation) before issuing its loads; with
# PACKED 2 the first wait on it comes after the loads (tests/engine/test_sass.py). Round 4 put drawing the ticket at
# 0.24 us at 2^20 (docs/probes/v9_round4.md). At 2^24 also the shape branch v9-inflight launches from HBM
# (256 x 8 a round, 512 blocks), so scripts/gpu/inflight_verdict.py sees the ticket there too.
V9A = {
    2**19: [(256, 4, 128, 0, 4)],
    2**20: [(256, 4, 256, 0, 8), (512, 4, 128, 0, 4)],
    2**21: [(512, 4, 256, 0, 8)],
    2**24: [(1024, 4, 128, 1, 4), (1024, 8, 128, 1, 4), (256, 8, 512, 1, 16)],
    2**25: [(1024, 4, 128, 1, 4)],
}
# One block, no combine: floor_kernel<B, U, 0, 1> at grid 1 beside v9 as dispatched (B, U).
ONE_BLOCK = {2**10: (128, 2), 2**11: (128, 4), 2**12: (256, 4), 2**13: (512, 4), 2**14: (512, 4)}


# kind -> (the kernel's name expression, the row's label), from a config tuple (see configs)
_NAMES: dict[str, Any] = {
    "k": lambda c: (f"floor_v9k<{c[1]}, {c[2]}, {c[4]}, {c[5]}, {c[6]}>",
                    f"v9k{('', 'p', 'a')[c[5]]} s{c[4]} b{c[1]} u{c[2]} g{c[3]} K{c[6]}"),
    "e": lambda c: (f"floor_v9e<{c[1]}, {c[2]}, {c[4]}, {c[5]}, {c[6]}>",
                    f"v9end{'-spec' if c[6] else ''} s{c[4]} b{c[1]} u{c[2]} g{c[3]} K{c[5]}"),
    "c": lambda c: (f"floor_v9c<{c[1]}, {c[2]}, {c[4]}, {c[5]}, {c[6]}>",
                    f"v9{('plain', 'coop-rdc', 'coop')[c[7]]} who{c[6]} s{c[4]} b{c[1]} u{c[2]} g{c[3]} K{c[5]}"),
    "h": lambda c: (f"floor_v9h<{c[1]}, {c[2]}, {c[4]}, {c[5]}, {c[6]}>",
                    f"v9groups G{c[6]} s{c[4]} b{c[1]} u{c[2]} g{c[3]} K{c[5]}"),
    "t": lambda c: (f"floor_v9t<{c[1]}, {c[2]}, {c[4]}, {c[5]}, false>", f"v9pred s{c[4]} b{c[1]} u{c[2]} g{c[3]} K{c[5]}"),
    "q": lambda c: (f"floor_v9t<{c[1]}, {c[2]}, {c[4]}, {c[5]}, true>", f"v9oneloop s{c[4]} b{c[1]} u{c[2]} g{c[3]} K{c[5]}"),
    "m": lambda c: (f"floor_v9m<{c[1]}, {c[2]}, {c[4]}, {c[5]}, {c[6]}>",
                    f"v9minb{c[6]} s{c[4]} b{c[1]} u{c[2]} g{c[3]} K{c[5]}"),
    "empty": lambda c: (f"floor_empty<{c[1]}>", f"empty b{c[1]} g{c[2]}"),
    "load": lambda c: (f"floor_kernel<{c[1]}, {c[2]}, {c[4]}, {c[5]}>",
                       f"{'loads' if c[5] == 0 else 'loads+tree'} {LOAD_NAMES[c[4]]} b{c[1]} u{c[2]} g{c[3]}"),
    "tma": lambda c: (f"floor_tma<{c[1]}, {c[2]}, {c[3]}, {c[4]}>",
                      f"tma{'+tree' if c[4] else ''} b{c[1]} {c[2] // 1024}KiB x{c[3]}"),
    "combine": lambda c: (f"floor_v9<{c[1]}, {c[2]}, {c[4]}, {c[5]}>", f"combine{c[5]} s{c[4]} b{c[1]} u{c[2]} g{c[3]}"),
}


def instantiations(sizes: Any, sm: int, kinds: Any = COMPILED_KINDS) -> list[str]:
    """The floor_probe.cu name expressions the configs of every size in ``sizes`` (floats) launch,
    for a GPU of ``sm`` SMs, restricted to ``kinds``."""
    return sorted({expr(c) for n in sizes for c in configs(n, sm) if c[0] in kinds and c[0] in COMPILED_KINDS})


def expr(c: tuple) -> str:
    """The floor_probe.cu instantiation a config launches (v9, v9s and v9m configs launch reduce_v9 itself)."""
    return _NAMES[c[0]](c)[0]


def label(c: tuple) -> str:
    """The config's row label."""
    return _NAMES[c[0]](c)[1] if c[0] in _NAMES else f"{c[0]} b{c[1]} u{c[2]} g{c[3]}"


V9_BOUNDS = re.compile(r"__launch_bounds__\(BLOCK(?:, \d+)?\)(\s+reduce_v9)")


def v9_source(min_blocks: int) -> str:
    """kernels/reduce_v9.cu declared ``__launch_bounds__(BLOCK, min_blocks)``, or ``__launch_bounds__(BLOCK)``
    when ``min_blocks`` is 0, whichever the file declares (a probe of the declaration)."""
    src = kernels.source("reduce_v9")
    bounds = f"__launch_bounds__(BLOCK, {min_blocks})" if min_blocks else "__launch_bounds__(BLOCK)"
    out, count = V9_BOUNDS.subn(lambda m: bounds + m.group(1), src)
    if count != 1:
        raise RuntimeError("kernels/reduce_v9.cu no longer declares reduce_v9's launch bounds as "
                           "floor_probe.V9_BOUNDS expects; update it")
    return out


class V9:
    """reduce_v9 itself at one launch shape, declared ``__launch_bounds__(BLOCK, min_blocks)`` (0: the block
    size alone), whatever kernels/reduce_v9.cu declares."""

    def __init__(self, x, block: int, unroll: int, grid: int, stream: int, min_blocks: int = 0):
        import cupy

        name, defines = f"reduce_v9<{block}>", (f"REDUCE_UNROLL={unroll}", f"REDUCE_STREAM={stream}")
        mod = cupy.RawModule(code=v9_source(min_blocks), name_expressions=[name],
                             options=("-std=c++17", *(f"-D{d}" for d in defines), *kernels.include_options()))
        self.k = mod.get_function(name)
        self.block, self.grid = block, grid
        self.out = cupy.empty(1, dtype=cupy.float32)
        self.args = (x, cupy.zeros(grid, dtype=cupy.uint64), cupy.zeros(1, dtype=cupy.uint64), self.out,
                     np.int64(x.size))

    def __call__(self) -> None:
        self.k((self.grid,), (self.block,), self.args)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sizes", default="19,20,21,24")
    ap.add_argument("--only", default="", help="comma-separated kinds to time (empty, load, tma, combine, v9, v9s, v9m, k, e, c, h, t, q, m)")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    import cupy

    sm = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
    sizes = [2 ** int(k) for k in args.sizes.split(",")]
    opts = ("-std=c++17", *kernels.include_options())
    mod = cupy.RawModule(code=SRC, options=opts, name_expressions=instantiations(sizes, sm))
    coop = cupy.RawModule(code=SRC, options=opts, name_expressions=instantiations(sizes, sm, ("c",)),
                          enable_cooperative_groups=True)
    rows = []
    t_all = time.time()
    for k in (int(s) for s in args.sizes.split(",")):
        n = 2**k
        x = cupy.random.RandomState(k).random_sample(n, dtype=cupy.float32)
        ref = float(cupy.sum(x, dtype=cupy.float64))
        sink = cupy.zeros(1 << 16, dtype=cupy.float32)
        fns = {"empty 1x32": bench.empty_launcher(), "cupy.sum": lambda: cupy.sum(x)}
        plan = R.make_plan("v9", n)
        fns[f"v9 dispatched b{plan.block} u{plan.unroll} g{plan.grids[0]}"] = plan.launchers(x)[0]
        checks = {}
        for c in configs(n, sm):
            if args.only and c[0] not in args.only.split(","):
                continue
            key = label(c)
            if c[0] in ("v9", "v9s", "v9m"):
                p = V9(x, c[1], c[2], c[3], int(c[0] != "v9"), int(c[0] == "v9m"))
                p()
                checks[key] = abs(float(p.out[0]) - ref) <= R.error_bound(ref, n, "v9", c[1], c[3])
                fns[key] = p
                continue
            fn = (coop if c[0] == "c" and c[7] == 1 else mod).get_function(expr(c))
            if c[0] == "c" and c[7] == 2:  # the plain module's function, launched by cuLaunchCooperativeKernel
                fn = (lambda f=fn.kernel: lambda g, b, a: f(g, b, a, enable_cooperative_groups=True))()
            if c[0] in ("k", "e", "c", "h", "t", "q", "m"):
                for p in range(PLACEMENTS):
                    pad = cupy.empty(1 + 4099 * p, dtype=cupy.uint8)  # moves the next allocations
                    ws = (cupy.zeros(c[3], dtype=cupy.uint64), cupy.zeros(1, dtype=cupy.uint64),
                          cupy.zeros(1, cupy.float32), pad, cupy.zeros(32 * c[3], dtype=cupy.uint32))
                    a = (x, ws[0], ws[1], ws[4], ws[2], np.int64(n)) if c[0] == "h" else (x, ws[0], ws[1], ws[2], np.int64(n))
                    g, b = c[3], c[1]
                    try:
                        fn((g,), (b,), a)
                        fn((g,), (b,), a)
                        bench.DeviceTimer(lambda f=fn, gg=g, bb=b, aa=a: f((gg,), (bb,), aa), 2)
                    except Exception as e:  # a cooperative launch that cannot be captured, say
                        print(f"   {key} @{p}: {type(e).__name__}: {e}", flush=True)
                        continue
                    checks[f"{key} @{p}"] = abs(float(ws[2][0]) - ref) <= R.error_bound(ref, n, "v9", b, g)
                    fns[f"{key} @{p}"] = (lambda f=fn, gg=g, bb=b, aa=a, keep=ws: f((gg,), (bb,), aa))
                continue
            if c[0] == "combine":
                ws = (cupy.zeros(c[3], dtype=cupy.uint64), cupy.zeros(2, dtype=cupy.uint32), cupy.zeros(1, cupy.float32))
                a, g, b = (x, ws[0], ws[1], ws[2], np.int64(n)), c[3], c[1]
                fn((g,), (b,), a)
                if c[5] in (0, 4, 7, 8, 9):
                    fn((g,), (b,), a)
                    checks[key] = abs(float(ws[2][0]) - ref) <= R.error_bound(ref, n, "v9", b, g)
                fns[key] = (lambda f=fn, gg=g, bb=b, aa=a: f((gg,), (bb,), aa))
                continue
            if c[0] == "empty":
                a, g, b = (sink, np.float32(-1.0)), c[2], c[1]
            elif c[0] == "load":
                a, g, b = (x, sink, np.int64(n // 4), np.float32(-1.0)), c[3], c[1]
            else:
                a, g, b = (x, sink, np.float32(-1.0)), (4 * n) // c[2], c[1]
            if c[0] != "empty" and c[-1] == 1:      # the block sums must add up to the total
                fn((g,), (b,), a)
                checks[key] = abs(float(cupy.sum(sink[:g], dtype=cupy.float64)) - ref) <= 1e-3 * ref
            fns[key] = (lambda f=fn, gg=g, bb=b, aa=a: f((gg,), (bb,), aa))
        t0 = time.time()
        res = bench.time_interleaved(fns, calls=bench.graph_calls(n), reps=args.reps, replays=5, host_repeats=3,
                                     host_keys=[])
        cs = res["cupy.sum"]["device_us"]
        print(f"\n== n=2^{k} ({time.time() - t0:.0f} s): cupy.sum {cs:.2f} us, empty 1x32 "
              f"{res['empty 1x32']['device_us']:.2f} us", flush=True)
        for q in sorted(res, key=lambda q: res[q]["device_us"]):
            r = res[q]
            print(f"   {q:<40} {r['device_us']:8.2f} us ({min(r['device_us_reps']):.2f}-{max(r['device_us_reps']):.2f})"
                  f" x{cs / r['device_us']:.3f}{'' if checks.get(q, True) else '  WRONG'}", flush=True)
            rows.append({"n": n, "name": q, "ok": checks.get(q, True), **r})
        groups: dict = {}
        for q, r in res.items():
            if " @" in q:
                groups.setdefault(q.split(" @")[0], []).append(r["device_us"])
        for q in sorted(groups, key=lambda q: float(np.median(groups[q]))):
            t = groups[q]
            print(f"   placements {q:<34} median {np.median(t):6.2f} us  {min(t):.2f}-{max(t):.2f}  x{cs / np.median(t):.3f}")
        del x, fns
        cupy.get_default_memory_pool().free_all_blocks()
        Path(args.out).write_text(json.dumps(rows, indent=1))
    print(f"\nprobe took {time.time() - t_all:.0f} s")


if __name__ == "__main__":
    main()
