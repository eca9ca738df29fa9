"""What a warp-synchronous instruction computes, once its lanes have met: ``shfl.sync``,
``vote.sync``, ``match.sync``, ``redux.sync`` over rows of 32 lanes.

The rules (source lanes, clamp and segment mask, what is defined, ballot/any/all, match.any,
redux add/min/max) are :mod:`helpers.engine.emulator`'s, which is proven bit-exact against the H200; this
module only feeds it the PTX operands. A row is one (warp, member mask) group; ``callers`` marks the
lanes that executed the instruction. A lane named in the mask that did not execute it (exited,
elsewhere, or waiting at a non-matching instruction) is not a caller, so reading it is undefined.

Each compute function takes ``inputs`` (a list of (values, defined) matrices shaped (rows, 32)),
``callers`` (rows, 32), ``mask`` (rows,) uint32 and ``mask_defined`` (rows,), and returns a list of
(values, defined) matrices, one per destination, plus a dict of extra per-lane facts (``src_lane``)
for the trace.
"""
from __future__ import annotations

import numpy as np

from helpers.engine import emulator

LANE = emulator.LANE


class BadOperand(ValueError):
    """An operand value the machine does not model (the message says which)."""


def _row_defined(callers: np.ndarray, d: np.ndarray, mask_defined: np.ndarray) -> np.ndarray:
    """A collective result is defined when every caller's input and the mask are."""
    return ((d | ~callers).all(axis=1) & mask_defined)[:, None] & callers


def _all(a: np.ndarray) -> bool:
    """``a.all()``, at the cost of one row when ``a`` is one row broadcast over the warps."""
    return bool(a[0].all() if a.ndim == 2 and a.strides[0] == 0 else a.all())


def _one_row(a: np.ndarray) -> bool:
    """``a`` is one row broadcast over the rows (a read-only view that holds a single row)."""
    return a.ndim == 2 and a.shape[0] > 1 and a.strides[0] == 0


def _lean(f, *xs: np.ndarray):
    """``f(*xs)`` of (rows, 32) arrays; on one row, broadcast, when each of them is one row (the same
    lanes call with one mask in every warp)."""
    if all(_one_row(x) for x in xs):
        r = f(*(x[:1] for x in xs))
        return np.broadcast_to(r, (xs[0].shape[0], *np.shape(r)[1:])) if np.ndim(r) else r
    return f(*xs)


