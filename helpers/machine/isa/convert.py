"""Data movement within registers and conversion: mov, cvt, cvta (PTX ISA, Data Movement and Conversion
Instructions: mov, cvt, cvta), with cvt's rounding (float and integer) and saturation.
"""
from __future__ import annotations

import numpy as np

from helpers.machine import values as V
from helpers.machine.isa.operands import (ALU, NP, Op, ROUND_F, ROUND_I, SINT, TYPES, UINT, Unsupported, both,
                                          instr_type, late, maker_table, reader, simple, writer)
from helpers.machine.ptx import Instr, Vec, type_size
from helpers.machine.registers import Affine

MAKERS, maker = maker_table()


@maker("mov")
def _mov(ins: Instr, fn):
    t = instr_type(ins)
    d, a = ins.operands

    def build(ctx):
        if isinstance(a, Vec):  # pack: {lo, ..., hi} -> one register
            n = len(a.items)
            es = type_size(t) // n
            et = f"b{8 * es}"
            rs = [reader(ctx, x, et) for x in a.items]
            w = writer(ctx, d, f"b{8 * type_size(t)}")
            wide = UINT[type_size(t)]

            def run(G):
                out = np.zeros(G.n, wide)
                dd = True
                for i, r in enumerate(rs):
                    v, dv = r(G)
                    out |= np.asarray(v).astype(wide) << wide(8 * es * i)
                    dd = both(dd, dv)
                w(G, out, dd)
            return Op(ALU, ins, run)
        if isinstance(d, Vec):  # unpack
            n = len(d.items)
            es = type_size(t) // n
            r = reader(ctx, a, f"b{8 * type_size(t)}")
            ws = [writer(ctx, x, f"b{8 * es}") for x in d.items]
            narrow = UINT[es]
            wide = UINT[type_size(t)]

            def run(G):
                v, dv = r(G)
                v = np.asarray(v, wide)
                for i, w in enumerate(ws):
                    w(G, (v >> wide(8 * es * i)).astype(narrow), dv)
            return Op(ALU, ins, run)
        r = reader(ctx, a, t, affine=True)     # a rule is copied as it is
        w = writer(ctx, d, t)

        def run(G):
            v, dv = r(G)
            w(G, v, dv)
        return Op(ALU, ins, run)
    return late(ins, build)


def _int_convert(a, st: str, dt_: str, saturate: bool):
    s, d = np.dtype(NP[st]), np.dtype(NP[dt_])
    a = np.asarray(a, s)
    if saturate:
        lo = max(np.iinfo(d).min, np.iinfo(s).min)
        hi = min(np.iinfo(d).max, np.iinfo(s).max)
        wide = a.astype(np.int64) if s.kind == "i" or s.itemsize < 8 else a
        if s.kind == "u" and s.itemsize == 8:
            return np.minimum(a, np.uint64(hi) if hi >= 0 else np.uint64(0)).astype(d)
        return np.clip(wide, lo, hi).astype(d)
    if d.itemsize <= s.itemsize:
        return a.view(UINT[s.itemsize]).astype(UINT[d.itemsize]).view(d) if a.ndim else \
            np.asarray(a).view(UINT[s.itemsize]).astype(UINT[d.itemsize]).view(d)
    return a.astype(d) if s.kind == d.kind or s.kind == "u" else a.astype(SINT[d.itemsize]).view(UINT[d.itemsize]).view(d) \
        if d.kind == "u" else a.astype(d)


