"""The lane-exact NumPy model of the warp intrinsics, over one or many warps at once.

Semantics follow the CUDA C++ Programming Guide ("Warp Shuffle Functions", "Warp Vote Functions",
"Warp Match Functions", "Warp Reduce Functions") and the PTX ISA instructions they compile to
(``shfl.sync``, ``vote.sync``, ``match.sync``, ``redux.sync``). Arrays here are already validated and
two-dimensional, (n_warps, 32); :mod:`helpers.engine.warp` is the public face that validates and reshapes.

Every lane is in one of three states at a ``*_sync`` call:

* **calling** (``active``): it executes this intrinsic with this mask;
* **exited**: it has returned from the kernel;
* **alive but elsewhere**: neither (it is in another branch of divergent code).

What is defined:

* The call itself. The Programming Guide: "all non-exited threads named in mask must execute the
  same intrinsic with the same mask, or the result is undefined"; the PTX ISA adds that the
  executing thread waits until all non-exited threads in ``membermask`` have executed it (so the
  warp may hang). A mask naming a lane that is alive but elsewhere therefore makes the call
  undefined for **every** lane of that warp. Naming an exited lane is allowed.
* Each calling lane's result. A calling lane must have its own bit in ``mask`` (PTX: "the behavior
  of shfl.sync is undefined if the executing thread is not in the membermask"), else its result is
  undefined.
* A shuffle read. Lane ``j`` is computed from the caller's lane, the operand and ``width``; when
  ``j`` leaves the caller's segment (the PTX clamp fails) the caller gets its own value back. Any
  other read is defined only when lane ``j`` itself calls: reading a lane that has exited, is
  elsewhere, or is outside ``mask`` is undefined ("If the target thread is inactive, the retrieved
  value is undefined").

Undefined results are reported as 0 with ``defined`` False, never to be shown as a number.

``exited=None`` in this module means "every lane that does not call has exited", the model of
code whose missing lanes do not exist or have returned (block reductions use it). The public API
(:mod:`helpers.engine.warp`) always passes the three states explicitly.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Callable, Optional, TypeVar

import numpy as np

from helpers.engine.params import CHUNK_WARPS, chunks

LANES = 32
LANE = np.arange(LANES, dtype=np.int64)
MODES = ("idx", "up", "down", "xor")
EXITED, CALLING, ELSEWHERE = 0, 1, 2           # a lane's state at a *_sync call
STATE_NAMES = ("exited", "calling", "elsewhere")


@dataclass(frozen=True)
class ShuffleResult:
    """What every lane got back from a shuffle. All three arrays are shaped like the input values.

    values:   the value received; 0 where ``defined`` is False (read it only where defined).
    src_lane: the lane it was (or, where undefined, would be) read from (the caller's own lane when
              it kept its value), -1 for a lane that did not call; int8 (a lane number fits).
    defined:  True where the Programming Guide defines the result.
    state:    each lane's state (:data:`EXITED`, :data:`CALLING`, :data:`ELSEWHERE`), or None when
              unknown (results read back from a recording).

    What is the same for every warp (the source lanes of one delta, ``defined`` and ``state`` of a
    converged call) is one row broadcast over the warps: a read-only view, not a copy per warp.
    call_defined: per warp, False when the call itself is undefined (its mask names a lane that is
              alive elsewhere); None when unknown.
    """

    values: np.ndarray
    src_lane: np.ndarray
    defined: np.ndarray
    state: Optional[np.ndarray] = None
    call_defined: Optional[np.ndarray] = None

    @property
    def kept_own(self) -> np.ndarray:
        """Lanes whose source fell outside their segment, so they got their own value back."""
        return self.defined & (self.src_lane == np.arange(LANES))


@dataclass(frozen=True)
class LaneResult:
    """A per-lane result of a collective (match, reduce): ``values`` valid only where ``defined``."""

    values: np.ndarray
    defined: np.ndarray


@dataclass(frozen=True, repr=False)
class VoteResult:
    """One result per warp of a vote (``__ballot_sync``, ``__any_sync``, ``__all_sync``,
    ``__activemask``), with whether it is defined.

    values:  the uint32 (ballot, activemask) or bool (any, all) every calling lane got; 0 / False
             where undefined (read it only where defined).
    defined: False where the call is undefined (its mask names a lane that is alive elsewhere).
    For one warp both are scalars; :attr:`value` and :meth:`hex` are the safe ways to read them.
    """

    values: Any
    defined: Any

    @property
    def value(self) -> Any:
        """The one warp's result as a Python int (or bool). Raises ValueError if it is undefined."""
        if np.ndim(self.values) != 0:
            raise ValueError("value is for a single warp; this result has one per warp: read .values where .defined")
        if not bool(self.defined):
            raise ValueError("undefined: the mask names a lane that is alive but not calling, so the "
                             "Programming Guide defines no result (and the warp may hang)")
        v = self.values.item() if isinstance(self.values, np.generic) else self.values
        return bool(v) if isinstance(v, (bool, np.bool_)) else int(v)

    def hex(self) -> str:
        """``0x0000FFFF`` (ballot, activemask) or ``1`` / ``0`` (any, all); ``undefined`` when it is.
        For one warp only."""
        if not bool(self.defined):
            return "undefined"
        v = self.value
        return str(int(v)) if isinstance(v, bool) else f"0x{v:08X}"

    def __str__(self) -> str:
        if np.ndim(self.values) == 0:
            return self.hex()
        return "[" + ", ".join(VoteResult(v, d).hex() for v, d in zip(self.values, self.defined)) + "]"

    def __repr__(self) -> str:
        return f"VoteResult({self})"


