"""Floating point: add, sub, mul, div, fma/mad, sqrt, rsqrt/rcp/ex2/lg2/sin/cos (approximate), copysign,
testp (PTX ISA, Floating-Point Instructions), with the rounding modes (.rn .rz .rm .rp) and .ftz.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from helpers.machine import values as V
from helpers.machine.isa.operands import NP, ROUND_F, Unsupported, instr_type, maker_table, simple
from helpers.machine.ptx import Instr

MAKERS, maker = maker_table()


def _rounding(mods: set[str]) -> Optional[str]:
    r = [m for m in mods if m in ROUND_F]
    return r[0] if r else None


def float_binary(ins: Instr, t: str, mods: set[str], op: str):
    if t == "f16":
        raise Unsupported("half-precision arithmetic is not implemented")
    dt = np.dtype(NP[t])
    mode = _rounding(mods) or "rn"
    use_ftz, use_sat = "ftz" in mods, "sat" in mods
    np_op = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]

    def f(a, b):
        a, b = np.asarray(a, dt), np.asarray(b, dt)
        if use_ftz:
            a, b = V.ftz(a), V.ftz(b)
        if mode == "rn":
            with np.errstate(all="ignore"):
                r = np_op(a, b, dtype=dt)
        else:
            r = V.exact_op(op, dt, mode, a, b)
        if use_sat:
            r = V.sat(r)
        if use_ftz:
            r = V.ftz(r)
        return r
    return simple(ins, t, [t, t], f)


@maker("fma")
def fma(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    if t not in ("f32", "f64"):
        raise Unsupported(f"fma.{t} is not implemented")
    mode = _rounding(mods)
    if mode is None:
        raise Unsupported("fma/mad on floats needs a rounding modifier (.rn, .rz, .rm, .rp)")
    dt = np.dtype(NP[t])
    use_ftz, use_sat = "ftz" in mods, "sat" in mods

    def f(a, b, c):
        a, b, c = np.broadcast_arrays(np.asarray(a, dt), np.asarray(b, dt), np.asarray(c, dt))
        if use_ftz:
            a, b, c = V.ftz(a), V.ftz(b), V.ftz(c)
        if t == "f32" and mode == "rn":
            r = V.fma_f32(a, b, c)
        else:
            r = V.exact_op("fma", dt, mode, a, b, c)
        if use_sat:
            r = V.sat(r)
        if use_ftz:
            r = V.ftz(r)
        return r
    return simple(ins, t, [t, t, t], f)


def float_div(ins: Instr, t: str, mods: set[str]):
    if "approx" in mods or "full" in mods:
        raise Unsupported("approximate division (div.approx / div.full) is not bit-exact: refused")
    mode = _rounding(mods) or "rn"
    dt = np.dtype(NP[t])
    use_ftz = "ftz" in mods

    def f(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dt), np.asarray(b, dt))
        if use_ftz:
            a, b = V.ftz(a), V.ftz(b)
        if mode == "rn":
            with np.errstate(all="ignore"):
                r = np.divide(a, b, dtype=dt)
        else:
            r = V.exact_op("div", dt, mode, a, b)
        return V.ftz(r) if use_ftz else r
    return simple(ins, t, [t, t], f)


@maker("sqrt", "rcp")
def _sqrt(ins: Instr, fn):
    t = instr_type(ins)
    mods = set(ins.mods[:-1])
    if "approx" in mods:
        raise Unsupported(f"{ins.opcode}.approx is approximate on hardware: refused")
    mode = _rounding(mods)
    if mode != "rn":
        raise Unsupported(f"{ins.opcode} with rounding .{mode} is not implemented")
    dt = np.dtype(NP[t])
    use_ftz = "ftz" in mods

    def f(a):
        a = np.asarray(a, dt)
        if use_ftz:
            a = V.ftz(a)
        with np.errstate(all="ignore"):
            r = np.sqrt(a) if ins.opcode == "sqrt" else np.divide(dt.type(1), a, dtype=dt)
        return V.ftz(r) if use_ftz else r
    return simple(ins, t, [t], f)


@maker("rsqrt", "sin", "cos", "lg2", "ex2", "tanh")
def _approx(ins: Instr, fn):
    raise Unsupported(f"{ins.opcode} is an approximate instruction on hardware: refused (never executed approximately)")


@maker("copysign")
def _copysign(ins: Instr, fn):
    t = instr_type(ins)
    return simple(ins, t, [t, t], lambda a, b: np.copysign(b, a).astype(NP[t]))


@maker("testp")
def _testp(ins: Instr, fn):
    t = instr_type(ins)
    kind = ins.mods[0]
    dt = np.dtype(NP[t])
    tiny = V.F32_TINY if dt == np.float32 else V.F64_TINY
    tests = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda a: ~np.isnan(a), "notanumber": np.isnan,
             "normal": lambda a: np.isfinite(a) & (np.abs(a) >= tiny),
             "subnormal": lambda a: (np.abs(a) < tiny) & (a != 0)}
    if kind not in tests:
        raise Unsupported(f"testp.{kind}")
    g = tests[kind]
    return simple(ins, "pred", [t], lambda a: g(np.asarray(a, dt)))
