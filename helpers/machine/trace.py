"""What the machine records with ``trace=True``: every executed warp-instruction, and the shuffles in
the project's one trace format (:class:`helpers.trace.Trace`)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import emulator
from ..trace import Trace

EVENT_DTYPE = np.dtype([("step", np.int64), ("pc", np.int64), ("warp", np.int64), ("active", np.uint32),
                        ("predicated_on", np.uint32), ("line", np.int64)])


class MachineTrace:
    """The instruction-level record of one launch.

    ``events``: a structured array, one row per warp per executed instruction, in execution order,
    with fields ``step`` (scheduling step), ``pc`` (PTX instruction index), ``warp`` (block-major warp
    number), ``active`` (bitmask of the lanes executing it together), ``predicated_on`` (of those,
    the lanes whose guard predicate held) and ``line`` (CUDA source line, -1 if unknown).
    ``ptx[pc]`` is the instruction's text. :meth:`shuffles` gives the shuffles as a
    :class:`helpers.trace.Trace`.
    """

    def __init__(self, launch: Any) -> None:
        fn = launch.fn
        self.ptx = [ins.text for ins in fn.instrs]
        self.lines = np.array([ins.loc.line if ins.loc else -1 for ins in fn.instrs], np.int64)
        rows = []
        for step, pc, warps, masks, pmasks in launch.events:
            r = np.empty(warps.size, EVENT_DTYPE)
            r["step"], r["pc"], r["warp"], r["active"], r["predicated_on"] = step, pc, warps, masks, pmasks
            r["line"] = self.lines[pc] if pc < self.lines.size else -1
            rows.append(r)
        self.events = np.concatenate(rows) if rows else np.empty(0, EVENT_DTYPE)
        self._ws = launch.ws_events
        self.n_warps = launch.n_warps

    def for_warp(self, warp: int) -> np.ndarray:
        """The events of one warp, in order."""
        return self.events[self.events["warp"] == warp]

    def shuffles(self, dtype: Any = np.uint32, warps: Optional[Sequence[int]] = None, title: str = "machine") -> Trace:
        """Every ``shfl.sync`` the given warps executed, one step each, as a :class:`helpers.trace.Trace`.

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
