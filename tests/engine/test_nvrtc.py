"""helpers.engine.nvrtc: CUDA C to PTX through NVRTC alone (ctypes; no CuPy, no GPU)."""
from __future__ import annotations

import pytest

from helpers.engine import nvrtc

_SRC = """
template <typename T> __global__ void twice(T* x) { x[threadIdx.x] *= 2; }
extern "C" __global__ void plain(int* x) { x[0] = 1; }
"""


@pytest.mark.needs_nvrtc
def test_compiles_and_lowers_template_names() -> None:
    out = nvrtc.compile(_SRC, filename="t.cu", options=["-arch=compute_70"], name_expressions=["twice<int>"])
    assert out.lowered == {"twice<int>": "_Z5twiceIiEvPT_"}
    assert ".entry _Z5twiceIiEvPT_" in out.ptx and ".entry plain" in out.ptx


@pytest.mark.needs_nvrtc
def test_compile_error_carries_the_log_with_line_numbers() -> None:
    with pytest.raises(nvrtc.CompileError) as err:
        nvrtc.compile("__global__ void k() {\n  undeclared = 1;\n}\n", filename="mine.cu")
    assert "mine.cu(2)" in err.value.log and "undeclared" in err.value.log


@pytest.mark.needs_nvrtc
def test_version_and_release() -> None:
    major, minor = nvrtc.version().split(".")
    assert major.isdigit() and minor.isdigit()
    assert nvrtc.release().startswith(nvrtc.version() + ".")


def test_unavailable_message_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvrtc, "_lib", lambda: None)
    assert not nvrtc.available()
    with pytest.raises(nvrtc.NvrtcUnavailable) as err:
        nvrtc.compile(_SRC)
    msg = str(err.value)
    assert "./warplab add nvrtc" in msg and "macOS" in msg and "WARPLAB_NVRTC" in msg
    assert isinstance(err.value, ImportError)