def shfl_compute(mode: str, want_p: bool = True):
    """shfl.sync (PTX ISA shfl.sync): ``c`` packs the segment mask (bits 12:8) and the clamp (4:0).
    ``want_p``: compute the predicate destination (whether the source lane was in range)."""
    emode = "xor" if mode == "bfly" else mode
    expected_clamp = 0 if mode == "up" else 31

    def compute(inputs, callers, mask, mask_defined):
        (a, da), (b, db), (c, dc) = inputs
        c = c.astype(np.uint32, copy=False)
        # operands are compared over the calling lanes only: a lane that does not call holds no operand
        # (0 where the rows were gathered from part of each warp)
        first = (0, int(np.argmax(callers[0]))) if callers[0].any() else (0, 0)
        if b.shape[0] > 1 and b.strides[0] != 0 and ((b == b[first]) | ~callers).all():
            b = np.broadcast_to(np.full((1, 32), b[first], b.dtype), b.shape)   # one delta: the one-row path
        c0 = c[first]
        uniform = c.strides == (0, 0) or bool(_lean(lambda c, k: ((c == c0) | ~k).all(), c, callers))
        if uniform:
            segmask = int((c0 >> 8) & 31)
            if int(c0 & 31) != expected_clamp:
                raise BadOperand(f"the c operand's clamp field is {int(c0 & 31)}; the machine models the value "
                                 f"CUDA's intrinsics use ({expected_clamp} for .{mode})")
        else:
            segmask = ((c >> np.uint32(8)) & np.uint32(31)).astype(np.int64)
            clamp = (c & np.uint32(31)).astype(np.int64)
            if (callers & (clamp != expected_clamp)).any():
                bad = int(clamp[callers & (clamp != expected_clamp)][0])
                raise BadOperand(f"the c operand's clamp field is {bad}; the machine models the value CUDA's "
                                 f"intrinsics use ({expected_clamp} for .{mode})")
        values = a.astype(np.uint32, copy=False)
        if uniform:
            r = emulator.shuffle(emode, values, b, 32 - segmask, mask, callers)
            out_v, out_src, out_d = r.values, r.src_lane, r.defined
        else:
            width = 32 - segmask
            out_v = np.zeros(values.shape, np.uint32)
            out_src = np.full(values.shape, -1, np.int32)
            out_d = np.zeros(values.shape, bool)
            for w in np.unique(width[callers]):
                r = emulator.shuffle(emode, values, b, int(w), mask, callers)
                sel = callers & (width == w)
                out_v[sel] = r.values[sel]
                out_src[sel] = r.src_lane[sel]
                out_d[sel] = r.defined[sel]
        src = _lean(lambda s: np.where(s >= 0, s, LANE), out_src) if want_p or not _all(da) else None
        if not _all(da):
            out_d = out_d & (np.take(da, src[0], axis=1) if _one_row(src) else np.take_along_axis(da, src, axis=1))
        md_all = bool(mask_defined.all())
        extra_d = True if _all(db) and _all(dc) and md_all else _lean(np.logical_and, db, dc)
        if not md_all:
            extra_d = extra_d & mask_defined[:, None]
        if extra_d is not True and not _all(extra_d):
            out_d = _lean(np.logical_and, out_d, extra_d)
        bad = _bad_width(c, c0, uniform, callers)
        if bad is not None:
            out_d = out_d & ~bad[1]
        extra = {"src_lane": out_src, "sent": values, "sent_defined": da, "bad_width": bad}
        if not want_p:
            return [(out_v, out_d), (None, None)], extra
        # predicate: the source lane was in range. A lane reads itself either because the clamp
        # failed (p false) or because the computed lane is its own (p true).
        bval = b.astype(np.int64) & 31
        if mode in ("up", "down", "bfly"):
            own = bval == 0
        else:
            own = ((LANE & segmask) | (bval & ~segmask & 31)) == LANE
        p = (src != LANE) | own
        pd = callers & extra_d
        if bad is not None:
            pd = pd & ~bad[1]
        return [(out_v, out_d), (p, pd)], extra
    return compute


_WIDTHS = (1, 2, 4, 8, 16, 32)


def _signed(c: int) -> int:
    return c - (1 << 32) if c >= 1 << 31 else c


def _bad_width(c: np.ndarray, c0, uniform: bool, callers: np.ndarray):
    """(width, (rows, 32) bool of the callers that passed it) when a caller's ``width`` is not a power
    of 2 from 1 to 32, else None. CUDA's ``__shfl_*_sync(mask, var, x, width)`` packs ``c`` as
    ``((32 - width) << 8) | clamp``, so ``width = 32 - (c >> 8)`` (signed). Programming Guide, "Warp
    Shuffle Functions": "results are undefined if width is not a power of 2, or is a number greater
    than warpSize" (the PTX instruction would compute something from c's bits; the call has no result)."""
    if uniform:
        w = 32 - (_signed(int(c0)) >> 8)
        return None if w in _WIDTHS else (w, callers)
    cs = c.astype(np.int64)
    w = 32 - (np.where(cs >= 1 << 31, cs - (1 << 32), cs) >> 8)
    bad = callers & ~np.isin(w, _WIDTHS)
    return (int(w[bad][0]), bad) if bad.any() else None


