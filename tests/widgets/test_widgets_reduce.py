"""The explorers of notebooks 03 and 04 over their whole parameter range (never a traceback, fast), and
the text tables the notebooks print (deterministic, "undef" never a number)."""
from __future__ import annotations

import itertools
import statistics
import time
import timeit

import numpy as np
import pytest

from helpers.topics import block_reduce as br
from helpers import data
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.topics import warp_reduce as wr
from helpers.widgets import reduce as W
from test_widgets import emulator_backend  # noqa: F401 (autouse: these tests run on the emulator too)


@pytest.fixture
def no_figures(monkeypatch: pytest.MonkeyPatch) -> list:
    calls: list = []
    monkeypatch.setattr(figures, "trace_figure", lambda *a, **k: calls.append(a) or "fig")
    from helpers.viz import block as figures_block
    monkeypatch.setattr(figures_block, "block_grid_figure", lambda *a, **k: calls.append(a) or "fig")
    return calls


def test_pattern_values():
    assert W.pattern_values("lane").tolist() == list(range(32))
    assert W.pattern_values("random floats").dtype == np.float32
    assert W.pattern_values("random ints", "bit_or").min() >= 0
    with pytest.raises(ValueError, match="pattern must be one of"):
        W.pattern_values("zeros")


def test_warp_tree_view_whole_range(no_figures):
    """Every op × width × pattern × valid lanes × tree × partial: a view or a message, never an exception."""
    for op, width, pattern, tree, partial in itertools.product(wr.OPS, W.WIDTHS, W.PATTERNS, wr.TREES, wr.PARTIALS):
        for n_valid in (1, 5, width, 32):
            v = W.warp_tree_view(op, width, pattern, n_valid, tree, partial, step=3)
            assert (v.figure is None) == (v.message is not None)
            if v.message is None:
                assert any(w in v.table for w in ("undef", "correct", "rounding order"))
            else:
                assert "got" in v.message or "pick" in v.message


def test_warp_tree_view_messages():
    assert "integers" in W.warp_tree_view("bit_and", pattern="random floats").message
    assert "width 32" in W.warp_tree_view(width=8, n_valid=4, partial="ballot").message
    assert "at most the width" in W.warp_tree_view(width=8, n_valid=20).message


def test_warp_tree_view_ballot_is_undefined_not_a_number():
    v = W.warp_tree_view(n_valid=20, partial="ballot")
    assert "lane  0 holds        undef" in v.table
    v = W.warp_tree_view(n_valid=20, partial="pad")
    assert "190" in v.table and "correct" in v.table


def test_warp_tree_step_clipped():
    v = W.warp_tree_view(width=4, n_valid=4, step=5)
    assert v.table.startswith("(width 4 has 2 steps: showing step 2)")


@pytest.mark.slow
def test_block_view_whole_range(no_figures):
    xs = (1, 2, 3, 31, 32, 33, 48, 64, 96, 100, 128)
    ys = (1, 2, 3, 5, 8, 13, 32)
    for x, y, op in itertools.product(xs, ys, wr.OPS):
        v = W.block_view(x, y, op)
        if x * y > 1024:
            assert "at most 1024 threads" in v.message
        else:
            assert v.message is None, (x, y, op, v.message)
            assert "BlockXReduce" in v.table and "BlockYReduce" in v.table
    assert "blockDim.x must be" in W.block_view(0, 2).message
    assert "op must be" in W.block_view(32, 2, "mul").message


def test_block_view_seed_facts():
    t = W.block_view(96, 2).table
    assert "       0       96      128       96" in t
    assert "       1       96    undef       96" in t
    assert "seed right in 0 of 32 columns" in W.block_view(32, 3).table


def _median_ms(fn, n=5):
    """The median CPU time of ``fn`` (after one warm-up call): CPU time, so that other work on a shared
    machine does not fail the test; the wall-clock p95 is measured by scripts/bench_explorers.py."""
    return 1000 * statistics.median(timeit.repeat(fn, timer=time.process_time, number=1, repeat=n + 1)[1:])


@pytest.mark.parametrize("kw", [dict(), dict(op="max", width=8, pattern="random ints", n_valid=5, tree="xor"),
                                dict(n_valid=20, partial="ballot")])
def test_warp_tree_update_fast(kw):
    ms = _median_ms(lambda: render.figure_png(W.warp_tree_view(**kw).figure))
    assert ms < 400, f"{ms:.0f} ms"   # ~100 ms on a laptop core; generous: it catches regressions only


@pytest.mark.parametrize("xy", [(96, 2), (32, 5), (128, 8), (32, 32)])
def test_block_update_fast(xy):
    ms = _median_ms(lambda: render.figure_png(W.block_view(*xy).figure))
    assert ms < 400, f"{ms:.0f} ms"


