"""Block-level figures for notebook 04: the block as stacked warps over a shared-memory strip (one
picture per phase of a block :class:`~helpers.engine.trace.Trace`, the SIMT machine's run of the real kernel
cut at its barriers, and an animation of them), and a
picture of a 2D block's ``blockDim`` (x, y) with the per-row or per-column results beside it.

Same visual language as :mod:`helpers.viz.lanes`: a warp is a row of 32 numbered lanes, warps are
stacked top to bottom, shared memory is a strip of slots under them; undefined values are hatched
and read "undef", never a number; lanes that do not exist (the tail of a partial warp) are grey and
empty; a store is an arrow from a thread down to its slot, a load an arrow from a slot up to a
thread; a barrier (``__syncthreads()``) is a thick bar across the block. Every figure names what
produced it in its footer. Figures are made without pyplot (see :mod:`helpers.viz.lanes`).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from helpers.viz import boxes
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.viz import style
from helpers.engine.trace import Trace

LANES = style.LANES
MAX_WARPS_DRAWN = 8        # a phase picture stacks at most this many warps (256 threads)
MAX_SLOT_ROWS = 4          # and at most this many rows of 32 shared slots
MAX_ARROWS = 48            # more loads/stores than this in one phase: the slots are outlined instead
# Light tints of the Okabe-Ito colours (no vermilion: pale vermilion means "wrong" here). Neighbouring
# warps always differ; a colour comes back only 8 warps later, and every warp's id is written too.
WARP_COLORS = ("#CFE8F7", "#FBE3B5", "#CDEBDD", "#F3D3E4", "#F5EEA8", "#A9CBE8", "#E2E2E2", "#9FD9C4")
SHARED_FILL = "#FFF7CC"     # a defined shared slot (light yellow)
GRID_MAX_CELLS_TEXT = 48    # write the tid in each cell of the blockDim picture up to this many columns
GRID_MAX_TEXT_CELLS = 256   # ... and this many threads
GRID_MAX_ROW_LABELS = 32    # label every row up to this many rows, else every k-th
GRID_MAX_WARP_IDS = 16      # write warp ids in the cells up to this many warps

_KIND_WORDS = {"input": "input", "warp": "warp shuffles", "load": "shared → registers",
               "store": "registers → shared", "barrier": "__syncthreads()", "return": "registers → out"}


class _Phase:
    """Step ``k`` of a block trace, flat over the block's threads (what the drawing needs)."""

    def __init__(self, trace: Trace, k: int) -> None:
        if not trace.is_block:
            raise ValueError("trace must be a block trace (helpers.topics.block_reduce.block_trace or BlockResult.trace)")
        self.label, self.kind = trace.labels[k], trace.kinds[k]
        self.held = trace.held[k].reshape(-1)
        self.known = trace.active[k].reshape(-1)
        self.held_defined = trace.defined[k].reshape(-1) | ~self.known
        self.shared, self.shared_defined = trace.shared[k], trace.shared_defined[k]
        self.loads, self.stores = trace.loads[k], trace.stores[k]


def _phases(trace: Trace) -> list[_Phase]:
    return [_Phase(trace, k) for k in range(trace.n_steps)]


def _check_phase(trace: Any, phase: int) -> None:
    n = trace.n_steps if trace.is_block else 0
    if not isinstance(phase, (int, np.integer)) or not 0 <= phase < n:
        raise ValueError(f"phase must be an integer in [0, {n - 1}] for this trace; got {phase!r}")


