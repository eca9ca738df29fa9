"""The cupy backend of :mod:`helpers.engine.warp`: each call launches a kernel from kernels/warp_intrinsics.cu.

Arrays arrive validated and two-dimensional, (n_warps, 32). The hardware gives values and source
lanes; which lanes are *defined* is the configuration's property (the Programming Guide's rules),
taken from the emulator's verdict, because hardware cannot tell a defined read from a lucky one.

A warp whose call is undefined (its mask names a lane that is alive elsewhere) is never run: the
Programming Guide allows such a warp to hang. Its lanes are launched as exited, and its results
are the verdict's (all undefined). ``helpers.recording.record_diverged`` is the one place that runs such a
call on purpose, bounded, to record what one GPU did.
"""
from __future__ import annotations

import numpy as np

from helpers.engine import intrinsics
from helpers.engine import kernels
from helpers.engine import ops
from helpers.engine.emulator import (CALLING, ELSEWHERE, EXITED, LaneResult, ShuffleResult, VoteResult, call_defined, lane_state,
                       mask_bits)

# shuffle_kernel<T, Mode> by shuffle kind, in Mode order (the order of NAME_EXPRESSIONS)
_MODES = {r.kind: r.mode for r in sorted(intrinsics.rows("shuffle"), key=lambda r: r.mode)}
_BLOCK = 256  # threads per block: 8 warps; a multiple of 32 so each hardware warp is one row


def _names() -> tuple[str, ...]:
    shuffles = [f"shuffle_kernel<{c}, {m}>" for c in ops.CTYPES.values() for m in _MODES.values()]
    reduces = [f"match_reduce_kernel<{ops.CTYPES[d]}>" for d in ops.INT_DTYPES]
    return (*shuffles, "vote_kernel", *reduces)


NAME_EXPRESSIONS: tuple[str, ...] = _names()
# kernels/warp_diverged.cu, the undefined-call experiment that helpers.recording.record_diverged runs:
# diverged_kernel<op, later>, op by intrinsic; registered here so that CI compiles it with the rest.
DIVERGED_OPS: dict[str, int] = {"shfl_down": 0, "ballot": 1}
DIVERGED_KERNELS: dict[str, tuple[str, ...]] = {
    "warp_diverged": tuple(f"diverged_kernel<{o}, {later}>" for o in DIVERGED_OPS.values() for later in ("false", "true"))}
# The warp-intrinsics topic's kernels: this module's, and the undefined-call experiment.
KERNELS: dict[str, tuple[str, ...]] = {intrinsics.FILE: NAME_EXPRESSIONS, **DIVERGED_KERNELS}


def _function(expr: str):
    return kernels.module(intrinsics.FILE, NAME_EXPRESSIONS).get_function(expr)


def _launch(expr: str, n_warps: int, args: tuple) -> None:
    import cupy

    threads = n_warps * 32
    grid = (threads + _BLOCK - 1) // _BLOCK
    _function(expr)((grid,), (_BLOCK,), args)
    cupy.cuda.get_current_stream().synchronize()


def launch_state(mask: np.ndarray, state: np.ndarray) -> np.ndarray:
    """The per-lane states to launch with: ``state``, except that every lane of a warp whose call
    would be undefined is launched as exited, so that call is never made."""
    ok = ~((state == ELSEWHERE) & mask_bits(mask)).any(axis=1)
    return np.where(ok[:, None], state, EXITED).astype(np.uint8)


def _common(mask: np.ndarray, state: np.ndarray):
    import cupy

    return cupy.asarray(mask.astype(np.uint32)), cupy.asarray(launch_state(mask, state))


