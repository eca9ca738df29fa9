"""One kernel launch on the SIMT machine: the run loop, and :class:`Launch` made of its rooms.

Execution model (docs/machine.md has the long form):

* Threads as on hardware (CUDA C++ Programming Guide, "Thread Hierarchy"): linear id
  ``x + y*Dx + z*Dx*Dy``; warps are 32 consecutive linear ids; a block whose size is not a multiple
  of 32 has a partial last warp, whose missing lanes never exist (they behave as exited lanes).
* Independent thread scheduling (Programming Guide, "Independent Thread Scheduling", Volta+): every
  thread has its own PC. The scheduler repeatedly takes the *lowest PC* among runnable threads and
  executes that instruction for every runnable thread at it, across all warps and blocks at once
  (vectorised). Lowest-PC-first reconverges structured code at its join points, so convergent code
  runs as whole warps. A group keeps going through straight-line code while it is still the lowest.

:class:`Launch` holds the state of one kernel's launches; its methods live in rooms named for what
they hold, each a class of its own module that :class:`Launch` inherits:

* :mod:`helpers.machine.scheduler`: thread states, :class:`~helpers.machine.scheduler.Group`, exits, stalls, deadlock;
* :mod:`helpers.machine.layout`: where variables live, each launch's fresh memory, special registers;
* :mod:`helpers.machine.access`: loads and stores (bounds, alignment, definedness, word runs);
* :mod:`helpers.machine.races`: the race records of each space and their checks;
* :mod:`helpers.machine.ordering`: the memory model's orders (barriers, warp clocks, release/acquire);
* :mod:`helpers.machine.atomics`: ``atom``/``red``, one thread at a time;
* :mod:`helpers.machine.warpcalls`: how lanes meet at warp-synchronous calls;
* :mod:`helpers.machine.barriers`: ``bar``/``barrier`` and divergent barriers;
* :mod:`helpers.machine.taint`: branches on undefined values;
* :mod:`helpers.machine.findings`: findings and their wording;
* :mod:`helpers.machine.counters`: counters and trace events.
"""
from __future__ import annotations

import time
from typing import Optional

import numpy as np

from helpers.machine import decode as dec
from helpers.machine.access import Access, ONES
from helpers.machine.atomics import Atomics
from helpers.machine.barriers import Barriers
from helpers.machine.counters import Counting
from helpers.machine.findings import Findings
from helpers.machine.layout import Layout
from helpers.machine.ordering import Ordering, strength, sync_semantics
from helpers.machine.ptx import Function, Module
from helpers.machine.races import Races
from helpers.machine.registers import Affine, Registers
from helpers.machine.report import Counters, Finding, MachineError, Report, StepLimit
from helpers.machine.scheduler import EXIT, Group, RUN, Scheduler
from helpers.machine.taint import Taint
from helpers.machine.warpcalls import WarpCalls


# Fair scheduling (Programming Guide, "Independent Thread Scheduling": starvation-free algorithms
# finish): a group that runs this many iterations of a loop in one go, while other threads could run
# at other PCs, hands every one of them a turn (Scheduler.owed_turns). Low enough that a lock passed
# from block to block costs a few thousand steps, high enough that the loops of ordinary kernels,
# which run as one group because lowest-PC-first keeps them together, are never split by it.
FAIR_SPINS = 256
# A back edge that has once needed fair turns is a spin loop (a lock, a flag): later groups spinning
# there hand turns after this many iterations, so a lock that the 32 lanes of a warp take in turn costs
# one long wait, not 32. Ordinary kernels never reach FAIR_SPINS, so this never applies to them.
FAIR_SPINS_AGAIN = 4


def _prepared(fn: Function) -> list:
    makers = getattr(fn, "_makers", None)
    if makers is None:
        makers = [dec.decode(ins, fn) for ins in fn.instrs]
        fn._makers = makers  # type: ignore[attr-defined]
        fn._contractable = _contractable(fn)  # type: ignore[attr-defined]
    return makers


def _contractable(fn: Function) -> list[tuple]:
    """add/sub.f32/f64 without a rounding modifier fed by a mul without one: ptxas may fuse the pair
    into an fma (PTX ISA, add (floating point): "add.f32 ... may be optimized aggressively by the code
    generator, e.g. mul/add sequences with no rounding modifiers may be contracted into fma")."""
    muls = set()
    for ins in fn.instrs:
        if ins.opcode == "mul" and ins.mods and ins.mods[-1] in ("f32", "f64") and \
                not any(m in dec.ROUND_F for m in ins.mods) and ins.operands:
            muls.add(getattr(ins.operands[0], "name", None))
    out = []
    for ins in fn.instrs:
        if ins.opcode in ("add", "sub") and ins.mods and ins.mods[-1] in ("f32", "f64") and \
                not any(m in dec.ROUND_F for m in ins.mods):
            if any(getattr(o, "name", None) in muls for o in ins.operands[1:]):
                out.append((ins.index, ins.text, ins.loc.line if ins.loc else None))
    return out


