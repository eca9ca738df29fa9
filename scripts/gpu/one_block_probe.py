"""Exploration on the H200 (not a recording): one-block sums of 2^10 .. 2^14 floats
(scripts/gpu/one_block_probe.cu: layouts of the loads and shapes of the block tree) beside v9 as
dispatched, v8 and cupy.sum, device time by CUDA-graph replay, interleaved.

    python3 scripts/gpu/one_block_probe.py OUT.json
"""
from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np

from helpers import bench
from helpers.engine import kernels
from helpers.topics import reduce as R

SRC = Path(__file__).with_name("one_block_probe.cu").read_text()
CONFIGS = [(b, u, t, lay) for b, u, t, lay in itertools.product((128, 256, 512), (1, 2, 4), (0, 1, 2), (0, 1, 2))]
NAMES = [f"probe_one<{b}, {u}, {t}, {lay}>" for b, u, t, lay in CONFIGS]


def main(path: str) -> None:
    import cupy

    mod = cupy.RawModule(code=SRC, options=("-std=c++17", *kernels.include_options()), name_expressions=NAMES)
    out_rows = []
    for k in (10, 11, 12, 13, 14):
        n = 2**k
        x = cupy.random.RandomState(k).random_sample(n, dtype=cupy.float32)
        ref = float(cupy.sum(x, dtype=cupy.float64))
        fns = {"cupy.sum": lambda: cupy.sum(x), "empty": bench.empty_launcher()}
        for v in ("v8", "v9"):
            plan = R.make_plan(v, n)
            first, second = plan.launchers(x)
            fns[f"{v} dispatched b{plan.block} u{plan.unroll}"] = (lambda f=first, g=second: (f(), g()))
        ok = {}
        for (b, u, t, lay), name in zip(CONFIGS, NAMES):
            if b * u * 4 > 4 * n:      # more than one float4 slot per vector: skip idle threads
                continue
            fn = mod.get_function(name)
            out = cupy.empty(1, cupy.float32)
            args = (x, out, np.int64(n))
            fn((1,), (b,), args)
            ok[name] = abs(float(out[0]) - ref) <= R.error_bound(ref, n, "v9", b, 1)
            fns[name] = (lambda f=fn, bb=b, a=args: f((1,), (bb,), a))
        res = bench.time_interleaved(fns, calls=bench.graph_calls(n), reps=5, replays=5, host_repeats=5,
                                     host_keys=["empty"])
        cs = res["cupy.sum"]["device_us"]
        ranked = sorted(res, key=lambda q: res[q]["device_us"])
        print(f"\n== 2^{k}: cupy.sum {cs:.2f} us, empty {res['empty']['device_us']:.2f}")
        for q in ranked[:12]:
            print(f"   {q:<30} {res[q]['device_us']:6.2f} us  x{cs / res[q]['device_us']:.3f}"
                  f"{'' if ok.get(q, True) else '  WRONG'}")
        for q in res:
            if q.startswith("v"):
                print(f"   {q:<30} {res[q]['device_us']:6.2f} us")
        for q, r in res.items():
            out_rows.append({"n": n, "name": q, "ok": ok.get(q, True), **r})
    Path(path).write_text(json.dumps(out_rows, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
