"""Warp-aggregated atomics on the GPU give the emulator's elements and atomic count."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.topics import ballot_uses


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 1000, 1 << 20])
def test_compact_gpu_matches_emulator(n: int) -> None:
    v = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    assert ballot_uses.same_elements(ballot_uses.compact(v, 0.3, "cupy"), ballot_uses.compact(v, 0.3, "emulator"))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 1000, 1 << 20])
def test_compact_with_coalesced_threads_keeps_the_same_elements(n: int) -> None:
    """cooperative_groups::coalesced_threads(): the same elements; at least one atomic per warp with
    a passing lane (more if the scheduler split the passing lanes), never more than one per element."""
    v = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    gpu, emu = ballot_uses.compact(v, 0.3, "cupy", "cg"), ballot_uses.compact(v, 0.3, "emulator", "cg")
    assert np.array_equal(np.sort(gpu.kept), np.sort(emu.kept))
    assert emu.atomics <= gpu.atomics <= gpu.per_thread_atomics


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ballot_uses.BALLOT_USES_KERNELS["warp_aggregated"])
def test_gpu_and_machine_agree_on_the_counter_and_the_elements(kernel: str) -> None:
    """Issue 12: the same launch on the GPU and on the SIMT machine (check=True): the same count,
    the same elements (as a multiset: the order of the warps' atomics is the hardware's), and for
    the ballot kernel the same number of atomics; the machine finds no race or undefined read."""
    from helpers.topics import launch as L

    v = np.random.default_rng(12).standard_normal(4096).astype(np.float32)
    args = [v, np.int64(v.size), np.float32(0.3), np.full(v.size, np.nan, np.float32), np.zeros(1, np.int32),
            np.zeros(1, np.int32)]
    r = L.launch("warp_aggregated", kernel, v.size // 256, 256, args, backend="cupy", check=True)
    g, m = r.outputs, r.machine_outputs
    assert r.report.clean, r.report.summary()
    assert g[4][0] == m[4][0] == int((v > 0.3).sum())
    n = int(g[4][0])
    assert np.array_equal(np.sort(g[3][:n]), np.sort(m[3][:n]))
    if kernel == "compact_kernel":
        assert g[5][0] == m[5][0]
    else:
        assert m[5][0] <= g[5][0] <= n
