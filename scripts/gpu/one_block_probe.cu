// Exploration only (scripts/gpu/one_block_probe.py): where a one-block sum of 2^10 .. 2^14 floats
// spends its time, to see whether v9's one-block path can reach cupy.sum's single-tile kernel at
// 2^12. Not part of the series; compiled by the probe script alone. Power-of-two n, 16-byte
// aligned input (the probe's only inputs), so the layouts below skip v9's head and tail.
#include "reduce_common.cuh"

namespace probe {
namespace wr = warplab::reduce;

// LAYOUT 0: v9's own thread_sum_vec4 (64-bit indices, head and tail, striped vectors);
// 1: striped vectors, 32-bit indices, no head or tail; 2: blocked, thread t's UNROLL vectors
// contiguous (as CUB's LoadDirectBlockedVectorized), 32-bit indices.
template <int BLOCK, int UNROLL, int LAYOUT>
__device__ __forceinline__ float thread_sum(const float* __restrict__ in, long long n) {
    if constexpr (LAYOUT == 0) {
        return wr::thread_sum_vec4<BLOCK, UNROLL, wr::Loads::kReadOnly>(in, n);
    } else {
        const int m = static_cast<int>(n / 4);
        const float4* v4 = reinterpret_cast<const float4*>(in);
        float sum = 0.0f;
        for (int base = 0; base < m; base += BLOCK * UNROLL) {
            float4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int i = LAYOUT == 1 ? base + u * BLOCK + threadIdx.x : base + threadIdx.x * UNROLL + u;
                v[u] = i < m ? __ldg(v4 + i) : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        return sum;
    }
}

// TREE 0: v9's block_sum_shfl (a second 32-lane WarpReduceSum); 1: the second stage only as wide
// as the warps (log2(BLOCK/32) steps); 2: thread 0 adds the warp sums in order.
template <int BLOCK, int TREE>
__device__ __forceinline__ float block_sum(float v) {
    if constexpr (TREE == 0) {
        return wr::block_sum_shfl<BLOCK>(v);
    } else {
        constexpr int kWarps = BLOCK / warplab::kWarpSize;
        __shared__ float warp_sums[kWarps];
        const unsigned lane = threadIdx.x % warplab::kWarpSize, warp = threadIdx.x / warplab::kWarpSize;
        v = warplab::WarpReduceSum(v);
        if (lane == 0) warp_sums[warp] = v;
        __syncthreads();
        if constexpr (TREE == 1) {
            if (warp == 0) {
                v = lane < kWarps ? warp_sums[lane] : 0.0f;
#pragma unroll
                for (int offset = kWarps / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
            }
        } else if (threadIdx.x == 0) {
            v = warp_sums[0];
#pragma unroll
            for (int w = 1; w < kWarps; ++w) v += warp_sums[w];
        }
        return v;
    }
}

}  // namespace probe

template <int BLOCK, int UNROLL, int TREE, int LAYOUT>
__global__ void __launch_bounds__(BLOCK) probe_one(const float* __restrict__ in, float* out, long long n) {
    const float sum = probe::block_sum<BLOCK, TREE>(probe::thread_sum<BLOCK, UNROLL, LAYOUT>(in, n));
    if (threadIdx.x == 0) *out = sum;
}
