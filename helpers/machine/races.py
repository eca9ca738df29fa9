"""Race records and their checks: who last read and wrote each 4-byte word, and which earlier access a
new one conflicts with.

Races: two accesses to one address (global or shared) by different threads, at least one a write,
not ordered (:meth:`helpers.machine.ordering.Ordering.ordered`), are a ``race``. A load that sees a
racing store's changed value, or one that a racing store later changes, is undefined (the second case
is found and the launch replayed once with those loads marked). A store over undefined bytes (shared
memory nobody wrote) always counts as a change: the racing load may have read the old bytes.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from helpers.machine import memory as mem
from helpers.machine.memory import BYTES, CLK, EP, NREC, PC, REL, TID


def undefine(d, at, eidx: Optional[np.ndarray], n: int, vec: int):
    """Definedness ``d`` of an access's ``n`` elements ((n,) or (n, vec)) with the elements that hold
    the words ``at`` (indices or a mask into the access's words; ``eidx`` maps each word to its
    element, None where each element is one word) made undefined."""
    bad = np.zeros(n, bool)
    bad[at if eidx is None else eidx[at]] = True
    return d & (~bad if vec == 1 else ~bad[:, None])


# What orders a write in one block before a read in another (PTX ISA, Release and Acquire Patterns "Release and acquire
# patterns", 8.9.5 "Causality order"), in the words of the race findings.
_CROSS_FIX = ("a __threadfence() before the atomic in the writing block, and one after the atomic in the reading "
              "block that observes it (release, then acquire: PTX ISA, Release and Acquire Patterns); or an atomic that is itself "
              "release and acquire (atom.acq_rel, cuda::atomic_ref fetch_add with memory_order_acq_rel); or give "
              "each block its own element")


_CTA_FIX = ("a __threadfence_block() (or __threadfence()) before the writer's atomic or strong store, and one "
            "after the reader's atomic or strong load that observes it; or cuda::atomic_ref store with "
            "memory_order_release and load with memory_order_acquire")
_NO_ACQUIRE = (". The writing block did release its write; the reading block's acquire is missing. The Programming "
               "Guide's Memory Fence Functions example has no fence after atomicInc; PTX ISA, Release and Acquire Patterns needs one there")


class Races:
    """The part of :class:`helpers.machine.executor.Launch` that keeps and checks the race records of
    each space (``W``, ``R1``, ``R2``: :class:`helpers.machine.memory.Records`) and reports races."""

    def record(self, tids: np.ndarray, pc: int, bm) -> np.ndarray:
        rec = np.empty((tids.size, NREC), np.int32)
        rec[:, TID] = tids
        rec[:, PC] = pc
        rec[:, EP], rec[:, CLK], rec[:, REL] = self.stamps(tids)
        rec[:, BYTES] = bm
        return rec

    def put_record(self, recs: mem.Records, words: np.ndarray, tids: np.ndarray, pc: int, bm) -> None:
        """Record an access at ``words`` by ``tids`` (one per word) now."""
        recs.put(words, tids, pc, *self.stamps(tids), 15 if bm is None else bm)

    def words_of(self, flat: np.ndarray, nbytes: int):
        """The 4-byte words an access touches, the byte mask within each (None: whole words) and
        which element each word belongs to (None: one word per element)."""
        w0 = flat >> 2
        if nbytes == 4:
            return w0, None, None
        if nbytes < 4:
            return w0, ((1 << nbytes) - 1) << (flat & 3), None
        nw = nbytes // 4
        words = (w0[:, None] + np.arange(nw)).ravel()
        return words, None, np.repeat(np.arange(flat.size), nw)

    def conflicts(self, sp: mem.Space, ins, hazard: str, recs: mem.Records, tids: np.ndarray, bm,
                   words: np.ndarray, present: Optional[np.ndarray] = None) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """Which of the records ``recs`` at ``words`` (the words this access by ``tids``, one per
        word, touches) it races with: a record on the same bytes that nothing orders before it
        (:meth:`ordered`). Reports them; returns their positions in ``words`` and their rows, or None.
        ``present``: the positions of ``words`` that hold a record, when the caller has them."""
        if recs.empty:
            return None
        i = np.flatnonzero(recs.tids(words) >= 0) if present is None else present
        if bm is not None and i.size:
            i = i[(recs.column(BYTES, words[i]) & bm[i]) != 0]
        if i.size == 0:
            return None
        rows = recs.rows(words[i])
        racing = ~self.ordered(rows, tids[i], ins.index)
        if not racing.any():
            return None
        i, rows = i[racing], rows[racing]
        self.report_race(sp, ins, hazard, tids[i], rows, np.ones(i.size, bool), words[i])
        return i, rows

    def report_race(self, sp: mem.Space, ins, hazard: str, rec_tids, recs, live, words) -> None:
        """Report live conflicting records as races (aggregated by the two PCs and the hazard)."""
        if not live.any():
            return
        i = np.flatnonzero(live)
        other_pcs = recs[i, PC]
        for opc in np.unique(other_pcs):
            j = i[other_pcs == opc]
            t_later, t_earlier = int(rec_tids[j[0]]), int(recs[j[0], TID])
            spn = "shared" if sp is self.sspace else "global"
            first = {"RAW": "wrote", "WAR": "read", "WAW": "wrote"}[hazard]
            second = {"RAW": "read", "WAR": "wrote", "WAW": "wrote"}[hazard]
            if (t_later >> 5) == (t_earlier >> 5):
                between, fix = "lanes of one warp", "__syncwarp() or __syncthreads()"
            elif t_later // self.TPC == t_earlier // self.TPC:
                between, fix = "warps of one block", "__syncthreads()"
            else:
                between, fix = "blocks", _CROSS_FIX
                if hazard == "RAW" and t_later in self.pending:
                    fix += _NO_ACQUIRE   # its atomic observed a release, and no acquire followed
            where = self.describe_flat(sp, int(words[j[0]]) * 4)
            if between == "blocks" and hazard == "RAW" and self.vol[opc] and self.vol[ins.index]:
                kinds = "atomic or volatile" if ins.opcode in ("atom", "red") or self.strong[opc] else "volatile"
                msg = (f"read on {spn} memory ({where}) not ordered after the write: thread {self.tdesc(t_earlier)} "
                       f"wrote it at {self.where(int(opc))}, thread {self.tdesc(t_later)} read it at "
                       f"{self.where(ins.index)}. Both accesses are {kinds}, so this is no data race, but nothing "
                       f"forms an acquire pattern (PTX ISA, Release and Acquire Patterns): the read may return the old value (fix: {fix})")
            else:
                msg = (f"{hazard} race on {spn} memory ({where}): thread {self.tdesc(t_earlier)} {first} it at "
                       f"{self.where(int(opc))}, thread {self.tdesc(t_later)} {second} it at "
                       f"{self.where(ins.index)}, with nothing ordering the two (fix: {fix})")
            self.add_finding("race", ins.index, msg, threads=(t_earlier, t_later), count=int(j.size),
                             other_pc=int(opc), key_extra=(hazard, spn), hazard=hazard, space=spn, between=between)

    def strong_over_undefined(self, sp: mem.Space, ins, words: np.ndarray, wt: np.ndarray, bm, eidx, n: int,
                               vec: int, d):
        """A strong load of words whose last write, by another thread, nothing orders before it (a
        morally strong pair: no data race, PTX ISA 8.7) while that write went over undefined bytes:
        the load may have read the bytes from before the write, "an unknown but constant value" (8.2.6
        "Initialization"), so its value is undefined, whichever order the machine ran. (Over defined
        bytes either value is one the hardware may return, as a poll expects.)"""
        present = np.flatnonzero(sp.W.tids(words) >= 0)
        if present.size:
            present = present[sp.w_undef[words[present]]]
        if present.size and bm is not None:
            present = present[(sp.W.column(BYTES, words[present]) & bm[present]) != 0]
        if not present.size:
            return d
        rows = sp.W.rows(words[present])
        blind = present[~self.ordered(rows, wt[present], ins.index, hb_only=True)]
        return undefine(d, blind, eidx, n, vec) if blind.size else d

    def check_war(self, sp: mem.Space, ins, R: mem.Records, tids: np.ndarray, bm, words: np.ndarray, present: np.ndarray,
             chg: np.ndarray) -> None:
        """A store's check against the earlier reads ``R`` of the words it writes (WAR), then those
        reads forgotten. A racing read whose bytes this store changed is remembered in ``new_racy``:
        the launch runs again with that load's value undefined (:func:`launch`)."""
        hit = self.conflicts(sp, ins, "WAR", R, tids, bm, words, present)
        if hit is not None:
            sel = chg[hit[0]]
            for rt_, rpc in zip(hit[1][sel, TID], hit[1][sel, PC]):
                key = (int(rt_), int(rpc))
                if key not in self.racy_loads:
                    self.new_racy.add(key)
        R.clear(words[present])

    def report_stale(self, sp: mem.Space, ins, t: int, w: int, count: int = 1) -> None:
        """A stale strong read (:meth:`helpers.machine.ordering.Ordering.stale_read`) by thread ``t``
        of word ``w``, reported as a race finding: no data race, but unordered message passing."""
        u = self.wlast[("g" if sp is self.gspace else "s", w)][0]
        rec = sp.W.rows(np.array([w], np.int64))
        opc = int(rec[0, PC])
        spn = "shared" if sp is self.sspace else "global"
        across = u // self.TPC != t // self.TPC
        fix = _CROSS_FIX if across else _CTA_FIX
        self.add_finding(
            "race", ins.index,
            f"read on {spn} memory ({self.describe_flat(sp, w * 4)}) not ordered after the write: thread "
            f"{self.tdesc(u)} wrote it at {self.where(opc)}, thread {self.tdesc(t)} read it at "
            f"{self.where(ins.index)}, after it had already seen a later write of thread {self.tdesc(u)}. Both "
            f"accesses are strong (atomic or relaxed), so this is no data race, but nothing forms an acquire "
            f"pattern (PTX ISA, Release and Acquire Patterns) after a release pattern of the writer (PTX ISA 8.7.1 \"Conflict and "
            f"Data-races\", 8.8 \"Release and Acquire Patterns\"): the read may return the old value (fix: {fix})",
            threads=(u, t), count=count, other_pc=opc, key_extra=("RAW", spn, "stale"), hazard="RAW", space=spn,
            between="blocks" if across else "threads of one block")
