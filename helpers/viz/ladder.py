"""Figures of the reduction ladder: benchmark charts drawn from a run (live or recorded), and maps
drawn from :mod:`helpers.topics.reduce_maps` (measured: the SIMT machine's trace of the real kernels).
Never from typed-in numbers.

Colours and conventions come from :mod:`helpers.viz.style`: a warp is a row of 32 lanes, warps are
stacked; working lanes are filled, idle lanes grey.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from helpers.topics import reduce_maps
from helpers.viz import style
from helpers.bench import (COPY, CUPY_SUM, SEED, best_kernel, describe, graph_time_usable, rows_for, size_label,
                           version_row)
from helpers.topics.reduce import LADDER, VERSIONS

_WORK = style.LANE_FILL
_IDLE = style.INACTIVE
_YOURS = style.BLACK       # a learner's own GPU beside the recording (square markers, bars outlined)


# ---------------------------------------------------------------------------------------------
# Benchmark charts

def ladder_chart(results: dict[str, Any], n: int = 2**25, ax: Optional[plt.Axes] = None,
                 yours: Optional[dict[str, Any]] = None, versions: Sequence[str] = VERSIONS,
                 copy: bool = True, seed: bool = True) -> Figure:
    """GB/s of each of ``versions`` at size ``n`` (bytes read once / device time, both passes), as
    bars, with cupy.sum as a line; ``copy`` adds the copy (a reference point: read + write bytes)
    as a line, ``seed`` the seed kernel's first pass (outlined bars, at 128 and 256 threads). A
    notebook that has introduced only some versions passes those (05: ``LADDER``, no copy, no seed).
    The legend sits above every line; a bar's value label that would cross a line goes inside the
    bar, under its top.

    ``yours``: a learner's own ladder run (:func:`helpers.bench.load_local`): each of its versions
    at ``n`` as a narrow black bar beside the recording's, its cupy.sum as a black line; None
    draws the chart alone."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(style.FIG_WIDTH, 4.2))
    else:
        fig = ax.figure
    rows = [r for r in (version_row(results, n, v) for v in versions) if r is not None]
    if not rows:
        raise ValueError(f"n must be a size of this run ({', '.join(size_label(s) for s in results.get('sizes', []))}); "
                         f"got {size_label(n)}")
    best = best_kernel(results, n)
    names = [r["name"] + ("" if r["block"] == results.get("block") else f"\n<{r['block']}>") for r in rows]
    values = [r["gbps"] for r in rows]
    colours = [style.RESULT if best is not None and r is best else style.SKY if r["name"] in LADDER else style.BLUE
               for r in rows]
    bars = list(ax.bar(names, values, color=colours, edgecolor=style.BLACK, linewidth=0.5))
    seeds = sorted(rows_for(results, n, SEED), key=lambda r: r["block"]) if seed else []
    for row in seeds:
        # outlined, not hatched: hatching means "undefined" in this series
        b = ax.bar([f"seed\n<{row['block']}>"], [row["first_pass_gbps"]], color="white",
                   edgecolor=style.VERMILION, linewidth=1.8)
        bars += list(b)
        values.append(row["first_pass_gbps"])
    top = max(values)
    if yours is not None:
        top = max(top, _draw_yours_ladder(ax, yours, n, rows, bars[:len(rows)]))
    lines = ((CUPY_SUM, style.BLUE, "--", "cupy.sum (CUB)"),) + (
        ((COPY, style.BLACK, ":", "copy (a reference point: read + write bytes)"),) if copy else ())
    for name, colour, ls, label in lines:
        ref = [r for r in rows_for(results, n, name) if graph_time_usable(r)]
        if ref:
            ax.axhline(ref[0]["gbps"], color=colour, linestyle=ls, linewidth=1.2,
                       label=f"{label}: {ref[0]['gbps']:,.0f} GB/s")
            top = max(top, ref[0]["gbps"])
    ax.set_ylim(0, top * 1.45)  # room above the highest line and bar for the legend
    ax.set_ylabel("GB/s (4 n bytes / device time)")
    ax.set_title(f"Sum of {size_label(n)} float32, block {results.get('block')}: device time, both passes",
                 fontsize=11)
    handles, labels = ax.get_legend_handles_labels()
    if seeds:
        handles.append(Patch(facecolor="white", edgecolor=style.VERMILION, linewidth=1.8))
        labels.append("the seed's reduce_v4, first pass only (outlined)")
    ax.legend(handles, labels, loc="upper left", fontsize=8, frameon=False, ncol=2)
    ax.tick_params(axis="x", labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    shown = [r["name"] for r in rows]      # the footer names the versions drawn, not every one the run holds

    def source(run: dict[str, Any]) -> str:
        return describe(dict(run, versions=[v for v in run.get("versions", []) if v in shown]))

    _footer(fig, source(results) + (f". Your GPU (black): {source(yours)}" if yours is not None else ""))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _value_labels(ax, bars, values, [float(line.get_ydata()[0]) for line in ax.get_lines()])
    return fig


def _value_labels(ax: plt.Axes, bars: Sequence[Any], values: Sequence[float], lines: Sequence[float]) -> None:
    """Each bar's value, 8 pt, above its top; where that would cross one of the horizontal
    ``lines`` (GB/s), inside the bar under its top; where that would too, above the line. Call
    after the axes' limits and layout are final: a label's height in data units follows from them."""
    fig = ax.figure
    height_pt = ax.get_position().height * fig.get_figheight() * 72
    per_pt = (ax.get_ylim()[1] - ax.get_ylim()[0]) / height_pt
    label = 12 * per_pt          # a 2 pt offset and an 8 pt label, with a point to spare either side

    def crosses(lo: float, hi: float) -> list[float]:
        return [y for y in lines if lo <= y <= hi]

    for bar, v in zip(bars, values):
        x = bar.get_x() + bar.get_width() / 2
        if not crosses(v - per_pt, v + label):
            y, va, dy = v, "bottom", 2
        elif not crosses(v - label, v + per_pt):
            y, va, dy = v, "top", -2
        else:
            y, va, dy = max(crosses(v - label, v + label)), "bottom", 2
        ax.annotate(f"{v:,.0f}", (x, y), ha="center", va=va, fontsize=8, xytext=(0, dy),
                    textcoords="offset points")


def _draw_yours_ladder(ax: plt.Axes, yours: dict[str, Any], n: int, rows: Sequence[dict[str, Any]],
                       bars: Sequence[Any]) -> float:
    """A learner's run at ``n``: a narrow outlined bar on the right half of each recorded
    version's bar, and its cupy.sum as a line; returns the highest GB/s drawn (0 when none)."""
    from helpers.bench import ceiling_of

    gpu = ceiling_of(yours).gpu
    top, labelled = 0.0, False
    for row, bar in zip(rows, bars):
        mine = version_row(yours, n, row["name"])
        if mine is None or not isinstance(mine.get("gbps"), (int, float)):
            continue
        x = bar.get_x() + bar.get_width() / 2
        ax.bar([x + bar.get_width() / 4], [mine["gbps"]], width=bar.get_width() / 2, color="white",
               edgecolor=_YOURS, linewidth=1.2, label=None if labelled else f"your GPU ({gpu})")
        labelled, top = True, max(top, mine["gbps"])
    ref = [r for r in rows_for(yours, n, CUPY_SUM) if graph_time_usable(r)]
    if ref:
        ax.axhline(ref[0]["gbps"], color=_YOURS, linestyle="-.", linewidth=1.0,
                   label=f"your GPU's cupy.sum: {ref[0]['gbps']:,.0f} GB/s")
        top = max(top, ref[0]["gbps"])
    return top


def _footer(fig: Figure, text: str) -> None:
    """The source line under a chart, wrapped so it never runs off the figure."""
    import textwrap

    fig.text(0.01, 0.005, "\n".join(textwrap.wrap(text, 170)), fontsize=7, color="#555555")


def regimes(results: dict[str, Any]) -> list[tuple[str, int, int]]:
    """``(name, first size, last size)`` of the three regimes of a sweep, from its data: "launch
    cost" while the best kernel takes less than twice its time at the smallest size, "L2" while
    the input (4 n bytes) fits in the GPU's L2 (``l2_bytes`` of the run), "HBM" beyond."""
    sizes = sorted(results.get("sizes", []))
    best = {n: best_kernel(results, n) for n in sizes}
    sizes = [n for n in sizes if best[n]]
    if not sizes:
        return []
    floor = best[sizes[0]]["total_us"]
    l2 = results.get("l2_bytes") or 0
    kinds = ["launch cost" if best[n]["total_us"] < 2 * floor else "L2" if 4 * n <= l2 else "HBM" for n in sizes]
    out: list[tuple[str, int, int]] = []
    for n, kind in zip(sizes, kinds):
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1], n)
        else:
            out.append((kind, n, n))
    return out


