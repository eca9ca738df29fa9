"""The SIMT machine: CTA barriers (PTX ISA bar/barrier, exit), atomics in their
documented order (PTX ISA atom, red), fences with atomics across blocks."""
import numpy as np
import pytest

from helpers import machine

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
extern "C" __global__ void ordered(int* out) {
    __shared__ int s[128];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[127 - threadIdx.x];
}

extern "C" __global__ void unordered(int* out) {
    __shared__ int s[128];
    s[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = s[127 - threadIdx.x];
}

// The lanes of one warp at two different __syncthreads(): undefined for an aligned barrier.
extern "C" __global__ void divergent(int* out) {
    if (threadIdx.x % 32 < 16) { out[threadIdx.x] = 1; __syncthreads(); }
    else { out[threadIdx.x] = 2; __syncthreads(); }
}

// Threads that return before a barrier do not hold it up (exited threads are not waited for).
extern "C" __global__ void early_exit(const int* in, int* out, int n) {
    __shared__ int s[64];
    if (threadIdx.x >= n) return;
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % n];
}

// __syncthreads_count / _and / _or (bar.red).
extern "C" __global__ void reductions(const int* p, int* out) {
    int v = p[threadIdx.x];
    out[0] = __syncthreads_count(v);
    int a = __syncthreads_and(v);
    int o = __syncthreads_or(v);
    if (threadIdx.x == 0) { out[1] = a; out[2] = o; }
}

// A named barrier with a thread count: warps 0 and 1 sync on barrier 1, 64 threads.
extern "C" __global__ void named(int* out) {
    __shared__ int s[64];
    if (threadIdx.x < 64) {
        s[threadIdx.x] = threadIdx.x * 2;
        asm volatile("bar.sync 1, 64;");
        out[threadIdx.x] = s[63 - threadIdx.x];
    } else {
        out[threadIdx.x] = -1;
    }
}

extern "C" __global__ void tickets(unsigned* counter, unsigned* ticket) {
    ticket[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(counter, 1u);
}

extern "C" __global__ void float_add(const float* x, float* sum) {
    atomicAdd(sum, x[blockIdx.x * blockDim.x + threadIdx.x]);
}

extern "C" __global__ void others(int* v, const int* x) {
    int i = threadIdx.x;
    atomicMax(&v[0], x[i]);
    atomicMin(&v[1], x[i]);
    atomicExch(&v[2], x[i]);
    atomicCAS(&v[3], i, x[i]);
    atomicInc((unsigned*)&v[4], 5u);
    atomicOr(&v[5], 1 << (i % 31));
    __shared__ int s;
    if (i == 0) s = 0;
    __syncthreads();
    atomicAdd(&s, x[i]);
    __syncthreads();
    if (i == 0) v[6] = s;
}

// Block 0 alone runs three barriers in a row while the other blocks wait at the join after them
// (prog_00338 of the proof): each instruction between the barriers executes once per thread.
extern "C" __global__ void barriers_then_join(const int* in, int* out) {
    __shared__ int s[1];
    int c = in[threadIdx.x];
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) s[0] = 1;
        __syncthreads();
        if (threadIdx.x % 3 == 1) atomicXor(&s[0], 6 << (threadIdx.x % 5));
        __syncthreads();
        c ^= s[0];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_up_sync(0xffffffffu, c, 1) + c;
}

// Two warps: each thread stores 0 over shared memory nobody wrote, then reads the other warp's word
// with no barrier. The racing load may see the bytes from before the store (prog_00738).
extern "C" __global__ void race_over_uninitialized(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = 0;
    out[threadIdx.x] = s[threadIdx.x ^ 32];
}

