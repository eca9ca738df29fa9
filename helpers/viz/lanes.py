"""Lane and warp figures, trace animations and plain-text lane tables, all drawn from data.

Every picture follows the series' visual language (:mod:`helpers.viz.style`): a warp is a row of 32
numbered lanes; a shuffle is an arrow from source to destination lane; a lane that keeps its own
value has no arrow and an orange outline; width segments are shaded bands; undefined results are
hatched ``////`` (pale, with a vermilion edge) and read "undef" on a white label, never a number,
and hatching means nothing else; lanes that do not call show "–": grey when they have exited (or
when it is not known why), pale yellow when they are alive elsewhere, with a thick black edge
when the mask names them (which makes the whole call undefined); lanes outside the mask are
outlined dashed; result lanes are green.

Figures are :class:`matplotlib.figure.Figure` objects made without pyplot, so they are never
registered with a pyplot window manager: a widget that redraws many times leaks nothing, and a
notebook shows a figure only when a cell returns or ``display``s it (the inline backend renders
Figure objects). The text tables are deterministic, for outputs that nbval compares.
"""
from __future__ import annotations

import io
import re
import weakref
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform, TransformedPath

from helpers.viz import style
from helpers.engine.emulator import ELSEWHERE, EXITED, ShuffleResult, VoteResult
from helpers.engine.params import LANES, WIDTHS

LANE = np.arange(LANES)
MAX_FRAMES = 60
UNDEF_TEXT = "undef"

BOX_W, BOX_H = 0.86, 0.8          # a lane's box, in data units (lanes are 1 apart)
VALUE_SIZE, SMALL_SIZE = 7.0, 5.5  # points: 4 characters fit across a lane at FIG_WIDTH
UNDEF_SIZE = 4.8                   # points: "undef" fits across a lane box
NUMBER_SIZE, NUMBER_COLOR = 5.5, "#444444"   # lane numbers above or below a row
FIT_ACROSS, FIT_ROTATED = 4, 7     # characters that fit written across / rotated in a lane box
ROW_GAP = 2.3                      # vertical distance between a "before" and an "after" row

Fmt = Union[str, Callable[[Any], str], None]


class LaneFigure(Figure):
    """A Figure made without pyplot that still shows itself in Jupyter, as a PNG.

    Without pyplot, the inline backend may never register its Figure formatter; this repr makes a
    cell that ends with a figure show the picture either way (IPython prefers its registered
    formatter when there is one, so the output is a single PNG in both cases).
    """

    def _repr_png_(self) -> bytes:
        return figure_png(self)


# ---------------------------------------------------------------- formatting and tables


def format_value(v: Any, fmt: Fmt = None, float_digits: int = 3) -> str:
    """``v`` as short text: ints plainly, floats in ``g`` format with ``float_digits`` significant digits.

    ``fmt`` overrides: a format spec (``".2f"``) or a callable returning the text.
    """
    if callable(fmt):
        return str(fmt(v))
    if fmt:
        return format(v, fmt)
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return format(float(v), f".{float_digits}g")


def _lane_row(a: Any, name: str, dtype: Any = None) -> np.ndarray:
    arr = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
    if arr.shape != (LANES,):
        raise ValueError(f"{name} must have shape (32,) (one per lane of one warp); got shape {arr.shape}")
    return arr


def _flags(a: Optional[Any], name: str, default: bool) -> np.ndarray:
    return np.full(LANES, default) if a is None else _lane_row(a, name, bool)


def lane_blocks(rows: Sequence[tuple[str, Sequence[str]]], lanes_per_block: int) -> str:
    """Right-aligned columns of per-lane cells, ``lanes_per_block`` lanes per block of lines."""
    if lanes_per_block not in (8, 16, 32):
        raise ValueError(f"lanes_per_block must be 8, 16 or 32; got {lanes_per_block!r}")
    head = max(len(name) for name, _ in rows)
    col = max(len(c) for _, cells in rows for c in cells)
    out = []
    for start in range(0, LANES, lanes_per_block):
        sl = slice(start, start + lanes_per_block)
        out += [f"{name:<{head}} |" + "".join(f" {c:>{col}}" for c in cells[sl]) for name, cells in rows]
        out.append("")
    return "\n".join(out).rstrip("\n")


def _lanes_text(where: np.ndarray) -> str:
    return " ".join(str(int(l)) for l in np.flatnonzero(where)) or "none"


def lane_table(result_or_values: Union[ShuffleResult, Any], *, fmt: Fmt = None,
               lanes_per_block: int = 16, kept_own: Optional[Any] = None) -> str:
    """A plain-text table of one warp: lane -> value (and, for a ShuffleResult, src lane).

    For a :class:`ShuffleResult` the rows are ``lane``, ``src`` and ``value`` (``undef`` where
    undefined; both ``-`` where the lane did not call), followed by lines naming the lanes that
    kept their own value, read undefined values, or did not call (split into exited and alive
    elsewhere when some are elsewhere). An undefined call is said first, above the table. Floats
    get 6 significant digits. ``kept_own`` as in :func:`shuffle_figure`.
    """
    if isinstance(result_or_values, ShuffleResult):
        r = result_or_values
        src = _lane_row(r.src_lane, "src_lane", np.int64)
        defined = _lane_row(r.defined, "defined", bool)
        values = _lane_row(r.values, "values")
        rows = [("lane", [str(l) for l in LANE]),
                ("src", [str(s) if s >= 0 else "-" for s in src]),
                ("value", [_result_cell(v, d, s, fmt) for v, d, s in zip(values, defined, src)])]
        kept = defined & (src == LANE) if kept_own is None else defined & _lane_row(kept_own, "kept_own", bool)
        notes = [f"kept own value: {_lanes_text(kept)}",
                 f"undefined: {_lanes_text(~defined & (src >= 0))}",
                 f"did not call: {_lanes_text(src < 0)}"]
        head = ""
        if r.state is not None:
            state = _lane_row(r.state, "state", np.int64)
            if (state == ELSEWHERE).any():
                notes[-1] += f" (exited: {_lanes_text(state == EXITED)}; alive elsewhere: {_lanes_text(state == ELSEWHERE)})"
            if r.call_defined is not None and not bool(r.call_defined):
                head = ("UNDEFINED CALL: the mask names a lane that is alive but not calling, "
                        "so no lane gets a defined value\n")
        return head + lane_blocks(rows, lanes_per_block) + "\n" + "\n".join(notes)
    values = _lane_row(result_or_values, "values")
    rows = [("lane", [str(l) for l in LANE]), ("value", [format_value(v, fmt, 6) for v in values])]
    return lane_blocks(rows, lanes_per_block)


def _result_cell(v: Any, defined: bool, src: int, fmt: Fmt) -> str:
    if src < 0:
        return "-"
    return format_value(v, fmt, 6) if defined else UNDEF_TEXT


