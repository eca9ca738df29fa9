"""The SIMT machine's scheduler and the defects found at scheduling points: fair scheduling of diverged
paths and of resident blocks (Programming Guide, "Independent Thread Scheduling": starvation-free
algorithms), a real hang still ends, a warp split at __syncthreads() (PTX ISA bar/barrier .aligned),
and a shuffle width that is not a power of two (Programming Guide, "Warp Shuffle Functions").

The kernels are written for these tests. (An atomicAdd by some threads and an unordered plain load of
the same word by another, a race, is the memory model's: tests/machine/test_m_ordering.py.)"""
import numpy as np
import pytest

from helpers import machine

pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
// Lane 1 spins on a flag that lane 0 sets later in program order (the spin is the lower PC).
// Since Volta this ends: Programming Guide, Independent Thread Scheduling (starvation-free algorithms).
extern "C" __global__ void flag_set_later(int* flag, int* out) {
    const int lane = threadIdx.x;
    if (lane == 1) {
        while (atomicAdd(flag, 0) == 0) { }
        out[1] = 11;
    } else if (lane == 0) {
        out[0] = 10;
        atomicExch(flag, 1);
    }
}

// Each block's thread 0 takes one lock in turn (atomicCAS, fences, atomicExch) and appends its block
// number under it: the blocks spinning for it must let the block that holds it run.
extern "C" __global__ void lock_blocks(int* lock, int* counter, int* order) {
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0, 1) != 0) { }
        __threadfence();
        const int c = atomicAdd(counter, 1);
        order[c] = blockIdx.x;
        __threadfence();
        atomicExch(lock, 0);
    }
}

// Every lane of a warp takes the lock in turn: the lane that holds it is not the spinning path.
extern "C" __global__ void lock_lanes(int* lock, int* counter, int* order) {
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            __threadfence();
            const int c = atomicAdd(counter, 1);
            order[c] = threadIdx.x;
            __threadfence();
            atomicExch(lock, 0);
            done = true;
        }
    }
}

// A real hang: lane 1 spins on a flag nobody sets.
extern "C" __global__ void flag_never_set(int* flag, int* out) {
    if (threadIdx.x == 1) {
        while (atomicAdd(flag, 0) == 0) { }   // never set
        out[1] = 1;
    }
}

// A real hang across blocks: each block waits for the other's flag before setting its own.
extern "C" __global__ void blocks_wait_for_each_other(int* flags) {
    if (threadIdx.x == 0) {
        while (atomicAdd(&flags[1 - blockIdx.x], 0) == 0) { }
        atomicExch(&flags[blockIdx.x], 1);
    }
}

// A 128-thread block with __syncthreads() under t < 48: warp 1 is split at the barrier.
extern "C" __global__ void split_warp_barrier(const int* v, int* out) {
    __shared__ int s[128];
    const int t = threadIdx.x;
    s[t] = v[t];
    if (t < 48) __syncthreads();
    out[t] = s[127 - t];
}

// The threads past 48 return before the barrier and do nothing else: they have exited.
extern "C" __global__ void return_before_barrier(const int* v, int* out) {
    __shared__ int s[48];
    const int t = threadIdx.x;
    if (t >= 48) return;
    s[t] = v[t];
    __syncthreads();
    out[t] = s[47 - t];
}

// __shfl_down_sync with a width the caller passes.
extern "C" __global__ void shfl_width(const int* v, int* out, int width) {
    const int lane = threadIdx.x;
    out[lane] = __shfl_down_sync(0xffffffffu, v[lane], 1, width);
}

