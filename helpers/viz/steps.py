"""The lane debugger's pictures: one step of one warp (:class:`helpers.machine.steps.Step`) as SVG and
HTML, in the series' visual language (:mod:`helpers.viz.style`).

SVG, not a Matplotlib figure: a step is redrawn on every move of the slider, and a string of a few
kilobytes is made in well under a millisecond. Meanings, as in every figure of the series: sky = a lane
executing this instruction, pale yellow = alive elsewhere (diverged), grey = exited, white with a
dotted outline = no thread (the rest of a partial warp), hatched = undefined, blue arrows = a shuffle
from source lane to destination lane.
"""
from __future__ import annotations

import html
from typing import Optional, Sequence

from helpers.machine.steps import FULL, Access, Barrier, Exchange, Step
from helpers.viz import style

BOX, GAP, LEFT = 22, 2, 70      # lane box size and spacing, the left margin for row labels (px)
WIDTH = LEFT + 32 * (BOX + GAP) + 8
PATTERN = (f'<defs><pattern id="warplab-undef" width="6" height="6" patternUnits="userSpaceOnUse" '
           f'patternTransform="rotate(45)"><rect width="6" height="6" fill="white"/>'
           f'<line x1="0" y1="0" x2="0" y2="6" stroke="{style.UNDEFINED_HATCH_COLOR}" stroke-width="3"/>'
           f'</pattern><marker id="warplab-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="5" '
           f'markerHeight="5" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{style.ARROW}"/></marker></defs>')


def _x(lane: int) -> int:
    return LEFT + lane * (BOX + GAP)


def _on(mask: int, lane: int) -> bool:
    return bool((mask >> lane) & 1)


def _box(lane: int, y: int, fill: str, edge: str = "#444", dash: str = "", text: str = "", title: str = "",
         text_color: str = "#000") -> str:
    d = f' stroke-dasharray="{dash}"' if dash else ""
    t = f"<title>{html.escape(title)}</title>" if title else ""
    size = 9 if len(text) <= 3 else 6.5      # "undef" fits the box
    label = (f'<text x="{_x(lane) + BOX / 2}" y="{y + BOX / 2 + 3}" font-size="{size}" text-anchor="middle" '
             f'fill="{text_color}">{html.escape(text)}</text>') if text else ""
    return (f'<g><rect x="{_x(lane)}" y="{y}" width="{BOX}" height="{BOX}" fill="{fill}" stroke="{edge}"{d}/>'
            f'{label}{t}</g>')


def lane_state(step: Step, lane: int) -> tuple[str, str]:
    """(state word, fill) of ``lane`` at ``step``: active, guard false, elsewhere, exited or no thread."""
    if _on(step.absent, lane):
        return "no thread", "white"
    if _on(step.exited, lane):
        return "exited", style.EXITED
    if _on(step.elsewhere, lane):
        return "elsewhere", style.ELSEWHERE
    if not _on(step.predicated_on, lane):
        return "guard false", "white"
    return "active", style.LANE_FILL


def _label(y: int, text: str) -> str:
    return f'<text x="4" y="{y + BOX / 2 + 4}" font-size="11">{html.escape(text)}</text>'


def _lane_row(step: Step, y: int, label: str) -> list[str]:
    out = [_label(y, label)]
    for lane in range(32):
        word, fill = lane_state(step, lane)
        edge = style.LANE_FILL if word == "guard false" else "#444"
        dash = "2,2" if word == "no thread" else ""
        out.append(_box(lane, y, fill, edge, dash, str(lane), f"lane {lane}: {word}"))
    return out


