"""The PTX memory model inside a CTA and across CTAs: what puts one access before another.

PTX ISA 8 "Memory Consistency Model". Two conflicting accesses (8.7.1 "Conflict and Data-races":
overlapping, at least one a write) are a data race when they are "not related in causality order and
they are not morally strong". Morally strong (8.7 "Morally strong operations"): the same thread, or
both strong (atomic, or ``.relaxed``/``.acquire``/``.release`` with a scope) with a scope that
includes the other's thread (``.cta``: its own CTA; ``.gpu``, ``.sys``, ``.cluster``: the grid).

Causality order (8.9.5 "Causality Order", base causality order: program order and "synchronizes
with", closed transitively) is tracked as what each thread *knows*: a map from a thread to how many
release points of it are ordered before the knower's next access, and from a CTA to how many of its
barriers are. It grows by:

* barriers (8.9.4 "Memory synchronization": ``bar.sync`` synchronizes the CTA's threads): a barrier
  epoch per CTA (records carry the epoch of their access), and what any thread of the CTA knew
  before the barrier every thread knows after it;
* ``bar.warp.sync`` between the lanes it synchronises (a vector clock per lane);
* release and acquire patterns (8.8 "Release and Acquire Patterns"): a release (a fence, or a
  ``.release``/``.acq_rel`` operation) followed by a strong write on M publishes what its thread
  knew and did before the release; a strong read on M of that write, or of a later atomic of the
  word's release sequence, followed by an acquire (a fence, or the read's own ``.acquire``) makes it
  known to the reading thread. They synchronize when "the first operation in X and the last operation
  in Y are morally strong" (8.9.4): within a CTA at any scope, across CTAs at ``.gpu`` or wider.
  ``red`` performs no acquire pattern (8.8). ``membar``/``fence.sc``/``fence.acq_rel`` are both a
  release and an acquire fence.

Conservative, and said so where it shows: knowledge does not travel through ``bar.warp.sync``
(lanes that synchronised with ``__syncwarp()`` and then publish through one lane's release are not
seen as ordered), and a plain access after a strong read observed a write (8.9.2 "Observation
Order" without an acquire) is not ordered by that observation alone. Fence-SC order (8.9.3) is not
modelled beyond the release and acquire each fence is. Shuffles and votes are not fences; volatile
accesses, relaxed.sys in the model (8.4.2), are kept weak here, as racecheck reports them.
"""
from __future__ import annotations

