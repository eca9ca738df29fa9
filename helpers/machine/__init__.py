"""The SIMT machine: a kernel's real PTX, executed lane by lane on the CPU with sm_70+ semantics.

Shaped like CuPy's ``RawModule``, so backend code reads the same on both engines::

    from helpers import machine
    mod = machine.RawModule(code=source, options=("-std=c++17",), name_expressions=("k<float>",))
    mod = machine.RawModule(ptx=text)                      # shipped PTX
    mod = machine.kernel_module("reduce_v4", ("reduce_v4<256>",), defines=())   # kernels/NAME.cu
    kernel = mod.get_function("k<float>")                  # a name expression or a mangled .entry name
    report = kernel((blocks,), (threads,), (x, out, np.int64(n)), shared_mem=0)

Launch: ``kernel(grid, block, args, shared_mem=0, *, trace=False, max_steps=2_000_000, globals=None)``.
``grid``/``block`` are 1 to 3 ints. ``args`` has one value per kernel parameter: a NumPy array
stands for a device buffer (C-contiguous, its own exactly bounded allocation, updated in place
after the launch; a view keeps its byte offset mod 256, as a CuPy slice would); a NumPy scalar (or
a Python int/float that fits the parameter's PTX type) is passed by value. ``globals`` sets
``__device__`` variables: ``{name: (field, ...)}`` with arrays as pointers (e.g. the
``-DWARPLAB_TRACE`` sink), or raw bytes as an array/scalar. Bad input raises ``ValueError`` naming
the parameter.

The :class:`Report`:

* ``issues``: :class:`Finding` list; ``.kind`` in :data:`KINDS` (``race``, ``out_of_bounds``,
  ``misaligned``, ``uninitialized``, ``undefined_shuffle``, ``divergent_barrier``, ``deadlock``),
  ``.message``, ``.threads`` (example ``((blockIdx), (threadIdx))`` tuples), ``.instruction`` (PTX),
  ``.line``/``.file`` (CUDA source, innermost inlined frame; ``.loc`` has the chain), for a race
  ``.other_instruction``/``.other_line`` (the earlier access) and ``.lines`` = (earlier, later),
  ``.count``, ``.detail`` (``space``, ``hazard`` RAW/WAR/WAW, ``address``).
* ``undefined``: per argument position, a bool mask shaped like the array (None for scalars): True
  where the element's final value is undefined. Compare results only where it is False.
* ``counters``: :class:`Counters` (``per_warp``, ``by_pc``, ``per_instruction``, ``totals``,
  ``divergence``): issued warp-instructions, active and predicated-on lanes, shared requests and
  wavefronts (32 banks of 4-byte words, broadcast), global requests and 32-byte sectors, barriers.
* ``trace`` (with ``trace=True``): ``MachineTrace``: ``.events`` (one row per warp per executed
  instruction: step, pc, warp, active mask, predicated-on mask, line) and ``.shuffles(dtype)``, a
  :class:`helpers.engine.trace.Trace` of every shuffle.
* ``fma_contractable``: mul/add pairs without rounding modifiers that ptxas may fuse on hardware.
* ``undefined_globals``, ``steps``, ``clean``, ``kinds()``, ``of_kind(kind)``, ``summary()``.

Fixed order of atomics: ``atom``/``red`` run one thread at a time; within one scheduling step in
increasing linear thread id over the whole grid (block linear id, then the thread's linear id
``x + y*Dx + z*Dx*Dy``), steps in schedule order (lowest PC first). ``atomicAdd`` tickets therefore
come out in thread order, and float atomic sums round in that order.

An instruction the machine does not support raises :class:`UnsupportedInstruction` naming it and its
source line, when it is reached; it is never executed approximately (approximate instructions such
as ``sin.approx`` are refused). A ``trap`` (a failed device assert) raises :class:`MachineError`; a
launch past its ``max_steps`` raises :class:`StepLimit` (a MachineError) with the line it stopped at.
docs/machine.md has the execution model, what is and is not modelled, and the PTX ISA / Programming
Guide section behind each rule.
"""
from helpers.machine.module import Kernel, RawModule, kernel_module
from helpers.machine.report import KINDS, Counters, Finding, MachineError, Report, StepLimit, UnsupportedInstruction

__all__ = ["RawModule", "Kernel", "kernel_module", "Report", "Finding", "Counters", "KINDS", "MachineError",
           "StepLimit", "UnsupportedInstruction"]
