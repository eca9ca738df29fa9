"""Lane figures, trace animations and text tables: drawn from data, in the series' visual language."""
from __future__ import annotations

import gc
import weakref

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import FancyArrowPatch, Rectangle

from helpers.engine import emulator
from helpers.viz import boxes as warp_boxes
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.viz import style
from helpers.engine import warp
from helpers.engine.trace import Recorder
from helpers.topics.warp_reduce import warp_reduce_sum_trace

matplotlib.use("Agg")
pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")

LANE = np.arange(32)
VALUES = (10 * LANE).astype(np.int32)
SHUFFLES = {"down": warp.shfl_down, "up": warp.shfl_up, "xor": warp.shfl_xor, "idx": warp.shfl_idx}
WIDTHS = (1, 2, 4, 8, 16, 32)


# ---------------------------------------------------------------- reading a figure back


def boxes(ax, y: float) -> list[Rectangle]:
    """The 32 lane boxes of the row centred on ``y``, in lane order."""
    row = [p for p in ax.patches if isinstance(p, Rectangle) and np.isclose(p.get_width(), warp_boxes.BOX_W)
           and np.isclose(p.get_y() + warp_boxes.BOX_H / 2, y)]
    assert len(row) == 32, f"expected 32 lane boxes at y={y}, found {len(row)}"
    return sorted(row, key=lambda p: p.get_x())


def all_texts(ax) -> list[tuple[float, float, str]]:
    """(x, y, text) of every text of the axes: its Text artists and its LaneTexts."""
    out = [(*t.get_position(), t.get_text()) for t in ax.texts]
    for art in ax.get_children():
        if isinstance(art, render.LaneTexts):
            out += art.items()
    return out


def lane_texts(ax, y: float) -> dict[int, list[str]]:
    """Text written inside each lane box of the row at ``y``."""
    out: dict[int, list[str]] = {}
    for x, ty, s in all_texts(ax):
        if np.isclose(ty, y) and float(x).is_integer() and 0 <= x < 32:
            out.setdefault(int(x), []).append(s)
    return out


def arrows(ax) -> list[FancyArrowPatch]:
    return [p for p in ax.patches if isinstance(p, FancyArrowPatch)]


def edge(p) -> str:
    return to_hex(p.get_edgecolor())


def face(p) -> str:
    return to_hex(p.get_facecolor())


def is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def check_shuffle(fig, values: np.ndarray, r: warp.ShuffleResult, active: np.ndarray, mask: int,
                  exited: np.ndarray | None = None) -> None:
    """Both rows and the arrows say exactly what ``r`` says, lane by lane."""
    ax = fig.axes[0]
    after, texts = boxes(ax, 0.0), lane_texts(ax, 0.0)
    before, before_texts = boxes(ax, figures.ROW_GAP), lane_texts(ax, figures.ROW_GAP)
    exited = ~active if exited is None else exited
    reads = (r.src_lane >= 0) & (r.src_lane != LANE)
    assert len(arrows(ax)) == reads.sum()
    for lane in range(32):
        box, text = after[lane], texts.get(lane, [])
        undefined = active[lane] and not r.defined[lane]
        if undefined:
            assert box.get_hatch() == style.UNDEFINED_HATCH and edge(box) == style.UNDEFINED_EDGE.lower()
            assert text == [warp_boxes.UNDEF_TEXT] and not any(is_number(t) for t in text)
        else:
            assert box.get_hatch() is None
            if active[lane]:
                assert text in ([str(r.values[lane])], ["…"], [])
        if r.defined[lane] and r.src_lane[lane] == lane:
            assert edge(box) == style.KEEPS_OWN.lower()
        if not active[lane]:   # a lane that does not call shows "–", never a value, in both rows
            assert text == [style.NOT_CALLING_TEXT] and before_texts[lane] == [style.NOT_CALLING_TEXT]
            want = style.EXITED if exited[lane] else style.ELSEWHERE
            assert face(box) == want.lower() and face(before[lane]) == want.lower()
        else:
            assert before_texts[lane] in ([str(values[lane])], ["…"])
        dashed = box.get_linestyle() == style.OUTSIDE_MASK_STYLE
        assert dashed == (not (mask >> lane) & 1)
        assert active[lane] == (r.src_lane[lane] >= 0)
    undefined_arrows = [a for a in arrows(ax) if a.get_linestyle() == "--"]
    assert len(undefined_arrows) == (reads & ~r.defined).sum()


