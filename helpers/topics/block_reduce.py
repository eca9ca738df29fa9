"""Block reductions (kernels/block_reduce.cuh) and the seeds' versions (kernels/seed_block_reduce.cu),
run as the real kernels through :func:`helpers.topics.launch.launch`.

:func:`block_reduce` runs one block of ``block = (x, y)`` threads, thread (x, y) holding
``values[y, x]``, and returns a :class:`BlockResult`: what every thread returned, which of those
values are defined, which threads the algorithm promises the result to, NumPy's answer, the data
races found, and the run phase by phase (a block :class:`helpers.engine.trace.Trace`).

``kind``:

* ``"sum"``  BlockReduce (the seed's BlockReduceSum, any ``op``): only thread 0 holds the result;
  ``broadcast=True`` runs BlockAllReduce, which hands it to every thread through shared memory.
* ``"x"``    BlockXReduce: every thread gets op over its row.
* ``"y"``    BlockYReduce: every thread gets op over its column.

``version="fixed"`` runs the corrected code (any block with x * y <= 1024); ``version="seed"`` the
seeds' code, changed only to compile, with its logic bugs (48 ones sum to 32; rows of (96, 2) sum to
128; columns of (32, 3) sum to 2).

One engine: without a GPU the kernel runs on the SIMT machine (:mod:`helpers.machine`), which gives
the values, what is defined (uninitialised shared memory, shuffles from lanes that do not exist, a
load racing with a store that changes the value: docs/machine.md), the races with their source lines
and the trace. On a GPU the values are the hardware's, and what is defined, what races and the trace
come from the machine's run of the same launch on the same inputs (``check=True``); undefined values
are stored as 0, never shown as numbers.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from helpers.engine import kernels
from helpers.engine import params
from helpers.topics.launch import Launch, launch
from helpers.machine import Finding
from helpers.engine.ops import CTYPES, check_op, cpp_op, op_exprs, reference
from helpers.engine.trace import Trace
from helpers.topics.warp_kernels import SEED_KERNELS

KINDS: tuple[str, ...] = ("sum", "x", "y")
VERSIONS: tuple[str, ...] = ("fixed", "seed")
MAX_THREADS = 1024
SEED_X_MAX_ROWS = 64     # the seed's BlockXReduce writes shared[threadIdx.y] into a 64-slot array
BLOCK_REDUCE_KERNELS: dict[str, tuple[str, ...]] = {
    "block_reduce": (*(e for k in ("block_reduce", "block_all_reduce", "block_x_reduce", "block_y_reduce")
                       for e in op_exprs(f"{k}_kernel<{{t}}, {{op}}>")),
                     *op_exprs("back_to_back_kernel<{t}, {op}, true>"),
                     *op_exprs("back_to_back_kernel<{t}, {op}, false>")),
    "seed_block_reduce": SEED_KERNELS,
}

# The launches compute-sanitizer watches one at a time (helpers.recording.block_reduce_target), by name:
# name -> (kind, version, broadcast) of a block_reduce call, and name -> barrier of a back_to_back call.
SANITIZER_TARGETS: dict[str, tuple[str, str, bool]] = {
    "sum": ("sum", "fixed", False), "all": ("sum", "fixed", True), "x": ("x", "fixed", False),
    "y": ("y", "fixed", False), "seed_sum": ("sum", "seed", False), "seed_x": ("x", "seed", False),
    "seed_y": ("y", "seed", False),
}
BACK_TO_BACK_TARGETS: dict[str, bool] = {"b2b": True, "b2b_nobarrier": False}

# Kernel files of the as-printed seed code that NVRTC rejects, by kind.
SEED_AS_PRINTED: dict[str, str] = {
    "x": "seed_as_printed/block_x_reduce.cu.txt",
    "y": "seed_as_printed/block_y_reduce.cu.txt",
}


# ---------------------------------------------------------------- one launch, on either engine

def _phase_label(tr: Any, pc: int, kind: str) -> str:
    """``block_reduce.cuh:47  val = WarpReducePartial(val, op, warp_lanes());``: the phase's first line."""
    words = {"warp": "shuffles", "load": "shared loads", "store": "shared stores"}[kind]
    line, file = int(tr.lines[pc]), tr.files[pc]
    if line <= 0 or not file:   # line 0: the compiler merged the instruction from several lines
        return f"{words} (PTX `{tr.ptx[pc].split()[0]}`: no single source line)"
    name = file.rsplit("/", 1)[-1]
    try:
        text = kernels.source(name).splitlines()[line - 1].strip()
    except (OSError, ValueError, IndexError):
        text = ""
    if len(text) > 64:
        text = text[:61] + "..."
    return f"{name}:{line}  {text}" if text else f"{words}, {name}:{line}"


