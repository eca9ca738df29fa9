"""Regression tests for issue 15: one group per finding (bad input, scale, responsiveness).

Each test names the finding it pins down. The property-based fuzz tests that keep the whole class
of bug fixed are in tests/widgets/test_fuzz_api.py and tests/widgets/test_fuzz_views.py.
"""
from __future__ import annotations

import os
import time
import tracemalloc

import numpy as np
import pytest

from helpers.engine import backend
from helpers.topics import ballot_uses
from helpers.topics import block_reduce as br
from helpers.engine import emulator
from helpers.widgets import expr
from helpers.engine import params
from helpers.topics import reduce as R
from helpers.topics import reduce_maps
from helpers.engine import trace
from helpers.widgets import reduce as WR
from helpers.engine import warp
from helpers.topics import warp_reduce as wr
from helpers.widgets import intrinsics as widgets
from helpers.viz import ladder as F
from helpers.widgets import reduce as W

EMU = "emulator"
LANE = np.arange(32)

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix inputs


# ---------------------------------------------------------------- 1. scale

def _peak(fn):
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_1_match_any_works_in_chunks_with_bounded_memory() -> None:
    n = 3 * params.CHUNK_WARPS + 5                     # several chunks, and a ragged last one
    v = np.random.default_rng(0).integers(0, 4, (n, 32)).astype(np.int32)
    r, peak = _peak(lambda: warp.match_any(v, backend=EMU))
    result_bytes = r.values.nbytes + r.defined.nbytes
    # (n, 32, 32) temporaries would be 32x the input; chunks keep the extra to a few MB
    assert peak - result_bytes < v.nbytes + 8 * 2**20, (peak, result_bytes)
    # same answers as one small call per warp
    for w in (0, params.CHUNK_WARPS, n - 1):
        assert np.array_equal(r.values[w], warp.match_any(v[w], backend=EMU).values)


@pytest.mark.slow
def test_1_results_keep_no_trace_and_stay_within_twice_the_input() -> None:
    n = 16 * params.CHUNK_WARPS      # many launches: what one launch allocates is small beside the input
    v = np.random.default_rng(1).integers(-100, 100, (n, 32)).astype(np.int32)
    for fn in (lambda: wr.warp_reduce(v, backend=EMU), lambda: wr.warp_reduce_sum(v, backend=EMU),
               lambda: wr.float_order_batch(v.astype(np.float32), backend=EMU)):
        _, peak = _peak(fn)
        assert peak <= 2 * v.nbytes, peak / v.nbytes
    assert np.array_equal(wr.warp_reduce_sum(v, backend=EMU), wr.reference(v, "sum"))


def _owned_bytes(*arrays: np.ndarray) -> int:
    """Bytes the arrays hold of their own (a broadcast view of one row or column holds almost none)."""
    bases = {id(a.base if a.base is not None else a): a.base if a.base is not None else a for a in arrays}
    return sum(b.nbytes for b in bases.values())


def test_1_shuffles_keep_what_every_warp_shares_as_one_row() -> None:
    n = 3 * params.CHUNK_WARPS + 5
    v = np.random.default_rng(4).integers(-100, 100, (n, 32)).astype(np.int32)
    r = warp.shfl_down(v, 3, backend=EMU)
    assert r.src_lane.dtype == np.int8 and r.src_lane.strides[0] == r.defined.strides[0] == r.state.strides[0] == 0
    assert _owned_bytes(r.src_lane, r.defined, r.state) < 1024 and r.defined.all()
    src = v & 31
    r = warp.shfl_idx(v, src, backend=EMU)              # one source per lane: int8, a quarter of the values
    assert r.src_lane.nbytes == v.nbytes // 4 and np.array_equal(r.values, np.take_along_axis(v, src, axis=1))
    # a chunk that is not converged after converged ones: the rows become per-warp arrays, the same answers
    active = np.ones((n, 32), bool)
    active[-1, 5] = False
    r = warp.shfl_down(v, 1, active=active, exited=~active, backend=EMU)
    one = warp.shfl_down(v[-1], 1, active=active[-1], exited=~active[-1], backend=EMU)
    assert r.defined[:-1].all() and np.array_equal(r.defined[-1], one.defined)
    assert np.array_equal(r.src_lane[-1], one.src_lane) and (r.src_lane[0] == np.minimum(np.arange(32) + 1, 31)).all()
    assert r.state[-1, 5] == emulator.EXITED and (r.state[:-1] == emulator.CALLING).all()