def sweep_chart(results: dict[str, Any], yours: Optional[dict[str, Any]] = None) -> Figure:
    """Against size, for each kernel of a sweep, cupy.sum, the copy and the empty kernel: device
    time (top left) beside host-inclusive time (top right), and GB/s from device time (bottom),
    with the regimes (launch cost, L2, HBM) shaded, the cupy.sum floor marked as launch cost, and
    the GPU's memory ceiling (:func:`helpers.bench.ceiling_of`, named). A row whose device time is
    longer than its host-inclusive time (:func:`helpers.bench.graph_time_usable`) is left out of
    the device-time panels, and the footer says which.

    ``yours``: a learner's own sweep (:func:`helpers.bench.load_local`), drawn in the GB/s panel
    beside it (its best kernel, its cupy.sum and its ceiling); None draws the chart alone."""
    from helpers.bench import EMPTY, ceiling_of

    fig = plt.figure(figsize=(style.FIG_WIDTH, 7.4))
    grid = fig.add_gridspec(2, 2, height_ratios=(1, 1))
    ax_dev, ax_host, ax_bw = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
    names = list(results.get("versions", [])) + [CUPY_SUM, COPY, EMPTY]
    colours = dict(zip(results.get("versions", []), (style.GREEN, style.ORANGE, style.PURPLE, style.VERMILION, style.SKY)))
    colours.update({CUPY_SUM: style.BLUE, COPY: style.BLACK, EMPTY: style.GREY})
    dropped: list[str] = []
    for name in names:
        rows = sorted((r for r in results["rows"] if r["name"] == name and (name != "v9" or r.get("default_block", True))),
                      key=lambda r: r["n"])
        if not rows:
            continue
        ns = np.array([r["n"] for r in rows], float)
        ls = ":" if name == COPY else "--" if name == CUPY_SUM else "-."  if name == EMPTY else "-"
        label = "copy (read + write bytes; a reference point)" if name == COPY else name
        kw = dict(marker="o", ms=2.5, color=colours.get(name, style.BLACK), label=label, linewidth=1.2)
        if all("host_us" in r for r in rows):
            ax_host.plot(ns, [r["host_us"] for r in rows], ls, **kw)
        usable = [r for r in rows if graph_time_usable(r)]   # device-time panels: the graph ran the call
        dropped += [f"{name} at {size_label(r['n'])}" for r in rows if not graph_time_usable(r)]
        ns = np.array([r["n"] for r in usable], float)
        ax_dev.plot(ns, [r["total_us"] for r in usable], ls, **kw)
        if name != EMPTY:
            ax_bw.plot(ns, [r["gbps"] for r in usable], ls, **kw)
    shades = {"launch cost": style.LIGHT, "L2": "#E8F4FB", "HBM": "#FFF4E0"}
    sizes = sorted(results.get("sizes", []))
    for kind, lo, hi in regimes(results):
        i_lo, i_hi = sizes.index(lo), sizes.index(hi)
        x0 = lo / 2**0.5 if i_lo == 0 else (sizes[i_lo - 1] * lo) ** 0.5
        x1 = hi * 2**0.5 if i_hi == len(sizes) - 1 else (hi * sizes[i_hi + 1]) ** 0.5
        for ax in (ax_dev, ax_host, ax_bw):
            ax.axvspan(x0, x1, color=shades[kind], zorder=0, linewidth=0)
        ax_bw.text((x0 * x1) ** 0.5, 0.98, kind + (" dominates" if kind != "launch cost" else ""),
                   transform=ax_bw.get_xaxis_transform(), ha="center", va="top", fontsize=8, color="#444444")
    floor = [r for r in results["rows"] if r["name"] == CUPY_SUM]
    if floor:
        low = min(floor, key=lambda r: r["n"])
        ax_dev.annotate(f"cupy.sum at 2^{int(low['n']).bit_length() - 1}: {low['total_us']:.1f} µs\n(launch cost, not bytes)", (low["n"], low["total_us"]),
                        xytext=(12, 22), textcoords="offset points", fontsize=7.5, color=style.BLUE,
                        arrowprops=dict(arrowstyle="-", color=style.BLUE, linewidth=0.8))
    ceilings = [ceiling_of(results).tbps]
    if ceilings[0] is not None:
        ax_bw.axhline(ceilings[0] * 1e3, color=style.VERMILION, linestyle="--", linewidth=1.0)
        ax_bw.text(sizes[0] if sizes else 1, ceilings[0] * 1e3, f"  {ceiling_of(results).label}: the ceiling for data read from HBM",
                   va="bottom", fontsize=8, color=style.VERMILION)
    if yours is not None:
        ceilings.append(_draw_yours_sweep(ax_bw, yours))
    for ax in (ax_dev, ax_host, ax_bw):
        ax.set_xscale("log", base=2)
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=8)
    for ax in (ax_dev, ax_host):
        ax.set_yscale("log")
    ax_bw.set_xlabel("float32 elements")
    ax_dev.set_ylabel("device time, µs (graph replay)", fontsize=9)
    ax_host.set_ylabel("host-inclusive time, µs (call to result)", fontsize=9)
    ax_bw.set_ylabel("GB/s (4 n bytes / device time)", fontsize=9)
    top = max([1e3 * c for c in ceilings if c is not None]
              + [r["gbps"] for run in (results, yours or {"rows": []}) for r in run["rows"] if isinstance(r.get("gbps"), (int, float))])
    ax_bw.set_ylim(0, top * 1.12)
    ax_dev.set_title("Device time: what the GPU spends", fontsize=10)
    ax_host.set_title("Host-inclusive time: what a Python caller waits", fontsize=10)
    handles, labels = ax_bw.get_legend_handles_labels()
    handles.append(Line2D([], [], linestyle="-.", marker="o", ms=2.5, color=colours[EMPTY]))
    labels.append("empty kernel (time panels): one launch")
    ax_bw.legend(handles, labels, fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(0.0, 0.42))
    note = (f"; left out of the device-time panels (graph replay longer than the call's host-inclusive time): "
            f"{', '.join(dropped)}" if dropped else "")
    _footer(fig, describe(results) + note + (f". Your GPU (GB/s panel): {describe(yours)}" if yours is not None else ""))
    fig.tight_layout(rect=(0, 0.03 if yours is None else 0.06, 1, 1))   # room for the longer footer
    return fig


