"""Notebook 01's view of the undefined-call recording (``data/diverged_reads.json``): a table of
what the first callers got back, and a figure of how long they stayed in the call.

Both are drawn from :func:`helpers.recording.record_diverged.observations`, never from typed numbers, and
both carry the recording's label: one observation of undefined behaviour on one GPU, driver and
compiler, not a rule. No recorded value is drawn as a lane's result (results of undefined calls are
hatched in every other figure of the series); the figure shows time, the table says where values
came from.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from IPython.display import Markdown
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from helpers import data
from helpers.recording import record_diverged
from helpers.viz import style
from helpers.viz.render import LaneFigure

_THEN_SHORT = {"exit": "return", "later": "call from another line"}
_THEN = {"exit": "return without calling", "later": "call it too, from another line"}


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _pick(parts: Optional[Sequence[str]], rec: Optional[dict[str, Any]]) -> tuple[list[record_diverged.Observation], dict[str, Any]]:
    rec = data.load(record_diverged.NAME) if rec is None else rec
    obs = record_diverged.observations(rec)
    if parts is not None:
        known = {o.name for o in obs}
        bad = [p for p in parts if p not in known]
        if bad:
            raise ValueError(f"parts must name recorded parts ({', '.join(sorted(known))}); got {bad}")
        obs = [o for o in obs if o.name in parts]
    return obs, rec


def table_markdown(parts: Optional[Sequence[str]] = None, rec: Optional[dict[str, Any]] = None) -> str:
    """The recording as a Markdown table, one row per part, with its provenance and label."""
    obs, rec = _pick(parts, rec)
    head = ("| part | call (full mask) | first callers | the other lanes, after their wait | "
            "what the first callers got | `__activemask()` before the call | what the other lanes got |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n")
    rows = []
    for o in obs:
        others = ("none: all 32 lanes call (a defined call)" if o.control else
                  f"{_THEN[o.then]} (a defined call on sm_70+)" if o.then == "later" else f"{_THEN[o.then]}")
        rows.append(f"| `{o.name}` | `{o.call}` | {o.callers} | {others} | {o.got} | {o.activemask} | "
                    f"{o.got_later or '–'} |")
    foot = (f"\n\n*{_cap(data.label(rec['stamp']))}, {o.n_warps if obs else 0} warps per part: "
            f"{rec['label']} (the `_exit` parts; the `_later` parts are defined calls on sm_70+: PTX ISA, shfl.sync "
            f"and vote.sync). The other lanes busy-wait {obs[0].spin_cycles if obs else 0:,} clock cycles. "
            f"\"Source\": the lane a shuffle reads.*")
    return head + "\n".join(rows) + foot


def diverged_table(parts: Optional[Sequence[str]] = None, rec: Optional[dict[str, Any]] = None) -> Markdown:
    """:func:`table_markdown`, for a notebook cell to show."""
    return Markdown(table_markdown(parts, rec))


def timing_figure(parts: Optional[Sequence[str]] = None, rec: Optional[dict[str, Any]] = None) -> LaneFigure:
    """For each undefined part: the median (over warps) of the longest time a first caller spent
    between its clock reads just before and just after the call, beside the other lanes' wait, and
    in how many warps every first caller came back only after every other lane had ended its wait."""
    obs, rec = _pick(parts, rec)
    obs = [o for o in obs if o.median_cycles_in_call is not None]
    if not obs:
        raise ValueError("parts must include at least one undefined part (the controls have no timing)")
    bottom, top, per_row = 0.95, 0.35, 0.45     # inches: x labels and footer below, legend above
    height = bottom + top + per_row * len(obs)
    fig = LaneFigure(figsize=(style.FIG_WIDTH, height))
    ax = fig.add_axes((0.30, bottom / height, 0.66, per_row * len(obs) / height))
    y = list(range(len(obs)))[::-1]
    spin = obs[0].spin_cycles
    ax.barh(y, [o.median_cycles_in_call for o in obs], height=0.55, color=style.SKY, edgecolor=style.BLUE)
    ax.axvline(spin, color=style.VERMILION, ls="--", lw=1.2)
    for yi, o in zip(y, obs):
        ax.text(o.median_cycles_in_call * 0.02, yi, f"{o.warps_back_after_wait} of {o.n_warps} warps: back only "
                f"after the other lanes' wait", va="center", ha="left", fontsize=7, color="#1A1A1A")
    ax.set_yticks(y, [f"{o.name}\n{o.callers} call; the others then {_THEN_SHORT[o.then]}" for o in obs], fontsize=7)
    ax.set_xlim(0, spin * 1.08)
    ax.set_xlabel("clock cycles between a first caller's clock reads just before and just after its call "
                  "(median over warps of the longest in each warp)", fontsize=7)
    ax.tick_params(axis="x", labelsize=7)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.spines[["top", "right"]].set_visible(False)
    fig.legend(handles=[Patch(facecolor=style.SKY, edgecolor=style.BLUE, label="first callers: time in the call"),
                        Line2D([], [], color=style.VERMILION, ls="--", label=f"the other lanes' wait ({spin:,} cycles)")],
               loc="upper center", bbox_to_anchor=(0.6, 1.0), ncol=2, fontsize=7, frameon=False)
    fig.text(0.005, 0.008, f"{_cap(data.label(rec['stamp']))}, {obs[0].n_warps} warps per part.\n{_cap(rec['label'])}.",
             fontsize=6.5, color="#444444", ha="left", va="bottom")
    return fig
