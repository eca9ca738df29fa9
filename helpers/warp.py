"""The public warp-intrinsic API: one call, the same answers on the emulator and on a real GPU.

Every function takes ``values`` (or a ``predicate``) of shape (32,) or (n_warps, 32), an optional
``mask`` (one 32-bit integer, or one per warp), an optional ``active`` bool array of the same shape
(default: every lane active) and ``backend`` (None = auto, ``"emulator"`` or ``"cupy"``).

On the ``cupy`` backend each call launches a real kernel from ``kernels/warp_intrinsics.cu``;
shuffles also shuffle the lane id, so ``src_lane`` comes from the hardware. Whether a result is
*defined* is a property of the configuration (who calls, who is read), decided by the Programming
Guide's rules in :mod:`helpers.emulator` on both backends; undefined lanes hold 0 in ``.values``.

Example::

    >>> import numpy as np
    >>> from helpers import warp
    >>> r = warp.shfl_down(np.arange(32, dtype=np.int32), 2, backend="emulator")
    >>> r.values[28:].tolist()      # lanes 30 and 31 keep their own values
    [30, 31, 30, 31]
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import backend as _backend
from . import emulator as _emu
from . import params
from .emulator import LaneResult, ShuffleResult

__all__ = [
    "ShuffleResult", "LaneResult", "shfl_down", "shfl_up", "shfl_xor", "shfl_idx", "ballot",
    "any_sync", "all_sync", "activemask", "match_any", "reduce_add", "reduce_min", "reduce_max",
    "syncwarp",
]


class _Call:
    """Validated, two-dimensional arguments, and how to give results back in the caller's shape."""

    def __init__(self, x: Any, mask: Any, active: Any, *, name: str = "values", is_predicate: bool = False,
                 dtypes: tuple[np.dtype, ...] = params.DTYPES) -> None:
        arr = params.predicate(x, name) if is_predicate else params.values(x, name, dtypes)
        self.squeeze = arr.ndim == 1
        self.values = arr.reshape(-1, params.LANES)
        self.n_warps = self.values.shape[0]
        self.active = params.active(active, arr.shape).reshape(self.values.shape)
        self.mask = params.mask(mask, self.n_warps)

    def lanes(self, a: np.ndarray) -> np.ndarray:
        return a[0] if self.squeeze else a

    def warps(self, a: np.ndarray) -> Any:
        return a[0] if self.squeeze else a


def _shuffle(mode: str, values: Any, b: Any, width: int, mask: Any, active: Any,
             backend: Optional[str]) -> ShuffleResult:
    params.backend(backend)
    call = _Call(values, mask, active)
    w = params.width(width)
    if mode == "idx":
        operand = params.src_lane(b, call.values.shape if not call.squeeze else (params.LANES,))
        operand = operand.reshape(call.values.shape)
    else:
        operand = np.broadcast_to(np.int64(params.lane_offset(b, "lane_mask" if mode == "xor" else "delta")),
                                  call.values.shape)
    r = _emu.shuffle(mode, call.values, operand, w, call.mask, call.active)
    if _backend.resolve(backend) == "cupy":
        from . import warp_cupy

        r = warp_cupy.shuffle(mode, call.values, operand, w, call.mask, call.active, r)
    return ShuffleResult(call.lanes(r.values), call.lanes(r.src_lane), call.lanes(r.defined))


def shfl_down(values: Any, delta: int, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
              backend: Optional[str] = None) -> ShuffleResult:
    """``__shfl_down_sync(mask, values, delta, width)``: lane l reads lane l + delta of its segment.

    A lane whose source lies past the end of its ``width``-lane segment gets its own value back
    (nothing wraps, nothing becomes 0). ``delta`` is in [0, 31].
    """
    return _shuffle("down", values, delta, width, mask, active, backend)


def shfl_up(values: Any, delta: int, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
            backend: Optional[str] = None) -> ShuffleResult:
    """``__shfl_up_sync``: lane l reads lane l - delta; the lowest ``delta`` lanes of each segment keep their own."""
    return _shuffle("up", values, delta, width, mask, active, backend)


def shfl_xor(values: Any, lane_mask: int, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None) -> ShuffleResult:
    """``__shfl_xor_sync``: lane l reads lane l ^ lane_mask.

    A partner in a *later* segment is out of reach: the lane keeps its own value. A partner in an
    earlier segment is read, as the Programming Guide states.
    """
    return _shuffle("xor", values, lane_mask, width, mask, active, backend)


def shfl_idx(values: Any, src_lane: Any, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None) -> ShuffleResult:
    """``__shfl_sync``: lane l reads ``src_lane`` (one integer, or one per lane) of its own segment.

    A source outside [0, width) is taken modulo ``width``, as the Programming Guide defines.
    """
    return _shuffle("idx", values, src_lane, width, mask, active, backend)


