"""``__ballot_sync`` put to work: leader election and warp-aggregated atomics (notebook 01).

:func:`compact` keeps the elements above a threshold, as ``kernels/warp_aggregated.cu`` does on a
GPU: each warp takes a ballot of its passing lanes, the lowest of them (``__ffs(mask) - 1``) does one
``atomicAdd`` of ``__popc(mask)`` for the whole warp, and every passing lane writes at the base that
lane received plus its rank ``__popc(mask & lanes_below)``. Without a GPU the same kernel runs on
the SIMT machine (:func:`helpers.topics.launch.launch`), whose atomics take effect in thread order, so
its warps' runs come out in warp order.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from helpers.engine import backend as _backend
from helpers.engine import params
from helpers.engine import warp
from helpers.topics.launch import launch
from helpers.engine.trace import gpu_source

LANE = np.arange(params.LANES)
BALLOT_USES_KERNELS: dict[str, tuple[str, ...]] = {"warp_aggregated": ("compact_kernel", "compact_cg_kernel")}
METHODS: tuple[str, ...] = ("ballot", "cg")
_BLOCK = 256
# Elements per launch: each launch is the kernel on a slice of the input (its own counter), so the
# machine's memory stays bounded; the kept runs are concatenated in launch order.
_CHUNK = params.CHUNK_WARPS * params.LANES


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
    kernel = "compact_kernel" if method == "ballot" else "compact_cg_kernel"
    engine = _backend.resolve(backend)
    step = v.size if engine == "cupy" else _CHUNK
    kept, atomics = [], 0
    for start in range(0, v.size, step):
        got, n_atomics = _compact_launch(v[start:start + step], threshold, kernel, engine)
        kept.append(got)
        atomics += n_atomics
    source = gpu_source() if engine == "cupy" else "SIMT machine"
    return Compaction(np.concatenate(kept), atomics, passing, source)


def _compact_launch(v: np.ndarray, threshold: np.float32, kernel: str, engine: str) -> tuple[np.ndarray, int]:
    """One launch of ``kernel`` (kernels/warp_aggregated.cu) over ``v``: the kept values, the atomics."""
    r = launch("warp_aggregated", kernel, -(-v.size // _BLOCK), _BLOCK,
               [v, np.int64(v.size), threshold, np.full(v.size, np.nan, np.float32), np.zeros(1, np.int32),
                np.zeros(1, np.int32)], backend=engine)
    if r.report is not None and not r.report.clean:
        raise RuntimeError(f"kernels/warp_aggregated.cu {kernel} on the SIMT machine: {r.report.summary()}")
    n = int(r.outputs[4][0])
    return r.outputs[3][:n], int(r.outputs[5][0])


def same_elements(a: Compaction, b: Compaction) -> bool:
    """Equal as multisets (the order of the warps' runs is up to the hardware) with equal atomics."""
    return a.atomics == b.atomics and np.array_equal(np.sort(a.kept), np.sort(b.kept))
