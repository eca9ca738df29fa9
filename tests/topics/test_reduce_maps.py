"""The ladder's maps, measured: the SIMT machine's trace of one block of the real kernels in
``kernels/reduce_v*.cu`` (helpers.topics.reduce_maps), checked against facts of the kernels' loops worked
out by hand, and the full reductions on the machine against exact sums (the GPU test checks that
the GPU and the machine agree on every defined value)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.topics import reduce as R
from helpers.topics import reduce_maps as M

BLOCKS = (64, 128, 256, 512, 1024)


@pytest.mark.parametrize("block", (64, 256, 1024))
@pytest.mark.parametrize("version", R.VERSIONS)
def test_every_version_sums_exactly_on_the_machine(version: str, block: int) -> None:
    """Integer-valued input: every partial is exact in float32, so any order gives the exact sum."""
    x = np.random.default_rng(block).integers(-8, 9, 3 * block * 4 + 5).astype(np.float32)
    run = R.run_passes(x, version, block, backend="emulator")
    assert run.engine == "machine" and run.value == float(x.astype(np.float64).sum())
    assert len(run.passes) == len(run.grids) == len(R.pass_grids(version, x.size, block, R.machine_resident_blocks(block)))
    assert run.defined and not [f for p in run.passes for f in p.report.issues]


def test_v4_legacy_races_and_its_sum_is_undefined() -> None:
    x = np.ones(1543, np.float32)
    assert not R.run_passes(x, "v4_legacy", 256, backend="emulator").defined
    found = M.races("v4_legacy")
    assert found and {f.detail["between"] for f in found} == {"lanes of one warp"}
    assert {f.line for f in found} <= set(range(17, 23)) and {f.detail["hazard"] for f in found} == {"RAW", "WAR"}
    assert M.races("v4") == []
    assert "reduce_v4_legacy.cu:17" in M.format_races(found) and M.format_races([]) == "the machine: no race"


def test_v0_and_v1_add_the_same_pairs_v2_others() -> None:
    x = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    p0, p1, p2 = (R.first_pass(x, v, 256, backend="emulator") for v in ("v0", "v1", "v2"))
    np.testing.assert_array_equal(p0.view(np.uint32), p1.view(np.uint32))
    assert not np.array_equal(p0, p2)


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
    assert a4[-1, 0].all() and not a4[-1, 1:].any()  # the last warp step: warp 0's 32 lanes execute
    assert [st.stride for st in M.tree_steps("v4", 256)] == [128, 64, 32, 16, 8, 4, 2, 1]
    assert M.tree_steps("v0", 256)[5].issued.sum() == 4   # s = 32: the PTX branches past idle warps


def test_v1_conflicts_grow_with_the_stride_v0_v2_v4_have_none() -> None:
    deg = M.bank_conflict_degree("v1", 1024)
    assert deg[:, 0].tolist() == [2, 4, 8, 16, 32, 16, 8, 4, 2, 1]
    assert M.bank_conflict_degree("v1", 256)[:, 0].tolist() == [2, 4, 8, 8, 8, 4, 2, 1]
    for v in ("v0", "v2", "v3", "v4", "v5"):
        assert M.bank_conflict_degree(v, 256).max() == 1, v
    t1, t2 = M.shared_traffic("v1", 256), M.shared_traffic("v2", 256)
    assert t1["ld_extra_wavefronts"] > 0 and t2["ld_extra_wavefronts"] == 0
    assert t1["ld_requests"] == t2["ld_requests"]  # same requests, v1's take more wavefronts


def test_shared_requests_match_nsight_compute() -> None:
    """One block on the machine makes the shared loads per block ncu counted on the H200 (v0, v2)."""
    from helpers import data

    ncu = data.load("ncu_ladder")["by_version"]
    for v in ("v0", "v2"):
        e = ncu[v]
        assert M.shared_traffic(v, e["block"])["ld_requests"] * e["grid"] == \
            e["measured"]["smsp__sass_inst_executed_op_shared_ld.sum"]


def test_first_step_idle_threads() -> None:
    f2, f3 = M.first_step("v2", 256), M.first_step("v3", 256)
    assert (f2.threads, f2.working, f2.idle, f2.elements_per_block) == (256, 128, 128, 256)
    assert (f3.threads, f3.working, f3.idle, f3.elements_per_block) == (256, 256, 0, 512)
    assert f2.lanes[:4].all() and not f2.lanes[4:].any()
    assert M.first_step("v0", 1024).idle == 512


@pytest.mark.parametrize("block", (64, 256, 1024))
def test_barriers_v4_removes_six(block: int) -> None:
    log2 = block.bit_length() - 1
    for v in ("v0", "v1", "v2", "v3"):
        assert M.barriers(v, block) == {"syncthreads": 1 + log2, "syncwarp": 0}
    assert M.barriers("v4", block) == {"syncthreads": 1 + log2 - 6, "syncwarp": 12}
    assert M.barriers("v4_legacy", block) == {"syncthreads": 1 + log2 - 6, "syncwarp": 0}
    assert M.barriers("v5", block) == M.barriers("v6", block) == M.barriers("v4", block)
    assert M.barriers("v7", block)["syncthreads"] == M.barriers("v8", block)["syncthreads"] == 1
    assert M.barriers("onepass", block)["syncthreads"] == 2


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="version must be one of v0, v1, v2, v3, v4, v4_legacy, v5"):
        M.tree_steps("v8", 256)
    with pytest.raises(ValueError, match=r"block must be a power of two in \[64, 1024\]"):
        M.active_lanes("v0", 96)
    with pytest.raises(ValueError, match="block must be"):
        M.barriers("v7", 32)
    with pytest.raises(ValueError, match="version must be"):
        M.measure(["v0"], 256)   # unhashable: still the message, not a TypeError from the cache


@pytest.mark.parametrize("block", (64, 256, 1024))
def test_lane_slots(block: int) -> None:
    slots = {v: M.lane_slots(v, block) for v in ("v0", "v1", "v2", "v3", "v4")}
    for v, s in slots.items():
        assert 0 < s["efficiency"] <= 1 and s["working"] <= s["issued"]
    assert slots["v0"]["working"] == slots["v2"]["working"] == block - 1
    # the PTX branches: v2's idle warps skip the step, v0's scattered lanes keep every warp busy
    assert slots["v2"]["issued"] < slots["v0"]["issued"]


def test_steps_table() -> None:
    lines = M.steps_table("v1", 256).splitlines()
    assert lines[0].startswith("reduce_v1<256>: 8 warps (measured") and len(lines) == 4 + 8
    assert lines[1].startswith("working: threads that add")    # the columns' legend
    assert lines[4].split() == ["1", "128", "4", "0", "2-way", "syncthreads"]
    v0 = M.steps_table("v0", 256).splitlines()
    assert v0[4].split() == ["1", "128", "8", "8", "1-way", "syncthreads"]
    assert M.steps_table("v4", 256).splitlines()[-1].split()[-1] == "syncwarp"
    assert M.steps_table("v4_legacy", 256).splitlines()[-1].split()[-1] == "none"


def test_machine_sizes_are_bounded_and_say_so() -> None:
    with pytest.raises(ValueError, match=r"at most 1,048,576 \(2\^20\) on the SIMT machine"):
        R.run_passes(np.ones(R.MACHINE_MAX_N + 1, np.float32), "v0", backend="emulator")
    with pytest.raises(TypeError, match="x must be a NumPy array"):
        R.run_passes([1.0], "v0", backend="emulator")
    r = R.reduce_sum(np.ones(1000, np.float32), "v3", backend="emulator")
    assert (r.value, r.engine, r.grids) == (1000.0, "machine", (2, 1))
    assert R.machine_resident_blocks(256) == 1056


def test_the_recorded_sass_differs_from_the_ptx_where_notebook_05_says() -> None:
    """ptxas if-converts v0..v2's guard (one SASS branch against the PTX's ten); v1's SASS has one
    shared load fewer than its PTX, v4's more (data/machine_sass.json.gz)."""
    from helpers.recording.proof import counters as P

    c = {v: P.sass_counts(v) for v in ("v0", "v1", "v2", "v4")}
    if any(x is None for x in c.values()):
        pytest.skip("data/machine_sass.json.gz is not here")
    for v in ("v0", "v1", "v2"):
        assert (c[v]["ptx"]["branch"], c[v]["sass"]["branch"]) == (10, 1), v
    assert c["v1"]["sass"]["shared load"] < c["v1"]["ptx"]["shared load"]
    assert c["v4"]["sass"]["shared load"] > c["v4"]["ptx"]["shared load"]