// Two blocks write the same element without any ordering: a race across blocks.
extern "C" __global__ void cross_block(int* out) {
    if (threadIdx.x == 0) out[0] = blockIdx.x;
}
"""


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17",))


def test_barrier_orders_shared_memory(mod):
    out = np.zeros(128, np.int32)
    rep = mod.get_function("ordered")((1,), (128,), (out,))
    assert rep.clean
    np.testing.assert_array_equal(out, np.arange(127, -1, -1))
    assert rep.counters.totals["barriers"] == 4  # one per warp


def test_missing_barrier_is_a_race_with_both_lines(mod):
    out = np.zeros(128, np.int32)
    rep = mod.get_function("unordered")((1,), (128,), (out,))
    r = rep.of_kind("race")
    assert r and r[0].detail["hazard"] == "RAW" and r[0].other_line < r[0].line
    # the reads that saw another warp's racing write are undefined; reads within a warp too
    assert rep.undefined[0].any()


def test_divergent_barrier(mod):
    out = np.zeros(64, np.int32)
    rep = mod.get_function("divergent")((1,), (64,), (out,))
    f = rep.of_kind("divergent_barrier")
    assert f and f[0].other_line != f[0].line


def test_barriers_in_a_row_run_each_instruction_once(mod):
    # PTX ISA bar/barrier: a barrier suspends the thread until the CTA arrives, then it
    # continues with the next instruction; it never repeats the ones before it.
    x = np.arange(32, dtype=np.int32) * 100
    out = np.zeros(96, np.int32)
    rep = mod.get_function("barriers_then_join")((3,), (32,), (x, out))
    assert rep.clean, rep.summary()
    s0 = 1
    for t in range(32):
        if t % 3 == 1:
            s0 ^= 6 << (t % 5)
    c = x.copy()
    c0 = c ^ s0
    for b, cb in enumerate((c0, c, c)):
        up = np.concatenate([cb[:1], cb[:-1]])   # shfl.up by 1: lane 0 keeps its own value
        np.testing.assert_array_equal(out[32 * b:32 * (b + 1)], up + cb)


def test_racing_store_over_uninitialized_memory_leaves_the_load_undefined(mod):
    # PTX ISA 8 "Memory Consistency Model": nothing orders the store before the other warp's load,
    # which may read the word before it was written, i.e. uninitialised shared memory (PTX ISA 8.2.6 "Initialization").
    # That the store writes the value the machine happens to hold there (0) changes nothing.
    out = np.zeros(64, np.int32)
    rep = mod.get_function("race_over_uninitialized")((1,), (64,), (out,))
    assert rep.of_kind("race")
    assert rep.undefined[0].all()


def test_exited_threads_do_not_hold_up_a_barrier(mod):
    x = np.arange(64, dtype=np.int32) * 10
    out = np.zeros(64, np.int32)
    rep = mod.get_function("early_exit")((1,), (64,), (x, out, np.int32(40)))
    assert rep.clean, rep.summary()  # an exited lane is not a diverged lane
    np.testing.assert_array_equal(out[:40], x[(np.arange(40) + 1) % 40])


def test_barrier_reductions(mod):
    p = (np.arange(96) % 3 == 0).astype(np.int32)
    out = np.zeros(3, np.int32)
    rep = mod.get_function("reductions")((1,), (96,), (p, out))
    assert not rep.of_kind("deadlock")
    np.testing.assert_array_equal(out, [32, 0, 1])


def test_named_barrier_with_a_thread_count(mod):
    out = np.zeros(96, np.int32)
    rep = mod.get_function("named")((1,), (96,), (out,))
    assert rep.clean, rep.summary()
    np.testing.assert_array_equal(out[:64], (63 - np.arange(64)) * 2)
    np.testing.assert_array_equal(out[64:], -1)


def test_atomics_run_in_increasing_thread_order(mod):
    counter = np.zeros(1, np.uint32)
    ticket = np.zeros(128, np.uint32)
    rep = mod.get_function("tickets")((2,), (64,), (counter, ticket))
    assert rep.clean
    np.testing.assert_array_equal(ticket, np.arange(128))
    assert counter[0] == 128


def test_float_atomic_adds_round_in_that_order(mod):
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32) * 1e3
    s = np.zeros(1, np.float32)
    mod.get_function("float_add")((4,), (64,), (x, s))
    acc = np.float32(0)
    for v in x:
        acc = np.float32(acc + v)
    assert s[0] == acc


def test_other_atomics_global_and_shared(mod):
    x = np.random.default_rng(1).integers(-100, 100, 64).astype(np.int32)
    v = np.array([-1000, 1000, 0, 3, 0, 0, 0], np.int32)
    rep = mod.get_function("others")((1,), (64,), (v, x))
    assert rep.clean, rep.summary()
    assert v[0] == x.max() and v[1] == x.min() and v[2] == x[-1]
    assert v[3] == x[3]  # only thread 3 finds 3 there
    assert v[4] == 64 % 6  # atomicInc wraps at 5: 0..5 then 0
    assert v[5] == np.bitwise_or.reduce(1 << (np.arange(64) % 31))
    assert v[6] == x.sum()


def test_global_writes_from_two_blocks_race(mod):
    out = np.zeros(1, np.int32)
    rep = mod.get_function("cross_block")((2,), (32,), (out,))
    r = rep.of_kind("race")
    assert r and r[0].detail["space"] == "global" and r[0].detail["hazard"] == "WAW"
    assert rep.undefined[0][0]


def test_last_block_pattern_with_fence_and_atomic_is_clean():
    mod = machine.kernel_module("reduce_onepass", ("reduce_onepass<64>",))
    n = 3000
    x = np.random.default_rng(2).integers(-8, 8, n).astype(np.float32)
    grid = 4
    partials = np.zeros(grid, np.float32)
    done = np.zeros(1, np.uint32)
    out = np.zeros(1, np.float32)
    rep = mod.get_function("reduce_onepass<64>")((grid,), (64,), (x, partials, done, out, np.int64(n)))
    assert rep.clean, rep.summary()
    assert out[0] == x.sum() and done[0] == 0


def test_warps_at_different_syncthreads_are_a_divergent_barrier():
    """PTX ISA bar/barrier: an aligned barrier must be executed by every thread of the CTA at the same
    instruction. Whole warps at two different __syncthreads() (no warp split) are reported too, and a
    block-uniform branch, or a barrier every warp reaches at one instruction, is not."""
    src = r"""
