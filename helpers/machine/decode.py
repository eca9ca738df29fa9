"""From a parsed PTX instruction to an operation over NumPy arrays of all threads at one PC.

Each instruction is decoded once per function into a *maker*; binding a maker to a launch
(:class:`helpers.machine.executor.Launch`) gives an :class:`Op` whose ``run(G)`` executes the
instruction for the threads of group ``G`` together. Registers are per-thread arrays over every
thread of the launch, each with a parallel *defined* array (or, while every thread holds a defined
value, one value or an affine rule of the thread's place: :mod:`helpers.machine.registers`); a
result is defined only where every operand it depends on is defined (and the thread's control flow is).

Semantics are those of the PTX ISA's Instruction Set chapter, cited by section title or instruction
(its section numbers change between releases): Integer Arithmetic, Extended-Precision Integer
Arithmetic, Floating-Point, Comparison and Selection (setp, selp), Logic and Shift, Data Movement and
Conversion (mov, ld, st, cvt, cvta, shfl.sync), Parallel Synchronization and Communication (bar,
bar.warp.sync, membar/fence, atom, red, vote, match, redux, activemask), Control Flow (bra, ret,
exit). Section 6.4 "Operand Size Exceeding
Instruction-Type Size" gives how registers wider than the instruction type are read (low bits) and
written (sign- or zero-extended).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from helpers.machine import values as V
from helpers.machine.ptx import Addr, Imm, Instr, Pair, Reg, Sym, Vec, type_size
from helpers.machine.registers import Affine
from helpers.machine.report import UnsupportedInstruction

NP = {"b8": np.uint8, "u8": np.uint8, "s8": np.int8, "b16": np.uint16, "u16": np.uint16, "s16": np.int16,
      "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "b64": np.uint64, "u64": np.uint64,
      "s64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64, "pred": np.bool_}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
TYPES = set(NP)
ROUND_F = ("rn", "rz", "rm", "rp")
ROUND_I = ("rni", "rzi", "rmi", "rpi")
# special registers that hold one value for every thread of a launch (read as that one value)
UNIFORM_SPECIALS = ("%ntid", "%nctaid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%dynamic_smem_size",
                    "%total_smem_size")

# op kinds, as the scheduler sees them
ALU, BRA, EXIT, BAR, WS, ATOM, FENCE, TRAP = "alu", "bra", "exit", "bar", "ws", "atom", "fence", "trap"


def storage_dtype(t: str) -> Any:
    """NumPy dtype of a register declared ``.t``: raw bits of its width (bool for predicates)."""
    return np.bool_ if t == "pred" else UINT[type_size(t)]


@dataclass
class Op:
    """A bound instruction. ``run(G)`` for alu/atom/fence; the scheduler handles bra/exit/bar/ws."""
    kind: str
    instr: Instr
    run: Optional[Callable] = None
    target: int = -1                  # bra
    ws_key: str = ""                  # ws: matching key (operation and qualifiers)
    ws_mask: Optional[Callable] = None
    ws_read: Optional[Callable] = None
    ws_compute: Optional[Callable] = None
    ws_write: Optional[Callable] = None
    bar_id: Optional[Callable] = None
    bar_count: Optional[Callable] = None
    bar_aligned: bool = True
    bar_red: Optional[tuple] = None   # (kind, reader of c, writer of d) for bar.red


class Unsupported(Exception):
    def __init__(self, why: str = "") -> None:
        super().__init__(why)
        self.why = why


def _unsupported_maker(ins: Instr, why: str):
    def make(ctx):
        def run(G):
            raise UnsupportedInstruction(ins.text, ins.loc, why)
        return Op(ALU, ins, run)
    return make


def both(*ds):
    """AND of definedness values; ``True`` stands for 'all defined'."""
    out = True
    for d in ds:
        if d is True:
            continue
        out = d if out is True else (out & d)
    return out


def _type(ins: Instr, pos: int = -1) -> str:
    t = ins.mods[pos] if ins.mods else ""
    if t not in TYPES:
        raise Unsupported(f"unknown type .{t}")
    return t


# -- operand readers and writers -----------------------------------------------------------------

def imm_value(v, t: str):
    """An immediate as a NumPy scalar of type ``t`` (PTX ISA 4.5 "Constants")."""
    dt = np.dtype(NP[t])
    if t == "pred":
        return np.bool_(bool(v))
    if isinstance(v, tuple):  # hex float literal
        kind, bits = v
        f = np.uint32(bits).view(np.float32) if kind == "f32" else np.uint64(bits).view(np.float64)
        if dt.kind == "f":
            return dt.type(f)
        return np.array(bits & ((1 << (8 * dt.itemsize)) - 1), UINT[dt.itemsize]).view(dt)[()]
    if dt.kind == "f":
        return dt.type(float(v))
    if isinstance(v, float):
        v = int(v)
    return np.array(v & ((1 << (8 * dt.itemsize)) - 1), UINT[dt.itemsize]).view(dt)[()]


def reader(ctx, op, t: str, affine: bool = False) -> Callable:
    """A function G -> (values as type t, defined) for a source operand. ``affine``: when G is every
    thread, a register or special register whose values follow an :class:`Affine` rule may come
    back as that rule (of t's width), which the caller then handles; otherwise always values."""
    dt = np.dtype(NP[t])
    if isinstance(op, Imm):
        val = imm_value(op.value, t)
        return lambda G: (val, True)
    if isinstance(op, Sym) and op.name == "WARP_SZ":  # PTX ISA 5.6 "Predefined identifiers": 32
        val = imm_value(32, t)
        return lambda G: (val, True)
    if isinstance(op, Sym):
        addr = ctx.symbol_address(op.name)
        val = imm_value(addr, t)
        return lambda G: (val, True)
    if isinstance(op, Reg):
        if op.special and op.name.startswith(("%clock", "%globaltimer")):
            # no timing is modelled: the count of scheduling steps so far (defined, increasing)
            return lambda G: (np.full(G.n, ctx.steps).astype(dt), True)
        # looked up when read, not when bound: one binding serves every launch shape
        if op.special:
            name = op.name
            ctx.check_special(name)
            st = np.dtype(np.uint32)
            if name.split(".")[0] in UNIFORM_SPECIALS:
                def get(G):
                    return ctx.special(name)[0], True
            elif affine:
                def get(G):
                    rule = ctx.special_affine(name) if G.full else None
                    return (rule, True) if rule is not None else (G.take(ctx.special(name)), True)
            else:
                def get(G):
                    return G.take(ctx.special(name)), True
        else:
            if op.name not in ctx.regs:
                raise Unsupported(f"register {op.name} is not declared")
            st = ctx.regs.dtype[op.name]
            get = ctx.regs.reader(op.name, affine)
        if t == "pred":
            if st != np.bool_:
                raise Unsupported(f"{op.name} is not a predicate")
            if op.negate:
                def negated(G):
                    v, d = get(G)
                    return ~v, d
                return negated
            return get
        if st == np.bool_:
            raise Unsupported(f"predicate {op.name} used as .{t}")
        sr, ts = st.itemsize, dt.itemsize
        if sr == ts:
            if st == dt:
                return get

            def same(G):
                v, d = get(G)
                return (v if type(v) is Affine else v.view(dt)), d
            return same
        if sr > ts:
            nar = UINT[ts]

            def low(G):
                v, d = get(G)
                if type(v) is Affine:    # the low bits (PTX ISA 6.4)
                    return v.width(8 * ts), d
                return v.astype(nar).view(dt), d
            return low
        # a narrower register as a wider type: PTX allows it for integer sources (zero/sign extension)
        if dt.kind in "ui":
            src_t = SINT[sr] if dt.kind == "i" else UINT[sr]

            def extended(G):
                v, d = get(G)
                if type(v) is Affine:
                    rule = v.signed() if dt.kind == "i" else v.unsigned()
                    if rule is not None:
                        return rule.width(8 * ts), d
                    v = v.array()    # G is every thread
                return v.view(src_t).astype(dt), d
            return extended
        raise Unsupported(f"{op.name} ({8 * sr} bits) is too narrow for .{t}")
    raise Unsupported(f"operand {op} cannot be read as .{t}")


def writer(ctx, op, t: str) -> Callable:
    """A function (G, values, defined[, made]) that stores a result of type t into a destination
    register. ``made``: whether ``values`` is an array just computed that nothing else refers to, so
    the register may keep it (None: judged from the array, a view never is)."""
    if isinstance(op, Sym) and op.name == "_":
        return lambda G, v, d, made=None: None
    if not isinstance(op, Reg) or op.special:
        raise Unsupported(f"cannot write to {op}")
    regs = ctx.regs
    name = op.name
    if name not in regs:
        raise Unsupported(f"register {name} is not declared")
    st = regs.dtype[name]
    dt = np.dtype(NP[t])
    write = regs.write

    def defined(G, d):
        if ctx.any_tainted:
            d = both(d, ~G.take(ctx.tainted))
        return d

    if t == "pred" or st == np.bool_:
        if st != np.bool_ or t != "pred":
            raise Unsupported(f"{name}: predicate/non-predicate mismatch for .{t}")

        def w(G, v, d, made=None):
            write(name, G, v, defined(G, d), _made(v) if made is None else made)
        return w
    sr, ts = st.itemsize, dt.itemsize
    if sr == ts:
        if st == dt:
            def w(G, v, d, made=None):
                write(name, G, v, defined(G, d), _made(v) if made is None else made)
        else:
            def w(G, v, d, made=None):
                if type(v) is Affine:    # the same bits
                    write(name, G, v, defined(G, d))
                    return
                made = (_made(v) if made is None else made) and v.dtype == dt
                write(name, G, (v if made else np.asarray(v, dt)).view(st), defined(G, d), made)
        return w
    if sr > ts:
        # signed types are sign-extended, the others zero-extended (PTX ISA 6.4)
        signed = dt.kind == "i"
        wide_u = UINT[sr]
        extend = SINT[sr] if signed else wide_u
        bits = dt if signed else UINT[ts]

        def w(G, v, d, made=None):
            if type(v) is Affine:     # the rule is exact while every thread's value is in range
                rule = v.signed() if signed else v.unsigned()
                if rule is not None:
                    write(name, G, rule.width(8 * sr), defined(G, d))
                    return
                v = v.array().view(dt)
            write(name, G, np.asarray(v, dt).view(bits).astype(extend).view(wide_u), defined(G, d), True)
        return w
    raise Unsupported(f"{name} ({8 * sr} bits) is too narrow for a .{t} result")


def _made(v) -> bool:
    """``v`` is an array an operation has just made (not a view of a register, memory or a cached
    array), so a register may keep it as it is."""
    return type(v) is np.ndarray and v.base is None and v.flags.writeable


# -- the makers ----------------------------------------------------------------------------------

MAKERS: dict[str, Callable] = {}


def maker(*names):
    def deco(f):
        for n in names:
            MAKERS[n] = f
        return f
    return deco


def decode(ins: Instr, fn) -> Callable:
    """The maker (launch context -> :class:`Op`) for one instruction; unsupported ones raise when run."""
    f = MAKERS.get(ins.opcode)
    if f is None:
        return _unsupported_maker(ins, f"`{ins.opcode}` is not implemented")
    try:
        return f(ins, fn)
    except Unsupported as exc:
        return _unsupported_maker(ins, exc.why)


def _late(ins: Instr, build: Callable[[Any], Callable]):
    """A maker whose operand binding may itself find something unsupported (then it raises when run)."""
    def make(ctx):
        try:
            return build(ctx)
        except Unsupported as exc:
            return _unsupported_maker(ins, exc.why)(ctx)
    return make


def _same_operands(ins: Instr) -> bool:
    """``x ^ x`` and ``x - x`` are 0 whatever x holds: defined even when x is not."""
    a, b = ins.operands[1:3] if len(ins.operands) == 3 else (None, None)
    return isinstance(a, Reg) and not a.special and a == b


def _simple(ins: Instr, t_dst: str, t_srcs: list[str], compute: Callable, defined: Optional[Callable] = None,
            constant: bool = False, affine: Optional[Callable] = None):
    """d = compute(*sources) elementwise; optional defined(d_value, *source values) -> extra mask.
    ``constant``: the result does not depend on the operands' values (always defined). ``affine``:
    the same instruction on operands of which some are :class:`Affine` rules and the others one
    value each (every thread), giving a rule or one value, or None where it cannot (the operands
    are then read again as per-thread values, which gives their registers arrays from then on, and
    ``compute`` runs)."""
    def build(ctx):
        w = writer(ctx, ins.operands[0], t_dst)
        rs = [reader(ctx, o, t, affine is not None) for o, t in zip(ins.operands[1:], t_srcs)]
        plain = [reader(ctx, o, t) for o, t in zip(ins.operands[1:], t_srcs)] if affine is not None else rs
        n = len(rs)
        if n == 1:
            r0, p0 = rs[0], plain[0]

            def run(G):
                a, da = r0(G)
                if type(a) is Affine:
                    v = affine(a)
                    if v is not None:
                        w(G, v, da)
                        return
                    a, da = p0(G)
                w(G, compute(a), da)
        elif n == 2:
            r0, r1 = rs
            p0, p1 = plain

            def run(G):
                a, da = r0(G)
                b, db = r1(G)
                if type(a) is Affine or type(b) is Affine:
                    v = affine(a, b)
                    if v is not None:
                        w(G, v, both(da, db))
                        return
                    (a, da), (b, db) = p0(G), p1(G)
                if constant:
                    w(G, compute(a, b), True)
                elif defined is None:
                    w(G, compute(a, b), both(da, db))
                else:
                    v, ok = compute(a, b)
                    w(G, v, both(da, db, ok))
        else:
            def run(G):
                vals = [r(G) for r in rs]
                if any(type(v) is Affine for v, _ in vals):
                    v = affine(*[v for v, _ in vals])
                    if v is not None:
                        w(G, v, both(*[d for _, d in vals]))
                        return
                    vals = [r(G) for r in plain]
                w(G, compute(*[v for v, _ in vals]), both(*[d for _, d in vals]))
        return Op(ALU, ins, run)
    if len(ins.operands) != len(t_srcs) + 1:
        raise Unsupported(f"expected {len(t_srcs) + 1} operands")
    return _late(ins, build)


# Integer arithmetic on Affine rules: what _simple's ``affine`` hooks compute. Each takes operands
# that are rules or one value for every thread and gives a rule, one value, or None where the result
# is no rule (a product of two rules) or the rule cannot be shown exact (a comparison, division or
# widening of values that do not all lie in one range of the type).

def _linear(x) -> "Affine | int | None":
    """An integer operand as a rule or one integer (its value as its type reads it: signed for .s
    types); None for per-thread values."""
    if type(x) is Affine:
        return x
    return int(x) if np.ndim(x) == 0 else None


def _affine_sum(a, b, sign: int = 1) -> Optional[Affine]:
    """``a + sign * b`` (add, sub: the low bits, PTX ISA add/sub (integer))."""
    x, y = _linear(a), _linear(b)
    if x is None or y is None:
        return None
    y = y.times(sign) if type(y) is Affine else sign * y
    return x.plus(y) if type(x) is Affine else y.plus(x)


def _affine_product(a, b) -> Optional[Affine]:
    """``a * b`` (mul.lo: the low bits, PTX ISA mul (integer)) of a rule and one integer."""
    x, y = _linear(a), _linear(b)
    if type(x) is Affine and type(y) is int:
        return x.times(y)
    if type(y) is Affine and type(x) is int:
        return y.times(x)
    return None


def _affine_wide(a, b, signed: bool) -> Optional[Affine]:
    """mul.wide (PTX ISA mul (integer)): the operands as integers of their type, their whole product in a
    rule twice as wide; None when a rule's values do not all lie in the type's range."""
    x, y = _linear(a), _linear(b)
    x, y = ((v.signed() if signed else v.unsigned()) if type(v) is Affine else v for v in (x, y))
    p = None if x is None or y is None else _affine_product(x, y)
    return None if p is None else p.width(2 * p.bits)


def _affine_shl(a, b, bits: int) -> Optional[Affine]:
    """shl (PTX ISA shl) of a rule by one amount; amounts past the width shift every bit out."""
    x, n = _linear(a), _linear(b)
    if type(x) is not Affine or type(n) is not int:
        return None
    return x.times(1 << min(n, bits))


def _affine_divide(a, b, t: str, rem: bool):
    """div or rem (PTX ISA div, rem (integer)) of a rule by one positive integer when every thread's dividend
    (an integer of type t) lies in one [k * b, (k + 1) * b) with k >= 0: the quotient is k in every
    thread (one value), the remainder the rule less k * b (truncation is floor division there)."""
    x, c = _linear(a), _linear(b)
    if type(x) is not Affine or type(c) is not int or c <= 0:
        return None
    x = x.signed() if t.startswith("s") else x.unsigned()
    if x is None:
        return None
    lo, hi = x.span
    k = lo // c
    if lo < 0 or hi >= (k + 1) * c:
        return None
    return x.plus(-k * c) if rem else NP[t](k)


def _affine_compare(cmp: str, signed: bool, a, b) -> Optional[np.bool_]:
    """An integer setp comparison (PTX ISA setp) of rules and values that has one outcome in
    every thread, as that one value; None when it may differ between threads. ``signed``: how the
    comparison reads the operands."""
    x, y = _linear(a), _linear(b)
    if x is None or y is None:
        return None
    x, y = ((v.signed() if signed else v.unsigned()) if type(v) is Affine else v for v in (x, y))
    if x is None or y is None:
        return None
    diff = x.plus(y.times(-1) if type(y) is Affine else -y) if type(x) is Affine else y.times(-1).plus(x)
    lo, hi = diff.span
    yes, no = {"eq": (lo == hi == 0, hi < 0 or lo > 0), "ne": (hi < 0 or lo > 0, lo == hi == 0),
               "lt": (hi < 0, lo >= 0), "le": (hi <= 0, lo > 0), "gt": (lo > 0, hi <= 0),
               "ge": (lo >= 0, hi < 0)}[_ORDER.get(cmp, cmp)]
    return np.bool_(True) if yes else np.bool_(False) if no else None


_ORDER = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}   # the unsigned comparisons


