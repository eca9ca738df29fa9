"""Every reduction figure draws, from synthetic results or from the maps."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from helpers import figures_reduce as F

from test_reduce_bench import fake_ladder


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_ladder_chart() -> None:
    fig = F.ladder_chart(fake_ladder(), n=2**25)
    ax = fig.axes[0]
    assert len(ax.patches) == 11  # ten versions and the seed's first pass
    assert any("cupy.sum" in t.get_text() for t in ax.get_legend().get_texts())
    with pytest.raises(ValueError, match="n must be a size of this run"):
        F.ladder_chart(fake_ladder(), n=2**21)


def test_sweep_chart() -> None:
    res = fake_ladder(sizes=(2**16, 2**20, 2**24))
    res["kind"], res["versions"] = "sweep", ["v8", "onepass"]
    fig = F.sweep_chart(res)
    assert len(fig.axes[0].lines) == 4


@pytest.mark.parametrize("version", ["v0", "v1", "v2", "v4"])
def test_lanes_figure(version: str) -> None:
    fig = F.lanes_figure(version, 256)
    assert len([a for a in fig.axes if a.images]) == 8


def test_maps_figures() -> None:
    assert len(F.bank_conflicts_figure(("v1", "v2"), 256).axes) == 2
    assert len(F.first_step_figure(("v2", "v3"), 128).axes) == 2
    assert len(F.barriers_chart(256).axes[0].patches) == 20
