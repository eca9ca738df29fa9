"""The launch-spec table of every kernel in ``kernels/``, and randomised launches drawn from it.

One :class:`Family` per kernel signature says, as data: which registered name expressions it covers
(a regular expression), every argument (role, dtype, how many elements, how it is filled, how an
output is compared) and the launch shape (a rule for grid, block and the sizes). The rules are the
kernels' contracts, as their drivers apply them: :mod:`helpers.engine.warp_cupy` (warp_intrinsics.cu),
:mod:`helpers.topics.warp_reduce` (warp_reduce_sum.cu, warp_reduce_ops.cu, the seed's warp kernels),
:mod:`helpers.topics.block_reduce` (block_reduce.cu, seed_block_reduce.cu), :mod:`helpers.topics.reduce`
(the ladder, its grid formulas and the seed's launch; ``ReducePlan`` for v9's workspace),
:mod:`helpers.topics.ballot_uses` (warp_aggregated.cu), :mod:`helpers.bench.clock` (reduce_timing.cu),
:mod:`helpers.recording.record_diverged` (warp_diverged.cu, whose calls are undefined on purpose). Sizes are chosen so that they are *not* multiples of the block: partial tail
warps, ragged last blocks, ``n`` not a multiple of 4 for the float4 tails.

:func:`launches` draws, for every instantiation in :func:`helpers.topics.registry.registry`, a few
:class:`Launch` es (deterministic from a seed); :func:`arguments` rebuilds a launch's arguments
(NumPy arrays and scalars) from its seed, identically on the GPU host and in CI
(:mod:`helpers.recording.proof.rand`). Inputs are never stored, only their checksum.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Optional

import numpy as np

from helpers.engine import intrinsics
from helpers.recording.proof import rand

# The value types of the kernels' templates, C++ name -> NumPy dtype name.
VALUE_TYPES: dict[str, str] = {"int": "int32", "unsigned int": "uint32", "float": "float32", "double": "float64"}
SENTINEL32 = 0x7E57AB1E   # what an output word holds before the launch (a finite float32, an odd int)
MAX_THREADS = 1024


@dataclass(frozen=True)
class Arg:
    """One kernel parameter.

    role:    "in" (filled, read only), "out" (pre-filled, compared after the launch), "scalar".
    dtype:   a NumPy dtype name, or "T" for the instantiation's value type.
    size:    arrays: the key of the launch's ``sizes`` giving the element count.
    fill:    how the array is filled before the launch (see :func:`arguments`): "values", "operand",
             "masks", "active", "pred", "sentinel", "zero", "ladder", "callers".
    compare: outputs only: "exact" (bit for bit where defined), "multiset_prefix:ARG" (the first
             ARG[0] elements as a multiset, e.g. whatever order the atomics gave; the rest exactly),
             "at_least" (the H200's value >= the machine's, element by element: a count the contract
             bounds from below only) or "none" (never compared: clock readings).
    """

    name: str
    role: str
    dtype: str
    size: str = ""
    fill: str = "values"
    compare: str = "exact"


@dataclass(frozen=True)
class Family:
    """Every instantiation whose name expression matches ``pattern`` (in kernels/FILE.cu)."""

    name: str
    file: str
    pattern: str
    args: tuple[Arg, ...]
    shape: str   # a key of SHAPES
    note: str = ""
    findings: str = ""   # a key of EXPECTED_FINDINGS: the machine's findings are checked, not only recorded


@dataclass(frozen=True)
class Launch:
    """One randomised launch: everything needed to rebuild its arguments and to run it."""

    id: str
    file: str
    expr: str
    family: str
    seed: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    sizes: dict[str, int]
    scalars: dict[str, float]
    flavour: str                      # how the values were drawn ("bits", "small", "wide", "mixed", ...)
    defines: tuple[str, ...] = ()
    value_type: str = ""              # NumPy dtype of "T" ("" when the kernel has none)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Launch":
        d = dict(d)
        d["grid"], d["block"], d["defines"] = tuple(d["grid"]), tuple(d["block"]), tuple(d["defines"])
        return cls(**d)

    @property
    def threads(self) -> int:
        return int(np.prod(self.grid) * np.prod(self.block))


def _a(name: str, role: str, dtype: str, size: str = "", fill: str = "values", compare: str = "exact") -> Arg:
    return Arg(name, role, dtype, size, fill, compare)


_T = r"(?P<T>int|unsigned int|float|double)"
_OP = r"warplab::ops::(?P<op>\w+)<[^>]*>"
_WARP_CFG = (_a("masks", "in", "uint32", "n_warps", "masks"), _a("active", "in", "uint8", "lanes", "active"))


def _lanes_of(kernel: str) -> str:
    """The ``sizes`` key of ``kernel``'s output: "lanesW", W words per lane (the intrinsic table's). The
    key is part of every recorded launch: a kernel whose W changes needs its launches recorded again."""
    return f"lanes{intrinsics.words(kernel)}"


# The warp and block kernels' (const T* in, T* out): one value in and one out per thread.
_IN, _OUT = _a("in", "in", "T", "threads"), _a("out", "out", "T", "threads", "sentinel")
# The ladder's (and the one-launch kernels') float input of n elements.
_LADDER_IN = _a("in", "in", "float32", "n", "ladder")

# The table. Order matters only for readability; every registered expression must match exactly one.
FAMILIES: tuple[Family, ...] = (
    Family("shuffle", "warp_intrinsics", rf"shuffle_kernel<{_T}, (?P<mode>[0-3])>",
           (_a("in", "in", "T", "lanes"), _a("arg", "in", "int32", "lanes", "operand"), *_WARP_CFG,
            _a("width", "scalar", "int32"), _a("n_warps", "scalar", "int32"),
            _a("out", "out", "T", "lanes", "sentinel"), _a("src_out", "out", "int32", "lanes", "sentinel")),
           "warp_rows", "helpers.engine.warp_cupy.shuffle_raw: rows of 32 lanes, blockDim a multiple of 32"),
    Family("vote", "warp_intrinsics", r"vote_kernel",
           (_a("pred", "in", "int32", "lanes", "pred"), *_WARP_CFG, _a("n_warps", "scalar", "int32"),
            _a("out", "out", "uint32", _lanes_of("vote_kernel"), "sentinel")),
           "warp_rows", "helpers.engine.warp_cupy.vote"),
    Family("match_reduce", "warp_intrinsics", rf"match_reduce_kernel<{_T}>",
           (_a("in", "in", "T", "lanes"), *_WARP_CFG, _a("n_warps", "scalar", "int32"),
            _a("out", "out", "T", _lanes_of("match_reduce_kernel"), "sentinel")),
           "warp_rows", "helpers.engine.warp_cupy.collective"),
    Family("warp_reduce_sum", "warp_reduce_sum", rf"warp_reduce_sum_kernel<{_T}>",
           (_IN, _a("out", "out", "T", "n_warps", "sentinel")),
           "warp_exact", "helpers.topics.warp_reduce.warp_reduce_sum: exactly n_warps * 32 threads"),
    Family("warp_tree", "warp_reduce_ops", rf"warp_reduce_kernel<{_T}, {_OP}, (?P<butterfly>true|false)>",
           (_IN, _a("width", "scalar", "int32"), _a("n_valid", "scalar", "int32"), _OUT),
           "warp_exact", "helpers.topics.warp_reduce.warp_reduce: width a power of two, n_valid in [1, width]"),
    Family("warp_library", "warp_reduce_ops", rf"warp_reduce_(?P<method>intrinsic|cg|cub)_kernel<{_T}, {_OP}>",
           (_IN, _OUT),
           "warp_exact", "helpers.topics.warp_reduce.library_reduce"),
    Family("block_tile", "block_reduce", rf"block_(?P<kind>reduce|all_reduce|x_reduce|y_reduce)_kernel<{_T}, {_OP}>",
           (_IN, _OUT),
           "block_2d", "helpers.topics.block_reduce.block_reduce: any (x, y) with x * y <= 1024, one tile per block"),
    Family("back_to_back", "block_reduce", rf"back_to_back_kernel<{_T}, {_OP}, (?P<barrier>true|false)>",
           (_a("first", "in", "T", "threads"), _a("second", "in", "T", "threads"),
            _a("out", "out", "T", "threads2", "sentinel")),
           "block_2d", "helpers.topics.block_reduce.back_to_back_gpu (without the barrier: a race)"),
    Family("seed_block_sum", "seed_block_reduce", rf"seed_block_reduce_sum_kernel<{_T}>",
           (_IN, _OUT),
           "block_1d", "helpers.topics.block_reduce (seed BlockReduceSum: 1D blocks, any size)"),
    Family("seed_warp", "seed_block_reduce", rf"seed_warp_reduce_kernel<{_T}, {_OP}>",
           (_IN, _OUT),
           "warp_exact", "helpers.topics.warp_reduce.seed_warp_reduce"),
    Family("seed_block_x", "seed_block_reduce", rf"seed_block_x_reduce_kernel<{_T}, {_OP}>",
           (_IN, _OUT),
           "block_2d_seed_x", "helpers.topics.block_reduce (seed BlockXReduce: y <= 64)"),
    Family("seed_block_y", "seed_block_reduce", rf"seed_block_y_reduce_kernel<{_T}, {_OP}>",
           (_IN, _OUT),
           "block_2d", "helpers.topics.block_reduce (seed BlockYReduce: racy)"),
    Family("seed_partial_warp", "seed_block_reduce", rf"seed_partial_warp_kernel<{_T}, {_OP}>",
           (_IN, _a("n_valid", "scalar", "int32"), _OUT),
           "warp_exact", "helpers.topics.warp_reduce (partial='ballot'): reads outside the ballot mask are undefined"),
    Family("ladder", "reduce_v*", r"(?P<file>reduce_v[0-8](?:_legacy)?)<(?P<block>\d+)>",
           (_LADDER_IN, _a("out", "out", "float32", "grid", "sentinel"),
            _a("n", "scalar", "int64")),
           "ladder", "helpers.topics.reduce.ReducePlan.first_pass: the version's grid formula; v6..v8 any grid"),
    Family("onepass", "reduce_onepass", r"reduce_onepass<(?P<block>\d+)>",
           (_LADDER_IN, _a("partials", "out", "float32", "grid", "sentinel"),
            _a("done", "out", "uint32", "one", "zero"), _a("out", "out", "float32", "one", "sentinel"),
            _a("n", "scalar", "int64")),
           "ladder", "helpers.topics.reduce.ReducePlan (onepass: *done == 0 at launch, reset by the last block)"),
    Family("seed_reduce_v4", "seed_reduce_v4", r"seed_reduce_v4<(?P<block>\d+)>",
           (_a("d_in", "in", "float32", "n", "ladder"), _a("d_out", "out", "float32", "grid", "sentinel")),
           "seed_ladder", "helpers.topics.reduce.seed_first_pass: ceil(n / 256) blocks of 128; n a multiple of 256"),
    Family("compact", "warp_aggregated", r"compact_kernel",
           (_LADDER_IN, _a("n", "scalar", "int64"), _a("threshold", "scalar", "float32"),
            _a("out", "out", "float32", "n", "sentinel", "multiset_prefix:counter"),
            _a("counter", "out", "int32", "one", "zero"), _a("atomics", "out", "int32", "one", "zero")),
           "compact", "helpers.topics.ballot_uses.compact: the warps' runs land in atomic order (compared as a multiset)"),
    Family("compact_cg", "warp_aggregated", r"compact_cg_kernel",
           (_LADDER_IN, _a("n", "scalar", "int64"), _a("threshold", "scalar", "float32"),
            _a("out", "out", "float32", "n", "sentinel", "multiset_prefix:counter"),
            _a("counter", "out", "int32", "one", "zero"), _a("atomics", "out", "int32", "one", "zero", "at_least")),
           "compact", "helpers.topics.ballot_uses.compact(method='cg'): one atomic per coalesced group, so at least one "
           "per warp with a passing lane (the machine runs them converged: the fewest); runs compared as a multiset"),
    # v9 is not a rung of the ladder (its own signature: tagged slots and a workspace).
    Family("v9", "reduce_v9", r"reduce_v9<(?P<block>\d+)>",
           (_LADDER_IN, _a("slots", "out", "uint64", "grid", "zero"),
            _a("state", "out", "uint64", "one", "zero"), _a("out", "out", "float32", "one", "sentinel"),
            _a("n", "scalar", "int64")),
           "v9", "helpers.topics.reduce.ReducePlan (v9: slots and state zero at the first launch, any grid >= 1)",
           findings="v9"),
    Family("v9_one_block", "reduce_v9", r"reduce_v9<(?P<block>\d+), true>",
           (_LADDER_IN, _a("slots", "out", "uint64", "one", "zero"),
            _a("state", "out", "uint64", "one", "zero"), _a("out", "out", "float32", "one", "sentinel"),
            _a("n", "scalar", "int64")),
           "v9_one_block", "helpers.topics.reduce.ReducePlan (v9's one-block instantiation: a grid of 1 by contract; "
           "slots and state untouched)", findings="v9"),
    Family("timing_empty", "reduce_timing", r"reduce_empty",
           (_a("in", "in", "float32", "four", "ladder"), _a("partials", "out", "float32", "four", "sentinel"),
            _a("done", "out", "uint32", "four", "sentinel"), _a("out", "out", "float32", "four", "sentinel"),
            _a("n", "scalar", "int64")),
           "timing_empty", "helpers.bench.clock.empty_launcher: any grid and block, touches no memory (outputs untouched)"),
    Family("timing_spin", "reduce_timing", r"reduce_spin", (_a("ns", "scalar", "int64"),),
           "timing_spin", "helpers.bench.clock.DeviceTimer: one thread waits ns of %globaltimer; no memory"),
    Family("diverged", "warp_diverged", r"diverged_kernel<(?P<op>[01]), (?P<later>true|false)>",
           (_a("in", "in", "int32", "lanes"), _a("callers", "in", "uint32", "n_warps", "callers"),
            _a("delta", "scalar", "int32"), _a("spin", "scalar", "int64"),
            _a("got", "out", "int32", "lanes", "sentinel"), _a("amask", "out", "uint32", "lanes", "sentinel"),
            _a("t", "out", "int64", "lanes3", "sentinel", "none")),
           "diverged", "helpers.recording.record_diverged: blocks of 32; a launch whose callers are not all 32 lanes is "
           "undefined by contract (extra['contract'] == 'undefined'): its outputs are never compared"),
)


def family_of(file: str, expr: str) -> tuple[Family, dict[str, str]]:
    """The one family covering ``expr`` of ``kernels/FILE.cu``, and the match's named groups."""
    hits = []
    for fam in FAMILIES:
        if not re.fullmatch(fam.file.replace("*", r".*"), file):
            continue
        m = re.fullmatch(fam.pattern, expr)
        if m and (fam.name != "ladder" or m.group("file") == file):
            hits.append((fam, m.groupdict()))
    if len(hits) != 1:
        raise ValueError(f"expr {expr!r} of kernels/{file}.cu must match exactly one launch family; "
                         f"matched {[f.name for f, _ in hits] or 'none'}")
    return hits[0]


