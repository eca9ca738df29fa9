"""The teaching maps: derived from the kernels' index arithmetic, checked against the kernel text and
against hand-computed facts (the GPU test checks the float32 emulation against the kernels bit for bit)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import kernels
from helpers import reduce_maps as M

BLOCKS = (64, 128, 256, 512, 1024)


@pytest.mark.parametrize("name", sorted(M.KERNEL_LINES))
def test_mirrored_lines_are_in_the_kernels(name: str) -> None:
    src = kernels.source(name if name.endswith(".cuh") else name)
    for line in M.KERNEL_LINES[name]:
        assert line in src, f"{name} no longer contains {line!r}: update helpers/reduce_maps.py"


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("version", M.TREE_VERSIONS)
def test_every_tree_reduces_the_block_exactly(version: str, block: int) -> None:
    x = np.random.default_rng(block).integers(-8, 9, 3 * block + 5).astype(np.float32)
    partials = M.emulate_first_pass(x, version, block)
    per_block = block if version in ("v0", "v1", "v2") else 2 * block
    assert len(partials) == -(-x.size // per_block)
    expect = np.add.reduceat(x.astype(np.float64), np.arange(0, x.size, per_block))
    np.testing.assert_array_equal(partials, expect)


def test_v0_and_v1_add_the_same_pairs_v2_others() -> None:
    for a, b in zip(M.tree_steps("v0", 256), M.tree_steps("v1", 256)):
        assert a.stride == b.stride
        np.testing.assert_array_equal(np.sort(a.dst), np.sort(b.dst))
        np.testing.assert_array_equal(np.sort(a.src), np.sort(b.src))
    x = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    np.testing.assert_array_equal(M.emulate_first_pass(x, "v0", 256), M.emulate_first_pass(x, "v1", 256))
    assert not np.array_equal(M.emulate_first_pass(x, "v0", 256), M.emulate_first_pass(x, "v2", 256))


def test_v0_diverges_in_every_warp_v1_in_at_most_one() -> None:
    div0 = M.divergent_warps("v0", 256)
    assert div0[:5].all()  # s = 1 .. 16: every warp has 16, 8, 4, 2, 1 working lanes
    div1 = M.divergent_warps("v1", 256)
    assert div1.sum(axis=1).max() == 1
    assert not div1[:3].any()  # s = 1, 2, 4: 128, 64, 32 threads: whole warps
    assert not M.divergent_warps("v2", 256)[:3].any()


def test_active_lanes_counts() -> None:
    a0 = M.active_lanes("v0", 256)
    assert [int(s.sum()) for s in a0] == [128, 64, 32, 16, 8, 4, 2, 1]
    assert a0[0, 3].tolist() == [lane % 2 == 0 for lane in range(32)]
    a1 = M.active_lanes("v1", 256)
    assert a1[0, :4].all() and not a1[0, 4:].any()  # compacted into the first four warps
    a4 = M.active_lanes("v4", 256)
    u4 = M.useful_lanes("v4", 256)
    assert a4[-1, 0].all() and u4[-1, 0].sum() == 1  # the last warp step: 32 lanes execute, 1 matters


def test_conflict_degree_definition() -> None:
    assert M.conflict_degree(np.arange(32)) == 1
    assert M.conflict_degree(np.arange(32) * 2) == 2
    assert M.conflict_degree(np.arange(32) * 32) == 32
    assert M.conflict_degree(np.zeros(32, int)) == 1  # a broadcast, not a conflict
    assert M.conflict_degree(np.array([], int)) == 0
    assert M.conflict_degree(np.array([0, 32, 64, 1])) == 3


def test_v1_conflicts_grow_with_the_stride_v0_v2_v4_have_none() -> None:
    deg = M.bank_conflict_degree("v1", 1024)
    assert deg[:, 0].tolist() == [2, 4, 8, 16, 32, 16, 8, 4, 2, 1]
    assert M.bank_conflict_degree("v1", 256)[:, 0].tolist() == [2, 4, 8, 8, 8, 4, 2, 1]
    for v in ("v0", "v2", "v3", "v4", "v5"):
        assert M.bank_conflict_degree(v, 256).max() == 1, v
    t1, t2 = M.shared_traffic("v1", 256), M.shared_traffic("v2", 256)
    assert t1["ld_extra_wavefronts"] > 0 and t2["ld_extra_wavefronts"] == 0
    assert t1["ld_requests"] == t2["ld_requests"]  # same requests, v1's take more wavefronts


def test_first_step_idle_threads() -> None:
    assert M.first_step("v2", 256) == M.FirstStep(256, 128, 128, 256)
    assert M.first_step("v3", 256) == M.FirstStep(256, 256, 0, 512)
    assert M.first_step("v0", 1024).idle == 512


@pytest.mark.parametrize("block", BLOCKS)
def test_barriers_v4_removes_six(block: int) -> None:
    log2 = block.bit_length() - 1
    for v in ("v0", "v1", "v2", "v3"):
        assert M.barriers(v, block) == {"syncthreads": 1 + log2, "syncwarp": 0}
    assert M.barriers("v4", block) == {"syncthreads": 1 + log2 - 6, "syncwarp": 12}
    assert M.barriers("v4_legacy", block) == {"syncthreads": 1 + log2 - 6, "syncwarp": 0}
    assert M.barriers("v5", block) == M.barriers("v6", block) == M.barriers("v4", block)
    assert M.barriers("v7", block)["syncthreads"] == M.barriers("v8", block)["syncthreads"] == 1


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="version must be one of v0, v1, v2, v3, v4, v4_legacy, v5"):
        M.tree_steps("v8", 256)
    with pytest.raises(ValueError, match=r"block must be a power of two in \[64, 1024\]"):
        M.active_lanes("v0", 96)
    with pytest.raises(ValueError, match="block must be"):
        M.barriers("v7", 32)


@pytest.mark.parametrize("block", BLOCKS)
def test_lane_slots(block: int) -> None:
    slots = {v: M.lane_slots(v, block) for v in ("v0", "v1", "v2", "v3", "v4")}
    warps = block // 32
    steps = block.bit_length() - 1
    for v, s in slots.items():
        assert s["useful"] == block - 1
        assert 0 < s["predicated_efficiency"] <= s["branched_efficiency"] <= 1
    # predicated: every warp issues every step, so v0 and v2 waste exactly the same slots
    assert slots["v0"]["predicated"] == slots["v2"]["predicated"] == steps * warps * 32
    # branched: v2's idle warps skip the step, v0's scattered lanes keep every warp busy
    assert slots["v2"]["branched"] < slots["v0"]["branched"]
    assert slots["v4"]["predicated"] < slots["v3"]["predicated"]


def test_steps_table() -> None:
    lines = M.steps_table("v1", 256).splitlines()
    assert lines[0] == "reduce_v1<256>: 8 warps" and len(lines) == 3 + 8
    assert lines[3].split() == ["1", "128", "4", "0", "2-way", "syncthreads"]
    v0 = M.steps_table("v0", 256).splitlines()
    assert v0[3].split() == ["1", "128", "8", "8", "1-way", "syncthreads"]
    assert M.steps_table("v4", 256).splitlines()[-1].split()[-1] == "syncwarp"
