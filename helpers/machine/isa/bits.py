"""Logic and shift, and the bit-field instructions: and, or, xor, not, cnot, shl, shr, shf, popc, brev,
bfind, bfe, bfi, prmt, lop3 (PTX ISA, Logic and Shift Instructions; Integer Arithmetic Instructions for
popc, brev, bfind, bfe, bfi; Data Movement and Conversion for prmt). Predicate logic keeps a result
defined where a defined operand decides it alone (a false AND, a true OR).
"""
from __future__ import annotations

import numpy as np

from helpers.machine.isa.affine import affine_shl
from helpers.machine.isa.operands import (ALU, NP, Op, UINT, Unsupported, both, instr_type, late, maker_table,
                                          per_thread, reader, same_operands, simple, writer)
from helpers.machine.ptx import Imm, Instr, type_size

MAKERS, maker = maker_table()


def and_defined(a, da, b, db):
    """Definedness of a & b (predicates): a defined false operand decides the result alone."""
    if da is True and db is True:
        return True
    da_ = np.ones(np.shape(a), bool) if da is True else da
    db_ = np.ones(np.shape(b), bool) if db is True else db
    return (da_ & db_) | (da_ & ~a) | (db_ & ~b)


def or_defined(a, da, b, db):
    """Definedness of a | b (predicates): a defined true operand decides the result alone."""
    return and_defined(~np.asarray(a), da, ~np.asarray(b), db)


def _pred_logic(ins: Instr, op: str):
    def build(ctx):
        w = writer(ctx, ins.operands[0], "pred")
        ra, rb = reader(ctx, ins.operands[1], "pred"), reader(ctx, ins.operands[2], "pred")

        def run(G):
            a, da = ra(G)
            b, db = rb(G)
            a, b = per_thread(a, G.n), per_thread(b, G.n)
            if op == "and":
                w(G, a & b, and_defined(a, da, b, db))
            elif op == "or":
                w(G, a | b, or_defined(a, da, b, db))
            else:
                w(G, a ^ b, both(da, db))
        return Op(ALU, ins, run)
    return late(ins, build)


@maker("and", "or", "xor")
def _logic(ins: Instr, fn):
    t = instr_type(ins)
    g = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.opcode]
    if t == "pred":
        return _pred_logic(ins, ins.opcode)
    return simple(ins, t, [t, t], lambda a, b: g(a, b, dtype=NP[t]),
                  constant=ins.opcode == "xor" and same_operands(ins))


@maker("not")
def _not(ins: Instr, fn):
    t = instr_type(ins)
    if t == "pred":
        return simple(ins, t, [t], lambda a: np.logical_not(a))
    return simple(ins, t, [t], lambda a: np.invert(np.asarray(a, NP[t])))


@maker("cnot")
def _cnot(ins: Instr, fn):
    t = instr_type(ins)
    return simple(ins, t, [t], lambda a: (np.asarray(a) == 0).astype(NP[t]))


@maker("shl", "shr")
def _shift(ins: Instr, fn):
    t = instr_type(ins)
    dt = np.dtype(NP[t])
    bits = 8 * dt.itemsize

    def f(a, b):
        # the shift amount is an unsigned 32-bit value; amounts >= the width clamp (PTX ISA shl, shr)
        a = np.asarray(a, dt)
        amt = np.minimum(np.asarray(b, np.uint32).astype(np.uint64), np.uint64(bits))
        if ins.opcode == "shl":
            ua = a.view(UINT[dt.itemsize]) if a.ndim else np.asarray(a).view(UINT[dt.itemsize])
            r = np.where(amt >= bits, 0, ua.astype(np.uint64) << np.minimum(amt, np.uint64(bits - 1)))
            return np.asarray(r).astype(UINT[dt.itemsize]).view(dt)
        if dt.kind == "i":
            return (a.astype(np.int64) >> np.minimum(amt, np.uint64(bits - 1)).astype(np.int64)).astype(dt) if bits < 64 \
                else np.where(amt >= 64, np.where(a < 0, -1, 0), a >> np.minimum(amt, np.uint64(63)).astype(np.int64)).astype(dt)
        ua = a.astype(np.uint64)
        r = np.where(amt >= bits, np.uint64(0), ua >> np.minimum(amt, np.uint64(bits - 1)))
        return np.asarray(r).astype(dt)
    if ins.opcode == "shl":
        return simple(ins, t, [t, "u32"], f, affine=lambda a, b: affine_shl(a, b, bits))
    return simple(ins, t, [t, "u32"], f)