def vote_compute(mode: str):
    """vote.sync (PTX ISA vote.sync): ballot/any/all/uni over the calling lanes."""
    def compute(inputs, callers, mask, mask_defined):
        (p, dp), = inputs
        p = p.astype(bool)
        d = _row_defined(callers, dp, mask_defined)
        if mode == "ballot":
            r = emulator.ballot(p, mask, callers).values.astype(np.uint32)
        elif mode == "any":
            r = emulator.any_sync(p, mask, callers).values
        elif mode == "all":
            r = emulator.all_sync(p, mask, callers).values
        else:  # uni: the predicate is the same on every calling lane
            r = emulator.all_sync(p, mask, callers).values | ~emulator.any_sync(p, mask, callers).values
        if r.size and (r == r[0]).all():
            # one result for every warp (a ballot of the same lanes everywhere): one value, which a
            # register defined in every lane keeps as such
            return [(np.broadcast_to(r[:1, None], p.shape), d)], {}
        return [(np.array(np.broadcast_to(r[:, None], p.shape)), d)], {}
    return compute


def match_compute(mode: str, t: str):
    """match.sync (PTX ISA match.sync): .any through the emulator; .all: the callers' mask when every
    caller holds the same value (and p true), else 0 (p false)."""
    def compute(inputs, callers, mask, mask_defined):
        (a, da), = inputs
        d = _row_defined(callers, da, mask_defined)
        if mode == "any":
            r = emulator.match_any(a, mask, callers)
            return [(r.values, d & r.defined), (np.ones(a.shape, bool), d)], {}
        first = np.take_along_axis(a, np.argmax(callers, axis=1)[:, None], axis=1)
        same = ((a == first) | ~callers).all(axis=1)
        m = emulator.pack_bits(callers)
        v = np.where(same, m, 0).astype(np.uint32)
        return [(np.broadcast_to(v[:, None], a.shape).copy(), d),
                (np.broadcast_to(same[:, None], a.shape).copy(), d)], {}
    return compute


def redux_compute(op: str, t: str):
    """redux.sync (PTX ISA redux.sync): add/min/max through the emulator; and/or/xor bitwise; a converged
    call (every lane, the full mask, defined values) row by row at once."""
    reduce = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
              "xor": np.bitwise_xor}.get(op)

    def _converged(a: np.ndarray, dt: type) -> tuple[np.ndarray, np.ndarray]:
        """Every lane of every row calls with the full mask and a defined value (the converged case):
        each row's result in all its lanes, defined (add wraps modulo 2**32, as the rows below do)."""
        if reduce is None:
            raise BadOperand(f"redux.sync.{op}")
        if op == "add":
            res = np.add.reduce(a.astype(dt, copy=False), axis=1, dtype=np.int64).astype(np.uint32).view(dt)
        else:
            res = reduce.reduce(a.astype(np.uint32 if op in ("and", "or", "xor") else dt, copy=False), axis=1)
        out = np.empty(a.shape, np.uint32 if op in ("and", "or", "xor") else dt)
        out[:] = res[:, None]
        return out, np.broadcast_to(np.ones(a.shape[1], bool), a.shape)

    def compute(inputs, callers, mask, mask_defined):
        (a, da), = inputs
        if _all(callers) and _all(da) and mask_defined.all() and (mask == 0xFFFFFFFF).all():
            return [_converged(a, np.int32 if t == "s32" else np.uint32)], {}
        d = _row_defined(callers, da, mask_defined)
        if op in ("add", "min", "max"):
            vals = a.astype(np.int32 if t == "s32" else np.uint32)
            r = emulator.warp_reduce(op, vals, mask, callers)
            return [(r.values, d & r.defined)], {}
        u = a.astype(np.uint32)
        if op == "and":
            res = np.bitwise_and.reduce(np.where(callers, u, np.uint32(0xFFFFFFFF)), axis=1)
        elif op == "or":
            res = np.bitwise_or.reduce(np.where(callers, u, np.uint32(0)), axis=1)
        elif op == "xor":
            res = np.bitwise_xor.reduce(np.where(callers, u, np.uint32(0)), axis=1)
        else:
            raise BadOperand(f"redux.sync.{op}")
        out = np.where(callers, res[:, None], 0).astype(np.uint32)
        return [(out, d)], {}
    return compute
