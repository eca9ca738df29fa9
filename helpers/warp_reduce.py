"""Warp reduce trees, run on either backend, with their traces.

``WarpReduceSum`` (kernels/warp_reduce.cuh) is five ``__shfl_down_sync`` steps, offsets 16, 8, 4,
2, 1; afterwards lane 0 holds the sum of its warp. On the cupy backend the instrumented kernel
(built with ``-DWARPLAB_TRACE``) records every lane at every step; on the emulator the same steps
are replayed with :func:`helpers.emulator.shuffle`. Both give the same :class:`~helpers.trace.Trace`.

The generic trees (``WarpReduce`` / ``WarpAllReduce`` in kernels/warp_reduce.cuh, kernels in
kernels/warp_reduce_ops.cu) take any operator of :data:`OPS` and any logical warp width:

* :func:`warp_reduce_trace` / :func:`warp_reduce`: the shuffle-down tree (``tree="down"``: lane 0
  of each width-lane segment holds the result) or the xor butterfly (``tree="xor"``: every lane
  does), over ``n_valid`` values per segment: padded with the operator's identity
  (``partial="pad"``, correct) or the seed's way, a ballot-shrunk mask (``partial="ballot"``:
  reads from lanes outside the mask are undefined, and so is everything computed from them).
* :func:`library_reduce` / :func:`compare_methods`: the same reduction by ``__reduce_*_sync``,
  ``cooperative_groups::reduce`` and ``cub::WarpReduce``.
* :func:`reference`: the NumPy reference for every operator; :func:`float_order`: how far a
  float32 tree sum lands from the sequential sum and from a float64 reference.

Undefined values in traces and results are stored as 0 and flagged (``Trace.defined`` is False where
the value a lane received is undefined: the read itself was, or the source lane held an undefined
value), so that they are never shown as numbers; the cupy backend takes these flags from the
emulator, since hardware cannot tell a defined value from a lucky one.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any, Iterator, Optional

import numpy as np

from . import backend as _backend
from . import emulator, kernels, params
from .emulator import ShuffleResult
from .trace import Recorder, Trace, check_trace_size, gpu_source, run_traced

OFFSETS: tuple[int, ...] = (16, 8, 4, 2, 1)
_CTYPES = {"int32": "int", "uint32": "unsigned int", "float32": "float", "float64": "double"}


def _labels() -> tuple[str, ...]:
    return ("input", *(f"shfl_down {o}" for o in OFFSETS))


def warp_reduce_sum_trace(values: Any, backend: Optional[str] = None) -> Trace:
    """Trace WarpReduceSum over ``values`` ((32,) or (n_warps, 32)): 6 steps (input + 5 shuffles).

    Sums wrap for integers and round as float32/float64 adds do on the GPU (one add per step).
    At most ``trace.MAX_TRACE_WARPS`` warps (a trace keeps every lane at every step).
    """
    params.backend(backend)
    v = params.values(values).reshape(-1, params.LANES)
    check_trace_size(v.shape[0])
    meta = {"kernel": "warp_reduce_sum.cu", "algorithm": "WarpReduceSum", "offsets": list(OFFSETS)}
    if _backend.resolve(backend) == "cupy":
        return _gpu_sum_trace(v, meta)
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


def _gpu_sum_trace(v: np.ndarray, meta: dict[str, Any]) -> Trace:
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


@dataclass(frozen=True)
class ShufflePtx:
    """How WarpReduceSum<T> shuffles in PTX: ``count`` shfl.sync instructions in all, and the PTX
    lines of its first step (offset 16), registers loaded from constants replaced by the constant."""

    dtype: str
    count: int
    first_step: tuple[str, ...]


def shuffle_ptx(dtype: str = "float64", arch: str = "sm_90") -> ShufflePtx:
    """The shfl.sync instructions of ``WarpReduceSum<T>`` (kernels/warp_reduce_sum.cu) in the PTX
    NVRTC made for ``arch``, read from the shipped PTX (:func:`helpers.kernels.shipped_ptx`), so it
    is the same on every machine, with or without NVRTC. PTX's ``shfl.sync`` moves 32 bits
    (``.b32`` is its only type), so a 64-bit ``T`` is split into two halves (``mov.b64 {lo, hi}``),
    each half shuffled by its own instruction, and joined again: twice as many shuffles as for a
    32-bit ``T``.
    """
    from . import nb

    name = np.dtype(dtype).name
    if name not in _CTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_CTYPES)}; got {dtype!r}")
    text = kernels.shipped_ptx("warp_reduce_sum", f"warp_reduce_sum_kernel<{_CTYPES[name]}>", arch).function()
    lines = nb.ptx_constants(text, "").splitlines()
    shfl = [i for i, line in enumerate(lines) if line.startswith("shfl.sync")]
    first = [i for i in shfl if ", 16, " in lines[i]]
    lo = first[0]
    hi = first[-1]
    if np.dtype(name).itemsize == 8:   # include the split before and the join after the two 32-bit shuffles
        lo = max(i for i in range(lo + 1) if lines[i].startswith("mov.b64"))
        hi = min(i for i in range(hi, len(lines)) if lines[i].startswith("mov.b64"))
    step = [line for line in lines[lo:hi + 1] if line.startswith(("shfl.sync", "mov.b64"))]
    return ShufflePtx(name, len(shfl), tuple(_renumber_registers(step)))


def _renumber_registers(lines: list[str]) -> list[str]:
    """Registers renamed in order of first use (%r1, %r2, ...; %fd1, ...; %p1, ...), so the lines
    read the same whichever NVRTC version numbered them."""
    names: dict[str, str] = {}
    used: dict[str, int] = {}

    def rename(m: "re.Match[str]") -> str:
        if m.group(0) not in names:
            used[m.group(1)] = used.get(m.group(1), 0) + 1
            names[m.group(0)] = f"%{m.group(1)}{used[m.group(1)]}"
        return names[m.group(0)]

    return [re.sub(r"%(fd|rd|r|f|p)(\d+)", rename, line) for line in lines]


def warp_reduce_sum(values: Any, backend: Optional[str] = None) -> Any:
    """The sum of each warp's 32 values, as WarpReduceSum computes it (lane 0's final value).

    No trace is kept, so any number of warps up to ``params.MAX_WARPS`` works in bounded memory.
    """
    params.backend(backend)
    v = params.values(values)
    flat = v.reshape(-1, params.LANES)
    if _backend.resolve(backend) == "cupy":
        expr = f"warp_reduce_sum_kernel<{_CTYPES[v.dtype.name]}>"
        out = _run_gpu("warp_reduce_sum", expr, WARP_REDUCE_KERNELS["warp_reduce_sum"], flat).reshape(-1)[:flat.shape[0]]
    else:
        # WarpReduceSum is WarpReduce<T, Sum, 32>: the same five shuffle-down adds, in the same order.
        out = _final(_config(flat, "sum", params.LANES, "down", None, "pad", "emulator"))[0][:, 0].copy()
    return out[0] if v.ndim == 1 else out


# ---------------------------------------------------------------- operators and references

OPS: tuple[str, ...] = ("sum", "max", "min", "bit_and", "bit_or", "bit_xor")
BITWISE_OPS: tuple[str, ...] = ("bit_and", "bit_or", "bit_xor")
TREES: tuple[str, ...] = ("down", "xor")
PARTIALS: tuple[str, ...] = ("pad", "ballot")
LIBRARY_METHODS: tuple[str, ...] = ("intrinsic", "cg", "cub")
METHODS: tuple[str, ...] = TREES + LIBRARY_METHODS
_CPP_OPS = {"sum": "Sum", "max": "Max", "min": "Min", "bit_and": "BitAnd", "bit_or": "BitOr", "bit_xor": "BitXor"}
_INT_DTYPES = ("int32", "uint32")


def check_op(op: Any, dtype: Any) -> str:
    """``op`` validated for ``dtype``: one of :data:`OPS`; the bitwise ones need an integer dtype."""
    if not params.is_one_of(op, OPS):
        raise ValueError(f"op must be one of {', '.join(map(repr, OPS))}; got {params.quote(op)}")
    if op in BITWISE_OPS and np.dtype(dtype).name not in _INT_DTYPES:
        raise ValueError(f"op {op!r} needs an integer dtype ({', '.join(_INT_DTYPES)}); got {np.dtype(dtype)}")
    return op


def cpp_op(op: str, dtype: Any) -> str:
    """The C++ functor for ``op`` on ``dtype``, e.g. ``warplab::ops::Max<float>``."""
    return f"warplab::ops::{_CPP_OPS[op]}<{_CTYPES[np.dtype(dtype).name]}>"


def identity(op: str, dtype: Any) -> np.generic:
    """The value that ``op`` leaves unchanged (what padded lanes hold): as ``Op::identity()`` in C++."""
    dt = np.dtype(dtype)
    if op in ("sum", "bit_or", "bit_xor"):
        return dt.type(0)
    if op == "bit_and":
        return np.array(-1).astype(dt)[()]              # all bits set
    if dt.kind == "f":
        return dt.type(-np.inf if op == "max" else np.inf)
    info = np.iinfo(dt)
    return dt.type(info.min if op == "max" else info.max)


def combine(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``op(a, b)`` elementwise in ``a``'s dtype, as the C++ functors compute it (integer sums wrap)."""
    a, b = np.asarray(a), np.asarray(b, dtype=np.asarray(a).dtype)
    if op == "sum":
        with np.errstate(over="ignore", invalid="ignore"):   # wraps; inf + -inf is NaN, as on the GPU
            return (a + b).astype(a.dtype, copy=False)
    if op == "max":
        return np.where(a < b, b, a)
    if op == "min":
        return np.where(b < a, b, a)
    return {"bit_and": np.bitwise_and, "bit_or": np.bitwise_or, "bit_xor": np.bitwise_xor}[op](a, b)


