"""Control flow of one function: basic blocks, immediate post-dominators, and what a branch controls.

Used for undefined branch conditions: when a thread branches on an undefined value, what it
computes until the paths join again (the branch's immediate post-dominator) depends on that value,
so every register either path may write is undefined from the branch on, and the thread's writes
stay undefined until it reaches the join point (the classic treatment of implicit flows).
"""
from __future__ import annotations

from typing import Optional

from helpers.machine.ptx import Function, Pair, Reg, Vec

_NO_DEST = {"st", "red", "bar", "barrier", "bra", "ret", "exit", "trap", "membar", "fence", "prefetch",
            "prefetchu", "nanosleep", "brkpt", "pmevent"}


def _dests(ins) -> list[str]:
    if ins.opcode in _NO_DEST or not ins.operands:
        return []
    d = ins.operands[0]
    if isinstance(d, Reg) and not d.special:
        return [d.name]
    if isinstance(d, Pair):
        return [d.first.name, d.second.name]
    if isinstance(d, Vec):
        return [x.name for x in d.items if isinstance(x, Reg)]
    return []


class Flow:
    """Basic blocks of ``fn`` and, per conditional branch, its join point and the registers it controls."""

    def __init__(self, fn: Function) -> None:
        ins = fn.instrs
        n = len(ins)
        leaders = {0}
        for i, x in enumerate(ins):
            if x.opcode == "bra":
                t = fn.labels.get(x.operands[0].name) if x.operands else None
                if t is not None:
                    leaders.add(t)
                leaders.add(i + 1)
            elif x.opcode in ("ret", "exit", "trap"):
                leaders.add(i + 1)
        self.starts = sorted(s for s in leaders if s < n)
        self.block_of = [0] * n
        for b, s in enumerate(self.starts):
            end = self.starts[b + 1] if b + 1 < len(self.starts) else n
            for i in range(s, end):
                self.block_of[i] = b
        nb = len(self.starts)
        exit_node = nb
        succ: list[set[int]] = [set() for _ in range(nb)]
        for b, s in enumerate(self.starts):
            end = self.starts[b + 1] if b + 1 < nb else n
            last = ins[end - 1]
            nxt = self.block_of[end] if end < n else exit_node
            if last.opcode == "bra":
                t = fn.labels.get(last.operands[0].name) if last.operands else None
                succ[b].add(self.block_of[t] if t is not None and t < n else exit_node)
                if last.guard is not None:
                    succ[b].add(nxt)
            elif last.opcode in ("ret", "exit", "trap"):
                succ[b].add(exit_node)
                if last.guard is not None:
                    succ[b].add(nxt)
            else:
                succ[b].add(nxt)
        self.succ = succ
        # post-dominators as bitsets over blocks + the exit node
        full = (1 << (nb + 1)) - 1
        pdom = [full] * nb + [1 << exit_node]
        changed = True
        while changed:
            changed = False
            for b in reversed(range(nb)):
                acc = full
                for s in succ[b]:
                    acc &= pdom[s]
                new = acc | (1 << b)
                if new != pdom[b]:
                    pdom[b] = new
                    changed = True
        self.pdom = pdom
        self.nb = nb
        self._fn = fn
        self._regions: dict[int, tuple[int, frozenset, tuple]] = {}

    def ipdom(self, b: int) -> int:
        """The immediate post-dominator block of block b (``nb``: only the exit)."""
        strict = self.pdom[b] & ~(1 << b)
        best, best_size = self.nb, -1
        x = strict
        while x:
            low = x & -x
            c = low.bit_length() - 1
            x ^= low
            size = bin(self.pdom[c]).count("1")
            if size > best_size:  # the closest strict post-dominator has the most post-dominators
                best, best_size = c, size
        return best

    def region(self, pc: int) -> tuple[int, frozenset, tuple]:
        """For the branch at ``pc``: (the PC where its paths join, or -1 for never; the registers any
        path may write before joining; the PCs of every instruction on those paths, in order)."""
        r = self._regions.get(pc)
        if r is not None:
            return r
        b = self.block_of[pc]
        j = self.ipdom(b)
        join_pc = self.starts[j] if j < self.nb else -1
        seen, stack, regs, pcs = set(), list(self.succ[b]), set(), []
        while stack:
            x = stack.pop()
            if x == j or x >= self.nb or x in seen:
                continue
            seen.add(x)
            end = self.starts[x + 1] if x + 1 < self.nb else len(self._fn.instrs)
            for i in range(self.starts[x], end):
                regs.update(_dests(self._fn.instrs[i]))
                pcs.append(i)
            stack.extend(self.succ[x])
        r = (join_pc, frozenset(regs), tuple(sorted(pcs)))
        self._regions[pc] = r
        return r


def flow(fn: Function) -> Flow:
    f: Optional[Flow] = getattr(fn, "_flow", None)
    if f is None:
        f = Flow(fn)
        fn._flow = f  # type: ignore[attr-defined]
    return f
