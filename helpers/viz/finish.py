"""Figures of notebook 07 (the one-launch finish), each drawn from a run or a recording, never from
hand-written numbers:

* :func:`litmus_figure`: the memory model's message-passing shape (MP) as "who may see what", with
  and without fences: the outcomes the PTX model allows (:mod:`helpers.machine.litmus`, its statement
  of the model) beside how often one GPU showed each (``data/litmus.json``);
* :func:`block_timeline`: a one-launch kernel's blocks on the SIMT machine as rows, its global
  stores, fences, atomics and loads as marks at the machine step where each block's warp executed
  them (onepass: the partial's store, the fence, the ticket, the last block's reads; v9: the ticket
  and tag drawn at the start, the slot's store, the last block's poll), from a traced machine run
  (:func:`timeline_events`).

The visual language is the series' (:mod:`helpers.viz.style`). A machine step is the machine's
scheduling order, not time on a GPU: the blocks of one launch may run in any order (Programming
Guide, Thread Hierarchy), and the machine runs them all at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from helpers.machine import litmus
from helpers.viz import style
from helpers.viz.boxes import footer

ALLOWED_FILL = style.SKY
FORBIDDEN_FILL = "white"


def litmus_counts(recording: dict[str, Any], shape: str, scope: str, fence: bool) -> dict[tuple[int, ...], int]:
    """How often the recorded GPU showed each outcome of one configuration (missing outcomes: 0).
    KeyError names the configuration when the recording has no such row."""
    for r in recording["results"]:
        if r["shape"] == shape and r["scope"] == scope and bool(r["fence"]) == fence:
            return {tuple(int(v) for v in k.split(",")): int(c) for k, c in r["outcomes"].items()}
    raise KeyError(f"data/litmus.json has no row for shape={shape!r}, scope={scope!r}, fence={fence}")


def _program(ax: Any, x0: float, fence: bool) -> None:
    """The MP shape's two threads as code boxes (the accesses of kernels/litmus/litmus.cu's MP)."""
    lines = (["x = 1", "fence.sc" if fence else "", "y = 1"], ["r0 = y", "fence.sc" if fence else "", "r1 = x"])
    for k, (who, body) in enumerate(zip(("thread 0 (writer)", "thread 1 (reader)"), lines)):
        bx = x0 + 1.55 * k
        ax.add_patch(FancyBboxPatch((bx, 0.55), 1.35, 1.6, boxstyle="round,pad=0.03", facecolor=style.LIGHT,
                                    edgecolor=style.GREY))
        ax.text(bx + 0.675, 2.3, who, ha="center", fontsize=8)
        for j, t in enumerate(body):
            colour = style.VERMILION if t.startswith("fence") else style.BLACK
            ax.text(bx + 0.675, 1.85 - 0.5 * j, t, ha="center", va="center", fontsize=9, family="monospace",
                    color=colour)


def litmus_figure(recording: dict[str, Any], shape: str = "MP") -> Figure:
    """Message passing with and without fences: per panel the two threads' code, then one row per
    outcome (r0 = y, r1 = x): whether the PTX model allows it (:meth:`helpers.machine.litmus.Shape.allowed`:
    sky blue allowed, white with a vermilion cross forbidden) and how often the recorded GPU showed it
    at each scope (``.cta``: warps of one block; ``.gpu``: threads in different blocks). A count of 0
    for an allowed outcome means only that this GPU never showed it. ``recording``: ``data.load("litmus")``."""
    s = litmus.SHAPES[shape]
    outcomes = sorted(s.allowed(False) | s.forbidden | s.forbidden_fenced)
    fig, axes = plt.subplots(1, 2, figsize=(style.FIG_WIDTH, 3.9))
    for ax, fence in zip(axes, (False, True)):
        ax.set_xlim(0, 7.5)
        ax.set_ylim(-0.55 * len(outcomes) - 0.6, 2.7)
        ax.axis("off")
        _program(ax, 0.1, fence)
        ax.set_title("with fence.sc between each thread's accesses" if fence else "no fences (relaxed accesses)",
                     fontsize=10)
        allowed = s.allowed(fence)
        counts = {sc: litmus_counts(recording, shape, sc, fence) for sc in litmus.SCOPES}
        ax.text(3.3, 0.15, ", ".join(s.registers), ha="left", fontsize=8, color="#444444")
        ax.text(4.85, 0.15, "PTX model", ha="center", fontsize=8, color="#444444")
        for k, sc in enumerate(litmus.SCOPES):
            ax.text(6.05 + 0.95 * k, 0.15, f".{sc} seen", ha="center", fontsize=8, color="#444444")
        for i, o in enumerate(outcomes):
            y = -0.3 - 0.55 * i
            ok = o in allowed
            ax.text(3.45, y, "  ".join(str(v) for v in o), ha="left", va="center", fontsize=9, family="monospace")
            ax.add_patch(Rectangle((4.3, y - 0.2), 1.1, 0.4, facecolor=ALLOWED_FILL if ok else FORBIDDEN_FILL,
                                   edgecolor=style.BLACK if ok else style.VERMILION, linewidth=0.8))
            ax.text(4.85, y, "allowed" if ok else "✗ forbidden", ha="center", va="center", fontsize=8,
                    color=style.BLACK if ok else style.VERMILION)
            for k, sc in enumerate(litmus.SCOPES):
                ax.text(6.05 + 0.95 * k, y, f"{counts[sc].get(o, 0):,}", ha="center", va="center", fontsize=8)
    stamp = recording.get("stamp", {})
    footer(fig, f"the PTX model's outcomes: helpers.machine.litmus; counts: data/litmus.json, "
                f"{stamp.get('gpu', 'a GPU')}, {recording.get('recorded', recording.get('date', ''))}, "
                f"{recording['results'][0]['instances'] * recording['results'][0]['launches']:,} runs per cell")
    fig.subplots_adjust(left=0.01, right=0.99, top=0.9, bottom=0.08, wspace=0.05)
    return fig


# ---------------------------------------------------------------------------------------------
# The blocks of one launch on the machine

MARKS = {  # role: (colour, marker, legend label)
    "input load": (style.GREY, "o", "loads of the input"),
    "partial store": (style.BLUE, "s", "store of the block's partial"),
    "fence": (style.VERMILION, "|", "fence (membar.gl)"),
    "ticket": (style.ORANGE, "D", "atomicAdd: the ticket"),
    "partial load": (style.GREEN, "o", "loads of the partials"),
    "result store": (style.BLACK, "*", "store of the sum, reset of the counter"),
}
ROLES = {  # (kind, kernel argument) -> role, for the one-launch kernels' arguments (in, partials, counter, out, n)
    ("global load", 0): "input load", ("global store", 1): "partial store", ("global load", 1): "partial load",
    ("global store", 2): "result store", ("global store", 3): "result store",
    ("atomic", -1): "ticket", ("fence", -1): "fence",
}


@dataclass(frozen=True)
class BlockEvent:
    """One warp-instruction of interest: ``block``, ``warp`` (within the block), the machine ``step``
    it ran at, its ``kind`` (a key of :data:`MARKS`), ``ptx`` (its text) and ``arg``: the kernel
    argument a global access touched (-1: none known, e.g. an atomic or a fence)."""

    block: int
    warp: int
    step: int
    kind: str
    ptx: str
    arg: int


def _kind(ptx: str) -> Optional[str]:
    op = ptx.split()[0] if ptx.split() else ""
    if op.startswith(("membar", "fence")):
        return "fence"
    if op.startswith(("atom", "red")) and ".global" in op or op.startswith("atom."):
        return "atomic"
    if op.startswith("st.global") or op.startswith("st.") and ".global" in op:
        return "global store"
    if op.startswith("ld.global") or op.startswith("ld.") and ".global" in op:
        return "global load"
    return None


def timeline_events(trace: Any, args: Sequence[int] = ()) -> list[BlockEvent]:
    """The fences, atomics and global loads/stores of a :class:`helpers.machine.trace.MachineTrace`,
    one :class:`BlockEvent` per warp-instruction, in the machine's order. ``args``: keep global
    loads and stores only of these kernel arguments (empty: all)."""
    by_step_pc: dict[tuple[int, int], int] = {}
    mem = trace.memory
    for row in mem[~mem["shared"]]:
        by_step_pc.setdefault((int(row["step"]), int(row["pc"])), int(row["arg"]))
    out = []
    wpb = trace.warps_per_block
    for ev in trace.events:
        pc = int(ev["pc"])
        kind = _kind(trace.ptx[pc])
        if kind is None:
            continue
        arg = by_step_pc.get((int(ev["step"]), pc), -1)
        if kind in ("global store", "global load") and args and arg not in args:
            continue
        w = int(ev["warp"])
        out.append(BlockEvent(w // wpb, w % wpb, int(ev["step"]), kind, trace.ptx[pc], arg))
    return out


def block_timeline(events: Sequence[BlockEvent], title: str, source: str,
                   notes: Optional[dict[int, str]] = None) -> Figure:
    """The blocks of one launch as rows (block 0 on top), each event a mark at its machine step;
    ``notes``: a label at the right of a block's row (e.g. which ticket it drew). ``source``: the
    footer's "Computed by" text (the run the events come from). ValueError when ``events`` is empty."""
    if not events:
        raise ValueError("events is empty: the trace had no fence, atomic or global access to draw")
    blocks = sorted({e.block for e in events})
    fig, ax = plt.subplots(figsize=(style.FIG_WIDTH, 0.55 * len(blocks) + 1.6))
    steps = [e.step for e in events]
    for role, (colour, marker, label) in MARKS.items():
        sel = [e for e in events if ROLES.get((e.kind, e.arg)) == role]
        if sel:
            ax.scatter([e.step for e in sel], [blocks.index(e.block) for e in sel], marker=marker, s=36 if
                       marker != "|" else 120, color=colour, label=label, zorder=3, linewidths=1.8)
    for i, b in enumerate(blocks):
        ax.axhline(i, color=style.LIGHT, zorder=0, linewidth=6)
        if notes and b in notes:
            ax.text(max(steps) * 1.03 + 2, i, notes[b], va="center", fontsize=8)
    ax.set_yticks(range(len(blocks)), [f"block {b}" for b in blocks], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("machine step (the SIMT machine's scheduling order, not GPU time)", fontsize=9)
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right", "left"]].set_visible(False)
    ax.set_xlim(min(steps) - 2, max(steps) * 1.3 + 6)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=4, fontsize=7.5, frameon=False)
    footer(fig, source)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.88, bottom=0.32 if len(blocks) < 6 else 0.22)
    return fig


