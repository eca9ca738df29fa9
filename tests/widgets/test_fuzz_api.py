"""Property-based fuzz tests of every public entry point (issue 15).

Each test throws good and bad input at one entry point and checks the series' promise: either a
correct result or a short ValueError naming the parameter; never another exception, never a
silently wrong number. Where the input is good, the answer is checked against a plain per-lane
reference written from the Programming Guide's rules (not against the emulator's own code).
Budgets are small and fixed (tests/fuzz_settings.py) so the whole file runs in seconds.
"""
from __future__ import annotations

import numpy as np
import pytest
from fuzz_settings import (DTYPES, LANES, actives, any_values, backends, call, check_message, fuzz,
                           int_lane_arrays, junk, lane_arrays, masks, mixed)
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from helpers.topics import ballot_uses
from helpers.topics import block_reduce as br
from helpers.engine import emulator
from helpers.engine import intrinsics
from helpers.widgets import expr
from helpers.engine import params
from helpers.topics import reduce as R
from helpers.topics import reduce_maps
from helpers.engine import warp
from helpers.topics import warp_reduce as wr
from helpers.widgets import intrinsics as widgets

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix inputs
EMU = "emulator"
WIDTHS = st.sampled_from([1, 2, 4, 8, 16, 32])
WARP_NAMES = ("values", "predicate", "delta", "lane_mask", "src_lane", "width", "mask", "active", "backend",
              "WARPLAB_BACKEND")


# ---------------------------------------------------------------- a plain reference, lane by lane

def _source(mode: str, lane: int, b: int, width: int) -> int:
    """The lane ``lane`` reads (Programming Guide, Warp Shuffle Functions); its own when out of reach."""
    base, b = lane - lane % width, b & 31
    if mode == "down":
        return lane + b if lane % width + b < width else lane
    if mode == "up":
        return lane - b if lane % width - b >= 0 else lane
    if mode == "xor":
        return lane ^ b if (lane ^ b) < base + width else lane
    return base + (b % width)


def _calling(mask: int, active: np.ndarray) -> np.ndarray:
    return np.array([bool(active[lane]) and bool(mask >> lane & 1) for lane in range(LANES)])


# ---------------------------------------------------------------- helpers.engine.warp

SHUFFLES = {"down": warp.shfl_down, "up": warp.shfl_up, "xor": warp.shfl_xor, "idx": warp.shfl_idx}


@fuzz(60)
@given(mode=st.sampled_from(sorted(SHUFFLES)), values=any_values(), operand=mixed(st.integers(-3, 40)),
       width=mixed(st.sampled_from([1, 2, 4, 8, 16, 32, 3, 0, 64])), mask=masks(), active=actives(),
       backend=backends())
def test_shuffles_refuse_or_answer(mode, values, operand, width, mask, active, backend) -> None:
    r = call(SHUFFLES[mode], values, operand, width, mask, active, backend, names=WARP_NAMES, runtime_ok=True)
    if r is not None:
        shape = np.shape(values) if isinstance(values, np.ndarray) else np.asarray(values).shape
        assert r.values.shape == r.src_lane.shape == r.defined.shape == shape[-2:] if len(shape) == 2 else shape
        assert not np.asarray(r.values)[~r.defined].any()          # undefined lanes hold 0, never a number


@fuzz(80)
@given(mode=st.sampled_from(sorted(SHUFFLES)), values=int_lane_arrays(max_warps=1).map(np.atleast_2d),
       operand=st.integers(0, 31), width=WIDTHS, mask=st.integers(0, 0xFFFFFFFF), active=hnp.arrays(bool, (1, LANES)))
def test_shuffles_match_the_programming_guide(mode, values, operand, width, mask, active) -> None:
    # the lanes that do not call have exited (lanes alive elsewhere: tests/engine/test_emulator.py)
    r = SHUFFLES[mode](values, operand, width, mask, active, backend=EMU, exited=~active)
    calling = _calling(mask, active[0])
    for lane in range(LANES):
        src = _source(mode, lane, operand, width)
        defined = calling[lane] and calling[src]
        assert r.defined[0, lane] == defined, lane
        # an active lane outside the mask gets the lane it would read (its result is undefined)
        assert r.src_lane[0, lane] == (src if active[0, lane] else -1), lane
        assert r.values[0, lane] == (values[0, src] if defined else 0), lane


