"""The undefined-call recording (helpers.recording.record_diverged): its summary, on made-up hardware buffers,
and what notebook 01 prints with and without a recording. The GPU side is scripts/gpu/diverged.sh."""
from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import data
from helpers.engine import emulator
from helpers.engine import kernels
from helpers.recording import record_diverged as rd
from helpers.engine import warp

LANE = np.arange(32, dtype=np.int32)


def fake_raw(p: rd.Part, n_warps: int = 6, *, got: str = "source") -> dict:
    """Buffers as run_part returns them, from a pretend GPU: every call returns the source lane's
    value ("source") or the caller's own value ("own"); the lanes elsewhere wait SPIN_CYCLES."""
    values = rd.inputs(n_warps)
    first = np.broadcast_to(emulator.mask_bits(np.array([p.caller_mask], np.uint32)), values.shape).copy()
    called = first | (p.then == "later")
    if p.op == "shfl_down":
        src = np.where(LANE + p.delta < 32, LANE + p.delta, LANE)
        out = values[:, src] if got == "source" else values
    else:
        out = np.full(values.shape, np.int32(np.uint32(p.caller_mask).view(np.int32)))
    t = np.zeros((n_warps, 32, 3), np.int64)
    t[:, :, 1] = np.where(first, 10, rd.SPIN_CYCLES)
    t[:, :, 2] = np.where(first, rd.SPIN_CYCLES + 50, rd.SPIN_CYCLES + 60)
    amask = np.where(first, p.caller_mask, 0).astype(np.uint32)
    return {"values": values, "called_first": first, "called": called, "got": np.where(called, out, -1),
            "amask": amask, "t": t}


def test_parts_are_named_and_described() -> None:
    assert len({p.name for p in rd.PARTS}) == len(rd.PARTS)
    assert rd.part("ballot_even_exit").caller_mask == 0x55555555
    assert "return without calling" in rd.part("shfl_even_d1_exit").describe()
    assert "control" in rd.part("control_shfl").describe()
    with pytest.raises(ValueError, match="part must be one of"):
        rd.part("nope")


def test_every_part_is_an_undefined_call_except_the_controls() -> None:
    """The emulator's verdict on each configuration: the recording is of undefined behaviour only."""
    for p in rd.PARTS:
        active = emulator.mask_bits(np.array([p.caller_mask], np.uint32))[0]
        r = warp.shfl_down(LANE, max(p.delta, 1), active=active, backend="emulator")
        assert bool(r.call_defined) == (p.callers == "all lanes"), p.name


def test_summary_of_a_diverged_shuffle() -> None:
    p = rd.part("shfl_even_d2_exit")
    s = rd.summarise(p, fake_raw(p))
    reads = s["reads"]
    assert reads["first callers, source also a first caller"]["source_lane_value"] == 6 * 15   # lanes 0..28
    assert reads["first callers, source past lane 31 (own value in a defined call)"]["caller_own_value"] == 6
    assert reads["first callers, source elsewhere"]["reads"] == 0
    assert s["timing"]["warps_whose_first_callers_left_after_the_others_stopped_waiting"] == 6
    assert s["activemask_seen_by_first_callers"] == {"0x55555555": 6 * 16}
    assert s["warp_0"]["got"][1] is None and s["warp_0"]["got"][0] == 3
    json.dumps(s)   # JSON-ready


def test_summary_sorts_reads_of_lanes_elsewhere() -> None:
    p = rd.part("shfl_low_d16_exit")
    s = rd.summarise(p, fake_raw(p, got="own"))
    r = s["reads"]["first callers, source elsewhere"]
    assert r["reads"] == 6 * 16 and r["caller_own_value"] == r["reads"] and r["none_of_these"] == 0
    p = rd.part("shfl_even_d1_later")
    s = rd.summarise(p, fake_raw(p))
    assert s["reads"]["later callers (all reads)"]["reads"] == 6 * 16


def test_summary_of_a_ballot() -> None:
    p = rd.part("ballot_even_later")
    s = rd.summarise(p, fake_raw(p))
    assert s["ballot_first_callers"] == {"0x55555555": 96} and s["ballot_later_callers"] == {"0x55555555": 96}
    assert "timing" not in rd.summarise(rd.part("control_ballot"), fake_raw(rd.part("control_ballot")))


def test_report_without_a_recording_makes_no_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(data, "exists", lambda name: False)
    text = rd.report()
    assert text.startswith("Not recorded yet") and "no claim" in text


def test_report_of_a_recording_carries_its_label_and_stamp() -> None:
    parts = {p.name: rd.summarise(p, fake_raw(p)) for p in rd.PARTS[:3]}
    parts["ballot_even_exit"] = {"describe": "x", "status": "no result: the part timed out or failed (see its log)"}
    rec = {"stamp": {"gpu": "NVIDIA H200", "driver": "1", "cupy_version": "14", "date": "2026-12-02"},
           "label": rd.LABEL, "parts": parts}
    text = rd.report(rec)
    assert text.startswith("recorded on NVIDIA H200") and "one observation of undefined behaviour" in text
    assert "timed out" in text and "source lane's value" in text
    assert "control_ballot" not in rd.report(rec, parts=("shfl_even_d1_exit",))


@pytest.mark.needs_nvrtc
def test_the_kernel_makes_two_separate_calls_in_the_later_variant() -> None:
    """The 'later' lanes must call from another line: NVRTC's PTX keeps two shfl.sync / vote.sync."""
    for expr, op, n in (("diverged_kernel<0, true>", "shfl.sync", 2), ("diverged_kernel<0, false>", "shfl.sync", 1),
                        ("diverged_kernel<1, true>", "vote.sync.ballot", 2)):
        ptx = kernels.ptx(rd.KERNEL, "sm_90", [expr])
        assert sum(op in line for line in ptx.splitlines()) == n, expr


