// Known-wrong answer to segment_sum16: WarpReduceSum unchanged (width 32), so lane 0 gets the sum
// of all 32 lanes.
__device__ float segment_sum16(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// expected status: wrong_result
// expected feedback: the sum of all 32 lanes
// expected feedback: width 16
