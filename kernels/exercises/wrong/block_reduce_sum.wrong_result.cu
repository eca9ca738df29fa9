// Known-wrong answer to block_reduce_sum (tests/exercises/test_exercises.py): the reference solution with
// the seed's rounding in phase 2, blockDim.x / 32 warps: a partial last warp's sum is dropped.
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
    const int n_warps = blockDim.x / 32;
    const int lanes_here = min(32, (int)blockDim.x - warp * 32);
    v = warp_sum_of_first(v, lanes_here);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < n_warps ? shared[lane] : 0.0f;
        v = warp_sum_of_first(v, lanes_here);
    }
    return v;
}

// expected status: wrong_result
// expected feedback: returned 0.0
// expected feedback: rounded down to 0
