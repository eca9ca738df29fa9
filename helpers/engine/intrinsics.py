"""The warp intrinsics, one row each: every fact about an intrinsic that more than one module needs.

A row says how the intrinsic is spelled (its :mod:`helpers.engine.warp` function, its CUDA C++ name,
its PTX instruction, its operator in :mod:`helpers.engine.ops`), which kernel of
``kernels/warp_intrinsics.cu`` runs it and where that kernel puts its result, the dtypes it takes and
the compute capability it needs. Its *rule* (which lanes are defined, what they get) is not here: it is
:mod:`helpers.engine.emulator`'s, cited there; a row names it by ``kind``.

The readers, each of which used to keep its own copy: :mod:`helpers.engine.warp` (the collectives'
functions and ``__all__``), :mod:`helpers.engine.warp_cupy` (shuffle modes, output columns, words per
lane), :mod:`helpers.engine.cases` (the ops and the random cases, row by row),
:mod:`helpers.recording.proof.intrinsics` (the same kernels on the machine) and
:mod:`helpers.recording.proof.launches` (the kernels' output sizes).

**Order is the recording order.** :func:`helpers.engine.cases.random_cases` draws the cases row by
row, from one random stream, so the H200's recorded proof cases are those of the rows as they stood
then; a new row goes **last**, or every later case changes. ``__syncwarp`` has no row: it returns no
value, so no kernel records one and no case compares one (``warp.syncwarp`` is emulator-only).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from helpers.engine import params

FAMILIES: tuple[str, ...] = ("shuffle", "vote", "collective")
FILE = "warp_intrinsics"   # kernels/warp_intrinsics.cu: every row's kernel is in it


@dataclass(frozen=True)
class Intrinsic:
    """One warp intrinsic.

    name:   its function in :mod:`helpers.engine.warp`, and its ``op`` in a case (:mod:`helpers.engine.cases`).
    cuda:   its CUDA C++ spelling, as ``kernels/warp_intrinsics.cu`` calls it.
    ptx:    the PTX instruction it compiles to, without the type suffix (``redux.sync.add`` is ``.s32`` or
            ``.u32`` by dtype); it is in the shipped PTX of ``kernels/warp_intrinsics.cu``.
    family: one of :data:`FAMILIES`: how :mod:`helpers.engine.warp` calls it and what it returns (a
            :class:`~helpers.engine.emulator.ShuffleResult` per lane, a
            :class:`~helpers.engine.emulator.VoteResult` per warp, a
            :class:`~helpers.engine.emulator.LaneResult` per lane).
    kind:   the emulator's and :mod:`helpers.engine.warp_cupy`'s name for it: a shuffle mode
            (``emulator.shuffle``), a vote, ``"match_any"`` or an ``emulator.warp_reduce`` operator.
    kernel: the kernel of ``kernels/warp_intrinsics.cu`` that runs it.
    dtypes: the value dtypes it takes (a vote takes a predicate: none).
    mode:   shuffles: ``shuffle_kernel``'s ``Mode`` template argument (``warplab::ShuffleMode``); else None.
    column: the others: the word of each lane's output row that holds its result
            (``out[W * i + column]``, W = :func:`words` of the kernel); shuffles: None.
    op:     its operator in :data:`helpers.engine.ops.OPS` (a ``__reduce_*_sync``); else None.
    cc:     the compute capability the GPU backend requires before it launches; None: no check.
    doc:    the public function's docstring, where :mod:`helpers.engine.warp` builds that function from
            the row (the collectives); "" where warp.py writes the function, and its docstring, by hand.
    """

    name: str
    cuda: str
    ptx: str
    family: str
    kind: str
    kernel: str
    dtypes: tuple[np.dtype, ...] = ()
    mode: Optional[int] = None
    column: Optional[int] = None
    op: Optional[str] = None
    cc: Optional[tuple[int, int]] = None
    doc: str = ""


# CUDA C++ Programming Guide, Warp Shuffle Functions: all four take every 32- and 64-bit type the
# kernels are instantiated for (a 64-bit value moves as two 32-bit shuffles).
_SHUFFLE = dict(family="shuffle", kernel="shuffle_kernel", dtypes=params.DTYPES)
# Warp Vote Functions (with __activemask, which takes no mask: it is a snapshot, not a synchronisation).
_VOTE = dict(family="vote", kernel="vote_kernel")
# Warp Match Functions and Warp Reduce Functions: 32-bit integers; __reduce_*_sync needs 8.x.
_COLLECTIVE = dict(family="collective", kernel="match_reduce_kernel", dtypes=params.INT32_DTYPES)
_REDUX_CC = (8, 0)

INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic("shfl_down", "__shfl_down_sync", "shfl.sync.down", kind="down", mode=2, **_SHUFFLE),
    Intrinsic("shfl_up", "__shfl_up_sync", "shfl.sync.up", kind="up", mode=1, **_SHUFFLE),
    Intrinsic("shfl_xor", "__shfl_xor_sync", "shfl.sync.bfly", kind="xor", mode=3, **_SHUFFLE),
    Intrinsic("shfl_idx", "__shfl_sync", "shfl.sync.idx", kind="idx", mode=0, **_SHUFFLE),
    Intrinsic("ballot", "__ballot_sync", "vote.sync.ballot", kind="ballot", column=0, **_VOTE),
    Intrinsic("any_sync", "__any_sync", "vote.sync.any", kind="any", column=1, **_VOTE),
    Intrinsic("all_sync", "__all_sync", "vote.sync.all", kind="all", column=2, **_VOTE),
    Intrinsic("activemask", "__activemask", "activemask", kind="activemask", column=3, **_VOTE),
    Intrinsic("match_any", "__match_any_sync", "match.any.sync", kind="match_any", column=0,
              doc="``__match_any_sync`` (int32/uint32): per calling lane, the uint32 set of calling lanes with an "
                  "equal value.", **_COLLECTIVE),
    Intrinsic("reduce_add", "__reduce_add_sync", "redux.sync.add", kind="add", column=1, op="sum", cc=_REDUX_CC,
              doc="``__reduce_add_sync`` (int32/uint32, compute capability 8.0+): every calling lane gets the sum, "
                  "mod 2**32.", **_COLLECTIVE),
    Intrinsic("reduce_min", "__reduce_min_sync", "redux.sync.min", kind="min", column=2, op="min", cc=_REDUX_CC,
              doc="``__reduce_min_sync`` (int32/uint32, compute capability 8.0+).", **_COLLECTIVE),
    Intrinsic("reduce_max", "__reduce_max_sync", "redux.sync.max", kind="max", column=3, op="max", cc=_REDUX_CC,
              doc="``__reduce_max_sync`` (int32/uint32, compute capability 8.0+).", **_COLLECTIVE),
)


def names(family: Optional[str] = None) -> tuple[str, ...]:
    """The rows' names in table order (the recording order), of one family or of all."""
    return tuple(r.name for r in rows(family))


