"""The %%simt cell magic (helpers.widgets.simt): its line, its args= language, and the debugger it opens."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.widgets import simt

KERNEL = r'''
__global__ void k(const float* in, int* out, int n) {
    int t = threadIdx.x;
    if (t < n) out[t] = (int)in[t] + __shfl_down_sync(0xFFFFFFFF, t, 1);
}
'''


def test_the_line_gives_the_launch_with_types_from_the_signature() -> None:
    kw = simt.parse_line("k grid=1 block=(32,2) args=arange(64),zeros(64),64", KERNEL)
    assert (kw["name"], kw["grid"], kw["block"]) == ("k", (1,), (32, 2))
    a, b, n = kw["args"]
    assert a.dtype == np.float32 and a[5] == 5 and b.dtype == np.int32 and not b.any()
    assert n == 64 and isinstance(n, np.int32)
    kw = simt.parse_line("k args=full(8,2.5),random(8,int64),3 shared=128", KERNEL)
    assert kw["args"][0].tolist() == [2.5] * 8 and kw["args"][1].dtype == np.int64 and kw["shared_mem"] == 128
    assert kw["grid"] == (1,) and kw["block"] == (32,)


@pytest.mark.parametrize("line, words", [
    ("", "needs the kernel's name first"),
    ("grid=2", "needs the kernel's name first"),
    ("k", "needs args= for k(const float * in, int * out, int n): e.g. args=arange(32),zeros(32),32"),
    ("k args=arange(64),zeros(64)", "takes 3 parameter(s)"),
    ("k args=arange(64),zeros(64),zeros(3)", "n is a value"),
    ("k args=5,zeros(64),1", "in is a pointer"),
    ("k args=arange(x),zeros(64),1", "must be arange(N)"),
    ("k args=arange(0),zeros(64),1", "N must be in 1.."),
    ("k args=__import__('os'),zeros(64),1", "is not understood"),
    ("k args=zeros(4,complex),zeros(4),1", "element type 'complex'"),
    ("k grid=0 args=arange(1),zeros(1),1", "grid= must be"),
    ("k block=(32,-1) args=arange(1),zeros(1),1", "block= must be"),
    ("k colour=red", "does not understand 'colour=red'"),
    ("k args=arange(64) zeros(64)", "does not understand"),
])
def test_problems_say_what_to_write(line: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        simt.parse_line(line, KERNEL)
    assert words in str(err.value)


def test_the_magic_shows_a_message_or_the_debugger(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    simt.simt("k args=arange(3)", KERNEL)
    assert "takes 3 parameter" in shown[-1].data
    pytest.importorskip("ipywidgets")
    from helpers.engine import nvrtc
    if not nvrtc.available():
        pytest.skip("needs NVRTC")
    simt.simt("k grid=1 block=32 args=arange(32),zeros(32),32", KERNEL)
    box = shown[-1]
    assert box.controls["step"].max > 0 and "warplab-debug-state" in box.output["state"].value


def test_load_ext_registers_the_magic() -> None:
    registered: list = []

    class Shell:
        def register_magic_function(self, fn, magic_kind, magic_name):
            registered.append((magic_kind, magic_name))

    import helpers.exercises
    import helpers.widgets

    helpers.widgets.load_ipython_extension(Shell())
    helpers.exercises.load_ipython_extension(Shell())
    assert registered == [("cell", "simt"), ("cell", "exercise"), ("cell", "simt")]
