"""Block figures of notebook 04, drawn from the machine's block traces: every phase of every kernel draws,
the blockDim picture for any shape."""
from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from helpers.topics import block_reduce as br
from helpers.viz import boxes
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.viz import block as fb
from test_figures import all_texts

CASES = [((48, 1), "sum", "seed"), ((48, 1), "sum", "fixed"), ((96, 2), "x", "seed"), ((96, 2), "x", "fixed"),
         ((32, 3), "y", "seed"), ((32, 5), "y", "fixed"), ((20, 5), "x", "fixed"), ((6, 4), "x", "seed")]


@pytest.mark.parametrize("block,kind,version", CASES)
def test_every_phase_draws(block, kind, version):
    t = br.block_trace(np.ones(block[::-1], np.int32), block, kind=kind, version=version)
    for k in range(t.n_steps):
        fig = fb.block_phase_figure(t, k)
        assert isinstance(fig, Figure)
    png = render.figure_png(fig)
    assert png[:4] == b"\x89PNG"
    assert fb.phase_lines(t).count("\n") == t.n_steps - 1


def test_phase_figure_marks_undefined_and_missing_lanes():
    t = br.block_trace(np.ones(48, np.int32), (48, 1), version="seed")
    fig = fb.block_phase_figure(t, 3)     # lane 0 of warp 1 stores an undefined partial
    texts = [x.get_text() for x in fig.axes[0].texts]
    assert "undef" in texts
    hatched = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert hatched
    assert any(p.get_label() == "lane does not exist" for p in fig.legends[0].get_patches())


def test_phase_figure_rejects_bad_input():
    t = br.block_trace(np.ones(48, np.int32), (48, 1))
    with pytest.raises(ValueError, match="phase must be an integer"):
        fb.block_phase_figure(t, t.n_steps)
    big = br.block_trace(np.ones(512, np.int32), (512, 1))
    with pytest.raises(ValueError, match="at most 8 warps"):
        fb.block_phase_figure(big, 0)


def test_animation_has_one_frame_per_phase():
    t = br.back_to_back(np.ones(64, np.int32), np.ones(64, np.int32), barrier=False).trace
    anim = fb.block_animation(t)
    assert len(list(anim.new_frame_seq())) == t.n_steps <= figures.MAX_FRAMES


@pytest.mark.parametrize("block", [(1, 1), (96, 2), (32, 3), (7, 13), (128, 8), (1, 1024), (1024, 1), (33, 31)])
def test_grid_figure_any_shape(block):
    v = np.ones(block[::-1], np.int32)
    res = [br.block_reduce(v, block, kind=k, version="fixed") for k in ("x", "y")]
    fig = fb.block_grid_figure(block, res, source_label=res[0].source)
    assert render.figure_png(fig, dpi=50)[:4] == b"\x89PNG"


def test_grid_figure_hatches_undefined_rows():
    v = np.ones((2, 96), np.int32)
    seed = br.block_reduce(v, kind="x", version="seed")
    fig = fb.block_grid_figure((96, 2), [seed])
    texts = [t for _, _, t in all_texts(fig.axes[0])]
    assert "128" in texts and "undef" in texts and "0" not in texts


def test_grid_figure_rejects_bad_input():
    with pytest.raises(ValueError, match="x \\* y <= 1024"):
        fb.block_grid_figure((64, 32))
    r = br.block_reduce(np.ones((2, 4), np.int32), kind="x")
    with pytest.raises(ValueError, match="results must be"):
        fb.block_grid_figure((8, 1), [r])


def test_phase_caption_counts_the_phases():
    t = br.block_trace(np.arange(128, dtype=np.int32), (128, 1))
    assert t.n_steps == 7
    assert fb.phase_caption(t, 4).startswith("phase 4 of phases 0–6 (shared → registers): block_reduce.cuh:51")
    assert fb.phase_caption(t, 4) in fb.block_phase_figure(t, 4).axes[0].get_title()
    with pytest.raises(ValueError, match="phase must be an integer"):
        fb.phase_caption(t, 7)


def test_rows_and_their_warps():
    # blockDim.x < 32: several rows share a warp; otherwise a row spans several warps
    assert [fb.warps_of_row((8, 8), y) for y in range(8)] == [(0, 0)] * 4 + [(1, 1)] * 4
    assert [fb.row_label((20, 5), y) for y in range(5)] == ["y=0  w0", "y=1  w0–1", "y=2  w1", "y=3  w1–2",
                                                           "y=4  w2–3"]
    assert fb.row_label((96, 2), 1) == "y=1  w3–5"
    assert fb.warp_label_spans((8, 8)) == [(1, 0, 8), (5, 0, 8)]
    assert fb.warp_label_spans((48, 2)) == [(0, 0, 32), (0, 32, 48), (1, 16, 48)]   # a tie: the first row


@pytest.mark.parametrize("block", [(20, 5), (96, 2), (128, 8), (8, 8)])
def test_grid_figure_tells_warps_apart(block):
    fig = fb.block_grid_figure(block)
    ax = fig.axes[0]
    n_warps = -(-block[0] * block[1] // 32)
    texts = [t for _, _, t in all_texts(ax)]
    assert [fb.row_label(block, y) for y in range(block[1])] == [t for t in texts if t.startswith("y=")]
    colours = ax.images[0].get_array()          # colour index per cell
    tid = np.arange(block[0] * block[1]).reshape(block[1], block[0])
    for w in range(n_warps - 1):                # neighbouring warps never share a colour
        assert colours[tid == 32 * w][0] != colours[tid == 32 * (w + 1)][0]
    if n_warps <= len(fb.WARP_COLORS):          # up to 8 warps, one colour each, named in the legend
        assert len({colours[tid == 32 * w][0] for w in range(n_warps)}) == n_warps
        assert [p.get_label() for p in fig.legends[0].get_patches()] == [f"warp {w}" for w in range(n_warps)]
    if block == (96, 2):                        # cells too small for tids: every warp's id is written in it
        assert {f"w{w}" for w in range(n_warps)} <= set(texts)


def test_back_to_back_race_figure_hatches_the_racy_loads():
    """Drawn from the machine's run: lanes 1-3 of warp 0 loaded undefined values in phase 4."""
    b = br.back_to_back(np.ones(128, np.int32), np.full(128, 2, np.int32), barrier=False)
    fig = fb.block_phase_figure(b.trace, 4)
    texts = [x.get_text() for x in fig.axes[0].texts]
    assert texts.count(boxes.UNDEF_TEXT) == 3 and "block_reduce.cuh:51" in fig.axes[0].get_title()
    assert any("SIMT machine" in t.get_text() for t in fig.texts)


def test_seed_tail_warp_figure_shows_the_dropped_partial():
    """The seed's 48-thread BlockReduceSum: lane 0 of the tail warp stores an undefined partial in shared[1]
    (phase 3), which the load phase (5) then leaves unread: only thread 0 loads, slot 0."""
    t = br.block_trace(np.ones(48, np.int32), (48, 1), version="seed")
    assert t.kinds[3] == "store" and t.stores[3].tolist() == [[0, 0], [32, 1]]
    assert t.shared_defined[3, :2].tolist() == [True, False]
    assert t.kinds[5] == "load" and t.loads[5].tolist() == [[0, 0]]
