// Known-wrong answer to warp_reduce_max: only lanes 0..15 take the first step, with a mask of
// those lanes, so lane l reads lane l + 16: outside the mask, an undefined value.
__device__ float warp_reduce_max(float v) {
    const int lane = threadIdx.x % 32;
    if (lane < 16) v = fmaxf(v, __shfl_down_sync(0x0000ffffu, v, 16));
    for (int offset = 8; offset > 0; offset /= 2) {
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
}

// expected status: undefined_result
// expected feedback: line 5: lanes 0..15
// expected feedback: read lanes 16..31, outside the member mask
