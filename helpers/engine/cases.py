"""Configurations of the warp intrinsics, run on either backend and compared lane for lane.

The same cases serve three purposes: the randomised emulator-versus-hardware proof
(tests/gpu/test_equivalence.py), the fixed set recorded to ``data/warp_intrinsics.json`` on the H200,
and CI's check that the emulator reproduces every recorded result.

A case is a JSON-ready dict: ``op`` (one of :data:`OPS`: the rows of :mod:`helpers.engine.intrinsics`),
``dtype``, ``values`` or ``predicate`` ((n_warps, 32) lists), ``mask`` (one per warp), ``active``
((n_warps, 32) 0/1: the calling lanes), ``exited`` ((n_warps, 32) 0/1; lanes in neither are alive
elsewhere), and for shuffles ``arg`` and ``width``. Recordings made before ``exited`` existed have
none: there every lane that did not call had exited (the kernel returned before the intrinsic), and
:func:`run` reads them that way. :func:`run` returns the result as a JSON-ready dict;
:func:`mismatches` compares two results (values only where defined; the defined flags everywhere).
"""
from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from helpers.engine import intrinsics
from helpers.engine import params
from helpers.engine import warp
from helpers.engine.emulator import ShuffleResult
from helpers.engine.intrinsics import Intrinsic

SHUFFLES = intrinsics.names("shuffle")
VOTES = intrinsics.names("vote")
COLLECTIVES = intrinsics.names("collective")
OPS = intrinsics.names()
RANDOM_CASES = 64   # random cases of each vote and collective row (a shuffle's: see random_count)
_BITS = {"int32": np.uint32, "uint32": np.uint32, "float32": np.uint32, "float64": np.uint64}


def _arr(case: dict[str, Any], key: str, dtype: Any) -> np.ndarray:
    return np.asarray(case[key], dtype=dtype)


def run(case: dict[str, Any], backend: Optional[str]) -> dict[str, Any]:
    """Run one case on ``backend`` and return its result as JSON-ready lists."""
    op = case["op"]
    mask = np.asarray(case["mask"], dtype=np.uint64)
    active = _arr(case, "active", bool)
    exited = _arr(case, "exited", bool) if "exited" in case else ~active
    if op in SHUFFLES:
        values = _arr(case, "values", case["dtype"])
        r = getattr(warp, op)(values, case["arg"], case["width"], mask=mask, active=active, exited=exited,
                              backend=backend)
        return {"values": r.values.tolist(), "src_lane": r.src_lane.tolist(), "defined": r.defined.astype(int).tolist()}
    if op == "activemask":
        out = warp.activemask(active, backend=backend)
    elif op in VOTES:
        pred = _arr(case, "predicate", np.int32)
        out = getattr(warp, op)(pred, mask=mask, active=active, exited=exited, backend=backend)
    else:
        values = _arr(case, "values", case["dtype"])
        r = getattr(warp, op)(values, mask=mask, active=active, exited=exited, backend=backend)
        return {"values": r.values.astype(np.int64).tolist(), "defined": r.defined.astype(int).tolist()}
    return {"warp": np.asarray(out.values).astype(np.int64).tolist(),
            "warp_defined": np.asarray(out.defined).astype(int).tolist()}


