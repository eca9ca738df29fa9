"""Warp-aggregated atomics on the GPU give the emulator's elements and atomic count."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import ballot_uses


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