def _vote(fn: Callable[..., np.ndarray], kind: str, predicate: Any, mask: Any, active: Any,
          backend: Optional[str]) -> Any:
    params.backend(backend)
    call = _Call(predicate, mask, active, name="predicate", is_predicate=True)
    out = fn(call.values, call.mask, call.active)
    if _backend.resolve(backend) == "cupy":
        from . import warp_cupy

        out = warp_cupy.vote(kind, call.values, call.mask, call.active)
    return call.warps(out)


def ballot(predicate: Any, mask: Any = params.FULL_MASK, active: Any = None,
           backend: Optional[str] = None) -> Any:
    """``__ballot_sync(mask, predicate)``: one uint32 per warp, bit l set iff lane l is in ``mask``,
    active and its predicate is non-zero. Lanes outside ``mask`` and inactive lanes contribute 0.
    """
    return _vote(_emu.ballot, "ballot", predicate, mask, active, backend)


def any_sync(predicate: Any, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None) -> Any:
    """``__any_sync``: one bool per warp, true iff any calling lane's predicate is non-zero."""
    return _vote(_emu.any_sync, "any", predicate, mask, active, backend)


def all_sync(predicate: Any, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None) -> Any:
    """``__all_sync``: one bool per warp, true iff every calling lane's predicate is non-zero."""
    return _vote(_emu.all_sync, "all", predicate, mask, active, backend)


def activemask(active: Any = None, backend: Optional[str] = None) -> Any:
    """``__activemask()`` in converged code: one uint32 per warp with the active lanes' bits.

    It is a snapshot of who is here now, not a synchronisation: in divergent code it may report
    fewer lanes, and it never makes a mask safe to pass to a ``*_sync`` call.
    """
    params.backend(backend)
    shape = params.lanes_shape(active, "active") if active is not None else (params.LANES,)
    call = _Call(np.broadcast_to(np.int32(0), shape), params.FULL_MASK, active)
    out = _emu.activemask(call.active)
    if _backend.resolve(backend) == "cupy":
        from . import warp_cupy

        out = warp_cupy.vote("activemask", np.ones_like(call.active), call.mask, call.active)
    return call.warps(out)


def _collective(kind: str, values: Any, mask: Any, active: Any, backend: Optional[str]) -> LaneResult:
    params.backend(backend)
    call = _Call(values, mask, active, dtypes=params.INT32_DTYPES)
    r = _emu.match_any(call.values, call.mask, call.active) if kind == "match_any" else \
        _emu.warp_reduce(kind, call.values, call.mask, call.active)
    if _backend.resolve(backend) == "cupy":
        from . import warp_cupy

        r = warp_cupy.collective(kind, call.values, call.mask, call.active)
    return LaneResult(call.lanes(r.values), call.lanes(r.defined))


def match_any(values: Any, mask: Any = params.FULL_MASK, active: Any = None,
              backend: Optional[str] = None) -> LaneResult:
    """``__match_any_sync`` (int32/uint32): per calling lane, the uint32 set of calling lanes with an equal value."""
    return _collective("match_any", values, mask, active, backend)


def reduce_add(values: Any, mask: Any = params.FULL_MASK, active: Any = None,
               backend: Optional[str] = None) -> LaneResult:
    """``__reduce_add_sync`` (int32/uint32, compute capability 8.0+): every calling lane gets the sum, mod 2**32."""
    return _collective("add", values, mask, active, backend)


def reduce_min(values: Any, mask: Any = params.FULL_MASK, active: Any = None,
               backend: Optional[str] = None) -> LaneResult:
    """``__reduce_min_sync`` (int32/uint32, compute capability 8.0+)."""
    return _collective("min", values, mask, active, backend)


def reduce_max(values: Any, mask: Any = params.FULL_MASK, active: Any = None,
               backend: Optional[str] = None) -> LaneResult:
    """``__reduce_max_sync`` (int32/uint32, compute capability 8.0+)."""
    return _collective("max", values, mask, active, backend)


def syncwarp(mask: Any = params.FULL_MASK, active: Any = None) -> np.ndarray:
    """``__syncwarp(mask)``: per lane, whether its call is well-defined (the lane is named in ``mask``).

    Emulator-only: a barrier has no value to compare, only a rule to check.
    """
    shape = params.lanes_shape(active, "active") if active is not None else (params.LANES,)
    call = _Call(np.broadcast_to(np.int32(0), shape), mask, active)
    return call.lanes(_emu.syncwarp(call.mask, call.active))
