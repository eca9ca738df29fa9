"""What the machine records with ``trace=True``: every executed warp-instruction, and the shuffles in
the project's one trace format (:class:`helpers.engine.trace.Trace`)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from helpers.engine import emulator
from helpers.engine.trace import Trace
from helpers.machine.decode import UINT

MEMORY_DTYPE = np.dtype([("step", np.int64), ("pc", np.int64), ("store", bool), ("shared", bool), ("tid", np.int64),
                         ("arg", np.int64), ("index", np.int64), ("bits", np.uint64), ("defined", bool),
                         ("slot", np.int64), ("address", np.int64), ("size", np.int64)])
EVENT_DTYPE = np.dtype([("step", np.int64), ("pc", np.int64), ("warp", np.int64), ("active", np.uint32),
                        ("predicated_on", np.uint32), ("line", np.int64)])
SHARED_DTYPE = np.dtype([("step", np.int64), ("pc", np.int64), ("warp", np.int64), ("wavefronts", np.int64)])
WARP_SYNC_DTYPE = np.dtype([("step", np.int64), ("pc", np.int64), ("warp", np.int64), ("callers", np.uint32),
                            ("member", np.uint32), ("src_lane", np.int8, (32,)), ("defined", np.uint32)])


class MachineTrace:
    """The instruction-level record of one launch.

    ``events``: a structured array, one row per warp per executed instruction, in execution order,
    with fields ``step`` (scheduling step), ``pc`` (PTX instruction index), ``warp`` (block-major warp
    number), ``active`` (bitmask of the lanes executing it together), ``predicated_on`` (of those,
    the lanes whose guard predicate held) and ``line`` (CUDA source line, -1 if unknown).
    ``shared``: one row per warp-level shared-memory request (``step``, ``pc``, ``warp`` as in
    ``events``, and ``wavefronts``: the request's bank-conflict degree, as ``Counters`` counts it).
    ``warp_sync``: one row per warp per executed ``shfl``/``vote``/``match``/``redux`` (``step``,
    ``pc``, ``warp``; ``callers``: the lanes that executed it, ``member``: the member mask,
    ``src_lane``: per lane the lane it read, -1 for none (not a caller, or no single source: votes,
    match, redux), ``defined``: the lanes whose first result is defined). ``bar.warp.sync`` has no
    row (it moves no value; its lanes are in ``events``).
    ``ptx[pc]`` is the instruction's text, ``locs[pc]`` its :class:`helpers.machine.ptx.Loc` (None
    without line info; ``.inlined_at`` the chain). ``finding_pcs[i]`` is (pc, other pc or None) of
    the launch's i-th finding (``Report.issues[i]``). ``warps_per_block``: warp ``w`` is warp
    ``w % warps_per_block`` of block ``w // warps_per_block`` (block-linear). :meth:`shuffles`
    gives the shuffles as a :class:`helpers.engine.trace.Trace`.
    """

    def __init__(self, launch: Any) -> None:
        fn = launch.fn
        self.ptx = [ins.text for ins in fn.instrs]
        self.lines = np.array([ins.loc.line if ins.loc else -1 for ins in fn.instrs], np.int64)
        self.files = [ins.loc.file if ins.loc else "" for ins in fn.instrs]
        rows = []
        for step, pc, warps, masks, pmasks in launch.events:
            r = np.empty(warps.size, EVENT_DTYPE)
            r["step"], r["pc"], r["warp"], r["active"], r["predicated_on"] = step, pc, warps, masks, pmasks
            r["line"] = self.lines[pc] if pc < self.lines.size else -1
            rows.append(r)
        self.events = np.concatenate(rows) if rows else np.empty(0, EVENT_DTYPE)
        srows = []
        for step, pc, warps, waves in getattr(launch, "shared_events", ()):
            r = np.empty(warps.size, SHARED_DTYPE)
            r["step"], r["pc"], r["warp"], r["wavefronts"] = step, pc, warps, waves
            srows.append(r)
        self.shared = np.concatenate(srows) if srows else np.empty(0, SHARED_DTYPE)
        self._ws = launch.ws_events
        self.n_warps = launch.n_warps
        self.outer_lines = np.array([_outer(ins.loc).line if ins.loc else -1 for ins in fn.instrs], np.int64)
        self.locs = [ins.loc for ins in fn.instrs]
        self.memory = _memory_events(launch)
        self.warp_sync = _warp_sync_rows(self._ws)
        self.finding_pcs = [(key[1], key[2]) for key in launch.order]
        self.warps_per_block = launch.TPC // 32

    def for_warp(self, warp: int) -> np.ndarray:
        """The events of one warp, in order."""
        return self.events[self.events["warp"] == warp]

    def shuffles(self, dtype: Any = np.uint32, warps: Optional[Sequence[int]] = None, title: str = "machine") -> Trace:
        """Every ``shfl.sync`` the given warps executed, one step each, as a :class:`helpers.engine.trace.Trace`.

        Step 0 is what the lanes offered to the first shuffle; step k >= 1 is shuffle k: ``held`` is
        the value each lane offered (the ``a`` operand: what it held going in), ``received`` what it
        got, ``src_lane`` where from (-1: not a caller), ``active`` the calling lanes, ``in_mask``
        the member mask, ``defined`` whether the received value is defined. A 64-bit shuffle is two
        32-bit steps (high then low word, as the PTX does). ``dtype`` reinterprets the 32-bit values
        (``np.float32`` for float kernels). Every warp must have executed the same number.
        """
        per_warp, ws, k = self._shuffle_rows(warps)
        shape = (k + 1, len(ws), 32)
        held = np.zeros(shape, np.uint32)
        received = np.zeros(shape, np.uint32)
        src = np.full(shape, -1, np.int32)
        active = np.zeros(shape, bool)
        in_mask = np.zeros(shape, bool)
        defined = np.zeros(shape, bool)
        labels = ["input"]
        for j, w in enumerate(ws):
            c0, m0, sent0, _, _, _, sd0, _ = per_warp[w][0]
            held[0, j] = received[0, j] = sent0
            src[0, j] = np.where(c0, emulator.LANE, -1)
            active[0, j], defined[0, j] = c0, c0 & sd0
            in_mask[0, j] = emulator.mask_bits(np.array([m0], np.uint32))[0]
            for s, (c, m, sent, got, sl, d, _, pc) in enumerate(per_warp[w], start=1):
                held[s, j], received[s, j], src[s, j] = sent, got, sl
                active[s, j], defined[s, j] = c, d
                in_mask[s, j] = emulator.mask_bits(np.array([m], np.uint32))[0]
        for s, ev in enumerate(per_warp[ws[0]], start=1):
            pc = ev[7]
            line = self.lines[pc]
            labels.append(f"{self.ptx[pc].split()[0]}" + (f" (line {line})" if line >= 0 else ""))
        dt = np.dtype(dtype)
        if dt.itemsize != 4:
            raise ValueError(f"dtype must be a 4-byte type (shuffles move 32 bits); got {dt}")
        return Trace(title=title, source="SIMT machine", labels=tuple(labels), held=held.view(dt),
                     received=received.view(dt), src_lane=src, active=active, in_mask=in_mask, defined=defined,
                     meta={"warps": ws})

    def block(self, block: tuple[int, int], dtype: Any, out_arg: int, title: str = "machine",
              label: Optional[Any] = None, out_index: Optional[Any] = None) -> Trace:
        """The first block's run phase by phase, as a block :class:`helpers.engine.trace.Trace` (see that module).

        Phases are cut where the machine saw them: the block's barriers (``bar.sync``: a warp's
        operations between its k-th and (k+1)-th arrival are in interval k), then, inside an
        interval, runs of one kind of operation (shuffles, shared loads, shared stores) in program
        order, split where the calling line of the kernel changes (two calls of one function). A
        loop's iterations between the same two barriers are one phase. Phase 0 is what each thread
        loaded from global memory; the last is what it wrote to argument ``out_arg`` (its return value;
        ``out_index(i)`` picks which of the thread's outputs, default element tid). ``held`` is only
        what the machine saw each thread move: the value it offered to a phase's first shuffle, stored,
        loaded (its last load of the phase) or wrote out. ``label(pc, kind)`` names a phase.
        """
        dt = np.dtype(dtype)
        n = int(block[0]) * int(block[1])
        n_warps = -(-n // 32)
        m = self.memory
        ops = []   # (step, pc, kind, tid, bits, defined, slot)
        for r in m[m["shared"] & (m["tid"] < n)]:
            ops.append((int(r["step"]), int(r["pc"]), "store" if r["store"] else "load", int(r["tid"]),
                        int(r["bits"]), bool(r["defined"]), int(r["index"])))
        for step, key, pcs, rwarp, callers, rmask, outs, extra in self._ws:
            if not key.startswith("shfl"):
                continue
            for row, w in enumerate(rwarp.tolist()):
                if w >= n_warps:
                    continue
                for lane in np.flatnonzero(callers[row]).tolist():
                    ops.append((int(step), int(pcs[0]), "warp", w * 32 + lane, int(extra["sent"][row][lane]),
                                bool(extra["sent_defined"][row][lane]), -1))
        bars = {w: np.sort(self.events["step"][(self.events["warp"] == w) &
                                               np.isin(self.events["pc"], self._barrier_pcs())]) for w in range(n_warps)}
        epoch = [int(np.searchsorted(bars[o[3] // 32], o[0])) for o in ops]
        n_epochs = 1 + max([len(b) for b in bars.values()] or [0])
        # phases: per interval, the distinct pcs in program order, cut where the kind or the calling line changes
        phases: list[tuple[int, str, list[int]]] = []
        for e in range(n_epochs):
            pcs = sorted({o[1]: o[2] for o, ep in zip(ops, epoch) if ep == e}.items())
            for pc, kind in pcs:
                if phases and phases[-1][0] == e and phases[-1][1] == kind and \
                        self.outer_lines[phases[-1][2][-1]] == self.outer_lines[pc]:
                    phases[-1][2].append(pc)
                else:
                    phases.append((e, kind, [pc]))
            if e < n_epochs - 1:
                phases.append((e, "barrier", []))
        where = {(e, pc): k + 1 for k, (e, _, pcs_) in enumerate(phases) for pc in pcs_}
        steps = len(phases) + 2
        held = np.zeros((steps, n_warps * 32), np.uint64)
        active = np.zeros((steps, n_warps * 32), bool)
        defined = np.zeros((steps, n_warps * 32), bool)
        loads = [[] for _ in range(steps)]
        stores = [[] for _ in range(steps)]
        n_slots = 1 + max([o[6] for o in ops] or [31])
        shared = np.zeros((steps, n_slots), np.uint64)
        sdef = np.zeros((steps, n_slots), bool)
        g = m[~m["shared"] & (m["tid"] < n)]
        for r in g[~g["store"]][::-1]:            # phase 0: the first global load of each thread
            held[0, r["tid"]], defined[0, r["tid"]], active[0, r["tid"]] = r["bits"], r["defined"], True
        pick = (lambda t: t) if out_index is None else out_index
        for r in g[g["store"] & (g["arg"] == out_arg)]:
            t = int(r["tid"])
            if int(r["index"]) == pick(t):
                held[-1, t], defined[-1, t], active[-1, t] = r["bits"], r["defined"], True
        order = sorted(range(len(ops)), key=lambda i: (ops[i][0], ops[i][1]))
        words: dict = {}     # (phase, thread) -> the 32-bit words it offered to the phase's first shuffle
        per_value = 2 if dt.itemsize == 8 else 1   # a 64-bit shuffle is two: high word, then low (as the PTX does)
        for i in order:
            step, pc, kind, t, bits, ok, slot = ops[i]
            k = where[(epoch[i], pc)]
            if kind == "warp":
                got = words.setdefault((k, t), [])
                if len(got) == per_value:
                    continue
                got.append((bits, ok))
                if len(got) < per_value:
                    continue
                bits = got[0][0] if per_value == 1 else (got[0][0] << 32) | got[1][0]
                ok = all(d for _, d in got)
            held[k, t], defined[k, t], active[k, t] = bits, ok, True
            if kind == "store":
                stores[k].append((t, slot))
            elif kind == "load":
                loads[k].append((t, slot))
        st = sorted((where[(epoch[i], ops[i][1])], ops[i][0], ops[i][6], ops[i][4], ops[i][5])
                    for i in order if ops[i][2] == "store")
        j = 0
        for k in range(steps):
            if k:
                shared[k], sdef[k] = shared[k - 1], sdef[k - 1]
            while j < len(st) and st[j][0] == k:
                shared[k, st[j][2]], sdef[k, st[j][2]] = st[j][3], st[j][4]
                j += 1
        kinds = ("input", *(kind for _, kind, _ in phases), "return")
        name = label or (lambda pc, kind: kind)
        labels = ("input: what each thread loaded", *(("__syncthreads()" if kind == "barrier" else name(pcs_[0], kind))
                                                      for _, kind, pcs_ in phases), "return: what each thread wrote out")
        as_dt = lambda a: a.astype(UINT[dt.itemsize]).view(dt)  # noqa: E731
        shape = (steps, n_warps, 32)
        h = as_dt(held).reshape(shape)
        src = np.where(active, np.arange(n_warps * 32) % 32, -1).astype(np.int32).reshape(shape)
        pairs = lambda ps: tuple(np.asarray(p, np.int64).reshape(-1, 2) for p in ps)  # noqa: E731
        return Trace(title=title, source="SIMT machine", labels=labels, held=h, received=h.copy(), src_lane=src,
                     active=active.reshape(shape), in_mask=active.reshape(shape), defined=defined.reshape(shape),
                     kinds=kinds, block=(int(block[0]), int(block[1])), shared=as_dt(shared), shared_defined=sdef,
                     loads=pairs(loads), stores=pairs(stores))

    def _barrier_pcs(self) -> np.ndarray:
        return np.array([pc for pc, text in enumerate(self.ptx) if text.split()[0].startswith(("bar.", "barrier."))]
                        or [-1], np.int64)

    def offered_defined(self, warps: Optional[Sequence[int]] = None) -> np.ndarray:
        """Shaped like :meth:`shuffles`' arrays, (1 + shuffles, warps, 32): whether the value each lane
        offered to shuffle k (``held`` of step k; step 0 repeats shuffle 1) was defined. With
        ``received``'s ``defined`` this says which values a lane holds between shuffles are defined."""
        per_warp, ws, k = self._shuffle_rows(warps)
        out = np.zeros((k + 1, len(ws), 32), bool)
        for j, w in enumerate(ws):
            for s, row in enumerate(per_warp[w], start=1):
                out[s, j] = row[6]
            out[0, j] = out[1, j]
        return out

    def _shuffle_rows(self, warps: Optional[Sequence[int]]) -> tuple[dict[int, list], list[int], int]:
        """Per warp, each shfl.sync it executed (callers, mask, sent, received, src lane, defined,
        sent defined, pc); the warps asked for; how many shuffles each executed (the same for all)."""
        per_warp: dict[int, list] = {}
        for step, key, pcs, rwarp, callers, rmask, outs, extra in self._ws:
            if not key.startswith("shfl"):
                continue
            (vals, dfn), _ = outs
            for r, w in enumerate(rwarp.tolist()):
                per_warp.setdefault(w, []).append((callers[r], rmask[r], extra["sent"][r], vals[r],
                                                   extra["src_lane"][r], dfn[r], extra["sent_defined"][r],
                                                   pcs[0]))
        ws = sorted(per_warp) if warps is None else list(warps)
        if not ws:
            raise ValueError("the launch executed no shuffle (was it run with trace=True?)")
        n = {w: len(per_warp.get(w, [])) for w in ws}
        if len(set(n.values())) != 1:
            raise ValueError(f"warps executed different numbers of shuffles {n}; pass warps= with warps alike")
        return per_warp, ws, n[ws[0]]


def _outer(loc: Any) -> Any:
    while loc.inlined_at is not None:
        loc = loc.inlined_at
    return loc


def _warp_sync_rows(ws_events: list) -> np.ndarray:
    rows = []
    bit = np.uint32(1) << np.arange(32, dtype=np.uint32)
    for step, key, pcs, rwarp, callers, rmask, outs, extra in ws_events:
        r = np.zeros(rwarp.size, WARP_SYNC_DTYPE)
        c = np.asarray(callers, bool)
        r["step"], r["pc"], r["warp"], r["member"] = step, pcs[0], rwarp, rmask
        r["callers"] = (c * bit).sum(axis=1, dtype=np.uint32)
        r["src_lane"] = np.where(c, extra["src_lane"], -1) if "src_lane" in extra else -1
        d = outs[0][1] if outs and outs[0][1] is not None else c
        r["defined"] = ((np.broadcast_to(d, c.shape) & c) * bit).sum(axis=1, dtype=np.uint32)
        rows.append(r)
    return np.concatenate(rows) if rows else np.empty(0, WARP_SYNC_DTYPE)


def _memory_events(launch: Any) -> np.ndarray:
    rows = []
    allocs = [(i, al) for i, al in enumerate(launch.arg_allocs) if al is not None]
    for step, pc, kind, space, tids, off, es, raw, d in getattr(launch, "mem_events", []):
        r = np.zeros(tids.size, MEMORY_DTYPE)
        r["step"], r["pc"], r["store"], r["shared"], r["tid"] = step, pc, kind == "st", space == "shared", tids
        r["bits"], r["defined"] = raw.astype(np.uint64), d
        r["arg"] = -1
        r["slot"], r["address"], r["size"] = tids, off, es
        if space == "shared":
            local = tids % launch.TPC
            r["tid"] = tids // launch.TPC * launch.B + local
            r["index"] = (off - tids // launch.TPC * launch.S_stride) // es
            r["address"] = off - tids // launch.TPC * launch.S_stride
        else:
            r["index"] = -1
            for i, al in allocs:
                inside = (off >= al.start) & (off < al.start + al.nbytes)
                r["arg"][inside] = i
                r["index"][inside] = (off[inside] - al.start) // es
        rows.append(r)
    return np.concatenate(rows) if rows else np.empty(0, MEMORY_DTYPE)
