#!/usr/bin/env python3
"""Speed of the SIMT machine (helpers.machine) on this computer: not a test, a measurement.

    PYTHONPATH=. python scripts/bench_machine.py            # every figure
    PYTHONPATH=. python scripts/bench_machine.py --quick    # fewer repetitions

Figures (issue 11's targets in brackets), each the median of interleaved repetitions after one
warm-up launch (compilation and the first binding of a launch shape are not timed; they are
reported apart as "parse + prepare"):

* one warp's WarpReduceSum (float)                                      [<= 5 ms]
* a 1024-thread BlockReduce (float sum, one block)                       [<= 50 ms]
* a full reduction of N = 2^16 floats with each of v0..v8 and onepass, the launch shapes of
  helpers.topics.reduce.run_passes (block 256; grid-stride grids sized as on an H200)   [<= 2 s each]
* parsing a module's PTX, and preparing a launch (decoding + binding), cold and cached [<= 100 ms]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import machine  # noqa: E402
from helpers.topics import reduce as R  # noqa: E402
from helpers.machine import executor, ptx  # noqa: E402

N = 2 ** 16
BLOCK = 256


CPU: list[float] = []


def _median(fn, reps: int) -> float:
    """Median wall time; the median CPU time of this process goes to CPU (on a shared machine the
    two differ by the time spent waiting for a core)."""
    fn()  # warm-up: binds the launch shape
    ts, cs = [], []
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    CPU.append(statistics.median(cs))
    return statistics.median(ts)


def warp_reduce_sum(reps: int) -> float:
    mod = machine.kernel_module("warp_reduce_sum", ("warp_reduce_sum_kernel<float>",))
    k = mod.get_function("warp_reduce_sum_kernel<float>")
    x = np.random.default_rng(0).standard_normal(32).astype(np.float32)
    out = np.zeros(1, np.float32)
    return _median(lambda: k((1,), (32,), (x, out)), reps)


def block_reduce_1024(reps: int) -> float:
    expr = "block_reduce_kernel<float, warplab::ops::Sum<float>>"
    mod = machine.kernel_module("block_reduce", (expr,))
    k = mod.get_function(expr)
    x = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    out = np.zeros(1024, np.float32)
    return _median(lambda: k((1,), (1024,), (x, out)), reps)


def full_reduction(version: str, reps: int) -> tuple[float, float]:
    """Every pass of ``version`` on the machine as the series runs it (helpers.topics.reduce.run_passes:
    the shipped PTX, block 256, grid-stride grids sized as on an H200)."""
    x = np.random.default_rng(2).standard_normal(N).astype(np.float32)
    result = [0.0]

    def run() -> None:
        result[0] = R.run_passes(x, version, BLOCK, backend="emulator").value

    t = _median(run, reps)
    return t, abs(result[0] - float(x.astype(np.float64).sum()))


def parse_prepare() -> list[tuple[str, float, float, float]]:
    rows = []
    for name, expr in (("reduce_v4", "reduce_v4<256>"), ("reduce_v8", "reduce_v8<256>"),
                       ("block_reduce", "block_reduce_kernel<float, warplab::ops::Sum<float>>")):
        mod = machine.kernel_module(name, (expr,))
        real = mod.lowered[expr]
        t0 = time.perf_counter()
        m = ptx.parse(mod.ptx)
        fn = m.functions[real]
        t_parse = time.perf_counter() - t0
        t0 = time.perf_counter()
        executor.Launch(m, fn, tuple(p.type == "u64" for p in fn.params)).reshape((1, 1, 1), (256, 1, 1), 0)
        t_prep = time.perf_counter() - t0
        machine.RawModule(ptx=mod.ptx).get_function(real)
        t0 = time.perf_counter()
        machine.RawModule(ptx=mod.ptx).get_function(real)  # cached: parsed module and function
        t_cached = time.perf_counter() - t0
        rows.append((name, t_parse, t_prep, t_cached))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    reps = 3 if args.quick else 9
    print(f"SIMT machine speed on this computer (median of {reps} after a warm-up)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  (wall time, then CPU time of this process; load average {load:.1f} on {os.cpu_count()} cores)")
    t = warp_reduce_sum(reps * 3)
    print(f"  WarpReduceSum, one warp           {t * 1e3:8.1f} ms  cpu {CPU[-1] * 1e3:6.1f} ms   (target <= 5 ms)")
    t = block_reduce_1024(reps)
    print(f"  BlockReduce, 1024 threads         {t * 1e3:8.1f} ms  cpu {CPU[-1] * 1e3:6.1f} ms   (target <= 50 ms)")
    for v in R.VERSIONS:
        t, err = full_reduction(v, max(1, reps // 3))
        print(f"  full reduction {v:8s} N=2^16     {t:8.2f} s   cpu {CPU[-1]:6.2f} s    (target <= 2 s; "
              f"|sum - float64 sum| = {err:.2e})")
    for name, tp, tb, tc in parse_prepare():
        print(f"  parse {name:13s} {tp * 1e3:6.0f} ms, prepare a launch {tb * 1e3:6.0f} ms, cached {tc * 1e3:5.1f} ms"
              f"   (target <= 100 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
