// Known-wrong answer to segment_sum16: the mask names only lanes 0..15, but all 32 lanes call:
// lanes 16..31 call a shuffle whose mask does not name them, which is undefined.
__device__ float segment_sum16(float v) {
    for (int offset = 8; offset > 0; offset /= 2) v += __shfl_down_sync(0x0000ffffu, v, offset, 16);
    return v;
}

// expected status: hazard
// expected feedback: Undefined warp-synchronous call at line 4
// expected feedback: does not name it
