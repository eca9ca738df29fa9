"""The emulator against the Programming Guide and the facts measured on the H200."""
from __future__ import annotations

import time

import numpy as np
import pytest

from helpers.engine import emulator
from helpers.engine import warp

LANE = np.arange(32, dtype=np.int32)
EMU = "emulator"


@pytest.mark.parametrize("delta,width,keep", [
    (2, 32, [30, 31]),
    (2, 16, [14, 15, 30, 31]),
    (5, 8, [l for l in range(32) if l % 8 >= 3]),
])
def test_shfl_down_keeps_own_value_past_the_segment(delta: int, width: int, keep: list[int]) -> None:
    r = warp.shfl_down(LANE, delta, width, backend=EMU)
    assert np.flatnonzero(r.kept_own).tolist() == keep
    assert r.values[keep].tolist() == keep          # their own values: not 0, not wrapped
    others = np.setdiff1d(LANE, keep)
    assert (r.values[others] == others + delta).all()
    assert r.defined.all()


def test_shfl_up_lowest_lanes_keep_theirs() -> None:
    r = warp.shfl_up(LANE, 3, 8, backend=EMU)
    low = LANE % 8 < 3
    assert (r.values[low] == LANE[low]).all() and (r.values[~low] == LANE[~low] - 3).all()


def test_shfl_xor_reads_earlier_segments_but_not_later_ones() -> None:
    r = warp.shfl_xor(LANE, 16, 16, backend=EMU)
    assert (r.values[:16] == LANE[:16]).all()        # partner in a later segment: own value
    assert (r.values[16:] == LANE[:16]).all()        # partner in an earlier segment: read


