"""Warp reduce trees and the library reductions, run as the kernels in ``kernels/`` on either engine.

Every function here launches a real kernel through :func:`helpers.topics.launch.launch` (by way of
:mod:`helpers.topics.warp_kernels`, which runs a kernel over many warps and traces it); none re-states a
kernel in Python. Without a GPU the kernel runs on the SIMT machine (its PTX, lane by lane); on a
GPU the values come from the hardware, and what is defined comes from the machine's run of the
same launch on the same inputs (``check=True``: a GPU value that differs from the machine's where
both are defined raises, so it can never be shown).

* ``WarpReduceSum`` (kernels/warp_reduce.cuh, launched by kernels/warp_reduce_sum.cu): five
  ``__shfl_down_sync`` steps, offsets 16, 8, 4, 2, 1; lane 0 ends with the sum of its warp.
* The generic trees (``WarpReduce`` / ``WarpAllReduce``, kernels in kernels/warp_reduce_ops.cu)
  take any operator of :data:`OPS` and any logical warp width: :func:`warp_reduce_trace` /
  :func:`warp_reduce` run the shuffle-down tree (``tree="down"``: lane 0 of each width-lane segment
  holds the result) or the xor butterfly (``tree="xor"``: every lane does), over ``n_valid`` values
  per segment: padded with the operator's identity (``partial="pad"``) or the seed's way, a
  ballot-shrunk mask (``partial="ballot"``, kernels/seed_block_reduce.cu: reads from lanes outside
  the mask are undefined, and so is everything computed from them).
* :func:`library_reduce` / :func:`compare_methods`: the same reduction by ``__reduce_*_sync``,
  ``cooperative_groups::reduce`` and ``cub::WarpReduce``, each its own kernel.
* :func:`float_order`: how far a float32 tree sum lands from the sequential sum and the exact sum.

Traces (:class:`~helpers.engine.trace.Trace`, the one trace format) come from the machine's record of the
launch (``Report.trace.shuffles()``): step 0 is each lane's input to the tree, step k what it holds
after shuffle k. On a GPU the traced values are the hardware's (the ``-DWARPLAB_TRACE`` build of
the same kernel), the flags the machine's. Undefined values are stored as 0 and flagged
(``Trace.defined`` False where the value a lane received is undefined), never shown as numbers.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from helpers.engine import backend as _backend
from helpers.engine import kernels
from helpers.engine import params
from helpers.engine.ops import (BITWISE_OPS, CPP_OPS, CTYPES, INT_DTYPES, OPS, check_op, combine, cpp_op, identity,
                              reference, ulps_apart)
from helpers.engine.trace import Trace
from helpers.topics.warp_kernels import LANE, WarpKernel, run_warps, traced_launch

__all__ = ["OPS", "BITWISE_OPS", "TREES", "PARTIALS", "LIBRARY_METHODS", "METHODS", "OFFSETS", "check_op", "cpp_op",
           "identity", "reference", "warp_reduce_sum", "warp_reduce_sum_trace", "warp_reduce", "warp_reduce_trace",
           "seed_warp_reduce", "library_reduce", "compare_methods", "WarpReduceResult", "shuffle_ptx", "ShufflePtx",
           "float_order", "float_order_batch", "FloatOrder", "FloatOrderBatch"]

OFFSETS: tuple[int, ...] = (16, 8, 4, 2, 1)
TREES: tuple[str, ...] = ("down", "xor")
PARTIALS: tuple[str, ...] = ("pad", "ballot")
LIBRARY_METHODS: tuple[str, ...] = ("intrinsic", "cg", "cub")
REDUCE_SYNC_CC = (8, 0)     # __reduce_*_sync: compute capability 8.x+ (CUDA C++ Programming Guide, Warp Reduce Functions)
METHODS: tuple[str, ...] = TREES + LIBRARY_METHODS


# ---------------------------------------------------------------- WarpReduceSum

def _sum_kernel(dtype: np.dtype) -> WarpKernel:
    return WarpKernel("warp_reduce_sum", f"warp_reduce_sum_kernel<{CTYPES[dtype.name]}>", per_warp=1)


def warp_reduce_sum_trace(values: Any, backend: Optional[str] = None) -> Trace:
    """Trace WarpReduceSum over ``values`` ((32,) or (n_warps, 32)): 6 steps (input + 5 shuffles).

    Sums wrap for integers and round as float32/float64 adds do on the GPU (one add per step).
    The kernel writes lane 0's sum only; the other lanes' values after the last shuffle are their
    ``val += other`` of that step's operands (checked against lane 0's output). At most
    ``trace.MAX_TRACE_WARPS`` warps (a trace keeps every lane at every step).
    """
    params.backend(backend)
    v = params.values(values).reshape(-1, params.LANES)
    meta = {"kernel": "warp_reduce_sum.cu", "algorithm": "WarpReduceSum", "offsets": list(OFFSETS)}
    labels = ("input", *(f"shfl_down {o}" for o in OFFSETS))
    return traced_launch(_sum_kernel(v.dtype), v, labels, "WarpReduceSum", meta, backend,
                   final=lambda sent, got: combine("sum", sent, got))


def warp_reduce_sum(values: Any, backend: Optional[str] = None) -> Any:
    """The sum of each warp's 32 values, as WarpReduceSum computes it (lane 0's final value).

    No trace is kept, so any number of warps up to ``params.MAX_WARPS`` works in bounded memory.
    """
    params.backend(backend)
    v = params.values(values)
    out = run_warps(_sum_kernel(v.dtype), v.reshape(-1, params.LANES), backend)[0][:, 0]
    return out[0] if v.ndim == 1 else out


@dataclass(frozen=True)
class ShufflePtx:
    """How WarpReduceSum<T> shuffles in PTX: ``count`` shfl.sync instructions in all, and the PTX
    lines of its first step (offset 16), registers loaded from constants replaced by the constant."""

    dtype: str
    count: int
    first_step: tuple[str, ...]


def shuffle_ptx(dtype: str = "float64", arch: str = "sm_90") -> ShufflePtx:
    """The shfl.sync instructions of ``WarpReduceSum<T>`` (kernels/warp_reduce_sum.cu) in the PTX
    NVRTC made for ``arch``, read from the shipped PTX (:func:`helpers.engine.kernels.shipped_ptx`), so it
    is the same on every machine, with or without NVRTC. PTX's ``shfl.sync`` moves 32 bits
    (``.b32`` is its only type), so a 64-bit ``T`` is split into two halves (``mov.b64 {lo, hi}``),
    each half shuffled by its own instruction, and joined again: twice as many shuffles as for a
    32-bit ``T``.
    """
    from helpers import nb

    name = np.dtype(dtype).name
    if name not in CTYPES:
        raise ValueError(f"dtype must be one of {', '.join(CTYPES)}; got {dtype!r}")
    text = kernels.shipped_ptx("warp_reduce_sum", f"warp_reduce_sum_kernel<{CTYPES[name]}>", arch).function()
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



# ---------------------------------------------------------------- generic trees

def _n_valid(n_valid: Any, width: int) -> int:
    if n_valid is None:
        return width
    if not params.is_integer(n_valid) or not 1 <= int(n_valid) <= width:
        raise ValueError(f"n_valid must be an integer in [1, width] = [1, {width}] (values per segment); "
                         f"got {params.quote(n_valid)}")
    return int(n_valid)


@dataclass(frozen=True)
class _Config:
    """A validated warp-reduce configuration."""

    values: np.ndarray          # (n_warps, 32)
    op: str
    width: int
    tree: str
    n_valid: int
    partial: str

    @property
    def offsets(self) -> tuple[int, ...]:
        """The shuffle offsets (xor masks) of the tree, in its order: width/2 ... 1."""
        return tuple(self.width >> k for k in range(1, self.width.bit_length()))

    @property
    def labels(self) -> tuple[str, ...]:
        return ("input", *(f"shfl_{self.tree} {o}" for o in self.offsets))

    @property
    def valid(self) -> np.ndarray:
        """(32,): lanes that load a value (position in their segment < n_valid)."""
        return LANE % self.width < self.n_valid

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
        return f"{fn}<{CTYPES[self.values.dtype.name]}, {CPP_OPS[self.op]}, {self.width}>"

    @property
    def kernel(self) -> WarpKernel:
        t, op = CTYPES[self.values.dtype.name], cpp_op(self.op, self.values.dtype)
        if self.partial == "ballot":
            return WarpKernel("seed_block_reduce", f"seed_partial_warp_kernel<{t}, {op}>", (np.int32(self.n_valid),))
        return WarpKernel("warp_reduce_ops", f"warp_reduce_kernel<{t}, {op}, {'true' if self.tree == 'xor' else 'false'}>",
                       (np.int32(self.width), np.int32(self.n_valid)))


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
    return _Config(v.reshape(-1, params.LANES), check_op(op, v.dtype), w, tree, _n_valid(n_valid, w), partial)


def warp_reduce_trace(values: Any, op: str = "sum", width: int = 32, tree: str = "down",
                      n_valid: Optional[int] = None, partial: str = "pad", backend: Optional[str] = None) -> Trace:
    """Trace a warp reduce tree: step 0 is the input, then one step per shuffle (log2(width) of them).

    ``values``: (32,) or (n_warps, 32), int32/uint32/float32/float64. Each width-lane segment
    reduces its first ``n_valid`` values (default: all). ``partial="pad"`` gives the other lanes
    the identity and keeps the full mask; ``partial="ballot"`` (tree "down", width 32 only) is the
    seed's way: lanes >= n_valid do not call (inactive), the mask comes from ``__ballot_sync``, and
    reads from outside it are flagged undefined. ``meta["result_lanes"]`` names the lanes that hold
    the result. The flags are the machine's; on a GPU the values are the hardware's.
    """
    c = _config(values, op, width, tree, n_valid, partial, backend)
    meta = {"kernel": f"{c.kernel.file}.cu", "op": c.op, "width": c.width, "tree": c.tree, "n_valid": c.n_valid,
            "partial": c.partial, "offsets": list(c.offsets), "result_lanes": list(c.result_lanes)}
    if c.partial == "ballot":
        # The lanes >= n_valid skip the shuffles and are alive elsewhere at each of them in the
        # machine's run (helpers.machine.steps: elsewhere 0xFFF00000, exited 0 for n_valid = 20).
        meta["not_calling"] = "elsewhere"
    return traced_launch(c.kernel, c.values, c.labels, c.title, meta, backend)


@dataclass(frozen=True)
class WarpReduceResult:
    """What every lane returned from a warp reduction, and who holds the answer.

    values:   (n_warps, 32) each lane's return value; 0 where ``defined`` is False (a property:
              see ``lane_values``).
    lane_values: what is stored of ``values``: all of it, (n_warps, 32), or for a method whose
              result is lane 0's alone (``cub``) that lane only, (n_warps, 1): the other lanes are
              undefined and ``values`` gives them 0, built on each read.
    defined:  (n_warps, 32) the value is defined (no undefined read went into it, and the method
              defines a value there at all).
    holders:  (n_warps, 32) the lanes the method promises hold their segment's result.
    expected: (n_warps, 32 // width) NumPy's answer per segment (:func:`reference`).

    What is the same for every warp or lane is a broadcast, read-only view (``defined`` and
    ``holders`` are one row; the xor butterfly's and the libraries' ``values`` one column).
    """

    method: str
    op: str
    width: int
    lane_values: np.ndarray
    defined: np.ndarray
    holders: np.ndarray
    expected: np.ndarray

    @property
    def values(self) -> np.ndarray:
        """(n_warps, 32) each lane's return value; 0 where ``defined`` is False."""
        if self.lane_values.shape[1] == params.LANES:
            return self.lane_values
        out = np.zeros((self.lane_values.shape[0], params.LANES), self.lane_values.dtype)
        out[:, :self.lane_values.shape[1]] = self.lane_values
        return out

    @property
    def result(self) -> np.ndarray:
        """(n_warps, 32 // width): the result read from the first lane of each segment (0 if undefined)."""
        return self.lane_values[:, ::self.width]

    @property
    def result_defined(self) -> np.ndarray:
        return self.defined[:, ::self.width]

    @property
    def correct(self) -> bool:
        """Every holder has a defined value equal (bit for bit) to the reference of its segment.

        A NaN matches a NaN: IEEE comparisons say NaN != NaN, but both answers are "not a number".
        """
        stored = self.lane_values.shape[1]     # a lane not stored is no holder (see lane_values)
        segs = (self.lane_values.shape[0], -1, min(self.width, stored))
        got, exp = self.lane_values.reshape(segs), self.expected[:, :, None]
        same = got == exp
        if got.dtype.kind == "f":
            same |= np.isnan(got) & np.isnan(exp)
        return bool(np.all(~self.holders[:, :stored].reshape(segs) | (self.defined[:, :stored].reshape(segs) & same)))


def _holders(shape: tuple[int, ...], lanes: Sequence[int]) -> np.ndarray:
    """(n_warps, 32) bool, True on ``lanes``: the same row for every warp, so a read-only view."""
    row = np.zeros(params.LANES, bool)
    row[list(lanes)] = True
    return np.broadcast_to(row, shape)


def _expected(v: np.ndarray, op: str, width: int = params.LANES, n_valid: Optional[int] = None) -> np.ndarray:
    n = v.shape[0]
    out = np.empty((n, params.LANES // width), v.dtype)
    for s in params.chunks(n):      # reference() widens to 64 bits: a few warps at a time
        out[s] = reference(v[s].reshape(s.stop - s.start, -1, width)[:, :, :n_valid or width], op, axis=-1)
    return out


def _only(ok: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    """``ok`` where ``lanes`` (a (32,) row), False elsewhere; a broadcast row stays one."""
    if ok.strides[0] == 0:
        return np.broadcast_to(ok[0] & lanes, ok.shape)
    return ok & lanes


def warp_reduce(values: Any, op: str = "sum", width: int = 32, tree: str = "down",
                n_valid: Optional[int] = None, partial: str = "pad",
                backend: Optional[str] = None) -> WarpReduceResult:
    """Run a warp reduce tree (see :func:`warp_reduce_trace` for the parameters) and return every lane.

    Any number of warps up to ``params.MAX_WARPS``, ``params.CHUNK_WARPS`` warps a launch.
    """
    return _tree_result(_config(values, op, width, tree, n_valid, partial, backend), backend)


def _tree_result(c: _Config, backend: Optional[str], expected: Optional[np.ndarray] = None) -> WarpReduceResult:
    out, ok = run_warps(c.kernel, c.values, backend)
    if c.partial == "ballot":   # the kernel's contract: lanes >= n_valid write nothing (out stays 0)
        ok = _only(ok, c.valid)
    holders = _holders(c.values.shape, c.result_lanes)
    method = "ballot" if c.partial == "ballot" else c.tree
    if expected is None:
        expected = _expected(c.values, c.op, c.width, c.n_valid)
    return WarpReduceResult(method, c.op, c.width, out, ok, holders, expected)


def seed_warp_reduce(values: Any, op: str = "sum", backend: Optional[str] = None) -> WarpReduceResult:
    """The seed's (Paddle's) WarpReduce: ``mask = __ballot_sync(FULL, true)``, then shuffle down 16 ... 1.

    Run by full, converged warps (as here) the ballot just returns the full mask, so this is the
    shuffle-down tree and lane 0 holds the result. From divergent code the ballot's full mask would
    name lanes that never arrive: undefined, which is why the mask must not be computed this way.
    """
    c = _config(values, op, params.LANES, "down", None, "pad", backend)
    t = CTYPES[c.values.dtype.name]
    k = WarpKernel("seed_block_reduce", f"seed_warp_reduce_kernel<{t}, {cpp_op(c.op, c.values.dtype)}>")
    out, ok = run_warps(k, c.values, backend)
    return WarpReduceResult("seed", c.op, params.LANES, out, ok, _holders(c.values.shape, (0,)),
                            _expected(c.values, c.op))


def library_reduce(values: Any, op: str = "sum", method: str = "cg", backend: Optional[str] = None) -> WarpReduceResult:
    """The same 32-lane reduction by a library: ``"intrinsic"`` (``__reduce_*_sync``: int32/uint32,
    compute capability 8.0+, every lane), ``"cg"`` (``cooperative_groups::reduce``, every lane) or
    ``"cub"`` (``cub::WarpReduce``, lane 0 only: CUB defines the result nowhere else, so the other
    lanes are reported undefined).
    """
    if not params.is_one_of(method, LIBRARY_METHODS):
        raise ValueError(f"method must be one of {', '.join(map(repr, LIBRARY_METHODS))}; got {params.quote(method)}")
    return _library_result(_config(values, op, params.LANES, "down", None, "pad", backend), method, backend)


def _library_result(c: _Config, method: str, backend: Optional[str],
                    expected: Optional[np.ndarray] = None) -> WarpReduceResult:
    if method == "intrinsic" and c.values.dtype.name not in INT_DTYPES:
        raise ValueError(f"method='intrinsic' (__reduce_*_sync) needs dtype int32 or uint32; got {c.values.dtype}")
    if method == "intrinsic" and _backend.resolve(backend) == "cupy":
        _backend.require_compute_capability(REDUCE_SYNC_CC, "method='intrinsic' (__reduce_*_sync)")
    t = CTYPES[c.values.dtype.name]
    k = WarpKernel("warp_reduce_ops", f"warp_reduce_{method}_kernel<{t}, {cpp_op(c.op, c.values.dtype)}>")
    holders = _holders(c.values.shape, (0,) if method == "cub" else LANE)
    if method == "cub":       # lanes 1..31 hold CUB's partials: not results, so not kept or shown
        out, ok = run_warps(k, c.values, backend, lanes=1)
        ok = _lane_0(ok, c.values.shape)
    else:
        out, ok = run_warps(k, c.values, backend)
    if expected is None:
        expected = _expected(c.values, c.op)
    return WarpReduceResult(method, c.op, params.LANES, out, ok, holders, expected)


def _lane_0(ok: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """(n_warps, 32): lane 0's definedness ``ok`` ((n_warps, 1)), False in every other lane; one
    broadcast row when ``ok`` is one."""
    if ok.strides[0] == 0:
        return _holders(shape, (0,) if ok[0, 0] else ())
    full = np.zeros(shape, bool)
    full[:, :1] = ok
    return full


def _intrinsic_runs(backend: Optional[str]) -> bool:
    """Whether ``__reduce_*_sync`` runs on the engine ``backend`` resolves to (the emulator: always)."""
    return _backend.resolve(backend) != "cupy" or _backend.compute_capability() >= REDUCE_SYNC_CC


def compare_methods(values: Any, op: str = "sum", backend: Optional[str] = None) -> dict[str, WarpReduceResult]:
    """Every way to reduce a whole warp, on the same input, each by its own kernel: the two trees,
    then the libraries. ``"intrinsic"`` is left out for float dtypes (``__reduce_*_sync`` takes
    32-bit integers only) and on a GPU older than compute capability 8.0 (where
    ``library_reduce(..., method="intrinsic")`` says why). Every method reduces the same segments,
    so they share one ``expected``."""
    c = _config(values, op, params.LANES, "down", None, "pad", backend)
    expected = _expected(c.values, c.op)
    out = {tree: _tree_result(_config(c.values, op, params.LANES, tree, None, "pad", backend), backend, expected)
           for tree in TREES}
    for method in LIBRARY_METHODS:
        if method != "intrinsic" or (c.values.dtype.name in INT_DTYPES and _intrinsic_runs(backend)):
            out[method] = _library_result(c, method, backend, expected)
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
    return FloatOrder(float(t), float(seq), exact, abs(float(t) - exact), abs(float(seq) - exact),
                      int(ulps_apart(t, seq)))


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


def float_order_batch(values: Any, tree: str = "down", backend: Optional[str] = None) -> FloatOrderBatch:
    """:func:`float_order` for each row of ``values`` ((n_warps, 32) float32): the tree's sum (lane 0),
    the sequential float32 sum (a plain loop), the exact sum, and how many float32 steps apart the two are."""
    v = params.values(values)
    if v.ndim != 2 or v.shape[1] != params.LANES or v.dtype != np.float32:
        raise ValueError(f"values must be float32 of shape (n_warps, 32); got shape {v.shape}, dtype {v.dtype}")
    n = v.shape[0]
    seq, exact = np.empty(n, np.float32), np.empty(n)
    for s in params.chunks(n):    # a few warps at a time: memory stays bounded
        _check_summable(v[s], s.start)
    for s in params.chunks(n):
        part = v[s]
        seq[s] = np.add.accumulate(part, axis=1, dtype=np.float32)[:, -1]      # left to right, rounding every add
        exact[s] = _exact_sums(part)
    # the tree kernel over every warp at once, in the launches _chunks picks for n; lane 0's value
    # is the sum for either tree, and only it is kept
    c = _config(v, "sum", params.LANES, tree, None, "pad", backend)
    t = np.ascontiguousarray(run_warps(c.kernel, c.values, backend, lanes=1)[0][:, 0])
    return FloatOrderBatch(t, seq, exact, ulps_apart(t, seq))
