"""On a GPU: what issue 15 changed on the cupy path gives the emulator's answers, bit for bit.

warp_reduce_sum now runs the plain (uninstrumented) warp_reduce_sum kernel; warp_reduce, the
library reduces and float_order_batch take ``defined`` from the chunked, lane-major emulator; the
warp API's emulator verdict works in chunks. Sizes cross params.CHUNK_WARPS so that a verdict
assembled from several chunks meets one launch over all warps.
"""
from __future__ import annotations

import numpy as np
import pytest

from helpers.engine import params
from helpers.topics import reduce as R
from helpers.engine import warp
from helpers.topics import warp_reduce as wr

pytestmark = pytest.mark.gpu
GPU, EMU = "cupy", "emulator"
N = params.CHUNK_WARPS + 37


def _ints(dtype: str, n: int = N) -> np.ndarray:
    return np.random.default_rng(15).integers(-(2**31), 2**31, (n, 32), dtype=np.int64).astype(dtype)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32", "float64"])
def test_warp_reduce_sum_kernel_equals_emulator(dtype: str) -> None:
    if dtype.startswith("float"):
        v = np.random.default_rng(1).standard_normal((N, 32)).astype(dtype)
    else:
        v = _ints(dtype)
    gpu, emu = wr.warp_reduce_sum(v, GPU), wr.warp_reduce_sum(v, EMU)
    assert gpu.shape == (N,) and np.array_equal(gpu, emu)
    assert wr.warp_reduce_sum(v[0], GPU) == emu[0]


@pytest.mark.parametrize("config", [{}, {"tree": "xor", "width": 8}, {"n_valid": 20, "partial": "ballot"},
                                    {"op": "max", "width": 16, "n_valid": 5}])
def test_warp_reduce_on_many_warps_equals_emulator(config: dict) -> None:
    v = _ints("int32")
    gpu, emu = wr.warp_reduce(v, **config, backend=GPU), wr.warp_reduce(v, **config, backend=EMU)
    assert np.array_equal(gpu.values, emu.values) and np.array_equal(gpu.defined, emu.defined)
    assert gpu.correct == emu.correct


def test_compare_methods_and_float_order_batch_on_many_warps() -> None:
    v = np.random.default_rng(2).standard_normal((N, 32)).astype(np.float32)
    gpu, emu = wr.compare_methods(v, backend=GPU), wr.compare_methods(v, backend=EMU)
    for m in emu:
        assert np.array_equal(gpu[m].values, emu[m].values), m
    g, e = wr.float_order_batch(v, backend=GPU), wr.float_order_batch(v, backend=EMU)
    assert np.array_equal(g.tree, e.tree) and np.array_equal(g.ulps, e.ulps)


def test_warp_api_on_many_warps_equals_emulator() -> None:
    v = _ints("int32") % 7
    active = np.random.default_rng(3).random((N, 32)) < 0.8
    for fn in (warp.match_any, warp.reduce_add):
        g, e = fn(v, active=active, backend=GPU), fn(v, active=active, backend=EMU)
        assert np.array_equal(g.values, e.values) and np.array_equal(g.defined, e.defined)
    g, e = warp.shfl_down(v, 3, 16, active=active, backend=GPU), warp.shfl_down(v, 3, 16, active=active, backend=EMU)
    assert np.array_equal(g.values, e.values) and np.array_equal(g.defined, e.defined)
    # lanes not active are alive elsewhere (every ballot undefined), then exited (every ballot defined)
    for exited in (None, ~active):
        g, e = (warp.ballot(v > 2, active=active, exited=exited, backend=b) for b in (GPU, EMU))
        assert np.array_equal(g.values, e.values) and np.array_equal(g.defined, e.defined)
        assert bool(np.all(g.defined)) == (exited is not None)


def test_numpy_integers_reach_the_kernels() -> None:
    import cupy

    x = cupy.ones(np.int64(1 << 20), dtype=cupy.float32)
    plan = R.make_plan("v6", np.int64(1 << 20), np.int64(256), np.int64(4))
    assert float(plan(x)[0]) == float(1 << 20)
    assert R.reduce_sum(x, "v3", np.int32(512)).value == float(1 << 20)
