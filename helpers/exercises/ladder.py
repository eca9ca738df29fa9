"""The exercises of the reduction ladder in notebook 05: ``block_tree_sum`` (v2's tree) and
``last_warp_sum`` (v4's last warp)."""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from helpers.exercises import compare
from helpers.exercises.spec import LANES, Case, Exercise, Judge, Mismatch, Row, clause, fmt, undefined_mask

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
