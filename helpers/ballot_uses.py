"""``__ballot_sync`` put to work: leader election and warp-aggregated atomics (notebook 01).

:func:`compact` keeps the elements above a threshold, as ``kernels/warp_aggregated.cu`` does on a
GPU: each warp takes a ballot of its passing lanes, the lowest of them (``__ffs(mask) - 1``) does one
``atomicAdd`` of ``__popc(mask)`` for the whole warp, and every passing lane writes at the base that
lane received plus its rank ``__popc(mask & lanes_below)``. The emulator runs the same steps with
:mod:`helpers.warp`, the warps' atomics in warp order.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import backend as _backend
from . import params, warp

LANE = np.arange(params.LANES)
BALLOT_USES_KERNELS: dict[str, tuple[str, ...]] = {"warp_aggregated": ("compact_kernel", "compact_cg_kernel")}
METHODS: tuple[str, ...] = ("ballot", "cg")
_BLOCK = 256


def _words(x: Any) -> np.ndarray:
    """``x`` as uint64, if it holds integers in [0, 2**32) (what ``__popc`` and ``__ffs`` take)."""
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError):   # ragged lists, objects NumPy cannot read
        arr = np.asarray(None)
    if arr.dtype.kind not in "iu" or (arr.size and (arr.min() < 0 or arr.max() > params.FULL_MASK)):
        raise ValueError(f"x must hold 32-bit values, integers in [0, 0xFFFFFFFF]; got {params.quote(x)}")
    return arr.astype(np.uint64)


def popc(x: Any) -> np.ndarray:
    """``__popc``: set bits of each 32-bit value."""
    x = _words(x)
    return np.array([bin(int(v)).count("1") for v in x.ravel()], dtype=np.int64).reshape(x.shape)


def ffs(x: Any) -> np.ndarray:
    """``__ffs``: 1 + the index of the lowest set bit, 0 when none is set."""
    x = _words(x)
    out = [(int(v) & -int(v)).bit_length() for v in x.ravel()]
    return np.array(out, dtype=np.int64).reshape(x.shape)


@dataclass(frozen=True)
class Election:
    """One warp's vote: its ballot, the elected leader (-1 if nobody passed) and each lane's rank
    among the passing lanes (-1 where the lane did not pass)."""

    mask: int
    leader: int
    rank: np.ndarray


def elect(predicate: Any, backend: Optional[str] = None) -> Election:
    """Leader election in one warp: ``mask = __ballot_sync(FULL, pred)``, ``leader = __ffs(mask) - 1``,
    ``rank = __popc(mask & ((1 << lane) - 1))`` for the passing lanes."""
    pred = params.predicate(predicate)
    if pred.shape != (params.LANES,):
        raise ValueError(f"predicate must have shape (32,) (one warp); got shape {pred.shape}")
    mask = warp.ballot(pred, backend=backend).value
    below = (mask & ((1 << LANE) - 1)).astype(np.uint64)
    return Election(mask, int(ffs(mask)) - 1, np.where(pred, popc(below), -1))


@dataclass(frozen=True)
class Compaction:
    """The kept values (in the order they were written), how many atomics were issued, and the
    engine that ran it. ``atomics`` is one per warp with a passing lane, not one per element."""

    kept: np.ndarray
    atomics: int
    per_thread_atomics: int
    source: str


def compact(values: Any, threshold: float, backend: Optional[str] = None, method: str = "ballot") -> Compaction:
    """Keep ``values[values > threshold]`` with warp-aggregated atomics. ``values``: 1-D float32, n >= 1
    (other dtypes only if float32 holds them exactly); ``threshold``: a number, not NaN, compared as
    the kernel compares it, in float32.

    ``method="ballot"``: ``__ballot_sync`` / ``__ffs`` / ``__popc`` (``compact_kernel``); ``"cg"``:
    ``cooperative_groups::coalesced_threads()`` (``compact_cg_kernel``). The emulator runs converged
    warps, where both make one atomic per warp with a passing lane; on a GPU the cg way makes one
    per group of passing threads found together, which may be more.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    given = params.array(values, "values", dtypes=params.DTYPES)
    with np.errstate(over="ignore", invalid="ignore"):
        v = given.astype(np.float32, copy=False)
        exact = bool(np.array_equal(v, given, equal_nan=True)) if v is not given else True
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array (n >= 1); got shape {v.shape}")
    if not exact:
        raise ValueError(f"values must be float32 (the kernel's type); these {given.dtype} values change when "
                         f"rounded to float32: pass values.astype(np.float32) if that is what you mean")
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, numbers.Real) or np.isnan(threshold):
        raise ValueError(f"threshold must be a number (not NaN); got {params.quote(threshold)}")
    with np.errstate(over="ignore"):
        threshold = np.float32(threshold)
    passing = int((v > threshold).sum())
    if _backend.resolve(backend) == "cupy":
        kept, atomics = _compact_gpu(v, float(threshold), "compact_kernel" if method == "ballot" else "compact_cg_kernel")
        from .trace import gpu_source

        return Compaction(kept, atomics, passing, gpu_source())
    n_warps = -(-v.size // params.LANES)
    padded = np.full(n_warps * params.LANES, -np.inf, np.float32)
    padded[: v.size] = v
    rows = padded.reshape(n_warps, params.LANES)
    pred = rows > threshold
    masks = warp.ballot(pred, backend="emulator").values
    out, atomics = [], 0
    for w in range(n_warps):  # the warps' atomicAdds, taken in warp order
        if masks[w]:
            atomics += 1
            out.append(rows[w][pred[w]])  # rank order = lane order
    kept = np.concatenate(out) if out else np.zeros(0, np.float32)
    return Compaction(kept, atomics, passing, "emulator")


def _compact_gpu(v: np.ndarray, threshold: float, kernel: str) -> tuple[np.ndarray, int]:
    import cupy

    from . import kernels

    fn = kernels.module("warp_aggregated").get_function(kernel)
    d_in = cupy.asarray(v)
    d_out = cupy.full(v.size, np.nan, dtype=np.float32)
    counter, atomics = cupy.zeros(1, np.int32), cupy.zeros(1, np.int32)
    grid = -(-v.size // _BLOCK)
    fn((grid,), (_BLOCK,), (d_in, np.int64(v.size), np.float32(threshold), d_out, counter, atomics))
    n = int(counter.get()[0])
    return cupy.asnumpy(d_out[:n]), int(atomics.get()[0])


def same_elements(a: Compaction, b: Compaction) -> bool:
    """Equal as multisets (the order of the warps' runs is up to the hardware) with equal atomics."""
    return a.atomics == b.atomics and np.array_equal(np.sort(a.kept), np.sort(b.kept))