def _check_drawable(trace: Any) -> int:
    n = trace.block[0] * trace.block[1]
    n_warps = -(-n // LANES)
    if n_warps > MAX_WARPS_DRAWN:
        raise ValueError(f"the phase picture draws at most {MAX_WARPS_DRAWN} warps ({MAX_WARPS_DRAWN * LANES} "
                         f"threads); block {tuple(trace.block)} has {n} threads ({n_warps} warps)")
    return n_warps


def used_slots(trace: Any) -> int:
    """How many shared slots the picture shows: every slot any phase touched, rounded up to 32."""
    top = 0
    for p in _phases(trace):
        for pairs in (p.loads, p.stores):
            if len(pairs):
                top = max(top, int(pairs[:, 1].max()) + 1)
        if p.shared_defined.any():
            top = max(top, int(np.flatnonzero(p.shared_defined).max()) + 1)
    return max(LANES, -(-top // LANES) * LANES)


def _layout(trace: Any) -> tuple[int, int]:
    n_warps = _check_drawable(trace)
    slot_rows = min(MAX_SLOT_ROWS, used_slots(trace) // LANES)
    return n_warps, slot_rows


def _phase_height(n_warps: int, slot_rows: int) -> float:
    return 1.9 + 0.42 * (n_warps + slot_rows) + 0.5


def _warp_y(w: int) -> float:
    return -1.25 * w


def _slot_y(n_warps: int, r: int) -> float:
    return -1.25 * n_warps - 1.1 - 1.25 * r


def _thread_xy(tid: int) -> tuple[float, float]:
    return float(tid % LANES), _warp_y(tid // LANES)


def _slot_xy(n_warps: int, slot: int) -> tuple[float, float]:
    return float(slot % LANES), _slot_y(n_warps, slot // LANES)


def _draw_phase(fig: Figure, trace: Any, phase: int, source_label: str) -> None:
    n_warps, slot_rows = _layout(trace)
    p = _Phase(trace, phase)
    n = trace.block[0] * trace.block[1]
    ax = fig.add_axes((0.075, 0.12, 0.92, 0.74))
    exists = np.zeros(n_warps * LANES, bool)
    exists[:n] = True
    held = p.held[:n_warps * LANES]
    hdef = p.held_defined[:n_warps * LANES]
    known = p.known[:n_warps * LANES] & exists
    for w in range(n_warps):
        sl = slice(w * LANES, (w + 1) * LANES)
        # a thread that moved no value in this phase shows an empty register: the machine did not see it
        text = np.array(["" if not k else boxes.format_value(v) for v, k in zip(held[sl], known[sl])], object)
        boxes.draw_warp(ax, text, defined=hdef[sl] | ~exists[sl], active=exists[sl],
                          y=_warp_y(w), label=f"warp {w}", numbers="above" if w == 0 else None, fmt=str)
    n_slots = slot_rows * LANES

    def padded(a: np.ndarray, fill: Any) -> np.ndarray:   # the trace's shared array need not fill whole rows
        out = np.full(n_slots, fill, a.dtype)
        out[:min(n_slots, a.size)] = a[:n_slots]
        return out

    shared, sdef = padded(p.shared, 0), padded(p.shared_defined, False)
    ever = np.zeros(n_slots, bool)
    for q in _phases(trace)[:phase + 1]:
        ever |= padded(q.shared_defined, False)
        for pairs in (q.stores,):
            ever[pairs[:, 1][pairs[:, 1] < n_slots]] = True
    slot_touched = set(int(s) for s in p.loads[:, 1]) | set(int(s) for s in p.stores[:, 1])
    for r in range(slot_rows):
        sl = slice(r * LANES, (r + 1) * LANES)
        # A slot never written is uninitialised shared memory: undefined (hatched) once anyone looks at it,
        # plain empty until then.
        looked = np.array([s in slot_touched for s in range(r * LANES, (r + 1) * LANES)])
        text = np.array([boxes.format_value(v) if d else "" for v, d in zip(shared[sl], sdef[sl])], object)
        boxes.draw_warp(ax, text, defined=sdef[sl] | ~(ever[sl] | looked), fill=SHARED_FILL,
                          y=_slot_y(n_warps, r), label="shared" if r == 0 else f"+{r * LANES}",
                          numbers="below", fmt=str)
    pairs = [(int(t), int(s), "store") for t, s in p.stores] + [(int(t), int(s), "load") for t, s in p.loads]
    drawn = [(t, s, k) for t, s, k in pairs if t < n_warps * LANES and s < n_slots]
    if 0 < len(drawn) <= MAX_ARROWS:
        for t, s, k in drawn:
            (tx, ty), (sx, sy) = _thread_xy(t), _slot_xy(n_warps, s)
            a, b = ((tx, ty - 0.4), (sx, sy + 0.4)) if k == "store" else ((sx, sy + 0.4), (tx, ty - 0.4))
            render.add_patch(ax, FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=6, shrinkA=0, shrinkB=1,
                                             color=style.ARROW if k == "store" else style.PURPLE, linewidth=0.7,
                                             alpha=0.75, zorder=3))
    top, bottom = _warp_y(0) + 1.0, _slot_y(n_warps, slot_rows - 1) - 1.2
    if p.kind == "barrier":
        y = (_warp_y(n_warps - 1) + _slot_y(n_warps, 0)) / 2
        render.add_patch(ax, Rectangle((-0.6, y - 0.12), LANES + 0.2, 0.24, facecolor=style.VERMILION,
                                   edgecolor="none", zorder=5))
        render.add_text(ax, LANES / 2 - 0.5, y + 0.33, "__syncthreads(): no thread passes until every thread "
                      "of the block arrives", fontsize=7.5, color=style.VERMILION, zorder=6)
    ax.set_ylim(bottom, top)
    ax.set_title(f"{trace.title}\n{phase_caption(trace, phase)}", fontsize=8.5)
    keys = [Patch(facecolor=style.LANE_FILL, edgecolor=style.BLACK, linewidth=0.6, label="value a thread moved"),
            Patch(facecolor=SHARED_FILL, edgecolor=style.BLACK, linewidth=0.6, label="shared slot"),
            Patch(facecolor="white", edgecolor=style.UNDEFINED_EDGE, hatch=style.UNDEFINED_HATCH, label="undefined")]
    if (~exists).any():
        keys.append(Patch(facecolor=style.INACTIVE, edgecolor=style.BLACK, linewidth=0.6, label="lane does not exist"))
    if 0 < len(drawn) <= MAX_ARROWS:
        keys += [Patch(color=c, label=lbl) for c, lbl, k in ((style.ARROW, "store ↓", "store"),
                                                             (style.PURPLE, "load ↑", "load"))
                 if any(kind == k for _, _, kind in drawn)]
    elif len(drawn) > MAX_ARROWS:
        n_st, n_ld = len(p.stores), len(p.loads)
        render.add_text(ax, LANES / 2 - 0.5, bottom + 0.2, f"{n_st} stores, {n_ld} loads in this phase "
                      f"(too many to draw as arrows)", fontsize=7, color="#444444")
    fig.legend(handles=keys, loc="center", bbox_to_anchor=(0.5, 0.05), ncol=len(keys), fontsize=7, frameon=False)
    fig.text(0.005, 0.005, f"Computed by: {source_label}", fontsize=7, color="#444444", ha="left", va="bottom")


def phase_caption(trace: Any, phase: int) -> str:
    """``phase 4 of phases 0–5 (shared → registers): <label>``: the phase numbered as
    :func:`phase_lines` and :func:`block_phase_figure` number it, with how many there are."""
    _check_phase(trace, phase)
    p = _Phase(trace, phase)
    return f"phase {phase} of phases 0–{trace.n_steps - 1} ({_KIND_WORDS.get(p.kind, p.kind)}): {p.label}"


def block_phase_figure(trace: Any, phase: int, *, source_label: Optional[str] = None) -> Figure:
    """One phase of a block :class:`~helpers.engine.trace.Trace`: the values the warps' threads moved in it,
    stacked over the shared-memory strip, the loads and stores of the phase as arrows, a bar for a barrier.

    At most :data:`MAX_WARPS_DRAWN` warps (ValueError beyond). ``source_label`` (default the trace's
    source) names the engine in the footer.
    """
    _check_phase(trace, phase)
    n_warps, slot_rows = _layout(trace)
    fig = render.LaneFigure(figsize=(style.FIG_WIDTH, _phase_height(n_warps, slot_rows)))
    _draw_phase(fig, trace, phase, source_label or _source(trace))
    return fig


def _source(trace: Trace) -> str:
    return f"{trace.source} (kernels/ run phase by phase)"


def block_animation(trace: Any, *, interval: int = 1100, source_label: Optional[str] = None) -> FuncAnimation:
    """Every phase of ``trace`` as one frame (at most 60; longer traces are sampled), with play/step controls
    through :func:`helpers.viz.lanes.animation_html` (in a ``# NBVAL_IGNORE_OUTPUT`` cell)."""
    n_warps, slot_rows = _layout(trace)
    fig = render.LaneFigure(figsize=(style.FIG_WIDTH, _phase_height(n_warps, slot_rows)))
    label = source_label or _source(trace)

    def draw(phase: int) -> list:
        fig.clear()
        _draw_phase(fig, trace, phase, label)
        return []

    return FuncAnimation(fig, draw, frames=figures.frame_steps(trace.n_steps), interval=interval,
                         blit=False, repeat=True, cache_frame_data=False)


def phase_lines(trace: Any) -> str:
    """One line per phase: ``k  kind      label`` (deterministic text for notebooks)."""
    return "\n".join(f"{k:2d}  {kind:<8} {label}" for k, (kind, label) in enumerate(zip(trace.kinds, trace.labels)))


# ---------------------------------------------------------------- the blockDim picture


def _result_cells(ax: Axes, values: np.ndarray, defined: np.ndarray, correct: np.ndarray, xs: Sequence[float],
                  ys: Sequence[float], w: float, h: float, text: bool) -> None:
    # One collection per look (right, wrong, undefined), not a patch per cell: an explorer redraws
    # these on every update.
    xs, ys = np.asarray(list(xs), float), np.asarray(list(ys), float)
    corners = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)])
    for pick, face, edge, hatch, lw in ((defined & correct, style.RESULT, style.BLACK, None, 0.5),
                                        (defined & ~correct, "#F6C9AE", style.BLACK, None, 0.5),
                                        (~defined, "white", style.UNDEFINED_EDGE, style.UNDEFINED_HATCH, 0.8)):
        if pick.any():
            verts = np.stack([xs[pick], ys[pick]], axis=1)[:, None, :] + corners[None]
            coll = PolyCollection(verts, facecolors=face, edgecolors=edge, linewidths=lw, zorder=2)
            if hatch:
                coll.set_hatch(hatch)
            ax.add_collection(coll, autolim=False)
    if text:
        texts = render.LaneTexts(ax, zorder=4)
        for v, d, ok, x, y in zip(values, defined, correct, xs, ys):
            if d:
                texts.add(x, y, boxes.format_value(v), fontsize=6.5, color="white" if ok else style.BLACK)
            else:
                # Dark text on its white label: the vermilion hatching around it must not swallow the word.
                undef = render.LabelText(x, y, boxes.UNDEF_TEXT, fontsize=7, color=style.BLACK, pad=0.25)
                undef.set_clip_on(False)
                ax.add_artist(undef)


def block_grid_figure(block: tuple[int, int], results: Sequence[Any] = (), *, source_label: str = "",
                      title: Optional[str] = None, show_tid: Optional[bool] = None) -> Figure:
    """A 2D block as blockDim.y rows of blockDim.x threads, each cell coloured by its hardware warp
    (tid = y * blockDim.x + x; warp = tid / 32), with thick lines where a warp starts.

    ``results``: :class:`~helpers.topics.block_reduce.BlockResult` objects of kind "x" (a column per result at
    the right: each row's value) or "y" (a row per result underneath: each column's value). Result cells
    are green when they equal NumPy's answer, pale vermilion when they do not, hatched "undef" when
    undefined. ``source_label`` names what produced the results (footer). ``show_tid`` writes each
    thread's tid in its cell (default: when the cells are big enough and there are at most 256).

    Speed (the block explorer redraws this on every move): the texts are drawn from stamps
    (:class:`helpers.viz.render.LaneTexts`), the legend too, and the title is placed by hand.
    """
    bx, by = int(block[0]), int(block[1])
    if bx < 1 or by < 1 or bx * by > 1024:
        raise ValueError(f"block must be (x, y) with x >= 1, y >= 1 and x * y <= 1024; got {block!r}")
    for r in results:
        if r.kind not in ("x", "y") or tuple(r.block) != (bx, by):
            raise ValueError(f"results must be BlockResults of kind 'x' or 'y' for block {(bx, by)}; "
                             f"got kind {r.kind!r}, block {tuple(r.block)}")
    xr = [r for r in results if r.kind == "x"]
    yr = [r for r in results if r.kind == "y"]
    col_w = max(2.0, bx / 12)                      # a result column, in cell units
    width_units = bx + (len(xr) * (col_w + 0.4) + 0.6 if xr else 0)
    height_units = by + (len(yr) * 1.4 + 0.6 if yr else 0)
    fig_h = min(5.0, max(2.4, 1.3 + 3.2 * height_units / max(width_units / 3, height_units, 1)))
    fig = render.LaneFigure(figsize=(style.FIG_WIDTH, fig_h))
    # The bottom band holds two lines, the legend and under it the footer, so neither covers the other.
    ax = fig.add_axes((0.09, 0.19, 0.89, 0.67))
    tid = np.arange(bx * by).reshape(by, bx)
    warp = tid // LANES
    ax.imshow(warp % len(WARP_COLORS), cmap=ListedColormap(WARP_COLORS), vmin=0, vmax=len(WARP_COLORS) - 1,
              extent=(-0.5, bx - 0.5, by - 0.5, -0.5), interpolation="nearest", aspect="auto", zorder=0)
    if by <= 4 * GRID_MAX_ROW_LABELS:   # beyond that the row lines would grey the picture out
        ax.hlines(np.arange(by + 1) - 0.5, -0.5, bx - 0.5, color="#888888", linewidth=0.4, zorder=1)
    left = ax.get_yaxis_transform()     # x in axes fractions: labels sit just left of the grid at any width
    # A warp starts at tid t: a thick left edge on its first cell, or the whole top edge of its row
    # when it starts a row (the row above then belongs to earlier warps).
    starts = [divmod(t, bx) for t in range(LANES, bx * by, LANES)]
    ax.add_collection(LineCollection([[(x - 0.5, y - 0.5), (x - 0.5, y + 0.5)] if x else
                                      [(-0.5, y - 0.5), (bx - 0.5, y - 0.5)] for y, x in starts],
                                     colors=style.BLACK, linewidths=2.0, zorder=3))
    n_warps = -(-bx * by // LANES)
    tids_written = show_tid if show_tid is not None else (bx <= GRID_MAX_CELLS_TEXT and bx * by <= GRID_MAX_TEXT_CELLS)
    labels = render.LaneTexts(ax, zorder=4)
    if tids_written:
        tids = render.LaneTexts(ax, zorder=2)
        for (y, x), t in np.ndenumerate(tid):
            tids.add(x, y, str(t), fontsize=5 if t >= 100 else 5.5, color="#333333")
    every = -(-by // GRID_MAX_ROW_LABELS)
    one_warp_rows = every == 1 and all(a == b for a, b in (warps_of_row((bx, by), y) for y in range(by)))
    # Warp ids in the cells too, where the cells are free and a row holds several warps; not beyond
    # GRID_MAX_WARP_IDS warps (each text costs drawing time; the row labels and the thick lines still
    # say which warp is where, in order).
    if not tids_written and not one_warp_rows and n_warps <= GRID_MAX_WARP_IDS:
        for w, (y, x0, x1) in enumerate(warp_label_spans((bx, by))):
            if x1 - x0 >= 3 or bx < 3:
                labels.add((x0 + x1 - 1) / 2, y, f"w{w}", fontsize=6 if by <= 16 else 5, color=style.BLACK)
    left_labels = render.LaneTexts(ax, transform=left)
    for y in range(0, by, every):
        left_labels.add(-0.005, y, row_label((bx, by), y), ha="right", fontsize=6.5 if by <= 16 else 5.5,
                        color=style.BLACK)
    for i, r in enumerate(xr):
        cx = bx - 0.5 + 0.6 + col_w / 2 + i * (col_w + 0.4)
        ok = r.defined[:, 0] & (r.values[:, 0] == r.expected[:, 0])
        _result_cells(ax, r.values[:, 0], r.defined[:, 0], ok, [cx] * by, range(by), col_w, 0.9, by <= 16)
        render.add_text(ax, cx, -0.7, _result_name(r), va="bottom", fontsize=7)
    for i, r in enumerate(yr):
        cy = by - 0.5 + 0.6 + 0.7 + i * 1.4
        ok = r.defined[0, :] & (r.values[0, :] == r.expected[0, :])
        _result_cells(ax, r.values[0, :], r.defined[0, :], ok, range(bx), [cy] * bx, 0.9, 1.2, bx <= 40)
        left_labels.add(-0.005, cy, _result_name(r), ha="right", fontsize=7, color=style.BLACK)
    ax.set_xlim(-0.6, width_units - 0.4)
    ax.set_ylim(height_units - 0.4, -1.5 if xr else -0.6)
    ax.set_axis_off()
    ax.set_title(title or f"blockDim = ({bx}, {by}): {by} row(s) of {bx} threads, {bx * by} threads = "
                 f"{n_warps} warp(s) of 32\na thick line marks where a warp starts; each row's warps "
                 f"(wN) are listed at its left", fontsize=8.5, y=1.0)
    # Up to 8 warps the legend names each colour; beyond, colours come round again and the warp ids
    # (row labels, and in the cells) say which warp is which.
    keys = [Patch(facecolor=WARP_COLORS[w], edgecolor="#888888", label=f"warp {w}")
            for w in range(n_warps)] if n_warps <= len(WARP_COLORS) else []
    if results:
        keys += [Patch(facecolor=style.RESULT, edgecolor=style.BLACK, label="result = NumPy"),
                 Patch(facecolor="#F6C9AE", edgecolor=style.BLACK, label="wrong"),
                 Patch(facecolor="white", edgecolor=style.UNDEFINED_EDGE, hatch=style.UNDEFINED_HATCH,
                       label="undefined")]
    if keys:
        render.stamped_legend(fig, keys, ("block_grid", n_warps <= len(WARP_COLORS) and n_warps, bool(results)),
                               loc="center", bbox_to_anchor=(0.5, 0.105), ncol=len(keys), fontsize=7, frameon=False)
    if source_label:
        fig.text(0.5, 0.005, f"Computed by: {source_label}", fontsize=7, color="#444444", ha="center", va="bottom")
    return fig


def warps_of_row(block: tuple[int, int], y: int) -> tuple[int, int]:
    """The first and last hardware warp holding threads of row ``y`` (tid = y * blockDim.x + x)."""
    bx = int(block[0])
    return y * bx // LANES, ((y + 1) * bx - 1) // LANES


def row_label(block: tuple[int, int], y: int) -> str:
    """``y=3  w1–2``: the row and the warps that hold its threads."""
    first, last = warps_of_row(block, y)
    return f"y={y}  w{first}" + (f"–{last}" if last > first else "")


def warp_label_spans(block: tuple[int, int]) -> list[tuple[int, int, int]]:
    """Per warp, where to write its id: ``(y, x0, x1)``, its widest run of cells in one row (the middle
    one of equally wide runs, so a warp of several whole rows is labelled on its middle row)."""
    bx, by = int(block[0]), int(block[1])
    spans: list[tuple[int, int, int]] = []
    for w in range(-(-bx * by // LANES)):
        t0, t1 = w * LANES, min((w + 1) * LANES, bx * by)
        runs = [(y, max(t0, y * bx) - y * bx, min(t1, (y + 1) * bx) - y * bx) for y in range(t0 // bx, (t1 - 1) // bx + 1)]
        widest = max(x1 - x0 for _, x0, x1 in runs)
        best = [r for r in runs if r[2] - r[1] == widest]
        spans.append(best[(len(best) - 1) // 2])
    return spans


def _result_name(r: Any) -> str:
    fn = "X" if r.kind == "x" else "Y"
    return f"{'seed' if r.version == 'seed' else 'fixed'} {fn}"