def reference(values: Any, op: str = "sum", axis: int = -1) -> np.ndarray:
    """NumPy's answer for ``op`` over ``axis``, in the values' dtype.

    Integer sums are exact modulo 2**32 (as the hardware wraps); float sums are accumulated in float64
    and rounded once, so a float32 tree may differ from it in the last bits (see :func:`float_order`).
    """
    v = np.asarray(values)
    check_op(op, v.dtype)
    if op == "sum":
        if v.dtype.kind == "f":
            with np.errstate(over="ignore", invalid="ignore"):   # inf + -inf is NaN, as it is for the tree
                return v.astype(np.float64).sum(axis=axis).astype(v.dtype)
        wide = v.astype(np.int64).sum(axis=axis)
        return (wide & 0xFFFFFFFF).astype(np.uint32).view(np.int32 if v.dtype == np.int32 else np.uint32)
    fn = {"max": np.max, "min": np.min, "bit_and": np.bitwise_and.reduce, "bit_or": np.bitwise_or.reduce,
          "bit_xor": np.bitwise_xor.reduce}[op]
    return np.asarray(fn(v, axis=axis)).astype(v.dtype)


def _ops_for(dtype: str) -> tuple[str, ...]:
    return OPS if dtype in _INT_DTYPES else tuple(o for o in OPS if o not in BITWISE_OPS)


