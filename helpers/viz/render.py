"""How the series' figures are rendered: fast text, stamped legends and the PNG renderer.

A lane figure writes about 130 short texts and a legend, and the explorers redraw their figures on
every slider move; matplotlib would lay out and rasterise every glyph each time. This module holds
what makes that fast without changing a pixel's meaning: :class:`LaneTexts` and :class:`LabelText`
(texts drawn from cached bitmaps, "stamps"), :func:`stamped_legend`, :func:`add_patch` and
:func:`add_text` (no per-artist clip-path updates), and :class:`StampRenderer` behind
:func:`figure_png`. :class:`LaneFigure` is a Figure made without pyplot that shows itself in Jupyter.

Figures are :class:`matplotlib.figure.Figure` objects made without pyplot, so they are never
registered with a pyplot window manager: a widget that redraws many times leaks nothing, and a
notebook shows a figure only when a cell returns or ``display``s it.
"""
from __future__ import annotations

import io
import weakref
from typing import Any, Optional, Sequence

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform, TransformedPath

from helpers.viz import style


class LaneFigure(Figure):
    """A Figure made without pyplot that still shows itself in Jupyter, as a PNG.

    Without pyplot, the inline backend may never register its Figure formatter; this repr makes a
    cell that ends with a figure show the picture either way (IPython prefers its registered
    formatter when there is one, so the output is a single PNG in both cases).
    """

    def _repr_png_(self) -> bytes:
        return figure_png(self)


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
