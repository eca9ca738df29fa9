"""The reduction ladder's kernels compile through NVRTC alone (no GPU), and say what they are."""
from __future__ import annotations

import re

import pytest

from helpers.engine import kernels
from helpers.topics.reduce import REDUCE_KERNELS

@pytest.mark.needs_nvrtc
@pytest.mark.parametrize("arch", kernels.ARCHS)
@pytest.mark.parametrize("name", sorted(REDUCE_KERNELS))
def test_compiles_for_every_arch(name: str, arch: str) -> None:
    text = kernels.ptx(name, arch, REDUCE_KERNELS[name])
    assert text.count(".entry") == len(REDUCE_KERNELS[name])


def test_every_reduce_file_is_registered() -> None:
    files = {n for n in kernels.kernel_names() if n.startswith(("reduce_", "seed_reduce"))}
    assert files == set(REDUCE_KERNELS)


@pytest.mark.parametrize("name", sorted(REDUCE_KERNELS))
def test_file_opens_with_its_contract(name: str) -> None:
    src = kernels.source(name)
    assert src.startswith("//")
    assert "Contract" in src.split("#include")[0] or "Contract" in src[:3000]


@pytest.mark.parametrize("version", ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "onepass"])
def test_kernel_is_anchored_for_the_notebooks(version: str) -> None:
    code = kernels.anchor(f"reduce_{version}", f"reduce_{version}")
    assert f"reduce_{version}(const float* __restrict__ in" in code


def _ptx(name: str, block: int = 256, defines: tuple[str, ...] = ()) -> str:
    return kernels.ptx(name, "sm_90", [f"{name}<{block}>"], defines=defines)


@pytest.mark.needs_nvrtc
def test_block_size_outside_the_contract_does_not_compile() -> None:
    with pytest.raises(RuntimeError, match="BLOCK must be a power of two"):
        kernels.ptx("reduce_v2", "sm_90", ["reduce_v2<96>"])


@pytest.mark.needs_nvrtc
def test_v4_synchronises_the_last_warp_and_legacy_does_not() -> None:
    assert _ptx("reduce_v4").count("bar.warp.sync") == 12  # six steps, two __syncwarp each
    assert "bar.warp.sync" not in _ptx("reduce_v4_legacy")


@pytest.mark.needs_nvrtc
def test_barriers_in_the_ptx_match_the_maps() -> None:
    from helpers.topics.reduce_maps import barriers

    # v2's loop is unrolled by the compiler for a constant BLOCK; count block barriers in the PTX
    for v in ("v5", "v7", "v8"):
        text = _ptx(f"reduce_{v}")
        assert len(re.findall(r"\bbar(?:rier)?\.sync(?:\.aligned)?\s+0", text)) == barriers(v, 256)["syncthreads"], v


@pytest.mark.needs_nvrtc
def test_v7_v8_reduce_with_shuffles() -> None:
    for v in ("v7", "v8", "onepass"):
        assert _ptx(f"reduce_{v}").count("shfl.sync.down") >= 10  # two WarpReduceSum of five steps


@pytest.mark.needs_nvrtc
def test_v8_issues_unroll_float4_loads_before_adding() -> None:
    for unroll in (2, 4, 8):
        text = _ptx("reduce_v8", defines=(f"REDUCE_UNROLL={unroll}",))
        body = text[text.index("ld.global.nc.v4.f32"):]
        first_block = body.split("add.f32")[0]
        assert first_block.count("ld.global.nc.v4.f32") == unroll


@pytest.mark.needs_nvrtc
def test_onepass_publishes_before_the_ticket() -> None:
    text = _ptx("reduce_onepass")
    fence = text.index("membar.gl") if "membar.gl" in text else text.index("fence.sc.gpu")
    assert fence < text.index("atom.global.add.u32")
    assert "ld.global.cg.f32" in text  # the last block reads the partials from L2


def test_indices_are_64_bit() -> None:
    for name in ("reduce_v0", "reduce_v3", "reduce_v6"):
        src = kernels.source(name)
        assert "static_cast<long long>(blockIdx.x)" in src


@pytest.mark.needs_nvrtc
@pytest.mark.parametrize("arch", kernels.ARCHS)
def test_v9_streaming_build_compiles_and_streams(arch: str) -> None:
    """v9's evict-first build (-DREDUCE_STREAM=1, chosen past the L2) compiles for every arch, and
    only it uses ld.global.cs; the other reads through the read-only path (ld.global.nc), which the
    compiler does not infer past the slots' asm; both publish with one relaxed 64-bit store, draw
    ticket and tag with one 64-bit atomic, and reset the workspace with one relaxed 64-bit store
    (in the warp path and in the block path)."""
    plain = kernels.ptx("reduce_v9", arch, ("reduce_v9<256>",))
    stream = kernels.ptx("reduce_v9", arch, ("reduce_v9<256>",), defines=["REDUCE_STREAM=1"])
    assert "ld.global.cs" in stream and "ld.global.cs" not in plain
    assert "ld.global.nc.v4" in plain and "ld.global.nc" not in stream  # __ldg, __ldcs: as asked
    for text in (plain, stream):
        assert text.count("st.relaxed.gpu.global.u64") == 4  # slot and state, in each of the two paths
        assert text.count("atom.global.add.u64") == 1 and "membar" not in text and "fence" not in text
        assert "ld.relaxed.gpu.global.u32" not in text and "st.relaxed.gpu.global.u32" not in text
