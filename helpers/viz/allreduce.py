"""Figures and text tables of notebook 08: an all-reduce drawn as ranks (rows) by chunks (cells), one
frame per step, and the charts of what each rank sends and of the NCCL recording.

The visual language is the series' (:mod:`helpers.viz.style`): a message is an arrow from the sending
rank's cell to the receiving rank's cell (blue); a cell written in this step has a blue outline;
the complete sum is green (the result); a partial sum is sky blue; a rank's own, not yet reduced
input is white; a value nobody reads any more is faded (white, grey outline), as in the warp
figures; a chunk followed through the steps is a shaded band. Every frame is drawn from an
:class:`helpers.topics.allreduce.AllReduceRun` (the emulator's trace), never from hand-written numbers.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from helpers.topics import allreduce as A
from helpers import data
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.viz import style
from helpers.viz.boxes import format_value
from helpers.viz.render import LaneFigure

PX, PY = 1.35, 1.3          # chunk pitch and rank pitch, in data units
CW, CH = 1.0, 0.72          # a cell
BOW = 0.3                   # how far an arrow between non-adjacent ranks bows out to the right
SOURCE = "the emulator (simulated ranks on the CPU)"
OWN_FILL = "white"
PARTIAL_FILL = style.LANE_FILL


def members_label(members: np.ndarray) -> str:
    """The ranks whose inputs a cell holds, as a (cyclic) interval: ``"2"``, ``"0–3"``, ``"6–1"`` (6, 7, 0, 1)."""
    n = len(members)
    idx = np.flatnonzero(members)
    if len(idx) == 0:
        return ""
    if len(idx) == n:
        return f"0–{n - 1}" if n > 1 else "0"
    for start in idx:   # a cyclic interval starting at `start` covers exactly the members
        span = [(start + k) % n for k in range(len(idx))]
        if set(span) == set(idx.tolist()):
            return str(start) if len(idx) == 1 else f"{start}–{span[-1]}"
    return f"{len(idx)} of {n}"


def _cell_xy(chunk: int, rank: int) -> tuple[float, float]:
    return chunk * PX, -rank * PY


def _arrow(ax: Axes, t: A.Transfer) -> None:
    x, ys = _cell_xy(t.chunk, t.src)
    _, yd = _cell_xy(t.chunk, t.dst)
    if abs(t.src - t.dst) == 1:   # neighbouring rows: straight through the gap between them
        sign = 1 if yd > ys else -1
        arrow = FancyArrowPatch((x, ys + sign * CH / 2), (x, yd - sign * CH / 2), arrowstyle="-|>",
                                mutation_scale=8, shrinkA=0, shrinkB=0, color=style.ARROW, linewidth=1.1, zorder=4)
    else:                         # farther: an arc out to the right of the column, clear of the cells between
        start, end = (x + CW / 2, ys), (x + CW / 2, yd)
        to_px = ax.transData.transform
        dx_px = abs(to_px((BOW, 0))[0] - to_px((0, 0))[0])
        dy_px = to_px(end)[1] - to_px(start)[1]
        rad = 2 * dx_px / dy_px   # arc3 bows by rad * |dy| / 2 to the right when going up (left if down)
        arrow = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=8, shrinkA=0, shrinkB=0,
                                connectionstyle=f"arc3,rad={rad:.4f}", color=style.ARROW, linewidth=1.1, zorder=4)
    render.add_patch(ax, arrow, clip=False)


def _legend(fig: Figure, keys: Sequence[str]) -> None:
    makers = {
        "own": lambda: Patch(facecolor=OWN_FILL, edgecolor=style.BLACK, linewidth=0.6, label="own input only"),
        "partial": lambda: Patch(facecolor=PARTIAL_FILL, edgecolor=style.BLACK, linewidth=0.6,
                                 label="partial sum (of the ranks named)"),
        "complete": lambda: Patch(facecolor=style.RESULT, edgecolor=style.BLACK, linewidth=0.6, label="complete sum"),
        "written": lambda: Patch(facecolor="white", edgecolor=style.ARROW, linewidth=2.0, label="written in this step"),
        "arrow": lambda: Line2D([], [], color=style.ARROW, marker=">", markersize=4, label="message: sender → receiver"),
        "faded": lambda: Patch(facecolor="white", edgecolor=style.INACTIVE, label="value nobody reads"),
        "empty": lambda: Patch(facecolor="white", edgecolor=style.INACTIVE, linestyle="--", label="empty chunk"),
        "followed": lambda: Patch(facecolor=style.SEGMENT_BANDS[1], edgecolor="none", label="followed chunk"),
    }
    handles = [makers[k]() for k in keys]
    render.stamped_legend(fig, handles, ("allreduce", tuple(keys)), loc="lower center", bbox_to_anchor=(0.5, 0.035),
                           ncol=min(len(handles), 4), fontsize=7, frameon=False, handlelength=1.6, columnspacing=1.2)


def _figure_height(n_ranks: int) -> float:
    return 2.1 + 0.48 * n_ranks


def _axes(fig: Figure, n_ranks: int) -> Axes:
    h = _figure_height(n_ranks)
    bottom, top = 1.0 / h, 0.6 / h   # room for the legend and footer below, the title above
    return fig.add_axes((0.1, bottom, 0.88, 1 - bottom - top))


def _rank_note(sched: A.Schedule, r: int) -> str:
    if sched.n_ranks == 1:
        return "alone"
    if sched.parent is None:
        return f"sends to {(r + 1) % sched.n_ranks}"
    return "root" if sched.parent[r] < 0 else f"parent {sched.parent[r]}"


def draw_frame(fig: Figure, run: A.AllReduceRun, step: int, *, follow: Optional[int] = None,
               source_label: str = SOURCE) -> None:
    """Draw ``step`` of ``run`` on the (empty) ``fig``: what every rank holds for every chunk after the
    step, the step's messages as arrows, and the step's label in the title.

    Cells name the ranks whose inputs they hold; when every chunk is one element (at most 8 chunks) and
    ``run`` kept its history, the value is written too. ``follow`` shades one chunk's column.

    Speed (the explorer redraws this on every move of a slider): the cells and arrows are added
    without matplotlib's per-patch bookkeeping, and the texts are drawn from stamps
    (:func:`helpers.viz.render.add_patch`, :class:`helpers.viz.render.LaneTexts`).
    """
    sched = run.schedule
    step = A.check_step(sched, step)
    if follow is not None:
        A.check_chunk(sched, follow, "follow (the chunk to follow)")
    n, c = sched.n_ranks, sched.n_chunks
    members = A.contributors(sched)[step]
    useful = A.meaningful(sched)[step]
    sizes = [b - a for a, b in run.bounds]
    ts = sched.transfers(step)
    written = {(t.dst, t.chunk) for t in ts if sizes[t.chunk]}
    show_values = run.held is not None and all(s == 1 for s in sizes) and c <= 8
    ax = _axes(fig, n)
    ax.set_xlim(-1.9, (c - 1) * PX + CW / 2 + 0.45)
    ax.set_ylim(-(n - 1) * PY - CH / 2 - 0.25, CH / 2 + 0.75)
    ax.set_axis_off()
    if follow is not None:
        x, _ = _cell_xy(follow, 0)
        render.add_patch(ax, Rectangle((x - CW / 2 - 0.12, -(n - 1) * PY - CH / 2 - 0.12), CW + 0.24,
                                        (n - 1) * PY + CH + 0.24, facecolor=style.SEGMENT_BANDS[1], edgecolor="none",
                                        zorder=0), clip=False)
    texts = render.LaneTexts(ax, zorder=3)
    present = set()
    for r in range(n):
        for k in range(c):
            x, y = _cell_xy(k, r)
            count = int(members[r, k].sum())
            if sizes[k] == 0:
                face, edge, text, ls, label = "white", style.INACTIVE, "#999999", "--", "empty"
                present.add("empty")
            else:
                ls, label = "-", members_label(members[r, k])
                kind = "complete" if count == n and n > 1 else "own" if count == 1 else "partial"
                face = {"complete": style.RESULT, "own": OWN_FILL, "partial": PARTIAL_FILL}[kind]
                edge, text = style.BLACK, "white" if kind == "complete" else style.BLACK
                if useful[r, k]:
                    present.add(kind)
                else:   # drawn faded, whatever it holds: the legend names only what is visible
                    face, edge, text = "white", style.INACTIVE, "#999999"
                    present.add("faded")
            lw = 0.6
            if (r, k) in written:
                edge, lw = style.ARROW, 2.0
            render.add_patch(ax, Rectangle((x - CW / 2, y - CH / 2), CW, CH, facecolor=face, edgecolor=edge,
                                            linewidth=lw, linestyle=ls, zorder=2), clip=False)
            if show_values and sizes[k]:   # one text artist per cell: text is most of the drawing time
                label += "\n" + format_value(run.held[step, r, run.bounds[k][0]])
            texts.add(x, y, label, fontsize=6.5, color=text, linespacing=1.3)
        _, y = _cell_xy(0, r)
        texts.add(-CW / 2 - 0.2, y, f"rank {r}\n{_rank_note(sched, r)}", ha="right", fontsize=6.5, color=style.BLACK,
                  linespacing=1.4)
    for k in range(c):
        x, _ = _cell_xy(k, 0)
        a, b = run.bounds[k]
        span = "no elements" if a == b else f"[{a}]" if b == a + 1 else f"[{a}..{b - 1}]"
        texts.add(x, CH / 2 + 0.32, f"chunk {k}\n{span}", fontsize=6, linespacing=1.3, color="#333333")
    for t in ts:
        if sizes[t.chunk]:
            _arrow(ax, t)
    m = run.inputs.shape[1]
    fig.text(0.5, 1 - 0.32 / _figure_height(n),
             f"{sched.algorithm} all-reduce · {n} rank{'s' if n > 1 else ''} · {m} element{'s' if m > 1 else ''}"
             f" — step {step} of {sched.n_steps}\n{sched.labels[step]}", ha="center", va="center", fontsize=8.5,
             linespacing=1.5)
    keys = [k for k in ("own", "partial", "complete") if k in present] + (["written", "arrow"] if ts else [])
    keys += [k for k in ("faded", "empty") if k in present] + (["followed"] if follow is not None else [])
    _legend(fig, keys)
    fig.text(0.005, 0.008, f"Computed by: {source_label}", fontsize=7, color="#444444", ha="left", va="bottom")


def frame_figure(run: A.AllReduceRun, step: int, *, follow: Optional[int] = None,
                 source_label: str = SOURCE) -> Figure:
    """One step of ``run`` as a figure (the same picture as one frame of :func:`animation`)."""
    A.check_step(run.schedule, step)
    fig = LaneFigure(figsize=(style.FIG_WIDTH, _figure_height(run.schedule.n_ranks)))
    draw_frame(fig, run, step, follow=follow, source_label=source_label)
    return fig


def animation(run: A.AllReduceRun, *, interval: int = 900, follow: Optional[int] = None,
              dpi: int = 80) -> FuncAnimation:
    """``run`` animated, one frame per step from the input to the result (at most MAX_FRAMES frames).

    Show it with ``HTML(helpers.viz.lanes.animation_html(anim))`` in a cell marked
    ``# NBVAL_IGNORE_OUTPUT`` (the frames differ byte for byte between runs). ``dpi`` sets the frames'
    resolution (they are rendered one by one when the HTML is made).
    """
    fig = LaneFigure(figsize=(style.FIG_WIDTH, _figure_height(run.schedule.n_ranks)), dpi=dpi)

    def draw(step: int) -> list:
        fig.clear()
        draw_frame(fig, run, step, follow=follow)
        return []

    return FuncAnimation(fig, draw, frames=figures.frame_steps(run.schedule.n_steps + 1), interval=interval, blit=False,
                         repeat=True, cache_frame_data=False)


# ---------------------------------------------------------------- text


def cells_text(run: A.AllReduceRun, step: int) -> str:
    """What every rank holds for every chunk after ``step``: the ranks summed in (``*`` marks a value
    nobody reads any more, ``-`` an empty chunk). Deterministic, for notebook outputs."""
    sched = run.schedule
    A.check_step(sched, step)
    members, useful = A.contributors(sched)[step], A.meaningful(sched)[step]
    sizes = [b - a for a, b in run.bounds]
    cells = [[("-" if not sizes[k] else members_label(members[r, k]) + ("" if useful[r, k] else "*"))
              for k in range(sched.n_chunks)] for r in range(sched.n_ranks)]
    w = max(7, *(len(s) for row in cells for s in row))
    lines = [f"{'':<8}" + "".join(f"{'chunk ' + str(k):>{w + 1}}" for k in range(sched.n_chunks))]
    lines += [f"rank {r:<3}" + "".join(f"{s:>{w + 1}}" for s in row) for r, row in enumerate(cells)]
    return "\n".join(lines)


def transfers_text(sched: A.Schedule, step: int) -> str:
    """The messages of ``step``, one per line group: ``rank 0 -> 1: chunk 0, adds``."""
    ts = sched.transfers(step)
    if not ts:
        return "no messages (the input)" if step == 0 else "no messages"
    verb = {"add": "adds it", "copy": "copies it"}
    return "\n".join(f"rank {t.src} -> rank {t.dst}: chunk {t.chunk}, the receiver {verb[t.op]}" for t in ts)


def steps_text(sched: A.Schedule) -> str:
    """One line per step: its number and label."""
    w = len(str(sched.n_steps))
    return "\n".join(f"{k:>{w}}  {label}" for k, label in enumerate(sched.labels))


# ---------------------------------------------------------------- charts


def traffic_chart(rank_counts: Sequence[int] = (2, 4, 8, 16), n_elements: int = 1 << 12) -> Figure:
    """Most bytes any one rank sends, in units of the buffer S, per algorithm and rank count, with NCCL's
    2 (n - 1) / n marked: the same numbers as :func:`helpers.topics.allreduce.traffic_table`."""
    size = 4 * n_elements
    series = {
        "ring": [A.bytes_moved(A.ring_schedule(n), n_elements)[0].max() / size for n in rank_counts],
        "binary tree": [A.bytes_moved(A.tree_schedule(n), n_elements)[0].max() / size for n in rank_counts],
        "double binary tree": [A.tree_bytes_sent(n, size, double=True).max() / size for n in rank_counts],
        "reduce to rank 0, broadcast": [A.reduce_broadcast_bytes_sent(n, size).max() / size for n in rank_counts],
    }
    colours = (style.BLUE, style.ORANGE, style.PURPLE, style.VERMILION)
    fig = LaneFigure(figsize=(style.FIG_WIDTH, 3.4))
    ax = fig.add_axes((0.08, 0.16, 0.9, 0.72))
    x = np.arange(len(rank_counts))
    width = 0.2
    for i, ((name, vals), col) in enumerate(zip(series.items(), colours)):
        bars = ax.bar(x + (i - 1.5) * width, vals, width, label=name, color=col)
        ax.bar_label(bars, labels=[f"{v:.3g}" for v in vals], fontsize=6, padding=1)
    ax.plot(x, [A.busbw_factor(n) for n in rank_counts], "k_", markersize=28, markeredgewidth=1.5)
    best = Line2D([], [], color=style.BLACK, linewidth=1.5, label="2(n-1)/n: the best case in NCCL's performance notes")
    ax.set_xticks(x, [f"{n} ranks" for n in rank_counts])
    ax.set_ylabel("bytes sent by the busiest rank / S", fontsize=8)
    ax.set_ylim(0, 1.1 * max(max(v) for v in series.values()))
    ax.tick_params(labelsize=7)
    ax.legend(handles=[*ax.get_legend_handles_labels()[0], best], fontsize=7, frameon=False, ncol=3, loc="upper left")
    ax.set_title("What the busiest rank sends in one all-reduce of S bytes (counted from the schedules)", fontsize=9)
    fig.text(0.005, 0.008, f"Computed by: {SOURCE}", fontsize=7, color="#444444", ha="left", va="bottom")
    return fig


def regimes(rec: dict[str, Any]) -> tuple[list[int], list[int]]:
    """(latency-bound sizes, bandwidth-bound sizes) of a recording: where doubling the message raises the
    device time by less than 1.25x, and where by more than 1.8x (close to proportional)."""
    rows = rec["sweep"]
    lat, bw = [], []
    for a, b in zip(rows, rows[1:]):
        ratio = b["device_us"] / a["device_us"]
        (lat if ratio < 1.25 else bw if ratio > 1.8 else []).append(b["bytes"])
    return lat, bw


def sweep_chart(rec: dict[str, Any]) -> Figure:
    """Time and bandwidth against message size for a multi-GPU recording: device time (left) and
    algbw and busbw (right), with the latency- and bandwidth-bound ranges shaded (:func:`regimes`).

    Raises ValueError for a world of 1 (a copy: there is no communication to chart).
    """
    if not A.is_multi_gpu(rec):
        raise ValueError("sweep_chart needs a multi-GPU recording (world size >= 2); this one has world size "
                         f"{rec['world_size']}, a copy")
    rows = rec["sweep"]
    size = np.array([r["bytes"] for r in rows], float)
    fig = LaneFigure(figsize=(style.FIG_WIDTH, 3.6))
    left = fig.add_axes((0.07, 0.17, 0.4, 0.7))
    right = fig.add_axes((0.57, 0.17, 0.4, 0.7))
    lat, bw = regimes(rec)
    for ax in (left, right):
        for sizes, colour, label in ((lat, style.SKY, "latency rules"), (bw, style.YELLOW, "bandwidth rules")):
            if sizes:
                ax.axvspan(min(sizes) / 1.4, max(sizes) * 1.4, color=colour, alpha=0.25, lw=0, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.tick_params(labelsize=7)
        ax.set_xlabel("message size (bytes)", fontsize=8)
    left.plot(size, [r["device_us"] for r in rows], "o-", color=style.BLUE, markersize=3, label="device time")
    left.set_ylabel("µs per all-reduce", fontsize=8)
    right.plot(size, [max(r["algbw_GBps"], 1e-4) for r in rows], "o-", color=style.ORANGE, markersize=3, label="algbw S/t")
    right.plot(size, [max(r["busbw_GBps"], 1e-4) for r in rows], "o-", color=style.GREEN, markersize=3,
               label="busbw = algbw·2(n-1)/n")
    right.set_ylabel("GB/s", fontsize=8)
    for ax in (left, right):
        ax.legend(fontsize=7, frameon=False)
    fig.suptitle(f"NCCL all-reduce, {rec['world_size']} ranks, float32 sum", fontsize=9)
    fig.text(0.005, 0.008, data.label(rec["stamp"]), fontsize=7, color="#444444", ha="left", va="bottom")
    return fig
