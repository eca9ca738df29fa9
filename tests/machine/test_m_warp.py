"""The SIMT machine: warp-synchronous instructions (PTX ISA shfl.sync, bar.warp.sync,
vote.sync, match.sync, activemask, redux.sync), checked against the
lane-exact emulator, and the matching rules of independent thread scheduling."""
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import machine
from helpers.engine import emulator
from helpers.engine import intrinsics as table
from helpers.recording import record_diverged as D
from helpers.topics import warp_reduce

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

MODES = ("idx", "up", "down", "xor")
ROOT = Path(__file__).resolve().parents[2]

SYNC_SRC = r"""
extern "C" __global__ void active_split(unsigned* out) {
    const int lane = threadIdx.x % 32;
    if (lane < 12) out[threadIdx.x] = __activemask();
    else out[threadIdx.x] = __activemask() ^ 0xA5A5A5A5u;
}

// __syncwarp() on each side of a branch: the two calls match (sm_70+), and order the exchange.
extern "C" __global__ void syncwarp_both_sides(int* out) {
    __shared__ int s[32];
    const int lane = threadIdx.x;
    int x;
    if (lane < 16) {
        s[lane] = lane * 3;
        __syncwarp();
        x = s[lane + 16] + 1000;
    } else {
        s[lane] = lane * 7;
        __syncwarp();
        x = s[lane - 16] - 1000;
    }
    out[lane] = x;
}

// Without the __syncwarp() the exchange races.
extern "C" __global__ void no_syncwarp(int* out) {
    __shared__ int s[32];
    const int lane = threadIdx.x;
    s[lane] = lane;
    out[lane] = s[31 - lane];
}

// Half the warp at a shuffle, the other half at __syncwarp(): non-matching, undefined.
extern "C" __global__ void mismatch(const int* v, int* out) {
    const int lane = threadIdx.x;
    int x = v[lane];
    if (lane < 16) x = __shfl_sync(0xffffffffu, x, 0);
    else __syncwarp();
    out[lane] = x;
}

// Half the warp at a shuffle that needs the other half, which waits at __syncthreads(): deadlock.
extern "C" __global__ void deadlock(const int* v, int* out) {
    const int lane = threadIdx.x;
    int x = v[lane];
    if (lane < 16) x = __shfl_sync(0xffffffffu, x, 0);
    __syncthreads();
    out[lane] = x;
}

// A lane that is not named in its own mask.
extern "C" __global__ void selfless(const int* v, int* out) {
    const int lane = threadIdx.x;
    if (lane < 2) out[lane] = __shfl_sync(0x1u, v[lane], 0);
}

// Lanes k.. return first; the rest shuffle with the full mask (reads from returned lanes undefined).
extern "C" __global__ void early_return(const int* v, int* out, int k) {
    const int lane = threadIdx.x;
    if (lane >= k) return;
    out[lane] = __shfl_down_sync(0xffffffffu, v[lane], 4);
}

// The sm_70 shuffle rule: __shfl_sync(FULL, v, 0) in both arms of an if, one instruction each
// (each arm stores first, so the compiler cannot merge them): the calls meet and are defined.
extern "C" __global__ void shfl_both_arms(const int* v, int* out, int* side) {
    const int lane = threadIdx.x;
    int x;
    if (lane < 16) {
        side[lane] = 1;
        x = __shfl_sync(0xffffffffu, v[lane] * 2, 0) + 1;
    } else {
        side[lane] = 2;
        x = __shfl_sync(0xffffffffu, v[lane] * 3, 0) - 1;
    }
    out[lane] = x;
}

// The same with a ballot: one vote.sync per arm.
extern "C" __global__ void ballot_both_arms(const int* v, unsigned* out, int* side) {
    const int lane = threadIdx.x;
    unsigned b;
    if (lane % 2) {
        side[lane] = 1;
        b = __ballot_sync(0xffffffffu, v[lane] > 0);
    } else {
        side[lane] = 2;
        b = __ballot_sync(0xffffffffu, v[lane] > 10) ^ 1u;
    }
    out[lane] = b;
}

// A helper inlined at two call sites, reached by different lanes: two shfl.sync, one source line.
__device__ __forceinline__ int from_lane_0(int x) { return __shfl_sync(0xffffffffu, x, 0); }
extern "C" __global__ void helper_two_sites(const int* v, int* out, int* side) {
    const int lane = threadIdx.x;
    int x;
    if (lane < 8) {
        side[lane] = 1;
        x = from_lane_0(v[lane]) + 100;
    } else {
        side[lane] = 2;
        x = from_lane_0(v[lane] + 7) - 100;
    }
    out[lane] = x;
}

// Loops with per-lane trip counts, then a full-warp shuffle: the lanes meet again.
extern "C" __global__ void trip_counts(const int* v, int* out) {
    const int lane = threadIdx.x;
    int x = 0;
    for (int k = 0; k < v[lane]; ++k) x += k;
    out[lane] = __shfl_xor_sync(0xffffffffu, x, 1);
}

// match.all and vote.uni (through __all_sync / __any_sync agreement) and the bit-op reductions.
extern "C" __global__ void match_all(const int* v, int* out) {
    const int lane = threadIdx.x;
    int pred;
    unsigned m = __match_all_sync(0xffffffffu, v[lane], &pred);
    out[2 * lane] = (int)m;
    out[2 * lane + 1] = pred;
    out[64 + 3 * lane + 0] = (int)__reduce_and_sync(0xffffffffu, (unsigned)v[lane] | 16u);
    out[64 + 3 * lane + 1] = (int)__reduce_or_sync(0xffffffffu, (unsigned)v[lane]);
    out[64 + 3 * lane + 2] = (int)__reduce_xor_sync(0xffffffffu, (unsigned)v[lane]);
}
"""