def shuffle_raw(mode: str, values: np.ndarray, operand: np.ndarray, width: int, mask: np.ndarray,
                state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the hardware returned, undefined reads included: (values, src_lane), -1/0 for lanes
    that did not call. ``state`` per lane (:func:`helpers.engine.emulator.lane_state`). Only for
    *measuring* undefined reads (helpers.recording.record); never show these values as results."""
    import cupy

    n_warps = values.shape[0]
    d_in = cupy.asarray(values)
    d_arg = cupy.asarray(operand.astype(np.int32))
    d_mask, d_state = _common(mask, state)
    d_out = cupy.zeros_like(d_in)
    d_src = cupy.full(values.shape, -1, dtype=np.int32)
    expr = f"shuffle_kernel<{ops.CTYPES[values.dtype.name]}, {_MODES[mode]}>"
    _launch(expr, n_warps, (d_in, d_arg, d_mask, d_state, np.int32(width), np.int32(n_warps), d_out, d_src))
    return cupy.asnumpy(d_out), cupy.asnumpy(d_src)


def shuffle(mode: str, values: np.ndarray, operand: np.ndarray, width: int, mask: np.ndarray,
            verdict: ShuffleResult) -> ShuffleResult:
    """Run the shuffle on the GPU. ``verdict`` is the emulator's result for the same call: its
    lane states, its ``defined`` flags, and its nominal source lanes where the read is undefined."""
    got, src = shuffle_raw(mode, values, operand, width, mask, verdict.state)
    defined = verdict.defined
    return ShuffleResult(
        values=np.where(defined, got, np.zeros((), values.dtype)),
        src_lane=np.where(defined, src, verdict.src_lane).astype(np.int32),
        defined=defined, state=verdict.state, call_defined=verdict.call_defined,
    )


def _per_warp(per_lane: np.ndarray, calling: np.ndarray, what: str) -> np.ndarray:
    """Collapse per-lane answers of a collective to one per warp, checking that callers agree."""
    first = np.argmax(calling, axis=1)
    out = per_lane[np.arange(per_lane.shape[0]), first]
    disagree = calling & (per_lane != out[:, None])
    if disagree.any():
        raise RuntimeError(f"{what}: calling lanes of one warp returned different results on the GPU")
    return np.where(calling.any(axis=1), out, 0)


def _vote_lanes(pred: np.ndarray, mask: np.ndarray, state: np.ndarray) -> np.ndarray:
    """vote_kernel's words per lane, (n_warps * 32, :func:`helpers.engine.intrinsics.words`)."""
    import cupy

    n_warps = pred.shape[0]
    d_pred = cupy.asarray(pred.astype(np.int32))
    d_mask, d_state = _common(mask, state)
    d_out = cupy.zeros((n_warps * 32, intrinsics.words("vote_kernel")), dtype=np.uint32)
    _launch("vote_kernel", n_warps, (d_pred, d_mask, d_state, np.int32(n_warps), d_out))
    return cupy.asnumpy(d_out)


def vote(kind: str, pred: np.ndarray, mask: np.ndarray, active: np.ndarray, exited: np.ndarray,
         verdict: VoteResult) -> VoteResult:
    """``ballot``, ``any`` or ``all`` per warp, from vote_kernel; undefined warps from ``verdict``."""
    from helpers.engine.emulator import callers

    n_warps = pred.shape[0]
    column = intrinsics.by_kind("vote", kind).column
    per_lane = _vote_lanes(pred, mask, lane_state(active, exited))[:, column].reshape(n_warps, 32)
    ok = call_defined(mask, active, exited)
    calling = callers(mask, active) & ok[:, None]
    per_warp = _per_warp(per_lane, calling, kind)
    if kind in ("any", "all"):
        # a warp with no calling lane has no answer; report the vacuous one, as the emulator does
        vacuous = kind == "all"
        return VoteResult(ok & np.where(calling.any(axis=1), per_warp != 0, vacuous), ok)
    return VoteResult(np.where(ok, per_warp, 0).astype(np.uint32), ok)


def activemask(active: np.ndarray) -> VoteResult:
    """``__activemask()`` per warp, read by the active lanes right after they vote among themselves
    (the mask names exactly them). The other lanes are launched as exited: a snapshot taken while
    lanes are elsewhere is up to the scheduler, so there is nothing reproducible to compare."""
    from helpers.engine.emulator import pack_bits

    n_warps = active.shape[0]
    state = np.where(active, CALLING, EXITED).astype(np.int8)
    column = intrinsics.row("activemask").column
    per_lane = _vote_lanes(np.ones(active.shape, np.int32), pack_bits(active), state)[:, column].reshape(n_warps, 32)
    return VoteResult(_per_warp(per_lane, active, "activemask").astype(np.uint32), np.ones(n_warps, bool))


def collective(kind: str, values: np.ndarray, mask: np.ndarray, active: np.ndarray, exited: np.ndarray,
               verdict: LaneResult) -> LaneResult:
    """A collective (``kind``: a collective row's, ``match_any`` or a ``__reduce_*_sync`` operator) per
    calling lane; ``verdict`` (the emulator's result) says which lanes are defined."""
    import cupy

    n_warps = values.shape[0]
    d_in = cupy.asarray(values)
    d_mask, d_state = _common(mask, lane_state(active, exited))
    row = intrinsics.by_kind("collective", kind)
    d_out = cupy.zeros((n_warps * 32, intrinsics.words(row.kernel)), dtype=values.dtype)
    expr = f"{row.kernel}<{ops.CTYPES[values.dtype.name]}>"
    _launch(expr, n_warps, (d_in, d_mask, d_state, np.int32(n_warps), d_out))
    got = cupy.asnumpy(d_out)[:, row.column].reshape(values.shape)
    calling = verdict.defined
    if kind == "match_any":
        got = got.view(np.uint32) if got.dtype == np.int32 else got
    return LaneResult(np.where(calling, got, 0).astype(got.dtype), calling)
