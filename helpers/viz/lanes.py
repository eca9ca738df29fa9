"""The lane figures of one warp's step: shuffles, ballots, trace steps and animations, and plain-text lane tables.

Drawn from data (a backend's result or a trace), with the boxes of :mod:`helpers.viz.boxes` and
rendered by :mod:`helpers.viz.render`. Figures are :class:`matplotlib.figure.Figure` objects made
without pyplot (see :mod:`helpers.viz.render`); the text tables are deterministic, for outputs that
nbval compares.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence, Union

import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from helpers.viz import style
from helpers.viz.boxes import (BOX_H, LANE, NUMBER_COLOR, NUMBER_SIZE, UNDEF_TEXT, Fmt, draw_segments,
                               draw_shuffle_arrows, draw_warp, footer, format_value, lane_flags, lane_legend,
                               lane_row)
from helpers.viz.render import LaneFigure, LaneTexts, add_text, set_title
from helpers.engine.emulator import ELSEWHERE, EXITED, ShuffleResult, VoteResult
from helpers.engine.params import LANES


MAX_FRAMES = 60
ROW_GAP = 2.3                      # vertical distance between a "before" and an "after" row


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
        src = lane_row(r.src_lane, "src_lane", np.int64)
        defined = lane_row(r.defined, "defined", bool)
        values = lane_row(r.values, "values")
        rows = [("lane", [str(l) for l in LANE]),
                ("src", [str(s) if s >= 0 else "-" for s in src]),
                ("value", [_result_cell(v, d, s, fmt) for v, d, s in zip(values, defined, src)])]
        kept = defined & (src == LANE) if kept_own is None else defined & lane_row(kept_own, "kept_own", bool)
        notes = [f"kept own value: {_lanes_text(kept)}",
                 f"undefined: {_lanes_text(~defined & (src >= 0))}",
                 f"did not call: {_lanes_text(src < 0)}"]
        head = ""
        if r.state is not None:
            state = lane_row(r.state, "state", np.int64)
            if (state == ELSEWHERE).any():
                notes[-1] += f" (exited: {_lanes_text(state == EXITED)}; alive elsewhere: {_lanes_text(state == ELSEWHERE)})"
            if r.call_defined is not None and not bool(r.call_defined):
                head = ("UNDEFINED CALL: the mask names a lane that is alive but not calling, "
                        "so no lane gets a defined value\n")
        return head + lane_blocks(rows, lanes_per_block) + "\n" + "\n".join(notes)
    values = lane_row(result_or_values, "values")
    rows = [("lane", [str(l) for l in LANE]), ("value", [format_value(v, fmt, 6) for v in values])]
    return lane_blocks(rows, lanes_per_block)


def _result_cell(v: Any, defined: bool, src: int, fmt: Fmt) -> str:
    if src < 0:
        return "-"
    return format_value(v, fmt, 6) if defined else UNDEF_TEXT


def mapping_text(result: ShuffleResult) -> str:
    """One machine-readable line: ``src: s0 s1 ... s31`` (``-`` for a lane that did not call)."""
    src = lane_row(result.src_lane, "src_lane", np.int64)
    return "src: " + " ".join(str(s) if s >= 0 else "-" for s in src)


def _new_figure(height: float) -> tuple[Figure, Axes]:
    fig = LaneFigure(figsize=(style.FIG_WIDTH, height))
    ax = fig.add_axes((0.065, 0.2, 0.93, 0.68))
    return fig, ax


def _lane_list(where: np.ndarray) -> str:
    lanes = [str(int(l)) for l in np.flatnonzero(where)]
    return " ".join(lanes) if len(lanes) <= 8 else " ".join(lanes[:8]) + " …"


def _exited_of(active: np.ndarray, exited: Optional[Any], result: Optional[ShuffleResult] = None) -> Optional[np.ndarray]:
    """The exited lanes, from ``exited`` or else from a result's lane states; None if unknown."""
    if exited is not None:
        return lane_row(exited, "exited", bool)
    if result is not None and result.state is not None:
        return lane_row(result.state, "result.state", np.int64) == EXITED
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
    vals = lane_row(values, "values")
    act = lane_flags(active, "active", True)
    gone = _exited_of(act, exited, result)
    in_mask = ((int(mask) >> LANE) & 1).astype(bool)
    src = lane_row(result.src_lane, "src_lane", np.int64)
    defined = lane_row(result.defined, "defined", bool)
    kept = defined & (src == LANE) if kept_own is None else defined & lane_row(kept_own, "kept_own", bool)
    culprits = in_mask & ~act & ~gone if gone is not None else np.zeros(LANES, bool)
    fig, ax = _new_figure(3.9 if culprits.any() else 3.7)
    top = ROW_GAP
    draw_segments(ax, width, -0.6, top + 0.6)
    draw_warp(ax, vals, active=act, in_mask=in_mask, exited=gone, y=top, label="before", numbers="above",
              fmt=None, hide_inactive=True)
    draw_warp(ax, lane_row(result.values, "result.values"), defined=defined | ~act, active=act, in_mask=in_mask,
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
    lane_legend(fig, ["lane", *(k for k, shown in present.items() if shown)], width=width)
    footer(fig, source_label)
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
    pred = lane_row(predicate, "predicate") != 0
    act = lane_flags(active, "active", True)
    gone = None if exited is None else lane_row(exited, "exited", bool)
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
        draw_warp(ax, lane_row(values, "values"), active=act, in_mask=in_mask, exited=gone, y=top, label="value",
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
    lane_legend(fig, ["lane", *bit_set, *(k for k, shown in present.items() if shown)], lane_label="lane / bit",
            y=0.1)
    footer(fig, source_label)
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
    # A trace may say what its non-calling lanes are doing (meta "not_calling": "elsewhere" or
    # "exited"); then they take the series' colours for that state, not the grey of "exited".
    state = trace.meta.get("not_calling")
    exited = None if state is None else np.full(LANES, state == "exited")
    faded_now = ~meaningful[k, warp]
    if k > 0:
        prev_faded = ~meaningful[k - 1, warp]
        draw_warp(ax, trace.held[k - 1, warp], defined=hdef[k - 1, warp], active=trace.active[k - 1, warp],
                  in_mask=trace.in_mask[k - 1, warp], faded=prev_faded, y=ROW_GAP,
                  label="before", numbers="above", hide_inactive=True, exited=exited)
        src = trace.src_lane[k, warp]
        kept = trace.defined[k, warp] & (src == LANE)
        draw_shuffle_arrows(ax, src, trace.defined[k, warp], y_from=ROW_GAP, y_to=0.0, faded=faded_now)
    else:
        kept = np.zeros(LANES, bool)
        add_text(ax, LANES / 2 - 0.5, ROW_GAP, "the input: what each lane holds before the first step",
              fontsize=8, color="#444444")
    draw_warp(ax, trace.held[k, warp], defined=hdef[k, warp], active=act, in_mask=in_mask, kept_own=kept,
              faded=faded_now, result_lanes=results, y=0.0, label="after" if k else "input", numbers="below",
              hide_inactive=True, exited=exited)
    ax.set_ylim(-0.85, ROW_GAP + 0.85)
    warp_note = f", warp {warp}" if trace.n_warps > 1 else ""
    set_title(ax, f"{trace.title}{warp_note} — step {k} of {last}: {trace.labels[k]}")
    lane_word = "lane" if len(result_lanes_of(trace)) == 1 else "lanes"
    targets = " ".join(map(str, result_lanes_of(trace)))
    keys = ["lane", "arrow", "faded"] + (["result"] if results else [])
    keys += ["kept_own"] if kept.any() else []
    keys += ["undefined"] if (~hdef[k, warp]).any() else []
    keys += ([state if state else "inactive"]) if (~act).any() else []
    keys += ["outside_mask"] if (~in_mask).any() else []
    lane_legend(fig, keys, lane_label=f"partial that flows to {lane_word} {targets}")
    footer(fig, trace.source)


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