# ---------------------------------------------------------------- shuffles


@pytest.mark.parametrize("mode", SHUFFLES)
@pytest.mark.parametrize("width", WIDTHS)
def test_shuffle_figure_every_mode_width_offset(mode: str, width: int) -> None:
    drawn: set[bytes] = set()
    for offset in range(32):
        r = SHUFFLES[mode](VALUES, offset, width, backend="emulator")
        if r.src_lane.tobytes() in drawn:   # same lanes, same picture: e.g. shfl_down 20 at width 16
            continue
        drawn.add(r.src_lane.tobytes())
        fig = figures.shuffle_figure(VALUES, r, op_label=f"{mode} {offset}", width=width, mask=0xFFFFFFFF,
                                     active=None, source_label="emulator")
        check_shuffle(fig, VALUES, r, np.ones(32, bool), 0xFFFFFFFF)


@pytest.mark.parametrize("mode", SHUFFLES)
@pytest.mark.parametrize("mask, inactive", [(0xFFFF0FFF, (5, 9)), (0x0000FFFF, ()), (0xFFFFFFFF, (0, 17, 31)),
                                             (0x0, ()), (0x55555555, (2, 3))])
@pytest.mark.parametrize("others", ["exited", "elsewhere"])
def test_shuffle_figure_marks_undefined_not_calling_and_outside_mask(mode: str, mask: int, inactive: tuple,
                                                                     others: str) -> None:
    active = ~np.isin(LANE, inactive)
    exited = ~active if others == "exited" else np.zeros(32, bool)
    for width, offset in [(32, 1), (8, 5), (16, 3), (1, 0)]:
        r = SHUFFLES[mode](VALUES, offset, width, mask=mask, active=active, exited=exited, backend="emulator")
        fig = figures.shuffle_figure(VALUES, r, op_label="op", width=width, mask=mask, active=active,
                                     source_label="GPU: NVIDIA H200")
        check_shuffle(fig, VALUES, r, active, mask, exited)
        named_elsewhere = ~active & ~exited & emulator.mask_bits(np.array([mask], np.uint32))[0]
        assert ("UNDEFINED CALL" in fig.axes[0].get_title()) == named_elsewhere.any()


def test_full_mask_with_diverged_lanes_is_drawn_undefined_everywhere() -> None:
    """The issue's case: a full mask while odd lanes are alive elsewhere. Every calling lane is
    hatched (no number anywhere), the odd lanes show "–" with a thick outline, the title says why."""
    even = LANE % 2 == 0
    r = warp.shfl_down(VALUES, 2, active=even, backend="emulator")
    fig = figures.shuffle_figure(VALUES, r, op_label="op", width=32, mask=0xFFFFFFFF, active=even,
                                 source_label="emulator")
    ax = fig.axes[0]
    after, texts = boxes(ax, 0.0), lane_texts(ax, 0.0)
    assert all(after[l].get_hatch() == style.UNDEFINED_HATCH for l in range(0, 32, 2))
    assert all(texts[l] == [style.NOT_CALLING_TEXT] and after[l].get_linewidth() > 2 for l in range(1, 32, 2))
    assert not any(is_number(t) for l in range(32) for t in texts[l])
    assert "UNDEFINED CALL" in ax.get_title() and "1 3 5" in ax.get_title()


