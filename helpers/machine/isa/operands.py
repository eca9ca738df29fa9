"""What every instruction family of the decoder shares: PTX types, op kinds, :class:`Op`, operand readers and writers.

A *maker* (one instruction decoded once per function) binds to a launch
(:class:`helpers.machine.executor.Launch`, the ``ctx`` here) and gives an :class:`Op` whose ``run(G)``
executes the instruction for the threads of group ``G`` together. A source operand is read by
:func:`reader` as (values, defined); a destination written by :func:`writer`; :func:`simple` builds
the common elementwise maker. Section 6.4 "Operand Size Exceeding Instruction-Type Size" of the PTX ISA
gives how registers wider than the instruction type are read (low bits) and written (sign- or
zero-extended); PTX ISA 4.5 "Constants" how immediates are read.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from helpers.machine.ptx import Imm, Instr, Reg, Sym, type_size
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


def unsupported_maker(ins: Instr, why: str):
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


def instr_type(ins: Instr, pos: int = -1) -> str:
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
            write(name, G, v, defined(G, d), fresh_array(v) if made is None else made)
        return w
    sr, ts = st.itemsize, dt.itemsize
    if sr == ts:
        if st == dt:
            def w(G, v, d, made=None):
                write(name, G, v, defined(G, d), fresh_array(v) if made is None else made)
        else:
            def w(G, v, d, made=None):
                if type(v) is Affine:    # the same bits
                    write(name, G, v, defined(G, d))
                    return
                made = (fresh_array(v) if made is None else made) and v.dtype == dt
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


def fresh_array(v) -> bool:
    """``v`` is an array an operation has just made (not a view of a register, memory or a cached
    array), so a register may keep it as it is."""
    return type(v) is np.ndarray and v.base is None and v.flags.writeable


def maker_table() -> tuple[dict[str, Callable], Callable]:
    """A family's table of makers (opcode -> maker) and the decorator that fills it: ``@maker("add", "sub")``
    registers the function below it for those opcodes. :mod:`helpers.machine.decode` joins the tables."""
    table: dict[str, Callable] = {}

    def maker(*names: str) -> Callable:
        def deco(f: Callable) -> Callable:
            for n in names:
                table[n] = f
            return f
        return deco
    return table, maker


def late(ins: Instr, build: Callable[[Any], Callable]):
    """A maker whose operand binding may itself find something unsupported (then it raises when run)."""
    def make(ctx):
        try:
            return build(ctx)
        except Unsupported as exc:
            return unsupported_maker(ins, exc.why)(ctx)
    return make


def same_operands(ins: Instr) -> bool:
    """``x ^ x`` and ``x - x`` are 0 whatever x holds: defined even when x is not."""
    a, b = ins.operands[1:3] if len(ins.operands) == 3 else (None, None)
    return isinstance(a, Reg) and not a.special and a == b


def simple(ins: Instr, t_dst: str, t_srcs: list[str], compute: Callable, defined: Optional[Callable] = None,
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
    return late(ins, build)


def broadcast(v, G):
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