class Launch(Scheduler, Layout, Findings, Taint, Access, Races, Ordering, Atomics, WarpCalls, Barriers, Counting):
    """The state of launches of one kernel. Decoded ops call back into it for memory and
    synchronisation; they are bound once and serve every launch shape (:meth:`reshape`), since
    binding a function's ops costs more than running a small launch. Its methods live in the rooms
    it inherits (the module docstring lists them); this class keeps the state's life cycle and the
    run loop."""

    def __init__(self, module: Module, fn: Function, arrays: tuple) -> None:
        """Registers and decoded ops for launches of ``fn``; ``arrays`` says which argument positions
        are arrays (their order fixes the global address of every variable). :meth:`reshape` gives
        it a grid and block."""
        self.module, self.fn = module, fn
        if len(arrays) != len(fn.params):
            raise ValueError(f"args must have one value per kernel parameter ({len(fn.params)}: "
                             f"{[p.type for p in fn.params]}); got {len(arrays)}")
        self.arrays = arrays
        self.regs = Registers({name: dec.storage_dtype(t) for name, t in fn.regs.items()})
        self.shape: Optional[tuple] = None
        self.T = 0
        self.static_layout()
        self.key_ids: dict[str, int] = {}
        self.any_tainted = False
        self.steps = 0
        self.trace_on = False
        self.ops = [m(self) for m in _prepared(fn)]
        self.strong = np.array([strength(ins) for ins in fn.instrs] or [0], np.int8)
        # volatile counts as strong for the wording of a cross-block read (see report_race), not for ordering
        self.vol = np.array([bool(strength(ins)) or "volatile" in ins.mods for ins in fn.instrs] or [False])
        self.sem = [sync_semantics(ins) for ins in fn.instrs]
        self.atomic_pc = np.array([ins.opcode in ("atom", "red") for ins in fn.instrs] or [False])

    def reshape(self, grid, block, shared_mem: int) -> None:
        """Geometry and per-thread state for launches of ``grid`` x ``block`` with ``shared_mem``
        bytes of dynamic shared memory (kept while the next launch has the same shape)."""
        if self.shape == (grid, block, shared_mem):
            return
        B = block[0] * block[1] * block[2]
        TPC = (B + 31) // 32 * 32
        ncta = grid[0] * grid[1] * grid[2]
        if ncta * TPC > 1 << 24:
            raise MachineError(f"grid {grid} x block {block} has {ncta * B} threads; the machine "
                               f"runs at most {1 << 24}")
        self.shared_layout(shared_mem)
        self.shape = None     # until every per-thread array below fits the new shape
        self.grid, self.block = grid, block
        self.B, self.Wc, self.TPC, self.ncta = B, TPC // 32, TPC, ncta
        self.T = ncta * TPC
        self.n_warps = self.T // 32
        self.arange = np.arange(max(self.T, 64), dtype=np.int64)
        self.exists = (self.arange[:self.T] % TPC) < B
        self.all_exist = B == TPC
        self._special: dict[str, np.ndarray] = {}
        self._special_rules: dict[str, Optional[Affine]] = {}
        self._lanes_true: dict[int, np.ndarray] = {}
        self.regs.reset(self.T)
        self.status = np.zeros(self.T, np.int8)
        self.pc = np.zeros(self.T, np.int64)
        self.tainted = np.zeros(self.T, bool)
        self.last_effect = np.full(self.T, -1, np.int64)  # the step of its last store, atomic or synchronisation
        self.taint_until: Optional[np.ndarray] = None   # the rest only once some thread needs them
        self.bar_id: Optional[np.ndarray] = None
        self.gspace = self.sspace = self.lspace = None
        self.shape = (grid, block, shared_mem)

    def release(self) -> None:
        """Drop the per-thread state (kept bindings only); the next launch reshapes."""
        self.shape = None
        self.regs.release()
        for name in ("arange", "exists", "status", "pc", "tainted", "last_effect", "taint_until", "bar_id",
                     "gspace", "sspace", "lspace", "_special", "_special_rules"):
            setattr(self, name, None)

    @property
    def held_threads(self) -> int:
        """How many threads' state this launch keeps (0 once released)."""
        return self.T if self.shape is not None else 0

    def start(self, args, *, trace: bool, max_steps: int, racy_loads: Optional[set] = None,
              globals_: Optional[dict] = None, serial: bool = False, deadline: Optional[float] = None) -> None:
        """Reset every per-launch state and load the arguments. ``deadline``: a ``time.perf_counter()``
        value past which the launch stops (:class:`StepLimit`), None for none."""
        self.serial = serial
        self.regs.reset(self.T)
        self.trace_on = trace
        self.max_steps = max_steps
        self.deadline = deadline
        self.racy_loads = racy_loads if racy_loads is not None else set()
        self.new_racy: set = set()
        by_pc: dict[int, list] = {}
        for t_, p_ in self.racy_loads:
            by_pc.setdefault(p_, []).append(t_)
        self.racy_by_pc = {k: np.array(v, np.int64) for k, v in by_pc.items()}
        self.deadlocked = False
        self.steps = 0
        self.findings: dict[tuple, Finding] = {}
        self.order: list[tuple] = []
        self.status.fill(RUN)
        if not self.all_exist:
            self.status[~self.exists] = EXIT
        self.pc.fill(0)
        self.tainted.fill(False)
        if self.taint_until is not None:
            self.taint_until.fill(-1)
        self.any_tainted = False
        self.uctl: dict[int, int] = {}
        if self.bar_id is not None:
            self.bar_cnt.fill(-1)
            self.ws_key.fill(-1)
            self.ws_mdef.fill(True)
            self.bar_pred_def.fill(True)
        self.last_effect.fill(-1)
        self.start_ordering()
        self.last_atom: dict[int, tuple] = {}   # global word -> (thread, pc, scope) of its last atomic
        n_ins = len(self.fn.instrs)
        self.ci = {k: np.zeros(n_ins, np.int64) for k in ("issued", "active_lanes", "predicated_on", "shared_requests",
                                                         "shared_wavefronts", "global_requests", "global_sectors",
                                                         "barriers")}
        self.cw = {k: np.zeros(self.n_warps, np.int64) for k in self.ci}
        self.events: list = []
        self.ws_events: list = []
        self.shared_events: list = []   # with trace: (step, pc, warps, wavefronts) per shared request
        self.mem_events: list = []
        self.fresh_memory(args, globals_ or {})

    def run(self) -> None:
        T = self.T
        ops = self.ops
        ci_issued, ci_active, ci_pred = self.ci["issued"], self.ci["active_lanes"], self.ci["predicated_on"]
        cw_pred = self.cw["predicated_on"]
        guards = {}
        turns: list = []   # fair turns still owed (see owed_turns), the next one last
        spun: set = set()  # back edges that have needed fair turns (FAIR_SPINS_AGAIN)
        while True:
            turn = False
            if turns:
                g = turns.pop()
                g = g[(self.status[g] == RUN) & (self.pc[g] == self.pc[g[0]])]
                if not g.size:
                    continue
                turn = True
                p, q = int(self.pc[g[0]]), 1 << 62
            else:
                runnable = np.flatnonzero(self.status == RUN)
                if self.serial and runnable.size:   # only the first CTA that has not exited runs
                    runnable = runnable[runnable // self.TPC == self.first_cta()]
                if runnable.size == 0:
                    if (self.status == EXIT).all():
                        return
                    if not self.resolve_stall():
                        return
                    continue
                pcs = self.pc if runnable.size == T else self.pc[runnable]
                p = int(pcs.min())
                at = pcs == p
                everyone = bool(at.all())
                g = runnable if everyone else runnable[at]
                q = 1 << 62 if everyone else int(pcs[~at].min())
            spins = 0
            G = Group(g, T)
            nw = G.warps()[0].size
            k = kf = 0
            while True:
                self.steps += 1
                if self.steps > self.max_steps:
                    raise StepLimit(self.max_steps, self.fn.instrs[p].loc)
                if self.deadline is not None and not self.steps & 63 and time.perf_counter() > self.deadline:
                    raise StepLimit(self.steps, self.fn.instrs[p].loc, seconds=True)
                op = ops[p]
                ins = op.instr
                kind = op.kind
                if self.any_tainted:
                    self.untaint_at(G, p)
                on = None
                gv = None
                once = None  # threads tainted for this one instruction (its guard is undefined)
                if ins.guard is not None:
                    read = guards.get(ins.guard)
                    if read is None:
                        read = guards[ins.guard] = self.regs.reader(ins.guard)
                    gv, gd = read(G)
                    if ins.guard_negated:
                        gv = ~gv
                    if gd is not True and not gd.all():
                        ud = ~gd
                        if kind == dec.BRA or kind == dec.EXIT:
                            self.taint_branch(G.idx[ud], p)
                        elif kind in (dec.ALU, dec.ATOM, dec.FENCE):
                            # whether it executes is undefined: execute it, its results undefined
                            self.uctl[p] = self.uctl.get(p, 0) + int(ud.sum())
                            gv = gv | ud
                            once = G.idx[ud & ~self.tainted[G.idx]]
                            self.tainted[once] = True
                            self.any_tainted = True
                        else:
                            self.uctl[p] = self.uctl.get(p, 0) + int(ud.sum())
                    if gv.all():
                        gv = None
                    else:
                        on = G.sub(gv, T)
                if kind != dec.WS:
                    ci_issued[p] += nw
                    ci_active[p] += G.n
                    k += 1
                    if on is None:
                        ci_pred[p] += G.n
                        kf += 1
                    else:
                        ci_pred[p] += on.n
                        if on.n:
                            wo, co = on.warps()
                            cw_pred[wo] += co
                    if self.trace_on:
                        self.trace_issue(p, G, on)
                act = G if on is None else on
                if kind == dec.ALU or kind == dec.ATOM or kind == dec.FENCE:
                    if act.n:
                        op.run(act)
                    if once is not None:
                        self.tainted[once] = False
                        self.any_tainted = bool(self.tainted.any())
                    p += 1
                    if p >= q:
                        G.put(self.pc, p)
                        break
                    continue
                if kind == dec.BRA:
                    if act.n == G.n:
                        if op.target <= p:   # a loop's next iteration
                            if turn:         # a fair turn lasts one iteration
                                G.put(self.pc, op.target)
                                break
                            spins += 1
                            if q < 1 << 62 and spins > (FAIR_SPINS_AGAIN if p in spun else FAIR_SPINS):
                                spun.add(p)
                                G.put(self.pc, op.target)
                                turns = self.owed_turns(G)
                                break
                        p = op.target
                    elif act.n == 0:
                        p += 1
                    else:
                        G.put(self.pc, p + 1)
                        self.pc[act.idx] = op.target
                        break
                    if p >= q:
                        G.put(self.pc, p)
                        break
                    continue
                if kind == dec.EXIT:
                    if act.n:
                        act.put(self.pc, p)
                        self.on_exit(act)
                    if act.n == G.n:
                        break
                    if act.n:
                        self.count_issues(G, k, kf)
                        k = kf = 0
                        G = G.sub(~gv, T)
                        nw = G.warps()[0].size
                    p += 1
                    if p >= q:
                        G.put(self.pc, p)
                        break
                    continue
                if kind == dec.TRAP:
                    if act.n:
                        raise MachineError(f"the kernel executed `{ins.text}` (a trap, e.g. a failed assert) at "
                                           f"{ins.loc.short() if ins.loc else 'PTX instruction ' + str(p)}")
                    p += 1
                    if p >= q:
                        G.put(self.pc, p)
                        break
                    continue
                if kind in (dec.BAR, dec.WS):
                    rest = None
                    if act.n != G.n:
                        rest = G.sub(~gv, T)
                        self.pc[rest.idx] = p + 1
                    released = np.zeros(0, np.int64)
                    if act.n:
                        released = self.bar_arrive(act, p, op) if kind == dec.BAR else \
                            self.ws_arrive(act, p, op, moves_on=rest is None and p + 1 < q)
                    if rest is None and released.size == G.n and p + 1 < q and \
                            (released is G.idx or np.array_equal(released, G.idx)):
                        # everyone met at once: keep going as one group
                        p += 1
                        continue
                    break
                raise MachineError(f"unknown op kind {kind}")
            self.count_issues(G, k, kf)

    def report(self) -> Report:
        undefined = []
        for a, al in zip(self.args, self.arg_allocs):
            if al is None:
                undefined.append(None)
                continue
            d = self.gspace.defined[al.start:al.start + al.nbytes]
            its = a.itemsize if a.itemsize else 1
            if its in ONES:   # every byte of an element defined: its bytes as one word equal 0x01...01
                u = d.view(dec.UINT[its]) != ONES[its]
            else:
                u = ~d.reshape(-1, its).all(axis=1) if a.size else np.zeros(0, bool)
            undefined.append(u.reshape(a.shape))
        counters = Counters(per_warp=dict(self.cw), by_pc=dict(self.ci), instrs=self.fn.instrs)
        trace = None
        if self.trace_on:
            from helpers.machine.trace import MachineTrace
            trace = MachineTrace(self)
        ug: dict[str, list] = {}
        for name, a, al in self.extra:
            d = self.gspace.defined[al.start:al.start + al.nbytes]
            ug.setdefault(name, []).append((~d.reshape(-1, a.itemsize).all(axis=1)).reshape(a.shape) if a.size
                                           else np.zeros(a.shape, bool))
        uc = [(pc, self.fn.instrs[pc].text, self.fn.instrs[pc].loc.line if self.fn.instrs[pc].loc else None, n)
              for pc, n in sorted(self.uctl.items())]
        return Report(issues=[self.findings[k] for k in self.order], undefined=undefined, counters=counters,
                      undefined_globals=ug, undefined_control=uc,
                      trace=trace, fma_contractable=list(getattr(self.fn, "_contractable", [])), steps=self.steps)

    def copy_back(self) -> None:
        for _, a, al in self.extra:
            if al.nbytes and a.flags.writeable:
                a.reshape(-1).view(np.uint8)[:] = self.gspace.data[al.start:al.start + al.nbytes]
        for i, (a, al) in enumerate(zip(self.args, self.arg_allocs)):
            if al is None or al.nbytes == 0:
                continue
            new = self.gspace.data[al.start:al.start + al.nbytes]
            flat = a.reshape(-1).view(np.uint8)
            if not a.flags.writeable:
                if not np.array_equal(flat, new):
                    raise ValueError(f"args[{i}] is a read-only array but the kernel wrote to it")
                continue
            flat[:] = new


# Bound launches, one per kernel and argument kinds, most recently used last. Each keeps the
# per-thread state of its last shape for the next launch of that shape (a reset costs less than
# allocating it again), within bounds: at most _MAX_KEPT_THREADS threads a launch, _MAX_HELD_THREADS
# in all; the oldest give theirs up first and keep only their bound ops.
_CACHE: dict = {}


_MAX_LAUNCHES = 64


_MAX_KEPT_THREADS = 1 << 17


_MAX_HELD_THREADS = 1 << 18


def _launcher(module: Module, fn: Function, arrays: tuple) -> Launch:
    """The bound Launch of ``fn`` for arguments of these kinds, from an earlier call when there was one."""
    key = (id(module), fn.name, arrays)
    L = _CACHE.pop(key, None)
    if L is None:
        L = Launch(module, fn, arrays)
    _CACHE[key] = L
    while len(_CACHE) > _MAX_LAUNCHES:
        _CACHE.pop(next(iter(_CACHE)))
    return L


def _trim(last: Launch) -> None:
    """Bound the per-thread state the cached launches keep, after ``last`` ran."""
    if last.held_threads > _MAX_KEPT_THREADS:
        last.release()
    held = sum(L.held_threads for L in _CACHE.values())
    for L in list(_CACHE.values()):
        if held <= _MAX_HELD_THREADS:
            break
        if L is not last:
            held -= L.held_threads
            L.release()


def launch(module: Module, fn: Function, grid, block, args, shared_mem: int, *, trace: bool = False,
           max_steps: int = 2_000_000, globals_: Optional[dict] = None, serial: bool = False,
           max_seconds: Optional[float] = None) -> Report:
    """Run one launch; replay it once if a racing store changed what an earlier load had read.

    ``max_seconds`` bounds the wall-clock time of the launch, replay included (None: no bound): a step
    costs from tens of microseconds to milliseconds with the launch's size, so a step count alone does
    not bound the time of an endless loop in a large launch.

    ``serial``: the CTAs run one after another in linear block order, each to its end before the
    next starts. The Programming Guide ("Thread Hierarchy") requires that blocks can run "in any
    order, in parallel or in series": code in which a block waits for a later one never ends here
    (it runs into ``max_steps``)."""
    arrays = tuple(isinstance(a, np.ndarray) for a in args)
    L = _launcher(module, fn, arrays)
    L.reshape(grid, block, shared_mem)
    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    L.start(args, trace=trace, max_steps=max_steps, globals_=globals_, serial=serial, deadline=deadline)
    L.run()
    if L.new_racy:
        L.start(args, trace=trace, max_steps=max_steps, racy_loads=set(L.new_racy), globals_=globals_,
                serial=serial, deadline=deadline)
        L.run()
    L.copy_back()
    report = L.report()
    _trim(L)
    return report
