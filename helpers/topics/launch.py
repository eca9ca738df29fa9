"""One launch of a kernel from ``kernels/``, on either engine: the GPU (CuPy) or the SIMT machine.

This is the only way a topic module runs a kernel, so every number a notebook shows comes from the
kernel's own source (principle 1), never from a Python copy of its logic:

* :func:`machine_module` gives ``kernels/NAME.cu`` as the machine runs it: the PTX shipped in
  ``kernels/shipped/`` (the same text on every learner's machine, no NVRTC needed) while it matches
  the sources, else a fresh NVRTC compilation, else a clear error saying what to do.
* :func:`launch` runs one kernel with NumPy arguments and returns a :class:`Launch`: every argument
  after the launch, which engine produced it, and the machine's :class:`~helpers.machine.Report`
  (what is defined, races, counters, the trace). On a GPU, ``check=True`` also runs the same launch
  on the same inputs on the machine, so the figure can say what is defined and what races while
  the values stay the hardware's; :meth:`Launch.disagreements` lists where the two differ.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from helpers.engine import backend as _backend
from helpers.engine import kernels
from helpers.engine import nvrtc
from helpers import machine
from helpers.machine.decode import UINT

MACHINE_ARCH = "sm_90"   # the shipped PTX's arch: the H200's, which the machine's semantics follow


@functools.lru_cache(maxsize=128)
def _module(name: str, name_expressions: tuple[str, ...], defines: tuple[str, ...]) -> machine.RawModule:
    try:
        shipped = kernels.shipped_ptx(name, arch=MACHINE_ARCH, defines=defines)
    except (ValueError, FileNotFoundError):
        shipped = None
    if shipped is not None and all(e in shipped.lowered for e in name_expressions):
        entry = next(e for e in kernels.manifest()["ptx"]
                     if (e["name"], e["arch"], e["defines"]) == (name, MACHINE_ARCH, list(defines)))
        if entry["inputs"] == kernels.inputs_digest(name, MACHINE_ARCH, defines, tuple(shipped.lowered)):
            return machine.RawModule(ptx=shipped.text, lowered=shipped.lowered)
        stale = True
    else:
        stale = False
    if nvrtc.available():
        return machine.kernel_module(name, name_expressions, defines)
    why = (f"kernels/{kernels.program_name(name)} changed since its PTX was shipped" if stale else
           f"no PTX of kernels/{kernels.program_name(name)} with defines {list(defines)} and "
           f"{list(name_expressions)} is shipped")
    raise RuntimeError(f"{why}, and NVRTC is not installed to compile it: run ./warplab ship on a machine "
                       f"with NVRTC, or install it. {nvrtc.HOW_TO_GET_IT}")


def machine_module(name: str, name_expressions: Sequence[str] = (), defines: Sequence[str] = ()) -> machine.RawModule:
    """``kernels/NAME.cu`` as a machine module holding ``name_expressions``, built with ``-D`` each of
    ``defines``: its shipped PTX while that matches the current sources (the same PTX on every
    machine), otherwise compiled by NVRTC. Cached. Raises RuntimeError saying what to do when
    neither is possible."""
    return _module(name, tuple(name_expressions), tuple(defines))


@dataclass
class Launch:
    """What one launch produced.

    outputs:  every argument after the launch, as NumPy (arrays; None for scalars), from ``engine``.
    engine:   ``"cupy"`` (the GPU) or ``"machine"`` (the SIMT machine on the CPU).
    report:   the machine's :class:`~helpers.machine.Report` of the same launch on the same inputs:
              always on the machine; on the GPU only with ``check=True`` (else None).
    machine_outputs: on the GPU with ``check=True``, the machine's arguments after its run.
    """

    outputs: list[Optional[np.ndarray]]
    engine: str
    report: Optional[machine.Report] = None
    machine_outputs: Optional[list[Optional[np.ndarray]]] = field(default=None, repr=False)

    def defined(self, pos: int) -> np.ndarray:
        """Where argument ``pos``'s final value is defined (all True when no machine run was made)."""
        out = self.outputs[pos]
        if out is None:
            raise ValueError(f"pos must name an array argument; argument {pos} is a scalar")
        if self.report is None or self.report.undefined[pos] is None:
            return np.ones(out.shape, bool)
        return ~self.report.undefined[pos]

    def disagreements(self) -> list[str]:
        """On the GPU with ``check=True``: one line per array argument whose defined elements differ
        bit for bit between the GPU and the machine (empty when they agree). [] without a check."""
        if self.machine_outputs is None:
            return []
        out = []
        for pos, (g, m) in enumerate(zip(self.outputs, self.machine_outputs)):
            if g is None:
                continue
            ok = self.defined(pos)
            bad = np.flatnonzero((bits(g) != bits(m)) & ok.reshape(-1))
            if bad.size:
                i = int(bad[0])
                out.append(f"argument {pos}: {bad.size} defined elements differ (first at {i}: "
                           f"GPU {g.reshape(-1)[i].item()!r}, machine {m.reshape(-1)[i].item()!r})")
        return out


