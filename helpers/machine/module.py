"""``RawModule`` and its kernels: CuPy's shape, the SIMT machine underneath."""
from __future__ import annotations

import functools
import hashlib
import re
from typing import Any, Optional, Sequence

import numpy as np

from helpers.machine import ptx as ptxmod
from helpers.machine.report import MachineError, Report

DEFAULT_ARCH = "compute_90"


@functools.lru_cache(maxsize=64)
def _compile(code: str, options: tuple[str, ...], name_expressions: tuple[str, ...]) -> tuple[str, dict]:
    from helpers.engine import nvrtc

    opts = list(options)
    if not any(o.startswith(("-arch", "--gpu-architecture")) for o in opts):
        opts.append(f"-arch={DEFAULT_ARCH}")
    if "-lineinfo" not in opts and "--generate-line-info" not in opts:
        opts.append("-lineinfo")
    for o in opts:
        m = re.match(r"(?:-arch=|--gpu-architecture=)(?:compute|sm)_(\d+)", o)
        if m and int(m.group(1)) < 70:
            raise ValueError(f"options: the machine has sm_70+ semantics; -arch must be compute_70 or newer, got {o!r}")
    name = "kernel.cu"
    for o in opts:
        if o.startswith("--filename="):
            name = o.split("=", 1)[1]
    opts = [o for o in opts if not o.startswith("--filename=")]
    compiled = nvrtc.compile(code, filename=name, options=opts, name_expressions=name_expressions)
    return compiled.ptx, dict(compiled.lowered)


@functools.lru_cache(maxsize=64)
def _parse(text_hash: str, text: str) -> ptxmod.Module:
    return ptxmod.parse(text)


class RawModule:
    """A module of kernels, compiled like ``cupy.RawModule`` and run on the SIMT machine.

    ``RawModule(code=SOURCE, options=(...), name_expressions=(...))`` compiles CUDA C++ through NVRTC
    to PTX (``-lineinfo`` and ``-arch=compute_90`` are added unless given; ``--filename=NAME`` names
    the source in line info). ``RawModule(ptx=TEXT, lowered={expr: mangled})`` takes PTX directly (with
the name expressions NVRTC lowered, when it came from a compilation). Parsing is cached.
    """

    def __init__(self, code: Optional[str] = None, options: Sequence[str] = (),
                 name_expressions: Optional[Sequence[str]] = None, *, ptx: Optional[str] = None,
                 lowered: Optional[dict[str, str]] = None) -> None:
        if (code is None) == (ptx is None):
            raise ValueError("RawModule needs exactly one of code= (CUDA C++) or ptx= (PTX text)")
        if lowered is not None and ptx is None:
            raise ValueError("lowered= ({name expression: mangled name}) goes with ptx=; code= makes its own")
        self.lowered: dict[str, str] = {}
        if code is not None:
            self.ptx, self.lowered = _compile(code, tuple(options), tuple(name_expressions or ()))
        else:
            self.ptx, self.lowered = ptx, dict(lowered or {})
        self.module = _parse(hashlib.sha1(self.ptx.encode()).hexdigest(), self.ptx)

    @property
    def kernel_names(self) -> list[str]:
        """The (mangled) names of the module's ``.entry`` functions."""
        return [n for n, e in self.module.functions.is_entry.items() if e]

    def get_function(self, name: str) -> "Kernel":
        """The kernel ``name``: a name expression given at construction, or a (mangled) entry name."""
        real = self.lowered.get(name, name)
        if not self.module.functions.is_entry.get(real, False):
            known = list(self.lowered) + [n for n in self.kernel_names if n not in self.lowered.values()]
            raise ValueError(f"name must be one of this module's kernels {known}; got {name!r}")
        return Kernel(self, real)


def kernel_module(name: str, name_expressions: Sequence[str] = (), defines: Sequence[str] = (),
                  options: Sequence[str] = ()) -> RawModule:
    """``kernels/NAME.cu`` as a machine :class:`RawModule` (``-std=c++17``, the include paths of
    :func:`helpers.engine.kernels.include_options`, ``-DNAME`` for each of ``defines``). Cached."""
    return _kernel_module(name, tuple(name_expressions), tuple(defines), tuple(options))


@functools.lru_cache(maxsize=128)
def _kernel_module(name: str, name_expressions: tuple, defines: tuple, options: tuple) -> RawModule:
    from helpers.engine import kernels

    opts = ("-std=c++17", *(f"-D{d}" for d in defines), *options, *kernels.include_options(),
            f"--filename={name}.cu")
    return RawModule(code=kernels.source(name), options=opts, name_expressions=name_expressions)


class Kernel:
    """One kernel of a :class:`RawModule`; call it to launch it on the machine."""

    def __init__(self, module: RawModule, name: str) -> None:
        self.raw_module = module
        self.name = name
        self.function = module.module.functions[name]

    def __repr__(self) -> str:
        return f"<machine kernel {self.name}>"

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0, *,
                 trace: bool = False, max_steps: int = 2_000_000, globals: Optional[dict] = None,
                 serial: bool = False, max_seconds: Optional[float] = None) -> Report:
        """Launch on the machine: ``grid`` and ``block`` are 1 to 3 ints; ``args`` one per kernel
        parameter (NumPy arrays for pointers, updated in place; NumPy scalars by value).

        ``trace=True`` records every executed warp-instruction (``Report.trace``). ``max_steps`` bounds
        the scheduling steps and ``max_seconds`` (None: no bound) the wall-clock time (a runaway loop
        raises :class:`StepLimit`, a MachineError naming where it stopped). ``globals`` sets
        ``__device__`` variables before the launch: {name: a tuple of struct fields (NumPy arrays
        become pointers to buffers updated in place, NumPy scalars are values), or a NumPy array /
        scalar holding the variable's bytes}; e.g. the trace sink of ``-DWARPLAB_TRACE`` kernels:
        ``{"warplab_trace_sink": (held, received, src, np.int64(n_slots), np.int32(n_steps))}``.
        ``serial=True`` runs the blocks one after another, block 0 first (see
        :func:`helpers.machine.executor.launch`).
        """
        from helpers.machine.executor import launch

        if shared_mem < 0:
            raise ValueError(f"shared_mem must be >= 0 bytes; got {shared_mem}")
        return launch(self.raw_module.module, self.function, _dims("grid", grid), _dims("block", block),
                      tuple(args), int(shared_mem), trace=trace, max_steps=max_steps, globals_=globals,
                      serial=serial, max_seconds=max_seconds)


def _dims(what: str, v: Any) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    try:
        t = tuple(int(x) for x in v)
    except TypeError:
        raise ValueError(f"{what} must be 1 to 3 positive ints; got {v!r}") from None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise ValueError(f"{what} must be 1 to 3 positive ints; got {v!r}")
    t = t + (1,) * (3 - len(t))
    if what == "block" and t[0] * t[1] * t[2] > 1024:
        raise ValueError(f"block must have at most 1024 threads; got {t} = {t[0] * t[1] * t[2]}")
    return t  # type: ignore[return-value]


__all__ = ["RawModule", "Kernel", "MachineError", "kernel_module"]
