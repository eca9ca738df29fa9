"""Which engine runs the kernels: a CUDA GPU through CuPy, or the lane-exact emulator.

``WARPLAB_BACKEND=emulator|cupy`` forces a choice; otherwise a usable CUDA device is detected once,
quietly, and the answer cached. CuPy is imported lazily so ``import helpers`` stays fast.
"""
from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass
from typing import Literal, Optional

BackendName = Literal["emulator", "cupy"]
BACKENDS: tuple[str, ...] = ("emulator", "cupy")
ENV_VAR = "WARPLAB_BACKEND"


@dataclass(frozen=True)
class Detection:
    """The result of looking for a GPU: whether CuPy can run kernels, and why (not)."""

    usable: bool
    reason: str
    gpu_name: str = ""
    compute_capability: str = ""
    cupy_version: str = ""
    driver_version: str = ""
    cuda_runtime: str = ""


@functools.lru_cache(maxsize=1)
def detect() -> Detection:
    """Look for a CUDA device CuPy can use. Cached; never raises, never warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import cupy
        except Exception as exc:  # ImportError, or a broken CUDA install raising at import
            return Detection(False, f"CuPy is not importable ({type(exc).__name__}: {exc})")
        try:
            if not cupy.cuda.is_available():
                return Detection(False, "no CUDA device or driver found", cupy_version=cupy.__version__)
            props = cupy.cuda.runtime.getDeviceProperties(0)
            name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
            drv = cupy.cuda.runtime.driverGetVersion()
            rt = cupy.cuda.runtime.runtimeGetVersion()
            return Detection(
                True,
                "CUDA device found",
                gpu_name=name,
                compute_capability=f"{props['major']}.{props['minor']}",
                cupy_version=cupy.__version__,
                driver_version=f"{drv // 1000}.{drv % 1000 // 10}",
                cuda_runtime=f"{rt // 1000}.{rt % 1000 // 10}",
            )
        except Exception as exc:
            return Detection(False, f"CUDA is present but unusable ({type(exc).__name__}: {exc})")


def resolve(backend: Optional[str] = None) -> BackendName:
    """Return the backend to use: ``backend`` if given, else ``$WARPLAB_BACKEND``, else auto.

    Raises ValueError for an unknown name, and RuntimeError when ``cupy`` is demanded on a machine
    where no GPU is usable (the message says why and how to fall back).
    """
    source = "backend"
    if backend is None:
        env = os.environ.get(ENV_VAR, "").strip().lower()
        if env:
            backend, source = env, ENV_VAR
    if backend is None:
        return "cupy" if detect().usable else "emulator"
    if not isinstance(backend, str) or backend not in BACKENDS:
        shown = repr(backend) if len(repr(backend)) <= 60 else repr(backend)[:40] + "..."
        raise ValueError(f"{source} must be one of {', '.join(map(repr, BACKENDS))} or None (auto); got {shown}")
    if backend == "cupy" and not detect().usable:
        raise RuntimeError(
            f"{source}='cupy' needs a usable CUDA GPU, but {detect().reason}. "
            f"Use backend='emulator' (or unset {ENV_VAR}) to run on the emulator."
        )
    return backend  # type: ignore[return-value]


def compute_capability(d: Optional[Detection] = None) -> tuple[int, int]:
    """(major, minor) of the detected GPU (``d``, else :func:`detect`); (0, 0) where there is none."""
    text = (d or detect()).compute_capability
    major, _, minor = text.partition(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else (0, 0)


def require_compute_capability(needed: tuple[int, int], feature: str, d: Optional[Detection] = None) -> None:
    """RuntimeError, naming ``feature``, the compute capability it needs and this GPU's, when the
    detected GPU (``d``, else :func:`detect`) is older than ``needed``; the emulator runs it anywhere."""
    d = d or detect()
    have = compute_capability(d)
    if have < needed:
        raise RuntimeError(f"{feature} needs compute capability {needed[0]}.{needed[1]} or newer; this GPU "
                           f"({d.gpu_name or 'none found'}) has {d.compute_capability or 'none'}. "
                           f"The emulator runs it on any machine: backend='emulator' (or {ENV_VAR}=emulator).")


def report(backend: Optional[str] = None) -> str:
    """One line saying what runs the kernels here, e.g. for the top of every notebook."""
    name = resolve(backend)
    d = detect()
    if name == "cupy":
        return (f"Backend: GPU {d.gpu_name} (compute capability {d.compute_capability}), "
                f"CuPy {d.cupy_version}, driver CUDA {d.driver_version}")
    env = os.environ.get(ENV_VAR, "").strip()
    why = f"chosen by {ENV_VAR}={env}" if backend is None and env else "asked for" if backend else d.reason
    return f"Backend: emulator (lane-exact NumPy model of the warp intrinsics; {why})"


def stored_report(line: str) -> str:
    """What a notebook stores in place of its backend line ``line`` (a :func:`report` line), so a
    learner who opens it before running anything is not told about the machine that saved it:
    which engine computed the stored outputs, and that running the cell shows this machine's."""
    engine = "the emulator" if line.startswith("Backend: emulator") else "a GPU"
    return (f"Backend: (stored output, computed by {engine} when this notebook was saved; "
            f"run this cell to see what runs the kernels on your machine)")


def stamp() -> dict[str, str]:
    """GPU, driver and CuPy versions, for stamping recorded hardware results in ``data/``."""
    d = detect()
    if not d.usable:
        raise RuntimeError(f"recording needs a GPU: {d.reason}")
    import platform
    import subprocess

    import numpy

    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=10).stdout.split("\n")[0].strip()
    except (OSError, subprocess.SubprocessError):
        driver = "unknown"
    return {
        "driver": driver or "unknown",
        "gpu": d.gpu_name,
        "compute_capability": d.compute_capability,
        "driver_cuda_version": d.driver_version,
        "cuda_runtime_version": d.cuda_runtime,
        "cupy_version": d.cupy_version,
        "numpy_version": numpy.__version__,
        "python_version": platform.python_version(),
    }