def _bcast(v, G):
    """Make sure a result has one value per thread of G."""
    if np.ndim(v) == 0:
        return np.full(G.n, v)
    return v


def per_thread(x, n: int):
    """``x`` (a scalar, or already one value per thread) as one value per thread, without copying
    when it already is (np.broadcast_to is slow for small arrays)."""
    if np.ndim(x) == 0:
        return np.full(n, x)
    return x if x.shape == (n,) else np.broadcast_to(x, (n,))


def defined_per_thread(d, n: int):
    """A definedness (True or a bool array) as one bool per thread."""
    if d is True:
        return np.ones(n, bool)
    return d if np.shape(d) == (n,) else np.broadcast_to(d, (n,))


# integer arithmetic --------------------------------------------------------------------------------

def _int_kind(t: str) -> str:
    return "s" if t.startswith("s") else "u"


@maker("add", "sub")
def _add(ins: Instr, fn):
    t = _type(ins)
    mods = set(ins.mods[:-1])
    sub = ins.opcode == "sub"
    if t in ("f32", "f64", "f16"):
        return _float_binary(ins, t, mods, "sub" if sub else "add")
    if "cc" in mods:
        raise Unsupported("carry-out (.cc) arithmetic is not implemented")
    if "sat" in mods:
        if t != "s32":
            raise Unsupported(".sat is only defined for .s32")

        def f(a, b):
            r = a.astype(np.int64) - b.astype(np.int64) if sub else a.astype(np.int64) + b.astype(np.int64)
            return np.clip(r, -2**31, 2**31 - 1).astype(np.int32)
        return _simple(ins, t, [t, t], f)
    if sub:
        return _simple(ins, t, [t, t], lambda a, b: np.subtract(a, b, dtype=NP[t]), constant=_same_operands(ins),
                       affine=lambda a, b: _affine_sum(a, b, -1))
    return _simple(ins, t, [t, t], lambda a, b: np.add(a, b, dtype=NP[t]), affine=_affine_sum)


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
    t = _type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64", "f16"):
        return _float_binary(ins, t, mods, "mul")
    if "wide" in mods:
        wt = _wide(t)
        return _simple(ins, wt, [t, t], lambda a, b: np.multiply(np.asarray(a).astype(NP[wt]), np.asarray(b).astype(NP[wt]), dtype=NP[wt]),
                       affine=lambda a, b: _affine_wide(a, b, t.startswith("s")))
    if "hi" in mods:
        return _simple(ins, t, [t, t], lambda a, b: _mul_hi(a, b, t))
    return _simple(ins, t, [t, t], lambda a, b: np.multiply(a, b, dtype=NP[t]), affine=_affine_product)


