"""Item 3: the machine's verdicts beside compute-sanitizer's, kernel by kernel.

For every run recorded in ``data/sanitizer_ladder.json`` and ``data/sanitizer_block.json`` the same
kernel runs on the machine with the launch the recording script used (helpers.recording.reduce_target,
helpers.recording.block_reduce_target), shrunk where the size does not matter: the ladder's n = 100,003 becomes
:data:`LADDER_N` (still not a multiple of the block nor of 4; every offset of the float4 head path
still taken), the seed's sizes are kept (n = 1,000 reads past the end, 1,024 does not). The
machine's findings map onto the tools as:

* memcheck: ``out_of_bounds``, ``misaligned``;
* racecheck: ``race`` in shared memory (racecheck checks only shared memory; the machine's races in
  global memory are listed apart, as something racecheck cannot see);
* synccheck: ``divergent_barrier``, ``deadlock``.

v9 (``v9``: few slots, warp 0 collects; ``v9_many_blocks``: more than 256 slots, the whole last
block collects; ``v9_one_block``: a grid of one, ``reduce_v9<BLOCK, true>``) runs as one launch with a fresh zero workspace per offset, as ``ReducePlan`` does;
its grids are shrunk with n (any grid is correct) but keep the recorded paths. A race the machine
finds in *global* memory is listed beside the verdict (``beyond``): racecheck checks shared memory
only.

:func:`beyond_the_tools` runs the two launches compute-sanitizer cannot judge
(:mod:`helpers.recording.proof.sanitize` experiments): the seed's out-of-bounds read inside a pooled block, and
shuffle reads of exited lanes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

LADDER_N = 1543          # stands for 100,003: 2 * 3 * 256 + 7, not a multiple of 256 nor of 4
LADDER_BLOCK = 256
TOOL_KINDS: dict[str, tuple[str, ...]] = {"memcheck": ("out_of_bounds", "misaligned"), "racecheck": ("race",),
                                           "synccheck": ("divergent_barrier", "deadlock")}


@dataclass
class Verdict:
    """One recorded sanitizer run beside the machine."""

    source: str                 # data file
    kernel: str
    tool: str
    sanitizer: str              # "clean" | "reported" (the recording's outcome)
    machine: str = ""           # "clean" | "reported" | "error: ..."
    kinds: tuple[str, ...] = ()  # every kind the machine reported for this launch
    lines: tuple[Any, ...] = ()  # source lines of the findings that decided the verdict
    beyond: tuple[str, ...] = ()  # findings the tool cannot see (global races)
    shape: str = ""

    @property
    def agree(self) -> bool:
        return self.machine == self.sanitizer


@functools.lru_cache(maxsize=None)
def _module(file: str) -> tuple[Any, dict[str, str]]:
    from helpers import machine
    from helpers.engine import kernels
    from helpers.topics.registry import registry

    c = kernels.compiled(file, "compute_90", registry()[file], options=("-lineinfo",))
    return machine.RawModule(ptx=c.ptx), c.lowered


def kernel(file: str, expr: str) -> Any:
    """The machine kernel for a registered instantiation (compiled here, cached)."""
    mod, lowered = _module(file)
    return mod.get_function(lowered[expr])


def _tool_verdict(reports: Sequence[Any], tool: str) -> tuple[str, tuple, tuple]:
    hits, beyond = [], []
    for r in reports:
        for f in r.issues:
            if f.kind not in TOOL_KINDS[tool]:
                continue
            if tool == "racecheck" and f.detail.get("space", "shared") != "shared":
                beyond.append(f"{f.kind} in {f.detail.get('space')} memory at line {f.line}")
                continue
            hits.append(f.lines)
    return ("reported" if hits else "clean"), tuple(hits), tuple(dict.fromkeys(beyond))


def ladder_reports(kernel_name: str, tool: str) -> tuple[list[Any], str]:
    """Run one ladder kernel (or the seed) as helpers.recording.reduce_target's ``sanitize`` does; its reports."""
    from helpers.topics import reduce as R
    from helpers.recording.proof import rand

    reports = []
    if kernel_name == "seed":
        n = 1000 if tool == "memcheck" else 1024
        x = rand.Stream(n).integers(-4, 5, n).astype(np.float32)
        g = R.seed_grid(n)
        out = np.zeros(g, np.float32)
        reports.append(kernel("seed_reduce_v4", "seed_reduce_v4<128>")((g,), (R.SEED_BLOCK,), (x, out)))
        return reports, f"n={n} block={R.SEED_BLOCK}"
    if kernel_name in V9_RUNS:
        return _v9_reports(kernel_name)
    version, n, block = kernel_name, LADDER_N, LADDER_BLOCK
    spec_file = R.kernel_name(version, block).split("<")[0]
    k = kernel(spec_file, R.kernel_name(version, block))
    offsets = (0, 1, 2, 3) if R.uses_unroll(version) else (0,)
    for off in offsets:
        base = rand.Stream(n + off).integers(-4, 5, n + off).astype(np.float32)
        x = base[off:]
        grids = R.pass_grids(version, n, block, resident_blocks=4)
        bufs = [np.zeros(g, np.float32) for g in grids]
        if version == "onepass":
            out, done = np.zeros(1, np.float32), np.zeros(1, np.uint32)
            reports.append(k((grids[0],), (block,), (x, bufs[0], done, out, np.int64(n))))
            continue
        reports.append(k((grids[0],), (block,), (x, bufs[0], np.int64(n))))
        for i in range(1, len(grids)):
            reports.append(k((grids[i],), (block,), (bufs[i - 1], bufs[i], np.int64(grids[i - 1]))))
    return reports, f"n={n} block={block} offsets={','.join(map(str, offsets))}"


