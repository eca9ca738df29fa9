"""Undefined control flow: a branch on an undefined value.

The machine follows one path; every register a path of the branch may write is undefined until the
paths join again, and the bytes the paths it does not follow would store to are marked undefined.
"""
from __future__ import annotations

import numpy as np

from helpers.machine import decode as dec
from helpers.machine.ptx import type_size
from helpers.machine.report import UnsupportedInstruction
from helpers.machine.scheduler import Group


class Taint:
    """The part of :class:`helpers.machine.executor.Launch` that taints threads branching on an
    undefined value (``tainted``, ``taint_until``, ``uctl``)."""

    def taint_branch(self, threads: np.ndarray, p: int) -> None:
        """``threads`` branch at ``p`` on an undefined value: every register a path of this branch may
        write is undefined from here, and so is whatever they write until the paths join again."""
        from helpers.machine.cfg import flow

        self.uctl[p] = self.uctl.get(p, 0) + int(threads.size)
        join, regs, pcs = flow(self.fn).region(p)
        self._shadow_stores(threads, regs, pcs)
        for r in regs:
            self.regs.undefine(r, threads)
        fresh = threads[~self.tainted[threads]]
        self.tainted[threads] = True
        if self.taint_until is None:
            self.taint_until = np.full(self.T, -1, np.int64)
        self.taint_until[fresh] = join  # -1: the paths never join before the thread exits
        self.any_tainted = True

    def _shadow_stores(self, threads: np.ndarray, regs, pcs) -> None:
        """What the paths the machine does not follow would write: run the arithmetic of every path of
        the branch for ``threads`` (their registers saved and restored), and mark the bytes every store
        or atomic there would address undefined. Loads, synchronisation and guards are skipped, so
        an address that needs them is a guess; the bytes it names are only ever marked undefined."""
        if not any(self.fn.instrs[pc].opcode in ("st", "atom", "red") for pc in pcs):
            return
        saved = {r: self.regs.save(r, threads) for r in regs}
        G = Group(threads, self.T)
        for pc in pcs:
            op = self.ops[pc]
            ins = op.instr
            try:
                if ins.opcode in ("st", "atom", "red"):
                    mods = ins.mods
                    t = mods[-1]
                    vec = next((int(m[1:]) for m in mods if m in ("v2", "v4")), 1)
                    space = next((m for m in mods if m in ("global", "shared", "local")), None)
                    addr_op = ins.operands[1] if ins.opcode == "atom" else ins.operands[0]
                    av, ad = self.address_reader(addr_op)(G)
                    self._forget(G, space, av, type_size(t) * vec)
                elif op.kind == dec.ALU and ins.opcode not in ("ld", "ldu", "st", "activemask"):
                    op.run(G)
            except (UnsupportedInstruction, dec.Unsupported, ValueError, KeyError, IndexError):
                continue
        for r, (v, d) in saved.items():
            self.regs.restore(r, threads, v, d)

    def _forget(self, G: Group, space, addr, nbytes: int) -> None:
        """Mark what an access at ``addr`` would cover undefined (silently skipping bad addresses)."""
        for sp, pos, flat, a, _ in self.resolve(G, self.fn.instrs[0], space, addr, True, nbytes, "", quiet=True):
            idx = flat[:, None] + np.arange(nbytes)
            sp.defined[idx.ravel()] = False

    def untaint_at(self, G: Group, p: int) -> None:
        t = G.idx[self.tainted[G.idx]]
        if t.size:
            done = t[self.taint_until[t] == p]
            if done.size:
                self.tainted[done] = False
                self.any_tainted = bool(self.tainted.any())
