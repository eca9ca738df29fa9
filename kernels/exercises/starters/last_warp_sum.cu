// The 32 lanes of warp 0 call this; smem[0..64) holds 64 partial sums. Afterwards smem[0] must
// hold their sum. No __syncthreads() here: only warp 0 is in this function.
__device__ void last_warp_sum(volatile float* smem, unsigned int tid) {
    // TODO: six steps (offsets 32, 16, 8, 4, 2, 1) of smem[tid] += smem[tid + offset],
    // made safe between the lanes of the warp
}
