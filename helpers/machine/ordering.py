"""The memory model's orders: what puts one access before another, so that the two do not race.

Happens-before here: program order; a completed CTA barrier (for threads of that CTA);
``bar.warp.sync`` between lanes it synchronises (a vector clock per lane); and, across CTAs, a
release pattern (a gpu-scope fence before an atomic, or a ``.release``/``.acq_rel`` atomic or
``st.release``) observed by an acquire pattern of the other CTA (its atomic or strong load followed by
a fence, or an ``.acquire``/``.acq_rel`` one): PTX ISA 8.4 Table 20 and 8.8 "Release and acquire
patterns", tracked per CTA. A ``.cta``-scope fence or atomic orders nothing across CTAs (8.7 "Morally
strong operations"). Shuffles and votes are not fences; volatile is not a barrier.
"""
from __future__ import annotations

import numpy as np

from helpers.machine.memory import CLK, EP, PC, REL, TID
from helpers.machine.scheduler import Group, LANE


_SCOPES = {"cta": 1, "cluster": 2, "gpu": 2, "sys": 2}


def strength(ins) -> int:
    """0 for a weak memory access; else the scope of a *strong* one (1: cta, 2: gpu or wider).

    PTX ISA 8 "Memory Consistency Model" ("Data race", "Morally strong operations"): two conflicting
    accesses are a data race only if they are not morally strong, i.e. not both strong
    (``.relaxed``/``.acquire``/``.release`` with a scope, or atomic) with a scope that includes both
    threads. ``ld.volatile``/``st.volatile`` are relaxed.sys in that model, but the series teaches
    (as racecheck reports) that volatile does not order warp-synchronous code, so they stay weak here.
    """
    if ins.opcode in ("atom", "red"):
        return next((_SCOPES[m] for m in ins.mods if m in _SCOPES), 2)   # default scope: .gpu
    if ins.opcode in ("ld", "st") and {"relaxed", "acquire", "release"} & set(ins.mods):
        return next((_SCOPES[m] for m in ins.mods if m in _SCOPES), 0)
    return 0


def sync_semantics(ins) -> tuple[bool, bool, int]:
    """(release, acquire, scope) of an ``atom``/``red``/``ld``/``st``: PTX ISA 8.4 Table 20 ("Operation
    types"): ``.release`` is a release operation, ``.acquire`` an acquire one, ``.acq_rel`` both;
    alone each forms a release or acquire pattern (8.8 "Release and acquire patterns"). Scope as
    :func:`strength`; an atomic without one is ``.gpu`` (PTX ISA, atom)."""
    if ins.opcode not in ("atom", "red", "ld", "st"):
        return False, False, 0
    mods = set(ins.mods)
    rel = bool({"release", "acq_rel"} & mods)
    acq = bool({"acquire", "acq_rel"} & mods) and ins.opcode != "red"
    return rel, acq, next((_SCOPES[m] for m in ins.mods if m in _SCOPES), 2)


