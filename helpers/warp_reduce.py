"""Warp reduce trees, run on either backend, with their traces.

``WarpReduceSum`` (kernels/warp_reduce.cuh) is five ``__shfl_down_sync`` steps, offsets 16, 8, 4,
2, 1; afterwards lane 0 holds the sum of its warp. On the cupy backend the instrumented kernel
(built with ``-DWARPLAB_TRACE``) records every lane at every step; on the emulator the same steps
are replayed with :func:`helpers.emulator.shuffle`. Both give the same :class:`~helpers.trace.Trace`.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import backend as _backend
from . import emulator, params
from .trace import Recorder, Trace, gpu_source, run_traced

OFFSETS: tuple[int, ...] = (16, 8, 4, 2, 1)
_CTYPES = {"int32": "int", "uint32": "unsigned int", "float32": "float", "float64": "double"}
WARP_REDUCE_KERNELS: dict[str, tuple[str, ...]] = {
    "warp_reduce_sum": tuple(f"warp_reduce_sum_kernel<{c}>" for c in _CTYPES.values()),
}


def _labels() -> tuple[str, ...]:
    return ("input", *(f"shfl_down {o}" for o in OFFSETS))


def warp_reduce_sum_trace(values: Any, backend: Optional[str] = None) -> Trace:
    """Trace WarpReduceSum over ``values`` ((32,) or (n_warps, 32)): 6 steps (input + 5 shuffles).

    Sums wrap for integers and round as float32/float64 adds do on the GPU (one add per step).
    """
    params.backend(backend)
    v = params.values(values).reshape(-1, params.LANES)
    meta = {"kernel": "warp_reduce_sum.cu", "algorithm": "WarpReduceSum", "offsets": list(OFFSETS)}
    if _backend.resolve(backend) == "cupy":
        return _gpu_trace(v, meta)
    full = np.full(v.shape[0], params.FULL_MASK, np.uint32)
    active = np.ones(v.shape, bool)
    rec = Recorder(v, "WarpReduceSum", meta=meta)
    held = v.copy()
    for offset, label in zip(OFFSETS, _labels()[1:]):
        r = emulator.shuffle("down", held, np.full(v.shape, offset), 32, full, active)
        with np.errstate(over="ignore"):
            held = (held + r.values).astype(v.dtype)
        rec.step(label, held, r, full, active)
    return rec.trace()


def _gpu_trace(v: np.ndarray, meta: dict[str, Any]) -> Trace:
    import cupy

    n_warps = v.shape[0]
    expr = f"warp_reduce_sum_kernel<{_CTYPES[v.dtype.name]}>"
    d_out = cupy.zeros(n_warps, dtype=v.dtype)
    held, received, src = run_traced("warp_reduce_sum", expr, len(OFFSETS) + 1, n_warps * 32, n_warps, 32,
                                     (cupy.asarray(v), d_out))
    shape = (len(OFFSETS) + 1, n_warps, params.LANES)
    ones = np.ones(shape, bool)
    return Trace(title="WarpReduceSum", source=gpu_source(), labels=_labels(),
                 held=held.reshape(shape).astype(v.dtype), received=received.reshape(shape).astype(v.dtype),
                 src_lane=src.reshape(shape), active=ones, in_mask=ones, defined=ones, meta=meta)


def warp_reduce_sum(values: Any, backend: Optional[str] = None) -> Any:
    """The sum of each warp's 32 values, as WarpReduceSum computes it (lane 0's final value)."""
    t = warp_reduce_sum_trace(values, backend)
    out = t.held[-1, :, 0]
    return out[0] if np.ndim(values) == 1 else out
