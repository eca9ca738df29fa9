// Known-wrong answer to block_reduce_sum: full-mask shuffles in a partial last warp, whose missing
// lanes do not exist, and every received value is added: the sum takes in undefined values.
__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__device__ float block_reduce_sum(float v, float* shared) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int n_warps = (blockDim.x + 31) / 32;
    v = warp_sum(v);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_sum(lane < n_warps ? shared[lane] : 0.0f);
    return v;
}

// expected status: undefined_result
// expected feedback: line 4: lane 0
// expected feedback: which do not exist
