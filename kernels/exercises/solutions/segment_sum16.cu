// Reference solution of the exercise segment_sum16 (notebook 02).
//
// Contract: __device__ float segment_sum16(float v). All 32 lanes of a full warp call it,
// converged. Lane 0 returns the sum of lanes 0..15 and lane 16 the sum of lanes 16..31; what other
// lanes return is not checked.
//
// WarpReduceSum with width 16: each shuffle reads only inside the caller's 16-lane segment, so the
// two halves of the warp reduce side by side, and the first offset is 8. A lane whose source would
// lie past its segment's end gets its own value back; those lanes are never read by lane 0 or 16.
__device__ float segment_sum16(float v) {
    for (int offset = 8; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset, 16);
    }
    return v;
}
