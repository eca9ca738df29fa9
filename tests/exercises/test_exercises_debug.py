"""A failing exercise check offers its launch to the lane debugger, opened at the first finding's step."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers import exercises
from helpers.exercises import magic

pytestmark = pytest.mark.needs_nvrtc
ipywidgets = pytest.importorskip("ipywidgets")
WRONG = Path(__file__).resolve().parents[2] / "kernels" / "exercises" / "wrong"


def _check(file: str):
    return exercises.check(file.split(".")[0], (WRONG / file).read_text(), seed=1, engine="machine", first_line=2)


def _state(box) -> dict[str, str]:
    text = box.output["state"].value.split('data-state="')[1].split('"')[0]
    return dict(kv.split("=") for kv in text.split())


def test_a_race_opens_at_its_step_in_the_learners_lines() -> None:
    r = _check("block_tree_sum.race.cu")
    assert r.status == "hazard" and r.debug is not None
    box = r.debug.open()
    source = (WRONG / "block_tree_sum.race.cu").read_text().splitlines()
    s = _state(box)
    assert s["kind"] in ("shared_load", "shared_store")
    assert "smem[tid + s]" in source[int(s["line"]) - 2]          # cell line N is line N - 1 of the code
    assert box.findings and box.findings[0].description.startswith("race at line")


def test_an_undefined_shuffle_opens_at_the_shuffle() -> None:
    box = _check("butterfly_sum16.undefined_shuffle.cu").debug.open()
    assert _state(box)["kind"] == "shuffle" and "url(#warplab-undef)" in box.output["lanes"].value


def test_a_wrong_result_opens_at_a_store_of_the_result() -> None:
    r = _check("block_tree_sum.wrong_result.cu")
    assert r.status == "wrong_result"
    assert _state(r.debug.open())["kind"] == "global_store"


def test_a_passing_answer_offers_nothing_and_the_button_opens_it_below() -> None:
    ex = exercises.get("block_tree_sum")
    assert exercises.check("block_tree_sum", ex.solution, seed=1, engine="machine").debug is None
    r = _check("block_tree_sum.race.cu")
    box = magic.buttons(ex, r.debug)
    opener = [b for b in box.children[0].children if b.description == "Open in the debugger"]
    assert opener and not box.place.children
    opener[0].click()
    assert box.place.children and "warplab-debug-state" in box.place.children[0].output["state"].value
    assert [b.description for b in magic.buttons(ex).children[0].children] == ["Hint 1 of %d" % len(ex.hints),
                                                                              "Show the solution"]
