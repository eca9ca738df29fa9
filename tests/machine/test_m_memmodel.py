"""The SIMT machine's cross-CTA memory model (PTX ISA 8 "Memory Consistency Model"): release and
acquire through fences, .release/.acquire/.acq_rel instructions and strong ld/st (8.4 Table 20, 8.8);
.cta-scope atomics across CTAs (8.7, Programming Guide "Atomic Functions"); message passing with
relaxed atomics (8.9.5); ld.global.nc of data written in the launch (8.1)."""
import numpy as np
import pytest

from helpers import machine
from helpers.engine import kernels

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
#include <cuda/atomic>

// Each block publishes a value; the block that draws the last ticket adds them all. KIND picks how
// the ticket orders the publications before the reads.
template <int KIND>
__device__ void finish(float v, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = v;
    unsigned int ticket;
    if (KIND == 0) {        // inline PTX: one release-and-acquire atomic
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(ticket) : "l"(done) : "memory");
    } else if (KIND == 1) { // cuda::atomic_ref fetch_add(acq_rel)
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> c(*done);
        ticket = c.fetch_add(1u, cuda::memory_order_acq_rel);
    } else if (KIND == 2) { // a release atomic without the reader's acquire: not enough
        asm volatile("atom.release.gpu.global.add.u32 %0, [%1], 1;" : "=r"(ticket) : "l"(done) : "memory");
    } else if (KIND == 3) { // .cta scope across CTAs
        __threadfence();
        ticket = atomicAdd_block(done, 1u);
        __threadfence();
    } else {                // release atomic, then an acquire fence: a release and an acquire pattern
        asm volatile("atom.release.gpu.global.add.u32 %0, [%1], 1;" : "=r"(ticket) : "l"(done) : "memory");
        __threadfence();
    }
    if (ticket != gridDim.x - 1) return;
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
}

extern "C" __global__ void acq_rel_ptx(const float* x, float* p, unsigned int* d, float* o) { finish<0>(x[blockIdx.x], p, d, o); }
extern "C" __global__ void acq_rel_ref(const float* x, float* p, unsigned int* d, float* o) { finish<1>(x[blockIdx.x], p, d, o); }
extern "C" __global__ void release_only(const float* x, float* p, unsigned int* d, float* o) { finish<2>(x[blockIdx.x], p, d, o); }
extern "C" __global__ void block_scope(const float* x, float* p, unsigned int* d, float* o) { finish<3>(x[blockIdx.x], p, d, o); }
extern "C" __global__ void release_then_fence(const float* x, float* p, unsigned int* d, float* o) { finish<4>(x[blockIdx.x], p, d, o); }

// Tickets drawn with a release RMW (atomic_ref fetch_add(release)); the last block reads the counter
// again with a load-acquire before it reads the others' values (PTX ISA, Release and Acquire Patterns: release sequence).
extern "C" __global__ void load_acquire(const float* x, float* p, unsigned int* d, float* o) {
    p[blockIdx.x] = x[blockIdx.x];
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> c(*d);
    if (c.fetch_add(1u, cuda::memory_order_release) != gridDim.x - 1) return;
    if (c.load(cuda::memory_order_acquire) != gridDim.x) return;
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += p[b];
    *o = total;
    c.store(0u, cuda::memory_order_relaxed);
}

// The partials written and read with relaxed atomics, no fences: no data race, but unordered.
extern "C" __global__ void relaxed_mp(const float* x, float* p, unsigned int* d, float* o) {
    atomicExch(&p[blockIdx.x], x[blockIdx.x]);
    if (atomicAdd(d, 1u) != gridDim.x - 1) return;
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += atomicAdd(&p[b], 0.0f);
    *o = total;
}

// Both fences, but the partials are read back through the non-coherent path.
extern "C" __global__ void ldg_partials(const float* x, float* p, unsigned int* d, float* o) {
    p[blockIdx.x] = x[blockIdx.x];
    __threadfence();
    if (atomicAdd(d, 1u) != gridDim.x - 1) return;
    __threadfence();
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += __ldg(&p[b]);
    *o = total;
}

// Block 0 waits for the other blocks' tickets: it ends only if they run alongside it.
extern "C" __global__ void spin_wait(unsigned int* done) {
    atomicAdd(done, 1u);
    if (blockIdx.x == 0) while (atomicAdd(done, 0u) != gridDim.x) { }
}

