"""Every reduction version on the GPU: exact on small-integer floats, within float32 rounding of a
float64 reference on random data, for awkward sizes and every block size; every partial written."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from helpers.topics import reduce as R

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

NS = (1, 2, 31, 33, 1000, 2**20 + 1, 10**7 + 3)


@functools.lru_cache(maxsize=None)
def _inputs(n: int) -> tuple:
    """(integer-valued floats in [-4, 4] and their exact sum, uniform [-1, 1) floats, float64 sum, sum |x|)."""
    rng = np.random.default_rng(n)
    ints = rng.integers(-4, 5, n).astype(np.float32)
    rand = rng.uniform(-1, 1, n).astype(np.float32)
    return (cupy.asarray(ints), float(ints.sum(dtype=np.float64)), cupy.asarray(rand),
            float(rand.sum(dtype=np.float64)), float(np.abs(rand).sum(dtype=np.float64)))


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("version", R.VERSIONS)
def test_exact_and_within_rounding(version: str, n: int) -> None:
    ints, want_int, rand, want, abs_sum = _inputs(n)
    for block in R.BLOCKS:
        got = R.reduce_sum(ints, version, block)
        assert got.value == want_int, (version, block, n)
        res = R.reduce_sum(rand, version, block)
        bound = R.error_bound(abs_sum, n, version, block, res.grids[0])
        assert abs(res.value - want) <= bound, (version, block, n, res.value, want, bound)


@pytest.mark.parametrize("version", R.VERSIONS)
def test_every_partial_is_written(version: str) -> None:
    for n in (1000, 2**20 + 1):
        ints, want_int, *_ = _inputs(n)
        for block in R.BLOCKS:
            plan = R.make_plan(version, n, block)
            for buf in plan.buffers:
                buf.fill(cupy.nan)
            partials = plan.first_pass(ints)
            assert bool(cupy.isfinite(partials).all()), (version, block, n)
            assert float(cupy.sum(partials, dtype=cupy.float64)) == want_int
            plan.second_pass()
            assert all(bool(cupy.isfinite(b).all()) for b in plan.buffers)
            assert float(plan.result[0]) == want_int


def test_large_input_every_version() -> None:
    """Past 2^27 elements: many blocks, several second-pass launches for v0..v5."""
    n = 2**27 + 5
    x = cupy.random.RandomState(5).randint(-4, 5, n).astype(cupy.float32)
    want = float(cupy.sum(x, dtype=cupy.float64))
    for version in R.VERSIONS:
        assert R.reduce_sum(x, version, 256).value == want, version
    del x


def test_plan_is_reusable_and_rejects_other_sizes() -> None:
    ints, want_int, *_ = _inputs(1000)
    plan = R.make_plan("v3", 1000, 128)
    assert [float(plan(ints)[0]) for _ in range(3)] == [want_int] * 3
    with pytest.raises(ValueError, match="x must have n=1000 elements"):
        plan(cupy.ones(999, cupy.float32))


def test_seed_kernel_matches_v4_at_its_configuration() -> None:
    """The seed's kernel adds in the same order as reduce_v4<128>: identical partials, bit for bit."""
    for n in (256, 1024, 2**20):
        x = cupy.asarray(np.random.default_rng(n).standard_normal(n).astype(np.float32))
        seed = R.seed_first_pass(x).get()
        ours = R.first_pass(x, "v4", 128).get()
        np.testing.assert_array_equal(seed.view(np.uint32), ours.view(np.uint32))
        machine = R.first_pass(x.get(), "v4", 128, backend="emulator")   # the SIMT machine, same kernel
        np.testing.assert_array_equal(ours.view(np.uint32), machine.view(np.uint32))


def test_legacy_runs() -> None:
    """v4_legacy launches and writes its partials; its value is undefined (the race), so not checked."""
    ints, *_ = _inputs(1000)
    assert bool(cupy.isfinite(R.first_pass(ints, "v4_legacy", 256)).all())


def test_non_contiguous_and_wrong_dtype_on_gpu() -> None:
    with pytest.raises(ValueError, match="x must be C-contiguous"):
        R.reduce_sum(cupy.ones(64, cupy.float32)[::2], "v0")
    with pytest.raises(ValueError, match="x must be a float32 array; got float64"):
        R.reduce_sum(cupy.ones(64), "v0")
    with pytest.raises(ValueError, match="n .* must be an integer >= 1; got 0"):
        R.reduce_sum(cupy.ones(0, cupy.float32), "v0")
