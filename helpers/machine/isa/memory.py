"""Memory instructions: ld, ldu, st, atom, red, membar/fence, and the hints that change nothing the
machine models (prefetch, nanosleep, ...). PTX ISA: Data Movement and Conversion Instructions (ld, ldu,
st); Parallel Synchronization and Communication Instructions (atom, red, membar/fence). The accesses
themselves (spaces, races, ordering) are the launch's: ``ctx.load``, ``ctx.store``, ``ctx.atomic``,
``ctx.fence``.
"""
from __future__ import annotations

import numpy as np

from helpers.machine.isa.control import callee_after
from helpers.machine.isa.operands import (ALU, ATOM, FENCE, NP, Op, TYPES, Unsupported, both, broadcast,
                                          defined_per_thread, late, maker_table, reader, writer)
from helpers.machine.ptx import Addr, Instr, Vec

MAKERS, maker = maker_table()


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
    return late(ins, build)


@maker("st")
def _st(ins: Instr, fn):
    space, vec, t, flags = _mem_mods(ins)
    if space == "param":
        raise Unsupported(f"st.param passes an argument to a call of `{callee_after(fn, ins.index)}`, and "
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
                ctx.store(G, ins, space, av, ad, t, 1, np.asarray(broadcast(v, G), NP[t])[:, None],
                             defined_per_thread(dv, G.n)[:, None])
                return
            vs, ds = [], []
            for r in rs:
                v, dv = r(G)
                vs.append(broadcast(v, G))
                ds.append(defined_per_thread(dv, G.n))
            ctx.store(G, ins, space, av, ad, t, vec, np.stack(vs, axis=1).astype(NP[t]), np.stack(ds, axis=1))
        return Op(ALU, ins, run)
    return late(ins, build)


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
            old, dold = ctx.atomic(G, ins, space, av, ad, t, op, broadcast(b, G), both(db, dc), None if c is None else broadcast(c, G))
            if w is not None:
                w(G, old, dold)
        return Op(ATOM, ins, run)
    return late(ins, build)


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
