"""Every kernels/*.cu compiles through NVRTC alone (no GPU) for sm_70, sm_80 and sm_90, and the PTX
and compiler logs shipped in kernels/shipped/ match the kernel sources they were made from.

Without NVRTC (macOS, the no-CUDA CI run) the compile tests skip; the shipped files are still checked
against the sources by their input digests. With NVRTC, each shipped file is also recompiled (that
compile is this suite's sm_90 compile) and compared, where the compiler and headers are the ones that
made it.
"""
from __future__ import annotations

import gzip
import hashlib

import pytest

from helpers.engine import kernels
from helpers.engine import nvrtc
from helpers.topics.registry import registry

STALE = "kernels/shipped/ is out of date: run ./warplab ship (needs NVRTC) and commit kernels/shipped/"


def test_every_kernel_file_is_registered() -> None:
    assert set(kernels.kernel_names()) <= set(registry()), \
        f"kernels without registered name expressions: {set(kernels.kernel_names()) - set(registry())}"


@pytest.mark.needs_nvrtc
@pytest.mark.parametrize("arch", [a for a in kernels.ARCHS if a not in kernels.SHIPPED_ARCHS])
@pytest.mark.parametrize("name", sorted(registry()))
def test_compiles(name: str, arch: str) -> None:
    exprs = registry()[name]
    text = kernels.ptx(name, arch, exprs)
    assert text.count(".entry") == len(exprs)


# ---------------------------------------------------------------- shipped PTX and logs

def _shipped_entries() -> dict[tuple[str, str, tuple[str, ...]], dict]:
    return {(e["name"], e["arch"], tuple(e["defines"])): e for e in kernels.manifest()["ptx"]}


def test_shipped_ptx_covers_every_build_and_matches_its_source() -> None:
    entries = _shipped_entries()
    builds = {(b.name, b.arch, b.defines): b for b in kernels.shipped_builds(registry())}
    assert set(entries) == set(builds), f"{STALE}: missing {set(builds) - set(entries)}, extra {set(entries) - set(builds)}"
    for key, b in builds.items():
        e = entries[key]
        assert e["inputs"] == kernels.inputs_digest(b.name, b.arch, b.defines, b.name_expressions), \
            f"{STALE} ({b.file} was made from other sources, defines or name expressions)"
        assert sorted(e["lowered"]) == sorted(b.name_expressions), f"{STALE} ({b.file})"
        text = gzip.decompress((kernels.SHIPPED_DIR / e["file"]).read_bytes()).decode()
        assert hashlib.sha256(text.encode()).hexdigest() == e["text_sha256"], f"{e['file']} was edited by hand"
        assert text.count(".entry") == len(b.name_expressions)


def test_shipped_logs_cover_every_seed_file_and_match_its_source() -> None:
    entries = {(e["name"], e["arch"]): e for e in kernels.manifest()["logs"]}
    assert set(entries) == set(kernels.iter_not_compiling()), STALE
    for (name, arch), e in entries.items():
        assert e["inputs"] == kernels.inputs_digest(name, arch, (), (), ()), f"{STALE} ({e['file']})"
        text = (kernels.SHIPPED_DIR / e["file"]).read_text()
        assert hashlib.sha256(text.encode()).hexdigest() == e["text_sha256"], f"{e['file']} was edited by hand"
        assert "error" in text


def test_shipped_folder_holds_only_what_the_manifest_names() -> None:
    named = {e["file"] for e in kernels.manifest()["ptx"] + kernels.manifest()["logs"]} | {"manifest.json"}
    present = {p.relative_to(kernels.SHIPPED_DIR).as_posix() for p in kernels.SHIPPED_DIR.rglob("*") if p.is_file()}
    assert present == named, STALE
    assert sum((kernels.SHIPPED_DIR / f).stat().st_size for f in present) < 2_000_000  # kept modest: gzip


