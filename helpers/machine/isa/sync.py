"""Barriers and warp-synchronous instructions: bar/barrier (sync, arrive, red), bar.warp.sync,
activemask, shfl.sync, vote.sync, match.sync, redux.sync (PTX ISA, Parallel Synchronization and
Communication Instructions; Data Movement and Conversion for shfl.sync). A warp-synchronous op is read
per thread and combined per (warp, mask) row when every lane of the mask has arrived
(:mod:`helpers.machine.warpsync` computes the rows).
"""
from __future__ import annotations

from typing import Callable

from helpers.machine.isa.operands import ALU, BAR, Op, Unsupported, WS, late, maker_table, reader, writer
from helpers.machine.ptx import Addr, Instr, Pair, Reg, Vec

MAKERS, maker = maker_table()


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
    return late(ins, build)


def _bar_warp(ins: Instr, fn):
    def build(ctx):
        rm = reader(ctx, ins.operands[0], "b32")
        return Op(WS, ins, ws_key="bar.warp.sync", ws_mask=rm, ws_read=lambda G: (), ws_write=lambda G, outs: None,
                  ws_compute=None)
    return late(ins, build)


@maker("activemask")
def _activemask(ins: Instr, fn):
    def build(ctx):
        w = writer(ctx, ins.operands[0], "b32")

        def run(G):
            # PTX ISA activemask: the mask of threads of the warp executing this instruction together
            w(G, G.lane_masks_per_thread(), True)
        return Op(ALU, ins, run)
    return late(ins, build)


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
    return late(ins, build)


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
