"""The exercises of the reduction ladder: notebook 05 (``block_tree_sum``, v2's tree, and
``last_warp_sum``, v4's last warp) and
notebook 06 (``thread_sum_vec4``, a vectorised grid-stride loop)."""
from __future__ import annotations

import re
from typing import Any, Callable, Optional, Sequence

import numpy as np

from helpers.exercises import compare
from helpers.exercises.spec import (LANES, Bench, Case, Exercise, Judge, Mismatch, Row, clause, fmt, lane_ranges,
                                    undefined_mask)

V4_BLOCKS = (64, 128, 256, 512, 1024)


# ---------------------------------------------------------------- last_warp_sum (05)

def last_warp_cases(rng: np.random.Generator) -> list[Case]:
    """Every block size reduce_v4 allows (powers of two, 64 to 1024), two blocks each: whole
    numbers (exact) and real values (bounded); then two random launches of three blocks."""
    cases = []
    for block in V4_BLOCKS:
        x = np.concatenate([compare.whole_numbers(rng, block), (rng.standard_normal(block) * 4).astype(np.float32)])
        cases.append(Case(f"blockDim.x = {block}", (2,), (block,), (x, np.full(2, np.nan, np.float32)),
                          {"x": x.copy(), "whole": (True, False)}, shared_mem=4 * block, edge=True))
    for block in rng.choice(V4_BLOCKS, size=2, replace=False):
        block = int(block)
        x = (rng.standard_normal(3 * block) * 100).astype(np.float32)
        cases.append(Case(f"blockDim.x = {block}, gridDim.x = 3, real values", (3,), (block,),
                          (x, np.full(3, np.nan, np.float32)), {"x": x.copy(), "whole": (False,) * 3},
                          shared_mem=4 * block))
    return cases


def _explain_partials(got: float, p: np.ndarray, exact: bool) -> Optional[str]:
    def near(sub: np.ndarray) -> bool:
        return compare.sum_ok(got, sub, exact)

    if float(got) == float(p[0]):
        return "that is smem[0] as it was: nothing was added to it"
    if near(p[:32]):
        return "that is the sum of smem[0..31] only: the first step must add smem[tid + 32]"
    for k in range(63, 1, -1):
        if near(p[:k]):
            return f"that is the sum of smem[0..{k - 1}] only"
    return None


