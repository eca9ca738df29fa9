"""Deterministic random numbers that do not depend on the NumPy version: splitmix64, by counter.

A recording stores seeds; CI regenerates the exact same inputs from them. NumPy's ``Generator``
streams may change between releases (NEP 19), so the proof uses its own generator: value ``i`` of
stream ``seed`` is ``splitmix64(seed * 2^32 + i)`` (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", 2014), computed with wrapping uint64 arithmetic in NumPy.
"""
from __future__ import annotations

import zlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def bits(seed: int, n: int) -> np.ndarray:
    """``n`` pseudo-random uint64 values of stream ``seed`` (any int >= 0)."""
    with np.errstate(over="ignore"):
        i = np.arange(n, dtype=np.uint64) + np.uint64((seed & 0xFFFFFFFF) << 32)
        z = (i + np.uint64(1)) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def unit(seed: int, n: int) -> np.ndarray:
    """``n`` float64 values uniform in [0, 1), 53 random bits each."""
    return (bits(seed, n) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def integers(seed: int, n: int, lo: int, hi: int) -> np.ndarray:
    """``n`` int64 values in [lo, hi) (hi - lo < 2^32)."""
    span = hi - lo
    if span <= 0 or span > 1 << 32:
        raise ValueError(f"hi - lo must be in [1, 2^32]; got lo={lo}, hi={hi}")
    return (bits(seed, n) % np.uint64(span)).astype(np.int64) + lo


def _mix(x: int) -> int:
    """splitmix64's finaliser on one Python int (the sub-stream seeds of :class:`Stream`)."""
    z = (x * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


class Stream:
    """Successive draws, each from its own sub-stream: ``Stream(seed).integers(...)``, ``.unit(...)``.

    Every call takes the next sub-stream, so the values drawn depend only on the seed and the order
    of the calls, never on how many values earlier calls drew.
    """

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)
        self._k = 0

    def _next(self) -> int:
        self._k += 1
        return _mix((self.seed << 20) + self._k) & 0xFFFFFFFF

    def bits(self, n: int) -> np.ndarray:
        return bits(self._next(), n)

    def unit(self, n: int) -> np.ndarray:
        return unit(self._next(), n)

    def integers(self, lo: int, hi: int, n: int) -> np.ndarray:
        return integers(self._next(), n, lo, hi)

    def integer(self, lo: int, hi: int) -> int:
        """One int in [lo, hi)."""
        self._k += 1
        return lo + _mix((self.seed << 20) + self._k) % (hi - lo)

    def uniform(self) -> float:
        """One float in [0, 1)."""
        self._k += 1
        return (_mix((self.seed << 20) + self._k) >> 11) * (1.0 / (1 << 53))

    def choice(self, options):
        """One element of the sequence ``options``."""
        return options[self.integer(0, len(options))]

    def chance(self, p: float) -> bool:
        """True with probability ``p``."""
        return self.uniform() < p


def checksum(*arrays: np.ndarray) -> int:
    """CRC-32 of the arrays' bytes, in order: proves that CI regenerated the inputs the GPU saw."""
    crc = 0
    for a in arrays:
        crc = zlib.crc32(np.ascontiguousarray(a).tobytes(), crc)
    return crc