@maker("cvt")
def _cvt(ins: Instr, fn):
    mods = list(ins.mods)
    if len(mods) < 2:
        raise Unsupported("cvt needs a destination and a source type")
    dt_, st = mods[-2], mods[-1]
    if dt_ not in TYPES or st not in TYPES:
        raise Unsupported(f"cvt.{dt_}.{st}")
    flags = set(mods[:-2])
    use_ftz, use_sat = "ftz" in flags, "sat" in flags
    if flags & {"relu", "satfinite", "rna", "rs"}:
        raise Unsupported(f"cvt modifiers {sorted(flags)} are not implemented")
    fd, fs = NP[dt_], NP[st]
    d_float, s_float = np.dtype(fd).kind == "f", np.dtype(fs).kind == "f"
    irnd = next((m for m in flags if m in ROUND_I), None)
    frnd = next((m for m in flags if m in ROUND_F), None)

    if not d_float and not s_float:
        def affine(a):
            # PTX ISA cvt: narrowing keeps the low bits; widening sign-extends a signed source
            # and zero-extends an unsigned one (exact while the rule's values lie in its range)
            bits = 8 * type_size(dt_)
            if bits <= a.bits:
                return None if use_sat else a.width(bits)
            wide = a.signed() if st.startswith("s") else a.unsigned()
            return None if wide is None or use_sat else wide.width(bits)
        return simple(ins, dt_, [st], lambda a: _int_convert(a, st, dt_, use_sat), affine=affine)
    if d_float and not s_float:  # integer -> float, rounded
        mode = frnd or "rn"
        big = np.dtype(fs).itemsize == 8 or (np.dtype(fs).itemsize == 4 and fd == np.float16)

        def f(a):
            a = np.asarray(a, fs)
            if mode == "rn" and not big:
                r = a.astype(fd)
            else:
                r = np.array([V.round_fraction(V.Fraction(int(x)), np.dtype(fd), mode) for x in np.atleast_1d(a)],
                             np.float64).astype(fd).reshape(a.shape)
            return V.sat(r) if use_sat else r
        return simple(ins, dt_, [st], f)
    if not d_float and s_float:  # float -> integer: integer rounding, saturation, NaN -> 0
        if irnd is None:
            raise Unsupported("float-to-integer cvt needs .rni/.rzi/.rmi/.rpi")

        def f(a):
            a = np.asarray(a, fs)
            if use_ftz:
                a = V.ftz(a)
            return V.float_to_int(np.atleast_1d(a), np.dtype(fd), irnd).reshape(np.shape(a))
        return simple(ins, dt_, [st], f)
    # float -> float
    def f(a):
        a = np.asarray(a, fs)
        if use_ftz and fs == np.float32:
            a = V.ftz(a)
        if irnd is not None:  # round to an integral value in the same format
            r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[irnd](a).astype(fd)
        elif np.dtype(fd).itemsize >= np.dtype(fs).itemsize:
            r = a.astype(fd)
        else:
            mode = frnd or "rn"
            if mode == "rn":
                with np.errstate(over="ignore"):
                    r = a.astype(fd)
            else:
                r = np.array([V.round_fraction(V.Fraction(float(x)), np.dtype(fd), mode) if np.isfinite(x) else x
                              for x in np.atleast_1d(a)], np.float64).astype(fd).reshape(np.shape(a))
        if use_ftz and fd == np.float32:
            r = V.ftz(r)
        if use_sat:
            r = V.sat(r)
        return r
    return simple(ins, dt_, [st], f)


@maker("cvta")
def _cvta(ins: Instr, fn):
    mods = list(ins.mods)
    to = mods[0] == "to"
    space = mods[1] if to else mods[0]
    t = mods[-1]
    if space not in ("global", "shared", "local", "const", "param"):
        raise Unsupported(f"cvta for .{space}")

    def build(ctx):
        window = ctx.window(space)
        w = writer(ctx, ins.operands[0], t)
        r = reader(ctx, ins.operands[1], t, affine=True)
        off = NP[t](window)

        def run(G):
            v, dv = r(G)
            if type(v) is Affine:
                w(G, v.plus(-window if to else window), dv)
                return
            out = np.subtract(v, off, dtype=NP[t]) if to else np.add(v, off, dtype=NP[t])
            w(G, out, dv)
        return Op(ALU, ins, run)
    return late(ins, build)
