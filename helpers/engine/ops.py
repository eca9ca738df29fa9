"""The reduction operators, defined once: their names, their C++ functors (``warplab::ops`` in
kernels/warp_reduce.cuh), their identities, the C types they are instantiated for, and their
NumPy meaning (the reference every kernel's answer is checked against).

Every topic module that launches a reduce kernel builds its name expressions from this table
(:func:`op_exprs`), so the instantiations registered for NVRTC and the ones launched are the same.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from helpers.engine import params

OPS: tuple[str, ...] = ("sum", "max", "min", "bit_and", "bit_or", "bit_xor")
BITWISE_OPS: tuple[str, ...] = ("bit_and", "bit_or", "bit_xor")
# The element types every reduce kernel is instantiated for, and their C++ spelling.
CTYPES: dict[str, str] = {"int32": "int", "uint32": "unsigned int", "float32": "float", "float64": "double"}
INT_DTYPES: tuple[str, ...] = ("int32", "uint32")
CPP_OPS: dict[str, str] = {"sum": "Sum", "max": "Max", "min": "Min", "bit_and": "BitAnd", "bit_or": "BitOr",
                           "bit_xor": "BitXor"}
# The warp-reduce intrinsic of each operator (kernels/warp_reduce_ops.cu, hw_reduce; CUDA C++ Programming
# Guide, Warp Reduce Functions: int32/uint32, compute capability 8.0+).
REDUCE_SYNC: dict[str, str] = {"sum": "__reduce_add_sync", "max": "__reduce_max_sync", "min": "__reduce_min_sync",
                               "bit_and": "__reduce_and_sync", "bit_or": "__reduce_or_sync",
                               "bit_xor": "__reduce_xor_sync"}


def check_op(op: Any, dtype: Any) -> str:
    """``op`` validated for ``dtype``: one of :data:`OPS`; the bitwise ones need an integer dtype."""
    if not params.is_one_of(op, OPS):
        raise ValueError(f"op must be one of {', '.join(map(repr, OPS))}; got {params.quote(op)}")
    if op in BITWISE_OPS and np.dtype(dtype).name not in INT_DTYPES:
        raise ValueError(f"op {op!r} needs an integer dtype ({', '.join(INT_DTYPES)}); got {np.dtype(dtype)}")
    return op


def ctype(dtype: Any) -> str:
    """The C++ type of ``dtype`` (one of :data:`CTYPES`), e.g. ``"unsigned int"``."""
    name = np.dtype(dtype).name
    if name not in CTYPES:
        raise ValueError(f"dtype must be one of {', '.join(CTYPES)}; got {dtype!r}")
    return CTYPES[name]


def cpp_op(op: str, dtype: Any) -> str:
    """The C++ functor for ``op`` on ``dtype``, e.g. ``warplab::ops::Max<float>``."""
    return f"warplab::ops::{CPP_OPS[op]}<{ctype(dtype)}>"


def ops_for(dtype: str) -> tuple[str, ...]:
    """The operators instantiated for ``dtype`` (the bitwise ones for integers only)."""
    return OPS if dtype in INT_DTYPES else tuple(o for o in OPS if o not in BITWISE_OPS)


def op_exprs(template: str, dtypes: tuple[str, ...] = tuple(CTYPES)) -> tuple[str, ...]:
    """``template`` (with ``{t}`` the C type and ``{op}`` the functor) for every dtype and operator."""
    return tuple(template.format(t=CTYPES[d], op=cpp_op(o, d)) for d in dtypes for o in ops_for(d))


def identity(op: str, dtype: Any) -> np.generic:
    """The value that ``op`` leaves unchanged (what padded lanes hold): as ``Op::identity()`` in C++."""
    dt = np.dtype(dtype)
    if op in ("sum", "bit_or", "bit_xor"):
        return dt.type(0)
    if op == "bit_and":
        return np.array(-1).astype(dt)[()]              # all bits set
    if dt.kind == "f":
        return dt.type(-np.inf if op == "max" else np.inf)
    info = np.iinfo(dt)
    return dt.type(info.min if op == "max" else info.max)


def combine(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``op(a, b)`` elementwise in ``a``'s dtype, as the C++ functors compute it (integer sums wrap)."""
    a, b = np.asarray(a), np.asarray(b, dtype=np.asarray(a).dtype)
    if op == "sum":
        with np.errstate(over="ignore", invalid="ignore"):   # wraps; inf + -inf is NaN, as on the GPU
            return (a + b).astype(a.dtype, copy=False)
    if op == "max":
        return np.where(a < b, b, a)
    if op == "min":
        return np.where(b < a, b, a)
    return {"bit_and": np.bitwise_and, "bit_or": np.bitwise_or, "bit_xor": np.bitwise_xor}[op](a, b)


def reference(values: Any, op: str = "sum", axis: int = -1) -> np.ndarray:
    """NumPy's answer for ``op`` over ``axis``, in the values' dtype.

    Integer sums are exact modulo 2**32 (as the hardware wraps); float sums are accumulated in float64
    and rounded once, so a float32 tree may differ from it in the last bits.
    """
    v = np.asarray(values)
    check_op(op, v.dtype)
    if op == "sum":
        if v.dtype.kind == "f":
            with np.errstate(over="ignore", invalid="ignore"):   # inf + -inf is NaN, as it is for the tree
                return v.astype(np.float64).sum(axis=axis).astype(v.dtype)
        wide = v.astype(np.int64).sum(axis=axis)
        return (wide & 0xFFFFFFFF).astype(np.uint32).view(np.int32 if v.dtype == np.int32 else np.uint32)
    fn = {"max": np.max, "min": np.min, "bit_and": np.bitwise_and.reduce, "bit_or": np.bitwise_or.reduce,
          "bit_xor": np.bitwise_xor.reduce}[op]
    return np.asarray(fn(v, axis=axis)).astype(v.dtype)


def ulps_apart(a: Any, b: Any) -> np.ndarray:
    """How many float32 steps lie between ``a`` and ``b`` (elementwise; 0: the same float32)."""
    def ordered(x: Any) -> np.ndarray:
        i = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(-(2**31)) - i, i)      # monotone in the float's value
    return np.abs(ordered(a) - ordered(b))
