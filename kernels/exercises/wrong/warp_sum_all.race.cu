// Known-wrong answer to warp_sum_all: lane 0 broadcasts through shared memory, and nothing orders
// its write before the other lanes' reads (no __syncwarp()): a race.
__device__ float warp_sum_all(float v) {
    __shared__ float s[32];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;
    return s[threadIdx.x / 32];
}

// expected status: hazard
// expected feedback: Race at line 6 and line 7
// expected feedback: RAW race on shared memory
