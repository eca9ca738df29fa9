"""Shared test configuration: GPU tests run only where a CUDA GPU is usable."""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [i for i in items if i.get_closest_marker("gpu")]
    if not gpu_items:
        return
    from helpers.backend import detect

    d = detect()
    if d.usable:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {d.reason}")
    for item in gpu_items:
        item.add_marker(skip)