def mapping_text(result: ShuffleResult) -> str:
    """One machine-readable line: ``src: s0 s1 ... s31`` (``-`` for a lane that did not call)."""
    src = _lane_row(result.src_lane, "src_lane", np.int64)
    return "src: " + " ".join(str(s) if s >= 0 else "-" for s in src)


# ---------------------------------------------------------------- drawing one warp


# Speed: a widget must redraw in well under 200 ms, and a figure has ~200 artists. Matplotlib
# recomputes the clip path of every artist added to an Axes (and, in add_patch, its data limits,
# which our fixed limits do not need): together most of the drawing time. So the axes' clip path is
# computed once per Axes patch and given to each artist up front.
_CLIPS: "weakref.WeakKeyDictionary[Patch, TransformedPath]" = weakref.WeakKeyDictionary()


def _clip(ax: Axes) -> TransformedPath:
    clip = _CLIPS.get(ax.patch)
    if clip is None:
        clip = _CLIPS[ax.patch] = TransformedPath(ax.patch.get_path(), ax.patch.get_transform())
    return clip


def add_patch(ax: Axes, patch: Patch, clip: bool = True) -> None:
    """``ax.add_patch`` without its clip-path and data-limit updates (see above); ``clip=False`` for
    a patch that lies inside the axes anyway, which then costs no clipping at each drawing."""
    patch.set_clip_path(_clip(ax))
    patch.set_clip_on(clip)
    ax.add_artist(patch)


def add_text(ax: Axes, x: float, y: float, s: str, **kw: Any) -> Text:
    """``ax.text`` centred on (x, y) (``ha``/``va`` in ``kw`` override), without its clip-path update
    (see above). Drawn by :func:`figure_png` from a cached bitmap, as every text."""
    text = Text(x, y, s, **{"ha": "center", "va": "center", **kw})
    text.set_clip_path(_clip(ax))
    ax.add_artist(text)
    return text


class LaneTexts(Artist):
    """The short centred texts of a lane figure (values, "–", lane numbers) as one artist.

    Speed: a lane figure writes about 130 such texts, and a matplotlib Text costs about a
    millisecond to make and lay out at every drawing, most of an explorer's refresh. On Agg this
    artist draws each text from a stamp (the text rendered alone once per string, size, colour,
    rotation and dpi, then blitted centred on its anchor rounded to a whole pixel); on other
    renderers (SVG, PDF) it draws real Text objects, so the words stay text. Call :meth:`add`
    for each text; :meth:`items` reads them back.
    """

    def __init__(self, ax: Axes, zorder: float = 4, transform: Any = None) -> None:
        """``transform``: what (x, y) are in (default: the data coordinates of ``ax``)."""
        super().__init__()
        self._items: list[tuple[float, float, str, float, str, float, str, float]] = []
        self.set_zorder(zorder)
        self.set_clip_on(False)
        if transform is not None:
            self.set_transform(transform)
        ax.add_artist(self)

    def add(self, x: float, y: float, s: str, *, fontsize: float, color: str, rotation: float = 0,
            ha: str = "center", linespacing: float = 1.2) -> None:
        """Write ``s`` centred on (x, y), in data coordinates (``ha="right"``: ending at x); lines of a
        text with newlines ``linespacing`` font sizes apart."""
        self._items.append((float(x), float(y), s, fontsize, color, rotation, ha, linespacing))

    def items(self) -> list[tuple[float, float, str]]:
        """(x, y, text) of every text, in the order added."""
        return [(x, y, s) for x, y, s, *_ in self._items]

    def draw(self, renderer: Any) -> None:
        if not self.get_visible() or not self._items:
            return
        if not isinstance(renderer, RendererAgg):
            for x, y, s, size, color, rotation, ha, spacing in self._items:
                text = _centred_text(x, y, s, size, color, rotation, transform=self.get_transform(), ha=ha,
                                     linespacing=spacing)
                text.set_figure(self.get_figure(root=False))
                text.draw(renderer)
            return
        xy = self.get_transform().transform(np.array([(x, y) for x, y, *_ in self._items]))
        gc = renderer.new_gc()
        for (px, py), (_, _, s, size, color, rotation, ha, spacing) in zip(xy, self._items):
            image, dx, dy = _centred_stamp(s, size, color, rotation, renderer.dpi, ha=ha, linespacing=spacing)
            if image is not None and np.isfinite(px) and np.isfinite(py):
                renderer.draw_image(gc, round(px - dx), round(py - dy), image)
        gc.restore()
        self.stale = False


class LabelText(Text):
    """A centred Text on an opaque white label (the "undef" of an undefined lane), drawn by Agg from a
    stamp as :class:`LaneTexts` are: a text with a box costs a millisecond or two to lay out, and an
    undefined call hatches every lane of a row."""

    LABEL = {"facecolor": "white", "edgecolor": "none", "pad": 0.8}

    def __init__(self, x: float, y: float, s: str, *, fontsize: float, color: str, zorder: float = 4,
                 pad: float = 0.8) -> None:
        """``pad``: the label's margin around the text, in font sizes."""
        super().__init__(x, y, s, fontsize=fontsize, color=color, ha="center", va="center", zorder=zorder,
                         bbox={**self.LABEL, "pad": pad})
        self.pad = pad

    def draw(self, renderer: Any) -> None:
        if not self.get_visible() or not isinstance(renderer, RendererAgg):
            return super().draw(renderer)
        image, dx, dy = _centred_stamp(self.get_text(), self.get_fontsize(), str(self.get_color()), 0, renderer.dpi,
                                       label_pad=self.pad)
        x, y = self.get_transform().transform(self.get_unitless_position())
        if image is not None and np.isfinite(x) and np.isfinite(y):
            gc = renderer.new_gc()
            renderer.draw_image(gc, round(x - dx), round(y - dy), image)
            gc.restore()
        self.stale = False


def _centred_text(x: float, y: float, s: str, fontsize: float, color: str, rotation: float, **kw: Any) -> Text:
    return Text(x, y, s, fontsize=fontsize, color=color, rotation=rotation, **{"ha": "center", "va": "center", **kw})


_STAMPS: dict[tuple, tuple[Optional[np.ndarray], float, float]] = {}
MAX_STAMPS = 4096    # bounded memory: the cache starts again when full
_STAMP_FIGURES: dict[float, Figure] = {}


def _stamp_figure(dpi: float) -> Figure:
    """The figure a stamp's text belongs to while it is drawn alone (one per dpi: making a Figure
    costs more than drawing a short text)."""
    fig = _STAMP_FIGURES.get(dpi)
    if fig is None:
        fig = _STAMP_FIGURES[dpi] = Figure(dpi=dpi)
    return fig