def _engine_label(run: Launch) -> str:
    """What produced a result's values, for "computed by ..." lines."""
    if run.engine == "machine":
        return "the SIMT machine"
    from helpers.engine import backend as _backend

    return f"GPU {_backend.detect().gpu_name} (values); the SIMT machine (what is defined, races, trace)"


@functools.lru_cache(maxsize=256)
def _machine_run(file: str, expr: str, block: tuple[int, int], n_out: int, dtype: str, trace: bool,
                 *inputs: bytes) -> Launch:
    """The machine's run of one launch (cached per setting: figures and explorers ask again)."""
    dt = np.dtype(dtype)
    args = [np.frombuffer(b, dt).copy() for b in inputs] + [np.zeros(n_out, dt)]
    return launch(file, expr, 1, block, args, backend="emulator", trace=trace)


def _run(file: str, expr: str, block: tuple[int, int], inputs: list[np.ndarray], n_out: int,
         backend: Optional[str], trace: bool = True) -> tuple[Launch, Launch]:
    """(the run whose values count, the machine's run of the same launch, traced if ``trace``)."""
    engine = _resolve(backend)
    dt = inputs[0].dtype
    mach = _machine_run(file, expr, tuple(block), n_out, dt.name, trace, *(a.reshape(-1).tobytes() for a in inputs))
    if engine != "cupy":
        return mach, mach
    gpu = launch(file, expr, 1, block, [a.reshape(-1) for a in inputs] + [np.zeros(n_out, dt)], backend="cupy")
    return Launch(gpu.outputs, "cupy", mach.report, mach.outputs), mach


def _resolve(backend: Optional[str]) -> str:
    from helpers.engine import backend as _backend

    return _backend.resolve(params.backend(backend))


def _races(run: Launch) -> tuple[Finding, ...]:
    return tuple(run.report.of_kind("race"))


# ---------------------------------------------------------------- public API

@dataclass(frozen=True)
class BlockResult:
    """What every thread of the block returned, and who holds the answer. Arrays are (y, x).

    values:   each thread's return value; 0 where ``defined`` is False.
    defined:  the value is defined (the machine's verdict on this launch).
    holders:  the threads the algorithm promises the result to (thread 0 for BlockReduce; every
              thread for the others).
    expected: NumPy's answer for each thread's group: the whole block ("sum"), its row ("x") or its
              column ("y").
    hazards:  the data races the machine found: :class:`helpers.machine.Finding` objects of kind
              "race" (``.detail["hazard"]`` RAW/WAR/WAW, ``.lines`` the two source lines, ``.count``).
    findings: everything the machine found (races, uninitialised reads, undefined shuffles ...).
    trace:    the machine's run phase by phase, a block :class:`helpers.engine.trace.Trace` (a property).
    source:   what produced ``values``.
    launch:   the :class:`helpers.topics.launch.Launch` (its ``report`` is the machine's).
    inputs:   the values the kernel was launched with, (y, x).
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
    hazards: tuple[Finding, ...]
    findings: tuple[Finding, ...]
    source: str = "the SIMT machine"
    launch: Optional[Launch] = field(default=None, repr=False, compare=False)
    inputs: Optional[np.ndarray] = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def trace(self) -> Trace:
        """The machine's run phase by phase: a traced run of the same launch on the same inputs, made on
        first use (explorers that only show results skip it; cached per setting)."""
        file, expr = _kernel_expr(self.kind, self.version, self.broadcast, self.values.dtype, self.op)
        _, mach = _run(file, expr, self.block, [self.inputs], self.inputs.size, "emulator", trace=True)
        name = {"sum": "BlockAllReduce" if self.broadcast else "BlockReduce", "x": "BlockXReduce",
                "y": "BlockYReduce"}[self.kind]
        title = f"{'seed ' if self.version == 'seed' else ''}{name} ({self.op}), block ({self.block[0]}, {self.block[1]})"
        return _block_trace(mach, self.block, self.values.dtype, 1, title)

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
    ok = (isinstance(block, (tuple, list)) and len(block) == 2 and all(params.is_integer(d) for d in block))
    if not ok or block[0] < 1 or block[1] < 1 or block[0] * block[1] > MAX_THREADS:
        threads = f" ({block[0] * block[1]} threads)" if ok else ""
        raise ValueError(f"block must be (x, y) with x >= 1, y >= 1 and x * y <= {MAX_THREADS}; got "
                         f"{params.quote(block)}{threads}")
    bx, by = int(block[0]), int(block[1])
    if arr.size != bx * by or arr.ndim not in (1, 2) or (arr.ndim == 2 and arr.shape != (by, bx)):
        raise ValueError(f"values must have shape ({by}, {bx}) or ({bx * by},) for block ({bx}, {by}); got shape {arr.shape}")
    return arr.reshape(by, bx), (bx, by)


def expected(v: np.ndarray, kind: str, op: str) -> np.ndarray:
    """What every thread should hold after a ``kind`` block reduce of ``v`` (shape (y, x)) with ``op``:
    NumPy's answer (the block's, each row's or each column's), broadcast to ``v``'s shape."""
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


