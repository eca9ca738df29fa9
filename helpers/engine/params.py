"""Validation of user-facing parameters. Every error names the parameter and what is allowed.

These checks run before either backend sees the data, so the emulator and the GPU reject exactly
the same inputs with exactly the same messages.
"""
from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

LANES = 32
WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
DTYPES: tuple[np.dtype, ...] = tuple(np.dtype(t) for t in ("int32", "uint32", "float32", "float64"))
INT32_DTYPES: tuple[np.dtype, ...] = (np.dtype("int32"), np.dtype("uint32"))
FULL_MASK = 0xFFFFFFFF
# The emulator's size limit: (n_warps, 32) arrays of at most this many warps (67,108,864 lanes; 256 MiB
# of int32). Work is done CHUNK_WARPS warps at a time, so what a call allocates beyond its input and
# its result stays bounded; the limit bounds the result.
MAX_WARPS = 2**21
CHUNK_WARPS = 2**12


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_integer(x: Any) -> bool:
    """True for a Python or NumPy integer, False for anything else (bools included)."""
    return _is_int(x)


def is_one_of(x: Any, allowed: tuple[str, ...]) -> bool:
    """True if ``x`` is one of the ``allowed`` names (False for anything else, arrays included)."""
    return isinstance(x, str) and x in allowed


def quote(x: Any, limit: int = 60) -> str:
    """``repr(x)`` cut to about ``limit`` characters, for messages that quote what was given."""
    text = repr(x)
    return text if len(text) <= limit else f"{text[:limit - 20]}... ({len(text):,} characters)"


def chunks(n_warps: int) -> Iterator[slice]:
    """Slices of at most :data:`CHUNK_WARPS` warps covering ``range(n_warps)``."""
    for start in range(0, n_warps, CHUNK_WARPS):
        yield slice(start, min(start + CHUNK_WARPS, n_warps))


def _asarray(x: Any, name: str) -> np.ndarray:
    """``np.asarray(x)`` as a plain ndarray, with this module's messages for what NumPy would get wrong."""
    if isinstance(x, np.ma.MaskedArray):
        raise ValueError(f"{name} must be a plain array, not a masked array: a lane always holds a value. "
                         f"Fill the masked elements first (e.g. {name}.filled(0))")
    try:
        return np.asarray(x)
    except (ValueError, TypeError):   # ragged nested lists, or objects NumPy cannot read
        raise ValueError(f"{name} must be an array or a list of equal-length lists of numbers; got a ragged "
                         f"or unreadable {type(x).__name__}") from None


def array(x: Any, name: str = "values", dtypes: tuple[np.dtype, ...] = DTYPES) -> np.ndarray:
    """``x`` as an array (of any shape) with one of ``dtypes``: the checks every value input shares.

    Lists of Python ints become int32 when they all fit, lists of bools int32 (NumPy would make them
    int64 and bool); a list of ints outside int32 is refused rather than wrapped. Arrays keep their
    dtype; subclasses (``np.matrix``) become plain arrays; masked arrays are refused.
    """
    given_array = isinstance(x, np.ndarray)
    arr = _asarray(x, name)
    if not given_array:
        if arr.dtype.kind in "iu" and arr.size:
            lo, hi = int(arr.min()), int(arr.max())
            if lo < -(2**31) or hi >= 2**31:
                bad = lo if lo < -(2**31) else hi
                raise ValueError(f"{name} holds the integer {bad}, outside int32's range [-2**31, 2**31): "
                                 f"pass a NumPy array with the dtype you mean (e.g. np.array(..., dtype=np.uint32))")
            arr = arr.astype(np.int32)
        elif arr.dtype.kind == "b":
            arr = arr.astype(np.int32)
    if arr.dtype not in dtypes:
        allowed = ", ".join(str(d) for d in dtypes)
        raise ValueError(f"{name} dtype must be one of {allowed}; got {arr.dtype}")
    return arr


