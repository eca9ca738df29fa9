"""Bit-exact value semantics that NumPy does not give directly: fused multiply-add, directed
rounding, flush-to-zero, saturation, float-to-integer conversion, integer division.

PTX ISA references (by title: the Instruction Set chapter's numbers change between releases):
"Floating-Point Instructions" (add/sub/mul/fma/div/sqrt with .rn .rz .rm .rp, .ftz, .sat), "cvt" (rounding modifiers, saturation of float-to-integer conversions, NaN to 0),
"Integer Arithmetic Instructions" (div/rem truncate toward zero; division by zero gives an
unspecified value, which the machine marks undefined).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

F32_TINY = np.float32(np.finfo(np.float32).tiny)
F64_TINY = np.float64(np.finfo(np.float64).tiny)


def ftz(x: np.ndarray) -> np.ndarray:
    """Flush subnormal values to zero of the same sign (PTX ``.ftz``)."""
    tiny = F32_TINY if x.dtype == np.float32 else F64_TINY
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros((), x.dtype), x), x)


def sat(x: np.ndarray) -> np.ndarray:
    """Clamp to [0.0, 1.0]; NaN becomes +0.0 (PTX ``.sat`` on floating-point results)."""
    out = np.clip(x, 0, 1)
    out = np.where(np.isnan(x), np.zeros((), x.dtype), out)
    return np.where(out == 0, np.zeros((), x.dtype), out).astype(x.dtype)  # -0.0 -> +0.0


def _round_to_odd_sum(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """p + c in float64 with round-to-odd (exact when the sum is representable).

    TwoSum gives the exact error e of the round-to-nearest sum s; where e != 0 and s has an even
    significand, s moves one ulp towards the exact value, which gives the odd neighbour.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        s = p + c
        bb = s - p
        e = (p - (s - bb)) + (c - bb)
        inexact = (e != 0) & np.isfinite(s)
        even = (s.view(np.int64) & 1) == 0
        fix = inexact & even
        if fix.any():
            toward = np.where(e > 0, np.inf, -np.inf)
            s = np.where(fix, np.nextafter(s, toward), s)
    return s


def fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """fma.rn.f32: a*b+c rounded once to float32 (round to nearest even).

    The product of two float32 values is exact in float64 (24 + 24 <= 53 bits). Adding c in float64
    with round-to-odd and then rounding to float32 is a single correct rounding, because float64
    carries more than 2 * 24 + 2 significand bits (Boldo & Melquiond, "Emulation of FMA and
    correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008).
    """
    a64, b64, c64 = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        p = a64 * b64
        s = _round_to_odd_sum(p, c64)
        out = s.astype(np.float32)
    # inf/nan cases: float64 arithmetic already gives IEEE results (inf - inf = nan, ...)
    return out


def round_fraction(q: Fraction, dtype: np.dtype, mode: str) -> float:
    """Round an exact rational to ``dtype`` with PTX rounding ``mode`` (rn rz rm rp)."""
    info = np.finfo(dtype)
    mant = info.nmant + 1
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, info.minexp)  # subnormals: fixed exponent
    scale = Fraction(2) ** (e - mant + 1)
    m = a / scale
    lo = m.numerator // m.denominator
    rem = m - lo
    if mode == "rn":
        up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1)
    elif mode == "rz":
        up = False
    elif mode == "rp":
        up = rem > 0 and sign > 0
    elif mode == "rm":
        up = rem > 0 and sign < 0
    else:
        raise ValueError(f"mode must be one of rn, rz, rm, rp; got {mode!r}")
    v = (lo + (1 if up else 0)) * scale
    if v > Fraction(float(info.max)):
        overflow_to_inf = mode == "rn" or (mode == "rp" and sign > 0) or (mode == "rm" and sign < 0)
        return sign * (float("inf") if overflow_to_inf else float(info.max))
    return sign * float(v)


