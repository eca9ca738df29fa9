"""The explorers of notebooks 01 and 02: pure view functions over their whole parameter range, and
the ipywidgets builders (no traceback ever, a machine-readable mapping, fast updates, no leaks)."""
from __future__ import annotations

import gc
import statistics
import time
import weakref

import numpy as np
import pytest
from matplotlib.figure import Figure

from helpers.engine import emulator
from helpers.widgets import base as explorer
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.engine import warp
from helpers.widgets import intrinsics as widgets

LANE = np.arange(32)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def emulator_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    # Auto would pick a GPU where there is one; these tests pin the engine (and its timing) down.
    monkeypatch.setenv("WARPLAB_BACKEND", "emulator")


@pytest.fixture
def no_figures(monkeypatch: pytest.MonkeyPatch) -> list:
    """Replace figure drawing by a stub that records its arguments (test_figures draws them all)."""
    calls: list = []

    def stub(*args, **kwargs):
        calls.append((args, kwargs))
        return Figure()

    monkeypatch.setattr(figures, "shuffle_figure", stub)
    monkeypatch.setattr(figures, "ballot_figure", stub)
    return calls


# ---------------------------------------------------------------- inputs


@pytest.mark.parametrize("text, value", [("0xFFFFFFFF", 0xFFFFFFFF), ("ffff0000", 0xFFFF0000),
                                         ("0x0000_FFFF", 0xFFFF), (" 0X1 ", 1), ("0", 0)])
def test_parse_mask_accepts_hex(text: str, value: int) -> None:
    assert widgets.parse_mask(text) == value


@pytest.mark.parametrize("text", ["", "zz", "0x", "0x1FFFFFFFF", "-1", "0xFFFFFFFF,", "12.5"])
def test_parse_mask_refuses_with_a_hint(text: str) -> None:
    with pytest.raises(ValueError, match=r"mask must .*0xFFFFFFFF"):
        widgets.parse_mask(text)


@pytest.mark.parametrize("n", range(33))
def test_active_lanes_every_kind_and_n(n: int) -> None:
    assert widgets.active_lanes("all", n).all()
    assert widgets.active_lanes("first n", n).tolist() == (LANE < n).tolist()
    assert widgets.active_lanes("even", n).tolist() == (LANE % 2 == 0).tolist()
    for seed in (0, 1, 99):
        random = widgets.active_lanes("random", n, seed)
        assert random.sum() == n and np.array_equal(random, widgets.active_lanes("random", n, seed))
    with pytest.raises(ValueError, match="active must be one of"):
        widgets.active_lanes("odd", n)


def test_ballot_predicates() -> None:
    values = widgets.ballot_values(0)
    kw = dict(n=5, k=3, seed=0, expression="value > 5", values=values)
    assert widgets.ballot_predicate("lane < n", **kw).tolist() == (LANE < 5).tolist()
    assert widgets.ballot_predicate("even lanes", **kw).tolist() == (LANE % 2 == 0).tolist()
    assert widgets.ballot_predicate("every k-th lane", **kw).tolist() == (LANE % 3 == 0).tolist()
    assert widgets.ballot_predicate("custom expression", **kw).tolist() == (values > 5).tolist()
    random = widgets.ballot_predicate("random (seed)", **kw)
    assert random.dtype == bool and np.array_equal(random, widgets.ballot_predicate("random (seed)", **kw))
    with pytest.raises(ValueError, match="predicate must be one of"):
        widgets.ballot_predicate("odd lanes", **kw)


# ---------------------------------------------------------------- shuffle view


@pytest.mark.parametrize("mode", widgets.MODES)
def test_shuffle_view_every_offset_and_width(mode: str, no_figures: list) -> None:
    for width in widgets.WIDTHS:
        for offset in range(32):
            view = widgets.shuffle_view(mode, offset, width)
            assert view.message is None and isinstance(view.figure, Figure)
            expected = emulator.source_lanes(mode, np.full((1, 32), offset), width)[0]
            assert view.mapping == "src: " + " ".join(map(str, expected))
            assert view.table.startswith("lane") and view.engine == "emulator"
    assert len(no_figures) == len(widgets.WIDTHS) * 32