ONE_LAUNCH = {  # version: (kernel file stem, name expression, partials dtype, workspace dtype)
    "onepass": ("reduce_onepass", "reduce_onepass<{block}>", np.float32, np.uint32),
    "v9": ("reduce_v9", "reduce_v9<{block}>", np.uint64, np.uint64),
}


@dataclass(frozen=True)
class OneLaunchRun:
    """A traced machine run of a one-launch kernel: its ``events`` (:func:`timeline_events`), the
    ``last`` block (the one that read the partials: the one that drew the last ticket), the sum
    ``value`` it wrote, and ``label``: what ran, for a figure's footer."""

    version: str
    grid: int
    block: int
    serial: bool
    events: tuple[BlockEvent, ...]
    last: int
    value: float
    label: str


def run_one_launch(version: str, grid: int = 4, block: int = 128, serial: bool = False) -> OneLaunchRun:
    """Run ``version`` ("onepass" or "v9") on the SIMT machine, traced, on ``grid`` blocks of ``block``
    threads over ``4 * block * grid`` ones (one round of float4 loads per thread), its blocks all at
    once or, ``serial``, one after another, block 0 first. ValueError names a bad parameter."""
    from helpers.topics.launch import machine_module

    if version not in ONE_LAUNCH:
        raise ValueError(f"version must be one of {', '.join(ONE_LAUNCH)}; got {version!r}")
    if not 2 <= grid <= 8:
        raise ValueError(f"grid must be 2 to 8 blocks (a figure of a few rows); got {grid}")
    if block not in (64, 128, 256):
        raise ValueError(f"block must be 64, 128 or 256; got {block}")
    from helpers.topics.reduce import launch_defines

    stem, expr, slot_t, ws_t = ONE_LAUNCH[version]
    defines = launch_defines(version, stream=False)   # the defines reduce_sum uses: their PTX is shipped (no NVRTC needed)
    expr = expr.format(block=block)
    n = 4 * block * grid
    args = (np.ones(n, np.float32), np.zeros(grid, slot_t), np.zeros(1, ws_t), np.zeros(1, np.float32), np.int64(n))
    fn = machine_module(stem, (expr,), defines).get_function(expr)
    report = fn((grid,), (block,), args, trace=True, serial=serial)
    events = tuple(timeline_events(report.trace))
    readers = {e.block for e in events if e.kind == "global load" and e.arg == 1}
    if len(readers) != 1:
        raise RuntimeError(f"expected one block to read the partials, the trace shows {sorted(readers)}")
    order = "one after another, block 0 first" if serial else "all at once"
    label = (f"the SIMT machine, kernels/{stem}.cu ({expr}), {grid} blocks of {block} on n = {n:,} ones, "
             f"blocks run {order}; sum {float(args[3][0]):,.0f}")
    return OneLaunchRun(version, grid, block, serial, events, readers.pop(), float(args[3][0]), label)


