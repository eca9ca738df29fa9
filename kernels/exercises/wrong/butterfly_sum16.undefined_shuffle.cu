// Known-wrong answer to butterfly_sum16: the mask names only lanes 0..15, but all 32 lanes call:
// lanes 16..31 call shuffles whose mask does not name them, which is undefined.
__device__ float butterfly_sum16(float v) {
    for (int mask = 8; mask > 0; mask /= 2) v += __shfl_xor_sync(0x0000ffffu, v, mask, 16);
    return v;
}

// expected status: hazard
// expected feedback: Undefined warp-synchronous call at line 4