def test_shipped_unroll_builds_cover_every_unroll_the_ladder_offers() -> None:
    from helpers.topics.reduce import UNROLLS

    for name, variants in kernels.SHIPPED_DEFINES.items():
        assert {f"REDUCE_UNROLL={u}" for u in UNROLLS} == {d for v in variants for d in v}, name


def _same_compiler(compiler: dict[str, str]) -> str:
    """Why a fresh compile here may differ from the shipped one ('' when it may not)."""
    here = {"nvrtc": nvrtc.release(), **kernels.header_versions()}
    return "" if here == compiler else f"shipped with {compiler}, here {here}"


@pytest.mark.needs_nvrtc
@pytest.mark.parametrize("build", kernels.shipped_builds(registry()), ids=lambda b: b.file)
def test_shipped_ptx_is_what_nvrtc_makes(build: kernels.Build) -> None:
    text, lowered = kernels.compile_shipped(build)  # also this suite's compile check for sm_90
    assert text.count(".entry") == len(build.name_expressions)
    shipped = kernels.shipped_ptx(build.name, arch=build.arch, defines=build.defines)
    why = _same_compiler(shipped.compiler)
    if why:
        pytest.skip(f"compiled, but not compared: {why}")
    assert text == shipped.text and lowered == shipped.lowered, STALE


@pytest.mark.needs_nvrtc
@pytest.mark.parametrize("name,arch", list(kernels.iter_not_compiling()))
def test_shipped_log_is_what_nvrtc_says(name: str, arch: str) -> None:
    log = kernels.compile_log(name, arch)
    shipped = kernels.shipped_compile_log(name, arch)
    why = _same_compiler(shipped.compiler)
    if why:
        pytest.skip(f"not compared: {why}")
    assert log == shipped.text, STALE


def test_canonical_ptx_is_reproducible() -> None:
    """The shipped text never holds a machine's path or NVRTC's per-process names."""
    for e in kernels.manifest()["ptx"]:
        text = gzip.decompress((kernels.SHIPPED_DIR / e["file"]).read_bytes()).decode()
        assert str(kernels.KERNELS_DIR) not in text and "/site-packages/" not in text, e["file"]
        assert kernels.canonical(text) == text, e["file"]


def test_canonical_renames_unit_names_consistently() -> None:
    import os

    internal, anon = "_INTERNAL_00000000_4_k_cu_1f2e3d4c_12345", "_GLOBAL__N__00000000_4_k_cu_0a0b0c0d_29704"
    text = (f'\t.file\t1 "{os.getcwd()}/k.cu"\n.global .u32 _ZN{len(internal)}{internal}7warplab9kFullMaskE;\n'
            f"ld [_ZN{len(internal)}{internal}7warplab9kFullMaskE];\n"
            f".u8 _ZN4cuda3std3__4{len(anon)}{anon}6ignoreE;\n")
    out = kernels.canonical(text)
    assert '"kernels/k.cu"' in out
    assert out.count("_ZN34_INTERNAL_00000000_4_k_cu_000000007warplab9kFullMaskE") == 2
    # "3__4" then the 42-character name: only the split that parses exactly is taken
    assert "3__436_GLOBAL__N__00000000_4_k_cu_000000006ignoreE" in out
    assert kernels.canonical(out) == out
    other = internal.replace("1f2e3d4c_12345", "99999999")  # another process: another hash, no counter
    assert kernels.canonical(text.replace(f"{len(internal)}{internal}", f"{len(other)}{other}")) == out


# ---------------------------------------------------------------- the public API

