"""Teaching maps of the reduction ladder, computed from each kernel's index arithmetic (pure NumPy).

:func:`tree_steps` is the one place where the shared-memory trees of ``kernels/reduce_v0.cu`` ...
``reduce_v5.cu`` are written down in Python: which threads execute the add at each step, which word
each writes and which it adds in. Everything else here is derived from it:

* :func:`active_lanes` / :func:`divergent_warps`: which lanes of each warp work at each step
  (v0's scattered lanes against v1's compacted ones);
* :func:`bank_conflict_degree`: the shared-memory bank-conflict degree of each warp at each step
  (32 banks of 4 bytes; degree = the most distinct words any one bank is asked for in one request);
* :func:`shared_traffic`: shared-memory requests and the extra wavefronts conflicts cost, per block
  (what Nsight Compute counts);
* :func:`first_step`: idle threads in the first step (v2 against v3);
* :func:`barriers`: ``__syncthreads()`` / ``__syncwarp()`` per block for every version;
* :func:`emulate_first_pass`: the first pass in float32, in the kernels' order of additions.

The kernels' own lines are in :data:`KERNEL_LINES`; the tests check that each still appears in its
file, and (on a GPU) that :func:`emulate_first_pass` matches the real kernels bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import is_integer, is_one_of, quote

WARP = 32
BANKS = 32  # 4-byte banks; word w lives in bank w % 32
TREE_VERSIONS: tuple[str, ...] = ("v0", "v1", "v2", "v3", "v4", "v4_legacy", "v5")
_BLOCKS = (64, 128, 256, 512, 1024)

# The line of each kernel that tree_steps mirrors (checked against kernels/*.cu by the tests).
KERNEL_LINES: dict[str, tuple[str, ...]] = {
    "reduce_v0": ("for (unsigned int s = 1; s < BLOCK; s *= 2)", "if (tid % (2 * s) == 0)",
                  "smem[tid] += smem[tid + s];"),
    "reduce_v1": ("for (unsigned int s = 1; s < BLOCK; s *= 2)", "const unsigned int index = 2 * s * tid;",
                  "if (index < BLOCK)", "smem[index] += smem[index + s];"),
    "reduce_v2": ("for (unsigned int s = BLOCK / 2; s > 0; s >>= 1)", "if (tid < s)",
                  "smem[tid] += smem[tid + s];"),
    "reduce_v3": ("for (unsigned int s = BLOCK / 2; s > 0; s >>= 1)", "if (tid < s)",
                  "load_or_zero(in, i, n) + warplab::reduce::load_or_zero(in, i + BLOCK, n)"),
    "reduce_v4": ("for (unsigned int s = BLOCK / 2; s > warplab::kWarpSize; s >>= 1)",
                  "if (tid < warplab::kWarpSize) warplab::reduce::warp_reduce_smem(smem, tid);"),
    "reduce_v5": ("warplab::reduce::block_tree_unrolled<BLOCK>(smem, tid, sum);",),
    "reduce_common.cuh": ("for (int offset = kWarpSize; offset > 0; offset /= 2)",
                          "x += smem[tid + offset];",
                          "if constexpr (BLOCK >= 128)  { if (tid < 64)  smem[tid] = sum = sum + smem[tid + 64];"),
}


@dataclass(frozen=True)
class Step:
    """One step of a shared-memory tree: ``smem[dst] = smem[dst] + smem[src]`` for each executing thread."""

    stride: int
    threads: np.ndarray   # thread ids that execute the add at this step (ascending)
    dst: np.ndarray       # the word each of them writes
    src: np.ndarray       # the word each of them adds in
    useful: np.ndarray    # bool per executing thread: is its result read later?
    loads_dst: bool       # True: smem[dst] is loaded too (False: carried in a register, v4's x, v5's sum)
    barrier: str          # what follows the step: "syncthreads", "syncwarp" (twice: after the read
    #                       and after the write) or "none" (v4_legacy's race)


def _check(version: str, block: int) -> None:
    if not is_one_of(version, TREE_VERSIONS):
        raise ValueError(f"version must be one of {', '.join(TREE_VERSIONS)} (the shared-memory trees); "
                         f"got {quote(version)}")
    if not is_integer(block) or block not in _BLOCKS:
        raise ValueError(f"block must be a power of two in [64, 1024] ({', '.join(map(str, _BLOCKS))}); "
                         f"got {quote(block)}")


def tree_steps(version: str, block: int = 256) -> list[Step]:
    """The steps of ``version``'s block tree for ``block`` threads, mirroring the kernel's loop.

    v0: ``for s = 1, 2, ..: if (tid % (2*s) == 0) smem[tid] += smem[tid + s]``;
    v1: ``index = 2*s*tid; if (index < BLOCK) smem[index] += smem[index + s]``;
    v2, v3: ``for s = BLOCK/2 .. 1: if (tid < s) smem[tid] += smem[tid + s]``;
    v4, v4_legacy, v5: as v2 while s > 32, then all 32 lanes of warp 0 run the s = 32 .. 1 steps
    (only lanes tid < s compute a value anybody reads).
    """
    _check(version, block)
    tid = np.arange(block)
    steps: list[Step] = []
    if version in ("v0", "v1"):
        s = 1
        while s < block:
            if version == "v0":
                threads = tid[tid % (2 * s) == 0]
                dst = threads
            else:
                index = 2 * s * tid
                threads = tid[index < block]
                dst = index[index < block]
            steps.append(Step(s, threads, dst, dst + s, np.ones(len(threads), bool), True, "syncthreads"))
            s *= 2
        return steps
    warp_steps = version in ("v4", "v4_legacy", "v5")
    s = block // 2
    while s > 0:
        if warp_steps and s <= WARP:
            threads = tid[:WARP]
            barrier = "none" if version == "v4_legacy" else "syncwarp"
            steps.append(Step(s, threads, threads, threads + s, threads < s, version == "v4_legacy", barrier))
        else:
            threads = tid[tid < s]
            steps.append(Step(s, threads, threads, threads + s, np.ones(len(threads), bool),
                              version != "v5", "syncthreads"))
        s //= 2
    return steps


def active_lanes(version: str, block: int = 256) -> np.ndarray:
    """bool array (steps, warps, 32): lane ``l`` of warp ``w`` executes the add at step ``k``."""
    steps = tree_steps(version, block)
    out = np.zeros((len(steps), block // WARP, WARP), bool)
    for k, st in enumerate(steps):
        out[k].reshape(-1)[st.threads] = True
    return out


def useful_lanes(version: str, block: int = 256) -> np.ndarray:
    """bool array (steps, warps, 32): the lane's add produces a value that is read later."""
    steps = tree_steps(version, block)
    out = np.zeros((len(steps), block // WARP, WARP), bool)
    for k, st in enumerate(steps):
        out[k].reshape(-1)[st.threads[st.useful]] = True
    return out


def divergent_warps(version: str, block: int = 256) -> np.ndarray:
    """bool array (steps, warps): the warp has some, but not all, of its 32 lanes in the branch."""
    working = active_lanes(version, block).sum(axis=2)
    return (working > 0) & (working < WARP)


def conflict_degree(words: np.ndarray) -> int:
    """Bank-conflict degree of one warp-wide shared-memory request for 4-byte ``words``.

    The most distinct words any one bank (``word % 32``) is asked for: 1 = conflict-free, k = the
    request is split into k wavefronts. Lanes reading the same word are a broadcast, not a conflict.
    0 for an empty request.
    """
    words = np.unique(np.asarray(words, dtype=np.int64))
    if words.size == 0:
        return 0
    return int(np.bincount(words % BANKS, minlength=BANKS).max())


def _by_warp(st: Step, block: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(dst words, src words) of each warp's executing lanes at one step."""
    warp_of = st.threads // WARP
    return [(st.dst[warp_of == w], st.src[warp_of == w]) for w in range(block // WARP)]


def bank_conflict_degree(version: str, block: int = 256) -> np.ndarray:
    """int array (steps, warps): the worst conflict degree among the warp's requests at each step
    (its loads of ``smem[src]`` and ``smem[dst]`` and its store to ``smem[dst]``); 0 = no request."""
    steps = tree_steps(version, block)
    out = np.zeros((len(steps), block // WARP), int)
    for k, st in enumerate(steps):
        for w, (dst, src) in enumerate(_by_warp(st, block)):
            out[k, w] = max(conflict_degree(dst), conflict_degree(src))
    return out


def shared_traffic(version: str, block: int = 256) -> dict[str, int]:
    """Warp-level shared-memory requests of one block, and the extra wavefronts bank conflicts add.

    Counts every shared access of the kernel: the initial store of the loaded value, each tree
    step's loads and store, the warp step's initial register load (v4, v5) and thread 0's final
    read. Keys: ``ld_requests``, ``ld_extra_wavefronts``, ``st_requests``, ``st_extra_wavefronts``
    (extra = sum over requests of degree - 1). Multiply by the grid to compare with Nsight Compute's
    ``smsp__sass_inst_executed_op_shared_ld.sum`` and ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum``.
    """
    steps = tree_steps(version, block)
    warps = block // WARP
    ld = st_ = ld_extra = st_extra = 0
    st_ += warps                       # smem[tid] = loaded value: consecutive words
    if version in ("v4", "v5"):
        ld += 1                        # warp_reduce_smem: float x = smem[tid]
    for step in steps:
        for dst, src in _by_warp(step, block):
            if dst.size == 0:
                continue
            loads = [src, dst] if step.loads_dst else [src]
            ld += len(loads)
            ld_extra += sum(conflict_degree(a) - 1 for a in loads)
            st_ += 1
            st_extra += conflict_degree(dst) - 1
    ld += 1                            # if (tid == 0) out[blockIdx.x] = smem[0]
    return {"ld_requests": ld, "ld_extra_wavefronts": ld_extra,
            "st_requests": st_, "st_extra_wavefronts": st_extra}


@dataclass(frozen=True)
class FirstStep:
    """Who works in a block's first add: v0..v2 add in the tree, v3 onwards during the load."""

    threads: int             # threads in the block
    working: int             # threads that add something in the first add
    idle: int                # threads that only loaded
    elements_per_block: int  # input elements one block covers


def first_step(version: str, block: int = 256) -> FirstStep:
    """The first add of ``version``: for v0..v2 the tree's first step (half the threads idle);
    for v3 onwards the add during the load (every thread adds its two elements)."""
    _check(version, block)
    if version in ("v0", "v1", "v2"):
        working = len(tree_steps(version, block)[0].threads)
        return FirstStep(block, working, block - working, block)
    return FirstStep(block, block, 0, 2 * block)


def barriers(version: str, block: int = 256) -> dict[str, int]:
    """``__syncthreads()`` executed per block and ``__syncwarp()`` executed per warp that calls it.

    v0..v3: one after the load plus one per step (1 + log2 block). v4/v5/v6: one after the load plus
    one per step with s > 32; warp 0 then runs six steps with two __syncwarp() each (none in
    v4_legacy: the race). v7/v8: one (block_sum_shfl). onepass: two (block_sum_shfl and the
    last-block ticket), plus one more in the last block only (not counted). v9: one up to 128
    blocks (warp 0 publishes and collects), two beyond (the ticket broadcast), plus the last
    block's own (not counted); counted here for its small-grid path.
    """
    if not is_one_of(version, ("v6", "v7", "v8", "onepass", "v9")):
        _check(version, block)
    if not is_integer(block) or block not in _BLOCKS:
        raise ValueError(f"block must be a power of two in [64, 1024] ({', '.join(map(str, _BLOCKS))}); "
                         f"got {quote(block)}")
    if version in ("v7", "v8", "v9"):
        return {"syncthreads": 1, "syncwarp": 0}
    if version == "onepass":
        return {"syncthreads": 2, "syncwarp": 0}
    tree = "v5" if version == "v6" else version
    steps = tree_steps(tree, block)
    return {"syncthreads": 1 + sum(st.barrier == "syncthreads" for st in steps),
            "syncwarp": 2 * sum(st.barrier == "syncwarp" for st in steps)}


def emulate_first_pass(x: np.ndarray, version: str, block: int = 256) -> np.ndarray:
    """The per-block partial sums ``reduce_<version><block>`` writes, computed in float32 with the
    kernel's order of additions (padding with 0 past the end, as ``load_or_zero`` does).

    Every step reads the state before it and writes after (the barrier), so one vectorised update
    per step is exact; for the warp steps only the lanes whose result is read later matter.
    """
    _check(version, block)
    x = np.asarray(x, dtype=np.float32).ravel()
    per_thread = 1 if version in ("v0", "v1", "v2") else 2
    tile = per_thread * block
    grid = -(-x.size // tile)
    padded = np.zeros(grid * tile, np.float32)
    padded[: x.size] = x
    tiles = padded.reshape(grid, tile)
    smem = tiles[:, :block] + tiles[:, block:] if per_thread == 2 else tiles.copy()
    for st in tree_steps(version, block):
        dst, src = st.dst[st.useful], st.src[st.useful]
        smem[:, dst] = smem[:, dst] + smem[:, src]
    return smem[:, 0].copy()


def lane_slots(version: str, block: int = 256) -> dict[str, float]:
    """Lane slots one block's tree spends on its adds, under two ways of compiling ``if (...)``.

    * ``predicated``: the body is issued by every warp at every step and the lanes whose guard is
      false are switched off (what nvcc does for v0..v3 when BLOCK is a compile-time constant: the
      H200 profile shows no branch at all). Slots = steps x warps x 32 (warp 0 only for v4's
      warp steps).
    * ``branched``: a warp with no working lane jumps over the body. Slots = 32 x warps that have
      at least one working lane.

    ``useful`` counts the adds whose result is read (block - 1 for every tree). The efficiencies are
    useful / slots. Under predication v0 and v2 waste exactly the same slots; only under branching
    does v2's contiguous layout let idle warps skip the step.
    """
    steps = tree_steps(version, block)
    useful = useful_lanes(version, block)
    active = active_lanes(version, block)
    warps = block // WARP
    predicated = sum((WARP if st.barrier != "syncthreads" else warps * WARP) for st in steps)
    branched = int(active.any(axis=2).sum()) * WARP
    n_useful = int(useful.sum())
    return {"useful": n_useful, "predicated": predicated, "branched": branched,
            "predicated_efficiency": n_useful / predicated, "branched_efficiency": n_useful / branched}


def steps_table(version: str, block: int = 256) -> str:
    """One line per tree step: stride, working lanes, warps with work, divergent warps, worst
    bank-conflict degree and the barrier that follows (plain text, deterministic)."""
    steps = tree_steps(version, block)
    useful = useful_lanes(version, block)
    active = active_lanes(version, block)
    div = divergent_warps(version, block)
    deg = bank_conflict_degree(version, block)
    head = f"{'stride':>6} {'working':>8} {'warps busy':>10} {'divergent':>9} {'conflict':>8}  barrier"
    lines = [f"reduce_{version}<{block}>: {block // WARP} warps", head, "-" * len(head)]
    for k, st in enumerate(steps):
        lines.append(f"{st.stride:>6} {int(useful[k].sum()):>8} {int(active[k].any(axis=1).sum()):>10} "
                     f"{int(div[k].sum()):>9} {str(int(deg[k].max())) + '-way':>8}  {st.barrier}")
    return "\n".join(lines)
