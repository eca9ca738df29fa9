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
(:func:`grid_size`, :func:`pass_grids`, the checks) run anywhere.
"""
from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from helpers.engine.params import is_integer, is_one_of, quote

LADDER: tuple[str, ...] = ("v0", "v1", "v2", "v3", "v4")
BEYOND: tuple[str, ...] = ("v5", "v6", "v7", "v8", "onepass", "v9")
VERSIONS: tuple[str, ...] = LADDER + BEYOND
# Compiles and runs, but its result is undefined (a shared-memory race): only for racecheck.
RACY: tuple[str, ...] = ("v4_legacy",)
ALL_VERSIONS: tuple[str, ...] = VERSIONS + RACY

BLOCKS: tuple[int, ...] = (64, 128, 256, 512, 1024)
DEFAULT_BLOCK = 256
DEFAULT_UNROLL = 4          # float4 loads in flight per thread per iteration (v8, onepass, v9)
UNROLLS: tuple[int, ...] = (1, 2, 4, 8, 16)
SEED_BLOCK = 128            # the seed launches reduce_v4<128> with 128 threads ...
SEED_TILE = 2 * SEED_BLOCK  # ... and ceil(N / 256) blocks: 2 elements per thread
MAX_GRID = 2**31 - 1        # gridDim.x limit
# The SIMT machine runs every lane on the CPU: a full reduction of 2^16 floats takes a fraction of a
# second per version, 2^20 several seconds. Beyond that, use a GPU.
MACHINE_MAX_N = 2**20
# The machine sizes the grid-stride grids as the H200 it is proven against would by its thread
# limit (132 SMs x 2048 threads; the recorded v6<256> grid at 2^28 is 1,056 = 132 x 8 blocks).
MACHINE_SM_COUNT = 132
MACHINE_THREADS_PER_SM = 2048
MACHINE_L2_BYTES = 60 * 2**20  # the H200's L2 (cudaDeviceProp.l2CacheSize, data/bench_sweep.json)


@dataclass(frozen=True)
class Version:
    """How one ladder version splits the input: elements per thread per tile, and grid policy."""

    name: str
    file: str          # kernels/FILE.cu
    per_thread: int    # floats one thread reads per tile (vector versions: per float4 load)
    grid_stride: bool  # True: grid sized from the GPU, loop over the input; False: one tile per block
    vector: bool = False  # float4 loads, REDUCE_UNROLL of them per iteration


_SPECS: dict[str, Version] = {
    "v0": Version("v0", "reduce_v0", 1, False),
    "v1": Version("v1", "reduce_v1", 1, False),
    "v2": Version("v2", "reduce_v2", 1, False),
    "v3": Version("v3", "reduce_v3", 2, False),
    "v4": Version("v4", "reduce_v4", 2, False),
    "v4_legacy": Version("v4_legacy", "reduce_v4_legacy", 2, False),
    "v5": Version("v5", "reduce_v5", 2, False),
    "v6": Version("v6", "reduce_v6", 2, True),
    "v7": Version("v7", "reduce_v7", 2, True),
    "v8": Version("v8", "reduce_v8", 4, True, vector=True),
    "onepass": Version("onepass", "reduce_onepass", 4, True, vector=True),
    "v9": Version("v9", "reduce_v9", 4, True, vector=True),
}
ONE_LAUNCH: tuple[str, ...] = ("onepass", "v9")  # the whole sum in one launch, whatever the grid

# v9's launch (v9_launch, grid_size), chosen from 2,195 timed settings of block, loads per round,
# grid and load kind at every size 2^10 .. 2^30 on the H200 (scripts/gpu/reduce_probe.py, and
# scripts/gpu/one_block_probe.py for one block; docs/probes/v9_round3.md, 2026-12-04); the
# recorded sweep (data/bench_sweep.json) is what shows the outcome.
# Up to V9_ONE_BLOCK_MAX_N floats (64 KiB), one block: no ticket, no slots, nothing to wait for.
V9_ONE_BLOCK_MAX_N = 2**14
# Warp 0 of the last block collects up to this many slots in one pass, 8 loads per lane, with no
# block barrier (reduce_v9.cu); a larger grid makes the whole last block collect them.
V9_WARP_SLOTS = 256
# L2-resident inputs up to V9_ONE_ROUND_MAX_N floats: one round of loads per thread in blocks of
# V9_L2_BLOCKS[0] threads, up to V9_WARP_SLOTS blocks; beyond, V9_L2_BLOCKS[1] threads
# (V9_L2_BLOCKS[2] once V9_L2_BLOCKS[1] would need more than V9_L2_ROUNDS rounds) and at most
# V9_L2_MAX_BLOCKS blocks (scripts/gpu/floor_probe.py, docs/probes/v9_round4.md).
V9_ONE_ROUND_MAX_N = 2**20
V9_L2_BLOCKS: tuple[int, int, int] = (256, 512, 1024)
V9_L2_ROUNDS = 2
V9_L2_MAX_BLOCKS = 128
# Inputs in HBM: 1024 threads; V9_L2_MAX_BLOCKS blocks (as many threads in smaller blocks) while one
# wave of resident blocks would do (2^24 to 2^26 on the H200: 128 blocks keep HBM as busy as 264,
# and warp 0 collects their slots), then whole waves of resident blocks, at most V9_MAX_WAVES, with
# about V9_ITERATIONS_PER_WAVE loop iterations per block before another wave pays off. CUB's
# DeviceReduce sizes its grid the same way, at up to 5 x the resident blocks (CUB_SUBSCRIPTION_FACTOR).
V9_HBM_BLOCK = 1024
V9_MAX_WAVES = 5
V9_ITERATIONS_PER_WAVE = 32


def uses_unroll(version: str) -> bool:
    """True for the float4 kernels (v8, onepass, v9), whose loads in flight are set by ``unroll``."""
    return _SPECS[check_version(version, racy_ok=True)].vector


def kernel_name(version: str, block: int, grid: Optional[int] = None) -> str:
    """The template instantiation of ``version`` for ``block``, e.g. ``"reduce_v3<256>"``; for v9
    launched with ``grid`` == 1, its one-block instantiation ``"reduce_v9<256, true>"`` (no ticket,
    no slots, the smallest code: kernels/reduce_v9.cu)."""
    file = _SPECS[check_version(version, racy_ok=True)].file
    one_block = version == "v9" and grid == 1
    return f"{file}<{check_block(block)}{', true' if one_block else ''}>"


# {kernel file stem: name expressions}: every instantiation CI must compile (helpers.topics.registry).
REDUCE_KERNELS: dict[str, tuple[str, ...]] = {
    **{spec.file: tuple(f"{spec.file}<{b}>" for b in BLOCKS) for spec in _SPECS.values()},
    "seed_reduce_v4": (f"seed_reduce_v4<{SEED_BLOCK}>",),
    "reduce_timing": ("reduce_empty", "reduce_spin"),  # launch-cost yardsticks of helpers.bench.clock
}
REDUCE_KERNELS["seed_reduce_v4"] += (f"seed_reduce_v4<{DEFAULT_BLOCK}>",)  # the seed at our block size too
REDUCE_KERNELS["reduce_v9"] += tuple(f"reduce_v9<{b}, true>" for b in BLOCKS)  # its one-block kernels (kernel_name)


# ---------------------------------------------------------------------------------------------
# Checks: ValueError naming the parameter and what is allowed.

def check_version(version: str, racy_ok: bool = False) -> str:
    """Return ``version`` if it is a ladder version (or, with ``racy_ok``, ``v4_legacy``)."""
    allowed = ALL_VERSIONS if racy_ok else VERSIONS
    if not is_one_of(version, allowed):
        raise ValueError(f"version must be one of {', '.join(allowed)}; got {quote(version)}")
    return version


def check_block(block: int) -> int:
    """Return ``block`` (a Python or NumPy integer) as an int if it is a power of two in [64, 1024]."""
    if not is_integer(block) or int(block) not in BLOCKS:
        raise ValueError(f"block must be a power of two in [64, 1024] "
                         f"({', '.join(map(str, BLOCKS))}); got {quote(block)}")
    return int(block)


def check_unroll(unroll: int) -> int:
    """Return ``unroll`` (a Python or NumPy integer) as an int if it is one of :data:`UNROLLS`."""
    if not is_integer(unroll) or int(unroll) not in UNROLLS:
        raise ValueError(f"unroll must be one of {', '.join(map(str, UNROLLS))}; got {quote(unroll)}")
    return int(unroll)


def check_n(n: int) -> int:
    """Return ``n`` (the number of elements; a Python or NumPy integer) as an int if it is >= 1."""
    if not is_integer(n) or n < 1:
        raise ValueError(f"n (the number of elements in x) must be an integer >= 1; got {quote(n)}")
    return int(n)


def check_array(x: Any) -> int:
    """Check what can be checked without a GPU: ``x`` is a non-empty, C-contiguous float32 array.

    Returns n, its number of elements. Works on NumPy arrays too, so the messages can be seen (and
    tested) on a machine without a GPU.
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None or str(dtype) != "float32":
        raise ValueError(f"x must be a float32 array; got {dtype if dtype is not None else type(x).__name__}")
    n = check_n(int(x.size))
    if not x.flags.c_contiguous:
        raise ValueError("x must be C-contiguous (its elements are read as one run of memory); "
                         "pass cupy.ascontiguousarray(x)")
    return n