def block_reduce(values: Any, block: Optional[tuple[int, int]] = None, op: str = "sum", kind: str = "sum",
                 version: str = "fixed", broadcast: bool = False, backend: Optional[str] = None) -> BlockResult:
    """Reduce one block of values: ``kind`` "sum" (whole block), "x" (each row) or "y" (each column).

    ``values``: shape (y, x), or (x * y,) in thread order (tid = y * x_size + x); ``block`` = (x, y)
    defaults to the shape of ``values``. Any x, y >= 1 with x * y <= 1024. ``op`` is one of
    :data:`helpers.topics.warp_reduce.OPS`. ``broadcast=True`` (kind "sum", version "fixed") hands the result
    to every thread. ``version="seed"``: kind "sum" needs op "sum" and a 1D block (y == 1), kind "x"
    needs y <= 64 (the seed's shared array has 64 slots).
    """
    params.backend(backend)
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
    file, expr = _kernel_expr(kind, version, broadcast, v.dtype, op)
    run, mach = _run(file, expr, blk, [v], v.size, backend, trace=False)
    shape = v.shape
    defined = run.defined(1).reshape(shape)
    values_out = np.where(defined, run.outputs[1].reshape(shape), 0).astype(v.dtype)
    holders = np.ones(shape, bool)
    if kind == "sum" and not broadcast:
        holders[:] = False
        holders[0, 0] = True
    return BlockResult(kind, version, op, blk, broadcast, values_out, defined, holders, expected(v, kind, op),
                       _races(mach), tuple(mach.report.issues), _engine_label(run), run, v.copy())


def _block_trace(mach: Launch, blk: tuple[int, int], dtype: np.dtype, out_arg: int, title: str,
                 out_index: Optional[Callable[[int], int]] = None) -> Trace:
    tr = mach.report.trace
    return tr.block(blk, dtype, out_arg, title, label=lambda pc, kind: _phase_label(tr, pc, kind), out_index=out_index)


def block_trace(values: Any, block: Optional[tuple[int, int]] = None, op: str = "sum", kind: str = "sum",
                version: str = "fixed", broadcast: bool = False) -> Trace:
    """The machine's phase-by-phase trace of :func:`block_reduce` (for the block figures)."""
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
    """Two BlockReduce calls in a row on the same shared storage (kernels/block_reduce.cu's back_to_back_kernel).

    first, second:     what thread 0 holds after each call (0 where undefined);
    first_defined, second_defined: whether that value is defined (the machine's verdict);
    expected:          NumPy's answers (first, second);
    hazards:           the data races the machine found (:class:`helpers.machine.Finding`, kind "race");
    trace:             the machine's run of both calls, phase by phase;
    source:            what produced the values.
    """

    barrier: bool
    first: Any
    first_defined: bool
    second: Any
    second_defined: bool
    expected: tuple[Any, Any]
    hazards: tuple[Finding, ...]
    trace: Trace = field(repr=False)
    source: str = "the SIMT machine"


def _b2b_expr(dtype: np.dtype, op: str, barrier: bool) -> str:
    return f"back_to_back_kernel<{CTYPES[dtype.name]}, {cpp_op(op, dtype)}, {'true' if barrier else 'false'}>"


def _b2b_inputs(first: Any, second: Any, block: Optional[tuple[int, int]], op: str) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    a, blk = _check_block(first, block)
    b, _ = _check_block(second, blk)
    if a.dtype != b.dtype:
        raise ValueError(f"first and second must have the same dtype; got {a.dtype} and {b.dtype}")
    check_op(op, a.dtype)
    return a, b, blk