def _op_exprs(template: str, dtypes: tuple[str, ...] = tuple(_CTYPES)) -> tuple[str, ...]:
    return tuple(template.format(t=_CTYPES[d], op=cpp_op(o, d)) for d in dtypes for o in _ops_for(d))


WARP_REDUCE_KERNELS: dict[str, tuple[str, ...]] = {
    "warp_reduce_sum": tuple(f"warp_reduce_sum_kernel<{c}>" for c in _CTYPES.values()),
    "warp_reduce_ops": (
        *_op_exprs("warp_reduce_kernel<{t}, {op}, false>"),
        *_op_exprs("warp_reduce_kernel<{t}, {op}, true>"),
        *_op_exprs("warp_reduce_intrinsic_kernel<{t}, {op}>", _INT_DTYPES),
        *_op_exprs("warp_reduce_cg_kernel<{t}, {op}>"),
        *_op_exprs("warp_reduce_cub_kernel<{t}, {op}>"),
    ),
}
# Every instantiation of kernels/seed_block_reduce.cu (registered by helpers.block_reduce): this
# module launches its warp kernels, helpers.block_reduce its block kernels, from one compiled module.
SEED_KERNELS: tuple[str, ...] = (
    *(f"seed_block_reduce_sum_kernel<{c}>" for c in _CTYPES.values()),
    *_op_exprs("seed_warp_reduce_kernel<{t}, {op}>"),
    *_op_exprs("seed_block_x_reduce_kernel<{t}, {op}>"),
    *_op_exprs("seed_block_y_reduce_kernel<{t}, {op}>"),
    *_op_exprs("seed_partial_warp_kernel<{t}, {op}>"),
)


# ---------------------------------------------------------------- generic trees

def _offsets(width: int) -> tuple[int, ...]:
    return tuple(width >> k for k in range(1, width.bit_length()))


def _n_valid(n_valid: Any, width: int) -> int:
    if n_valid is None:
        return width
    if not params._is_int(n_valid) or not 1 <= int(n_valid) <= width:
        raise ValueError(f"n_valid must be an integer in [1, width] = [1, {width}] (values per segment); "
                         f"got {params.quote(n_valid)}")
    return int(n_valid)


@dataclass(frozen=True)
class _Config:
    """A validated warp-reduce configuration."""

    values: np.ndarray          # (n_warps, 32)
    squeeze: bool               # the caller passed (32,)
    op: str
    width: int
    tree: str
    n_valid: int
    partial: str

    @property
    def offsets(self) -> tuple[int, ...]:
        return _offsets(self.width)

    @property
    def labels(self) -> tuple[str, ...]:
        return ("input", *(f"shfl_{self.tree} {o}" for o in self.offsets))

    @property
    def valid(self) -> np.ndarray:
        """(n_warps, 32): lanes that load a value (position in their segment < n_valid)."""
        return np.broadcast_to(emulator.LANE % self.width < self.n_valid, self.values.shape)

    @property
    def result_lanes(self) -> tuple[int, ...]:
        if self.tree == "xor":
            return tuple(range(params.LANES))
        return tuple(range(0, params.LANES, self.width))

    @property
    def title(self) -> str:
        if self.partial == "ballot":
            return f"seed: ballot-mask WarpReduce ({self.op}, {self.n_valid} of 32 lanes)"
        fn = "WarpReduce" if self.tree == "down" else "WarpAllReduce"
        return f"{fn}<{_CTYPES[self.values.dtype.name]}, {_CPP_OPS[self.op]}, {self.width}>"


