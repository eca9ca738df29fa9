// Known-wrong answer to last_warp_sum: shuffles instead of shared memory (a fine idea), but with a
// mask of lanes 0..15 while all 32 lanes call: undefined.
__device__ void last_warp_sum(volatile float* smem, unsigned int tid) {
    float x = smem[tid] + smem[tid + 32];
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_down_sync(0x0000ffffu, x, offset);
    if (tid == 0) smem[0] = x;
}

// expected status: hazard
// expected feedback: Undefined warp-synchronous call at line 5
// expected feedback: read lanes 16..31, outside the member mask