EXPRS = tuple(f"shuffle_kernel<int, {m}>" for m in range(4)) + ("vote_kernel", "match_reduce_kernel<int>")


@pytest.fixture(scope="module")
def intrinsics():
    return machine.kernel_module("warp_intrinsics", EXPRS)


@pytest.fixture(scope="module")
def sync():
    return machine.RawModule(code=SYNC_SRC, options=("-std=c++17",))


def _configs():
    rng = np.random.default_rng(0)
    masks = (0xFFFFFFFF, 0x0000FFFF, 0x5555AAAA)
    actives = (np.ones(32, np.uint8), (np.arange(32) < 20).astype(np.uint8))
    for mode, width in itertools.product(range(4), (1, 2, 4, 8, 16, 32)):
        for mask, active in itertools.product(masks, actives):
            b = rng.integers(0, 40, 32).astype(np.int32)
            yield mode, width, mask, active, b


def test_shuffles_match_the_emulator_in_every_mode_width_and_mask(intrinsics):
    for mode, width, mask, active, b in _configs():
        vals = np.random.default_rng(mode * 100 + width).integers(-1000, 1000, 32).astype(np.int32)
        out = np.full(32, -7, np.int32)
        src = np.full(32, -7, np.int32)
        rep = intrinsics.get_function(EXPRS[mode])(
            (1,), (32,), (vals, b, np.array([mask], np.uint32), active, np.int32(width), np.int32(1), out, src))
        act = active.astype(bool)[None]
        ref = emulator.shuffle(MODES[mode], vals[None], b[None], width, np.array([mask], np.uint32), act)
        calling = emulator.callers(np.array([mask], np.uint32), act)[0]
        assert not rep.issues, (mode, width, hex(mask))
        d = ref.defined[0]
        np.testing.assert_array_equal(out[d], ref.values[0][d], err_msg=f"{MODES[mode]} w={width} {mask:#x}")
        # the machine marks exactly the emulator's undefined reads, among lanes that called
        np.testing.assert_array_equal(rep.undefined[6][calling], ~d[calling])
        np.testing.assert_array_equal(out[~calling], -7)  # non-callers returned before the call


def test_votes_match_the_emulator(intrinsics):
    rng = np.random.default_rng(1)
    for mask in (0xFFFFFFFF, 0x00FF00FF, 0x80000001):
        for active in (np.ones(32, np.uint8), (np.arange(32) % 3 != 0).astype(np.uint8)):
            pred = rng.integers(0, 2, 32).astype(np.int32)
            out = np.zeros(128, np.uint32)
            rep = intrinsics.get_function("vote_kernel")((1,), (32,), (pred, np.array([mask], np.uint32), active,
                                                                         np.int32(1), out))
            assert not rep.issues
            m = np.array([mask], np.uint32)
            act = active.astype(bool)[None]
            calling = emulator.callers(m, act)[0]
            o = out.reshape(32, 4)[calling]
            assert (o[:, 0] == emulator.ballot(pred.astype(bool)[None], m, act).values[0]).all()
            assert (o[:, 1] == emulator.any_sync(pred.astype(bool)[None], m, act).values[0]).all()
            assert (o[:, 2] == emulator.all_sync(pred.astype(bool)[None], m, act).values[0]).all()
            assert (o[:, 3] == emulator.pack_bits(calling[None])[0]).all()  # the lanes executing together


