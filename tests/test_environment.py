"""Install metadata: environment.yml names the same packages as pyproject.toml; import stays fast."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None  # type: ignore[assignment]


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject() -> set[str]:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11+")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for extra in meta["optional-dependencies"].values():
        reqs += extra
    return {_name(r) for r in reqs}


def _environment_yml() -> set[str]:
    names = set()
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"^\s*-\s+([A-Za-z][\w.\-]*)", line)
        if m and m.group(1) not in ("pip", "python", "conda-forge"):
            names.add(_name(m.group(1)))
    return names


def test_environment_yml_matches_pyproject() -> None:
    assert _pyproject() == _environment_yml()


def test_design_card_packages_present() -> None:
    assert {"jupyterlab", "cupy-cuda12x", "numpy", "matplotlib", "ipywidgets"} <= _pyproject()


def test_import_helpers_is_fast_and_does_not_import_cupy() -> None:
    code = ("import sys, time; t = time.perf_counter(); import helpers, helpers.warp, helpers.trace; "
            "print(time.perf_counter() - t, 'cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    seconds, cupy_loaded = out.stdout.split()
    assert float(seconds) < 1.0 and cupy_loaded == "False"


def test_backend_detection_is_quick_and_quiet() -> None:
    code = ("import time, warnings; warnings.simplefilter('error'); from helpers import backend; "
            "t = time.perf_counter(); backend.detect(); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stderr == "" and float(out.stdout) < 5.0
