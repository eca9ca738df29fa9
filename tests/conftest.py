"""Shared test configuration.

* ``@pytest.mark.gpu``: runs only where a CUDA GPU is usable (skipped with the reason elsewhere).
* ``@pytest.mark.needs_nvrtc``: compiles CUDA C through NVRTC; skipped with the reason where NVRTC is
  not installed (macOS, or a venv without the nvrtc set). With ``WARPLAB_REQUIRE_NVRTC=1`` (CI's run
  with the NVIDIA wheels) a missing NVRTC stops the run instead, so compile tests never skip there
  unnoticed.
* ``@pytest.mark.needs_sass``: assembles PTX with ptxas and reads the SASS with cuobjdump and
  nvdisasm (:mod:`helpers.engine.sass`); skipped with the reason where one is missing, and with
  ``WARPLAB_REQUIRE_SASS=1`` (CI) a missing tool stops the run instead.
* fixture ``without_nvrtc``: NVRTC hidden and the machine-module cache empty, as on a Mac, for one test.
"""
from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    nvrtc_items = [i for i in items if i.get_closest_marker("needs_nvrtc")]
    if nvrtc_items:
        from helpers.engine import nvrtc

        if not nvrtc.available():
            if os.environ.get("WARPLAB_REQUIRE_NVRTC"):
                raise pytest.UsageError(f"WARPLAB_REQUIRE_NVRTC is set, but: {nvrtc.HOW_TO_GET_IT}")
            skip = pytest.mark.skip(reason="needs NVRTC, not installed here (./warplab add nvrtc; macOS has none)")
            for item in nvrtc_items:
                item.add_marker(skip)
    sass_items = [i for i in items if i.get_closest_marker("needs_sass")]
    if sass_items:
        from helpers.engine import sass

        if not sass.available():
            if os.environ.get("WARPLAB_REQUIRE_SASS"):
                raise pytest.UsageError(f"WARPLAB_REQUIRE_SASS is set, but: {sass.HOW_TO_GET_IT}")
            skip = pytest.mark.skip(reason="needs ptxas, cuobjdump and nvdisasm (a CUDA toolkit, or the "
                                           "nvidia-cuda-nvcc, -cuobjdump and -nvdisasm wheels)")
            for item in sass_items:
                item.add_marker(skip)
    gpu_items = [i for i in items if i.get_closest_marker("gpu")]
    if not gpu_items:
        return
    from helpers.engine.backend import detect

    d = detect()
    if d.usable:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {d.reason}")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture
def without_nvrtc(monkeypatch: pytest.MonkeyPatch):
    """NVRTC reported absent, and helpers.topics.launch's module cache cleared before and after, so the
    test sees only the shipped PTX (what a machine without NVRTC has) and leaves no module behind."""
    from helpers.engine import nvrtc
    from helpers.topics import launch

    monkeypatch.setattr(nvrtc, "available", lambda: False)
    launch._module.cache_clear()
    yield
    launch._module.cache_clear()