def _draw_yours_sweep(ax: plt.Axes, yours: dict[str, Any]) -> Optional[float]:
    """A learner's sweep in the GB/s panel: its best kernel per size, its cupy.sum and its ceiling
    (returned, TB/s, None when unknown), labelled with its GPU."""
    from helpers.bench import ceiling_of

    gpu = ceiling_of(yours).gpu
    best = [b for b in (best_kernel(yours, n) for n in sorted(yours.get("sizes", []))) if b and graph_time_usable(b)]
    if best:
        ax.plot([b["n"] for b in best], [b["gbps"] for b in best], "-", marker="s", ms=3, color=_YOURS,
                linewidth=2.0, label=f"your GPU ({gpu}): best kernel")
    sums = sorted((r for r in yours["rows"] if r["name"] == CUPY_SUM and graph_time_usable(r)), key=lambda r: r["n"])
    if sums:
        ax.plot([r["n"] for r in sums], [r["gbps"] for r in sums], "--", marker="s", ms=2, color=_YOURS, linewidth=1.0,
                label=f"your GPU ({gpu}): cupy.sum")
    top = ceiling_of(yours)
    if top.tbps is not None:
        ax.axhline(top.tbps * 1e3, color=_YOURS, linestyle=(0, (1, 3)), linewidth=1.0,
                   label=f"your GPU's ceiling: {top.label}")
    return top.tbps


