// Known-wrong answer to block_reduce_sum: the reference solution without its __syncthreads():
// warp 0 reads the slots other warps are still writing.
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
    const int lanes_here = min(32, (int)blockDim.x - warp * 32);
    v = warp_sum_of_first(v, lanes_here);
    if (lane == 0) shared[warp] = v;
    if (warp == 0) {
        v = lane < n_warps ? shared[lane] : 0.0f;
        v = warp_sum_of_first(v, lanes_here);
    }
    return v;
}

// expected status: hazard
// expected feedback: Race at line 18 and line 20
// expected feedback: blockDim.x = 33
