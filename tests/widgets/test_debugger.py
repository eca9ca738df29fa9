"""helpers.widgets.debug: the lane debugger's views and wiring, on small kernels and the series' own."""
from __future__ import annotations

import time

import numpy as np
import pytest

from helpers.engine import kernels
from helpers.widgets import debug as D
from tests.machine.test_steps import BLOCK, DIVERGE

pytestmark = pytest.mark.needs_nvrtc
ipywidgets = pytest.importorskip("ipywidgets")


def _state(box) -> dict[str, str]:
    text = box.output["state"].value.split('data-state="')[1].split('"')[0]
    return dict(kv.split("=") for kv in text.split())


@pytest.fixture(scope="module")
def box():
    return D.debug(DIVERGE, "k", 1, 64, (np.arange(65, dtype=np.int32), np.zeros(64, np.int32)))


def test_opens_at_the_first_finding_and_the_slider_moves_line_and_lanes(box) -> None:
    first = box.session.steps.findings[0]
    s = _state(box)
    assert (int(s["block"]), int(s["warp"]), int(s["step"])) == first.at
    box.controls["step"].value = 0
    s0, src0, lanes0 = _state(box), box.output["source"].value, box.output["lanes"].value
    assert s0["step"] == "0" and 'class="warplab-current"' in src0
    ws = box.session.steps.warp(0, 0)
    box.go(0, 0, next(i for i in range(len(ws)) if ws[i].line == 6 and ws[i].kind == "global load"))
    s1 = _state(box)
    assert s1["line"] == "6" and s1["active"] == "0x000000ff" and s1["elsewhere"] == "0xffffff00"
    assert box.output["source"].value != src0 and box.output["lanes"].value != lanes0
    assert "warplab-lanes" in box.output["lanes"].value


def test_buttons_step_and_jump(box) -> None:
    box.go(0, 0, 0)
    box.buttons["forward"].click()
    assert _state(box)["step"] == "1"
    box.buttons["back"].click()
    box.buttons["back"].click()
    assert _state(box)["step"] == "0"
    box.buttons["next_barrier"].click()
    assert _state(box)["kind"] == "barrier"
    box.go(0, 0, 0)
    box.buttons["next_finding"].click()
    ws = box.session.steps.warp(0, 0)
    assert int(_state(box)["step"]) == min(ws.findings)
    race = next(i for i, f in enumerate(box.session.steps.findings) if f.kind == "race")
    box.findings[race].click()
    sf = box.session.steps.findings[race]
    assert tuple(int(_state(box)[k]) for k in ("block", "warp", "step")) == sf.at
    assert sf.other is not None


def test_a_race_tints_the_line_of_its_other_access() -> None:
    box = D.debug(BLOCK, "block_sum", 1, 64, (np.ones(64, np.float32), np.zeros(64, np.float32)))
    race = next(i for i, f in enumerate(box.session.steps.findings) if f.kind == "race")
    box.findings[race].click()
    assert D.OTHER in box.output["source"].value and D.HIGHLIGHT in box.output["source"].value


def test_switching_warp_keeps_the_machines_step(box) -> None:
    ws0 = box.session.steps.warp(0, 0)
    k = next(i for i in range(len(ws0)) if ws0[i].kind == "barrier")
    box.go(0, 0, k)
    box.controls["warp"].value = 1
    s = _state(box)
    ws1 = box.session.steps.warp(0, 1)
    assert s["warp"] == "1" and ws1.steps[int(s["step"])] >= ws0.steps[k]


def test_undefined_shuffle_reads_are_hatched(box) -> None:
    ws = box.session.steps.warp(0, 0)
    i = next(i for i in range(len(ws)) if ws[i].kind == "shuffle")
    v = D.view(box.session, 0, 0, i)
    assert v.message is None and "url(#warplab-undef)" in v.lanes and "marker-end" in v.lanes
    assert "undefined results (hatched): 16-19" in v.details


def test_memory_steps_show_banks_and_sectors(box) -> None:
    ws = box.session.steps.warp(0, 0)
    st = next(i for i in range(len(ws)) if ws[i].kind == "shared store")
    v = D.view(box.session, 0, 0, st)
    assert "2 wavefront(s)" in v.details and "bank 2" in v.details
    ld = next(i for i in range(len(ws)) if ws[i].kind == "global load")
    assert "in[0]" in D.view(box.session, 0, 0, ld).details        # the parameter's name, from the source


def test_bad_settings_and_input_give_messages_not_tracebacks(box) -> None:
    assert "step must be in" in D.view(box.session, 0, 0, 10_000).message
    assert "traced warps" in D.view(box.session, 5, 0, 0).message
    for call, words in [
        (lambda: D.debug(DIVERGE, "nope", 1, 64, ()), "name must be one of the kernels this code declares ['k']"),
        (lambda: D.debug(DIVERGE, "k", 1, 64, (1,)), "args=(in, out)"),
        (lambda: D.debug(DIVERGE, "k", 0, 64, ()), "grid must be"),
        (lambda: D.debug(DIVERGE, "k", 1, 2048, ()), "at most 1024"),
        (lambda: D.debug(DIVERGE, "k", 1, 64, np.zeros(3)), "args must be a tuple"),
        (lambda: D.debug(DIVERGE, "k", 1, 64, (), shared_mem=-1), "shared_mem"),
        (lambda: D.debug("int x = ;", "k", 1, 64, ()), "does not compile"),
        (lambda: D.debug("", "k", 1, 64, ()), "code must be"),
    ]:
        assert words in call().message


def test_a_missing_barrier_is_found_and_shown() -> None:
    box = D.debug(BLOCK, "block_sum", 1, 64, (np.ones(64, np.float32), np.zeros(64, np.float32)))
    assert any(b.description.startswith("race") for b in box.findings)
    assert "race" in box.output["details"].value


@pytest.mark.parametrize("file, name, grid, block, args", [
    ("warp_reduce_sum", "warp_reduce_sum_kernel<float>", 1, 64,
     lambda: (np.arange(64, dtype=np.float32), np.zeros(2, np.float32))),
    ("block_reduce", "block_reduce_kernel<float, warplab::ops::Sum<float>>", 2, 256,
     lambda: (np.ones(512, np.float32), np.zeros(512, np.float32))),
    ("seed_block_reduce", "seed_block_reduce_sum_kernel<float>", 1, 256,
     lambda: (np.ones(256, np.float32), np.zeros(256, np.float32))),
    ("reduce_v4", "reduce_v4<256>", 8, 256,
     lambda: (np.ones(1 << 14, np.float32), np.zeros(8, np.float32), np.int64(1 << 14))),
])
def test_the_series_kernels_open(file, name, grid, block, args) -> None:
    t0 = time.perf_counter()
    box = D.debug(kernels.source(file), name, grid, block, args())
    took = time.perf_counter() - t0
    assert getattr(box, "message", None) is None, box.message
    assert took < 15          # 3 s is the target on an idle 2-core machine (scripts/bench_explorers.py)
    slider = box.controls["step"]
    for v in (slider.max // 2, slider.max):
        slider.value = v
        assert _state(box)["step"] == str(v)
