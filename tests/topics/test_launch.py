"""helpers.topics.launch: kernels/ on the machine from the shipped PTX, the machine's report beside the values."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.engine import kernels
from helpers.topics import launch as L

SUM = ("warp_reduce_sum", "warp_reduce_sum_kernel<int>")


def test_machine_runs_the_shipped_ptx_of_a_kernel() -> None:
    x = np.arange(64, dtype=np.int32)
    r = L.launch(*SUM, 1, 64, [x, np.zeros(2, np.int32)], backend="emulator")
    assert r.engine == "machine" and r.outputs[0] is not x
    assert r.outputs[1].tolist() == [x[:32].sum(), x[32:].sum()]
    assert r.report.clean and r.defined(1).all()
    assert r.disagreements() == []
    mod = L.machine_module(*SUM[:1], (SUM[1],))
    assert mod.ptx == kernels.shipped_ptx("warp_reduce_sum").text     # the same PTX on every machine


def test_undefined_elements_are_reported_not_invented() -> None:
    # a partial warp: the full-mask shuffles read lanes that do not exist
    r = L.launch(*SUM, 1, 48, [np.ones(48, np.int32), np.zeros(2, np.int32)], backend="emulator")
    assert "undefined_shuffle" in r.report.kinds() or not r.defined(1).all()


def test_a_scalar_argument_has_no_defined_mask() -> None:
    r = L.launch(*SUM, 1, 32, [np.ones(32, np.int32), np.zeros(1, np.int32)], backend="emulator")
    with pytest.raises(ValueError, match="pos must name an array argument"):
        L.Launch([None], "machine", r.report).defined(0)


def test_stale_shipped_ptx_without_nvrtc_says_what_to_do(monkeypatch: pytest.MonkeyPatch, without_nvrtc) -> None:
    monkeypatch.setattr(kernels, "inputs_digest", lambda *a, **k: "changed")
    with pytest.raises(RuntimeError, match=r"changed since its PTX was shipped.*\./warplab ship"):
        L.machine_module(*SUM[:1], (SUM[1],))


def test_disagreements_name_the_argument_and_the_first_element() -> None:
    r = L.launch(*SUM, 1, 32, [np.ones(32, np.int32), np.zeros(1, np.int32)], backend="emulator")
    gpu = L.Launch([np.ones(32, np.int32), np.array([31], np.int32)], "cupy", r.report, r.outputs)
    assert gpu.disagreements() == ["argument 1: 1 defined elements differ (first at 0: GPU 31, machine 32)"]