def rows(family: Optional[str] = None) -> tuple[Intrinsic, ...]:
    """The rows in table order, of ``family`` (one of :data:`FAMILIES`) or all; ValueError for another family."""
    if family is None:
        return INTRINSICS
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(map(repr, FAMILIES))}; got {family!r}")
    return tuple(r for r in INTRINSICS if r.family == family)


def row(name: str) -> Intrinsic:
    """The row named ``name``; KeyError naming every row if there is none."""
    for r in INTRINSICS:
        if r.name == name:
            return r
    raise KeyError(f"no intrinsic {name!r}; the table has {', '.join(names())}")


def by_kind(family: str, kind: str) -> Intrinsic:
    """The row of ``family`` whose ``kind`` is ``kind`` (how the emulator and the GPU side name it)."""
    for r in rows(family):
        if r.kind == kind:
            return r
    raise KeyError(f"no {family} of kind {kind!r}; kinds: {', '.join(r.kind for r in rows(family))}")


def words(kernel: str) -> int:
    """Words per lane of ``kernel``'s output row: one per row that writes a column of it."""
    columns = [r.column for r in INTRINSICS if r.kernel == kernel and r.column is not None]
    if not columns:
        raise KeyError(f"no row writes a column of {kernel!r}")
    return len(columns)
