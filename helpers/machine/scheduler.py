"""Threads and their states, the groups the scheduler runs, and what it does when no thread can move.

Independent thread scheduling (CUDA C++ Programming Guide, "Independent Thread Scheduling", Volta+):
every thread has its own PC and a state (``RUN``, waiting at a barrier ``BAR``, waiting at a
warp-synchronous call ``WS``, ``EXIT``). The run loop (:meth:`helpers.machine.executor.Launch.run`)
takes the lowest PC among runnable threads and executes it for a :class:`Group`, every runnable thread
at that PC across all warps and blocks at once; a group that loops while others could run hands them
turns (:meth:`Scheduler.owed_turns`, fair scheduling). An exited lane is not a diverged lane: lanes a partial
last warp lacks never exist and behave as exited.
"""
from __future__ import annotations

from typing import Optional

import numpy as np


RUN, BAR, WS, EXIT = 0, 1, 2, 3


LANE = np.arange(32, dtype=np.int64)


class Group:
    """Threads executing one instruction together: sorted linear thread ids (``idx``)."""

    __slots__ = ("idx", "n", "full", "sel", "total", "_warps", "_counts", "_lm", "_cols")

    def __init__(self, idx: np.ndarray, total: int) -> None:
        self.idx = idx
        self.n = idx.size
        self.total = total
        self.full = self.n == total
        self.sel = slice(None) if self.full else idx
        self._warps = None
        self._counts = None
        self._lm = None
        self._cols = False    # not looked at yet

    def sub(self, keep: np.ndarray, total: int) -> "Group":
        return Group(self.idx[keep], total)

    def cols(self) -> Optional[slice]:
        """The lanes when the group is the same consecutive lanes of every warp of the launch (a
        partial warp's code, such as ``if (lane < k)``, run by every warp), else None."""
        if self._cols is False:
            self._cols = None
            nw = self.total >> 5
            if not self.full and self.n and nw and self.n % nw == 0:
                k = self.n // nw
                lo = int(self.idx[0])
                if lo + k <= 32 and int(self.idx[k - 1]) == lo + k - 1:
                    rows = self.idx.reshape(nw, k)
                    # rows of consecutive lanes, each row starting at lane lo of the next warp
                    if ((rows[:, -1] - rows[:, 0]) == k - 1).all() and \
                            (rows[:, 0] == np.arange(lo, self.total, 32)).all():
                        self._cols = slice(lo, lo + k)
        return self._cols

    def take(self, a: np.ndarray) -> np.ndarray:
        """``a[idx]`` of a per-thread array: a view for every thread (never ``a`` itself, which a
        register could then take as a result of its own), else a copy (by columns when the group
        holds the same lanes of every warp, faster than an index per thread)."""
        if self.full:
            return a[:]
        c = self.cols()
        if c is None:
            return a[self.idx]
        return a.reshape(-1, 32)[:, c].reshape(-1)

    def put(self, a: np.ndarray, v) -> None:
        """``a[idx] = v`` of a per-thread array (``v``: one value or one per thread of the group)."""
        c = None if self.full else self.cols()
        if c is None:
            a[self.sel] = v
        else:
            a.reshape(-1, 32)[:, c] = np.reshape(v, (-1, c.stop - c.start)) if np.ndim(v) else v

    def warps(self) -> tuple[np.ndarray, np.ndarray]:
        if self._warps is None:
            if self.full:   # every thread of the launch: whole warps in order
                self._warps = self.idx[::32] >> 5
                self._counts = np.full(self._warps.size, 32)
                return self._warps, self._counts
            c = self.cols()
            if c is not None:    # every warp, the same lanes
                self._warps = np.arange(self.total >> 5)
                self._counts = np.full(self._warps.size, c.stop - c.start)
                return self._warps, self._counts
            w = self.idx >> 5
            if self.n == 0:
                self._warps, self._counts = w, w
            elif w[0] == w[-1] - self.n // 32 + 1 and self.n % 32 == 0 and \
                    (self.n == 32 or (w[31::32] == w[::32]).all()):
                self._warps = w[::32]  # whole warps in order
                self._counts = np.full(self._warps.size, 32)
            else:
                brk = np.empty(self.n, bool)
                brk[0] = True
                np.not_equal(w[1:], w[:-1], out=brk[1:])
                starts = np.flatnonzero(brk)
                self._warps = w[starts]
                ends = np.empty(starts.size, np.int64)
                ends[:-1] = starts[1:]
                ends[-1] = self.n
                self._counts = ends - starts
        return self._warps, self._counts

    def warp_masks(self) -> np.ndarray:
        """Per warp of the group: the bitmask of its lanes in the group."""
        w, _ = self.warps()
        if self._lm is None:
            c = self.cols()
            if c is not None:
                self._lm = np.full(w.size, ((1 << c.stop) - 1) ^ ((1 << c.start) - 1), np.uint32)
                return self._lm
            inv = np.searchsorted(w, self.idx >> 5)
            self._lm = np.bincount(inv, weights=(np.int64(1) << (self.idx & 31)).astype(np.float64),
                                   minlength=w.size).astype(np.int64).astype(np.uint32)
        return self._lm

    def lane_masks_per_thread(self) -> np.ndarray:
        w, _ = self.warps()
        inv = np.searchsorted(w, self.idx >> 5)
        return self.warp_masks()[inv]