def test_match_any_and_integer_reductions_match_the_emulator(intrinsics):
    """Every collective row's column of match_reduce_kernel against the emulator's rule for its kind."""
    rng = np.random.default_rng(2)
    words = table.words("match_reduce_kernel")
    for mask in (0xFFFFFFFF, 0x0F0F0F0F):
        v = rng.integers(-3, 3, 32).astype(np.int32)
        active = np.ones(32, np.uint8)
        out = np.zeros(32 * words, np.int32)
        rep = intrinsics.get_function("match_reduce_kernel<int>")((1,), (32,), (v, np.array([mask], np.uint32),
                                                                                active, np.int32(1), out))
        assert not rep.issues
        m = np.array([mask], np.uint32)
        act = np.ones((1, 32), bool)
        calling = emulator.callers(m, act)[0]
        o = out.reshape(32, words)[calling]
        for row in table.rows("collective"):
            if row.kind == "match_any":
                np.testing.assert_array_equal(o[:, row.column].view(np.uint32),
                                              emulator.match_any(v[None], m, act).values[0][calling])
            else:
                np.testing.assert_array_equal(o[:, row.column],
                                              emulator.warp_reduce(row.kind, v[None], m, act).values[0][calling])


def test_match_all_and_bitwise_reductions(sync):
    for v in (np.full(32, 5, np.int32), np.arange(32, dtype=np.int32)):
        out = np.zeros(64 + 96, np.int32)
        rep = sync.get_function("match_all")((1,), (32,), (v, out))
        assert not rep.issues
        same = bool((v == v[0]).all())
        np.testing.assert_array_equal(out[0:64:2].view(np.uint32), 0xFFFFFFFF if same else 0)
        np.testing.assert_array_equal(out[1:64:2], int(same))
        r = out[64:].reshape(32, 3).view(np.uint32)
        u = v.view(np.uint32)
        assert (r[:, 0] == np.bitwise_and.reduce(u | 16)).all()
        assert (r[:, 1] == np.bitwise_or.reduce(u)).all()
        assert (r[:, 2] == np.bitwise_xor.reduce(u)).all()


def test_activemask_is_the_group_executing_together(sync):
    out = np.zeros(64, np.uint32)
    sync.get_function("active_split")((1,), (64,), (out,))
    low, high = (1 << 12) - 1, 0xFFFFFFFF ^ ((1 << 12) - 1)
    np.testing.assert_array_equal(out[:12], low)
    np.testing.assert_array_equal(out[12:32], high ^ 0xA5A5A5A5)
    np.testing.assert_array_equal(out[32:44], low)


def test_syncwarp_on_both_sides_of_a_branch_matches_and_orders(sync):
    assert sync.ptx.count("bar.warp.sync") >= 2
    out = np.zeros(32, np.int32)
    rep = sync.get_function("syncwarp_both_sides")((1,), (32,), (out,))
    assert rep.clean, rep.summary()
    lane = np.arange(32)
    exp = np.where(lane < 16, (lane + 16) * 7 + 1000, (lane - 16) * 3 - 1000)
    np.testing.assert_array_equal(out, exp)
    assert not rep.undefined[0].any()


def test_shared_exchange_without_syncwarp_is_a_race(sync):
    out = np.zeros(32, np.int32)
    rep = sync.get_function("no_syncwarp")((1,), (32,), (out,))
    races = rep.of_kind("race")
    assert races and races[0].detail["hazard"] == "RAW"
    assert len(races[0].lines) == 2 and None not in races[0].lines


def test_non_matching_warp_sync_is_undefined_shuffle(sync):
    v = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = sync.get_function("mismatch")((1,), (32,), (v, out))
    f = rep.of_kind("undefined_shuffle")
    assert f and f[0].other_line is not None
    assert "different" in f[0].message
    assert not rep.of_kind("deadlock")
    np.testing.assert_array_equal(out[16:], v[16:])  # the __syncwarp() side kept its values
    assert rep.undefined[1][:16].all()               # every result of the undefined shuffle


def _shfl_count(mod, name, op):
    return sum(1 for ins in mod.module.functions[name].instrs if ins.opcode == op)