def check_input(x: Any) -> Any:
    """Return ``x`` if it is a non-empty, C-contiguous float32 ``cupy.ndarray`` (see :func:`check_array`)."""
    check_array(x)
    try:
        import cupy
    except ImportError:  # no CuPy at all (macOS, a venv without the gpu set): not a GPU array either
        raise TypeError(f"x must be a cupy.ndarray on the GPU (CuPy is not installed here); "
                        f"got {type(x).__module__}.{type(x).__name__}") from None

    if not isinstance(x, cupy.ndarray):
        raise TypeError(f"x must be a cupy.ndarray on the GPU; got {type(x).__module__}.{type(x).__name__}")
    if x.data.ptr % 4:
        raise ValueError("x must be 4-byte aligned (a float32 array's data pointer)")
    return x


# ---------------------------------------------------------------------------------------------
# Grids: pure arithmetic, the same formulas the kernels' contracts state.

def tile_size(version: str, block: int, unroll: int = DEFAULT_UNROLL) -> int:
    """Elements one block covers per tile (per loop iteration, for the grid-stride versions)."""
    spec = _SPECS[check_version(version, racy_ok=True)]
    return spec.per_thread * check_block(block) * (check_unroll(unroll) if spec.vector else 1)


def grid_size(version: str, n: int, block: int = DEFAULT_BLOCK, resident_blocks: Optional[int] = None,
              unroll: int = DEFAULT_UNROLL, l2_bytes: Optional[int] = None) -> int:
    """Blocks the first pass of ``version`` launches for ``n`` elements.

    v0..v2: ceil(n / block); v3..v5: ceil(n / (2 block)); the grid-stride versions (v6..v8,
    onepass): min(ceil(n / tile), resident_blocks), where ``resident_blocks`` is how many blocks fit
    on the GPU at once (:func:`resident_blocks`; required for those versions). v9 also reads the
    GPU's ``l2_bytes`` (None: the H200's, :data:`MACHINE_L2_BYTES`, as the machine sizes grids):
    one block up to :data:`V9_ONE_BLOCK_MAX_N`; an L2-resident input up to :data:`V9_WARP_SLOTS`
    blocks up to :data:`V9_ONE_ROUND_MAX_N` floats, then as few rounds as :data:`V9_L2_MAX_BLOCKS`
    blocks allow; an input in HBM :data:`V9_L2_MAX_BLOCKS` blocks of :data:`V9_HBM_BLOCK` threads
    (as many threads in smaller blocks) while one wave would do, then whole waves of resident
    blocks (:func:`v9_waves`).
    Raises ValueError if the grid would exceed gridDim.x's limit (2^31 - 1).
    """
    spec = _SPECS[check_version(version, racy_ok=True)]
    tiles = -(-check_n(n) // tile_size(version, block, unroll))
    if (spec.grid_stride or resident_blocks is not None) and (not is_integer(resident_blocks) or resident_blocks < 1):
        needed = f"required for the grid-stride version {version}" if spec.grid_stride else "or None"
        raise ValueError(f"resident_blocks must be >= 1, an integer ({needed}); got {quote(resident_blocks)}")
    if spec.grid_stride:
        if version == "v9":
            l2 = MACHINE_L2_BYTES if l2_bytes is None else l2_bytes
            if not is_integer(l2) or l2 < 1:
                raise ValueError(f"l2_bytes (the GPU's L2 size) must be an integer >= 1 or None; got {quote(l2_bytes)}")
            if n <= V9_ONE_BLOCK_MAX_N:
                return 1
            if not v9_streams(n, int(l2)):
                cap = V9_WARP_SLOTS if n <= V9_ONE_ROUND_MAX_N else V9_L2_MAX_BLOCKS
                return max(1, min(tiles, cap, int(resident_blocks)))
            waves = v9_waves(tiles, int(resident_blocks))
            if waves == 1:  # the threads of V9_L2_MAX_BLOCKS blocks of V9_HBM_BLOCK, whatever the block
                cap = max(1, V9_L2_MAX_BLOCKS * V9_HBM_BLOCK // block)
                return max(1, min(tiles, cap, int(resident_blocks)))
            return max(1, min(tiles, waves * int(resident_blocks)))
        return max(1, min(tiles, int(resident_blocks)))
    if tiles > MAX_GRID:
        raise ValueError(f"n={n} needs {tiles} blocks of {version} with block={block}, more than "
                         f"gridDim.x allows ({MAX_GRID}); use a larger block or a grid-stride version")
    return tiles


def v9_waves(tiles: int, resident_blocks: int) -> int:
    """Waves of resident blocks v9 launches for ``tiles`` block-iterations (``BLOCK * UNROLL``
    float4 each): 1 until each block would loop about :data:`V9_ITERATIONS_PER_WAVE` times, then
    more, up to :data:`V9_MAX_WAVES` (later waves start where earlier blocks finish, which evens
    out the SMs' finishing times on long streams)."""
    return max(1, min(V9_MAX_WAVES, round(tiles / (V9_ITERATIONS_PER_WAVE * resident_blocks))))


@dataclass(frozen=True)
class V9Launch:
    """How v9 reads ``n`` floats: threads per block, float4 loads per round (REDUCE_UNROLL), and
    whether they are evict-first (REDUCE_STREAM); the grid follows (:func:`grid_size`)."""

    block: int
    unroll: int
    stream: bool


def v9_launch(n: int, l2_bytes: int) -> V9Launch:
    """v9's launch for ``n`` floats on a GPU with ``l2_bytes`` of L2 (measured, see :data:`V9_ONE_BLOCK_MAX_N`):

    * up to :data:`V9_ONE_BLOCK_MAX_N` floats: one block of about n / 16 threads (128 .. 512), so
      that every thread issues its 4 float4 loads at once (2 for the smallest inputs);
    * an L2-resident input: 4 float4 a round; 256 threads up to :data:`V9_ONE_ROUND_MAX_N` floats
      (one round, at most :data:`V9_WARP_SLOTS` blocks), then 512 (1024 once 512 would need more than
      :data:`V9_L2_ROUNDS` rounds under the :data:`V9_L2_MAX_BLOCKS` grid cap);
    * an input in HBM: :data:`V9_HBM_BLOCK` threads, 4 float4 a round, evict-first loads.
    """
    n = check_n(n)
    vectors = -(-n // 4)
    if n <= V9_ONE_BLOCK_MAX_N:
        block = min(512, max(128, 1 << max(0, (vectors // DEFAULT_UNROLL).bit_length() - 1)))
        unroll = min(DEFAULT_UNROLL, 1 << max(0, (vectors // block).bit_length() - 1))
        return V9Launch(block, unroll, False)
    if not v9_streams(n, l2_bytes):
        small, medium, large = V9_L2_BLOCKS
        if n <= V9_ONE_ROUND_MAX_N:
            return V9Launch(small, DEFAULT_UNROLL, False)
        one_round = V9_L2_MAX_BLOCKS * tile_size("v9", medium, DEFAULT_UNROLL)
        return V9Launch(medium if n <= V9_L2_ROUNDS * one_round else large, DEFAULT_UNROLL, False)
    return V9Launch(V9_HBM_BLOCK, DEFAULT_UNROLL, True)


def v9_streams(n: int, l2_bytes: int) -> bool:
    """True when v9 reads ``n`` floats with evict-first loads: when they do not fit in the L2 of
    ``l2_bytes`` (from HBM, each byte read once); below that, read-only loads (``__ldg``), so a
    repeated sum of the same array finds it in L2."""
    return 4 * check_n(n) > l2_bytes


def pass_grids(version: str, n: int, block: int = DEFAULT_BLOCK, resident_blocks: Optional[int] = None,
               unroll: int = DEFAULT_UNROLL, l2_bytes: Optional[int] = None) -> tuple[int, ...]:
    """The grid of every launch of a full reduction of ``n`` elements; the last one is 1 block.

    ``grids[0]`` is the first pass. v0..v5 then relaunch on the partials until one remains
    (e.g. v3, block 256, n = 2^25: 65536, 128, 1); v6..v8 add one single-block launch;
    onepass and v9 are one launch. Arguments as :func:`grid_size`.
    """
    spec = _SPECS[check_version(version, racy_ok=True)]
    grids = [grid_size(version, n, block, resident_blocks, unroll, l2_bytes)]
    if version in ONE_LAUNCH:
        return tuple(grids)
    if spec.grid_stride:
        return tuple(grids + [1]) if grids[0] > 1 else tuple(grids)
    while grids[-1] > 1:
        grids.append(grid_size(version, grids[-1], block))
    return tuple(grids)


# ---------------------------------------------------------------------------------------------
# Kernels (need a GPU)

@functools.lru_cache(maxsize=None)
def _kernel(version: str, block: int, unroll: int = DEFAULT_UNROLL, stream: bool = False,
            grid: Optional[int] = None) -> Any:
    """The compiled ``cupy.RawKernel`` for one instantiation (module compiled once per file/unroll,
    and for v9 per load kind: ``stream`` = evict-first loads; ``grid`` == 1: v9's one-block kernel)."""
    from helpers.engine import kernels

    spec = _SPECS[check_version(version, racy_ok=True)]
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
        spec = _SPECS[self.version]
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
    spec = _SPECS[version]
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
    spec = _SPECS[check_version(version, racy_ok=True)]
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
    spec = _SPECS[version]
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
    spec = _SPECS[check_version(version, racy_ok=True)]
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
