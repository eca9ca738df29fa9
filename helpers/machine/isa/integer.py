"""Integer arithmetic: add, sub, mul, mad, sad, div, rem, abs, neg, min, max (PTX ISA, Integer Arithmetic
Instructions and Extended-Precision Integer Arithmetic). add, sub, mul, mad and div of a float type
are the float family's (:mod:`helpers.machine.isa.floats`), one opcode serving both.
"""
from __future__ import annotations

import numpy as np

from helpers.machine import values as V
from helpers.machine.isa.affine import affine_divide, affine_product, affine_sum, affine_wide
from helpers.machine.isa.floats import float_binary, float_div, fma
from helpers.machine.isa.operands import NP, UINT, Unsupported, instr_type, maker_table, same_operands, simple
from helpers.machine.ptx import Instr
from helpers.machine.registers import Affine

MAKERS, maker = maker_table()


def _int_kind(t: str) -> str:
    return "s" if t.startswith("s") else "u"


@maker("add", "sub")
def _add(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    sub = ins.opcode == "sub"
    if t in ("f32", "f64", "f16"):
        return float_binary(ins, t, mods, "sub" if sub else "add")
    if "cc" in mods:
        raise Unsupported("carry-out (.cc) arithmetic is not implemented")
    if "sat" in mods:
        if t != "s32":
            raise Unsupported(".sat is only defined for .s32")

        def f(a, b):
            r = a.astype(np.int64) - b.astype(np.int64) if sub else a.astype(np.int64) + b.astype(np.int64)
            return np.clip(r, -2**31, 2**31 - 1).astype(np.int32)
        return simple(ins, t, [t, t], f)
    if sub:
        return simple(ins, t, [t, t], lambda a, b: np.subtract(a, b, dtype=NP[t]), constant=same_operands(ins),
                     affine=lambda a, b: affine_sum(a, b, -1))
    return simple(ins, t, [t, t], lambda a, b: np.add(a, b, dtype=NP[t]), affine=affine_sum)


def _wide(t: str) -> str:
    return {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}[t]


def _mul_hi(a, b, t: str):
    dt = np.dtype(NP[t])
    if dt.itemsize < 8:
        wide = np.int64 if dt.kind == "i" else np.uint64
        return ((a.astype(wide) * b.astype(wide)) >> (8 * dt.itemsize)).astype(dt)
    # 64 x 64 -> high 64 bits, through 32-bit halves
    au, bu = np.asarray(a).view(np.uint64) if np.ndim(a) else np.uint64(np.int64(a).view(np.uint64) if dt.kind == "i" else a), \
        np.asarray(b).view(np.uint64) if np.ndim(b) else np.uint64(np.int64(b).view(np.uint64) if dt.kind == "i" else b)
    m = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = au & m, au >> np.uint64(32), bu & m, bu >> np.uint64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> np.uint64(32)) + (p01 & m) + (p10 & m)
    hi = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (mid >> np.uint64(32))
    if dt.kind == "i":  # signed correction: hi(a*b) = hi_u - (a<0)*b - (b<0)*a
        hi = hi - np.where(np.asarray(a) < 0, bu, np.uint64(0)) - np.where(np.asarray(b) < 0, au, np.uint64(0))
        return hi.view(np.int64)
    return hi