def test_sm70_rule_shuffle_in_both_arms_is_defined(sync):
    # PTX ISA shfl.sync (sm_70+): each thread waits until all non-exited threads of membermask have
    # executed shfl.sync with the same qualifiers and mask; the same instruction only for sm_6x.
    assert _shfl_count(sync, "shfl_both_arms", "shfl") == 2
    v = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    side = np.zeros(32, np.int32)
    rep = sync.get_function("shfl_both_arms")((1,), (32,), (v, out, side))
    assert rep.clean, rep.summary()
    assert not rep.undefined[1].any()
    np.testing.assert_array_equal(out[:16], 2 * v[0] + 1)   # lane 0 sent its first arm's value
    np.testing.assert_array_equal(out[16:], 2 * v[0] - 1)


def test_sm70_rule_ballot_in_both_arms_is_defined(sync):
    assert _shfl_count(sync, "ballot_both_arms", "vote") == 2
    v = np.arange(-5, 27, dtype=np.int32)
    out = np.zeros(32, np.uint32)
    rep = sync.get_function("ballot_both_arms")((1,), (32,), (v, out, np.zeros(32, np.int32)))
    assert rep.clean, rep.summary()
    lane = np.arange(32)
    bits = np.where(lane % 2 == 1, v > 0, v > 10)          # each lane votes its own arm's predicate
    want = np.uint32(int((bits.astype(np.int64) << lane).sum()))
    np.testing.assert_array_equal(out[1::2], want)
    np.testing.assert_array_equal(out[::2], want ^ np.uint32(1))


def test_sm70_rule_helper_inlined_at_two_call_sites_is_defined(sync):
    assert _shfl_count(sync, "helper_two_sites", "shfl") == 2
    v = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = sync.get_function("helper_two_sites")((1,), (32,), (v, out, np.zeros(32, np.int32)))
    assert rep.clean, rep.summary()
    np.testing.assert_array_equal(out[:8], v[0] + 100)
    np.testing.assert_array_equal(out[8:], v[0] - 100)


