"""The registers of one launch: per register, its value and whether it is defined, for every thread.

NVRTC declares far more registers than one run writes (each branch of a ``switch`` has its own), and
most of what a kernel writes is defined for every thread. So a register keeps no array until this
launch writes it (it reads as 0, undefined: a register never written), and its definedness is one
flag, ``True`` (every thread) or ``False`` (none), until some threads differ. A register that every
thread wrote with one defined value (a constant, a parameter, what is computed from them alone) keeps
that value once, as a NumPy scalar, and reads as it: what reads it then costs nothing per thread. The
arrays stay with the :class:`Registers` from one launch to the next of the same size; a write that
covers every thread with a freshly computed array keeps that array instead of copying it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np


class Registers:
    """Values (raw bits of the register's width, bool for predicates) and definedness of every
    register of a function, over the ``n`` threads of a launch. ``values[name]`` is None while the
    register is unwritten in this launch, a NumPy scalar while every thread holds that one defined
    value, else an array; ``defined[name]`` is True, False or a bool array."""

    def __init__(self, dtypes: dict[str, Any]) -> None:
        self.dtype = {name: np.dtype(t) for name, t in dtypes.items()}
        self.n = 0
        self.values: dict[str, Optional[np.ndarray]] = dict.fromkeys(self.dtype)
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

    def reader(self, name: str) -> Callable:
        """G -> (values of ``name`` for the threads of G, their definedness: True or a bool array)."""
        values, defined, dtype = self.values, self.defined, self.dtype[name]

        def read(G):
            v = values[name]
            if v is None:
                return np.zeros(G.n, dtype), np.zeros(G.n, bool)
            if v.ndim == 0:      # uniform: defined for every thread
                return v, True
            d = defined[name]
            return G.take(v), (True if d is True else G.take(d))
        return read

    def write(self, name: str, G, v: Any, d: Any, made: bool = False) -> None:
        """The threads of G wrote ``v`` (one value per thread of G, or one for all of them; cast to
        the register's dtype) with definedness ``d`` (True or per thread). ``made``: ``v`` is an
        array just computed that nothing else refers to, which the register may keep as it is."""
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
        if v.ndim == 0:
            return np.full(threads.size, v), np.ones(threads.size, bool)
        return v[threads], (np.full(threads.size, d) if d is True or d is False else d[threads])

    def restore(self, name: str, threads: np.ndarray, v: np.ndarray, d: np.ndarray) -> None:
        """Put back what :meth:`save` returned."""
        self._array(name, False)[threads] = v
        self._defined_array(name, False)[threads] = d
