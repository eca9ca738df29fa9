"""One warp drawn as a row of 32 lane boxes, its shuffle arrows, and the lane figures' legend and footer.

The series' visual language (:mod:`helpers.viz.style`): a warp is a row of 32 numbered lanes; a
shuffle is an arrow from source to destination lane; a lane that keeps its own value has no arrow
and an orange outline; width segments are shaded bands; undefined results are hatched ``////``
(pale, with a vermilion edge) and read "undef" on a white label, never a number, and hatching
means nothing else; lanes that do not call show "–": grey when they have exited (or when it is not
known why), pale yellow when they are alive elsewhere, with a thick black edge when the mask names
them (which makes the whole call undefined); lanes outside the mask are outlined dashed; result
lanes are green. The figures built from these pieces are in :mod:`helpers.viz.lanes`,
:mod:`helpers.viz.block` and :mod:`helpers.viz.allreduce`.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from helpers.viz import style
from helpers.viz.render import LabelText, LaneTexts, add_patch, add_text, set_title, stamped_legend
from helpers.engine.params import LANES, WIDTHS


LANE = np.arange(LANES)
UNDEF_TEXT = "undef"

BOX_W, BOX_H = 0.86, 0.8          # a lane's box, in data units (lanes are 1 apart)
VALUE_SIZE, SMALL_SIZE = 7.0, 5.5  # points: 4 characters fit across a lane at FIG_WIDTH
UNDEF_SIZE = 4.8                   # points: "undef" fits across a lane box
NUMBER_SIZE, NUMBER_COLOR = 5.5, "#444444"   # lane numbers above or below a row
FIT_ACROSS, FIT_ROTATED = 4, 7     # characters that fit written across / rotated in a lane box

Fmt = Union[str, Callable[[Any], str], None]


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


def lane_row(a: Any, name: str, dtype: Any = None) -> np.ndarray:
    """``a`` as an array of one warp's 32 lanes (as ``dtype`` if given); a ValueError naming ``name`` otherwise."""
    arr = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
    if arr.shape != (LANES,):
        raise ValueError(f"{name} must have shape (32,) (one per lane of one warp); got shape {arr.shape}")
    return arr


def lane_flags(a: Optional[Any], name: str, default: bool) -> np.ndarray:
    """(32,) bool per-lane flags from ``a`` (checked as :func:`lane_row`), or ``default`` for every lane when None."""
    return np.full(LANES, default) if a is None else lane_row(a, name, bool)


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
    gone = lane_row(exited, "exited", bool)
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
    vals = lane_row(values, "values")
    defined_, active_ = lane_flags(defined, "defined", True), lane_flags(active, "active", True)
    in_mask_, kept_ = lane_flags(in_mask, "in_mask", True), lane_flags(kept_own, "kept_own", False)
    faded_ = lane_flags(faded, "faded", False)
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
    src = lane_row(src_lane, "src_lane", np.int64)
    defined_, faded_ = lane_row(defined, "defined", bool), lane_flags(faded, "faded", False)
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


def lane_legend(fig: Figure, keys: Sequence[str], *, width: Optional[int] = None,
                lane_label: Optional[str] = None, y: float = 0.065) -> None:
    """The lane figures' legend under the axes at height ``y`` (figure coordinates): one entry per key
    of ``_LEGEND`` in ``keys`` ("lane" first, renamed ``lane_label`` if given), and the shaded
    segments when ``width`` is below 32."""
    handles = [_LEGEND[k]() for k in keys]
    if lane_label:
        handles[0].set_label(lane_label)
    if width is not None and width < LANES:
        handles.append(Patch(facecolor=style.SEGMENT_BANDS[1], edgecolor="none",
                             label=f"width-{width} segments (shaded)"))
    stamped_legend(fig, handles, ("lanes", tuple(keys), width, lane_label, y), loc="center", bbox_to_anchor=(0.5, y),
                   ncol=min(len(handles), 5), fontsize=7, frameon=False, handlelength=1.6, columnspacing=1.2)


def footer(fig: Figure, source_label: str) -> None:
    """The figure's footer: "Computed by:" the engine or recording that produced its data."""
    fig.text(0.005, 0.008, f"Computed by: {source_label}", fontsize=7, color="#444444", ha="left", va="bottom")
