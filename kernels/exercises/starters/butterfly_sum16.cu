// All 32 lanes call this. Every lane must return the sum of its 16-lane segment.
__device__ float butterfly_sum16(float v) {
    // TODO: an xor butterfly within each segment of 16 lanes
    return v;
}
