"""The PTX memory model inside a CTA and across CTAs (PTX ISA 8 "Memory Consistency Model"), on the
correct code that issue 28's reviewer found flagged, and on the planted defects beside it: message
passing between two warps of one block (fences and atomics; cuda::atomic_ref release/acquire), spin
locks taken in turn, an atomic and a plain load of one word, last_block_sum with atomic_ref."""
import numpy as np
import pytest

from helpers import exercises, machine
from helpers.engine import kernels

pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
#include <cuda/atomic>
using dev_ref = cuda::atomic_ref<int, cuda::thread_scope_device>;
using blk_ref = cuda::atomic_ref<int, cuda::thread_scope_block>;

// Message passing between warp 0 (lane 0 writes) and warp 1 (lane 0 reads) of one block.
// FENCES 1: __threadfence() on both sides; 0: none (a planted defect).
// (The writer's code comes first in program order; mp_reader_first puts the reader first, which
// finishes through fair scheduling: test_reader_first_needs_fair_scheduling.)
template <int FENCES>
__device__ void mp_atomics(int* data, int* flag, int* out) {
    if (threadIdx.x == 0) {
        data[0] = 42;
        if (FENCES) __threadfence();
        atomicExch(flag, 1);
    }
    if (threadIdx.x == 32) {
        while (atomicAdd(flag, 0) == 0) { }
        if (FENCES) __threadfence();
        out[0] = data[0];
    }
}
extern "C" __global__ void mp_reader_first(int* data, int* flag, int* out) {
    if (threadIdx.x == 32) {
        while (atomicAdd(flag, 0) == 0) { }
        __threadfence();
        out[0] = data[0];
    } else if (threadIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        atomicExch(flag, 1);
    }
}
extern "C" __global__ void mp_fence(int* d, int* f, int* o) { mp_atomics<1>(d, f, o); }
extern "C" __global__ void mp_nofence(int* d, int* f, int* o) { mp_atomics<0>(d, f, o); }

// The same with cuda::atomic_ref: store(release) / load(acquire), device or block scope;
// KIND 2: relaxed on both sides (no release/acquire: a planted defect).
template <typename Ref, int KIND>
__device__ void mp_ref(int* data, int* flag, int* out) {
    Ref f(*flag);
    if (threadIdx.x == 0) {
        data[0] = 42;
        f.store(1, KIND == 2 ? cuda::memory_order_relaxed : cuda::memory_order_release);
    }
    if (threadIdx.x == 32) {
        while (f.load(KIND == 2 ? cuda::memory_order_relaxed : cuda::memory_order_acquire) == 0) { }
        out[0] = data[0];
    }
}
extern "C" __global__ void mp_ref_dev(int* d, int* f, int* o) { mp_ref<dev_ref, 0>(d, f, o); }
extern "C" __global__ void mp_ref_blk(int* d, int* f, int* o) { mp_ref<blk_ref, 0>(d, f, o); }
extern "C" __global__ void mp_ref_relaxed(int* d, int* f, int* o) { mp_ref<dev_ref, 2>(d, f, o); }

// A spin lock around a plain read-modify-write of *counter. FENCES 0 is a planted defect.
template <int FENCES>
__device__ void locked_add(int* lock, int* counter) {
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            if (FENCES) __threadfence();
            *counter += 1;
            if (FENCES) __threadfence();
            atomicExch(lock, 0);
            done = true;
        }
    }
}
extern "C" __global__ void lock_fenced(int* l, int* c) { locked_add<1>(l, c); }
extern "C" __global__ void lock_unfenced(int* l, int* c) { locked_add<0>(l, c); }

// The same lock written the short way: the CAS loop alone, then the critical section.
extern "C" __global__ void lock_spin(int* lock, int* counter) {
    while (atomicCAS(lock, 0, 1) != 0) { }
    __threadfence();
    *counter += 1;
    __threadfence();
    atomicExch(lock, 0);
}

