// Known-wrong answer to warp_sum_all: WarpReduceSum alone. Lane 0 holds the total, the other lanes
// partial sums.
__device__ float warp_sum_all(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// expected status: wrong_result
// expected feedback: lane 0 holds the total
// expected feedback: __shfl_sync(0xffffffff, v, 0)