def tickets(run: OneLaunchRun) -> dict[int, int]:
    """Which ticket each block drew, where the trace shows it: the counter starts at 0 and each
    atomicAdd adds 1, so the k-th atomic in the machine's order returns k. Only when every block's
    atomic ran at its own machine step (empty otherwise: atomics of one step have no order in the
    trace)."""
    atoms = sorted((e.step, e.block) for e in run.events if e.kind == "atomic")
    if len({s for s, _ in atoms}) != len(atoms):
        return {}
    return {b: k for k, (_, b) in enumerate(atoms)}


def one_launch_figure(run: OneLaunchRun) -> Figure:
    """:func:`block_timeline` of a :func:`run_one_launch` run, with each block's ticket (where the
    trace orders them, :func:`tickets`) and an arrow from every block's partial store to the last
    block's first read of the partials: the reads that the ticket and the fences order after those stores."""
    got = tickets(run)
    notes = {b: f"ticket {k}" + (" (the last): adds" if b == run.last else "") for b, k in got.items()}
    if not got:
        notes = {run.last: "drew the last ticket: adds the partials"}
    what = {"onepass": "onepass (last-block-done)", "v9": "v9 (ticket first, slots, poll)"}[run.version]
    order = "one after another" if run.serial else "all at once"
    fig = block_timeline(run.events, f"{what}: {run.grid} blocks, run {order} on the SIMT machine", run.label, notes)
    ax = fig.axes[0]
    blocks = sorted({e.block for e in run.events})
    reads = [e.step for e in run.events if e.block == run.last and ROLES.get((e.kind, e.arg)) == "partial load"]
    for e in run.events:
        if ROLES.get((e.kind, e.arg)) == "partial store" and reads:
            ax.annotate("", (min(reads), blocks.index(run.last)), (e.step, blocks.index(e.block)),
                        arrowprops=dict(arrowstyle="->", color=style.ARROW, linewidth=0.9, alpha=0.7,
                                        shrinkA=4, shrinkB=4), zorder=2)
    return fig
