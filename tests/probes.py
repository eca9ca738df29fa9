"""The H200 probe scripts (scripts/gpu/*.py) as modules, for the tests that check their sources and
premises on the CPU (they import without CuPy)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

PROBES = Path(__file__).resolve().parents[1] / "scripts" / "gpu"


def load(name: str) -> ModuleType:
    """scripts/gpu/NAME.py, imported."""
    spec = importlib.util.spec_from_file_location(name, PROBES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
