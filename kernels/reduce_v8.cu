// reduce_v8: 16-byte vector loads, several in flight. Improves on v7: bytes in flight per thread.
//
// A large reduction is a pure stream from HBM: it runs at the bandwidth the SMs can keep
// requested (bytes in flight = bandwidth x latency, Little's law). Each thread now reads float4
// (16 bytes per load, a warp 512 contiguous bytes) and issues REDUCE_UNROLL independent loads
// before it adds any of them (thread_sum_vec4 in reduce_common.cuh): 16 x REDUCE_UNROLL bytes in flight
// per thread at 2 or 4 (at 8 ptxas keeps 3 to 6; v7 keeps 32 bytes). The input may start anywhere a float can
// (e.g. a slice x[1:]): the 0..3 floats before the first 16-byte boundary and the 0..3 after the
// last whole float4 are read one by one, so no load is misaligned and none goes past n.
// Block reduction as v7. What remains: a second launch to reduce the partials (reduce_onepass.cu
// removes it, which matters most when n is small and launch latency dominates).
//
// Contract: blockDim.x == BLOCK, a power of two in [64, 1024]; in 4-byte aligned (any float*);
// ANY grid >= 1 is correct; the dispatcher launches
// min(ceil(n / (4 * REDUCE_UNROLL * BLOCK)), blocks per SM x SMs). out[blockIdx.x] = the sum of
// what the block read; n >= 1. Build with -DREDUCE_UNROLL=k to change the unroll (default 4).
#include "reduce_common.cuh"

#ifndef REDUCE_UNROLL
#define REDUCE_UNROLL 4
#endif

// [anchor:reduce_v8]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v8(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    float sum = warplab::reduce::thread_sum_vec4<BLOCK, REDUCE_UNROLL>(in, n);
    sum = warplab::reduce::block_sum_shfl<BLOCK>(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
// [end:reduce_v8]
