"""Item 4: the intrinsic-level cases with the shuffle kernel itself running on the machine.

``helpers.engine.cases.random_cases(default_rng(20261130), n_warps=8)`` is the hardware-equivalence proof's
set: :func:`helpers.engine.cases.random_count` cases of every row of :mod:`helpers.engine.intrinsics`,
:data:`N_WARPS` warp configurations each (:func:`configurations` counts them). The GPU proof
(tests/gpu/test_equivalence.py) runs ``kernels/warp_intrinsics.cu`` on the H200 and compares it with the emulator, which defines the machine's warp instructions. Here the
same kernels run on the machine, batched (one launch per kernel instantiation and width, every warp
of every case in it), with the machine's own verdict of what is defined (``Report.undefined``), and
the result of each case is compared with the emulator's (:func:`helpers.engine.cases.mismatches`: values
bit for bit where both say defined, the defined flags everywhere). The recorded cases of
``data/warp_intrinsics.json`` are compared with the H200's results the same way.

The host side mirrors :mod:`helpers.engine.warp_cupy` (which lanes call, the per-warp answer of a vote):
only the engine differs.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from helpers.engine import cases
from helpers.engine import emulator
from helpers.engine import intrinsics
from helpers.engine import ops
from helpers.engine import params

SEED = 20261130
N_WARPS = 8
BLOCK = 256
_MODES = {r.name: r.mode for r in intrinsics.rows("shuffle")}
_VOTE_COL = {r.name: r.column for r in intrinsics.rows("vote")}
_COLL_COL = {r.name: r.column for r in intrinsics.rows("collective")}


def equivalence_cases() -> list[dict[str, Any]]:
    """The cases of the GPU equivalence proof (:data:`N_WARPS` warps each), in table order."""
    return list(cases.random_cases(np.random.default_rng(SEED), n_warps=N_WARPS))


def _kernel(expr: str) -> Any:
    from helpers.recording.proof.agreement import kernel

    return kernel(intrinsics.FILE, expr)


def _grid(n_warps: int) -> tuple[int]:
    return (-(-n_warps * 32 // BLOCK),)


def _operand(case: dict[str, Any], shape: tuple[int, int]) -> np.ndarray:
    if case["op"] == "shfl_idx":
        return params.src_lane(case["arg"], shape).reshape(shape)
    name = "lane_mask" if case["op"] == "shfl_xor" else "delta"
    return np.full(shape, params.lane_offset(case["arg"], name))


def _stack(group: Sequence[dict[str, Any]], key: str, dtype: Any) -> np.ndarray:
    return np.concatenate([np.asarray(c[key], dtype=dtype).reshape(-1, 32) for c in group])


def _states(group: Sequence[dict[str, Any]], masks: np.ndarray) -> tuple[np.ndarray, ...]:
    """(active, exited, the per-lane state array the kernels take, per-warp call defined) for a
    group of cases.

    A warp whose call is undefined (its mask names a lane alive elsewhere) is launched with no lane
    calling, as the GPU side (helpers.engine.warp_cupy) never launches such a call either; its results
    are then undefined for every lane, as the Programming Guide has it."""
    active = _stack(group, "active", bool)
    exited = np.concatenate([np.asarray(c["exited"], bool).reshape(-1, 32) if "exited" in c
                             else ~np.asarray(c["active"], bool).reshape(-1, 32) for c in group])
    state = np.where(active, emulator.CALLING, np.where(exited, emulator.EXITED, emulator.ELSEWHERE))
    ok = emulator.call_defined(masks, active, exited)
    state = np.where(ok[:, None], state, emulator.EXITED).astype(np.uint8)
    return active & ok[:, None], exited, state, ok


def _per_case(group: Sequence[dict[str, Any]], **per_warp: np.ndarray) -> list[dict[str, Any]]:
    """The group's per-warp arrays cut back into one result per case (a case has ``len(mask)``
    warps, in order), as lists; booleans as 0/1."""
    results, w = [], 0
    for c in group:
        k = len(c["mask"])
        results.append({key: (a[w:w + k].astype(int) if a.dtype == bool else a[w:w + k]).tolist()
                        for key, a in per_warp.items()})
        w += k
    return results


def _shuffles(group: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    op, dtype, width = group[0]["op"], group[0]["dtype"], group[0]["width"]
    values = _stack(group, "values", dtype)
    masks = np.concatenate([np.asarray(c["mask"], np.uint64) for c in group])
    active, exited, state, _ = _states(group, masks)
    operand = np.concatenate([_operand(c, (len(c["mask"]), 32)) for c in group])
    n_warps = values.shape[0]
    out = np.zeros(values.size, values.dtype)
    src = np.full(values.size, -1, np.int32)
    r = _kernel(f"shuffle_kernel<{ops.CTYPES[dtype]}, {_MODES[op]}>")(
        _grid(n_warps), (BLOCK,), (values.reshape(-1), operand.reshape(-1).astype(np.int32), masks.astype(np.uint32),
                                  state.reshape(-1), np.int32(width), np.int32(n_warps), out, src))
    calling = emulator.callers(masks, active)
    defined = calling & ~r.undefined[6].reshape(n_warps, 32) & ~r.undefined[7].reshape(n_warps, 32)
    verdict = emulator.shuffle(op.removeprefix("shfl_"), values, operand, width, masks,
                               _stack(group, "active", bool), exited)
    got = np.where(defined, out.reshape(n_warps, 32), np.zeros((), values.dtype))
    srcs = np.where(defined, src.reshape(n_warps, 32), verdict.src_lane)
    return _per_case(group, values=got, src_lane=srcs, defined=defined)


def _per_warp(per_lane: np.ndarray, calling: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the first calling lane's answer per warp, whether every calling lane agreed and was defined)."""
    first = np.argmax(calling, axis=1)
    val = per_lane[np.arange(per_lane.shape[0]), first]
    agree = ~(calling & ((per_lane != val[:, None]) | ~ok)).any(axis=1)
    return np.where(calling.any(axis=1), val, 0), agree