def test_1_compare_methods_keeps_each_answer_once() -> None:
    v = np.random.default_rng(5).integers(-100, 100, (2048, 32)).astype(np.int32)
    res = wr.compare_methods(v, backend=EMU)
    assert len({id(r.expected) for r in res.values()}) == 1               # one reference for all methods
    arrays = [a for r in res.values() for a in (r.lane_values, r.defined, r.holders, r.expected)]
    # the shuffle-down tree's lanes (every lane holds its own partial) and a column per other method
    assert _owned_bytes(*arrays) <= 1.25 * v.nbytes, _owned_bytes(*arrays) / v.nbytes
    cub = res["cub"]
    assert cub.lane_values.shape == (2048, 1) and cub.values.shape == (2048, 32)
    assert (cub.values[:, 1:] == 0).all() and not cub.defined[:, 1:].any() and cub.correct
    assert np.array_equal(cub.result[:, 0], wr.reference(v, "sum"))


def test_1_sizes_beyond_the_limits_are_refused_with_the_limit() -> None:
    too_many = np.broadcast_to(np.int32(1), (params.MAX_WARPS + 1, 32))     # no memory: a broadcast view
    with pytest.raises(ValueError, match=r"at most MAX_WARPS = 2,097,152"):
        warp.ballot(too_many > 0, backend=EMU)
    with pytest.raises(ValueError, match=r"at most MAX_WARPS"):
        wr.warp_reduce(too_many, backend=EMU)
    big_trace = np.broadcast_to(np.int32(1), (trace.MAX_TRACE_WARPS + 1, 32))
    for fn in (wr.warp_reduce_trace, wr.warp_reduce_sum_trace):
        with pytest.raises(ValueError, match=r"at most MAX_TRACE_WARPS = 16,384 warps"):
            fn(big_trace, backend=EMU)
    wr.warp_reduce_trace(np.ones((trace.MAX_TRACE_WARPS, 32), np.int32)[:4], backend=EMU)   # small: fine


def test_1_many_warps_in_seconds() -> None:
    """2^17 warps as a smoke test with a generous bound (scripts/bench_scale.py measures 10^6)."""
    if os.environ.get("WARPLAB_SKIP_SLOW"):
        pytest.skip("WARPLAB_SKIP_SLOW is set")
    v = np.random.default_rng(2).integers(-9, 9, (2**17, 32)).astype(np.int32)
    t = time.process_time()
    got = wr.warp_reduce_sum(v, backend=EMU)
    # the real kernel on the SIMT machine, in bounded launches: about 1.1 us of CPU a warp
    # (scripts/bench_scale.py, 10^6 warps, 2026-12-04)
    assert time.process_time() - t < 30
    assert np.array_equal(got, v.sum(axis=1, dtype=np.int64).astype(np.int32))


def test_1_emulator_packs_and_unpacks_bits_like_the_definition() -> None:
    masks = np.array([0, 1, 0x80000000, 0xFFFFFFFF, 0x12345678], np.uint32)
    bits = emulator.mask_bits(masks)
    assert bits.tolist() == [[bool(m >> l & 1) for l in range(32)] for m in masks.tolist()]
    assert emulator.pack_bits(bits).tolist() == masks.tolist()
    assert int(emulator.pack_bits(bits[3])) == 0xFFFFFFFF          # one warp: a scalar


# ---------------------------------------------------------------- 2. silently wrong numbers

@pytest.mark.parametrize("values", [[3_000_000_000] * 64, [2**40 + 1] * 64, [-(2**31) - 1] + [0] * 63])
def test_2_block_reduce_refuses_python_ints_outside_int32(values) -> None:
    with pytest.raises(ValueError, match=r"values holds the integer .* outside int32's range"):
        br.block_reduce(values)
    with pytest.raises(ValueError, match=r"outside int32's range"):
        warp.reduce_add(values[:32], backend=EMU)              # the warp API: the same check, shared