def _lanes(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.ndim not in (1, 2) or arr.shape[-1] != LANES or (arr.ndim == 2 and arr.shape[0] == 0):
        raise ValueError(f"{name} must have shape (32,) or (n_warps, 32) with n_warps >= 1; got shape {arr.shape}")
    if arr.ndim == 2 and arr.shape[0] > MAX_WARPS:
        raise ValueError(f"{name} has {arr.shape[0]:,} warps; at most MAX_WARPS = {MAX_WARPS:,} (2**21) warps per "
                         f"call: split the input into parts")
    return arr


def lanes_shape(x: Any, name: str) -> tuple[int, ...]:
    """The shape of ``x`` if it is (32,) or (n_warps, 32) with 1 <= n_warps <= MAX_WARPS."""
    return _lanes(_asarray(x, name), name).shape


def values(x: Any, name: str = "values", dtypes: tuple[np.dtype, ...] = DTYPES) -> np.ndarray:
    """``x`` as an array of shape (32,) or (n_warps, 32) with a supported dtype (see :func:`array`).

    At most :data:`MAX_WARPS` warps.
    """
    return _lanes(array(x, name, dtypes), name)


def predicate(x: Any, name: str = "predicate") -> np.ndarray:
    """A per-lane predicate: any integer or bool array of shape (32,) or (n_warps, 32); non-zero is true."""
    arr = _lanes(_asarray(x, name), name)
    if arr.dtype.kind not in "biu":
        raise ValueError(f"{name} must be bool or integer (non-zero is true); got dtype {arr.dtype}")
    return arr != 0


def active(x: Any, shape: tuple[int, ...], name: str = "active") -> np.ndarray:
    """The active-lane set: ``None`` (all active) or a bool array of exactly ``shape``."""
    if x is None:
        return np.ones(shape, dtype=bool)
    arr = _asarray(x, name)
    if arr.dtype != np.bool_:
        raise ValueError(f"{name} must be a bool array of shape {shape} (True = lane active) or None; got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must be a bool array of shape {shape} (True = lane active) or None; got shape {arr.shape}")
    return arr


def mask(x: Any, n_warps: int, name: str = "mask") -> np.ndarray:
    """A 32-bit member mask, one for all warps or one per warp, as a uint32 array of shape (n_warps,)."""
    arr = _asarray(x, name)
    if arr.dtype.kind not in "iu" or arr.ndim > 1:
        raise ValueError(f"{name} must be an integer in [0, 0xFFFFFFFF] or an array of {n_warps} such integers; got {quote(x)}")
    if arr.ndim == 1 and arr.shape != (n_warps,):
        raise ValueError(f"{name} must be one integer or an array of shape ({n_warps},) (one per warp); got shape {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() > FULL_MASK):
        raise ValueError(f"{name} must be in [0, 0xFFFFFFFF] (a 32-bit lane set); got {quote(x)}")
    return np.broadcast_to(arr.astype(np.uint32), (n_warps,)).copy()


def width(x: Any, name: str = "width") -> int:
    """A logical warp width: a power of two in [1, 32]. For any other width the Programming Guide (Warp
    Shuffle Functions) says the shuffles' results are undefined, and the message says so."""
    if not _is_int(x) or int(x) not in WIDTHS:
        raise ValueError(f"{name} must be a power of two in [1, 32] ({', '.join(map(str, WIDTHS))}); got {quote(x)}. "
                         f"For any other width a shuffle's results are undefined (Programming Guide, Warp Shuffle Functions)")
    return int(x)


def lane_offset(x: Any, name: str) -> int:
    """A shuffle delta or xor lane mask: an integer in [0, 31].

    32 and above are rejected rather than emulated: the hardware keeps only the low 5 bits of this
    operand (PTX ``shfl.sync``), so 33 would silently act as 1.
    """
    if not _is_int(x):
        raise ValueError(f"{name} must be an integer in [0, 31]; got {quote(x)}")
    v = int(x)
    if v < 0:
        raise ValueError(f"{name} must be an integer in [0, 31]; got {v} (negative: the intrinsic takes an unsigned)")
    if v >= LANES:
        raise ValueError(
            f"{name} must be an integer in [0, 31]; got {v}. The hardware keeps only the low 5 bits "
            f"(PTX shfl.sync), so {v} would silently behave like {v & 31}: use {v & 31} if that is what you mean"
        )
    return v


def src_lane(x: Any, shape: tuple[int, ...], name: str = "src_lane") -> np.ndarray:
    """``__shfl_sync``'s source lane: one integer, or an integer array of ``shape`` (one per lane).

    Any integer is allowed: the Programming Guide defines a source outside [0, width) as taken
    modulo width, within the caller's own segment.
    """
    arr = _asarray(x, name)
    if arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
        raise ValueError(f"{name} must be an integer or an integer array of shape {shape}; got {quote(x)}")
    if arr.ndim and arr.shape != shape:
        raise ValueError(f"{name} must be one integer or an array of shape {shape} (one per lane); got shape {arr.shape}")
    return np.broadcast_to(arr, shape)   # a view: the emulator reads only the low 5 bits of each


def backend(x: Optional[str], name: str = "backend") -> Optional[str]:
    """``None`` (auto), ``"emulator"`` or ``"cupy"``."""
    if x is not None and (not isinstance(x, str) or x not in ("emulator", "cupy")):
        raise ValueError(f"{name} must be None (auto), 'emulator' or 'cupy'; got {quote(x)}")
    return x


def exited(x: Any, shape: tuple[int, ...], name: str = "exited") -> np.ndarray:
    """The lanes that have exited the kernel (returned) before the call: ``None`` (none) or a bool
    array of exactly ``shape``. An exited lane is neither calling nor alive elsewhere."""
    if x is None:
        return np.zeros(shape, dtype=bool)
    arr = np.asarray(x)
    if arr.dtype != np.bool_ or arr.shape != shape:
        got = f"dtype {arr.dtype}" if arr.dtype != np.bool_ else f"shape {arr.shape}"
        raise ValueError(f"{name} must be a bool array of shape {shape} (True = lane has exited) or None; got {got}")
    return arr


_active_lanes = active  # lane_states' own parameter is called ``active``


def lane_states(active: Any, exited_lanes: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(active, exited)`` validated together: the lanes that call, and the lanes that have exited.

    ``active=None`` means every lane that has not exited calls. A lane both calling and exited is
    impossible (an exited thread executes nothing): ValueError naming ``exited``. Lanes in neither
    set are alive but elsewhere (diverged).
    """
    gone = exited(exited_lanes, shape)
    if active is None:
        return ~gone, gone
    calling = _active_lanes(active, shape)
    both = calling & gone
    if both.any():
        lanes = " ".join(str(int(l)) for l in np.unique(np.nonzero(both)[-1]))
        raise ValueError(f"exited must not overlap active: lane(s) {lanes} are marked both exited and calling, "
                         f"but a lane that has exited executes nothing. Remove them from active (or leave "
                         f"active=None: every lane that has not exited calls)")
    return calling, gone