def _centred_stamp(s: str, fontsize: float, color: str, rotation: float, dpi: float,
                   label_pad: Optional[float] = None, ha: str = "center", linespacing: float = 1.2
                   ) -> tuple[Optional[np.ndarray], float, float]:
    """``s`` rendered alone, centred (on a white label ``label_pad`` font sizes wider if given;
    ``ha="right"``: ending at the anchor): (RGBA image, bottom row first; (dx, dy) from the image's
    bottom-left corner to the anchor), or (None, 0, 0) without ink."""
    key = (s, fontsize, color, rotation, dpi, label_pad, ha, linespacing)
    stamp = _STAMPS.get(key)
    if stamp is None:
        # The anchor at the centre of a canvas that holds the text on every side of it (either
        # alignment): a character is at most an em wide, a line ``linespacing`` ems high; a square
        # for a rotated text.
        lines = s.split("\n")
        pad = 2 * (label_pad or 0)
        across, up = max(map(len, lines)) + 2 + pad, len(lines) * linespacing + 1 + pad
        if rotation % 180:
            across = up = max(across, up)
        em = fontsize * dpi / 72
        w, h = int(2 * across * em) + 8, int(2 * up * em) + 8
        canvas = MetricsRenderer(w, h, dpi)
        alone = _centred_text(w / 2, h / 2, s, fontsize, color, rotation, transform=IdentityTransform(),
                              bbox=None if label_pad is None else {**LabelText.LABEL, "pad": label_pad}, ha=ha,
                              linespacing=linespacing)
        alone.set_figure(_stamp_figure(dpi))
        Text.draw(alone, canvas)
        pixels = np.asarray(canvas.buffer_rgba())
        ink = pixels[..., 3] != 0
        rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        if rows.size == 0:
            stamp = (None, 0.0, 0.0)
        else:
            top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
            stamp = (pixels[top:bottom, left:right][::-1].copy(), w / 2 - left, h / 2 - (h - bottom))
        if len(_STAMPS) >= MAX_STAMPS:
            _STAMPS.clear()
        _STAMPS[key] = stamp
    return stamp


