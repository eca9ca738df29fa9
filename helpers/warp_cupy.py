"""The cupy backend of :mod:`helpers.warp`: each call launches a kernel from kernels/warp_intrinsics.cu.

Arrays arrive validated and two-dimensional, (n_warps, 32). The hardware gives values and source
lanes; which lanes are *defined* is the configuration's property (the Programming Guide's rules),
taken from the emulator's verdict, because hardware cannot tell a defined read from a lucky one.
"""
from __future__ import annotations

import numpy as np

from . import kernels
from .emulator import LaneResult, ShuffleResult

_MODES = {"idx": 0, "up": 1, "down": 2, "xor": 3}
_CTYPES = {"int32": "int", "uint32": "unsigned int", "float32": "float", "float64": "double"}
_INT_CTYPES = {"int32": "int", "uint32": "unsigned int"}
_BLOCK = 256  # threads per block: 8 warps; a multiple of 32 so each hardware warp is one row
_VOTES = ("ballot", "any", "all", "activemask")


def _names() -> tuple[str, ...]:
    shuffles = [f"shuffle_kernel<{c}, {m}>" for c in _CTYPES.values() for m in _MODES.values()]
    reduces = [f"match_reduce_kernel<{c}>" for c in _INT_CTYPES.values()]
    return (*shuffles, "vote_kernel", *reduces)


NAME_EXPRESSIONS: tuple[str, ...] = _names()
KERNELS: dict[str, tuple[str, ...]] = {"warp_intrinsics": NAME_EXPRESSIONS}


def _function(expr: str):
    return kernels.module("warp_intrinsics", NAME_EXPRESSIONS).get_function(expr)


def _launch(expr: str, n_warps: int, args: tuple) -> None:
    import cupy

    threads = n_warps * 32
    grid = (threads + _BLOCK - 1) // _BLOCK
    _function(expr)((grid,), (_BLOCK,), args)
    cupy.cuda.get_current_stream().synchronize()


def _common(mask: np.ndarray, active: np.ndarray):
    import cupy

    return cupy.asarray(mask.astype(np.uint32)), cupy.asarray(active.astype(np.uint8))


def shuffle_raw(mode: str, values: np.ndarray, operand: np.ndarray, width: int, mask: np.ndarray,
                active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the hardware returned, undefined reads included: (values, src_lane), -1/0 for lanes
    that did not call. Only for *measuring* undefined behaviour (helpers.record); never show these
    values as results."""
    import cupy

    n_warps = values.shape[0]
    d_in = cupy.asarray(values)
    d_arg = cupy.asarray(operand.astype(np.int32))
    d_mask, d_active = _common(mask, active)
    d_out = cupy.zeros_like(d_in)
    d_src = cupy.full(values.shape, -1, dtype=np.int32)
    expr = f"shuffle_kernel<{_CTYPES[values.dtype.name]}, {_MODES[mode]}>"
    _launch(expr, n_warps, (d_in, d_arg, d_mask, d_active, np.int32(width), np.int32(n_warps), d_out, d_src))
    return cupy.asnumpy(d_out), cupy.asnumpy(d_src)


def shuffle(mode: str, values: np.ndarray, operand: np.ndarray, width: int, mask: np.ndarray,
            active: np.ndarray, verdict: ShuffleResult) -> ShuffleResult:
    """Run the shuffle on the GPU. ``verdict`` is the emulator's result for the same call: its
    ``defined`` flags, and its nominal source lanes where the hardware's read is undefined."""
    got, src = shuffle_raw(mode, values, operand, width, mask, active)
    defined = verdict.defined
    return ShuffleResult(
        values=np.where(defined, got, np.zeros((), values.dtype)),
        src_lane=np.where(defined, src, verdict.src_lane).astype(np.int32),
        defined=defined,
    )


def _per_warp(per_lane: np.ndarray, calling: np.ndarray, what: str) -> np.ndarray:
    """Collapse per-lane answers of a collective to one per warp, checking that callers agree."""
    first = np.argmax(calling, axis=1)
    out = per_lane[np.arange(per_lane.shape[0]), first]
    disagree = calling & (per_lane != out[:, None])
    if disagree.any():
        raise RuntimeError(f"{what}: calling lanes of one warp returned different results on the GPU")
    return np.where(calling.any(axis=1), out, 0)


def vote(kind: str, pred: np.ndarray, mask: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``ballot``, ``any``, ``all`` or ``activemask`` per warp, from vote_kernel."""
    import cupy

    from .emulator import callers

    n_warps = pred.shape[0]
    d_pred = cupy.asarray(pred.astype(np.int32))
    d_mask, d_active = _common(mask, active)
    d_out = cupy.zeros((n_warps * 32, 4), dtype=np.uint32)
    _launch("vote_kernel", n_warps, (d_pred, d_mask, d_active, np.int32(n_warps), d_out))
    per_lane = cupy.asnumpy(d_out)[:, _VOTES.index(kind)].reshape(n_warps, 32)
    calling = callers(mask, active)
    per_warp = _per_warp(per_lane, calling, kind)
    if kind in ("any", "all"):
        # a warp with no calling lane has no answer; report the vacuous one, as the emulator does
        vacuous = kind == "all"
        return np.where(calling.any(axis=1), per_warp != 0, vacuous)
    return per_warp.astype(np.uint32)


def collective(kind: str, values: np.ndarray, mask: np.ndarray, active: np.ndarray) -> LaneResult:
    """``match_any`` or ``add``/``min``/``max`` (the __reduce_*_sync family) per calling lane."""
    import cupy

    from .emulator import callers

    n_warps = values.shape[0]
    d_in = cupy.asarray(values)
    d_mask, d_active = _common(mask, active)
    d_out = cupy.zeros((n_warps * 32, 4), dtype=values.dtype)
    expr = f"match_reduce_kernel<{_INT_CTYPES[values.dtype.name]}>"
    _launch(expr, n_warps, (d_in, d_mask, d_active, np.int32(n_warps), d_out))
    column = ("match_any", "add", "min", "max").index(kind)
    got = cupy.asnumpy(d_out)[:, column].reshape(values.shape)
    calling = callers(mask, active)
    if kind == "match_any":
        got = got.view(np.uint32) if got.dtype == np.int32 else got
    return LaneResult(np.where(calling, got, 0).astype(got.dtype), calling)