def back_to_back_gpu(first: Any, second: Any, block: Optional[tuple[int, int]] = None, op: str = "sum",
                     barrier: bool = True) -> tuple[Any, Any]:
    """Run the two BlockReduce calls of :func:`back_to_back` on the GPU only; thread 0's (first, second).

    Without the barrier the first value is undefined even when it happens to be right: use this only
    to give compute-sanitizer something to watch (helpers.recording.block_reduce_target)."""
    a, b, blk = _b2b_inputs(first, second, block, op)
    out = launch("block_reduce", _b2b_expr(a.dtype, op, barrier), 1, blk,
                 [a.reshape(-1), b.reshape(-1), np.zeros(2 * a.size, a.dtype)], backend="cupy").outputs[2]
    return out[0], out[1]


def back_to_back(first: Any, second: Any, block: Optional[tuple[int, int]] = None, op: str = "sum",
                 barrier: bool = True, backend: Optional[str] = None) -> BackToBack:
    """``r1 = BlockReduce(a); [__syncthreads();] r2 = BlockReduce(b);`` with one storage struct.

    Without the barrier, a fast warp's lane 0 of the second call may overwrite ``warp_aggregates[w]``
    while warp 0 of the first call is still reading it: a write-after-read race, so the first result is
    undefined. This is why the seed's BlockReduceSum starts with ``__syncthreads()`` (and why
    block_reduce.cuh asks its caller for one before reusing the storage). One GPU run cannot show a
    race: the machine's run of the same launch reports it (and compute-sanitizer racecheck did, in
    ``data/sanitizer_block.json``).
    """
    a, b, blk = _b2b_inputs(first, second, block, op)
    run, mach = _run("block_reduce", _b2b_expr(a.dtype, op, barrier), blk, [a, b], 2 * a.size, backend)
    out, ok = run.outputs[2], run.defined(2)
    z = np.zeros((), a.dtype)
    title = f"BlockReduce ({op}) twice, {'with' if barrier else 'without'} __syncthreads() between, block {blk}"
    trace = _block_trace(mach, blk, a.dtype, 2, title, out_index=lambda t: 2 * t)
    return BackToBack(barrier, out[0] if ok[0] else z, bool(ok[0]), out[1] if ok[1] else z, bool(ok[1]),
                      (reference(a.reshape(-1), op), reference(b.reshape(-1), op)), _races(mach), trace,
                      _engine_label(run))


# ---------------------------------------------------------------- racecheck on a laptop

def machine_races(kernel: str, x: int, y: int) -> tuple[Finding, ...]:
    """The races the machine finds in one of :data:`SANITIZER_TARGETS` (or :data:`BACK_TO_BACK_TARGETS`)
    on a (x, y) block of ones: the launches compute-sanitizer watched on the H200."""
    ones = np.ones((y, x), np.int32)
    if kernel in BACK_TO_BACK_TARGETS:
        return back_to_back(ones, ones, (x, y), barrier=BACK_TO_BACK_TARGETS[kernel], backend="emulator").hazards
    if kernel not in SANITIZER_TARGETS:
        names = (*SANITIZER_TARGETS, *BACK_TO_BACK_TARGETS)
        raise ValueError(f"kernel must be one of {', '.join(map(repr, names))}; got {kernel!r}")
    kind, version, broadcast = SANITIZER_TARGETS[kernel]
    return block_reduce(ones, (x, y), "sum", kind, version, broadcast, backend="emulator").hazards


def machine_vs_racecheck(recording: dict[str, Any], runs: Optional[list[tuple[str, int, int]]] = None,
                         report: str = "analysis") -> str:
    """A table: per launch of ``data/sanitizer_block.json``, the machine's verdict now (races found,
    the hazard, the two source lines) beside racecheck's recorded one on the H200 (``report`` mode)."""
    recorded = {(r["kernel"], tuple(r["block"])): r for r in recording["runs"]
                if r["tool"] == "racecheck" and r.get("report", "all") == report}
    keys = runs if runs is not None else [(k, *b) for k, b in recorded]
    lines = [f"{'kernel':<14} {'block':<10} {'machine':<9} {'hazard':<7} {'lines (read/write)':<32} "
             f"{'racecheck (H200)':<17} errors"]
    for kernel, x, y in keys:
        found = machine_races(kernel, x, y)
        rec = recorded.get((kernel, (x, y)))
        where = ", ".join(f"{f.loc.file.rsplit('/', 1)[-1] if f.loc else '?'}:"
                          f"{'/'.join(str(n) if n else 'merged' for n in f.lines)}" for f in found) or "-"
        hazard = ",".join(sorted({f.detail.get("hazard", "?") for f in found})) or "-"
        lines.append(f"{kernel:<14} {f'({x}, {y})':<10} {'race' if found else 'clean':<9} {hazard:<7} {where:<32} "
                     f"{rec['outcome'] if rec else 'not recorded':<17} {rec['errors'] if rec else '-':>6}")
    return "\n".join(lines)
