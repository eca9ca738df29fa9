// Reference solution of the exercise warp_sum_all (notebook 02).
//
// Contract: __device__ float warp_sum_all(float v). All 32 lanes of a full warp call it, converged.
// Every lane returns the sum of the warp's 32 values.
//
// WarpReduceSum leaves the total in lane 0 only (lane l ends with a partial sum). One more shuffle,
// __shfl_sync with source lane 0, hands lane 0's value to every lane: all 32 call it, so the full
// mask is right, and every lane then holds the same float.
__device__ float warp_sum_all(float v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return __shfl_sync(0xffffffffu, v, 0);
}
