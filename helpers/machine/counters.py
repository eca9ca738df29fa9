"""Counters and trace events: issues, active and predicated-on lanes, shared wavefronts and global
sectors per warp-level request, per warp and per instruction (:class:`helpers.machine.report.Counters`).

Shared memory: 32 banks of 4-byte words, a word asked for by several lanes served once. Global
memory: 32-byte sectors.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from helpers.machine.scheduler import Group


WSHIFT = 40   # a warp number << WSHIFT | an address below 2^40: one sortable key


def _distinct(key: np.ndarray) -> np.ndarray:
    """The distinct values of ``key``, ascending (``np.unique`` without its overhead; sorts ``key``
    unless it is already in order, as the accesses of whole warps to consecutive addresses are)."""
    if key.size > 1 and not (key[1:] >= key[:-1]).all():
        key.sort()
    first = np.empty(key.size, bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    return key[first]


class Counting:
    """The part of :class:`helpers.machine.executor.Launch` that counts (``ci`` per instruction, ``cw``
    per warp) and, with ``trace=True``, keeps the events a trace is made of."""

    def count_mem(self, sp, G: Group, ins, pos, flat, a, nbytes: int) -> None:
        """Shared wavefronts (32 banks of 4-byte words, a word asked for by several lanes served once)
        and global 32-byte sectors, per warp-level request."""
        tids = G.idx if pos.size == G.n else G.idx[pos]
        warps = tids >> 5
        if sp is self.sspace:
            words, _, idx = self.words_of(flat, nbytes)
            w = warps if idx is None else warps[idx]
            key = _distinct((w << WSHIFT) | words)
            uw = key >> WSHIFT
            w0 = int(uw[0])
            cnt = np.bincount((uw - w0) * 32 + (key & 31), minlength=(int(uw[-1]) - w0 + 1) * 32)
            wl, per = self._count_requests(ins, "shared", "wavefronts", w0, cnt.reshape(-1, 32).max(axis=1))
            if self.trace_on:
                self.shared_events.append((self.steps, ins.index, wl, per))
        elif sp is self.gspace:
            w, c = G.warps()
            if nbytes <= 16 and pos.size == G.n and (w.size * 32 == G.n or G.cols() is not None):
                # whole warps (or the same lanes of every warp) in order, each lane's sectors in
                # ascending order (the usual coalesced access): a warp's distinct sectors are where
                # the sector number changes, plus one
                sec = (flat >> 5).reshape(w.size, -1)
                later, earlier = sec[:, 1:], sec[:, :-1]
                if (later >= earlier).all():
                    per = np.count_nonzero(later != earlier, axis=1) + 1
                    self.cw["global_requests"][w] += 1
                    self.cw["global_sectors"][w] += per
                    self.ci["global_requests"][ins.index] += w.size
                    self.ci["global_sectors"][ins.index] += int(per.sum())
                    return
            key = (warps << WSHIFT) | (flat >> 5)  # an aligned access of <= 16 bytes stays in one sector
            if nbytes > 16:
                key = np.concatenate([key, (warps << WSHIFT) | ((flat + nbytes - 1) >> 5)])
            uw = _distinct(key) >> WSHIFT
            w0 = int(uw[0])
            self._count_requests(ins, "global", "sectors", w0, np.bincount(uw - w0))

    def _count_requests(self, ins, space: str, unit: str, w0: int, per: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Count one ``space`` request for each warp ``w0 + k`` with ``per[k] > 0``, and its ``per[k]``
        ``unit`` (wavefronts or sectors), per warp and for the instruction. Returns (warps, their units)."""
        hit = per > 0
        warps = np.flatnonzero(hit) + w0
        self.cw[f"{space}_requests"][warps] += 1
        self.cw[f"{space}_{unit}"][warps] += per[hit]
        self.ci[f"{space}_requests"][ins.index] += warps.size
        self.ci[f"{space}_{unit}"][ins.index] += int(per.sum())
        return warps, per[hit]

    def trace_mem(self, kind: str, sp, ins, tids: np.ndarray, flat: np.ndarray, es: int, raw, d) -> None:
        """With trace=True: a shared or global load/store, per thread and element (for block figures)."""
        if sp is self.sspace or sp is self.gspace:
            vec = 1 if np.ndim(raw) == 1 else raw.shape[1]
            off = (flat[:, None] + es * np.arange(vec)).reshape(-1)
            self.mem_events.append((self.steps, ins.index, kind, sp.name, np.repeat(tids, vec), off, es,
                                    np.asarray(raw).reshape(-1).copy(), np.asarray(d).reshape(-1).copy()))

    def count_run(self, G: Group, ins, run) -> None:
        """Global requests and sectors of a word run (:meth:`word_run`): each warp's lanes cover
        consecutive words, so its sectors are those from its first byte's to its last byte's."""
        w, c = G.warps()
        if not isinstance(run, np.ndarray):
            first = np.zeros(c.size, np.int64)
            np.cumsum(c[:-1], out=first[1:])
            start = (run + first) * 4
        else:
            start = run[::int(c[0])] * 4    # the same lanes of every warp: each warp's first word
        per = ((start + 4 * c - 1) >> 5) - (start >> 5) + 1
        ws = slice(None) if G.full else w    # every warp, in order
        self.cw["global_requests"][ws] += 1
        self.cw["global_sectors"][ws] += per
        self.ci["global_requests"][ins.index] += w.size
        self.ci["global_sectors"][ins.index] += int(per.sum())

    def count_ws(self, p: int, G: Group) -> None:
        w, c = G.warps()
        self.ci["issued"][p] += w.size
        self.ci["active_lanes"][p] += G.n
        self.ci["predicated_on"][p] += G.n
        ws, cs = (slice(None), int(c[0])) if G.full or G.cols() is not None else (w, c)   # every warp, the same lanes
        self.cw["issued"][ws] += 1
        self.cw["active_lanes"][ws] += cs
        self.cw["predicated_on"][ws] += cs
        if self.trace_on:
            m = G.warp_masks()
            self.events.append((self.steps, p, w, m, m))

    def count_issues(self, G: Group, k: int, kf: int) -> None:
        """Per-warp counts of k issues by group G, kf of them with every lane predicated on."""
        if k:
            w, c = G.warps()
            if G.full or G.cols() is not None:    # every warp, each with the same lanes
                w, c = slice(None), int(c[0])
            self.cw["issued"][w] += k
            self.cw["active_lanes"][w] += k * c
            if kf:
                self.cw["predicated_on"][w] += kf * c

    def trace_issue(self, p: int, G: Group, on: Optional[Group]) -> None:
        w, _ = G.warps()
        masks = G.warp_masks()
        if on is None:
            pmask = masks
        else:
            pmask = np.zeros(w.size, np.uint32)
            if on.n:
                wo, _ = on.warps()
                pmask[np.searchsorted(w, wo)] = on.warp_masks()
        self.events.append((self.steps, p, w, masks, pmask))