@pytest.mark.parametrize("active", widgets.ACTIVE_KINDS)
@pytest.mark.parametrize("others", widgets.OTHERS_KINDS)
def test_shuffle_view_every_active_choice(active: str, others: str, no_figures: list) -> None:
    for n_active in range(33):
        for mask in ("0xFFFFFFFF", "0x0000FFFF", "0"):
            view = widgets.shuffle_view("down", 3, 8, mask, active, n_active, seed=n_active, others=others)
            assert view.message is None
            (values, result), kwargs = no_figures[-1]
            act, gone = widgets.lane_states(active, n_active, n_active, others)
            assert np.array_equal(kwargs["active"], act) and np.array_equal(kwargs["exited"], gone)
            assert ((result.src_lane < 0) == ~act).all()
            diverged = ~act & ~gone & figures.ballot_bits(kwargs["mask"])
            assert bool(result.call_defined) == (not diverged.any())
            if diverged.any():
                assert not result.defined.any() and view.table.startswith("UNDEFINED CALL")


def test_lane_states_three_kinds() -> None:
    act, gone = widgets.lane_states("first n", 20, 0, "exited")
    assert (act == (LANE < 20)).all() and (gone == (LANE >= 20)).all()
    act, gone = widgets.lane_states("first n", 20, 0, "alive elsewhere")
    assert not gone.any()
    act, gone = widgets.lane_states("first n", 20, 0, "some of each")
    assert np.flatnonzero(gone).tolist() == list(range(20, 32, 2)) and not (act & gone).any()
    with pytest.raises(ValueError, match="others must be one of"):
        widgets.lane_states("all", 32, 0, "asleep")


@pytest.mark.parametrize("kwargs, words", [
    (dict(mask="nope"), "mask must be a hexadecimal"),
    (dict(mask="0x100000000"), "at most 0xFFFFFFFF"),
    (dict(offset=32), "delta must be an integer in [0, 31]"),
    (dict(offset=-1), "delta must be an integer in [0, 31]"),
    (dict(mode="xor", offset=40), "lane_mask"),
    (dict(width=3), "width must be a power of two"),
    (dict(width=64), "width must be a power of two"),
    (dict(mode="sideways"), "mode must be one of"),
    (dict(active="odd"), "active must be one of"),
])
def test_shuffle_view_bad_input_is_a_message(kwargs: dict, words: str) -> None:
    view = widgets.shuffle_view(**kwargs)
    assert view.figure is None and view.mapping == "" and words in view.message


def test_shuffle_view_real_figure_and_facts() -> None:
    view = widgets.shuffle_view("down", 2, 16)
    assert isinstance(view.figure, Figure)
    assert "kept own value: 14 15 30 31" in view.table      # facts.md, delta 2 width 16
    assert "__shfl_down_sync(0xFFFFFFFF, v, 2, 16)" in view.figure.axes[0].get_title()
    assert widgets.shuffle_op_label("idx", 3, 8, 0xFF) == "__shfl_sync(0x000000FF, v, 3, 8)"


# ---------------------------------------------------------------- ballot view


@pytest.mark.parametrize("kind", widgets.PREDICATE_KINDS)
def test_ballot_view_every_kind_n_k(kind: str, no_figures: list) -> None:
    for n in range(33):
        for k in (1, 2, 3, 7, 31, 32):
            view = widgets.ballot_view(kind, n=n, k=k, seed=n, expression="lane < n and value >= 0")
            assert view.message is None, view.message
            (pred, mask, active, result, _source), kw = no_figures[-1]
            value = result.value
            assert value == warp.ballot(pred, mask=mask, active=active, backend="emulator").value
            assert view.mapping.startswith(f"ballot: 0x{value:08X} bits:")
            assert f"__ballot_sync = 0x{value:08X}" in view.table


@pytest.mark.parametrize("others", widgets.OTHERS_KINDS)
def test_ballot_view_every_seed_mask_and_active(others: str, no_figures: list) -> None:
    for seed in range(100):
        for active in widgets.ACTIVE_KINDS:
            for mask in ("0xF0F0F0F0", "0xFFFFFFFF"):
                view = widgets.ballot_view("random (seed)", seed=seed, mask=mask, active=active,
                                           n_active=seed % 33, others=others)
                assert view.message is None
                (pred, mask_int, act, result, _), kw = no_figures[-1]
                diverged = ~act & ~kw["exited"] & figures.ballot_bits(mask_int)
                if diverged.any():   # the mask names a lane that is alive elsewhere
                    assert not result.defined and view.mapping == "ballot: undefined bits: none"
                    assert "undefined" in view.table and "0x" not in view.table.splitlines()[-1]
                else:
                    value = result.value
                    assert value & ~mask_int == 0 and value & ~int(emulator.pack_bits(act[None])[0]) == 0