def test_run_part_host_code_on_a_pretend_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """run_part's launch and read-back, with CuPy and the kernel replaced by NumPy stand-ins
    (the real run is on the H200): argument order, shapes, and the --part / --out command line."""
    import sys
    import types

    fake = types.ModuleType("cupy")
    fake.asarray = np.asarray
    fake.asnumpy = np.asarray
    fake.full = lambda n, v, dtype: np.full(n, v, dtype)
    fake.zeros = lambda n, dtype: np.zeros(n, dtype)
    fake.cuda = types.SimpleNamespace(get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    launched = []

    def kernel(grid, block, args):
        values, callers, delta, spin, got, amask, t = args
        launched.append((grid, block, int(delta), int(spin)))
        lanes = ((callers[:, None].astype(np.uint64) >> np.arange(32, dtype=np.uint64)) & 1).astype(bool).ravel()
        got[lanes] = values.ravel()[lanes]          # pretend: everyone got its own value
        amask[lanes] = np.repeat(callers, 32)[lanes]
        t.reshape(-1, 3)[:, 1] = np.where(lanes, 5, spin)
        t.reshape(-1, 3)[:, 2] = spin + 9

    monkeypatch.setattr(kernels, "module", lambda name, exprs: types.SimpleNamespace(get_function=lambda e: kernel))
    raw = rd.run_part(rd.part("shfl_low_d16_exit"), n_warps=4)
    assert launched == [((4,), (32,), 16, rd.SPIN_CYCLES)]
    assert raw["got"].shape == (4, 32) and raw["t"].shape == (4, 32, 3) and raw["called"][:, :16].all()
    s = rd.summarise(rd.part("shfl_low_d16_exit"), raw)
    assert s["reads"]["first callers, source elsewhere"]["caller_own_value"] == 64
    out = tmp_path / "p.json"
    assert rd.main(["--part", "ballot_even_exit", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["callers"] == "even lanes"


def _fake_recording() -> dict:
    parts = {p.name: rd.summarise(p, fake_raw(p)) for p in rd.PARTS}
    parts["ballot_low_exit"] = {"describe": "x", "status": "no result: the part timed out or failed (see its log)"}
    return {"stamp": {"gpu": "NVIDIA H200", "driver": "1", "cupy_version": "14", "date": "2026-12-02"},
            "label": rd.LABEL, "parts": parts}


def test_observations_reduce_each_recorded_part() -> None:
    obs = {o.name: o for o in rd.observations(_fake_recording())}
    assert "ballot_low_exit" not in obs                          # no result: left out
    assert obs["control_ballot"].control and obs["control_ballot"].median_cycles_in_call is None
    later = obs["shfl_even_d1_later"]
    assert later.then == "later" and later.got == "source a lane elsewhere: source lane's value 100 %"
    assert later.got_later == "own value 6 %, source lane's value 94 %"   # lane 31 of 16 odd lanes reads past 31
    assert obs["ballot_even_exit"].got == "0x55555555" and obs["ballot_even_exit"].got_later is None
    assert obs["shfl_even_d2_exit"].warps_back_after_wait == 6


def test_table_and_figure_are_drawn_from_the_recording() -> None:
    from helpers.viz import diverged as fd

    rec = _fake_recording()
    text = fd.table_markdown(rec=rec)
    assert text.count("\n| `") == len(rd.observations(rec)) and rd.LABEL in text and "NVIDIA H200" in text
    fig = fd.timing_figure(["shfl_even_d1_exit", "ballot_even_later"], rec=rec)
    assert len(fig.axes[0].patches) == 2 and fig._repr_png_()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="parts must name recorded parts"):
        fd.table_markdown(["nope"], rec=rec)
    with pytest.raises(ValueError, match="at least one undefined part"):
        fd.timing_figure(["control_shfl"], rec=rec)


@pytest.mark.skipif(not data.exists(rd.NAME), reason="data/diverged_reads.json is recorded on a GPU")
def test_what_notebook_01_says_about_the_recording_holds() -> None:
    """Notebook 01's prose about the H200 recording (section 3), checked against the file itself."""
    rec = data.load(rd.NAME)
    obs = [o for o in rd.observations(rec) if not o.control]
    assert obs and all(o.warps_back_after_wait == o.n_warps for o in obs)          # "in every recorded warp"
    assert all(0.95 * o.spin_cycles <= o.median_cycles_in_call <= 1.05 * o.spin_cycles for o in obs)
    for o in obs:
        mask = rd.CALLER_SETS[o.callers]
        assert o.activemask == f"0x{mask:08X}"                                       # __activemask(): the first callers only
        if o.op == "ballot":
            assert o.got == (f"0x{mask:08X}" if o.then == "exit" else "0xFFFFFFFF")
            assert o.got_later in (None, "0xFFFFFFFF")
    parts = rec["parts"]
    for name, r in parts.items():
        if r.get("op") != "shfl_down" or r["callers"] == "all lanes":
            continue
        for kind, c in r["reads"].items():
            if not c["reads"]:
                continue
            if "source past lane 31" in kind:
                assert c["caller_own_value"] == c["reads"]
            elif kind.startswith("first callers, source elsewhere"):
                key = "none_of_these" if r["then"] == "exit" else "source_lane_value"
                assert c[key] == c["reads"], name                                   # exit: none of the warp's values
            elif kind.startswith("first callers, source also"):
                assert c["source_lane_value"] == c["reads"]