def mismatches(case: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> int:
    """How many lanes (or warps, for votes) differ: bit for bit where defined; flags everywhere."""
    if "warp" in a:
        # recordings made before votes carried a defined flag: every recorded vote was defined
        da = np.asarray(a.get("warp_defined", [1] * len(a["warp"])), bool)
        db = np.asarray(b.get("warp_defined", [1] * len(b["warp"])), bool)
        differ = (np.asarray(a["warp"]) != np.asarray(b["warp"])) & da & db
        return int(np.sum(differ | (da != db)))
    da, db = np.asarray(a["defined"], bool), np.asarray(b["defined"], bool)
    bad = da != db
    both = da & db
    dtype = case.get("dtype", "int32")
    va = np.asarray(a["values"], dtype=dtype if case["op"] in SHUFFLES else np.int64)
    vb = np.asarray(b["values"], dtype=va.dtype)
    if case["op"] in SHUFFLES:
        va, vb = va.view(_BITS[dtype]), vb.view(_BITS[dtype])
        bad |= both & (np.asarray(a["src_lane"]) != np.asarray(b["src_lane"]))
    bad |= both & (va != vb)
    return int(bad.sum())


def _mask_and_states(rng: np.random.Generator, n_warps: int,
                     elsewhere: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mask, active, exited): a mix of the situations that matter: full warps, masks equal to the
    calling set (correct partial-warp code), random masks and calling sets (undefined reads),
    prefixes (the seed's ``lane < n`` ballot masks), full masks with exited lanes, and, with
    ``elsewhere``, lanes alive elsewhere: outside the mask (a defined call) or inside it (an
    undefined call, never launched on a GPU). Lanes that do not call have exited otherwise."""
    lane = np.arange(32)
    kind = rng.integers(0, 7 if elsewhere else 5, size=n_warps)
    active = np.ones((n_warps, 32), bool)
    mask = np.full(n_warps, params.FULL_MASK, np.uint64)
    elsewhere_lanes = np.zeros((n_warps, 32), bool)
    for w, k in enumerate(kind):
        if k == 1:  # active set == mask
            active[w] = rng.random(32) < rng.uniform(0.2, 1.0)
            mask[w] = int((active[w].astype(np.uint64) << lane.astype(np.uint64)).sum())
        elif k == 2:  # independent random mask and active set
            active[w] = rng.random(32) < rng.uniform(0.3, 1.0)
            mask[w] = int(rng.integers(0, 2**32, dtype=np.uint64))
        elif k == 3:  # prefix: lane < n
            n = int(rng.integers(1, 33))
            active[w] = lane < n
            mask[w] = (1 << n) - 1
        elif k == 4:  # full mask, some lanes exited
            active[w] = rng.random(32) < 0.85
        elif k == 5:  # mask == calling set, some of the other lanes alive elsewhere: defined
            active[w] = rng.random(32) < rng.uniform(0.3, 1.0)
            mask[w] = int((active[w].astype(np.uint64) << lane.astype(np.uint64)).sum())
            elsewhere_lanes[w] = ~active[w] & (rng.random(32) < 0.5)
        elif k == 6:  # full mask, some lanes alive elsewhere: the call is undefined
            active[w] = rng.random(32) < 0.8
            elsewhere_lanes[w] = ~active[w] & (rng.random(32) < 0.5)
    return mask, active, ~active & ~elsewhere_lanes


def _values(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """Random bit patterns (every pattern a shuffle must move exactly), finite for floats so the
    cases stay valid JSON."""
    if dtype == "float32":
        return (rng.standard_normal(shape) * 1000).astype(np.float32)
    if dtype == "float64":
        return rng.standard_normal(shape) * 1e6
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64).astype(dtype)


def random_count(row: Intrinsic) -> int:
    """How many cases :func:`random_cases` draws for ``row``: a shuffle's every width x operand (0..31)
    x dtype; :data:`RANDOM_CASES` for the others."""
    if row.family == "shuffle":
        return len(params.WIDTHS) * 32 * len(row.dtypes)
    return RANDOM_CASES


def _shuffle_cases(rng: np.random.Generator, row: Intrinsic, n_warps: int) -> Iterator[dict[str, Any]]:
    """A shuffle's cases: every width x operand x dtype; ``shfl_idx`` sometimes with one source per lane."""
    for width in params.WIDTHS:
        for arg in range(32):
            for dtype in (d.name for d in row.dtypes):
                mask, active, exited = _mask_and_states(rng, n_warps)
                a: Any = arg
                if row.name == "shfl_idx" and arg % 4 == 3:  # per-lane sources, beyond width too
                    a = rng.integers(-64, 64, size=(n_warps, 32)).tolist()
                yield {"op": row.name, "dtype": dtype, "width": width, "arg": a, "mask": mask.tolist(),
                       "active": active.astype(int).tolist(), "exited": exited.astype(int).tolist(),
                       "values": _values(rng, dtype, (n_warps, 32)).tolist()}


def _lane_cases(rng: np.random.Generator, row: Intrinsic, n_warps: int) -> Iterator[dict[str, Any]]:
    """A vote's or a collective's cases: a predicate, or int32/uint32 values of three ranges."""
    for _ in range(RANDOM_CASES):
        # __activemask is a snapshot: with lanes elsewhere it is the scheduler's business
        mask, active, exited = _mask_and_states(rng, n_warps, elsewhere=row.name != "activemask")
        case = {"op": row.name, "mask": mask.tolist(), "active": active.astype(int).tolist(),
                "exited": exited.astype(int).tolist()}
        if row.family == "vote":
            case["predicate"] = (rng.random((n_warps, 32)) < rng.uniform(0, 1)).astype(int).tolist()
        else:
            dtype = str(rng.choice([d.name for d in row.dtypes]))
            hi = int(rng.choice([4, 1000, 2**31 - 1]))
            case["dtype"] = dtype
            case["values"] = rng.integers(0, hi, size=(n_warps, 32)).astype(dtype).tolist()
        yield case


def random_cases(rng: np.random.Generator, n_warps: int = 8) -> Iterator[dict[str, Any]]:
    """:func:`random_count` cases of every row of :mod:`helpers.engine.intrinsics`, row by row in table
    order, from the one stream ``rng``: a row appended to the table adds cases after all the others,
    which stay the cases the H200 ran. Each case holds ``n_warps`` warps with their own random mask,
    active set and values."""
    for row in intrinsics.rows():
        yield from (_shuffle_cases if row.family == "shuffle" else _lane_cases)(rng, row, n_warps)


def named_cases() -> list[dict[str, Any]]:
    """The facts the notebooks quote, as cases: delta 2 at widths 32 and 16, delta 5 at width 8,
    ballot of ``lane < 20``, the seed's partial-warp ballot mask, and up/xor/idx side by side."""
    lane = np.arange(32)
    full = [params.FULL_MASK]
    ones = [[1] * 32]
    vals = [lane.tolist()]
    cases: list[dict[str, Any]] = [
        {"name": f"{op} {arg} width {w}", "op": op, "dtype": "int32", "arg": arg, "width": w,
         "mask": full, "active": ones, "values": vals}
        for op, arg, w in [("shfl_down", 2, 32), ("shfl_down", 2, 16), ("shfl_down", 5, 8), ("shfl_down", 16, 32),
                           ("shfl_up", 2, 32), ("shfl_up", 3, 8), ("shfl_xor", 1, 32), ("shfl_xor", 16, 16),
                           ("shfl_idx", 0, 32), ("shfl_idx", 3, 8)]
    ]
    cases.append({"name": "ballot lane < 20", "op": "ballot", "mask": full, "active": ones,
                  "predicate": [(lane < 20).astype(int).tolist()]})
    for n in (20, 13):
        m = (1 << n) - 1
        act = [(lane < n).astype(int).tolist()]
        none = [[0] * 32]   # in the seed's code the other lanes skip the branch: alive elsewhere
        for off in (16, 8, 4, 2, 1):
            cases.append({"name": f"seed partial warp: ballot mask lane < {n}, shfl_down {off}", "op": "shfl_down",
                          "dtype": "int32", "arg": off, "width": 32, "mask": [m], "active": act, "exited": none,
                          "values": vals})
    return cases


def fixed_cases(n_random: int = 120, seed: int = 20261130) -> list[dict[str, Any]]:
    """What ``python -m helpers.recording.record`` records: the named cases, then a seeded random sample."""
    rng = np.random.default_rng(seed)
    pool = list(random_cases(rng, n_warps=2))
    pick = rng.choice(len(pool), size=min(n_random, len(pool)), replace=False)
    return named_cases() + [pool[i] for i in sorted(pick)]


def recorded_shuffle(name: str) -> tuple[ShuffleResult, np.ndarray, dict[str, Any]]:
    """A named shuffle case from ``data/warp_intrinsics.json``: (the H200's result for warp 0, the
    input values, the recording's stamp). Raises KeyError naming the recorded cases if absent."""
    from helpers import data

    rec = data.load("warp_intrinsics")
    by_name = {c["name"]: c for c in rec["cases"] if "name" in c}
    if name not in by_name:
        raise KeyError(f"no recorded case {name!r}; recorded: {sorted(by_name)}")
    c = by_name[name]
    r = c["result"]
    result = ShuffleResult(np.asarray(r["values"][0], dtype=c["dtype"]), np.asarray(r["src_lane"][0], np.int32),
                           np.asarray(r["defined"][0], bool))
    return result, np.asarray(c["values"][0], dtype=c["dtype"]), rec["stamp"]
