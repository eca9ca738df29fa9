"""Block figures of notebook 04: every phase of every algorithm draws, the blockDim picture for any shape."""
from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from helpers import block_reduce as br
from helpers import figures, figures_block as fb

CASES = [((48, 1), "sum", "seed"), ((48, 1), "sum", "fixed"), ((96, 2), "x", "seed"), ((96, 2), "x", "fixed"),
         ((32, 3), "y", "seed"), ((32, 5), "y", "fixed"), ((20, 5), "x", "fixed"), ((6, 4), "x", "seed")]


@pytest.mark.parametrize("block,kind,version", CASES)
def test_every_phase_draws(block, kind, version):
    t = br.block_trace(np.ones(block[::-1], np.int32), block, kind=kind, version=version)
    for k in range(len(t.phases)):
        fig = fb.block_phase_figure(t, k)
        assert isinstance(fig, Figure)
    png = figures.figure_png(fig)
    assert png[:4] == b"\x89PNG"
    assert fb.phase_lines(t).count("\n") == len(t.phases) - 1


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
        fb.block_phase_figure(t, len(t.phases))
    big = br.block_trace(np.ones(512, np.int32), (512, 1))
    with pytest.raises(ValueError, match="at most 8 warps"):
        fb.block_phase_figure(big, 0)


def test_animation_has_one_frame_per_phase():
    t = br.back_to_back(np.ones(64, np.int32), np.ones(64, np.int32), barrier=False).trace
    anim = fb.block_animation(t)
    assert len(list(anim.new_frame_seq())) == len(t.phases) <= figures.MAX_FRAMES


@pytest.mark.parametrize("block", [(1, 1), (96, 2), (32, 3), (7, 13), (128, 8), (1, 1024), (1024, 1), (33, 31)])
def test_grid_figure_any_shape(block):
    v = np.ones(block[::-1], np.int32)
    res = [br.block_reduce(v, block, kind=k, version="fixed") for k in ("x", "y")]
    fig = fb.block_grid_figure(block, res, source_label="emulator")
    assert figures.figure_png(fig, dpi=50)[:4] == b"\x89PNG"


def test_grid_figure_hatches_undefined_rows():
    v = np.ones((2, 96), np.int32)
    seed = br.block_reduce(v, kind="x", version="seed")
    fig = fb.block_grid_figure((96, 2), [seed])
    texts = [x.get_text() for x in fig.axes[0].texts]
    assert "128" in texts and "undef" in texts and "0" not in texts


def test_grid_figure_rejects_bad_input():
    with pytest.raises(ValueError, match="x \\* y <= 1024"):
        fb.block_grid_figure((64, 32))
    r = br.block_reduce(np.ones((2, 4), np.int32), kind="x")
    with pytest.raises(ValueError, match="results must be"):
        fb.block_grid_figure((8, 1), [r])