// Some threads count with atomicAdd, another reads the counter with a plain load, nothing between.
extern "C" __global__ void atomic_then_plain_load(int* counter, int* out) {
    if (threadIdx.x < 32) atomicAdd(counter, 1);
    else if (threadIdx.x == 32) out[0] = *counter;
}
// ... and with __syncthreads() between them: ordered.
extern "C" __global__ void atomic_barrier_plain_load(int* counter, int* out) {
    if (threadIdx.x < 32) atomicAdd(counter, 1);
    __syncthreads();
    if (threadIdx.x == 32) out[0] = *counter;
}
"""


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17", *kernels.include_options()))


def _mp(mod, name):
    data, flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(1, -1, np.int32)
    rep = mod.get_function(name)((1,), (64,), (data, flag, out), max_steps=200_000)
    return rep, out


@pytest.mark.parametrize("name", ["mp_fence", "mp_ref_dev", "mp_ref_blk"])
def test_message_passing_between_warps_of_one_block_is_ordered(mod, name):
    """Release pattern (fence; atomic, or st.release) and acquire pattern (atomic; fence, or
    ld.acquire) at a scope that includes both threads: they synchronize (PTX ISA, Release and Acquire Patterns, 8.9.4), so the
    data write is before the data read in causality order (8.9.5): no data race, 42 defined."""
    rep, out = _mp(mod, name)
    assert rep.clean, rep.summary()
    assert out[0] == 42 and not rep.undefined[2][0]


@pytest.mark.parametrize("name", ["mp_nofence", "mp_ref_relaxed"])
def test_message_passing_without_release_and_acquire_is_a_race(mod, name):
    rep, out = _mp(mod, name)
    races = rep.of_kind("race")
    assert races and races[0].detail["between"] == "warps of one block", rep.summary()
    assert rep.undefined[2][0]


def test_lock_taken_by_blocks_in_turn_orders_the_data(mod):
    """Blocks one after another (serial): each takes the lock the previous one released. Its CAS
    reads the previous block's atomicExch, which a fence precedes (a release pattern); the fence after
    the CAS makes it an acquire pattern (PTX ISA, Release and Acquire Patterns), so the counter's accesses are ordered."""
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    rep = mod.get_function("lock_fenced")((4,), (1,), (lock, counter), serial=True)
    assert rep.clean, rep.summary()
    assert counter[0] == 4 and not rep.undefined[1][0]


def test_lock_without_fences_is_a_race(mod):
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    rep = mod.get_function("lock_unfenced")((4,), (1,), (lock, counter), serial=True)
    assert rep.of_kind("race") and rep.undefined[1][0], rep.summary()


@pytest.mark.parametrize("grid, block", [((4,), (1,)), ((1,), (32,)), ((2,), (64,))])
def test_lock_taken_in_turn_orders_the_data(mod, grid, block):
    """Blocks side by side, or the lanes of one warp, take the lock one after another (the holder's
    path is the lower PC here, so the machine's lowest-PC-first scheduler lets it finish)."""
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    rep = mod.get_function("lock_fenced")(grid, block, (lock, counter), max_steps=200_000)
    assert rep.clean, rep.summary()
    assert counter[0] == grid[0] * block[0] and not rep.undefined[1][0]


@pytest.mark.parametrize("grid, block", [((4,), (1,)), ((1,), (32,))])
def test_short_spin_lock_needs_fair_scheduling(mod, grid, block):
    """The spinning threads are the lower PC; fair turns (FAIR_SPINS, then FAIR_SPINS_AGAIN at a back edge
    that has spun before) let the holder, a block or a lane of the same warp, release the lock."""
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    rep = mod.get_function("lock_spin")(grid, block, (lock, counter), max_steps=20_000)
    assert rep.clean, rep.summary()
    assert counter[0] == grid[0] * block[0]


def test_reader_first_needs_fair_scheduling(mod):
    """The reader's spin loop is the lower PC: a fair turn lets the writer set the flag."""
    data, flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(1, -1, np.int32)
    rep = mod.get_function("mp_reader_first")((1,), (64,), (data, flag, out), max_steps=20_000)
    assert rep.clean and out[0] == 42, rep.summary()


def test_atomic_and_an_unordered_plain_load_of_one_word_race(mod):
    """An atomic is strong, a plain load weak: not morally strong (PTX ISA 8.7), not ordered: a data
    race (8.7.1), and the loaded value is undefined."""
    counter, out = np.zeros(1, np.int32), np.full(1, -1, np.int32)
    rep = mod.get_function("atomic_then_plain_load")((1,), (64,), (counter, out))
    assert rep.of_kind("race") and rep.undefined[1][0], rep.summary()
    counter[:] = 0
    rep = mod.get_function("atomic_barrier_plain_load")((1,), (64,), (counter, out))
    assert rep.clean and out[0] == 32 and not rep.undefined[1][0], rep.summary()


LAST_BLOCK_REF = {
    "release_then_acquire_fence": """#include <cuda/atomic>
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(*done);
    if (count.fetch_add(1u, cuda::memory_order_release) != gridDim.x - 1) return;
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
    count.store(0u, cuda::memory_order_relaxed);
}
""",
    "release_then_load_acquire": """#include <cuda/atomic>
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(*done);
    if (count.fetch_add(1u, cuda::memory_order_release) != gridDim.x - 1) return;
    if (count.load(cuda::memory_order_acquire) != gridDim.x) return;
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
    count.store(0u, cuda::memory_order_relaxed);
}
""",
}


@pytest.mark.parametrize("key", sorted(LAST_BLOCK_REF))
def test_last_block_sum_with_atomic_ref_passes(key):
    r = exercises.check("last_block_sum", LAST_BLOCK_REF[key], seed=0, engine="machine")
    assert r.passed and r.status == "passed", r.feedback
