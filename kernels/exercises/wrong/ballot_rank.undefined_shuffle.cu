// Known-wrong answer to ballot_rank: the mask used as a filter. Each lane votes with a mask of the
// lanes below it, which does not name the lane itself: every call is undefined (the mask says who
// takes part in the call, not whose bits to count).
__device__ int ballot_rank(bool pred) {
    const unsigned lane = threadIdx.x % 32;
    return __popc(__ballot_sync((1u << lane) - 1u, pred));
}

// expected status: hazard
// expected feedback: Undefined warp-synchronous call at line 6
// expected feedback: does not name it
