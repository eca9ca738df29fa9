"""The machine's memory: state spaces, exact allocation bounds, definedness shadows, race records.

State spaces (PTX ISA 5.1 "State Spaces"): ``.global`` (every array argument and every module-scope
``.global`` variable is its own allocation, bounded exactly), ``.shared`` (one window per CTA:
static variables, then the dynamic ``extern __shared__`` area), ``.local`` (per thread), ``.param``
(the kernel's arguments, read-only) and ``.const``. Generic addresses (PTX ISA "Generic
Addressing", ``cvta``) map windows of the generic space onto shared, local, param and const memory;
everything else is global.

Every byte has a *defined* bit (host data and stores of defined values are defined; shared and local
memory start undefined: PTX ISA 8.2.6 "Initialization", an "unknown but constant value"). Global and shared memory also keep, per 4-byte word,
the last write and the last two reads (thread, PC, barrier epoch, warp clock, release stamp, bytes),
which is how races are found (see :mod:`helpers.machine.executor` for the happens-before rules).

A launch of 10^5 threads would otherwise fill tens of megabytes of such state before its first
instruction, so :class:`Records` allocates a column only once a record needs it, and a
:class:`Space` is reset in place for the next launch of the same size instead of allocated anew.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

SEG_SHIFT = 32
GLOBAL_SEG0 = 0x100          # allocation i lives at ((GLOBAL_SEG0 + i) << 32) + (its offset mod 256)
SHARED_WINDOW = 0x10 << SEG_SHIFT
LOCAL_WINDOW = 0x20 << SEG_SHIFT
CONST_WINDOW = 0x30 << SEG_SHIFT
PARAM_WINDOW = 0x40 << SEG_SHIFT

# columns of a race record (as rows: one int32 row per word)
TID, PC, EP, CLK, REL, BYTES = range(6)
NREC = 6
# what a column holds for a record that never set it: no barrier epoch, warp clock or release yet,
# and a whole word
_DEFAULT = {EP: 0, CLK: 0, REL: 0, BYTES: 15}


class Records:
    """One access record per 4-byte word (TID -1: none), stored by column.

    TID and PC exist once any record does; EP, CLK, REL and BYTES only once a record holds something
    other than their default (a launch with no barrier, warp sync, release or sub-word access never
    needs them), so the usual record costs 8 bytes, not 24. Reading a missing column gives its default.
    """

    def __init__(self, nw: int) -> None:
        self.nw = nw
        self.cols: list[Optional[np.ndarray]] = [None] * NREC
        # columns of an earlier launch, for reuse, each already back to its default
        self._spare: list[Optional[np.ndarray]] = [None] * NREC
        self._lo, self._hi = nw, 0    # the words written since the last reset (a run, or all of them)

    @property
    def empty(self) -> bool:
        """No record was ever written (since :meth:`reset`)."""
        return self.cols[TID] is None

    def reset(self) -> None:
        """Forget every record, keeping the columns' memory for the next launch (only the words
        written are set back: a launch usually touches a part of the space, its arrays)."""
        for c, col in enumerate(self.cols):
            if col is not None:
                col[self._lo:self._hi] = -1 if c == TID else _DEFAULT.get(c, 0)
                self._spare[c] = col
        self.cols = [None] * NREC
        self._lo, self._hi = self.nw, 0

    def _column(self, c: int) -> np.ndarray:
        col = self.cols[c]
        if col is None:
            col = self._spare[c]
            if col is None:
                col = np.full(self.nw, -1 if c == TID else _DEFAULT.get(c, 0), np.int32)
            self.cols[c] = col
        return col

    def tids(self, words: np.ndarray) -> np.ndarray:
        """The recording thread of each of ``words`` (-1: no record)."""
        col = self.cols[TID]
        return np.full(words.shape, -1, np.int32) if col is None else col[words]

    def column(self, c: int, words: np.ndarray) -> Any:
        """Column ``c`` at ``words``, or its default (a scalar) when no record set it."""
        col = self.cols[c]
        return _DEFAULT[c] if col is None else col[words]

    def rows(self, words: np.ndarray) -> np.ndarray:
        """The records at ``words`` as (len(words), NREC) int32 rows."""
        out = np.empty((words.size, NREC), np.int32)
        for c, col in enumerate(self.cols):
            out[:, c] = (-1 if c == TID else _DEFAULT.get(c, 0)) if col is None else col[words]
        return out

    def put(self, words: np.ndarray, tid: Any, pc: int, ep: Any = 0, clk: Any = 0, rel: Any = 0,
            bm: Any = 15) -> None:
        """Record an access at ``words`` (values per word, or one for all; a slice for a run)."""
        if isinstance(words, slice):
            self._lo, self._hi = min(self._lo, words.start), max(self._hi, words.stop)
        else:
            self._lo, self._hi = 0, self.nw
        for c, v in ((TID, tid), (PC, pc), (EP, ep), (CLK, clk), (REL, rel), (BYTES, bm)):
            if self.cols[c] is None and c in _DEFAULT and np.ndim(v) == 0 and v == _DEFAULT[c]:
                continue
            self._column(c)[words] = v

    def put_rows(self, words: np.ndarray, rows: np.ndarray) -> None:
        """Store (len(words), NREC) ``rows`` at ``words``."""
        self.put(words, rows[:, TID], rows[:, PC], *(rows[:, c] for c in (EP, CLK, REL, BYTES)))

    def copy_from(self, other: "Records", words: np.ndarray) -> None:
        """The records of ``other`` at ``words`` become these ones."""
        self.put_rows(words, other.rows(words))

    def clear(self, words: np.ndarray) -> None:
        """No record at ``words`` any more."""
        if self.cols[TID] is not None:
            self.cols[TID][words] = -1


@dataclass
class Allocation:
    """One global allocation: an array argument (``arg`` its position) or a module variable."""
    name: str
    base: int          # its (generic = global) address
    nbytes: int
    start: int         # where its first byte lives in the flat global buffer
    arg: Optional[int] = None


class Space:
    """A flat byte space: data, a defined bit per byte, optionally 'ever written' and race records
    (``W`` the last write of each word, ``R1``/``R2`` its last two reads, ``w_chg`` whether that write
    changed the word, ``w_undef`` whether it went over bytes that were undefined)."""

    def __init__(self, name: str, nbytes: int, *, defined: bool, track_written: bool, races: bool) -> None:
        n = self.rounded(nbytes)
        self.name = name
        self.data = np.zeros(n, np.uint8)
        self.defined = np.full(n, defined, bool)
        self.written = np.zeros(n, bool) if track_written else None
        self._init_defined = defined
        nw = n // 4
        if races:
            self.W, self.R1, self.R2 = Records(nw), Records(nw), Records(nw)
            # read only where W holds a record, which sets it: never reset
            self.w_chg = np.zeros(nw, bool)
            self.w_undef = np.zeros(nw, bool)
        else:
            self.W = None
        self._scratch: Optional[np.ndarray] = None

    @property
    def size(self) -> int:
        return self.data.size

    @staticmethod
    def rounded(nbytes: int) -> int:
        """The size of a space asked for ``nbytes``: whole 16-byte lines, at least one."""
        return max(16, (nbytes + 15) // 16 * 16)

    def reset(self) -> None:
        """The state of a fresh space of this size, for the next launch."""
        self.data.fill(0)
        self.defined.fill(self._init_defined)
        if self.written is not None:
            self.written.fill(False)
        if self.W is not None:
            for r in (self.W, self.R1, self.R2):
                r.reset()

    def last_of(self, keys: np.ndarray) -> Optional[np.ndarray]:
        """For each of ``keys`` (byte or word indices into this space) the position of the last one
        equal to it; None when they are all distinct (the usual case: checked without a scatter
        while they increase)."""
        if keys.size < 2 or bool((keys[1:] > keys[:-1]).all()):
            return None
        if self._scratch is None:
            self._scratch = np.empty(self.size, np.int64)   # written before read: never initialised
        ar = np.arange(keys.size)
        self._scratch[keys] = ar
        last = self._scratch[keys]
        return None if bool((last == ar).all()) else last


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