def _exchange_rows(step: Step, x: Exchange, y: int) -> tuple[list[str], int]:
    """The destination row under the lanes: arrows from source lanes; undefined results hatched."""
    out: list[str] = []
    gap = 46
    yd = y + BOX + gap
    single = any(s >= 0 for s in x.src_lane)
    for lane in range(32):
        if not _on(x.callers, lane):
            if _on(x.member, lane):
                out.append(_box(lane, yd, "white", "#888", style.OUTSIDE_MASK_STYLE.replace("--", "3,2"),
                                style.NOT_CALLING_TEXT, f"lane {lane}: named in the mask, not calling"))
            continue
        src = x.src_lane[lane]
        undefined = not _on(x.defined, lane)
        if single and src >= 0:
            out.append(f'<line x1="{_x(src) + BOX / 2}" y1="{y + BOX}" x2="{_x(lane) + BOX / 2}" y2="{yd - 1}" '
                       f'stroke="{style.ARROW}" stroke-width="1" marker-end="url(#warplab-arrow)"/>')
        fill = "url(#warplab-undef)" if undefined else style.LANE_FILL
        edge = style.UNDEFINED_EDGE if undefined else "#444"
        what = (f"lane {lane} reads lane {src}" if single and src >= 0 else f"lane {lane}: result of every caller")
        out.append(_box(lane, yd, fill, edge, "", "undef" if undefined else str(src if single else lane),
                        what + (": undefined" if undefined else ""), style.UNDEFINED_TEXT if undefined else "#000"))
    out.insert(0, _label(yd, "receives" if single else "result"))
    return out, yd + BOX