VOTES = {"ballot": warp.ballot, "any": warp.any_sync, "all": warp.all_sync}


@fuzz(50)
@given(kind=st.sampled_from(sorted(VOTES)), pred=st.one_of(hnp.arrays(bool, (LANES,)), any_values()), mask=masks(),
       active=actives(), backend=backends())
def test_votes_refuse_or_answer(kind, pred, mask, active, backend) -> None:
    got = call(VOTES[kind], pred, mask, active, backend, names=WARP_NAMES, runtime_ok=True)
    if got is not None and np.shape(pred) == (LANES,) and params.is_integer(mask) and np.asarray(pred).dtype.kind in "biu":
        calling = _calling(int(mask), np.ones(LANES, bool) if active is None else np.asarray(active))
        bits = calling & (np.asarray(pred) != 0)
        want = {"ballot": sum(1 << lane for lane in range(LANES) if bits[lane]), "any": bits.any(),
                "all": bool(np.all(bits | ~calling))}[kind]
        # lanes outside ``active`` are alive elsewhere: named in the mask, they make the call undefined
        elsewhere = ~(np.ones(LANES, bool) if active is None else np.asarray(active))
        named = np.array([(int(mask) >> lane) & 1 for lane in range(LANES)], bool)
        assert bool(got.defined) == (not (elsewhere & named).any())
        if got.defined:
            assert int(got.value) == int(want)


@fuzz(40)
@given(active=actives((LANES,)), mask=masks())
def test_activemask_and_syncwarp_refuse_or_answer(active, mask) -> None:
    got = call(warp.activemask, active, EMU, names=("active",))
    if got is not None and np.shape(active) == (LANES,):
        assert got.value == sum(1 << lane for lane in range(LANES) if active[lane])
    ok = call(warp.syncwarp, mask, active, names=("mask", "active"))
    if ok is not None and np.shape(active) == (LANES,) and params.is_integer(mask):
        named = np.array([(int(mask) >> lane) & 1 for lane in range(LANES)], bool)
        defined_call = not (named & ~np.asarray(active)).any()   # lanes outside active are elsewhere
        assert ok.tolist() == (_calling(int(mask), active) & defined_call).tolist()


# every collective row of helpers/engine/intrinsics.py, by kind; a new one needs its plain reference below
COLLECTIVES = {r.kind: getattr(warp, r.name) for r in intrinsics.rows("collective")}


@fuzz(50)
@given(kind=st.sampled_from(sorted(COLLECTIVES)), values=st.one_of(int_lane_arrays(), any_values()), mask=masks(),
       active=actives(), backend=backends())
def test_collectives_refuse_or_answer(kind, values, mask, active, backend) -> None:
    call(COLLECTIVES[kind], values, mask, active, backend, names=WARP_NAMES, runtime_ok=True)


@fuzz(60)
@given(kind=st.sampled_from(sorted(COLLECTIVES)), values=int_lane_arrays(max_warps=1).map(np.atleast_2d),
       mask=st.integers(0, 0xFFFFFFFF), active=hnp.arrays(bool, (1, LANES)))
def test_collectives_match_a_plain_reference(kind, values, mask, active) -> None:
    r = COLLECTIVES[kind](values, mask, active, backend=EMU, exited=~active)   # the others have exited
    calling = _calling(mask, active[0])
    members = [int(v) for v, c in zip(values[0], calling) if c]
    for lane in range(LANES):
        assert r.defined[0, lane] == calling[lane]
        if not calling[lane]:
            assert r.values[0, lane] == 0
            continue
        if kind == "match_any":
            want = sum(1 << j for j in range(LANES) if calling[j] and values[0, j] == values[0, lane])
        elif kind == "add":
            want = np.array(sum(members) & 0xFFFFFFFF, np.uint64).astype(np.uint32).view(values.dtype)
        elif kind in ("min", "max"):
            want = min(members) if kind == "min" else max(members)
        else:
            pytest.fail(f"no plain reference for the collective {kind!r}")
        assert int(r.values[0, lane]) == int(want), lane


