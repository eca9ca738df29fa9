"""Loading ``kernels/*.cu``: their source (whole or by named anchor), compiled CuPy modules, PTX.

Kernel files are the single source of truth. Notebook prose shows code with :func:`anchor`, which
cuts the lines between ``// [anchor:NAME]`` and ``// [end:NAME]`` out of the file, so the text can
never drift from what runs.

:func:`module` compiles through ``cupy.RawModule`` (NVRTC, ``-std=c++17``, templates through
``name_expressions``) and caches the result. :func:`ptx` compiles without any GPU or driver, through
NVRTC alone (:mod:`helpers.nvrtc`), so every machine (CI included) can compile every kernel and show its PTX.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any, Sequence

from . import nvrtc

KERNELS_DIR = Path(__file__).resolve().parent.parent / "kernels"
ARCHS: tuple[str, ...] = ("sm_70", "sm_80", "sm_90")

_ANCHOR = re.compile(r"^\s*//\s*\[anchor:([\w.-]+)\]\s*$")
_END = re.compile(r"^\s*//\s*\[end:([\w.-]+)\]\s*$")


def kernel_names() -> list[str]:
    """Names (file stems) of every compilable kernel file, ``*.cu``, sorted."""
    return sorted(p.stem for p in KERNELS_DIR.glob("*.cu"))


def path(name: str) -> Path:
    """The file for kernel ``name``: ``kernels/NAME.cu`` (or a header, if given with its suffix)."""
    p = KERNELS_DIR / (name if Path(name).suffix else f"{name}.cu")
    if not p.is_file():
        known = ", ".join(kernel_names())
        raise ValueError(f"name must name a file in kernels/ ({known}); got {name!r}")
    return p


def source(name: str) -> str:
    """The whole text of a kernel file."""
    return path(name).read_text()


def anchor(name: str, anchor_name: str) -> str:
    """The lines of ``name`` between ``// [anchor:anchor_name]`` and ``// [end:anchor_name]``.

    Nested anchor markers inside the block are dropped from the result. Raises ValueError naming the
    anchors that do exist when ``anchor_name`` is not one of them.
    """
    lines = source(name).splitlines()
    out: list[str] = []
    inside = False
    found = False
    for line in lines:
        start, end = _ANCHOR.match(line), _END.match(line)
        if start and start.group(1) == anchor_name:
            inside, found = True, True
            continue
        if end and end.group(1) == anchor_name:
            inside = False
            continue
        if inside and not (start or end):
            out.append(line)
    if not found:
        raise ValueError(f"anchor_name must be one of {anchors(name)} in kernels/{path(name).name}; got {anchor_name!r}")
    return "\n".join(out)


def anchors(name: str) -> list[str]:
    """Every anchor name defined in a kernel file, in order."""
    return [m.group(1) for line in source(name).splitlines() if (m := _ANCHOR.match(line))]


def _include_options() -> list[str]:
    """-I flags: kernels/, CuPy's bundled CCCL (CUB), and the CUDA runtime headers wheel if present."""
    opts = [f"-I{KERNELS_DIR}"]
    try:
        import cupy

        cccl = Path(cupy.__file__).parent / "_core" / "include" / "cupy" / "_cccl"
        opts += [f"-I{cccl / sub}" for sub in ("cub", "libcudacxx", "thrust") if (cccl / sub).is_dir()]
    except ImportError:
        pass
    try:  # cooperative_groups.h lives with the runtime headers; NVRTC does not bundle it
        import nvidia.cuda_runtime as rt

        for base in rt.__path__:
            if (Path(base) / "include" / "cooperative_groups.h").is_file():
                opts.append(f"-I{Path(base) / 'include'}")
    except ImportError:
        pass
    cuda_path = os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    if (Path(cuda_path) / "include" / "cooperative_groups.h").is_file():
        opts.append(f"-I{Path(cuda_path) / 'include'}")
    return opts


def include_options() -> list[str]:
    """The -I flags that compiling kernels/ code needs (kernels/, CUB, cooperative groups)."""
    return _include_options()


def _options(defines: Sequence[str], extra: Sequence[str]) -> tuple[str, ...]:
    return ("-std=c++17", *(f"-D{d}" for d in defines), *extra)


@functools.lru_cache(maxsize=None)
def module(name: str, name_expressions: tuple[str, ...] = (), defines: tuple[str, ...] = (),
           options: tuple[str, ...] = ()) -> Any:
    """Compile ``kernels/NAME.cu`` with ``cupy.RawModule`` and cache it.

    ``name_expressions`` instantiates templates (fetch them with ``mod.get_function(expr)``);
    ``defines`` are macro names (``"WARPLAB_TRACE"``, ``"BLOCK=256"``). Needs a usable GPU.
    """
    import cupy

    return cupy.RawModule(
        code=source(name),
        options=_options(defines, options) + tuple(_include_options()),
        name_expressions=list(name_expressions) or None,
    )


def ptx(name: str, arch: str = "sm_90", name_expressions: Sequence[str] = (),
        defines: Sequence[str] = (), options: Sequence[str] = ()) -> str:
    """Compile ``kernels/NAME.cu`` to PTX for ``arch`` through NVRTC alone: no GPU, no driver.

    ``arch`` is ``"sm_XY"`` or ``"compute_XY"``. Raises RuntimeError with NVRTC's log when the kernel
    does not compile. Template kernels need ``name_expressions`` to be instantiated at all.
    """
    return compiled(name, arch, name_expressions, defines, options).ptx


def compiled(name: str, arch: str = "sm_90", name_expressions: Sequence[str] = (),
             defines: Sequence[str] = (), options: Sequence[str] = ()) -> nvrtc.Compiled:
    """As :func:`ptx`, with the mangled name of every name expression (``.lowered``), which loading
    the PTX as a module needs (``helpers.proof.record``)."""
    m = re.fullmatch(r"(?:sm|compute)_(\d{2,3}a?)", arch)
    if not m:
        raise ValueError(f"arch must look like 'sm_90' or 'compute_80'; got {arch!r}")
    opts = [f"-arch=compute_{m.group(1)}", *_options(defines, options), *_include_options()]
    try:
        return nvrtc.compile(source(name), filename=f"{name}.cu", options=opts,
                             name_expressions=name_expressions)
    except nvrtc.CompileError as exc:
        raise RuntimeError(f"kernels/{name}.cu does not compile for {arch}:\n{exc.log}") from exc