_F = TypeVar("_F", bound=Callable[..., Any])


def _in_chunks(fn: _F) -> _F:
    """Run ``fn`` on CHUNK_WARPS warps at a time and put the parts together.

    Every array argument of the functions below is per warp (axis 0 is the warp), and every warp's
    answer depends on that warp alone, so splitting changes nothing but the size of the temporaries
    (a (chunk, 32, 32) comparison in :func:`match_any`, not an (n_warps, 32, 32) one). A part that
    is one row broadcast over its warps, the same row in every chunk, stays one broadcast row.
    """
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        arrays = [a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray) and a.ndim]
        n = arrays[0].shape[0] if arrays else 0
        if n <= CHUNK_WARPS:
            return fn(*args, **kwargs)
        cut = lambda a, s: a[s] if isinstance(a, np.ndarray) and a.ndim else a  # noqa: E731
        out: dict[str, Any] = {}
        rows: dict[str, np.ndarray] = {}        # parts that have been one broadcast row so far
        for s in chunks(n):
            part = fn(*(cut(a, s) for a in args), **{k: cut(a, s) for k, a in kwargs.items()})
            parts = {f.name: getattr(part, f.name) for f in fields(part)} if is_dataclass(part) else {"": part}
            for k, a in parts.items():
                if a is None:
                    out[k] = None
                    continue
                if k in rows and _one_row(a) and np.array_equal(a[0], rows[k]):
                    continue
                if k not in out:
                    if not s.start and _one_row(a):
                        rows[k] = a[0]
                        continue
                    out[k] = np.empty((n, *a.shape[1:]), a.dtype)
                    if k in rows:
                        out[k][:s.start] = rows.pop(k)
                out[k][s] = a
        out.update({k: np.broadcast_to(row, (n, *row.shape)) for k, row in rows.items()})
        return type(part)(**out) if is_dataclass(part) else out[""]
    return run  # type: ignore[return-value]


def _one_row(a: np.ndarray) -> bool:
    """``a`` is one row broadcast over axis 0 (a read-only view that holds a single row)."""
    return a.ndim > 1 and a.strides[0] == 0


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
    """Lanes that execute the intrinsic with their own bit in the mask: active and named in it."""
    return active & mask_bits(mask)


def _exited(active: np.ndarray, exited: Optional[np.ndarray]) -> np.ndarray:
    return ~active if exited is None else exited


def lane_state(active: np.ndarray, exited: Optional[np.ndarray] = None) -> np.ndarray:
    """(n_warps, 32) int8: :data:`CALLING` where active, :data:`EXITED` where exited, else
    :data:`ELSEWHERE` (alive, in other code). ``active`` and ``exited`` must not overlap."""
    gone = _exited(active, exited)
    return np.where(active, CALLING, np.where(gone, EXITED, ELSEWHERE)).astype(np.int8)


def diverged_in_mask(mask: np.ndarray, active: np.ndarray, exited: Optional[np.ndarray] = None) -> np.ndarray:
    """(n_warps, 32) bool: lanes named in ``mask`` that are alive but not calling. Any such lane
    makes the whole call undefined (Programming Guide: every non-exited lane named in mask must
    execute the same intrinsic with the same mask)."""
    return mask_bits(mask) & ~active & ~_exited(active, exited)