@fuzz(6)
@given(values=int_lane_arrays(max_warps=9).map(np.atleast_2d), delta=st.integers(0, 31),
       mask=hnp.arrays("uint32", st.just(9)) | st.just(params.FULL_MASK))
def test_work_in_chunks_changes_nothing(values, delta, mask) -> None:
    """The emulator splits big inputs into chunks of warps: a tiny chunk must give identical answers."""
    n = values.shape[0]
    mask = np.broadcast_to(mask, (9,))[:n] if np.ndim(mask) else mask
    active = np.arange(n * LANES).reshape(n, LANES) % 7 != 3
    whole = (warp.shfl_down(values, delta, 8, mask, active, EMU), warp.match_any(values, mask, active, EMU),
             warp.ballot(values > 0, mask, active, EMU), wr.warp_reduce(values, "max", 8, backend=EMU))
    saved = params.CHUNK_WARPS, emulator.CHUNK_WARPS
    try:
        params.CHUNK_WARPS = emulator.CHUNK_WARPS = 2
        parts = (warp.shfl_down(values, delta, 8, mask, active, EMU), warp.match_any(values, mask, active, EMU),
                 warp.ballot(values > 0, mask, active, EMU), wr.warp_reduce(values, "max", 8, backend=EMU))
    finally:
        params.CHUNK_WARPS, emulator.CHUNK_WARPS = saved
    for a, b in zip(whole, parts):
        for name in ("values", "src_lane", "defined"):
            if hasattr(a, name):
                assert np.array_equal(getattr(a, name), getattr(b, name)), name
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b)


# ---------------------------------------------------------------- helpers.topics.warp_reduce

OPS = st.sampled_from(wr.OPS)
TREE_NAMES = ("values", "op", "width", "tree", "n_valid", "partial", "backend", "WARPLAB_BACKEND", "dtype")


@fuzz(60)
@given(values=any_values(), op=mixed(OPS), width=mixed(WIDTHS), tree=mixed(st.sampled_from(wr.TREES)),
       n_valid=st.one_of(st.none(), st.integers(-1, 33), junk), partial=mixed(st.sampled_from(wr.PARTIALS)),
       backend=backends())
def test_warp_reduce_refuses_or_answers(values, op, width, tree, n_valid, partial, backend) -> None:
    r = call(wr.warp_reduce, values, op, width, tree, n_valid, partial, backend, names=TREE_NAMES, runtime_ok=True)
    if r is not None and partial == "pad" and r.values.dtype.kind in "iu":
        assert r.correct                         # integers: the padded trees are exact, every time


@fuzz(40)
@given(values=lane_arrays(max_warps=2), op=OPS, width=WIDTHS, tree=st.sampled_from(wr.TREES),
       n_valid=st.integers(1, 32), partial=st.sampled_from(wr.PARTIALS))
def test_warp_reduce_trace_ends_where_warp_reduce_does(values, op, width, tree, n_valid, partial) -> None:
    """The result (no trace, chunked) and the trace's last step come from one replay: they agree."""
    assume(n_valid <= width and not (op in wr.BITWISE_OPS and values.dtype.kind == "f"))
    assume(partial == "pad" or (tree == "down" and width == 32))
    t = wr.warp_reduce_trace(values, op, width, tree, n_valid, partial, EMU)
    r = wr.warp_reduce(values, op, width, tree, n_valid, partial, EMU)
    d = r.defined
    held = t.held[-1]
    assert np.array_equal(np.where(d, held, 0), np.where(d, r.values, 0), equal_nan=values.dtype.kind == "f")
    if partial == "pad" and values.dtype.kind in "iu":
        assert r.correct


