// Known-wrong answer to last_warp_sum: the pre-Volta warp-synchronous tail (reduce_v4_legacy.cu),
// volatile and no __syncwarp(): lane 0 reads smem[16] while lane 16 may still be writing it.
__device__ void last_warp_sum(volatile float* smem, unsigned int tid) {
    smem[tid] += smem[tid + 32];
    smem[tid] += smem[tid + 16];
    smem[tid] += smem[tid + 8];
    smem[tid] += smem[tid + 4];
    smem[tid] += smem[tid + 2];
    smem[tid] += smem[tid + 1];
}

// expected status: hazard
// expected feedback: Race at line 4 and line 5
// expected feedback: more of this kind
