"""NVRTC, the CUDA runtime compiler, called directly through ``ctypes``: CUDA C++ to PTX, no GPU,
no driver and no CuPy.

NVRTC is a plain shared library (``libnvrtc``) with a small C API (CUDA Toolkit documentation,
"NVRTC", sections "Program" and "Compilation"). It ships in the ``nvidia-cuda-nvrtc-cu12`` wheel
on Linux (x86-64, aarch64) and Windows (x86-64), and with every CUDA toolkit. There is no NVRTC for
macOS: :func:`available` is then False and :func:`compile` raises :class:`NvrtcUnavailable`, whose
message says what to do. Everything the project compiled itself is shipped precompiled
(``helpers.engine.kernels.shipped_ptx``), so only new code needs NVRTC.

The library is looked for, in order: ``$WARPLAB_NVRTC`` (a path to the library file), the
``nvidia-cuda-nvrtc`` wheel, ``$CUDA_PATH`` / ``/usr/local/cuda``, then the system loader.
``WARPLAB_NVRTC=none`` hides NVRTC, to see what a Mac shows.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

ENV_VAR = "WARPLAB_NVRTC"

HOW_TO_GET_IT = (
    "NVRTC (the CUDA runtime compiler) is not installed here, and compiling CUDA C to PTX needs it. "
    "On Linux, WSL or Windows: run `./warplab add nvrtc` (Windows: `warplab.cmd add nvrtc`) and restart "
    "the notebook's kernel; or install a CUDA toolkit, or set WARPLAB_NVRTC to the path of libnvrtc. "
    "On macOS there is no NVRTC: compile new code on a Linux machine, in WSL, on a GPU machine or in a "
    "hosted notebook. Everything Warp Lab compiled itself is shipped with it (helpers.engine.kernels.shipped_ptx) "
    "and works without NVRTC."
)


class NvrtcUnavailable(ImportError):
    """NVRTC cannot be loaded on this machine (an optional dependency is missing); the message says
    how to get it. Not a RuntimeError, so code that handles compile errors does not swallow it."""


class CompileError(RuntimeError):
    """The source did not compile; ``.log`` holds NVRTC's log, with the file name and line numbers."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class Compiled:
    """One compiled program.

    ptx:      the PTX text.
    lowered:  {name expression: mangled (lowered) name} for every name expression asked for.
    log:      NVRTC's log (warnings), possibly empty.
    """

    ptx: str
    lowered: dict[str, str] = field(default_factory=dict)
    log: str = ""


def _candidates() -> list[str]:
    names: list[str] = []
    env = os.environ.get(ENV_VAR)
    if env == "none":  # behave as on a Mac: no NVRTC, whatever is installed
        return []
    if env:
        names.append(env)
    lib_glob = "nvrtc64_*.dll" if sys.platform == "win32" else "libnvrtc.so*"
    try:
        import nvidia.cuda_nvrtc as wheel  # the nvidia-cuda-nvrtc-cu12 wheel: a namespace package

        for base in wheel.__path__:
            sub = "bin" if sys.platform == "win32" else "lib"
            names += sorted(glob.glob(str(Path(base) / sub / lib_glob)))
    except ImportError:
        pass
    for root in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            names += sorted(glob.glob(str(Path(root) / "lib64" / lib_glob)))
            names += sorted(glob.glob(str(Path(root) / "bin" / lib_glob)))
    found = ctypes.util.find_library("nvrtc")
    if found:
        names.append(found)
    # "alt" builds are the static-libstdc++ variants; prefer the regular library of each directory.
    return [n for n in dict.fromkeys(names) if ".alt." not in Path(n).name]


@functools.lru_cache(maxsize=1)
def _lib() -> Optional[ctypes.CDLL]:
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name)
            lib.nvrtcVersion  # noqa: B018 - raises AttributeError when this is not NVRTC
        except (OSError, AttributeError):
            continue
        _declare(lib)
        return lib
    return None


def _declare(lib: ctypes.CDLL) -> None:
    p, c, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    pp = ctypes.POINTER(ctypes.c_void_p)
    sz = ctypes.POINTER(ctypes.c_size_t)
    sigs = {
        "nvrtcVersion": [ctypes.POINTER(i), ctypes.POINTER(i)],
        "nvrtcCreateProgram": [pp, c, c, i, ctypes.POINTER(c), ctypes.POINTER(c)],
        "nvrtcDestroyProgram": [pp],
        "nvrtcAddNameExpression": [p, c],
        "nvrtcCompileProgram": [p, i, ctypes.POINTER(c)],
        "nvrtcGetPTXSize": [p, sz],
        "nvrtcGetPTX": [p, c],
        "nvrtcGetProgramLogSize": [p, sz],
        "nvrtcGetProgramLog": [p, c],
        "nvrtcGetLoweredName": [p, c, ctypes.POINTER(c)],
        "nvrtcGetErrorString": [i],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = c if name == "nvrtcGetErrorString" else i


def available() -> bool:
    """True when NVRTC can be loaded here."""
    return _lib() is not None


def version() -> str:
    """NVRTC's version, e.g. ``"12.9"``. Raises :class:`NvrtcUnavailable` without NVRTC."""
    lib = _require()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


@functools.lru_cache(maxsize=1)
def release() -> str:
    """NVRTC's full release, e.g. ``"12.9.86"``, from the header of the PTX it writes (the C API
    reports only major.minor, and PTX can differ between patch releases)."""
    ptx = compile('extern "C" __global__ void k() {}', filename="release.cu").ptx
    m = re.search(r"Cuda compilation tools, release [\d.]+, V([\d.]+)", ptx)
    return m.group(1) if m else version()


def _require() -> ctypes.CDLL:
    lib = _lib()
    if lib is None:
        raise NvrtcUnavailable(HOW_TO_GET_IT)
    return lib


def _check(lib: ctypes.CDLL, status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"NVRTC {what} failed: {lib.nvrtcGetErrorString(status).decode()}")


def compile(code: str, *, filename: str = "kernel.cu", options: Sequence[str] = (),
            name_expressions: Sequence[str] = ()) -> Compiled:
    """Compile CUDA C++ ``code`` to PTX with NVRTC ``options`` (``-arch=compute_90``, ``-I...``, ...).

    ``filename`` is the name NVRTC uses in its log and in the PTX line table. Template kernels are
    instantiated by ``name_expressions`` (``"k<int>"``); their mangled names come back in
    ``Compiled.lowered``. Raises :class:`CompileError` (with NVRTC's log) when the code does not
    compile, :class:`NvrtcUnavailable` when there is no NVRTC.
    """
    lib = _require()
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), filename.encode(), 0, None, None),
           "nvrtcCreateProgram")
    try:
        for expr in name_expressions:
            _check(lib, lib.nvrtcAddNameExpression(prog, expr.encode()), f"nvrtcAddNameExpression({expr!r})")
        opts = (ctypes.c_char_p * max(len(options), 1))(*(o.encode() for o in options))
        status = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        if status != 0:
            raise CompileError(f"{filename} does not compile:\n{log}", log)
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
        lowered: dict[str, str] = {}
        for expr in name_expressions:
            name = ctypes.c_char_p()
            _check(lib, lib.nvrtcGetLoweredName(prog, expr.encode(), ctypes.byref(name)),
                   f"nvrtcGetLoweredName({expr!r})")
            lowered[expr] = name.value.decode()
        return Compiled(buf.value.decode(), lowered, log)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
