"""The reduction ladder's dispatcher: one entry point for ``kernels/reduce_v0.cu`` ... ``reduce_v8.cu``
and ``reduce_onepass.cu``, and the host side of a full (two-pass) sum.

Every ladder kernel has one signature, ``reduce_vN<BLOCK>(const float* in, float* out, long long n)``,
and writes one partial sum per block (the *first pass*). The *second pass* reduces those partials
until one value remains: v0..v5 relaunch themselves on the partials (each launch divides the count
by BLOCK or 2 * BLOCK), the grid-stride kernels v6..v8 take them all in one single-block launch, and
the one-launch kernels (:data:`ONE_LAUNCH`) need no second launch at all: ``onepass`` (last-block-done)
and ``v9`` (ticket at the start, tagged partials; its block size, loads per round, grid and load
kind follow the size, :func:`v9_launch` and :func:`grid_size`).

A :class:`ReducePlan` holds the grids and the partial buffers for one (version, n, block), so a
benchmark times launches, not allocations. :func:`reduce_sum` is the one-call convenience.

On either engine, :func:`run_passes` runs every launch of a full reduction of a NumPy array through
:mod:`helpers.topics.launch`: on the GPU the values are the hardware's; without one the SIMT machine runs
the same kernels' PTX lane by lane, for n up to :data:`MACHINE_MAX_N`, and its report (races,
undefined values, counters, trace) comes with every launch. :func:`reduce_sum` and
:func:`first_pass` take a NumPy array that way, a CuPy array on the GPU as before.

CuPy is imported inside functions: importing this module needs no GPU, and the pure functions
(:func:`grid_size`, :func:`pass_grids`, the checks) run anywhere. They, the versions and the kernels'
names live in :mod:`helpers.topics.reduce_ladder`; this module re-exports them (``__all__``), so that
``from helpers.topics import reduce as R`` stays the ladder's one entry point.
"""
from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from helpers.engine.params import is_integer, quote
from helpers.topics.reduce_ladder import (ALL_VERSIONS, BEYOND, BLOCKS, DEFAULT_BLOCK, DEFAULT_UNROLL, LADDER,
                                          MACHINE_L2_BYTES, MACHINE_MAX_N, MACHINE_SM_COUNT, MACHINE_THREADS_PER_SM,
                                          MAX_GRID, ONE_LAUNCH, RACY, REDUCE_KERNELS, SEED_BLOCK, SEED_TILE, SPECS,
                                          UNROLLS, V9_HBM_BLOCK, V9_ITERATIONS_PER_WAVE, V9_L2_BLOCKS,
                                          V9_L2_MAX_BLOCKS, V9_L2_ROUNDS, V9_MAX_WAVES, V9_ONE_BLOCK_MAX_N,
                                          V9_ONE_ROUND_MAX_N, V9_WARP_SLOTS, VERSIONS, V9Launch, Version, check_array,
                                          check_block, check_input, check_n, check_unroll, check_version, grid_size,
                                          kernel_name, pass_grids, tile_size, uses_unroll, v9_launch, v9_streams,
                                          v9_waves)

# The ladder's one entry point: its versions, checks and grids (reduce_ladder) are re-exported here with
# what runs them, so that notebooks, the bench and the recordings import one module.
__all__ = ["LADDER", "BEYOND", "VERSIONS", "RACY", "ALL_VERSIONS", "BLOCKS", "DEFAULT_BLOCK", "DEFAULT_UNROLL",
           "UNROLLS", "SEED_BLOCK", "SEED_TILE", "MAX_GRID", "MACHINE_MAX_N", "MACHINE_SM_COUNT",
           "MACHINE_THREADS_PER_SM", "MACHINE_L2_BYTES", "Version", "SPECS", "ONE_LAUNCH", "V9_ONE_BLOCK_MAX_N",
           "V9_WARP_SLOTS", "V9_ONE_ROUND_MAX_N", "V9_L2_BLOCKS", "V9_L2_ROUNDS", "V9_L2_MAX_BLOCKS", "V9_HBM_BLOCK",
           "V9_MAX_WAVES", "V9_ITERATIONS_PER_WAVE", "uses_unroll", "kernel_name", "REDUCE_KERNELS", "check_version",
           "check_block", "check_unroll", "check_n", "check_array", "check_input", "tile_size", "grid_size",
           "v9_waves", "V9Launch", "v9_launch", "v9_streams", "pass_grids", "resident_blocks", "ReducePlan",
           "default_launch", "make_plan", "ReduceResult", "ReduceRun", "machine_resident_blocks", "check_machine_n",
           "run_passes", "launch_defines", "reduce_sum", "first_pass", "SEED_BLOCKS", "check_seed_block", "seed_grid",
           "seed_first_pass", "seed_launcher", "error_bound"]


