// Reference solution of the exercise warp_reduce_max (notebook 03).
//
// Contract: __device__ float warp_reduce_max(float v). All 32 lanes of a full warp call it,
// converged. Lane 0 returns the maximum of the 32 values; what other lanes return is not checked.
//
// Five __shfl_down_sync steps, offsets 16, 8, 4, 2, 1: after the step with offset o, lane l < o
// holds the maximum of the lanes l, l + o, l + 2o, ... (every lane congruent to l modulo o), so after
// offset 1 lane 0 holds the maximum of all 32 (lanes whose source is past lane 31 read their own
// value back, which changes nothing for a maximum). Every lane calls every shuffle, so the full mask is always right.
__device__ float warp_reduce_max(float v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
}
