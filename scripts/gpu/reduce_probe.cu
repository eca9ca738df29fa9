// Exploration only (scripts/gpu/reduce_probe.py): variants of the one-launch reduction, to choose
// what goes into kernels/. Not part of the series; compiled by the probe script alone.
#include "reduce_common.cuh"

namespace probe {

template <int LOADMODE>
__device__ __forceinline__ float4 load4(const float4* p) {
    if constexpr (LOADMODE == 0) {
        return *p;                        // const __restrict__: ld.global.nc
    } else if constexpr (LOADMODE == 1) {
        return __ldcs(p);                 // ld.global.cs: evict-first
    } else {
        float4 v;
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
        return v;
    }
}

template <int BLOCK, int UNROLL, int LOADMODE>
__device__ __forceinline__ float thread_sum(const float* __restrict__ in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * BLOCK;
    const long long misalign = static_cast<long long>((reinterpret_cast<unsigned long long>(in) / sizeof(float)) % 4);
    const long long head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
    const long long m = (n - head) / 4;
    const long long tail = (n - head) - 4 * m;
    const float4* __restrict__ body = reinterpret_cast<const float4*>(in + head);
    float sum = 0.0f;
    if (t < head) sum += in[t];
    if (t < tail) sum += in[head + 4 * m + t];
    long long i = t;
    for (; i + (UNROLL - 1) * threads < m; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = load4<LOADMODE>(body + i + u * threads);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < m; i += threads) {
        const float4 v = load4<LOADMODE>(body + i);
        sum += (v.x + v.y) + (v.z + v.w);
    }
    return sum;
}

__device__ __forceinline__ unsigned int ticket_acq_rel(unsigned int* p) {
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
    return old;
}

}  // namespace probe

// TICKET 0: __threadfence + atomicAdd + __threadfence (onepass); 1: one atom.acq_rel.gpu.
// TAIL 0: the whole last block sums the partials (block_sum_shfl); 1: warp 0 alone.
template <int BLOCK, int UNROLL, int LOADMODE, int TICKET, int TAIL>
__global__ void __launch_bounds__(BLOCK) probe_onepass(const float* __restrict__ in, float* partials,
                                                       unsigned int* done, float* out, long long n) {
    __shared__ bool is_last_block;
    float sum = probe::thread_sum<BLOCK, UNROLL, LOADMODE>(in, n);
    sum = warplab::reduce::block_sum_shfl<BLOCK>(sum);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
        unsigned int ticket;
        if constexpr (TICKET == 0) {
            __threadfence();
            ticket = atomicAdd(done, 1u);
        } else {
            ticket = probe::ticket_acq_rel(done);
        }
        is_last_block = (ticket == gridDim.x - 1);
        if (TICKET == 0 && is_last_block) __threadfence();
    }
    __syncthreads();
    if (!is_last_block) return;
    if constexpr (TAIL == 0) {
        float total = 0.0f;
        for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK) total += __ldcg(&partials[b]);
        total = warplab::reduce::block_sum_shfl<BLOCK>(total);
        if (threadIdx.x == 0) { *out = total; *done = 0u; }
    } else {
        if (threadIdx.x >= warplab::kWarpSize) return;
        float total = 0.0f;
        for (unsigned int b = threadIdx.x; b < gridDim.x; b += warplab::kWarpSize) total += __ldcg(&partials[b]);
        total = warplab::WarpReduceSum(total);
        if (threadIdx.x == 0) { *out = total; *done = 0u; }
    }
}
