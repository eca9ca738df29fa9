"""The public warp-intrinsic API: one call, the same answers on the emulator and on a real GPU.

Every function takes ``values`` (or a ``predicate``) of shape (32,) or (n_warps, 32), an optional
``mask`` (one 32-bit integer, or one per warp) and the state of each lane at the call, which is
one of three (the Programming Guide tells them apart, so this API does too):

* ``active`` (bool, same shape; default: every lane that has not exited): the lanes that execute
  this intrinsic with this mask: the **calling** lanes;
* ``exited`` (bool, same shape; default: none): the lanes that have returned from the kernel;
* every other lane is **alive but elsewhere** (in another branch of divergent code).

A mask that names a lane that is alive but elsewhere makes the call undefined for every lane:
all its results are flagged undefined, never a number. Naming an exited lane is allowed; reading
its value is undefined. A lane both ``active`` and ``exited`` is a ValueError naming ``exited``.
``backend`` is None (auto), ``"emulator"`` or ``"cupy"``.

On the ``cupy`` backend each defined call launches a real kernel from ``kernels/warp_intrinsics.cu``
(an undefined one is never launched: it could hang the warp); shuffles also shuffle the lane id,
so ``src_lane`` comes from the hardware. Whether a result is *defined* is a property of the
configuration (who calls, who is read), decided by the Programming Guide's rules in
:mod:`helpers.engine.emulator` on both backends; undefined lanes hold 0 in ``.values``.

Example::

    >>> import numpy as np
    >>> from helpers.engine import warp
    >>> lane = np.arange(32, dtype=np.int32)
    >>> r = warp.shfl_down(lane, 2, backend="emulator")
    >>> r.values[28:].tolist()      # lanes 30 and 31 keep their own values
    [30, 31, 30, 31]
    >>> print(warp.ballot(lane < 20, backend="emulator"))
    0x000FFFFF
    >>> print(warp.ballot(lane < 20, active=lane % 2 == 0, backend="emulator"))   # odd lanes elsewhere
    undefined
    >>> print(warp.ballot(lane < 20, exited=lane % 2 == 1, backend="emulator"))   # odd lanes exited
    0x00055555
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from helpers.engine import backend as _backend
from helpers.engine import emulator as _emu
from helpers.engine import intrinsics
from helpers.engine import params
from helpers.engine.emulator import LaneResult, ShuffleResult, VoteResult
from helpers.engine.intrinsics import Intrinsic

# One function per row of the intrinsic table, in its order; syncwarp has no row (it returns no value).
__all__ = ["ShuffleResult", "LaneResult", "VoteResult", *intrinsics.names(), "syncwarp"]


class _Call:
    """Validated, two-dimensional arguments, and how to give results back in the caller's shape."""

    def __init__(self, x: Any, mask: Any, active: Any, exited: Any = None, *, name: str = "values",
                 is_predicate: bool = False, dtypes: tuple[np.dtype, ...] = params.DTYPES) -> None:
        arr = params.predicate(x, name) if is_predicate else params.values(x, name, dtypes)
        self.squeeze = arr.ndim == 1
        self.values = arr.reshape(-1, params.LANES)
        self.n_warps = self.values.shape[0]
        if active is None and exited is None:   # converged: every lane calls, so one row says it
            act, gone = np.broadcast_to(True, arr.shape), np.broadcast_to(False, arr.shape)
        else:
            act, gone = params.lane_states(active, exited, arr.shape)
        self.active, self.exited = act.reshape(self.values.shape), gone.reshape(self.values.shape)
        self.mask = params.mask(mask, self.n_warps)

    def lanes(self, a: Optional[np.ndarray]) -> Optional[np.ndarray]:
        return a[0] if self.squeeze and a is not None else a

    def warps(self, a: np.ndarray) -> Any:
        return a[0] if self.squeeze else a

    def shuffle_result(self, r: ShuffleResult) -> ShuffleResult:
        src = r.src_lane.astype(np.int8, copy=False)       # one dtype on both backends
        return ShuffleResult(self.lanes(r.values), self.lanes(src), self.lanes(r.defined),
                             self.lanes(r.state), self.warps(r.call_defined))

    def vote_result(self, r: VoteResult) -> VoteResult:
        return VoteResult(self.warps(r.values), self.warps(r.defined))


