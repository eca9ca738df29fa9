"""The exercises of notebooks 03 and 04: ``warp_reduce_max`` and ``block_reduce_sum``."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from helpers.exercises import compare
from helpers.exercises.spec import LANES, Bench, Case, Exercise, Mismatch, Row, clause, fmt, undefined_mask

FULL_WARP_BLOCKS = tuple(range(32, 1025, 32))


# ---------------------------------------------------------------- warp_reduce_max

def _max_patterns(rng: np.random.Generator, warps: int) -> np.ndarray:
    """One warp of values per row, cycling through patterns that catch the usual mistakes."""
    out = np.empty((warps, LANES), np.float32)
    for w in range(warps):
        kind = w % 7
        v = rng.standard_normal(LANES).astype(np.float32) * 10
        if kind == 1:
            v = -np.abs(v) - 1            # all negative: a start value of 0 shows
        elif kind == 2:
            v[31] = v.max() + 5           # the maximum in the last lane
        elif kind == 3:
            v[0] = v.max() + 5            # in lane 0 itself
        elif kind == 4:
            v[16 + int(rng.integers(0, 16))] = v.max() + 5   # in the upper half
        elif kind == 5:
            v = rng.integers(-3, 3, LANES).astype(np.float32)  # ties
        elif kind == 6:
            v[int(rng.integers(0, 32))] = -np.inf
            v[int(rng.integers(0, 32))] = np.float32(3e38)
        out[w] = v
    return out


def _max_case(block: int, grid: int, rng: np.random.Generator, edge: bool, note: str = "") -> Case:
    warps = block * grid // LANES
    x = _max_patterns(rng, warps).ravel()
    label = f"blockDim.x = {block}, gridDim.x = {grid} ({warps} warp{'s' if warps > 1 else ''}{note})"
    return Case(label, (grid,), (block,), (x, np.full(x.size, np.nan, np.float32)), {"x": x.copy()}, edge=edge)


def warp_reduce_max_cases(rng: np.random.Generator) -> list[Case]:
    """Edge cases: 1, 31 and 33 warps, the largest block; then every other allowed block size
    (every multiple of 32 up to 1024), with 1 to 3 blocks."""
    cases = [_max_case(32, 1, rng, True), _max_case(992, 1, rng, True), _max_case(96, 11, rng, True),
             _max_case(1024, 2, rng, True)]
    for block in FULL_WARP_BLOCKS:
        if block not in (32, 992, 96, 1024):
            cases.append(_max_case(block, int(rng.integers(1, 4)), rng, False))
    return cases


def warp_reduce_max_judge(case: Case) -> Optional[Mismatch]:
    x = case.data["x"].reshape(-1, LANES)
    out = case.args[1].reshape(-1, LANES)
    und = undefined_mask(case, 1, out.shape)
    expected = x.max(axis=1)
    bad = und[:, 0] | (out[:, 0] != expected)
    if not bad.any():
        return None
    w = int(np.flatnonzero(bad)[0])
    block, lane_offset = divmod(w * LANES, case.block[0])
    where = f"warp {lane_offset // LANES} of block {block}" if case.grid[0] > 1 or case.block[0] > 32 else "the warp"
    lane0 = np.arange(LANES) == 0
    got = out[w].copy()
    rows = [Row("input", x[w]),
            Row("expected", np.where(lane0, expected[w], 0), checked=lane0, result=True),
            Row("got", got, defined=~und[w], checked=lane0, wrong=lane0, result=False)]
    if und[w, 0]:
        return Mismatch(f"With {case.label}: lane 0 of {where} returned an undefined value (expected "
                        f"{fmt(expected[w])}).", rows, undefined=True, warp=w, title="lane 0's result is undefined")
    why = compare.explain_max(got[0], x[w])
    return Mismatch(f"With {case.label}: lane 0 of {where}: expected {fmt(expected[w])}, got {fmt(got[0])}"
                    + clause(why), rows, warp=w,
                    title=f"lane 0: expected {fmt(expected[w])}, got {fmt(got[0])}")


def _bench_max(cp: Any) -> Bench:
    n = 1 << 26
    x = cp.random.standard_normal(n, dtype=cp.float32)
    out = cp.empty_like(x)
    return Bench((n // 256,), (256,), (x, out), lambda: x.reshape(-1, LANES).max(axis=1),
                 "cupy max over each row of 32", "2^26 floats, one maximum per warp")


WARP_REDUCE_MAX = Exercise(
    name="warp_reduce_max",
    notebook="03",
    title="The maximum of a warp",
    signature="__device__ float warp_reduce_max(float v)",
    contract=("All 32 lanes of a full warp call warp_reduce_max, converged, each with its own value v. "
              "Lane 0 must return the maximum of the 32 values; what the other lanes return is not checked. "
              "Every block holds whole warps (blockDim.x a multiple of 32, up to 1024)."),
    compare="The maximum of float values is exact, so lane 0's result must equal NumPy's max exactly.",
    cases=warp_reduce_max_cases,
    judge=warp_reduce_max_judge,
    hints=(
        "Start from WarpReduceSum in notebook 02: the same five steps, with a different way to combine two values.",
        "Each step: other = __shfl_down_sync(0xffffffff, v, offset); then keep the larger of v and other.",
        "Use fmaxf(v, other), offsets 16, 8, 4, 2, 1. Do not start from 0: every lane's own v is the start value.",
    ),
    bench=_bench_max,
)


# ---------------------------------------------------------------- block_reduce_sum

def block_reduce_sum_blocks(rng: np.random.Generator) -> list[int]:
    """Block sizes tried: the edge cases, every number of warps with a full and with a partial
    last warp at the boundaries, and random sizes."""
    edge = [1, 2, 31, 32, 33, 63, 64, 65, 96, 97, 255, 256, 257, 511, 512, 513, 993, 1023, 1024]
    rand = sorted(set(int(b) for b in rng.integers(3, 1024, size=3)) - set(edge))
    return edge + rand


def block_reduce_sum_cases(rng: np.random.Generator) -> list[Case]:
    """One launch per block size, two blocks each: whole numbers (exact) and real values (bounded)."""
    cases = []
    for i, b in enumerate(block_reduce_sum_blocks(rng)):
        whole = compare.whole_numbers(rng, b)
        real = (rng.standard_normal(b) * 4).astype(np.float32)
        x = np.concatenate([whole, real])
        warps, tail = divmod(b, LANES)
        shape = (f"{warps} full warp{'s' if warps != 1 else ''}" if warps else "") + \
                (f"{' and ' if warps else ''}a {tail}-lane warp" if tail else "")
        cases.append(Case(f"blockDim.x = {b} ({shape})", (2,), (b,), (x, np.full(2, np.nan, np.float32)),
                          {"x": x.copy()}, edge=i < 19, probe=b == 33))
    return cases


def block_reduce_sum_judge(case: Case) -> Optional[Mismatch]:
    b = case.block[0]
    x = case.data["x"].reshape(2, b)
    out = case.args[1]
    und = undefined_mask(case, 1)
    for blk, kind in ((0, "whole numbers"), (1, "real values")):
        got = float(out[blk])
        undefined = und is not None and bool(und[blk])
        if not undefined and compare.sum_ok(got, x[blk], exact=blk == 0):
            continue
        exact = float(x[blk].astype(np.float64).sum())
        warp_sums = np.zeros(LANES)
        present = np.zeros(LANES, bool)
        n_warps = (b + LANES - 1) // LANES
        for w in range(n_warps):
            warp_sums[w] = x[blk, w * LANES:(w + 1) * LANES].astype(np.float64).sum()
            present[w] = True
        lane0 = np.arange(LANES) == 0
        rows = [Row("warp sums\n(shared[w])", warp_sums, present=present),
                Row("expected\n(thread 0)", np.where(lane0, exact, 0), present=lane0, result=True),
                Row("got\n(thread 0)", np.where(lane0, got, 0), present=lane0, defined=~(lane0 & undefined), wrong=lane0)]
        title = f"thread 0 of a block of {b} ({kind}): expected {fmt(exact)}, got " + ("undefined" if undefined else fmt(got))
        if undefined:
            return Mismatch(f"With {case.label} and {kind}: thread 0 returned an undefined value (expected {fmt(exact)}).",
                            rows, undefined=True, warp=blk * ((b + 31) // 32), title=title)
        why = compare.explain_sum(got, x[blk])
        tol = "" if blk == 0 else f" (allowed error {compare.sum_bound(x[blk]):.3g})"
        return Mismatch(f"With {case.label} and {kind}: thread 0 returned {fmt(got)}, expected {fmt(exact)}{tol}"
                        + clause(why), rows, title=title)
    return None


def _bench_block(cp: Any) -> Bench:
    n = 1 << 26
    x = cp.random.standard_normal(n, dtype=cp.float32)
    out = cp.empty(n // 256, cp.float32)
    return Bench((n // 256,), (256,), (x, out), lambda: cp.sum(x), "cupy.sum of all of x (CUB)",
                 "2^26 floats, one sum per block of 256")


BLOCK_REDUCE_SUM = Exercise(
    name="block_reduce_sum",
    notebook="04",
    title="The sum of a block",
    signature="__device__ float block_reduce_sum(float v, float* shared)",
    contract=("Every thread of a 1D block calls block_reduce_sum, converged, with its own value v. The block may have "
              "any blockDim.x from 1 to 1024, a multiple of 32 or not. shared points to room for 32 floats of "
              "shared memory (nobody has written it yet). Thread 0 must return the sum of the block's values; "
              "what other threads return is not checked."),
    compare=compare.SUM_RULE,
    cases=block_reduce_sum_cases,
    judge=block_reduce_sum_judge,
    hints=(
        "Two phases. First every warp sums its own lanes with shuffles; lane 0 of warp w writes that sum to "
        "shared[w]. Then, after a __syncthreads(), warp 0 sums the warp sums.",
        "In phase 2, lane l of warp 0 reads shared[l] only if warp l exists (l < number of warps), and uses 0 "
        "otherwise: the other slots were never written.",
        "A block of 33 threads has a last warp of 1 lane. Its lanes 1..31 do not exist: a shuffle from them "
        "returns an undefined value. Add what you received only when the source lane exists "
        "(lane + offset < lanes in this warp), and give the shuffle a mask of the lanes that exist.",
    ),
    bench=_bench_block,
)


# ---------------------------------------------------------------- block_y_reduce_sum (04)

Y_SHAPES = ((1, 1), (32, 1), (32, 2), (32, 3), (32, 5), (1, 1024), (1024, 1), (16, 64), (33, 31), (96, 3),
            (7, 9), (4, 256))


def block_y_cases(rng: np.random.Generator) -> list[Case]:
    """2D shapes: one row, one column, 3 and 5 rows (not powers of two), 1024 threads either way,
    rows that do not line up with warps; then random shapes. Two blocks each: whole numbers, real values."""
    shapes = list(Y_SHAPES)
    while len(shapes) < len(Y_SHAPES) + 4:
        bx, by = int(rng.integers(1, 65)), int(rng.integers(1, 65))
        if bx * by <= 1024 and (bx, by) not in shapes:
            shapes.append((bx, by))
    cases = []
    for i, (bx, by) in enumerate(shapes):
        n = bx * by
        x = np.concatenate([compare.whole_numbers(rng, n), (rng.standard_normal(n) * 4).astype(np.float32)])
        cases.append(Case(f"blockDim = ({bx}, {by})", (2,), (bx, by), (x, np.full(2 * n, np.nan, np.float32)),
                          {"x": x.copy()}, edge=i < len(Y_SHAPES)))
    return cases


def block_y_judge(case: Case) -> Optional[Mismatch]:
    bx, by = case.block[0], case.block[1]
    x = case.data["x"].reshape(2, by, bx)
    out = case.args[1].reshape(2, by, bx)
    und = undefined_mask(case, 1, out.shape)
    for blk, kind in ((0, "whole numbers"), (1, "real values")):
        cols = x[blk].astype(np.float64)
        exact = cols.sum(axis=0)                                      # (bx,)
        k = by - 1
        bound = 0.0 if blk == 0 else k * compare.U32 / (1 - k * compare.U32)
        tol = bound * np.abs(cols).sum(axis=0)
        got = out[blk].astype(np.float64)
        bad = und[blk] | ~np.isfinite(got) | (np.abs(got - exact[None, :]) > tol[None, :])
        if not bad.any():
            continue
        y, xx = (int(v) for v in np.argwhere(bad)[0])
        lanes = min(LANES, bx)
        present = np.arange(LANES) < lanes
        pad = lambda a: np.where(present, np.pad(a[:lanes], (0, LANES - lanes)), np.nan)  # noqa: E731
        rows = [Row("expected\n(column sums)", pad(exact), present=present, result=True),
                Row(f"got, row {y}", pad(got[y]), present=present,
                    defined=np.pad(~und[blk, y, :lanes], (0, LANES - lanes), constant_values=True),
                    wrong=np.pad(bad[y, :lanes], (0, LANES - lanes)))]
        where = f"thread ({xx}, {y})"
        n_bad = int(bad.sum())
        if und[blk, y, xx]:
            return Mismatch(f"With {case.label} and {kind}: {where} returned an undefined value (expected "
                            f"{fmt(exact[xx])}, the sum of column {xx}); {n_bad} of {bx * by} threads are wrong.",
                            rows, undefined=True, warp=blk * ((bx * by + 31) // 32) + (y * bx + xx) // 32,
                            title=f"{case.label}, {kind}: undefined results")
        why = None
        for rows_used in range(by - 1, 0, -1):
            if np.all(got[y] == cols[:rows_used].sum(axis=0)) and blk == 0:
                why = (f"that is the sum of rows 0..{rows_used - 1} only: with {by} rows the first stride must be half "
                       f"the next power of two (so no row is dropped)")
                break
        return Mismatch(f"With {case.label} and {kind}: {where} returned {fmt(got[y, xx])}, expected "
                        f"{fmt(exact[xx])} (the sum of column {xx}); {n_bad} of {bx * by} threads are wrong"
                        + clause(why), rows, title=f"{case.label}, {kind}: row {y} against the column sums")
    return None


BLOCK_Y_REDUCE_SUM = Exercise(
    name="block_y_reduce_sum",
    notebook="04",
    title="Fix the seed's BlockYReduce",
    signature="__device__ float block_y_reduce_sum(float v, float* shared)",
    contract=("Every thread of a 2D block calls block_y_reduce_sum, converged, with its own value v. The block may have "
              "any shape with blockDim.x * blockDim.y <= 1024 (blockDim.z = 1), powers of two or not. shared points to room for "
              "blockDim.x * blockDim.y floats of shared memory. Every thread must return the sum of its column: the "
              "values of all threads with its threadIdx.x. The cell starts with the seed's version, which drops "
              "rows and races."),
    compare=compare.SUM_RULE,
    cases=block_y_cases,
    judge=block_y_judge,
    hints=(
        "Run it first: the machine names the race, and blockDim = (32, 3) shows the rows it drops.",
        "Dropped rows: with 3 rows, stride = blockDim.y / 2 = 1 adds row 1 to row 0 and never row 2. Start from half "
        "the next power of two (2 for 3 rows), and add a partner row only if it exists.",
        "The race: every row rewrites its slot in every phase, while row y - stride may be reading that slot in the "
        "same phase. Let only the "
        "rows that add (y < stride) write, so each phase writes rows [0, stride) and reads rows [stride, 2 stride).",
    ),
)
