// Known-wrong answer to warp_sum_all: the broadcast's mask names lane 0 only, but all 32 lanes call
// it: lanes 1..31 call a shuffle whose mask does not name them, which is undefined.
__device__ float warp_sum_all(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return __shfl_sync(0x1u, v, 0);
}

// expected status: hazard
// expected feedback: Undefined warp-synchronous call at line 5
// expected feedback: does not name it
