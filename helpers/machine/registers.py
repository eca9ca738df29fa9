"""The registers of one launch: per register, its value and whether it is defined, for every thread.

NVRTC declares far more registers than one run writes (each branch of a ``switch`` has its own), and
most of what a kernel writes is defined for every thread. So a register keeps no array until this
launch writes it (it reads as 0, undefined: a register never written), and its definedness is one
flag, ``True`` (every thread) or ``False`` (none), until some threads differ. The arrays stay with the
:class:`Registers` from one launch to the next of the same size, and a write that covers every
thread overwrites them without clearing them first.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np


class Registers:
    """Values (raw bits of the register's width, bool for predicates) and definedness of every
    register of a function, over the ``n`` threads of a launch. ``values[name]`` is None while the
    register is unwritten in this launch; ``defined[name]`` is True, False or a bool array."""

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
            d = defined[name]
            return v[G.sel], (True if d is True else d[G.sel])
        return read

    def storage(self, name: str, G) -> np.ndarray:
        """The values array of ``name``, to be written for the threads of G."""
        v = self.values[name]
        return self._fresh(name, G.full) if v is None else v

    def set_defined(self, name: str, G, d: Any) -> None:
        """The threads of G wrote ``name`` with definedness ``d`` (True or per thread)."""
        if d is True:
            if G.full:
                self.defined[name] = True
                return
            if self.defined[name] is True:
                return
        self._defined_array(name, G.full)[G.sel] = d

    def undefine(self, name: str, threads: np.ndarray) -> None:
        """``name`` is undefined for ``threads`` from now on."""
        if self.values[name] is not None:
            self._defined_array(name, False)[threads] = False

    def save(self, name: str, threads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the values and definedness of ``name`` for ``threads``."""
        v = self.values[name]
        if v is None:
            return np.zeros(threads.size, self.dtype[name]), np.zeros(threads.size, bool)
        d = self.defined[name]
        return v[threads], (np.full(threads.size, d) if d is True or d is False else d[threads])

    def restore(self, name: str, threads: np.ndarray, v: np.ndarray, d: np.ndarray) -> None:
        """Put back what :meth:`save` returned."""
        a = self.values[name]
        if a is None:
            a = self._fresh(name, False)
        a[threads] = v
        self._defined_array(name, False)[threads] = d