@maker("mul")
def _mul(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64", "f16"):
        return float_binary(ins, t, mods, "mul")
    if "wide" in mods:
        wt = _wide(t)
        return simple(ins, wt, [t, t], lambda a, b: np.multiply(np.asarray(a).astype(NP[wt]), np.asarray(b).astype(NP[wt]), dtype=NP[wt]),
                      affine=lambda a, b: affine_wide(a, b, t.startswith("s")))
    if "hi" in mods:
        return simple(ins, t, [t, t], lambda a, b: _mul_hi(a, b, t))
    return simple(ins, t, [t, t], lambda a, b: np.multiply(a, b, dtype=NP[t]), affine=affine_product)


@maker("mad")
def _mad(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64"):
        return fma(ins, fn)
    if "cc" in mods:
        raise Unsupported("carry-out (.cc) arithmetic is not implemented")
    if "wide" in mods:
        wt = _wide(t)
        return simple(ins, wt, [t, t, wt], lambda a, b, c: np.add(np.multiply(np.asarray(a).astype(NP[wt]), np.asarray(b).astype(NP[wt]), dtype=NP[wt]), c, dtype=NP[wt]))
    if "hi" in mods:
        if "sat" in mods:
            raise Unsupported("mad.hi.sat is not implemented")
        return simple(ins, t, [t, t, t], lambda a, b, c: np.add(_mul_hi(a, b, t), c, dtype=NP[t]))
    def affine(a, b, c):
        p = affine_product(a, b)
        if p is None and np.ndim(a) == 0 and np.ndim(b) == 0 and type(a) is not Affine and type(b) is not Affine:
            p = int(np.multiply(a, b, dtype=NP[t]))    # one value times one value: c is the rule
        return None if p is None else affine_sum(p, c)
    return simple(ins, t, [t, t, t], lambda a, b, c: np.add(np.multiply(a, b, dtype=NP[t]), c, dtype=NP[t]),
                  affine=affine)


@maker("sad")
def _sad(ins: Instr, fn):
    """sad (PTX ISA, Integer Arithmetic Instructions: sad): d = c + ((a < b) ? b - a : a - b), the
    comparison in the instruction's type, the difference and the sum wrapping in it."""
    t = instr_type(ins)

    def f(a, b, c):
        a, b = np.broadcast_arrays(np.asarray(a, NP[t]), np.asarray(b, NP[t]))
        diff = np.where(a < b, np.subtract(b, a, dtype=NP[t]), np.subtract(a, b, dtype=NP[t]))
        return np.add(diff, c, dtype=NP[t])
    return simple(ins, t, [t, t, t], f)


@maker("div", "rem")
def _div(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64"):
        if ins.opcode == "rem":
            raise Unsupported("rem is integer-only")
        return float_div(ins, t, mods)
    signed = _int_kind(t) == "s"
    f = V.int_div if ins.opcode == "div" else V.int_rem

    def compute(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, NP[t]), np.asarray(b, NP[t]))
        q, zero = f(a, b, signed)
        return q, ~zero  # PTX: division by zero gives an unspecified value: undefined
    return simple(ins, t, [t, t], compute, defined=True,
                  affine=lambda a, b: affine_divide(a, b, t, ins.opcode == "rem"))


@maker("abs", "neg")
def _absneg(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64", "f16"):
        dt = np.dtype(NP[t])
        ub = UINT[dt.itemsize]
        sign = ub(1 << (8 * dt.itemsize - 1))

        def f(a):
            a = np.asarray(a, dt)
            if "ftz" in mods:
                a = V.ftz(a)
            bits = a.view(ub)
            r = (bits & ~sign) if ins.opcode == "abs" else (bits ^ sign)
            return r.view(dt)
        return simple(ins, t, [t], f)
    if ins.opcode == "abs":
        return simple(ins, t, [t], lambda a: np.where(a < 0, np.negative(a, dtype=NP[t]), a).astype(NP[t]))
    return simple(ins, t, [t], lambda a: np.negative(a, dtype=NP[t]))


def _fminmax(op: str, dt, nan_mode: bool):
    """min/max.f32/.f64 (PTX ISA min, max (floating point)): a NaN input is ignored unless .NaN; -0.0 < +0.0;
    two NaNs give the canonical NaN."""
    canon = np.uint32(0x7FFFFFFF).view(np.float32) if dt == np.float32 else np.uint64(0x7FFFFFFFFFFFFFFF).view(np.float64)

    def f(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dt), np.asarray(b, dt))
        r = np.fmin(a, b) if op == "min" else np.fmax(a, b)
        zero = (a == 0) & (b == 0)
        if zero.any():
            if op == "min":
                z = np.where(np.signbit(a) | np.signbit(b), -np.zeros((), dt), np.zeros((), dt))
            else:
                z = np.where(np.signbit(a) & np.signbit(b), -np.zeros((), dt), np.zeros((), dt))
            r = np.where(zero, z, r)
        nan = np.isnan(a) & np.isnan(b)
        if nan_mode:
            nan = np.isnan(a) | np.isnan(b)
        return np.where(nan, canon, r).astype(dt)
    return f


@maker("min", "max")
def _minmax(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64"):
        dt = np.dtype(NP[t])
        f = _fminmax(ins.opcode, dt, "NaN" in mods)
        if "ftz" in mods:
            return simple(ins, t, [t, t], lambda a, b: V.ftz(f(V.ftz(np.asarray(a, dt)), V.ftz(np.asarray(b, dt)))))
        return simple(ins, t, [t, t], f)
    if "relu" in mods:
        raise Unsupported(".relu is not implemented")
    g = np.minimum if ins.opcode == "min" else np.maximum
    return simple(ins, t, [t, t], lambda a, b: g(a, b).astype(NP[t]))