def test_2_block_reduce_of_uint32_is_right() -> None:
    r = br.block_reduce(np.full(64, 3_000_000_000, np.uint32))
    assert r.correct and int(r.result) == (64 * 3_000_000_000) % 2**32


def test_2_masked_arrays_are_refused_everywhere() -> None:
    m = np.ma.masked_array(np.arange(32, dtype=np.int32), mask=[True] + [False] * 31)
    for fn in (wr.warp_reduce_sum, wr.warp_reduce, warp.reduce_add, br.block_reduce,
               lambda v: warp.shfl_down(v, 1)):
        with pytest.raises(ValueError, match="not a masked array"):
            fn(m)


def test_2_nan_results_match_nan_references() -> None:
    v = np.full(32, np.nan, np.float32)
    assert wr.warp_reduce(v, backend=EMU).correct
    assert all(r.correct for r in wr.compare_methods(v, backend=EMU).values())
    assert br.block_reduce(np.full(64, np.nan, np.float32)).correct
    lines = W.result_lines(wr.warp_reduce(v, backend=EMU))
    assert "correct" in lines and "step(s)" not in lines
    f = np.ones(32, np.float32)
    f[3] = np.inf
    f[4] = -np.inf                                              # inf - inf: NaN on both sides
    assert wr.warp_reduce(f, backend=EMU).correct


def test_2_one_sided_inf_is_not_called_a_rounding_order() -> None:
    v = np.zeros(32, np.float32)
    v[[0, 16]], v[[1, 17]] = 3e38, -3e38      # the first step overflows (inf, -inf, then NaN); NumPy's sum is 0
    r = wr.warp_reduce(v, backend=EMU)
    assert not r.correct
    assert "inf or NaN on one side only" in W.result_lines(r)


@pytest.mark.parametrize("bad, words", [(np.nan, "must be finite"), (np.inf, "must be finite"),
                                        (3e38, r"sum\(\|values\|\) <= 2\*\*127")])
def test_2_float_order_refuses_what_it_cannot_compare(bad, words) -> None:
    v = np.ones(32, np.float32)
    v[5] = bad
    if bad == 3e38:
        v[:] = bad
    with pytest.raises(ValueError, match=words):
        wr.float_order(v, backend=EMU)
    with pytest.raises(ValueError, match=words + ".*warp 1" if bad != 3e38 else words):
        wr.float_order_batch(np.stack([np.ones(32, np.float32), v]), backend=EMU)


def test_2_float_order_batch_exact_equals_fsum_even_across_exponents() -> None:
    import math

    v = np.random.default_rng(4).standard_normal((50, 32)).astype(np.float32)
    v[7, :4] = [1e30, 1e-30, -1e30, 3.0]                       # exponents 200 apart: the fsum path
    b = wr.float_order_batch(v, backend=EMU)
    assert b.exact.tolist() == [math.fsum(row) for row in v.astype(np.float64).tolist()]
    assert [wr.float_order(row, backend=EMU).ulps for row in v[:5]] == b.ulps[:5].tolist()


# ---------------------------------------------------------------- 3. valid values refused

def test_3_numpy_integers_are_integers() -> None:
    i = np.int64
    assert R.check_block(i(256)) == 256 and type(R.check_block(i(256))) is int
    assert R.check_n(i(1000)) == 1000 and R.check_unroll(np.int32(4)) == 4
    assert R.seed_grid(i(512)) == 2
    assert R.grid_size("v0", i(1000), i(256)) == 4
    assert R.pass_grids("v6", i(2**20), np.int16(256), np.uint32(132)) == (132, 1)
    assert R.error_bound(np.float32(1.0), i(100), "v0", i(64)) > 0
    assert WR.ladder_view(block=i(256)).message is None
    assert WR.ladder_view(log2_n=np.int8(20)).message is None
    assert reduce_maps.first_step("v2", i(128)).threads == 128


# ---------------------------------------------------------------- 4. invalid values accepted

