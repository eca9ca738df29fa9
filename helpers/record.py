"""``python -m helpers.record``: record hardware results into ``data/``, on a GPU only.

Writes, stamped with GPU, driver and CuPy versions:

* ``data/warp_intrinsics.json``  every case of :func:`helpers.cases.fixed_cases`, run on the GPU
* ``data/warp_reduce_sum_trace.json``  WarpReduceSum traced by the instrumented kernel

and then every other recorder the series registers (:data:`RECORDERS`). CI, with no GPU, checks that
the emulator reproduces each of these files (tests/test_recorded.py and the per-topic tests).
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable

import numpy as np

from . import backend, cases, data
from .warp_reduce import warp_reduce_sum_trace

# Modules with a ``record() -> list[pathlib.Path]`` function, run after the core recordings.
RECORDERS: tuple[str, ...] = ("helpers.record_reduce",)


def trace_inputs() -> dict[str, np.ndarray]:
    """The WarpReduceSum inputs recorded as traces (the notebooks animate these)."""
    rng = np.random.default_rng(7)
    return {
        "ones_int32": np.ones(32, np.int32),
        "lane_int32": np.arange(32, dtype=np.int32),
        "random_float32": rng.integers(-9, 10, 32).astype(np.float32),
    }


def record_intrinsics() -> list:
    stamp = backend.stamp()
    fixed = cases.fixed_cases()
    results = []
    for i, case in enumerate(fixed):
        results.append({**case, "result": cases.run(case, "cupy")})
        if i % 20 == 0:
            print(f"  intrinsics: {i + 1}/{len(fixed)}", file=sys.stderr)
    out = [data.write("warp_intrinsics", {"cases": results}, stamp)]
    traces = {name: warp_reduce_sum_trace(v, backend="cupy").to_dict() for name, v in trace_inputs().items()}
    out.append(data.write("warp_reduce_sum_trace", {"traces": traces}, stamp))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only-core", action="store_true", help="skip the per-topic recorders")
    args = parser.parse_args(argv)
    d = backend.detect()
    if not d.usable:
        print(f"helpers.record needs a CUDA GPU and found none: {d.reason}.", file=sys.stderr)
        return 2
    print(backend.report("cupy"), file=sys.stderr)
    written = record_intrinsics()
    if not args.only_core:
        for name in RECORDERS:
            try:
                mod = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    raise
                continue
            fn: Callable[[], list] = getattr(mod, "record")
            written += list(fn())
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
