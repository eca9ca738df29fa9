"""An exercise whose answer spans the blocks of a grid: notebook 07's ``last_block_sum``, the
last-block-done finish of reduce_onepass (``kernels/reduce_onepass.cu``).

Blocks of one launch have no barrier in common. The machine orders a write in one block before a
read in another only through a release pattern observed by an acquire pattern: a gpu-scope fence
before an atomic that the other block observes, followed by a fence there, or an atomic that is
itself .acq_rel (PTX ISA, Memory Consistency Model, "Release and Acquire Patterns"; see
:mod:`helpers.machine.executor`):
without them, reading the other blocks' partials is a race. A race's result is undefined (C++
[intro.races]: a data race is undefined behaviour; PTX ISA 8.7.2 still bounds what a uniform-size
race can read, but the contract asks for the sum, not one of several values), so the judge says
"*out ended undefined".
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from helpers.exercises import compare
from helpers.exercises.spec import LANES, Case, Exercise, Mismatch, Row, clause, fmt, undefined_mask

# (gridDim.x, blockDim.x): one block; grids around a warp's worth of blocks; 132 and 264 (one and two
# blocks per SM of an H200); blocks of 1 thread and of several warps (only thread 0 calls).
LAST_BLOCK_EDGE = ((1, 1), (2, 1), (3, 32), (31, 32), (32, 32), (33, 32), (64, 64), (65, 128), (132, 32),
                   (264, 256))
LAST_BLOCK_THREADS = (1, 32, 64, 128)


def last_block_cases(rng: np.random.Generator) -> list[Case]:
    """The edge grids, then three random ones (2 to 400 blocks of 1 to 128 threads); whole numbers and
    real values in turn."""
    shapes = list(LAST_BLOCK_EDGE)
    for _ in range(3):
        shapes.append((int(rng.integers(2, 401)), int(rng.choice(LAST_BLOCK_THREADS))))
    cases = []
    for i, (grid, block) in enumerate(shapes):
        whole = i % 2 == 0
        sums = compare.whole_numbers(rng, grid, -100, 100) if whole else (rng.standard_normal(grid) * 100).astype(np.float32)
        kind = "whole numbers" if whole else "real values"
        cases.append(Case(f"gridDim.x = {grid}, blockDim.x = {block}, {kind}", (grid,), (block,),
                          (sums, np.full(grid, np.nan, np.float32), np.zeros(1, np.uint32),
                           np.full(1, np.nan, np.float32)),
                          {"sums": sums.copy(), "whole": whole}, edge=i < len(LAST_BLOCK_EDGE)))
    return cases


def _explain_total(got: float, sums: np.ndarray, whole: bool) -> Optional[str]:
    """A guess, from the numbers alone, at which partials a wrong *out added up."""
    grid = sums.size
    if float(got) == 0.0:
        return "0 is where a sum starts: no partial was added to it"
    if grid > 1 and float(got) == float(sums[-1]):
        return "that is the last block's own sum: the others' partials were not added"
    if grid > 1 and compare.sum_ok(got, sums[:-1], whole):
        return f"that is the sum of partials[0 .. {grid - 2}]: the loop must run to gridDim.x - 1 inclusive"
    if grid > 1 and compare.sum_ok(got, 2 * sums, whole):
        return "that is twice the sum: was *out added to by more than one block, or the partials added twice?"
    return None


def last_block_judge(case: Case) -> Optional[Mismatch]:
    sums, whole = case.data["sums"], case.data["whole"]
    grid = sums.size
    done, out = int(case.args[2][0]), float(case.args[3][0])
    undefined = bool(undefined_mask(case, 3, (1,))[0])
    exact = float(sums.astype(np.float64).sum())
    if not undefined and compare.sum_ok(out, sums, whole):
        if done == 0:
            return None
        return Mismatch(f"With {case.label}: *out is right, but *done ended at {done}, expected 0. The last block "
                        f"must reset the counter (*done = 0) once every block has taken its ticket: the next launch "
                        f"would start counting at {done}, and no block of it would draw ticket gridDim.x - 1.")
    lanes = min(LANES, grid)
    present = np.arange(LANES) < lanes
    lane0 = np.arange(LANES) == 0
    rows = [Row(f"block sums\n0..{lanes - 1}", np.where(present, np.pad(sums[:lanes], (0, LANES - lanes)), np.nan),
                present=present),
            Row("expected\n*out", np.where(lane0, exact, np.nan), present=lane0, result=True),
            Row("got\n*out", np.where(lane0, out, np.nan), present=lane0, defined=~(lane0 & undefined), wrong=lane0)]
    title = f"{case.label}: expected {fmt(exact)}, got " + ("undefined" if undefined else fmt(out))
    if undefined:
        return Mismatch(f"With {case.label}: *out ended undefined (expected {fmt(exact)}, the sum of the block "
                        f"sums).", rows, undefined=True, title=title)
    if np.isnan(out):
        tickets = "the only ticket is 0" if grid == 1 else f"the tickets are 0 .. {grid - 1}"
        return Mismatch(f"With {case.label}: *out still holds NaN, its value at launch (expected {fmt(exact)}): no "
                        f"block stored the total (adding to it with atomicAdd would need *out == 0 at launch, which "
                        f"is not promised). atomicAdd returns the count before its own add: with gridDim.x = {grid} "
                        f"{tickets}, and the last block to finish draws gridDim.x - 1 = {grid - 1}.", rows, title=title)
    tol = "" if whole else f" (allowed error {compare.sum_bound(sums):.3g})"
    return Mismatch(f"With {case.label}: *out ended {fmt(out)}, expected {fmt(exact)}{tol}"
                    + clause(_explain_total(out, sums, whole)), rows, title=title)


# The blocks in series, block 0 first: a right answer takes about 75 scheduling steps for 2 blocks of
# one thread; one that makes block 0 wait for block 1 spins until the cap (a fraction of a second).
SERIAL_GRID = 2
SERIAL_STEPS = 2000


def last_block_serial_check(reports: Sequence[Any], cases: Sequence[Case], module: Any) -> Optional[str]:
    """Run the answer once more with its blocks one after another, block 0 first: the Programming Guide
    ("Thread Hierarchy") requires that blocks can run "in any order, in parallel or in series", and
    nothing guarantees that a later block is running while an earlier one waits."""
    from helpers.machine import StepLimit

    sums = np.arange(1, SERIAL_GRID + 1, dtype=np.float32)
    args = (sums, np.full(SERIAL_GRID, np.nan, np.float32), np.zeros(1, np.uint32), np.full(1, np.nan, np.float32))
    try:
        module.get_function(LAST_BLOCK_SUM.kernel)((SERIAL_GRID,), (1,), args, serial=True, max_steps=SERIAL_STEPS)
    except StepLimit:
        return (f"with gridDim.x = {SERIAL_GRID} run one block after the other, block 0 first, block 0 never "
                f"finished: it waits for a block that may not be running. Blocks must be able to run in any "
                f"order, in parallel or in series (Programming Guide, Thread Hierarchy); a GPU runs only as many "
                f"blocks at once as fit on its SMs. Let the last block to take a ticket do the finishing, "
                f"instead of a chosen block waiting for the others.")
    return None


LAST_BLOCK_SUM = Exercise(
    name="last_block_sum",
    notebook="07",
    title="Last block done: the finish of the one-pass kernel",
    signature="__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out)",
    contract=("Thread 0 of every block of a 1D grid (any gridDim.x) calls last_block_sum, once, with its block's "
              "sum. The other threads of the block do not call it. partials has room for gridDim.x floats, "
              "*done is 0 at launch; *out holds no particular value at launch (the check fills it with NaN). "
              "When the launch ends, *out must hold the sum of the gridDim.x block sums, and *done must be 0 "
              "again, so that the next launch can use the same counter. Blocks must be able to run in any order, "
              "in parallel or in series (Programming Guide, Thread Hierarchy), so no block may wait for another. "
              "The machine runs them all at once, then once more one after another, block 0 first. It reports a "
              "read of another block's "
              "partial that nothing orders after its write as a race. (The Programming Guide's Memory Fence Functions example has no fence after "
              "its atomicInc; the PTX ISA's memory consistency model (Release and Acquire Patterns) needs one "
              "there, before the last block reads the partials.)"),
    compare=compare.SUM_RULE.replace("[−8, 8]", "[−100, 100]") + " Here n is gridDim.x: the values added are the block sums.",
    cases=last_block_cases,
    judge=last_block_judge,
    machine_check=last_block_serial_check,
    hints=(
        "Every block writes partials[blockIdx.x] and takes a ticket, unsigned int ticket = atomicAdd(done, 1u); "
        "atomicAdd returns the count before its add, so the block that draws gridDim.x - 1 is the last to take "
        "one: every other block has already taken its ticket.",
        "A plain atomicAdd is relaxed: it orders nothing around it. A fence orders the calling thread's own memory "
        "accesses (Programming Guide, Memory Fence Functions). Put __threadfence() between the write of the "
        "partial and the atomicAdd: the store is ordered before the ticket (release). Put another one in the last "
        "block after the atomicAdd, before it reads the partials: the reads are ordered after the ticket "
        "(acquire). (One atomic that is both, cuda::atomic_ref<unsigned int, "
        "cuda::thread_scope_device>(*done).fetch_add(1u, cuda::memory_order_acq_rel) with #include "
        "<cuda/atomic>, does the same: PTX ISA, Memory Consistency Model, Release and Acquire Patterns.)",
        "In the last block: float total = 0.0f; for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b]; "
        "*out = total; *done = 0u;. Adding in index order gives the same bits on every run.",
    ),
)