# The recorded v9 runs (scripts/gpu/reduce.sh) -> (n, block, grid, offsets) on the machine. Recorded:
# v9 at n = 100,003 (block 256, 25 blocks: warp 0 collects), offsets 0..3; v9_many_blocks at
# n = 268,435,459 (block 1024, 528 blocks, more than 256: the whole last block collects), offsets 0, 1;
# v9_one_block (from the recording after 2026-12-04) at n = 10,007: one block of 512, its own instantiation.
V9_RUNS: dict[str, tuple[int, int, int, tuple[int, ...]]] = {
    "v9": (LADDER_N, LADDER_BLOCK, 5, (0, 1, 2, 3)),
    "v9_many_blocks": (257 * 64 * 4 * 4 + 7, 64, 257, (0, 1)),   # every block loads one tile, the last one ragged
    "v9_one_block": (10_007, 512, 1, (0, 1, 2, 3)),            # reduce_v9<512, true>, as the dispatcher launches it
}


def _v9_reports(name: str) -> tuple[list[Any], str]:
    from helpers.topics import reduce as R
    from helpers.recording.proof import rand

    n, block, grid, offsets = V9_RUNS[name]
    k = kernel("reduce_v9", R.kernel_name("v9", block, grid))
    reports = []
    for off in offsets:   # a fresh workspace per run, as reduce_target makes a fresh plan
        x = rand.Stream(n + off).integers(-4, 5, n + off).astype(np.float32)[off:]
        slots, state, out = np.zeros(grid, np.uint64), np.zeros(1, np.uint64), np.zeros(1, np.float32)
        reports.append(k((grid,), (block,), (x, slots, state, out, np.int64(n))))
    return reports, f"n={n} block={block} grid={grid} offsets={','.join(map(str, offsets))}"


def _block_expr(name: str) -> tuple[str, str]:
    from helpers.topics.block_reduce import BACK_TO_BACK_TARGETS, SANITIZER_TARGETS

    t, op = "int", "warplab::ops::Sum<int>"
    if name in BACK_TO_BACK_TARGETS:
        return "block_reduce", f"back_to_back_kernel<{t}, {op}, {'true' if BACK_TO_BACK_TARGETS[name] else 'false'}>"
    kind, version, broadcast = SANITIZER_TARGETS[name]
    if version == "seed":
        return "seed_block_reduce", {"sum": f"seed_block_reduce_sum_kernel<{t}>", "x": f"seed_block_x_reduce_kernel<{t}, {op}>",
                                     "y": f"seed_block_y_reduce_kernel<{t}, {op}>"}[kind]
    k = {"sum": "block_all_reduce" if broadcast else "block_reduce", "x": "block_x_reduce", "y": "block_y_reduce"}[kind]
    return "block_reduce", f"{k}_kernel<{t}, {op}>"


def block_reports(name: str, block: Sequence[int]) -> list[Any]:
    """One block of ``name`` (helpers.recording.block_reduce_target's kernels) on the machine."""
    from helpers.recording.proof import rand
    from helpers.topics.block_reduce import BACK_TO_BACK_TARGETS

    bx, by = int(block[0]), int(block[1])
    file, expr = _block_expr(name)
    vals = rand.Stream(bx * 1031 + by).integers(-9, 10, bx * by).astype(np.int32)
    if name in BACK_TO_BACK_TARGETS:
        args = (np.ones(bx * by, np.int32), np.full(bx * by, 2, np.int32), np.zeros(2 * bx * by, np.int32))
    else:
        args = (vals, np.zeros(bx * by, np.int32))
    return [kernel(file, expr)((1,), (bx, by), args)]