def _config(values: Any, op: str, width: int, tree: str, n_valid: Any, partial: str,
            backend: Optional[str]) -> _Config:
    params.backend(backend)
    v = params.values(values)
    w = params.width(width)
    if not params.is_one_of(tree, TREES):
        raise ValueError(f"tree must be one of {', '.join(map(repr, TREES))}; got {params.quote(tree)}")
    if not params.is_one_of(partial, PARTIALS):
        raise ValueError(f"partial must be one of {', '.join(map(repr, PARTIALS))}; got {params.quote(partial)}")
    if partial == "ballot" and (tree != "down" or w != params.LANES):
        raise ValueError(f"partial='ballot' is the seed's shuffle-down code for a whole warp: it needs "
                         f"tree='down' and width=32; got tree={tree!r}, width={w}")
    return _Config(v.reshape(-1, params.LANES), v.ndim == 1, check_op(op, v.dtype), w, tree, _n_valid(n_valid, w),
                   partial)


def _replay(c: _Config, offsets: tuple[int, ...]) -> Iterator[tuple[Optional[ShuffleResult], np.ndarray, np.ndarray]]:
    """The tree on the emulator, step by step: first ``(None, held, ok)`` for the input, then per
    shuffle ``(r, held, ok)``: what the lanes received (``r.defined``: a defined read of a defined
    value), what they hold (0 where undefined) and which hold a defined value."""
    v, dtype = c.values, c.values.dtype
    zero = np.zeros((), dtype)
    active, mask = _lanes_and_mask(c)
    held = np.where(c.valid, v, identity(c.op, dtype) if c.partial == "pad" else zero).astype(dtype)
    ok = active.copy()
    yield None, held, ok
    mode = "down" if c.tree == "down" else "xor"
    # The seed's other lanes skip the `if (lane < n)` branch: alive elsewhere (or already gone);
    # either way they are outside the ballot's mask, so the call itself is defined.
    exited = np.zeros(v.shape, bool)
    for offset in offsets:
        operand = np.broadcast_to(np.int64(offset), v.shape)
        r = emulator.shuffle(mode, held, operand, c.width, mask, active, exited)
        if c.partial == "pad":   # every lane active and in the mask: every read is defined, so is every value
            held = combine(c.op, held, r.values)
            yield r, held, ok
            continue
        src_ok = emulator.gather(ok, emulator.source_lanes(mode, operand[:1], c.width))
        got_ok = r.defined & src_ok
        held = np.where(active, combine(c.op, held, r.values), held)
        ok = ok & (~active | got_ok)
        yield replace(r, values=np.where(got_ok, r.values, zero), defined=got_ok), np.where(ok, held, zero), ok


def _lanes_and_mask(c: _Config) -> tuple[np.ndarray, np.ndarray]:
    """(active lanes, member mask) of the tree: everyone and the full mask when padding; the valid
    lanes and the mask ``__ballot_sync`` gives them for the seed's way."""
    full = np.full(c.values.shape[0], params.FULL_MASK, np.uint32)
    if c.partial == "pad":
        return np.ones(c.values.shape, bool), full
    return c.valid.copy(), emulator.ballot(c.valid, full, np.ones(c.values.shape, bool)).values


def _emulate(c: _Config, offsets: Optional[tuple[int, ...]] = None) -> tuple[Trace, np.ndarray]:
    """Replay the tree on the emulator: the trace, and per step which lanes hold a defined value.

    ``offsets`` overrides the order of the shuffle-down offsets (CUB's tree runs 1, 2, ..., 16).
    A trace keeps every lane at every step: at most ``trace.MAX_TRACE_WARPS`` warps.
    """
    offsets = c.offsets if offsets is None else offsets
    check_trace_size(c.values.shape[0])
    active, mask = _lanes_and_mask(c)
    meta = {"kernel": "seed_block_reduce.cu" if c.partial == "ballot" else "warp_reduce_ops.cu",
            "op": c.op, "width": c.width, "tree": c.tree, "n_valid": c.n_valid, "partial": c.partial,
            "offsets": list(offsets), "result_lanes": list(c.result_lanes)}
    steps = _replay(c, offsets)
    _, held, ok = next(steps)
    rec = Recorder(held, c.title, active=active, mask=mask, meta=meta)
    held_ok = [ok]
    mode = "down" if c.tree == "down" else "xor"
    for offset, (r, held, ok) in zip(offsets, steps):
        held_ok.append(ok)
        rec.step(f"shfl_{mode} {offset}", held, r, mask, active)
    return rec.trace(), np.stack(held_ok)


