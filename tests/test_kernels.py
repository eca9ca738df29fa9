"""Every kernels/*.cu compiles through NVRTC alone (no GPU) for sm_70, sm_80 and sm_90."""
from __future__ import annotations

import pytest

from helpers import kernels
from helpers.kernel_registry import registry

pytest.importorskip("cupy_backends.cuda.libs.nvrtc", reason="CuPy (with NVRTC) is not installed")


def test_every_kernel_file_is_registered() -> None:
    assert set(kernels.kernel_names()) <= set(registry()), \
        f"kernels without registered name expressions: {set(kernels.kernel_names()) - set(registry())}"


@pytest.mark.parametrize("arch", kernels.ARCHS)
@pytest.mark.parametrize("name", sorted(registry()))
def test_compiles(name: str, arch: str) -> None:
    exprs = registry()[name]
    text = kernels.ptx(name, arch, exprs)
    assert ".entry" in text or ".visible .entry" in text


def test_traced_build_differs_only_when_switched_on() -> None:
    plain = kernels.ptx("warp_reduce_sum", "sm_90", ["warp_reduce_sum_kernel<int>"])
    traced = kernels.ptx("warp_reduce_sum", "sm_90", ["warp_reduce_sum_kernel<int>"], defines=["WARPLAB_TRACE"])
    assert plain.count("shfl.sync.down") == 5
    assert traced.count("shfl.sync.down") == 10  # the extra lane-id shuffles exist only when tracing
    assert "trace_sink" not in plain


def test_anchor_reads_the_file() -> None:
    text = kernels.anchor("warp_reduce.cuh", "warp_reduce_sum")
    assert "__shfl_down_sync" in text and "[anchor:" not in text
    with pytest.raises(ValueError, match="anchor_name must be one of"):
        kernels.anchor("warp_reduce.cuh", "nope")
    with pytest.raises(ValueError, match="name must name a file in kernels/"):
        kernels.source("nope")


def test_compile_error_is_reported(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(kernels, "KERNELS_DIR", tmp_path)
    (tmp_path / "broken.cu").write_text("__global__ void k() { using kWarpSize; }\n")
    with pytest.raises(RuntimeError, match="does not compile for sm_90"):
        kernels.ptx("broken", "sm_90")


def test_bad_arch() -> None:
    with pytest.raises(ValueError, match="arch must look like"):
        kernels.ptx("warp_intrinsics", "hopper")


def test_ptx_constants_resolves_shuffle_operands() -> None:
    from helpers import nb

    text = nb.ptx_constants(kernels.ptx("warp_reduce_sum", "sm_90", ["warp_reduce_sum_kernel<int>"]), "shfl.sync")
    lines = text.splitlines()
    assert len(lines) == 5
    for line, offset in zip(lines, (16, 8, 4, 2, 1)):
        assert line.startswith("shfl.sync.down.b32") and line.endswith(f", {offset}, 31, -1;")