def test_warp_sync_waiting_on_a_barrier_is_a_deadlock(sync):
    v = np.arange(32, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = sync.get_function("deadlock")((1,), (32,), (v, out))
    assert rep.of_kind("deadlock")
    assert rep.undefined[1].all()  # a hang returns nothing


def test_caller_outside_its_own_mask_is_undefined(sync):
    v = np.arange(32, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = sync.get_function("selfless")((1,), (32,), (v, out))
    f = rep.of_kind("undefined_shuffle")
    assert f and "does not name it" in f[0].message


def test_lanes_meet_again_after_per_lane_trip_counts(sync):
    v = np.random.default_rng(3).integers(0, 9, 32).astype(np.int32)
    out = np.zeros(32, np.int32)
    rep = sync.get_function("trip_counts")((1,), (32,), (v, out))
    assert rep.clean
    x = v * (v - 1) // 2
    np.testing.assert_array_equal(out, x[np.arange(32) ^ 1])
    assert rep.counters.divergence < 1.0  # the loop ran with fewer lanes at the end


def test_trace_gives_the_shuffle_steps_in_the_project_format():
    mod = machine.kernel_module("warp_reduce_sum", ("warp_reduce_sum_kernel<int>",))
    v = np.arange(64, dtype=np.int32)
    out = np.zeros(2, np.int32)
    rep = mod.get_function("warp_reduce_sum_kernel<int>")((1,), (64,), (v, out), trace=True)
    tr = rep.trace.shuffles(np.int32)
    assert tr.held.shape == (6, 2, 32)
    np.testing.assert_array_equal(tr.src_lane[1, 0, :16], np.arange(16, 32))  # offset 16
    np.testing.assert_array_equal(tr.src_lane[1, 0, 16:], np.arange(16, 32))  # kept their own
    np.testing.assert_array_equal(out, v.reshape(2, 32).sum(1))
    ev = rep.trace.events
    assert ev.size and (ev["active"] != 0).all()


def test_instrumented_kernel_fills_its_trace_sink_like_the_gpu():
    mod = machine.kernel_module("warp_reduce_sum", ("warp_reduce_sum_kernel<float>",), ("WARPLAB_TRACE",))
    x = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    out = np.zeros(2, np.float32)
    held, received = np.full((6, 64), np.nan), np.full((6, 64), np.nan)
    src = np.full((6, 64), -1, np.int32)
    rep = mod.get_function("warp_reduce_sum_kernel<float>")(
        (1,), (64,), (x, out), globals={"warplab_trace_sink": (held, received, src, np.int64(64), np.int32(6))})
    assert rep.clean
    ref = warp_reduce.warp_reduce_sum_trace(x.reshape(2, 32), backend="emulator")
    np.testing.assert_array_equal(held.reshape(6, 2, 32), ref.held.astype(np.float64))
    np.testing.assert_array_equal(src.reshape(6, 2, 32), ref.src_lane)
    assert not rep.undefined_globals["warplab_trace_sink"][0].any()


UBRANCH_SRC = r"""
extern "C" __global__ void ubranch(const int* v, int* out) {
    const int lane = threadIdx.x;
    const int x = v[lane];
    int y = 7 * lane;
    int u = 0;
    if (lane < 16) u = __shfl_sync(0x0000ffffu, x, 20);   // lane 20 is outside the mask: undefined
    if (u > 0) { y += x; out[64 + lane] = 1; }
    out[lane] = x;
    out[32 + lane] = y;
}
"""


def test_a_branch_on_an_undefined_value_taints_only_what_it_controls():
    mod = machine.RawModule(code=UBRANCH_SRC)
    v = np.arange(1, 33, dtype=np.int32)
    out = np.full(96, -5, np.int32)
    rep = mod.get_function("ubranch")((1,), (32,), (v, out))
    u = rep.undefined[1]
    np.testing.assert_array_equal(out[:32], v)          # after the join: defined again
    assert not u[:32].any()
    assert u[32:48].all() and not u[48:64].any()         # y: written under the undefined condition
    assert u[64:80].all() and not u[80:].any()           # whether out[64 + lane] was written is undefined
    assert rep.undefined_control and rep.undefined_control[0][3] == 16


def _diverged_run(part_name: str, n_warps: int = 2):
    p = D.part(part_name)
    mod = machine.kernel_module(D.KERNEL, D.NAME_EXPRESSIONS)
    expr = f"diverged_kernel<{D.OPS[p.op]}, {'true' if p.then == 'later' else 'false'}>"
    got = np.full(n_warps * 32, -1, np.int32)
    rep = mod.get_function(expr)((n_warps,), (32,), (
        D.inputs(n_warps).ravel(), np.full(n_warps, p.caller_mask, np.uint32), np.int32(p.delta), np.int64(20),
        got, np.zeros(n_warps * 32, np.uint32), np.zeros(n_warps * 96, np.int64)))
    return p, rep, got


@pytest.mark.parametrize("name", [p.name for p in D.PARTS])
def test_full_mask_call_with_lanes_elsewhere(name):
    # PTX ISA shfl.sync / vote.sync (sm_70+): the caller waits until every non-exited lane of the mask has
    # executed the instruction with the same qualifiers and mask. Lanes that then call from another line
    # ("later") meet it: the call is defined (the sm_70 shuffle rule), and the machine computes what the
    # H200 returned (data/diverged_reads.json, checked below). Lanes that exit without calling after an
    # observable effect ("exit") leave it undefined: every result of it undefined, no deadlock.
    p, rep, got = _diverged_run(name)
    called = np.tile(((np.uint64(p.caller_mask) >> np.arange(32, dtype=np.uint64)) & 1).astype(bool), 2)
    assert not rep.of_kind("deadlock")
    if p.callers == "all lanes" or p.then == "later":   # the controls and the later calls: defined
        assert rep.clean, rep.summary()
        assert not rep.undefined[4].any()
        warp_0 = json.loads((ROOT / "data" / "diverged_reads.json").read_text())["parts"][name]["warp_0"]
        assert (D.inputs(1).ravel() == warp_0["values"]).all()
        np.testing.assert_array_equal(got[:32], warp_0["got"])   # what the H200 returned in its warp 0
        return
    f = rep.of_kind("undefined_shuffle")
    assert f, rep.summary()
    assert "did not join it" in f[0].message
    assert rep.undefined[4][called].all()          # every result of the call: undefined, never a number
    assert (got[~called] == -1).all() and not rep.undefined[4][~called].any()   # lanes that never called


def test_lanes_that_return_before_a_full_mask_call_count_as_exited(sync):
    # `if (lane >= k) return;` then a full-mask shuffle: the returned lanes have exited (no code can tell
    # otherwise), so the call is defined; only reads from them are undefined.
    v = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = sync.get_function("early_return")((1,), (32,), (v, out, np.int32(20)))
    assert not rep.of_kind("undefined_shuffle"), rep.summary()
    np.testing.assert_array_equal(out[:16], v[4:20])
    assert rep.undefined[1][16:20].all() and not rep.undefined[1][:16].any()