def draw_segments(ax: Axes, width: int, y0: float, y1: float) -> None:
    """Shade the ``width``-lane segments of a warp as alternating bands from ``y0`` to ``y1``."""
    if width not in WIDTHS:
        raise ValueError(f"width must be a power of two in [1, 32] ({', '.join(map(str, WIDTHS))}); got {width!r}")
    for s in range(LANES // width):
        add_patch(ax, Rectangle((s * width - 0.5, y0), width, y1 - y0, facecolor=style.SEGMENT_BANDS[s % 2],
                               edgecolor="none", zorder=0))


def _value_text(texts: LaneTexts, x: float, y: float, text: str, color: str) -> None:
    """Write ``text`` in the lane box at (x, y) if it fits; an ellipsis says 'see the table'."""
    if len(text) <= FIT_ACROSS:
        texts.add(x, y, text, fontsize=VALUE_SIZE, color=color)
    elif len(text) <= FIT_ROTATED:
        texts.add(x, y, text, fontsize=SMALL_SIZE, color=color, rotation=90)
    else:
        texts.add(x, y, "…", fontsize=VALUE_SIZE, color=color)


def _lane_style(fill: str, *, result: bool, active: bool, faded: bool, kept_own: bool,
                defined: bool, state: Optional[str] = None) -> tuple[str, str, float, Optional[str], str]:
    """(face, edge, linewidth, hatch, text colour) of one lane box.

    Later rules win: undefined beats everything (it must never look like a value), a lane that does
    not call beats faded, and the orange keeps-own outline shows on any defined lane. ``state``
    refines a lane that does not call: "exited", "elsewhere", or "culprit" (elsewhere, yet named in
    the mask); None when it is not known which.
    """
    face, edge, lw, hatch, text = fill, style.BLACK, 0.6, None, style.BLACK
    if result:
        face, text = style.RESULT, "white"
    if faded:
        face, edge, text = "white", style.INACTIVE, "#999999"
    if not active:
        face, text = style.INACTIVE, "#555555"
        if state in ("elsewhere", "culprit"):
            face = style.ELSEWHERE
        if state == "culprit":
            edge, lw = style.BLACK, 2.4
    if kept_own:
        edge, lw = style.KEEPS_OWN, 1.2 if faded else 2.2
    if not defined:
        face, edge, lw, hatch, text = "white", style.UNDEFINED_EDGE, 1.2, style.UNDEFINED_HATCH, style.UNDEFINED_TEXT
    return face, edge, lw, hatch, text


def _hatched(patch: Patch) -> Patch:
    """Give an undefined box its pale hatching (matplotlib >= 3.10 colours hatches on their own;
    older versions draw them in the edge colour, which the white label under "undef" survives)."""
    if patch.get_hatch() and hasattr(patch, "set_hatchcolor"):
        patch.set_hatchcolor(style.UNDEFINED_HATCH_COLOR)
    return patch


def _states(active: np.ndarray, exited: Optional[Any], in_mask: np.ndarray) -> list[Optional[str]]:
    if exited is None:
        return [None] * LANES
    gone = _lane_row(exited, "exited", bool)
    return [None if a else "exited" if g else "culprit" if m else "elsewhere"
            for a, g, m in zip(active, gone, in_mask)]


def draw_warp(ax: Axes, values: Any, *, defined: Optional[Any] = None, active: Optional[Any] = None,
              in_mask: Optional[Any] = None, kept_own: Optional[Any] = None, result_lanes: Iterable[int] = (),
              width: Optional[int] = None, title: Optional[str] = None, fmt: Fmt = None, y: float = 0.0,
              label: Optional[str] = None, faded: Optional[Any] = None, fill: str = style.LANE_FILL,
              numbers: Optional[str] = "below", exited: Optional[Any] = None,
              hide_inactive: bool = False) -> list[Rectangle]:
    """Draw one warp as a row of 32 lane boxes centred on height ``y``; return the boxes (lane order).

    ``values`` (32,) are written in the boxes when they fit. Per-lane bool flags (default: the
    ordinary case): ``defined`` False -> hatched, vermilion edge, "undef" instead of the number;
    ``active`` False -> the lane does not call: grey, or with ``exited`` given, grey if it has
    exited and pale yellow if it is alive elsewhere (thick black edge if ``in_mask`` names it);
    ``hide_inactive`` writes "–" in such lanes instead of their value; ``in_mask`` False -> dashed
    outline; ``kept_own`` True -> orange outline; ``faded`` True -> de-emphasised (a value nobody
    reads). ``result_lanes`` are filled green, other lanes ``fill``. ``width`` shades the row's
    segments; ``label`` names the row at the left; ``numbers`` puts lane numbers "below", "above"
    or nowhere (None). Lane l is centred on x = l.
    """
    vals = _lane_row(values, "values")
    defined_, active_ = _flags(defined, "defined", True), _flags(active, "active", True)
    in_mask_, kept_ = _flags(in_mask, "in_mask", True), _flags(kept_own, "kept_own", False)
    faded_ = _flags(faded, "faded", False)
    states = _states(active_, exited, in_mask_)
    results = set(int(l) for l in result_lanes)
    if width is not None:
        draw_segments(ax, width, y - 0.55, y + 0.55)
    boxes = []
    texts = LaneTexts(ax)
    for lane in range(LANES):
        face, edge, lw, hatch, text_color = _lane_style(
            fill, result=lane in results, active=active_[lane], faded=faded_[lane], kept_own=kept_[lane],
            defined=defined_[lane], state=states[lane])
        box = Rectangle((lane - BOX_W / 2, y - BOX_H / 2), BOX_W, BOX_H, facecolor=face, edgecolor=edge,
                        linewidth=lw, hatch=hatch, zorder=2,
                        linestyle=style.OUTSIDE_MASK_STYLE if not in_mask_[lane] else "-")
        add_patch(ax, _hatched(box), clip=False)
        boxes.append(box)
        if not defined_[lane]:
            # An opaque white label keeps the word readable over the hatching.
            undef = LabelText(lane, y, UNDEF_TEXT, fontsize=UNDEF_SIZE, color=text_color)
            undef.set_clip_on(False)
            ax.add_artist(undef)
        elif hide_inactive and not active_[lane]:
            texts.add(lane, y, style.NOT_CALLING_TEXT, fontsize=VALUE_SIZE, color=text_color)
        else:
            _value_text(texts, lane, y, format_value(vals[lane], fmt), text_color)
    if numbers:
        dy = -(BOX_H / 2 + 0.18) if numbers == "below" else BOX_H / 2 + 0.18
        for lane in range(LANES):
            texts.add(lane, y + dy, str(lane), fontsize=NUMBER_SIZE, color=NUMBER_COLOR)
    if label:
        add_text(ax, -0.75, y, label, ha="right", fontsize=8)
    if title:
        set_title(ax, title)
    _frame_lanes(ax)
    return boxes


def _frame_lanes(ax: Axes) -> None:
    ax.set_xlim(-0.6, LANES - 0.4)
    ax.set_axis_off()


def draw_shuffle_arrows(ax: Axes, src_lane: Any, defined: Any, *, y_from: float, y_to: float,
                        faded: Optional[Any] = None) -> int:
    """Arrows from each destination's source lane (row ``y_from``) to the destination (row ``y_to``).

    No arrow where a lane kept its own value or did not call (src -1). Reads that are undefined
    are dashed vermilion; arrows into ``faded`` lanes are faint. Returns the number of arrows.
    """
    src = _lane_row(src_lane, "src_lane", np.int64)
    defined_, faded_ = _lane_row(defined, "defined", bool), _flags(faded, "faded", False)
    down = 1.0 if y_from > y_to else -1.0
    count = 0
    for dst in np.flatnonzero((src >= 0) & (src != LANE)):
        ok = defined_[dst]
        arrow = FancyArrowPatch((src[dst], y_from - down * BOX_H / 2), (dst, y_to + down * BOX_H / 2),
                                arrowstyle="-|>", mutation_scale=7, shrinkA=0, shrinkB=0,
                                color=style.ARROW if ok else style.UNDEFINED_EDGE,
                                linestyle="-" if ok else "--", linewidth=0.9 if ok else 1.1,
                                alpha=0.2 if faded_[dst] else 0.9, zorder=3)
        add_patch(ax, arrow, clip=False)
        count += 1
    return count


# ---------------------------------------------------------------- legend and footer


_LEGEND: dict[str, Callable[[], Any]] = {
    "lane": lambda: Patch(facecolor=style.LANE_FILL, edgecolor=style.BLACK, linewidth=0.6, label="lane (value)"),
    "arrow": lambda: Line2D([], [], color=style.ARROW, marker=">", markersize=4,
                            label="shuffle: source → destination"),
    "undef_arrow": lambda: Line2D([], [], color=style.UNDEFINED_EDGE, linestyle="--",
                                  label="read of an undefined value"),
    "kept_own": lambda: Patch(facecolor=style.LANE_FILL, edgecolor=style.KEEPS_OWN, linewidth=2.2,
                              label="kept its own value (no arrow)"),
    "undefined": lambda: _hatched(Patch(facecolor="white", edgecolor=style.UNDEFINED_EDGE, hatch=style.UNDEFINED_HATCH,
                                        label="undefined")),
    "inactive": lambda: Patch(facecolor=style.INACTIVE, edgecolor=style.BLACK, linewidth=0.6,
                              label="does not call (–)"),
    "exited": lambda: Patch(facecolor=style.EXITED, edgecolor=style.BLACK, linewidth=0.6, label="exited (–)"),
    "elsewhere": lambda: Patch(facecolor=style.ELSEWHERE, edgecolor=style.BLACK, linewidth=0.6,
                               label="alive elsewhere, not calling (–)"),
    "culprit": lambda: Patch(facecolor=style.ELSEWHERE, edgecolor=style.BLACK, linewidth=2.0,
                             label="named in the mask, but elsewhere"),
    "outside_mask": lambda: Patch(facecolor="white", edgecolor=style.BLACK, linestyle=style.OUTSIDE_MASK_STYLE,
                                  label="outside the mask"),
    "result": lambda: Patch(facecolor=style.RESULT, edgecolor=style.BLACK, linewidth=0.6, label="result"),
    "faded": lambda: Patch(facecolor="white", edgecolor=style.INACTIVE, label="value nobody reads"),
    "bit_set": lambda: Patch(facecolor=style.RESULT, edgecolor=style.BLACK, linewidth=0.6, label="bit set"),
}


def _legend(fig: Figure, keys: Sequence[str], *, width: Optional[int] = None, lane_label: Optional[str] = None,
            y: float = 0.065) -> None:
    handles = [_LEGEND[k]() for k in keys]
    if lane_label:
        handles[0].set_label(lane_label)
    if width is not None and width < LANES:
        handles.append(Patch(facecolor=style.SEGMENT_BANDS[1], edgecolor="none",
                             label=f"width-{width} segments (shaded)"))
    stamped_legend(fig, handles, ("lanes", tuple(keys), width, lane_label, y), loc="center", bbox_to_anchor=(0.5, y),
                   ncol=min(len(handles), 5), fontsize=7, frameon=False, handlelength=1.6, columnspacing=1.2)


def stamped_legend(fig: Figure, handles: Sequence[Artist], key: tuple, **kw: Any) -> Legend:
    """A figure legend of ``handles`` (their labels), placed by ``kw`` in figure coordinates, that Agg
    draws from a stamp: ``key`` must name everything the legend's look depends on besides the figure's
    size and dpi (equal keys, equal legends), e.g. a module name and the legend's entries."""
    legend = _StampedLegend(fig, handles, [h.get_label() for h in handles], bbox_transform=fig.transSubfigure, **kw)
    legend.stamp_key = key
    fig.legends.append(legend)
    return legend


class _StampedLegend(Legend):
    """A legend of this module's figures that Agg draws from a stamp: the same legend (keys, width,
    label, place, anchor size, dpi) drawn once and reused, placed from its anchor, so that figures
    of other heights share it. Speed: laying out a legend costs a lane figure about 30 ms per
    drawing, and the explorers draw a few legends again and again."""

    _stamps: dict[tuple, tuple[Optional[np.ndarray], int, int]] = {}
    MAX_STAMPS = 256
    stamp_key: tuple = ()

    def draw(self, renderer: Any) -> None:
        if not self.get_visible() or not isinstance(renderer, RendererAgg) or not self.stamp_key:
            return super().draw(renderer)
        anchor = self.get_bbox_to_anchor()
        ax, ay = round(anchor.x0), round(anchor.y0)
        key = (self.stamp_key, round(anchor.width), round(anchor.height), renderer.dpi)
        stamp = self._stamps.get(key)
        if stamp is None:
            size = (int(renderer.width), int(renderer.height))
            scratch = StampRenderer(*size, renderer.dpi)   # the labels' texts come from stamps too
            super().draw(scratch)
            pixels = np.asarray(scratch.buffer_rgba())
            rows = np.flatnonzero(pixels[..., 3].any(axis=1))
            if rows.size == 0:
                stamp = (None, 0, 0)
            else:
                cols = np.flatnonzero(pixels[rows[0]:rows[-1] + 1, :, 3].any(axis=0))
                image = pixels[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1][::-1].copy()
                # its bottom-left corner, counted from the anchor's (pixels from the bottom)
                stamp = (image, int(cols[0]) - ax, size[1] - int(rows[-1]) - 1 - ay)
            if len(self._stamps) >= self.MAX_STAMPS:
                self._stamps.clear()
            self._stamps[key] = stamp
        image, x, y = stamp
        if image is not None:
            gc = renderer.new_gc()
            renderer.draw_image(gc, ax + x, ay + y, image)
            gc.restore()
        self.stale = False


def _footer(fig: Figure, source_label: str) -> None:
    fig.text(0.005, 0.008, f"Computed by: {source_label}", fontsize=7, color="#444444", ha="left", va="bottom")


def _new_figure(height: float) -> tuple[Figure, Axes]:
    fig = LaneFigure(figsize=(style.FIG_WIDTH, height))
    ax = fig.add_axes((0.065, 0.2, 0.93, 0.68))
    return fig, ax


def set_title(ax: Axes, title: str) -> None:
    """The axes' title, at the series' size, placed where matplotlib would place it over an axes
    without tick labels on top; a title placed by hand spares matplotlib a tick layout per drawing
    (a fifth of a lane figure's drawing time)."""
    ax.set_title(title, fontsize=9, color=style.BLACK, y=1.0)


class MetricsRenderer(RendererAgg):
    """An Agg renderer whose text metrics are cached across every renderer of this class: laying
    out a text asks for them several times, and a new renderer (a figure's, or the scratch canvas a
    stamp is drawn on) would otherwise measure every string again."""

    _metrics: dict[tuple, tuple[float, float, float]] = {}
    MAX_ENTRIES = 8192     # bounded memory: a cache starts again when full

    def get_text_width_height_descent(self, s: str, prop: Any, ismath: Any) -> tuple[float, float, float]:
        if ismath:
            return super().get_text_width_height_descent(s, prop, ismath)
        key = (s, hash(prop), self.dpi)
        found = self._metrics.get(key)
        if found is None:
            if len(self._metrics) >= self.MAX_ENTRIES:
                self._metrics.clear()
            found = self._metrics[key] = super().get_text_width_height_descent(s, prop, ismath)
        return found


class StampRenderer(MetricsRenderer):
    """An Agg renderer that draws text from cached bitmaps ("stamps") and caches text metrics,
    across every figure it renders.

    Speed: text is most of the drawing time of every explorer's figure. Matplotlib lays out and
    rasterises each glyph of each text at each drawing, and keeps its metrics cache per renderer,
    which is new for every figure; the explorers draw the same lane numbers, values, labels, titles
    and legends again and again. A stamp is one line of text rendered alone (same string, font,
    size, angle, colour and dpi), cropped, and drawn with ``draw_image`` at the text's anchor
    rounded to a whole pixel: at most half a pixel from where Agg would put it, under the same clip.
    Math text is drawn as Agg draws it; other renderers (SVG, PDF) never see stamps.
    """

    _stamps: dict[tuple, tuple[Optional[np.ndarray], int, int]] = {}
    _stamp_bytes = [0]     # what the stamps hold, in bytes
    MAX_BYTES = 64 << 20   # the stamps start again when full (MAX_ENTRIES) or past this
    MAX_CHARS = 200        # titles and footers too: many are drawn again (a footer, the line under a title)

    def draw_text(self, gc: Any, x: float, y: float, s: str, prop: Any, angle: float, ismath: Any = False,
                  mtext: Any = None) -> None:
        shaped = mtext is not None and any(getattr(mtext, f, lambda: None)() for f in ("get_fontfeatures", "get_language"))
        if ismath or shaped or len(s) > self.MAX_CHARS:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        key = (s, hash(prop), angle, tuple(gc.get_rgb()), gc.get_alpha(), gc.get_forced_alpha(),
               gc.get_antialiased(), self.dpi)
        stamp = self._stamps.get(key)
        if stamp is None:
            stamp = self._stamp(gc, s, prop, angle)
            size = 0 if stamp[0] is None else stamp[0].nbytes
            if len(self._stamps) >= self.MAX_ENTRIES or self._stamp_bytes[0] + size > self.MAX_BYTES:
                self._stamps.clear()
                self._stamp_bytes[0] = 0
            self._stamps[key] = stamp
            self._stamp_bytes[0] += size
        image, left, top = stamp
        if image is not None and np.isfinite(x) and np.isfinite(y):
            # Agg clips text to the clip rectangle only, not to a clip path: so does the stamp.
            rect_only = self.new_gc()
            rect_only.copy_properties(gc)
            rect_only.set_clip_path(None)
            # (x, y) count from the top left; draw_image takes the image's bottom-left corner, from the bottom
            self.draw_image(rect_only, round(x) + left, round(self.height - (round(y) + top + image.shape[0])), image)
            rect_only.restore()

    def _stamp(self, gc: Any, s: str, prop: Any, angle: float) -> tuple[Optional[np.ndarray], int, int]:
        """``s`` drawn alone, anchored at a whole pixel: (RGBA image, bottom row first; its top-left
        corner from the anchor, y downwards), or (None, 0, 0) for a text without ink."""
        w, h, d = self.get_text_width_height_descent(s, prop, False)
        pad = int(prop.get_size_in_points() * self.dpi / 72) + 4
        if angle == 0:   # the glyphs run right of the anchor, from h - d above its baseline to d below
            size, (ax, ay) = (int(w) + 2 * pad, int(h) + 2 * pad), (pad, pad + int(np.ceil(h - d)))
        else:            # any angle stays inside
            reach = int(w + h) + pad
            size, (ax, ay) = (2 * reach, 2 * reach), (reach, reach)
        scratch = MetricsRenderer(*size, self.dpi)
        alone = scratch.new_gc()
        alone.copy_properties(gc)
        alone.set_clip_rectangle(None)
        alone.set_clip_path(None)
        RendererAgg.draw_text(scratch, alone, ax, ay, s, prop, angle)
        alone.restore()
        pixels = np.asarray(scratch.buffer_rgba())
        rows = np.flatnonzero(pixels[..., 3].any(axis=1))
        if rows.size == 0:
            return None, 0, 0
        cols = np.flatnonzero(pixels[rows[0]:rows[-1] + 1, :, 3].any(axis=0))
        top, left = int(rows[0]), int(cols[0])
        image = pixels[top:rows[-1] + 1, left:cols[-1] + 1][::-1].copy()
        return image, left - ax, top - ay


class StampCanvas(FigureCanvasAgg):
    """An Agg canvas that renders with :class:`StampRenderer`."""

    def get_renderer(self) -> StampRenderer:
        w, h = self.get_width_height(physical=True)
        key = (w, h, self.figure.dpi)
        if self._lastKey != key:
            self.renderer = StampRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


def figure_png(fig: Figure, dpi: int = style.DPI) -> bytes:
    """The figure rendered as PNG bytes (for ``ipywidgets.Image`` and the notebooks) by
    :class:`StampRenderer`; the figure keeps its own canvas."""
    buf = io.BytesIO()
    own = fig.canvas
    try:
        # Light compression: a widget redraws on every slider move, and the bytes stay in the kernel.
        StampCanvas(fig).print_figure(buf, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})
    finally:
        fig.set_canvas(own)
    return buf.getvalue()


