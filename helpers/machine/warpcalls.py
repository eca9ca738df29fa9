"""Warp-synchronous calls: how lanes meet at ``shfl.sync``, ``vote.sync``, ``match.sync``,
``redux.sync`` and ``bar.warp.sync``, and when such a call is undefined.

PTX ISA, Instruction Set: shfl.sync, bar.warp.sync, vote.sync, match.sync, redux.sync: a thread waits
until every non-exited lane named in its member mask waits at a *matching* instruction (same
operation and qualifiers, same mask); on sm_70+ that may be a different instruction
(``__syncwarp()``, or ``__shfl_sync(FULL, v, 0)``, on both sides of a branch), and the call is
defined: the sm_70 shuffle rule (PTX ISA shfl.sync, vote.sync: "the same instruction in convergence"
only for .target sm_6x or below, which the machine does not run; compute_70 is its floor, module.py).
When no thread can move, lanes waiting at non-matching
ones make the call undefined (``undefined_shuffle``; it then executes with those lanes as
non-callers). What a call computes once its lanes have met is :mod:`helpers.machine.warpsync`'s.
"""
from __future__ import annotations

import numpy as np

from helpers.machine import decode as dec
from helpers.machine.report import UnsupportedInstruction
from helpers.machine.scheduler import EXIT, Group, LANE, RUN, WS
from helpers.machine.warpsync import BadOperand


def _as_rows(x, nr: int, copy: bool) -> np.ndarray:
    """A per-thread operand of ``nr`` whole warps in order (an array, a scalar, or True) as (nr, 32)."""
    a = (np.broadcast_to(x, (nr * 32,)) if np.ndim(x) == 0 else x).reshape(nr, 32)
    return a.copy() if copy else a


def _at(cols, x: np.ndarray, nr: int) -> np.ndarray:
    """(nr, 32): the per-thread ``x`` of the same lanes ``cols`` of ``nr`` warps in place, 0 elsewhere."""
    a = np.zeros((nr, 32), x.dtype)
    a[:, cols] = x.reshape(nr, -1)
    return a


def _row_at(cols, x, nr: int) -> np.ndarray:
    """(nr, 32), read-only: ``x`` at lanes ``cols`` of every warp, 0 elsewhere (one row broadcast)."""
    row = np.zeros(32, np.asarray(x).dtype)
    row[cols] = x
    return np.broadcast_to(row, (nr, 32))


def _all(a: np.ndarray) -> bool:
    """``a.all()``, at the cost of one row when ``a`` is one row broadcast over the first axis."""
    return bool(a[0].all() if a.ndim == 2 and a.strides[0] == 0 else a.all())


def emulator_pack(bits: np.ndarray) -> np.ndarray:
    """(rows, 32) bool -> (rows,) int64 lane bitmask."""
    return (bits.astype(np.int64) << LANE).sum(axis=1)


