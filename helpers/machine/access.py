"""Loads and stores: address resolution, bounds and alignment, definedness, and the race checks of
every access, with a fast path for whole warps reading or writing consecutive words of one array.

An address resolves to a state space (generic addresses through their windows), is checked for
natural alignment (PTX ISA 6.4.1 "Addresses as Operands") and bounds, and becomes flat byte indices
into a :class:`helpers.machine.memory.Space`. Each access of global or shared memory is checked
against the space's records (:mod:`helpers.machine.races`) and then recorded.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from helpers.machine import decode as dec
from helpers.machine import memory as mem
from helpers.machine.memory import NREC, PC, TID
from helpers.machine.ptx import type_size
from helpers.machine.races import undefine
from helpers.machine.registers import Affine
from helpers.machine.scheduler import Group


ONES = {1: np.uint8(1), 2: np.uint16(0x0101), 4: np.uint32(0x01010101), 8: np.uint64(0x0101010101010101)}


def _per_thread(addr):
    """Addresses as :meth:`Launch.address_reader` gives them, an :class:`Affine` rule made its int64
    array (one per thread of the launch)."""
    return addr.array().view(np.int64) if type(addr) is Affine else addr


class Access:
    """The part of :class:`helpers.machine.executor.Launch` that executes ``ld``/``st``: :meth:`load`,
    :meth:`store` and their word-run forms. It reads and writes the spaces :mod:`helpers.machine.layout`
    made and checks them through :mod:`helpers.machine.races`."""

    def resolve(self, G: Group, ins, space: Optional[str], addr, adef, nbytes: int, what: str,
                 quiet: bool = False):
        """Yield (Space, positions in G, flat byte indices, state-space addresses, address defined)
        for the accesses that can be made; report the others (unless ``quiet``)."""
        report = (lambda *x, **k: None) if quiet else self.add_finding
        n = G.n
        addr = dec.per_thread(np.asarray(_per_thread(addr)).astype(np.int64, copy=False), n)
        valid = np.ones(n, bool)
        undef = None
        if adef is not True and not adef.all():
            undef = ~dec.defined_per_thread(adef, n)
            report("uninitialized", ins.index,
                             f"{what} at an address computed from an undefined value: the machine uses the value "
                             f"it computed and marks the data undefined; on a GPU the access could go anywhere",
                             threads=G.idx[undef][:2], count=int(undef.sum()))
        if space is None:
            seg = addr >> mem.SEG_SHIFT
            cls = np.where(seg == mem.SHARED_WINDOW >> mem.SEG_SHIFT, 1,
                           np.where(seg == mem.LOCAL_WINDOW >> mem.SEG_SHIFT, 2,
                                    np.where(seg == mem.CONST_WINDOW >> mem.SEG_SHIFT, 3,
                                             np.where(seg == mem.PARAM_WINDOW >> mem.SEG_SHIFT, 4, 0))))
            names = ("global", "shared", "local", "const", "param")
            windows = (0, mem.SHARED_WINDOW, mem.LOCAL_WINDOW, mem.CONST_WINDOW, mem.PARAM_WINDOW)
        else:
            cls = None
        mis = ((addr & (nbytes - 1)) if nbytes & (nbytes - 1) == 0 else (addr % nbytes)) != 0
        if undef is not None and (mis & undef).any():
            valid &= ~(mis & undef)  # an undefined address is not reported again as misaligned
            mis &= ~undef
        if mis.any() and valid[mis].any():
            m = mis & valid
            report("misaligned", ins.index,
                             f"{what} of {nbytes} bytes at an address that is not a multiple of {nbytes} "
                             f"(PTX ISA 6.4.1 \"Addresses as Operands\": natural alignment is required, otherwise "
                             f"the behaviour is undefined: the access may fault or silently round the address down)",
                             threads=G.idx[m][:2], count=int(m.sum()), address=int(addr[m][0]))
            valid &= ~mis
        spaces = [space] if space is not None else [names[c] for c in np.unique(cls[valid])] if valid.any() else []
        for sp in spaces:
            if cls is None:
                if valid.all():
                    pos, a = self.arange[:n], addr
                else:
                    pos = np.flatnonzero(valid)
                    a = addr[pos]
            else:
                c = names.index(sp)
                pos = np.flatnonzero(valid & (cls == c))
                a = addr[pos] - windows[c]
            if pos.size == 0:
                continue
            tids = G.idx if pos.size == n else G.idx[pos]
            if sp == "global" and (one := self._one_allocation(a, nbytes)) is not None:
                ok, flat, obj = True, a + one, self.gspace
            elif sp == "global":
                seg = (a >> mem.SEG_SHIFT) - mem.GLOBAL_SEG0
                base, size, start = self.gtab
                known = (seg >= 0) & (seg < len(self.glayout.allocs))
                segc = np.where(known, seg, 0)
                off = a - base[segc]
                ok = known & (off >= 0) & (off + nbytes <= size[segc])
                flat = start[segc] + off
                obj = self.gspace
            elif sp == "shared":
                ok = (a >= 0) & (a + nbytes <= self.S_total)
                flat = (tids // self.TPC) * self.S_stride + a
                obj = self.sspace
            elif sp == "local":
                ok = (a >= 0) & (a + nbytes <= self.L_total)
                flat = tids * self.L_stride + a
                obj = self.lspace
            elif sp == "param":
                ok = (a >= 0) & (a + nbytes <= self.pspace.size)
                flat = a
                obj = self.pspace
            else:
                ok = (a >= 0) & (a + nbytes <= self.cspace.size)
                flat = a
                obj = self.cspace
            if ok is not True and not ok.all():
                bad = ~ok
                if undef is not None:
                    bad &= ~undef[pos]  # out of bounds because the address is undefined: skipped quietly
                if bad.any():
                    report("out_of_bounds", ins.index, self.oob_message(what, sp, a[bad][0], nbytes),
                                     threads=tids[bad][:2], count=int(bad.sum()), key_extra=(sp,), space=sp,
                                     address=int(a[bad][0]))
                pos, flat, a = pos[ok], flat[ok], a[ok]
            if pos.size:
                yield obj, pos, flat, a, (None if undef is None else ~undef[pos])

    def _one_allocation(self, a: np.ndarray, nbytes: int) -> Optional[int]:
        """When every global address of ``a`` (accesses of ``nbytes``) lies inside one allocation (the
        usual case: a warp's threads index one array), what turns them into flat byte indices."""
        return self.allocation_span(int(a.min()), int(a.max()), nbytes)

    def allocation_span(self, lo: int, hi: int, nbytes: int) -> Optional[int]:
        """:meth:`_one_allocation` of accesses of ``nbytes`` from address ``lo`` to ``hi``."""
        i = (lo >> mem.SEG_SHIFT) - mem.GLOBAL_SEG0
        if i != (hi >> mem.SEG_SHIFT) - mem.GLOBAL_SEG0 or not 0 <= i < len(self.glayout.allocs):
            return None
        al = self.glayout.allocs[i]
        if lo < al.base or hi + nbytes > al.base + al.nbytes:
            return None
        return al.start - al.base

    def load(self, G: Group, ins, space, addr, adef, t: str, vec: int, read_only: bool = False):
        """What the threads of G read: values and definedness shaped (G.n, vec); a parameter or
        constant that every thread reads at one address comes back once, (1, vec), with True for
        its definedness when all of it is defined."""
        es = type_size(t)
        nbytes = es * vec
        dt = np.dtype(dec.NP[t])
        ut = dec.UINT[es]
        if type(addr) is Affine:
            if nbytes == 4 and not read_only and (run := self.affine_run(G, ins, space, addr)) is not None:
                raw, d = self.load_run(G, ins, run)
                return raw.view(dt)[:, None], d[:, None]
            addr = _per_thread(addr)
        if np.ndim(addr) == 0 and adef is True and space in ("param", "const"):
            sp = self.pspace if space == "param" else self.cspace
            a = int(addr)
            if a % nbytes == 0 and 0 <= a <= sp.size - nbytes:
                # one address for every thread (a kernel parameter): read it once
                d = sp.defined[a:a + nbytes].view(ut) == ONES[es]
                return sp.data[a:a + nbytes].view(dt)[None, :], (True if d.all() else d[None, :])
        if nbytes == 4 and not read_only and (run := self.word_run(G, ins, space, addr, adef)) is not None:
            raw, d = self.load_run(G, ins, run)
            return raw.view(dt)[:, None], d[:, None]
        vals = dfn = None
        for sp, pos, flat, a, aok in self.resolve(G, ins, space, addr, adef, nbytes, "read"):
            k = flat // es
            idx = k if vec == 1 else k[:, None] + np.arange(vec)
            raw = sp.data.view(ut)[idx]
            d = sp.defined.view(ut)[idx] == ONES[es]
            if sp.written is not None:
                wr = sp.written.view(ut)[idx] == ONES[es]
                if not wr.all():
                    bad = ~wr if vec == 1 else ~wr.all(axis=1)
                    self.add_finding("uninitialized", ins.index,
                                     f"read of {sp.name} memory that no thread has written "
                                     f"({self.describe(sp.name, int(a[bad][0]))}): its value is undefined",
                                     threads=G.idx[pos[bad]][:2], count=int(bad.sum()), space=sp.name)
            if sp.W is not None:
                tids = G.idx if pos.size == G.n else G.idx[pos]
                words, bm, eidx = self.words_of(flat, nbytes)
                wt = tids if eidx is None else tids[eidx]
                if read_only and sp is self.gspace:
                    d = self._noncoherent(ins, sp, words, wt, eidx, pos.size, vec, d)
                hit = self.conflicts(sp, ins, "RAW", sp.W, wt, bm, words)
                if hit is not None:
                    changed = hit[0][sp.w_chg[words[hit[0]]]]
                    if changed.size:
                        d = undefine(d, changed, eidx, pos.size, vec)
                if ins.index in self.racy_by_pc:
                    mark = np.isin(tids, self.racy_by_pc[ins.index])
                    if mark.any():
                        d = d & (~mark if vec == 1 else ~mark[:, None])
                if self.strong[ins.index] and not read_only:
                    d = self.strong_over_undefined(sp, ins, words, wt, bm, eidx, pos.size, vec, d)
                if not read_only:
                    if not sp.R1.empty:
                        r1t = sp.R1.tids(words)
                        shift = (r1t >= 0) & (r1t != wt)
                        if shift.any():
                            sp.R2.copy_from(sp.R1, words[shift])
                    self.put_record(sp.R1, words, wt, ins.index, bm)
                    last = sp.last_of(words)
                    if last is not None:
                        dup = np.flatnonzero(last != np.arange(words.size))
                        self.put_record(sp.R2, words[dup], wt[dup], ins.index, None if bm is None else bm[dup])
            if self.strong[ins.index] and sp.W is not None:
                stale = self.strong_sync(sp, G.idx[pos], flat, ins, write=False)
                if stale is not None:
                    j = int(np.flatnonzero(stale)[0])
                    self.report_stale(sp, ins, int(G.idx[pos][j]), int(flat[j]) // 4, count=int(stale.sum()))
                    d = d & (~stale if vec == 1 else ~stale[:, None])
            self.count_mem(sp, G, ins, pos, flat, a, nbytes)
            if aok is not None:
                d = d & (aok if vec == 1 else aok[:, None])
            if self.trace_on:
                self.trace_mem("ld", sp, ins, G.idx[pos], flat, es, raw, d)
            if vec == 1:
                raw, d = raw[:, None], d[:, None]
            if pos.size == G.n:
                vals, dfn = raw.view(dt), d
            else:
                if vals is None:
                    vals, dfn = np.zeros((G.n, vec), dt), np.zeros((G.n, vec), bool)
                vals[pos] = raw.view(dt)
                dfn[pos] = d
        if vals is None:
            vals, dfn = np.zeros((G.n, vec), dt), np.zeros((G.n, vec), bool)
        return vals, dfn

    def _noncoherent(self, ins, sp: mem.Space, words, wt, eidx, n: int, vec: int, d: np.ndarray) -> np.ndarray:
        """``ld.global.nc`` (``__ldg``, or a ``const __restrict__`` pointer) of words stored or updated
        by an atomic during this launch: PTX ISA 8.1 "Scope and applicability of the model": the
        memory consistency model does not apply to the non-coherent texture path (ld.global.nc), and
        PTX ISA, ld: .nc is for data read-only for the kernel's lifetime. No fence orders such a read
        after the write, so its value is undefined (``d`` marked)."""
        hit = sp.W.tids(words) >= 0
        if self.last_atom:
            hit |= np.isin(words, np.fromiter(self.last_atom, np.int64, len(self.last_atom)))
        if not hit.any():
            return d
        i = int(np.flatnonzero(hit)[0])
        w_tid, w_pc = (int(x) for x in sp.W.rows(words[i:i + 1])[0, [TID, PC]])
        by = (f"thread {self.tdesc(w_tid)} wrote it at {self.where(w_pc)}" if w_tid >= 0
              else f"thread {self.tdesc(self.last_atom[int(words[i])][0])} updated it with an atomic at "
                   f"{self.where(self.last_atom[int(words[i])][1])}")
        self.add_finding(
            "race", ins.index,
            f"read through the non-coherent read-only path (ld.global.nc: __ldg, or a const __restrict__ "
            f"pointer) of global memory written in this launch ({self.describe_flat(sp, int(words[i]) * 4)}): "
            f"{by}, thread {self.tdesc(int(wt[i]))} read it at {self.where(ins.index)}. The memory consistency "
            f"model does not apply to ld.global.nc and fences do not order it (PTX ISA 8.1), so it may return "
            f"the old value (fix: a plain load, e.g. no __ldg and no const __restrict__ on that pointer)",
            threads=(int(wt[i]),), count=int(hit.sum()),
            other_pc=w_pc if w_tid >= 0 else self.last_atom[int(words[i])][1],
            key_extra=("nc",), hazard="RAW", space="global", between="non-coherent")
        return undefine(d, hit, eidx, n, vec)

    def store(self, G: Group, ins, space, addr, adef, t: str, vec: int, vals: np.ndarray, defs: np.ndarray) -> None:
        es = type_size(t)
        nbytes = es * vec
        ut = dec.UINT[es]
        G.put(self.last_effect, self.steps)
        if self.any_tainted:
            defs = defs & ~self.tainted[G.idx][:, None]
        if self.sem[ins.index][0]:   # st.release: as if a release fence came just before it (PTX ISA, Release and Acquire Patterns)
            for t in G.idx.tolist():
                self.release_by(t, self.sem[ins.index][2])
        if type(addr) is Affine:
            if nbytes == 4 and (run := self.affine_run(G, ins, space, addr)) is not None:
                self.store_run(G, ins, run, vals[:, 0].view(np.uint32), defs[:, 0].copy())
                return
            addr = _per_thread(addr)
        if nbytes == 4 and (run := self.word_run(G, ins, space, addr, adef)) is not None:
            self.store_run(G, ins, run, vals[:, 0].view(np.uint32), defs[:, 0].copy())
            return
        for sp, pos, flat, a, aok in self.resolve(G, ins, space, addr, adef, nbytes, "write"):
            if self.strong[ins.index] and sp.W is not None:
                self.strong_sync(sp, G.idx[pos], flat, ins, write=True)
            k = flat // es
            idx = k[:, None] + np.arange(vec) if vec > 1 else k
            view = sp.data.view(ut)
            allpos = pos.size == G.n
            new = (vals if allpos else vals[pos]).view(ut)
            d = (defs if allpos else defs[pos]).copy()
            if vec == 1:
                new, d = new[:, 0], d[:, 0]
            if aok is not None:
                d &= aok if vec == 1 else aok[:, None]
            if sp.W is not None:
                old = view[idx]
                # A load racing with this store may read the bytes before it or after it (PTX ISA 8
                # "Memory Consistency Model": a data race orders nothing), so the store "changes" the
                # value for a racing reader or writer when the bits differ OR the old bytes were
                # undefined (never written, or written undefined): then either outcome may be garbage.
                old_def = sp.defined.view(ut)[idx] == ONES[es]
                chg_el = (old != new) | ~old_def if vec == 1 else ((old != new) | ~old_def).any(axis=1)
                und_el = ~old_def if vec == 1 else (~old_def).any(axis=1)
                tids = G.idx if pos.size == G.n else G.idx[pos]
                words, bm, eidx = self.words_of(flat, nbytes)
                wt = tids if eidx is None else tids[eidx]
                chg = chg_el if eidx is None else chg_el[eidx]
                hit = self.conflicts(sp, ins, "WAW", sp.W, wt, bm, words)
                if hit is not None:
                    lc = hit[0][chg[hit[0]]]
                    if lc.size:
                        d = undefine(d, lc, eidx, pos.size, vec)
                for R in (sp.R1, sp.R2):   # the reads of these words: checked, then forgotten
                    present = None if R.empty else np.flatnonzero(R.tids(words) >= 0)
                    if present is None or present.size == 0:
                        continue
                    self.check_war(sp, ins, R, wt, bm, words, present, chg)
                # two threads of this group writing the same bytes
                keyw = flat if nbytes < 4 else flat >> 2
                last = sp.last_of(keyw)
                if last is not None:
                    i = np.flatnonzero(last != np.arange(keyw.size))
                    fake = np.zeros((i.size, NREC), np.int32)
                    fake[:, TID] = tids[i]
                    fake[:, PC] = ins.index
                    self.report_race(sp, ins, "WAW", tids[last[i]], fake, np.ones(i.size, bool),
                               keyw[i] if nbytes >= 4 else keyw[i] // 4)
                    ni, nl = (new[i], new[last[i]]) if vec == 1 else (new[i].T, new[last[i]].T)
                    differ = (np.atleast_2d(ni != nl)).any(axis=0)
                    if differ.any():
                        d[last[i][differ]] = False
                self.put_record(sp.W, words, wt, ins.index, bm)
                sp.w_chg[words] = chg
                sp.w_undef[words] = und_el if eidx is None else und_el[eidx]
            view[idx] = new
            sp.defined.view(ut)[idx] = ONES[es] if d.all() else np.where(d, ONES[es], ut(0))
            if sp.written is not None:
                sp.written.view(ut)[idx] = ONES[es]
            self.count_mem(sp, G, ins, pos, flat, a, nbytes)
            if self.trace_on:
                self.trace_mem("st", sp, ins, G.idx[pos], flat, es, new, d)

    def word_run(self, G: Group, ins, space: Optional[str], addr, adef):
        """The global words (indices into the global space's 4-byte words) that the threads of G
        access when they are aligned 4-byte words inside one allocation, with defined addresses, no
        trace kept and no strong (ordering) access, and either consecutive in thread order (then the
        first word, an int) or, for the same lanes of every warp, each thread's word at its offset
        from the first thread (then one word per thread); None otherwise."""
        n = G.n
        if space != "global" or self.trace_on or self.strong[ins.index] or np.shape(addr) != (n,):
            return None
        a = addr
        a0, a1 = int(a[0]), int(a[-1])
        if a0 & 3 or not (adef is True or adef.all()):
            return None
        if a1 - a0 == 4 * (n - 1):
            one = self.allocation_span(a0, a1, 4)
            if one is None or (n > 1 and not ((a[1:] - a[:-1]) == 4).all()):
                return None
            return (a0 + one) >> 2
        t0 = int(G.idx[0])
        if G.cols() is None or a1 - a0 != 4 * (int(G.idx[-1]) - t0):
            return None
        one = self.allocation_span(a0, a1, 4)
        if one is None or not (a.astype(np.int64, copy=False) - 4 * G.idx == a0 - 4 * t0).all():
            return None
        return ((a0 + one) >> 2) - t0 + G.idx

    def affine_run(self, G: Group, ins, space: Optional[str], addr: Affine) -> Optional[int]:
        """:meth:`word_run` of addresses that are a rule: the first global word when every thread of
        the launch accesses the 4-byte word 4 bytes past the previous thread's (``addr`` steps 4
        bytes a thread slot and, from block to block, 4 bytes a slot of the block before), all of
        them aligned and inside one allocation, with no trace kept and no strong access; else None.
        Nothing per thread is computed: the first and last addresses bound the run."""
        if space != "global" or self.trace_on or self.strong[ins.index] or not G.full:
            return None
        a = addr.within(0, (1 << 63) - 1)     # as load and store read addresses: int64
        if a is None or a.loc != 4 or (a.cta != 4 * a.tpc and a.ncta > 1):
            return None
        a0, a1 = a.span
        one = self.allocation_span(a0, a1, 4)
        if a0 & 3 or one is None:
            return None
        return (a0 + one) >> 2

    @staticmethod
    def _present(recs: mem.Records, sl: slice) -> Optional[np.ndarray]:
        """Positions in the run ``sl`` that hold a record of ``recs`` (None: none do)."""
        if recs.empty:
            return None
        present = np.flatnonzero(recs.cols[TID][sl] >= 0)
        return present if present.size else None

    def load_run(self, G: Group, ins, run) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`load` of a word run (:meth:`word_run`): the raw words read and whether each is defined."""
        sp, n, tids = self.gspace, G.n, G.idx
        sl = run if isinstance(run, np.ndarray) else slice(run, run + n)
        raw = sp.data.view(np.uint32)[sl]
        d = sp.defined.view(np.uint32)[sl] == ONES[4]
        words = None          # the run's word indices, made only when a record needs them
        present = self._present(sp.W, sl)
        if present is not None:
            words = run if isinstance(run, np.ndarray) else np.arange(run, run + n)
            hit = self.conflicts(sp, ins, "RAW", sp.W, tids, None, words, present)
            if hit is not None:
                d[hit[0][sp.w_chg[words[hit[0]]]]] = False
        if ins.index in self.racy_by_pc:
            d &= ~np.isin(tids, self.racy_by_pc[ins.index])
        if not sp.R1.empty:
            r1t = sp.R1.cols[TID][sl]
            shift = (r1t >= 0) & (r1t != tids)
            if shift.any():
                at = np.flatnonzero(shift)
                sp.R2.copy_from(sp.R1, run[at] if isinstance(run, np.ndarray) else at + run)
        self.put_record(sp.R1, sl, tids, ins.index, None)
        self.count_run(G, ins, run)
        return raw, d

    def store_run(self, G: Group, ins, run, new: np.ndarray, d: np.ndarray) -> None:
        """:meth:`store` of a word run (:meth:`word_run`): ``new`` the words, ``d`` whether each is defined."""
        sp, n, tids = self.gspace, G.n, G.idx
        sl = run if isinstance(run, np.ndarray) else slice(run, run + n)
        view, dview = sp.data.view(np.uint32), sp.defined.view(np.uint32)
        # changed for a racing access: see store
        chg = (view[sl] != new) | (dview[sl] != ONES[4])
        # the run's word indices, made only when a record of an earlier access is there
        words = run if isinstance(run, np.ndarray) else None
        present = self._present(sp.W, sl)
        if present is not None:
            words = np.arange(run, run + n) if words is None else words
            hit = self.conflicts(sp, ins, "WAW", sp.W, tids, None, words, present)
            if hit is not None:
                d[hit[0][chg[hit[0]]]] = False
        for R in (sp.R1, sp.R2):
            present = self._present(R, sl)
            if present is None:
                continue
            words = np.arange(run, run + n) if words is None else words
            self.check_war(sp, ins, R, tids, None, words, present, chg)
        self.put_record(sp.W, sl, tids, ins.index, None)
        sp.w_chg[sl] = chg
        sp.w_undef[sl] = dview[sl] != ONES[4]
        view[sl] = new
        dview[sl] = ONES[4] if d.all() else np.where(d, ONES[4], np.uint32(0))
        self.count_run(G, ins, run)