def test_ballot_view_lane_lt_20_is_0x000FFFFF() -> None:
    view = widgets.ballot_view("lane < n", n=20)
    assert view.mapping == "ballot: 0x000FFFFF bits: " + " ".join(map(str, range(20)))
    assert "__any_sync = 1, __all_sync = 0" in view.table


def test_ballot_view_offers_all_three_states() -> None:
    """The issue's example: a full mask with only the even lanes calling. Exited odd lanes: defined
    (0x55555555). Odd lanes alive elsewhere: undefined for every lane, and never a number."""
    exited = widgets.ballot_view("lane < n", n=32, active="even", others="exited")
    assert exited.mapping.startswith("ballot: 0x55555555")
    diverged = widgets.ballot_view("lane < n", n=32, active="even", others="alive elsewhere")
    assert diverged.mapping == "ballot: undefined bits: none"
    assert "alive but not calling" in diverged.table and "0x5555" not in diverged.table
    mixed = widgets.ballot_view("lane < n", n=32, active="even", others="some of each", mask="0x77777777")
    assert mixed.mapping.startswith("ballot: 0x55555555")   # the lanes elsewhere (3, 7, ...) are outside the mask
    assert "state     |  C  X  C  E" in mixed.table
    assert "others must be one of" in widgets.ballot_view(others="asleep").message


@pytest.mark.parametrize("expression, words", [
    ("__import__('os').system('echo hacked')", "found a function call"),
    ("lane.__class__", "attribute access"),
    ("[l for l in lane]", "comprehension"),
    ("(lambda: 0)", "lambda"),
    ("9 ** 9 ** 9", "exponent"),
    ("1 // (lane - lane)", "division by zero"),
    ("lane <", "could not parse"),
    ("", "empty"),
])
def test_ballot_view_bad_expression_is_a_message(expression: str, words: str) -> None:
    view = widgets.ballot_view("custom expression", expression=expression)
    assert view.figure is None and words in view.message


def test_ballot_view_unexpected_expression_failure_is_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a, **_k):
        raise OverflowError("too big")

    monkeypatch.setattr(widgets.expr, "predicate", boom)
    view = widgets.ballot_view("custom expression", expression="lane")
    assert view.figure is None and "OverflowError: too big" in view.message


def test_ballot_view_bad_k_and_mask() -> None:
    assert "k must be at least 1" in widgets.ballot_view("every k-th lane", k=0).message
    assert "mask must be" in widgets.ballot_view(mask="0xG").message


# ---------------------------------------------------------------- HTML


def test_html_pieces_escape_and_carry_their_classes() -> None:
    view = explorer.View.error("<b>bad</b> & worse")
    assert explorer.message_html(view.message).count("warplab-error") == 1
    assert "&lt;b&gt;bad&lt;/b&gt; &amp; worse" in explorer.message_html(view.message)
    assert explorer.message_html(None) == ""
    ok = widgets.shuffle_view("down", 1, 32)
    assert explorer.mapping_html(ok).startswith('<div class="warplab-mapping"')
    assert "src: 1 2 3" in explorer.mapping_html(ok)
    assert explorer.table_html("a<b").startswith("<pre") and "a&lt;b" in explorer.table_html("a<b")
    assert "the SIMT machine" in explorer.engine_html("the SIMT machine") and explorer.engine_html("") == ""


# ---------------------------------------------------------------- builders


def controls_of(box) -> dict:
    """name -> control; every control is also laid out in the box."""
    laid_out = [c for row in box.children[1:-4] for c in row.children]
    assert sorted(map(id, laid_out)) == sorted(map(id, box.controls.values()))
    return box.controls


def output_of(box):
    o = box.output
    assert list(box.children[-4:]) == [o.mapping, o.message, o.picture, o.table]
    return o.message, o.image, o.mapping, o.table


def test_shuffle_explorer_moves_the_mapping() -> None:
    box = widgets.shuffle_explorer()
    c = controls_of(box)
    message, image, mapping, table = output_of(box)
    assert 'class="warplab-mapping"' in mapping.value and "src: 1 2 3" in mapping.value
    assert image.value[:4] == b"\x89PNG" and message.value == ""
    c["offset"].value = 3
    assert "src: 3 4 5" in mapping.value
    assert c["offset"].description.startswith("offset")   # the browser test finds the slider by it
    c["mode"].value = "xor"
    assert c["offset"].description == "offset (lane_mask)"
    assert "src: 3 2 1 0" in mapping.value