_POP8 = np.array([bin(i).count("1") for i in range(256)], np.uint8)


def _popcount(a: np.ndarray) -> np.ndarray:
    """Set bits per element of a uint64 array (np.bitwise_count needs NumPy >= 2)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(a)
    b = np.ascontiguousarray(a, np.uint64).view(np.uint8).reshape(*np.shape(a), 8)
    return _POP8[b].sum(axis=-1)


@maker("shf")
def _shf(ins: Instr, fn):
    """shf.{l,r}.{clamp,wrap}.b32 (PTX ISA shf): shift the 64-bit {b:a} by c; .l keeps the high
    word, .r the low word; .clamp uses min(c, 32), .wrap c mod 32."""
    direction = "l" if "l" in ins.mods else "r"
    wrap = "wrap" in ins.mods

    def f(a, b, c):
        a, b, c = (np.asarray(x, np.uint32).astype(np.uint64) for x in (a, b, c))
        n = (c & np.uint64(31)) if wrap else np.minimum(c, np.uint64(32))
        v = (b << np.uint64(32)) | a
        if direction == "l":
            return ((v << n) >> np.uint64(32)).astype(np.uint32)
        return ((v >> n) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return simple(ins, "b32", ["b32", "b32", "u32"], f)


@maker("popc", "clz")
def _popc(ins: Instr, fn):
    t = instr_type(ins)
    dt = np.dtype(NP[t])
    bits = 8 * dt.itemsize

    def f(a):
        a = np.asarray(a, dt).astype(np.uint64)
        if ins.opcode == "popc":
            return _popcount(a).astype(np.uint32)
        n = np.zeros(a.shape, np.uint32)
        x = a.copy()
        for s in (32, 16, 8, 4, 2, 1):
            if s >= bits:
                continue
            top = x >> np.uint64(bits - s)
            none = top == 0
            n += np.where(none, s, 0).astype(np.uint32)
            x = np.where(none, x << np.uint64(s), x) & np.uint64((1 << bits) - 1)
        return np.where(a == 0, bits, n).astype(np.uint32)
    return simple(ins, "u32", [t], f)


@maker("brev")
def _brev(ins: Instr, fn):
    t = instr_type(ins)
    bits = 8 * type_size(t)

    def f(a):
        a = np.asarray(a, NP[t]).astype(np.uint64)
        r = np.zeros(a.shape, np.uint64)
        for i in range(bits):
            r |= ((a >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
        return r.astype(NP[t])
    return simple(ins, t, [t], f)


@maker("bfind")
def _bfind(ins: Instr, fn):
    t = instr_type(ins)
    dt = np.dtype(NP[t])
    bits = 8 * dt.itemsize
    shiftamt = "shiftamt" in ins.mods

    def f(a):
        a = np.asarray(a, dt)
        x = a.astype(np.int64) if dt.kind == "i" and bits < 64 else a
        if dt.kind == "i":
            x = np.where(np.asarray(x) < 0, ~np.asarray(x), x)  # signed: first bit unlike the sign
        u = np.asarray(x).astype(np.uint64)
        pos = np.full(u.shape, -1, np.int64)
        for i in range(bits):
            pos = np.where(((u >> np.uint64(i)) & np.uint64(1)) == 1, i, pos)
        if shiftamt:
            pos = np.where(pos >= 0, bits - 1 - pos, -1)
        return pos.astype(np.uint32)  # -1 (no bit found) is 0xffffffff
    return simple(ins, "u32", [t], f)


@maker("bfe")
def _bfe(ins: Instr, fn):
    t = instr_type(ins)
    dt = np.dtype(NP[t])
    bits = 8 * dt.itemsize

    def f(a, b, c):
        a = np.asarray(a, dt)
        pos = np.asarray(b, np.uint32).astype(np.int64) & 0xFF
        ln = np.asarray(c, np.uint32).astype(np.int64) & 0xFF
        u = a.astype(np.uint64) if dt.kind == "u" else a.astype(np.int64).view(np.uint64) if bits == 64 else a.view(UINT[dt.itemsize]).astype(np.uint64)
        out = np.zeros(np.broadcast(u, pos, ln).shape, np.uint64)
        for i in range(bits):
            src = pos + i
            take = i < ln
            bit = np.where(src < bits, (u >> np.minimum(src, bits - 1).astype(np.uint64)) & np.uint64(1), 0)
            if dt.kind == "i":  # sign bit replicated: the field's top bit, or the source's top bit
                sbit_pos = np.minimum(pos + ln - 1, bits - 1)
                sbit = np.where(ln == 0, 0, (u >> sbit_pos.astype(np.uint64)) & np.uint64(1))
                bit = np.where(take, bit, sbit)
            else:
                bit = np.where(take, bit, 0)
            out |= np.asarray(bit, np.uint64) << np.uint64(i)
        return out.astype(UINT[dt.itemsize]).view(dt)
    return simple(ins, t, [t, "u32", "u32"], f)


@maker("bfi")
def _bfi(ins: Instr, fn):
    t = instr_type(ins)
    dt = np.dtype(NP[t])
    bits = 8 * dt.itemsize

    def f(a, b, c, d):
        ua = np.asarray(a, dt).astype(np.uint64)
        ub = np.asarray(b, dt).astype(np.uint64)
        pos = np.asarray(c, np.uint32).astype(np.int64) & 0xFF
        ln = np.asarray(d, np.uint32).astype(np.int64) & 0xFF
        out = ub.copy() if np.ndim(ub) else np.full(np.broadcast(ua, pos).shape, ub, np.uint64)
        for i in range(bits):
            dst = pos + i
            put = (i < ln) & (dst < bits)
            bit = (ua >> np.uint64(i)) & np.uint64(1)
            sh = np.minimum(dst, bits - 1).astype(np.uint64)
            out = np.where(put, (out & ~(np.uint64(1) << sh)) | (bit << sh), out)
        return out.astype(dt)
    return simple(ins, t, [t, t, "u32", "u32"], f)


@maker("prmt")
def _prmt(ins: Instr, fn):
    if len(ins.mods) != 1:
        raise Unsupported("prmt modes (.f4e, .b4e, ...) are not implemented")

    def f(a, b, c):
        a, b, c = np.broadcast_arrays(np.asarray(a, np.uint32), np.asarray(b, np.uint32), np.asarray(c, np.uint32))
        src = (a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32)))
        out = np.zeros(a.shape, np.uint32)
        for i in range(4):
            sel = (c >> np.uint32(4 * i)) & np.uint32(0xF)
            idx = (sel & np.uint32(7)).astype(np.uint64)
            byte = (src >> (idx * np.uint64(8))) & np.uint64(0xFF)
            sign = (byte >> np.uint64(7)) & np.uint64(1)
            byte = np.where((sel & 8) != 0, np.where(sign == 1, 0xFF, 0), byte)
            out |= (np.asarray(byte, np.uint64).astype(np.uint32) << np.uint32(8 * i))
        return out
    return simple(ins, "b32", ["b32", "b32", "b32"], f)


@maker("lop3")
def _lop3(ins: Instr, fn):
    if len(ins.operands) != 5 or not isinstance(ins.operands[4], Imm):
        raise Unsupported("lop3 needs an immediate lookup table")
    lut = int(ins.operands[4].value) & 0xFF

    def f(a, b, c):
        a, b, c = (np.asarray(x, np.uint32) for x in (a, b, c))
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for i in range(8):
            if lut >> i & 1:
                ta = a if i & 4 else ~a
                tb = b if i & 2 else ~b
                tc = c if i & 1 else ~c
                out |= ta & tb & tc
        return out
    ins2 = Instr(ins.index, ins.opcode, ins.mods, ins.operands[:4], ins.text, ins.guard, ins.guard_negated, ins.loc)
    return simple(ins2, "b32", ["b32", "b32", "b32"], f)