@fuzz(30)
@given(values=st.one_of(lane_arrays(max_warps=3), any_values()), backend=backends())
def test_warp_reduce_sum_refuses_or_answers(values, backend) -> None:
    got = call(wr.warp_reduce_sum, values, backend, names=TREE_NAMES, runtime_ok=True)
    if got is not None and backend == EMU:
        v = np.atleast_2d(params.values(values))
        want = wr.warp_reduce(v, "sum", backend=EMU).values[:, 0]
        assert np.array_equal(np.atleast_1d(got), want, equal_nan=True)
        if v.dtype.kind in "iu":
            assert np.array_equal(np.atleast_1d(got), wr.reference(v, "sum"))
    call(wr.warp_reduce_sum_trace, values, backend, names=TREE_NAMES, runtime_ok=True)


@fuzz(30)
@given(values=st.one_of(lane_arrays(max_warps=2), any_values()), op=mixed(OPS),
       method=mixed(st.sampled_from(wr.LIBRARY_METHODS)), backend=backends())
def test_library_and_seed_reduces_refuse_or_answer(values, op, method, backend) -> None:
    names = (*TREE_NAMES, "method")
    r = call(wr.library_reduce, values, op, method, backend, names=names, runtime_ok=True)
    if r is not None and r.values.dtype.kind in "iu":
        assert r.correct
    s = call(wr.seed_warp_reduce, values, op, backend, names=names, runtime_ok=True)
    if s is not None and s.values.dtype.kind in "iu":
        assert s.correct
    out = call(wr.compare_methods, values, op, backend, names=names, runtime_ok=True)
    if out is not None and np.asarray(values).dtype.kind in "iu":
        assert all(m.correct for m in out.values())


finite_f32 = st.floats(-2.0**100, 2.0**100, width=32)


@fuzz(40)
@given(values=st.one_of(hnp.arrays("float32", (LANES,), elements=finite_f32), hnp.arrays("float32", (LANES,)),
                        any_values()),
       tree=mixed(st.sampled_from(wr.TREES)))
def test_float_order_refuses_or_compares(values, tree) -> None:
    f = call(wr.float_order, values, tree, EMU, names=("values", "tree"))
    if f is not None:
        assert f.ulps >= 0 and np.isfinite(f.tree) and np.isfinite(f.sequential) and np.isfinite(f.exact)
        batch = wr.float_order_batch(np.asarray(values)[None, :], tree, EMU)
        assert batch.ulps[0] == f.ulps and batch.exact[0] == f.exact
    elif isinstance(values, np.ndarray) and values.dtype == np.float32 and values.shape == (LANES,) and tree in wr.TREES:
        assert not np.isfinite(values).all() or np.abs(values.astype(np.float64)).sum() > 2.0**127


@fuzz(25)
@given(values=hnp.arrays("float32", st.tuples(st.integers(1, 4), st.just(LANES)),
                         elements=st.floats(-2.0**126, 2.0**126, width=32) | st.sampled_from([0.0, 2.0**-149, -0.0, 2.0**-127])))
def test_float_order_batch_exact_is_fsum(values) -> None:
    import math

    b = call(wr.float_order_batch, values, "down", EMU, names=("values",))
    if b is not None:
        assert b.exact.tolist() == [math.fsum(row) for row in values.astype(np.float64).tolist()]
        assert (b.ulps >= 0).all()


# ---------------------------------------------------------------- helpers.topics.block_reduce

block_shapes = st.tuples(st.integers(1, 40), st.integers(1, 4))


def _block_values() -> st.SearchStrategy:
    good = block_shapes.flatmap(lambda b: st.sampled_from(DTYPES).flatmap(lambda dt: hnp.arrays(dt, (b[1], b[0]))))
    ints = st.lists(st.integers(-2**40, 2**40), min_size=1, max_size=64)
    return st.one_of(good, good, ints, st.lists(st.booleans(), min_size=1, max_size=40), any_values(), junk)


BLOCK_NAMES = ("values", "block", "op", "kind", "version", "broadcast", "backend", "WARPLAB_BACKEND", "dtype", "seed")


@fuzz(60)
@given(values=_block_values(), block=st.one_of(st.none(), block_shapes, junk), op=mixed(OPS),
       kind=mixed(st.sampled_from(br.KINDS)), version=mixed(st.sampled_from(br.VERSIONS)),
       broadcast=st.one_of(st.booleans(), junk), backend=backends())
