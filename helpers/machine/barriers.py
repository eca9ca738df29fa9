"""Barriers (PTX ISA, bar/barrier): ``bar.sync``/``barrier.sync``, ``bar.arrive``, ``bar.red``.

A barrier waits for every non-exited thread of the CTA (or ``b`` threads, counted per whole warp);
exiting threads release the barriers on all threads of the CTA that they hold up, not counted ones
(PTX ISA, exit). ``bar.sync`` is ``barrier.sync.aligned``: the non-exited lanes of a warp, or the warps
of a CTA, that meet at different instructions of one whole-CTA barrier are a ``divergent_barrier``.
"""
from __future__ import annotations

import numpy as np

from helpers.machine.scheduler import BAR, EXIT, Group, RUN


class Barriers:
    """The part of :class:`helpers.machine.executor.Launch` that makes threads wait at barriers and
    releases them (``bar_id``, ``bar_cnt``, ``bar_pred``); a release starts a new barrier epoch of the
    CTA (:mod:`helpers.machine.ordering`)."""

    def bar_arrive(self, G: Group, p: int, op) -> np.ndarray:
        ids, idd = op.bar_id(G)
        idx = G.idx
        if op.bar_count is None and op.bar_red is None and np.ndim(ids) == 0 and self._bar_fast(G, p):
            w, _ = G.warps()
            self.ci["barriers"][p] += w.size
            self.cw["barriers"][w] += 1
            return idx
        self.wait_state()
        self.status[idx] = BAR
        self.pc[idx] = p
        self.last_effect[idx] = self.steps
        self.bar_id[idx] = np.asarray(ids).astype(np.int64)
        if op.bar_count is not None:
            cnt, cd = op.bar_count(G)
            self.bar_cnt[idx] = np.asarray(cnt).astype(np.int64)
        else:
            self.bar_cnt[idx] = -1
        if op.bar_red is not None:
            _, rc, _ = op.bar_red
            v, d = rc(G)
            self.bar_pred[idx] = v
            self.bar_pred_def[idx] = d if d is not True else True
        w, c = G.warps()
        self.ci["barriers"][p] += w.size
        self.cw["barriers"][w] += 1
        return self.bar_try(np.unique(idx // self.TPC))

    def _bar_fast(self, G: Group, p: int) -> bool:
        """Every live thread of the group's blocks arrives here, now, and none waits elsewhere:
        the barrier completes at once (the common, convergent case). The group then resumes at
        ``p + 1``: ``self.pc`` is not kept current while a group runs straight-line code (the run
        loop stores it when the group breaks up), so it is set from ``p``, never incremented."""
        ctas_first = G.idx[0] // self.TPC
        ctas_last = G.idx[-1] // self.TPC
        lo, hi = ctas_first * self.TPC, (ctas_last + 1) * self.TPC
        st = self.status[lo:hi]
        # all threads of these CTAs that are alive are in G: compare counts of non-exited threads
        alive = int(np.count_nonzero(st != EXIT))
        if alive != G.n or (self.status[G.idx] != RUN).any():
            return False
        self.bepoch[ctas_first:ctas_last + 1] += 1
        if self.kt:
            self.barrier_sync(np.arange(ctas_first, ctas_last + 1))
        self.pc[G.idx] = p + 1
        return True

    def _divergent_barriers(self, tids: np.ndarray, pcs: np.ndarray) -> np.ndarray:
        """The CTAs among the threads ``tids`` just released (at ``pcs``) whose threads met at *different*
        instructions of one barrier where either is aligned: PTX ISA, bar/barrier: ``.aligned`` "indicates
        that all threads in CTA will execute the same barrier{.cta} instruction", and otherwise the
        behaviour is undefined. The lanes of one warp apart (``__syncthreads()`` in both arms of a branch
        that splits it) take precedence over whole warps of one CTA at different instructions of one
        whole-CTA barrier (counted barriers, ``bar.sync id, count``, name their own threads): one finding
        per release. The machine lets the threads meet. Returns the CTAs concerned (their ``bar.red``
        results are undefined)."""
        if tids.size < 2 or not any(self.ops[int(p)].bar_aligned for p in np.unique(pcs)):
            return np.zeros(0, np.int64)
        flagged = []
        reported = False
        whole = self.bar_cnt[tids] < 0
        for kind, key, sel in (("warp", tids >> 5, np.ones(tids.size, bool)),
                               ("cta", tids // self.TPC, whole)):
            t, p, k = tids[sel], pcs[sel], key[sel]
            bid = self.bar_id[t] if kind == "cta" else np.zeros(t.size, np.int64)   # a warp: any two barriers
            order = np.lexsort((p, bid, k))
            ks, bs, ps, ts = k[order], bid[order], p[order], t[order]
            brk = np.flatnonzero((ks[1:] == ks[:-1]) & (bs[1:] == bs[:-1]) & (ps[1:] != ps[:-1]))
            brk = np.array([b for b in brk if self.ops[int(ps[b])].bar_aligned or self.ops[int(ps[b + 1])].bar_aligned],
                           np.int64)
            if not brk.size:
                continue
            flagged.append(ts[brk] // self.TPC)
            if reported:
                continue
            reported = True
            b_ = int(brk[0])
            t1, t2, p1, p2 = int(ts[b_]), int(ts[b_ + 1]), int(ps[b_]), int(ps[b_ + 1])
            who = "the lanes of one warp" if kind == "warp" else "the warps of one block"
            self.add_finding("divergent_barrier", p2,
                             f"{who} reached different __syncthreads() / bar.sync instructions ({self.where(p1)} and "
                             f"{self.where(p2)}): these are aligned barrier instructions (what __syncthreads() and its "
                             f"_count/_and/_or forms compile to), which every thread of the block must reach at the "
                             f"same instruction (PTX ISA, "
                             f"bar/barrier: otherwise the behaviour is undefined); the machine lets them meet",
                             threads=(t1, t2), count=int(brk.size), other_pc=p1)
        return np.unique(np.concatenate(flagged)) if flagged else np.zeros(0, np.int64)

    def _split_warps(self, tids: np.ndarray, pcs: np.ndarray) -> np.ndarray:
        """The CTAs among the threads ``tids`` just released (at ``pcs``) in which a warp was split at an
        aligned whole-CTA barrier: some of its lanes waited at it while others, which never reached
        it, ran on (stored, performed an atomic or synchronised) and then exited, releasing it. PTX
        ISA, bar/barrier: with ``.aligned`` (what ``__syncthreads()`` compiles to), "all threads in
        CTA will execute the same barrier instruction", and in conditionally executed code only if
        every thread evaluates the condition identically, otherwise the behaviour is undefined
        (Programming Guide, "Synchronization Functions": ``__syncthreads()`` in conditional code
        only if the condition evaluates identically across the entire block). compute-sanitizer's
        synccheck reports it as "Divergent thread(s) in warp". Lanes that exit before the barrier
        with no effect after the others arrived (``if (t >= n) return;``) count as exited, as at
        warp-synchronous calls; so do whole warps that skip the barrier. Found where the lanes that
        skip it run after the others arrive (the schedule runs the lower PC first). One finding per
        release."""
        sel = self.bar_cnt[tids] < 0          # counted barriers name their own threads
        for p in np.unique(pcs):
            if not self.ops[int(p)].bar_aligned:
                sel &= pcs != p
        t = tids[sel]
        if not t.size:
            return np.zeros(0, np.int64)
        w = t >> 5
        uw, inv = np.unique(w, return_inverse=True)
        lanes = uw[:, None] * 32 + np.arange(32)
        waited = np.zeros(lanes.shape, bool)
        waited[inv, t & 31] = True
        arrived = np.full(uw.size, np.iinfo(np.int64).max)
        np.minimum.at(arrived, inv, self.last_effect[t])    # a barrier's arrival is its lanes' last effect
        left = ~waited & (self.status[lanes] == EXIT) & (self.last_effect[lanes] >= arrived[:, None])
        rows = np.flatnonzero(left.any(axis=1))
        if not rows.size:
            return np.zeros(0, np.int64)
        r = int(rows[0])
        t1 = int(lanes[r][np.flatnonzero(waited[r])[0]])
        t2 = int(lanes[r][np.flatnonzero(left[r])[0]])
        p = int(self.pc[t1])
        a, b = np.flatnonzero(waited[r]), np.flatnonzero(left[r])
        self.add_finding("divergent_barrier", p,
                         f"Divergent thread(s) in warp (as compute-sanitizer's synccheck says): in the warp of "
                         f"threads {self.tdesc(t1)} and {self.tdesc(t2)}, lanes {_lanes(a)} waited at this "
                         f"__syncthreads() / bar.sync while lanes {_lanes(b)}, which never reached it, ran on and "
                         f"then exited. It is an aligned barrier: every "
                         f"thread of the block must reach the same one, and in a branch only if the condition "
                         f"is the same for the whole block (PTX ISA, bar/barrier; Programming Guide, "
                         f"Synchronization Functions): otherwise the behaviour is undefined. The machine let "
                         f"the waiting lanes go when the others exited",
                         threads=(t1, t2), count=int(left[rows].sum()))
        return np.unique(uw[rows] * 32 // self.TPC)

    def bar_try(self, ctas: np.ndarray) -> np.ndarray:
        st = self.status.reshape(self.ncta, self.TPC)[ctas]
        waiting = st == BAR
        has = waiting.any(axis=1)
        if not has.any():
            return np.zeros(0, np.int64)
        alive = st != EXIT
        bid = self.bar_id.reshape(self.ncta, self.TPC)[ctas]
        bcnt = self.bar_cnt.reshape(self.ncta, self.TPC)[ctas]
        allwait = (waiting == alive).all(axis=1) & has
        idmin = np.where(waiting, bid, 1 << 40).min(axis=1)
        idmax = np.where(waiting, bid, -1).max(axis=1)
        cmax = np.where(waiting, bcnt, -2).max(axis=1)
        simple = allwait & (idmin == idmax) & (cmax < 0)
        release = np.zeros(waiting.shape, bool)
        release[simple] = waiting[simple]
        for r in np.flatnonzero(has & ~simple):
            wr, al = waiting[r], alive[r]
            for bidv in np.unique(bid[r][wr]):
                sel = wr & (bid[r] == bidv)
                cnt = int(bcnt[r][sel].max())
                if cnt < 0:
                    ok = sel.sum() == al.sum()
                else:
                    wsel, wal = sel.reshape(-1, 32), al.reshape(-1, 32)
                    arrived = (wal.any(axis=1) & ((wsel | ~wal).all(axis=1)) & wsel.any(axis=1)).sum()
                    ok = arrived * 32 >= cnt
                if ok:
                    release[r] |= sel
        if not release.any():
            return np.zeros(0, np.int64)
        rel_ctas = ctas[release.any(axis=1)]
        tids = (ctas[:, None] * self.TPC + np.arange(self.TPC))[release]
        self.bepoch[rel_ctas] += 1
        self.barrier_sync(rel_ctas)
        pcs = self.pc[tids]
        apart = self._divergent_barriers(tids, pcs)
        if not alive[release.any(axis=1)].all():   # some thread of a released CTA has exited
            split = self._split_warps(tids, pcs)
            if split.size:
                apart = np.union1d(apart, split)
        # bar.red: the reduction over the threads the barrier released
        for p in np.unique(pcs):
            op = self.ops[int(p)]
            if op.bar_red is None:
                continue
            kind, _, wd = op.bar_red
            tp = tids[pcs == p]
            cta = tp // self.TPC
            for c in np.unique(cta):
                tc = tp[cta == c]
                pv, pdv = self.bar_pred[tc], self.bar_pred_def[tc].all() and c not in apart
                res = {"popc": np.uint32(pv.sum()), "and": bool(pv.all()), "or": bool(pv.any())}[kind]
                wd(Group(tc, self.T), np.full(tc.size, res), bool(pdv))   # undefined where threads met apart
        self.status[tids] = RUN
        self.pc[tids] = pcs + 1
        return tids


def _lanes(a: np.ndarray) -> str:
    """Lane numbers as ranges: ``0-15``, ``16-31, 40``."""
    a = [int(x) for x in a]
    out, i = [], 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and a[j + 1] == a[j] + 1:
            j += 1
        out.append(str(a[i]) if i == j else f"{a[i]}-{a[j]}")
        i = j + 1
    return ", ".join(out)
