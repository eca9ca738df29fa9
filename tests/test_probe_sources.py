"""The H200 floor probe's CUDA source compiles for every configuration it can launch (NVRTC, on the
CPU): a change to kernels/ that breaks the probe shows here, before any device time is spent on it."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from helpers.engine import kernels, nvrtc

PROBE = Path(__file__).resolve().parents[1] / "scripts" / "gpu" / "floor_probe.py"


@pytest.mark.needs_nvrtc
def test_every_floor_probe_instantiation_compiles() -> None:
    spec = importlib.util.spec_from_file_location("floor_probe", PROBE)
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    names = probe.instantiations([2**k for k in range(10, 31)], sm=132)
    assert len(names) > 150 and any(n.startswith("floor_v9t<") and n.endswith("true>") for n in names)
    compiled = nvrtc.compile(probe.SRC, options=("-std=c++17", "-arch=compute_90", *kernels.include_options()),
                             name_expressions=names)
    assert set(compiled.lowered) == set(names)
