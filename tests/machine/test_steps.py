"""helpers.machine.steps: the lane debugger's step model, on small kernels written for these tests."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import machine
from helpers.machine import steps as S

pytestmark = pytest.mark.needs_nvrtc

# line 2: the kernel; every line below is referred to by number
DIVERGE = r'''
extern "C" __global__ void k(const int* in, int* out) {
    int t = threadIdx.x, lane = t % 32;
    if (lane >= 20) return;
    int v = in[t];
    if (lane < 8) { v += in[t + 1]; } else { v *= 2; }
    v += __shfl_down_sync(0xFFFFF, v, 4);
    __shared__ int s[64];
    s[2 * t % 64] = v;
    __syncthreads();
    out[t] = s[(t + 1) % 64];
}
'''

BLOCK = r'''
extern "C" __global__ void block_sum(const float* in, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    if (t < 32) s[t] += s[t + 32];
    out[t] = s[t];
}
'''

BARRIER = r'''
extern "C" __global__ void wait(int* out, int n) {
    int t = threadIdx.x;
    int v = t;
    if (t >= 32) { for (int i = 0; i < n; ++i) v = v * 3 + 1; }
    __syncthreads();
    out[t] = v;
}
'''

SPLIT_BARRIER = r'''
extern "C" __global__ void split(int* out) {
    int t = threadIdx.x;
    if (t % 2) { out[t] = 1; __syncthreads(); }
    else { out[t] = 2; __syncthreads(); }
}
'''


def _steps(src: str, name: str, grid, block, args, **kw) -> S.Steps:
    k = machine.RawModule(code=src).get_function(name)
    return S.record(k, grid, block, args, **kw)


def _find(ws: S.WarpSteps, kind: str) -> S.Step:
    return next(ws[i] for i in range(len(ws)) if ws[i].kind == kind)


@pytest.fixture(scope="module")
def diverge() -> S.Steps:
    return _steps(DIVERGE, "k", (1, 1, 1), (64, 1, 1), (np.arange(65, dtype=np.int32), np.zeros(64, np.int32)))


def test_lanes_are_active_elsewhere_or_exited_never_both(diverge: S.Steps) -> None:
    ws = diverge.warp(0, 0)
    assert len(ws) > 10 and ws[0].active == S.FULL
    lines = {ws[i].line for i in range(len(ws))}
    assert {3, 4, 5, 6, 7, 9, 10, 11} <= lines
    for i in range(len(ws)):
        s = ws[i]
        assert (s.active | s.elsewhere | s.exited | s.absent) == S.FULL
        assert not (s.active & s.elsewhere) and not (s.elsewhere & s.exited) and not (s.active & s.exited)
    v_plus = next(ws[i] for i in range(len(ws)) if ws[i].line == 6 and ws[i].kind == "global load")
    assert v_plus.active == 0xFF and v_plus.elsewhere == 0xFFFFFFFF & ~0xFF   # lanes 8..31 alive elsewhere
    last = ws[len(ws) - 1]
    assert last.kind == "exit"
    after = [ws[i] for i in range(len(ws)) if ws[i].step > next(ws[j].step for j in range(len(ws))
                                                              if ws[j].kind == "exit")]
    assert after and all(s.exited == 0xFFF00000 and s.elsewhere == 0 for s in after)   # exited, not diverged


def test_shuffle_sources_and_undefined_reads(diverge: S.Steps) -> None:
    x = _find(diverge.warp(0, 0), "shuffle").exchange
    assert x.op == "shfl" and x.callers == 0xFFFFF and x.member == 0xFFFFF
    assert x.src_lane[:16] == tuple(range(4, 20))
    # lanes 16..19 read lanes 20..23, which do not call: undefined, flagged
    assert x.src_lane[16:20] == (20, 21, 22, 23) and x.undefined == 0xF0000
    assert x.src_lane[20:] == (-1,) * 12


def test_addresses_banks_and_sectors_as_the_counters_count_them(diverge: S.Steps) -> None:
    ws = diverge.warp(0, 0)
    st = _find(ws, "shared store").access
    assert st.store and st.space == "shared" and st.size == 4
    assert st.address[:20] == tuple(8 * t % 256 for t in range(20)) and st.address[20:] == (-1,) * 12
    assert st.bank[:20] == tuple(2 * t % 32 for t in range(20))
    assert st.wavefronts == 2                      # stride 2: two lanes per bank
    ld = _find(ws, "global load").access
    assert ld.element[:20] == tuple(range(20)) and ld.arg[0] == 0 and ld.sectors == 3
    total_waves = total_sectors = 0
    for b, w in diverge.warps():
        ws = diverge.warp(b, w)
        for i in range(len(ws)):
            a = ws[i].access
            if a is not None:
                total_waves += a.wavefronts or 0
                total_sectors += a.sectors or 0
    t = diverge.report.counters.totals
    assert (total_waves, total_sectors) == (t["shared_wavefronts"], t["global_sectors"])


def test_a_race_is_placed_at_both_accesses(diverge: S.Steps) -> None:
    race = next(f for f in diverge.findings if f.kind == "race")
    assert race.at is not None and race.other is not None
    later, earlier = diverge.warp(*race.at[:2])[race.at[2]], diverge.warp(*race.other[:2])[race.other[2]]
    assert later.line == earlier.line == 9 and later.kind == earlier.kind == "shared store"
    assert race.at[:2] != race.other[:2] and earlier.step <= later.step
    assert diverge.findings.index(race) in later.findings


def test_a_missing_barrier_race_links_the_store_and_the_load() -> None:
    st = _steps(BLOCK, "block_sum", (1, 1, 1), (64, 1, 1), (np.ones(64, np.float32), np.zeros(64, np.float32)))
    race = next(f for f in st.findings if f.kind == "race")
    lines = {st.warp(*race.at[:2])[race.at[2]].line, st.warp(*race.other[:2])[race.other[2]].line}
    assert lines == {5, 6}
    kinds = {st.warp(*race.at[:2])[race.at[2]].kind, st.warp(*race.other[:2])[race.other[2]].kind}
    assert kinds == {"shared store", "shared load"}


def test_barrier_arrivals(diverge: S.Steps) -> None:
    # the machine runs the lowest PC first: lanes 20..31 of both warps, at their `return` (a higher
    # PC), are still running when lanes 0..19 reach __syncthreads(); their exit then releases it
    ws = diverge.warp(0, 0)
    bar = _find(ws, "barrier")
    assert bar.barrier.arrived == (0xFFFFF, 0xFFFFF) and bar.barrier.running == (0xFFF00000, 0xFFF00000)
    assert bar.barrier.exited == (0, 0)
    assert ws.next_index(0, ("barrier",)) == bar.index and ws.next_index(bar.index, ("barrier",)) is None
    after = diverge.barrier_at(0, ws[len(ws) - 1].step)
    assert after.exited == (S.FULL, S.FULL) and after.running == (0, 0)


def test_divergent_barrier_is_a_finding_at_its_step() -> None:
    st = _steps(SPLIT_BARRIER, "split", (1, 1, 1), (32, 1, 1), (np.zeros(32, np.int32),))
    f = next(f for f in st.findings if f.kind == "divergent_barrier")
    step = st.warp(*f.at[:2])[f.at[2]]
    assert step.kind == "barrier" and step.line in (4, 5)
    assert st.warp(0, 0).next_index(-1, findings=True) == min(f.at[2], f.other[2])


def test_partial_warp_lanes_are_absent_not_exited() -> None:
    st = _steps(BARRIER, "wait", (1, 1, 1), (40, 1, 1), (np.zeros(40, np.int32), np.int32(3)))
    s = st.warp(0, 1)[0]
    assert s.absent == S.FULL & ~0xFF and s.active == 0xFF and s.exited == 0 and s.elsewhere == 0


def test_many_blocks_keep_the_chosen_ones_and_say_so() -> None:
    st = _steps(BARRIER, "wait", (20, 1, 1), (64, 1, 1), (np.zeros(64, np.int32), np.int32(3)))
    assert st.blocks == (0, 1, 2, 3, 16, 17, 18, 19) and "20 blocks" in st.note
    assert {b for b, _ in st.warps()} == set(st.blocks)
    st = _steps(BARRIER, "wait", (20, 1, 1), (64, 1, 1), (np.zeros(64, np.int32), np.int32(3)), blocks=[7])
    assert st.warps() == [(7, 0), (7, 1)]
    with pytest.raises(ValueError, match="blocks must be"):
        _steps(BARRIER, "wait", (20, 1, 1), (64, 1, 1), (np.zeros(64, np.int32), np.int32(3)), blocks=[20])
    with pytest.raises(ValueError, match=r"traced warps"):
        st.warp(0, 0)


def test_a_launch_too_large_to_trace_is_refused_with_what_to_shrink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "MAX_TRACE_BYTES", 1 << 10)
    monkeypatch.setattr(S, "SMALL_THREADS", 32)
    with pytest.raises(S.TooLarge, match="smaller grid or block"):
        _steps(BARRIER, "wait", (4, 1, 1), (64, 1, 1), (np.zeros(256, np.int32), np.int32(3)))


def test_the_callers_arrays_are_left_alone() -> None:
    out = np.zeros(64, np.int32)
    _steps(BARRIER, "wait", (1, 1, 1), (64, 1, 1), (out, np.int32(3)))
    assert not out.any()
