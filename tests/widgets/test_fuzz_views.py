"""Property-based fuzz tests of every explorer's view function (issue 15, finding 6).

A view function turns widget values into what the explorer shows, and promises never to raise:
whatever it is given (a widget's value, a learner's call with a typo, None, NaN, a list), it
returns a view with a figure or with a short message saying what is wrong. Most examples run with
the figure builders stubbed out (drawing is slow and is not what decides the message); a few run
with the real figures, so drawing is fuzzed too. The explorers' builders are checked the same way:
setting any control to any value it accepts shows a figure or a message.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator
from unittest import mock

import numpy as np
import pytest
from fuzz_settings import MAX_MESSAGE, backends, fuzz, junk, mixed
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.figure import Figure

from helpers import data
from helpers.viz import lanes as figures
from helpers.viz import render
from helpers.viz import ladder as F
from helpers.widgets import intrinsics as widgets
from helpers.widgets import reduce as W
from helpers.widgets import reduce as WR

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
EMU = "emulator"
ints = st.integers(-3, 40)
maybe_ints = st.one_of(ints, ints, ints.map(np.int64), junk)
mask_texts = st.one_of(st.sampled_from(["0xFFFFFFFF", "0x0000FFFF", "ffff0000", "0x1", "0"]), st.text(max_size=12), junk)


@contextlib.contextmanager
def stub_figures() -> Iterator[None]:
    """Replace every figure builder the views call by one returning an empty Figure."""
    blank = lambda *a, **k: Figure()  # noqa: E731
    with mock.patch.object(figures, "shuffle_figure", blank), mock.patch.object(figures, "ballot_figure", blank), \
            mock.patch.object(figures, "trace_figure", blank), mock.patch.object(W, "_block_figure", blank), \
            mock.patch.object(W, "_lanes_map", blank):
        yield


def _shown(view: Any, message_field: str = "message") -> None:
    """A view shows a figure, or a short message, and never both."""
    message = getattr(view, message_field)
    if message is None:
        assert view.figure is not None
    else:
        assert view.figure is None and isinstance(message, str) and 0 < len(message) <= MAX_MESSAGE, message


SHUFFLE = dict(mode=mixed(st.sampled_from(widgets.MODES)), offset=maybe_ints,
               width=mixed(st.sampled_from(widgets.WIDTHS) | ints), mask=mask_texts,
               active=mixed(st.sampled_from(widgets.ACTIVE_KINDS)), n_active=maybe_ints, seed=maybe_ints,
               backend=backends())


BALLOT = dict(kind=mixed(st.sampled_from(widgets.PREDICATE_KINDS)), n=maybe_ints, k=maybe_ints, seed=maybe_ints,
              expression=st.one_of(st.sampled_from(["lane < n", "value > 5 and lane % 2", "1 // 0", "lane.x", ""]),
                                   st.text(max_size=20), junk),
              mask=mask_texts, active=mixed(st.sampled_from(widgets.ACTIVE_KINDS)), n_active=maybe_ints,
              backend=backends())


TREE = dict(op=mixed(st.sampled_from(W.OPS)), width=mixed(st.sampled_from(W.WIDTHS) | ints),
            pattern=mixed(st.sampled_from(W.PATTERNS)), n_valid=maybe_ints, tree=mixed(st.sampled_from(W.TREES)),
            partial=mixed(st.sampled_from(W.PARTIALS)), step=st.one_of(st.none(), maybe_ints), backend=backends())


# view function, its arguments' strategies, examples, what a view with a figure also shows
VIEWS: dict[str, tuple[Callable[..., Any], dict[str, st.SearchStrategy], int, Callable[[Any], bool]]] = {
    "shuffle": (widgets.shuffle_view, SHUFFLE, 150, lambda v: v.mapping.startswith("src:")),
    "ballot": (widgets.ballot_view, BALLOT, 150, lambda v: v.mapping.startswith("ballot: 0x")),
    "warp_tree": (W.warp_tree_view, TREE, 120,
                  lambda v: "NumPy" in v.table and "WRONG" not in v.table.replace("NumPy", "")),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_never_raises(name: str) -> None:
    view_fn, strategies, examples, complete = VIEWS[name]

    @fuzz(examples)
    @given(**strategies)
    def run(**kw) -> None:
        with stub_figures():
            view = view_fn(**kw)
        _shown(view)
        if view.message is None:
            assert complete(view), name

    run()


@fuzz(100)
@given(x=st.one_of(st.integers(-2, 140), junk), y=st.one_of(st.integers(-2, 40), junk), op=mixed(st.sampled_from(W.OPS)),
       backend=backends())
def test_block_view_never_raises(x, y, op, backend) -> None:
    with stub_figures():
        view = W.block_view(x, y, op, backend)
    _shown(view)


RECORDING = data.load("bench_ladder")
results = st.one_of(st.none(), st.just(RECORDING), st.just({}), st.just({"rows": [{}]}), st.just({"rows": 3}), junk)


@fuzz(120)
@given(version=mixed(st.sampled_from(WR.LADDER_VERSIONS)), block=mixed(st.sampled_from((64, 128, 256, 512, 1024)) | ints),
       log2_n=mixed(st.integers(8, 32)), results=results, live=st.one_of(st.booleans(), junk))
def test_ladder_view_never_raises(version, block, log2_n, results, live) -> None:
    with stub_figures():
        view = WR.ladder_view(version, block, log2_n, results, live)
    _shown(view)


# ---------------------------------------------------------------- with the real figures (slower: few examples)

@fuzz(8)
@given(shuffle=st.fixed_dictionaries(SHUFFLE), ballot=st.fixed_dictionaries(BALLOT), tree=st.fixed_dictionaries(TREE))
def test_views_with_real_figures_never_raise(shuffle, ballot, tree) -> None:
    for view in (widgets.shuffle_view(**shuffle), widgets.ballot_view(**ballot), W.warp_tree_view(**tree)):
        _shown(view)


@fuzz(5)
@given(x=st.integers(1, 128), y=st.integers(1, 8), op=st.sampled_from(W.OPS), version=st.sampled_from(WR.LADDER_VERSIONS),
       block=st.sampled_from((64, 128, 256, 512, 1024)))
def test_block_and_ladder_views_with_real_figures(x, y, op, version, block) -> None:
    _shown(W.block_view(x, y, op, EMU))
    _shown(WR.ladder_view(version, block, 20, RECORDING))


# ---------------------------------------------------------------- the explorers themselves

def _settable(widget: Any) -> st.SearchStrategy:
    """Values a control accepts (its options, or integers its slider clamps), and text for a text box."""
    if hasattr(widget, "options"):
        return st.sampled_from(list(widget.options))
    if hasattr(widget, "min") and hasattr(widget, "max"):
        return st.integers(widget.min - 3, widget.max + 3)
    if isinstance(widget.value, bool):
        return st.booleans()
    return st.text(max_size=16)


def _explorers() -> dict[str, Any]:
    return {"shuffle": widgets.shuffle_explorer(backend=EMU), "ballot": widgets.ballot_explorer(backend=EMU),
            "warp_tree": W.warp_tree_explorer(backend=EMU), "block": W.block_explorer(backend=EMU),
            "ladder": WR.ladder_explorer(RECORDING, live=False)}


@pytest.fixture(scope="module")
def explorers() -> dict[str, Any]:
    pytest.importorskip("ipywidgets")
    with stub_figures(), mock.patch.object(render, "figure_png", lambda *a, **k: b""):
        return _explorers()


@pytest.mark.parametrize("name", ["shuffle", "ballot", "warp_tree", "block", "ladder"])
def test_explorers_show_a_figure_or_a_message_for_any_control_value(name: str, explorers) -> None:
    import ipywidgets as w

    box = explorers[name]
    controls = box.controls

    @fuzz(25)
    @given(st.data())
    def run(data_: st.DataObject) -> None:
        with stub_figures(), mock.patch.object(render, "figure_png", lambda *a, **k: b"png"):
            for key in data_.draw(st.lists(st.sampled_from(sorted(controls)), min_size=1, max_size=3)):
                c = controls[key]
                try:
                    c.value = data_.draw(_settable(c), label=key)
                except Exception:  # noqa: BLE001 - the widget itself refused the value (its own validation)
                    continue
            html = [ch.value for ch in _html_children(box, w)]
            shown = " ".join(html)
            assert "Traceback" not in shown
            assert "Could not draw this" not in shown, shown[:300]

    run()


def _html_children(box: Any, w: Any) -> list:
    out = []
    for ch in box.children:
        if isinstance(ch, w.HTML):
            out.append(ch)
        elif isinstance(ch, w.Box):
            out.extend(_html_children(ch, w))
    return out