// ld.global.nc of an input nobody writes: fine.
extern "C" __global__ void ldg_input(const float* __restrict__ x, float* y) {
    y[blockIdx.x] = __ldg(&x[blockIdx.x]) * 2.0f;
}
"""

GRID = 5


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17", *kernels.include_options()))


def _finish(mod, name):
    x = np.arange(1, GRID + 1, dtype=np.float32)
    p = np.full(GRID, np.nan, np.float32)
    d = np.zeros(1, np.uint32)
    o = np.full(1, np.nan, np.float32)
    rep = mod.get_function(name)((GRID,), (1,), (x, p, d, o))
    return rep, o[0]


@pytest.mark.parametrize("name", ["acq_rel_ptx", "acq_rel_ref", "release_then_fence", "load_acquire"])
def test_acq_rel_atomic_orders_like_two_fences(mod, name):
    rep, out = _finish(mod, name)
    assert rep.clean, rep.summary()
    assert out == GRID * (GRID + 1) / 2


def test_release_atomic_without_acquire_is_unordered(mod):
    rep, _ = _finish(mod, "release_only")
    r = rep.of_kind("race")
    assert r and "acquire is missing" in r[0].message


def test_block_scope_atomic_across_blocks(mod):
    rep, _ = _finish(mod, "block_scope")
    r = [f for f in rep.of_kind("race") if f.detail.get("hazard") == "atomic"]
    assert r and "atomic only among the threads of its own block" in r[0].message
    # and it orders nothing across blocks: the reads of the partials are unordered too
    assert any(f.detail.get("hazard") == "RAW" for f in rep.of_kind("race"))


def test_relaxed_atomic_message_passing_may_read_the_old_value(mod):
    rep, _ = _finish(mod, "relaxed_mp")
    r = rep.of_kind("race")
    assert r and "may return the old value" in r[0].message and "no data race" in r[0].message
    assert rep.undefined[3][0]


def test_ldg_of_data_written_in_the_launch(mod):
    rep, _ = _finish(mod, "ldg_partials")
    r = rep.of_kind("race")
    assert r and "PTX ISA 8.1" in r[0].message and "non-coherent" in r[0].message
    assert rep.undefined[3][0]


def test_ldg_of_an_input_is_clean(mod):
    x = np.arange(GRID, dtype=np.float32)
    y = np.zeros(GRID, np.float32)
    rep = mod.get_function("ldg_input")((GRID,), (1,), (x, y))
    assert rep.clean, rep.summary()
    np.testing.assert_array_equal(y, 2 * x)


def test_serial_blocks_expose_a_wait_for_a_later_block(mod):
    """serial=True runs block 0 to its end before block 1 starts (Programming Guide, Thread Hierarchy:
    blocks "in any order, in parallel or in series"): block 0's wait never ends."""
    done = np.zeros(1, np.uint32)
    assert mod.get_function("spin_wait")((3,), (1,), (done,)).clean and done[0] == 3
    done[:] = 0
    with pytest.raises(machine.StepLimit, match="scheduling steps"):
        mod.get_function("spin_wait")((3,), (1,), (done,), serial=True, max_steps=2000)
    rep, out = _finish(mod, "acq_rel_ptx")
    x = np.arange(1, GRID + 1, dtype=np.float32)
    p, d, o = np.full(GRID, np.nan, np.float32), np.zeros(1, np.uint32), np.full(1, np.nan, np.float32)
    rep = mod.get_function("acq_rel_ptx")((GRID,), (1,), (x, p, d, o), serial=True)
    assert rep.clean and o[0] == out


def test_max_seconds_stops_an_endless_launch_and_names_its_line():
    """A step's cost grows with the launch, so a step cap alone does not bound the time: max_seconds
    does, raising StepLimit with the line the threads were stuck at."""
    import time

    src = r"""
extern "C" __global__ void forever(int* x) {
    int i = 0;
    while (x[0] == 0) { i += 1; }
    x[1] = i;
}"""
    k = machine.RawModule(code=src).get_function("forever")
    t0 = time.perf_counter()
    with pytest.raises(machine.StepLimit, match="max_seconds") as err:
        k((4,), (256,), (np.zeros(2, np.int32),), max_seconds=0.5)
    assert time.perf_counter() - t0 < 10 and err.value.seconds and err.value.loc is not None
    assert err.value.loc.line == 4


def test_a_strong_load_that_may_read_undefined_bytes_is_undefined():
    """Relaxed (strong) accesses in a block with nothing ordering them are no data race (PTX ISA 8.7),
    but the load may return the bytes from before the store: memory nobody initialised holds "an
    unknown but constant value" (8.2.6), so the value is undefined. Over initialised memory either
    value is one the hardware may return, and it stays defined."""
    from helpers.engine import kernels

    src = r"""
#include <cuda/atomic>
using ref = cuda::atomic_ref<int, cuda::thread_scope_block>;
extern "C" __global__ void exchange(int* out, int init) {
    __shared__ int s[32];
    const int l = threadIdx.x;
    if (init) { s[l] = 0; __syncthreads(); }
    ref(s[l]).store(l + 100, cuda::memory_order_relaxed);
    out[l] = ref(s[(l + 1) & 31]).load(cuda::memory_order_relaxed);
}"""
    k = machine.RawModule(code=src, options=("-std=c++17", *kernels.include_options())).get_function("exchange")
    for init, undefined in ((0, 32), (1, 0)):
        out = np.zeros(32, np.int32)
        rep = k((1,), (32,), (out, np.int32(init)))
        assert not rep.of_kind("race") and int(rep.undefined[0].sum()) == undefined, (init, rep.summary())