def test_shipped_ptx_of_one_instantiation() -> None:
    p = kernels.shipped_ptx("warp_reduce_sum", "warp_reduce_sum_kernel<int>")
    assert p.entry == "_Z22warp_reduce_sum_kernelIiEvPKT_PS0_" and p.arch == "sm_90"
    assert p.label == (f"PTX of kernels/warp_reduce_sum.cu, warp_reduce_sum_kernel<int> for sm_90, made by NVRTC "
                       f"{p.nvrtc_version} (shipped in kernels/shipped/)")
    fn = p.function()
    assert fn.count(".entry") == 1 and fn.count("shfl.sync.down") == 5 and fn.rstrip().endswith("}")
    assert p.text.count(".entry") == 4  # the whole module: every registered instantiation


def test_shipped_ptx_says_what_is_shipped() -> None:
    with pytest.raises(ValueError, match="name must be a kernel file with shipped PTX"):
        kernels.shipped_ptx("nope")
    with pytest.raises(ValueError, match="name_expression must be one of the instantiations registered"):
        kernels.shipped_ptx("warp_reduce_sum", "warp_reduce_sum_kernel<long>")
    with pytest.raises(ValueError, match="arch and defines must be one of the shipped builds"):
        kernels.shipped_ptx("warp_reduce_sum", arch="sm_70")
    with pytest.raises(ValueError, match="arch must look like"):
        kernels.shipped_ptx("warp_reduce_sum", arch="hopper")
    assert kernels.shipped_ptx("reduce_v8", defines=["REDUCE_UNROLL=8"]).defines == ("REDUCE_UNROLL=8",)


def test_shipped_compile_log() -> None:
    log = kernels.shipped_compile_log("seed_as_printed/block_x_reduce.cu.txt")
    assert log.first_error().startswith("seed_as_printed/block_x_reduce.cu(")
    assert "namespace-qualified name is required" in log.first_error()
    assert log.label.startswith(f"NVRTC {log.nvrtc_version} on kernels/seed_as_printed/block_x_reduce.cu for sm_90")
    with pytest.raises(ValueError, match="must be one of the shipped compile logs"):
        kernels.shipped_compile_log("warp_reduce_sum")


def test_without_nvrtc_compiling_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvrtc, "_lib", lambda: None)
    with pytest.raises(nvrtc.NvrtcUnavailable, match=r"\./warplab add nvrtc") as err:
        kernels.ptx("warp_reduce_sum", "sm_90", ["warp_reduce_sum_kernel<int>"])
    assert "macOS" in str(err.value) and not isinstance(err.value, RuntimeError)
    assert kernels.shipped_ptx("warp_reduce_sum", "warp_reduce_sum_kernel<int>").function()  # still there


# ---------------------------------------------------------------- compiling

@pytest.mark.needs_nvrtc
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


@pytest.mark.needs_nvrtc
def test_compile_error_is_reported(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(kernels, "KERNELS_DIR", tmp_path)
    (tmp_path / "broken.cu").write_text("__global__ void k() { using kWarpSize; }\n")
    with pytest.raises(RuntimeError, match="does not compile for sm_90"):
        kernels.ptx("broken", "sm_90")


def test_bad_arch() -> None:
    with pytest.raises(ValueError, match="arch must look like"):
        kernels.ptx("warp_intrinsics", "hopper")


def test_program_names() -> None:
    assert kernels.program_name("warp_reduce_sum") == "warp_reduce_sum.cu"
    assert kernels.program_name("seed_as_printed/block_y_reduce.cu.txt") == "seed_as_printed/block_y_reduce.cu"
    assert kernels.not_compiling() == ["seed_as_printed/block_x_reduce.cu.txt", "seed_as_printed/block_y_reduce.cu.txt"]


def test_ptx_constants_resolves_shuffle_operands() -> None:
    from helpers import nb

    text = nb.ptx_constants(kernels.shipped_ptx("warp_reduce_sum", "warp_reduce_sum_kernel<int>").function(), "shfl.sync")
    lines = text.splitlines()
    assert len(lines) == 5
    for line, offset in zip(lines, (16, 8, 4, 2, 1)):
        assert line.startswith("shfl.sync.down.b32") and line.endswith(f", {offset}, 31, -1;")
