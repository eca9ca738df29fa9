"""v8 and onepass on the GPU: float4 loads at every misalignment and tail, every unroll, and the
one-launch kernel's run-to-run determinism and counter reset."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import reduce as R

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("version", ["v8", "onepass"])
def test_every_misalignment_and_tail(version: str) -> None:
    host = np.random.default_rng(1).integers(-4, 5, 2**20 + 16).astype(np.float32)
    base = cupy.asarray(host)
    for offset in range(4):
        for n in (1, 2, 3, 4, 5, 7, 8, 9, 1000, 4099, 2**20 + 1):
            x = base[offset: offset + n]
            want = float(host[offset: offset + n].sum(dtype=np.float64))
            for block in (64, 256, 1024):
                assert R.reduce_sum(x, version, block).value == want, (version, offset, n, block)


@pytest.mark.parametrize("version", ["v8", "onepass"])
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