def _votes(group: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    op = group[0]["op"]
    n_warps = sum(len(c["mask"]) for c in group) if op != "activemask" else _stack(group, "active", bool).shape[0]
    if op == "activemask":   # helpers.engine.warp.activemask: every active lane calls, with the full mask
        active = _stack(group, "active", bool)
        pred = np.ones(active.shape, np.int32)
        masks = np.full(n_warps, params.FULL_MASK, np.uint64)
        state = np.where(active, emulator.CALLING, emulator.EXITED).astype(np.uint8)
        call_ok = np.ones(n_warps, bool)
    else:
        pred = _stack(group, "predicate", np.int32)
        masks = np.concatenate([np.asarray(c["mask"], np.uint64) for c in group])
        active, _, state, call_ok = _states(group, masks)
    words = intrinsics.words("vote_kernel")
    out = np.zeros(n_warps * 32 * words, np.uint32)
    r = _kernel("vote_kernel")(_grid(n_warps), (BLOCK,), (pred.reshape(-1), masks.astype(np.uint32),
                                                          state.reshape(-1), np.int32(n_warps), out))
    col = _VOTE_COL[op]
    per_lane = out.reshape(n_warps, 32, words)[:, :, col]
    ok = ~r.undefined[4].reshape(n_warps, 32, words)[:, :, col]
    calling = emulator.callers(masks, active)
    val, agree = _per_warp(per_lane, calling, ok)
    if op in ("any_sync", "all_sync"):
        val = np.where(calling.any(axis=1), val != 0, op == "all_sync").astype(np.int64)
    val = np.where(agree, val.astype(np.int64), -1)          # -1: lanes disagreed or were undefined
    val = np.where(call_ok, val, 0)                          # an undefined call: 0, flagged
    return _per_case(group, warp=val, warp_defined=call_ok)


def _collectives(group: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    op, dtype = group[0]["op"], group[0]["dtype"]
    values = _stack(group, "values", dtype)
    masks = np.concatenate([np.asarray(c["mask"], np.uint64) for c in group])
    active, _, state, _ = _states(group, masks)
    n_warps = values.shape[0]
    words = intrinsics.words("match_reduce_kernel")
    out = np.zeros(values.size * words, values.dtype)
    r = _kernel(f"match_reduce_kernel<{ops.CTYPES[dtype]}>")(_grid(n_warps), (BLOCK,), (
        values.reshape(-1), masks.astype(np.uint32), state.reshape(-1), np.int32(n_warps), out))
    col = _COLL_COL[op]
    got = out.reshape(n_warps, 32, words)[:, :, col]
    if op == "match_any" and got.dtype == np.int32:
        got = got.view(np.uint32)
    calling = emulator.callers(masks, active)
    defined = calling & ~r.undefined[4].reshape(n_warps, 32, words)[:, :, col]
    vals = np.where(defined, got, 0).astype(np.int64)
    return _per_case(group, values=vals, defined=defined)


def _group_key(c: dict[str, Any]) -> tuple:
    if c["op"] in _MODES:
        return ("shuffle", c["op"], c["dtype"], c["width"])
    if c["op"] in _VOTE_COL:
        return ("vote", c["op"])
    return ("collective", c["op"], c["dtype"])


def run_on_machine(case_list: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every case's result (as :func:`helpers.engine.cases.run` shapes it) with warp_intrinsics.cu on the machine."""
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(case_list):
        groups.setdefault(_group_key(c), []).append(i)
    out: list[Optional[dict[str, Any]]] = [None] * len(case_list)
    for key, idx in groups.items():
        group = [case_list[i] for i in idx]
        fn = {"shuffle": _shuffles, "vote": _votes, "collective": _collectives}[key[0]]
        for i, res in zip(idx, fn(group)):
            out[i] = res
    return out  # type: ignore[return-value]


def compare(case_list: Sequence[dict[str, Any]], reference: Sequence[dict[str, Any]]) -> list[tuple[int, str, int]]:
    """[(case index, op, mismatching lanes or warps)] of the machine against ``reference`` results."""
    got = run_on_machine(case_list)
    bad = []
    for i, (c, g, ref) in enumerate(zip(case_list, got, reference)):
        n = cases.mismatches(c, g, ref)
        if n:
            bad.append((i, c.get("name", c["op"]), n))
    return bad


def configurations(case_list: Sequence[dict[str, Any]]) -> int:
    """Warp configurations in the cases (one per warp of each case)."""
    return sum(len(c["mask"]) for c in case_list)
