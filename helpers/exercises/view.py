"""How a result looks in a notebook: HTML feedback, and the first wrong result as a lane figure.

The figure uses the series' lane boxes (:func:`helpers.viz.boxes.draw_warp`): one row of 32 boxes
per line (the input, what was expected, what came back), the boxes the check reads in green for
the expected row, wrong ones outlined in vermilion, undefined ones hatched, values nobody checks
faded, lanes or slots that do not exist grey.
"""
from __future__ import annotations

import base64
import html
from typing import Any

import numpy as np
from matplotlib.patches import Patch

from helpers.viz import style
from helpers.viz.boxes import draw_warp
from helpers.viz.render import LaneFigure, figure_png
from helpers.exercises.spec import LANES, Mismatch

ROW_STEP = 1.7
WRONG_WIDTH = 2.6

STATUS_COLOURS = {"passed": style.GREEN, "not_started": style.GREY, "incomplete": style.ORANGE}


def mismatch_figure(m: Mismatch, source_label: str = "SIMT machine") -> LaneFigure:
    """The rows of ``m`` (top to bottom) as lane boxes, titled with what went wrong."""
    n = len(m.rows)
    fig = LaneFigure(figsize=(style.FIG_WIDTH, 0.75 + 0.62 * n + 0.5))
    ax = fig.add_axes((0.1, 0.22, 0.89, 0.64))
    wrong_any = undefined_any = faded_any = absent_any = False
    for i, row in enumerate(m.rows):
        y = (n - 1 - i) * ROW_STEP
        vals = np.asarray(row.values, dtype=np.float64)
        checked = np.ones(LANES, bool) if row.checked is None else np.asarray(row.checked, bool)
        present = np.ones(LANES, bool) if row.present is None else np.asarray(row.present, bool)
        defined = np.ones(LANES, bool) if row.defined is None else np.asarray(row.defined, bool)
        wrong = np.zeros(LANES, bool) if row.wrong is None else np.asarray(row.wrong, bool)
        faded = ~checked & present
        # Boxes that do not exist, and the unchecked boxes of an expected row, carry no number.
        vals = np.where(present & (checked | (not row.result)), vals, np.nan)
        boxes = draw_warp(ax, vals, defined=defined | ~present, active=present, faded=faded,
                          result_lanes=np.flatnonzero(checked & present) if row.result else (),
                          y=y, label=row.label, numbers="below" if i == n - 1 else None, fmt=_short)
        for lane in np.flatnonzero(wrong & present & defined):
            boxes[lane].set_edgecolor(style.VERMILION)
            boxes[lane].set_linewidth(WRONG_WIDTH)
        wrong_any |= bool((wrong & present & defined).any())
        undefined_any |= bool((~defined & present).any())
        faded_any |= bool(faded.any())
        absent_any |= bool((~present).any())
    ax.set_ylim(-0.9, (n - 1) * ROW_STEP + 0.6)
    ax.set_title(m.title, fontsize=9)
    handles = [Patch(facecolor=style.RESULT, edgecolor=style.BLACK, linewidth=0.6, label="checked result (expected)")]
    if wrong_any:
        handles.append(Patch(facecolor=style.LANE_FILL, edgecolor=style.VERMILION, linewidth=WRONG_WIDTH, label="wrong"))
    if undefined_any:
        handles.append(Patch(facecolor="white", edgecolor=style.UNDEFINED_EDGE, hatch=style.UNDEFINED_HATCH,
                             label="undefined"))
    if faded_any:
        handles.append(Patch(facecolor="white", edgecolor=style.INACTIVE, label="not checked"))
    if absent_any:
        handles.append(Patch(facecolor=style.INACTIVE, edgecolor=style.BLACK, linewidth=0.6, label="does not exist"))
    fig.legend(handles=handles, loc="center", bbox_to_anchor=(0.5, 0.07), ncol=len(handles), fontsize=7,
               frameon=False, handlelength=1.6)
    fig.text(0.005, 0.008, f"Computed by: {source_label}", fontsize=7, color="#444444", ha="left", va="bottom")
    return fig


def _short(v: Any) -> str:
    f = float(v)
    if np.isnan(f):
        return ""
    if not np.isfinite(f):
        return "inf" if f > 0 else ("-inf" if f < 0 else "nan")
    if f == int(f) and abs(f) < 1e4:
        return str(int(f))
    if abs(f) >= 1e4:
        return f"{f:.0e}"
    return f"{f:.3g}" if abs(f) >= 1 else f"{f:.2f}".replace("0.", ".", 1)


def _png_tag(fig: LaneFigure) -> str:
    data = base64.b64encode(figure_png(fig)).decode()
    return f'<img alt="expected against got, lane by lane" src="data:image/png;base64,{data}" style="max-width:100%">'


FOLDED = ("Tried:", "How results are compared:", "Notes:")


def result_html(result: Any, with_figure: bool = True) -> str:
    """The feedback of a :class:`~helpers.exercises.run.Result` as HTML: the verdict in bold, the
    lane figure of the first wrong result under the first paragraph, what was tried and how results
    are compared folded away (notes open)."""
    colour = STATUS_COLOURS.get(result.status, style.VERMILION)
    head, _, rest = result.feedback.partition("\n")
    paragraphs = [p for p in rest.split("\n\n") if p.strip()]
    fig_html = ""
    if with_figure and result.mismatch is not None and result.mismatch.rows:
        fig_html = _png_tag(mismatch_figure(result.mismatch))
    parts = [f"<b>{html.escape(head)}</b>"]
    for i, p in enumerate(paragraphs):
        p = p.strip("\n")
        folded = next((f for f in FOLDED if p.startswith(f)), None)
        pre = '<pre style="white-space:pre-wrap;font-size:90%;margin:4px 0">{}</pre>'
        if folded == "Notes:":
            parts.append(f"<details open><summary>Notes</summary>{pre.format(html.escape(p[len(folded):].strip()))}</details>")
        elif folded:
            parts.append(f"<details><summary>{html.escape(folded.rstrip(':'))}</summary>"
                         f"{pre.format(html.escape(p[len(folded):].strip()))}</details>")
        else:
            parts.append(pre.format(html.escape(p)))
        if i == 0 and fig_html:
            parts.append(fig_html)
            fig_html = ""
    parts.append(fig_html)
    return (f'<div class="warplab-exercise" style="border-left:4px solid {colour};padding:4px 10px">'
            + "".join(parts) + "</div>")
