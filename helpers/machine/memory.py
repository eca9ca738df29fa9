"""The machine's memory: state spaces, exact allocation bounds, definedness shadows, race records.

State spaces (PTX ISA 5.1 "State Spaces"): ``.global`` (every array argument and every module-scope
``.global`` variable is its own allocation, bounded exactly), ``.shared`` (one window per CTA:
static variables, then the dynamic ``extern __shared__`` area), ``.local`` (per thread), ``.param``
(the kernel's arguments, read-only) and ``.const``. Generic addresses (PTX ISA 5.1.6 "Generic
addressing", ``cvta``) map windows of the generic space onto shared, local, param and const memory;
everything else is global.

Every byte has a *defined* bit (host data and stores of defined values are defined; shared and local
memory start undefined, PTX ISA 5.1.5 / 5.1.4). Global and shared memory also keep, per 4-byte word,
the last write and the last two reads (thread, PC, barrier epoch, warp clock, release stamp, bytes),
which is how races are found (see :mod:`helpers.machine.executor` for the happens-before rules).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

SEG_SHIFT = 32
GLOBAL_SEG0 = 0x100          # allocation i lives at ((GLOBAL_SEG0 + i) << 32) + (its offset mod 256)
SHARED_WINDOW = 0x10 << SEG_SHIFT
LOCAL_WINDOW = 0x20 << SEG_SHIFT
CONST_WINDOW = 0x30 << SEG_SHIFT
PARAM_WINDOW = 0x40 << SEG_SHIFT

# columns of a race record (one int32 row per word)
TID, PC, EP, CLK, REL, BYTES = range(6)
NREC = 6


@dataclass
class Allocation:
    """One global allocation: an array argument (``arg`` its position) or a module variable."""
    name: str
    base: int          # its (generic = global) address
    nbytes: int
    start: int         # where its first byte lives in the flat global buffer
    arg: Optional[int] = None


class Space:
    """A flat byte space: data, a defined bit per byte, optionally 'ever written' and race records."""

    def __init__(self, name: str, nbytes: int, *, defined: bool, track_written: bool, races: bool) -> None:
        n = max(16, (nbytes + 15) // 16 * 16)
        self.name = name
        self.data = np.zeros(n, np.uint8)
        self.defined = np.full(n, defined, bool)
        self.written = np.zeros(n, bool) if track_written else None
        nw = n // 4
        if races:
            self.W = np.full((nw, NREC), -1, np.int32)
            self.R1 = np.full((nw, NREC), -1, np.int32)
            self.R2 = np.full((nw, NREC), -1, np.int32)
            self.w_chg = np.zeros(nw, bool)
            self.scratch = np.zeros(n, np.int64)
        else:
            self.W = None

    @property
    def size(self) -> int:
        return self.data.size


def array_offset(a: np.ndarray) -> int:
    """Byte offset of a view inside the array that owns its memory (0 for an owner)."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is a:
        return 0
    return a.__array_interface__["data"][0] - root.__array_interface__["data"][0]


class GlobalLayout:
    """Global allocations and the table from an address's segment to its allocation."""

    def __init__(self) -> None:
        self.allocs: list[Allocation] = []
        self._size = 0

    def add(self, name: str, nbytes: int, offset_mod: int = 0, arg: Optional[int] = None) -> Allocation:
        i = len(self.allocs)
        base = ((GLOBAL_SEG0 + i) << SEG_SHIFT) + (offset_mod % 256)
        start = (self._size + 255) // 256 * 256 + (offset_mod % 256)
        a = Allocation(name, base, nbytes, start, arg)
        self.allocs.append(a)
        self._size = start + nbytes + 16
        return a

    @property
    def size(self) -> int:
        return self._size

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(base, nbytes, start) per allocation index, as int64 arrays (index = segment - GLOBAL_SEG0)."""
        base = np.array([a.base for a in self.allocs] or [0], np.int64)
        size = np.array([a.nbytes for a in self.allocs] or [0], np.int64)
        start = np.array([a.start for a in self.allocs] or [0], np.int64)
        return base, size, start

    def find(self, addr: int) -> Optional[Allocation]:
        i = (addr >> SEG_SHIFT) - GLOBAL_SEG0
        return self.allocs[i] if 0 <= i < len(self.allocs) else None
