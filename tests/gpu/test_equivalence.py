"""The proof: emulator against hardware, bit for bit, over a large randomised set (GPU only)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.engine import cases
from helpers.engine import params
from helpers.topics.warp_reduce import warp_reduce_sum_trace

pytestmark = pytest.mark.gpu


def test_random_configurations_match_bit_for_bit() -> None:
    rng = np.random.default_rng(20261130)
    n_configs = n_cases = 0
    bad = []
    for case in cases.random_cases(rng, n_warps=8):
        n = cases.mismatches(case, cases.run(case, "emulator"), cases.run(case, "cupy"))
        n_cases += 1
        n_configs += len(case["mask"])
        if n:
            bad.append((case["op"], case.get("dtype"), case.get("width"), case.get("arg"), n))
    print(f"\nEQUIVALENCE: {n_configs} warp configurations in {n_cases} launches, {len(bad)} mismatching launches")
    assert n_configs >= 10_000
    assert not bad, bad[:10]


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_warp_reduce_sum_trace_matches(dtype: str) -> None:
    v = np.random.default_rng(3).integers(-50, 50, size=(4, 32)).astype(dtype)
    assert warp_reduce_sum_trace(v, "emulator").same_as(warp_reduce_sum_trace(v, "cupy"))


def test_delta_uses_low_five_bits_on_hardware() -> None:
    """Why params.lane_offset rejects delta >= 32: the hardware would silently use delta & 31."""
    import cupy

    from helpers.engine import warp_cupy

    fn = warp_cupy._function("shuffle_kernel<int, 2>")
    vals = cupy.arange(32, dtype=cupy.int32)
    mask = cupy.asarray([params.FULL_MASK], dtype=cupy.uint32)
    state = cupy.ones(32, dtype=cupy.uint8)   # every lane calling (helpers.engine.emulator.CALLING)
    for delta in (32, 33, 37, 63):
        out, src = cupy.zeros(32, cupy.int32), cupy.zeros(32, cupy.int32)
        arg = cupy.full(32, delta, dtype=cupy.int32)
        fn((1,), (32,), (vals, arg, mask, state, np.int32(32), np.int32(1), out, src))
        expect = np.where(np.arange(32) + (delta & 31) <= 31, np.arange(32) + (delta & 31), np.arange(32))
        assert cupy.asnumpy(out).tolist() == expect.tolist(), delta
