// Reference solution of the exercise butterfly_sum16 (notebook 03).
//
// Contract: __device__ float butterfly_sum16(float v). All 32 lanes of a full warp call it,
// converged. Every lane returns the sum of the 16 values of its segment (lanes 0..15 or 16..31).
//
// An xor butterfly: at each step lane l adds the value of lane l ^ mask, a partner in its own
// 16-lane segment (mask < 16), so both partners hold the same partial sum afterwards; after four
// steps every lane holds its segment's sum. (Each add sees the same two operands in both partners,
// and float addition is commutative, so the 16 lanes of a segment end with bit-identical sums.)
__device__ float butterfly_sum16(float v) {
    for (int mask = 8; mask > 0; mask /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, mask, 16);
    }
    return v;
}