@maker("mad")
def _mad(ins: Instr, fn):
    t = _type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64"):
        return _fma(ins, fn)
    if "cc" in mods:
        raise Unsupported("carry-out (.cc) arithmetic is not implemented")
    if "wide" in mods:
        wt = _wide(t)
        return _simple(ins, wt, [t, t, wt], lambda a, b, c: np.add(np.multiply(np.asarray(a).astype(NP[wt]), np.asarray(b).astype(NP[wt]), dtype=NP[wt]), c, dtype=NP[wt]))
    if "hi" in mods:
        if "sat" in mods:
            raise Unsupported("mad.hi.sat is not implemented")
        return _simple(ins, t, [t, t, t], lambda a, b, c: np.add(_mul_hi(a, b, t), c, dtype=NP[t]))
    def affine(a, b, c):
        p = _affine_product(a, b)
        if p is None and np.ndim(a) == 0 and np.ndim(b) == 0 and type(a) is not Affine and type(b) is not Affine:
            p = int(np.multiply(a, b, dtype=NP[t]))    # one value times one value: c is the rule
        return None if p is None else _affine_sum(p, c)
    return _simple(ins, t, [t, t, t], lambda a, b, c: np.add(np.multiply(a, b, dtype=NP[t]), c, dtype=NP[t]),
                   affine=affine)