# ---------------------------------------------------------------------------------------------
# Kernels (need a GPU)

@functools.lru_cache(maxsize=None)
def _kernel(version: str, block: int, unroll: int = DEFAULT_UNROLL, stream: bool = False,
            grid: Optional[int] = None) -> Any:
    """The compiled ``cupy.RawKernel`` for one instantiation (module compiled once per file/unroll,
    and for v9 per load kind: ``stream`` = evict-first loads; ``grid`` == 1: v9's one-block kernel)."""
    from helpers.engine import kernels

    spec = SPECS[check_version(version, racy_ok=True)]
    defines = (f"REDUCE_UNROLL={check_unroll(unroll)}",) if spec.vector else ()
    if version == "v9":
        defines += (f"REDUCE_STREAM={int(stream)}",)
    mod = kernels.module(spec.file, name_expressions=REDUCE_KERNELS[spec.file], defines=defines)
    return mod.get_function(kernel_name(version, block, grid))


def _require_gpu(what: str) -> None:
    """Raise RuntimeError saying why when no CUDA GPU is usable here (rather than CuPy's own error)."""
    from helpers.engine.backend import detect

    d = detect()
    if not d.usable:
        raise RuntimeError(f"{what} launches kernels/reduce_*.cu on a CUDA GPU, and none is usable here: {d.reason}. "
                           f"Without a GPU, pass a NumPy array (n <= {MACHINE_MAX_N:,}): the SIMT machine runs "
                           f"the same kernels (helpers.topics.reduce.run_passes)")


@functools.lru_cache(maxsize=None)
def _resident_blocks(device_id: int, version: str, block: int, unroll: int) -> int:
    from cupy.cuda import Device, driver

    attrs = Device(device_id).attributes
    kern = _kernel(version, block, unroll)
    try:
        per_sm = int(driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, block, 0))
    except (AttributeError, TypeError) as exc:  # a CuPy without this binding: the thread limit alone
        per_sm = int(attrs["MaxThreadsPerMultiProcessor"]) // block
        warnings.warn(f"occupancy API unavailable ({exc}); assuming {per_sm} blocks of {block} per SM")
    return max(1, per_sm) * int(attrs["MultiProcessorCount"])


@functools.lru_cache(maxsize=None)
def _l2_bytes(device_id: int) -> int:
    import cupy

    return int(cupy.cuda.runtime.getDeviceProperties(device_id)["l2CacheSize"])


def resident_blocks(version: str, block: int = DEFAULT_BLOCK, unroll: int = DEFAULT_UNROLL) -> int:
    """Blocks of ``version`` the current GPU holds at once: blocks per SM (CUDA occupancy API, from
    the kernel's registers and shared memory) x the SM count (``MultiProcessorCount``)."""
    _require_gpu("resident_blocks")
    import cupy

    return _resident_blocks(cupy.cuda.Device().id, version, check_block(block), check_unroll(unroll))


