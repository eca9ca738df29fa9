"""The registers of one launch: per register, its value and whether it is defined, for every thread.

NVRTC declares far more registers than one run writes (each branch of a ``switch`` has its own), and
most of what a kernel writes is defined for every thread. So a register keeps no array until this
launch writes it (it reads as 0, undefined: a register never written), and its definedness is one
flag, ``True`` (every thread) or ``False`` (none), until some threads differ. A register that every
thread wrote with one defined value (a constant, a parameter, what is computed from them alone) keeps
that value once, as a NumPy scalar, and reads as it: what reads it then costs nothing per thread. The
arrays stay with the :class:`Registers` from one launch to the next of the same size; a write that
covers every thread with a freshly computed array keeps that array instead of copying it.

A register that every thread wrote with a value affine in the thread's place in the launch
(``%tid.x`` of a one-dimensional block, ``%ctaid.x * %ntid.x + %tid.x`` and the addresses made from
it) keeps that rule, an :class:`Affine`, and has no array until an instruction that is not affine
in it, or a part of the threads, reads or writes it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@dataclass(frozen=True)
class Affine:
    """The values ``base + cta * c + loc * l`` of every thread of a launch, where ``c`` is the
    thread's linear block index (0 .. ``ncta`` - 1) and ``l`` its linear index in its block's
    ``tpc`` thread slots (the block padded to whole warps): exact integers, of which a register of
    ``bits`` bits holds the low ``bits`` (two's complement).

    Addition, subtraction, multiplication by an integer and shifts left are exact on the low bits
    whatever the integers grow to, so they keep the rule as it is; what reads a value as a number
    (widening, comparison, division) first asks :meth:`within` for the same low bits as integers of
    one range, and falls back to per-thread arrays where there is none."""

    base: int
    cta: int
    loc: int
    bits: int
    ncta: int
    tpc: int

    @property
    def span(self) -> tuple[int, int]:
        """The least and the greatest of the integers over every thread."""
        c, l_ = self.cta * (self.ncta - 1), self.loc * (self.tpc - 1)
        return self.base + min(0, c) + min(0, l_), self.base + max(0, c) + max(0, l_)

    @property
    def constant(self) -> bool:
        """Whether every thread holds the same value (the same low bits)."""
        m = (1 << self.bits) - 1
        return (self.cta & m == 0 or self.ncta == 1) and (self.loc & m == 0 or self.tpc == 1)

    def within(self, lo: int, hi: int) -> Optional["Affine"]:
        """The same low bits as integers that all lie in [lo, hi]: the steps taken modulo 2**bits
        nearest zero, the base moved by a multiple of 2**bits; None when the rule then spans more
        than [lo, hi] (the caller takes per-thread values: this answer is exact, not complete)."""
        m = 1 << self.bits
        h = m >> 1
        r = replace(self, base=self.base % m, cta=(self.cta + h) % m - h, loc=(self.loc + h) % m - h)
        a, b = r.span
        k = -((a - lo) // m)   # the fewest steps of 2**bits that lift a to lo or above
        if b + k * m > hi:
            return None
        return replace(r, base=r.base + k * m)

    def signed(self) -> Optional["Affine"]:
        """:meth:`within` the range of a signed integer of ``bits`` bits."""
        h = 1 << (self.bits - 1)
        return self.within(-h, h - 1)

    def unsigned(self) -> Optional["Affine"]:
        """:meth:`within` the range of an unsigned integer of ``bits`` bits."""
        return self.within(0, (1 << self.bits) - 1)

    def plus(self, other: "Affine | int") -> "Affine":
        """This plus another rule of the same launch, or plus one integer (modulo 2**bits)."""
        if isinstance(other, Affine):
            return replace(self, base=self.base + other.base, cta=self.cta + other.cta, loc=self.loc + other.loc)
        return replace(self, base=self.base + other)

    def times(self, k: int) -> "Affine":
        """This times the integer ``k`` (modulo 2**bits)."""
        return replace(self, base=self.base * k, cta=self.cta * k, loc=self.loc * k)

    def width(self, bits: int) -> "Affine":
        """The same integers in a register of ``bits`` bits (narrowing keeps the low bits; widening is
        exact only for integers the wider register holds as they are: see :meth:`within`)."""
        return replace(self, bits=bits)

    def fill(self, out: np.ndarray) -> None:
        """Write every thread's value (the low bits, as ``out``'s unsigned integers of ``bits`` bits)
        into ``out``, one per thread of the launch."""
        # unsigned arithmetic wraps modulo 2**32 or 2**64, which keeps the low bits exact
        u = np.uint64 if self.bits == 64 else np.uint32
        m = (1 << (64 if self.bits == 64 else 32)) - 1
        cta = np.arange(self.ncta, dtype=u)
        cta *= u(self.cta & m)
        loc = np.arange(self.tpc, dtype=u)
        loc *= u(self.loc & m)
        loc += u(self.base & m)
        grid = out.view(_UINT[self.bits]).reshape(self.ncta, self.tpc)
        if self.bits >= 32:
            np.add(cta[:, None], loc[None, :], out=grid)
        else:
            grid[:] = cta[:, None] + loc[None, :]   # the low bits

    def array(self) -> np.ndarray:
        """Every thread's value, as unsigned integers of ``bits`` bits."""
        out = np.empty(self.ncta * self.tpc, _UINT[self.bits])
        self.fill(out)
        return out

    def scalar(self) -> np.generic:
        """The one value of a :attr:`constant` rule, as an unsigned integer of ``bits`` bits."""
        return _UINT[self.bits](self.base & ((1 << self.bits) - 1))


