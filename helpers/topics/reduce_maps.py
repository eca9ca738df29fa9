"""Maps of the reduction ladder, measured: the SIMT machine's trace of one block of the real kernel.

:func:`measure` runs one block of ``reduce_<version><block>`` (``kernels/reduce_v*.cu``, through
:mod:`helpers.topics.launch`, the shipped PTX) on the machine with ``trace=True`` and reads, per warp and
per PTX instruction it executed:

* which lanes executed each float add (``active`` and ``predicated_on`` lanes of every issue);
* the bank-conflict degree of every shared-memory request (wavefronts: the most distinct 4-byte
  words one of the 32 banks is asked for; a word asked for by several lanes is served once);
* every barrier (``bar.sync``: ``__syncthreads()``; ``bar.warp.sync``: ``__syncwarp()``).

A **step** of the block tree is one float add after the first ``__syncthreads()``: every warp's
``k``-th add between two barriers (so the six warp steps of v4_legacy, which has no barrier between
them, are six steps). Its shared loads are the requests the warp made since its previous add, its
store the request after. Nothing here restates a kernel's index arithmetic; the only typed-in fact
is the stride each step's loop header names (:func:`strides`), a label checked against the number
of steps the machine measured.

The machine runs PTX; the H200 runs the SASS ptxas made from it. Where the two differ (ptxas
if-converts v0's branch, so on the H200 every warp issues every step), :mod:`helpers.recording.proof.counters`
sets the machine's counters beside Nsight Compute's and the recorded SASS.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from helpers.engine.params import is_integer, is_one_of, quote

WARP = 32
TREE_VERSIONS: tuple[str, ...] = ("v0", "v1", "v2", "v3", "v4", "v4_legacy", "v5")
# The grid-stride and one-launch kernels: their barriers are measured too (:func:`barriers`).
BARRIER_VERSIONS: tuple[str, ...] = TREE_VERSIONS + ("v6", "v7", "v8", "onepass", "v9")
_BLOCKS = (64, 128, 256, 512, 1024)
ENGINE = "the SIMT machine (PTX of kernels/reduce_v*.cu, one block, traced)"

_ADD = re.compile(r"^(@!?%p\d+\s+)?add(\.rn)?\.f32\b")
_LD_SHARED = re.compile(r"^(@!?%p\d+\s+)?ld(\.volatile)?\.shared")
_ST_SHARED = re.compile(r"^(@!?%p\d+\s+)?st(\.volatile)?\.shared")
_SYNCTHREADS = re.compile(r"^(@!?%p\d+\s+)?(bar\.sync|barrier\.sync)\b")
_SYNCWARP = re.compile(r"^(@!?%p\d+\s+)?bar\.warp\.sync\b")
_BRA = re.compile(r"^(@!?%p\d+\s+)?bra\b")


def _check(version: str, block: int, allowed: tuple[str, ...] = TREE_VERSIONS) -> None:
    if not is_one_of(version, allowed):
        what = "the shared-memory trees" if allowed == TREE_VERSIONS else "the ladder's kernels"
        raise ValueError(f"version must be one of {', '.join(allowed)} ({what}); got {quote(version)}")
    if not is_integer(block) or block not in _BLOCKS:
        raise ValueError(f"block must be a power of two in [64, 1024] ({', '.join(map(str, _BLOCKS))}); "
                         f"got {quote(block)}")


def strides(version: str, block: int = 256) -> list[int]:
    """The stride ``s`` each tree step's loop header names: 1, 2, .. BLOCK/2 for v0 and v1
    (``for (s = 1; s < BLOCK; s *= 2)``), BLOCK/2 .. 1 for v2 onwards (``for (s = BLOCK / 2; s > 0;
    s >>= 1)``, v4/v5 ending in warp 0's 32 .. 1). Labels only; :func:`measure` checks their count."""
    _check(version, block)
    up = [1 << k for k in range(int(block).bit_length() - 1)]
    return up if version in ("v0", "v1") else up[::-1]


@dataclass(frozen=True)
class Step:
    """One step of a block tree, as the machine executed it.

    stride:  the loop's ``s`` (a label, :func:`strides`).
    working: bool (warps, 32): the lane executed this step's add with its guard true.
    issued:  bool (warps,): the warp issued the add (some lane of it reached the instruction).
    degree:  int (warps,): the worst wavefronts of the warp's shared requests in this step
             (1 = conflict-free, k = a k-way conflict; 0 = no request).
    barrier: what the warp meets before its next add: "syncthreads", "syncwarp" or "none".
    """

    stride: int
    working: np.ndarray
    issued: np.ndarray
    degree: np.ndarray
    barrier: str

    @property
    def threads(self) -> np.ndarray:
        """The thread ids that executed the add (ascending)."""
        return np.flatnonzero(self.working.reshape(-1))


@dataclass(frozen=True)
class TreeMap:
    """What :func:`measure` read from the machine's trace of one block.

    steps:         the tree steps, in order.
    first_add:     bool (warps, 32): lanes of the block's first float add (v0..v2: the tree's first
                   step; v3 onwards: the add during the load).
    first_add_in_tree: whether that first add is the tree's first step (False: during the load).
    syncthreads:   ``bar.sync`` executed by the block (per warp: every warp arrives at each).
    syncwarp:      ``bar.warp.sync`` executed by warp 0.
    counters:      the launch's :class:`helpers.machine.Counters` (per warp, per instruction).
    """

    version: str
    block: int
    steps: tuple[Step, ...]
    first_add: np.ndarray
    first_add_in_tree: bool
    syncthreads: int
    syncwarp: int
    counters: Any


def _one_block(version: str, block: int, trace: bool, grid: int = 1) -> Any:
    """``grid`` full blocks of ``version`` on the machine (n = grid tiles, the input 0.5 + k/1024)."""
    from helpers.topics import launch as L
    from helpers.topics import reduce as R

    n = R.tile_size(version, block) * grid
    x = (0.5 + np.arange(n) % 1024 / 1024).astype(np.float32)
    spec_file = R.kernel_name(version, block).split("<")[0]
    expr = R.kernel_name(version, block)
    defines = (f"REDUCE_UNROLL={R.DEFAULT_UNROLL}",) if R.uses_unroll(version) and version != "v9" else ()
    f32 = np.float32
    if version == "onepass":
        args: tuple = (x, np.zeros(grid, f32), np.zeros(1, np.uint32), np.zeros(1, f32), np.int64(n))
    elif version == "v9":
        args = (x, np.zeros(grid, np.uint64), np.zeros(1, np.uint64), np.zeros(1, f32), np.int64(n))
    else:
        args = (x, np.zeros(grid, f32), np.int64(n))
    return L.launch(spec_file, expr, grid, block, args, defines=defines, backend="emulator", trace=trace).report


def _lanes(mask: int) -> np.ndarray:
    return (int(mask) >> np.arange(WARP)) & 1 == 1


def measure(version: str, block: int = 256) -> TreeMap:
    """The machine's map of ``reduce_<version><block>``'s block tree (cached per version and block)."""
    _check(version, block)
    return _measure(version, int(block))


@functools.lru_cache(maxsize=len(TREE_VERSIONS) * len(_BLOCKS))
def _measure(version: str, block: int) -> TreeMap:
    report = _one_block(version, block, trace=True)
    tr = report.trace
    ptx = tr.ptx
    warps = block // WARP
    wave = {(int(r["step"]), int(r["pc"]), int(r["warp"])): int(r["wavefronts"]) for r in tr.shared}
    adds: dict[tuple[int, int], dict[int, dict]] = {}   # (epoch, k) -> warp -> {mask, degree, barrier}
    syncthreads = syncwarp = 0
    for w in range(warps):
        epoch = k = 0
        pending: list[int] = []        # wavefronts of loads since the previous add
        last: dict | None = None      # the previous add of this warp
        for ev in tr.for_warp(w):
            text = ptx[int(ev["pc"])]
            key = (int(ev["step"]), int(ev["pc"]), w)
            if _SYNCTHREADS.match(text) or _SYNCWARP.match(text):
                if w == 0:
                    syncthreads += bool(_SYNCTHREADS.match(text))
                    syncwarp += bool(_SYNCWARP.match(text))
                if last is not None and last["barrier"] == "none":
                    last["barrier"] = "syncthreads" if _SYNCTHREADS.match(text) else "syncwarp"
                epoch, k = epoch + 1, 0
                continue
            if key in wave and _LD_SHARED.match(text):
                pending.append(wave[key])
            elif key in wave and _ST_SHARED.match(text) and last is not None:
                last["degree"] = max(last["degree"], wave[key])
            elif _ADD.match(text):
                last = {"mask": int(ev["predicated_on"]), "degree": max(pending, default=0), "barrier": "none"}
                adds.setdefault((epoch, k), {})[w] = last
                pending, k = [], k + 1
    keys = sorted(adds)
    first_key = keys[0]
    tree = [key for key in keys if key[0] >= 1]
    labels = strides(version, block)
    if len(tree) != len(labels):
        raise RuntimeError(f"the machine measured {len(tree)} tree steps in reduce_{version}<{block}>, but its "
                           f"loop names {len(labels)} strides: the kernel changed; update helpers.topics.reduce_maps.strides")
    steps = []
    for s, key in zip(labels, tree):
        working = np.zeros((warps, WARP), bool)
        issued = np.zeros(warps, bool)
        degree = np.zeros(warps, int)
        for w, a in adds[key].items():
            working[w], issued[w], degree[w] = _lanes(a["mask"]), True, a["degree"]
        barrier = next(a["barrier"] for _, a in sorted(adds[key].items()))
        steps.append(Step(s, working, issued, degree, barrier))
    first = np.zeros((warps, WARP), bool)
    for w, a in adds[first_key].items():
        first[w] = _lanes(a["mask"])
    return TreeMap(version, int(block), tuple(steps), first, first_key[0] >= 1, syncthreads, syncwarp,
                   report.counters)


def tree_steps(version: str, block: int = 256) -> list[Step]:
    """The steps of ``version``'s block tree for ``block`` threads, measured (:func:`measure`)."""
    return list(measure(version, block).steps)


def active_lanes(version: str, block: int = 256) -> np.ndarray:
    """bool array (steps, warps, 32): lane ``l`` of warp ``w`` executed the add at step ``k``."""
    return np.stack([st.working for st in tree_steps(version, block)])


def divergent_warps(version: str, block: int = 256) -> np.ndarray:
    """bool array (steps, warps): the warp had some, but not all, of its 32 lanes executing the add."""
    working = active_lanes(version, block).sum(axis=2)
    return (working > 0) & (working < WARP)


def bank_conflict_degree(version: str, block: int = 256) -> np.ndarray:
    """int array (steps, warps): the worst wavefronts among the warp's shared requests at each step
    (its loads before the add and its store after); 0 = no request."""
    return np.stack([st.degree for st in tree_steps(version, block)])


def shared_traffic(version: str, block: int = 256) -> dict[str, int]:
    """Warp-level shared-memory requests of one block, and the extra wavefronts bank conflicts add,
    as the machine counted them (every ``ld.shared`` / ``st.shared`` the PTX executes). Keys:
    ``ld_requests``, ``ld_extra_wavefronts``, ``st_requests``, ``st_extra_wavefronts``. Multiply by
    the grid to compare with Nsight Compute's ``smsp__sass_inst_executed_op_shared_ld.sum`` and
    ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`` (``helpers.recording.proof.counters``)."""
    _check(version, block)
    m = machine_counters(version, block, blocks=1)
    return {"ld_requests": int(m["shared_ld_requests"]),
            "ld_extra_wavefronts": int(m["shared_ld_wavefronts"] - m["shared_ld_requests"]),
            "st_requests": int(m["shared_st_requests"]),
            "st_extra_wavefronts": int(m["shared_st_wavefronts"] - m["shared_st_requests"])}


def machine_counters(version: str, block: int = 256, blocks: int = 1) -> dict[str, float]:
    """The machine's counts for ``blocks`` full blocks of ``version``'s first pass (every block of a
    pass whose n is a multiple of the tile does the same work): ``issued`` warp instructions,
    ``active_lanes`` and ``predicated_on`` lanes summed over them, ``barriers``; per kind of access,
    ``shared_ld_requests``, ``shared_ld_wavefronts`` (likewise ``shared_st_``: every ``ld.shared`` /
    ``st.shared`` the PTX executes); ``branches`` (``bra`` issued); and ``blocks``. Cached."""
    _check(version, block, BARRIER_VERSIONS)
    if not is_integer(blocks) or not 1 <= blocks <= 64:
        raise ValueError(f"blocks must be an integer in [1, 64]; got {quote(blocks)}")
    return dict(_machine_counters(version, int(block), int(blocks)))


@functools.lru_cache(maxsize=128)
def _machine_counters(version: str, block: int, blocks: int) -> dict[str, float]:
    c = _one_block(version, block, trace=False, grid=blocks).counters
    t = c.totals
    got: dict[str, float] = {k: t[k] for k in ("issued", "active_lanes", "predicated_on", "barriers")}
    for kind, pattern in (("ld", _LD_SHARED), ("st", _ST_SHARED)):
        rows = [i for i in c.per_instruction if pattern.match(i["ptx"])]
        got[f"shared_{kind}_requests"] = sum(i["shared_requests"] for i in rows)
        got[f"shared_{kind}_wavefronts"] = sum(i["shared_wavefronts"] for i in rows)
    got["branches"] = sum(i["issued"] for i in c.per_instruction if _BRA.match(i["ptx"]))
    got["blocks"] = blocks
    return got


@dataclass(frozen=True)
class FirstStep:
    """Who works in a block's first add: v0..v2 add in the tree, v3 onwards during the load."""

    threads: int             # threads in the block
    working: int             # threads that add something in the first add
    idle: int                # threads that only loaded
    elements_per_block: int  # input elements one block covers
    lanes: np.ndarray        # bool (warps, 32): who adds


def first_step(version: str, block: int = 256) -> FirstStep:
    """The first float add of ``version``, measured: for v0..v2 the tree's first step (half the
    threads idle); for v3 onwards the add during the load (every thread adds its two elements)."""
    from helpers.topics import reduce as R

    m = measure(version, block)
    working = int(m.first_add.sum())
    return FirstStep(int(block), working, int(block) - working, R.tile_size(version, block), m.first_add)


def barriers(version: str, block: int = 256) -> dict[str, int]:
    """``__syncthreads()`` (``bar.sync``) per block and ``__syncwarp()`` (``bar.warp.sync``) in warp 0,
    counted by the machine on the real kernel: one block of the trees; for v6 .. v9 and onepass two
    blocks, and the fewer of their two counts (the last block of onepass and v9 runs its own extra
    barriers to collect the partials)."""
    _check(version, block, BARRIER_VERSIONS)
    return dict(_barriers(version, int(block)))


@functools.lru_cache(maxsize=len(BARRIER_VERSIONS) * len(_BLOCKS))
def _barriers(version: str, block: int) -> dict[str, int]:
    if version in TREE_VERSIONS:
        m = measure(version, block)
        return {"syncthreads": m.syncthreads, "syncwarp": m.syncwarp}
    warps = block // WARP
    tr = _one_block(version, block, trace=True, grid=2).trace
    counts = []
    for b in range(2):
        ev = tr.for_warp(b * warps)
        texts = [tr.ptx[int(p)] for p in ev["pc"]]
        counts.append((sum(bool(_SYNCTHREADS.match(t)) for t in texts), sum(bool(_SYNCWARP.match(t)) for t in texts)))
    st, sw = min(counts)
    return {"syncthreads": st, "syncwarp": sw}


def lane_slots(version: str, block: int = 256) -> dict[str, float]:
    """Lane slots the tree's adds took on the machine (PTX): ``issued`` = 32 x warp-issues of the
    tree's adds, ``working`` = lanes that executed them; ``efficiency`` = working / issued. The
    PTX branches around the add, so a warp with no working lane issues nothing; the H200's SASS
    (ptxas if-converts the body) issues it in every warp (``helpers.recording.proof.counters``)."""
    steps = tree_steps(version, block)
    issued = WARP * sum(int(st.issued.sum()) for st in steps)
    working = sum(int(st.working.sum()) for st in steps)
    return {"working": working, "issued": issued, "efficiency": working / issued if issued else 0.0}


def steps_table(version: str, block: int = 256) -> str:
    """One line per tree step, measured on the machine: stride, working lanes, warps that issued the
    add, divergent warps, worst bank-conflict degree and the barrier that follows (plain text), under a
    one-line legend of the columns."""
    steps = tree_steps(version, block)
    div = divergent_warps(version, block)
    head = f"{'stride':>6} {'working':>8} {'warps busy':>10} {'divergent':>9} {'conflict':>8}  barrier"
    legend = ("working: threads that add; warps busy: warps that issue the add; divergent: warps whose lanes "
              "disagree; conflict: the worst shared-memory bank conflict of the step")
    lines = [f"reduce_{version}<{block}>: {block // WARP} warps (measured: the SIMT machine, one block)", legend,
             head, "-" * len(head)]
    for k, st in enumerate(steps):
        lines.append(f"{st.stride:>6} {int(st.working.sum()):>8} {int(st.issued.sum()):>10} "
                     f"{int(div[k].sum()):>9} {str(int(st.degree.max())) + '-way':>8}  {st.barrier}")
    return "\n".join(lines)


def races(version: str = "v4_legacy", n: int = 1543, block: int = 256) -> list[Any]:
    """The machine's race findings (:class:`helpers.machine.Finding`, with source lines) for a full
    reduction of ``n`` integer-valued floats with ``version``, every pass. The default n, 1,543
    (2 x 3 x 256 + 7), stands for the recorded racecheck run's 100,003: neither is a multiple of the
    block, and every block runs the same tree."""
    from helpers.topics import reduce as R

    R.check_version(version, racy_ok=True)
    x = (np.arange(R.check_machine_n(n)) % 9 - 4).astype(np.float32)
    run = R.run_passes(x, version, block, backend="emulator")
    return [f for p in run.passes for f in p.report.issues if f.kind == "race"]


def format_races(findings: list[Any]) -> str:
    """One line per race finding: hazard, the two source lines and instructions, how many times."""
    if not findings:
        return "the machine: no race"
    grouped: dict[tuple, list] = {}   # the same pair of source lines in every pass: one line, counts added
    for f in findings:
        d = f.detail
        key = (d.get("hazard", "?"), d.get("space", "?"), d.get("between", "?"), f.other_file, f.other_line,
               f.file, f.line)
        grouped.setdefault(key, [0, f])[0] += f.count
    lines = []
    for (hazard, space, between, of, ol, fi, li), (count, f) in grouped.items():
        lines.append(f"{hazard} on {space} memory between {between}: {of}:{ol} `{f.other_instruction}` "
                     f"then {fi}:{li} `{f.instruction}` ({count:,} thread pairs)")
    return "\n".join(lines)