def test_shuffle_figure_has_lane_numbers_bands_legend_and_footer() -> None:
    r = warp.shfl_down(VALUES, 2, 16, backend="emulator")
    fig = figures.shuffle_figure(VALUES, r, op_label="__shfl_down_sync(0xFFFFFFFF, v, 2, 16)", width=16,
                                 mask=0xFFFFFFFF, active=None, source_label="recorded on NVIDIA H200, 2026-11-30")
    ax = fig.axes[0]
    numbers = [s for _, y, s in all_texts(ax) if not np.isclose(y, 0.0) and not np.isclose(y, figures.ROW_GAP)]
    assert sorted(numbers.count(str(l)) for l in range(32)) == [2] * 32   # above and below
    bands = [p for p in ax.patches if isinstance(p, Rectangle) and np.isclose(p.get_width(), 16)]
    assert len(bands) == 2
    assert fig.get_size_inches()[0] == style.FIG_WIDTH
    assert any("recorded on NVIDIA H200, 2026-11-30" in t.get_text() for t in fig.texts)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "kept its own value (no arrow)" in labels and "width-16 segments (shaded)" in labels
    assert "__shfl_down_sync" in ax.get_title()
    # Lanes 14, 15, 30, 31 keep their own value (facts.md), and get no arrow.
    assert [l for l, b in enumerate(boxes(ax, 0.0)) if edge(b) == style.KEEPS_OWN.lower()] == [14, 15, 30, 31]


def test_floats_are_written_compactly_and_long_values_do_not_overflow() -> None:
    fig = matplotlib.figure.Figure()
    ax = fig.add_subplot()
    vals = np.array([0.1, 2.5, 1234567.0, 1 / 3] + [1.0] * 28)
    warp_boxes.draw_warp(ax, vals, y=0.0)
    texts = lane_texts(ax, 0.0)
    assert texts[0] == ["0.1"] and texts[1] == ["2.5"] and texts[3] == ["0.333"] and texts[4] == ["1"]
    assert texts[2] == ["1.23e+06"] or texts[2] == ["…"]
    assert warp_boxes.format_value(7, ".2f") == "7.00" and warp_boxes.format_value(3, lambda v: f"<{v}>") == "<3>"


def test_draw_warp_styles_each_flag() -> None:
    fig = matplotlib.figure.Figure()
    ax = fig.add_subplot()
    flags = {name: np.ones(32, bool) for name in ("defined", "active", "in_mask")}
    flags["defined"][3] = False
    flags["active"][4] = False
    flags["in_mask"][5] = False
    kept = LANE == 6
    row = warp_boxes.draw_warp(ax, VALUES, kept_own=kept, result_lanes=[7], width=8, title="t", **flags)
    texts = lane_texts(ax, 0.0)
    assert row[3].get_hatch() == "////" and edge(row[3]) == style.VERMILION.lower() and texts[3] == ["undef"]
    assert face(row[4]) == style.GREY.lower()
    assert row[5].get_linestyle() == "--" and row[0].get_linestyle() == "-"
    assert edge(row[6]) == style.ORANGE.lower()
    assert face(row[7]) == style.GREEN.lower()
    assert face(row[8]) == style.LANE_FILL.lower() and texts[8] == ["80"]


def test_bad_shapes_and_widths_are_refused() -> None:
    fig = matplotlib.figure.Figure()
    ax = fig.add_subplot()
    with pytest.raises(ValueError, match="shape"):
        warp_boxes.draw_warp(ax, np.arange(31))
    with pytest.raises(ValueError, match="width must be a power of two"):
        warp_boxes.draw_warp(ax, VALUES, width=3)


# ---------------------------------------------------------------- ballots