def test_explorers_build_and_show_messages():
    pytest.importorskip("ipywidgets")
    box = W.warp_tree_explorer()
    c = box.controls
    c["width"].value = 8
    assert c["n_valid"].max == 8
    c["partial"].value = "ballot"
    assert "width 32" in box.children[-3].value and box.children[-2].layout.display == "none"
    b = W.block_explorer()
    b.controls["x"].value = 128
    b.controls["y"].value = 9
    assert "at most 1024" in b.children[-3].value


def test_methods_tables():
    t = W.methods_table(wr.compare_methods(W.pattern_values("random ints")))
    assert "__reduce_add_sync" in t and "undef" in t and " no" not in t
    ints = W.pattern_values("random ints")
    for op, name in (("bit_or", "__reduce_or_sync"), ("max", "__reduce_max_sync")):   # the row names its op's intrinsic
        t = W.methods_table(wr.compare_methods(ints, op=op, backend="emulator"))
        assert name in t and "__reduce_add_sync" not in t
        row = next(line for line in t.splitlines() if line.startswith(name))
        assert row.endswith("same bits"), row
    rec = data.load("warp_reduce_traces")
    assert "undef" in W.recorded_methods_table(rec, "random_int32")


def test_float_order_text():
    v = np.random.default_rng(0).standard_normal((50, 32)).astype(np.float32)
    b = wr.float_order_batch(v)
    assert b.ulps.shape == (50,)
    assert wr.float_order(v[0]).ulps == b.ulps[0]
    text = W.float_order_text(b)
    assert "50 warps" in text and "closer to the exact sum" in text
    with pytest.raises(ValueError, match="float32 of shape"):
        wr.float_order_batch(v[0])


def test_partial_counts_and_tree_table():
    tr = wr.warp_reduce_sum_trace(np.arange(32, dtype=np.int32))
    assert W.partial_counts(tr).splitlines()[-1].split()[-2:] == ["1", "31"]
    tr = wr.warp_reduce_trace(np.arange(32, dtype=np.int32), n_valid=20, partial="ballot")
    assert " - " in W.tree_table(tr) and "undef" in W.tree_table(tr)


def test_sanitizer_and_recorded_cases():
    t = W.sanitizer_table(data.load("sanitizer_block"))
    assert f"racecheck  {'seed BlockYReduce':<24} {'(32, 3)':<9} {'all':<9} {20:>5} {20:>7} {129:>7} {0:>8}  reported" in t
    only = W.sanitizer_table(data.load("sanitizer_block"), ("b2b", "b2b_nobarrier")).splitlines()
    n_runs = sum(r["kernel"] in ("b2b", "b2b_nobarrier") for r in data.load("sanitizer_block")["runs"])
    assert len(only) == 1 + n_runs and all("BlockReduce x2" in line for line in only[1:])
    rec = data.load("block_reduce")
    assert W.per_group_line(W.recorded_case(rec, "seed_x_96x2_ones")) == "row 0: 128, row 1: undef"
    assert W.per_group_line(W.recorded_case(rec, "seed_y_32x5_ones")) == "every column (all 32): 4"
    assert W.per_group_line(W.recorded_case(rec, "seed_sum_48_ones")) == "thread 0: 32"
    with pytest.raises(ValueError, match="no recorded case"):
        W.recorded_case(rec, "nope")


def test_back_to_back():
    ones, twos = np.ones(128, np.int32), np.full(128, 2, np.int32)
    ok = br.back_to_back(ones, twos, barrier=True)
    assert (ok.first, ok.second, ok.first_defined, ok.second_defined, len(ok.hazards)) == (128, 256, True, True, 0)
    racy = br.back_to_back(ones, twos, barrier=False)
    assert not racy.first_defined and racy.first == 0 and racy.second == 256
    (race,) = racy.hazards                 # the machine's finding: 3 thread pairs, slots 1-3
    assert race.detail["hazard"] == "WAR" and race.count == 3 and race.lines == (51, 48)
    with pytest.raises(ValueError, match="same dtype"):
        br.back_to_back(ones, twos.astype(np.float32))


def test_methods_table_calls_another_float_order_different_not_wrong():
    """A float32 tree that rounds in another order is 'another order', never 'does not match'."""
    t = W.methods_table(wr.compare_methods(W.pattern_values("random floats")))
    assert "against NumPy" in t and "matches NumPy" not in t and "WRONG" not in t
    cub = next(line for line in t.splitlines() if line.startswith("cub::WarpReduce"))
    assert "ULP" in cub and "another order" in cub
    ints = W.methods_table(wr.compare_methods(W.pattern_values("random ints"))).splitlines()
    assert all(line.endswith("same bits") for line in ints[1:-1])
