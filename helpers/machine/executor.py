"""One kernel launch on the SIMT machine: threads, the scheduler, memory, synchronisation, findings.

Execution model (docs/machine.md has the long form):

* Threads as on hardware (CUDA C++ Programming Guide, "Thread Hierarchy"): linear id
  ``x + y*Dx + z*Dx*Dy``; warps are 32 consecutive linear ids; a block whose size is not a multiple
  of 32 has a partial last warp, whose missing lanes never exist (they behave as exited lanes).
* Independent thread scheduling (Programming Guide, "Independent Thread Scheduling", Volta+): every
  thread has its own PC. The scheduler repeatedly takes the *lowest PC* among runnable threads and
  executes that instruction for every runnable thread at it, across all warps and blocks at once
  (vectorised). Lowest-PC-first reconverges structured code at its join points, so convergent code
  runs as whole warps. A group keeps going through straight-line code while it is still the lowest.
* Warp-synchronous instructions (PTX ISA, Instruction Set: shfl.sync, bar.warp.sync, vote.sync,
  match.sync, redux.sync): a thread waits until every non-exited lane named in its member
  mask waits at a *matching* instruction (same operation and qualifiers, same mask); on sm_70+ that
  may be a different instruction (``__syncwarp()``, or ``__shfl_sync(FULL, v, 0)``, on both sides of
  a branch), and the call is defined (the sm_70 shuffle rule; the "same instruction in convergence"
  is required only for .target sm_6x or below, which the machine does not run). When no
  thread can move, lanes waiting at non-matching ones make the call undefined (``undefined_shuffle``,
  it then executes with those lanes as non-callers); lanes that wait at a barrier are a ``deadlock``.
* Barriers (PTX ISA, bar/barrier): a barrier waits for every non-exited thread of the CTA
  (or ``b`` threads, counted per whole warp); exiting threads release the barriers on all threads of
  the CTA that they hold up, not counted ones (PTX ISA, exit). ``bar.sync`` is
  ``barrier.sync.aligned``: the non-exited lanes of a warp, or the warps of a CTA, that meet at
  different instructions of one whole-CTA barrier are a ``divergent_barrier``.
* Atomics (PTX ISA, atom / red) run one thread at a time: within one scheduling
  step in increasing linear thread id over the whole grid (block-major: block linear id, then
  thread linear id), steps in schedule order.
* Races: two accesses to one address (global or shared) by different threads, at least one a write,
  not ordered by happens-before, are a ``race``. Happens-before here: program order; a completed
  CTA barrier (for threads of that CTA); ``bar.warp.sync`` between lanes it synchronises (a vector
  clock per lane); and, across CTAs, a release pattern (a gpu-scope fence before an atomic, or a
  ``.release``/``.acq_rel`` atomic or ``st.release``) observed by an acquire pattern of the other CTA
  (its atomic or strong load followed by a fence, or an ``.acquire``/``.acq_rel`` one): PTX ISA 8.4
  Table 20 and 8.8 "Release and acquire patterns", tracked per CTA. A ``.cta``-scope fence or atomic
  orders nothing across CTAs, and a ``.cta``-scope atomic on a word another CTA's atomic touched is a
  race (8.7 "Morally strong operations"). An atomic that reads a value another CTA stored, with no
  release/acquire between them, may read the older value (8.9.5): reported, the value undefined. An
  ``ld.global.nc`` of bytes written in the launch is outside the model (8.1): reported, undefined.
  Shuffles and votes are not fences; volatile is not a barrier; atomics on one word are not checked
  against each other otherwise. A load that sees a racing store's changed value,
  or one that a racing store later changes, is undefined (the second case is found and the launch
  replayed once with those loads marked). A store over undefined bytes (shared memory nobody wrote)
  always counts as a change: the racing load may have read the old bytes.
"""
from __future__ import annotations

import re
import time
from typing import Optional

import numpy as np

from helpers.machine import decode as dec
from helpers.machine import memory as mem
from helpers.machine.memory import BYTES, CLK, EP, NREC, PC, REL, TID
from helpers.machine.ptx import Addr, Function, Module, Reg, Sym, type_size
from helpers.machine.registers import Affine, Registers
from helpers.machine.report import Counters, Finding, MachineError, Report, StepLimit, UnsupportedInstruction
from helpers.machine.warpsync import BadOperand

RUN, BAR, WS, EXIT = 0, 1, 2, 3
_SPECIALS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%gridid", "%nsmid",
             "%dynamic_smem_size", "%total_smem_size")
_LANEMASKS = ("eq", "lt", "le", "gt", "ge")
LANE = np.arange(32, dtype=np.int64)
ONES = {1: np.uint8(1), 2: np.uint16(0x0101), 4: np.uint32(0x01010101), 8: np.uint64(0x0101010101010101)}
WSHIFT = 40   # a warp number << WSHIFT | an address below 2^40: one sortable key


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


def _prepared(fn: Function) -> list:
    makers = getattr(fn, "_makers", None)
    if makers is None:
        makers = [dec.decode(ins, fn) for ins in fn.instrs]
        fn._makers = makers  # type: ignore[attr-defined]
        fn._contractable = _contractable(fn)  # type: ignore[attr-defined]
    return makers


_SCOPES = {"cta": 1, "cluster": 2, "gpu": 2, "sys": 2}


def _strength(ins) -> int:
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


def _order(ins) -> tuple[bool, bool, int]:
    """(release, acquire, scope) of an ``atom``/``red``/``ld``/``st``: PTX ISA 8.4 Table 20 ("Operation
    types"): ``.release`` is a release operation, ``.acquire`` an acquire one, ``.acq_rel`` both;
    alone each forms a release or acquire pattern (8.8 "Release and acquire patterns"). Scope as
    :func:`_strength`; an atomic without one is ``.gpu`` (PTX ISA, atom)."""
    if ins.opcode not in ("atom", "red", "ld", "st"):
        return False, False, 0
    mods = set(ins.mods)
    rel = bool({"release", "acq_rel"} & mods)
    acq = bool({"acquire", "acq_rel"} & mods) and ins.opcode != "red"
    return rel, acq, next((_SCOPES[m] for m in ins.mods if m in _SCOPES), 2)


def _undefine(d, at, eidx: Optional[np.ndarray], n: int, vec: int):
    """Definedness ``d`` of an access's ``n`` elements ((n,) or (n, vec)) with the elements that hold
    the words ``at`` (indices or a mask into the access's words; ``eidx`` maps each word to its
    element, None where each element is one word) made undefined."""
    bad = np.zeros(n, bool)
    bad[at if eidx is None else eidx[at]] = True
    return d & (~bad if vec == 1 else ~bad[:, None])


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


