"""The SIMT machine: global, shared (static and dynamic), local, const and module-scope memory,
generic addressing, vector accesses, and the memory findings (PTX ISA 5.1 state spaces,
ld, st)."""
import numpy as np
import pytest

from helpers import machine

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
__device__ int dev_counter = 7;
__constant__ float coeffs[4] = {1.5f, -2.0f, 0.25f, 8.0f};

extern "C" __global__ void spaces(const float* in, float* out, int n) {
    __shared__ float tile[64];
    extern __shared__ float dyn[];
    float local[8];
    const int t = threadIdx.x;
    for (int k = 0; k < 8; ++k) local[k] = in[t] * k;
    tile[t] = in[t] + coeffs[t % 4];
    dyn[t] = 2.0f * in[t];
    __syncthreads();
    volatile int idx = t % 8;              // dynamic index: the array lives in local memory
    out[t] = tile[63 - t] + dyn[(t + 1) % 64] + local[idx] + (float)dev_counter;
}

extern "C" __global__ void vec4(const float4* in, float4* out) {
    const int t = threadIdx.x;
    float4 v = in[t];
    out[t] = make_float4(v.w, v.z, v.y, v.x);
}

__device__ __noinline__ void touch(float* p, float v) { *p = v; }   // generic pointer

extern "C" __global__ void generic(float* out) {
    __shared__ float s[32];
    float* p = (threadIdx.x % 2) ? &s[threadIdx.x] : &out[threadIdx.x];
    *p = 3.0f;                                   // st through a generic address: shared or global
    __syncthreads();
    if (threadIdx.x % 2) out[threadIdx.x] = s[threadIdx.x] + 1.0f;
}

extern "C" __global__ void oob(const int* in, int* out, int n) {
    out[threadIdx.x] = in[threadIdx.x + n];     // the last lanes read past the end
}

extern "C" __global__ void shared_oob(int* out, int k) {
    __shared__ int s[32];
    s[threadIdx.x] = 1;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x * k];
}

extern "C" __global__ void misaligned(const char* in, int* out) {
    out[threadIdx.x] = *(const int*)(in + 4 * threadIdx.x + 1);
}

extern "C" __global__ void uninit(int* out) {
    __shared__ int s[64];
    if (threadIdx.x < 16) s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}