class Registers:
    """Values (raw bits of the register's width, bool for predicates) and definedness of every
    register of a function, over the ``n`` threads of a launch. ``values[name]`` is None while the
    register is unwritten in this launch, a NumPy scalar while every thread holds that one defined
    value, an :class:`Affine` while every thread holds the defined value that rule gives it, else an
    array; ``defined[name]`` is True, False or a bool array."""

    def __init__(self, dtypes: dict[str, Any]) -> None:
        self.dtype = {name: np.dtype(t) for name, t in dtypes.items()}
        self.n = 0
        self.values: dict[str, Any] = dict.fromkeys(self.dtype)
        self.defined: dict[str, Any] = dict.fromkeys(self.dtype, False)
        self._unwritten_values = dict(self.values)
        self._unwritten_defined = dict(self.defined)
        self._v_store: dict[str, np.ndarray] = {}   # each register's arrays, kept for the next launch
        self._d_store: dict[str, np.ndarray] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.dtype

    def reset(self, n: int) -> None:
        """Every register unwritten, for a launch of ``n`` threads."""
        if n != self.n:
            self._v_store.clear()
            self._d_store.clear()
            self.n = n
        # updated in place: the bound readers and writers hold these dicts
        self.values.update(self._unwritten_values)
        self.defined.update(self._unwritten_defined)

    def release(self) -> None:
        """Drop every array (the launch state is not kept)."""
        self.reset(0)

    def _fresh(self, name: str, full: bool) -> np.ndarray:
        a = self._v_store.get(name)
        if a is None:
            a = self._v_store[name] = np.empty(self.n, self.dtype[name])
        if not full:
            a.fill(0)
        self.values[name] = a
        return a

    def _array(self, name: str, full: bool) -> np.ndarray:
        """The values of ``name`` as an array over every thread (a uniform value spread out, unless
        a full write follows)."""
        v = self.values[name]
        if v is None:
            return self._fresh(name, full)
        if type(v) is Affine:
            a = self._fresh(name, True)
            if not full:
                v.fill(a)
            return a
        if v.ndim == 0:
            a = self._fresh(name, True)
            if not full:
                a.fill(v)
            return a
        return v

    def _defined_array(self, name: str, full: bool) -> np.ndarray:
        """The definedness of ``name`` as an array (made from its flag unless a full write follows)."""
        cur = self.defined[name]
        if cur is not True and cur is not False:
            return cur
        a = self._d_store.get(name)
        if a is None:
            a = self._d_store[name] = np.empty(self.n, bool)
        if not full:
            a.fill(cur)
        self.defined[name] = a
        return a

    def reader(self, name: str, affine: bool = False) -> Callable:
        """G -> (values of ``name`` for the threads of G, their definedness: True or a bool array).
        ``affine``: the values may come back as the register's :class:`Affine` rule when G is every
        thread (the reader handles one); otherwise such a register gets its array first."""
        values, defined, dtype = self.values, self.defined, self.dtype[name]
        dense = self._dense

        def read(G):
            v = values[name]
            if v is None:
                return np.zeros(G.n, dtype), np.zeros(G.n, bool)
            if type(v) is Affine:   # defined for every thread
                if affine and G.full:
                    return v, True
                return G.take(dense(name)), True
            if v.ndim == 0:      # uniform: defined for every thread
                return v, True
            d = defined[name]
            return G.take(v), (True if d is True else G.take(d))
        return read

    def _dense(self, name: str) -> np.ndarray:
        """The array of a register that holds an :class:`Affine` rule (made and kept from now on)."""
        return self._array(name, False)

    def write(self, name: str, G, v: Any, d: Any, made: bool = False) -> None:
        """The threads of G wrote ``v`` (one value per thread of G, or one for all of them; cast to
        the register's dtype; or an :class:`Affine` rule of the register's width, for every thread)
        with definedness ``d`` (True or per thread). ``made``: ``v`` is an array just computed that
        nothing else refers to, which the register may keep as it is."""
        if type(v) is Affine:
            if G.full and d is True:
                self.values[name] = v.scalar() if v.constant else v
                self.defined[name] = True
                return
            v = G.take(v.array())
        if G.full:
            if np.ndim(v) == 0:
                if d is True:
                    self.values[name] = np.asarray(v).astype(self.dtype[name])[()]
                    self.defined[name] = True
                    return
            elif made and v.shape == (self.n,) and v.dtype == self.dtype[name] and not self._held_elsewhere(name, v):
                # a result no one else holds: kept as the register's array, not copied into it
                self.values[name] = self._v_store[name] = v
                self.set_defined(name, G, d)
                return
        G.put(self._array(name, G.full), v)
        self.set_defined(name, G, d)

    def _held_elsewhere(self, name: str, v: np.ndarray) -> bool:
        """Whether another register keeps ``v`` as its array (one result written to two registers
        must not become one array that a later partial write changes for both)."""
        other = self._v_store.get(name)
        if other is v:
            return False
        return any(a is v for a in self._v_store.values())

    def set_defined(self, name: str, G, d: Any) -> None:
        """The threads of G wrote ``name`` with definedness ``d`` (True or per thread)."""
        if d is True:
            if G.full:
                self.defined[name] = True
                return
            if self.defined[name] is True:
                return
        G.put(self._defined_array(name, G.full), d)

    def undefine(self, name: str, threads: np.ndarray) -> None:
        """``name`` is undefined for ``threads`` from now on."""
        if self.values[name] is not None:
            self._array(name, False)
            self._defined_array(name, False)[threads] = False

    def save(self, name: str, threads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the values and definedness of ``name`` for ``threads``."""
        v = self.values[name]
        if v is None:
            return np.zeros(threads.size, self.dtype[name]), np.zeros(threads.size, bool)
        d = self.defined[name]
        if type(v) is Affine:
            return v.array()[threads], np.ones(threads.size, bool)
        if v.ndim == 0:
            return np.full(threads.size, v), np.ones(threads.size, bool)
        return v[threads], (np.full(threads.size, d) if d is True or d is False else d[threads])

    def restore(self, name: str, threads: np.ndarray, v: np.ndarray, d: np.ndarray) -> None:
        """Put back what :meth:`save` returned."""
        self._array(name, False)[threads] = v
        self._defined_array(name, False)[threads] = d