class Ordering:
    """The part of :class:`helpers.machine.executor.Launch` that orders accesses: barrier epochs
    (``bepoch``), warp clocks (``vc``), per-CTA release stamps (``rel``, ``t_fence``), what each CTA
    acquired (``acq``, ``pending``) and what each synchronising word carries (``syncvars``)."""

    def stamps(self, tids: np.ndarray) -> tuple:
        """(barrier epoch, warp clock, release stamp) of an access by ``tids`` now; each a scalar 0
        while no barrier, warp sync or release has happened, so records need no column for it."""
        ep = rel = 0
        cta = None
        if self.bepoch.any():
            cta = tids // self.TPC
            ep = self.bepoch[cta]
        clk = self.vc[tids >> 5, tids & 31, tids & 31] if self.vc is not None else 0
        if self.rel.any():
            rel = self.rel[tids // self.TPC if cta is None else cta]
        return ep, clk, rel

    def ordered(self, rec: np.ndarray, tids: np.ndarray, pc: int, read: bool = False,
                 hb_only: bool = False) -> np.ndarray:
        """Which recorded accesses cannot race with this one by ``tids`` at ``pc``: the same thread,
        ordered by a barrier, a warp clock or release/acquire, or a morally strong pair.

        ``read`` (an atomic reading a value another CTA stored, :meth:`atomic_checks`): across CTAs
        a morally strong pair is then no data race but still unordered: nothing puts the write before
        the read in causality order (PTX ISA 8.9.5), so the read may return the value before it; only
        release/acquire (8.8) orders it. Strong ld/st pairs stay ordered: a strong load that polls
        (reduce_v9's slots) tolerates either value, and the machine cannot tell a poll from a read
        that assumes the new value. ``hb_only``: ordered by happens-before alone (a morally strong pair
        does not count)."""
        rt = rec[:, TID].astype(np.int64)
        o = rt == tids
        cta_r, cta_t = rt // self.TPC, tids // self.TPC
        same_cta = cta_r == cta_t
        mine = 0 if hb_only else int(self.strong[pc])
        if mine:
            theirs = self.strong[np.maximum(rec[:, PC], 0)]
            ms = (theirs > 0) & (np.minimum(theirs, mine) >= np.where(same_cta, 1, 2))
            o |= (ms & same_cta) if read else ms
        o |= same_cta & (self.bepoch[cta_t] > rec[:, EP])
        if self.vc is not None:
            sw = ~o & ((rt >> 5) == (tids >> 5)) & (rt >= 0)
            if sw.any():
                o[sw] = self.vc[tids[sw] >> 5, tids[sw] & 31, rt[sw] & 31] > rec[sw, CLK]
        if self.acq is not None:
            xc = ~o & ~same_cta & (rt >= 0)
            if xc.any():
                o[xc] = self.acq[cta_t[xc], cta_r[xc]] > rec[xc, REL]
        return o

    def strong_sync(self, tids: np.ndarray, flat: np.ndarray, ins, write: bool) -> None:
        """A strong gpu-scope ``ld``/``st`` on global memory (``.relaxed``/``.acquire``/``.release``
        with ``.gpu`` or ``.sys``) takes part in release/acquire like an atomic: PTX ISA 8.8 release
        patterns "st.release" and "fence; st.relaxed", acquire patterns "ld.acquire" and
        "ld.relaxed; fence"."""
        acq = self.sem[ins.index][1]
        for t, f in zip(tids.tolist(), flat.tolist()):
            cta = t // self.TPC
            self.atomic_sync(t, cta, ("g", f // 4), write=write, read=not write, replace=True)
            if acq:
                self.acquire_by(t, cta)

    def release_by(self, t: int, cta: int) -> None:
        """A release by thread ``t``: the accesses its CTA made so far are published by its next
        atomic (PTX ISA 8.8: "fence; atom" and "atom.release" are release patterns)."""
        self.rel[cta] += 1
        self.t_fence[t] = int(self.rel[cta])

    def acquire_by(self, t: int, cta: int) -> None:
        """An acquire by thread ``t``: what the atomics it did since its last fence observed is now
        ordered before its CTA's later accesses (PTX ISA 8.8: "atom; fence" and "atom.acquire")."""
        p = self.pending.pop(t, None)
        if p is not None:
            if self.acq is None:
                self.acq = np.zeros((self.ncta, self.ncta), np.int32)
            self.acq[cta] = np.maximum(self.acq[cta], p)

    def atomic_sync(self, t: int, cta: int, key, write: bool = True, read: bool = True,
                     replace: bool = False) -> None:
        """Release/acquire through fences and atomics, per CTA (see the module docstring): a write
        after a release publishes what its CTA had acquired and done before it (an RMW adds to what
        the word carried, a release sequence; a store, ``replace``, starts afresh); a read makes what
        the word carries pending, until an acquire (a fence, or the instruction's own .acquire)."""
        tf = self.t_fence.get(t, 0)
        sv = self.syncvars.get(key)
        if write and replace:
            sv = None
            self.syncvars.pop(key, None)
        if write and tf > 0:
            if self.acq is None:
                self.acq = np.zeros((self.ncta, self.ncta), np.int32)
            vec = self.acq[cta].copy()
            vec[cta] = max(vec[cta], tf)
            sv = vec if sv is None else np.maximum(sv, vec)
            self.syncvars[key] = sv
        if read and sv is not None:
            p = self.pending.get(t)
            self.pending[t] = sv.copy() if p is None else np.maximum(p, sv)

    def fence(self, G: Group, scope: str) -> None:
        if scope == "cta":
            return
        ctas = G.idx // self.TPC
        np.add.at(self.rel, ctas, 1)
        for t, c in zip(G.idx.tolist(), ctas.tolist()):
            self.t_fence[t] = int(self.rel[c])
            self.acquire_by(t, c)

    def syncwarp_clocks(self, rwarp: np.ndarray, callers: np.ndarray) -> None:
        """bar.warp.sync orders the memory accesses of the lanes it synchronises (PTX ISA, bar.warp.sync)."""
        if self.vc is None:
            self.vc = np.zeros((self.n_warps, 32, 32), np.int32)
        order = np.argsort(rwarp, kind="stable")
        done = np.zeros(rwarp.size, bool)
        while not done.all():
            # one row per warp per pass (two disjoint masks of one warp are applied one after the other)
            pick = []
            seen = set()
            for r in order:
                if not done[r] and int(rwarp[r]) not in seen:
                    seen.add(int(rwarp[r]))
                    pick.append(r)
            pick = np.array(pick)
            done[pick] = True
            w, cs = rwarp[pick], callers[pick]
            vc = self.vc[w]
            diag = vc[:, LANE, LANE] + cs
            vc[:, LANE, LANE] = diag
            joined = np.where(cs[:, :, None], vc, -1).max(axis=1)
            vc = np.where(cs[:, :, None], joined[:, None, :], vc)
            self.vc[w] = vc