def bits(a: np.ndarray) -> np.ndarray:
    """``a``'s elements as unsigned integers of the same width, flattened: what "bit for bit" compares
    (a NaN equals itself, -0.0 differs from 0.0)."""
    a = np.ascontiguousarray(a).reshape(-1)
    return a.view(UINT[a.dtype.itemsize])


def _on_machine(name: str, expr: str, grid: Any, block: Any, args: Sequence[Any], shared_mem: int,
                defines: Sequence[str], trace: bool, max_steps: int) -> tuple[list[Optional[np.ndarray]], machine.Report]:
    mine = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    fn = machine_module(name, (expr,), defines).get_function(expr)
    report = fn(grid, block, tuple(mine), shared_mem=shared_mem, trace=trace, max_steps=max_steps)
    return [a if isinstance(a, np.ndarray) else None for a in mine], report


def _on_gpu(name: str, expr: str, grid: Any, block: Any, args: Sequence[Any], shared_mem: int,
            defines: Sequence[str]) -> list[Optional[np.ndarray]]:
    import cupy

    dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    fn = kernels.module(name, (expr,), tuple(defines)).get_function(expr)
    fn(_dims(grid), _dims(block), tuple(dev), shared_mem=shared_mem)
    return [cupy.asnumpy(d) if isinstance(d, cupy.ndarray) else None for d in dev]


def _dims(d: Any) -> tuple[int, ...]:
    return (int(d),) if np.isscalar(d) else tuple(int(x) for x in d)


def launch(name: str, name_expression: str, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0, *,
           defines: Sequence[str] = (), backend: Optional[str] = None, check: bool = False, trace: bool = False,
           max_steps: int = 2_000_000) -> Launch:
    """Launch ``name_expression`` of ``kernels/NAME.cu`` with ``grid`` x ``block`` threads.

    ``args``: one per kernel parameter; NumPy arrays stand for device buffers (copied, never changed
    in place), NumPy scalars are passed by value. ``backend`` picks the engine (``"cupy"`` or
    ``"emulator"``, which is the SIMT machine; None: :func:`helpers.engine.backend.resolve`). On the GPU,
    ``check=True`` (or ``trace=True``) also runs the machine on the same inputs and keeps its report.
    """
    engine = _backend.resolve(backend)
    if engine == "cupy":
        outputs = _on_gpu(name, name_expression, grid, block, args, shared_mem, defines)
        if not (check or trace):
            return Launch(outputs, "cupy")
        mine, report = _on_machine(name, name_expression, grid, block, args, shared_mem, defines, trace, max_steps)
        return Launch(outputs, "cupy", report, mine)
    mine, report = _on_machine(name, name_expression, grid, block, args, shared_mem, defines, trace, max_steps)
    return Launch(mine, "machine", report)
