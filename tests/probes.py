"""The H200 probe scripts (scripts/gpu/*.py) as modules, for the tests that check their sources and
premises on the CPU (they import without CuPy)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PROBES = Path(__file__).resolve().parents[1] / "scripts" / "gpu"


def load(name: str) -> ModuleType:
    """scripts/gpu/NAME.py, imported once (registered in ``sys.modules``, which dataclasses need)."""
    key = f"warplab_probe_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, PROBES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[key]   # no half-imported module for the next test
        raise
    return module