class ReducePlan:
    """One full reduction of ``n`` float32 with one version and block size, ready to launch.

    Allocates, once, the partial-sum buffer of every pass (``buffers[k]`` receives launch ``k``'s
    output, ``len(buffers[k]) == grids[k]``). Launches go on the current CUDA stream, asynchronously.

    * ``plan.first_pass(x)`` launches the first pass and returns ``buffers[0]``, the per-block
      partial sums (for onepass: the whole reduction, whose per-block partials land there too);
    * ``plan.second_pass()`` reduces ``buffers[0]`` to one value and returns :attr:`result`;
    * ``plan(x)`` does both and returns :attr:`result`, a 1-element device array holding the sum.

    A plan must not be used by two launches at once (onepass's counter lives in it).
    """

    def __init__(self, version: str, n: int, block: int = DEFAULT_BLOCK, unroll: int = DEFAULT_UNROLL):
        self.version = check_version(version, racy_ok=True)
        self.n = check_n(n)
        self.block = check_block(block)
        self.unroll = check_unroll(unroll)
        _require_gpu("a ReducePlan")
        import cupy
        import numpy

        version, n, block, unroll = self.version, self.n, self.block, self.unroll
        spec = SPECS[self.version]
        resident = resident_blocks(version, block, unroll) if spec.grid_stride else None
        l2 = _l2_bytes(cupy.cuda.Device().id)
        self.grids: tuple[int, ...] = pass_grids(version, n, block, resident, unroll, l2)
        self.buffers = [cupy.empty(g, dtype=cupy.float32) for g in self.grids]
        if version == "v9":
            self.buffers = [cupy.empty(1, dtype=cupy.float32)]  # v9's partials live in tagged slots
        self.stream_loads = version == "v9" and v9_streams(n, l2)
        # the second pass: the same kernel; v9 (one launch) takes its one-block kernel for a grid of 1
        self._kernel = _kernel(version, block, unroll, self.stream_loads, self.grids[0] if version == "v9" else None)
        self._second_launches = [
            ((self.grids[k],), (self.buffers[k - 1], self.buffers[k], numpy.int64(self.grids[k - 1])))
            for k in range(1, len(self.grids))]
        if version == "onepass":
            self._out = cupy.empty(1, dtype=cupy.float32)
            self._done = cupy.zeros(1, dtype=cupy.uint32)  # the last block resets it after use
        if version == "v9":
            self._out = self.buffers[0]  # the sum itself: v9 keeps its partials in tagged slots
            self._slots = cupy.zeros(self.grids[0], dtype=cupy.uint64)  # {tag, value} per block
            self._state = cupy.zeros(1, dtype=cupy.uint64)  # {last launch's tag, tickets drawn}

    @property
    def launches(self) -> int:
        """Kernel launches of one full reduction."""
        return len(self.grids)

    @property
    def result(self) -> Any:
        """The 1-element device array that holds the sum after :meth:`second_pass` (or ``plan(x)``)."""
        return self._out if self.version in ONE_LAUNCH else self.buffers[-1]

    def launchers(self, x: Any) -> tuple[Callable[[], None], Callable[[], None]]:
        """Two zero-argument functions that launch the first pass on ``x`` and the second pass.

        ``x`` is checked once, here, not at every call: these are what a benchmark times.
        """
        import numpy

        x = check_input(x)
        if x.size != self.n:
            raise ValueError(f"x must have n={self.n} elements (this plan's n); got {x.size}")
        kern, grid, threads = self._kernel, (self.grids[0],), (self.block,)
        if self.version == "onepass":
            args: tuple[Any, ...] = (x, self.buffers[0], self._done, self._out, numpy.int64(self.n))
        elif self.version == "v9":
            args = (x, self._slots, self._state, self._out, numpy.int64(self.n))
        else:
            args = (x, self.buffers[0], numpy.int64(self.n))

        def launch_first() -> None:
            kern(grid, threads, args)

        return launch_first, self._launch_second

    def _launch_second(self) -> None:
        """The same kernel on the partials, pass after pass, until one value remains."""
        for grid, args in self._second_launches:
            self._kernel(grid, (self.block,), args)

    def first_pass(self, x: Any) -> Any:
        """Launch the first pass on ``x`` (n float32, contiguous); return the partials buffer."""
        self.launchers(x)[0]()
        return self.buffers[0]

    def second_pass(self) -> Any:
        """Reduce the first pass's partials to one value; return :attr:`result`."""
        self._launch_second()
        return self.result

    def __call__(self, x: Any) -> Any:
        """Both passes on ``x``; returns :attr:`result` (asynchronously: read it to wait)."""
        self.first_pass(x)
        return self.second_pass()

    def __repr__(self) -> str:
        return (f"ReducePlan(version={self.version!r}, n={self.n}, block={self.block}, "
                f"grids={self.grids})")


