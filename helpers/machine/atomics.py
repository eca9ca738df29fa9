"""Atomics (PTX ISA, atom / red): one thread at a time, within one scheduling step in increasing linear
thread id over the whole grid (block-major: block linear id, then thread linear id), steps in schedule
order.

A ``.cta``-scope atomic on a word another CTA's atomic touched is a race (PTX ISA 8.7 "Morally strong
operations"). An atomic that reads a value another CTA stored, with no release/acquire between them,
may read the older value (8.9.5): reported, the value undefined. Atomics on one word are not checked
against each other otherwise.
"""
from __future__ import annotations

import numpy as np

from helpers.machine import decode as dec
from helpers.machine.access import ONES
from helpers.machine.memory import TID
from helpers.machine.ptx import type_size
from helpers.machine.report import UnsupportedInstruction
from helpers.machine.scheduler import Group


def _atomic_apply(op: str, dt, cur, b, c):
    """The new value of one atomic read-modify-write (PTX ISA, atom)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "add":
            return dt.type(cur + b) if dt.kind == "f" else np.add(cur, b, dtype=dt)
        if op == "min":
            return np.fmin(cur, b) if dt.kind == "f" else min(cur, b)
        if op == "max":
            return np.fmax(cur, b) if dt.kind == "f" else max(cur, b)
        if op == "inc":
            return dt.type(0) if cur >= b else dt.type(cur + 1)
        if op == "dec":
            return b if (cur == 0 or cur > b) else dt.type(cur - 1)
        if op == "and":
            return np.bitwise_and(cur, b, dtype=dt)
        if op == "or":
            return np.bitwise_or(cur, b, dtype=dt)
        if op == "xor":
            return np.bitwise_xor(cur, b, dtype=dt)
        if op == "exch":
            return b
        if op == "cas":
            return c if cur == b else cur
    raise ValueError(op)


class Atomics:
    """The part of :class:`helpers.machine.executor.Launch` that executes ``atom``/``red``
    (``last_atom``, ``value_w``: the last atomic and the last exchange of each global word)."""

    def atomic(self, G: Group, ins, space, addr, adef, t: str, op: str, b, bdef, c):
        """Atomics one thread at a time, in increasing linear thread id (see the module docstring)."""
        es = type_size(t)
        dt = np.dtype(dec.NP[t])
        self.last_effect[G.idx] = self.steps
        old = np.zeros(G.n, dt)
        dold = np.zeros(G.n, bool)
        bdef = dec.defined_per_thread(bdef, G.n)
        if self.any_tainted:
            bdef = bdef & ~self.tainted[G.idx]
        b = np.asarray(b, dt)
        for sp, pos, flat, a, aok in self.resolve(G, ins, space, addr, adef, es, "atomic"):
            if aok is not None:
                bdef = bdef.copy()
                bdef[pos] &= aok
            if sp is not self.gspace and sp is not self.sspace:
                raise UnsupportedInstruction(ins.text, ins.loc, f"atomics on {sp.name} memory")
            view = sp.data.view(dec.UINT[es])
            dview = sp.defined.view(dec.UINT[es])
            cta_of = G.idx[pos] // self.TPC
            rel, acq, scope = self.sem[ins.index]
            for j, (p, f) in enumerate(zip(pos, flat)):
                k = int(f) // es
                t, cta, w = int(G.idx[p]), int(cta_of[j]), int(f) // 4
                ok = True
                if sp is self.gspace:
                    if rel and scope >= 2:
                        self.release_by(t, cta)   # .release/.acq_rel: as if a fence came before it
                    ok = self.atomic_checks(ins, t, cta, w, scope, op == "exch")
                cur = view[k:k + 1].view(dt)[0]
                cur_def = dview[k] == ONES[es]
                new = _atomic_apply(op, dt, cur, b[p], None if c is None else np.asarray(c, dt)[p])
                old[p], dold[p] = cur, cur_def and ok
                view[k:k + 1] = np.asarray([new], dt).view(dec.UINT[es])
                dview[k] = ONES[es] if (cur_def or op in ("exch",)) and bdef[p] else 0
                if sp.written is not None:
                    sp.written.view(dec.UINT[es])[k] = ONES[es]
                if sp is self.gspace and scope >= 2:   # a .cta-scope atomic orders nothing across CTAs
                    self.atomic_sync(t, cta, ("g", w))
                    if acq:
                        self.acquire_by(t, cta)           # .acquire/.acq_rel: as if a fence came after it
            self.count_mem(sp, G, ins, pos, flat, a, es)
        return old, dold

    def atomic_checks(self, ins, t: int, cta: int, w: int, scope: int, exch: bool) -> bool:
        """Before an atomic by thread ``t`` on global word ``w``: False when the value it reads is not
        defined (the finding reported).

        * Scope (Programming Guide, "Atomic Functions": the ``_block`` variants are atomic only among
          the threads of one block; PTX ISA 8.7 "Morally strong operations": each one's scope must
          include the other's thread): a ``.cta``-scope atomic on a word that another CTA's atomic
          touched, or any atomic after another CTA's ``.cta``-scope one, is not atomic with it.
        * Message passing (PTX ISA 8.9.5 "Causality order"): an atomic that reads a value another CTA
          stored (``st`` or ``atom.exch``), with no release/acquire between them, may read the value
          before it: atomicity orders nothing else, only release/acquire patterns do (8.8).
        """
        ok = True
        last = self.last_atom.get(w)
        self.last_atom[w] = (t, ins.index, scope)
        tids = np.array([t], np.int64)
        words = np.array([w], np.int64)
        if last is not None and last[0] // self.TPC != cta and min(last[2], scope) < 2:
            where = self.describe_flat(self.gspace, w * 4)
            self.add_finding(
                "race", ins.index,
                f"atomics of two blocks on one word of global memory ({where}), one of them at block scope "
                f"(atomicAdd_block and the other _block atomics, PTX .cta): thread {self.tdesc(last[0])} at "
                f"{self.where(last[1])} and thread {self.tdesc(t)} at {self.where(ins.index)}. A _block atomic "
                f"is atomic only among the threads of its own block (Programming Guide, Atomic Functions; PTX "
                f"ISA 8.7 \"Morally strong operations\"), so the two may lose an update or return the same "
                f"old value, and it orders nothing across blocks (fix: atomicAdd, device scope, for a word "
                f"that other blocks update)",
                threads=(last[0], t), other_pc=last[1], key_extra=("scope",), hazard="atomic", space="global",
                between="blocks")   # the values stay as computed: the finding alone fails the answer
        for recs in (self.value_w.get(w), self.gspace.W.rows(words)):
            if recs is None or recs[0, TID] < 0 or int(recs[0, TID]) // self.TPC == cta:
                continue
            live = ~self.ordered(recs, tids, ins.index, read=True)
            if live.any():
                self.report_race(self.gspace, ins, "RAW", tids, recs, live, words)
                ok = False
        if exch:
            self.value_w[w] = self.record(tids, ins.index, 15)
        return ok
