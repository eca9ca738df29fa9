"""The dispatcher's contracts, checked without a GPU: validation messages, grid formulas, registry."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.topics import reduce as R


@pytest.mark.parametrize("block", [32, 100, 2048, 0, -256, 256.0, True, "256"])
def test_bad_block_names_block_and_allowed_values(block) -> None:
    with pytest.raises(ValueError, match=r"block must be a power of two in \[64, 1024\] \(64, 128, 256, 512, 1024\); got"):
        R.check_block(block)
    with pytest.raises(ValueError, match="block must be"):
        R.reduce_sum(np.ones(8, np.float32), "v0", block)


def test_bad_version_names_version_and_allowed_values() -> None:
    with pytest.raises(ValueError, match="version must be one of v0, v1, v2, v3, v4, v5, v6, v7, v8, onepass, v9; "
                                         "got 'v10'"):
        R.reduce_sum(np.ones(8, np.float32), "v10")
    with pytest.raises(ValueError, match="version must be one of"):
        R.reduce_sum(np.ones(8, np.float32), "v4_legacy")  # undefined result: not offered by reduce_sum
    assert R.check_version("v4_legacy", racy_ok=True) == "v4_legacy"


def test_empty_input_names_n() -> None:
    with pytest.raises(ValueError, match=r"n \(the number of elements in x\) must be an integer >= 1; got 0"):
        R.reduce_sum(np.ones(0, np.float32), "v3")
    with pytest.raises(ValueError, match="n .* must be an integer >= 1"):
        R.grid_size("v0", 0)


def test_wrong_dtype_and_layout() -> None:
    with pytest.raises(ValueError, match="x must be a float32 array; got float64"):
        R.reduce_sum(np.ones(8), "v0")
    with pytest.raises(ValueError, match="x must be a float32 array; got list"):
        R.reduce_sum([1.0, 2.0], "v0")
    with pytest.raises(ValueError, match="x must be C-contiguous"):
        R.reduce_sum(np.ones(16, np.float32)[::2], "v0")


def test_host_array_runs_on_the_machine() -> None:
    """A NumPy array is summed by the real kernel on the SIMT machine (no GPU here)."""
    r = R.reduce_sum(np.ones(8, np.float32), "v0", backend="emulator")
    assert (r.value, r.engine, r.grids) == (8.0, "machine", (1,))
    with pytest.raises(ValueError, match="must be at most 1,048,576"):
        R.reduce_sum(np.ones(2**20 + 1, np.float32), "v0", backend="emulator")


def test_seed_refuses_n_that_it_would_read_past() -> None:
    with pytest.raises(ValueError, match="n .* must be a multiple of 256 for the seed kernel"):
        R.seed_first_pass(np.ones(1000, np.float32))


@pytest.mark.parametrize("n", [1, 2, 31, 33, 1000, 2**20 + 1, 10**7 + 3, 2**30])
@pytest.mark.parametrize("block", R.BLOCKS)
def test_grids_cover_the_input_exactly_once(n: int, block: int) -> None:
    resident = 132 * 8
    for v in ("v0", "v1", "v2"):
        g = R.grid_size(v, n, block)
        assert (g - 1) * block < n <= g * block
    for v in ("v3", "v4", "v5", "v4_legacy"):
        g = R.grid_size(v, n, block)
        assert (g - 1) * 2 * block < n <= g * 2 * block
    for v in ("v6", "v7"):
        assert R.grid_size(v, n, block, resident) == min(-(-n // (2 * block)), resident)
    for v in ("v8", "onepass"):
        assert R.grid_size(v, n, block, resident) == min(-(-n // (16 * block)), resident)


def test_grid_stride_versions_need_the_resident_blocks() -> None:
    with pytest.raises(ValueError, match="resident_blocks must be >= 1"):
        R.grid_size("v6", 1000, 256)


def test_pass_grids_end_in_one_block() -> None:
    assert R.pass_grids("v3", 2**25, 256) == (65536, 128, 1)
    assert R.pass_grids("v0", 2**20, 1024) == (1024, 1)
    assert R.pass_grids("v2", 5, 64) == (1,)
    assert R.pass_grids("v8", 2**28, 256, 1056) == (1056, 1)
    assert R.pass_grids("v7", 100, 256, 1056) == (1,)
    assert R.pass_grids("onepass", 2**28, 256, 1056) == (1056,)
    for v in R.VERSIONS:
        if v in R.ONE_LAUNCH:  # one launch whatever its grid
            continue
        for n in (1, 1000, 2**30):
            assert R.pass_grids(v, n, 64, 4224)[-1] == 1


def test_too_many_blocks_is_refused() -> None:
    with pytest.raises(ValueError, match="more than gridDim.x allows"):
        R.grid_size("v0", 2**38, 64)


def test_registry_lists_every_instantiation() -> None:
    assert R.REDUCE_KERNELS["reduce_v0"] == tuple(f"reduce_v0<{b}>" for b in R.BLOCKS)
    assert R.REDUCE_KERNELS["reduce_onepass"][-1] == "reduce_onepass<1024>"
    assert R.REDUCE_KERNELS["seed_reduce_v4"] == ("seed_reduce_v4<128>", "seed_reduce_v4<256>")
    assert R.REDUCE_KERNELS["reduce_timing"] == ("reduce_empty", "reduce_spin")
    assert R.kernel_name("v4_legacy", 64) == "reduce_v4_legacy<64>"
    from helpers.topics.registry import registry

    assert set(R.REDUCE_KERNELS) <= set(registry())


def test_tile_sizes() -> None:
    assert R.tile_size("v2", 256) == 256
    assert R.tile_size("v6", 256) == 512
    assert R.tile_size("v8", 256) == 4096
    assert R.tile_size("onepass", 128, unroll=8) == 4096
    with pytest.raises(ValueError, match="unroll must be one of 1, 2, 4, 8, 16; got 3"):
        R.tile_size("v8", 256, unroll=3)


def test_error_bound_grows_with_the_chain() -> None:
    tree = R.error_bound(1.0, 2**20, "v3", 256)
    strided = R.error_bound(1.0, 2**20, "v8", 256, first_grid=1)
    assert 0 < tree < strided
    assert tree < 1e-5


def test_v9_grid_regimes() -> None:
    """One block up to 2^14 floats; an L2-resident input one round of loads per thread in blocks of
    256 up to 2^20 floats (at most 256 blocks: warp 0 collects the slots), then at most 128 blocks;
    an input in HBM 128 blocks while one wave would do, then whole waves of resident blocks, more
    the longer the stream, evict-first."""
    l2 = R.MACHINE_L2_BYTES
    assert R.pass_grids("v9", 1000, 256, 1056, 4, l2) == (1,)          # one block: no ticket at all
    assert R.pass_grids("v9", 2**14, 512, 528, 4, l2) == (1,)
    assert R.pass_grids("v9", 2**16, 256, 1056, 4, l2) == (16,)        # 2^16 / (256 threads x 4 x 4)
    assert R.pass_grids("v9", 2**20, 256, 1056, 4, l2) == (R.V9_WARP_SLOTS,)
    assert R.pass_grids("v9", 2**21, 512, 528, 4, l2) == (R.V9_L2_MAX_BLOCKS,)
    assert R.pass_grids("v9", 2**23, 1024, 264, 4, l2) == (R.V9_L2_MAX_BLOCKS,)
    assert R.pass_grids("v9", 2**24, 1024, 264, 4, l2) == (R.V9_L2_MAX_BLOCKS,)   # one wave would do
    assert R.pass_grids("v9", 2**27, 1024, 264, 4, l2) == (R.V9_L2_MAX_BLOCKS,)
    assert R.pass_grids("v9", 2**28, 1024, 264, 4, l2) == (2 * 264,)
    assert R.pass_grids("v9", 2**30, 1024, 264, 4, l2) == (R.V9_MAX_WAVES * 264,)
    assert R.pass_grids("v9", 2**24, 1024, 100, 4, l2) == (100,)       # never more than one wave's worth
    assert R.pass_grids("v9", 2**24, 256, 1056, 4, l2) == (512,)       # the threads of 128 blocks of 1024
    launches = {k: R.v9_launch(2**k, l2) for k in (10, 11, 12, 13, 14, 16, 20, 21, 22, 24)}
    assert [(v.block, v.unroll, v.stream) for v in launches.values()] == [
        (128, 2, False), (128, 4, False), (256, 4, False), (512, 4, False), (512, 4, False),
        (256, 4, False), (256, 4, False), (512, 4, False), (1024, 4, False), (1024, 4, True)]
    assert R.v9_launch(5, l2) == R.V9Launch(128, 1, False)
    assert R.v9_waves(10, 264) == 1 and R.v9_waves(10**9, 264) == R.V9_MAX_WAVES
    assert not R.v9_streams(2**22, 50 * 2**20) and R.v9_streams(2**24, 50 * 2**20)
    assert R.grid_size("v9", 2**20, 256, 1056) == 256                  # None: the H200's L2
    assert R.kernel_name("v9", 512) == "reduce_v9<512>" == R.kernel_name("v9", 512, grid=2)
    assert R.kernel_name("v9", 512, grid=1) == "reduce_v9<512, true>"  # one block: the small instantiation
    assert R.kernel_name("v8", 512, grid=1) == "reduce_v8<512>"
    with pytest.raises(ValueError, match=r"l2_bytes \(the GPU's L2 size\) must be an integer >= 1 or None; got 0"):
        R.grid_size("v9", 2**20, 512, 528, l2_bytes=0)


def test_seed_block_is_checked() -> None:
    assert R.seed_grid(1024) == 4 and R.seed_grid(1024, 256) == 2
    with pytest.raises(ValueError, match="block must be one of 128, 256 for the seed kernel; got 512"):
        R.seed_grid(1024, 512)
