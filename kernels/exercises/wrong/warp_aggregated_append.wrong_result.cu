// Known-wrong answer to warp_aggregated_append: base + lane instead of base + rank, so slots have
// gaps and run past the end.
__device__ int warp_aggregated_append(bool pred, int* counter) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned mask = __ballot_sync(0xffffffffu, pred);
    if (!pred) return -1;
    const int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(mask));
    base = __shfl_sync(mask, base, leader);
    return base + lane;
}

// expected status: wrong_result
// expected feedback: passing lane 31 got slot 31
// expected feedback: slots must lie in 0..0