def test_shuffle_explorer_shows_messages_not_tracebacks(monkeypatch: pytest.MonkeyPatch) -> None:
    box = widgets.shuffle_explorer()
    c = controls_of(box)
    message, image, mapping, table = output_of(box)
    c["mask"].value = "not hex"
    assert "warplab-error" in message.value and "mask must be a hexadecimal" in message.value
    assert box.output.picture.layout.display == "none" and table.value == ""
    c["mask"].value = "0xFFFFFFFF"
    assert message.value == "" and box.output.picture.layout.display is None
    assert "emulator" in box.output.engine.value        # the engine of the figure, under it

    def broken(**_kwargs):
        raise KeyError("surprise")

    monkeypatch.setattr(widgets, "shuffle_view", broken)
    c["offset"].value = 7
    assert "KeyError" in message.value and box.output.picture.layout.display == "none"
    assert "Traceback" not in message.value


def test_ballot_explorer_custom_expression_and_disabled_knobs() -> None:
    box = widgets.ballot_explorer()
    c = controls_of(box)
    message, image, mapping, table = output_of(box)
    assert "ballot: 0x000FFFFF" in mapping.value
    assert c["expression"].disabled and c["k"].disabled
    c["kind"].value = "custom expression"
    assert not c["expression"].disabled
    c["expression"].value = "__import__('os')"
    assert "found a function call" in message.value and mapping.value.count("warplab-mapping") == 1
    c["expression"].value = "(lane & 1) == 0"
    assert message.value == "" and "ballot: 0x55555555" in mapping.value
    assert c["others"].disabled            # every lane calls: there are no other lanes
    c["active"].value = "even"
    assert not c["others"].disabled and "ballot: 0x55555555" in mapping.value   # the odd lanes exited
    c["others"].value = "alive elsewhere"
    assert "ballot: undefined" in mapping.value and message.value == ""


def _refresh_ms(control, values) -> float:
    """The median CPU time of setting ``control`` to each of ``values`` (each a refresh): CPU time, not
    the wall clock, so other work on a shared machine does not fail the test (the wall-clock p95 per
    explorer is measured by scripts/bench_explorers.py)."""
    times = []
    for v in values:
        start = time.process_time()
        control.value = v
        times.append(time.process_time() - start)
    return 1000 * statistics.median(times)


def test_one_update_is_fast() -> None:
    # The target is 200 ms at the 95th percentile; this bound only catches a regression by a factor.
    ms = _refresh_ms(controls_of(widgets.shuffle_explorer())["offset"], (2, 5, 9, 13, 17))
    assert ms < 400, f"{ms:.0f} ms"
    ms = _refresh_ms(controls_of(widgets.ballot_explorer())["n"], (7, 9, 11, 13, 15))
    assert ms < 400, f"{ms:.0f} ms"


def test_redraws_do_not_keep_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    refs: list = []
    real = render.figure_png

    def tracking(fig, dpi=100):
        refs.append(weakref.ref(fig))
        return real(fig, dpi)

    monkeypatch.setattr(render, "figure_png", tracking)
    before = plt.get_fignums()
    box = widgets.shuffle_explorer()
    slider = controls_of(box)["offset"]
    for offset in range(10):
        slider.value = offset
    gc.collect()
    # 10 renders: offset 1 (the start) comes back from the explorer's memory of rendered settings
    assert len(refs) == 10 and all(r() is None for r in refs)
    assert plt.get_fignums() == before


def test_ballot_table_warns_about_callers_outside_the_mask() -> None:
    """PTX vote.sync: a lane that executes the vote without its own bit gets an undefined result."""
    table = widgets.ballot_view(mask="0x0000FFFF").table
    assert "lane(s) 16 17" in table.splitlines()[-1] and "their own results are undefined" in table
    assert "outside the mask" not in widgets.ballot_view(mask="0x0000FFFF", active="first n", n_active=16).table


def test_in_range_reads_of_the_own_lane_are_not_kept_values() -> None:
    # idx to a lane's own index and offset 0 read in range (PTX pval true): an ordinary read, not
    # the out-of-range "keeps its own value" case the orange outline means.
    assert "kept own value: none" in widgets.shuffle_view(mode="idx", offset=3, width=8).table
    assert "kept own value: none" in widgets.shuffle_view(mode="down", offset=0).table
    assert "kept own value: 30 31" in widgets.shuffle_view(mode="down", offset=2).table
