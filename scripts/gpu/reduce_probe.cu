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

// in[0 .. n) as warplab::reduce::thread_sum_vec4 splits it: `head` (0..3) floats before the first
// 16-byte boundary, `m` whole float4 vectors from `body`, `tail` (0..3) floats after them.
struct Vec4Split {
    long long head, m, tail;
    const float4* body;
};

__device__ __forceinline__ Vec4Split split_vec4(const float* __restrict__ in, long long n) {
    const long long misalign = static_cast<long long>((reinterpret_cast<unsigned long long>(in) / sizeof(float)) % 4);
    const long long head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
    const long long m = (n - head) / 4;
    return {head, m, (n - head) - 4 * m, reinterpret_cast<const float4*>(in + head)};
}

// Thread t's floats outside the vectors: in[t] of the head and the t-th of the tail, where they exist.
__device__ __forceinline__ float edge_sum(const float* __restrict__ in, const Vec4Split& s, long long t) {
    float sum = 0.0f;
    if (t < s.head) sum += in[t];
    if (t < s.tail) sum += in[s.head + 4 * s.m + t];
    return sum;
}

// sum + body[i] + body[i + stride] + ... for the vectors below `end`, UNROLL loads in flight.
template <int UNROLL, int LOADMODE>
__device__ __forceinline__ float add_vec4s(float sum, const float4* __restrict__ body, long long i, long long end,
                                           long long stride) {
    for (; i + (UNROLL - 1) * stride < end; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = load4<LOADMODE>(body + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < end; i += stride) {
        const float4 v = load4<LOADMODE>(body + i);
        sum += (v.x + v.y) + (v.z + v.w);
    }
    return sum;
}

// Thread t of the grid takes vectors t, t + T, t + 2T, ... (T threads in all).
template <int BLOCK, int UNROLL, int LOADMODE>
__device__ __forceinline__ float thread_sum(const float* __restrict__ in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * BLOCK;
    const Vec4Split s = split_vec4(in, n);
    return add_vec4s<UNROLL, LOADMODE>(edge_sum(in, s, t), s.body, t, s.m, threads);
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

// ---------------------------------------------------------------------------------------------
// Round 2: the ticket drawn at block START (overlapped with the loads), partials published as one
// 64-bit {tag, value} store each, and the block that drew the last ticket (the last to start, so
// every other block is already running) polls the slots until every tag is this launch's.
namespace probe {

__device__ __forceinline__ unsigned long long ld_relaxed_u64(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_relaxed_u64(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned int ld_relaxed_u32(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Block b reads the float4 vectors [b*C, min((b+1)*C, m)), C = ceil(m / gridDim.x), BLOCK * UNROLL at a time.
template <int BLOCK, int UNROLL, int LOADMODE>
__device__ __forceinline__ float thread_sum_chunked(const float* __restrict__ in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    const Vec4Split s = split_vec4(in, n);
    const float edges = edge_sum(in, s, t);
    const long long chunk = (s.m + gridDim.x - 1) / gridDim.x;
    const long long begin = blockIdx.x * chunk;
    const long long end = begin + chunk < s.m ? begin + chunk : s.m;
    return add_vec4s<UNROLL, LOADMODE>(edges, s.body, begin + threadIdx.x, end, BLOCK);
}

}  // namespace probe

// state[0]: ticket counter (0 at launch; reset by the poller), state[1]: launch epoch.
template <int BLOCK, int UNROLL, int LOADMODE, int CHUNKED>
__global__ void __launch_bounds__(BLOCK) probe_poll(const float* __restrict__ in, unsigned long long* slots,
                                                    unsigned int* state, float* out, long long n) {
    unsigned int ticket = 0, epoch = 0;
    if (threadIdx.x == 0 && gridDim.x > 1) {
        ticket = atomicAdd(&state[0], 1u);
        epoch = probe::ld_relaxed_u32(&state[1]);
    }
    float sum = CHUNKED ? probe::thread_sum_chunked<BLOCK, UNROLL, LOADMODE>(in, n)
                        : probe::thread_sum<BLOCK, UNROLL, LOADMODE>(in, n);
    sum = warplab::reduce::block_sum_shfl<BLOCK>(sum);
    if (threadIdx.x >= warplab::kWarpSize) return;
    if (gridDim.x == 1) {                         // one block: nobody to wait for
        if (threadIdx.x == 0) *out = sum;
        return;
    }
    const unsigned int lane = threadIdx.x;
    const unsigned int tag = epoch + 1u;          // this launch's tag (lane 0's copy)
    if (lane == 0)
        probe::st_relaxed_u64(&slots[blockIdx.x], (static_cast<unsigned long long>(tag) << 32) | __float_as_uint(sum));
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    const unsigned int want = __shfl_sync(0xffffffffu, tag, 0);
    if (ticket != gridDim.x - 1) return;          // uniform in the warp
    float total = 0.0f;
    for (unsigned int b0 = 0; b0 < gridDim.x; b0 += 4 * warplab::kWarpSize) {
        unsigned long long v[4];
        bool ready;
        do {
            ready = true;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const unsigned int b = b0 + k * warplab::kWarpSize + lane;
                v[k] = b < gridDim.x ? probe::ld_relaxed_u64(&slots[b]) : static_cast<unsigned long long>(want) << 32;
                ready &= static_cast<unsigned int>(v[k] >> 32) == want;
            }
        } while (!ready);
#pragma unroll
        for (int k = 0; k < 4; ++k) total += __uint_as_float(static_cast<unsigned int>(v[k]));
    }
    total = warplab::WarpReduceSum(total);
    if (lane == 0) {
        *out = total;
        state[0] = 0u;
        state[1] = want;
    }
}