@maker("div", "rem")
def _div(ins: Instr, fn):
    t = _type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64"):
        if ins.opcode == "rem":
            raise Unsupported("rem is integer-only")
        return _float_div(ins, t, mods)
    signed = _int_kind(t) == "s"
    f = V.int_div if ins.opcode == "div" else V.int_rem

    def compute(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, NP[t]), np.asarray(b, NP[t]))
        q, zero = f(a, b, signed)
        return q, ~zero  # PTX: division by zero gives an unspecified value: undefined
    return _simple(ins, t, [t, t], compute, defined=True,
                   affine=lambda a, b: _affine_divide(a, b, t, ins.opcode == "rem"))


@maker("abs", "neg")
def _absneg(ins: Instr, fn):
    t = _type(ins)
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
        return _simple(ins, t, [t], f)
    if ins.opcode == "abs":
        return _simple(ins, t, [t], lambda a: np.where(a < 0, np.negative(a, dtype=NP[t]), a).astype(NP[t]))
    return _simple(ins, t, [t], lambda a: np.negative(a, dtype=NP[t]))


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
    t = _type(ins)
    mods = set(ins.mods[:-1])
    if t in ("f32", "f64"):
        dt = np.dtype(NP[t])
        f = _fminmax(ins.opcode, dt, "NaN" in mods)
        if "ftz" in mods:
            return _simple(ins, t, [t, t], lambda a, b: V.ftz(f(V.ftz(np.asarray(a, dt)), V.ftz(np.asarray(b, dt)))))
        return _simple(ins, t, [t, t], f)
    if "relu" in mods:
        raise Unsupported(".relu is not implemented")
    g = np.minimum if ins.opcode == "min" else np.maximum
    return _simple(ins, t, [t, t], lambda a, b: g(a, b).astype(NP[t]))


