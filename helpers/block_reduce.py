"""Block reductions (kernels/block_reduce.cuh) and the seeds' versions (kernels/seed_block_reduce.cu),
run on either backend, with a phase-by-phase model of what happens inside the block.

:func:`block_reduce` runs one block of ``block = (x, y)`` threads, thread (x, y) holding
``values[y, x]``, and returns a :class:`BlockResult`: what every thread returned, which of those
values are defined, which threads the algorithm promises the result to, and NumPy's answer.

``kind``:

* ``"sum"``  BlockReduce (the seed's BlockReduceSum, any ``op``): only thread 0 holds the result;
  ``broadcast=True`` runs BlockAllReduce, which hands it to every thread through shared memory.
* ``"x"``    BlockXReduce: every thread gets op over its row.
* ``"y"``    BlockYReduce: every thread gets op over its column.

``version="fixed"`` runs the corrected code (any block with x * y <= 1024); ``version="seed"`` the
seeds' code, changed only to compile, with its logic bugs (48 ones sum to 32; rows of (96, 2) sum to
128; columns of (32, 3) sum to 2).

The emulated model (:class:`_Block`) runs the same algorithm phase by phase: warp shuffles through
:mod:`helpers.emulator`, shared memory as a NumPy array, ``__syncthreads()`` as the boundary between
phases. Its rules for what is *defined*:

* a shuffle read from a lane outside the mask, inactive, or not existing (the tail of a partial warp)
  is undefined, and so is everything computed from it (a read whose value the code then drops is
  harmless);
* a shared slot no thread has written is undefined (uninitialised shared memory);
* within one phase (no barrier between), a slot that one thread loads and another stores is a data
  race, recorded as a hazard; if the store changes the value, what the load returns depends on
  timing, so it is undefined; if the store rewrites the value already there (as in the seed's
  BlockYReduce), the load's value is the same either way and the result stays a number, but the
  hazard is still reported (and racecheck reports it on the GPU). Two threads storing different
  values to one slot in one phase leave it undefined.

A load can race with a store that the model reaches only later in the same phase (a fast warp's
store of a second BlockReduce call): the model then runs the algorithm again with that load marked
undefined from the start, so the undefined value and whatever was computed from it are flagged
where they happen, and a register the reader has since refilled with a defined value stays defined.

On the cupy backend the values come from the GPU and ``defined`` from the model (hardware cannot
tell a defined value from a lucky one); undefined values are stored as 0, never shown as numbers.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from . import backend as _backend
from . import emulator, kernels, params
from .trace import Recorder, Trace, gpu_source
from .ops import CTYPES, check_op, combine, cpp_op, identity, op_exprs, reference
from .warp_reduce import SEED_KERNELS

KINDS: tuple[str, ...] = ("sum", "x", "y")
VERSIONS: tuple[str, ...] = ("fixed", "seed")
MAX_THREADS = 1024
SEED_X_MAX_ROWS = 64     # the seed's BlockXReduce writes shared[threadIdx.y] into a 64-slot array
LANES = params.LANES
FULL = params.FULL_MASK

BLOCK_REDUCE_KERNELS: dict[str, tuple[str, ...]] = {
    "block_reduce": (*(e for k in ("block_reduce", "block_all_reduce", "block_x_reduce", "block_y_reduce")
                       for e in op_exprs(f"{k}_kernel<{{t}}, {{op}}>")),
                     *op_exprs("back_to_back_kernel<{t}, {op}, true>"),
                     *op_exprs("back_to_back_kernel<{t}, {op}, false>")),
    "seed_block_reduce": SEED_KERNELS,
}

# Kernel files of the as-printed seed code that NVRTC rejects, by kind.
SEED_AS_PRINTED: dict[str, str] = {
    "x": "seed_as_printed/block_x_reduce.cu.txt",
    "y": "seed_as_printed/block_y_reduce.cu.txt",
}


# ---------------------------------------------------------------- the phase trace

@dataclass(frozen=True)
class BlockPhase:
    """The block after one phase of an algorithm. Threads are numbered tid = y * block_x + x.

    label:          what happened, e.g. "lane 0 of each warp stores shared[warp]" or "__syncthreads()".
    kind:           "input" (the first phase), "warp" (shuffles), "load" (shared -> registers),
                    "store" (registers -> shared), "barrier" (__syncthreads(): the phase boundary).
    held:           (n_threads,) each thread's register after the phase (0 where undefined).
    held_defined:   (n_threads,) bool.
    shared:         (n_slots,) shared memory after the phase (0 where undefined or never written).
    shared_defined: (n_slots,) bool.
    loads, stores:  (k, 2) int arrays of (thread, slot) pairs done in this phase (arrows to draw).
    warp_trace:     for a "warp" phase, the shuffle steps of every hardware warp of the block (one
                    Trace row per warp; threads that do not exist or do not take part are inactive).
                    Its ``defined`` flags mark undefined reads; use ``held_defined`` above for the
                    registers (a partial warp drops the undefined reads it makes).
    """

    label: str
    kind: str
    held: np.ndarray
    held_defined: np.ndarray
    shared: np.ndarray
    shared_defined: np.ndarray
    loads: np.ndarray
    stores: np.ndarray
    warp_trace: Optional[Trace] = None

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind, "held": self.held.tolist(),
                "held_defined": self.held_defined.astype(int).tolist(), "shared": self.shared.tolist(),
                "shared_defined": self.shared_defined.astype(int).tolist(), "loads": self.loads.tolist(),
                "stores": self.stores.tolist(),
                "warp_trace": self.warp_trace.to_dict() if self.warp_trace is not None else None}

    @classmethod
    def from_dict(cls, d: dict[str, Any], dtype: np.dtype) -> "BlockPhase":
        return cls(d["label"], d["kind"], np.asarray(d["held"], dtype), np.asarray(d["held_defined"], bool),
                   np.asarray(d["shared"], dtype), np.asarray(d["shared_defined"], bool),
                   np.asarray(d["loads"], np.int64).reshape(-1, 2), np.asarray(d["stores"], np.int64).reshape(-1, 2),
                   Trace.from_dict(d["warp_trace"]) if d["warp_trace"] is not None else None)


@dataclass(frozen=True)
class BlockTrace:
    """A block algorithm phase by phase, for the block animation (JSON-serialisable).

    block:   (x, y); regions: the shared-memory regions, name -> [start, stop) slots (the model
             packs them one after the other; the C++ storage structs have fixed sizes);
    hazards: data races found (see :class:`BlockResult`).
    """

    title: str
    block: tuple[int, int]
    kind: str
    version: str
    op: str
    dtype: str
    phases: tuple[BlockPhase, ...]
    regions: dict[str, list[int]]
    hazards: tuple[dict[str, Any], ...]
    source: str = "emulator"
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "block": list(self.block), "kind": self.kind, "version": self.version,
                "op": self.op, "dtype": self.dtype, "phases": [p.to_dict() for p in self.phases],
                "regions": self.regions, "hazards": list(self.hazards), "source": self.source, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BlockTrace":
        dt = np.dtype(d["dtype"])
        return cls(d["title"], tuple(d["block"]), d["kind"], d["version"], d["op"], d["dtype"],
                   tuple(BlockPhase.from_dict(p, dt) for p in d["phases"]), d["regions"], tuple(d["hazards"]),
                   d.get("source", "emulator"), d.get("meta", {}))

    def save(self, path: Path | str) -> None:
        Path(path).write_text(json.dumps(self.to_dict()) + "\n")

    @classmethod
    def load(cls, path: Path | str) -> "BlockTrace":
        return cls.from_dict(json.loads(Path(path).read_text()))


# ---------------------------------------------------------------- the emulated block

class _Block:
    """One block's registers and shared memory, stepped through an algorithm phase by phase."""

    def __init__(self, values: np.ndarray, block: tuple[int, int], op: str, regions: dict[str, list[int]],
                 racy_loads: frozenset[tuple[int, int]] = frozenset()) -> None:
        self.bx, self.by = block
        self.n = self.bx * self.by
        self.n_warps = -(-self.n // LANES)
        self.op = op
        self.dtype = values.dtype
        self.tid = np.arange(self.n)
        self.x, self.y = self.tid % self.bx, self.tid // self.bx
        self.lane, self.warp = self.tid % LANES, self.tid // LANES
        self.warp_lanes = np.minimum(LANES, self.n - self.warp * LANES)
        self.val = values.reshape(-1).copy()
        self.ok = np.ones(self.n, bool)
        self.regions = regions
        n_slots = max(stop for _, stop in regions.values())
        self.shared = np.zeros(n_slots, self.dtype)
        self.shared_ok = np.zeros(n_slots, bool)
        self.phases: list[BlockPhase] = []
        self.hazards: list[dict[str, Any]] = []
        # (load number, thread): loads that race with a later store of the same phase. ``racy_loads``
        # are the ones a previous run of the same algorithm found (undefined from the start);
        # ``found_racy_loads`` the ones this run finds.
        self.racy_loads = racy_loads
        self.found_racy_loads: set[tuple[int, int]] = set()
        self._n_loads = 0
        self._start_phase()
        self._record("input", "input")

    # -- bookkeeping
    def _start_phase(self) -> None:
        self._at_start = (self.shared.copy(), self.shared_ok.copy())
        self._loads: list[tuple[int, np.ndarray, np.ndarray]] = []   # (load number, threads, slots) this phase
        self._stores: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_loads: list[np.ndarray] = []                 # pairs since the last record
        self._pending_stores: list[np.ndarray] = []

    def _record(self, label: str, kind: str, warp_trace: Optional[Trace] = None) -> None:
        pairs = lambda ps: np.concatenate(ps) if ps else np.zeros((0, 2), np.int64)  # noqa: E731
        z = np.zeros((), self.dtype)
        self.phases.append(BlockPhase(label, kind, np.where(self.ok, self.val, z), self.ok.copy(),
                                      np.where(self.shared_ok, self.shared, z), self.shared_ok.copy(),
                                      pairs(self._pending_loads), pairs(self._pending_stores), warp_trace))
        self._pending_loads, self._pending_stores = [], []

    def _changed(self, slots: np.ndarray) -> np.ndarray:
        start, start_ok = self._at_start
        return (self.shared[slots] != start[slots]) | (self.shared_ok[slots] != start_ok[slots])

    def _hazard(self, kind: str, slot: int, first: int, second: int, order_dependent: bool) -> None:
        self.hazards.append({"phase": len(self.phases), "kind": kind, "slot": int(slot), "threads": [int(first), int(second)],
                             "order_dependent": bool(order_dependent)})

    # -- operations
    def barrier(self) -> None:
        self._record("__syncthreads()", "barrier")
        self._start_phase()

    def load(self, slots: np.ndarray, who: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Threads ``who`` read ``shared[slots]`` (per thread); returns (values, defined) for all threads."""
        t, s = self.tid[who], np.asarray(slots)[who]
        number, self._n_loads = self._n_loads, self._n_loads + 1
        vals = np.zeros(self.n, self.dtype)
        ok = np.zeros(self.n, bool)
        vals[t], ok[t] = self.shared[s], self.shared_ok[s]
        for r in t:                        # a later store of this phase races with this load
            if (number, int(r)) in self.racy_loads:
                ok[r] = False
        for wt, ws in self._stores:       # a slot another thread already stored this phase
            for r, slot in zip(t, s):
                writers = wt[(ws == slot) & (wt != r)]
                if writers.size:
                    dep = bool(self._changed(np.array([slot]))[0])
                    self._hazard("read-after-write", slot, writers[0], r, dep)
                    ok[r] &= not dep
        self._loads.append((number, t, s))
        self._pending_loads.append(np.stack([t, s], axis=1))
        return vals, ok

    def store(self, slots: np.ndarray, who: np.ndarray) -> None:
        """Threads ``who`` write their register to ``shared[slots]`` (per thread)."""
        t, s = self.tid[who], np.asarray(slots)[who]
        values, ok = self.val[t], self.ok[t].copy()
        start, start_ok = self._at_start
        for number, lt, ls in self._loads:   # a slot another thread loaded this phase
            for w, slot, v, v_ok in zip(t, s, values, ok):
                readers = lt[(ls == slot) & (lt != w)]
                for r in readers:
                    dep = bool(v != start[slot] or v_ok != start_ok[slot])
                    self._hazard("write-after-read", slot, r, w, dep)
                    if dep:   # that load may see this store: undefined (see _run_model)
                        self.found_racy_loads.add((number, int(r)))
        uniq, counts = np.unique(s, return_counts=True)
        for slot in uniq[counts > 1]:      # two threads, one slot, one phase
            writers = t[s == slot]
            differ = bool(np.unique(values[s == slot]).size > 1 or not ok[s == slot].all())
            self._hazard("write-write", slot, writers[0], writers[1], differ)
            if differ:
                ok[s == slot] = False
        for wt, ws in self._stores:        # a slot another thread already stored this phase
            for i, (w, slot) in enumerate(zip(t, s)):
                others = wt[(ws == slot) & (wt != w)]
                if others.size:
                    differ = bool(values[i] != self.shared[slot] or ok[i] != self.shared_ok[slot])
                    self._hazard("write-write", slot, others[0], w, differ)
                    ok[i] &= not differ
        self.shared[s], self.shared_ok[s] = values, ok
        self._stores.append((t, s))
        self._pending_stores.append(np.stack([t, s], axis=1))

    def set(self, who: np.ndarray, values: np.ndarray, ok: np.ndarray) -> None:
        """Registers of ``who`` become ``values`` (defined where ``ok``)."""
        self.val = np.where(who, values, self.val).astype(self.dtype)
        self.ok = np.where(who, ok, self.ok)

    def shuffle_down(self, label: str, offsets: tuple[int, ...], mask: np.ndarray, who: np.ndarray,
                     guard: Optional[Callable[[np.ndarray, int, np.ndarray], np.ndarray]] = None) -> None:
        """Threads ``who`` run a shuffle-down tree (width 32) with per-warp ``mask``, combining with
        ``op`` where ``guard(lane, offset, lanes_in_warp)`` holds (default: always)."""
        shape = (self.n_warps, LANES)
        pad = lambda a, fill: np.concatenate([a, np.full(self.n_warps * LANES - self.n, fill, a.dtype)]).reshape(shape)  # noqa: E731
        vals, ok, active = pad(self.val, 0), pad(self.ok, False), pad(who, False)
        lanes = pad(self.warp_lanes, 0)
        lane = np.broadcast_to(emulator.LANE, shape)
        z = np.zeros((), self.dtype)
        rec = Recorder(np.where(ok, vals, z), label, active=active, mask=mask)
        for offset in offsets:
            r = emulator.shuffle("down", vals, np.full(shape, offset), LANES, mask, active)
            got_ok = r.defined & np.take_along_axis(ok, np.where(r.src_lane >= 0, r.src_lane, 0), axis=1)
            use = active & (guard(lane, offset, lanes) if guard else True)
            vals = np.where(use, combine(self.op, vals, r.values), vals)
            ok = ok & (~use | got_ok)
            rec.step(f"shfl_down {offset}", np.where(ok, vals, z),
                     emulator.ShuffleResult(np.where(got_ok, r.values, z), r.src_lane, got_ok), mask, active)
        self.val, self.ok = vals.reshape(-1)[:self.n], ok.reshape(-1)[:self.n]
        self._record(label, "warp", rec.trace())

    # -- masks
    def existing_lanes(self) -> np.ndarray:
        """Per warp, the lanes that exist: what ``__ballot_sync(FULL, true)`` returns in converged code."""
        exists = np.zeros(self.n_warps * LANES, bool)
        exists[:self.n] = True
        return emulator.pack_bits(exists.reshape(self.n_warps, LANES))


def _run_model(values: np.ndarray, block: tuple[int, int], op: str, regions: dict[str, list[int]],
               algorithm: Callable[[_Block], Any]) -> tuple[_Block, Any]:
    """Run ``algorithm`` on a fresh :class:`_Block` until the loads it finds racing with later stores
    are the ones it was told about (each run marks the previous run's racy loads undefined); returns
    the last block and what ``algorithm`` returned."""
    racy: frozenset[tuple[int, int]] = frozenset()
    for _ in range(8):
        b = _Block(values, block, op, regions, racy)
        out = algorithm(b)
        if b.found_racy_loads <= racy:
            return b, out
        racy = racy | b.found_racy_loads
    raise AssertionError("the block model did not settle: racy loads keep changing")


_DOWN = (16, 8, 4, 2, 1)


def _partial_guard(lane: np.ndarray, offset: int, lanes: np.ndarray) -> np.ndarray:
    """WarpReducePartial combines only what it read from an existing lane: lane + offset < lanes."""
    return lane + offset < lanes


def _warp_reduce_partial(b: _Block, label: str, who: np.ndarray) -> None:
    b.shuffle_down(label, _DOWN, b.existing_lanes(), who, _partial_guard)


# ---------------------------------------------------------------- the algorithms, as the kernels run them

def _fixed_sum(b: _Block, broadcast: bool) -> None:
    every = np.ones(b.n, bool)
    _warp_reduce_partial(b, "every warp reduces its lanes (WarpReducePartial)", every)
    b.store(b.warp, b.lane == 0)
    b._record("lane 0 of each warp stores its result to shared[warp]", "store")
    b.barrier()
    first = b.warp == 0
    got, ok = b.load(b.lane, first & (b.lane < b.n_warps))
    pad = first & (b.lane >= b.n_warps)
    b.set(first, np.where(pad, identity(b.op, b.dtype), got), ok | pad)
    b._record("warp 0 loads one slot per warp, the identity beyond", "load")
    _warp_reduce_partial(b, "warp 0 reduces the warp results: thread 0 holds the block's", first)
    if broadcast:
        slot = b.regions["block_aggregate"][0]
        b.store(np.full(b.n, slot), b.tid == 0)
        b._record("thread 0 stores the result", "store")
        b.barrier()
        got, ok = b.load(np.full(b.n, slot), every)
        b.set(every, got, ok)
        b._record("every thread loads the result", "load")


def _fixed_x(b: _Block) -> None:
    every = np.ones(b.n, bool)
    b.store(b.tid, every)
    b._record("every thread stores its value at shared[tid]", "store")
    b.barrier()
    rows_base = b.regions["row_aggregates"][0]
    for first_row in range(0, b.by, b.n_warps):
        row = b.warp + first_row
        takes = row < b.by
        acc = np.full(b.n, identity(b.op, b.dtype))
        acc_ok = np.ones(b.n, bool)
        for j in range(-(-b.bx // int(b.warp_lanes.min()))):
            x = b.lane + j * b.warp_lanes
            who = takes & (x < b.bx)
            got, ok = b.load(np.where(who, row * b.bx + x, 0), who)
            acc = np.where(who, combine(b.op, acc, got), acc)
            acc_ok &= ~who | ok
        b.set(takes, acc, acc_ok)
        rows = sorted(set(row[takes].tolist()))
        b._record(f"lanes gather rows {rows[0]}..{rows[-1]} (a warp per row, lanes stride along it)", "load")
        _warp_reduce_partial(b, "each warp reduces its row (WarpReducePartial)", takes)
        b.store(rows_base + row, takes & (b.lane == 0))
        b._record("lane 0 stores the row's result", "store")
    b.barrier()
    got, ok = b.load(rows_base + b.y, every)
    b.set(every, got, ok)
    b._record("every thread loads its row's result", "load")


def _fixed_y(b: _Block) -> None:
    every = np.ones(b.n, bool)
    b.store(b.tid, every)
    b._record("every thread stores its value at shared[y * x_size + x]", "store")
    stride = 1
    while stride < b.by:
        stride *= 2
    stride //= 2
    while stride > 0:
        b.barrier()
        who = (b.y < stride) & (b.y + stride < b.by)
        got, ok = b.load(np.where(who, b.tid + stride * b.bx, 0), who)
        b.set(who, combine(b.op, b.val, got), b.ok & ok)
        b.store(b.tid, who)
        b._record(f"stride {stride}: rows y < {stride} combine row y + {stride} and store", "store")
        stride //= 2
    b.barrier()
    got, ok = b.load(b.x, every)
    b.set(every, got, ok)
    b._record("every thread loads its column's result from row 0", "load")


def _seed_sum(b: _Block) -> None:
    every = np.ones(b.n, bool)
    full = np.full(b.n_warps, FULL, np.uint32)
    b.shuffle_down("WarpReduceSum in every warp (full mask)", _DOWN, full, every)
    b.barrier()
    b.store(b.warp, b.lane == 0)
    b._record("lane 0 of each warp stores shared[warpid]", "store")
    b.barrier()
    counted = b.tid < b.bx // LANES                      # blockDim.x / warpSize rounds down
    got, ok = b.load(b.lane, counted)
    b.set(every, np.where(counted, got, 0), np.where(counted, ok, True))
    b._record(f"threads < blockDim.x / 32 = {b.bx // LANES} load shared[laneid], the rest take 0", "load")
    b.shuffle_down("warp 0: WarpReduceSum (full mask)", _DOWN, full, b.warp == 0)


def _seed_x(b: _Block) -> None:
    every = np.ones(b.n, bool)
    b.barrier()
    block_dim_x = b.bx
    if b.bx > LANES:
        block_dim_x = b.bx >> 5
        lane = b.x & (LANES - 1)                          # the seed's "lane": threadIdx.x & 31
        b.shuffle_down("WarpReduce in every warp (mask = __ballot_sync(FULL, true))", _DOWN, b.existing_lanes(), every)
        b.store(b.warp, lane == 0)
        b._record("threads with threadIdx.x % 32 == 0 store shared[tid / 32]", "store")
        b.barrier()
        got, ok = b.load(b.y * block_dim_x + lane, every)
        b.set(every, got, ok)
        b._record(f"every thread loads shared[threadIdx.y * {block_dim_x} + threadIdx.x % 32]", "load")
    strides, s = [], 1
    while s < block_dim_x:
        strides.append(s)
        s <<= 1
    b.shuffle_down(f"strides {strides or 'none'} (< {block_dim_x}), mask = __ballot_sync(FULL, true)", tuple(strides),
                   b.existing_lanes(), every)
    b.barrier()
    b.store(b.y, b.x == 0)
    b._record("threadIdx.x == 0 stores shared[threadIdx.y]", "store")
    b.barrier()
    got, ok = b.load(b.y, every)
    b.set(every, got, ok)
    b._record("every thread loads shared[threadIdx.y]", "load")


def _seed_y(b: _Block) -> None:
    every = np.ones(b.n, bool)
    b.store(b.tid, every)
    b._record("every thread stores shared[SharedMemoryIndex(0)]", "store")
    stride = b.by // 2
    while stride > 0:
        b.barrier()
        who = (b.y < stride) & (b.y + stride < b.by)
        got, ok = b.load(np.where(who, b.tid + stride * b.bx, 0), who)
        b.set(who, combine(b.op, b.val, got), b.ok & ok)
        b.store(b.tid, every)
        b._record(f"stride {stride}: rows y < {stride} read row y + {stride}; every row rewrites its slot "
                  f"(no barrier between: a race)", "store")
        stride >>= 1
    b.barrier()
    got, ok = b.load(b.x, every)
    b.set(every, got, ok)
    b._record("every thread loads shared[threadIdx.x] (row 0)", "load")


# ---------------------------------------------------------------- public API

@dataclass(frozen=True)
class BlockResult:
    """What every thread of the block returned, and who holds the answer. Arrays are (y, x).

    values:   each thread's return value; 0 where ``defined`` is False.
    defined:  the value is defined (see the module docstring for the model's rules).
    holders:  the threads the algorithm promises the result to (thread 0 for BlockReduce; every
              thread for the others).
    expected: NumPy's answer for each thread's group: the whole block ("sum"), its row ("x") or its
              column ("y").
    hazards:  data races the model found: dicts with phase, kind ("write-after-read",
              "read-after-write", "write-write"), slot, threads, and order_dependent (True when the
              value read or left depends on timing, hence undefined).
    trace:    the phase-by-phase model (:class:`BlockTrace`).
    """

    kind: str
    version: str
    op: str
    block: tuple[int, int]
    broadcast: bool
    values: np.ndarray
    defined: np.ndarray
    holders: np.ndarray
    expected: np.ndarray
    hazards: tuple[dict[str, Any], ...]
    trace: BlockTrace
    source: str = "emulator"

    @property
    def correct(self) -> bool:
        """Every holder holds a defined value equal (bit for bit) to NumPy's answer (a NaN matches a NaN)."""
        same = self.values == self.expected
        if self.values.dtype.kind == "f":
            same |= np.isnan(self.values) & np.isnan(self.expected)
        return bool(np.all(~self.holders | (self.defined & same)))

    @property
    def result(self) -> np.ndarray:
        """The result per group, read from its first holder: shape () for "sum", (y,) for "x", (x,) for "y"."""
        return self._per_group(self.values)

    @property
    def result_defined(self) -> np.ndarray:
        return self._per_group(self.defined)

    def _per_group(self, a: np.ndarray) -> np.ndarray:
        if self.kind == "sum":
            return a[0, 0]
        return a[:, 0] if self.kind == "x" else a[0, :]


def _check_block(values: Any, block: Optional[tuple[int, int]]) -> tuple[np.ndarray, tuple[int, int]]:
    arr = params.array(values, "values")      # the warp API's checks: no silent int32 wrap, no masked arrays
    if block is None:
        if arr.ndim not in (1, 2):
            raise ValueError(f"values must have shape (x,) or (y, x); got shape {arr.shape}")
        block = (arr.shape[-1], arr.shape[0] if arr.ndim == 2 else 1)
    ok = (isinstance(block, (tuple, list)) and len(block) == 2 and all(params._is_int(d) for d in block))
    if not ok or block[0] < 1 or block[1] < 1 or block[0] * block[1] > MAX_THREADS:
        threads = f" ({block[0] * block[1]} threads)" if ok else ""
        raise ValueError(f"block must be (x, y) with x >= 1, y >= 1 and x * y <= {MAX_THREADS}; got "
                         f"{params.quote(block)}{threads}")
    bx, by = int(block[0]), int(block[1])
    if arr.size != bx * by or arr.ndim not in (1, 2) or (arr.ndim == 2 and arr.shape != (by, bx)):
        raise ValueError(f"values must have shape ({by}, {bx}) or ({bx * by},) for block ({bx}, {by}); got shape {arr.shape}")
    return arr.reshape(by, bx), (bx, by)


def _regions(kind: str, version: str, n: int, by: int, broadcast: bool) -> dict[str, list[int]]:
    if version == "seed":
        return {"shared": [0, {"sum": LANES, "x": 2 * LANES, "y": MAX_THREADS}[kind]]}
    if kind == "sum":
        return {"warp_aggregates": [0, LANES], **({"block_aggregate": [LANES, LANES + 1]} if broadcast else {})}
    if kind == "x":
        return {"values": [0, n], "row_aggregates": [n, n + by]}
    return {"values": [0, n]}


def _expected(v: np.ndarray, kind: str, op: str) -> np.ndarray:
    if kind == "sum":
        return np.full(v.shape, reference(v.reshape(-1), op), v.dtype)
    if kind == "x":
        return np.repeat(reference(v, op, axis=1)[:, None], v.shape[1], axis=1)
    return np.repeat(reference(v, op, axis=0)[None, :], v.shape[0], axis=0)


def _kernel_expr(kind: str, version: str, broadcast: bool, dtype: np.dtype, op: str) -> tuple[str, str]:
    t, o = CTYPES[dtype.name], cpp_op(op, dtype)
    if version == "seed":
        name = {"sum": f"seed_block_reduce_sum_kernel<{t}>", "x": f"seed_block_x_reduce_kernel<{t}, {o}>",
                "y": f"seed_block_y_reduce_kernel<{t}, {o}>"}[kind]
        return "seed_block_reduce", name
    k = {"sum": "block_all_reduce" if broadcast else "block_reduce", "x": "block_x_reduce", "y": "block_y_reduce"}[kind]
    return "block_reduce", f"{k}_kernel<{t}, {o}>"


def _run_gpu(v: np.ndarray, block: tuple[int, int], kind: str, version: str, broadcast: bool, op: str) -> np.ndarray:
    import cupy

    file, expr = _kernel_expr(kind, version, broadcast, v.dtype, op)
    d_in = cupy.asarray(v.reshape(-1))
    d_out = cupy.zeros_like(d_in)
    kernels.module(file, BLOCK_REDUCE_KERNELS[file]).get_function(expr)((1,), block, (d_in, d_out))
    cupy.cuda.get_current_stream().synchronize()
    return cupy.asnumpy(d_out).reshape(v.shape)


def block_reduce(values: Any, block: Optional[tuple[int, int]] = None, op: str = "sum", kind: str = "sum",
                 version: str = "fixed", broadcast: bool = False, backend: Optional[str] = None) -> BlockResult:
    """Reduce one block of values: ``kind`` "sum" (whole block), "x" (each row) or "y" (each column).

    ``values``: shape (y, x), or (x * y,) in thread order (tid = y * x_size + x); ``block`` = (x, y)
    defaults to the shape of ``values``. Any x, y >= 1 with x * y <= 1024. ``op`` is one of
    :data:`helpers.warp_reduce.OPS`. ``broadcast=True`` (kind "sum", version "fixed") hands the result
    to every thread. ``version="seed"``: kind "sum" needs op "sum" and a 1D block (y == 1), kind "x"
    needs y <= 64 (the seed's shared array has 64 slots).
    """
    name = _backend.resolve(params.backend(backend))
    v, blk = _check_block(values, block)
    check_op(op, v.dtype)
    if not params.is_one_of(kind, KINDS):
        raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {params.quote(kind)}")
    if not params.is_one_of(version, VERSIONS):
        raise ValueError(f"version must be one of {', '.join(map(repr, VERSIONS))}; got {params.quote(version)}")
    if not isinstance(broadcast, (bool, np.bool_)):
        raise ValueError(f"broadcast must be True or False; got {params.quote(broadcast)}")
    broadcast = bool(broadcast)
    if broadcast and (kind != "sum" or version != "fixed"):
        raise ValueError(f"broadcast=True needs kind='sum' and version='fixed' (BlockAllReduce); got kind={kind!r}, "
                         f"version={version!r}")
    if version == "seed" and kind == "sum" and (op != "sum" or blk[1] != 1):
        raise ValueError(f"the seed's BlockReduceSum sums a 1D block: it needs op='sum' and block y == 1; "
                         f"got op={op!r}, block={blk}")
    if version == "seed" and kind == "x" and blk[1] > SEED_X_MAX_ROWS:
        raise ValueError(f"block y must be <= {SEED_X_MAX_ROWS} for the seed's BlockXReduce (it writes "
                         f"shared[threadIdx.y] into a {SEED_X_MAX_ROWS}-slot array); got block {blk}")
    algorithm = {("fixed", "sum"): lambda b: _fixed_sum(b, broadcast), ("fixed", "x"): _fixed_x,
                 ("fixed", "y"): _fixed_y, ("seed", "sum"): _seed_sum, ("seed", "x"): _seed_x,
                 ("seed", "y"): _seed_y}[(version, kind)]
    b, _ = _run_model(v, blk, op, _regions(kind, version, v.size, blk[1], broadcast), algorithm)
    shape = v.shape
    defined = b.ok.reshape(shape)
    values_out = np.where(defined, b.val.reshape(shape), 0).astype(v.dtype)
    holders = np.ones(shape, bool)
    if kind == "sum" and not broadcast:
        holders[:] = False
        holders[0, 0] = True
    source = "emulator"
    if name == "cupy":
        values_out = np.where(defined, _run_gpu(v, blk, kind, version, broadcast, op), 0).astype(v.dtype)
        source = gpu_source()
    fn = {"sum": "BlockAllReduce" if broadcast else "BlockReduce", "x": "BlockXReduce", "y": "BlockYReduce"}[kind]
    title = f"{'seed ' if version == 'seed' else ''}{fn} ({op}), block ({blk[0]}, {blk[1]})"
    trace = BlockTrace(title, blk, kind, version, op, v.dtype.name, tuple(b.phases), b.regions, tuple(b.hazards),
                       meta={"broadcast": broadcast})
    return BlockResult(kind, version, op, blk, broadcast, values_out, defined, holders, _expected(v, kind, op),
                       tuple(b.hazards), trace, source)


def block_trace(values: Any, block: Optional[tuple[int, int]] = None, op: str = "sum", kind: str = "sum",
                version: str = "fixed", broadcast: bool = False) -> BlockTrace:
    """The emulated phase-by-phase trace of :func:`block_reduce` (for the block animation)."""
    return block_reduce(values, block, op, kind, version, broadcast, backend="emulator").trace


def seed_compile_error(kind: str, arch: str = "sm_90") -> str:
    """NVRTC's error log for the seed's as-printed BlockXReduce (``kind="x"``) or BlockYReduce (``"y"``)."""
    if kind not in SEED_AS_PRINTED:
        raise ValueError(f"kind must be one of {', '.join(map(repr, SEED_AS_PRINTED))} (the seed code that does "
                         f"not compile as printed); got {kind!r}")
    name = SEED_AS_PRINTED[kind]
    try:
        kernels.ptx(name, arch)
    except RuntimeError as exc:
        log = str(exc).split("\n", 1)[1]
        return log.replace(f"{name}.cu", name.removesuffix(".txt")).strip()
    raise AssertionError(f"kernels/{name} compiled: it should keep the seed's error")



# ---------------------------------------------------------------- two reductions back to back

@dataclass(frozen=True)
class BackToBack:
    """Two BlockReduce calls in a row on the same shared storage (the model only; races depend on timing).

    first, second:     what thread 0 holds after each call (0 where undefined);
    first_defined, second_defined: whether that value is defined;
    expected:          NumPy's answers (first, second);
    hazards:           the data races the model found (see :class:`BlockResult`);
    trace:             the phase-by-phase model of both calls.
    """

    barrier: bool
    first: Any
    first_defined: bool
    second: Any
    second_defined: bool
    expected: tuple[Any, Any]
    hazards: tuple[dict[str, Any], ...]
    trace: BlockTrace


def back_to_back_gpu(first: Any, second: Any, block: Optional[tuple[int, int]] = None, op: str = "sum",
                     barrier: bool = True) -> tuple[Any, Any]:
    """Run the two BlockReduce calls of :func:`back_to_back` on the GPU; thread 0's (first, second).

    Without the barrier the first value is undefined even when it happens to be right: use this only
    to give compute-sanitizer something to watch (helpers.block_reduce_target)."""
    import cupy

    a, blk = _check_block(first, block)
    b_vals, _ = _check_block(second, blk)
    check_op(op, a.dtype)
    expr = f"back_to_back_kernel<{CTYPES[a.dtype.name]}, {cpp_op(op, a.dtype)}, {'true' if barrier else 'false'}>"
    d_out = cupy.zeros(2 * a.size, a.dtype)
    fn = kernels.module("block_reduce", BLOCK_REDUCE_KERNELS["block_reduce"]).get_function(expr)
    fn((1,), blk, (cupy.asarray(a.reshape(-1)), cupy.asarray(b_vals.reshape(-1)), d_out))
    out = cupy.asnumpy(d_out)
    return out[0], out[1]


def back_to_back(first: Any, second: Any, block: Optional[tuple[int, int]] = None, op: str = "sum",
                 barrier: bool = True) -> BackToBack:
    """Model ``r1 = BlockReduce(a); [__syncthreads();] r2 = BlockReduce(b);`` with one storage struct.

    Without the barrier, a fast warp's lane 0 of the second call may overwrite ``warp_aggregates[w]``
    while warp 0 of the first call is still reading it: a write-after-read race, so the first result is
    undefined. This is why the seed's BlockReduceSum starts with ``__syncthreads()`` (and why
    block_reduce.cuh asks its caller for one before reusing the storage). This is the model; on a GPU,
    :func:`back_to_back_gpu` runs ``kernels/block_reduce.cu``'s back_to_back_kernel, and one run cannot
    show a race: compute-sanitizer racecheck can (recorded in ``data/sanitizer_block.json``).
    """
    a, blk = _check_block(first, block)
    b_vals, _ = _check_block(second, blk)
    if a.dtype != b_vals.dtype:
        raise ValueError(f"first and second must have the same dtype; got {a.dtype} and {b_vals.dtype}")
    check_op(op, a.dtype)
    def both_calls(b: _Block) -> tuple[Any, bool]:
        _fixed_sum(b, False)
        first = b.val[0], bool(b.ok[0])
        if barrier:
            b.barrier()
        every = np.ones(b.n, bool)
        b.set(every, b_vals.reshape(-1), every)
        b._record("second call: every thread takes its next value", "input")
        _fixed_sum(b, False)
        return first

    b, (r1, ok1) = _run_model(a, blk, op, _regions("sum", "fixed", a.size, blk[1], False), both_calls)
    title = f"BlockReduce ({op}) twice, {'with' if barrier else 'without'} __syncthreads() between, block {blk}"
    trace = BlockTrace(title, blk, "sum", "fixed", op, a.dtype.name, tuple(b.phases), b.regions, tuple(b.hazards),
                       meta={"back_to_back": True, "barrier": barrier})
    z = np.zeros((), a.dtype)
    return BackToBack(barrier, r1 if ok1 else z, ok1, b.val[0] if b.ok[0] else z, bool(b.ok[0]),
                      (reference(a.reshape(-1), op), reference(b_vals.reshape(-1), op)), tuple(b.hazards), trace)