def _access_rows(a: Access, y: int) -> tuple[list[str], int]:
    """Under the lanes: each lane's bank (shared) or sector (global); a bank asked for two or more
    distinct words, or a lane whose value is undefined, in vermilion."""
    out = [_label(y, "bank" if a.space == "shared" else "sector")]
    words: dict[int, set[int]] = {}
    for lane in range(32):
        if a.address[lane] >= 0 and a.space == "shared":
            words.setdefault(a.bank[lane], set()).add(a.address[lane] // 4)
    base = min((ad // 32 for ad in a.address if ad >= 0), default=0)
    for lane in range(32):
        ad = a.address[lane]
        if ad < 0:
            continue
        if a.space == "shared":
            text, clash = str(a.bank[lane]), len(words[a.bank[lane]]) > 1
            title = f"lane {lane}: byte {ad} of shared memory, bank {a.bank[lane]}"
        else:
            text, clash = str(ad // 32 - base), False
            title = f"lane {lane}: argument {a.arg[lane]} element {a.element[lane]}, sector +{ad // 32 - base}"
        undefined = not _on(a.defined, lane)
        out.append(_box(lane, y, "url(#warplab-undef)" if undefined else "white",
                        style.VERMILION if clash or undefined else "#444", "", text,
                        title + (": value undefined" if undefined else ""),
                        style.VERMILION if clash else "#000"))
    return out, y + BOX


def step_svg(step: Step) -> str:
    """The warp's 32 lanes at ``step``: their state; for a shuffle/vote the destination row with
    arrows; for a memory access each lane's bank or sector."""
    y = 16
    parts = [PATTERN, f'<text x="{LEFT}" y="11" font-size="11" fill="#444">lanes of this warp</text>']
    parts += _lane_row(step, y, "lanes")
    bottom = y + BOX
    if step.exchange is not None:
        more, bottom = _exchange_rows(step, step.exchange, y)
        parts += more
    elif step.access is not None:
        more, bottom = _access_rows(step.access, bottom + 6)
        parts += more
    h = bottom + 6
    return (f'<svg class="warplab-lanes" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{h}" '
            f'viewBox="0 0 {WIDTH} {h}" font-family="sans-serif">{"".join(parts)}</svg>')


def barrier_svg(b: Barrier, warp: int) -> str:
    """Every warp of the block at a barrier: sky = waiting at a barrier, pale yellow = still running,
    grey = exited, white = no thread."""
    rows = []
    for w, (at, run, gone) in enumerate(zip(b.arrived, b.running, b.exited)):
        y = 4 + w * 16
        bold = ' font-weight="bold"' if w == warp else ""
        rows.append(f'<text x="4" y="{y + 11}" font-size="10"{bold}>warp {w}</text>')
        for lane in range(32):
            fill = (style.LANE_FILL if _on(at, lane) else style.ELSEWHERE if _on(run, lane)
                    else style.EXITED if _on(gone, lane) else "white")
            rows.append(f'<rect x="{_x(lane)}" y="{y}" width="{BOX}" height="12" fill="{fill}" stroke="#666" '
                        f'stroke-width="0.5"/>')
    h = 8 + 16 * len(b.arrived)
    return (f'<svg class="warplab-barrier" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{h}" '
            f'font-family="sans-serif">{"".join(rows)}</svg>')


def _lanes(mask: int) -> str:
    """Lanes of a mask as ranges: "0-7, 12"."""
    out, lane = [], 0
    while lane < 32:
        if _on(mask, lane):
            end = lane
            while end + 1 < 32 and _on(mask, end + 1):
                end += 1
            out.append(f"{lane}" if end == lane else f"{lane}-{end}")
            lane = end + 1
        else:
            lane += 1
    return ", ".join(out) or "none"


def describe(step: Step) -> list[str]:
    """Sentences about ``step``, each read off the machine's record."""
    s = step
    out = [f"{s.kind}: `{s.ptx}`", f"active lanes: {_lanes(s.active)}"]
    if s.active & ~s.predicated_on & FULL:
        out.append(f"guard false (the instruction does nothing for them): {_lanes(s.active & ~s.predicated_on)}")
    if s.elsewhere:
        out.append(f"alive elsewhere (diverged): {_lanes(s.elsewhere)}")
    if s.exited:
        out.append(f"exited: {_lanes(s.exited)}")
    if s.absent:
        out.append(f"no thread (the block ends inside this warp): {_lanes(s.absent)}")
    x = s.exchange
    if x is not None:
        out.append(f"member mask {x.member:#010x}; calling: {_lanes(x.callers)}")
        if x.undefined:
            out.append(f"undefined results (hatched): {_lanes(x.undefined)}" + (
                " (they read a lane that did not call: PTX ISA shfl.sync)" if x.op == "shfl" else ""))
    a = s.access
    if a is not None:
        what = f"{a.space} {'store' if a.store else 'load'} of {a.elements} x {a.size} bytes per lane"
        if a.space == "shared":
            out.append(f"{what}: {a.wavefronts} wavefront(s) (1 = no bank conflict)")
        else:
            out.append(f"{what}: {a.sectors} sector(s) of 32 bytes")
        bad = a.defined ^ _mask(a.address)
        if bad:
            out.append(f"undefined values (hatched): {_lanes(bad)}")
    return out


def _mask(address: Sequence[int]) -> int:
    return sum(1 << i for i, ad in enumerate(address) if ad >= 0)


def access_table(a: Optional[Access], arg_names: Sequence[str] = ()) -> str:
    """Each lane's access as text, eight lanes a line ("" for no access)."""
    if a is None:
        return ""
    cells = []
    for lane in range(32):
        ad = a.address[lane]
        if ad < 0:
            cells.append(f"{lane:>2}: -")
        elif a.space == "shared":
            cells.append(f"{lane:>2}: byte {ad} bank {a.bank[lane]}")
        else:
            name = arg_names[a.arg[lane]] if 0 <= a.arg[lane] < len(arg_names) else f"args[{a.arg[lane]}]"
            cells.append(f"{lane:>2}: {name}[{a.element[lane]}]")
    wide = max(len(c) for c in cells) + 2
    return "\n".join("".join(c.ljust(wide) for c in cells[i:i + 8]) for i in range(0, 32, 8))


LEGEND = (f'<span style="background:{style.LANE_FILL};padding:0 6px;border:1px solid #444">&nbsp;</span> active '
          f'<span style="background:white;padding:0 6px;border:1px solid {style.LANE_FILL}">&nbsp;</span> guard false '
          f'<span style="background:{style.ELSEWHERE};padding:0 6px;border:1px solid #444">&nbsp;</span> elsewhere '
          f'<span style="background:{style.EXITED};padding:0 6px;border:1px solid #444">&nbsp;</span> exited '
          f'<span style="background:white;padding:0 6px;border:1px dotted #444">&nbsp;</span> no thread '
          f'<span style="background:repeating-linear-gradient(45deg,white 0 2px,{style.UNDEFINED_HATCH_COLOR} 2px 4px);'
          f'padding:0 6px;border:1px solid {style.UNDEFINED_EDGE}">&nbsp;</span> undefined')
