// Warp-level reductions built from shuffles.
//
// Contract: every lane of the (logical) warp calls with the same Width; lanes are all active
// and the mask is full (pad missing elements with the operator's identity instead of shrinking
// the mask). After the shuffle-down tree only lane 0 of each Width-lane segment holds the
// result; the other lanes hold partial sums that nobody reads. After the xor butterfly every
// lane holds the result.
#pragma once
#include "warplab_common.cuh"

namespace warplab {

// [anchor:warp_reduce_sum]
// PyTorch's WarpReduceSum: five __shfl_down_sync steps; lane 0 ends with the sum of all 32.
template <typename T>
__device__ __forceinline__ T WarpReduceSum(T val) {
    const int lane = threadIdx.x % kWarpSize;
    WARPLAB_TRACE_STEP(0, val, val, lane);
    int step = 1;
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2, ++step) {
        const T other = __shfl_down_sync(kFullMask, val, offset, kWarpSize);
        WARPLAB_TRACE_STEP(step, val + other, other,
                           __shfl_down_sync(kFullMask, lane, offset, kWarpSize));
        val += other;
    }
    return val;
}
// [end:warp_reduce_sum]

}  // namespace warplab