# ------------------------------------------------------------------------------ launch shapes

# The words per lane of warp_intrinsics.cu's kernels with an output row (vote_kernel, match_reduce_kernel):
# one "lanesW" size each.
_WORDS: tuple[int, ...] = tuple(sorted({intrinsics.words(r.kernel) for r in intrinsics.rows() if r.column is not None}))


def _warp_rows(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    """warp_intrinsics.cu: rows of 32 lanes; blockDim.x a multiple of 32; threads past the rows return."""
    n_warps = s.integer(1, 13)
    block = s.choice((32, 64, 96, 128, 256, 1024))
    grid = -(-n_warps * 32 // block)
    shape = {"grid": (grid, 1, 1), "block": (block, 1, 1),
             "sizes": {"lanes": n_warps * 32, **{f"lanes{w}": n_warps * 32 * w for w in _WORDS}, "n_warps": n_warps},
             "scalars": {"n_warps": n_warps, "width": s.choice((1, 2, 4, 8, 16, 32))}}
    return shape


def _warp_exact(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    """Full, converged warps: blockDim.x = 32 k, exactly n_warps * 32 threads."""
    k = s.choice((1, 2, 3, 4, 8, 32) if g.get("method") != "cub" else (1, 2, 3, 8, 32))
    grid = s.integer(1, 4) if k < 32 else 1
    n_warps = grid * k
    width = s.choice((1, 2, 4, 8, 16, 32))
    limit = 32 if "width" not in g else width
    return {"grid": (grid, 1, 1), "block": (32 * k, 1, 1),
            "sizes": {"threads": n_warps * 32, "n_warps": n_warps},
            "scalars": {"width": width, "n_valid": s.integer(1, limit + 1) if s.chance(0.6) else limit}}


# Block shapes that matter: partial tail warps, warps spanning rows, non-powers of two, the limits.
_BLOCKS_2D: tuple[tuple[int, int], ...] = (
    (32, 1), (48, 1), (100, 3), (5, 7), (32, 3), (32, 5), (96, 2), (64, 16), (7, 1), (1, 1), (1024, 1),
    (33, 31), (16, 4), (128, 8), (3, 300), (256, 4), (40, 25), (2, 512), (31, 33), (1, 64))
_BLOCKS_1D: tuple[int, ...] = (1, 7, 31, 32, 33, 48, 64, 100, 128, 255, 256, 500, 1000, 1024)


def _block_2d(s: rand.Stream, g: dict[str, str], max_y: int = MAX_THREADS) -> dict[str, Any]:
    choices = [b for b in _BLOCKS_2D if b[1] <= max_y]
    bx, by = s.choice(choices)
    grid = s.integer(1, 4) if bx * by <= 256 else 1
    n = grid * bx * by
    return {"grid": (grid, 1, 1), "block": (bx, by, 1), "sizes": {"threads": n, "threads2": 2 * n}, "scalars": {}}


def _block_2d_seed_x(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    return _block_2d(s, g, max_y=64)   # helpers.topics.block_reduce.SEED_X_MAX_ROWS


def _block_1d(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    bx = s.choice(_BLOCKS_1D)
    grid = s.integer(1, 4) if bx <= 256 else 1
    return {"grid": (grid, 1, 1), "block": (bx, 1, 1), "sizes": {"threads": grid * bx}, "scalars": {}}


def _ladder(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    """helpers.topics.reduce's grid formulas; n not a multiple of the block (nor of 4, mostly)."""
    from helpers.topics import reduce as R

    block = int(g["block"])
    version = "onepass" if "file" not in g else g["file"].removeprefix("reduce_")
    tile = R.tile_size(version, block)
    kind = s.integer(0, 4)
    if kind == 0:
        n = s.integer(1, block)                          # less than one block
    elif kind == 1:
        n = s.integer(1, 4) * tile + s.integer(1, block)  # a ragged last tile
    else:
        n = s.integer(block + 1, 3 * tile)
    resident = s.integer(1, 6)                           # grid-stride versions: any grid is correct
    grid = R.grid_size(version, n, block, resident_blocks=resident)
    # the float4 versions read any float*: start the input 0..3 floats past a 16-byte boundary
    offset = s.integer(0, 4) if R.uses_unroll(version) else 0
    return {"grid": (grid, 1, 1), "block": (block, 1, 1), "sizes": {"n": n, "grid": grid, "one": 1},
            "scalars": {"n": n}, "offset": offset}


def _seed_ladder(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    from helpers.topics import reduce as R

    n = R.SEED_TILE * s.integer(1, 5)                    # the seed has no bounds check
    grid = R.seed_grid(n)
    return {"grid": (grid, 1, 1), "block": (R.SEED_BLOCK, 1, 1), "sizes": {"n": n, "grid": grid}, "scalars": {}}


def _v9(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    """reduce_v9: any grid >= 1 is correct. One block (no ticket), a few slots (warp 0 collects) and,
    for blocks up to 256, more than 256 slots (the whole last block collects), as ReducePlan and the
    sanitizer's v9_many_blocks run launch it; n ragged, the input off a 16-byte boundary."""
    from helpers.topics import reduce as R

    block = int(g["block"])
    tile = R.tile_size("v9", block)
    n = s.integer(1, block) if s.chance(0.25) else s.integer(block + 1, 3 * tile)
    kind = s.integer(0, 3 if block <= 256 else 2)
    if kind == 0:
        grid = R.grid_size("v9", n, block, resident_blocks=s.integer(1, 6))
    elif kind == 1:
        grid = s.integer(2, 10)
    else:
        grid = s.integer(257, 268)
    return {"grid": (grid, 1, 1), "block": (block, 1, 1), "sizes": {"n": n, "grid": grid, "one": 1},
            "scalars": {"n": n}, "offset": s.integer(0, 4)}


def _v9_one_block(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    """reduce_v9<BLOCK, true>: one block, as ReducePlan launches it up to 2^14 floats; n ragged, the
    input off a 16-byte boundary."""
    from helpers.topics import reduce as R

    block = int(g["block"])
    n = s.integer(1, block) if s.chance(0.25) else s.integer(block + 1, 3 * R.tile_size("v9", block))
    return {"grid": (1, 1, 1), "block": (block, 1, 1), "sizes": {"n": n, "one": 1}, "scalars": {"n": n},
            "offset": s.integer(0, 4)}


def _timing_empty(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    return {"grid": (s.integer(1, 4), 1, 1), "block": (s.choice((1, 32, 48, 256)), 1, 1), "sizes": {"four": 4},
            "scalars": {"n": s.integer(0, 5)}}


def _timing_spin(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    # the machine counts %globaltimer in scheduling steps (helpers.machine.decode): keep ns small
    return {"grid": (1, 1, 1), "block": (1, 1, 1), "sizes": {}, "scalars": {"ns": s.integer(0, 200)}}


def _diverged(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    """warp_diverged.cu: one warp per block. "control": every lane calls (defined); otherwise the
    driver's caller sets (even lanes, lanes 0-15) or a random one per warp, the others alive
    elsewhere for ``spin`` clock cycles (kept short): undefined by the Programming Guide."""
    from helpers.recording import record_diverged as D

    n_warps = s.integer(1, 7)
    control = s.chance(0.4)
    sets = (D.CALLER_SETS["all lanes"],) if control else (D.CALLER_SETS["even lanes"], D.CALLER_SETS["lanes 0-15"], -1)
    callers = [s.choice(sets) for _ in range(n_warps)]
    callers = [c if c >= 0 else s.integer(1, 0xFFFFFFFF) for c in callers]   # -1: a random proper subset
    return {"grid": (n_warps, 1, 1), "block": (D.LANES, 1, 1),
            "sizes": {"lanes": n_warps * D.LANES, "lanes3": 3 * n_warps * D.LANES, "n_warps": n_warps},
            "scalars": {"delta": s.choice((1, 2, 16, s.integer(0, 32))) if g["op"] == "0" else 0,
                        "spin": s.integer(0, 100)},
            "callers": callers, "contract": "defined" if control else "undefined"}


def _compact(s: rand.Stream, g: dict[str, str]) -> dict[str, Any]:
    n = s.integer(1, 1500)
    block = s.choice((32, 48, 64, 100, 128, 256, 1024))
    return {"grid": (-(-n // block), 1, 1), "block": (block, 1, 1), "sizes": {"n": n, "one": 1},
            "scalars": {"n": n, "threshold": float(np.float32(s.uniform() * 2 - 1) * 500)}}


SHAPES: dict[str, Callable[[rand.Stream, dict[str, str]], dict[str, Any]]] = {
    "warp_rows": _warp_rows, "warp_exact": _warp_exact, "block_2d": _block_2d, "block_2d_seed_x": _block_2d_seed_x,
    "block_1d": _block_1d, "ladder": _ladder, "seed_ladder": _seed_ladder, "compact": _compact, "v9": _v9, "v9_one_block": _v9_one_block,
    "timing_empty": _timing_empty, "timing_spin": _timing_spin, "diverged": _diverged,
}


def _v9_findings(launch: "Launch") -> tuple[str, ...]:
    # v9 must be clean at every grid: its slots, ticket, tag loads and the last block's reset of the
    # workspace are all strong (relaxed, gpu-scope) accesses, so no pair of them is a data race in
    # the PTX memory model; tests/machine/test_m_kernels.py pins the same.
    return ()


# family.findings -> the kinds (with multiplicity, sorted) the machine must report for a launch
EXPECTED_FINDINGS: dict[str, Callable[["Launch"], tuple[str, ...]]] = {"v9": _v9_findings}


def expected_findings(launch: "Launch") -> Optional[tuple[str, ...]]:
    """The findings the machine must report for ``launch`` (sorted kinds), or None where they are
    only recorded, not checked."""
    fam, _ = family_of(launch.file, launch.expr)
    return EXPECTED_FINDINGS[fam.findings](launch) if fam.findings else None


def undefined_by_contract(launch: "Launch") -> bool:
    """True for a launch the kernel's contract leaves undefined on purpose (warp_diverged.cu's calls
    with lanes elsewhere): none of its outputs is compared as a number."""
    return launch.extra.get("contract") == "undefined"

# How the values of a launch are drawn, by value kind; one flavour per launch.
FLAVOURS: dict[str, tuple[str, ...]] = {"int": ("bits", "small"), "float": ("wide", "ints", "mixed")}


def _value_kind(dtype: str) -> str:
    return "float" if dtype.startswith("float") else "int"


def plan(file: str, expr: str, index: int, base_seed: int = 20261201) -> Launch:
    """The ``index``-th randomised launch of instantiation ``expr`` of ``kernels/FILE.cu``."""
    fam, groups = family_of(file, expr)
    seed = zlib.crc32(f"{file}:{expr}#{index}".encode()) ^ (base_seed & 0xFFFFFFFF)
    s = rand.Stream(seed)
    shape = SHAPES[fam.shape](s, groups)
    value_type = VALUE_TYPES[groups["T"]] if groups.get("T") else ""
    kind = _value_kind(value_type or "float32")
    flavour = s.choice(FLAVOURS[kind])
    return Launch(id=f"{file}:{expr}#{index}", file=file, expr=expr, family=fam.name, seed=seed,
                  grid=tuple(shape["grid"]), block=tuple(shape["block"]), shared_mem=0,
                  sizes=dict(shape["sizes"]), scalars=dict(shape["scalars"]), flavour=flavour,
                  value_type=value_type, extra={**{k: v for k, v in groups.items() if v is not None},
                                                **({"offset": shape["offset"]} if shape.get("offset") else {}),
                                                **{k: shape[k] for k in ("callers", "contract") if k in shape}})


def launches_per_instantiation(family: str) -> int:
    """How many random launches each instantiation of a family gets (the ladder has few
    instantiations, so more launches each)."""
    return {"ladder": 4, "onepass": 4, "v9": 4, "v9_one_block": 4, "seed_reduce_v4": 3, "compact": 6, "compact_cg": 6,
            "diverged": 4}.get(family, 2)


def launches(registry: Optional[dict[str, tuple[str, ...]]] = None) -> Iterator[Launch]:
    """Every instantiation of every kernel (``helpers.topics.registry.registry()``), each with
    :func:`launches_per_instantiation` randomised launches, in registry order."""
    if registry is None:
        from helpers.topics.registry import registry as _registry

        registry = _registry()
    for file, exprs in registry.items():
        for expr in exprs:
            fam, _ = family_of(file, expr)
            for k in range(launches_per_instantiation(fam.name)):
                yield plan(file, expr, k)


# ------------------------------------------------------------------------------ arguments

def _dtype(arg: Arg, launch: Launch) -> np.dtype:
    return np.dtype(launch.value_type if arg.dtype == "T" else arg.dtype)


def _values(s: rand.Stream, dtype: np.dtype, n: int, flavour: str) -> np.ndarray:
    if dtype.kind in "iu":
        if flavour == "small":
            lo = -9 if dtype.kind == "i" else 0
            return s.integers(lo, lo + 19, n).astype(dtype)
        return s.bits(n).astype(np.uint64).astype(np.uint32).view(np.int32 if dtype.kind == "i" else np.uint32).astype(dtype)
    if flavour == "ints":
        return s.integers(-9, 10, n).astype(dtype)
    v = ((s.unit(n) * 2 - 1) * 1000).astype(dtype)
    if flavour == "mixed":
        specials = np.array([0.0, -0.0, 1e-40, -3e-39, 1e30, -1e30, 1.17549435e-38, 65504.0, -1.5, 2.0**-149],
                            dtype=np.float64).astype(dtype)
        pick = s.unit(n) < 0.2
        v = np.where(pick, specials[s.integers(0, len(specials), n)], v).astype(dtype)
    return v


def _warp_config(s: rand.Stream, n_warps: int) -> tuple[np.ndarray, np.ndarray]:
    """(masks, active): the situations of helpers.engine.cases._mask_and_active, from our own stream."""
    lane = np.arange(32)
    kinds = s.integers(0, 5, n_warps)
    active = np.ones((n_warps, 32), bool)
    mask = np.full(n_warps, 0xFFFFFFFF, np.uint64)
    for w, k in enumerate(kinds):
        if k == 1:    # active set == mask
            active[w] = s.unit(32) < 0.2 + 0.8 * s.uniform()
            mask[w] = int((active[w].astype(np.uint64) << lane.astype(np.uint64)).sum())
        elif k == 2:  # independent random mask and active set
            active[w] = s.unit(32) < 0.3 + 0.7 * s.uniform()
            mask[w] = int(s.bits(1)[0] & np.uint64(0xFFFFFFFF))
        elif k == 3:  # prefix: lane < n
            n = s.integer(1, 33)
            active[w] = lane < n
            mask[w] = (1 << n) - 1
        elif k == 4:  # full mask, some lanes exited
            active[w] = s.unit(32) < 0.85
    return mask.astype(np.uint32), active.reshape(-1).astype(np.uint8)


def _operand(s: rand.Stream, n: int, mode: int) -> np.ndarray:
    """Shuffle operands: one per lane; the same for every lane in most launches. idx (mode 0) also
    gets negative lanes and lanes past the width; up/down/xor (1..3) sometimes values >= 32, whose
    low five bits are what PTX uses (shfl.sync pseudo-code: bval = b[4:0])."""
    spread = s.integer(0, 4)
    if mode == 0:
        lo, hi = (-64, 64) if spread == 0 else (0, 32)
    else:
        lo, hi = (0, 64) if spread == 0 else (0, 32)
    if s.chance(0.6):
        return np.full(n, s.integer(lo, hi), np.int32)
    return s.integers(lo, hi, n).astype(np.int32)


def arguments(launch: Launch) -> list[Any]:
    """The launch's arguments, in kernel order: NumPy arrays (device buffers) and NumPy scalars.

    Deterministic from ``launch.seed``: the GPU host and CI build the very same bytes (checked by
    :func:`input_checksum`).
    """
    fam, _ = family_of(launch.file, launch.expr)
    s = rand.Stream(launch.seed ^ 0x5EED)
    n_warps = launch.sizes.get("n_warps", 0)
    masks, active = _warp_config(s, n_warps) if fam.shape == "warp_rows" else (None, None)
    out: list[Any] = []
    for arg in fam.args:
        dt = _dtype(arg, launch)
        if arg.role == "scalar":
            out.append(dt.type(launch.scalars[arg.name]))
            continue
        n = launch.sizes[arg.size]
        if arg.fill == "masks":
            a = masks
        elif arg.fill == "active":
            a = active
        elif arg.fill == "operand":
            a = _operand(s, n, int(launch.extra["mode"]))
        elif arg.fill == "pred":
            a = (s.unit(n) < s.uniform()).astype(dt)
        elif arg.fill == "sentinel":
            a = np.full(n * dt.itemsize // 4, SENTINEL32, np.uint32).view(dt)
        elif arg.fill == "zero":
            a = np.zeros(n, dt)
        elif arg.fill == "callers":
            a = np.array(launch.extra["callers"], dt)
        elif arg.fill == "ladder":
            a = _values(s, dt, n, launch.flavour)
            off = int(launch.extra.get("offset", 0))
            if off:   # a view starting `off` elements into its own allocation (x[off:] of a fresh array)
                base = np.zeros(n + off, dt)
                base[off:] = a
                out.append(base[off:])
                continue
        else:
            a = _values(s, dt, n, launch.flavour)
        out.append(np.ascontiguousarray(a, dtype=dt))
    return out


def input_checksum(launch: Launch, args: list[Any]) -> int:
    """CRC-32 of every argument's bytes before the launch (inputs, pre-filled outputs, scalars)."""
    return rand.checksum(*(np.asarray(a) for a in args))


def output_names(launch: Launch) -> list[tuple[int, Arg]]:
    """(position, Arg) of every output argument."""
    fam, _ = family_of(launch.file, launch.expr)
    return [(i, a) for i, a in enumerate(fam.args) if a.role == "out"]
