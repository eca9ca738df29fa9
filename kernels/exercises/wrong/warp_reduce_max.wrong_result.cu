// Known-wrong answer to warp_reduce_max (tests/exercises/test_exercises.py): the loop starts at offset 8,
// so lanes 16..31 never reach lane 0.
__device__ float warp_reduce_max(float v) {
    for (int offset = 8; offset > 0; offset /= 2) {
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
}

// expected status: wrong_result
// expected feedback: the maximum of lanes 0..15 only
