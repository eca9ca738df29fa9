"""Every reduction figure draws, from synthetic results or from the maps."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers import bench
from helpers.topics import reduce as R
from helpers.topics import reduce_maps
from helpers.viz import ladder as F
from helpers.widgets import reduce as WR

from tests.bench.test_reduce_bench import fake_ladder


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_ladder_chart() -> None:
    fig = F.ladder_chart(fake_ladder(), n=2**25)
    ax = fig.axes[0]
    assert len(ax.patches) == 13  # eleven versions and the seed's first pass at 128 and 256 threads
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("cupy.sum" in t for t in texts) and any("outlined" in t for t in texts)
    assert not any(p.get_hatch() for p in ax.patches)  # hatching means undefined, and nothing here is
    top = max(line.get_ydata()[0] for line in ax.get_lines())
    assert ax.get_ylim()[1] >= 1.4 * top  # the legend sits above the copy and cupy.sum lines
    with pytest.raises(ValueError, match="n must be a size of this run"):
        F.ladder_chart(fake_ladder(), n=2**21)


def test_ladder_chart_of_the_first_versions_only() -> None:
    """Notebook 05 draws v0..v4 and cupy.sum only: the later versions, the seed and the copy wait for 06."""
    fig = F.ladder_chart(fake_ladder(), n=2**25, versions=R.LADDER, copy=False, seed=False)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(R.LADDER)
    assert len(ax.patches) == len(R.LADDER)
    assert [line.get_label().split(":")[0] for line in ax.get_lines()] == ["cupy.sum (CUB)"]
    footer = " ".join(t.get_text() for t in fig.texts)
    assert "versions v0, v1, v2, v3, v4;" in footer and "v5" not in footer


@pytest.mark.parametrize("on", ["v3", "v4"])
def test_ladder_chart_value_labels_clear_the_lines(on: str) -> None:
    """A bar whose top sits just under a line gets its value label inside the bar, not across the line."""
    res = fake_ladder()
    bar = bench.version_row(res, 2**25, on)["gbps"]
    for row in bench.rows_for(res, 2**25, bench.COPY):
        row["gbps"] = bar * 1.01
    fig = F.ladder_chart(res, n=2**25)
    fig.canvas.draw()
    ax = fig.axes[0]
    ys = [ax.transData.transform((0, line.get_ydata()[0]))[1] for line in ax.get_lines()]
    labels = [t for t in ax.texts if t.get_text().replace(",", "").isdigit()]
    assert len(labels) == len(ax.patches)
    for t in labels:
        box = t.get_window_extent()
        assert not any(box.y0 <= y <= box.y1 for y in ys), t.get_text()


def test_sweep_chart() -> None:
    res = fake_ladder(sizes=(2**16, 2**20, 2**24))
    res["kind"], res["versions"] = "sweep", ["v8", "onepass"]
    fig = F.sweep_chart(res)
    dev, host, bw = fig.axes
    assert len(dev.lines) == 5 and len(host.lines) == 5  # v8, onepass, cupy.sum, copy, empty kernel
    assert "device time" in dev.get_ylabel() and "host-inclusive" in host.get_ylabel()
    assert any("launch cost" in t.get_text() for t in dev.texts)
    assert any("datasheet" in t.get_text() for t in bw.texts)
    assert [k for k, _, _ in F.regimes(res)] == ["launch cost", "L2", "HBM"][: len(F.regimes(res))]


@pytest.mark.parametrize("version", ["v0", "v1", "v2", "v4"])
def test_lanes_figure(version: str) -> None:
    fig = F.lanes_figure(version, 256)
    (ax,) = fig.axes
    titles = [t.get_text() for t in ax.texts]
    assert len(titles) == 8 and all("working" in t for t in titles)       # a panel per step
    working = sum(int(s.working.sum()) for s in reduce_maps.tree_steps(version, 256))
    cells = ax.collections[1].get_paths()                                   # the working lanes, measured
    lane_w = (ax.collections[0].get_paths()[0].get_extents().width) / 32
    warp_h = (ax.collections[0].get_paths()[0].get_extents().height) / 8
    assert round(sum(p.get_extents().width * p.get_extents().height for p in cells) / (lane_w * warp_h)) == working


def test_lane_runs_cover_the_working_lanes_once() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        working = rng.random((8, 32)) < 0.4
        working[2:5] = working[2]                       # a run repeated in consecutive warps: one rectangle
        got = np.zeros_like(working, int)
        for (a, b), (w0, w1) in F.lane_runs(working):
            got[w0:w1, a:b] += 1
        assert (got == working).all()


def test_maps_figures() -> None:
    assert len(F.bank_conflicts_figure(("v1", "v2"), 256).axes) == 2
    assert len(F.first_step_figure(("v2", "v3"), 128).axes) == 2
    assert len(F.barriers_chart(256).axes[0].patches) == 22


@pytest.mark.parametrize("version", WR.LADDER_VERSIONS)
@pytest.mark.parametrize("block", (64, 256, 1024))
def test_ladder_view_every_version_and_block(version: str, block: int) -> None:
    res = fake_ladder()
    view = WR.ladder_view(version, block, 25, res)
    assert view.message is None and view.figure is not None
    assert f"reduce_{version}<{block}>" in view.table
    if block == 256:
        assert "first pass" in view.table.splitlines()[-1]
    else:
        assert "not measured for block" in view.table.splitlines()[-1]


@pytest.mark.parametrize("args, words", [(("v9", 256, 25), "version must be one of"),
                                         (("v0", 100, 25), "block must be a power of two"),
                                         (("v0", 256, 31), "log2_n must be an integer in [10, 30]"),
                                         (("v0", 256, 2.5), "log2_n must be an integer")])
def test_ladder_view_bad_input_is_a_message(args, words: str) -> None:
    view = WR.ladder_view(*args)
    assert view.figure is None and words in view.message


def test_ladder_view_live_without_gpu_is_a_line() -> None:
    view = WR.ladder_view("v0", 256, 10, None, live=True)
    assert view.message is None and "live" in view.table.splitlines()[-1]


def test_ladder_explorer_builds_and_reacts() -> None:
    box = WR.ladder_explorer(fake_ladder(), live=False)
    assert set(box.controls) == {"version", "block", "log2_n", "time_it"}
    assert box.controls["time_it"].disabled
    box.controls["version"].value = "v3"
    assert "reduce_v3&lt;256&gt;" in box.children[-1].value
    box.controls["log2_n"].value = 30
    assert "not measured" in box.children[-1].value


def test_show_displays_once_and_releases_the_figure() -> None:
    fig = F.barriers_chart(256)
    assert plt.fignum_exists(fig.number)
    F.show(fig)
    assert not plt.fignum_exists(fig.number)
