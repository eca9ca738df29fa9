"""v8, onepass and v9 on the GPU: float4 loads at every misalignment and tail, every unroll, and the
one-launch kernels' run-to-run determinism, counter reset, v9's launch tags and graph replay."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.topics import reduce as R

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("version", ["v8", "onepass", "v9"])
def test_every_misalignment_and_tail(version: str) -> None:
    host = np.random.default_rng(1).integers(-4, 5, 2**20 + 16).astype(np.float32)
    base = cupy.asarray(host)
    for offset in range(4):
        for n in (1, 2, 3, 4, 5, 7, 8, 9, 1000, 4099, 2**20 + 1):
            x = base[offset: offset + n]
            want = float(host[offset: offset + n].sum(dtype=np.float64))
            for block in (64, 256, 1024):
                assert R.reduce_sum(x, version, block).value == want, (version, offset, n, block)


@pytest.mark.parametrize("version", ["v8", "onepass", "v9"])
@pytest.mark.parametrize("unroll", R.UNROLLS)
def test_every_unroll(version: str, unroll: int) -> None:
    host = np.random.default_rng(unroll).integers(-4, 5, 10**6 + 3).astype(np.float32)
    x = cupy.asarray(host)[1:]
    want = float(host[1:].sum(dtype=np.float64))
    for block in (128, 512):
        plan = R.make_plan(version, x.size, block, unroll=unroll)
        assert float(plan(x)[0]) == want


def test_onepass_is_deterministic_run_to_run() -> None:
    x = cupy.random.RandomState(3).standard_normal(10**7 + 3, dtype=cupy.float32)
    plan = R.make_plan("onepass", x.size, 256)
    assert plan.grids[0] > 1  # several blocks, so the last one to finish varies
    bits = {int(plan(x).view(cupy.uint32)[0]) for _ in range(50)}
    bits.add(int(R.make_plan("onepass", x.size, 256)(x).view(cupy.uint32)[0]))
    assert len(bits) == 1
    assert int(plan._done[0]) == 0  # the last block reset the counter


def test_onepass_result_matches_its_partials() -> None:
    x = cupy.random.RandomState(4).random_sample(2**22 + 3, dtype=cupy.float32)
    plan = R.make_plan("onepass", x.size, 256)
    total = float(plan(x)[0])
    partials = plan.buffers[0]
    assert partials.size == plan.grids[0]
    assert abs(total - float(cupy.sum(partials, dtype=cupy.float64))) <= 1e-6 * abs(total)


def test_grid_is_sized_from_the_gpu() -> None:
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    for version in ("v6", "v7", "v8", "onepass"):
        resident = R.resident_blocks(version, 256)
        assert resident % sms == 0 and resident >= sms
        assert R.make_plan(version, 2**28, 256).grids[0] == resident


@pytest.mark.parametrize("n", [1000, 2**20, 10**7 + 3, 2**28])
def test_v9_is_deterministic_and_advances_its_tag(n: int) -> None:
    x = cupy.random.RandomState(n % 1000).standard_normal(n, dtype=cupy.float32)
    plan = R.make_plan("v9", n)
    assert (plan.block, plan.unroll) == R.default_launch("v9", n)
    runs = 20 if n < 2**28 else 5
    bits = {int(plan(x).view(cupy.uint32)[0]) for _ in range(runs)}
    bits.add(int(R.make_plan("v9", n)(x).view(cupy.uint32)[0]))
    assert len(bits) == 1
    ref = float(cupy.sum(x, dtype=cupy.float64))
    got = float(plan.result[0])
    assert abs(got - ref) <= R.error_bound(float(cupy.abs(x).sum(dtype=cupy.float64)), n, "v9", plan.block,
                                            plan.grids[0])
    if plan.grids[0] > 1:
        state = int(plan._state.get()[0])
        assert state == runs << 32  # ticket count reset (low word), one tag per launch (high word)
        tags = (plan._slots.get() >> np.uint64(32)).astype(np.uint32)
        assert (tags == runs).all()


def test_v9_in_a_replayed_cuda_graph() -> None:
    """Stream order alone carries the tag from launch to launch: a graph of 10 launches replayed 3 times."""
    host = np.random.default_rng(9).integers(-4, 5, 2**22 + 1).astype(np.float32)
    x = cupy.asarray(host)
    plan = R.make_plan("v9", x.size)
    launch, _ = plan.launchers(x)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for _ in range(10):
            launch()
        graph = stream.end_capture()
    for _ in range(3):
        plan.result.fill(cupy.nan)
        graph.launch(stream)
        stream.synchronize()
        assert float(plan.result[0]) == float(host.sum(dtype=np.float64))
    assert int(plan._state[0]) == 30 << 32


def test_v9_grid_policy() -> None:
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    small = R.make_plan("v9", 2**16)
    assert small.block == 256 and small.grids == (-(-2**16 // R.tile_size("v9", 256)),)
    assert R.make_plan("v9", 1024).grids == (1,)  # one block: no ticket, no slots read
    assert R.make_plan("v9", 2**20).grids == (R.V9_WARP_SLOTS,)
    assert R.make_plan("v9", 2**24).grids == (R.V9_L2_MAX_BLOCKS,)  # one wave of HBM would do
    big = R.make_plan("v9", 2**30)
    resident = R.resident_blocks("v9", big.block)
    assert big.block == 1024 and big.grids[0] == R.V9_MAX_WAVES * resident and resident % sms == 0
    assert big.stream_loads and not R.make_plan("v9", 2**20).stream_loads  # evict-first only past the L2