# ---------------------------------------------------------------- shuffles and ballots


def _lane_list(where: np.ndarray) -> str:
    lanes = [str(int(l)) for l in np.flatnonzero(where)]
    return " ".join(lanes) if len(lanes) <= 8 else " ".join(lanes[:8]) + " …"


def _exited_of(active: np.ndarray, exited: Optional[Any], result: Optional[ShuffleResult] = None) -> Optional[np.ndarray]:
    """The exited lanes, from ``exited`` or else from a result's lane states; None if unknown."""
    if exited is not None:
        return _lane_row(exited, "exited", bool)
    if result is not None and result.state is not None:
        return _lane_row(result.state, "result.state", np.int64) == EXITED
    return None


def shuffle_figure(values: Any, result: ShuffleResult, *, op_label: str, width: int, mask: int,
                   active: Optional[Any], source_label: str, exited: Optional[Any] = None,
                   kept_own: Optional[Any] = None) -> Figure:
    """Before/after rows of one warp's shuffle, with an arrow from each destination's source lane.

    ``values`` (32,) is the input, ``result`` what :mod:`helpers.engine.warp` returned for it (one warp),
    ``mask`` the member mask, ``active`` the calling lanes (None: all), ``exited`` the lanes that
    have returned (None: taken from ``result.state`` when it has one). Lanes that do not call show
    "–" in both rows. A calling lane outside ``mask`` gets an undefined result; a mask that names a
    lane alive elsewhere makes every result undefined, and the title says so.
    ``source_label`` names the engine in the footer. ``kept_own`` marks the lanes whose source was
    out of range (PTX ``pval`` false, see :func:`helpers.engine.emulator.in_range`); None: the defined lanes
    that read their own lane.
    """
    vals = _lane_row(values, "values")
    act = _flags(active, "active", True)
    gone = _exited_of(act, exited, result)
    in_mask = ((int(mask) >> LANE) & 1).astype(bool)
    src = _lane_row(result.src_lane, "src_lane", np.int64)
    defined = _lane_row(result.defined, "defined", bool)
    kept = defined & (src == LANE) if kept_own is None else defined & _lane_row(kept_own, "kept_own", bool)
    culprits = in_mask & ~act & ~gone if gone is not None else np.zeros(LANES, bool)
    fig, ax = _new_figure(3.9 if culprits.any() else 3.7)
    top = ROW_GAP
    draw_segments(ax, width, -0.6, top + 0.6)
    draw_warp(ax, vals, active=act, in_mask=in_mask, exited=gone, y=top, label="before", numbers="above",
              fmt=None, hide_inactive=True)
    draw_warp(ax, _lane_row(result.values, "result.values"), defined=defined | ~act, active=act, in_mask=in_mask,
              exited=gone, kept_own=kept, y=0.0, label="after", numbers="below", hide_inactive=True)
    n_arrows = draw_shuffle_arrows(ax, src, defined, y_from=top, y_to=0.0)
    ax.set_ylim(-0.85, top + 0.85)
    title = f"{op_label}    (width {width}, mask 0x{int(mask):08X}, {int(act.sum())} calling lanes)"
    if culprits.any():
        title += (f"\nUNDEFINED CALL: the mask names lane(s) {_lane_list(culprits)}, alive but not calling, "
                  f"so no lane gets a defined result")
    set_title(ax, title)
    not_calling = ~act
    present = {"arrow": n_arrows > 0, "undef_arrow": bool((~defined & (src >= 0) & (src != LANE)).any()),
               "kept_own": bool(kept.any()), "undefined": bool((~defined & act).any()),
               "inactive": gone is None and bool(not_calling.any()),
               "exited": gone is not None and bool((not_calling & gone).any()),
               "elsewhere": gone is not None and bool((not_calling & ~gone & ~in_mask).any()),
               "culprit": bool(culprits.any()), "outside_mask": bool((~in_mask).any())}
    _legend(fig, ["lane", *(k for k, shown in present.items() if shown)], width=width)
    _footer(fig, source_label)
    return fig