def test_block_reduce_refuses_or_answers(values, block, op, kind, version, broadcast, backend) -> None:
    r = call(br.block_reduce, values, block, op, kind, version, broadcast, backend, names=BLOCK_NAMES,
             runtime_ok=True)
    if r is not None and version == "fixed" and r.values.dtype.kind in "iu":
        assert r.correct                                   # the fixed code is exact for integers
        flat = np.asarray(values).reshape(-1)
        assert r.expected.size == flat.size


@fuzz(20)
@given(first=_block_values(), second=_block_values(), op=mixed(OPS), barrier=st.booleans())
def test_back_to_back_refuses_or_answers(first, second, op, barrier) -> None:
    r = call(br.back_to_back, first, second, None, op, barrier, names=BLOCK_NAMES + ("first", "second"))
    if r is not None and barrier and np.asarray(first).dtype.kind in "iu":
        assert r.first_defined and r.second_defined


# ---------------------------------------------------------------- helpers.topics.reduce (host side; no GPU here)

versions = mixed(st.sampled_from(R.ALL_VERSIONS))
blocks = mixed(st.sampled_from(R.BLOCKS) | st.sampled_from(R.BLOCKS).map(np.int64) | st.integers(-1, 2000))
sizes = mixed(st.integers(-2, 2**40) | st.integers(1, 10**6).map(np.int64))
REDUCE_NAMES = ("version", "block", "n", "unroll", "resident_blocks", "x_abs_sum", "first_grid", "x")


@fuzz(80)
@given(version=versions, n=sizes, block=blocks, resident=st.one_of(st.none(), st.integers(-1, 10**4), junk),
       unroll=mixed(st.sampled_from(R.UNROLLS)))
def test_grids_refuse_or_answer(version, n, block, resident, unroll) -> None:
    grids = call(R.pass_grids, version, n, block, resident, unroll, names=REDUCE_NAMES)
    if grids is not None:
        assert grids[-1] == 1 or version == "onepass"
        assert all(isinstance(g, int) and g >= 1 for g in grids)
        g = R.grid_size(version, n, block, resident, unroll)
        if not R.SPECS[version].grid_stride:
            assert g * R.tile_size(version, block, unroll) >= n
    for fn, args in ((R.check_block, (block,)), (R.check_n, (n,)), (R.check_unroll, (unroll,)), (R.seed_grid, (n,)),
                     (R.tile_size, (version, block, unroll)), (R.kernel_name, (version, block)),
                     (R.check_version, (version,)), (R.uses_unroll, (version,))):
        call(fn, *args, names=REDUCE_NAMES)


@fuzz(60)
@given(x_abs_sum=mixed(st.floats(0, 1e30) | st.floats()), n=sizes, version=versions, block=blocks,
       first_grid=st.one_of(st.none(), st.integers(-1, 10**4), junk))
def test_error_bound_refuses_or_bounds(x_abs_sum, n, version, block, first_grid) -> None:
    b = call(R.error_bound, x_abs_sum, n, version, block, first_grid, names=REDUCE_NAMES)
    if b is not None:
        assert np.isfinite(b) and b >= 0


@fuzz(20)
@given(version=versions, n=sizes, block=blocks, unroll=mixed(st.sampled_from(R.UNROLLS)))
def test_plans_refuse_or_need_a_gpu(version, n, block, unroll) -> None:
    from helpers.engine.backend import detect

    if detect().usable:
        pytest.skip("a GPU is usable here: plans would launch kernels")
    call(R.make_plan, version, n, block, unroll, names=REDUCE_NAMES, runtime_ok=True)
    call(R.check_array, np.ones(3, np.float32) if isinstance(n, int) and n == 3 else version, names=REDUCE_NAMES)


@fuzz(40)
@given(version=mixed(st.sampled_from(reduce_maps.TREE_VERSIONS)), block=blocks)
def test_reduce_maps_refuse_or_map(version, block) -> None:
    names = ("version", "block")
    for fn in (reduce_maps.tree_steps, reduce_maps.active_lanes, reduce_maps.bank_conflict_degree,
               reduce_maps.shared_traffic, reduce_maps.first_step, reduce_maps.barriers, reduce_maps.lane_slots):
        call(fn, version, block, names=names)