@pytest.mark.parametrize("resident", [1.5, True, float("nan"), "4", 0])
def test_4_resident_blocks_must_be_an_integer(resident) -> None:
    with pytest.raises(ValueError, match="resident_blocks must be >= 1, an integer"):
        R.grid_size("v6", 1000, 256, resident)
    with pytest.raises(ValueError, match="resident_blocks"):
        R.pass_grids("v8", 1000, 256, resident)
    with pytest.raises(ValueError, match="resident_blocks"):
        R.grid_size("v0", 1000, 256, resident)          # given to a version that ignores it: still checked


def test_4_broadcast_must_be_a_bool() -> None:
    for bad in ("yes", 1, None, "False"):
        with pytest.raises(ValueError, match="broadcast must be True or False"):
            br.block_reduce(np.ones(64, np.int32), broadcast=bad)
    assert br.block_reduce(np.ones(64, np.int32), broadcast=np.True_).broadcast is True


@pytest.mark.parametrize("kw, words", [(dict(block=0), "block must be"), (dict(block=-256), "block must be"),
                                       (dict(n=-5), "n .* must be an integer >= 1"), (dict(n=0), "n "),
                                       (dict(x_abs_sum=-1.0), "x_abs_sum"), (dict(x_abs_sum=float("nan")), "x_abs_sum"),
                                       (dict(first_grid=0), "first_grid"), (dict(block=100), "block must be")])
def test_4_error_bound_checks_its_arguments(kw, words) -> None:
    args = dict(x_abs_sum=1.0, n=100, version="v0", block=256)
    args.update(kw)
    with pytest.raises(ValueError, match=words):
        R.error_bound(**args)


@pytest.mark.parametrize("text", ["1 2", "0x0x1", "\u0661\u0662", "\uff11", "0x 1", "1__2", "_1", "0xFFFF_",
                                  "0b101", "0B11", "+1", "0o17"])
def test_4_mask_text_is_ascii_hex_only(text) -> None:
    with pytest.raises(ValueError, match="mask must be a hexadecimal number"):
        widgets.parse_mask(text)


def test_4_long_mask_text_gives_a_short_message() -> None:
    with pytest.raises(ValueError) as e:
        widgets.parse_mask("f" * 100_000 + "x")
    assert len(str(e.value)) < 300 and "(100,003 characters)" in str(e.value)
    view = widgets.shuffle_view(mask="1" * 100_000)
    assert len(view.message) < 300


# ---------------------------------------------------------------- 5. wrong exception or unclear message

@pytest.mark.parametrize("text, words", [("1 // 0", "division by zero in '1 // 0'$"),
                                         ("2**100", r"exponent in '2\*\*100' must be in \[0, 64\]; got 100$"),
                                         ("1 << 70", r"shift in '1 << 70' must be in \[0, 63\]; got 70$"),
                                         ("lane % (lane - 2)", r"\(on lane 2\)")])
def test_5_expression_errors_without_lane_arrays(text, words) -> None:
    names = {"lane": LANE} if "lane" in text else {}
    with pytest.raises(ValueError, match=words):
        expr.evaluate(text, **names)


def test_5_expression_names_that_do_not_broadcast_or_are_ragged() -> None:
    with pytest.raises(ValueError, match="must broadcast together"):
        expr.evaluate("lane + value", lane=LANE, value=np.arange(5))
    with pytest.raises(ValueError, match="value must be a number or an array"):
        expr.evaluate("value", value=[[1, 2], [3]])


def test_5_make_plan_without_a_gpu_says_so() -> None:
    if backend.detect().usable:
        pytest.skip("a GPU is usable here")
    with pytest.raises(RuntimeError, match="launches kernels/reduce_.*none is usable here"):
        R.make_plan("v0", 1024)
    with pytest.raises(ValueError, match="block must be"):     # bad arguments are still ValueErrors first
        R.make_plan("v0", 1024, 100)


@pytest.mark.parametrize("fn", [lambda v: warp.shfl_down(v, 1), warp.ballot, warp.match_any, wr.warp_reduce,
                                wr.warp_reduce_sum, br.block_reduce])