def ballot_bits(result: int) -> np.ndarray:
    """(32,) bool: bit l of the 32-bit ``result`` (lane l's bit)."""
    return ((int(result) >> LANE) & 1).astype(bool)


def ballot_figure(predicate: Any, mask: int, active: Optional[Any], result: Union[int, VoteResult],
                  source_label: str, *, values: Optional[Any] = None, fmt: Fmt = None,
                  exited: Optional[Any] = None) -> Figure:
    """One warp's ``__ballot_sync``: per-lane predicate, the bit strip (lane l <-> bit l), the result.

    The bits are drawn from ``result`` (what the backend returned: an int or a one-warp
    :class:`~helpers.engine.emulator.VoteResult`), not recomputed, in lane order under their lanes; the
    result is also written in hex and in binary (bit 31 first). ``active`` are the calling lanes,
    ``exited`` the lanes that have returned (None: not known; the others are alive elsewhere).
    Lanes that do not call show "–" (their bit is 0). An undefined result hatches all 32 bits.
    ``values``, when given, adds a row with the data the predicate was computed from.
    """
    pred = _lane_row(predicate, "predicate") != 0
    act = _flags(active, "active", True)
    gone = None if exited is None else _lane_row(exited, "exited", bool)
    in_mask = ((int(mask) >> LANE) & 1).astype(bool)
    ok = bool(result.defined) if isinstance(result, VoteResult) else True
    number = (result.value if ok else 0) if isinstance(result, VoteResult) else int(result)
    bits = ballot_bits(number)
    culprits = in_mask & ~act & ~gone if gone is not None else np.zeros(LANES, bool)
    rows = 3 if values is not None else 2
    fig = LaneFigure(figsize=(style.FIG_WIDTH, 0.85 * rows + 2.0))
    ax = fig.add_axes((0.075, 0.36, 0.92, 0.52))
    y = 0.0
    draw_warp(ax, bits.astype(int), defined=np.full(LANES, ok), active=act, in_mask=in_mask, exited=gone,
              result_lanes=np.flatnonzero(bits), fill="white", y=y, label="ballot bit", numbers="below",
              hide_inactive=True)
    draw_warp(ax, pred.astype(int), active=act, in_mask=in_mask, exited=gone, y=y + 1.25, label="predicate",
              numbers=None, hide_inactive=True)
    top = y + 1.25
    if values is not None:
        top += 1.25
        draw_warp(ax, _lane_row(values, "values"), active=act, in_mask=in_mask, exited=gone, y=top, label="value",
                  numbers=None, fmt=fmt, hide_inactive=True)
    # lane l feeds bit l: one line per lane, drawn as one artist (the explorer redraws this figure)
    ax.plot(np.repeat(LANE, 3).astype(float), np.tile([y + BOX_H / 2, y + 1.25 - BOX_H / 2, np.nan], LANES),
            color="#888888", linewidth=0.5, zorder=1)
    numbers = LaneTexts(ax)
    for lane in range(LANES):
        numbers.add(lane, top + BOX_H / 2 + 0.2, str(lane), fontsize=NUMBER_SIZE, color=NUMBER_COLOR)
    add_text(ax, -0.75, top + BOX_H / 2 + 0.2, "lane", ha="right", fontsize=7)
    add_text(ax, -0.75, y - BOX_H / 2 - 0.2, "bit", ha="right", fontsize=7)
    ax.set_ylim(y - 0.75, top + 0.75)
    set_title(ax, f"__ballot_sync(0x{int(mask):08X}, predicate): lane l sets bit l "
                  f"(if it calls, is in the mask and its predicate is true)")
    if ok:
        binary = " ".join(f"{number:032b}"[i:i + 4] for i in range(0, 32, 4))
        line = f"result = 0x{number:08X} = 0b {binary}"
        note = "(binary written bit 31 … bit 0; the strip above is in lane order, bit 0 at the left)"
        color = style.BLACK
    else:
        line = "result = undefined"
        note = (f"the mask names lane(s) {_lane_list(culprits)}, alive but not calling: the Programming Guide "
                f"defines no result (the warp may even hang)")
        color = style.UNDEFINED_TEXT
    fig.text(0.5, 0.235, line, ha="center", fontsize=8.5, family="monospace", color=color)
    fig.text(0.5, 0.185, note, ha="center", fontsize=7, color="#444444")
    not_calling = ~act
    present = {"undefined": not ok, "inactive": gone is None and bool(not_calling.any()),
               "exited": gone is not None and bool((not_calling & gone).any()),
               "elsewhere": gone is not None and bool((not_calling & ~gone & ~in_mask).any()),
               "culprit": bool(culprits.any()), "outside_mask": bool((~in_mask).any())}
    bit_set = ["bit_set"] if ok and bits.any() else []
    _legend(fig, ["lane", *bit_set, *(k for k, shown in present.items() if shown)], lane_label="lane / bit",
            y=0.1)
    _footer(fig, source_label)
    return fig


