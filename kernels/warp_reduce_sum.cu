// WarpReduceSum over n_warps rows of 32 values: out[w] = sum of row w, read from lane 0.
// Contract: blockDim.x is a multiple of 32; the grid covers exactly n_warps * 32 threads
// (the caller pads), so every warp is full and converged. Build with -DWARPLAB_TRACE to record
// every lane at every step (helpers.trace).
#include "warp_reduce.cuh"

// [anchor:warp_reduce_sum_kernel]
template <typename T>
__global__ void warp_reduce_sum_kernel(const T* in, T* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const T sum = warplab::WarpReduceSum(in[i]);
    if (i % warplab::kWarpSize == 0) out[i / warplab::kWarpSize] = sum;
}
// [end:warp_reduce_sum_kernel]
