// All 32 lanes call this. Lane 0 must return the sum of lanes 0..15, lane 16 the sum of 16..31.
__device__ float segment_sum16(float v) {
    // TODO: WarpReduceSum's shuffles, each kept inside a segment of 16 lanes
    return v;
}