# ---------------------------------------------------------------- traces


def held_defined(trace: Any) -> np.ndarray:
    """(n_steps, n_warps, 32) bool: is the value a lane holds after each step defined.

    A lane's value stays defined while everything that went into it was: at step k it combines its
    own previous value with what it received from ``src_lane`` (when it called), so it is undefined
    once the read was undefined or the source lane's value already was. Inactive lanes that did not
    call keep what they held.
    """
    d = np.empty(trace.held.shape, bool)
    d[0] = trace.defined[0] | ~trace.active[0]
    for k in range(1, trace.n_steps):
        src = trace.src_lane[k]
        called = src >= 0
        src_ok = np.take_along_axis(d[k - 1], np.where(called, src, 0), axis=1)
        got = trace.defined[k] & src_ok
        d[k] = d[k - 1] & np.where(called, got, ~trace.active[k] | trace.defined[k])
    return d


def result_lanes_of(trace: Any) -> tuple[int, ...]:
    """The lanes holding the final result: ``trace.meta["result_lanes"]`` if given, else lane 0."""
    return tuple(int(l) for l in trace.meta.get("result_lanes", (0,)))


def meaningful_lanes(trace: Any, result_lanes: Optional[Sequence[int]] = None) -> np.ndarray:
    """(n_steps, n_warps, 32) bool: the lanes whose value at each step still flows to the result.

    Walks the ``src_lane`` graph backwards from ``result_lanes`` (default :func:`result_lanes_of`)
    at the last step: a lane's value matters at step k-1 if the lane itself matters at step k (it
    combines its own value, as reductions and scans do) or a lane that matters read it at step k.
    The rest are "values nobody reads".
    """
    lanes = result_lanes_of(trace) if result_lanes is None else tuple(result_lanes)
    m = np.zeros(trace.held.shape, bool)
    m[-1][:, list(lanes)] = True
    for k in range(trace.n_steps - 1, 0, -1):
        m[k - 1] = m[k]
        for w in range(trace.n_warps):
            src = trace.src_lane[k, w]
            m[k - 1, w, src[m[k, w] & (src >= 0)]] = True
    return m


def frame_steps(n_steps: int) -> list[int]:
    """Every step if there are at most MAX_FRAMES; else MAX_FRAMES evenly spaced, first and last kept."""
    if n_steps <= MAX_FRAMES:
        return list(range(n_steps))
    return sorted(set(np.linspace(0, n_steps - 1, MAX_FRAMES).round().astype(int).tolist()))


