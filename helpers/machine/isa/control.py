"""Control flow: bra, ret, exit, trap, brkpt, call (PTX ISA, Control Flow Instructions). The scheduler
(:mod:`helpers.machine.executor`) acts on the op kinds these give; device-function calls are not
implemented, and the message names the function called.
"""
from __future__ import annotations

from helpers.machine.isa.operands import BRA, EXIT, Op, TRAP, Unsupported, maker_table
from helpers.machine.ptx import Instr, Sym

MAKERS, maker = maker_table()


@maker("bra")
def _bra(ins: Instr, fn):
    if not ins.operands or not isinstance(ins.operands[0], Sym):
        raise Unsupported("indirect branches (brx.idx) are not implemented")
    name = ins.operands[0].name
    if name not in fn.labels:
        raise Unsupported(f"unknown label {name}")
    target = fn.labels[name]
    return lambda ctx: Op(BRA, ins, target=target)


@maker("ret", "exit")
def _ret(ins: Instr, fn):
    if ins.opcode == "ret" and not fn.is_entry:
        raise Unsupported("device-function calls (call/ret) are not implemented")
    return lambda ctx: Op(EXIT, ins)


@maker("trap", "brkpt")
def _trap(ins: Instr, fn):
    return lambda ctx: Op(TRAP, ins)


def callee_after(fn, index: int) -> str:
    """The function the next ``call`` from ``index`` on calls (``vprintf`` for printf)."""
    for ins in fn.instrs[index:]:
        if ins.opcode == "call":
            for o in ins.operands:
                if isinstance(o, Sym) and not o.name.startswith("("):
                    return o.name + (" (printf)" if o.name == "vprintf" else "") + \
                        (" (assert)" if o.name == "__assertfail" else "")
    return "a device function"


@maker("call")
def _call(ins: Instr, fn):
    raise Unsupported(f"device-function calls are not implemented: this calls `{callee_after(fn, ins.index)}` "
                     f"(printf, assert and __noinline__ functions compile to calls)")
