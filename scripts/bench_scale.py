#!/usr/bin/env python3
"""How the emulator scales: 10^6 warps through every entry point that takes (n_warps, 32) values.

Target (issue 15): a million warps within twice the input's memory and in at most 5 s, on the
two-core machine. For each call this prints the wall-clock and CPU time (of a plain call), the
peak memory it allocated (of a second call under ``tracemalloc``: NumPy reports every array to
it), that peak as a multiple of the input's bytes, and how much of the peak is the result itself (what the caller asked to keep).
Traces keep every lane at every step, so ``*_trace`` calls refuse inputs beyond
``trace.MAX_TRACE_WARPS``; results go up to ``params.MAX_WARPS``. The calls of
:mod:`helpers.topics.warp_reduce` launch a kernel from ``kernels/`` on the SIMT machine (its PTX,
lane by lane), which costs far more a warp than the intrinsic emulator's NumPy; their peak also
holds the launch states the machine keeps for reuse (each kernel's last launch shape).

    python scripts/bench_scale.py                 # 10^6 warps, every entry point
    python scripts/bench_scale.py --warps 200000 --only warp_reduce match_any
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.engine import params
from helpers.engine import trace
from helpers.engine import warp
from helpers.topics import warp_reduce as wr  # noqa: E402

TARGET_S = 5.0
TARGET_X = 2.0
EMU = "emulator"


def _nbytes(x: Any) -> int:
    """Bytes a result holds (read-only broadcast views hold none of their own)."""
    if isinstance(x, np.ndarray):
        return 0 if x.base is not None and not x.flags.owndata and 0 in x.strides else x.nbytes
    if dataclasses.is_dataclass(x):
        return sum(_nbytes(getattr(x, f.name)) for f in dataclasses.fields(x))
    if isinstance(x, dict):
        seen, total = set(), 0
        for v in x.values():
            for f in (dataclasses.fields(v) if dataclasses.is_dataclass(v) else ()):
                a = getattr(v, f.name)
                if isinstance(a, np.ndarray) and id(a) not in seen:
                    seen.add(id(a))
                    total += _nbytes(a)
        return total
    return 0


def calls(n: int) -> dict[str, tuple[np.ndarray, Callable[[np.ndarray], Any]]]:
    rng = np.random.default_rng(0)
    ints = rng.integers(-100, 100, (n, 32)).astype(np.int32)
    floats = rng.standard_normal((n, 32)).astype(np.float32)
    return {
        "match_any": (ints, lambda v: warp.match_any(v, backend=EMU)),
        "warp_reduce": (ints, lambda v: wr.warp_reduce(v, backend=EMU)),
        "warp_reduce (ballot)": (ints, lambda v: wr.warp_reduce(v, n_valid=20, partial="ballot", backend=EMU)),
        "warp_reduce_sum": (ints, lambda v: wr.warp_reduce_sum(v, backend=EMU)),
        "compare_methods": (ints, lambda v: wr.compare_methods(v, backend=EMU)),
        "float_order_batch": (floats, lambda v: wr.float_order_batch(v, backend=EMU)),
        "warp_reduce_trace": (ints, lambda v: wr.warp_reduce_trace(v, backend=EMU)),
        "shfl_down": (ints, lambda v: warp.shfl_down(v, 3, backend=EMU)),
        "shfl_idx (per lane)": (ints, lambda v, src=ints & 31: warp.shfl_idx(v, src, backend=EMU)),
        "ballot": (ints, lambda v: warp.ballot(v > 0, backend=EMU)),
        "reduce_add": (ints, lambda v: warp.reduce_add(v, backend=EMU)),
    }


def measure(values: np.ndarray, fn: Callable[[np.ndarray], Any]) -> dict[str, Any]:
    """Two calls of ``fn(values)``: the first timed as a learner runs it, the second under
    ``tracemalloc`` for its peak memory (tracing every allocation slows NumPy's many small ones,
    by about 3.5 ms a machine launch, so one run cannot give both honestly)."""
    w0, c0 = time.perf_counter(), time.process_time()
    refused = None
    try:
        out = fn(values)
    except ValueError as exc:
        out, refused = None, str(exc)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    del out
    tracemalloc.start()
    try:
        out = fn(values)
    except ValueError:
        out = None
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    result = _nbytes(out)
    del out
    return {"wall_s": wall, "cpu_s": cpu, "peak_bytes": peak, "input_bytes": values.nbytes, "result_bytes": result,
            "peak_x": peak / values.nbytes, "working_x": (peak - result) / values.nbytes, "refused": refused}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warps", type=int, default=10**6)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    todo = calls(args.warps)
    names = args.only or list(todo)
    print(f"{args.warps:,} warps; input {todo['warp_reduce'][0].nbytes / 2**20:.0f} MiB; chunks of "
          f"{params.CHUNK_WARPS:,} warps; limits MAX_WARPS {params.MAX_WARPS:,}, MAX_TRACE_WARPS "
          f"{trace.MAX_TRACE_WARPS:,}; load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPU(s)")
    print(f"{'call':<22} {'wall s':>7} {'cpu s':>6} {'peak MiB':>9} {'peak/input':>10} {'result MiB':>10} "
          f"{'other/input':>11}  verdict")
    rows, ok = [], True
    for name in names:
        values, fn = todo[name]
        r = measure(values, fn)
        r["call"] = name
        rows.append(r)
        if r["refused"]:
            print(f"{name:<22} {r['wall_s']:>7.2f} {r['cpu_s']:>6.2f} {r['peak_bytes'] / 2**20:>9.0f} "
                  f"{r['peak_x']:>10.2f} {'':>10} {'':>11}  refused: {r['refused'][:70]}...")
            continue
        fast = r["wall_s"] <= TARGET_S
        small = r["peak_x"] <= TARGET_X
        verdict = "pass" if fast and small else ("slow " if not fast else "") + ("" if small else "memory: see result")
        ok &= fast
        print(f"{name:<22} {r['wall_s']:>7.2f} {r['cpu_s']:>6.2f} {r['peak_bytes'] / 2**20:>9.0f} {r['peak_x']:>10.2f} "
              f"{r['result_bytes'] / 2**20:>10.0f} {r['working_x']:>11.2f}  {verdict}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"warps": args.warps, "rows": rows}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
