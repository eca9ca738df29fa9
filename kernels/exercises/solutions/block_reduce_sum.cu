// Reference solution of the exercise block_reduce_sum (notebook 04).
//
// Contract: __device__ float block_reduce_sum(float v, float* shared). Every thread of a 1D block
// calls it, converged; any blockDim.x from 1 to 1024, a multiple of 32 or not. `shared` points to
// room for 32 floats in shared memory. Thread 0 returns the sum of the block's values; what other
// threads return is not checked.
//
// Phase 1: each warp sums its lanes with shuffles and lane 0 parks the warp's sum in shared[warp].
// A partial last warp has lanes that do not exist: it shuffles with a mask of only the lanes that
// do, and a lane adds what it received only when the source lane exists (the value read from a
// missing lane is undefined, and it is never used). Phase 2, after the barrier: warp 0 reads one
// slot per warp and sums those the same way.
__device__ float warp_sum_of_first(float v, int lanes) {
    const unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    const int lane = threadIdx.x % 32;
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_down_sync(mask, v, offset);
        if (lane + offset < lanes) v += other;
    }
    return v;
}

__device__ float block_reduce_sum(float v, float* shared) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int n_warps = (blockDim.x + 31) / 32;
    const int lanes_here = min(32, (int)blockDim.x - warp * 32);   // 32 except in a partial warp
    v = warp_sum_of_first(v, lanes_here);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < n_warps ? shared[lane] : 0.0f;   // pad with the identity: no lane reads a slot nobody wrote
        v = warp_sum_of_first(v, lanes_here);
    }
    return v;
}