# ---------------------------------------------------------------------------------------------
# Maps measured on the SIMT machine (helpers.topics.reduce_maps)

def lanes_figure(version: str, block: int = 256, max_steps: Optional[int] = None) -> Figure:
    """Which lanes of each warp executed the add at each step of ``version``'s tree (warps stacked,
    32 lanes per row), measured on the SIMT machine. Filled: working; grey: idle. A red tick marks
    a divergent warp (some lanes in the branch, some not).

    One panel per step, four to a row, lane numbers under the bottom panel of each column and warp
    numbers left of each row; a warp's row is 0.16 inch high up to 8 warps, and the panel grows by
    0.04 inch a warp beyond (square lanes at 32 warps).

    Speed (the ladder explorer draws the map of every version and block it is asked for): the
    figure is one Axes measured in inches; the working lanes are rectangles in one collection (a run
    of working lanes repeated in consecutive warps is one rectangle), and the labels are drawn from
    stamps (:class:`helpers.viz.render.LaneTexts`). An Axes per panel, with its ticks, and an image
    per panel, resampled at every drawing, cost more than the rest of the refresh.
    """
    from helpers.viz.render import LaneTexts, add_text, stamped_legend

    steps = reduce_maps.tree_steps(version, block)[:max_steps]
    active = reduce_maps.active_lanes(version, block)[: len(steps)]
    divergent = reduce_maps.divergent_warps(version, block)[: len(steps)]
    lanes = reduce_maps.WARP
    cols = min(4, len(steps))
    rows = -(-len(steps) // cols)
    warps = block // lanes
    top, bottom, gap = 0.75, 0.7, 0.32      # inches above the first row, below the last, between rows
    ph = 0.16 * min(warps, 8) + 0.04 * max(warps - 8, 0)
    width, height = style.FIG_WIDTH, top + bottom + rows * ph + (rows - 1) * gap
    left, right = 0.045 * width, 0.985 * width
    pw = (right - left) / (cols + 0.12 * (cols - 1))        # panels 0.12 of a panel apart
    lane_w, warp_h = pw / lanes, ph / warps
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_autoscale_on(False)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    labels = LaneTexts(ax)
    panels, working, tick_x, tick_y = [], [], [], []
    for k in range(len(steps)):
        row, col = divmod(k, cols)
        x0, y1 = left + col * 1.12 * pw, height - top - row * (ph + gap)
        panels.append(_box(x0, x0 + pw, y1 - ph, y1))
        for (a, b), (w0, w1) in lane_runs(active[k]):
            working.append(_box(x0 + a * lane_w, x0 + b * lane_w, y1 - w1 * warp_h, y1 - w0 * warp_h))
        add_text(ax, x0 + pw / 2, y1 + 0.06, f"s = {steps[k].stride}: {int(active[k].sum())} working",
                 va="bottom", fontsize=8)
        ticks = np.flatnonzero(divergent[k])
        tick_x += [x0 - 0.035] * ticks.size
        tick_y += list(y1 - (ticks + 0.5) * warp_h)
        # Lane numbers under the bottom panel of each column, warp numbers left of each row: the
        # panels line up, and every label drawn costs the explorer time.
        if k + cols >= len(steps):
            for lane in (0, lanes - 1):
                labels.add(x0 + (lane + 0.5) * lane_w, y1 - ph - 0.08, str(lane), fontsize=6, color=style.BLACK)
            labels.add(x0 + pw / 2, y1 - ph - 0.22, "lane", fontsize=7, color=style.BLACK)
        if col == 0:
            for w in (range(warps) if warps <= 8 else (0, warps - 1)):
                labels.add(x0 - 0.13, y1 - (w + 0.5) * warp_h, str(w), fontsize=6, color=style.BLACK)
            labels.add(x0 - 0.3, y1 - ph / 2, "warp", fontsize=7, color=style.BLACK, rotation=90)
    ax.add_collection(PolyCollection(panels, facecolors=_IDLE, edgecolors="none", antialiased=False, zorder=1),
                      autolim=False)
    ax.add_collection(PolyCollection(working, facecolors=_WORK, edgecolors="none", antialiased=False, zorder=2),
                      autolim=False)
    ax.add_collection(PolyCollection(panels, facecolors="none", edgecolors=style.BLACK, linewidths=0.8, zorder=3),
                      autolim=False)
    if tick_x:   # one artist for every divergence tick
        ax.plot(tick_x, tick_y, ">", color=style.VERMILION, ms=4, clip_on=False)
    handles = [Patch(color=_WORK, label="working"), Patch(color=_IDLE, label="idle"),
               Patch(color=style.VERMILION, label="divergent warp (tick)")]
    stamped_legend(fig, handles, ("ladder.lanes_figure",), loc="lower center", ncol=len(handles), fontsize=8,
                   frameon=False)
    fig.suptitle(f"reduce_{version}<{block}>: who works at each step (measured: SIMT machine, one block)",
                 fontsize=11)
    return fig


def _box(x0: float, x1: float, y0: float, y1: float) -> list[tuple[float, float]]:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def lane_runs(working: np.ndarray) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The working lanes of a (warps, 32) map as rectangles: ((first lane, last lane + 1), (first
    warp, last warp + 1)), a run of lanes that repeats in consecutive warps being one rectangle."""
    out, open_ = [], {}
    for w, row in enumerate(np.vstack([working, np.zeros((1, working.shape[1]), bool)])):
        edges = np.flatnonzero(np.diff(np.r_[0, row.astype(np.int8), 0]))
        runs = set(zip(edges[::2].tolist(), edges[1::2].tolist()))
        for run in [r for r in open_ if r not in runs]:
            out.append((run, (open_.pop(run), w)))
        for run in runs - open_.keys():
            open_[run] = w
    return sorted(out, key=lambda r: (r[1], r[0]))


def bank_conflicts_figure(versions: Sequence[str] = ("v1", "v2"), block: int = 256) -> Figure:
    """Bank-conflict degree of each warp (columns) at each step (rows), one heatmap per version,
    measured on the SIMT machine (wavefronts of the warp's shared requests in the step).
    1 = conflict-free; k = the request takes k wavefronts; grey = the warp makes no request."""
    fig, axes = plt.subplots(1, len(versions), figsize=(style.FIG_WIDTH, 3.6), squeeze=False)
    levels = [0, 1, 2, 4, 8, 16, 32]
    colours = [_IDLE, style.LIGHT, "#FBE3C2", style.YELLOW, style.ORANGE, style.VERMILION, "#7A2E00"]
    cmap = ListedColormap(colours)
    norm = BoundaryNorm([-0.5, 0.5, 1.5, 3, 6, 12, 24, 33], cmap.N)
    for ax, version in zip(axes.flat, versions):
        deg = reduce_maps.bank_conflict_degree(version, block)
        strides = [st.stride for st in reduce_maps.tree_steps(version, block)]
        ax.imshow(deg, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        for (k, w), d in np.ndenumerate(deg):
            if d:
                ax.text(w, k, f"{d}", ha="center", va="center", fontsize=7,
                        color="white" if d >= 16 else style.BLACK)
        ax.set_yticks(range(len(strides)), [f"s={s}" for s in strides], fontsize=7)
        ax.set_xticks(range(deg.shape[1]))
        ax.tick_params(labelsize=7, length=0)
        ax.set_xlabel("warp", fontsize=8)
        ax.set_title(f"reduce_{version}<{block}>: worst degree {deg.max()}-way", fontsize=10)
    handles = [Patch(color=c, label=("no request" if lv == 0 else "conflict-free" if lv == 1 else f"{lv}-way"))
               for lv, c in zip(levels, colours)]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7, frameon=False)
    fig.suptitle("Shared-memory bank conflicts per warp and step (32 banks of 4 bytes; measured: SIMT machine)",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.94))
    return fig


def first_step_figure(versions: Sequence[str] = ("v2", "v3"), block: int = 256) -> Figure:
    """The first add of each version, measured on the SIMT machine: threads that add something
    (filled) and threads that only loaded (grey), warps stacked. v2's first tree step leaves half
    the block idle; v3 adds while loading, so every thread works (and a block covers twice the
    elements)."""
    fig, axes = plt.subplots(1, len(versions), figsize=(style.FIG_WIDTH, 0.6 + 0.25 * block / 32), squeeze=False)
    cmap = ListedColormap([_IDLE, _WORK])
    for ax, version in zip(axes.flat, versions):
        fs = reduce_maps.first_step(version, block)
        ax.imshow(fs.lanes.astype(int), cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_title(f"{version}: {fs.working} of {fs.threads} threads add, {fs.elements_per_block} elements/block",
                     fontsize=9)
        ax.set_xticks([0, 31])
        ax.set_xlabel("lane", fontsize=8)
        ax.set_ylabel("warp", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.legend(handles=[Patch(color=_WORK, label="adds"), Patch(color=_IDLE, label="idle (loaded only)")],
               loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle("The first add (measured: SIMT machine, one block)", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def barriers_chart(block: int = 256, versions: Sequence[str] = VERSIONS) -> Figure:
    """``__syncthreads()`` per block of every version (and warp 0's ``__syncwarp()``), counted by
    the SIMT machine on the real kernels: the barriers v4 removes, and the one left with shuffles."""
    counts = [reduce_maps.barriers(v, block) for v in versions]
    x = np.arange(len(versions))
    fig, ax = plt.subplots(figsize=(style.FIG_WIDTH, 3.2))
    a = ax.bar(x - 0.2, [c["syncthreads"] for c in counts], 0.4, color=style.BLUE)
    b = ax.bar(x + 0.2, [c["syncwarp"] for c in counts], 0.4, color=style.ORANGE)
    for bars in (a, b):
        ax.bar_label(bars, fontsize=8)
    # explicit handles: matplotlib ignores labels that start with an underscore
    ax.legend([a, b], ["__syncthreads() per block", "__syncwarp() in warp 0"], fontsize=8, frameon=False)
    ax.set_xticks(x, versions)
    ax.set_ylabel("barriers")
    ax.set_title(f"Barriers per block, block = {block} (counted by the SIMT machine)", fontsize=11)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def show(fig: Figure) -> None:
    """Display ``fig`` once in a notebook, rendered as the series renders every figure
    (:func:`helpers.viz.render.figure_png`, its default dpi), and let pyplot forget it."""
    from IPython.display import Image, display

    from helpers.viz.render import figure_png

    display(Image(figure_png(fig)))
    plt.close(fig)
