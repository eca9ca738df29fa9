// Every thread of the block calls this (any blockDim.x from 1 to 1024); shared has room for 32
// floats. Thread 0 must return the sum of the block's values.
__device__ float block_reduce_sum(float v, float* shared) {
    // TODO: reduce each warp with shuffles, park the warp sums in shared[], __syncthreads(),
    // then let warp 0 reduce the warp sums. Mind a last warp with fewer than 32 lanes.
    return v;
}