@pytest.mark.parametrize("mask, inactive", [(0xFFFFFFFF, ()), (0xFFFF0FFF, (5, 9)), (0, ())])
def test_ballot_figure_bits_come_from_the_result(mask: int, inactive: tuple) -> None:
    pred = LANE < 20
    active = ~np.isin(LANE, inactive)
    result = warp.ballot(pred, mask=mask, active=active, exited=~active, backend="emulator")
    fig = figures.ballot_figure(pred, mask, active, result, "emulator", values=VALUES, exited=~active)
    ax = fig.axes[0]
    bit_row, bit_texts = boxes(ax, 0.0), lane_texts(ax, 0.0)
    value = result.value
    green = [l for l, b in enumerate(bit_row) if face(b) == style.GREEN.lower()]
    assert green == [l for l in range(32) if (value >> l) & 1]
    assert all((b.get_linestyle() == "--") == (not (mask >> l) & 1) for l, b in enumerate(bit_row))
    assert all((face(b) == style.EXITED.lower()) == (l in inactive) for l, b in enumerate(bit_row) if l not in green)
    # a lane that does not call shows "–" (its bit is 0), never "0"
    assert all(bit_texts[l] == [style.NOT_CALLING_TEXT] for l in inactive)
    assert all(lane_texts(ax, 1.25)[l] == [style.NOT_CALLING_TEXT] for l in inactive)
    text = " ".join(t.get_text() for t in fig.texts)
    assert f"0x{value:08X}" in text and f"{value:032b}"[:4] in text and "bit 31" in text
    if mask == 0xFFFFFFFF and not inactive:
        assert value == 0x000FFFFF   # facts.md: lane < 20 -> 0x000FFFFF


def test_ballot_figure_of_an_undefined_call_hatches_every_bit() -> None:
    even = LANE % 2 == 0
    result = warp.ballot(np.ones(32, bool), active=even, backend="emulator")
    fig = figures.ballot_figure(np.ones(32, bool), 0xFFFFFFFF, even, result, "emulator",
                                exited=np.zeros(32, bool))
    ax = fig.axes[0]
    assert all(b.get_hatch() == style.UNDEFINED_HATCH for b in boxes(ax, 0.0))
    assert all(t == [warp_boxes.UNDEF_TEXT] for t in lane_texts(ax, 0.0).values())
    text = " ".join(t.get_text() for t in fig.texts)
    assert "result = undefined" in text and "0x" not in text and "1 3 5" in text


@pytest.mark.parametrize("result", [0x00055555, 0xFFFFFFFF, None])
def test_ballot_figure_captions_fit_inside_the_figure(result) -> None:
    """The result line and its note are not clipped at either side (they were at FIG_WIDTH)."""
    pred = np.ones(32, bool)
    r = warp.ballot(pred, active=LANE % 2 == 0, backend="emulator") if result is None else result
    fig = figures.ballot_figure(pred, 0xFFFFFFFF, None, r, "emulator", values=VALUES)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    width = fig.get_window_extent(renderer).width
    for t in fig.texts + fig.legends:
        box = t.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= width, (t, box)


def test_undefined_boxes_keep_the_word_legible() -> None:
    """"undef" is dark text on an opaque white label, over pale hatching (not orange on orange)."""
    fig = matplotlib.figure.Figure()
    ax = fig.add_subplot()
    row = warp_boxes.draw_warp(ax, VALUES, defined=LANE != 3)
    label = next(t for t in ax.texts if t.get_text() == warp_boxes.UNDEF_TEXT)
    assert to_hex(label.get_color()) == style.UNDEFINED_TEXT.lower()
    assert to_hex(label.get_bbox_patch().get_facecolor()) == "#ffffff"
    if hasattr(row[3], "get_hatchcolor"):
        assert to_hex(row[3].get_hatchcolor()) == style.UNDEFINED_HATCH_COLOR.lower()


def test_hatching_means_undefined_and_nothing_else() -> None:
    """Every hatched patch in this module's figures is an undefined value (a check on the source:
    hatch= only ever takes style.UNDEFINED_HATCH)."""
    import inspect
    import re

    src = inspect.getsource(figures)
    assert set(re.findall(r"hatch=([\w.]+)", src)) <= {"hatch", "style.UNDEFINED_HATCH"}


def test_ballot_bits_mapping() -> None:
    assert figures.ballot_bits(0x5).tolist()[:4] == [True, False, True, False]
    assert figures.ballot_bits(0x80000000)[31]


# ---------------------------------------------------------------- tables


