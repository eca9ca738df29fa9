// Known-wrong answer to ballot_rank: the shift keeps the lane's own bit too, so a passing lane
// counts itself (lanes at and below, not below).
__device__ int ballot_rank(bool pred) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned ballot = __ballot_sync(0xffffffffu, pred);
    return __popc(ballot << (31u - lane));
}

// expected status: wrong_result
// expected feedback: a passing lane counted itself
// expected feedback: (1u << lane) - 1
