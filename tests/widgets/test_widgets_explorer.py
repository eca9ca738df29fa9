"""The one explorer base (helpers.widgets.base): the wiring every explorer uses, tested on a toy view."""
from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from helpers.widgets import base as explorer
from helpers.viz import render
from helpers.widgets import intrinsics as widgets
from helpers.widgets import allreduce as widgets_allreduce
from helpers.widgets import reduce as widgets_reduce

ipywidgets = pytest.importorskip("ipywidgets")


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every figure the explorers render, in order (rendering stubbed to a few bytes)."""
    calls: list = []
    monkeypatch.setattr(render, "figure_png", lambda fig, dpi=None: calls.append(fig) or b"\x89PNG")
    return calls


def toy(renders_: list, **kw):
    shared = Figure()
    seen: list = []

    def view(n: int, mode: str) -> explorer.View:
        seen.append((n, mode))
        if n < 0:
            return explorer.View.error(f"n must be >= 0; got {n}")
        if n == 13:
            raise KeyError("unlucky")
        return explorer.View(shared if mode == "same" else Figure(), f"table {n} {mode}", engine="the SIMT machine",
                             mapping=f"n: {n}")

    controls = {"n": ipywidgets.IntText(value=1), "mode": ipywidgets.Dropdown(options=("new", "same"), value="new")}
    box = explorer.build(controls, (("n", "mode"),), view, "<b>toy</b>", **kw)
    return box, seen


def test_build_shows_table_engine_mapping_and_messages(renders) -> None:
    box, seen = toy(renders)
    o = box.output
    assert list(box.children[-4:]) == [o.mapping, o.message, o.picture, o.table]
    assert "table 1 new" in o.table.value and "n: 1" in o.mapping.value and "the SIMT machine" in o.engine.value
    assert o.message.value == "" and o.picture.layout.display is None and o.image.value[:4] == b"\x89PNG"
    box.controls["n"].value = -2
    assert "n must be &gt;= 0" in o.message.value and o.picture.layout.display == "none" and o.table.value == ""
    box.controls["n"].value = 13
    assert "Could not draw this: KeyError" in o.message.value and "Traceback" not in o.message.value
    box.controls["n"].value = 2
    assert o.message.value == "" and o.picture.layout.display is None


def test_build_remembers_settings_and_renders_a_figure_once(renders) -> None:
    box, seen = toy(renders)
    box.controls["n"].value = 2
    box.controls["n"].value = 1            # shown before: from memory, no new view, no new render
    assert seen == [(1, "new"), (2, "new")] and len(renders) == 2
    box.controls["mode"].value = "same"
    box.controls["n"].value = 5            # the view returns the same Figure: rendered once
    assert len(renders) == 3 and renders[-1] is renders[-2] if len(renders) > 3 else len(renders) == 3
    box, seen = toy(renders, remember=False)
    box.controls["n"].value = 2
    box.controls["n"].value = 1
    assert seen == [(1, "new"), (2, "new"), (1, "new")]


def test_build_on_change_draws_once_and_never_raises(renders) -> None:
    calls: list = []

    def adjust(values, change) -> None:
        calls.append(change is None)
        box_controls["mode"].value = "same" if values["n"] > 3 else "new"   # a change inside: no second drawing
        if values["n"] == 7:
            raise RuntimeError("cannot adjust")

    box_controls: dict = {}
    box, seen = toy(renders, on_change=lambda v, c: adjust(v, c))
    box_controls.update(box.controls)
    box, seen = toy(renders, on_change=lambda v, c: adjust(v, c), notice="timing is off")
    box_controls.clear()
    box_controls.update(box.controls)
    before = len(seen)
    box.controls["n"].value = 4
    assert seen[before:] == [(4, "same")]                 # drawn once, after the adjustment
    assert "timing is off" in box.output.message.value
    box.controls["n"].value = 7
    assert "Could not adjust the controls: RuntimeError" in box.output.message.value


def test_engine_label_names_the_cpu_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPLAB_BACKEND", "emulator")
    assert explorer.engine_label() == explorer.MACHINE
    assert widgets.engine_label() == "emulator" and widgets_reduce.engine_label() == explorer.MACHINE


def test_every_explorer_is_built_on_the_base(renders) -> None:
    boxes = [widgets.shuffle_explorer(backend="emulator"), widgets.ballot_explorer(backend="emulator"),
             widgets_reduce.warp_tree_explorer(backend="emulator"), widgets_reduce.block_explorer(backend="emulator"),
             widgets_reduce.ladder_explorer(None, live=False), widgets_allreduce.allreduce_explorer()]
    for box in boxes:
        o = box.output
        assert list(box.children[-4:]) == [o.mapping, o.message, o.picture, o.table]
        assert o.message.value == "" and o.table.value.startswith("<pre") and "figure drawn from" in o.engine.value


def test_ladder_explorer_without_a_usable_gpu_is_a_notice(monkeypatch: pytest.MonkeyPatch, renders) -> None:
    monkeypatch.setenv("WARPLAB_BACKEND", "cupy")
    box = widgets_reduce.ladder_explorer(None)
    assert box.controls["time_it"].disabled and "timing is off" in box.output.message.value
    box.controls["version"].value = "v3"
    assert "reduce_v3&lt;256&gt;" in box.output.table.value and "timing is off" in box.output.message.value
