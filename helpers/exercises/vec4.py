"""The float4 exercises of notebook 06: ``thread_sum_vec4`` (a vectorised grid-stride loop over an
aligned array) and ``thread_sum_vec4_any`` (the same for any float*: v8's head, body and tail).

Both return each thread's share of the sum; the judge adds the shares in float64. What only the
machine can see is counted from its per-instruction counters: the 16-byte loads from the cell's
lines, and the 32-byte sectors each warp request touches (coalescing).
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence

import numpy as np

from helpers.exercises import compare
from helpers.exercises.spec import LANES, Bench, Case, Exercise, Mismatch, Row, clause, fmt, lane_ranges, undefined_mask

# (gridDim.x, blockDim.x, n): sizes 1, 5, 7, 11, 31, 33 and others that are not multiples of 4 or of
# the block; grids of 1 or 2 threads with 3 floats after the last vector among them.
VEC4_EDGE = ((1, 1, 1), (1, 1, 5), (1, 1, 7), (2, 1, 11), (1, 32, 31), (1, 32, 33), (1, 33, 4), (1, 31, 250), (2, 96, 1000),
             (3, 128, 4099), (4, 256, 31), (1, 1024, 4098))
# (gridDim.x, blockDim.x, n, offset): every offset 0..3 from the 16-byte boundary; heads longer than
# n (n = 1 or 2 at offset 1 or 3, on 1 and on 32 threads), heads of 1..3 floats on 1 and on 2 threads.
VEC4_ANY_EDGE = ((1, 1, 1, 3), (1, 1, 2, 1), (1, 32, 2, 1), (1, 1, 2, 3), (1, 1, 5, 1), (1, 1, 7, 2), (2, 1, 11, 1), (1, 32, 31, 3),
                 (1, 32, 33, 1), (1, 33, 4, 2), (1, 31, 250, 2), (2, 96, 1000, 1), (3, 128, 4099, 3), (4, 256, 31, 2),
                 (1, 1024, 4098, 1), (1, 1, 9, 0))


def head_of(offset: int, n: int) -> int:
    """The floats before the first 16-byte boundary of an array that starts ``offset`` floats past
    one (0..3), never more than ``n``."""
    return min((4 - offset) % 4, n)


def _random_shapes(rng: np.random.Generator, offsets: bool) -> list[tuple[int, ...]]:
    shapes = []
    for _ in range(4):
        block = int(rng.integers(1, 1025))
        grid = int(rng.integers(1, 5))
        n = int(rng.integers(1, min(16 * block * grid, 6000) + 1))
        shapes.append((grid, block, n) + ((int(rng.integers(0, 4)),) if offsets else ()))
    return shapes


def _vec4_case(rng: np.random.Generator, i: int, shape: tuple[int, ...], edge: bool) -> Case:
    grid, block, n = shape[:3]
    offset = shape[3] if len(shape) > 3 else None
    whole = i % 2 == 0
    x = compare.whole_numbers(rng, n) if whole else (rng.standard_normal(n) * 4).astype(np.float32)
    kind = "whole numbers" if whole else "real values"
    label = f"n = {n}, gridDim.x = {grid}, blockDim.x = {block}, {kind}"
    args: tuple = (x, np.int64(n), np.full(grid * block, np.nan, np.float32))
    head = 0
    if offset is not None:
        # The allocation holds exactly offset + n floats; the ones before in are NaN, so reading one shows.
        args = (np.concatenate([np.full(offset, np.nan, np.float32), x]),) + args[1:] + (np.int32(offset),)
        head = head_of(offset, n)
        label = f"in = x + {offset} (head of {head}), " + label
    return Case(label, (grid,), (block,), args,
                {"x": x.copy(), "whole": whole, "n": n, "head": head, "vectors": (n - head) // 4, "offset": offset or 0}, edge=edge)


def vec4_cases(rng: np.random.Generator) -> list[Case]:
    """The edge shapes (blocks of 1, 31, 32, 33, 96, 128, 256 and 1024 threads, grids of 1 to 4
    blocks), then random launches; whole numbers and real values in turn."""
    shapes = list(VEC4_EDGE) + _random_shapes(rng, offsets=False)
    return [_vec4_case(rng, i, s, i < len(VEC4_EDGE)) for i, s in enumerate(shapes)]


def vec4_any_cases(rng: np.random.Generator) -> list[Case]:
    """As :func:`vec4_cases`, with ``in`` 0..3 floats past a 16-byte boundary (every offset among
    the edge shapes, and random offsets)."""
    shapes = list(VEC4_ANY_EDGE) + _random_shapes(rng, offsets=True)
    return [_vec4_case(rng, i, s, i < len(VEC4_ANY_EDGE)) for i, s in enumerate(shapes)]


def reference_shares(x: np.ndarray, threads: int, head: int = 0) -> np.ndarray:
    """Each thread's share under the reference solutions' split: head floats t, t + T, ... of the
    ``head`` before the first vector; vectors t, t + T, ...; tail floats t, t + T, ... of the 0..3
    after the last whole vector."""
    n = x.size
    m = (n - head) // 4
    shares = np.zeros(threads)
    np.add.at(shares, np.arange(head) % threads, x[:head].astype(np.float64))
    vec = x[head:head + 4 * m].astype(np.float64).reshape(m, 4).sum(axis=1)
    np.add.at(shares, np.arange(m) % threads, vec)
    tail = n - head - 4 * m
    np.add.at(shares, np.arange(tail) % threads, x[head + 4 * m:].astype(np.float64))
    return shares


def _floats(k: int, first: int, last: int) -> str:
    span = f"in[{first}]" if k == 1 else f"in[{first}..{last}]"
    return f"{k} float{'s' if k > 1 else ''} ({span})"


def _explain_shares(diff: float, x: np.ndarray, head: int, whole: bool) -> Optional[str]:
    """What a total that is off by ``diff`` suggests: the head or the tail missed or doubled."""
    n = x.size
    start = head + 4 * ((n - head) // 4)
    tail, lead = x[start:].astype(np.float64), x[:head].astype(np.float64)
    if tail.size and diff == -tail.sum():
        return f"short by exactly the last {_floats(tail.size, start, n - 1)}, after the last whole vector: add the tail"
    if tail.size and diff == tail.sum():
        return f"over by exactly the last {_floats(tail.size, start, n - 1)}: the tail was added twice"
    if lead.size and diff == -lead.sum():
        return (f"short by exactly the first {_floats(head, 0, head - 1)}, before the first 16-byte boundary: "
                f"add the head")
    if lead.size and diff == lead.sum():
        return f"over by exactly the first {_floats(head, 0, head - 1)}: the head was added twice"
    if whole and diff < 0:
        return f"short by {fmt(-diff)}: some elements were never read"
    if whole and diff > 0:
        return f"over by {fmt(diff)}: some elements were read more than once"
    return None


def vec4_judge(case: Case) -> Optional[Mismatch]:
    x = case.data["x"]
    whole, head = case.data["whole"], case.data["head"]
    shares = case.args[2]
    und = undefined_mask(case, 2)
    threads = shares.size
    got_total = float(shares.astype(np.float64).sum())
    exact = float(x.astype(np.float64).sum())
    undefined = und is not None and bool(und.any())
    if not undefined and np.isfinite(got_total) and (got_total == exact if whole else
                                                     abs(got_total - exact) <= compare.sum_bound(x)):
        return None
    ref = reference_shares(x, threads, head)
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
        offset, n = case.data["offset"], case.data["n"]
        # The machine names the harness's allocation (argument 0, x); the learner's code sees in = x + offset.
        where = (f" Argument 0 in the machine's messages is the allocation x, not in: in = x + {offset}, so byte "
                 f"offset b of argument 0 is in[b/4 - {offset}]; the allocation holds {offset + n} floats, so "
                 f"in[{n - 1}] is the last." if offset else "")
        return Mismatch(f"With {case.label}: the share of thread{'s' if bad.size > 1 else ''} {lane_ranges(bad[:64])} "
                        f"is undefined.{where}", rows, undefined=True, warp=int(bad[0]) // LANES, title=title)
    offset = case.data["offset"]
    if np.isfinite(got_total):
        why = _explain_shares(got_total - exact, x, head, whole)
    else:   # only the floats before in (the harness's NaN) are not finite
        why = f"a NaN came in: here the {offset} float{'s' if offset > 1 else ''} before in hold NaN: was in[-1] read?" if offset else None
    tol = "" if whole else f" (allowed error {compare.sum_bound(x):.3g})"
    return Mismatch(f"With {case.label}: the shares add up to {fmt(got_total)}, expected {fmt(exact)}{tol}" + clause(why),
                    rows, title=title)


_V4_LOAD = re.compile(r"^ld(\.global)?(\.nc)?(\.[a-z]+)*\.v4\.(f32|b32|u32|s32)")


def vec4_machine_check(reports: Sequence[Any], cases: Sequence[Case], module: Any) -> Optional[str]:
    from helpers.exercises.run import CELL

    for rep, case in zip(reports, cases):
        vectors = case.data["vectors"]
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
                    f"(reinterpret_cast<const float4*> of a 16-byte aligned address).")
        if loads != vectors:
            return (f"with {case.label} your code made {loads} float4 loads, where the array holds {vectors} whole "
                    f"vectors: each should be read once, as a float4.")
        threads = case.grid[0] * case.block[0]
        if threads >= LANES and requests and sectors / requests > 17:
            return (f"with {case.label} your float4 loads touch {sectors / requests:.1f} 32-byte sectors per warp "
                    f"request, where a grid-stride loop needs 16 (32 lanes x 16 bytes): the lanes of a warp must read "
                    f"consecutive vectors (thread t takes vectors t, t + T, t + 2T, ...).")
    return None


def _bench_vec4(offset: Optional[int]):
    def bench(cp: Any) -> Bench:
        n = 1 << 26
        x = cp.random.standard_normal(n + (offset or 0), dtype=cp.float32)
        grid, block = 1024, 256
        partial = cp.empty(grid * block, cp.float32)
        args = (x, np.int64(n), partial) + (() if offset is None else (np.int32(offset),))
        what = "2^26 floats, 1024 blocks of 256 threads" + ("" if offset is None else f", in = x + {offset}")
        return Bench((grid,), (block,), args, lambda: cp.sum(x[offset or 0:]), "cupy.sum of all of x (CUB)", what)

    return bench


SHARES_RULE = compare.SUM_RULE.replace("Sums are compared", "The sum of all the shares is compared")

THREAD_SUM_VEC4 = Exercise(
    name="thread_sum_vec4",
    notebook="06",
    title="A vectorised grid-stride loop",
    signature="__device__ float thread_sum_vec4(const float* in, long long n)",
    contract=("Every thread of a 1D grid (any blockDim.x, any gridDim.x) calls thread_sum_vec4; in is 16-byte aligned "
              "and holds n >= 1 floats. Each thread returns its share of the sum, and the shares must add up to the "
              "sum of in[0 .. n): every element read exactly once, none past n. The n / 4 whole vectors must be read "
              "with 16-byte float4 loads in a grid-stride loop (thread t of T takes vectors t, t + T, ...). The "
              "machine counts the loads and the sectors they touch: a sector is a 32-byte piece of a memory "
              "transaction."),
    compare=SHARES_RULE,
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
    bench=_bench_vec4(None),
)

THREAD_SUM_VEC4_ANY = Exercise(
    name="thread_sum_vec4_any",
    notebook="06",
    title="Any float*: the head before the first 16-byte boundary",
    signature="__device__ float thread_sum_vec4_any(const float* in, long long n)",
    contract=("As thread_sum_vec4, but in is any float* into an allocation (4-byte aligned: x + 1, a slice x[3:]), "
              "and holds n >= 1 floats; the allocation ends at in[n - 1]. A float4 load needs a 16-byte aligned "
              "address. So the floats before the first 16-byte boundary (the head: 0 to 3 of them, never more than "
              "n) are read one by one, and the whole vectors after it with float4 loads in a grid-stride loop. The "
              "0 to 3 floats after the last vector are read one by one. The shares must add up to the sum of in[0 .. n): "
              "every element read exactly once, none before in or past n. The machine reports a misaligned float4 "
              "load, and counts the loads and the memory sectors they touch."),
    compare=SHARES_RULE,
    cases=vec4_any_cases,
    judge=vec4_judge,
    machine_check=vec4_machine_check,
    hints=(
        "Start from thread_sum_vec4: only where the vectors start changes. in's distance past a 16-byte boundary, in "
        "floats, is (reinterpret_cast<unsigned long long>(in) / 4) % 4.",
        "The head is the floats up to that boundary: 0 if the distance is 0, else 4 - distance, but never more than "
        "n (n = 1 at distance 1 has a head of 1 float, not 3). After it, (n - head) / 4 whole vectors start at "
        "in + head, which is 16-byte aligned.",
        "Three grid-stride loops: for (i = t; i < head; i += T) sum += in[i]; then the float4 loop over "
        "reinterpret_cast<const float4*>(in + head); then for (i = head + 4 * vectors + t; i < n; i += T) "
        "sum += in[i];",
    ),
    bench=_bench_vec4(1),
)
