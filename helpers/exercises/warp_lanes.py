"""Warp-level exercises judged lane by lane: notebooks 01 (``ballot_rank``, ``warp_aggregated_append``),
02 (``warp_sum_all``, ``segment_sum16``) and 03 (``butterfly_sum16``)."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from helpers.exercises import compare
from helpers.exercises.spec import LANES, Case, Exercise, Mismatch, Row, clause, fmt, lane_ranges, undefined_mask
from helpers.exercises.warp_block import FULL_WARP_BLOCKS

LANE = np.arange(LANES)


def full_warp_launches(rng: np.random.Generator) -> list[tuple[int, int, bool]]:
    """(block, grid, edge) for every block size of whole warps: 1, 31 and 33 warps and the largest
    block first, then every other multiple of 32 up to 1024 with 1 to 2 blocks."""
    out = [(32, 1, True), (992, 1, True), (96, 11, True), (1024, 1, True)]
    out += [(b, int(rng.integers(1, 3)), False) for b in FULL_WARP_BLOCKS if b not in (32, 992, 96, 1024)]
    return out


def _shape(block: int, grid: int) -> str:
    warps = block * grid // LANES
    return f"blockDim.x = {block}, gridDim.x = {grid} ({warps} warp{'s' if warps > 1 else ''})"


def _where(case: Case, w: int) -> str:
    b, first = divmod(w * LANES, case.block[0])
    return f"warp {first // LANES} of block {b}" if case.grid[0] > 1 or case.block[0] > LANES else "the warp"


def lane_mismatch(case: Case, w: int, rows: list[Row], wrong: np.ndarray, undefined: np.ndarray, got: np.ndarray,
                  expected: np.ndarray, what: Callable[[int], str],
                  why: Callable[[int, np.ndarray], Optional[str]]) -> Mismatch:
    """What went wrong in warp ``w`` (block-major), whose lanes ``wrong`` are wrong: the lanes that
    returned an undefined value (``undefined``) if there are any, else the first wrong lane, its
    ``got`` against ``expected`` (``what(lane)`` says what that is) and ``why(lane, wrong lanes)``."""
    where = _where(case, w)
    if undefined.any():
        ul = np.flatnonzero(undefined)
        return Mismatch(f"With {case.label}: lane{'s' if ul.size > 1 else ''} {lane_ranges(ul)} of {where} "
                        f"returned an undefined value.", rows, undefined=True, warp=w,
                        title=f"lanes {lane_ranges(ul)}: undefined")
    lanes = np.flatnonzero(wrong)
    lane = int(lanes[0])
    return Mismatch(f"With {case.label}: lane {lane} of {where} returned {fmt(got[lane])}, expected "
                    f"{fmt(expected[lane])} {what(lane)}" + clause(why(lane, lanes))
                    + (f" Wrong lanes: {lane_ranges(lanes)}." if lanes.size > 1 else ""),
                    rows, warp=w, title=f"lane {lane}: expected {fmt(expected[lane])}, got {fmt(got[lane])}")


# ---------------------------------------------------------------- segment sums (02, 03)

def _segment_values(rng: np.random.Generator, warps: int, whole: bool) -> np.ndarray:
    if whole:
        return compare.whole_numbers(rng, warps * LANES)
    return (rng.standard_normal(warps * LANES) * 4).astype(np.float32)


def segment_cases(rng: np.random.Generator) -> list[Case]:
    """Every block size of whole warps; odd launches whole numbers (exact), even ones real values."""
    cases = []
    for i, (block, grid, edge) in enumerate(full_warp_launches(rng)):
        whole = i % 2 == 0
        x = _segment_values(rng, block * grid // LANES, whole)
        kind = "whole numbers" if whole else "real values"
        cases.append(Case(f"{_shape(block, grid)}, {kind}", (grid,), (block,), (x, np.full(x.size, np.nan, np.float32)),
                          {"x": x.copy(), "whole": whole}, edge=edge))
    return cases


def _explain_segment(got: float, x: np.ndarray, lane: int) -> Optional[str]:
    """A guess at what a wrong segment sum of ``lane`` (in the warp's values ``x``) added up."""
    seg = x[lane // 16 * 16:lane // 16 * 16 + 16]
    if compare.sum_ok(got, x):
        return "that is the sum of all 32 lanes: the shuffles must stay within segments of 16 (width 16)"
    if compare.sum_ok(got, 2 * seg):
        return ("that is twice the segment's sum: a shuffle whose source lies past the end of its segment returns "
                "the lane's own value, which was then added again; with width 16 the first offset is 8")
    if float(got) == float(x[lane]):
        return f"that is lane {lane}'s own value: nothing was added to it"
    for k in range(15, 1, -1):
        if lane % 16 + k <= 16 and compare.sum_ok(got, x[lane:lane + k]):
            return f"that is the sum of lanes {lane}..{lane + k - 1} only"
    return None


def segment_judge_for(checked_lanes: Sequence[int]):
    """A judge: every lane in ``checked_lanes`` (of every warp) must hold the sum of its 16-lane segment."""
    checked = np.isin(LANE, checked_lanes)

    def judge(case: Case) -> Optional[Mismatch]:
        x = case.data["x"].reshape(-1, LANES)
        out = case.args[1].reshape(-1, LANES)
        und = undefined_mask(case, 1, out.shape)
        seg = x.astype(np.float64).reshape(-1, 2, 16)
        expected = np.repeat(seg.sum(axis=2), 16, axis=1)                       # (warps, 32)
        k = 15
        bound = np.repeat(k * compare.U32 / (1 - k * compare.U32) * np.abs(seg).sum(axis=2), 16, axis=1)
        if case.data["whole"]:
            bound = np.zeros_like(bound)   # whole numbers: every order of additions is exact
        ok = np.isfinite(out) & (np.abs(out.astype(np.float64) - expected) <= bound)
        wrong_all = checked[None, :] & (und | ~ok)
        for w in map(int, np.flatnonzero(wrong_all.any(axis=1))):
            wrong = wrong_all[w]
            rows = [Row("input", x[w]),
                    Row("expected", expected[w], checked=checked, result=True),
                    Row("got", out[w], defined=~und[w], checked=checked, wrong=wrong)]
            return lane_mismatch(case, w, rows, wrong, wrong & und[w], out[w], expected[w],
                                 lambda lane: f"(the sum of lanes {lane // 16 * 16}..{lane // 16 * 16 + 15})",
                                 lambda lane, _: _explain_segment(out[w, lane], x[w], lane))
        return None

    return judge


SEGMENT_SUM16 = Exercise(
    name="segment_sum16",
    notebook="02",
    title="Two sums in one warp: the width argument",
    signature="__device__ float segment_sum16(float v)",
    contract=("All 32 lanes of a full warp call segment_sum16, converged, each with its own value v. The warp is "
              "two segments of 16 lanes (0..15 and 16..31). Lane 0 must return the sum of lanes 0..15, and lane 16 "
              "the sum of lanes 16..31; what other lanes return is not checked."),
    compare=compare.SUM_RULE,
    cases=segment_cases,
    judge=segment_judge_for((0, 16)),
    hints=(
        "WarpReduceSum from this notebook, with one change: the shuffles' width argument.",
        "With width 16 each lane reads only inside its own segment of 16, and the first offset is 8, not 16.",
        "Offsets 8, 4, 2, 1: v += __shfl_down_sync(0xffffffff, v, offset, 16).",
    ),
)

BUTTERFLY_SUM16 = Exercise(
    name="butterfly_sum16",
    notebook="03",
    title="A width-16 butterfly: every lane gets its segment's sum",
    signature="__device__ float butterfly_sum16(float v)",
    contract=("All 32 lanes of a full warp call butterfly_sum16, converged, each with its own value v. Every lane "
              "must return the sum of the 16 values of its segment (lanes 0..15 or 16..31): an all-reduce within "
              "each half-warp."),
    compare=compare.SUM_RULE,
    cases=segment_cases,
    judge=segment_judge_for(tuple(range(LANES))),
    hints=(
        "A down tree leaves the sum in one lane only. With __shfl_xor_sync every lane gets a partner at each step, "
        "and both partners end with the same sum.",
        "Four steps, lane masks 8, 4, 2, 1: lane l exchanges with lane l ^ mask, which stays inside its 16-lane segment.",
        "v += __shfl_xor_sync(0xffffffff, v, mask, 16) for mask = 8, 4, 2, 1.",
    ),
)


# ---------------------------------------------------------------- warp-aggregated atomics (01)

def _flags(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    f = np.zeros(n, np.int32)
    if kind == 0:
        f[:] = rng.random(n) < 0.5
    elif kind == 1:
        f[:] = 1
    elif kind == 2:
        pass
    elif kind == 3:
        f[31::32] = 1                     # only lane 31 passes: the leader is not lane 0
    elif kind == 4:
        f[2::3] = 1
    else:
        f[:] = rng.random(n) < 0.1
    return f


AGG_KINDS = ("about half pass", "all pass", "none pass", "only lane 31 of each warp passes", "every third passes",
             "about a tenth pass")


def aggregated_cases(rng: np.random.Generator) -> list[Case]:
    """Sizes 1, 31, 33, 1000 and others that are not multiples of the block; every block size of
    whole warps (lanes past n call with pred false); flag patterns in turn."""
    cases = []
    launches = full_warp_launches(rng)
    sizes = {0: 1, 1: 31, 2: 33, 3: 1000}
    for i, (block, grid, edge) in enumerate(launches):
        cap = block * grid
        n = sizes.get(i, int(rng.integers(1, min(cap, 600) + 1)))   # atomics run one at a time: keep n modest
        n = min(n, cap)
        kind = i % len(AGG_KINDS) if i >= 4 else (0, 1, 3, 0)[i]
        flags = _flags(rng, n, kind)
        label = f"n = {n}, {_shape(block, grid)}, {AGG_KINDS[kind]}"
        cases.append(Case(label, (grid,), (block,),
                          (flags, np.int32(n), np.zeros(1, np.int32), np.full(n, -2, np.int32)),
                          {"flags": flags.copy(), "n": n}, edge=edge))
    return cases


def aggregated_judge(case: Case) -> Optional[Mismatch]:
    flags = case.data["flags"].astype(bool)
    n = case.data["n"]
    counter, slots = case.args[2], case.args[3]
    und_c, und_s = undefined_mask(case, 2), undefined_mask(case, 3)
    total = int(flags.sum())
    padded = np.zeros(-(-n // LANES) * LANES, bool)
    padded[:n] = flags
    got = np.full(padded.size, -1, np.int64)
    got[:n] = slots
    und = np.zeros(padded.size, bool)
    if und_s is not None:
        und[:n] = und_s
    for w in range(padded.size // LANES):
        p = padded[w * LANES:(w + 1) * LANES]
        g = got[w * LANES:(w + 1) * LANES]
        u = und[w * LANES:(w + 1) * LANES] & p
        base = int(g[p].min()) if p.any() and not u.any() else 0
        exp = np.where(p, base + np.cumsum(p) - 1, -1)
        ok_slots = (g[p] >= 0) & (g[p] < total)
        wrong = p & ((g != exp) | u)
        if not (wrong.any() or not ok_slots.all()):
            continue
        rows = [Row("pred", p.astype(float), present=LANE < n - w * LANES),
                Row("expected", np.where(p, exp, np.nan), checked=p, result=True, present=LANE < n - w * LANES),
                Row("got", np.where(p, g, np.nan), defined=~u, checked=p, wrong=wrong, present=LANE < n - w * LANES)]
        where = _where(case, w)
        lanes = np.flatnonzero(wrong)
        if u.any():
            return Mismatch(f"With {case.label}: lane{'s' if u.sum() > 1 else ''} {lane_ranges(np.flatnonzero(u))} of "
                            f"{where} returned an undefined slot.", rows, undefined=True, warp=w,
                            title="undefined slots")
        dup = [int(s) for s in np.unique(g[p]) if (g[p] == s).sum() > 1]
        outside = p & ((g < 0) | (g >= total))
        ranks = np.cumsum(p) - 1
        if p.sum() > 1 and np.unique((g - LANE)[p]).size == 1:
            lanes = np.flatnonzero(p)
            why = ("each passing lane got base + its lane number; it needs base + its rank among the passing lanes, "
                   "__popc(mask & lanes below it)")
        elif dup:
            lanes = np.flatnonzero(p & (g == dup[0]))
            why = f"these lanes share slot {dup[0]}: each passing lane needs its own (base + its rank among the passing lanes)"
        elif outside.any():
            lanes = np.flatnonzero(outside)
            why = (f"slots must lie in 0..{total - 1}: {total} lane{'s' if total != 1 else ''} passed in the whole "
                   f"launch" + (" (is it base + lane instead of base + rank?)" if (g[outside] - ranks[outside] != base).any() else ""))
        else:
            lanes = np.flatnonzero(wrong)
            why = ("the passing lanes of a warp must get consecutive slots in lane order: base + __popc(mask & lanes "
                   "below)")
        rows[2].wrong = np.isin(LANE, lanes)
        return Mismatch(f"With {case.label}: in {where}, passing lane{'s' if lanes.size > 1 else ''} "
                        f"{lane_ranges(lanes)} got slot{'s' if lanes.size > 1 else ''} "
                        f"{', '.join(str(int(s)) for s in g[lanes][:8])}{', ...' if lanes.size > 8 else ''}; {why}.",
                        rows, warp=w, title=f"{where}: slots of the passing lanes")
    if (und_c is not None and und_c[0]) or int(counter[0]) != total:
        c = "undefined" if und_c is not None and und_c[0] else str(int(counter[0]))
        return Mismatch(f"With {case.label}: *counter ended at {c}, expected {total} (one slot per passing lane): "
                        f"each warp must add the number of its passing lanes, __popc of the ballot.",
                        undefined=c == "undefined")
    if total and sorted(got[:n][flags].tolist()) != list(range(total)):
        return Mismatch(f"With {case.label}: the slots of the passing lanes are not exactly 0..{total - 1}: two warps "
                        f"were given overlapping runs. Each warp's base must come from its own atomicAdd.")
    return None


def atomics_made(report: Any) -> int:
    """How many thread-level atomic operations ran from lines of the learner's cell."""
    from helpers.exercises.run import CELL

    n = 0
    for row in report.counters.per_instruction:
        if row["ptx"].split()[0].split(".")[0] in ("atom", "red") and (row["file"] or "").rsplit("/", 1)[-1] == CELL:
            n += row["predicated_on"]
    return n


def aggregated_machine_check(reports: Sequence[Any], cases: Sequence[Case], module: Any) -> Optional[str]:
    for rep, case in zip(reports, cases):
        flags = case.data["flags"].astype(bool)
        n = case.data["n"]
        padded = np.zeros(-(-n // LANES) * LANES, bool)
        padded[:n] = flags
        want = int(padded.reshape(-1, LANES).any(axis=1).sum())
        made = atomics_made(rep)
        if made != want:
            return (f"with {case.label} your code made {made} atomic operation{'s' if made != 1 else ''}, where "
                    f"one per warp that has a passing lane makes {want}. Let the lowest passing lane "
                    f"(__ffs(ballot) - 1) do one atomicAdd of __popc(ballot) for its whole warp, and hand the base "
                    f"to the others with __shfl_sync.")
    return None


WARP_AGGREGATED_APPEND = Exercise(
    name="warp_aggregated_append",
    notebook="01",
    title="One atomicAdd per warp: ballot, __ffs and __popc",
    signature="__device__ int warp_aggregated_append(bool pred, int* counter)",
    contract=("All 32 lanes of a full warp call warp_aggregated_append, converged; lanes past the end of the data "
              "call it too, with pred false. Each lane with pred true must return its own slot in the output; "
              "within a warp the passing lanes get consecutive slots in lane order, and over the whole launch the "
              "slots are exactly 0 .. (passing lanes - 1). *counter starts at 0 and must end at the number of "
              "passing lanes. Each warp with a passing lane does exactly one atomic operation on counter (a warp "
              "with none does none): the machine counts them. What lanes with pred false return is not checked."),
    compare="Slots are whole numbers and must be exactly right; the order of the warps' runs is free.",
    cases=aggregated_cases,
    judge=aggregated_judge,
    machine_check=aggregated_machine_check,
    hints=(
        "Take a ballot of pred with the full mask first, before any lane leaves: every lane must vote.",
        "The leader is the lowest passing lane, __ffs(mask) - 1. It does base = atomicAdd(counter, __popc(mask)). "
        "A passing lane's rank is __popc(mask & ((1u << lane) - 1)).",
        "Inside if (pred), where only the passing lanes are, hand the base from the leader to them with "
        "__shfl_sync(mask, base, leader): there mask names exactly the lanes that make the call. Return base + rank.",
    ),
)


# ---------------------------------------------------------------- a lane's rank from a ballot (01)

def rank_cases(rng: np.random.Generator) -> list[Case]:
    """Every block size of whole warps, with the flag patterns of warp_aggregated_append in turn."""
    cases = []
    for i, (block, grid, edge) in enumerate(full_warp_launches(rng)):
        kind = (1, 3, 0, 4)[i] if i < 4 else i % len(AGG_KINDS)
        flags = _flags(rng, block * grid, kind)
        cases.append(Case(f"{_shape(block, grid)}, {AGG_KINDS[kind]}", (grid,), (block,),
                          (flags, np.full(flags.size, -7, np.int32)), {"flags": flags.copy()}, edge=edge))
    return cases


def _explain_rank(p: np.ndarray, g: np.ndarray, exp: np.ndarray, lanes: np.ndarray) -> str:
    if (g[lanes] == exp[lanes] + p[lanes]).all():
        return "a passing lane counted itself: keep only the bits of the lanes below it, (1u << lane) - 1"
    if (g[lanes] == int(p.sum())).all():
        return ("that is the number of passing lanes in the whole warp: mask the ballot with the bits of the lanes "
                "below, (1u << lane) - 1")
    if (g[lanes] == LANE[lanes]).all():
        return "that is the lane number: count only the lanes whose pred is true (the ballot's set bits)"
    if (g[lanes] == int(p.sum()) - exp[lanes] - p[lanes]).all():
        return "those are the passing lanes above this one: the lanes below have the lower lane numbers"
    return "each lane needs __popc(ballot & ((1u << lane) - 1)), the passing lanes below it"


def rank_judge(case: Case) -> Optional[Mismatch]:
    p = case.data["flags"].astype(bool).reshape(-1, LANES)
    got = case.args[1].reshape(-1, LANES).astype(np.int64)
    und = undefined_mask(case, 1, got.shape)
    expected = np.cumsum(p, axis=1) - p
    for w in map(int, np.flatnonzero(((got != expected) | und).any(axis=1))):
        wrong = (got[w] != expected[w]) | und[w]
        rows = [Row("pred", p[w].astype(float)), Row("expected", expected[w], result=True),
                Row("got", got[w], defined=~und[w], wrong=wrong)]
        return lane_mismatch(case, w, rows, wrong, und[w], got[w], expected[w],
                             lambda lane: (f"(the passing lanes among lanes {lane_ranges(range(lane))})" if lane
                                           else "(no lane is below lane 0)"),
                             lambda _, lanes: _explain_rank(p[w], got[w], expected[w], lanes))
    return None


BALLOT_RANK = Exercise(
    name="ballot_rank",
    notebook="01",
    title="A lane's rank among the passing lanes: __ballot_sync and __popc",
    signature="__device__ int ballot_rank(bool pred)",
    contract=("All 32 lanes of a full warp call ballot_rank, converged, each with its own pred. Every lane must "
              "return how many lanes of its warp below it (with a lower lane number) have pred true: for a lane "
              "whose own pred is true, its rank among the passing lanes, 0 for the lowest. Every lane is checked."),
    compare="Ranks are whole numbers and must be exactly right, in every lane.",
    cases=rank_cases,
    judge=rank_judge,
    hints=(
        "One __ballot_sync(0xffffffff, pred), called by every lane before any lane leaves, gives every lane the "
        "same 32-bit picture of who passed.",
        "Keep only the bits of the lanes below this one: (1u << lane) - 1 has exactly bits 0 .. lane - 1 set "
        "(lane = threadIdx.x % 32; for lane 0 it is 0).",
        "return __popc(ballot & ((1u << lane) - 1));",
    ),
)


# ---------------------------------------------------------------- the warp's sum in every lane (02)

def warp_total_judge(case: Case) -> Optional[Mismatch]:
    x = case.data["x"].reshape(-1, LANES)
    out = case.args[1].reshape(-1, LANES)
    und = undefined_mask(case, 1, out.shape)
    exact = x.astype(np.float64).sum(axis=1)
    bound = np.zeros_like(exact) if case.data["whole"] else np.array([compare.sum_bound(r) for r in x])
    ok = np.isfinite(out) & (np.abs(out.astype(np.float64) - exact[:, None]) <= bound[:, None])
    for w in map(int, np.flatnonzero((~ok | und).any(axis=1))):
        wrong = ~ok[w] | und[w]
        expected = np.full(LANES, exact[w])
        rows = [Row("input", x[w]), Row("expected", expected, result=True),
                Row("got", out[w], defined=~und[w], wrong=wrong)]
        if not wrong[0]:
            why = ("lane 0 holds the total, the other lanes only partial sums: hand lane 0's total to every lane with "
                   "__shfl_sync(0xffffffff, v, 0)")
        else:
            why = compare.explain_sum(out[w, 0], x[w]) or "lane 0 itself is wrong: start from WarpReduceSum"
        return lane_mismatch(case, w, rows, wrong, und[w], out[w], expected,
                             lambda _: "(the sum of the warp's 32 values)", lambda *_: why)
    return None


WARP_SUM_ALL = Exercise(
    name="warp_sum_all",
    notebook="02",
    title="The warp's sum in every lane: a broadcast with __shfl_sync",
    signature="__device__ float warp_sum_all(float v)",
    contract=("All 32 lanes of a full warp call warp_sum_all, converged, each with its own value v. Every lane "
              "must return the sum of the warp's 32 values. Every lane is checked."),
    compare=compare.SUM_RULE,
    cases=segment_cases,
    judge=warp_total_judge,
    hints=(
        "WarpReduceSum from this notebook leaves the warp's total in lane 0; the other lanes end with partial sums.",
        "__shfl_sync(mask, v, srcLane) gives every calling lane the value of lane srcLane. All 32 lanes call it "
        "here, so the mask is the full one.",
        "After the five down-shuffles: return __shfl_sync(0xffffffff, v, 0);",
    ),
)