def test_lane_table_for_shuffle_result() -> None:
    r = warp.shfl_down(VALUES, 2, backend="emulator")
    table = figures.lane_table(r)
    assert "kept own value: 30 31" in table and "undefined: none" in table and "did not call: none" in table
    lines = table.splitlines()
    assert lines[0].split("|")[1].split() == [str(l) for l in range(16)]
    assert lines[1].split("|")[1].split() == [str(l + 2) for l in range(16)]
    assert lines[6].split("|")[1].split()[-2:] == ["300", "310"]


def test_lane_table_says_undef_never_a_number() -> None:
    active = LANE != 5
    r = warp.shfl_down(VALUES, 1, mask=0x7FFFFFFF, exited=~active, backend="emulator")
    table = figures.lane_table(r, lanes_per_block=32)
    value_row = table.splitlines()[2].split("|")[1].split()
    assert value_row[4] == "undef"           # read lane 5, which has exited
    assert value_row[30] == "undef"          # read lane 31, which calls from outside the mask
    assert value_row[31] == "undef"          # lane 31 calls without its own bit in the mask
    assert value_row[5] == "-"               # did not call: exited
    assert "undefined: 4 30 31" in table and "did not call: 5" in table
    assert figures.lane_table(VALUES, lanes_per_block=8).count("lane") == 4


def test_lane_table_names_exited_and_diverged_lanes_and_undefined_calls() -> None:
    r = warp.shfl_down(VALUES, 1, active=LANE < 20, exited=LANE >= 24, backend="emulator")
    table = figures.lane_table(r)
    assert table.splitlines()[0].startswith("UNDEFINED CALL")
    assert "exited: 24 25 26 27 28 29 30 31; alive elsewhere: 20 21 22 23" in table
    cells = [c for line in table.splitlines() if line.startswith("value") for c in line.split("|")[1].split()]
    assert set(cells) == {"undef", "-"}       # no lane shows a number
    r = warp.shfl_down(VALUES, 1, mask=0x000FFFFF, active=LANE < 20, exited=LANE >= 24, backend="emulator")
    assert "UNDEFINED CALL" not in figures.lane_table(r)


def test_mapping_text() -> None:
    r = warp.shfl_xor(VALUES, 1, exited=LANE == 0, backend="emulator")
    assert figures.mapping_text(r) == "src: - " + " ".join(str(l ^ 1) for l in range(1, 32))


# ---------------------------------------------------------------- traces


def reduce_trace_with_inactive_lane(lane: int = 31):
    """WarpReduceSum replayed on the emulator with one lane exited: its reads become undefined."""
    v = np.ones((1, 32), np.int32)
    active = np.atleast_2d(LANE != lane)
    full = np.array([0xFFFFFFFF], np.uint32)
    rec = Recorder(v, "WarpReduceSum, lane 31 exited", active=active)
    held = v.copy()
    for offset in (16, 8, 4, 2, 1):
        r = emulator.shuffle("down", held, np.full(v.shape, offset), 32, full, active)
        held = held + r.values
        rec.step(f"shfl_down {offset}", held, r, full, active)
    return rec.trace()


def test_meaningful_lanes_of_warp_reduce_sum() -> None:
    t = warp_reduce_sum_trace(np.arange(32, dtype=np.int32), backend="emulator")
    m = figures.meaningful_lanes(t)[:, 0]
    assert [np.flatnonzero(m[k]).tolist() for k in range(6)] == [list(range(n)) for n in (32, 16, 8, 4, 2, 1)]


def test_held_defined_propagates_undefined_reads_to_the_result() -> None:
    t = reduce_trace_with_inactive_lane()
    d = figures.held_defined(t)[:, 0]
    assert d[0].all()
    assert np.flatnonzero(~d[1]).tolist() == [15]       # lane 15 read exited lane 31
    assert not d[-1, 0]                                  # ... and it reaches lane 0's "sum"
    table = figures.trace_table(t)
    assert "undef" in table
    last_row = [line for line in table.splitlines() if line.startswith("5 shfl_down 1")][0]
    assert last_row.split("|")[1].split()[0] == "undef"