def default_launch(version: str, n: int, l2_bytes: Optional[int] = None) -> tuple[int, int]:
    """``(block, unroll)`` a version runs with when none is given: :func:`v9_launch`'s for v9 (for a
    GPU with ``l2_bytes`` of L2; None: this GPU's), :data:`DEFAULT_BLOCK` and :data:`DEFAULT_UNROLL`
    for every other version."""
    n = check_n(n)
    if check_version(version, racy_ok=True) != "v9":
        return DEFAULT_BLOCK, DEFAULT_UNROLL
    if l2_bytes is None:
        _require_gpu("v9's default launch")
        l2_bytes = _l2_bytes(_device_id())
    chosen = v9_launch(n, l2_bytes)
    return chosen.block, chosen.unroll


def make_plan(version: str, n: int, block: Optional[int] = None, unroll: Optional[int] = None) -> ReducePlan:
    """A :class:`ReducePlan` (validated: ValueError names the bad parameter); ``block=None`` or
    ``unroll=None``: the version's :func:`default_launch`."""
    check_version(version, racy_ok=True)
    check_n(n)
    if block is not None:
        check_block(block)
    if unroll is not None:
        check_unroll(unroll)
    chosen_block, chosen_unroll = default_launch(version, n)
    return ReducePlan(version, n, chosen_block if block is None else block,
                      chosen_unroll if unroll is None else unroll)


@dataclass(frozen=True)
class ReduceResult:
    """The outcome of :func:`reduce_sum`."""

    value: float              # the sum (a float32 value, as a Python float)
    version: str
    block: int
    n: int
    grids: tuple[int, ...]    # blocks of each launch: grids[0] is the first pass
    engine: str = "cupy"      # "cupy" (the GPU) or "machine" (the SIMT machine)

    @property
    def launches(self) -> int:
        return len(self.grids)


@dataclass(frozen=True)
class ReduceRun:
    """Every launch of one full reduction of a NumPy array (:func:`run_passes`), on one engine.

    ``passes[k]`` is launch ``k``'s :class:`helpers.topics.launch.Launch`: its arguments after the launch
    (``outputs[1]``, the partials it wrote), which engine produced them, and the machine's report of
    the same launch (always on the machine; on the GPU with ``check=True``).
    """

    value: float
    version: str
    block: int
    n: int
    grids: tuple[int, ...]
    engine: str
    passes: tuple[Any, ...] = field(repr=False)

    @property
    def defined(self) -> bool:
        """Whether the machine says the sum is defined (True when no machine run was made)."""
        last = self.passes[-1]
        pos = 3 if self.version in ONE_LAUNCH else 1
        return bool(last.defined(pos)[0])

    def disagreements(self) -> list[str]:
        """On the GPU with ``check=True``: where any pass's defined values differ between the GPU and
        the machine, one line each, naming the pass (empty when they agree)."""
        return [f"pass {k} (grid {g}): {d}" for k, (p, g) in enumerate(zip(self.passes, self.grids))
                for d in p.disagreements()]


def machine_resident_blocks(block: int = DEFAULT_BLOCK) -> int:
    """The resident blocks the machine sizes a grid-stride grid with: an H200's thread limit,
    (:data:`MACHINE_THREADS_PER_SM` // block) x :data:`MACHINE_SM_COUNT`."""
    return MACHINE_THREADS_PER_SM // check_block(block) * MACHINE_SM_COUNT


def check_machine_n(n: int) -> int:
    """Return ``n`` if the SIMT machine takes it (1 <= n <= :data:`MACHINE_MAX_N`)."""
    n = check_n(n)
    if n > MACHINE_MAX_N:
        raise ValueError(f"n (the number of elements in x) must be at most {MACHINE_MAX_N:,} (2^20) on the SIMT "
                         f"machine, which runs every lane on the CPU (2^16 takes a fraction of a second per "
                         f"version); got {n:,}. Use a smaller array, or a GPU (a cupy array) for larger n")
    return n


