// Known-wrong answer to last_warp_sum: the steps start at offset 16, so smem[32..63] are never
// added.
__device__ void last_warp_sum(volatile float* smem, unsigned int tid) {
    float x = smem[tid];
    for (int offset = 16; offset > 0; offset /= 2) {
        x += smem[tid + offset];
        __syncwarp();
        smem[tid] = x;
        __syncwarp();
    }
}

// expected status: wrong_result
// expected feedback: the sum of smem[0..31] only