// __shfl_xor_sync with a width that is not a power of two on one side of a branch only.
extern "C" __global__ void shfl_width_some(const int* v, int* out) {
    const int lane = threadIdx.x;
    int x = v[lane];
    if (lane < 16) x = __shfl_xor_sync(0x0000ffffu, x, 1, 6);
    else x = __shfl_xor_sync(0xffff0000u, x, 1, 8);
    out[lane] = x;
}
"""


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17", "-lineinfo"))


def _line(needle: str) -> int:
    return next(i for i, s in enumerate(SRC.splitlines(), 1) if needle in s)


# -- fair scheduling ------------------------------------------------------------------------------

@pytest.mark.parametrize("block", [2, 32, 64])
def test_lane_spinning_on_a_flag_set_later_in_program_order_finishes(mod, block):
    flag, out = np.zeros(1, np.int32), np.zeros(2, np.int32)
    rep = mod.get_function("flag_set_later")((1,), (block,), (flag, out), max_steps=50_000)
    assert not rep.of_kind("deadlock"), rep.summary()
    assert out.tolist() == [10, 11] and flag[0] == 1


@pytest.mark.parametrize("grid, block", [(1, 32), (2, 1), (4, 32), (16, 64)])
def test_blocks_take_a_lock_in_turn(mod, grid, block):
    lock, counter, order = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(grid, -1, np.int32)
    rep = mod.get_function("lock_blocks")((grid,), (block,), (lock, counter, order), max_steps=200_000)
    assert rep.clean, rep.summary()     # no deadlock, and the fenced lock orders what it guards
    assert counter[0] == grid and lock[0] == 0
    assert sorted(order.tolist()) == list(range(grid))


@pytest.mark.parametrize("block", [2, 32, 96])
def test_lanes_of_a_warp_take_a_lock_in_turn(mod, block):
    lock, counter, order = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(block, -1, np.int32)
    rep = mod.get_function("lock_lanes")((1,), (block,), (lock, counter, order), max_steps=200_000)
    assert not rep.of_kind("deadlock"), rep.summary()
    assert counter[0] == block and lock[0] == 0
    assert sorted(order.tolist()) == list(range(block))


def test_a_real_hang_still_ends_never_finished(mod):
    flag, out = np.zeros(1, np.int32), np.zeros(2, np.int32)
    with pytest.raises(machine.StepLimit) as e:
        mod.get_function("flag_never_set")((1,), (32,), (flag, out), max_steps=20_000)
    assert e.value.loc is not None and e.value.loc.line == _line("// never set")


def test_blocks_that_wait_for_each_other_still_end_never_finished(mod):
    flags = np.zeros(2, np.int32)
    with pytest.raises(machine.StepLimit) as e:
        mod.get_function("blocks_wait_for_each_other")((2,), (32,), (flags,), max_steps=20_000)
    assert e.value.loc is not None and e.value.loc.line == _line("while (atomicAdd(&flags[1 - blockIdx.x]")


def test_a_barrier_deadlock_is_still_a_deadlock():
    m = machine.RawModule(code=r"""
    extern "C" __global__ void k(const int* v, int* out) {
        int x = v[threadIdx.x];
        if (threadIdx.x < 16) x = __shfl_sync(0xffffffffu, x, 0);
        __syncthreads();
        out[threadIdx.x] = x;
    }""")
    rep = m.get_function("k")((1,), (32,), (np.arange(32, dtype=np.int32), np.zeros(32, np.int32)))
    assert rep.of_kind("deadlock")


# -- a warp split at __syncthreads() ----------------------------------------------------------------

def test_warp_split_at_syncthreads_is_a_divergent_barrier(mod):
    v = np.arange(128, dtype=np.int32)
    out = np.zeros(128, np.int32)
    rep = mod.get_function("split_warp_barrier")((1,), (128,), (v, out))
    f = rep.of_kind("divergent_barrier")
    assert f, rep.summary()
    assert f[0].line == _line("if (t < 48) __syncthreads();")
    assert "Divergent thread(s) in warp" in f[0].message
    assert f[0].threads[0][1][0] // 32 == 1 == f[0].threads[1][1][0] // 32   # both threads in warp 1


def test_threads_that_return_before_the_barrier_have_exited(mod):
    v = np.arange(128, dtype=np.int32)
    out = np.zeros(128, np.int32)
    rep = mod.get_function("return_before_barrier")((1,), (128,), (v, out))
    assert rep.clean, rep.summary()
    np.testing.assert_array_equal(out[:48], v[:48][::-1])


# -- a shuffle width that is not a power of two -------------------------------------------------------

@pytest.mark.parametrize("width", [3, 6, 12, 20, 31, 64, 0])
def test_shuffle_width_not_a_power_of_two_is_undefined(mod, width):
    v = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = mod.get_function("shfl_width")((1,), (32,), (v, out, np.int32(width)))
    f = rep.of_kind("undefined_shuffle")
    assert f, rep.summary()
    assert "undefined" in f[0].message and "power of 2" in f[0].message and "Warp Shuffle Functions" in f[0].message
    assert f[0].line == _line("out[lane] = __shfl_down_sync(0xffffffffu, v[lane], 1, width);")
    assert rep.undefined[1].all()                    # every result of the call: undefined, never a number


@pytest.mark.parametrize("width", [1, 2, 4, 8, 16, 32])
def test_shuffle_width_a_power_of_two_is_defined(mod, width):
    v = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = mod.get_function("shfl_width")((1,), (32,), (v, out, np.int32(width)))
    assert rep.clean, rep.summary()
    lane = np.arange(32)
    src = np.where((lane % width) + 1 < width, lane + 1, lane)
    np.testing.assert_array_equal(out, v[src])
    assert not rep.undefined[1].any()


def test_shuffle_width_undefined_only_for_its_callers(mod):
    v = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = mod.get_function("shfl_width_some")((1,), (32,), (v, out))
    f = rep.of_kind("undefined_shuffle")
    assert f and f[0].line == _line("x = __shfl_xor_sync(0x0000ffffu, x, 1, 6);")
    assert rep.undefined[1][:16].all() and not rep.undefined[1][16:].any()
    np.testing.assert_array_equal(out[16:], v[16:][np.arange(16) ^ 1])
