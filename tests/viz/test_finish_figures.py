"""Notebook 07's figures (helpers/viz/finish.py): drawn from data/litmus.json and from traced runs
of onepass and v9 on the SIMT machine."""
from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from helpers import data  # noqa: E402
from helpers.machine import litmus  # noqa: E402
from helpers.viz import finish as F  # noqa: E402


def test_litmus_counts_are_the_recordings() -> None:
    rec = data.load("litmus")
    row = next(r for r in rec["results"] if r["shape"] == "MP" and r["scope"] == "gpu" and r["fence"])
    counts = F.litmus_counts(rec, "MP", "gpu", True)
    assert sum(counts.values()) == row["instances"] * row["launches"]
    assert all(o in litmus.SHAPES["MP"].allowed(True) for o in counts)   # the GPU showed only allowed outcomes
    with pytest.raises(KeyError, match="shape='XX'"):
        F.litmus_counts(rec, "XX", "gpu", True)


def test_litmus_figure_marks_the_forbidden_outcome() -> None:
    fig = F.litmus_figure(data.load("litmus"))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts.count("✗ forbidden") == 1            # MP (1, 0), with fences only
    assert "fence.sc" in texts and any("NVIDIA H100" in t.get_text() for t in fig.texts)


@pytest.mark.parametrize("version", ["onepass", "v9"])
def test_serial_run_orders_tickets_by_block_and_the_last_block_reads(version: str) -> None:
    run = F.run_one_launch(version, grid=3, block=64, serial=True)
    assert run.value == 4 * 64 * 3 and run.last == 2
    assert F.tickets(run) == {0: 0, 1: 1, 2: 2}
    stores = [e for e in run.events if F.ROLES.get((e.kind, e.arg)) == "partial store"]
    reads = [e for e in run.events if F.ROLES.get((e.kind, e.arg)) == "partial load"]
    assert {e.block for e in stores} == {0, 1, 2} and {e.block for e in reads} == {2}
    assert max(e.step for e in stores) < min(e.step for e in reads)
    if version == "v9":   # the ticket is drawn before the block's loads
        for b in range(3):
            first = min((e for e in run.events if e.block == b), key=lambda e: e.step)
            assert first.kind == "atomic"
    fig = F.one_launch_figure(run)
    assert any("ticket 2 (the last)" in t.get_text() for t in fig.axes[0].texts)


def test_all_at_once_run_has_no_ticket_order() -> None:
    run = F.run_one_launch("onepass", grid=2, block=64)
    assert F.tickets(run) == {} and run.last in (0, 1)


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="version must be one of onepass, v9"):
        F.run_one_launch("v8")
    with pytest.raises(ValueError, match="grid must be 2 to 8"):
        F.run_one_launch("v9", grid=1)
    with pytest.raises(ValueError, match="block must be 64, 128 or 256"):
        F.run_one_launch("v9", block=100)
    with pytest.raises(ValueError, match="events is empty"):
        F.block_timeline([], "t", "s")


@pytest.mark.parametrize("version", ["onepass", "v9"])
@pytest.mark.parametrize("block", [64, 128, 256])
def test_runs_need_no_nvrtc(version: str, block: int, without_nvrtc) -> None:
    """The figures' kernels run from the shipped PTX with reduce_sum's defines, so a laptop without
    NVRTC draws them too."""
    run = F.run_one_launch(version, grid=2, block=block)
    assert f"kernels/{F.ONE_LAUNCH[version][0]}.cu" in run.label