@pytest.mark.parametrize("step", range(6))
def test_trace_figure_every_step(step: int) -> None:
    t = warp_reduce_sum_trace(np.arange(32, dtype=np.int32), backend="emulator")
    fig = figures.trace_figure(t, step)
    ax = fig.axes[0]
    after = boxes(ax, 0.0)
    src = t.src_lane[step, 0]
    assert len(arrows(ax)) == (0 if step == 0 else ((src >= 0) & (src != LANE)).sum())
    texts = lane_texts(ax, 0.0)
    assert [texts[l] for l in range(32)] == [[str(v)] for v in t.held[step, 0]]
    faded = [l for l, b in enumerate(after) if face(b) == "#ffffff"]
    assert faded == [l for l in range(32) if not figures.meaningful_lanes(t)[step, 0, l]]
    if step == 5:
        assert face(after[0]) == style.GREEN.lower()
    assert f"step {step} of 5" in ax.get_title()


def test_trace_figure_hatches_undefined_partials() -> None:
    t = reduce_trace_with_inactive_lane()
    fig = figures.trace_figure(t, 1)
    row = boxes(fig.axes[0], 0.0)
    assert [l for l, b in enumerate(row) if b.get_hatch() == "////"] == [15]
    assert face(row[31]) == style.GREY.lower()
    with pytest.raises(ValueError, match="step must be in"):
        figures.trace_figure(t, 6)


def long_trace(n_steps: int):
    v = np.arange(32, dtype=np.int32)[None]
    full, active = np.array([0xFFFFFFFF], np.uint32), np.ones((1, 32), bool)
    rec = Recorder(v, "rotate")
    held = v
    for k in range(1, n_steps):
        r = emulator.shuffle("idx", held, np.atleast_2d((LANE + 1) % 32), 32, full, active)
        held = r.values
        rec.step(f"rotate {k}", held, r, full, active)
    return rec.trace()


@pytest.mark.parametrize("n_steps", [1, 6, 60, 61, 200])
def test_animation_has_at_most_60_frames_first_and_last_kept(n_steps: int) -> None:
    anim = figures.trace_animation(long_trace(n_steps), interval=100)
    frames = list(anim.new_frame_seq())
    assert len(frames) == min(n_steps, figures.MAX_FRAMES)
    assert frames[0] == 0 and frames[-1] == n_steps - 1 and frames == sorted(set(frames))


def test_animation_html_has_play_controls_and_one_frame_per_step() -> None:
    t = warp_reduce_sum_trace(np.arange(32, dtype=np.int32), backend="emulator")
    html = figures.animation_html(figures.trace_animation(t, interval=500))
    assert "<script" in html and "anim" in html
    # one per frame, plus the first frame written into the <img> itself
    assert html.count("data:image/png;base64") == t.n_steps + 1


def test_animation_html_works_offline_and_shows_a_frame_before_any_script() -> None:
    import base64
    import re

    t = warp_reduce_sum_trace(np.arange(32, dtype=np.int32), backend="emulator")
    html = figures.animation_html(figures.trace_animation(t, interval=500))
    assert not re.search(r"https?://", html) and "font-awesome" not in html and 'class="fa ' not in html
    for icon in ("▶", "❚❚", "|◀", "▶|"):
        assert icon in html
    img = re.search(r'<img id="_anim_img\w+" src="data:image/png;base64,([^"]+)"', html)
    assert img and base64.b64decode(img.group(1))[:8] == b"\x89PNG\r\n\x1a\n"


def test_trace_table_one_row_per_step() -> None:
    t = warp_reduce_sum_trace(np.arange(32, dtype=np.int32), backend="emulator")
    table = figures.trace_table(t, lanes_per_block=32)
    lines = table.splitlines()
    assert len(lines) == 1 + t.n_steps
    assert lines[-1].startswith("5 shfl_down 1") and lines[-1].split("|")[1].split()[0] == "496"
    assert "emulator" not in table   # deterministic across engines