def _shuffle(mode: str, values: Any, b: Any, width: int, mask: Any, active: Any, exited: Any,
             backend: Optional[str]) -> ShuffleResult:
    params.backend(backend)
    call = _Call(values, mask, active, exited)
    w = params.width(width)
    if mode == "idx":
        operand = params.src_lane(b, call.values.shape if not call.squeeze else (params.LANES,))
        operand = operand.reshape(call.values.shape)
    else:
        operand = np.broadcast_to(np.int64(params.lane_offset(b, "lane_mask" if mode == "xor" else "delta")),
                                  call.values.shape)
    r = _emu.shuffle(mode, call.values, operand, w, call.mask, call.active, call.exited)
    if _backend.resolve(backend) == "cupy":
        from helpers.engine import warp_cupy

        r = warp_cupy.shuffle(mode, call.values, operand, w, call.mask, r)
    return call.shuffle_result(r)


def shfl_down(values: Any, delta: int, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
              backend: Optional[str] = None, *, exited: Any = None) -> ShuffleResult:
    """``__shfl_down_sync(mask, values, delta, width)``: lane l reads lane l + delta of its segment.

    A lane whose source lies past the end of its ``width``-lane segment gets its own value back
    (nothing wraps, nothing becomes 0). ``delta`` is in [0, 31].
    """
    return _shuffle("down", values, delta, width, mask, active, exited, backend)


def shfl_up(values: Any, delta: int, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
            backend: Optional[str] = None, *, exited: Any = None) -> ShuffleResult:
    """``__shfl_up_sync``: lane l reads lane l - delta; the lowest ``delta`` lanes of each segment keep their own."""
    return _shuffle("up", values, delta, width, mask, active, exited, backend)


def shfl_xor(values: Any, lane_mask: int, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None, *, exited: Any = None) -> ShuffleResult:
    """``__shfl_xor_sync``: lane l reads lane l ^ lane_mask.

    A partner in a *later* segment is out of reach: the lane keeps its own value. A partner in an
    earlier segment is read, as the Programming Guide states.
    """
    return _shuffle("xor", values, lane_mask, width, mask, active, exited, backend)


def shfl_idx(values: Any, src_lane: Any, width: int = 32, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None, *, exited: Any = None) -> ShuffleResult:
    """``__shfl_sync``: lane l reads ``src_lane`` (one integer, or one per lane) of its own segment.

    A source outside [0, width) is taken modulo ``width``, as the Programming Guide defines.
    """
    return _shuffle("idx", values, src_lane, width, mask, active, exited, backend)


def _vote(fn: Callable[..., VoteResult], kind: str, predicate: Any, mask: Any, active: Any, exited: Any,
          backend: Optional[str]) -> VoteResult:
    params.backend(backend)
    call = _Call(predicate, mask, active, exited, name="predicate", is_predicate=True)
    out = fn(call.values, call.mask, call.active, call.exited)
    if _backend.resolve(backend) == "cupy":
        from helpers.engine import warp_cupy

        out = warp_cupy.vote(kind, call.values, call.mask, call.active, call.exited, out)
    return call.vote_result(out)


def ballot(predicate: Any, mask: Any = params.FULL_MASK, active: Any = None,
           backend: Optional[str] = None, *, exited: Any = None) -> VoteResult:
    """``__ballot_sync(mask, predicate)``: per warp, a uint32 with bit l set iff lane l is in
    ``mask``, calls, and its predicate is non-zero. Lanes outside ``mask``, exited lanes and lanes
    elsewhere contribute 0; a mask naming a lane that is elsewhere makes the result undefined. The
    value is what the calling lanes named in ``mask`` get: a calling lane outside ``mask`` gets an
    undefined result of its own (PTX ``vote.sync``).

    Returns a :class:`VoteResult`: ``.value`` (one warp, raises if undefined), ``.hex()``,
    ``.values`` / ``.defined`` (one per warp).
    """
    return _vote(_emu.ballot, "ballot", predicate, mask, active, exited, backend)