def _draw_trace_step(fig: Figure, trace: Any, step: int, warp: int, meaningful: np.ndarray,
                     hdef: np.ndarray) -> None:
    """Draw ``step`` of ``trace`` on the (cleared) figure: previous and current held values, arrows."""
    ax = fig.add_axes((0.065, 0.2, 0.93, 0.68))
    last = trace.n_steps - 1
    results = result_lanes_of(trace) if step == last else ()
    k = step
    act, in_mask = trace.active[k, warp], trace.in_mask[k, warp]
    faded_now = ~meaningful[k, warp]
    if k > 0:
        prev_faded = ~meaningful[k - 1, warp]
        draw_warp(ax, trace.held[k - 1, warp], defined=hdef[k - 1, warp], active=trace.active[k - 1, warp],
                  in_mask=trace.in_mask[k - 1, warp], faded=prev_faded, y=ROW_GAP,
                  label="before", numbers="above", hide_inactive=True)
        src = trace.src_lane[k, warp]
        kept = trace.defined[k, warp] & (src == LANE)
        draw_shuffle_arrows(ax, src, trace.defined[k, warp], y_from=ROW_GAP, y_to=0.0, faded=faded_now)
    else:
        kept = np.zeros(LANES, bool)
        add_text(ax, LANES / 2 - 0.5, ROW_GAP, "the input: what each lane holds before the first step",
              fontsize=8, color="#444444")
    draw_warp(ax, trace.held[k, warp], defined=hdef[k, warp], active=act, in_mask=in_mask, kept_own=kept,
              faded=faded_now, result_lanes=results, y=0.0, label="after" if k else "input", numbers="below",
              hide_inactive=True)
    ax.set_ylim(-0.85, ROW_GAP + 0.85)
    warp_note = f", warp {warp}" if trace.n_warps > 1 else ""
    set_title(ax, f"{trace.title}{warp_note} — step {k} of {last}: {trace.labels[k]}")
    lane_word = "lane" if len(result_lanes_of(trace)) == 1 else "lanes"
    targets = " ".join(map(str, result_lanes_of(trace)))
    keys = ["lane", "arrow", "faded"] + (["result"] if results else [])
    keys += ["kept_own"] if kept.any() else []
    keys += ["undefined"] if (~hdef[k, warp]).any() else []
    keys += ["inactive"] if (~act).any() else []
    keys += ["outside_mask"] if (~in_mask).any() else []
    _legend(fig, keys, lane_label=f"partial that flows to {lane_word} {targets}")
    _footer(fig, trace.source)


def trace_figure(trace: Any, step: int, *, warp: int = 0) -> Figure:
    """One step of a :class:`~helpers.engine.trace.Trace` as a figure (the same picture as an animation frame).

    Shows what the lanes held before and after ``step``, that step's shuffle arrows from
    ``src_lane``, the meaningful partials (see :func:`meaningful_lanes`) against the faded values
    nobody reads, and the result lanes in green at the last step.
    """
    _check_step(trace, step, warp)
    fig = LaneFigure(figsize=(style.FIG_WIDTH, 3.7))
    _draw_trace_step(fig, trace, step, warp, meaningful_lanes(trace), held_defined(trace))
    return fig


def _check_step(trace: Any, step: int, warp: int) -> None:
    if not 0 <= step < trace.n_steps:
        raise ValueError(f"step must be in [0, {trace.n_steps - 1}] for this trace; got {step!r}")
    if not 0 <= warp < trace.n_warps:
        raise ValueError(f"warp must be in [0, {trace.n_warps - 1}] for this trace; got {warp!r}")


def trace_animation(trace: Any, *, interval: int = 800, warp: int = 0) -> FuncAnimation:
    """An animation of ``trace`` with one frame per step (at most 60 frames; longer traces are sampled).

    Display it with ``IPython.display.HTML(animation_html(anim))`` in a cell marked
    ``# NBVAL_IGNORE_OUTPUT`` (the HTML embeds frames that differ byte for byte between runs).
    """
    _check_step(trace, 0, warp)
    fig = LaneFigure(figsize=(style.FIG_WIDTH, 3.7))
    meaningful, hdef = meaningful_lanes(trace), held_defined(trace)

    def draw(step: int) -> list:
        fig.clear()
        _draw_trace_step(fig, trace, step, warp, meaningful, hdef)
        return []

    return FuncAnimation(fig, draw, frames=frame_steps(trace.n_steps), interval=interval, blit=False,
                         repeat=True, cache_frame_data=False)


# matplotlib's jshtml player draws its buttons with Font Awesome icons fetched from a CDN, so
# offline (the GPU host, a train, a locked-down lab) the buttons come out blank. These characters
# are in every font; the buttons keep their titles ("Play", "Next frame", ...) for tooltips.
_PLAYER_ICONS = {
    "fa-minus": "−", "fa-fast-backward": "|◀◀", "fa-step-backward": "|◀", "fa-play fa-flip-horizontal": "◀",
    "fa-pause": "❚❚", "fa-play": "▶", "fa-step-forward": "▶|", "fa-fast-forward": "▶▶|", "fa-plus": "+",
}
_FA_LINK = re.compile(r'<link rel="stylesheet"\s+href="[^"]*font-awesome[^"]*">')
_FA_ICON = re.compile(r'<i class="fa ([\w -]+?)"></i>')
_FIRST_FRAME = re.compile(r'frames\[0\] = "((?:[^"\\]|\\.)*)"', re.S)
_IMG = re.compile(r'<img id="(_anim_img\w+)">')


def animation_html(anim: FuncAnimation) -> str:
    """The animation as self-contained HTML with play / step controls (``anim.to_jshtml()``),
    made to work offline and before any script runs.

    Font Awesome icons (a CDN stylesheet) are replaced by plain characters: |◀◀ first, |◀ previous,
    ◀ backwards, ❚❚ pause, ▶ play, ▶| next, ▶▶| last, − / + speed. The first frame is also written
    into the ``<img>`` tag itself, so the picture is there (with its size) even before the player's
    script has set it.
    """
    html = _FA_LINK.sub("", anim.to_jshtml())
    html = _FA_ICON.sub(lambda m: _PLAYER_ICONS.get(m.group(1), m.group(1)), html)
    first = _FIRST_FRAME.search(html)
    if first:
        src = first.group(1).replace("\\\n", "")
        html = _IMG.sub(lambda m: f'<img id="{m.group(1)}" src="{src}" alt="animation frame">', html, count=1)
    return html


def trace_table(trace: Any, *, warp: int = 0, fmt: Fmt = None, lanes_per_block: int = 16) -> str:
    """A plain-text table of ``trace``: one row per step (its label), one column per lane.

    Held values after each step; ``undef`` where undefined (see :func:`held_defined`), ``-`` for a
    lane that is inactive at that step (it takes no part, so its stale register is not shown). Lanes are
    split into blocks of ``lanes_per_block`` to keep lines short. Deterministic: nothing about the
    engine that produced the trace is printed.
    """
    _check_step(trace, 0, warp)
    hdef = held_defined(trace)
    rows = [("lane", [str(l) for l in LANE])]
    for k in range(trace.n_steps):
        cells = [("-" if not a else format_value(v, fmt, 6) if d else UNDEF_TEXT)
                 for v, d, a in zip(trace.held[k, warp], hdef[k, warp], trace.active[k, warp])]
        rows.append((f"{k} {trace.labels[k]}", cells))
    return lane_blocks(rows, lanes_per_block)