# ---------------------------------------------------------------- no leaks


def test_figures_are_not_kept_anywhere() -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    r = warp.shfl_down(VALUES, 1, backend="emulator")
    refs = []
    for _ in range(5):
        fig = figures.shuffle_figure(VALUES, r, op_label="x", width=32, mask=0xFFFFFFFF, active=None,
                                     source_label="emulator")
        render.figure_png(fig)
        refs.append(weakref.ref(fig))
        del fig
    gc.collect()
    assert plt.get_fignums() == before
    assert all(ref() is None for ref in refs)


# ---------------------------------------------------------------- text drawn from stamps (issue 15, finding 7)


def _ink(png: bytes) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("L")).astype(int) < 200


def _same_ink(plain: np.ndarray, stamped: np.ndarray) -> None:
    assert abs(int(plain.sum()) - int(stamped.sum())) <= 0.1 * plain.sum()
    for axis in (0, 1):       # the ink spans the same rows and columns, give or take a pixel
        a, b = np.flatnonzero(plain.any(axis=axis)), np.flatnonzero(stamped.any(axis=axis))
        assert abs(a.min() - b.min()) <= 1 and abs(a.max() - b.max()) <= 1


def _plain_png(fig) -> bytes:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)     # matplotlib's own Agg renderer
    return buf.getvalue()


@pytest.mark.parametrize("kw", [dict(), dict(rotation=90), dict(ha="right"), dict(color="#D55E00", fontsize=5.5),
                                dict(bbox=dict(facecolor="white", edgecolor="none", pad=0.8))])
def test_stamp_renderer_draws_text_where_agg_would(kw) -> None:
    """figure_png draws every Text from stamps (StampRenderer): the same ink, at most a pixel away."""
    fig = matplotlib.figure.Figure(figsize=(3, 1))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 2)
    for x, s in ((1.3, "17"), (4.71, "undef"), (8.2, "310")):
        ax.text(x, 1, s, **{"ha": "center", "va": "center", **kw})
    _same_ink(_ink(_plain_png(fig)), _ink(render.figure_png(fig)))
    _same_ink(_ink(_plain_png(fig)), _ink(render.figure_png(fig)))     # again, from the cache


@pytest.mark.parametrize("rotation", [0, 90])
def test_lane_texts_draw_where_a_text_would(rotation: int) -> None:
    def fig_with(many: bool):
        fig = matplotlib.figure.Figure(figsize=(3, 1))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, 10)
        ax.set_ylim(0, 2)
        texts = render.LaneTexts(ax) if many else None
        for x, s in ((1.3, "17"), (4.71, "–"), (8.2, "310")):
            if many:
                texts.add(x, 1, s, fontsize=7, color="#000000", rotation=rotation)
            else:
                ax.text(x, 1, s, ha="center", va="center", fontsize=7, color="#000000", rotation=rotation)
        return fig

    _same_ink(_ink(_plain_png(fig_with(False))), _ink(render.figure_png(fig_with(True))))


def test_stamps_never_replace_text_in_vector_output() -> None:
    import io

    fig = widgets_shuffle_figure()
    assert any(isinstance(a, render.LaneTexts) for a in fig.axes[0].get_children())
    svg = io.StringIO()
    matplotlib.rcParams["svg.fonttype"], old = "none", matplotlib.rcParams["svg.fonttype"]
    try:
        fig.savefig(svg, format="svg")
    finally:
        matplotlib.rcParams["svg.fonttype"] = old
    assert ">310<" in svg.getvalue() and ">before<" in svg.getvalue()      # SVG keeps real text
    assert render.figure_png(fig)[:4] == b"\x89PNG"


def widgets_shuffle_figure():
    r = warp.shfl_down(VALUES, 2, 16, backend="emulator")
    return figures.shuffle_figure(VALUES, r, op_label="x", width=16, mask=0xFFFFFFFF, active=None,
                                  source_label="emulator")