extern "C" __global__ void apart(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 32) __syncthreads();
    else __syncthreads();
    out[threadIdx.x] = s[threadIdx.x ^ 32];
}
extern "C" __global__ void uniform(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (blockIdx.x == 0) __syncthreads();
    else __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x ^ 32];
}"""
    mod = machine.RawModule(code=src)
    rep = mod.get_function("apart")((1,), (64,), (np.zeros(64, np.int32),))
    f = rep.of_kind("divergent_barrier")
    assert f and "warps of one block" in f[0].message and f[0].other_line != f[0].line
    assert mod.get_function("uniform")((2,), (64,), (np.zeros(128, np.int32),)).clean


def test_divergent_barriers_are_found_beside_legal_ones_and_syncthreads_count_is_undefined_there():
    """Review cases: a legal pair of non-aligned barrier.sync 0 at two instructions (warps 0 and 1) must
    not hide an aligned pair (warps 2 and 3); __syncthreads_count() reached from two instructions gives
    an undefined count, never a made-up one."""
    src = r"""
extern "C" __global__ void mixed(int* out) {
    const int w = threadIdx.x / 32;
    if (w == 0) asm volatile("barrier.sync 0;");
    else if (w == 1) asm volatile("barrier.sync 0;");
    else if (w == 2) __syncthreads();
    else __syncthreads();
    out[threadIdx.x] = w;
}
extern "C" __global__ void counted(int* out) {
    int c;
    if (threadIdx.x < 32) c = __syncthreads_count(1);
    else c = __syncthreads_count(1);
    out[threadIdx.x] = c;
}"""
    mod = machine.RawModule(code=src)
    assert mod.get_function("mixed")((1,), (128,), (np.zeros(128, np.int32),)).of_kind("divergent_barrier")
    out = np.zeros(64, np.int32)
    rep = mod.get_function("counted")((1,), (64,), (out,))
    assert rep.of_kind("divergent_barrier") and rep.undefined[0].all()