def test_5_ragged_lists_name_the_parameter(fn) -> None:
    with pytest.raises(ValueError, match=r"(values|predicate) must be an array or a list of equal-length lists"):
        fn([[1] * 32, [1] * 31])


def test_5_activemask_and_syncwarp_blame_active() -> None:
    for fn in (warp.activemask, lambda a: warp.syncwarp(active=a)):
        with pytest.raises(ValueError, match=r"^active must have shape \(32,\)"):
            fn(np.ones(31, bool))
    with pytest.raises(ValueError, match="active must be an array"):
        warp.activemask([[True] * 32, [True]])


def test_5_tree_view_with_a_bad_width_blames_the_width() -> None:
    assert W.warp_tree_view(width=3).message.startswith("width must be a power of two")
    assert W.warp_tree_view(width=8, n_valid=9).message.startswith("valid lanes must be at most the width (8)")


def test_5_ballot_view_blames_what_is_in_use() -> None:
    msg = widgets.ballot_view(kind="lane < n", n=None).message
    assert msg.startswith("n must be an integer in [0, 32]") and "expression" not in msg
    assert widgets.ballot_view(kind="every k-th lane", k=None).message.startswith("k must be at least 1")
    assert widgets.ballot_view(kind="even lanes", n=None).message is None       # n is not in use


def test_5_np_matrix_is_a_plain_array() -> None:
    m = np.asmatrix(np.arange(32, dtype=np.int32))
    assert wr.warp_reduce(m, backend=EMU).result.tolist() == [[496]]
    assert int(warp.reduce_add(m, backend=EMU).values[0, 0]) == 496


def test_5_choice_parameters_given_arrays_name_themselves() -> None:
    a = np.array([1, 2])
    for fn, name in ((lambda: wr.warp_reduce(np.ones(32, np.int32), op=a), "op"),
                     (lambda: wr.warp_reduce(np.ones(32, np.int32), tree=a), "tree"),
                     (lambda: br.block_reduce(np.ones(32, np.int32), kind=a), "kind"),
                     (lambda: R.check_version(a), "version"), (lambda: reduce_maps.barriers(a), "version"),
                     (lambda: warp.ballot(np.ones(32, bool), backend=a), "backend"),
                     (lambda: backend.resolve(a), "backend")):
        with pytest.raises(ValueError, match=f"^{name} must be"):
            fn()


def test_5_ballot_uses_check_their_inputs() -> None:
    with pytest.raises(ValueError, match=r"x must hold 32-bit values"):
        ballot_uses.popc(-1)
    with pytest.raises(ValueError, match="threshold must be a number"):
        ballot_uses.compact(np.ones(8, np.float32), float("nan"))
    with pytest.raises(ValueError, match="values must be float32"):
        ballot_uses.compact(np.array([1e300, 0.1]), 0.0)        # would become inf and 0.1f silently
    v = np.array([0.3], np.float32)
    assert ballot_uses.compact(v, np.float64(0.3), EMU).kept.size == 0      # compared in float32, as on the GPU


# ---------------------------------------------------------------- 6. views that promise never to raise

@pytest.mark.parametrize("kw", [dict(active="first n", n_active=None), dict(active="random", n_active="a"),
                                dict(active="random", seed=None), dict(mode=np.array([1, 2])),
                                dict(width=None), dict(offset=1.5)])
def test_6_shuffle_view_shows_a_message(kw) -> None:
    view = widgets.shuffle_view(**kw)
    assert view.figure is None and view.message


@pytest.mark.parametrize("kw", [dict(seed=None), dict(seed=-1), dict(active="first n", n_active=None),
                                dict(active="random", n_active="a"), dict(kind="lane < n", n=1.5)])
def test_6_ballot_view_shows_a_message(kw) -> None:
    view = widgets.ballot_view(**kw)
    assert view.figure is None and view.message


@pytest.mark.parametrize("step", ["a", float("nan"), float("inf"), [1], 1.5])
def test_6_tree_view_bad_step_is_a_message(step) -> None:
    view = W.warp_tree_view(step=step)
    assert view.figure is None and view.message.startswith("step must be an integer")


