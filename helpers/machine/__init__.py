"""The SIMT machine: a kernel's real PTX, executed lane by lane on the CPU with sm_70+ semantics.

Shaped like CuPy's ``RawModule``, so backend code reads the same on both engines::

    from helpers import machine
    mod = machine.RawModule(code=source, options=("-std=c++17",), name_expressions=("k<float>",))
    kernel = mod.get_function("k<float>")            # or a mangled .entry name
    report = kernel((blocks,), (threads,), (x, out, np.int64(n)), shared_mem=0)
    report.issues       # [Finding(kind, message, threads, instruction, line, file, ...)]
    report.undefined    # per argument position: bool mask of elements whose value is undefined
    report.counters     # per warp / per instruction: lanes, bank wavefronts, sectors, barriers
    kernel(..., trace=True).trace                    # every executed warp-instruction

``RawModule(ptx=TEXT)`` runs shipped PTX. NumPy arrays stand for device buffers (each its own
allocation, exactly bounded) and are updated in place; NumPy scalars are passed by value.
An instruction the machine does not support raises :class:`UnsupportedInstruction` naming it and
its CUDA source line. See docs/machine.md for the execution model.
"""
from .module import Kernel, RawModule, kernel_module
from .report import KINDS, Counters, Finding, MachineError, Report, UnsupportedInstruction

__all__ = ["RawModule", "Kernel", "kernel_module", "Report", "Finding", "Counters", "KINDS", "MachineError",
           "UnsupportedInstruction"]