def test_shfl_idx_wraps_modulo_width() -> None:
    r = warp.shfl_idx(LANE, 11, 8, backend=EMU)
    assert (r.values == (LANE // 8) * 8 + 3).all()
    r = warp.shfl_idx(LANE, -1, 32, backend=EMU)
    assert (r.values == 31).all()


def test_width_one() -> None:
    for fn in (warp.shfl_down, warp.shfl_up):
        assert (fn(LANE, 1, 1, backend=EMU).values == LANE).all()
    # xor still reaches *earlier* one-lane segments: odd lanes read their even neighbour
    r = warp.shfl_xor(LANE, 1, 1, backend=EMU)
    assert (r.values == np.where(LANE % 2, LANE - 1, LANE)).all()


def test_reading_an_inactive_or_unmasked_lane_is_undefined() -> None:
    n = 20
    mask = warp.ballot(LANE < n, backend=EMU).value
    assert mask == 0x000FFFFF
    # the seed's partial warp: lanes >= n skip the branch (alive elsewhere), outside the mask
    r = warp.shfl_down(LANE, 16, mask=mask, active=LANE < n, backend=EMU)
    assert r.call_defined
    assert np.flatnonzero(r.defined).tolist() == [0, 1, 2, 3, 16, 17, 18, 19]
    assert (r.values[~r.defined] == 0).all()
    assert (r.src_lane[n:] == -1).all()              # lanes that do not call have no source
    assert r.src_lane[4] == 20                       # the read is from lane 20, which is outside mask
    assert (r.state[n:] == emulator.ELSEWHERE).all() and (r.state[:n] == emulator.CALLING).all()


def test_calling_lane_outside_mask_gets_an_undefined_result() -> None:
    r = warp.shfl_down(LANE, 1, mask=0xFFFF0000, backend=EMU)
    assert not r.defined[:16].any() and (r.src_lane[:16] == LANE[:16] + 1).all()
    assert r.defined[16:].all()


def test_exited_source_lane_is_undefined_even_with_full_mask() -> None:
    exited = LANE == 5
    r = warp.shfl_down(LANE, 1, exited=exited, backend=EMU)
    assert r.call_defined                            # naming an exited lane in the mask is allowed
    assert not r.defined[4] and not r.defined[5] and r.defined[6]
    assert r.src_lane[5] == -1 and r.state[5] == emulator.EXITED


@pytest.mark.parametrize("op", ["shfl_down", "shfl_up", "shfl_xor", "shfl_idx"])
def test_full_mask_with_a_diverged_lane_is_undefined_for_every_lane(op: str) -> None:
    """Programming Guide: every non-exited lane named in mask must execute the same intrinsic."""
    elsewhere = LANE % 2 == 1
    r = getattr(warp, op)(LANE, 2, active=~elsewhere, backend=EMU)
    assert not r.call_defined and not r.defined.any() and (r.values == 0).all()
    # the same lanes *exited* instead: the call is defined, only reads of them are not
    r = getattr(warp, op)(LANE, 2, exited=elsewhere, backend=EMU)
    assert r.call_defined and r.defined[~elsewhere].all()    # even lanes read even lanes


def test_a_diverged_lane_outside_the_mask_is_harmless() -> None:
    calling = LANE < 16
    r = warp.shfl_xor(LANE, 1, mask=0x0000FFFF, active=calling, backend=EMU)
    assert r.call_defined and r.defined[:16].all() and (r.values[:16] == LANE[:16] ^ 1).all()
    assert (r.state[16:] == emulator.ELSEWHERE).all()


def test_votes_with_a_diverged_lane_in_the_mask_are_undefined() -> None:
    pred = np.ones(32, bool)
    even = LANE % 2 == 0
    for fn in (warp.ballot, warp.any_sync, warp.all_sync):
        r = fn(pred, active=even, backend=EMU)
        assert not r.defined and str(r) == "undefined"
        with pytest.raises(ValueError, match="undefined"):
            r.value
    assert warp.ballot(pred, exited=~even, backend=EMU).value == 0x55555555
    assert warp.ballot(pred, mask=0x55555555, active=even, backend=EMU).value == 0x55555555
    for fn in (warp.match_any, warp.reduce_add):
        assert not fn(LANE, active=even, backend=EMU).defined.any()
    assert not warp.syncwarp(active=even).any() and warp.syncwarp(exited=~even)[even].all()


def test_exited_and_calling_at_once_is_a_value_error_naming_exited() -> None:
    with pytest.raises(ValueError, match="exited must not overlap active: lane\\(s\\) 3 5"):
        warp.shfl_down(LANE, 1, active=np.ones(32, bool), exited=np.isin(LANE, [3, 5]), backend=EMU)
    with pytest.raises(ValueError, match="exited must not overlap active"):
        warp.ballot(LANE < 4, active=LANE < 8, exited=LANE == 7, backend=EMU)
    with pytest.raises(ValueError, match="exited must be a bool array of shape \\(32,\\)"):
        warp.ballot(LANE < 4, exited=np.zeros(32, int), backend=EMU)
    with pytest.raises(ValueError, match="exited must be a bool array"):
        warp.shfl_down(LANE, 1, exited=np.zeros(31, bool), backend=EMU)


def test_ballot_counts_only_active_lanes_in_mask() -> None:
    pred = np.ones(32, bool)
    assert warp.ballot(pred, mask=0x0000FFFF, backend=EMU).value == 0x0000FFFF
    assert warp.ballot(pred, exited=LANE % 2 == 1, backend=EMU).value == 0x55555555
    assert warp.activemask(LANE < 8, backend=EMU).value == 0xFF
    assert warp.any_sync(LANE == 31, mask=0xFFFF, backend=EMU).value is False
    assert warp.all_sync(LANE < 16, mask=0xFFFF, backend=EMU).value is True
    assert warp.ballot(pred, backend=EMU).hex() == "0xFFFFFFFF"


def test_ballot_many_warps_and_per_warp_masks() -> None:
    pred = np.ones((3, 32), bool)
    out = warp.ballot(pred, mask=np.array([1, 2, 0xFFFFFFFF]), backend=EMU)
    assert out.values.tolist() == [1, 2, 0xFFFFFFFF] and out.values.dtype == np.uint32 and out.defined.all()
    assert str(out) == "[0x00000001, 0x00000002, 0xFFFFFFFF]"
    with pytest.raises(ValueError, match="single warp"):
        out.value


def test_match_and_reduce() -> None:
    v = (LANE % 4).astype(np.int32)
    m = warp.match_any(v, backend=EMU)
    assert m.values[0] == 0x11111111 and m.values[3] == 0x88888888
    assert warp.reduce_add(LANE, backend=EMU).values[0] == 496
    assert warp.reduce_min(LANE + 5, mask=0xFF00, active=None, backend=EMU).values[8] == 13
    assert warp.reduce_max(LANE, exited=LANE >= 10, backend=EMU).values[0] == 9
    big = np.full(32, 2**31 - 1, np.int32)
    assert warp.reduce_add(big, backend=EMU).values[0] == np.int32(-32)  # wraps modulo 2**32


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32", "float64"])
def test_dtypes_and_many_warps(dtype: str) -> None:
    v = np.random.default_rng(0).integers(0, 100, (5, 32)).astype(dtype)
    r = warp.shfl_xor(v, 1, backend=EMU)
    assert r.values.dtype == np.dtype(dtype) and r.values.shape == (5, 32)
    assert (r.values == v[:, LANE ^ 1]).all()


@pytest.mark.parametrize("call,match", [
    (lambda: warp.shfl_down(LANE, 1, width=0), "width must be a power of two in \\[1, 32\\]"),
    (lambda: warp.shfl_down(LANE, 1, width=3), "width must be a power of two"),
    (lambda: warp.shfl_down(LANE, 1, width=48), "width must be a power of two"),
    (lambda: warp.shfl_down(LANE, 1, width=64), "width must be a power of two"),
    (lambda: warp.shfl_down(LANE, -1), "delta must be an integer in \\[0, 31\\]"),
    (lambda: warp.shfl_down(LANE, 33), "low 5 bits"),
    (lambda: warp.shfl_xor(LANE, 32), "lane_mask must be an integer in \\[0, 31\\]"),
    (lambda: warp.shfl_down(np.zeros(16, np.int32), 1), "values must have shape \\(32,\\)"),
    (lambda: warp.shfl_down(np.zeros((2, 16), np.int32), 1), "values must have shape"),
    (lambda: warp.shfl_down(np.zeros(32, np.int64), 1), "values dtype must be one of"),
    (lambda: warp.shfl_down(np.zeros(32, np.float16), 1), "values dtype must be one of"),
    (lambda: warp.shfl_down(LANE, 1, active=np.ones(32, int)), "active must be a bool array"),
    (lambda: warp.shfl_down(LANE, 1, active=np.ones(31, bool)), "active must be a bool array of shape \\(32,\\)"),
    (lambda: warp.shfl_down(LANE, 1, mask=-1), "mask must be in \\[0, 0xFFFFFFFF\\]"),
    (lambda: warp.shfl_down(LANE, 1, mask=2**32), "mask must be in"),
    (lambda: warp.shfl_down(LANE, 1, backend="gpu"), "backend must be None"),
    (lambda: warp.shfl_idx(LANE, 1.5), "src_lane must be an integer"),
    (lambda: warp.reduce_add(np.zeros(32, np.float32)), "values dtype must be one of int32, uint32"),
    (lambda: warp.ballot(np.zeros(32, np.float32)), "predicate must be bool or integer"),
])
def test_bad_parameters_name_what_is_allowed(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_lists_of_small_ints_are_accepted_as_int32() -> None:
    r = warp.shfl_down(list(range(32)), 1, backend=EMU)
    assert r.values.dtype == np.int32


def test_cupy_backend_without_gpu_explains(monkeypatch) -> None:
    from helpers.engine import backend

    if backend.detect().usable:
        pytest.skip("this machine has a GPU")
    with pytest.raises(RuntimeError, match="needs a usable CUDA GPU"):
        warp.shfl_down(LANE, 1, backend="cupy")
    monkeypatch.setenv("WARPLAB_BACKEND", "emulator")
    assert "emulator" in backend.report()
    monkeypatch.setenv("WARPLAB_BACKEND", "tpu")
    with pytest.raises(ValueError, match="WARPLAB_BACKEND must be one of"):
        backend.resolve()


def test_emulator_is_fast() -> None:
    """A sanity bound for CI (the benchmark in scripts/bench_emulator.py reports the real figure)."""
    big = np.random.default_rng(0).random((1024, 32)).astype(np.float32)
    t = time.perf_counter()
    warp.shfl_down(big, 3, backend=EMU)
    assert time.perf_counter() - t < 0.2


def test_source_lanes_match_ptx_for_all_operands() -> None:
    """Brute force against a direct transcription of the PTX shfl.sync pseudo-code, lane by lane."""
    for mode in emulator.MODES:
        for width in (1, 2, 4, 8, 16, 32):
            seg = 32 - width
            c = 0 if mode == "up" else 31
            for b in range(32):
                got = emulator.source_lanes(mode, np.full((1, 32), b), width)[0]
                for lane in range(32):
                    max_lane = (lane & seg) | (c & ~seg & 31)
                    min_lane = lane & seg
                    j, ok = {"up": (lane - b, lane - b >= max_lane), "down": (lane + b, lane + b <= max_lane),
                             "xor": (lane ^ b, (lane ^ b) <= max_lane),
                             "idx": (min_lane | (b & ~seg & 31), (min_lane | (b & ~seg & 31)) <= max_lane)}[mode]
                    assert got[lane] == (j if ok else lane), (mode, width, b, lane)
