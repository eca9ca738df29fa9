"""The lane-exact NumPy model of the warp intrinsics, over one or many warps at once.

Semantics follow the CUDA C++ Programming Guide ("Warp Shuffle Functions", "Warp Vote Functions",
"Warp Match Functions", "Warp Reduce Functions") and the PTX ``shfl.sync`` pseudo-code they compile
to. Arrays here are already validated and two-dimensional, (n_warps, 32); :mod:`helpers.warp` is
the public face that validates and reshapes.

Who calls, and what is defined:

* A *calling* lane is active and named in ``mask``. An active lane outside ``mask`` must not call
  (that is undefined), so it gets no result: ``defined`` is False and ``src_lane`` is -1.
* A shuffle reads lane ``j`` computed from the caller's lane, the operand and ``width``. When ``j``
  leaves the caller's segment (the PTX clamp fails) the caller gets its own value back: defined.
  Otherwise the read is defined only when lane ``j`` is itself a calling lane; a read from a lane
  that is inactive (exited, or elsewhere in divergent code) or outside ``mask`` is undefined, and
  the value reported for it is 0, never to be shown as a number.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Callable, TypeVar

import numpy as np

from .params import CHUNK_WARPS, chunks

LANES = 32
LANE = np.arange(LANES, dtype=np.int64)
MODES = ("idx", "up", "down", "xor")


@dataclass(frozen=True)
class ShuffleResult:
    """What every lane got back from a shuffle. All three arrays are shaped like the input values.

    values:   the value received; 0 where ``defined`` is False (read it only where defined).
    src_lane: the lane it was read from (the caller's own lane when it kept its value), -1 for a
              lane that did not call.
    defined:  True where the Programming Guide defines the result.
    """

    values: np.ndarray
    src_lane: np.ndarray
    defined: np.ndarray

    @property
    def kept_own(self) -> np.ndarray:
        """Lanes whose source fell outside their segment, so they got their own value back."""
        return self.defined & (self.src_lane == np.arange(LANES))


@dataclass(frozen=True)
class LaneResult:
    """A per-lane result of a collective (match, reduce): ``values`` valid only where ``defined``."""

    values: np.ndarray
    defined: np.ndarray


_F = TypeVar("_F", bound=Callable[..., Any])


def _in_chunks(fn: _F) -> _F:
    """Run ``fn`` on CHUNK_WARPS warps at a time and put the parts together.

    Every array argument of the functions below is per warp (axis 0 is the warp), and every warp's
    answer depends on that warp alone, so splitting changes nothing but the size of the temporaries
    (a (chunk, 32, 32) comparison in :func:`match_any`, not an (n_warps, 32, 32) one).
    """
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        arrays = [a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray) and a.ndim]
        n = arrays[0].shape[0] if arrays else 0
        if n <= CHUNK_WARPS:
            return fn(*args, **kwargs)
        cut = lambda a, s: a[s] if isinstance(a, np.ndarray) and a.ndim else a  # noqa: E731
        out: Any = None
        for s in chunks(n):
            part = fn(*(cut(a, s) for a in args), **{k: cut(a, s) for k, a in kwargs.items()})
            parts = {f.name: getattr(part, f.name) for f in fields(part)} if is_dataclass(part) else {"": part}
            if out is None:
                out = {k: np.empty((n, *a.shape[1:]), a.dtype) for k, a in parts.items()}
            for k, a in parts.items():
                out[k][s] = a
        return type(part)(**out) if is_dataclass(part) else out[""]
    return run  # type: ignore[return-value]


def mask_bits(mask: np.ndarray) -> np.ndarray:
    """(n_warps,) uint32 masks -> (n_warps, 32) bool: is lane l named in the warp's mask."""
    as_bytes = np.asarray(mask).astype("<u4").view(np.uint8).reshape(-1, 4)
    return np.unpackbits(as_bytes, axis=1, bitorder="little").view(bool)


def pack_bits(bits: np.ndarray) -> np.ndarray:
    """(n_warps, 32) bool -> (n_warps,) uint32 with bit l set where lane l is True."""
    # Each row is 32 contiguous bools, so packing the flat array packs row by row (and is far
    # faster than packbits along an axis).
    packed = np.packbits(np.ascontiguousarray(bits, dtype=bool).reshape(-1), bitorder="little")
    return packed.view("<u4").reshape(bits.shape[:-1]).astype(np.uint32)


def callers(mask: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Lanes that execute the intrinsic: active and named in the mask."""
    return active & mask_bits(mask)


def source_lanes(mode: str, b: np.ndarray, width: int) -> np.ndarray:
    """The lane each lane reads, per PTX ``shfl.sync`` (its own lane when the clamp fails).

    ``b`` is the operand per lane, shaped (n_warps, 32): delta for up/down, the lane mask for xor,
    the source lane for idx. Only its low 5 bits count, as in hardware.
    """
    segmask = LANES - width                       # c[12:8] as CUDA's intrinsics set it
    cval = 0 if mode == "up" else LANES - 1        # c[4:0]: clamp
    bval = b.astype(np.int64) & 31
    min_lane = LANE & segmask
    max_lane = min_lane | (cval & ~segmask & 31)
    if mode == "up":
        j = LANE - bval
        ok = j >= max_lane
    elif mode == "down":
        j = LANE + bval
        ok = j <= max_lane
    elif mode == "xor":
        j = LANE ^ bval
        ok = j <= max_lane
    elif mode == "idx":
        j = min_lane | (bval & ~segmask & 31)
        ok = j <= max_lane
    else:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    return np.where(ok, j, LANE)


def gather(a: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``a[w, j[w, l]]`` for every warp w and lane l of (n_warps, 32) arrays; ``j`` may also be one
    row, shaped (1, 32), of lanes that every warp reads."""
    if j.shape[0] == 1:
        return a[:, j[0]]
    rows = np.arange(0, a.size, LANES, dtype=np.int64)[:, None]
    return np.ascontiguousarray(a).reshape(-1)[(j + rows).reshape(-1)].reshape(a.shape)


@_in_chunks
def shuffle(mode: str, values: np.ndarray, b: np.ndarray, width: int, mask: np.ndarray,
            active: np.ndarray) -> ShuffleResult:
    """``__shfl{,_up,_down,_xor}_sync(mask, values, b, width)`` over (n_warps, 32) lanes."""
    calling = callers(mask, active)
    # One operand for every warp (a broadcast delta): one row of source lanes serves them all.
    uniform = b.ndim == 2 and b.shape[0] > 1 and b.strides[0] == 0
    j = source_lanes(mode, b[:1] if uniform else b, width)
    got = gather(values, j)
    if calling.all():   # everyone calls, so every read is defined (the common, converged case)
        return ShuffleResult(got, np.broadcast_to(j.astype(np.int32), values.shape), calling)
    source_calls = gather(calling, j)
    defined = calling & source_calls
    return ShuffleResult(
        values=np.where(defined, got, np.zeros((), values.dtype)),
        src_lane=np.where(calling, j.astype(np.int32), np.int32(-1)),
        defined=defined,
    )


@_in_chunks
def ballot(pred: np.ndarray, mask: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``__ballot_sync``: bit l set iff lane l calls (active, in mask) and its predicate is true."""
    return pack_bits(callers(mask, active) & pred)


@_in_chunks
def any_sync(pred: np.ndarray, mask: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``__any_sync`` per warp: is the predicate true on any calling lane."""
    return (callers(mask, active) & pred).any(axis=1)


@_in_chunks
def all_sync(pred: np.ndarray, mask: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``__all_sync`` per warp: is the predicate true on every calling lane (True when none call)."""
    return (~callers(mask, active) | pred).all(axis=1)


@_in_chunks
def activemask(active: np.ndarray) -> np.ndarray:
    """``__activemask()`` per warp, for converged code: the lanes that are active here."""
    return pack_bits(active)


@_in_chunks
def match_any(values: np.ndarray, mask: np.ndarray, active: np.ndarray) -> LaneResult:
    """``__match_any_sync``: for each calling lane, the calling lanes holding an equal value."""
    calling = callers(mask, active)
    same = (values[:, :, None] == values[:, None, :]) & calling[:, None, :]
    out = pack_bits(same.reshape(-1, LANES)).reshape(values.shape)
    return LaneResult(np.where(calling, out, 0).astype(np.uint32), calling)


@_in_chunks
def warp_reduce(op: str, values: np.ndarray, mask: np.ndarray, active: np.ndarray) -> LaneResult:
    """``__reduce_{add,min,max}_sync`` (32-bit integers): every calling lane gets the result.

    ``add`` wraps modulo 2**32 as the hardware does.
    """
    calling = callers(mask, active)
    if op == "add":
        wide = np.where(calling, values.astype(np.int64), 0).sum(axis=1)
        res = (wide & 0xFFFFFFFF).astype(np.uint32).view(np.int32 if values.dtype == np.int32 else np.uint32)
    elif op in ("min", "max"):
        info = np.iinfo(values.dtype)
        identity = info.max if op == "min" else info.min
        filled = np.where(calling, values, identity)
        res = filled.min(axis=1) if op == "min" else filled.max(axis=1)
    else:
        raise ValueError(f"op must be 'add', 'min' or 'max'; got {op!r}")
    out = np.where(calling, res[:, None], 0).astype(values.dtype)
    return LaneResult(out, calling)


@_in_chunks
def syncwarp(mask: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``__syncwarp(mask)``: per lane, whether its call is well-defined (it is named in mask).

    The emulator runs lanes in lock step, so the barrier itself has nothing to do; what it can
    check is the Programming Guide's rule that every calling lane has its own bit set in ``mask``.
    """
    return active & mask_bits(mask)