from typing import Optional

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
    """The part of :class:`helpers.machine.executor.Launch` that orders accesses (module docstring):
    barrier epochs (``bepoch``), warp clocks (``vc``), per-thread release counts (``rc``), what each
    thread and CTA knows (``kt``, ``kc``), the view a thread's last release fence publishes
    (``fview``), what each synchronising word carries (``syncvars``), what a thread's strong reads
    observed and its acquire has not yet taken (``pending``), and for stale reads (:meth:`stale_read`)
    each word's last strong write and the latest write of each thread that a thread has seen."""

    def start_ordering(self) -> None:
        """No access ordered yet: the state of a fresh launch."""
        self.bepoch = np.zeros(self.ncta, np.int32)
        self.vc: Optional[np.ndarray] = None        # (n_warps, 32, 32) bar.warp.sync vector clocks
        self.rc: Optional[np.ndarray] = None        # (T,) releases per thread, once one releases
        self.kt: dict[int, dict] = {}               # thread -> knowledge (see _merge)
        self.kc: dict[int, dict] = {}               # CTA -> what its threads know since a barrier
        self.fview: dict[int, tuple] = {}           # thread -> (view, scope) of its last release
        self.syncvars: dict[tuple, list] = {}       # (space, word) -> [(view, scope, CTA), ...]
        self.pending: dict[int, list] = {}          # thread -> [(view, scope, CTA), ...] not yet acquired
        self.wlast: dict[tuple, tuple] = {}         # (space, word) -> (thread, step) of its last strong write
        self.seen: dict[int, dict] = {}             # thread -> {thread: step of the latest write of it observed}

    def stamps(self, tids: np.ndarray) -> tuple:
        """(barrier epoch, warp clock, release count) of an access by ``tids`` now; each a scalar 0
        while no barrier, warp sync or release has happened, so records need no column for it."""
        ep = rel = 0
        if self.bepoch.any():
            ep = self.bepoch[tids // self.TPC]
        clk = self.vc[tids >> 5, tids & 31, tids & 31] if self.vc is not None else 0
        if self.rc is not None:
            rel = self.rc[tids]
        return ep, clk, rel

    def ordered(self, rec: np.ndarray, tids: np.ndarray, pc: int, hb_only: bool = False) -> np.ndarray:
        """Which recorded accesses cannot race with this one by ``tids`` at ``pc``: the same thread, a
        morally strong pair (PTX ISA 8.7), or ordered in causality order (8.9.5): by a barrier, a warp
        clock, or what the accessing thread knows through release and acquire patterns.
        ``hb_only``: by causality order alone (a morally strong pair does not count)."""
        rt = rec[:, TID].astype(np.int64)
        o = rt == tids
        cta_r, cta_t = rt // self.TPC, tids // self.TPC
        same_cta = cta_r == cta_t
        mine = 0 if hb_only else int(self.strong[pc])
        if mine:
            theirs = self.strong[np.maximum(rec[:, PC], 0)]
            o |= (theirs > 0) & (np.minimum(theirs, mine) >= np.where(same_cta, 1, 2))
        o |= same_cta & (self.bepoch[cta_t] > rec[:, EP])
        if self.vc is not None:
            sw = ~o & ((rt >> 5) == (tids >> 5)) & (rt >= 0)
            if sw.any():
                o[sw] = self.vc[tids[sw] >> 5, tids[sw] & 31, rt[sw] & 31] > rec[sw, CLK]
        if self.kt or self.kc:
            rest = np.flatnonzero(~o & (rt >= 0))
            if rest.size:
                t_r = tids[rest] if np.ndim(tids) else np.full(rest.size, tids)
                for t in np.unique(t_r).tolist():
                    k = self.knowledge(t)
                    if not k:
                        continue
                    i = rest[t_r == t]
                    o[i] = (np.array([k.get(u, 0) for u in rt[i].tolist()]) > rec[i, REL]) | \
                        (np.array([k.get(-1 - c, 0) for c in cta_r[i].tolist()]) > rec[i, EP])
        return o

    def knowledge(self, t: int) -> dict:
        """What thread ``t`` knows now: {thread u: releases of u ordered before t's next access,
        -1 - CTA c: barriers of c ordered before it}."""
        kc, kt = self.kc.get(t // self.TPC), self.kt.get(t)
        if kc is None or kt is None:
            return kt or kc or {}
        return _merge(kc, kt)

    def view(self, t: int) -> dict:
        """What a release by ``t`` now publishes: what it knows, its own accesses so far (release
        count ``rc[t]``) and those of its CTA before the CTA's last barrier (cumulativity: PTX ISA
        8.8, note 1, "through the transitive nature of causality order")."""
        cta = t // self.TPC
        v = dict(self.knowledge(t))
        v[t] = max(v.get(t, 0), int(self.rc[t]))
        v[-1 - cta] = max(v.get(-1 - cta, 0), int(self.bepoch[cta]))
        return v

    def release_by(self, t: int, scope: int) -> None:
        """A release (a fence, or a ``.release``/``.acq_rel`` operation, which acts as one just before
        it) by thread ``t`` at ``scope`` (1: cta, 2: gpu or wider): its next strong write publishes
        what came before (PTX ISA, Release and Acquire Patterns, release patterns "fence.release; st.relaxed [M]", "atom.release")."""
        if self.rc is None:
            self.rc = np.zeros(self.T, np.int32)
        self.rc[t] += 1
        self.fview[t] = (self.view(t), scope)

    def acquire_by(self, t: int, scope: int) -> None:
        """An acquire (a fence, or the read's own ``.acquire``) by thread ``t`` at ``scope``: what its
        strong reads observed since its last acquire is known to it from now on, where the release and
        the acquire are morally strong (PTX ISA 8.9.4: within one CTA at any scope, across CTAs at .gpu
        or wider)."""
        p = self.pending.pop(t, None)
        if not p:
            return
        cta = t // self.TPC
        k = self.kt.get(t, {})
        for v, s, origin in p:
            if origin == cta or min(s, scope) >= 2:
                k = _merge(k, v)
        if k:
            self.kt[t] = k

    def publish(self, t: int, key: tuple, scope: int, rmw: bool) -> None:
        """A strong write by ``t`` on ``key`` (space, word) at ``scope``: after a release it carries
        that release's view (PTX ISA, Release and Acquire Patterns); an atomic keeps what the word carried (a release sequence:
        8.9.2, observation order through atomic read-modify-writes), a store replaces it."""
        entries = self.syncvars.get(key, []) if rmw else []
        fv = self.fview.get(t)
        if fv is not None:
            entries = entries + [(fv[0], min(fv[1], scope), t // self.TPC)]
        if entries:
            self.syncvars[key] = entries
        else:
            self.syncvars.pop(key, None)
        self.wlast[key] = (t, self.steps)

    def observe(self, t: int, key: tuple, scope: int, acquire: bool) -> None:
        """A strong read by ``t`` on ``key`` at ``scope``: what the word carries waits for ``t``'s next
        acquire (at once for an ``.acquire`` read), and the word's last write counts as seen by ``t``
        (:meth:`stale_read`: only that write; the atomics before it in the word's release sequence are
        not followed, so a stale read found through them is missed)."""
        sv = self.syncvars.get(key)
        if sv:
            self.pending[t] = self.pending.get(t, []) + [(v, min(s, scope), o) for v, s, o in sv]
        w = self.wlast.get(key)
        if w is not None and w[0] != t:
            mine = self.seen.setdefault(t, {})
            if w[1] > mine.get(w[0], -1):
                mine[w[0]] = w[1]
        if acquire:
            self.acquire_by(t, scope)

    def stale_read(self, t: int, key: tuple, rec: np.ndarray) -> bool:
        """A strong read by ``t`` on ``key`` that the machine ran after the word's last write (record
        ``rec``, by another thread, a strong write, no data race) although nothing orders that write
        before it, while ``t`` has already seen a later write of the same thread: message passing
        without release and acquire (PTX ISA, Release and Acquire Patterns, 8.9.5). On a GPU the read may return the value before
        that write, and the program plainly relies on it not doing so: the value is undefined."""
        w = self.wlast.get(key)
        if w is None or w[0] == t or int(rec[0, TID]) != w[0]:
            return False
        later = self.seen.get(t, {}).get(w[0], -1)
        return later > w[1] and not self.ordered(rec, np.array([t], np.int64), 0, hb_only=True)[0]

    def strong_sync(self, sp, tids: np.ndarray, flat: np.ndarray, ins, write: bool) -> Optional[np.ndarray]:
        """A strong ``ld``/``st`` (``.relaxed``/``.acquire``/``.release`` with a scope) on global or
        shared memory takes part in release and acquire like an atomic: PTX ISA, Release and Acquire Patterns release patterns
        "st.release" and "fence; st.relaxed", acquire patterns "ld.acquire" and "ld.relaxed; fence".
        For a load: which of its threads read a stale value (:meth:`stale_read`), or None."""
        rel, acq, scope = self.sem[ins.index]
        space = "g" if sp is self.gspace else "s"
        stale = None
        for j, (t, f) in enumerate(zip(tids.tolist(), flat.tolist())):
            key = (space, f // 4)
            if write:
                self.publish(t, key, scope, rmw=False)
                continue
            if self.wlast and self.stale_read(t, key, sp.W.rows(np.array([f // 4], np.int64))):
                stale = np.zeros(tids.size, bool) if stale is None else stale
                stale[j] = True
            self.observe(t, key, scope, acquire=acq)
        return stale

    def fence(self, G: Group, scope: str) -> None:
        """``membar``/``fence.sc``/``fence.acq_rel`` by the threads of G: a release and an acquire
        fence at ``scope`` (PTX ISA 8.4 Table 20, memory fence operation; 8.8)."""
        s = 1 if scope == "cta" else 2
        for t in G.idx.tolist():
            self.acquire_by(t, s)
            self.release_by(t, s)

    def barrier_sync(self, ctas: np.ndarray) -> None:
        """A barrier completed in ``ctas``: what any of their threads knew, all of them know (PTX ISA
        8.9.4: bar.sync synchronizes with bar.sync on the same barrier; 8.9.5: transitively)."""
        if not self.kt:
            return
        for c in np.unique(np.asarray(ctas)).tolist():
            lo, hi = c * self.TPC, (c + 1) * self.TPC
            mine = [t for t in self.kt if lo <= t < hi]
            if not mine:
                continue
            k = self.kc.get(c, {})
            for t in mine:
                k = _merge(k, self.kt.pop(t))
            self.kc[c] = k

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


def _merge(a: dict, b: dict) -> dict:
    """Knowledge or steps ``a`` and ``b`` together: per key the larger (a new dict)."""
    if len(a) < len(b):
        a, b = b, a
    out = dict(a)
    for k, v in b.items():
        if v > out.get(k, -1):
            out[k] = v
    return out
