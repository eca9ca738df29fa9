"""The SIMT machine's counters: divergence (active and predicated-on lanes), shared-memory
wavefronts by the 32-bank / 4-byte-word rule with broadcast, 32-byte global sectors, barriers."""
import numpy as np
import pytest

from helpers import machine

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
extern "C" __global__ void banks(float* out, int stride) {
    __shared__ float s[32 * 33];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x * stride) % (32 * 33)];
}

extern "C" __global__ void sectors(const float* in, float* out, int stride) {
    out[threadIdx.x] = in[threadIdx.x * stride];
}

extern "C" __global__ void branchy(int* out) {
    int x = threadIdx.x;
    if (threadIdx.x % 4 == 0) x *= 3;
    out[threadIdx.x] = x;
}
"""


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17",))


def _row(rep, text):
    rows = [r for r in rep.counters.per_instruction if text in r["ptx"]]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.parametrize("stride, wavefronts", [(0, 1), (1, 1), (2, 2), (4, 4), (32, 32), (33, 1), (16, 16)])
def test_shared_wavefronts_follow_the_bank_rule(mod, stride, wavefronts):
    out = np.zeros(32, np.float32)
    rep = mod.get_function("banks")((1,), (32,), (out, np.int32(stride)))
    row = _row(rep, "ld.shared")
    assert row["shared_requests"] == 1 and row["shared_wavefronts"] == wavefronts


@pytest.mark.parametrize("stride, n_sectors", [(1, 4), (2, 8), (8, 32), (0, 1)])
def test_global_sectors_coalesced_versus_strided(mod, stride, n_sectors):
    x = np.arange(32 * 8, dtype=np.float32)
    out = np.zeros(32, np.float32)
    rep = mod.get_function("sectors")((1,), (32,), (x, out, np.int32(stride)))
    assert _row(rep, "ld.global")["global_sectors"] == n_sectors
    assert _row(rep, "st.global")["global_sectors"] == 4


def test_divergence_counts_active_and_predicated_on_lanes(mod):
    out = np.zeros(64, np.int32)
    rep = mod.get_function("branchy")((1,), (64,), (out,))
    c = rep.counters
    assert c.per_warp["issued"].shape == (2,)
    np.testing.assert_array_equal(out, np.where(np.arange(64) % 4 == 0, 3, 1) * np.arange(64))
    assert (c.per_warp["predicated_on"] <= c.per_warp["active_lanes"]).all()
    assert c.divergence <= 1.0
    assert c.totals["issued"] == c.by_pc["issued"].sum()