def call_defined(mask: np.ndarray, active: np.ndarray, exited: Optional[np.ndarray] = None) -> np.ndarray:
    """(n_warps,) bool: the call is defined, i.e. no lane named in ``mask`` is alive elsewhere."""
    return ~diverged_in_mask(mask, active, exited).any(axis=1)


def _source_and_range(mode: str, b: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """PTX ``shfl.sync``'s source lane ``j`` and its in-range predicate ``pval`` per lane.

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
    return j, ok


def source_lanes(mode: str, b: np.ndarray, width: int) -> np.ndarray:
    """The lane each lane reads, per PTX ``shfl.sync`` (its own lane when the clamp fails).

    ``b`` is the operand per lane, shaped (n_warps, 32): delta for up/down, the lane mask for xor,
    the source lane for idx. Only its low 5 bits count, as in hardware.
    """
    j, ok = _source_and_range(mode, b, width)
    return np.where(ok, j, LANE)


def in_range(mode: str, b: np.ndarray, width: int) -> np.ndarray:
    """PTX ``shfl.sync``'s predicate ``pval`` per lane: True where the source lies in the caller's
    segment. A lane where it is False gets its own value back; a lane reading itself in range (idx
    to its own lane, offset 0) is an ordinary read, not a kept value."""
    return _source_and_range(mode, b, width)[1]


def gather(a: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``a[w, j[w, l]]`` for every warp w and lane l of (n_warps, 32) arrays; ``j`` may also be one
    row, shaped (1, 32), of lanes that every warp reads."""
    if j.shape[0] == 1:
        row = j[0]
        if a.shape[0] >= 256:
            # a few runs of consecutive source lanes (shfl down or up, xor by 8 or 16): one strided
            # copy per run, a third of the cost of a gather of every element
            cuts = np.flatnonzero(row[1:] != row[:-1] + 1) + 1
            if cuts.size < 4:
                out = np.empty(a.shape, a.dtype)
                for lo, hi in zip((0, *cuts.tolist()), (*cuts.tolist(), row.size)):
                    src = int(row[lo])
                    out[:, lo:hi] = a[:, src:src + hi - lo]
                return out
        return np.take(a, row, axis=1)   # C-ordered, unlike a[:, j[0]]
    rows = np.arange(0, a.size, LANES, dtype=np.int64)[:, None]
    return np.ascontiguousarray(a).reshape(-1)[(j + rows).reshape(-1)].reshape(a.shape)


@_in_chunks
def shuffle(mode: str, values: np.ndarray, b: np.ndarray, width: int, mask: np.ndarray,
            active: np.ndarray, exited: Optional[np.ndarray] = None) -> ShuffleResult:
    """``__shfl{,_up,_down,_xor}_sync(mask, values, b, width)`` over (n_warps, 32) lanes.

    ``active``: the calling lanes; ``exited``: the lanes that have returned (None: every lane that
    does not call). A warp whose call is undefined gets ``defined`` False in every lane.
    """
    # One operand for every warp (a broadcast delta): one row of source lanes serves them all.
    uniform = b.ndim == 2 and b.shape[0] > 1 and b.strides[0] == 0
    j = source_lanes(mode, b[:1] if uniform else b, width)
    got = gather(values, j)
    if exited is None and _one_row(active) and active[0].all() and (np.asarray(mask) == 0xFFFFFFFF).all():
        # every lane of every warp calls with the full mask (given as one broadcast row): defined
        return ShuffleResult(got, np.broadcast_to(j.astype(np.int8), values.shape), active,
                             state=_row(np.int8(CALLING), values.shape), call_defined=np.ones(values.shape[0], bool))
    m = np.asarray(mask)
    if values.shape[0] > 1 and j.shape[0] == 1 and _one_row(active) and (exited is None or _one_row(exited)) and \
            (m.ndim == 0 or (m == m.flat[0]).all()):
        # the same lanes call with one mask in every warp: which lanes read which, and what is
        # defined, is one row for all warps; only the values differ
        one = shuffle(mode, values[:1], b[:1], width, m.reshape(-1)[:1], active[:1],
                      None if exited is None else exited[:1])
        n = values.shape[0]
        wide = lambda a: np.broadcast_to(a[0], (n, *a.shape[1:]))  # noqa: E731
        return ShuffleResult(np.where(one.defined[0], got, np.zeros((), values.dtype)), wide(one.src_lane),
                             wide(one.defined), state=wide(one.state),
                             call_defined=np.full(n, one.call_defined[0]))
    calling = callers(mask, active)
    ok = call_defined(mask, active, exited)
    if calling.all():   # everyone calls, so the call and every read are defined (the converged case)
        return ShuffleResult(got, np.broadcast_to(j.astype(np.int8), values.shape), _lean(calling),
                             state=_row(np.int8(CALLING), values.shape), call_defined=ok)
    source_calls = gather(calling, j)
    defined = calling & source_calls & ok[:, None]
    return ShuffleResult(
        values=np.where(defined, got, np.zeros((), values.dtype)),
        src_lane=np.where(active, np.broadcast_to(j, values.shape), -1).astype(np.int8),
        defined=defined,
        state=lane_state(active, exited),
        call_defined=ok,
    )


def _row(x: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` in every lane of every warp: one row, broadcast (read-only)."""
    return np.broadcast_to(np.full(shape[-1], x), shape)


def _lean(calling: np.ndarray) -> np.ndarray:
    """``calling`` as one broadcast row when every lane calls (the converged case), else itself."""
    return _row(True, calling.shape) if calling.all() else calling


@_in_chunks
def ballot(pred: np.ndarray, mask: np.ndarray, active: np.ndarray,
           exited: Optional[np.ndarray] = None) -> VoteResult:
    """``__ballot_sync``: bit l set iff lane l calls (active, in mask) and its predicate is true."""
    ok = call_defined(mask, active, exited)
    return VoteResult(np.where(ok, pack_bits(callers(mask, active) & pred), 0).astype(np.uint32), ok)


@_in_chunks
def any_sync(pred: np.ndarray, mask: np.ndarray, active: np.ndarray,
             exited: Optional[np.ndarray] = None) -> VoteResult:
    """``__any_sync`` per warp: is the predicate true on any calling lane."""
    ok = call_defined(mask, active, exited)
    return VoteResult(ok & (callers(mask, active) & pred).any(axis=1), ok)


@_in_chunks
def all_sync(pred: np.ndarray, mask: np.ndarray, active: np.ndarray,
             exited: Optional[np.ndarray] = None) -> VoteResult:
    """``__all_sync`` per warp: is the predicate true on every calling lane (True when none call)."""
    ok = call_defined(mask, active, exited)
    return VoteResult(ok & (~callers(mask, active) | pred).all(axis=1), ok)


@_in_chunks
def activemask(active: np.ndarray) -> VoteResult:
    """``__activemask()`` per warp: the lanes executing it together, here ``active``.

    It takes no mask, so it is never undefined, but it is only a snapshot: in divergent code which
    lanes happen to execute it together is up to the scheduler, and it synchronises nothing.
    """
    return VoteResult(pack_bits(active), np.ones(active.shape[0], bool))


@_in_chunks
def match_any(values: np.ndarray, mask: np.ndarray, active: np.ndarray,
              exited: Optional[np.ndarray] = None) -> LaneResult:
    """``__match_any_sync``: for each calling lane, the calling lanes holding an equal value."""
    calling = callers(mask, active) & call_defined(mask, active, exited)[:, None]
    same = values[:, :, None] == values[:, None, :]
    same &= calling[:, None, :]          # in place: one (chunk, 32, 32) temporary, not two
    out = pack_bits(same.reshape(-1, LANES)).reshape(values.shape)
    return LaneResult(np.where(calling, out, 0).astype(np.uint32), _lean(calling))


@_in_chunks
def warp_reduce(op: str, values: np.ndarray, mask: np.ndarray, active: np.ndarray,
                exited: Optional[np.ndarray] = None) -> LaneResult:
    """``__reduce_{add,min,max}_sync`` (32-bit integers): every calling lane gets the result.

    ``add`` wraps modulo 2**32 as the hardware does.
    """
    calling = callers(mask, active) & call_defined(mask, active, exited)[:, None]
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
    return LaneResult(out, _lean(calling))


@_in_chunks
def syncwarp(mask: np.ndarray, active: np.ndarray, exited: Optional[np.ndarray] = None) -> np.ndarray:
    """``__syncwarp(mask)``: per lane, whether its call is well-defined.

    The barrier moves no data; what can be checked are the Programming Guide's rules: the calling
    lane has its own bit in ``mask``, and every non-exited lane named in ``mask`` executes a
    ``__syncwarp`` with that mask (a lane named in it that is elsewhere and never arrives makes the
    call undefined; on the hardware the callers may wait for ever).
    """
    return callers(mask, active) & call_defined(mask, active, exited)[:, None]