def exact_op(op: str, dtype: np.dtype, mode: str, *args: np.ndarray) -> np.ndarray:
    """add/sub/mul/fma/div/sqrt of float ``dtype`` with rounding ``mode``, exactly, element by element.

    Used only where NumPy's round-to-nearest arithmetic is not the instruction's semantics (directed
    rounding, fma.f64): slow, and rare in real kernels.
    """
    arrs = np.broadcast_arrays(*(np.asarray(a, dtype) for a in args))
    out = np.empty(arrs[0].shape, dtype)
    flat = [a.ravel() for a in arrs]
    res = out.ravel()
    for i in range(res.size):
        vals = [float(f[i]) for f in flat]
        if not all(np.isfinite(v) for v in vals):
            with np.errstate(all="ignore"):
                x = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                     "fma": lambda a, b, c: a * b + c, "div": lambda a, b: a / b,
                     "sqrt": lambda a: np.sqrt(a)}[op](*[dtype.type(v) for v in vals])
            res[i] = x
            continue
        fr = [Fraction(v) for v in vals]
        if op == "add":
            q = fr[0] + fr[1]
        elif op == "sub":
            q = fr[0] - fr[1]
        elif op == "mul":
            q = fr[0] * fr[1]
        elif op == "fma":
            q = fr[0] * fr[1] + fr[2]
        elif op == "div":
            if fr[1] == 0:
                with np.errstate(all="ignore"):
                    res[i] = dtype.type(vals[0]) / dtype.type(vals[1])
                continue
            q = fr[0] / fr[1]
        else:
            raise ValueError(f"op must be add, sub, mul, fma or div here; got {op!r}")
        if q == 0:
            # IEEE 754 6.3: an exact zero sum has sign + except in round toward -inf (x + -x = -0)
            if op in ("add", "sub", "fma"):
                terms = [vals[0] * vals[1], vals[2]] if op == "fma" else [vals[0], vals[1] if op == "add" else -vals[1]]
                neg = all(np.signbit(t) for t in terms) or (mode == "rm")
                res[i] = -0.0 if neg else 0.0
            else:
                res[i] = -0.0 if (np.signbit(vals[0]) != np.signbit(vals[1])) else 0.0
            continue
        res[i] = round_fraction(q, dtype, mode)
    return out


def fma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """fma.rn.f64, exact (rational arithmetic per element)."""
    return exact_op("fma", np.dtype(np.float64), "rn", a, b, c)


def float_to_int(x: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """cvt.{rni,rzi,rmi,rpi}.int.float: round to an integer, saturate to ``dtype``'s range, NaN -> 0."""
    with np.errstate(invalid="ignore"):
        r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[mode](x.astype(np.float64))
    info = np.iinfo(dtype)
    r = np.where(np.isnan(r), 0, r)
    lo, hi = float(info.min), float(info.max)
    out = np.empty(r.shape, dtype)
    big = r >= hi
    small = r <= lo
    mid = ~(big | small)
    out[big] = info.max
    out[small] = info.min
    out[mid] = r[mid].astype(dtype)
    return out


def int_div(a: np.ndarray, b: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Quotient truncated toward zero (C semantics) and a mask of lanes dividing by zero.
    MIN / -1 gives MIN (the two's-complement wrap)."""
    zero = b == 0
    bb = np.where(zero, np.ones((), b.dtype), b)
    if signed:
        # floor division, moved one step toward zero where it rounded a negative quotient down;
        # no absolute values, which overflow at the most negative integer
        with np.errstate(over="ignore"):
            q = np.floor_divide(a, bb)
            q += ((np.fmod(a, bb) != 0) & ((a < 0) != (bb < 0))).astype(q.dtype)
        q = q.astype(a.dtype, copy=False)
    else:
        q = (a // bb).astype(a.dtype)
    return q, zero


def int_rem(a: np.ndarray, b: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Remainder with the sign of the dividend (C semantics) and a mask of lanes dividing by zero."""
    # NumPy's fmod is C's % for signed integers (MIN % -1 is 0, not a trap), remainder is it for
    # unsigned ones: one pass, and no quotient through absolute values, which overflow at MIN
    zero = b == 0
    bb = np.where(zero, np.ones((), b.dtype), b)
    return (np.fmod(a, bb) if signed else np.remainder(a, bb)).astype(a.dtype, copy=False), zero