class Scheduler:
    """The part of :class:`helpers.machine.executor.Launch` that handles exits and stalls: exits
    release barriers and warp-synchronous calls (PTX ISA, exit); when no thread can move, an undefined
    warp-synchronous call is forced or the launch is a deadlock. It makes the state that threads waiting
    at barriers and warp-synchronous calls need (:meth:`wait_state`)."""

    def wait_state(self) -> None:
        """What threads waiting at barriers and warp-synchronous calls need, once one does."""
        if self.bar_id is not None:
            return
        T = self.T
        self.bar_id = np.zeros(T, np.int64)
        self.bar_cnt = np.full(T, -1, np.int64)
        self.bar_pred = np.zeros(T, bool)
        self.bar_pred_def = np.ones(T, bool)
        self.ws_key = np.full(T, -1, np.int64)
        self.ws_mask = np.zeros(T, np.int64)
        self.ws_mdef = np.ones(T, bool)
        self.ws_since = np.zeros(T, np.int64)     # the step a thread began waiting at a warp-sync call

    def on_exit(self, G: Group) -> None:
        G.put(self.status, EXIT)
        # only threads waiting somewhere can be released by these exits
        if (self.status == BAR).any():
            ctas = np.unique(G.idx // self.TPC)
            if (self.status.reshape(self.ncta, self.TPC)[ctas] == BAR).any():
                self.bar_try(ctas)
        if (self.status == WS).any():
            w, _ = G.warps()
            if (self.status.reshape(-1, 32)[w] == WS).any():
                self.ws_try(w)

    def first_cta(self) -> int:
        """With ``serial``, the CTA that runs: the first one that has not exited."""
        return int(np.argmax(self.status != EXIT)) // self.TPC

    def owed_turns(self, G: Group) -> list:
        """Fair scheduling: one turn for every runnable thread outside ``G``, grouped by PC (a list,
        the lowest PC last, for :meth:`list.pop`).

        ``G`` has run a loop for many iterations while those threads, at other PCs, did not move;
        lowest-PC-first alone would run ``G`` for ever when it spins on something one of them sets.
        Independent thread scheduling (CUDA C++ Programming Guide, "Independent Thread Scheduling",
        Volta+) guarantees forward progress to every thread of a warp, so a starvation-free
        algorithm (a lane spinning on a flag another lane sets later in program order, a lock taken
        by the lanes of a warp in turn) finishes; blocks resident together each make progress too,
        so a lock handed from block to block finishes. A turn runs its group until it takes a
        loop's back edge, waits, exits or breaks up; then lowest-PC-first resumes. A program that
        hangs on a GPU still never ends here (``StepLimit``, or ``deadlock`` when nothing can move)."""
        others = self.status == RUN
        others[G.idx] = False
        t = np.flatnonzero(others)
        if self.serial and t.size:
            t = t[t // self.TPC == self.first_cta()]
        if not t.size:
            return []
        pcs = self.pc[t]
        order = np.argsort(-pcs, kind="stable")
        t, pcs = t[order], pcs[order]
        cut = np.flatnonzero(pcs[1:] != pcs[:-1]) + 1
        return np.split(t, cut)

    def resolve_stall(self) -> bool:
        """No thread can move. Force undefined warp-synchronous calls, or report a deadlock."""
        ws_wait = np.flatnonzero(self.status == WS)
        progressed = False
        for w in np.unique(ws_wait >> 5):
            lanes = w * 32 + LANE
            st = self.status[lanes]
            waiting = st == WS
            if not waiting.any():
                continue
            wl = lanes[waiting]
            t0 = wl[np.argmin(self.pc[wl])]
            k, m = self.ws_key[t0], self.ws_mask[t0]
            members = wl[(self.ws_key[wl] == k) & (self.ws_mask[wl] == m)]
            named = lanes[((m >> LANE) & 1).astype(bool) & (st != EXIT)]
            missing = np.setdiff1d(named, members)
            if missing.size and (self.status[missing] == WS).all():
                other = int(missing[0])
                self.add_finding("undefined_shuffle", int(self.pc[t0]),
                                 f"lanes named in the member mask ({int(m):#010x}) wait at a different "
                                 f"warp-synchronous instruction ({self.where(int(self.pc[other]))}: "
                                 f"{self.fn.instrs[int(self.pc[other])].text}); the call is undefined and its "
                                 f"results from those lanes are undefined",
                                 threads=(int(t0), other), count=int(missing.size), other_pc=int(self.pc[other]))
                self.ws_execute(members, forced=True)
                progressed = True
        if progressed:
            return True
        self._deadlock()
        return False

    def _deadlock(self) -> None:
        stuck = np.flatnonzero((self.status == BAR) | (self.status == WS))
        t0 = int(stuck[0])
        what = []
        for s, name in ((BAR, "a barrier"), (WS, "a warp-synchronous instruction")):
            ts = stuck[self.status[stuck] == s]
            if ts.size:
                what.append(f"{ts.size} thread(s) wait at {name} ({self.where(int(self.pc[ts[0]]))})")
        # a warp part of which waits at a barrier while its other live lanes wait elsewhere
        for w in np.unique(stuck >> 5):
            lanes = w * 32 + LANE
            st = self.status[lanes]
            if (st == BAR).any() and ((st != BAR) & (st != EXIT)).any():
                tb = int(lanes[st == BAR][0])
                to = int(lanes[(st != BAR) & (st != EXIT)][0])
                self.add_finding("divergent_barrier", int(self.pc[tb]),
                                 f"only some lanes of a warp reached this barrier; lane {to & 31} waits at "
                                 f"{self.where(int(self.pc[to]))}", threads=(tb, to), other_pc=int(self.pc[to]))
                break
        self.add_finding("deadlock", int(self.pc[t0]),
                         "no thread can move: " + "; ".join(what) + ". On a GPU the launch would hang; "
                         "every output is undefined", threads=(t0,), count=int(stuck.size))
        self.gspace.defined[:] = False
        self.deadlocked = True