def _final(c: _Config, offsets: Optional[tuple[int, ...]] = None) -> tuple[np.ndarray, np.ndarray]:
    """What every lane holds after the tree's last step (0 where undefined) and whether it is
    defined: the last step of :func:`_emulate`, without its trace, for any number of warps in
    bounded memory (``params.CHUNK_WARPS`` warps at a time).

    Who calls and which reads are defined does not depend on the values, and every warp of a
    configuration has the same active lanes and mask. So the emulator's rules run on one warp
    (:func:`_replay`: per step, the lanes that receive a defined value), and all warps' values
    follow them lane-major ((32, n_warps): a lane's values in one row, so a shuffle's read is a
    copy of whole rows, several times faster than gathering lanes). ``defined`` is that one row,
    broadcast to every warp (a read-only view).
    """
    offsets = c.offsets if offsets is None else offsets
    mode = "down" if c.tree == "down" else "xor"
    one = replace(c, values=c.values[:1])
    steps = list(_replay(one, offsets))
    active = _lanes_and_mask(one)[0][0]
    ok = steps[-1][2][0]
    rules = [(emulator.source_lanes(mode, np.full((1, params.LANES), offset), c.width)[0], r.defined[0])
             for offset, (r, _, _) in zip(offsets, steps[1:])]
    dtype = c.values.dtype
    zero = np.zeros((), dtype)
    fill = identity(c.op, dtype) if c.partial == "pad" else zero
    valid = c.valid[0][:, None]
    held_out = np.empty_like(c.values)
    for s in params.chunks(c.values.shape[0]):
        held = np.ascontiguousarray(np.where(valid, c.values[s].T, fill).astype(dtype, copy=False))
        for src, got in rules:
            received = held[src] if got.all() else np.where(got[:, None], held[src], zero)
            combined = combine(c.op, held, received)
            held = combined if active.all() else np.where(active[:, None], combined, held)
        held_out[s] = np.where(ok, held.T, zero)
    return held_out, np.broadcast_to(ok, c.values.shape)


def _kernel_file(c: _Config) -> str:
    return "seed_block_reduce" if c.partial == "ballot" else "warp_reduce_ops"


def _kernel(c: _Config) -> tuple[str, tuple[str, ...]]:
    """(name expression, the file's registered expressions) of the kernel running ``c``."""
    t, op = _CTYPES[c.values.dtype.name], cpp_op(c.op, c.values.dtype)
    if c.partial == "ballot":
        return f"seed_partial_warp_kernel<{t}, {op}>", SEED_KERNELS
    return (f"warp_reduce_kernel<{t}, {op}, {'true' if c.tree == 'xor' else 'false'}>",
            WARP_REDUCE_KERNELS["warp_reduce_ops"])


def _gpu_args(c: _Config, d_in: Any, d_out: Any) -> tuple:
    if c.partial == "ballot":
        return (d_in, np.int32(c.n_valid), d_out)
    return (d_in, np.int32(c.width), np.int32(c.n_valid), d_out)


def _gpu_trace(c: _Config, emulated: Trace, held_ok: np.ndarray) -> Trace:
    import cupy

    n_warps = c.values.shape[0]
    expr, exprs = _kernel(c)
    d_in = cupy.asarray(c.values)
    d_out = cupy.zeros_like(d_in)
    held, received, src = run_traced(_kernel_file(c), expr, emulated.n_steps, n_warps * params.LANES, n_warps,
                                     params.LANES, _gpu_args(c, d_in, d_out), name_expressions=exprs)
    shape = emulated.held.shape
    dtype = c.values.dtype

    def values(a: np.ndarray, ok: np.ndarray) -> np.ndarray:
        a = a.reshape(shape)
        return np.where(ok, np.nan_to_num(a), 0).astype(dtype)

    d = emulated.defined
    return replace(emulated, source=gpu_source(), held=values(held, held_ok), received=values(received, d),
                   src_lane=np.where(d, src.reshape(shape), emulated.src_lane).astype(np.int32))


def warp_reduce_trace(values: Any, op: str = "sum", width: int = 32, tree: str = "down",
                      n_valid: Optional[int] = None, partial: str = "pad", backend: Optional[str] = None) -> Trace:
    """Trace a warp reduce tree: step 0 is the input, then one step per shuffle (log2(width) of them).

    ``values``: (32,) or (n_warps, 32), int32/uint32/float32/float64. Each width-lane segment
    reduces its first ``n_valid`` values (default: all). ``partial="pad"`` gives the other lanes
    the identity and keeps the full mask; ``partial="ballot"`` (tree "down", width 32 only) is the
    seed's way: lanes >= n_valid do not call (inactive), the mask comes from ``__ballot_sync``, and
    reads from outside it are flagged undefined. ``meta["result_lanes"]`` names the lanes that hold
    the result. On the cupy backend the values come from the instrumented kernel.
    """
    c = _config(values, op, width, tree, n_valid, partial, backend)
    trace, held_ok = _emulate(c)
    if _backend.resolve(backend) == "cupy":
        return _gpu_trace(c, trace, held_ok)
    return trace


