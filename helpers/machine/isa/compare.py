"""Comparison and selection: setp (with its boolean combination), selp, slct (PTX ISA, Comparison and
Selection Instructions). An integer comparison of affine rules with one outcome in every thread stays
one value (:func:`helpers.machine.isa.affine.affine_compare`).
"""
from __future__ import annotations

import numpy as np

from helpers.machine import values as V
from helpers.machine.isa.affine import UNSIGNED_ORDER, affine_compare
from helpers.machine.isa.bits import and_defined, or_defined
from helpers.machine.isa.operands import (ALU, NP, Op, UINT, Unsupported, both, defined_per_thread, instr_type,
                                          late, maker_table, per_thread, reader, simple, writer)
from helpers.machine.ptx import Instr, Pair
from helpers.machine.registers import Affine

MAKERS, maker = maker_table()


def _compare(cmp: str, t: str, ftz_: bool):
    dt = np.dtype(NP[t])
    if dt.kind == "f":
        base = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                "ge": np.greater_equal}

        def f(a, b):
            a, b = np.asarray(a, dt), np.asarray(b, dt)
            if ftz_:
                a, b = V.ftz(a), V.ftz(b)
            nan = np.isnan(a) | np.isnan(b)
            if cmp in base:
                r = base[cmp](a, b) & ~nan  # ordered: false when either is NaN (ne too)
            elif cmp.endswith("u") and cmp[:-1] in base:
                r = base[cmp[:-1]](a, b) | nan
            elif cmp == "num":
                r = ~nan
            elif cmp == "nan":
                r = nan
            else:
                raise Unsupported(f"comparison .{cmp} for .{t}")
            return r
        return f
    ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
    if cmp not in ops:
        raise Unsupported(f"comparison .{cmp} for .{t}")
    cdt = dt
    if cmp in ("lo", "ls", "hi", "hs") or (t.startswith("b") and cmp not in ("eq", "ne")):
        cdt = np.dtype(UINT[dt.itemsize])
    g = ops[cmp]
    return lambda a, b: g(np.asarray(a, dt).view(cdt) if cdt != dt else np.asarray(a, dt),
                          np.asarray(b, dt).view(cdt) if cdt != dt else np.asarray(b, dt))


@maker("setp")
def _setp(ins: Instr, fn):
    t = instr_type(ins)
    mods = list(ins.mods[:-1])
    cmp = mods[0]
    boolop = next((m for m in mods[1:] if m in ("and", "or", "xor")), None)
    f = _compare(cmp, t, "ftz" in mods)
    comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
    dt = np.dtype(NP[t])
    # integer comparisons read the operands as unsigned for lo/ls/hi/hs and the orders of .b types
    signed = dt.kind == "i" and cmp not in UNSIGNED_ORDER
    by_rule = dt.kind in "iu" and boolop is None and cmp in ("eq", "ne", "lt", "le", "gt", "ge", *UNSIGNED_ORDER)

    def build(ctx):
        dst = ins.operands[0]
        p_op, q_op = (dst.first, dst.second) if isinstance(dst, Pair) else (dst, None)
        wp = writer(ctx, p_op, "pred")
        wq = writer(ctx, q_op, "pred") if q_op is not None else None
        ra, rb = reader(ctx, ins.operands[1], t, by_rule), reader(ctx, ins.operands[2], t, by_rule)
        pa, pb = (reader(ctx, ins.operands[1], t), reader(ctx, ins.operands[2], t)) if by_rule else (ra, rb)
        rc = reader(ctx, ins.operands[3], "pred") if boolop else None
        as_read = dt if signed else np.dtype(UINT[dt.itemsize])

        def run(G):
            a, da = ra(G)
            b, db = rb(G)
            if type(a) is Affine or type(b) is Affine:
                # one value of either side as the comparison reads it (a rule is read so by
                # affine_compare)
                r = affine_compare(cmp, signed, *(v if type(v) is Affine else
                                                  np.asarray(v, dt).view(as_read)[()] for v in (a, b)))
                if r is not None:
                    wp(G, r, both(da, db))
                    if wq is not None:
                        wq(G, ~r, both(da, db))
                    return
                (a, da), (b, db) = pa(G), pb(G)
            r = f(a, b)
            d = both(da, db)
            dq = d
            if rc is not None:
                c, dc = rc(G)
                c = per_thread(c, G.n)
                p, q = comb[boolop](r, c), comb[boolop](~r, c)
                if boolop == "and":
                    d, dq = and_defined(r, d, c, dc), and_defined(~r, d, c, dc)
                elif boolop == "or":
                    d, dq = or_defined(r, d, c, dc), or_defined(~r, d, c, dc)
                else:
                    d = dq = both(d, dc)
            else:
                p, q = r, ~r
            wp(G, p, d)
            if wq is not None:
                wq(G, q, dq)
        return Op(ALU, ins, run)
    return late(ins, build)


@maker("selp")
def _selp(ins: Instr, fn):
    t = instr_type(ins)

    def build(ctx):
        w = writer(ctx, ins.operands[0], t)
        ra, rb = reader(ctx, ins.operands[1], t), reader(ctx, ins.operands[2], t)
        rc = reader(ctx, ins.operands[3], "pred")

        def run(G):
            a, da = ra(G)
            b, db = rb(G)
            c, dc = rc(G)
            v = np.where(c, a, b).astype(NP[t], copy=False)
            if da is True and db is True:
                d = dc
            else:  # defined where the predicate is and the chosen operand is
                da_ = defined_per_thread(da, G.n)
                db_ = defined_per_thread(db, G.n)
                d = both(dc, np.where(c, da_, db_))
            w(G, v, d)
        return Op(ALU, ins, run)
    return late(ins, build)


@maker("slct")
def _slct(ins: Instr, fn):
    t = ins.mods[-2]
    ct = ins.mods[-1]
    f = (lambda a, b, c: np.where(np.asarray(c) >= 0, a, b).astype(NP[t]))
    return simple(ins, t, [t, t, ct], f)