def run_passes(x: Any, version: str, block: Optional[int] = None, *, backend: Optional[str] = None,
               check: bool = False, trace: bool = False, unroll: Optional[int] = None) -> ReduceRun:
    """Every launch of a full reduction of ``x`` (a non-empty, contiguous float32 NumPy array), each
    through :func:`helpers.topics.launch.launch`, on the engine ``backend`` picks (None: the GPU if one is
    usable, else the SIMT machine; ``"emulator"`` is the machine).

    On the machine n must be at most :data:`MACHINE_MAX_N`, and the grid-stride grids are sized as
    on an H200 (:func:`machine_resident_blocks`, :data:`MACHINE_L2_BYTES`). ``block`` or ``unroll``
    None: the version's :func:`default_launch`, as :func:`make_plan` chooses.
    On the GPU ``check=True`` (or ``trace=True``) also
    runs every launch on the machine on the same inputs (:meth:`ReduceRun.disagreements`).
    ``version`` may be ``v4_legacy`` (its sum is undefined: the machine says so). ValueError names
    the parameter that is not allowed.
    """
    from helpers.engine import backend as _backend
    from helpers.topics import launch as _launch
    import numpy

    version = check_version(version, racy_ok=True)
    if not isinstance(x, numpy.ndarray):
        raise TypeError(f"x must be a NumPy array (use reduce_sum for a cupy array); got "
                        f"{type(x).__module__}.{type(x).__name__}")
    n = check_array(x)
    if unroll is not None:
        check_unroll(unroll)
    engine = _backend.resolve(backend)
    spec = SPECS[version]
    on_gpu = engine == "cupy"
    if not on_gpu:
        check_machine_n(n)
    l2 = _l2_bytes(_device_id()) if on_gpu else MACHINE_L2_BYTES
    chosen_block, chosen_unroll = default_launch(version, n, l2)
    block = check_block(chosen_block if block is None else block)
    unroll = check_unroll(chosen_unroll if unroll is None else unroll)
    resident = None
    if spec.grid_stride:
        resident = resident_blocks(version, block, unroll) if on_gpu else machine_resident_blocks(block)
    grids = pass_grids(version, n, block, resident, unroll, l2)
    defines = launch_defines(version, unroll, stream=version == "v9" and v9_streams(n, l2))
    expr = kernel_name(version, block, grids[0] if version == "v9" else None)
    f32, i64 = numpy.float32, numpy.int64

    def go(grid: int, args: tuple) -> Any:
        return _launch.launch(spec.file, expr, grid, block, args, defines=defines, backend=engine,
                              check=check, trace=trace)

    if version == "onepass":
        first = go(grids[0], (x, numpy.zeros(grids[0], f32), numpy.zeros(1, numpy.uint32), numpy.zeros(1, f32), i64(n)))
        return ReduceRun(float(first.outputs[3][0]), version, block, n, grids, first.engine, (first,))
    if version == "v9":
        first = go(grids[0], (x, numpy.zeros(grids[0], numpy.uint64), numpy.zeros(1, numpy.uint64),
                              numpy.zeros(1, f32), i64(n)))
        return ReduceRun(float(first.outputs[3][0]), version, block, n, grids, first.engine, (first,))
    passes = [go(grids[0], (x, numpy.zeros(grids[0], f32), i64(n)))]
    for k in range(1, len(grids)):
        partials = passes[-1].outputs[1]
        passes.append(go(grids[k], (partials, numpy.zeros(grids[k], f32), i64(grids[k - 1]))))
    return ReduceRun(float(passes[-1].outputs[1][0]), version, block, n, grids, passes[0].engine, tuple(passes))


def launch_defines(version: str, unroll: int = DEFAULT_UNROLL, stream: bool = False) -> tuple[str, ...]:
    """The ``-D`` defines :func:`run_passes` builds ``version`` with: ``REDUCE_UNROLL`` for the
    vector versions (v9 at its default unroll without it), ``REDUCE_STREAM=1`` for v9's evict-first
    loads. On the machine each must be shipped (:data:`helpers.engine.kernels.SHIPPED_DEFINES`)."""
    spec = SPECS[check_version(version, racy_ok=True)]
    defines: tuple[str, ...] = ()
    if spec.vector and not (version == "v9" and check_unroll(unroll) == DEFAULT_UNROLL):
        defines = (f"REDUCE_UNROLL={unroll}",)
    return defines + (("REDUCE_STREAM=1",) if stream else ())