def any_sync(predicate: Any, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None, *, exited: Any = None) -> VoteResult:
    """``__any_sync``: per warp, true iff any calling lane's predicate is non-zero (a :class:`VoteResult`)."""
    return _vote(_emu.any_sync, "any", predicate, mask, active, exited, backend)


def all_sync(predicate: Any, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None, *, exited: Any = None) -> VoteResult:
    """``__all_sync``: per warp, true iff every calling lane's predicate is non-zero (a :class:`VoteResult`)."""
    return _vote(_emu.all_sync, "all", predicate, mask, active, exited, backend)


def activemask(active: Any = None, backend: Optional[str] = None) -> VoteResult:
    """``__activemask()``: per warp, the bits of the lanes that execute it together (``active``).

    It is a snapshot of who is here now, not a synchronisation: in divergent code it may report
    fewer lanes, and it never makes a mask safe to pass to a ``*_sync`` call.
    """
    params.backend(backend)
    shape = params.lanes_shape(active, "active") if active is not None else (params.LANES,)
    call = _Call(np.broadcast_to(np.int32(0), shape), params.FULL_MASK, active)
    out = _emu.activemask(call.active)
    if _backend.resolve(backend) == "cupy":
        from helpers.engine import warp_cupy

        out = warp_cupy.activemask(call.active)
    return call.vote_result(out)


def _collective(row: Intrinsic, values: Any, mask: Any, active: Any, exited: Any,
                backend: Optional[str]) -> LaneResult:
    params.backend(backend)
    call = _Call(values, mask, active, exited, dtypes=row.dtypes)
    r = _emu.match_any(call.values, call.mask, call.active, call.exited) if row.kind == "match_any" else \
        _emu.warp_reduce(row.kind, call.values, call.mask, call.active, call.exited)
    if _backend.resolve(backend) == "cupy":
        from helpers.engine import warp_cupy

        if row.cc is not None:
            _backend.require_compute_capability(row.cc, f"{row.name} ({row.cuda})")
        r = warp_cupy.collective(row.kind, call.values, call.mask, call.active, call.exited, r)
    return LaneResult(call.lanes(r.values), call.lanes(r.defined))


def _collective_api(name: str) -> Callable[..., LaneResult]:
    """The public function of the collective row ``name``: the same parameters for all of them, the
    row's docstring, its name."""
    row = intrinsics.row(name)

    def call(values: Any, mask: Any = params.FULL_MASK, active: Any = None,
             backend: Optional[str] = None, *, exited: Any = None) -> LaneResult:
        return _collective(row, values, mask, active, exited, backend)

    call.__name__ = call.__qualname__ = row.name
    call.__doc__ = row.doc
    return call


match_any = _collective_api("match_any")
reduce_add = _collective_api("reduce_add")
reduce_min = _collective_api("reduce_min")
reduce_max = _collective_api("reduce_max")


def syncwarp(mask: Any = params.FULL_MASK, active: Any = None, exited: Any = None) -> np.ndarray:
    """``__syncwarp(mask)``: per lane, whether its call is well-defined (it calls, is named in
    ``mask``, and no lane named in ``mask`` is alive elsewhere).

    Emulator-only: a barrier has no value to compare, only a rule to check.
    """
    shape = next((params.lanes_shape(a, name) for a, name in ((active, "active"), (exited, "exited"))
                  if a is not None), (params.LANES,))
    call = _Call(np.broadcast_to(np.int32(0), shape), mask, active, exited)
    return call.lanes(_emu.syncwarp(call.mask, call.active, call.exited))