# ---------------------------------------------------------------- helpers.widgets.expr and the widgets' inputs

TOKENS = ["lane", "value", "warp", "n", "0", "1", "3", "32", "2**70", "-", "+", "*", "//", "%", "**", "&", "|", "^",
          "~", "<<", ">>", "==", "!=", "<", ">=", " and ", " or ", "not ", "(", ")", " if ", " else ", "True", "1.5",
          "__import__", ".", "[", "]", ",", "lambda", "'a'", "/", "9**9**9", "1e308", "nan"]


@fuzz(120)
@given(text=st.one_of(st.lists(st.sampled_from(TOKENS), max_size=12).map("".join), st.text(max_size=40), junk),
       names=st.fixed_dictionaries({}, optional={"lane": st.just(np.arange(LANES)), "value": int_lane_arrays(max_warps=1),
                                                 "n": st.integers(-5, 40) | junk, "warp": st.integers(0, 3)}))
def test_expressions_refuse_or_evaluate(text, names) -> None:
    out = call(expr.evaluate, text, names=(), **names)
    if out is not None:
        assert out.dtype.kind in "bif"
        assert out.shape == np.broadcast_shapes(*(np.shape(v) for v in names.values())) if names else out.shape == ()


@fuzz(120)
@given(text=st.one_of(st.integers(0, 0xFFFFFFFF).map(lambda m: f"0x{m:08X}"), st.integers(0, 2**40).map(hex),
                      st.text(alphabet="0123456789abcdefxX_ -\u0661\u0967\uff11", max_size=14), st.text(max_size=12),
                      junk))
def test_parse_mask_refuses_or_reads_hex(text) -> None:
    m = call(widgets.parse_mask, text, names=("mask",))
    if m is not None:
        assert 0 <= m <= 0xFFFFFFFF
        cleaned = text.strip().replace("_", "")
        assert cleaned.isascii() and int(cleaned, 16) == m       # read as exactly the hex number typed


@fuzz(40)
@given(kind=mixed(st.sampled_from(widgets.ACTIVE_KINDS)), n=mixed(st.integers(-5, 40)), seed=mixed(st.integers(0, 99)),
       pkind=mixed(st.sampled_from(widgets.PREDICATE_KINDS)), k=mixed(st.integers(-1, 40)),
       expression=st.sampled_from(["lane < n", "value % 2", "lane //", ""]) | junk)
def test_widget_inputs_refuse_or_answer(kind, n, seed, pkind, k, expression) -> None:
    names = ("active", "n", "seed", "k", "predicate", "expression")
    act = call(widgets.active_lanes, kind, n, seed, names=names)
    if act is not None:
        assert act.shape == (LANES,) and act.dtype == bool
    values = call(widgets.ballot_values, seed, names=names)
    if values is not None:
        pred = call(widgets.ballot_predicate, pkind, n=n, k=k, seed=seed, expression=expression, values=values,
                    names=names)
        if pred is not None:
            assert pred.shape == (LANES,) and pred.dtype == bool


# ---------------------------------------------------------------- helpers.topics.ballot_uses

@fuzz(40)
@given(pred=st.one_of(hnp.arrays(bool, (LANES,)), any_values()), values=st.one_of(
       hnp.arrays("float32", st.integers(1, 100)), junk, any_values()), threshold=mixed(st.floats(-2, 2)),
       x=st.one_of(st.integers(0, 0xFFFFFFFF), hnp.arrays("uint32", 5), junk))
def test_ballot_uses_refuse_or_answer(pred, values, threshold, x) -> None:
    e = call(ballot_uses.elect, pred, EMU, names=("predicate", "backend"))
    if e is not None:
        assert e.leader == (int(np.flatnonzero(pred)[0]) if np.any(pred) else -1)
    c = call(ballot_uses.compact, values, threshold, EMU, names=("values", "threshold"))
    if c is not None:
        kept = np.asarray(values, np.float32)
        assert np.array_equal(np.sort(c.kept), np.sort(kept[kept > threshold]))
    for fn in (ballot_uses.popc, ballot_uses.ffs):
        call(fn, x, names=("x",))
