"""Integer arithmetic on :class:`~helpers.machine.registers.Affine` rules: what the ``affine`` hooks of
:func:`helpers.machine.isa.operands.simple` compute for add, sub, mul, mad, div, rem, shl and setp.

Each takes operands that are rules or one value for every thread and gives a rule, one value, or None
where the result is no rule (a product of two rules) or the rule cannot be shown exact (a comparison,
division or widening of values that do not all lie in one range of the type). Semantics are the PTX
ISA's (Integer Arithmetic Instructions; setp).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from helpers.machine.isa.operands import NP
from helpers.machine.registers import Affine

def linear(x) -> "Affine | int | None":
    """An integer operand as a rule or one integer (its value as its type reads it: signed for .s
    types); None for per-thread values."""
    if type(x) is Affine:
        return x
    return int(x) if np.ndim(x) == 0 else None


def affine_sum(a, b, sign: int = 1) -> Optional[Affine]:
    """``a + sign * b`` (add, sub: the low bits, PTX ISA add/sub (integer))."""
    x, y = linear(a), linear(b)
    if x is None or y is None:
        return None
    y = y.times(sign) if type(y) is Affine else sign * y
    return x.plus(y) if type(x) is Affine else y.plus(x)


def affine_product(a, b) -> Optional[Affine]:
    """``a * b`` (mul.lo: the low bits, PTX ISA mul (integer)) of a rule and one integer."""
    x, y = linear(a), linear(b)
    if type(x) is Affine and type(y) is int:
        return x.times(y)
    if type(y) is Affine and type(x) is int:
        return y.times(x)
    return None


def affine_wide(a, b, signed: bool) -> Optional[Affine]:
    """mul.wide (PTX ISA mul (integer)): the operands as integers of their type, their whole product in a
    rule twice as wide; None when a rule's values do not all lie in the type's range."""
    x, y = linear(a), linear(b)
    x, y = ((v.signed() if signed else v.unsigned()) if type(v) is Affine else v for v in (x, y))
    p = None if x is None or y is None else affine_product(x, y)
    return None if p is None else p.width(2 * p.bits)


def affine_shl(a, b, bits: int) -> Optional[Affine]:
    """shl (PTX ISA shl) of a rule by one amount; amounts past the width shift every bit out."""
    x, n = linear(a), linear(b)
    if type(x) is not Affine or type(n) is not int:
        return None
    return x.times(1 << min(n, bits))


def affine_divide(a, b, t: str, rem: bool):
    """div or rem (PTX ISA div, rem (integer)) of a rule by one positive integer when every thread's dividend
    (an integer of type t) lies in one [k * b, (k + 1) * b) with k >= 0: the quotient is k in every
    thread (one value), the remainder the rule less k * b (truncation is floor division there)."""
    x, c = linear(a), linear(b)
    if type(x) is not Affine or type(c) is not int or c <= 0:
        return None
    x = x.signed() if t.startswith("s") else x.unsigned()
    if x is None:
        return None
    lo, hi = x.span
    k = lo // c
    if lo < 0 or hi >= (k + 1) * c:
        return None
    return x.plus(-k * c) if rem else NP[t](k)


def affine_compare(cmp: str, signed: bool, a, b) -> Optional[np.bool_]:
    """An integer setp comparison (PTX ISA setp) of rules and values that has one outcome in
    every thread, as that one value; None when it may differ between threads. ``signed``: how the
    comparison reads the operands."""
    x, y = linear(a), linear(b)
    if x is None or y is None:
        return None
    x, y = ((v.signed() if signed else v.unsigned()) if type(v) is Affine else v for v in (x, y))
    if x is None or y is None:
        return None
    diff = x.plus(y.times(-1) if type(y) is Affine else -y) if type(x) is Affine else y.times(-1).plus(x)
    lo, hi = diff.span
    yes, no = {"eq": (lo == hi == 0, hi < 0 or lo > 0), "ne": (hi < 0 or lo > 0, lo == hi == 0),
               "lt": (hi < 0, lo >= 0), "le": (hi <= 0, lo > 0), "gt": (lo > 0, hi <= 0),
               "ge": (lo >= 0, hi < 0)}[UNSIGNED_ORDER.get(cmp, cmp)]
    return np.bool_(True) if yes else np.bool_(False) if no else None


UNSIGNED_ORDER = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}   # the unsigned comparisons