@dataclass(frozen=True)
class WarpReduceResult:
    """What every lane returned from a warp reduction, and who holds the answer.

    values:   (n_warps, 32) each lane's return value; 0 where ``defined`` is False.
    defined:  (n_warps, 32) the value is defined (no undefined read went into it, and the method
              defines a value there at all).
    holders:  (n_warps, 32) the lanes the method promises hold their segment's result.
    expected: (n_warps, 32 // width) NumPy's answer per segment (:func:`reference`).
    """

    method: str
    op: str
    width: int
    values: np.ndarray
    defined: np.ndarray
    holders: np.ndarray
    expected: np.ndarray

    @property
    def result(self) -> np.ndarray:
        """(n_warps, 32 // width): the result read from the first lane of each segment (0 if undefined)."""
        return self.values[:, ::self.width]

    @property
    def result_defined(self) -> np.ndarray:
        return self.defined[:, ::self.width]

    @property
    def correct(self) -> bool:
        """Every holder has a defined value equal (bit for bit) to the reference of its segment.

        A NaN matches a NaN: IEEE comparisons say NaN != NaN, but both answers are "not a number".
        """
        segs = (self.values.shape[0], -1, self.width)
        got, exp = self.values.reshape(segs), self.expected[:, :, None]
        same = got == exp
        if self.values.dtype.kind == "f":
            same |= np.isnan(got) & np.isnan(exp)
        return bool(np.all(~self.holders.reshape(segs) | (self.defined.reshape(segs) & same)))


def _holders(shape: tuple[int, ...], lanes: tuple[int, ...]) -> np.ndarray:
    """(n_warps, 32) bool, True on ``lanes``: the same row for every warp, so a read-only view."""
    row = np.zeros(params.LANES, bool)
    row[list(lanes)] = True
    return np.broadcast_to(row, shape)