# bit operations --------------------------------------------------------------------------------

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
    return _late(ins, build)


@maker("and", "or", "xor")
def _logic(ins: Instr, fn):
    t = _type(ins)
    g = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.opcode]
    if t == "pred":
        return _pred_logic(ins, ins.opcode)
    return _simple(ins, t, [t, t], lambda a, b: g(a, b, dtype=NP[t]),
                   constant=ins.opcode == "xor" and _same_operands(ins))


@maker("not")
def _not(ins: Instr, fn):
    t = _type(ins)
    if t == "pred":
        return _simple(ins, t, [t], lambda a: np.logical_not(a))
    return _simple(ins, t, [t], lambda a: np.invert(np.asarray(a, NP[t])))


@maker("cnot")
def _cnot(ins: Instr, fn):
    t = _type(ins)
    return _simple(ins, t, [t], lambda a: (np.asarray(a) == 0).astype(NP[t]))


@maker("shl", "shr")
def _shift(ins: Instr, fn):
    t = _type(ins)
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
        return _simple(ins, t, [t, "u32"], f, affine=lambda a, b: _affine_shl(a, b, bits))
    return _simple(ins, t, [t, "u32"], f)


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
    return _simple(ins, "b32", ["b32", "b32", "u32"], f)


@maker("popc", "clz")
def _popc(ins: Instr, fn):
    t = _type(ins)
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
    return _simple(ins, "u32", [t], f)