class WarpCalls:
    """The part of :class:`helpers.machine.executor.Launch` that makes lanes meet at warp-synchronous
    calls (``ws_key``, ``ws_mask``, ``ws_mdef``, ``ws_since``) and writes back what they compute."""

    def _key(self, s: str) -> int:
        return self.key_ids.setdefault(s, len(self.key_ids))

    def ws_arrive(self, G: Group, p: int, op, moves_on: bool = False) -> np.ndarray:
        """The threads of G arrive at warp-synchronous instruction ``p``; returns those that executed
        it. ``moves_on``: when all of G executes it at once, the scheduler keeps going with G and
        keeps its PC itself."""
        m, md = op.ws_mask(G)
        m = np.asarray(m, np.uint32)   # a b32 operand: one value per thread, or one for all
        if (md is True or md.all()) and self._ws_fast(G, p, op, m):
            if not moves_on:
                G.put(self.pc, p + 1)
            return G.idx
        m = dec.per_thread(m, G.n).astype(np.int64)
        idx = G.idx
        self.wait_state()
        self.status[idx] = WS
        self.pc[idx] = p
        self.ws_since[idx] = self.steps
        self.last_effect[idx] = self.steps
        self.ws_key[idx] = self._key(op.ws_key)
        self.ws_mask[idx] = m
        if md is True:
            self.ws_mdef[idx] = True
        else:
            self.ws_mdef[idx] = md
        w, _ = G.warps()
        return self.ws_try(w)

    def _ws_fast(self, G: Group, p: int, op, m: np.ndarray) -> bool:
        """The common case: every lane the masks name is right here, with one mask per warp."""
        w, c = G.warps()
        full = G.full or bool((c == 32).all())
        if m.ndim == 0:
            m_first = np.full(w.size, m)
        elif full:
            m_first = m[::32]
            if m.strides != (0,) and not (m.reshape(-1, 32) == m_first[:, None]).all():
                return False
        elif G.cols() is not None:
            m_first = m[::int(c[0])]
            if m.strides != (0,) and not (m.reshape(w.size, -1) == m_first[:, None]).all():
                return False
        else:
            starts = np.zeros(c.size, np.int64)
            np.cumsum(c[:-1], out=starts[1:])
            m_first = m[starts]
            if m.strides != (0,) and not (m == np.repeat(m_first, c)).all():
                return False
        if full:
            callers = self._all_lanes(w.size)
            inv, lane = None, None
        else:
            # lanes named in a mask but not in the group must have exited
            outside = m_first.astype(np.int64) & ~G.warp_masks().astype(np.int64)
            if outside.any():
                alive = emulator_pack(self.status.reshape(-1, 32)[w] != EXIT)
                if ((outside & alive) != 0).any():
                    return False
            cols = G.cols()
            lane = None
            if cols is None:
                lane = G.idx & 31
                k = int(c[0])
                if (c == k).all() and (lane.reshape(-1, k) == lane[:k]).all():
                    cols = lane[:k]
            if cols is not None:
                # the same lanes of every warp (a partial warp's code in every warp): whole columns
                row = np.zeros(32, bool)
                row[cols] = True
                callers = np.broadcast_to(row, (w.size, 32))
                self._ws_rows(op, [(p, None, G)], w, m_first, np.ones(w.size, bool), callers, cols, None)
                return True
            inv = np.repeat(np.arange(w.size), c)
            callers = np.zeros((w.size, 32), bool)
            callers[inv, lane] = True
        self._ws_rows(op, [(p, None, G)], w, m_first, np.ones(w.size, bool), callers, inv, lane)
        return True

    def _all_lanes(self, rows: int) -> np.ndarray:
        """(rows, 32) True, read-only: every lane calls, or every operand is defined."""
        a = self._lanes_true.get(rows)
        if a is None:
            a = self._lanes_true[rows] = np.broadcast_to(np.ones(32, bool), (rows, 32))
        return a

    def ws_try(self, warps: np.ndarray) -> np.ndarray:
        st = self.status.reshape(-1, 32)[warps]
        waiting = st == WS
        has = waiting.any(axis=1)
        if not has.any():
            return np.zeros(0, np.int64)
        warps, st, waiting = warps[has], st[has], waiting[has]
        exited = st == EXIT
        key = self.ws_key.reshape(-1, 32)[warps]
        mask = self.ws_mask.reshape(-1, 32)[warps]
        first = np.argmax(waiting, axis=1)[:, None]
        k0 = np.take_along_axis(key, first, axis=1)
        m0 = np.take_along_axis(mask, first, axis=1)
        uniform = (waiting | exited).all(axis=1) & ((key == k0) | ~waiting).all(axis=1) & \
            ((mask == m0) | ~waiting).all(axis=1)
        complete = np.zeros(waiting.shape, bool)
        complete[uniform] = waiting[uniform]
        rest = ~uniform
        if rest.any():
            W_, K, M, E = waiting[rest], key[rest], mask[rest], exited[rest]
            req = ((M[:, :, None] >> LANE) & 1).astype(bool)
            same = W_[:, None, :] & (K[:, :, None] == K[:, None, :]) & (M[:, :, None] == M[:, None, :])
            ok = (~req | E[:, None, :] | same).all(axis=2) & W_
            complete[rest] = ok
        if not complete.any():
            return np.zeros(0, np.int64)
        tids = (warps[:, None] * 32 + LANE)[complete]
        self.ws_execute(tids)
        return tids

    def ws_execute(self, tids: np.ndarray, forced: bool = False) -> None:
        """Execute the waiting threads ``tids`` (they have met), grouped by instruction and mask."""
        keys = self.ws_key[tids]
        for k in np.unique(keys):
            tk = tids[keys == k]
            pcs = self.pc[tk]
            op0 = self.ops[int(pcs[0])]
            warp = tk >> 5
            lane = tk & 31
            rowkey = warp * (np.int64(1) << 33) + self.ws_mask[tk]
            urows, inv = np.unique(rowkey, return_inverse=True)
            nr = urows.size
            rmask = (urows & 0xFFFFFFFF).astype(np.uint32)
            rwarp = urows >> 33
            callers = np.zeros((nr, 32), bool)
            callers[inv, lane] = True
            mdef = np.ones(nr, bool)
            np.logical_and.at(mdef, inv, self.ws_mdef[tk])
            if op0.ws_compute is not None:
                mdef &= ~self._undefined_calls(op0, tk, pcs, inv, nr, rwarp, rmask, callers, forced)
            parts = []
            for p in np.unique(pcs):
                sel = pcs == p
                parts.append((int(p), sel, Group(tk[sel], self.T)))
            self._ws_rows(op0, parts, rwarp, rmask, mdef, callers, inv, lane)
            self.status[tk] = RUN
            self.pc[tk] = pcs + 1

    def _undefined_calls(self, op0, tk, pcs, inv, nr, rwarp, rmask, callers, forced: bool) -> np.ndarray:
        """(rows,) bool: the rows of a shfl/vote/match/redux that met although the call is undefined,
        reported once per instruction as ``undefined_shuffle``. Every result of such a row is
        undefined (as :func:`helpers.engine.emulator.call_defined` says for a lane alive elsewhere).

        The sm_70 shuffle rule: callers from *different* instructions (both arms of an ``if``, a
        helper inlined at two call sites) with the same qualifiers and mask meet and the call is
        defined. PTX ISA, Instruction Set, ``shfl.sync`` / ``vote.sync`` / ``match.sync`` /
        ``redux.sync``: the executing thread waits until all non-exited threads of membermask have
        executed the instruction "with the same qualifiers and same membermask value"; only "for
        .target sm_6x or below" must they "execute the same shfl.sync instruction in convergence"
        (vote.sync likewise), and the machine runs sm_70+ only (compute_70 is its floor, module.py).
        Undefined rows:

        * ``forced``: lanes named in the mask wait at a non-matching instruction (already reported);
        * a lane named in the mask was alive while the call waited for it, stored, performed an
          atomic or synchronised, and then exited without calling. (A lane whose remaining path to
          its exit has no effect anyone can observe, such as ``if (lane >= k) return;``, cannot be
          told from one that had exited before the call, and does not count.)
        """
        if forced:
            return np.ones(nr, bool)
        pmin = np.full(nr, np.iinfo(np.int64).max)
        np.minimum.at(pmin, inv, pcs)
        since = np.full(nr, np.iinfo(np.int64).max)
        np.minimum.at(since, inv, self.ws_since[tk])
        lanes = rwarp[:, None] * 32 + LANE
        named = ((rmask.astype(np.int64)[:, None] >> LANE) & 1).astype(bool)
        left = named & ~callers & (self.status[lanes] == EXIT) & (self.last_effect[lanes] >= since[:, None])
        busy = left.any(axis=1)
        if busy.any():
            r = int(np.flatnonzero(busy)[0])
            p0 = int(pmin[r])
            t0 = int(tk[(inv == r) & (pcs == p0)][0])
            gone = int(lanes[r][np.flatnonzero(left[r])[0]])
            msg = (f"{op0.ws_key} with member mask {int(rmask[r]):#010x} was called while lane {gone & 31}, which the "
                   f"mask names, did not join it (the lane was at another instruction, or at this one with "
                   f"another member mask) and exited afterwards. The Programming Guide "
                   f"defines no result for such a call (the GPU waits for the lane to exit): every result of "
                   f"this call is undefined")
            self.add_finding("undefined_shuffle", p0, msg, threads=(t0, gone), count=int(busy.sum()))
        return busy

    def _bad_width(self, parts, rwarp: np.ndarray, width: int, bad: np.ndarray) -> None:
        """Report a shuffle whose width is not a power of 2 from 1 to 32 (warpsync marks its results
        undefined): Programming Guide, "Warp Shuffle Functions". ``parts`` as for :meth:`_ws_rows`."""
        r, l = np.nonzero(bad)
        t0 = int(rwarp[r[0]] * 32 + l[0])
        p = next((pp for pp, _, Gp in parts if len(parts) == 1 or t0 in Gp.idx), parts[0][0])
        self.add_finding("undefined_shuffle", p,
                         f"a __shfl_*_sync with width {width}: the Programming Guide (Warp Shuffle Functions) says "
                         f"\"results are undefined if width is not a power of 2, or is a number greater than "
                         f"warpSize\", so every result of this call is undefined (use 1, 2, 4, 8, 16 or 32)",
                         threads=(t0,), count=int(r.size))

    def _ws_rows(self, op0, parts, rwarp, rmask, mdef, callers, inv, lane) -> None:
        """Compute one warp-synchronous operation over rows of (warp, mask); write each part back.

        ``parts``: (pc, selection of the row-ordered threads or None for all, Group). ``inv``/``lane``
        place each thread in its row; None when every row is a whole warp in order; ``lane`` None
        and ``inv`` the lanes when every row holds the same lanes, in order (one part, all of it).
        """
        nr = rwarp.size
        # a calling lane must be named in its own mask (Programming Guide, "Warp Shuffle Functions")
        if (rmask == 0xFFFFFFFF).all():
            selfless = np.zeros(1, bool)
        else:
            named = ((rmask.astype(np.int64)[:, None] >> LANE) & 1).astype(bool)
            selfless = callers & ~named
        if selfless.any():
            r, l = np.nonzero(selfless)
            t0 = int(rwarp[r[0]] * 32 + l[0])
            self.add_finding("undefined_shuffle", parts[0][0],
                             f"lane {l[0]} executes {op0.ws_key} with a member mask ({rmask[r[0]]:#010x}) that "
                             f"does not name it: undefined", threads=(t0,), count=int(selfless.sum()))
        if op0.ws_compute is None:  # bar.warp.sync: ordering only
            self.syncwarp_clocks(rwarp, callers)
        else:
            inputs = None
            for p, sel, Gp in parts:
                whole = lane is None and inv is not None and not self.trace_on and nr * 32 == self.T
                if whole:
                    # the same lanes of every warp of the launch: each operand read as whole warps, (rows, 32) views.
                    # What the other lanes hold is no operand: every compute looks at calling lanes only
                    # (the trace, which shows what each lane sent, reads the group alone)
                    Gp = Group(self.arange[:self.T], self.T)
                vals = self.ops[p].ws_read(Gp)
                if inv is None or whole:
                    # whole warps in order: the operands as (rows, 32) views, copied only for the trace,
                    # which keeps them while the registers change
                    inputs = [(_as_rows(v, nr, self.trace_on),
                               self._all_lanes(nr) if d is True else _as_rows(d, nr, self.trace_on)) for v, d in vals]
                    continue
                if lane is None:
                    # one value for every caller (a uniform register) is one row for every warp, and
                    # an operand defined for every caller is defined where ``callers`` is
                    inputs = [(_row_at(inv, v, nr) if np.ndim(v) == 0 else _at(inv, v, nr),
                               callers if d is True else _at(inv, d, nr)) for v, d in vals]
                    continue
                if inputs is None:
                    inputs = [(np.zeros((nr, 32), np.asarray(v).dtype), np.zeros((nr, 32), bool)) for v, _ in vals]
                for (mv, md), (v, d) in zip(inputs, vals):
                    ri, li = (inv, lane) if sel is None else (inv[sel], lane[sel])
                    mv[ri, li] = v
                    md[ri, li] = d
            try:
                outs, extra = op0.ws_compute(inputs, callers, rmask, mdef)
            except BadOperand as exc:
                raise UnsupportedInstruction(op0.instr.text, op0.instr.loc, str(exc)) from None
            if extra.get("bad_width") is not None:
                self._bad_width(parts, rwarp, *extra["bad_width"])
            for p, sel, Gp in parts:
                made = None
                if inv is None:
                    # a result defined in every lane is written as such (the register keeps no array for it)
                    res = [(None, None) if ov is None else
                           (ov[0, 0], True) if ov.strides == (0, 0) and _all(od) else
                           (ov.reshape(-1), True if _all(od) else od.reshape(-1))
                           for ov, od in outs]
                    # results the compute just made, which the trace does not keep: the registers may keep them
                    made = not self.trace_on and all(ov is None or (ov.base is None and ov.flags.c_contiguous)
                                                     for ov, _ in outs)
                elif lane is None:
                    # the group's columns, (rows, lanes): registers of a group of every warp take them
                    # by column as they are, unless a tainted thread's definedness is to be combined
                    by_cols = Gp.cols() is not None and not self.any_tainted
                    flat = (lambda x: x) if by_cols else (lambda x: x.reshape(-1))
                    res = [(None, None) if ov is None else
                           (flat(ov[:, inv]), True if _all(od[:, inv]) else flat(od[:, inv]))
                           for ov, od in outs]
                else:
                    ri, li = (inv, lane) if sel is None else (inv[sel], lane[sel])
                    res = [(None, None) if ov is None else (ov[ri, li], od[ri, li]) for ov, od in outs]
                self.ops[p].ws_write(Gp, res, made)
            if self.trace_on:
                self.ws_events.append((self.steps, op0.ws_key, [p for p, _, _ in parts], rwarp, callers, rmask,
                                       outs, extra))
        for p, sel, Gp in parts:
            self.count_ws(p, Gp)