def _device_id() -> int:
    import cupy

    return int(cupy.cuda.Device().id)


def reduce_sum(x: Any, version: str, block: Optional[int] = None, backend: Optional[str] = None) -> ReduceResult:
    """Sum every element of ``x`` (a non-empty, contiguous float32 array) with one version.

    ``x`` a ``cupy.ndarray``: on the GPU, as a :class:`ReducePlan`. ``x`` a NumPy array: through
    :func:`run_passes` on the engine ``backend`` picks (without a GPU, the SIMT machine, n up to
    :data:`MACHINE_MAX_N`).
    ``version`` is one of :data:`VERSIONS` (``"v0"`` ... ``"v8"``, ``"onepass"``, ``"v9"``); ``block`` a
    power of two in [64, 1024], or None for the version's :func:`default_launch`. Runs the first
    pass and the second pass and waits for the result.
    Raises ValueError naming ``version``, ``block``, ``n`` or ``x`` when one is not allowed.
    """
    import numpy

    check_version(version)
    if block is not None:
        check_block(block)
    if isinstance(x, numpy.ndarray):
        run = run_passes(x, version, block, backend=backend)
        return ReduceResult(run.value, version, run.block, run.n, run.grids, run.engine)
    check_input(x)
    plan = make_plan(version, int(x.size), block)
    value = float(plan(x)[0])
    return ReduceResult(value, version, plan.block, plan.n, plan.grids)


def first_pass(x: Any, version: str, block: int = DEFAULT_BLOCK, backend: Optional[str] = None) -> Any:
    """The per-block partial sums of ``x`` (a device array of ``grid_size(...)`` floats).

    Same arguments and checks as :func:`reduce_sum` (``v4_legacy`` allowed too: its partials are
    undefined, that is its point). A NumPy ``x`` runs on the engine ``backend`` picks and returns a
    NumPy array (:func:`run_passes`'s first launch).
    """
    import numpy

    check_version(version, racy_ok=True)
    check_block(block)
    if isinstance(x, numpy.ndarray):
        return _first_launch(x, version, block, backend).outputs[1]
    check_input(x)
    return ReducePlan(version, int(x.size), block).first_pass(x)


def _first_launch(x: Any, version: str, block: int, backend: Optional[str]) -> Any:
    """The first launch of :func:`run_passes` alone (no second pass)."""
    import numpy

    from helpers.engine import backend as _backend
    from helpers.topics import launch as _launch

    n = check_array(x)
    engine = _backend.resolve(backend)
    if engine != "cupy":
        check_machine_n(n)
    spec = SPECS[version]
    resident = None
    if spec.grid_stride:
        resident = resident_blocks(version, block) if engine == "cupy" else machine_resident_blocks(block)
    grid = grid_size(version, n, block, resident)
    defines = (f"REDUCE_UNROLL={DEFAULT_UNROLL}",) if spec.vector and version != "v9" else ()
    f32 = numpy.float32
    if version == "onepass":
        args: tuple = (x, numpy.zeros(grid, f32), numpy.zeros(1, numpy.uint32), numpy.zeros(1, f32), numpy.int64(n))
    elif version == "v9":
        raise ValueError("version must not be v9 for first_pass: v9 keeps its partials in tagged slots")
    else:
        args = (x, numpy.zeros(grid, f32), numpy.int64(n))
    return _launch.launch(spec.file, kernel_name(version, block), grid, block, args, defines=defines, backend=engine)


# ---------------------------------------------------------------------------------------------
# The seed's kernel, launched as the seed launches it

SEED_BLOCKS: tuple[int, ...] = (SEED_BLOCK, DEFAULT_BLOCK)  # as the seed launches it, and at our block size


def check_seed_block(block: int) -> int:
    """Return ``block`` if the seed kernel is compiled for it (:data:`SEED_BLOCKS`)."""
    if isinstance(block, bool) or block not in SEED_BLOCKS:
        raise ValueError(f"block must be one of {', '.join(map(str, SEED_BLOCKS))} for the seed kernel; got {block!r}")
    return block