def verdicts(sources: Sequence[str] = ("sanitizer_ladder", "sanitizer_block")) -> list[Verdict]:
    """Every recorded run of ``sources`` beside the machine's verdict for the same tool."""
    from helpers import data

    rows: list[Verdict] = []
    cache: dict[tuple, tuple[list[Any], str]] = {}
    for src in sources:
        if not data.exists(src):
            continue
        for run in data.load(src)["runs"]:
            v = Verdict(src, run["kernel"], run["tool"], "reported" if run["outcome"] == "reported" else "clean")
            try:
                if src == "sanitizer_ladder":
                    key = (run["kernel"], "memcheck" if run["kernel"] == "seed" and run["tool"] == "memcheck" else "")
                    if key not in cache:
                        cache[key] = ladder_reports(run["kernel"], run["tool"])
                    reports, v.shape = cache[key]
                else:
                    key = (run["kernel"], tuple(run["block"]))
                    if key not in cache:
                        cache[key] = (block_reports(run["kernel"], run["block"]), f"block={tuple(run['block'])}")
                    reports, v.shape = cache[key]
            except Exception as exc:   # reported as a disagreement, never hidden
                v.machine = f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                rows.append(v)
                continue
            v.machine, v.lines, v.beyond = _tool_verdict(reports, run["tool"])
            v.kinds = tuple(sorted({f.kind for r in reports for f in r.issues}))
            rows.append(v)
    return rows


def format_verdicts(rows: Sequence[Verdict]) -> str:
    head = f"{'source':<17} {'kernel':<14} {'tool':<10} {'sanitizer':<9} {'machine':<9} machine findings"
    lines = [head, "-" * len(head)]
    for r in rows:
        extra = ", ".join(r.kinds) or "-"
        if r.beyond:
            extra += f" (beyond the tool: {'; '.join(r.beyond)})"
        lines.append(f"{r.source:<17} {r.kernel:<14} {r.tool:<10} {r.sanitizer:<9} {r.machine[:9]:<9} {extra}"
                     + ("" if r.agree else "   <-- DISAGREE"))
    return "\n".join(lines)


# ------------------------------------------------------------------------------ beyond the tools

@dataclass
class Beyond:
    """A defect compute-sanitizer does not report, and what the machine says."""

    name: str
    what: str
    machine_kinds: tuple[str, ...]
    machine_undefined: int
    expected_kind: str
    sanitizer: dict[str, str] = field(default_factory=dict)   # tool -> recorded verdict (if recorded)

    @property
    def machine_sees_it(self) -> bool:
        return self.expected_kind in self.machine_kinds or (self.expected_kind == "undefined" and self.machine_undefined > 0)


def beyond_the_tools(recorded: Optional[dict[str, Any]] = None) -> list[Beyond]:
    """The pooled out-of-bounds read and the exited-lane shuffle on the machine, beside the
    recorded sanitizer verdicts of the same launches (``machine_sanitizer.json`` experiments)."""
    from helpers.engine import emulator
    from helpers.recording.proof import sanitize

    exp = {}
    for e in (recorded or {}).get("experiments", []):   # the verdict from the recorded counts, not its label
        exp.setdefault(e["name"], {})[e["tool"]] = sanitize.experiment_verdict(e)
    out = []
    x = sanitize.seed_inputs()
    grid = -(-sanitize.POOLED_N // 256)
    r = kernel("seed_reduce_v4", "seed_reduce_v4<128>")((grid,), (128,), (x, np.zeros(grid, np.float32)))
    out.append(Beyond("pooled", f"the seed's reduce_v4 on n={sanitize.POOLED_N} reads up to element {grid * 256 - 1}; "
                      "with CuPy's pool the array sits in a larger pool block", tuple(sorted(r.kinds())),
                      int(sum(u.sum() for u in r.undefined if u is not None)), "out_of_bounds",
                      {**exp.get("pooled", {}), **{f"{k} (pool off)": v for k, v in exp.get("exact", {}).items()}}))
    values, delta, masks, active = sanitize.exited_inputs()
    out_v = np.zeros(values.size, np.int32)
    src = np.full(values.size, -1, np.int32)
    r = kernel("warp_intrinsics", "shuffle_kernel<int, 2>")((sanitize.EXITED_WARPS * 32 // 256,), (256,),
                                                           (values, delta, masks, active, np.int32(32),
                                                            np.int32(sanitize.EXITED_WARPS), out_v, src))
    verdict = emulator.shuffle("down", values.reshape(-1, 32), delta.reshape(-1, 32), 32,
                               masks.astype(np.uint64), active.reshape(-1, 32).astype(bool))
    calling = emulator.callers(masks.astype(np.uint64), active.reshape(-1, 32).astype(bool))
    expected_undef = int((calling & ~verdict.defined).sum())
    und = r.undefined[6]
    out.append(Beyond("exited", f"shfl_down with a full mask in {sanitize.EXITED_WARPS} warps where about one lane "
                      f"in five has exited: {expected_undef} reads of exited lanes", tuple(sorted(r.kinds())),
                      int(und.sum()), "undefined", exp.get("exited", {})))
    return out