def _expected(c: _Config) -> np.ndarray:
    n = c.values.shape[0]
    out = np.empty((n, params.LANES // c.width), c.values.dtype)
    for s in params.chunks(n):      # reference() widens to 64 bits: a few warps at a time
        out[s] = reference(c.values[s].reshape(s.stop - s.start, -1, c.width)[:, :, :c.n_valid], c.op, axis=-1)
    return out


def _run_gpu(file: str, expr: str, exprs: tuple[str, ...], v: np.ndarray, extra: tuple = ()) -> np.ndarray:
    import cupy

    d_in = cupy.asarray(v)
    d_out = cupy.zeros_like(d_in)
    n_warps = v.shape[0]
    kernels.module(file, exprs).get_function(expr)((n_warps,), (params.LANES,), (d_in, *extra, d_out))
    cupy.cuda.get_current_stream().synchronize()
    return cupy.asnumpy(d_out)


def warp_reduce(values: Any, op: str = "sum", width: int = 32, tree: str = "down",
                n_valid: Optional[int] = None, partial: str = "pad",
                backend: Optional[str] = None) -> WarpReduceResult:
    """Run a warp reduce tree (see :func:`warp_reduce_trace` for the parameters) and return every lane.

    On the cupy backend the plain (uninstrumented) kernel runs; ``defined`` comes from the emulator.
    """
    c = _config(values, op, width, tree, n_valid, partial, backend)
    out, ok = _final(c)
    if _backend.resolve(backend) == "cupy":
        expr, exprs = _kernel(c)
        got = _run_gpu(_kernel_file(c), expr, exprs, c.values, _gpu_args(c, None, None)[1:-1])
        out = np.where(ok, got, 0).astype(c.values.dtype)
    holders = _holders(c.values.shape, c.result_lanes)
    method = "ballot" if c.partial == "ballot" else c.tree
    return WarpReduceResult(method, c.op, c.width, out, ok, holders, _expected(c))


def seed_warp_reduce(values: Any, op: str = "sum", backend: Optional[str] = None) -> WarpReduceResult:
    """The seed's (Paddle's) WarpReduce: ``mask = __ballot_sync(FULL, true)``, then shuffle down 16 ... 1.

    Run by full, converged warps (as here) the ballot just returns the full mask, so this is the
    shuffle-down tree and lane 0 holds the result. From divergent code the ballot's full mask would
    name lanes that never arrive: undefined, which is why the mask must not be computed this way.
    """
    c = _config(values, op, params.LANES, "down", None, "pad", backend)
    r = warp_reduce(c.values, op, backend="emulator")
    if _backend.resolve(backend) == "cupy":
        expr = f"seed_warp_reduce_kernel<{_CTYPES[c.values.dtype.name]}, {cpp_op(op, c.values.dtype)}>"
        r = replace(r, values=_run_gpu("seed_block_reduce", expr, SEED_KERNELS, c.values))
    return replace(r, method="seed")


def library_reduce(values: Any, op: str = "sum", method: str = "cg", backend: Optional[str] = None) -> WarpReduceResult:
    """The same 32-lane reduction by a library: ``"intrinsic"`` (``__reduce_*_sync``: int32/uint32,
    compute capability 8.0+, every lane), ``"cg"`` (``cooperative_groups::reduce``, every lane) or
    ``"cub"`` (``cub::WarpReduce``, lane 0 only).

    The emulator models cg as the xor butterfly (its shuffle path) and CUB as a shuffle-down tree with
    offsets 1, 2, ..., 16 (CUB's order), so float sums round as they do on the GPU.
    """
    if not params.is_one_of(method, LIBRARY_METHODS):
        raise ValueError(f"method must be one of {', '.join(map(repr, LIBRARY_METHODS))}; got {params.quote(method)}")
    c = _config(values, op, params.LANES, "xor" if method == "cg" else "down", None, "pad", backend)
    if method == "intrinsic" and c.values.dtype.name not in _INT_DTYPES:
        raise ValueError(f"method='intrinsic' (__reduce_*_sync) needs dtype int32 or uint32; got {c.values.dtype}")
    expected = _expected(c)
    if method == "cub":
        held, ok = _final(c, offsets=tuple(reversed(c.offsets)))
        holders = _holders(c.values.shape, (0,))
        defined = np.broadcast_to(holders[0] & ok[0], c.values.shape)    # both are one row for every warp
        out = held
        out[:, ~defined[0]] = 0                 # in place: no second (n_warps, 32) array
    else:
        holders = defined = np.broadcast_to(True, c.values.shape)
        out = np.broadcast_to(expected, c.values.shape) if method == "intrinsic" else _final(c)[0]
    if _backend.resolve(backend) == "cupy":
        if method == "intrinsic" and float(_backend.detect().compute_capability) < 8.0:
            raise RuntimeError("method='intrinsic' needs compute capability 8.0+ (__reduce_*_sync); this GPU has "
                               f"{_backend.detect().compute_capability}")
        t = _CTYPES[c.values.dtype.name]
        expr = f"warp_reduce_{method}_kernel<{t}, {cpp_op(c.op, c.values.dtype)}>"
        got = _run_gpu("warp_reduce_ops", expr, WARP_REDUCE_KERNELS["warp_reduce_ops"], c.values)
        out = np.where(defined, got, 0)
    return WarpReduceResult(method, c.op, params.LANES, out.astype(c.values.dtype, copy=False), defined, holders, expected)


def compare_methods(values: Any, op: str = "sum", backend: Optional[str] = None) -> dict[str, WarpReduceResult]:
    """Every way to reduce a whole warp, on the same input: the two trees, then the libraries.

    ``"intrinsic"`` is left out for float dtypes (``__reduce_*_sync`` takes 32-bit integers only).
    """
    dtype = params.values(values).dtype
    out = {tree: warp_reduce(values, op, tree=tree, backend=backend) for tree in TREES}
    for method in LIBRARY_METHODS:
        if method == "cg" and _backend.resolve(backend) == "emulator":
            out[method] = replace(out["xor"], method="cg")   # the emulator's cg is the xor butterfly, as above
        elif method != "intrinsic" or dtype.name in _INT_DTYPES:
            out[method] = library_reduce(values, op, method, backend)
    return out


# ---------------------------------------------------------------- floating-point order

@dataclass(frozen=True)
class FloatOrder:
    """A float32 sum of 32 values, two orders, against a float64 reference.

    tree:        what the tree gives (lane 0 for "down", any lane for "xor"), float32.
    sequential:  ((v0 + v1) + v2) + ... in float32, the order of a plain loop.
    exact:       the exact sum of the float32 inputs (``math.fsum``), rounded once to float64.
    tree_error, sequential_error: distance of each float32 answer from ``exact``.
    ulps:        how many float32 steps apart ``tree`` and ``sequential`` are (0: identical).
    """

    tree: float
    sequential: float
    exact: float
    tree_error: float
    sequential_error: float
    ulps: int


def float_order(values: Any, tree: str = "down", backend: Optional[str] = None) -> FloatOrder:
    """Compare the tree's float32 sum of one warp's ``values`` (shape (32,), float32) with the
    sequential float32 sum and with the exact sum."""
    v = params.values(values)
    if v.shape != (params.LANES,) or v.dtype != np.float32:
        raise ValueError(f"values must be 32 float32 values (shape (32,)); got shape {v.shape}, dtype {v.dtype}")
    _check_summable(v[None, :])
    t = np.float32(warp_reduce(v, "sum", tree=tree, backend=backend).values[0, 0])
    seq = np.float32(0)
    for x in v:
        seq = np.float32(seq + x)
    exact = math.fsum(float(x) for x in v)
    as_int = np.array([t, seq], np.float32).view(np.int32).astype(np.int64)
    ordered = np.where(as_int < 0, np.int64(-(2**31)) - as_int, as_int)   # monotone in the float's value
    return FloatOrder(float(t), float(seq), exact, abs(float(t) - exact), abs(float(seq) - exact),
                      int(abs(ordered[0] - ordered[1])))


@dataclass(frozen=True)
class FloatOrderBatch:
    """:class:`FloatOrder` for many warps at once (arrays of shape (n_warps,))."""

    tree: np.ndarray
    sequential: np.ndarray
    exact: np.ndarray
    ulps: np.ndarray

    @property
    def tree_error(self) -> np.ndarray:
        return np.abs(self.tree.astype(np.float64) - self.exact)

    @property
    def sequential_error(self) -> np.ndarray:
        return np.abs(self.sequential.astype(np.float64) - self.exact)


# If sum(|x|) <= 2^127, no float32 partial sum of x in any order can overflow: rounding 31 adds
# grows a partial by at most (1 + 2^-24)^31 < 2, and float32's largest value is about 2^128.
MAX_ABS_SUM = 2.0**127


def _check_summable(v: np.ndarray, first_warp: int = 0) -> None:
    """Refuse what would make float-order comparisons meaningless: inf or NaN in the input, or sums
    so large that a float32 partial could overflow to inf (then NaN), for (n_warps, 32) float32."""
    bad = ~np.isfinite(v)
    where = "" if v.shape[0] == 1 and not first_warp else " of warp {}"
    if bad.any():
        w, lane = np.argwhere(bad)[0]
        raise ValueError(f"values must be finite (float order compares how finite sums round); got "
                         f"{v[w, lane]} at lane {lane}{where.format(first_warp + w)}")
    big = np.abs(v).sum(axis=1, dtype=np.float64) > MAX_ABS_SUM
    if big.any():
        w = int(np.argmax(big))
        raise ValueError(f"values must have sum(|values|) <= 2**127 per warp, so that no float32 partial sum "
                         f"overflows; got {np.abs(v[w]).sum(dtype=np.float64):.3g}{where.format(first_warp + w)}")


def _exact_sums(v: np.ndarray) -> np.ndarray:
    """``math.fsum`` of each row of (n_warps, 32) float32, vectorised where that is provably the same.

    Every float32 x with frexp exponent e is a multiple of 2^(e - 24) and below 2^e, so when a row's
    exponents span at most 24, every partial sum of the row is a multiple of 2^(e_min - 24) below
    2^(e_max + 5): it fits float64's 53 bits, and a plain float64 sum makes no rounding at all.
    The other rows (rare: values apart by more than 2^24) go through ``math.fsum``.
    """
    x = v.astype(np.float64)
    e = np.frexp(x)[1]
    nonzero = x != 0
    span = np.where(nonzero, e, -(2**30)).max(axis=1) - np.where(nonzero, e, 2**30).min(axis=1)
    exact = x.sum(axis=1)
    for w in np.flatnonzero(span > 24):
        exact[w] = math.fsum(x[w])
    return exact


def _ulps_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    def ordered(x: np.ndarray) -> np.ndarray:
        i = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(-(2**31)) - i, i)
    return np.abs(ordered(a) - ordered(b))


def float_order_batch(values: Any, tree: str = "down", backend: Optional[str] = None) -> FloatOrderBatch:
    """:func:`float_order` for each row of ``values`` ((n_warps, 32) float32): the tree's sum (lane 0),
    the sequential float32 sum (a plain loop), the exact sum, and how many float32 steps apart the two are."""
    v = params.values(values)
    if v.ndim != 2 or v.shape[1] != params.LANES or v.dtype != np.float32:
        raise ValueError(f"values must be float32 of shape (n_warps, 32); got shape {v.shape}, dtype {v.dtype}")
    n = v.shape[0]
    t, seq, exact = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n)
    for s in params.chunks(n):    # a few warps at a time: memory stays bounded
        part = v[s]
        _check_summable(part, s.start)
        t[s] = warp_reduce(part, "sum", tree=tree, backend=backend).values[:, 0]
        seq[s] = np.add.accumulate(part, axis=1, dtype=np.float32)[:, -1]      # left to right, rounding every add
        exact[s] = _exact_sums(part)
    return FloatOrderBatch(t, seq, exact, _ulps_apart(t, seq))
