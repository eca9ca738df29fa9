// Known-wrong answer to butterfly_sum16: a down tree, so only lanes 0 and 16 end with the sum.
__device__ float butterfly_sum16(float v) {
    for (int offset = 8; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset, 16);
    return v;
}

// expected status: wrong_result
// expected feedback: Wrong lanes: 1..15, 17..31
