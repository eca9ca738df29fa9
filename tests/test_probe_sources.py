"""The H200 probes' CUDA sources (floor and one-block) compile for every configuration they can launch
(NVRTC, on the CPU): a change to kernels/ that breaks a probe shows here, before any device time is
spent on it; and the helper that names the kernels whose SASS the GPU host reads back."""
from __future__ import annotations

import pytest

from helpers.engine import kernels, nvrtc
from probes import load as _probe


def _compiles(src: str, names: list[str]) -> None:
    compiled = nvrtc.compile(src, options=("-std=c++17", "-arch=compute_90", *kernels.include_options()),
                             name_expressions=names)
    assert set(compiled.lowered) == set(names)


@pytest.mark.needs_nvrtc
def test_every_floor_probe_instantiation_compiles() -> None:
    probe = _probe("floor_probe")
    names = probe.instantiations([2**k for k in range(10, 31)], sm=132)
    assert len(names) > 150 and any(n.startswith("floor_v9t<") and n.endswith("true>") for n in names)
    _compiles(probe.SRC, names)


@pytest.mark.needs_nvrtc
def test_every_one_block_probe_instantiation_compiles() -> None:
    probe = _probe("one_block_probe")
    _compiles(probe.SRC, probe.NAMES)


def test_cupy_sass_names_kernels_from_their_mangled_names() -> None:
    readable = _probe("cupy_sass").readable
    assert readable("_Z9floor_v9tILi1024ELi4ELi1ELi8ELb0EEvPKfPyS2_Pfx") == "floor_v9t<1024, 4, 1, 8, false>"
    assert readable("_Z9reduce_v9ILi512ELb1EEvPKfPyS2_Pfx") == "reduce_v9<512, true>"
    assert readable("reduce_empty") == "reduce_empty"