extern "C" __global__ void bytes(unsigned char* flags) {
    __shared__ unsigned char f[64];
    f[threadIdx.x] = (unsigned char)(threadIdx.x * 3);   // neighbours write neighbouring bytes
    __syncthreads();
    flags[threadIdx.x] = f[63 - threadIdx.x];
}
"""


@pytest.fixture(scope="module")
def mod():
    # -G-free, no inlining of touch() is needed: generic addressing comes from the pointer select
    return machine.RawModule(code=SRC.replace("__noinline__", "__forceinline__"), options=("-std=c++17",))


def test_every_state_space_and_module_variables(mod):
    x = np.random.default_rng(0).integers(-50, 50, 64).astype(np.float32)  # exact sums: no order question
    out = np.zeros(64, np.float32)
    rep = mod.get_function("spaces")((1,), (64,), (x, out, np.int32(64)), shared_mem=64 * 4)
    assert rep.clean, rep.summary()
    assert ".local" in mod.ptx and "ld.const" in mod.ptx
    c = np.array([1.5, -2.0, 0.25, 8.0], np.float32)
    t = np.arange(64)
    tile = x + c[t % 4]
    exp = ((tile[63 - t] + 2.0 * x[(t + 1) % 64]) + x * (t % 8)) + np.float32(7)
    np.testing.assert_array_equal(out, exp.astype(np.float32))


def test_vector_loads_and_stores(mod):
    x = np.arange(32 * 4, dtype=np.float32)
    out = np.zeros_like(x)
    rep = mod.get_function("vec4")((1,), (32,), (x, out))
    assert rep.clean and "v4.f32" in mod.ptx
    np.testing.assert_array_equal(out.reshape(32, 4), x.reshape(32, 4)[:, ::-1])
    # 16 bytes per lane: 512 contiguous bytes per warp = 16 sectors per request
    row = [r for r in rep.counters.per_instruction if "ld.global" in r["ptx"]][0]
    assert row["global_sectors"] == 16 and row["global_requests"] == 1


def test_generic_addresses_reach_shared_and_global(mod):
    out = np.zeros(32, np.float32)
    rep = mod.get_function("generic")((1,), (32,), (out,))
    assert rep.clean, rep.summary()
    np.testing.assert_array_equal(out, np.where(np.arange(32) % 2, 4.0, 3.0))


def test_out_of_bounds_global_read_is_reported_with_its_line(mod):
    a = np.arange(40, dtype=np.int32)
    out = np.zeros(32, np.int32)
    rep = mod.get_function("oob")((1,), (32,), (a, out, np.int32(10)))
    f = rep.of_kind("out_of_bounds")
    assert f and f[0].count == 2 and f[0].line is not None
    assert "argument 0" in f[0].message and "160 bytes" in f[0].message
    np.testing.assert_array_equal(out[:30], a[10:40])
    assert rep.undefined[1][30:].all() and not rep.undefined[1][:30].any()


def test_out_of_bounds_shared_read(mod):
    out = np.zeros(32, np.int32)
    rep = mod.get_function("shared_oob")((1,), (32,), (out, np.int32(2)))
    f = rep.of_kind("out_of_bounds")
    assert f and f[0].detail["space"] == "shared" and f[0].count == 16


def test_misaligned_access(mod):
    raw = np.arange(4 * 32 + 4, dtype=np.uint8)
    out = np.zeros(32, np.int32)
    rep = mod.get_function("misaligned")((1,), (32,), (raw, out))
    f = rep.of_kind("misaligned")
    assert f and f[0].count == 32
    assert rep.undefined[1].all()


def test_uninitialized_shared_memory(mod):
    out = np.zeros(64, np.int32)
    rep = mod.get_function("uninit")((1,), (64,), (out,))
    f = rep.of_kind("uninitialized")
    assert f and f[0].count == 48
    np.testing.assert_array_equal(rep.undefined[0], np.arange(64) >= 16)
    np.testing.assert_array_equal(out[:16], np.arange(16))


def test_neighbouring_bytes_written_by_different_threads_do_not_race(mod):
    flags = np.zeros(64, np.uint8)
    rep = mod.get_function("bytes")((1,), (64,), (flags,))
    assert rep.clean, rep.summary()
    np.testing.assert_array_equal(flags, ((63 - np.arange(64)) * 3).astype(np.uint8))


def test_array_views_keep_their_offset_and_exact_bounds():
    src = r'extern "C" __global__ void addr(const float* x, unsigned long long* out) {' \
          r' out[threadIdx.x] = (unsigned long long)(x + threadIdx.x) % 16; }'
    mod = machine.RawModule(code=src)
    base = np.zeros(64, np.float32)
    out = np.zeros(4, np.uint64)
    mod.get_function("addr")((1,), (4,), (base[1:], out))
    np.testing.assert_array_equal(out, [4, 8, 12, 0])  # x[1:] starts 4 bytes past a 256-aligned base


def test_bad_arguments_are_refused_with_the_parameter():
    mod = machine.RawModule(code=SRC, options=("-std=c++17",))
    k = mod.get_function("oob")
    with pytest.raises(ValueError, match="args must have one value per kernel parameter"):
        k((1,), (32,), (np.zeros(4, np.int32),))
    with pytest.raises(ValueError, match=r"args\[2\]"):
        k((1,), (32,), (np.zeros(4, np.int32), np.zeros(4, np.int32), np.float64(1)))
    with pytest.raises(ValueError, match="block must"):
        k((1,), (2048,), (np.zeros(4, np.int32), np.zeros(4, np.int32), np.int32(1)))
    with pytest.raises(ValueError, match="name must be one of"):
        mod.get_function("nope")