def test_6_tree_view_step_past_the_end_still_shows_the_last() -> None:
    view = W.warp_tree_view(width=8, n_valid=8, step=np.int64(9))
    assert view.message is None and "showing step 3" in view.table


@pytest.mark.parametrize("x, y", [(1.5, 2), (96, 2.5), (None, 2), (96, None), (True, 2), ("96", 2)])
def test_6_block_view_bad_dimensions_are_a_message(x, y) -> None:
    view = W.block_view(x, y)
    assert view.figure is None and view.message.startswith("blockDim.x must be an integer")


@pytest.mark.parametrize("results", [{}, {"rows": 3}, {"rows": [{}]}, [], "bench_ladder"])
def test_6_ladder_view_bad_results_is_a_message(results) -> None:
    view = WR.ladder_view(results=results)
    assert view.figure is None and view.message.startswith("results must be a ladder run")


@pytest.mark.parametrize("env", ["gpu", "cupy"])
def test_6_ladder_explorer_builds_under_a_bad_or_unusable_backend(env, monkeypatch) -> None:
    pytest.importorskip("ipywidgets")
    if env == "cupy" and backend.detect().usable:
        pytest.skip("a GPU is usable here")
    monkeypatch.setenv(backend.ENV_VAR, env)
    box = WR.ladder_explorer()
    shown = " ".join(getattr(c, "value", "") for c in box.children if isinstance(getattr(c, "value", None), str))
    assert "WARPLAB_BACKEND" in shown and "timing is off" in shown
    assert not box.controls["time_it"].value


# ---------------------------------------------------------------- 7. responsiveness

def test_7_ladder_view_draws_each_map_once() -> None:
    a = WR.ladder_view("v2", 512, 20)
    b = WR.ladder_view("v2", 512, 28)
    assert a.figure is b.figure and a.table != b.table
    assert WR.ladder_view("v3", 512, 20).figure is not a.figure


def test_7_lanes_map_labels_only_the_outer_panels() -> None:
    fig = F.lanes_figure("v0", 1024)            # 10 steps: rows of 4, 4, 2
    (ax,) = fig.axes                            # one Axes: the panels are collections in it
    labels = [s for a in ax.artists for _, _, s in a.items()]
    assert labels.count("lane") == 4 and labels.count("warp") == 3
    assert len(ax.lines) <= 1                   # one artist for every divergence tick
    assert fig.get_layout_engine() is None                           # no tight_layout: savefig draws once


@pytest.mark.parametrize("build, control, values", [
    (lambda: widgets.shuffle_explorer(backend=EMU), "offset", (2, 3, 2, 1, 3)),
    (lambda: W.warp_tree_explorer(backend=EMU), "op", ("max", "sum", "max")),
])
def test_7_explorers_show_a_setting_seen_before_from_memory(build, control, values, monkeypatch) -> None:
    pytest.importorskip("ipywidgets")
    from helpers.viz import render

    rendered = []
    real = render.figure_png
    monkeypatch.setattr(render, "figure_png", lambda fig, dpi=100: rendered.append(1) or real(fig, dpi))
    box = build()
    start = box.controls[control].value
    images = []
    for v in values:
        box.controls[control].value = v
        images.append(next(c.value for c in _all_children(box) if type(c).__name__ == "Image"))
    assert len(rendered) == len({start, *values})     # each setting rendered once
    assert images[0] == images[2]                     # the same setting, the same picture


def _all_children(box):
    for c in box.children:
        yield c
        if hasattr(c, "children"):
            yield from _all_children(c)


def test_7_ladder_explorer_renders_a_map_once(monkeypatch) -> None:
    pytest.importorskip("ipywidgets")
    from helpers.viz import render

    calls = []
    real = render.figure_png
    monkeypatch.setattr(render, "figure_png", lambda fig, dpi=100: calls.append(fig) or real(fig, dpi))
    box = WR.ladder_explorer(None, live=False)
    c = box.controls
    for v in (20, 21, 22):
        c["log2_n"].value = v
    c["block"].value = 512
    c["block"].value = 256
    assert len(calls) == 2                      # v0<256> once, v0<512> once


# Finding 7's stamped text is tested in tests/viz/test_figures.py (StampRenderer, LaneTexts).