@maker("brev")
def _brev(ins: Instr, fn):
    t = _type(ins)
    bits = 8 * type_size(t)

    def f(a):
        a = np.asarray(a, NP[t]).astype(np.uint64)
        r = np.zeros(a.shape, np.uint64)
        for i in range(bits):
            r |= ((a >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
        return r.astype(NP[t])
    return _simple(ins, t, [t], f)


@maker("bfind")
def _bfind(ins: Instr, fn):
    t = _type(ins)
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
    return _simple(ins, "u32", [t], f)


@maker("bfe")
def _bfe(ins: Instr, fn):
    t = _type(ins)
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
    return _simple(ins, t, [t, "u32", "u32"], f)


@maker("bfi")
def _bfi(ins: Instr, fn):
    t = _type(ins)
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
    return _simple(ins, t, [t, t, "u32", "u32"], f)


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
    return _simple(ins, "b32", ["b32", "b32", "b32"], f)


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
    return _simple(ins2, "b32", ["b32", "b32", "b32"], f)


# floating point --------------------------------------------------------------------------------

def _rounding(mods: set[str]) -> Optional[str]:
    r = [m for m in mods if m in ROUND_F]
    return r[0] if r else None


def _float_binary(ins: Instr, t: str, mods: set[str], op: str):
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
    return _simple(ins, t, [t, t], f)


@maker("fma")
def _fma(ins: Instr, fn):
    t = _type(ins)
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
    return _simple(ins, t, [t, t, t], f)


def _float_div(ins: Instr, t: str, mods: set[str]):
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
    return _simple(ins, t, [t, t], f)


@maker("sqrt", "rcp")
def _sqrt(ins: Instr, fn):
    t = _type(ins)
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
    return _simple(ins, t, [t], f)


@maker("rsqrt", "sin", "cos", "lg2", "ex2", "tanh")
def _approx(ins: Instr, fn):
    raise Unsupported(f"{ins.opcode} is an approximate instruction on hardware: refused (never executed approximately)")


@maker("copysign")
def _copysign(ins: Instr, fn):
    t = _type(ins)
    return _simple(ins, t, [t, t], lambda a, b: np.copysign(b, a).astype(NP[t]))


@maker("testp")
def _testp(ins: Instr, fn):
    t = _type(ins)
    kind = ins.mods[0]
    dt = np.dtype(NP[t])
    tiny = V.F32_TINY if dt == np.float32 else V.F64_TINY
    tests = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda a: ~np.isnan(a), "notanumber": np.isnan,
             "normal": lambda a: np.isfinite(a) & (np.abs(a) >= tiny),
             "subnormal": lambda a: (np.abs(a) < tiny) & (a != 0)}
    if kind not in tests:
        raise Unsupported(f"testp.{kind}")
    g = tests[kind]
    return _simple(ins, "pred", [t], lambda a: g(np.asarray(a, dt)))


# comparison and selection ----------------------------------------------------------------------

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
    t = _type(ins)
    mods = list(ins.mods[:-1])
    cmp = mods[0]
    boolop = next((m for m in mods[1:] if m in ("and", "or", "xor")), None)
    f = _compare(cmp, t, "ftz" in mods)
    comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
    dt = np.dtype(NP[t])
    # integer comparisons read the operands as unsigned for lo/ls/hi/hs and the orders of .b types
    signed = dt.kind == "i" and cmp not in _ORDER
    by_rule = dt.kind in "iu" and boolop is None and cmp in ("eq", "ne", "lt", "le", "gt", "ge", *_ORDER)

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
                # _affine_compare)
                r = _affine_compare(cmp, signed, *(v if type(v) is Affine else
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
    return _late(ins, build)


@maker("selp")
def _selp(ins: Instr, fn):
    t = _type(ins)

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
    return _late(ins, build)


@maker("slct")
def _slct(ins: Instr, fn):
    t = ins.mods[-2]
    ct = ins.mods[-1]
    f = (lambda a, b, c: np.where(np.asarray(c) >= 0, a, b).astype(NP[t]))
    return _simple(ins, t, [t, t, ct], f)


# data movement ---------------------------------------------------------------------------------

@maker("mov")
def _mov(ins: Instr, fn):
    t = _type(ins)
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
    return _late(ins, build)


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
        return _simple(ins, dt_, [st], lambda a: _int_convert(a, st, dt_, use_sat), affine=affine)
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
        return _simple(ins, dt_, [st], f)
    if not d_float and s_float:  # float -> integer: integer rounding, saturation, NaN -> 0
        if irnd is None:
            raise Unsupported("float-to-integer cvt needs .rni/.rzi/.rmi/.rpi")

        def f(a):
            a = np.asarray(a, fs)
            if use_ftz:
                a = V.ftz(a)
            return V.float_to_int(np.atleast_1d(a), np.dtype(fd), irnd).reshape(np.shape(a))
        return _simple(ins, dt_, [st], f)
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
    return _simple(ins, dt_, [st], f)


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
    return _late(ins, build)


# memory ----------------------------------------------------------------------------------------

_SPACES = ("global", "shared", "local", "param", "const")
_IGNORED_LD = {"weak", "volatile", "relaxed", "acquire", "release", "gpu", "cta", "sys", "ca", "cg", "cs", "lu", "cv",
               "wb", "wt", "nc", "L1::no_allocate", "L1::evict_last", "L1::evict_first", "L2::64B", "L2::128B",
               "L2::256B", "mmio", "unified"}


def _mem_mods(ins: Instr):
    t = ins.mods[-1]
    space, vec, flags = None, 1, set()
    for m in ins.mods[:-1]:
        if m in _SPACES:
            space = m
        elif m in ("v2", "v4", "v8"):
            vec = int(m[1:])
        elif m.startswith("L2") or m.startswith("L1") or m in _IGNORED_LD:
            flags.add(m)
        else:
            raise Unsupported(f"memory qualifier .{m} is not implemented")
    if t not in TYPES or t == "pred":
        raise Unsupported(f"memory access of type .{t}")
    return space, vec, t, flags


def _address(ctx, a, what: str):
    """The reader of an instruction's address operand ``[a]``."""
    if not isinstance(a, Addr):
        raise Unsupported(f"{what} needs an address operand")
    return ctx.address_reader(a)


def _vector(x, vec: int, what: str) -> tuple:
    """The ``vec`` registers of a vector operand ``{a, b, ...}`` (or the one operand of a scalar access)."""
    items = x.items if isinstance(x, Vec) else (x,)
    if len(items) != vec:
        raise Unsupported(f"vector width and {what} count differ")
    return items


@maker("ld", "ldu")
def _ld(ins: Instr, fn):
    space, vec, t, flags = _mem_mods(ins)
    if space == "param" and not fn.is_entry:
        raise Unsupported("ld.param inside a device function (calls) is not implemented")

    def build(ctx):
        d, a = ins.operands
        addr = _address(ctx, a, "ld")
        ws = [writer(ctx, x, t) for x in _vector(d, vec, "destination")]
        nc = "nc" in flags

        def run(G):
            av, ad = addr(G)
            # (threads, vec), or (1, vec) and possibly True when every thread read one address
            vals, dfn = ctx.load(G, ins, space, av, ad, t, vec, read_only=nc)
            one = vals.shape[0] == 1 and dfn is True     # a register with one value for every thread
            for i, w in enumerate(ws):
                w(G, vals[0, i] if one else vals[:, i], dfn if dfn is True else dfn[:, i])
        return Op(ALU, ins, run)
    return _late(ins, build)


@maker("st")
def _st(ins: Instr, fn):
    space, vec, t, flags = _mem_mods(ins)
    if space == "param":
        raise Unsupported(f"st.param passes an argument to a call of `{_callee_after(fn, ins.index)}`, and "
                          f"device-function calls are not implemented (printf, assert and __noinline__ "
                          f"functions compile to calls; NVRTC inlines other device functions)")
    if space == "const":
        raise Unsupported("st.const: constant memory is read-only")

    def build(ctx):
        a, s = ins.operands
        addr = _address(ctx, a, "st")
        rs = [reader(ctx, x, t) for x in _vector(s, vec, "source")]

        def run(G):
            av, ad = addr(G)
            if vec == 1:     # (threads, 1) views: store reads them only
                v, dv = rs[0](G)
                ctx.store(G, ins, space, av, ad, t, 1, np.asarray(_bcast(v, G), NP[t])[:, None],
                          defined_per_thread(dv, G.n)[:, None])
                return
            vs, ds = [], []
            for r in rs:
                v, dv = r(G)
                vs.append(_bcast(v, G))
                ds.append(defined_per_thread(dv, G.n))
            ctx.store(G, ins, space, av, ad, t, vec, np.stack(vs, axis=1).astype(NP[t]), np.stack(ds, axis=1))
        return Op(ALU, ins, run)
    return _late(ins, build)


@maker("prefetch", "prefetchu", "nanosleep", "pmevent", "discard", "applypriority", "createpolicy")
def _nop(ins: Instr, fn):
    if ins.opcode == "createpolicy":
        raise Unsupported("createpolicy is not implemented")
    return lambda ctx: Op(ALU, ins, lambda G: None)


_ATOM_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


@maker("atom", "red")
def _atom(ins: Instr, fn):
    t = ins.mods[-1]
    space, op = None, None
    for m in ins.mods[:-1]:
        if m in ("global", "shared"):
            space = m
        elif m in _ATOM_OPS:
            op = m
        elif m in ("relaxed", "acquire", "release", "acq_rel", "gpu", "cta", "sys", "sem"):
            continue
        elif m in ("noftz",):
            continue
        else:
            raise Unsupported(f"atomic qualifier .{m} is not implemented")
    if op is None or t not in TYPES:
        raise Unsupported("atomic without an operation or type")
    is_red = ins.opcode == "red"

    def build(ctx):
        ops = list(ins.operands)
        d = None if is_red else ops.pop(0)
        addr = _address(ctx, ops[0], "atomic")
        rb = reader(ctx, ops[1], t)
        rc = reader(ctx, ops[2], t) if op == "cas" else None
        w = writer(ctx, d, t) if d is not None else None

        def run(G):
            av, ad = addr(G)
            b, db = rb(G)
            c, dc = rc(G) if rc is not None else (None, True)
            old, dold = ctx.atomic(G, ins, space, av, ad, t, op, _bcast(b, G), both(db, dc), None if c is None else _bcast(c, G))
            if w is not None:
                w(G, old, dold)
        return Op(ATOM, ins, run)
    return _late(ins, build)


@maker("membar", "fence")
def _fence(ins: Instr, fn):
    scope = "gpu"
    for m in ins.mods:
        if m in ("cta", "gpu", "sys", "gl"):
            scope = {"gl": "gpu"}.get(m, m)
    if any(m.startswith("proxy") for m in ins.mods):
        return lambda ctx: Op(FENCE, ins, lambda G: None)

    def make(ctx):
        return Op(FENCE, ins, lambda G: ctx.fence(G, scope))
    return make


# control flow and synchronisation ----------------------------------------------------------------

@maker("bra")
def _bra(ins: Instr, fn):
    if not ins.operands or not isinstance(ins.operands[0], Sym):
        raise Unsupported("indirect branches (brx.idx) are not implemented")
    name = ins.operands[0].name
    if name not in fn.labels:
        raise Unsupported(f"unknown label {name}")
    target = fn.labels[name]
    return lambda ctx: Op(BRA, ins, target=target)


@maker("ret", "exit")
def _ret(ins: Instr, fn):
    if ins.opcode == "ret" and not fn.is_entry:
        raise Unsupported("device-function calls (call/ret) are not implemented")
    return lambda ctx: Op(EXIT, ins)


@maker("trap", "brkpt")
def _trap(ins: Instr, fn):
    return lambda ctx: Op(TRAP, ins)


def _callee_after(fn, index: int) -> str:
    """The function the next ``call`` from ``index`` on calls (``vprintf`` for printf)."""
    for ins in fn.instrs[index:]:
        if ins.opcode == "call":
            for o in ins.operands:
                if isinstance(o, Sym) and not o.name.startswith("("):
                    return o.name + (" (printf)" if o.name == "vprintf" else "") + \
                        (" (assert)" if o.name == "__assertfail" else "")
    return "a device function"


@maker("call")
def _call(ins: Instr, fn):
    raise Unsupported(f"device-function calls are not implemented: this calls `{_callee_after(fn, ins.index)}` "
                      f"(printf, assert and __noinline__ functions compile to calls)")


@maker("bar", "barrier")
def _bar(ins: Instr, fn):
    mods = [m for m in ins.mods if m != "cta"]
    if not mods:
        raise Unsupported("bar without .sync")
    if mods[0] == "warp":
        return _bar_warp(ins, fn)
    kind = mods[0]
    aligned = ins.opcode == "bar" or "aligned" in mods  # PTX ISA: bar.sync == barrier.sync.aligned
    if kind == "arrive":
        raise Unsupported("bar.arrive (producer/consumer barriers) is not implemented")
    red = None
    if kind == "red":
        rk = mods[1]
        if rk not in ("popc", "and", "or"):
            raise Unsupported(f"bar.red.{rk}")
        red = rk
    elif kind != "sync":
        raise Unsupported(f"bar.{kind}")

    def build(ctx):
        ops = list(ins.operands)
        dst = ops.pop(0) if red else None
        pred_op = ops.pop() if red else None
        rid = reader(ctx, ops[0], "u32")
        rcount = reader(ctx, ops[1], "u32") if len(ops) > 1 else None
        bar_red = None
        if red:
            rc = reader(ctx, pred_op, "pred")
            wd = writer(ctx, dst, "u32" if red == "popc" else "pred")
            bar_red = (red, rc, wd)
        return Op(BAR, ins, bar_id=rid, bar_count=rcount, bar_aligned=aligned, bar_red=bar_red)
    return _late(ins, build)


def _bar_warp(ins: Instr, fn):
    def build(ctx):
        rm = reader(ctx, ins.operands[0], "b32")
        return Op(WS, ins, ws_key="bar.warp.sync", ws_mask=rm, ws_read=lambda G: (), ws_write=lambda G, outs: None,
                  ws_compute=None)
    return _late(ins, build)


@maker("activemask")
def _activemask(ins: Instr, fn):
    def build(ctx):
        w = writer(ctx, ins.operands[0], "b32")

        def run(G):
            # PTX ISA activemask: the mask of threads of the warp executing this instruction together
            w(G, G.lane_masks_per_thread(), True)
        return Op(ALU, ins, run)
    return _late(ins, build)


def registers_read(fn) -> set:
    """Every register name a function reads (operands after the first, addresses, guards)."""
    names = getattr(fn, "_reads", None)
    if names is None:
        names = set()

        def add(o):
            if isinstance(o, Reg):
                names.add(o.name)
            elif isinstance(o, Vec):
                for x in o.items:
                    add(x)
            elif isinstance(o, Addr) and o.base_is_reg:
                names.add(o.base)
            elif isinstance(o, Pair):
                add(o.first)
                add(o.second)

        for ins in fn.instrs:
            if ins.guard:
                names.add(ins.guard)
            sources_first = ins.opcode in ("st", "red", "bar", "barrier", "prefetch", "prefetchu")
            for o in ins.operands if sources_first else ins.operands[1:]:
                add(o)
        fn._reads = names
    return names


def _ws_op(ins: Instr, key: str, data_ops: list, types: list[str], mask_op, dst_ops: list, dst_types: list[str],
           compute: Callable):
    """A warp-synchronous instruction: operands read per thread, combined per (warp, mask) row."""
    def build(ctx):
        rm = reader(ctx, mask_op, "b32")
        rs = [reader(ctx, o, t) for o, t in zip(data_ops, types)]
        ws = [writer(ctx, o, t) if o is not None else None for o, t in zip(dst_ops, dst_types)]

        def read(G):
            """Each operand's values and definedness: per thread, or one scalar / True for all."""
            return [r(G) for r in rs]

        def write(G, outs, made=None):
            for w, (v, d) in zip(ws, outs):
                if w is not None:
                    w(G, v, d, made)
        return Op(WS, ins, ws_key=key, ws_mask=rm, ws_read=read, ws_compute=compute, ws_write=write)
    return _late(ins, build)


def _sync_mode(ins: Instr, modes: tuple[str, ...]) -> str:
    """The mode (one of ``modes``) of a shfl or vote, which sm_70+ has only in its .sync form."""
    if "sync" not in ins.mods:
        raise Unsupported(f"{ins.opcode} without .sync is not available on sm_70+")
    return next(m for m in ins.mods if m in modes)


@maker("shfl")
def _shfl(ins: Instr, fn):
    mode = _sync_mode(ins, ("up", "down", "bfly", "idx"))
    d = ins.operands[0]
    dst, pdst = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    a, b, c, m = ins.operands[1:5]
    if pdst is not None and pdst.name not in registers_read(fn):
        pdst = None  # NVRTC names the predicate but nothing reads it: skip computing it
    from helpers.machine.warpsync import shfl_compute
    return _ws_op(ins, f"shfl.sync.{mode}.b32", [a, b, c], ["b32", "b32", "b32"], m, [dst, pdst], ["b32", "pred"],
                  shfl_compute(mode, pdst is not None))


@maker("vote")
def _vote(ins: Instr, fn):
    mode = _sync_mode(ins, ("all", "any", "uni", "ballot"))
    d, a, m = ins.operands
    from helpers.machine.warpsync import vote_compute
    return _ws_op(ins, f"vote.sync.{mode}", [a], ["pred"], m, [d], ["b32" if mode == "ballot" else "pred"],
                  vote_compute(mode))


@maker("match")
def _match(ins: Instr, fn):
    mods = list(ins.mods)
    mode = mods[0]
    t = mods[-1]
    d = ins.operands[0]
    dst, pdst = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    a, m = ins.operands[1:3]
    from helpers.machine.warpsync import match_compute
    return _ws_op(ins, f"match.{mode}.sync.{t}", [a], [t], m, [dst, pdst], ["b32", "pred"], match_compute(mode, t))


@maker("redux")
def _redux(ins: Instr, fn):
    mods = list(ins.mods)
    op, t = mods[1], mods[-1]
    if t not in ("u32", "s32", "b32"):
        raise Unsupported(f"redux.sync.{op}.{t} is not implemented")
    d, a, m = ins.operands
    from helpers.machine.warpsync import redux_compute
    return _ws_op(ins, f"redux.sync.{op}.{t}", [a], [t], m, [d], [t], redux_compute(op, t))