def seed_grid(n: int, block: int = SEED_BLOCK) -> int:
    """The seed's grid: ceil(n / (2 * block)) blocks (each block reads 2 * block elements; the seed
    itself launches 128 threads, so ceil(n / 256) blocks)."""
    return -(-check_n(n) // (2 * check_seed_block(block)))


def seed_first_pass(x: Any, out: Any = None, allow_out_of_bounds: bool = False, block: int = SEED_BLOCK) -> Any:
    """Launch the seed's ``reduce_v4`` (``kernels/seed_reduce_v4.cu``) on ``x``; return its partials.

    The seed has no bounds check: when ``n`` is not a multiple of 256 its last block reads past the
    end of ``x``. That raises ValueError unless ``allow_out_of_bounds`` (used only to show the bug
    under compute-sanitizer memcheck). ``out``, if given, must hold ``seed_grid(n)`` float32.
    """
    launch, out = seed_launcher(x, out, allow_out_of_bounds, block)
    launch()
    return out


def seed_launcher(x: Any, out: Any = None, allow_out_of_bounds: bool = False,
                  block: int = SEED_BLOCK) -> tuple[Callable[[], None], Any]:
    """``(launch, out)``: a zero-argument function launching the seed kernel with ``block``
    threads per block (the seed's 128, or 256) on ``x`` into ``out`` (checked once, here), as
    :func:`seed_first_pass` does. For timing."""
    n = check_array(x)
    tile = 2 * check_seed_block(block)
    if n % tile and not allow_out_of_bounds:
        raise ValueError(f"n (the size of x) must be a multiple of {tile} for the seed kernel, "
                         f"which has no bounds check; got {n}")
    check_input(x)
    import cupy

    g = seed_grid(n, block)
    if g > MAX_GRID:
        raise ValueError(f"n={n} needs {g} blocks, more than gridDim.x allows ({MAX_GRID})")
    if out is None:
        out = cupy.empty(g, dtype=cupy.float32)
    elif out.dtype != cupy.float32 or out.size < g:
        raise ValueError(f"out must be a float32 device array of at least {g} elements")
    kern, args = _seed_kernel(block), (x, out)

    def launch() -> None:
        kern((g,), (block,), args)

    return launch, out


@functools.lru_cache(maxsize=None)
def _seed_kernel(block: int = SEED_BLOCK) -> Any:
    from helpers.engine import kernels

    mod = kernels.module("seed_reduce_v4", name_expressions=REDUCE_KERNELS["seed_reduce_v4"])
    return mod.get_function(f"seed_reduce_v4<{block}>")


def error_bound(x_abs_sum: float, n: int, version: str, block: int = DEFAULT_BLOCK,
                first_grid: Optional[int] = None) -> float:
    """A rigorous bound on |float32 result - exact sum| for ``version``: ``depth * u * sum(|x|)``.

    ``u = 2^-24`` (float32 unit roundoff); ``depth`` bounds how many float32 additions any one
    element passes through: the per-thread chain (``ceil(n / threads)`` loads for the grid-stride
    versions, times 1 for the float4 lane sum), the block trees (log2 of everything that is left;
    for v9 also thread 0's in-order adds of the warp sums) and a margin. ``first_grid`` (the first
    pass's grid) is needed for the grid-stride versions.
    """
    spec = SPECS[check_version(version, racy_ok=True)]
    n, block = check_n(n), check_block(block)
    if isinstance(x_abs_sum, bool) or not isinstance(x_abs_sum, numbers.Real) or not math.isfinite(x_abs_sum) \
            or x_abs_sum < 0:
        raise ValueError(f"x_abs_sum (the sum of |x|) must be a finite number >= 0; got {quote(x_abs_sum)}")
    if first_grid is not None and (not is_integer(first_grid) or first_grid < 1):
        raise ValueError(f"first_grid (blocks of the first pass) must be an integer >= 1 or None; got {quote(first_grid)}")
    chain = 2
    if spec.grid_stride:
        threads = (first_grid or 1) * block
        chain = 4 + -(-n // threads)
    if version == "v9":   # its block trees end in thread 0 adding the block's warp sums in order, twice at most
        chain += 2 * (block // 32)
    depth = chain + 2 * math.ceil(math.log2(max(n, 2))) + 4
    return depth * 2.0**-24 * x_abs_sum
