// Floor probe (exploration on the H200, not a shipped kernel): what part of a one-launch sum's
// time is the launch, the loads, the block tree and the combine across blocks. Every kernel here
// reads m float4 vectors of an aligned array (n = 4m floats) the way reduce_v9's thread_sum_vec4
// does (grid-stride, UNROLL loads in flight), and then:
//   MODE 0: nothing: the thread's sum is written only if it equals `sentinel` (never, for the
//           probe's positive inputs; the test keeps the compiler from dropping the loads);
//   MODE 1: the block's sum (block_sum_in_order, as v9) to out[blockIdx.x]: v9 without the combine.
// LOADS picks the load instruction (PTX ISA, "Data Movement and Conversion Instructions: ld"):
//   0 ld.global.nc (what v9 uses in the L2), 1 ld.global.cs (evict-first, v9 from HBM),
//   2 ld.global.nc.L1::no_allocate.L2::256B, 3 ld.global.nc.L2::128B, 4 ld.global.nc.L1::no_allocate.
// floor_tma reads each block's contiguous share with one or more bulk copies (cp.async.bulk, the
// Tensor Memory Accelerator's non-tensor form, sm_90) into shared memory, then sums it from there.
#include "reduce_v9.cu"

namespace probe {

template <int LOADS>
__device__ __forceinline__ float4 ld4(const float4* p) {
    float4 v;
    if constexpr (LOADS == 0) {
        v = __ldg(p);
    } else if constexpr (LOADS == 1) {
        v = __ldcs(p);
    } else if constexpr (LOADS == 2) {
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    } else if constexpr (LOADS == 3) {
        asm("ld.global.nc.L2::128B.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    } else {
        asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    }
    return v;
}

}  // namespace probe

template <int BLOCK, int UNROLL, int LOADS, int MODE>
__global__ void __launch_bounds__(BLOCK) floor_kernel(const float4* __restrict__ in, float* out, long long m,
                                                      float sentinel) {
    const long long t = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * BLOCK;
    float sum = 0.0f;
    long long i = t;
    for (; i + (UNROLL - 1) * threads < m; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = probe::ld4<LOADS>(in + i + u * threads);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < m; i += threads) {
        const float4 v = probe::ld4<LOADS>(in + i);
        sum += (v.x + v.y) + (v.z + v.w);
    }
    if constexpr (MODE == 0) {
        if (sum == sentinel) out[blockIdx.x] = sum;
    } else {
        sum = warplab::reduce::block_sum_in_order<BLOCK>(sum);
        if (threadIdx.x == 0) out[blockIdx.x] = sum;
    }
}

// The same launch shape doing nothing: what the launch of BLOCK-thread blocks costs.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) floor_empty(float* out, float sentinel) {
    if (sentinel == 1.0f && threadIdx.x == 0) out[blockIdx.x] = sentinel;
}

// Block b sums vectors [b * kVecs, (b + 1) * kVecs): BYTES bytes, in COPIES bulk copies of
// BYTES / COPIES each, issued by thread 0 and awaited on one mbarrier (PTX ISA, "cp.async.bulk",
// "mbarrier"). Then MODE as above.
template <int BLOCK, int BYTES, int COPIES, int MODE>
__global__ void __launch_bounds__(BLOCK) floor_tma(const float4* __restrict__ in, float* out, float sentinel) {
    static_assert(BYTES % (16 * COPIES) == 0, "each copy must be a multiple of 16 bytes");
    constexpr int kVecs = BYTES / 16;
    __shared__ alignas(128) float4 buf[kVecs];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned int bar_a = static_cast<unsigned int>(__cvta_generic_to_shared(&bar));
    const unsigned int buf_a = static_cast<unsigned int>(__cvta_generic_to_shared(buf));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_a) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_a), "r"(BYTES) : "memory");
        const float4* src = in + static_cast<long long>(blockIdx.x) * kVecs;
#pragma unroll
        for (int c = 0; c < COPIES; ++c) {
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                    buf_a + c * (BYTES / COPIES)),
                "l"(src + c * (kVecs / COPIES)), "r"(BYTES / COPIES), "r"(bar_a)
                : "memory");
        }
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
        "@!p bra WAIT;\n"
        "}\n" ::"r"(bar_a)
        : "memory");
    float sum = 0.0f;
#pragma unroll 4
    for (int k = threadIdx.x; k < kVecs; k += BLOCK) {
        const float4 v = buf[k];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    if constexpr (MODE == 0) {
        if (sum == sentinel) out[blockIdx.x] = sum;
    } else {
        sum = warplab::reduce::block_sum_in_order<BLOCK>(sum);
        if (threadIdx.x == 0) out[blockIdx.x] = sum;
    }
}
