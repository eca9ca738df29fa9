"""Launching a warp kernel of ``kernels/`` over many warps, and its trace: what every function of
:mod:`helpers.topics.warp_reduce` stands on.

A :class:`WarpKernel` names one kernel (``k(const T* in, [scalars,] T* out)``); :func:`run_warps` launches it
over every warp of an input in bounded launches through :func:`helpers.topics.launch.launch` (on a GPU
with the machine's run of the same launch beside it, ``check=True``) and keeps the results lean;
:func:`traced_launch` gives the launch's :class:`~helpers.engine.trace.Trace` from the machine's record of its
shuffles (on a GPU with the hardware's values from the ``-DWARPLAB_TRACE`` build). The registries of
instantiations (:data:`WARP_REDUCE_KERNELS`, :data:`SEED_KERNELS`) are here because a trace of the
hardware compiles from them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from helpers.engine import backend as _backend
from helpers.engine import params
from helpers.topics.launch import Launch, launch
from helpers.engine.ops import CTYPES, INT_DTYPES, op_exprs
from helpers.engine.trace import Trace, check_trace_size, gpu_source, run_traced

LANE = np.arange(params.LANES)

WARP_REDUCE_KERNELS: dict[str, tuple[str, ...]] = {
    "warp_reduce_sum": tuple(f"warp_reduce_sum_kernel<{c}>" for c in CTYPES.values()),
    "warp_reduce_ops": (
        *op_exprs("warp_reduce_kernel<{t}, {op}, false>"),
        *op_exprs("warp_reduce_kernel<{t}, {op}, true>"),
        *op_exprs("warp_reduce_intrinsic_kernel<{t}, {op}>", INT_DTYPES),
        *op_exprs("warp_reduce_cg_kernel<{t}, {op}>"),
        *op_exprs("warp_reduce_cub_kernel<{t}, {op}>"),
    ),
}
# Every instantiation of kernels/seed_block_reduce.cu (registered by helpers.topics.block_reduce): this
# module launches its warp kernels, helpers.topics.block_reduce its block kernels, from one compiled module.
SEED_KERNELS: tuple[str, ...] = (
    *(f"seed_block_reduce_sum_kernel<{c}>" for c in CTYPES.values()),
    *op_exprs("seed_warp_reduce_kernel<{t}, {op}>"),
    *op_exprs("seed_block_x_reduce_kernel<{t}, {op}>"),
    *op_exprs("seed_block_y_reduce_kernel<{t}, {op}>"),
    *op_exprs("seed_partial_warp_kernel<{t}, {op}>"),
)



# ---------------------------------------------------------------- one kernel, many warps

@dataclass(frozen=True)
class WarpKernel:
    """One kernel of this module: its file, name expression and the scalars between ``in`` and
    ``out`` (every kernel here is ``k(const T* in, [scalars,] T* out)``); ``per_warp`` outputs per
    warp (32: every lane writes out[i]; 1: out[warp])."""

    file: str
    expr: str
    scalars: tuple = ()
    per_warp: int = params.LANES


def _args(k: WarpKernel, rows: np.ndarray) -> list:
    return [np.ascontiguousarray(rows).reshape(-1), *k.scalars,
            np.zeros(rows.shape[0] * k.per_warp, rows.dtype)]


def _launch(k: WarpKernel, rows: np.ndarray, backend: Optional[str], trace: bool = False) -> Launch:
    """``k`` over ``rows`` ((n_warps, 32)), one warp per block (every warp full and converged, as
    the kernels' contracts ask). On a GPU the machine runs the same launch (``check=True``); a
    defined value on which the two disagree raises instead of being shown."""
    on_gpu = _backend.resolve(backend) == "cupy"
    r = launch(k.file, k.expr, rows.shape[0], params.LANES, _args(k, rows), backend=backend,
               check=on_gpu, trace=trace)
    bad = r.disagreements()
    if bad:
        raise RuntimeError(f"the GPU and the SIMT machine disagree on {k.expr} where both are defined: "
                           f"{'; '.join(bad)}")
    return r


# A launch of the tree kernel allocates about 11 kB per warp at its peak and keeps about 9.5 kB per
# warp for the next launch of its shape (registers, memory and race records; measured with
# tracemalloc), some 90 and 75 times a warp's int32 values. Launches of at most n_warps / 240 warps
# keep the peak near a third of the input; at most 4096 warps (2^17 threads, the most whose state the
# machine keeps between launches), near 46 MB however large the input (compare_methods runs four or
# five kernels, one after the other); at least 64 warps bound the per-launch cost. Measured
# (warp_reduce_kernel<int, Sum, false>, 2-core machine, median of 15 launches): 2.1 us a warp at 1024
# warps a launch, 2.2 at 2048, 1.9 at 4096 (1.1 since the machine-speed2 changes), 6.8 at 8192 (no
# state kept: every launch allocates it anew). Under tracemalloc, as scripts/bench_scale.py
# measures, each launch costs about 3.5 ms more (2.8 us a warp at 4096, 7 at 1024), which is why
# launches are as large as memory allows.
_MIN_LAUNCH_WARPS, _MAX_LAUNCH_WARPS = 64, 4096


def _chunks(n_warps: int) -> list[slice]:
    size = max(_MIN_LAUNCH_WARPS, min(params.CHUNK_WARPS, _MAX_LAUNCH_WARPS, n_warps // 240))
    return [slice(s, min(s + size, n_warps)) for s in range(0, n_warps, size)]


def run_warps(k: WarpKernel, v: np.ndarray, backend: Optional[str],
         lanes: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """``k`` over every warp of ``v`` ((n_warps, 32)) in bounded launches (:func:`_chunks`): what each
    thread wrote ((n_warps, per_warp), 0 where undefined) and where it is defined. ``lanes``: keep
    only the first ``lanes`` threads' outputs of each warp ((n_warps, lanes)), where the others
    are not results.

    Results are kept lean, so that comparing several methods on many warps stays within a few
    times the input: where every thread of a warp wrote the same defined bits (the xor butterfly,
    cg, ``__reduce_*_sync``) the values are one column broadcast over the lanes, and where the
    definedness is the same for every warp it is one row broadcast over the warps (read-only views).
    """
    n = v.shape[0]
    pos = len(k.scalars) + 1
    keep = k.per_warp if lanes is None else lanes
    uniform = keep > 1
    col = np.empty((n, 1), v.dtype)
    out: Optional[np.ndarray] = None
    row: Optional[np.ndarray] = None        # the definedness of every warp so far, while it is one row
    ok: Optional[np.ndarray] = None
    for s in _chunks(n):
        r = _launch(k, v[s], backend)
        got = r.outputs[pos].reshape(-1, k.per_warp)[:, :keep]
        got_ok = r.defined(pos).reshape(-1, k.per_warp)[:, :keep]
        all_ok = bool(got_ok.all())
        if not all_ok:
            got[~got_ok] = 0
        row = got_ok[0].copy() if row is None else row
        if ok is None and not (all_ok and row.all()) and not (got_ok == row).all():
            ok = np.empty((n, keep), bool)
            ok[:s.start] = row
        if ok is not None:
            ok[s] = got_ok
        if uniform and all_ok and (got.view(_uint(v.dtype)) == got[:, :1].view(_uint(v.dtype))).all():
            col[s] = got[:, :1]
            continue
        if out is None:
            out = np.empty((n, keep), v.dtype)
            out[:s.start] = col[:s.start]
        uniform = False
        out[s] = got
    if out is None:
        out = np.broadcast_to(col, (n, keep))
    return out, np.broadcast_to(row, (n, keep)) if ok is None else ok


# ---------------------------------------------------------------- traces from the machine

def _words(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The machine's 32-bit shuffle steps as ``dtype``: a 64-bit value is shuffled as two 32-bit
    halves, high then low word (as the PTX does), so pairs of steps join into one."""
    if dtype.itemsize == 4:
        return a.view(dtype)
    hi, lo = a[1::2].astype(np.uint64), a[2::2].astype(np.uint64)
    return np.concatenate([np.zeros_like(hi[:1]), (hi << np.uint64(32)) | lo]).view(dtype)


def _pairs(a: np.ndarray, dtype: np.dtype, both: bool = True) -> np.ndarray:
    """Flags of the machine's shuffle steps, joined like :func:`_words` (``both``: a value is
    defined only if both halves are)."""
    if dtype.itemsize == 4:
        return a
    return np.concatenate([a[:1], a[1::2] & a[2::2] if both else a[1::2]])


def _machine_trace(r: Launch, dtype: np.dtype, labels: tuple[str, ...], title: str, meta: dict[str, Any],
                   out: np.ndarray, out_ok: np.ndarray) -> Trace:
    """The tree as the machine ran it: step 0 each lane's input, step k what it holds after shuffle k
    (what it offered to shuffle k + 1; after the last, ``out``, the kernel's final value, defined
    where ``out_ok``)."""
    n_warps = out.shape[0]
    if len(labels) == 1:             # width 1: no shuffle; the input is the result
        flags = np.broadcast_to(np.ones(1, bool), (1, n_warps, params.LANES))
        own = np.broadcast_to(LANE, (1, n_warps, params.LANES)).astype(np.int32)
        return Trace(title, "SIMT machine", labels, np.where(out_ok, out, 0)[None], np.where(out_ok, out, 0)[None],
                     own, flags.copy(), flags.copy(), out_ok[None].copy(), meta)
    sh = r.report.trace.shuffles(np.uint32)
    offered_ok = _pairs(r.report.trace.offered_defined(), dtype)
    offered = _words(sh.held, dtype)
    defined = _pairs(sh.defined, dtype)
    if len(offered) != len(labels):
        raise RuntimeError(f"{meta['kernel']} executed {len(offered) - 1} shuffles per warp; the trace "
                           f"expects {len(labels) - 1} ({', '.join(labels[1:])})")
    held_ok = np.concatenate([offered_ok[1:], out_ok[None]])
    held = np.where(held_ok, np.concatenate([offered[1:], out[None]]), 0).astype(dtype)
    received = np.where(defined, _words(sh.received, dtype), 0).astype(dtype)
    received[0] = held[0]
    return Trace(title=title, source="SIMT machine", labels=labels, held=held, received=received,
                 src_lane=_pairs(sh.src_lane, dtype, both=False), active=_pairs(sh.active, dtype, both=False),
                 in_mask=_pairs(sh.in_mask, dtype, both=False), defined=defined, meta=meta)


def _hardware_values(trace: Trace, k: WarpKernel, rows: np.ndarray, held_ok: np.ndarray) -> Trace:
    """``trace`` (the machine's flags) with the values the GPU recorded in the ``-DWARPLAB_TRACE``
    build of the same kernel: what is defined the machine says, what the numbers are the hardware."""
    import cupy

    n_warps = rows.shape[0]
    d_args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in _args(k, rows)]
    registered = {**WARP_REDUCE_KERNELS, "seed_block_reduce": SEED_KERNELS}[k.file]
    held, received, src = run_traced(k.file, k.expr, trace.n_steps, n_warps * params.LANES, n_warps, params.LANES,
                                     d_args, name_expressions=registered)
    shape, d = trace.held.shape, trace.defined

    def values(a: np.ndarray, ok: np.ndarray) -> np.ndarray:
        return np.where(ok, np.nan_to_num(a.reshape(shape)), 0).astype(trace.held.dtype)

    return Trace(trace.title, gpu_source(), trace.labels, values(held, held_ok), values(received, d),
                 np.where(d, src.reshape(shape), trace.src_lane).astype(np.int32), trace.active, trace.in_mask, d,
                 trace.meta)


