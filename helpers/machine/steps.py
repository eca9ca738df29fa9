"""One launch on the machine, step by step for each warp: what the lane debugger shows.

:func:`record` runs a kernel on the machine with ``trace=True`` and turns its
:class:`helpers.machine.trace.MachineTrace` into :class:`Steps`: per warp, every warp-instruction it
executed (a :class:`Step`), in the order the machine ran them, with

* the lanes executing it (``active``; ``predicated_on`` of those, the lanes whose guard held), the
  lanes alive in other code (``elsewhere``: diverged), the lanes that had exited (``exited``) and
  the lanes a partial last warp does not have (``absent``). An exited lane is not a diverged lane
  (Programming Guide, "Warp Shuffle Functions": each lane is calling, exited or elsewhere);
* for a ``shfl``/``vote``/``match``/``redux``, an :class:`Exchange`: who read whom, and the reads
  that are undefined (a source lane that did not call, PTX ISA ``shfl.sync``);
* for a shared or global load or store, an :class:`Access`: each lane's address, its bank, and the
  request's wavefronts (shared) or 32-byte sectors (global) as the machine's counters count them;
* for ``bar.sync``, a :class:`Barrier`: per warp of the block, the lanes waiting at a barrier,
  still running, or exited (PTX ISA ``bar``/``barrier``);
* the findings of the launch (:class:`StepFinding`), each placed at the step of the warp where it
  happened and, for a race, at the step of the other access too.

Bounded: a launch of more than :data:`MAX_BLOCKS` blocks keeps the steps of the chosen blocks only
(``Steps.note`` says so); one whose trace would pass :data:`MAX_TRACE_BYTES` is refused with a
:class:`TooLarge` that says what to shrink. The machine runs the whole launch either way (a block's
steps depend on the others through global memory).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from helpers.machine.report import Finding, MachineError, Report

MAX_BLOCKS = 8                  # launches with more blocks keep the chosen blocks' steps only
MAX_STEPS = 1_000_000           # warp-instructions kept (over the kept blocks)
MAX_TRACE_BYTES = 400 << 20     # the machine's trace of the whole launch, estimated before it is recorded
SMALL_THREADS = 8 * 1024        # up to this many threads a launch is traced at once, with no counting run first
FULL = 0xFFFFFFFF

KINDS = ("compute", "branch", "shuffle", "vote", "match", "redux", "syncwarp", "barrier", "shared load",
         "shared store", "global load", "global store", "atomic", "exit")


class TooLarge(ValueError):
    """The launch is too large to trace; the message says how large and what to shrink."""


@dataclass(frozen=True)
class Exchange:
    """A ``shfl``/``vote``/``match``/``redux`` of one warp: ``op`` its PTX opcode, ``callers`` the lanes
    executing it, ``member`` the member mask, ``src_lane[l]`` the lane that lane ``l`` read (-1: none,
    or, for a vote/match/redux, every caller's value goes to every caller), ``defined`` the lanes
    whose result is defined. ``undefined`` = callers whose result is not."""

    op: str
    callers: int
    member: int
    src_lane: tuple[int, ...]
    defined: int

    @property
    def undefined(self) -> int:
        return self.callers & ~self.defined & FULL


@dataclass(frozen=True)
class Access:
    """One warp-level shared or global load or store.

    Per lane (-1 where the lane made no access): ``address`` (bytes: the offset in the block's shared
    memory, or the machine's global address), ``element`` (shared: the element index from the start
    of shared memory; global: the element of argument ``arg[l]``), ``bank`` (shared: (address / 4) mod
    32). ``size``: bytes per element, ``elements``: elements per lane (a vector access has 2 or 4).
    ``defined``: lanes whose loaded or stored value is defined. ``wavefronts`` (shared; counted by the
    machine as its counters count them: the most distinct 4-byte words one bank is asked for, a word
    asked for by several lanes served once) and ``sectors`` (global: distinct 32-byte sectors of the
    request); the other is None.
    """

    space: str
    store: bool
    address: tuple[int, ...]
    element: tuple[int, ...]
    arg: tuple[int, ...]
    bank: tuple[int, ...]
    size: int
    elements: int
    defined: int
    wavefronts: Optional[int]
    sectors: Optional[int]


@dataclass(frozen=True)
class Barrier:
    """The block at a warp's ``bar.sync``: per warp of the block (in order), the lanes waiting at a
    barrier (``arrived``: this warp's executing lanes included), ``running`` (alive, not at a
    barrier) and ``exited``."""

    arrived: tuple[int, ...]
    running: tuple[int, ...]
    exited: tuple[int, ...]


@dataclass(frozen=True)
class Step:
    """One warp-instruction of one warp (see the module docstring). ``index``: its place in the warp's
    list; ``step``: the machine's scheduling step; ``line``: the source line in the kernel's own file
    (``Steps.main_file``; -1 if none), ``inner``: (file, line) of the innermost inlined frame.
    ``findings``: indices into ``Steps.findings`` placed at this step."""

    index: int
    step: int
    pc: int
    ptx: str
    kind: str
    line: int
    inner: tuple[str, int]
    active: int
    predicated_on: int
    elsewhere: int
    exited: int
    absent: int
    exchange: Optional[Exchange] = None
    access: Optional[Access] = None
    barrier: Optional[Barrier] = None
    findings: tuple[int, ...] = ()


@dataclass(frozen=True)
class StepFinding:
    """A finding of the launch: ``finding`` the machine's :class:`helpers.machine.report.Finding`;
    ``at`` = (block, warp, step index) where it happened, ``other`` = the same for a race's other
    (earlier) access; None where that warp was not kept (or no step matched)."""

    finding: Finding
    at: Optional[tuple[int, int, int]]
    other: Optional[tuple[int, int, int]] = None

    @property
    def kind(self) -> str:
        return self.finding.kind


def _opcode(ptx: str) -> str:
    words = ptx.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].rstrip(";") if words else ""


def _kind(opcode: str) -> str:
    head = opcode.split(".")[0]
    if opcode.startswith("bar.warp"):
        return "syncwarp"
    if head in ("bar", "barrier"):
        return "barrier"
    return {"shfl": "shuffle", "vote": "vote", "match": "match", "redux": "redux", "bra": "branch",
            "ret": "exit", "exit": "exit", "atom": "atomic", "red": "atomic"}.get(head, "compute")


def _bits(mask: int) -> np.ndarray:
    return ((np.uint32(mask) >> np.arange(32, dtype=np.uint32)) & 1).astype(bool)


class WarpSteps:
    """The steps of one warp (``block``, ``warp`` within it): ``len()``, ``[i]`` a :class:`Step`
    (made when asked), ``lines`` the source line of every step (an array), ``kinds`` their kinds."""

    def __init__(self, owner: "Steps", block: int, warp: int, events: np.ndarray, memory: np.ndarray,
                 exchanges: np.ndarray, wavefronts: np.ndarray) -> None:
        self.owner, self.block, self.warp = owner, block, warp
        self.gwarp = block * owner.warps_per_block + warp
        self.steps = events["step"].copy()
        self.pcs = events["pc"].copy()
        self.active = events["active"].copy()
        self.predicated = events["predicated_on"].copy()
        exits = np.where(owner.exit_pc[self.pcs], self.predicated, 0).astype(np.uint32)
        done = np.bitwise_or.accumulate(exits) if exits.size else exits
        self.exited = np.concatenate([[0], done[:-1]]).astype(np.uint32) if exits.size else exits
        lanes = max(0, min(32, owner.threads_per_block - 32 * warp))
        self.absent = (FULL >> lanes << lanes) & FULL if lanes < 32 else 0
        self.lines = owner.main_line[self.pcs] if self.pcs.size else np.empty(0, np.int64)
        self.kinds = [owner.kind_of_pc[p] for p in self.pcs.tolist()]
        self.memory, self.exchanges, self.wavefronts = memory, exchanges, wavefronts
        self.findings: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return int(self.steps.size)

    def exited_at(self, step: int) -> int:
        """The lanes that had exited before the machine's scheduling step ``step``."""
        k = int(np.searchsorted(self.steps, step, "left"))
        if k == 0:
            return 0
        at = k - 1
        pc = int(self.pcs[at])
        return int(self.exited[at]) | (int(self.predicated[at]) if self.owner.exit_pc[pc] else 0)

    def __getitem__(self, i: int) -> Step:
        if not -len(self) <= i < len(self):
            raise IndexError(f"step must be in 0..{len(self) - 1}; got {i}")
        i %= len(self)
        o = self.owner
        s, pc = int(self.steps[i]), int(self.pcs[i])
        active, exited = int(self.active[i]), int(self.exited[i])
        kind = o.kind_of_pc[pc]
        access = self._access(s, pc)
        if access is not None:
            kind = f"{access.space} {'store' if access.store else 'load'}"
        return Step(index=i, step=s, pc=pc, ptx=o.ptx[pc], kind=kind, line=int(o.main_line[pc]), inner=o.inner[pc],
                    active=active, predicated_on=int(self.predicated[i]),
                    elsewhere=FULL & ~(active | exited | self.absent), exited=exited, absent=self.absent,
                    exchange=self._exchange(s, pc) if kind in ("shuffle", "vote", "match", "redux") else None,
                    access=access, barrier=o.barrier_at(self.block, s) if kind == "barrier" else None,
                    findings=tuple(self.findings.get(i, ())))

    def _rows(self, table: np.ndarray, step: int, pc: int) -> np.ndarray:
        lo, hi = np.searchsorted(table["step"], [step, step + 1])
        rows = table[lo:hi]
        return rows[rows["pc"] == pc]

    def _exchange(self, step: int, pc: int) -> Optional[Exchange]:
        r = self._rows(self.exchanges, step, pc)
        if not r.size:
            return None
        r = r[0]
        return Exchange(op=_opcode(self.owner.ptx[pc]).split(".")[0], callers=int(r["callers"]), member=int(r["member"]),
                        src_lane=tuple(int(x) for x in r["src_lane"]), defined=int(r["defined"]))

    def _access(self, step: int, pc: int) -> Optional[Access]:
        rows = self._rows(self.memory, step, pc)
        if not rows.size:
            return None
        lane = rows["slot"] % 32
        first = np.full(32, -1, np.int64)
        element = np.full(32, -1, np.int64)
        arg = np.full(32, -1, np.int64)
        # the first element of each lane (a vector access records one row per element)
        order = np.lexsort((rows["address"], lane))
        lr = lane[order]
        head = order[np.r_[True, lr[1:] != lr[:-1]]]
        first[lane[head]] = rows["address"][head]
        element[lane[head]] = rows["index"][head]
        arg[lane[head]] = rows["arg"][head]
        defined = 0
        for ln in np.unique(lane[rows["defined"]]).tolist():
            if rows["defined"][lane == ln].all():
                defined |= 1 << ln
        shared = bool(rows["shared"][0])
        bank = np.where(first >= 0, (first // 4) % 32, -1) if shared else np.full(32, -1, np.int64)
        waves = sectors = None
        if shared:
            w = self._rows(self.wavefronts, step, pc)
            waves = int(w["wavefronts"][0]) if w.size else None
        else:
            sectors = int(np.unique(rows["address"] // 32).size)
        return Access(space="shared" if shared else "global", store=bool(rows["store"][0]),
                      address=tuple(first.tolist()), element=tuple(element.tolist()), arg=tuple(arg.tolist()),
                      bank=tuple(bank.tolist()), size=int(rows["size"][0]),
                      elements=int(np.bincount(lane, minlength=32).max()), defined=defined,
                      wavefronts=waves, sectors=sectors)

    def next_index(self, i: int, kinds: Sequence[str] = (), findings: bool = False) -> Optional[int]:
        """The first step after ``i`` of one of ``kinds`` (or, ``findings=True``, with a finding); None if none."""
        if findings:
            later = [k for k in self.findings if k > i]
            return min(later) if later else None
        for k in range(i + 1, len(self)):
            if self.kinds[k] in kinds:
                return k
        return None


class Steps:
    """A launch step by step (see the module docstring).

    ``report``: the machine's :class:`Report` (its ``trace`` dropped); ``grid``, ``block``: the
    launch's dimensions; ``blocks``: the linear indices of the blocks whose steps are kept;
    ``note``: what was left out, in words ("" when nothing); ``warps_per_block``; ``findings``: one
    :class:`StepFinding` per ``report.issues``; ``main_file``: the source file whose lines ``Step.line``
    gives (``file`` if given, else the one that holds the kernel).
    ``warp(block, warp)`` gives a :class:`WarpSteps`.
    """

    def __init__(self, report: Report, grid: tuple[int, int, int], block: tuple[int, int, int],
                 blocks: Sequence[int], note: str = "", file: Optional[str] = None) -> None:
        tr = report.trace
        self.grid, self.block = grid, block
        self.threads_per_block = block[0] * block[1] * block[2]
        self.warps_per_block = tr.warps_per_block
        self.n_blocks = grid[0] * grid[1] * grid[2]
        self.blocks = tuple(sorted(set(int(b) for b in blocks)))
        self.note = note
        self.ptx = list(tr.ptx)
        opcodes = [_opcode(t) for t in self.ptx]
        self.kind_of_pc = [_kind(op) for op in opcodes]
        self.exit_pc = np.array([k == "exit" for k in self.kind_of_pc] + [False], bool)
        self.barrier_pc = np.array([k == "barrier" for k in self.kind_of_pc] + [False], bool)
        self.main_file = file or next((_outermost(loc).file for loc in tr.locs if loc is not None), "")
        self.main_line = np.array([_line_in(loc, self.main_file) for loc in tr.locs] + [-1], np.int64)
        self.inner = [(loc.file, loc.line) if loc is not None else ("", -1) for loc in tr.locs] + [("", -1)]
        wpb = self.warps_per_block
        keep = np.zeros(self.n_blocks * wpb, bool)
        for b in self.blocks:
            keep[b * wpb:(b + 1) * wpb] = True
        ev = tr.events[keep[tr.events["warp"]]]
        mem = tr.memory[keep[tr.memory["slot"] // 32]]
        ws = tr.warp_sync[keep[tr.warp_sync["warp"]]]
        sh = tr.shared[keep[tr.shared["warp"]]]
        self._warps: dict[tuple[int, int], WarpSteps] = {}
        by_warp = lambda a, w: a[a["warp"] == w]  # noqa: E731
        for b in self.blocks:
            for w in range(wpb):
                g = b * wpb + w
                e = by_warp(ev, g)
                if e.size:
                    self._warps[(b, w)] = WarpSteps(self, b, w, e, mem[mem["slot"] // 32 == g], by_warp(ws, g),
                                                    by_warp(sh, g))
        self.report = Report(issues=report.issues, undefined=report.undefined, counters=report.counters,
                             fma_contractable=report.fma_contractable, steps=report.steps,
                             undefined_globals=report.undefined_globals, undefined_control=report.undefined_control)
        self.findings = [self._place(i, f, pcs) for i, (f, pcs) in enumerate(zip(report.issues, tr.finding_pcs))]

    # -- warps ----------------------------------------------------------------------------------

    def warps(self) -> list[tuple[int, int]]:
        """(block, warp) of every kept warp that executed anything, in order."""
        return sorted(self._warps)

    def warp(self, block: int, warp: int) -> WarpSteps:
        """The steps of warp ``warp`` of block ``block`` (linear index). Raises ValueError naming the
        blocks and warps there are."""
        ws = self._warps.get((int(block), int(warp)))
        if ws is None:
            raise ValueError(f"(block, warp) must be one of the traced warps {self.warps()[:16]}"
                             f"{' ...' if len(self._warps) > 16 else ''}; got ({block}, {warp})")
        return ws

    def block_index(self, b: int) -> tuple[int, int, int]:
        """The linear block number ``b`` as (blockIdx.x, .y, .z)."""
        gx, gy, _ = self.grid
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def barrier_at(self, block: int, step: int) -> Barrier:
        """Per warp of ``block``: lanes at a barrier, running and exited at scheduling step ``step``
        (a lane is at a barrier when the last instruction it executed by then is a ``bar.sync``)."""
        arrived, running, exited = [], [], []
        for w in range(self.warps_per_block):
            ws = self._warps.get((block, w))
            if ws is None:
                arrived.append(0), running.append(0), exited.append(0)
                continue
            gone = ws.exited_at(step + 1)
            todo = FULL & ~(gone | ws.absent)
            at = 0
            k = int(np.searchsorted(ws.steps, step, "right")) - 1
            while todo and k >= 0:
                new = int(ws.active[k]) & todo
                if new and self.barrier_pc[int(ws.pcs[k])]:
                    at |= new
                todo &= ~new
                k -= 1
            alive = FULL & ~(gone | ws.absent)
            arrived.append(at), running.append(alive & ~at), exited.append(gone)
        return Barrier(arrived=tuple(arrived), running=tuple(running), exited=tuple(exited))

    # -- findings -------------------------------------------------------------------------------

    def _thread(self, t: Any) -> Optional[tuple[int, int, int]]:
        """((blockIdx), (threadIdx)) -> (block, warp, lane)."""
        try:
            (bx, by, bz), (tx, ty, tz) = t
        except (TypeError, ValueError):
            return None
        gx, gy, _ = self.grid
        x, y, _ = self.block
        local = tx + ty * x + tz * x * y
        return bx + by * gx + bz * gx * gy, local // 32, local % 32

    def _first_at(self, who: Optional[tuple[int, int, int]], pc: int, before: Optional[int] = None
                  ) -> Optional[tuple[int, int, int]]:
        """The first step (or, with ``before``, the last step before that scheduling step) at ``pc``
        of the thread ``who`` = (block, warp, lane); any kept warp at ``pc`` when ``who`` is None."""
        cands = [self._warps[who[:2]]] if who is not None and who[:2] in self._warps else \
            ([] if who is not None else [self._warps[k] for k in self.warps()])
        for ws in cands:
            hit = ws.pcs == pc
            if who is not None:
                hit &= ((ws.active >> np.uint32(who[2])) & 1).astype(bool)
            if before is not None:
                hit &= ws.steps <= before
            idx = np.flatnonzero(hit)
            if idx.size:
                return ws.block, ws.warp, int(idx[-1] if before is not None else idx[0])
        return None

    def _place(self, i: int, f: Finding, pcs: tuple) -> StepFinding:
        pc, other_pc = pcs
        who = [self._thread(t) for t in f.threads]

        def first(at_pc: int) -> Optional[tuple[int, int, int]]:
            # the finding's example threads do not say which of them was at which instruction
            for t in [w for w in who if w is not None]:
                hit = self._first_at(t, at_pc)
                if hit is not None:
                    return hit
            return self._first_at(None, at_pc)

        pair = None
        if f.kind == "race" and other_pc is not None and len(who) == 2:
            pair = self._race_steps(who[0], int(other_pc), who[1], int(pc))
        if pair is not None:
            at, other = pair
        else:
            at = first(int(pc))
            other = first(int(other_pc)) if other_pc is not None else None
        sf = StepFinding(finding=f, at=at, other=other)
        for place in (at, other):
            if place is not None:
                self._warps[place[:2]].findings.setdefault(place[2], []).append(i)
        return sf

    def _race_steps(self, first: Optional[tuple], first_pc: int, later: Optional[tuple], later_pc: int
                    ) -> Optional[tuple[tuple[int, int, int], tuple[int, int, int]]]:
        """The first access of thread ``later`` at ``later_pc`` that touches bytes an access of thread
        ``first`` at ``first_pc`` touched at or before it, and that access: the race's two steps."""
        if first is None or later is None or first[:2] not in self._warps or later[:2] not in self._warps:
            return None
        a, b = self._warps[first[:2]], self._warps[later[:2]]
        ra = a.memory[(a.memory["pc"] == first_pc) & (a.memory["slot"] % 32 == first[2])]
        rb = b.memory[(b.memory["pc"] == later_pc) & (b.memory["slot"] % 32 == later[2])]
        for r in rb:
            lo, hi = int(r["address"]), int(r["address"] + r["size"])
            hit = (ra["step"] <= r["step"]) & (ra["address"] < hi) & (ra["address"] + ra["size"] > lo)
            if hit.any():
                e = ra[np.flatnonzero(hit)[-1]]
                ia = int(np.flatnonzero((a.steps == e["step"]) & (a.pcs == first_pc))[0])
                ib = int(np.flatnonzero((b.steps == r["step"]) & (b.pcs == later_pc))[0])
                return (b.block, b.warp, ib), (a.block, a.warp, ia)
        return None


def _outermost(loc: Any) -> Any:
    while loc.inlined_at is not None:
        loc = loc.inlined_at
    return loc


def _line_in(loc: Any, file: str) -> int:
    """The line of the innermost frame of ``loc`` in ``file`` (its path, or its name alone; -1 if none)."""
    while loc is not None:
        if (loc.file == file or loc.file.rsplit("/", 1)[-1] == file) and loc.line:
            return int(loc.line)
        loc = loc.inlined_at
    return -1


def record(kernel: Any, grid: tuple[int, int, int], block: tuple[int, int, int], args: Sequence[Any],
           shared_mem: int = 0, *, blocks: Optional[Sequence[int]] = None, max_seconds: float = 20.0,
           max_steps: int = 2_000_000, file: Optional[str] = None) -> Steps:
    """Run ``kernel`` (a :class:`helpers.machine.module.Kernel`) on copies of ``args`` with the trace
    on, and give its :class:`Steps`.

    ``grid``/``block``: 3 ints each. ``blocks``: the linear block indices to keep (default: all when
    the grid has at most :data:`MAX_BLOCKS`, else the first, the last and their neighbours, at most
    :data:`MAX_BLOCKS`). A launch of more than :data:`SMALL_THREADS` threads runs once without the
    trace first, to measure it; one whose trace would pass :data:`MAX_TRACE_BYTES` or keep more than
    :data:`MAX_STEPS` steps raises :class:`TooLarge`. ``file``: the source file whose lines the steps
    give (default: the kernel's own; e.g. the learner's cell, when a harness calls their function). Bad ``blocks`` raises ValueError naming them.
    MachineError (an unsupported instruction, a trap, a step limit) passes through.
    """
    n_blocks = grid[0] * grid[1] * grid[2]
    threads = n_blocks * block[0] * block[1] * block[2]
    if blocks is None:
        blocks = range(n_blocks) if n_blocks <= MAX_BLOCKS else \
            sorted({0, 1, 2, 3, n_blocks - 4, n_blocks - 3, n_blocks - 2, n_blocks - 1})
    blocks = [int(b) for b in blocks]
    bad = [b for b in blocks if not 0 <= b < n_blocks]
    if bad or not blocks or len(blocks) > MAX_BLOCKS:
        raise ValueError(f"blocks must be 1 to {MAX_BLOCKS} block numbers in 0..{n_blocks - 1}; got {blocks}")
    copies = lambda: tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)  # noqa: E731
    if threads > SMALL_THREADS:
        plain = kernel(grid, block, copies(), shared_mem, max_steps=max_steps, max_seconds=max_seconds)
        t = plain.counters.totals
        wpb = -(-block[0] * block[1] * block[2] // 32)
        size = 48 * t["issued"] + 32 * 112 * (t["shared_requests"] + t["global_requests"])
        kept = t["issued"] * len(set(blocks)) // max(1, n_blocks)
        if size > MAX_TRACE_BYTES or kept > MAX_STEPS:
            raise TooLarge(f"this launch is too large to trace: {t['issued']:,} warp-instructions over "
                           f"{n_blocks * wpb:,} warps (about {size >> 20} MB of trace, at most {MAX_TRACE_BYTES >> 20} "
                           f"MB; {kept:,} steps kept, at most {MAX_STEPS:,}); debug a smaller grid or block, "
                           f"e.g. fewer elements")
    report = kernel(grid, block, copies(), shared_mem, trace=True, max_steps=max_steps, max_seconds=max_seconds)
    note = ""
    if len(set(blocks)) < n_blocks:
        note = (f"the launch has {n_blocks} blocks; the steps of blocks {', '.join(map(str, sorted(set(blocks))))} "
                f"are kept (the machine ran all of them)")
    if report.trace is None:
        raise MachineError("the machine returned no trace")
    return Steps(report, grid, block, blocks, note, file=file)