def _distinct(key: np.ndarray) -> np.ndarray:
    """The distinct values of ``key``, ascending (``np.unique`` without its overhead; sorts ``key``
    unless it is already in order, as the accesses of whole warps to consecutive addresses are)."""
    if key.size > 1 and not (key[1:] >= key[:-1]).all():
        key.sort()
    first = np.empty(key.size, bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    return key[first]


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


class Launch:
    """The state of launches of one kernel. Decoded ops call back into it for memory and
    synchronisation; they are bound once and serve every launch shape (:meth:`reshape`), since
    binding a function's ops costs more than running a small launch."""

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
        self._static_layout()
        self.key_ids: dict[str, int] = {}
        self.any_tainted = False
        self.steps = 0
        self.trace_on = False
        self.ops = [m(self) for m in _prepared(fn)]
        self.strong = np.array([_strength(ins) for ins in fn.instrs] or [0], np.int8)
        # volatile counts as strong for the wording of a cross-block read (see _race), not for ordering
        self.vol = np.array([bool(_strength(ins)) or "volatile" in ins.mods for ins in fn.instrs] or [False])
        self.sem = [_order(ins) for ins in fn.instrs]

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
        self._shared_layout(shared_mem)
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

    def _wait_state(self) -> None:
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
        self.bepoch = np.zeros(self.ncta, np.int32)
        self.vc: Optional[np.ndarray] = None          # (n_warps, 32, 32) bar.warp.sync vector clocks
        self.rel = np.zeros(self.ncta, np.int32)
        self.acq: Optional[np.ndarray] = None         # (ncta, ncta) acquired release stamps
        self.t_fence: dict[int, int] = {}
        self.pending: dict[int, np.ndarray] = {}
        self.syncvars: dict[tuple, np.ndarray] = {}
        self.last_atom: dict[int, tuple] = {}   # global word -> (thread, pc, scope) of its last atomic
        self.value_w: dict[int, np.ndarray] = {}  # global word -> the record of an atom.exch that wrote it
        n_ins = len(self.fn.instrs)
        self.ci = {k: np.zeros(n_ins, np.int64) for k in ("issued", "active_lanes", "predicated_on", "shared_requests",
                                                         "shared_wavefronts", "global_requests", "global_sectors",
                                                         "barriers")}
        self.cw = {k: np.zeros(self.n_warps, np.int64) for k in self.ci}
        self.events: list = []
        self.ws_events: list = []
        self.shared_events: list = []   # with trace: (step, pc, warps, wavefronts) per shared request
        self.mem_events: list = []
        self._memory(args, globals_ or {})

    # -- layout -------------------------------------------------------------------------------

    def _static_layout(self) -> None:
        """Where every variable and parameter lives (the same for every launch of the function)."""
        fn, module = self.fn, self.module
        self.syms: dict[str, tuple[str, int]] = {}
        n_arrays = sum(self.arrays)
        used = _referenced(fn)
        self.global_vars = [v for v in module.vars if v.space == "global" and v.name in used]
        for j, v in enumerate(self.global_vars):
            self.syms[v.name] = ("global", (mem.GLOBAL_SEG0 + n_arrays + j) << mem.SEG_SHIFT)
        off = 0
        for p in fn.params:
            off = _align(off, p.align)
            self.syms[p.name] = ("param", off)
            off += p.size
        self.param_size = off
        off = 0
        cvars = [v for v in module.vars if v.space == "const"]
        for v in cvars:
            off = _align(off, v.align)
            self.syms[v.name] = ("const", off)
            off += v.size
        self.cspace = mem.Space("const", off, defined=True, track_written=False, races=False)
        for v in cvars:
            if v.init:
                o = self.syms[v.name][1]
                self.cspace.data[o:o + v.size] = _init_bytes(v)
        # shared: static variables, then the dynamic (extern) area
        off = 0
        self.shared_vars: list[tuple[int, int, str, str]] = []
        externs = []
        for v in [*module.vars, *fn.vars]:
            if v.space != "shared":
                continue
            if v.extern or v.count == 0:
                externs.append(v)
                continue
            off = _align(off, v.align)
            self.syms[v.name] = ("shared", off)
            self.shared_vars.append((off, v.size, v.name, v.type))
            off += v.size
        dyn = _align(off, max([16] + [v.align for v in externs]))
        for v in externs:
            self.syms[v.name] = ("shared", dyn)
        self._static_shared = list(self.shared_vars)
        self._externs = externs
        self.dyn_base = dyn if externs else off
        off = 0
        for v in fn.vars:
            if v.space == "local":
                off = _align(off, v.align)
                self.syms[v.name] = ("local", off)
                off += v.size
        self.L_total = off
        self.L_stride = _align(max(off, 4), 16)

    def _shared_layout(self, shared_mem: int) -> None:
        """The dynamic shared memory area of ``shared_mem`` bytes after the static variables."""
        dyn = self.dyn_base
        S_total = dyn + shared_mem
        if S_total > 228 * 1024:
            raise ValueError(f"shared_mem: {S_total} bytes of shared memory per block exceed the 227 KiB "
                             f"an sm_90 block may have")
        self.shared_vars = self._static_shared + [(dyn, shared_mem, v.name, v.type) for v in self._externs]
        self.S_total = S_total
        self.S_stride = _align(max(S_total, 4), 256)

    def _memory(self, args, globals_: dict) -> None:
        """Fresh memory for one launch: the arguments' allocations, variables, parameters."""
        fn = self.fn
        gl = mem.GlobalLayout()
        self.arg_allocs: list[Optional[mem.Allocation]] = []
        self.args = args
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                if not a.flags.c_contiguous:
                    raise ValueError(f"args[{i}] must be a C-contiguous NumPy array (use np.ascontiguousarray)")
                self.arg_allocs.append(gl.add(f"argument {i}", a.nbytes, mem.array_offset(a), arg=i))
            else:
                self.arg_allocs.append(None)
        var_allocs = [(v, gl.add(v.name, v.size)) for v in self.global_vars]
        known = {v.name: v for v in self.global_vars}
        self.extra: list[tuple[str, np.ndarray, mem.Allocation]] = []
        var_bytes: dict[str, bytes] = {}
        for name, value in globals_.items():
            if name not in known:
                raise ValueError(f"globals: {name!r} is not a __device__ variable this kernel uses; "
                                 f"it uses {sorted(known) or 'none'}")
            var_bytes[name] = self._pack_global(name, value, known[name], gl)
        self.glayout = gl
        self.gspace = self._space(self.gspace, "global", gl.size, defined=True, track_written=False, races=True)
        for a, al in zip(args, self.arg_allocs):
            if al is not None and al.nbytes:
                self.gspace.data[al.start:al.start + al.nbytes] = a.reshape(-1).view(np.uint8)
        for v, al in var_allocs:
            if v.init:
                self.gspace.data[al.start:al.start + al.nbytes] = _init_bytes(v)
            if v.name in var_bytes:
                self.gspace.data[al.start:al.start + al.nbytes] = np.frombuffer(var_bytes[v.name], np.uint8)
        for _, a, al in self.extra:
            if al.nbytes:
                self.gspace.data[al.start:al.start + al.nbytes] = a.reshape(-1).view(np.uint8)
        self.gtab = gl.tables()
        pbytes = bytearray(self.param_size)
        for i, (p, a) in enumerate(zip(fn.params, args)):
            o = self.syms[p.name][1]
            pbytes[o:o + p.size] = _param_bytes(i, p, a, self.arg_allocs[i])
        self.pspace = mem.Space("param", len(pbytes), defined=True, track_written=False, races=False)
        self.pspace.data[:len(pbytes)] = np.frombuffer(bytes(pbytes), np.uint8)
        # with no shared memory every shared access is out of bounds: nothing to keep per CTA
        self.sspace = self._space(self.sspace, "shared", self.ncta * self.S_stride if self.S_total else 0,
                                  defined=False, track_written=True, races=True)
        self.lspace = self._space(self.lspace, "local", self.T * self.L_stride if self.L_total else 0, defined=False,
                                  track_written=True, races=False)

    @staticmethod
    def _space(old: Optional[mem.Space], name: str, nbytes: int, **kind) -> mem.Space:
        """A fresh space of ``nbytes``: the previous launch's reset in place when it has that size (its
        memory is already mapped: refilling it costs a fraction of allocating and faulting in new pages)."""
        if old is not None and old.size == mem.Space.rounded(nbytes):
            old.reset()
            return old
        return mem.Space(name, nbytes, **kind)

    def _pack_global(self, name: str, value, var, gl: mem.GlobalLayout) -> bytes:
        """The bytes of a __device__ variable: raw (an array or scalar of its size) or a tuple of
        struct fields laid out in C order with natural alignment, arrays becoming pointers to new
        allocations (updated in place after the launch)."""
        if isinstance(value, tuple):
            out = bytearray()
            for j, f in enumerate(value):
                if isinstance(f, np.ndarray):
                    if not f.flags.c_contiguous:
                        raise ValueError(f"globals[{name!r}][{j}] must be a C-contiguous array")
                    al = gl.add(f"{name} field {j}", f.nbytes, mem.array_offset(f))
                    self.extra.append((name, f, al))
                    b, align = int(al.base).to_bytes(8, "little"), 8
                elif isinstance(f, np.generic):
                    b, align = f.tobytes(), f.dtype.itemsize
                else:
                    raise ValueError(f"globals[{name!r}][{j}] must be a NumPy array (a pointer) or a NumPy "
                                     f"scalar; got {type(f).__name__}")
                out.extend(b"\0" * ((-len(out)) % align))
                out.extend(b)
            out.extend(b"\0" * ((-len(out)) % 8))
            data = bytes(out)
        elif isinstance(value, (np.ndarray, np.generic)):
            data = value.tobytes()
        else:
            raise ValueError(f"globals[{name!r}] must be a tuple of fields, a NumPy array or a NumPy scalar")
        if len(data) > var.size or (not isinstance(value, tuple) and len(data) != var.size):
            raise ValueError(f"globals[{name!r}] has {len(data)} bytes; the variable has {var.size}")
        return data + b"\0" * (var.size - len(data))

    # -- services for decoded ops -------------------------------------------------------------

    @staticmethod
    def check_special(name: str) -> None:
        """Raise :class:`helpers.machine.decode.Unsupported` unless :meth:`special` knows ``name``."""
        base = name.split(".")[0]
        if base not in _SPECIALS and base[len("%lanemask_"):] not in _LANEMASKS:
            raise dec.Unsupported(f"special register {name}")

    def special(self, name: str) -> np.ndarray:
        """The values of special register ``name`` (``%tid.x``, ...) for every thread."""
        if name in self._special:
            return self._special[name]
        loc = self.arange[:self.T] % self.TPC
        bx, by, bz = self.block
        gx, gy, gz = self.grid
        cta = np.arange(self.T, dtype=np.int64) // self.TPC
        lane = np.arange(self.T, dtype=np.int64) & 31
        base = name.split(".")[0]
        comp = name.split(".")[1] if "." in name else None
        k = {"x": 0, "y": 1, "z": 2}.get(comp, 0)
        if base == "%tid":
            v = [loc % bx, (loc // bx) % by, loc // (bx * by)][k]
        elif base == "%ntid":
            v = np.full(self.T, self.block[k])
        elif base == "%ctaid":
            v = [cta % gx, (cta // gx) % gy, cta // (gx * gy)][k]
        elif base == "%nctaid":
            v = np.full(self.T, self.grid[k])
        elif base == "%laneid":
            v = lane
        elif base == "%warpid":
            v = loc >> 5
        elif base == "%nwarpid":
            v = np.full(self.T, self.Wc)
        elif base.startswith("%lanemask_"):
            kind = base[len("%lanemask_"):]
            one = np.uint64(1) << lane.astype(np.uint64)
            v = {"eq": one, "lt": one - np.uint64(1), "le": (one << np.uint64(1)) - np.uint64(1),
                 "gt": ~((one << np.uint64(1)) - np.uint64(1)), "ge": ~(one - np.uint64(1))}[kind]
            v = (v & np.uint64(0xFFFFFFFF))
        elif base in ("%smid", "%gridid"):
            v = np.zeros(self.T)
        elif base == "%nsmid":
            v = np.ones(self.T)
        elif base == "%dynamic_smem_size":
            v = np.full(self.T, self.S_total - self.dyn_base)
        elif base == "%total_smem_size":
            v = np.full(self.T, self.S_total)
        else:
            raise dec.Unsupported(f"special register {name}")
        arr = np.asarray(v).astype(np.uint32)
        self._special[name] = arr
        return arr

    def special_affine(self, name: str) -> Optional[Affine]:
        """Special register ``name`` as an :class:`Affine` rule of every thread's place in the launch,
        when it is exactly one for every thread slot of this shape (those of threads a partial warp
        lacks included, so that the rule's array is :meth:`special`'s): ``%tid.x`` of a
        one-dimensional block of whole warps, ``%ctaid.x`` of a one-dimensional grid, ``%laneid`` of
        a block of at most one warp; else None."""
        if name in self._special_rules:
            return self._special_rules[name]
        rule = None
        if name == "%tid.x" and self.block[1] * self.block[2] == 1 and self.all_exist:
            rule = Affine(0, 0, 1, 32, self.ncta, self.TPC)
        elif name == "%ctaid.x" and self.grid[1] * self.grid[2] == 1:
            rule = Affine(0, 1, 0, 32, self.ncta, self.TPC)
        elif name == "%laneid" and self.TPC == 32:
            rule = Affine(0, 0, 1, 32, self.ncta, self.TPC)
        self._special_rules[name] = rule
        return rule

    def symbol_address(self, name: str) -> int:
        if name not in self.syms:
            raise dec.Unsupported(f"unknown symbol {name}")
        return self.syms[name][1]

    def window(self, space: str) -> int:
        return {"global": 0, "shared": mem.SHARED_WINDOW, "local": mem.LOCAL_WINDOW, "const": mem.CONST_WINDOW,
                "param": mem.PARAM_WINDOW}[space]

    def address_reader(self, a):
        """G -> (the addresses of an address operand as int64 (one, or one per thread of G; or, for
        every thread, an :class:`Affine` rule of 64 bits), defined)."""
        if a.base is None:
            v = np.uint64(a.offset & (2**64 - 1))
            return lambda G: (v, True)
        if a.base_is_reg:
            wide = self.regs.dtype[a.base].itemsize == 8
            r = dec.reader(self, Reg(a.base), "u64" if wide else "u32", affine=True)
            off = a.offset

            def read(G):
                v, d = r(G)
                if type(v) is Affine:
                    rule = v if wide else v.unsigned()     # a 32-bit address is zero-extended
                    if rule is not None:
                        return rule.width(64).plus(off), d
                    v = v.array()
                v = np.asarray(v)
                a = v.view(np.int64) if v.dtype == np.uint64 else v.astype(np.int64)   # the same bits
                return (a + off if off else a), d
            return read
        v = np.int64(self.symbol_address(a.base) + a.offset)
        return lambda G: (v, True)

    # -- findings -------------------------------------------------------------------------------

    def thread_desc(self, t: int) -> tuple:
        cta, loc = int(t) // self.TPC, int(t) % self.TPC
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        return ((cta % gx, (cta // gx) % gy, cta // (gx * gy)), (loc % bx, (loc // bx) % by, loc // (bx * by)))

    def add_finding(self, kind: str, pc: int, message: str, threads=(), count: int = 1, other_pc: Optional[int] = None,
                    key_extra=(), **detail) -> None:
        key = (kind, pc, other_pc, key_extra)
        f = self.findings.get(key)
        if f is not None:
            f.count += count
            return
        ins = self.fn.instrs[pc]
        loc = ins.loc
        f = Finding(kind=kind, message=message, threads=tuple(self.thread_desc(t) for t in threads),
                    instruction=ins.text, line=loc.line if loc and loc.line else None, file=loc.file if loc else None,
                    loc=loc,
                    count=count, detail=detail)
        if other_pc is not None:
            o = self.fn.instrs[other_pc]
            f.other_instruction, f.other_loc = o.text, o.loc
            f.other_line, f.other_file = (o.loc.line or None, o.loc.file) if o.loc else (None, None)
        self.findings[key] = f
        self.order.append(key)

    def where(self, pc: int) -> str:
        loc = self.fn.instrs[pc].loc
        if loc is None:
            return f"PTX instruction {pc}"
        if not loc.line:
            return f"PTX instruction {pc} (the compiler merged it from several lines: no single source line)"
        return f"line {loc.line}"

    def taint_branch(self, threads: np.ndarray, p: int) -> None:
        """``threads`` branch at ``p`` on an undefined value: every register a path of this branch may
        write is undefined from here, and so is whatever they write until the paths join again."""
        from helpers.machine.cfg import flow

        self.uctl[p] = self.uctl.get(p, 0) + int(threads.size)
        join, regs, pcs = flow(self.fn).region(p)
        self._shadow_stores(threads, regs, pcs)
        for r in regs:
            self.regs.undefine(r, threads)
        fresh = threads[~self.tainted[threads]]
        self.tainted[threads] = True
        if self.taint_until is None:
            self.taint_until = np.full(self.T, -1, np.int64)
        self.taint_until[fresh] = join  # -1: the paths never join before the thread exits
        self.any_tainted = True

    def _shadow_stores(self, threads: np.ndarray, regs, pcs) -> None:
        """What the paths the machine does not follow would write: run the arithmetic of every path of
        the branch for ``threads`` (their registers saved and restored), and mark the bytes every store
        or atomic there would address undefined. Loads, synchronisation and guards are skipped, so
        an address that needs them is a guess; the bytes it names are only ever marked undefined."""
        if not any(self.fn.instrs[pc].opcode in ("st", "atom", "red") for pc in pcs):
            return
        saved = {r: self.regs.save(r, threads) for r in regs}
        G = Group(threads, self.T)
        for pc in pcs:
            op = self.ops[pc]
            ins = op.instr
            try:
                if ins.opcode in ("st", "atom", "red"):
                    mods = ins.mods
                    t = mods[-1]
                    vec = next((int(m[1:]) for m in mods if m in ("v2", "v4")), 1)
                    space = next((m for m in mods if m in ("global", "shared", "local")), None)
                    addr_op = ins.operands[1] if ins.opcode == "atom" else ins.operands[0]
                    av, ad = self.address_reader(addr_op)(G)
                    self._forget(G, space, av, type_size(t) * vec)
                elif op.kind == dec.ALU and ins.opcode not in ("ld", "ldu", "st", "activemask"):
                    op.run(G)
            except (UnsupportedInstruction, dec.Unsupported, ValueError, KeyError, IndexError):
                continue
        for r, (v, d) in saved.items():
            self.regs.restore(r, threads, v, d)

    def _forget(self, G: Group, space, addr, nbytes: int) -> None:
        """Mark what an access at ``addr`` would cover undefined (silently skipping bad addresses)."""
        for sp, pos, flat, a, _ in self._resolve(G, self.fn.instrs[0], space, addr, True, nbytes, "", quiet=True):
            idx = flat[:, None] + np.arange(nbytes)
            sp.defined[idx.ravel()] = False

    def _untaint_at(self, G: Group, p: int) -> None:
        t = G.idx[self.tainted[G.idx]]
        if t.size:
            done = t[self.taint_until[t] == p]
            if done.size:
                self.tainted[done] = False
                self.any_tainted = bool(self.tainted.any())

    # -- memory ---------------------------------------------------------------------------------

    def _resolve(self, G: Group, ins, space: Optional[str], addr, adef, nbytes: int, what: str,
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
                    report("out_of_bounds", ins.index, self._oob_message(what, sp, a[bad][0], nbytes),
                                     threads=tids[bad][:2], count=int(bad.sum()), key_extra=(sp,), space=sp,
                                     address=int(a[bad][0]))
                pos, flat, a = pos[ok], flat[ok], a[ok]
            if pos.size:
                yield obj, pos, flat, a, (None if undef is None else ~undef[pos])

    def _one_allocation(self, a: np.ndarray, nbytes: int) -> Optional[int]:
        """When every global address of ``a`` (accesses of ``nbytes``) lies inside one allocation (the
        usual case: a warp's threads index one array), what turns them into flat byte indices."""
        return self._allocation_span(int(a.min()), int(a.max()), nbytes)

    def _allocation_span(self, lo: int, hi: int, nbytes: int) -> Optional[int]:
        """:meth:`_one_allocation` of accesses of ``nbytes`` from address ``lo`` to ``hi``."""
        i = (lo >> mem.SEG_SHIFT) - mem.GLOBAL_SEG0
        if i != (hi >> mem.SEG_SHIFT) - mem.GLOBAL_SEG0 or not 0 <= i < len(self.glayout.allocs):
            return None
        al = self.glayout.allocs[i]
        if lo < al.base or hi + nbytes > al.base + al.nbytes:
            return None
        return al.start - al.base

    def _oob_message(self, what: str, sp: str, a: int, nbytes: int) -> str:
        if sp == "global":
            al = self.glayout.find(int(a))
            if al is None:
                return f"{what} of {nbytes} bytes at an address that belongs to no allocation"
            off = int(a) - al.base
            return (f"{what} of {nbytes} bytes at byte offset {off} of {al.name} ({al.nbytes} bytes): "
                    f"out of bounds")
        if sp == "shared":
            return (f"{what} of {nbytes} bytes at shared offset {int(a)}, past the block's {self.S_total} bytes of "
                    f"shared memory")
        return f"{what} of {nbytes} bytes at {sp} offset {int(a)}: out of bounds"

    def _describe(self, sp: str, a: int) -> str:
        if sp == "shared":
            for off, size, name, t in self.shared_vars:
                if off <= a < off + max(size, 1):
                    es = type_size(t) if t in dec.NP else 1
                    return f"{_short_name(name)} byte {a - off}"
            return f"shared offset {a}"
        al = self.glayout.find(int(a))
        return f"{al.name} byte {int(a) - al.base}" if al else f"address {a:#x}"

    def _stamps(self, tids: np.ndarray) -> tuple:
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

    def _record(self, tids: np.ndarray, pc: int, bm) -> np.ndarray:
        rec = np.empty((tids.size, NREC), np.int32)
        rec[:, TID] = tids
        rec[:, PC] = pc
        rec[:, EP], rec[:, CLK], rec[:, REL] = self._stamps(tids)
        rec[:, BYTES] = bm
        return rec

    def _put(self, recs: mem.Records, words: np.ndarray, tids: np.ndarray, pc: int, bm) -> None:
        """Record an access at ``words`` by ``tids`` (one per word) now."""
        recs.put(words, tids, pc, *self._stamps(tids), 15 if bm is None else bm)

    def _ordered(self, rec: np.ndarray, tids: np.ndarray, pc: int, read: bool = False,
                 hb_only: bool = False) -> np.ndarray:
        """Which recorded accesses cannot race with this one by ``tids`` at ``pc``: the same thread,
        ordered by a barrier, a warp clock or release/acquire, or a morally strong pair.

        ``read`` (an atomic reading a value another CTA stored, :meth:`_atomic_checks`): across CTAs
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

    def _words(self, flat: np.ndarray, nbytes: int):
        """The 4-byte words an access touches, the byte mask within each (None: whole words) and
        which element each word belongs to (None: one word per element)."""
        w0 = flat >> 2
        if nbytes == 4:
            return w0, None, None
        if nbytes < 4:
            return w0, ((1 << nbytes) - 1) << (flat & 3), None
        nw = nbytes // 4
        words = (w0[:, None] + np.arange(nw)).ravel()
        return words, None, np.repeat(np.arange(flat.size), nw)

    def _conflicts(self, sp: mem.Space, ins, hazard: str, recs: mem.Records, tids: np.ndarray, bm,
                   words: np.ndarray, present: Optional[np.ndarray] = None) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """Which of the records ``recs`` at ``words`` (the words this access by ``tids``, one per
        word, touches) it races with: a record on the same bytes that nothing orders before it
        (:meth:`_ordered`). Reports them; returns their positions in ``words`` and their rows, or None.
        ``present``: the positions of ``words`` that hold a record, when the caller has them."""
        if recs.empty:
            return None
        i = np.flatnonzero(recs.tids(words) >= 0) if present is None else present
        if bm is not None and i.size:
            i = i[(recs.column(BYTES, words[i]) & bm[i]) != 0]
        if i.size == 0:
            return None
        rows = recs.rows(words[i])
        racing = ~self._ordered(rows, tids[i], ins.index)
        if not racing.any():
            return None
        i, rows = i[racing], rows[racing]
        self._race(sp, ins, hazard, tids[i], rows, np.ones(i.size, bool), words[i])
        return i, rows

    def _race(self, sp: mem.Space, ins, hazard: str, rec_tids, recs, live, words) -> None:
        """Report live conflicting records as races (aggregated by the two PCs and the hazard)."""
        if not live.any():
            return
        i = np.flatnonzero(live)
        other_pcs = recs[i, PC]
        for opc in np.unique(other_pcs):
            j = i[other_pcs == opc]
            t_later, t_earlier = int(rec_tids[j[0]]), int(recs[j[0], TID])
            spn = "shared" if sp is self.sspace else "global"
            first = {"RAW": "wrote", "WAR": "read", "WAW": "wrote"}[hazard]
            second = {"RAW": "read", "WAR": "wrote", "WAW": "wrote"}[hazard]
            if (t_later >> 5) == (t_earlier >> 5):
                between, fix = "lanes of one warp", "__syncwarp() or __syncthreads()"
            elif t_later // self.TPC == t_earlier // self.TPC:
                between, fix = "warps of one block", "__syncthreads()"
            else:
                between, fix = "blocks", _CROSS_FIX
                if hazard == "RAW" and t_later in self.pending:
                    fix += _NO_ACQUIRE   # its atomic observed a release, and no acquire followed
            where = self._describe_flat(sp, int(words[j[0]]) * 4)
            if between == "blocks" and hazard == "RAW" and self.vol[opc] and self.vol[ins.index]:
                kinds = "atomic or volatile" if ins.opcode in ("atom", "red") or self.strong[opc] else "volatile"
                msg = (f"read on {spn} memory ({where}) not ordered after the write: thread {self._tdesc(t_earlier)} "
                       f"wrote it at {self.where(int(opc))}, thread {self._tdesc(t_later)} read it at "
                       f"{self.where(ins.index)}. Both accesses are {kinds}, so this is no data race, but nothing "
                       f"forms an acquire pattern (PTX ISA 8.8): the read may return the old value (fix: {fix})")
            else:
                msg = (f"{hazard} race on {spn} memory ({where}): thread {self._tdesc(t_earlier)} {first} it at "
                       f"{self.where(int(opc))}, thread {self._tdesc(t_later)} {second} it at "
                       f"{self.where(ins.index)}, with nothing ordering the two (fix: {fix})")
            self.add_finding("race", ins.index, msg, threads=(t_earlier, t_later), count=int(j.size),
                             other_pc=int(opc), key_extra=(hazard, spn), hazard=hazard, space=spn, between=between)

    def _describe_flat(self, sp: mem.Space, flat: int) -> str:
        if sp is self.sspace:
            return self._describe("shared", flat % self.S_stride)
        for al in self.glayout.allocs:
            if al.start <= flat < al.start + max(al.nbytes, 1):
                return f"{_short_name(al.name)} byte {flat - al.start}"
        return "global memory"

    def _tdesc(self, t: int) -> str:
        b, th = self.thread_desc(t)
        bs = f"({b[0]},{b[1]},{b[2]})" if self.ncta > 1 else ""
        ts = f"({th[0]},{th[1]},{th[2]})" if self.block[1] * self.block[2] > 1 else f"{th[0]}"
        return f"{ts} of block {bs}" if bs else ts

    def _counters_mem(self, sp, G: Group, ins, pos, flat, a, nbytes: int) -> None:
        """Shared wavefronts (32 banks of 4-byte words, a word asked for by several lanes served once)
        and global 32-byte sectors, per warp-level request."""
        tids = G.idx if pos.size == G.n else G.idx[pos]
        warps = tids >> 5
        if sp is self.sspace:
            words, _, idx = self._words(flat, nbytes)
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

    def load(self, G: Group, ins, space, addr, adef, t: str, vec: int, read_only: bool = False):
        """What the threads of G read: values and definedness shaped (G.n, vec); a parameter or
        constant that every thread reads at one address comes back once, (1, vec), with True for
        its definedness when all of it is defined."""
        es = type_size(t)
        nbytes = es * vec
        dt = np.dtype(dec.NP[t])
        ut = dec.UINT[es]
        if type(addr) is Affine:
            if nbytes == 4 and not read_only and (run := self._affine_run(G, ins, space, addr)) is not None:
                raw, d = self._load_run(G, ins, run)
                return raw.view(dt)[:, None], d[:, None]
            addr = _per_thread(addr)
        if np.ndim(addr) == 0 and adef is True and space in ("param", "const"):
            sp = self.pspace if space == "param" else self.cspace
            a = int(addr)
            if a % nbytes == 0 and 0 <= a <= sp.size - nbytes:
                # one address for every thread (a kernel parameter): read it once
                d = sp.defined[a:a + nbytes].view(ut) == ONES[es]
                return sp.data[a:a + nbytes].view(dt)[None, :], (True if d.all() else d[None, :])
        if nbytes == 4 and not read_only and (run := self._word_run(G, ins, space, addr, adef)) is not None:
            raw, d = self._load_run(G, ins, run)
            return raw.view(dt)[:, None], d[:, None]
        vals = dfn = None
        for sp, pos, flat, a, aok in self._resolve(G, ins, space, addr, adef, nbytes, "read"):
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
                                     f"({self._describe(sp.name, int(a[bad][0]))}): its value is undefined",
                                     threads=G.idx[pos[bad]][:2], count=int(bad.sum()), space=sp.name)
            if sp.W is not None:
                tids = G.idx if pos.size == G.n else G.idx[pos]
                words, bm, eidx = self._words(flat, nbytes)
                wt = tids if eidx is None else tids[eidx]
                if read_only and sp is self.gspace:
                    d = self._noncoherent(ins, sp, words, wt, eidx, pos.size, vec, d)
                hit = self._conflicts(sp, ins, "RAW", sp.W, wt, bm, words)
                if hit is not None:
                    changed = hit[0][sp.w_chg[words[hit[0]]]]
                    if changed.size:
                        d = _undefine(d, changed, eidx, pos.size, vec)
                if ins.index in self.racy_by_pc:
                    mark = np.isin(tids, self.racy_by_pc[ins.index])
                    if mark.any():
                        d = d & (~mark if vec == 1 else ~mark[:, None])
                if self.strong[ins.index] and not read_only:
                    d = self._strong_over_undefined(sp, ins, words, wt, bm, eidx, pos.size, vec, d)
                if not read_only:
                    if not sp.R1.empty:
                        r1t = sp.R1.tids(words)
                        shift = (r1t >= 0) & (r1t != wt)
                        if shift.any():
                            sp.R2.copy_from(sp.R1, words[shift])
                    self._put(sp.R1, words, wt, ins.index, bm)
                    last = sp.last_of(words)
                    if last is not None:
                        dup = np.flatnonzero(last != np.arange(words.size))
                        self._put(sp.R2, words[dup], wt[dup], ins.index, None if bm is None else bm[dup])
            if sp is self.gspace and self.strong[ins.index] >= 2:
                self._strong_sync(G.idx[pos], flat, ins, write=False)
            self._counters_mem(sp, G, ins, pos, flat, a, nbytes)
            if aok is not None:
                d = d & (aok if vec == 1 else aok[:, None])
            if self.trace_on:
                self._trace_mem("ld", sp, ins, G.idx[pos], flat, es, raw, d)
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
        by = (f"thread {self._tdesc(w_tid)} wrote it at {self.where(w_pc)}" if w_tid >= 0
              else f"thread {self._tdesc(self.last_atom[int(words[i])][0])} updated it with an atomic at "
                   f"{self.where(self.last_atom[int(words[i])][1])}")
        self.add_finding(
            "race", ins.index,
            f"read through the non-coherent read-only path (ld.global.nc: __ldg, or a const __restrict__ "
            f"pointer) of global memory written in this launch ({self._describe_flat(sp, int(words[i]) * 4)}): "
            f"{by}, thread {self._tdesc(int(wt[i]))} read it at {self.where(ins.index)}. The memory consistency "
            f"model does not apply to ld.global.nc and fences do not order it (PTX ISA 8.1), so it may return "
            f"the old value (fix: a plain load, e.g. no __ldg and no const __restrict__ on that pointer)",
            threads=(int(wt[i]),), count=int(hit.sum()),
            other_pc=w_pc if w_tid >= 0 else self.last_atom[int(words[i])][1],
            key_extra=("nc",), hazard="RAW", space="global", between="non-coherent")
        return _undefine(d, hit, eidx, n, vec)

    def _trace_mem(self, kind: str, sp, ins, tids: np.ndarray, flat: np.ndarray, es: int, raw, d) -> None:
        """With trace=True: a shared or global load/store, per thread and element (for block figures)."""
        if sp is self.sspace or sp is self.gspace:
            vec = 1 if np.ndim(raw) == 1 else raw.shape[1]
            off = (flat[:, None] + es * np.arange(vec)).reshape(-1)
            self.mem_events.append((self.steps, ins.index, kind, sp.name, np.repeat(tids, vec), off, es,
                                    np.asarray(raw).reshape(-1).copy(), np.asarray(d).reshape(-1).copy()))

    def _strong_over_undefined(self, sp: mem.Space, ins, words: np.ndarray, wt: np.ndarray, bm, eidx, n: int,
                               vec: int, d):
        """A strong load of words whose last write, by another thread, nothing orders before it (a
        morally strong pair: no data race, PTX ISA 8.7) while that write went over undefined bytes:
        the load may have read the bytes from before the write, "an unknown but constant value" (8.2.6
        "Initialization"), so its value is undefined, whichever order the machine ran. (Over defined
        bytes either value is one the hardware may return, as a poll expects.)"""
        present = np.flatnonzero(sp.W.tids(words) >= 0)
        if present.size:
            present = present[sp.w_undef[words[present]]]
        if present.size and bm is not None:
            present = present[(sp.W.column(BYTES, words[present]) & bm[present]) != 0]
        if not present.size:
            return d
        rows = sp.W.rows(words[present])
        blind = present[~self._ordered(rows, wt[present], ins.index, hb_only=True)]
        return _undefine(d, blind, eidx, n, vec) if blind.size else d

    def _war(self, sp: mem.Space, ins, R: mem.Records, tids: np.ndarray, bm, words: np.ndarray, present: np.ndarray,
             chg: np.ndarray) -> None:
        """A store's check against the earlier reads ``R`` of the words it writes (WAR), then those
        reads forgotten. A racing read whose bytes this store changed is remembered in ``new_racy``:
        the launch runs again with that load's value undefined (:func:`launch`)."""
        hit = self._conflicts(sp, ins, "WAR", R, tids, bm, words, present)
        if hit is not None:
            sel = chg[hit[0]]
            for rt_, rpc in zip(hit[1][sel, TID], hit[1][sel, PC]):
                key = (int(rt_), int(rpc))
                if key not in self.racy_loads:
                    self.new_racy.add(key)
        R.clear(words[present])

    def store(self, G: Group, ins, space, addr, adef, t: str, vec: int, vals: np.ndarray, defs: np.ndarray) -> None:
        es = type_size(t)
        nbytes = es * vec
        ut = dec.UINT[es]
        G.put(self.last_effect, self.steps)
        if self.any_tainted:
            defs = defs & ~self.tainted[G.idx][:, None]
        if self.sem[ins.index][0] and self.sem[ins.index][2] >= 2:   # st.release: as if a fence came before it
            for t in G.idx.tolist():
                self._release(t, t // self.TPC)
        if type(addr) is Affine:
            if nbytes == 4 and (run := self._affine_run(G, ins, space, addr)) is not None:
                self._store_run(G, ins, run, vals[:, 0].view(np.uint32), defs[:, 0].copy())
                return
            addr = _per_thread(addr)
        if nbytes == 4 and (run := self._word_run(G, ins, space, addr, adef)) is not None:
            self._store_run(G, ins, run, vals[:, 0].view(np.uint32), defs[:, 0].copy())
            return
        for sp, pos, flat, a, aok in self._resolve(G, ins, space, addr, adef, nbytes, "write"):
            if sp is self.gspace and self.strong[ins.index] >= 2:
                self._strong_sync(G.idx[pos], flat, ins, write=True)
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
                words, bm, eidx = self._words(flat, nbytes)
                wt = tids if eidx is None else tids[eidx]
                chg = chg_el if eidx is None else chg_el[eidx]
                hit = self._conflicts(sp, ins, "WAW", sp.W, wt, bm, words)
                if hit is not None:
                    lc = hit[0][chg[hit[0]]]
                    if lc.size:
                        d = _undefine(d, lc, eidx, pos.size, vec)
                for R in (sp.R1, sp.R2):   # the reads of these words: checked, then forgotten
                    present = None if R.empty else np.flatnonzero(R.tids(words) >= 0)
                    if present is None or present.size == 0:
                        continue
                    self._war(sp, ins, R, wt, bm, words, present, chg)
                # two threads of this group writing the same bytes
                keyw = flat if nbytes < 4 else flat >> 2
                last = sp.last_of(keyw)
                if last is not None:
                    i = np.flatnonzero(last != np.arange(keyw.size))
                    fake = np.zeros((i.size, NREC), np.int32)
                    fake[:, TID] = tids[i]
                    fake[:, PC] = ins.index
                    self._race(sp, ins, "WAW", tids[last[i]], fake, np.ones(i.size, bool),
                               keyw[i] if nbytes >= 4 else keyw[i] // 4)
                    ni, nl = (new[i], new[last[i]]) if vec == 1 else (new[i].T, new[last[i]].T)
                    differ = (np.atleast_2d(ni != nl)).any(axis=0)
                    if differ.any():
                        d[last[i][differ]] = False
                self._put(sp.W, words, wt, ins.index, bm)
                sp.w_chg[words] = chg
                sp.w_undef[words] = und_el if eidx is None else und_el[eidx]
            view[idx] = new
            sp.defined.view(ut)[idx] = ONES[es] if d.all() else np.where(d, ONES[es], ut(0))
            if sp.written is not None:
                sp.written.view(ut)[idx] = ONES[es]
            self._counters_mem(sp, G, ins, pos, flat, a, nbytes)
            if self.trace_on:
                self._trace_mem("st", sp, ins, G.idx[pos], flat, es, new, d)

    # -- whole warps reading or writing consecutive words of one array --------------------------
    # (the coalesced access of most kernels: one 4-byte element per thread, in thread order). The
    # same rules as load and store, with slices of the word-indexed state instead of gathers and
    # scatters through an index per thread; a record already there is looked at as they do.

    def _word_run(self, G: Group, ins, space: Optional[str], addr, adef):
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
            one = self._allocation_span(a0, a1, 4)
            if one is None or (n > 1 and not ((a[1:] - a[:-1]) == 4).all()):
                return None
            return (a0 + one) >> 2
        t0 = int(G.idx[0])
        if G.cols() is None or a1 - a0 != 4 * (int(G.idx[-1]) - t0):
            return None
        one = self._allocation_span(a0, a1, 4)
        if one is None or not (a.astype(np.int64, copy=False) - 4 * G.idx == a0 - 4 * t0).all():
            return None
        return ((a0 + one) >> 2) - t0 + G.idx

    def _affine_run(self, G: Group, ins, space: Optional[str], addr: Affine) -> Optional[int]:
        """:meth:`_word_run` of addresses that are a rule: the first global word when every thread of
        the launch accesses the 4-byte word 4 bytes past the previous thread's (``addr`` steps 4
        bytes a thread slot and, from block to block, 4 bytes a slot of the block before), all of
        them aligned and inside one allocation, with no trace kept and no strong access; else None.
        Nothing per thread is computed: the first and last addresses bound the run."""
        if space != "global" or self.trace_on or self.strong[ins.index] >= 2 or not G.full:
            return None
        a = addr.within(0, (1 << 63) - 1)     # as load and store read addresses: int64
        if a is None or a.loc != 4 or (a.cta != 4 * a.tpc and a.ncta > 1):
            return None
        a0, a1 = a.span
        one = self._allocation_span(a0, a1, 4)
        if a0 & 3 or one is None:
            return None
        return (a0 + one) >> 2

    def _count_run(self, G: Group, ins, run) -> None:
        """Global requests and sectors of a word run (:meth:`_word_run`): each warp's lanes cover
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

    @staticmethod
    def _present(recs: mem.Records, sl: slice) -> Optional[np.ndarray]:
        """Positions in the run ``sl`` that hold a record of ``recs`` (None: none do)."""
        if recs.empty:
            return None
        present = np.flatnonzero(recs.cols[TID][sl] >= 0)
        return present if present.size else None

    def _load_run(self, G: Group, ins, run) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`load` of a word run (:meth:`_word_run`): the raw words read and whether each is defined."""
        sp, n, tids = self.gspace, G.n, G.idx
        sl = run if isinstance(run, np.ndarray) else slice(run, run + n)
        raw = sp.data.view(np.uint32)[sl]
        d = sp.defined.view(np.uint32)[sl] == ONES[4]
        words = None          # the run's word indices, made only when a record needs them
        present = self._present(sp.W, sl)
        if present is not None:
            words = run if isinstance(run, np.ndarray) else np.arange(run, run + n)
            hit = self._conflicts(sp, ins, "RAW", sp.W, tids, None, words, present)
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
        self._put(sp.R1, sl, tids, ins.index, None)
        self._count_run(G, ins, run)
        return raw, d

    def _store_run(self, G: Group, ins, run, new: np.ndarray, d: np.ndarray) -> None:
        """:meth:`store` of a word run (:meth:`_word_run`): ``new`` the words, ``d`` whether each is defined."""
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
            hit = self._conflicts(sp, ins, "WAW", sp.W, tids, None, words, present)
            if hit is not None:
                d[hit[0][chg[hit[0]]]] = False
        for R in (sp.R1, sp.R2):
            present = self._present(R, sl)
            if present is None:
                continue
            words = np.arange(run, run + n) if words is None else words
            self._war(sp, ins, R, tids, None, words, present, chg)
        self._put(sp.W, sl, tids, ins.index, None)
        sp.w_chg[sl] = chg
        sp.w_undef[sl] = dview[sl] != ONES[4]
        view[sl] = new
        dview[sl] = ONES[4] if d.all() else np.where(d, ONES[4], np.uint32(0))
        self._count_run(G, ins, run)

    def atomic(self, G: Group, ins, space, addr, adef, t: str, op: str, b, bdef, c):
        """Atomics one thread at a time, in increasing linear thread id (see the module docstring)."""
        es = type_size(t)
        dt = np.dtype(dec.NP[t])
        self.last_effect[G.idx] = self.steps
        old = np.zeros(G.n, dt)
        dold = np.zeros(G.n, bool)
        bdef = dec.defined_per_thread(bdef, G.n)
        if self.any_tainted:
            bdef = bdef & ~self.tainted[G.idx]
        b = np.asarray(b, dt)
        for sp, pos, flat, a, aok in self._resolve(G, ins, space, addr, adef, es, "atomic"):
            if aok is not None:
                bdef = bdef.copy()
                bdef[pos] &= aok
            if sp is not self.gspace and sp is not self.sspace:
                raise UnsupportedInstruction(ins.text, ins.loc, f"atomics on {sp.name} memory")
            view = sp.data.view(dec.UINT[es])
            dview = sp.defined.view(dec.UINT[es])
            cta_of = G.idx[pos] // self.TPC
            rel, acq, scope = self.sem[ins.index]
            for j, (p, f) in enumerate(zip(pos, flat)):
                k = int(f) // es
                t, cta, w = int(G.idx[p]), int(cta_of[j]), int(f) // 4
                ok = True
                if sp is self.gspace:
                    if rel and scope >= 2:
                        self._release(t, cta)   # .release/.acq_rel: as if a fence came before it
                    ok = self._atomic_checks(ins, t, cta, w, scope, op == "exch")
                cur = view[k:k + 1].view(dt)[0]
                cur_def = dview[k] == ONES[es]
                new = _atomic_apply(op, dt, cur, b[p], None if c is None else np.asarray(c, dt)[p])
                old[p], dold[p] = cur, cur_def and ok
                view[k:k + 1] = np.asarray([new], dt).view(dec.UINT[es])
                dview[k] = ONES[es] if (cur_def or op in ("exch",)) and bdef[p] else 0
                if sp.written is not None:
                    sp.written.view(dec.UINT[es])[k] = ONES[es]
                if sp is self.gspace and scope >= 2:   # a .cta-scope atomic orders nothing across CTAs
                    self._atomic_sync(t, cta, ("g", w))
                    if acq:
                        self._acquire(t, cta)           # .acquire/.acq_rel: as if a fence came after it
            self._counters_mem(sp, G, ins, pos, flat, a, es)
        return old, dold

    def _atomic_checks(self, ins, t: int, cta: int, w: int, scope: int, exch: bool) -> bool:
        """Before an atomic by thread ``t`` on global word ``w``: False when the value it reads is not
        defined (the finding reported).

        * Scope (Programming Guide, "Atomic Functions": the ``_block`` variants are atomic only among
          the threads of one block; PTX ISA 8.7 "Morally strong operations": each one's scope must
          include the other's thread): a ``.cta``-scope atomic on a word that another CTA's atomic
          touched, or any atomic after another CTA's ``.cta``-scope one, is not atomic with it.
        * Message passing (PTX ISA 8.9.5 "Causality order"): an atomic that reads a value another CTA
          stored (``st`` or ``atom.exch``), with no release/acquire between them, may read the value
          before it: atomicity orders nothing else, only release/acquire patterns do (8.8).
        """
        ok = True
        last = self.last_atom.get(w)
        self.last_atom[w] = (t, ins.index, scope)
        tids = np.array([t], np.int64)
        words = np.array([w], np.int64)
        if last is not None and last[0] // self.TPC != cta and min(last[2], scope) < 2:
            where = self._describe_flat(self.gspace, w * 4)
            self.add_finding(
                "race", ins.index,
                f"atomics of two blocks on one word of global memory ({where}), one of them at block scope "
                f"(atomicAdd_block and the other _block atomics, PTX .cta): thread {self._tdesc(last[0])} at "
                f"{self.where(last[1])} and thread {self._tdesc(t)} at {self.where(ins.index)}. A _block atomic "
                f"is atomic only among the threads of its own block (Programming Guide, Atomic Functions; PTX "
                f"ISA 8.7 \"Morally strong operations\"), so the two may lose an update or return the same "
                f"old value, and it orders nothing across blocks (fix: atomicAdd, device scope, for a word "
                f"that other blocks update)",
                threads=(last[0], t), other_pc=last[1], key_extra=("scope",), hazard="atomic", space="global",
                between="blocks")   # the values stay as computed: the finding alone fails the answer
        for recs in (self.value_w.get(w), self.gspace.W.rows(words)):
            if recs is None or recs[0, TID] < 0 or int(recs[0, TID]) // self.TPC == cta:
                continue
            live = ~self._ordered(recs, tids, ins.index, read=True)
            if live.any():
                self._race(self.gspace, ins, "RAW", tids, recs, live, words)
                ok = False
        if exch:
            self.value_w[w] = self._record(tids, ins.index, 15)
        return ok

    def _strong_sync(self, tids: np.ndarray, flat: np.ndarray, ins, write: bool) -> None:
        """A strong gpu-scope ``ld``/``st`` on global memory (``.relaxed``/``.acquire``/``.release``
        with ``.gpu`` or ``.sys``) takes part in release/acquire like an atomic: PTX ISA 8.8 release
        patterns "st.release" and "fence; st.relaxed", acquire patterns "ld.acquire" and
        "ld.relaxed; fence"."""
        acq = self.sem[ins.index][1]
        for t, f in zip(tids.tolist(), flat.tolist()):
            cta = t // self.TPC
            self._atomic_sync(t, cta, ("g", f // 4), write=write, read=not write, replace=True)
            if acq:
                self._acquire(t, cta)

    def _release(self, t: int, cta: int) -> None:
        """A release by thread ``t``: the accesses its CTA made so far are published by its next
        atomic (PTX ISA 8.8: "fence; atom" and "atom.release" are release patterns)."""
        self.rel[cta] += 1
        self.t_fence[t] = int(self.rel[cta])

    def _acquire(self, t: int, cta: int) -> None:
        """An acquire by thread ``t``: what the atomics it did since its last fence observed is now
        ordered before its CTA's later accesses (PTX ISA 8.8: "atom; fence" and "atom.acquire")."""
        p = self.pending.pop(t, None)
        if p is not None:
            if self.acq is None:
                self.acq = np.zeros((self.ncta, self.ncta), np.int32)
            self.acq[cta] = np.maximum(self.acq[cta], p)

    def _atomic_sync(self, t: int, cta: int, key, write: bool = True, read: bool = True,
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
            self._acquire(t, c)

    # -- warp-synchronous instructions ----------------------------------------------------------

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
        self._wait_state()
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
            self._syncwarp_clocks(rwarp, callers)
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
            self._count_ws(p, Gp)

    def _count_ws(self, p: int, G: Group) -> None:
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

    def _syncwarp_clocks(self, rwarp: np.ndarray, callers: np.ndarray) -> None:
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

    # -- barriers -------------------------------------------------------------------------------

    def bar_arrive(self, G: Group, p: int, op) -> np.ndarray:
        ids, idd = op.bar_id(G)
        idx = G.idx
        if op.bar_count is None and op.bar_red is None and np.ndim(ids) == 0 and self._bar_fast(G, p):
            w, _ = G.warps()
            self.ci["barriers"][p] += w.size
            self.cw["barriers"][w] += 1
            return idx
        self._wait_state()
        self.status[idx] = BAR
        self.pc[idx] = p
        self.last_effect[idx] = self.steps
        self.bar_id[idx] = np.asarray(ids).astype(np.int64)
        if op.bar_count is not None:
            cnt, cd = op.bar_count(G)
            self.bar_cnt[idx] = np.asarray(cnt).astype(np.int64)
        else:
            self.bar_cnt[idx] = -1
        if op.bar_red is not None:
            _, rc, _ = op.bar_red
            v, d = rc(G)
            self.bar_pred[idx] = v
            self.bar_pred_def[idx] = d if d is not True else True
        w, c = G.warps()
        self.ci["barriers"][p] += w.size
        self.cw["barriers"][w] += 1
        return self.bar_try(np.unique(idx // self.TPC))

    def _bar_fast(self, G: Group, p: int) -> bool:
        """Every live thread of the group's blocks arrives here, now, and none waits elsewhere:
        the barrier completes at once (the common, convergent case). The group then resumes at
        ``p + 1``: ``self.pc`` is not kept current while a group runs straight-line code (the run
        loop stores it when the group breaks up), so it is set from ``p``, never incremented."""
        ctas_first = G.idx[0] // self.TPC
        ctas_last = G.idx[-1] // self.TPC
        nc = ctas_last - ctas_first + 1
        lo, hi = ctas_first * self.TPC, (ctas_last + 1) * self.TPC
        st = self.status[lo:hi]
        # all threads of these CTAs that are alive are in G: compare counts of non-exited threads
        alive = int(np.count_nonzero(st != EXIT))
        if alive != G.n or (self.status[G.idx] != RUN).any():
            return False
        self.bepoch[ctas_first:ctas_last + 1] += 1
        self.pc[G.idx] = p + 1
        return True

    def _divergent_barriers(self, tids: np.ndarray, pcs: np.ndarray) -> np.ndarray:
        """The CTAs among the threads ``tids`` just released (at ``pcs``) whose threads met at *different*
        instructions of one barrier where either is aligned: PTX ISA, bar/barrier: ``.aligned`` "indicates
        that all threads in CTA will execute the same barrier{.cta} instruction", and otherwise the
        behaviour is undefined. The lanes of one warp apart (``__syncthreads()`` in both arms of a branch
        that splits it) take precedence over whole warps of one CTA at different instructions of one
        whole-CTA barrier (counted barriers, ``bar.sync id, count``, name their own threads): one finding
        per release. The machine lets the threads meet. Returns the CTAs concerned (their ``bar.red``
        results are undefined)."""
        if tids.size < 2 or not any(self.ops[int(p)].bar_aligned for p in np.unique(pcs)):
            return np.zeros(0, np.int64)
        flagged = []
        reported = False
        whole = self.bar_cnt[tids] < 0
        for kind, key, sel in (("warp", tids >> 5, np.ones(tids.size, bool)),
                               ("cta", tids // self.TPC, whole)):
            t, p, k = tids[sel], pcs[sel], key[sel]
            bid = self.bar_id[t] if kind == "cta" else np.zeros(t.size, np.int64)   # a warp: any two barriers
            order = np.lexsort((p, bid, k))
            ks, bs, ps, ts = k[order], bid[order], p[order], t[order]
            brk = np.flatnonzero((ks[1:] == ks[:-1]) & (bs[1:] == bs[:-1]) & (ps[1:] != ps[:-1]))
            brk = np.array([b for b in brk if self.ops[int(ps[b])].bar_aligned or self.ops[int(ps[b + 1])].bar_aligned],
                           np.int64)
            if not brk.size:
                continue
            flagged.append(ts[brk] // self.TPC)
            if reported:
                continue
            reported = True
            b_ = int(brk[0])
            t1, t2, p1, p2 = int(ts[b_]), int(ts[b_ + 1]), int(ps[b_]), int(ps[b_ + 1])
            who = "the lanes of one warp" if kind == "warp" else "the warps of one block"
            self.add_finding("divergent_barrier", p2,
                             f"{who} reached different __syncthreads() / bar.sync instructions ({self.where(p1)} and "
                             f"{self.where(p2)}): these are aligned barrier instructions (what __syncthreads() and its "
                             f"_count/_and/_or forms compile to), which every thread of the block must reach at the "
                             f"same instruction (PTX ISA, "
                             f"bar/barrier: otherwise the behaviour is undefined); the machine lets them meet",
                             threads=(t1, t2), count=int(brk.size), other_pc=p1)
        return np.unique(np.concatenate(flagged)) if flagged else np.zeros(0, np.int64)

    def bar_try(self, ctas: np.ndarray) -> np.ndarray:
        st = self.status.reshape(self.ncta, self.TPC)[ctas]
        waiting = st == BAR
        has = waiting.any(axis=1)
        if not has.any():
            return np.zeros(0, np.int64)
        alive = st != EXIT
        bid = self.bar_id.reshape(self.ncta, self.TPC)[ctas]
        bcnt = self.bar_cnt.reshape(self.ncta, self.TPC)[ctas]
        allwait = (waiting == alive).all(axis=1) & has
        idmin = np.where(waiting, bid, 1 << 40).min(axis=1)
        idmax = np.where(waiting, bid, -1).max(axis=1)
        cmax = np.where(waiting, bcnt, -2).max(axis=1)
        simple = allwait & (idmin == idmax) & (cmax < 0)
        release = np.zeros(waiting.shape, bool)
        release[simple] = waiting[simple]
        for r in np.flatnonzero(has & ~simple):
            wr, al = waiting[r], alive[r]
            for bidv in np.unique(bid[r][wr]):
                sel = wr & (bid[r] == bidv)
                cnt = int(bcnt[r][sel].max())
                if cnt < 0:
                    ok = sel.sum() == al.sum()
                else:
                    wsel, wal = sel.reshape(-1, 32), al.reshape(-1, 32)
                    arrived = (wal.any(axis=1) & ((wsel | ~wal).all(axis=1)) & wsel.any(axis=1)).sum()
                    ok = arrived * 32 >= cnt
                if ok:
                    release[r] |= sel
        if not release.any():
            return np.zeros(0, np.int64)
        rel_ctas = ctas[release.any(axis=1)]
        tids = (ctas[:, None] * self.TPC + np.arange(self.TPC))[release]
        self.bepoch[rel_ctas] += 1
        pcs = self.pc[tids]
        apart = self._divergent_barriers(tids, pcs)
        # bar.red: the reduction over the threads the barrier released
        for p in np.unique(pcs):
            op = self.ops[int(p)]
            if op.bar_red is None:
                continue
            kind, _, wd = op.bar_red
            tp = tids[pcs == p]
            cta = tp // self.TPC
            for c in np.unique(cta):
                tc = tp[cta == c]
                pv, pdv = self.bar_pred[tc], self.bar_pred_def[tc].all() and c not in apart
                res = {"popc": np.uint32(pv.sum()), "and": bool(pv.all()), "or": bool(pv.any())}[kind]
                wd(Group(tc, self.T), np.full(tc.size, res), bool(pdv))   # undefined where threads met apart
        self.status[tids] = RUN
        self.pc[tids] = pcs + 1
        return tids

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

    # -- the scheduler --------------------------------------------------------------------------

    def _flush(self, G: Group, k: int, kf: int) -> None:
        """Per-warp counts of k issues by group G, kf of them with every lane predicated on."""
        if k:
            w, c = G.warps()
            if G.full or G.cols() is not None:    # every warp, each with the same lanes
                w, c = slice(None), int(c[0])
            self.cw["issued"][w] += k
            self.cw["active_lanes"][w] += k * c
            if kf:
                self.cw["predicated_on"][w] += kf * c

    def _trace_issue(self, p: int, G: Group, on: Optional[Group]) -> None:
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

    def run(self) -> None:
        T = self.T
        ops = self.ops
        ci_issued, ci_active, ci_pred = self.ci["issued"], self.ci["active_lanes"], self.ci["predicated_on"]
        cw_pred = self.cw["predicated_on"]
        guards = {}
        while True:
            runnable = np.flatnonzero(self.status == RUN)
            if self.serial and runnable.size:   # only the first CTA that has not exited runs
                first = int(np.argmax(self.status != EXIT)) // self.TPC
                runnable = runnable[runnable // self.TPC == first]
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
                    self._untaint_at(G, p)
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
                        self._trace_issue(p, G, on)
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
                        self._flush(G, k, kf)
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
            self._flush(G, k, kf)

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

    # -- the report -----------------------------------------------------------------------------

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


# What orders a write in one block before a read in another (PTX ISA 8.8 "Release and acquire
# patterns", 8.9.5 "Causality order"), in the words of the race findings.
_CROSS_FIX = ("a __threadfence() before the atomic in the writing block, and one after the atomic in the reading "
              "block that observes it (release, then acquire: PTX ISA 8.8); or an atomic that is itself "
              "release and acquire (atom.acq_rel, cuda::atomic_ref fetch_add with memory_order_acq_rel); or give "
              "each block its own element")
_NO_ACQUIRE = (". The writing block did release its write; the reading block's acquire is missing. The Programming "
               "Guide's Memory Fence Functions example has no fence after atomicInc; PTX ISA 8.8 needs one there")


def _per_thread(addr):
    """Addresses as :meth:`Launch.address_reader` gives them, an :class:`Affine` rule made its int64
    array (one per thread of the launch)."""
    return addr.array().view(np.int64) if type(addr) is Affine else addr


def _short_name(name: str) -> str:
    """A mangled static variable's own name (``_ZZ9reduce_v4ILi64EEvPKfPfxE4smem`` -> ``smem``)."""
    m = re.search(r"E(\d+)([A-Za-z_]\w*)$", name)
    if m and len(m.group(2)) == int(m.group(1)):
        return m.group(2)
    return name


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


def _init_bytes(v) -> np.ndarray:
    dt = dec.NP.get(v.type, np.uint8)
    vals = [dec.imm_value(x, v.type if v.type in dec.NP else "b8") for x in v.init]
    arr = np.zeros(v.count or 1, dt)
    arr[:len(vals)] = vals
    return arr.view(np.uint8)[:v.size]


def _param_bytes(i: int, p, a, alloc) -> bytes:
    size = p.size
    if alloc is not None:
        if size != 8:
            raise ValueError(f"args[{i}]: a NumPy array is passed as a pointer, but kernel parameter {i} is a "
                             f"{size}-byte .{p.type}")
        return int(alloc.base).to_bytes(8, "little")
    if p.count is not None or p.type == "b8":
        b = a.tobytes() if hasattr(a, "tobytes") else bytes(a)
        if len(b) != size:
            raise ValueError(f"args[{i}]: kernel parameter {i} is a {size}-byte aggregate; got {len(b)} bytes")
        return b
    t = p.type
    dt = np.dtype(dec.NP[t])
    if isinstance(a, np.generic):
        if a.dtype.itemsize != size or (a.dtype.kind == "f") != (dt.kind == "f"):
            raise ValueError(f"args[{i}]: kernel parameter {i} is .{t} ({size} bytes); got NumPy {a.dtype} "
                             f"({a.dtype.itemsize} bytes). Pass np.{'float32' if t == 'f32' else dt.name}(...)")
        return a.tobytes()
    if isinstance(a, (bool, int)) and dt.kind in "ui":
        lo, hi = (-(1 << (8 * size - 1)), (1 << (8 * size)) - 1)
        if not lo <= int(a) <= hi:
            raise ValueError(f"args[{i}]: {a} does not fit kernel parameter {i} (.{t}, {size} bytes)")
        return (int(a) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    if isinstance(a, float) and dt.kind == "f":
        return dt.type(a).tobytes()
    raise ValueError(f"args[{i}] must be a NumPy array (a device buffer) or a NumPy scalar matching kernel "
                     f"parameter {i} (.{t}); got {type(a).__name__}")


def _atomic_apply(op: str, dt, cur, b, c):
    """The new value of one atomic read-modify-write (PTX ISA, atom)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "add":
            return dt.type(cur + b) if dt.kind == "f" else np.add(cur, b, dtype=dt)
        if op == "min":
            return np.fmin(cur, b) if dt.kind == "f" else min(cur, b)
        if op == "max":
            return np.fmax(cur, b) if dt.kind == "f" else max(cur, b)
        if op == "inc":
            return dt.type(0) if cur >= b else dt.type(cur + 1)
        if op == "dec":
            return b if (cur == 0 or cur > b) else dt.type(cur - 1)
        if op == "and":
            return np.bitwise_and(cur, b, dtype=dt)
        if op == "or":
            return np.bitwise_or(cur, b, dtype=dt)
        if op == "xor":
            return np.bitwise_xor(cur, b, dtype=dt)
        if op == "exch":
            return b
        if op == "cas":
            return c if cur == b else cur
    raise ValueError(op)


def _referenced(fn: Function) -> set:
    """The variable names a function's instructions mention."""
    names = getattr(fn, "_symbols", None)
    if names is None:
        names = set()
        for ins in fn.instrs:
            for o in ins.operands:
                if isinstance(o, Sym):
                    names.add(o.name)
                elif isinstance(o, Addr) and o.base is not None and not o.base_is_reg:
                    names.add(o.base)
        fn._symbols = names  # type: ignore[attr-defined]
    return names


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
