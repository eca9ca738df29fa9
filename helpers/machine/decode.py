"""From a parsed PTX instruction to an operation over NumPy arrays of all threads at one PC: the dispatch.

Each instruction is decoded once per function into a *maker*; binding a maker to a launch
(:class:`helpers.machine.executor.Launch`) gives an :class:`~helpers.machine.isa.operands.Op` whose
``run(G)`` executes the instruction for the threads of group ``G`` together. Registers are per-thread arrays over every
thread of the launch, each with a parallel *defined* array (or, while every thread holds a defined
value, one value or an affine rule of the thread's place: :mod:`helpers.machine.registers`); a
result is defined only where every operand it depends on is defined (and the thread's control flow is).

The makers live in :mod:`helpers.machine.isa`, one module per instruction family of the PTX ISA's
Instruction Set chapter (cited there by section title or instruction, since section numbers change
between releases): ``integer`` (Integer Arithmetic, Extended-Precision), ``floats`` (Floating-Point),
``bits`` (Logic and Shift, bit fields), ``compare`` (Comparison and Selection), ``convert`` (mov, cvt,
cvta), ``memory`` (ld, st, atom, red, membar/fence), ``control`` (Control Flow), ``sync`` (bar,
bar.warp.sync, activemask, shfl, vote, match, redux); what they share is in ``isa.operands`` (types,
op kinds, :class:`Op`, operand readers and writers) and ``isa.affine`` (integer arithmetic on affine
rules). Teaching the machine one instruction: docs/machine.md.

The executor's rooms read the operand layer through this module (``decode.NP``, ``decode.reader``,
the op kinds ...): the names in ``__all__`` below are those, re-exported so that a caller of the
decoder imports one module.
"""
from __future__ import annotations

from typing import Callable

from helpers.machine.isa import bits, compare, control, convert, floats, integer, memory, sync
from helpers.machine.isa.operands import (ALU, ATOM, BAR, BRA, EXIT, FENCE, NP, ROUND_F, TRAP, UINT, WS,
                                          Unsupported, defined_per_thread, imm_value, per_thread, reader,
                                          storage_dtype, unsupported_maker)
from helpers.machine.ptx import Instr

__all__ = ["decode", "MAKERS", "ALU", "ATOM", "BAR", "BRA", "EXIT", "FENCE", "TRAP", "WS", "NP", "ROUND_F", "UINT",
           "Unsupported", "defined_per_thread", "imm_value", "per_thread", "reader", "storage_dtype"]


def _join(*tables: dict[str, Callable]) -> dict[str, Callable]:
    """One table of every family's makers; an opcode claimed by two families is a bug, said at import."""
    out: dict[str, Callable] = {}
    for table in tables:
        twice = out.keys() & table.keys()
        if twice:
            raise RuntimeError(f"opcodes decoded by two instruction families: {sorted(twice)}")
        out.update(table)
    return out


MAKERS = _join(integer.MAKERS, floats.MAKERS, bits.MAKERS, compare.MAKERS, convert.MAKERS, memory.MAKERS,
               control.MAKERS, sync.MAKERS)


def decode(ins: Instr, fn) -> Callable:
    """The maker (launch context -> :class:`~helpers.machine.isa.operands.Op`) for one instruction; unsupported ones raise when run."""
    f = MAKERS.get(ins.opcode)
    if f is None:
        return unsupported_maker(ins, f"`{ins.opcode}` is not implemented")
    try:
        return f(ins, fn)
    except Unsupported as exc:
        return unsupported_maker(ins, exc.why)