def traced_launch(k: WarpKernel, rows: np.ndarray, labels: tuple[str, ...], title: str, meta: dict[str, Any],
            backend: Optional[str], final: Any = None) -> Trace:
    """Launch ``k`` with the machine's trace and turn it into a tree trace. ``final(offered, received)``
    gives the lanes' values after the last shuffle when the kernel writes only lane 0's (WarpReduceSum),
    checked against that lane."""
    check_trace_size(rows.shape[0])
    r = _launch(k, rows, backend, trace=True)
    pos = len(k.scalars) + 1
    out, ok = r.outputs[pos], r.defined(pos)
    if r.machine_outputs is not None:
        out = r.machine_outputs[pos]                  # the trace is the machine's; the GPU agreed above
    if final is not None:
        sh = r.report.trace.shuffles(np.uint32)
        last_sent, last_got = _words(sh.held, rows.dtype)[-1], _words(sh.received, rows.dtype)[-1]
        every = final(last_sent, last_got)
        if ok.all() and not np.array_equal(every[:, 0].view(_uint(rows.dtype)), out.view(_uint(rows.dtype))):
            raise RuntimeError(f"{k.expr}: lane 0's last step does not give the kernel's output")
        every_ok = _pairs(r.report.trace.offered_defined(), rows.dtype)[-1] & _pairs(sh.defined, rows.dtype)[-1]
        every_ok[:, 0] &= ok
        out, ok = every, every_ok
    else:
        out, ok = out.reshape(rows.shape), ok.reshape(rows.shape)
    trace = _machine_trace(r, rows.dtype, labels, title, meta, out, ok)
    if r.engine != "cupy":
        return trace
    held_ok = np.concatenate([_pairs(r.report.trace.offered_defined(), rows.dtype)[1:], ok[None]]) \
        if len(labels) > 1 else ok[None]
    return _hardware_values(trace, k, rows, held_ok)


def _uint(dtype: np.dtype) -> type:
    return np.uint64 if dtype.itemsize == 8 else np.uint32
