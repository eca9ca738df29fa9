// reduce_v7: shuffle-only block reduction. Improves on v6: one __syncthreads() per block.
//
// Each warp reduces its 32 running sums in registers with five __shfl_down_sync steps
// (WarpReduceSum), lane 0 of each warp writes one shared slot, and warp 0 reduces the BLOCK/32
// slots the same way (block_sum_shfl in reduce_common.cuh). Shared memory shrinks from BLOCK floats
// to BLOCK/32, and the barriers from log2(BLOCK) - 5 to one. Loads are v6's grid-stride loop.
// Still wrong (what v8 changes): 4-byte loads, eight in flight per thread in ptxas's SASS
// (tests/engine/test_sass.py), already keep HBM busy at large n (v7 -> v8 x1.01 at 2^28, H200);
// at 2^20 wider loads still gain (x1.21), and the loop spends an instruction on every element.
//
// Contract: as reduce_v6 (any grid >= 1 is correct; the dispatcher launches
// min(ceil(n / (2 * BLOCK)), blocks per SM x SMs); out[blockIdx.x] = the sum of what the block
// visited; blockDim.x == BLOCK a power of two in [64, 1024]; n >= 1).
#include "reduce_common.cuh"

// [anchor:reduce_v7]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v7(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    const long long stride = static_cast<long long>(gridDim.x) * (2 * BLOCK);
    float sum = 0.0f;
    for (long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + threadIdx.x; i < n; i += stride) {
        sum += in[i];
        if (i + BLOCK < n) sum += in[i + BLOCK];
    }
    sum = warplab::reduce::block_sum_shfl<BLOCK>(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
// [end:reduce_v7]