def smem0_judge(figure: Callable[[np.ndarray], list[Row]],
                explain: Callable[[float, np.ndarray, bool], Optional[str]]) -> Judge:
    """A judge for a block's sum left in smem[0], which the harness stores to ``out[block]``
    (argument 1; the input, ``case.data["x"]``, is one value per thread). ``figure(values)`` gives
    the lane figure's rows above expected and got; ``explain(got, values, whole)`` what a wrong sum
    suggests (or None)."""

    def judge(case: Case) -> Optional[Mismatch]:
        b = case.block[0]
        blocks = case.grid[0]
        x = case.data["x"].reshape(blocks, b)
        out = case.args[1]
        und = undefined_mask(case, 1)
        for blk in range(blocks):
            whole = case.data["whole"][blk]
            got = float(out[blk])
            undefined = und is not None and bool(und[blk])
            if not undefined and compare.sum_ok(got, x[blk], exact=whole):
                continue
            exact = float(x[blk].astype(np.float64).sum())
            kind = "whole numbers" if whole else "real values"
            lane0 = np.arange(LANES) == 0
            rows = figure(x[blk]) + [
                Row("expected\nsmem[0]", np.where(lane0, exact, np.nan), present=lane0, result=True),
                Row("got\nsmem[0]", np.where(lane0, got, np.nan), present=lane0, defined=~(lane0 & undefined),
                    wrong=lane0)]
            title = (f"block {blk} of {case.label} ({kind}): expected {fmt(exact)}, got "
                     + ("undefined" if undefined else fmt(got)))
            if undefined:
                return Mismatch(f"With {case.label}, block {blk} ({kind}): smem[0] ended undefined (expected "
                                f"{fmt(exact)}).", rows, undefined=True, warp=blk * (b // LANES), title=title)
            tol = "" if whole else f" (allowed error {compare.sum_bound(x[blk]):.3g})"
            return Mismatch(f"With {case.label}, block {blk} ({kind}): smem[0] ended {fmt(got)}, expected "
                            f"{fmt(exact)}{tol}" + clause(explain(got, x[blk], whole)), rows, title=title)
        return None

    return judge


def _v4_partials(values: np.ndarray) -> np.ndarray:
    """What v4's tree leaves in smem[0..64) of a block: slot j holds values j, j + 64, j + 128, ..."""
    return values.astype(np.float64).reshape(-1, 64).sum(axis=0)


last_warp_judge = smem0_judge(
    lambda v: [Row("smem[0..31]", _v4_partials(v)[:32]), Row("smem[32..63]", _v4_partials(v)[32:])],
    lambda got, v, whole: _explain_partials(got, _v4_partials(v), whole))


LAST_WARP_SUM = Exercise(
    name="last_warp_sum",
    notebook="05",
    title="v4's last warp, safe since Volta",
    signature="__device__ void last_warp_sum(volatile float* smem, unsigned int tid)",
    contract=("reduce_v4 runs its shared-memory tree down to 64 partial sums, then the 32 lanes of warp 0 call "
              "last_warp_sum (tid = threadIdx.x = 0..31), converged, after a __syncthreads(); smem[0 .. 64) holds "
              "the 64 partial sums. Afterwards smem[0] must hold their sum; the other slots may hold anything. "
              "The block is any size reduce_v4 allows (a power of two from 64 to 1024); only warp 0 is in the "
              "function, so __syncthreads() must not be used in it."),
    compare=compare.SUM_RULE,
    cases=last_warp_cases,
    judge=last_warp_judge,
    hints=(
        "Six steps, offsets 32, 16, 8, 4, 2, 1: smem[tid] += smem[tid + offset]. That much is the classic code.",
        "Since Volta the lanes of a warp do not run in lockstep: lane 0 may read smem[16] before or after lane 16 "
        "wrote it. volatile does not order anything between lanes.",
        "Keep the running sum in a register, float x = smem[tid];, and in each step read, __syncwarp(), write, "
        "__syncwarp(): x += smem[tid + offset]; __syncwarp(); smem[tid] = x; __syncwarp();",
    ),
)


# ---------------------------------------------------------------- block_tree_sum (05)

def _explain_tree(got: float, v: np.ndarray, whole: bool) -> Optional[str]:
    b = v.size
    if float(got) == float(v[0]):
        return "that is smem[0] as it was: nothing was added to it"
    k = next((k for k in (b // 2, b // 4, b // 8) if compare.sum_ok(got, v[:k], whole)), None)
    if k:
        return (f"that is the sum of smem[0..{k - 1}] only: the first step must add smem[tid + {b // 2}] "
                f"(s starts at blockDim.x / 2)")
    return None


tree_judge = smem0_judge(lambda v: [Row("smem[0..31]\nbefore", v[:32])], _explain_tree)


BLOCK_TREE_SUM = Exercise(
    name="block_tree_sum",
    notebook="05",
    title="reduce_v2's tree: sequential addressing, a barrier every thread reaches",
    signature="__device__ void block_tree_sum(float* smem, unsigned int tid)",
    contract=("Every thread of a 1D block calls block_tree_sum (tid = threadIdx.x), after smem[tid] holds its value "
              "and the block has passed a __syncthreads(); blockDim.x is a power of two from 64 to 1024, and smem has "
              "blockDim.x floats. Once every thread has returned and passed the caller's next __syncthreads(), "
              "smem[0] must hold the sum of the blockDim.x values; the other slots may hold anything."),
    compare=compare.SUM_RULE,
    cases=last_warp_cases,
    judge=tree_judge,
    hints=(
        "reduce_v2 in this notebook: s starts at blockDim.x / 2 and halves each step; in each step the threads "
        "below s add smem[tid + s] into smem[tid].",
        "Between one step's writes and the next step's reads every thread must wait: a __syncthreads() after each "
        "step. It must be outside the if (tid < s): every thread of the block has to reach it.",
        "for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) smem[tid] += smem[tid + s]; __syncthreads(); }",
    ),
)


# ---------------------------------------------------------------- thread_sum_vec4 (06)

VEC4_EDGE = ((1, 1, 1), (1, 1, 5), (1, 1, 7), (2, 1, 11), (1, 32, 31), (1, 32, 33), (1, 33, 4), (1, 31, 250), (2, 96, 1000),
             (3, 128, 4099), (4, 256, 31), (1, 1024, 4098))


def vec4_cases(rng: np.random.Generator) -> list[Case]:
    """Sizes 1, 5, 7, 11, 31, 33 and others that are not multiples of 4 or of the block (a grid of 1
    or 2 threads with 3 floats after the last vector among them), blocks of 1, 31,
    32, 33, 96, 128, 256 and 1024 threads, grids of 1 to 4 blocks; then random launches."""
    shapes = list(VEC4_EDGE)
    for _ in range(4):
        block = int(rng.integers(1, 1025))
        grid = int(rng.integers(1, 5))
        n = int(rng.integers(1, min(16 * block * grid, 6000) + 1))
        shapes.append((grid, block, n))
    cases = []
    for i, (grid, block, n) in enumerate(shapes):
        whole = i % 2 == 0
        x = compare.whole_numbers(rng, n) if whole else (rng.standard_normal(n) * 4).astype(np.float32)
        kind = "whole numbers" if whole else "real values"
        cases.append(Case(f"n = {n}, gridDim.x = {grid}, blockDim.x = {block}, {kind}", (grid,), (block,),
                          (x, np.int64(n), np.full(grid * block, np.nan, np.float32)),
                          {"x": x.copy(), "whole": whole, "n": n}, edge=i < len(VEC4_EDGE)))
    return cases


def reference_shares(x: np.ndarray, threads: int) -> np.ndarray:
    """Each thread's share under the reference solution's split (vectors t, t + T, ...; tail floats
    t, t + T, ... of the 0..3 after the last whole vector)."""
    n = x.size
    m = n // 4
    vec = x[:4 * m].astype(np.float64).reshape(m, 4).sum(axis=1)
    shares = np.zeros(threads)
    np.add.at(shares, np.arange(m) % threads, vec)
    tail = n - 4 * m
    np.add.at(shares, np.arange(tail) % threads, x[4 * m:].astype(np.float64))
    return shares


def vec4_judge(case: Case) -> Optional[Mismatch]:
    x = case.data["x"]
    n, whole = case.data["n"], case.data["whole"]
    shares = case.args[2]
    und = undefined_mask(case, 2)
    threads = shares.size
    ref = reference_shares(x, threads)
    got_total = float(shares.astype(np.float64).sum())
    exact = float(x.astype(np.float64).sum())
    undefined = und is not None and bool(und.any())
    if not undefined and np.isfinite(got_total) and (got_total == exact if whole else
                                                     abs(got_total - exact) <= compare.sum_bound(x)):
        return None
    lanes = min(LANES, threads)
    present = np.arange(LANES) < lanes
    row_ref = np.where(present, np.pad(ref[:lanes], (0, LANES - lanes)), np.nan)
    row_got = np.where(present, np.pad(shares[:lanes].astype(np.float64), (0, LANES - lanes)), np.nan)
    u = np.zeros(LANES, bool)
    if und is not None:
        u[:lanes] = und[:lanes]
    rows = [Row("reference\nsplit", row_ref, present=present, result=True),
            Row("your\nshares", row_got, present=present, defined=~u, wrong=present & ~u & (row_got != row_ref))]
    title = "threads 0..31: shares of the reference split against yours"
    if undefined:
        bad = np.flatnonzero(und)
        return Mismatch(f"With {case.label}: the share of thread{'s' if bad.size > 1 else ''} {lane_ranges(bad[:64])} "
                        f"is undefined.", rows, undefined=True, warp=int(bad[0]) // LANES, title=title)
    m = n // 4
    tail = x[4 * m:].astype(np.float64)
    span = f"in[{4 * m}]" if tail.size == 1 else f"in[{4 * m}..{n - 1}]"
    diff = got_total - exact
    why = None
    if tail.size and diff == -tail.sum():
        why = (f"short by exactly the last {tail.size} float{'s' if tail.size > 1 else ''} ({span}), after the "
               f"last whole vector: add the tail")
    elif tail.size and diff == tail.sum():
        why = f"over by exactly the last {tail.size} float{'s' if tail.size > 1 else ''} ({span}): the tail was added twice"
    elif whole and diff < 0:
        why = f"short by {fmt(-diff)}: some elements were never read"
    elif whole and diff > 0:
        why = f"over by {fmt(diff)}: some elements were read more than once"
    tol = "" if whole else f" (allowed error {compare.sum_bound(x):.3g})"
    return Mismatch(f"With {case.label}: the shares add up to {fmt(got_total)}, expected {fmt(exact)}{tol}" + clause(why),
                    rows, title=title)


_V4_LOAD = re.compile(r"^ld(\.global)?(\.nc)?(\.[a-z]+)*\.v4\.(f32|b32|u32|s32)")


def vec4_machine_check(reports: Sequence[Any], cases: Sequence[Case], module: Any) -> Optional[str]:
    from helpers.exercises.run import CELL

    for rep, case in zip(reports, cases):
        vectors = case.data["n"] // 4
        if vectors == 0:
            continue
        loads = requests = sectors = 0
        for row in rep.counters.per_instruction:
            if _V4_LOAD.match(row["ptx"]) and (row["file"] or "").rsplit("/", 1)[-1] == CELL:
                loads += row["predicated_on"]
                requests += row["global_requests"]
                sectors += row["global_sectors"]
        if loads == 0:
            return (f"with {case.label} your code made no 16-byte (float4) load: it reads one float at a time. Read "
                    f"the {vectors} whole vector{'s' if vectors != 1 else ''} through a const float4* "
                    f"(reinterpret_cast<const float4*>(in)).")
        if loads != vectors:
            return (f"with {case.label} your code made {loads} float4 loads, where the array holds {vectors} whole "
                    f"vectors: each should be read once, as a float4.")
        threads = case.grid[0] * case.block[0]
        if threads >= LANES and requests and sectors / requests > 17:
            return (f"with {case.label} your float4 loads touch {sectors / requests:.1f} 32-byte sectors per warp "
                    f"request, where a grid-stride loop needs 16 (32 lanes x 16 bytes): the lanes of a warp must read "
                    f"consecutive vectors (thread t takes vectors t, t + T, t + 2T, ...).")
    return None


def _bench_vec4(cp: Any) -> Bench:
    n = 1 << 26
    x = cp.random.standard_normal(n, dtype=cp.float32)
    grid, block = 1024, 256
    partial = cp.empty(grid * block, cp.float32)
    return Bench((grid,), (block,), (x, np.int64(n), partial), lambda: cp.sum(x), "cupy.sum of all of x (CUB)",
                 "2^26 floats, 1024 blocks of 256 threads")


THREAD_SUM_VEC4 = Exercise(
    name="thread_sum_vec4",
    notebook="06",
    title="A vectorised grid-stride loop",
    signature="__device__ float thread_sum_vec4(const float* in, long long n)",
    contract=("Every thread of a 1D grid (any blockDim.x, any gridDim.x) calls thread_sum_vec4; in is 16-byte aligned "
              "and holds n >= 1 floats. Each thread returns its share of the sum, and the shares must add up to the "
              "sum of in[0 .. n): every element read exactly once, none past n. The n / 4 whole vectors must be read "
              "with 16-byte float4 loads in a grid-stride loop (thread t of T takes vectors t, t + T, ...): the "
              "machine counts the loads and the memory sectors they touch."),
    compare=compare.SUM_RULE.replace("Sums are compared", "The sum of all the shares is compared"),
    cases=vec4_cases,
    judge=vec4_judge,
    machine_check=vec4_machine_check,
    hints=(
        "const float4* in4 = reinterpret_cast<const float4*>(in); is safe because in is 16-byte aligned. "
        "There are n / 4 whole vectors.",
        "Grid-stride: for (long long i = t; i < n / 4; i += T) { float4 v = in4[i]; sum += (v.x + v.y) + (v.z + v.w); }",
        "After the loop 0..3 floats are left, in[4 * (n / 4)] .. in[n - 1]. Share them out grid-stride as well "
        "(for (long long i = 4 * (n / 4) + t; i < n; i += T)), so that a grid of only 1 or 2 threads reads them all.",
    ),
    bench=_bench_vec4,
)
