"""The reduction ladder's versions, their kernels, the input checks and every launch's grid: pure, no GPU.

:data:`VERSIONS` (the ladder :data:`LADDER` and :data:`BEYOND`), how each splits its input
(:data:`SPECS`), its template instantiations (:func:`kernel_name`, :data:`REDUCE_KERNELS`), the checks
every entry point applies (a ValueError naming the parameter and what is allowed), and the grids of
a full reduction (:func:`tile_size`, :func:`grid_size`, :func:`pass_grids`; v9's launch,
:func:`v9_launch`). :mod:`helpers.topics.reduce` runs them and is the one module callers import.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

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


SPECS: dict[str, Version] = {
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
# grid and load kind at every size 2^10 .. 2^30 on the H200 (2026-12-04; the timing scripts are
# retired, in git history); the recorded sweep (data/bench_sweep.json) is what shows the outcome.
# Up to V9_ONE_BLOCK_MAX_N floats (64 KiB), one block: no ticket, no slots, nothing to wait for.
V9_ONE_BLOCK_MAX_N = 2**14
# Warp 0 of the last block collects up to this many slots in one pass, 8 loads per lane, with no
# block barrier (reduce_v9.cu); a larger grid makes the whole last block collect them.
V9_WARP_SLOTS = 256
# L2-resident inputs up to V9_ONE_ROUND_MAX_N floats: one round of loads per thread in blocks of
# V9_L2_BLOCKS[0] threads, up to V9_WARP_SLOTS blocks; beyond, V9_L2_BLOCKS[1] threads
# (V9_L2_BLOCKS[2] once V9_L2_BLOCKS[1] would need more than V9_L2_ROUNDS rounds) and at most
# V9_L2_MAX_BLOCKS blocks (chosen from H200 timing runs of the combine across blocks).
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
    return SPECS[check_version(version, racy_ok=True)].vector


def kernel_name(version: str, block: int, grid: Optional[int] = None) -> str:
    """The template instantiation of ``version`` for ``block``, e.g. ``"reduce_v3<256>"``; for v9
    launched with ``grid`` == 1, its one-block instantiation ``"reduce_v9<256, true>"`` (no ticket,
    no slots, the smallest code: kernels/reduce_v9.cu)."""
    file = SPECS[check_version(version, racy_ok=True)].file
    one_block = version == "v9" and grid == 1
    return f"{file}<{check_block(block)}{', true' if one_block else ''}>"


# {kernel file stem: name expressions}: every instantiation CI must compile (helpers.topics.registry).
REDUCE_KERNELS: dict[str, tuple[str, ...]] = {
    **{spec.file: tuple(f"{spec.file}<{b}>" for b in BLOCKS) for spec in SPECS.values()},
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
    spec = SPECS[check_version(version, racy_ok=True)]
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
    spec = SPECS[check_version(version, racy_ok=True)]
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
    spec = SPECS[check_version(version, racy_ok=True)]
    grids = [grid_size(version, n, block, resident_blocks, unroll, l2_bytes)]
    if version in ONE_LAUNCH:
        return tuple(grids)
    if spec.grid_stride:
        return tuple(grids + [1]) if grids[0] > 1 else tuple(grids)
    while grids[-1] > 1:
        grids.append(grid_size(version, grids[-1], block))
    return tuple(grids)
