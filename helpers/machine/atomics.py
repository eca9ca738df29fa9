"""Atomics (PTX ISA, atom / red): one thread at a time, within one scheduling step in increasing linear
thread id over the whole grid (block-major: block linear id, then thread linear id), steps in schedule
order.

An atomic is a strong read and write (PTX ISA 8.4 Table 20; ``red`` writes only): checked against the
plain accesses recorded before it and recorded as a write, so a plain access of the word that
nothing orders against it is a data race (8.7.1 "Conflict and Data-races"), in shared memory as in
global. Two atomics on one word are morally strong (8.7) unless one is ``.cta``-scoped and they are in
different CTAs: that pair is reported apart (hazard ``atomic``). An atomic that reads a value another
thread wrote, unordered, after the reader already saw a later write of that thread, may read the older
value (:meth:`helpers.machine.ordering.Ordering.stale_read`): reported, the value undefined.
"""
from __future__ import annotations

import numpy as np

from helpers.machine import decode as dec
from helpers.machine.access import ONES
from helpers.machine.memory import PC
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
    (``last_atom``: the last atomic of each global word, its thread, pc and scope)."""

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
        rel, acq, scope = self.sem[ins.index]
        reads = ins.opcode == "atom"
        for sp, pos, flat, a, aok in self.resolve(G, ins, space, addr, adef, es, "atomic"):
            if aok is not None:
                bdef = bdef.copy()
                bdef[pos] &= aok
            if sp is not self.gspace and sp is not self.sspace:
                raise UnsupportedInstruction(ins.text, ins.loc, f"atomics on {sp.name} memory")
            view = sp.data.view(dec.UINT[es])
            dview = sp.defined.view(dec.UINT[es])
            tids = G.idx[pos]
            raced = self.atomic_races(sp, ins, tids, flat, es)
            space_key = "g" if sp is self.gspace else "s"
            for j, (p, f) in enumerate(zip(pos, flat)):
                k = int(f) // es
                t, w = int(tids[j]), int(f) // 4
                key = (space_key, w)
                ok = not raced[j]
                if rel:
                    self.release_by(t, scope)   # .release/.acq_rel: as if a fence came just before it
                if sp is self.gspace:
                    self.atomic_scope(ins, t, w, scope)
                if reads and self.wlast and self.stale_read(t, key, sp.W.rows(np.array([w], np.int64))):
                    self.report_stale(sp, ins, t, w)
                    ok = False
                cur = view[k:k + 1].view(dt)[0]
                cur_def = dview[k] == ONES[es]
                new = _atomic_apply(op, dt, cur, b[p], None if c is None else np.asarray(c, dt)[p])
                old[p], dold[p] = cur, cur_def and ok
                view[k:k + 1] = np.asarray([new], dt).view(dec.UINT[es])
                dview[k] = ONES[es] if (cur_def or op in ("exch",)) and bdef[p] else 0
                if sp.written is not None:
                    sp.written.view(dec.UINT[es])[k] = ONES[es]
                if reads:   # the read part first: it reads the word's previous write
                    self.observe(t, key, scope, acquire=acq)   # .acquire/.acq_rel: as if a fence came after it
                self.publish(t, key, scope, rmw=True)
            words, bm, eidx = self.words_of(flat, es)
            wt = tids if eidx is None else tids[eidx]
            self.put_record(sp.W, words, wt, ins.index, bm)
            sp.w_chg[words] = True      # a racing access may see the word before or after it
            sp.w_undef[words] = False
            self.count_mem(sp, G, ins, pos, flat, a, es)
        return old, dold

    def atomic_races(self, sp, ins, tids: np.ndarray, flat: np.ndarray, es: int) -> np.ndarray:
        """Before the atomics of ``tids`` at ``flat``: their data races with the plain (or otherwise not
        morally strong) accesses recorded on those words, reported (PTX ISA 8.7.1: a data race is two
        conflicting accesses "not related in causality order and ... not morally strong"); the reads
        those atomics overwrite are checked as a store's are (WAR) and forgotten. Earlier atomics are
        left to :meth:`atomic_scope`. Returns, per atomic, whether the value it reads is undefined."""
        raced = np.zeros(tids.size, bool)
        words, bm, eidx = self.words_of(flat, es)
        wt = tids if eidx is None else tids[eidx]
        if not sp.W.empty:
            present = np.flatnonzero(sp.W.tids(words) >= 0)
            if present.size:
                pcs = sp.W.column(PC, words[present])
                present = present[~self.atomic_pc[np.maximum(pcs, 0)]]
            if present.size:
                hit = self.conflicts(sp, ins, "RAW", sp.W, wt, bm, words, present)
                if hit is not None:
                    raced[hit[0] if eidx is None else eidx[hit[0]]] = True
        chg = np.ones(words.size, bool)
        for R in (sp.R1, sp.R2):
            present = None if R.empty else np.flatnonzero(R.tids(words) >= 0)
            if present is not None and present.size:
                self.check_war(sp, ins, R, wt, bm, words, present, chg)
        return raced

    def atomic_scope(self, ins, t: int, w: int, scope: int) -> None:
        """An atomic by thread ``t`` on global word ``w`` after another CTA's atomic on it, one of them
        ``.cta``-scoped (Programming Guide, "Atomic Functions": the ``_block`` variants are atomic only
        among the threads of one block; PTX ISA 8.7 "Morally strong operations": each one's scope must
        include the other's thread): the two are not atomic with each other; reported."""
        last = self.last_atom.get(w)
        self.last_atom[w] = (t, ins.index, scope)
        if last is not None and last[0] // self.TPC != t // self.TPC and min(last[2], scope) < 2:
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
